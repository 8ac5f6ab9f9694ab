//! Dev snapshots (`dev_snapshot` / `dev_revert`), anvil-style.
//!
//! A snapshot is the whole store ([`StoreSnapshot`]) plus the node state a
//! dev user controls that lives outside the store (the pending
//! `dev_setNextBlockTimestamp` override). [`DevSnapshots`] numbers them
//! `0x1`, `0x2`, … and reverting to one forgets it and every later one, as
//! anvil's `evm_revert` does: ids are never reused, so a stale id can never
//! silently name a different state.
//!
//! They live in the node's memory only and are lost when it stops: the
//! store itself never records them, which keeps a validator's database free
//! of dev tooling and lets a restart resume from the committed head as usual.

use std::collections::BTreeMap;

use parking_lot::Mutex;
use timerhost_chain::Chain;
use timerhost_state::{KvBackend, StoreSnapshot};
use timerhost_types::Hash;

use crate::error::Result;
use crate::mempool::Mempool;

/// Everything `dev_revert` restores.
#[derive(Clone, Debug)]
pub struct NodeSnapshot {
    /// Every entry of the store: head, state, tree, blocks, receipts, events.
    pub store: StoreSnapshot,
    /// Height of the head when it was taken.
    pub height: u64,
    /// The `dev_setNextBlockTimestamp` override pending when it was taken.
    pub next_timestamp: Option<u64>,
}

/// The snapshots a dev node holds, by id.
#[derive(Debug, Default)]
pub struct DevSnapshots {
    /// The last id handed out (ids start at 1, as anvil's do).
    last_id: u64,
    held: BTreeMap<u64, NodeSnapshot>,
}

impl DevSnapshots {
    /// Keeps `snapshot`; returns its id.
    pub fn insert(&mut self, snapshot: NodeSnapshot) -> u64 {
        self.last_id += 1;
        self.held.insert(self.last_id, snapshot);
        self.last_id
    }

    /// The snapshot `id`, if it is still held.
    pub fn get(&self, id: u64) -> Option<&NodeSnapshot> {
        self.held.get(&id)
    }

    /// Forgets `id` and every later snapshot (they describe states that a
    /// revert to `id` discards). Returns how many were forgotten.
    pub fn invalidate_from(&mut self, id: u64) -> usize {
        let later = self.held.split_off(&id);
        later.len()
    }

    /// (id, height) of every snapshot held, oldest first.
    pub fn list(&self) -> Vec<(u64, u64)> {
        self.held.iter().map(|(id, s)| (*id, s.height)).collect()
    }

    /// Number of snapshots held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Are no snapshots held?
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

/// Captures `chain` and the pending timestamp override. Call it only from
/// the chain's single writer, between blocks (the store scan is not a
/// point-in-time view of a commit in progress).
pub fn take<B: KvBackend>(chain: &Chain<B>, next_timestamp: Option<u64>) -> Result<NodeSnapshot> {
    let height = chain.head()?.height;
    Ok(NodeSnapshot {
        store: chain.snapshot()?,
        height,
        next_timestamp,
    })
}

/// Returns `chain` to `snapshot` and drops the pending transactions that
/// admission now refuses ([`Mempool::revalidate`]); returns those, with the
/// reason. The pool stays locked throughout, so no transaction is admitted
/// against the state being replaced. Same caller rule as [`take`]; the
/// caller restores `snapshot.next_timestamp` itself.
pub fn restore<B: KvBackend>(
    chain: &Chain<B>,
    pool: &Mutex<Mempool>,
    snapshot: &NodeSnapshot,
) -> Result<Vec<(Hash, String)>> {
    let mut pool = pool.lock();
    chain.revert(&snapshot.store)?;
    pool.revalidate(chain)
}

/// Formats a snapshot id the way `dev_snapshot` returns it (`0x1`).
pub fn format_id(id: u64) -> String {
    format!("{id:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::{ChainStore, MemoryBackend};

    fn snap(height: u64) -> NodeSnapshot {
        NodeSnapshot {
            store: ChainStore::new(MemoryBackend::new()).snapshot().unwrap(),
            height,
            next_timestamp: None,
        }
    }

    #[test]
    fn ids_count_up_and_a_revert_forgets_that_snapshot_and_later_ones() {
        let mut s = DevSnapshots::default();
        assert_eq!(s.insert(snap(1)), 1);
        assert_eq!(s.insert(snap(2)), 2);
        assert_eq!(s.insert(snap(3)), 3);
        assert_eq!(format_id(2), "0x2");
        assert_eq!(s.get(2).unwrap().height, 2);
        assert_eq!(s.invalidate_from(2), 2);
        assert!(s.get(2).is_none() && s.get(3).is_none());
        assert_eq!(s.get(1).unwrap().height, 1);
        assert_eq!(s.list(), vec![(1, 1)]);
        // Ids are never reused: the next one is 4, not 2.
        assert_eq!(s.insert(snap(1)), 4);
        assert_eq!(s.len(), 2);
        assert_eq!(s.invalidate_from(99), 0);
    }
}
