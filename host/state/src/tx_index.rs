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
//! where [`ChainStore::receipt`] finds them, until the indexer (the node's
//! pruner thread, [`ChainStore::index_transactions`]) writes them with the
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
use crate::error::{corrupt, Result};
use crate::history::{self, TxLocation};
use crate::namespaces::{ns_key, META, TX_INDEX};
use crate::pruning;
use crate::store::ChainStore;
use timerhost_types::encoding;

/// `M tx_indexed`: every block at or below this height has its index
/// entries written (absent: none has — a store migrated to format 13 gets
/// its head here).
const INDEXED_KEY: &[u8] = b"tx_indexed";

/// The index entries of block `height`'s receipts (located hashes need none).
pub(crate) fn entries(height: u64, receipts: &[Receipt]) -> Vec<(Hash, TxLocation)> {
    receipts
        .iter()
        .enumerate()
        .filter(|(index, r)| !located::names_place(&r.tx_hash, height, *index as u32))
        .map(|(index, r)| {
            (
                r.tx_hash,
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
fn indexed_height(backend: &dyn KvBackend) -> Result<Option<u64>> {
    let key = ns_key(META, INDEXED_KEY);
    match backend.get(&key)? {
        None => Ok(None),
        Some(bytes) => <[u8; 8]>::try_from(bytes.as_slice())
            .map(|b| Some(u64::from_be_bytes(b)))
            .map_err(|_| corrupt("indexed height", &key, "not 8 bytes")),
    }
}

/// The entries of blocks above `M tx_indexed`, by hash and by height.
#[derive(Debug, Default)]
struct Pending {
    by_hash: HashMap<Hash, TxLocation>,
    by_height: BTreeMap<u64, Vec<(Hash, TxLocation)>>,
}

impl Pending {
    fn add(&mut self, height: u64, entries: Vec<(Hash, TxLocation)>) {
        self.by_hash.extend(entries.iter().copied());
        self.by_height.insert(height, entries);
    }

    fn remove_through(&mut self, height: u64) {
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
    pending: parking_lot::RwLock<Option<Pending>>,
    /// Commits leave their entries to [`ChainStore::index_transactions`].
    apart: std::sync::atomic::AtomicBool,
}

impl PendingTxIndex {
    /// Reads the entries of every kept block above `M tx_indexed` back from
    /// their receipts, if not done since the store was opened or restored.
    fn load(&self, backend: &dyn KvBackend) -> Result<()> {
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
                let receipts = history::receipt_hashes(backend, height)?;
                let entries = receipts
                    .into_iter()
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
                    .collect();
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

    fn location(&self, backend: &dyn KvBackend, hash: &Hash) -> Result<Option<TxLocation>> {
        self.load(backend)?;
        Ok(self
            .pending
            .read()
            .as_ref()
            .and_then(|p| p.by_hash.get(hash).copied()))
    }
}

fn read_head(backend: &dyn KvBackend) -> Result<Option<u64>> {
    let key = ns_key(META, b"head");
    match backend.get(&key)? {
        None => Ok(None),
        Some(bytes) => <[u8; 8]>::try_from(bytes.as_slice())
            .map(|b| Some(u64::from_be_bytes(b)))
            .map_err(|_| corrupt("head height", &key, "not 8 bytes")),
    }
}

/// What a commit does with its block's index entries.
pub(crate) enum CommitIndexing {
    /// Written in the commit's batch; the pending entries are then gone.
    Inline,
    /// Pending from before the write (a reader that finds them before the
    /// block is written reads no receipt there: "not yet"); taken back if
    /// the write fails.
    Apart(u64),
}

impl<B: KvBackend> ChainStore<B> {
    /// Adds to a commit's `batch` its block's index entries — or leaves
    /// them pending, when the indexer writes them — and says which. Called
    /// under the commit lock.
    pub(crate) fn stage_tx_index(
        &self,
        batch: &mut WriteBatch,
        height: u64,
        receipts: &[Receipt],
    ) -> Result<CommitIndexing> {
        self.tx_index.load(&self.backend)?;
        let entries = entries(height, receipts);
        let mut slot = self.tx_index.pending.write();
        let pending = slot.as_mut().expect("loaded above");
        if self
            .tx_index
            .apart
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            pending.add(height, entries);
            return Ok(CommitIndexing::Apart(height));
        }
        for backlog in pending.by_height.values() {
            stage(batch, backlog);
        }
        stage(batch, &entries);
        stage_indexed_height(batch, height);
        Ok(CommitIndexing::Inline)
    }

    /// After a commit's write: what [`Self::stage_tx_index`] left to do.
    pub(crate) fn finish_tx_index(&self, indexing: CommitIndexing, written: bool) {
        let mut slot = self.tx_index.pending.write();
        let Some(pending) = slot.as_mut() else {
            return;
        };
        match indexing {
            CommitIndexing::Inline if written => *pending = Pending::default(),
            CommitIndexing::Inline => {}
            CommitIndexing::Apart(height) if !written => {
                for (hash, _) in pending.by_height.remove(&height).unwrap_or_default() {
                    pending.by_hash.remove(&hash);
                }
            }
            CommitIndexing::Apart(_) => {}
        }
    }

    /// Leaves the writing of the transaction index to
    /// [`Self::index_transactions`] instead of every commit (#46). Whoever
    /// sets it must call that, or the pending entries grow in memory.
    pub fn index_transactions_apart(&self, apart: bool) {
        self.tx_index
            .apart
            .store(apart, std::sync::atomic::Ordering::Relaxed);
    }

    /// Writes the pending index entries of up to `max_heights` blocks, the
    /// oldest first, with the height they reach, in one atomic batch under
    /// the commit lock; returns the heights indexed. Blocks pruned before
    /// their turn get no entries.
    pub fn index_transactions(&self, max_heights: usize) -> Result<u64> {
        let _commit = self.capture.lock();
        self.tx_index.load(&self.backend)?;
        let floor = pruning::history_floor(&self.backend)?;
        let mut batch = WriteBatch::new();
        let mut last = None;
        {
            let slot = self.tx_index.pending.read();
            let pending = slot.as_ref().expect("loaded above");
            for (height, entries) in pending.by_height.iter().take(max_heights) {
                if *height >= floor {
                    stage(&mut batch, entries);
                }
                last = Some(*height);
            }
        }
        let Some(last) = last else {
            return Ok(0);
        };
        stage_indexed_height(&mut batch, last);
        self.backend.write(batch)?;
        let mut slot = self.tx_index.pending.write();
        let pending = slot.as_mut().expect("loaded above");
        let before = pending.by_height.len();
        pending.remove_through(last);
        Ok((before - pending.by_height.len()) as u64)
    }

    /// Blocks whose index entries are pending (metrics, tests).
    pub fn pending_tx_index_heights(&self) -> Result<u64> {
        self.tx_index.load(&self.backend)?;
        Ok(self
            .tx_index
            .pending
            .read()
            .as_ref()
            .map_or(0, |p| p.by_height.len() as u64))
    }

    /// The receipt of `tx_hash` with its place: pending, indexed or named
    /// by the hash itself.
    pub fn receipt(&self, tx_hash: &Hash) -> Result<Option<(TxLocation, Receipt)>> {
        let pending = self.tx_index.location(&self.backend, tx_hash)?;
        history::receipt_of(&self.backend, tx_hash, pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;
    use crate::history::tests::receipt;
    use crate::overlay::ChangeSet;
    use crate::test_support::commit_block;

    /// Block `height` with two user transactions, tagged by height.
    fn receipts_of(height: u64) -> Vec<Receipt> {
        vec![
            receipt(height as u8 * 2, vec![]),
            receipt(height as u8 * 2 + 1, vec![]),
        ]
    }

    fn commit(store: &ChainStore<MemoryBackend>, height: u64) {
        commit_block(store, height, &ChangeSet::new(), &receipts_of(height));
    }

    fn indexed_entries(store: &ChainStore<MemoryBackend>) -> usize {
        store
            .backend()
            .scan(&[TX_INDEX], Some(&[TX_INDEX + 1]), usize::MAX)
            .unwrap()
            .len()
    }

    /// Every transaction of blocks 1..=head is found at its place.
    fn all_found(store: &ChainStore<MemoryBackend>, head: u64) {
        for height in 1..=head {
            for (index, r) in receipts_of(height).iter().enumerate() {
                let (loc, found) = store.receipt(&r.tx_hash).unwrap().expect("found");
                assert_eq!(
                    (loc.height, loc.index, found.tx_hash),
                    (height, index as u32, r.tx_hash)
                );
            }
        }
    }

    #[test]
    fn commits_apart_leave_their_entries_pending_and_found_until_the_indexer_writes_them() {
        let store = ChainStore::new(MemoryBackend::new());
        commit_block(&store, 0, &ChangeSet::new(), &[]);
        store.index_transactions_apart(true);
        for height in 1..=5 {
            commit(&store, height);
        }
        assert_eq!(indexed_entries(&store), 0, "no entry written by a commit");
        assert_eq!(store.pending_tx_index_heights().unwrap(), 5);
        all_found(&store, 5);
        assert_eq!(store.receipt(&Hash([99; 32])).unwrap(), None);
        // The indexer writes the oldest first, and the height they reach.
        assert_eq!(store.index_transactions(3).unwrap(), 3);
        assert_eq!(indexed_entries(&store), 6);
        assert_eq!(indexed_height(store.backend()).unwrap(), Some(3));
        assert_eq!(store.pending_tx_index_heights().unwrap(), 2);
        all_found(&store, 5);
        assert_eq!(store.index_transactions(16).unwrap(), 2);
        assert_eq!(store.index_transactions(16).unwrap(), 0);
        assert_eq!(indexed_entries(&store), 10);
        all_found(&store, 5);
    }

    #[test]
    fn pending_entries_lost_to_a_crash_are_read_back_and_written_by_the_next_commit() {
        let store = ChainStore::new(MemoryBackend::new());
        commit_block(&store, 0, &ChangeSet::new(), &[]);
        store.index_transactions_apart(true);
        for height in 1..=4 {
            commit(&store, height);
        }
        store.index_transactions(1).unwrap();
        // The process dies: the store is opened again, nothing in memory.
        let reopened = ChainStore::new(store.into_backend());
        all_found(&reopened, 4);
        assert_eq!(reopened.pending_tx_index_heights().unwrap(), 3);
        // Without an indexer, the next commit writes the backlog with its own.
        commit(&reopened, 5);
        assert_eq!(reopened.pending_tx_index_heights().unwrap(), 0);
        assert_eq!(indexed_entries(&reopened), 10);
        assert_eq!(indexed_height(reopened.backend()).unwrap(), Some(5));
        all_found(&ChainStore::new(reopened.into_backend()), 5);
    }

    #[test]
    fn blocks_pruned_before_their_turn_get_no_entries() {
        let store = ChainStore::new(MemoryBackend::new());
        commit_block(&store, 0, &ChangeSet::new(), &[]);
        store.index_transactions_apart(true);
        for height in 1..=6 {
            commit(&store, height);
        }
        // History of blocks 1..=4 pruned while their entries were pending.
        store.prune(2, 16).unwrap();
        assert_eq!(store.history_floor().unwrap(), 5);
        let pruned = receipts_of(2)[0].tx_hash;
        assert_eq!(store.receipt(&pruned).unwrap(), None, "its block is gone");
        assert_eq!(store.index_transactions(16).unwrap(), 6);
        assert_eq!(indexed_entries(&store), 4, "blocks 5 and 6 only");
        assert_eq!(store.receipt(&pruned).unwrap(), None);
        assert!(store.receipt(&receipts_of(6)[1].tx_hash).unwrap().is_some());
    }

    #[test]
    fn a_revert_reads_the_pending_entries_of_the_snapshot() {
        let store = ChainStore::new(MemoryBackend::new());
        commit_block(&store, 0, &ChangeSet::new(), &[]);
        store.index_transactions_apart(true);
        commit(&store, 1);
        let snapshot = store.snapshot().unwrap();
        commit(&store, 2);
        store.restore(&snapshot).unwrap();
        assert_eq!(store.pending_tx_index_heights().unwrap(), 1);
        assert_eq!(store.receipt(&receipts_of(2)[0].tx_hash).unwrap(), None);
        all_found(&store, 1);
    }
}
