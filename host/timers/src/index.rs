//! Chunked timer listing indexes: per actor and per fee payer. (The due
//! queue needs no index: records are keyed by their position,
//! [`crate::queue`].)
//!
//! Each index maps a *group* — an actor, a fee payer — to its
//! timers in insertion order. A timer's position in its group is its *slot*:
//! the group's counter when the timer was added. Entries are packed
//! [`CHUNK`] slots to a state key:
//!
//! | key | value |
//! |---|---|
//! | `<chunks> ‖ group ‖ slot / CHUNK` (u64 BE) | `(slot BE ‖ timer_id)` × ≤ `CHUNK`, ascending slot |
//! | `<head> ‖ group` | `live` u64 BE ‖ `next_slot` u64 BE; absent when `live = 0` |
//!
//! Both are derived state (`u …`, [`crate::keys`]): the state root
//! commits to the timers through their due buckets ([`crate::bucket`]), not
//! through these keys, whose slots depend on history.
//!
//! Why chunks: with one state key per timer per index, every timer cost
//! four state keys and four tree leaves, and firing 20,000 timers deleted
//! ~80,000 keys plus their tree nodes — half the block went into storage
//! (docs/PERFORMANCE.md). Packed, a timer costs one key (its record) and
//! 3/`CHUNK` index keys. Slots are dense per group, so a chunk fills up
//! whatever else is scheduled in between.
//!
//! A group whose last timer leaves loses its head, so its slots restart at
//! 0; no entry of it is left to be out of order with. (The §4.2 per-actor
//! cap reads the live count in the actor's account, which is consensus
//! state; the head's count is the index's own bookkeeping.)
//!
//! Removal at end of block goes through [`Removals`]: thousands of timers
//! leave the same few chunks, and each chunk is rewritten once rather than
//! once per timer.

use std::collections::BTreeMap;

use timerhost_state::{Overlay, StateRead};
use timerhost_types::Hash;

use crate::error::Result;
use crate::keys::{self, corrupt};

/// Timers per index chunk. Small enough that rewriting a chunk per insertion
/// copies under 1 KiB; large enough that index keys are a sixteenth of the
/// timers.
pub const CHUNK: u64 = 16;

const ENTRY_BYTES: usize = 8 + 32;
const HEAD_BYTES: usize = 16;
/// Chunks read per scan page while collecting entries.
const SCAN_PAGE: usize = 16;

/// One of the two timer listing indexes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Index {
    chunks: keys::Prefix,
    head: keys::Prefix,
    what: &'static str,
}

/// By owning actor: listing and the live-timer cap (§4.2).
pub const BY_ACTOR: Index = Index {
    chunks: keys::ACTOR_CHUNKS,
    head: keys::ACTOR_HEADS,
    what: "timer actor index",
};
/// By fee payer: listing.
pub const BY_PAYER: Index = Index {
    chunks: keys::PAYER_CHUNKS,
    head: keys::PAYER_HEADS,
    what: "timer fee-payer index",
};

/// An index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Position in the group, in insertion order.
    pub slot: u64,
    /// The timer.
    pub timer_id: Hash,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Head {
    live: u64,
    next_slot: u64,
}

impl Index {
    fn head_key(&self, group: &[u8]) -> Vec<u8> {
        keys::index_head_key(self.head, group)
    }

    fn chunk_key(&self, group: &[u8], chunk: u64) -> Vec<u8> {
        keys::index_chunk_key(self.chunks, group, chunk)
    }

    fn read_head(&self, state: &(impl StateRead + ?Sized), group: &[u8]) -> Result<Head> {
        let k = self.head_key(group);
        let Some(v) = state.get(&k)? else {
            return Ok(Head::default());
        };
        if v.len() != HEAD_BYTES {
            return Err(corrupt(self.what, &k, "head is not 16 bytes"));
        }
        let (live, next) = v.split_at(8);
        Ok(Head {
            live: u64::from_be_bytes(live.try_into().expect("8 bytes")),
            next_slot: u64::from_be_bytes(next.try_into().expect("8 bytes")),
        })
    }

    fn write_head(&self, state: &mut Overlay<'_>, group: &[u8], head: Head) {
        let k = self.head_key(group);
        if head.live == 0 {
            state.delete(k);
        } else {
            let mut v = Vec::with_capacity(HEAD_BYTES);
            v.extend_from_slice(&head.live.to_be_bytes());
            v.extend_from_slice(&head.next_slot.to_be_bytes());
            state.put(k, v);
        }
    }

    /// Timers currently in `group`.
    pub fn live(&self, state: &(impl StateRead + ?Sized), group: &[u8]) -> Result<u64> {
        Ok(self.read_head(state, group)?.live)
    }

    /// Adds `timer_id` at the end of `group`; returns its slot.
    pub fn append(&self, state: &mut Overlay<'_>, group: &[u8], timer_id: &Hash) -> Result<u64> {
        let mut head = self.read_head(state, group)?;
        let slot = head.next_slot;
        head.next_slot += 1;
        head.live += 1;
        self.write_head(state, group, head);
        let k = self.chunk_key(group, slot / CHUNK);
        let mut chunk = state.get(&k)?.unwrap_or_default();
        chunk.reserve_exact(ENTRY_BYTES);
        chunk.extend_from_slice(&slot.to_be_bytes());
        chunk.extend_from_slice(timer_id.as_bytes());
        state.put(k, chunk);
        Ok(slot)
    }

    /// Removes the entry at `slot` of `group` now (one removal; end of block
    /// batches them with [`Removals`]).
    pub fn remove(&self, state: &mut Overlay<'_>, group: &[u8], slot: u64) -> Result<()> {
        let mut removals = Removals::default();
        removals.add(*self, group, slot);
        removals.apply(state)
    }

    /// Up to `limit` entries of `group` with slot ≥ `from_slot`, in slot order.
    pub fn entries(
        &self,
        state: &(impl StateRead + ?Sized),
        group: &[u8],
        from_slot: u64,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        let mut end = self.chunk_key(group, u64::MAX);
        end.push(0);
        Ok(self
            .walk(state, group, from_slot, &end, limit)?
            .into_iter()
            .map(|(_, e)| e)
            .collect())
    }

    /// Up to `limit` entries from slot `from_slot` of group `from_group` on,
    /// across groups in key order, whose chunk keys are below `end`. Each
    /// entry comes with its group. Groups of one index must all have the
    /// length of `from_group`.
    fn walk(
        &self,
        state: &(impl StateRead + ?Sized),
        from_group: &[u8],
        from_slot: u64,
        end: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Entry)>> {
        let group_len = from_group.len();
        let mut start = self.chunk_key(from_group, from_slot / CHUNK);
        let mut out = Vec::new();
        while out.len() < limit && start.as_slice() < end {
            let page = state.scan(&start, Some(end), SCAN_PAGE)?;
            for (k, v) in &page {
                if k.len() != 2 + group_len + 8 || v.len() % ENTRY_BYTES != 0 || v.is_empty() {
                    return Err(corrupt(self.what, k, "malformed chunk"));
                }
                let group = &k[2..2 + group_len];
                let first_group = group == from_group;
                for raw in v.chunks_exact(ENTRY_BYTES) {
                    let slot = u64::from_be_bytes(raw[..8].try_into().expect("8 bytes"));
                    if first_group && slot < from_slot {
                        continue;
                    }
                    if out.len() == limit {
                        return Ok(out);
                    }
                    let timer_id = Hash::from_slice(&raw[8..]).expect("32 bytes");
                    out.push((group.to_vec(), Entry { slot, timer_id }));
                }
            }
            match page.last() {
                Some((last, _)) if page.len() == SCAN_PAGE => {
                    start = last.clone();
                    start.push(0);
                }
                _ => break,
            }
        }
        Ok(out)
    }
}

/// Index removals gathered and applied together (part of
/// [`crate::removal::Removals`]): each touched chunk and head
/// is read and written once, whatever the number of timers leaving it.
#[derive(Debug, Default)]
pub struct Removals {
    chunks: BTreeMap<Vec<u8>, (Index, Vec<u64>)>,
    heads: BTreeMap<Vec<u8>, (Index, Vec<u8>, u64)>,
}

impl Removals {
    /// Schedules the removal of `slot` from `group` of `index`.
    pub fn add(&mut self, index: Index, group: &[u8], slot: u64) {
        self.chunks
            .entry(index.chunk_key(group, slot / CHUNK))
            .or_insert_with(|| (index, Vec::new()))
            .1
            .push(slot);
        self.heads
            .entry(index.head_key(group))
            .or_insert_with(|| (index, group.to_vec(), 0))
            .2 += 1;
    }

    /// Is there nothing to remove?
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Removes every gathered entry. An entry that is not there, or a head
    /// that counts fewer timers than leave it, is corruption.
    pub fn apply(self, state: &mut Overlay<'_>) -> Result<()> {
        for (k, (index, mut slots)) in self.chunks {
            slots.sort_unstable();
            let chunk = state.get(&k)?.unwrap_or_default();
            let mut kept = Vec::with_capacity(chunk.len());
            let mut removed = 0;
            for raw in chunk.chunks_exact(ENTRY_BYTES) {
                let slot = u64::from_be_bytes(raw[..8].try_into().expect("8 bytes"));
                if slots.binary_search(&slot).is_ok() {
                    removed += 1;
                } else {
                    kept.extend_from_slice(raw);
                }
            }
            if removed != slots.len() {
                return Err(corrupt(
                    index.what,
                    &k,
                    "removing an entry that is not there",
                ));
            }
            if kept.is_empty() {
                state.delete(k);
            } else {
                state.put(k, kept);
            }
        }
        for (k, (index, group, leaving)) in self.heads {
            let mut head = index.read_head(state, &group)?;
            head.live = head.live.checked_sub(leaving).ok_or_else(|| {
                corrupt(index.what, &k, "more timers leave the group than it holds")
            })?;
            index.write_head(state, &group, head);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::EmptyState;

    fn id(n: u8) -> Hash {
        Hash([n; 32])
    }

    #[test]
    fn entries_come_back_in_insertion_order_across_chunks() {
        let base = EmptyState;
        let mut state = Overlay::new(&base);
        for n in 0..40u8 {
            assert_eq!(BY_ACTOR.append(&mut state, b"g", &id(n)).unwrap(), n as u64);
        }
        let all = BY_ACTOR.entries(&state, b"g", 0, 100).unwrap();
        assert_eq!(all.len(), 40);
        assert!(all
            .iter()
            .enumerate()
            .all(|(i, e)| e.slot == i as u64 && e.timer_id == id(i as u8)));
        let tail = BY_ACTOR.entries(&state, b"g", 17, 5).unwrap();
        assert_eq!(
            tail.iter().map(|e| e.slot).collect::<Vec<_>>(),
            [17, 18, 19, 20, 21]
        );
        assert_eq!(BY_ACTOR.live(&state, b"g").unwrap(), 40);
    }

    #[test]
    fn batched_removal_rewrites_chunks_and_drops_empty_ones() {
        let base = EmptyState;
        let mut state = Overlay::new(&base);
        for n in 0..40u8 {
            BY_PAYER.append(&mut state, b"h", &id(n)).unwrap();
        }
        let mut removals = Removals::default();
        for slot in 0..20 {
            removals.add(BY_PAYER, b"h", slot);
        }
        removals.apply(&mut state).unwrap();
        assert_eq!(BY_PAYER.live(&state, b"h").unwrap(), 20);
        assert_eq!(state.get(&BY_PAYER.chunk_key(b"h", 0)).unwrap(), None);
        let left = BY_PAYER.entries(&state, b"h", 0, 100).unwrap();
        assert_eq!(left.first().unwrap().slot, 20);
        assert_eq!(left.len(), 20);
    }

    #[test]
    fn an_emptied_group_loses_its_head_and_restarts_at_slot_zero() {
        let base = EmptyState;
        let mut state = Overlay::new(&base);
        BY_PAYER.append(&mut state, b"p", &id(1)).unwrap();
        BY_PAYER.append(&mut state, b"p", &id(2)).unwrap();
        BY_PAYER.remove(&mut state, b"p", 0).unwrap();
        BY_PAYER.remove(&mut state, b"p", 1).unwrap();
        assert_eq!(state.get(&BY_PAYER.head_key(b"p")).unwrap(), None);
        assert_eq!(BY_PAYER.append(&mut state, b"p", &id(3)).unwrap(), 0);
    }

    #[test]
    fn removing_a_missing_entry_is_corruption() {
        let base = EmptyState;
        let mut state = Overlay::new(&base);
        BY_ACTOR.append(&mut state, b"g", &id(1)).unwrap();
        let err = BY_ACTOR.remove(&mut state, b"g", 5).unwrap_err();
        assert!(err.to_string().contains("not there"), "{err}");
    }

    #[test]
    fn a_walk_crosses_groups_in_key_order() {
        let base = EmptyState;
        let mut state = Overlay::new(&base);
        for g in [5u64, 3, 9] {
            for n in 0..3u8 {
                BY_ACTOR
                    .append(&mut state, &g.to_be_bytes(), &id(g as u8 * 10 + n))
                    .unwrap();
            }
        }
        let end = BY_ACTOR.chunk_key(&6u64.to_be_bytes(), 0);
        let walked = BY_ACTOR
            .walk(&state, &3u64.to_be_bytes(), 1, &end, 100)
            .unwrap();
        let got: Vec<(u64, u64)> = walked
            .iter()
            .map(|(g, e)| (u64::from_be_bytes(g.as_slice().try_into().unwrap()), e.slot))
            .collect();
        assert_eq!(got, [(3, 1), (3, 2), (5, 0), (5, 1), (5, 2)]);
    }
}
