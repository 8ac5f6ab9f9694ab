//! Test helpers shared by the store's unit tests: committing a block of
//! raw state changes without a chain above the store.

use timerhost_types::{Address, Block, BlockHeader, Hash, Receipt};

use crate::backend::KvBackend;
use crate::overlay::ChangeSet;
use crate::store::{ChainStore, CommitRequest};

/// An empty block at `height` with state root `root`.
pub(crate) fn empty_block(height: u64, root: Hash) -> Block {
    Block {
        header: BlockHeader {
            chain_id: 1,
            height,
            timestamp_ms: height + 1,
            proposer: Address::ZERO,
            parent_hash: Hash::ZERO,
            tx_root: Hash::ZERO,
            state_root: root,
            receipts_root: Hash::ZERO,
            cycles_used: 0,
            cells_used: 0,
            lane_basefee: 0,
        },
        txs: Vec::new(),
    }
}

/// Commits `changes` (and `receipts`) as block `height`; returns its root.
pub(crate) fn commit_block<B: KvBackend>(
    store: &ChainStore<B>,
    height: u64,
    changes: &ChangeSet,
    receipts: &[Receipt],
) -> Hash {
    let (root, update) = store.compute_root(changes, height).unwrap();
    store
        .commit(CommitRequest {
            block: &empty_block(height, root),
            receipts,
            changes,
            tree_update: &update,
            summary: None,
        })
        .unwrap();
    root
}
