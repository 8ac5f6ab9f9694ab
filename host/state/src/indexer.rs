//! The store's side of the transaction index written apart (#46,
//! [`crate::tx_index`] says why and what is kept where): a commit's entries
//! staged or left pending, the indexer's batches, and lookups through the
//! pending entries.

use timerhost_types::{Hash, Receipt};

use crate::backend::{KvBackend, WriteBatch};
use crate::error::Result;
use crate::history::{self, TxLocation};
use crate::pruning;
use crate::store::ChainStore;
use crate::tx_index::{entries, stage, stage_indexed_height, Pending};

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
            CommitIndexing::Apart(height) if !written => pending.remove(height),
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
    use crate::namespaces::TX_INDEX;
    use crate::overlay::ChangeSet;
    use crate::test_support::commit_block;
    use crate::tx_index::indexed_height;

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

    /// A store whose commits leave their index entries to the indexer,
    /// with genesis and blocks `1..=blocks` committed (none indexed).
    fn apart_store(blocks: u64) -> ChainStore<MemoryBackend> {
        let store = ChainStore::new(MemoryBackend::new());
        commit_block(&store, 0, &ChangeSet::new(), &[]);
        store.index_transactions_apart(true);
        for height in 1..=blocks {
            commit(&store, height);
        }
        store
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
        let store = apart_store(5);
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
        let store = apart_store(4);
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
        let store = apart_store(6);
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
        let store = apart_store(1);
        let snapshot = store.snapshot().unwrap();
        commit(&store, 2);
        store.restore(&snapshot).unwrap();
        assert_eq!(store.pending_tx_index_heights().unwrap(), 1);
        assert_eq!(store.receipt(&receipts_of(2)[0].tx_hash).unwrap(), None);
        all_found(&store, 1);
    }
}
