//! Due buckets: how the state root commits to the pending timers.
//!
//! Each height (or, for time timers, each millisecond) with queued timers
//! is **one leaf** of the state tree, `t d ‖ height` (`t e ‖ timestamp_ms`)
//! = `live` (u64 BE) ‖ `reserved` (u64 BE: the lane cycles its
//! timers reserve when they fire, for [`crate::quote`]) ‖ `digest` (32
//! bytes). The records, the height
//! id lookup and the listing indexes are derived state (`u …`, [`crate::keys`])
//! that this digest commits to, so firing a whole bucket removes one leaf,
//! scheduling into one rewrites one leaf, and nothing a block does touches
//! tree paths in proportion to the number of pending timers.
//!
//! The digest is blake3 of the bucket's **lattice hash** (`LtHash`, the
//! incremental hash Solana's validators use for their accounts state,
//! `solana-lattice-hash`): the sum, lane by lane modulo 2¹⁶, of one
//! 2,048-byte element per timer, each expanded (blake3 XOF) from the
//! timer's [`record_hash`]. Why this and not a
//! hash over the bucket's index chunks:
//!
//! - *It depends on the pending timers only.* Chunk boundaries and slots
//!   depend on history (slots restart when a group empties), so two stores
//!   with the same timers would have different chunk digests; the lattice
//!   sum does not care how a set was reached.
//! - *It commits to FIFO order.* Each element covers the timer's height and
//!   sequence number, and FIFO order within a height is sequence order
//!   (slots are handed out in scheduling order, sequence numbers too).
//! - *Every change costs the same whatever the bucket's size:* adding,
//!   removing or rewriting a timer mixes one element in or out.
//!
//! Every bucket keeps a derived **stored form** under `u l ‖ height`
//! (`u m ‖ timestamp_ms`), from which a change is applied without reading
//! a single record (#29: a record may hold 1 MiB, and an extend or cancel
//! must not pay for its neighbours' bytes):
//!
//! - while it has never held more than [`SMALL_BUCKET`] timers, the list of
//!   its timers' record hashes (32 bytes each, at most 512), from which the
//!   lattice is recomputed — so a lone timer costs a 48-byte leaf and 32
//!   derived bytes, not 2 KiB;
//! - once it has held more, the lattice itself (2,048 bytes), kept until
//!   the bucket empties (its record hashes are no longer at hand to go
//!   back to a list).
//!
//! The digest is the same either way: the stored form is derived state.
//!
//! Removals at end of block are gathered in [`Changes`] and applied once
//! per bucket; a bucket that empties is deleted without any hashing.

use std::collections::BTreeMap;

use solana_lattice_hash::lt_hash::LtHash;
use timerhost_state::{Overlay, StateRead};
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{Hash, Timer};

use crate::error::Result;
use crate::keys::{self, corrupt, BucketId, DueQueue};
use crate::record::{bucket_of, decode_record, record_hash};

/// Buckets of at most this many timers keep no stored lattice.
pub const SMALL_BUCKET: u64 = 16;

/// Domain of a timer's lattice element.
const ELEMENT_DOMAIN: &[u8] = b"timerhost/bucket-element/v1";
const LEAF_BYTES: usize = 8 + 8 + 32;
const LATTICE_BYTES: usize = 2 * LtHash::NUM_ELEMENTS;

/// A bucket's committed leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// Timers queued at the height.
    pub live: u64,
    /// Lane cycles they reserve when they fire: the sum of their
    /// [`reservation`]s.
    pub reserved: u64,
    /// blake3 of the bucket's lattice hash.
    pub digest: Hash,
}

/// Lane cycles a timer reserves when it fires (CIP-5 §6.5).
pub fn reservation(timer: &Timer) -> u64 {
    timer
        .gas_limit_per_fire
        .saturating_add(TIMER_FIRE_BASE_CYCLES)
}

fn element(record_hash: &Hash) -> LtHash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(ELEMENT_DOMAIN);
    hasher.update(record_hash.as_bytes());
    LtHash::with(&hasher)
}

fn digest(lattice: &LtHash) -> Hash {
    Hash(lattice.checksum().0)
}

/// The committed leaf of `bucket`, if it has timers.
pub fn leaf(state: &(impl StateRead + ?Sized), bucket: BucketId) -> Result<Option<Leaf>> {
    let k = keys::bucket_key(bucket);
    state.get(&k)?.map(|v| decode_leaf(&k, &v)).transpose()
}

/// The leaves of `queue`'s buckets due in `[from, to)` (heights or unix
/// ms), in order, at most `limit` (#33: what the dashboard shows ahead):
/// `(height or ms, leaf)`. Reads only the leaves, whatever the records.
pub fn leaves_between(
    state: &(impl StateRead + ?Sized),
    queue: DueQueue,
    from: u64,
    to: u64,
    limit: usize,
) -> Result<Vec<(u64, Leaf)>> {
    let id = |at| match queue {
        DueQueue::Height => BucketId::height(at),
        DueQueue::Time => BucketId::time(at),
    };
    let start = keys::bucket_key(id(from));
    let end = keys::bucket_key(id(to));
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            let at: [u8; 8] = k[k.len() - 8..]
                .try_into()
                .map_err(|_| corrupt("timer bucket", &k, "key does not end in 8 bytes"))?;
            Ok((u64::from_be_bytes(at), decode_leaf(&k, &v)?))
        })
        .collect()
}

fn decode_leaf(k: &[u8], v: &[u8]) -> Result<Leaf> {
    if v.len() != LEAF_BYTES {
        return Err(corrupt("timer bucket", k, "leaf is not 48 bytes"));
    }
    Ok(Leaf {
        live: u64::from_be_bytes(v[..8].try_into().expect("8 bytes")),
        reserved: u64::from_be_bytes(v[8..16].try_into().expect("8 bytes")),
        digest: Hash::from_slice(&v[16..]).expect("32 bytes"),
    })
}

/// Timers of `queue` queued at or before `at` (a height or unix ms), summed
/// from the bucket leaves (at most `limit` leaves read, the sum capped at
/// `limit`): no record is read.
pub fn queued_through(
    state: &(impl StateRead + ?Sized),
    queue: DueQueue,
    at: u64,
    limit: usize,
) -> Result<usize> {
    let end = keys::buckets_through(queue, at);
    let start = keys::bucket_key(BucketId { queue, at: 0 });
    let mut total = 0u64;
    for (k, v) in state.scan(&start, Some(&end), limit)? {
        total = total.saturating_add(decode_leaf(&k, &v)?.live);
    }
    Ok(usize::try_from(total).unwrap_or(usize::MAX).min(limit))
}

fn write_leaf(state: &mut Overlay<'_>, bucket: BucketId, leaf: Leaf) {
    let mut v = Vec::with_capacity(LEAF_BYTES);
    v.extend_from_slice(&leaf.live.to_be_bytes());
    v.extend_from_slice(&leaf.reserved.to_be_bytes());
    v.extend_from_slice(leaf.digest.as_bytes());
    state.put(keys::bucket_key(bucket), v);
}

/// What a bucket keeps under its lattice key: the record hashes of its
/// timers while it has never held more than [`SMALL_BUCKET`], else its
/// lattice. Told apart by length (a list is at most 512 bytes).
enum Stored {
    Hashes(Vec<Hash>),
    Lattice(Box<LtHash>),
}

fn stored(state: &(impl StateRead + ?Sized), bucket: BucketId, live: u64) -> Result<Stored> {
    let k = keys::lattice_key(bucket);
    let v = state.get(&k)?.ok_or_else(|| {
        corrupt(
            "timer bucket lattice",
            &k,
            "missing for a bucket with timers",
        )
    })?;
    if v.len() == LATTICE_BYTES {
        let mut lattice = LtHash::identity();
        for (lane, raw) in lattice.0.iter_mut().zip(v.chunks_exact(2)) {
            *lane = u16::from_le_bytes([raw[0], raw[1]]);
        }
        return Ok(Stored::Lattice(Box::new(lattice)));
    }
    if v.len() % 32 != 0 || (v.len() / 32) as u64 != live {
        return Err(corrupt(
            "timer bucket lattice",
            &k,
            &format!(
                "{} bytes: neither a lattice nor the hashes of its {live} timers",
                v.len()
            ),
        ));
    }
    Ok(Stored::Hashes(
        v.chunks_exact(32)
            .map(|c| Hash::from_slice(c).expect("32 bytes"))
            .collect(),
    ))
}

fn write_hashes(state: &mut Overlay<'_>, bucket: BucketId, hashes: &[Hash]) {
    let mut v = Vec::with_capacity(32 * hashes.len());
    for h in hashes {
        v.extend_from_slice(h.as_bytes());
    }
    state.put(keys::lattice_key(bucket), v);
}

fn lattice_of(hashes: &[Hash]) -> LtHash {
    let mut lattice = LtHash::identity();
    for h in hashes {
        lattice.mix_in(&element(h));
    }
    lattice
}

fn write_lattice(state: &mut Overlay<'_>, bucket: BucketId, lattice: &LtHash) {
    let mut v = Vec::with_capacity(LATTICE_BYTES);
    for lane in lattice.0 {
        v.extend_from_slice(&lane.to_le_bytes());
    }
    state.put(keys::lattice_key(bucket), v);
}

/// The lattice of `bucket` computed from the records queued there, as they
/// are in `state` (one scan). `expected` timers must be there.
pub fn recompute(
    state: &(impl StateRead + ?Sized),
    bucket: BucketId,
    expected: u64,
) -> Result<LtHash> {
    Ok(fold_records(state, bucket, expected)?.0)
}

/// The lattice and the reserved lane cycles of the `expected` records
/// queued in `bucket`, in one scan.
fn fold_records(
    state: &(impl StateRead + ?Sized),
    bucket: BucketId,
    expected: u64,
) -> Result<(LtHash, u64)> {
    let limit = usize::try_from(expected.saturating_add(1)).unwrap_or(usize::MAX);
    let (start, end) = keys::records_range(bucket);
    let records = state.scan(&start, Some(&end), limit)?;
    if records.len() as u64 != expected {
        return Err(corrupt(
            "timer bucket",
            &keys::bucket_key(bucket),
            &format!(
                "counts {expected} timers, {} records are queued in it",
                records.len()
            ),
        ));
    }
    let mut lattice = LtHash::identity();
    let mut reserved = 0u64;
    for (k, v) in records {
        let timer = decode_record(&k, &v)?.timer;
        lattice.mix_in(&element(&record_hash(&timer)));
        reserved = reserved.saturating_add(reservation(&timer));
    }
    Ok((lattice, reserved))
}

/// Does the committed leaf of `bucket` match the records stored under it?
/// (Audits and tests: derived state at rest is checked against what the
/// root commits to; reads every timer of the bucket.)
pub fn verify(state: &(impl StateRead + ?Sized), bucket: BucketId) -> Result<bool> {
    let Some(leaf) = leaf(state, bucket)? else {
        let (start, end) = keys::records_range(bucket);
        return Ok(state.scan(&start, Some(&end), 1)?.is_empty());
    };
    let (lattice, reserved) = fold_records(state, bucket, leaf.live)?;
    Ok(digest(&lattice) == leaf.digest && reserved == leaf.reserved)
}

/// What is wrong with `bucket` (whose committed leaf is `leaf`), if
/// anything: its records must fold to the leaf's digest and reservation,
/// and its stored form to the same digest (state sync's audit of derived
/// state, `crate::audit`). A malformed record or stored form is a finding,
/// not an error: the state came from a peer.
pub fn audit(
    state: &(impl StateRead + ?Sized),
    bucket: BucketId,
    leaf: &Leaf,
) -> Result<Option<BucketFinding>> {
    let (lattice, reserved) = match fold_records(state, bucket, leaf.live) {
        Ok(folded) => folded,
        Err(e) => return Ok(Some(BucketFinding::Records(e.to_string()))),
    };
    if digest(&lattice) != leaf.digest || reserved != leaf.reserved {
        return Ok(Some(BucketFinding::Records(
            "its records do not hash to the bucket's committed leaf".into(),
        )));
    }
    let stored_digest = match stored(state, bucket, leaf.live) {
        Ok(Stored::Hashes(hashes)) => digest(&lattice_of(&hashes)),
        Ok(Stored::Lattice(lattice)) => digest(&lattice),
        Err(e) => return Ok(Some(BucketFinding::StoredForm(e.to_string()))),
    };
    if stored_digest != leaf.digest {
        return Ok(Some(BucketFinding::StoredForm(
            "its stored form does not hash to the bucket's committed leaf".into(),
        )));
    }
    Ok(None)
}

/// The digest a bucket's leaf holds for timers with these record hashes
/// (a timer's proof of presence, `crate::proof`).
pub fn digest_of(record_hashes: &[Hash]) -> Hash {
    digest(&lattice_of(record_hashes))
}

/// Decodes a bucket leaf's value (`None` if it is not one).
pub fn decode_leaf_value(v: &[u8]) -> Option<Leaf> {
    decode_leaf(b"", v).ok()
}

/// What [`audit`] found wrong with a bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BucketFinding {
    /// Its records (one or more of them, which the lattice cannot tell).
    Records(String),
    /// Its stored form (`u l`/`u m`).
    StoredForm(String),
}

/// Every leaf of `queue` from `from` on, at most `limit`: `(bucket, leaf)`.
pub fn leaves_from(
    state: &(impl StateRead + ?Sized),
    queue: DueQueue,
    from: u64,
    limit: usize,
) -> Result<Vec<(BucketId, Leaf)>> {
    let start = keys::bucket_key(BucketId { queue, at: from });
    let end = keys::buckets_through(queue, u64::MAX);
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            let at: [u8; 8] = k[k.len() - 8..]
                .try_into()
                .map_err(|_| corrupt("timer bucket", &k, "key does not end in 8 bytes"))?;
            Ok((
                BucketId {
                    queue,
                    at: u64::from_be_bytes(at),
                },
                decode_leaf(&k, &v)?,
            ))
        })
        .collect()
}

#[derive(Debug, Default)]
struct Delta {
    added: Vec<Hash>,
    removed: Vec<Hash>,
    reserved_added: u64,
    reserved_removed: u64,
}

/// Changes to buckets, applied once per bucket ([`Changes::apply`]) after
/// the height index and the records have changed.
#[derive(Debug, Default)]
pub struct Changes {
    buckets: BTreeMap<BucketId, Delta>,
}

impl Changes {
    /// `timer`, whose record hash is `record_hash`, joins its bucket. (A
    /// state watch has none: its own leaf commits to it, [`crate::watch`].)
    pub fn add(&mut self, timer: &Timer, record_hash: Hash) {
        let Some(bucket) = bucket_of(timer) else {
            return;
        };
        let delta = self.buckets.entry(bucket).or_default();
        delta.added.push(record_hash);
        delta.reserved_added = delta.reserved_added.saturating_add(reservation(timer));
    }

    /// `timer`, whose record hash is `record_hash`, leaves its bucket.
    pub fn remove(&mut self, timer: &Timer, record_hash: Hash) {
        let Some(bucket) = bucket_of(timer) else {
            return;
        };
        let delta = self.buckets.entry(bucket).or_default();
        delta.removed.push(record_hash);
        delta.reserved_removed = delta.reserved_removed.saturating_add(reservation(timer));
    }

    /// Is there nothing to apply?
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Rewrites each changed bucket's leaf and stored form, from those two
    /// alone: no record is read, whatever the records hold.
    pub fn apply(self, state: &mut Overlay<'_>) -> Result<()> {
        for (bucket, delta) in self.buckets {
            apply_one(state, bucket, delta)?;
        }
        Ok(())
    }
}

fn apply_one(state: &mut Overlay<'_>, bucket: BucketId, delta: Delta) -> Result<()> {
    let old = leaf(state, bucket)?;
    let before = old.map_or(0, |l| l.live);
    let reserved = old
        .map_or(0, |l| l.reserved)
        .saturating_add(delta.reserved_added)
        .checked_sub(delta.reserved_removed)
        .ok_or_else(|| {
            corrupt(
                "timer bucket",
                &keys::bucket_key(bucket),
                "more lane cycles leave the bucket than it reserves",
            )
        })?;
    let live = (before + delta.added.len() as u64)
        .checked_sub(delta.removed.len() as u64)
        .ok_or_else(|| {
            corrupt(
                "timer bucket",
                &keys::bucket_key(bucket),
                "more timers leave the bucket than it holds",
            )
        })?;
    if live == 0 {
        state.delete(keys::bucket_key(bucket));
        if before > 0 {
            state.delete(keys::lattice_key(bucket));
        }
        return Ok(());
    }
    // Only the bucket's own leaf and stored form are read: never a record.
    let stored = if before == 0 {
        Stored::Hashes(Vec::new())
    } else {
        stored(state, bucket, before)?
    };
    let lattice = match stored {
        Stored::Lattice(mut lattice) => {
            for h in &delta.added {
                lattice.mix_in(&element(h));
            }
            for h in &delta.removed {
                lattice.mix_out(&element(h));
            }
            write_lattice(state, bucket, &lattice);
            *lattice
        }
        Stored::Hashes(mut hashes) => {
            for h in &delta.removed {
                let at = hashes.iter().position(|x| x == h).ok_or_else(|| {
                    corrupt(
                        "timer bucket",
                        &keys::bucket_key(bucket),
                        "a timer leaving the bucket is not among its record hashes",
                    )
                })?;
                hashes.remove(at);
            }
            hashes.extend_from_slice(&delta.added);
            let lattice = lattice_of(&hashes);
            if live > SMALL_BUCKET {
                write_lattice(state, bucket, &lattice);
            } else {
                write_hashes(state, bucket, &hashes);
            }
            lattice
        }
    };
    write_leaf(
        state,
        bucket,
        Leaf {
            live,
            reserved,
            digest: digest(&lattice),
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{delivery, keys, store};
    use timerhost_state::commitment::StateCommitment;
    use timerhost_state::{accounts, ChangeSet, EmptyState, MemoryBackend};
    use timerhost_types::{Address, BasefeeConfig, Timer, TimerConfig};

    const PAYER: Address = Address([0x33; 20]);
    const ACTOR: Address = Address([0x11; 20]);

    fn timer(height: u64, seq: u64, payload: &[u8]) -> Timer {
        let mut id = [0u8; 32];
        id[..8].copy_from_slice(&seq.to_be_bytes());
        id[8] = 0x7e;
        Timer {
            actor_address: ACTOR,
            height,
            payload: payload.to_vec(),
            timer_id: Hash(id),
            handler: "handle_timer".into(),
            fee_payer: PAYER,
            gas_limit_per_fire: 1_000,
            expires_at: height + 100,
            seq,
            deposit: 0,
            bid: 0,
            max_fee_per_cycle: 0,
            kind: timerhost_types::TimerKind::Height,
            escrow_key: None,
            booked: false,
            retry: None,
        }
    }

    /// The state root over the timers' committed keys only (bucket leaves
    /// and the GC backlog): what the pending timers contribute to the root.
    /// The sequence counter and the accounts are left out, since the two
    /// histories compared below differ in them by construction.
    fn timer_root(state: &Overlay<'_>) -> Hash {
        let changes: ChangeSet = state
            .changes()
            .iter()
            .filter(|(k, _)| k.starts_with(&keys::BUCKET) || k.starts_with(&keys::BACKLOG))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        StateCommitment::compute(&MemoryBackend::new(), &changes, 0)
            .unwrap()
            .0
    }

    fn funded(state: &mut Overlay<'_>) {
        accounts::credit(state, &PAYER, 10u128.pow(30)).unwrap();
    }

    fn survivors() -> Vec<Timer> {
        // 15 timers left at height 10 (seqs 5..20), 3 at height 11.
        (5..20)
            .map(|s| timer(10, s, &[s as u8]))
            .chain((30..33).map(|s| timer(11, s, b"later")))
            .collect()
    }

    #[test]
    fn the_root_is_a_function_of_the_pending_timers_not_of_their_history() {
        let empty = EmptyState;
        // History A: 22 timers at height 10 (a stored lattice), extras
        // scheduled and cancelled, one extended back and forth, and a
        // delivery at height 10 that fires five and carries the rest over.
        let mut a = Overlay::new(&empty);
        funded(&mut a);
        for s in 0..20 {
            store::insert(&mut a, &timer(10, s, &[s as u8])).unwrap();
        }
        let extras = [
            timer(10, 20, b"x"),
            timer(10, 21, b"y"),
            timer(12, 22, b"z"),
        ];
        for t in &extras {
            store::insert(&mut a, t).unwrap();
        }
        for s in 30..33 {
            store::insert(&mut a, &timer(11, s, b"later")).unwrap();
        }
        assert!(a
            .get(&keys::lattice_key(BucketId::height(10)))
            .unwrap()
            .is_some());
        for t in &extras {
            let record = store::get_record(&a, &t.timer_id).unwrap().unwrap();
            store::remove(&mut a, &record).unwrap();
        }
        let config = TimerConfig {
            max_fires_per_block: 5,
            ..TimerConfig::default()
        };
        let plan = delivery::deliver(
            &mut a,
            &config,
            &BasefeeConfig::default(),
            10,
            0,
            &[],
            &mut delivery::BlockBudgets::new(&config, &BasefeeConfig::default()),
        )
        .unwrap();
        assert_eq!(plan.fires.len(), 5);
        assert!(plan.stats.fire_quota_full, "the rest carried over");
        // 15 left: the bucket keeps its lattice (it once held 22), while
        // history B's keeps its record hashes; the leaves agree below.
        assert_eq!(
            a.get(&keys::lattice_key(BucketId::height(10)))
                .unwrap()
                .map(|v| v.len()),
            Some(LATTICE_BYTES)
        );
        assert!(a
            .get(&keys::bucket_key(BucketId::height(12)))
            .unwrap()
            .is_none());

        // History B: only the survivors, scheduled directly.
        let mut b = Overlay::new(&empty);
        funded(&mut b);
        for t in survivors() {
            store::insert(&mut b, &t).unwrap();
        }

        assert_eq!(
            leaf(&a, BucketId::height(10)).unwrap(),
            leaf(&b, BucketId::height(10)).unwrap()
        );
        assert_eq!(
            leaf(&a, BucketId::height(11)).unwrap(),
            leaf(&b, BucketId::height(11)).unwrap()
        );
        assert_eq!(timer_root(&a), timer_root(&b));
        for state in [&a, &b] {
            assert!(
                verify(state, BucketId::height(10)).unwrap()
                    && verify(state, BucketId::height(11)).unwrap()
            );
        }
        // The derived layout did differ (slots depend on history).
        let slot = |s: &Overlay<'_>| {
            store::get_record(s, &survivors()[0].timer_id)
                .unwrap()
                .unwrap()
                .slots
                .actor
        };
        assert_ne!(slot(&a), slot(&b));
    }

    #[test]
    fn one_changed_record_byte_changes_the_root() {
        let empty = EmptyState;
        let build = |tweak: Option<usize>| {
            let mut state = Overlay::new(&empty);
            for (i, mut t) in survivors().into_iter().enumerate() {
                if tweak == Some(i) {
                    t.payload[0] ^= 1;
                }
                store::insert(&mut state, &t).unwrap();
            }
            timer_root(&state)
        };
        let base = build(None);
        assert_eq!(build(None), base);
        for i in [0, 7, 14, 16] {
            assert_ne!(build(Some(i)), base, "timer {i}");
        }
        // And the order: the same timers with two sequence numbers swapped.
        let mut swapped = Overlay::new(&empty);
        let mut timers = survivors();
        let (s0, s1) = (timers[0].seq, timers[1].seq);
        timers[0].seq = s1;
        timers[1].seq = s0;
        for t in &timers {
            store::insert(&mut swapped, t).unwrap();
        }
        assert_ne!(timer_root(&swapped), base);
    }

    #[test]
    fn a_record_changed_at_rest_no_longer_matches_its_bucket() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        for t in survivors() {
            store::insert(&mut state, &t).unwrap();
        }
        assert!(verify(&state, BucketId::height(10)).unwrap());
        let key = keys::record_key(BucketId::height(10), survivors()[3].seq);
        let mut bytes = state.get(&key).unwrap().unwrap();
        let last = bytes.len() - 30; // inside the timer, before the slots
        bytes[last] ^= 0x40;
        state.put(key, bytes);
        assert!(!verify(&state, BucketId::height(10)).unwrap());
    }

    #[test]
    fn queued_timers_are_counted_from_the_leaves() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        for t in survivors() {
            store::insert(&mut state, &t).unwrap();
        }
        assert_eq!(queued_through(&state, DueQueue::Height, 9, 100).unwrap(), 0);
        assert_eq!(
            queued_through(&state, DueQueue::Height, 10, 100).unwrap(),
            15
        );
        assert_eq!(
            queued_through(&state, DueQueue::Height, 11, 100).unwrap(),
            18
        );
        assert_eq!(
            queued_through(&state, DueQueue::Height, u64::MAX, 16).unwrap(),
            16,
            "capped"
        );
    }

    #[test]
    fn a_lone_timer_is_one_leaf_and_its_record_hash() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let t = timer(40, 1, b"solo");
        store::insert(&mut state, &t).unwrap();
        assert_eq!(leaf(&state, BucketId::height(40)).unwrap().unwrap().live, 1);
        assert_eq!(
            state.get(&keys::lattice_key(BucketId::height(40))).unwrap(),
            Some(record_hash(&t).as_bytes().to_vec())
        );
        let record = store::get_record(&state, &t.timer_id).unwrap().unwrap();
        store::remove(&mut state, &record).unwrap();
        assert_eq!(leaf(&state, BucketId::height(40)).unwrap(), None);
        assert_eq!(
            state.get(&keys::lattice_key(BucketId::height(40))).unwrap(),
            None
        );
    }

    #[test]
    fn extending_a_timer_rewrites_its_bucket_in_both_forms() {
        let empty = EmptyState;
        for count in [3u64, 40] {
            let mut state = Overlay::new(&empty);
            for s in 0..count {
                store::insert(&mut state, &timer(50, s, b"p")).unwrap();
            }
            let before = leaf(&state, BucketId::height(50)).unwrap().unwrap();
            let t = timer(50, 1, b"p");
            let mut record = store::get_record(&state, &t.timer_id).unwrap().unwrap();
            record.timer.expires_at += 1;
            store::update(&mut state, &t, &record).unwrap();
            let after = leaf(&state, BucketId::height(50)).unwrap().unwrap();
            assert_eq!(after.live, before.live);
            assert_ne!(after.digest, before.digest);
            assert!(
                verify(&state, BucketId::height(50)).unwrap(),
                "{count} timers"
            );
        }
    }
}
