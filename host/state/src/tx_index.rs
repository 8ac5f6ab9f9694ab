//! The transaction index (`X ‖ tx hash → height ‖ receipt index`), which
//! a node writes apart from its commits (#46).
//!
//! A user transaction's hash is random, so its index entry is an insert at
//! a random place of the largest sorted index of the store: sled touches a
//! leaf of its own for each one. On a node under a transfer load those
//! inserts were a quarter of the block producer's time per transaction, and
//! without them in the commit the same node held 7,500 tx/s at a p99 of
//! 314 ms where it had fallen behind (1,059 ms, four times larger blocks).
//!
//! So a commit may leave its block's entries *pending*: held in memory,
//! where `ChainStore::receipt` finds them, until the indexer (the node's
//! pruner thread, `ChainStore::index_transactions`, `crate::indexer`) writes them with the
//! height they reach under `M tx_indexed`, in one atomic batch. Every block
//! at or below that height has its entries in `X` (or was pruned); every
//! block above it has them pending. A crash loses nothing: the pending
//! entries of the blocks above `M tx_indexed` are read back from their
//! stored receipts the first time the store is used again. Where nothing
//! writes them apart (the in-process chain, tests, tools), a commit writes
//! the pending entries and its own with the new height, as before.
//!
//! Hashes that name their own place (located fire hashes) have no entry
//! ([`timerhost_types::located`]).

use std::collections::{BTreeMap, HashMap};

use timerhost_types::{located, Hash, Receipt};

use crate::backend::{KvBackend, WriteBatch};
use crate::error::Result;
use crate::history::{self, TxLocation};
use crate::namespaces::{ns_key, read_head, read_meta_u64, META, TX_INDEX};
use crate::pruning;
use timerhost_types::encoding;

/// `M tx_indexed`: every block at or below this height has its index
/// entries written (absent: none has — a store migrated to format 13 gets
/// its head here).
const INDEXED_KEY: &[u8] = b"tx_indexed";

/// The index entries of block `height`'s receipts (located hashes need none).
pub(crate) fn entries(height: u64, receipts: &[Receipt]) -> Vec<(Hash, TxLocation)> {
    entries_of_hashes(height, receipts.iter().map(|r| r.tx_hash))
}

/// [`entries`] from the block's transaction hashes, in receipt order.
fn entries_of_hashes(height: u64, hashes: impl Iterator<Item = Hash>) -> Vec<(Hash, TxLocation)> {
    hashes
        .enumerate()
        .filter(|(index, hash)| !located::names_place(hash, height, *index as u32))
        .map(|(index, hash)| {
            (
                hash,
                TxLocation {
                    height,
                    index: index as u32,
                },
            )
        })
        .collect()
}

/// Adds `entries` to `batch`.
pub(crate) fn stage(batch: &mut WriteBatch, entries: &[(Hash, TxLocation)]) {
    for (hash, loc) in entries {
        batch.put(ns_key(TX_INDEX, hash.as_bytes()), encoding::encode_raw(loc));
    }
}

/// Adds to `batch` that every block up to `height` is indexed.
pub(crate) fn stage_indexed_height(batch: &mut WriteBatch, height: u64) {
    batch.put(ns_key(META, INDEXED_KEY), height.to_be_bytes().to_vec());
}

/// The height every block up to which is indexed, if any is.
pub(crate) fn indexed_height(backend: &dyn KvBackend) -> Result<Option<u64>> {
    read_meta_u64(backend, INDEXED_KEY, "indexed height")
}

/// The entries of blocks above `M tx_indexed`, by hash and by height.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    pub(crate) by_hash: HashMap<Hash, TxLocation>,
    pub(crate) by_height: BTreeMap<u64, Vec<(Hash, TxLocation)>>,
}

impl Pending {
    pub(crate) fn add(&mut self, height: u64, entries: Vec<(Hash, TxLocation)>) {
        self.by_hash.extend(entries.iter().copied());
        self.by_height.insert(height, entries);
    }

    /// Forgets block `height`'s entries (a commit whose write failed).
    pub(crate) fn remove(&mut self, height: u64) {
        for (hash, _) in self.by_height.remove(&height).unwrap_or_default() {
            self.by_hash.remove(&hash);
        }
    }

    /// Forgets the entries of every block up to `height` (indexed).
    pub(crate) fn remove_through(&mut self, height: u64) {
        let kept = self.by_height.split_off(&(height + 1));
        for (hash, _) in std::mem::replace(&mut self.by_height, kept)
            .into_values()
            .flatten()
        {
            self.by_hash.remove(&hash);
        }
    }
}

/// The pending entries of a store, read back from it on first use.
#[derive(Debug, Default)]
pub(crate) struct PendingTxIndex {
    /// `None` until read from the store (after an open, a restore or a
    /// revert).
    pub(crate) pending: parking_lot::RwLock<Option<Pending>>,
    /// Commits leave their entries to `ChainStore::index_transactions`, `crate::indexer`.
    pub(crate) apart: std::sync::atomic::AtomicBool,
}

impl PendingTxIndex {
    /// Reads the entries of every kept block above `M tx_indexed` back from
    /// their receipts, if not done since the store was opened or restored.
    pub(crate) fn load(&self, backend: &dyn KvBackend) -> Result<()> {
        if self.pending.read().is_some() {
            return Ok(());
        }
        let mut slot = self.pending.write();
        if slot.is_some() {
            return Ok(());
        }
        let mut pending = Pending::default();
        if let Some(head) = read_head(backend)? {
            let first = indexed_height(backend)?
                .map_or(0, |h| h + 1)
                .max(pruning::history_floor(backend)?);
            for height in first..=head {
                let hashes = history::receipt_hashes(backend, height)?;
                let entries = entries_of_hashes(height, hashes.into_iter());
                pending.add(height, entries);
            }
        }
        *slot = Some(pending);
        Ok(())
    }

    /// Forgets the pending entries; the next use reads them from the store.
    pub(crate) fn forget(&self) {
        *self.pending.write() = None;
    }

    pub(crate) fn location(
        &self,
        backend: &dyn KvBackend,
        hash: &Hash,
    ) -> Result<Option<TxLocation>> {
        self.load(backend)?;
        Ok(self
            .pending
            .read()
            .as_ref()
            .and_then(|p| p.by_hash.get(hash).copied()))
    }
}
