//! Restoring a state snapshot ([`crate::snapshots`]) into an empty store:
//! the receiving half of state sync (#44).
//!
//! [`SnapshotRestore`] takes tree chunks in order and hands each to `jmt`'s
//! `JellyfishMerkleRestore`, which rebuilds the tree of version `H` from
//! the leaves and checks, chunk by chunk, that the leaves received so far
//! and the chunk's range proof hash to the expected root (taken from a
//! header the caller verified, never from the peer's manifest). Nothing of
//! a chunk is written before it passes. A chunk that fails leaves the
//! `jmt` restorer in an unknown state, so the caller starts over
//! ([`SnapshotRestore::wipe`]) without the peer that served it.
//!
//! Derived chunks are written as they come, each checked to hold derived
//! keys only and to lie inside its announced range; whether they agree
//! with the leaves is the timers crate's audit, run by the caller before
//! [`SnapshotRestore::finish`].
//!
//! `finish` writes, in one batch, the last tree nodes, the genesis block
//! (which every open checks against the genesis file), block `H`'s header
//! and hash index, the head and the history floor: until then the store
//! has no head and a restarted node starts the sync again from scratch.

use std::sync::Arc;

use borsh::BorshDeserialize;
use jmt::proof::SparseMerkleRangeProof;
use jmt::restore::{JellyfishMerkleRestore, StateSnapshotReceiver};
use jmt::storage::{LeafNode, Node, NodeBatch, NodeKey, TreeReader, TreeWriter};
use jmt::{KeyHash, OwnedValue, RootHash, Version};
use parking_lot::Mutex;
use sha2::Sha256;
use timerhost_types::encoding;
use timerhost_types::keys::is_committed;
use timerhost_types::{Block, BlockHeader};

use crate::backend::{KvBackend, WriteBatch};
use crate::commitment::{node_db_key, StateCommitment};
use crate::error::{Result, StorageError};
use crate::headers::StoredHeader;
use crate::migrations::STORE_FORMAT;
use crate::namespaces::{ns_key, BLOCK, HASH_INDEX, HEADERS, META, STATE};
use crate::pruning;
use crate::snapshots::{key_hash, SnapshotManifest};
use crate::store::ChainStore;

/// Collects the nodes the `jmt` restorer freezes, for the next batch.
#[derive(Default)]
struct FrozenNodes(Mutex<Vec<(NodeKey, Node)>>);

impl TreeWriter for FrozenNodes {
    fn write_node_batch(&self, batch: &NodeBatch) -> anyhow::Result<()> {
        let mut nodes = self.0.lock();
        for (k, n) in batch.nodes() {
            nodes.push((k.clone(), n.clone()));
        }
        Ok(())
    }
}

impl TreeReader for FrozenNodes {
    fn get_node_option(&self, _node_key: &NodeKey) -> anyhow::Result<Option<Node>> {
        // Read only when resuming an interrupted restore, which we never do:
        // an interrupted sync starts over.
        Ok(None)
    }

    fn get_value_option(&self, _: Version, _: KeyHash) -> anyhow::Result<Option<OwnedValue>> {
        anyhow::bail!("a restore reads no values")
    }

    fn get_rightmost_leaf(&self) -> anyhow::Result<Option<(NodeKey, LeafNode)>> {
        Ok(None)
    }
}

/// A restore in progress.
pub struct SnapshotRestore<'a, B: KvBackend> {
    store: &'a ChainStore<B>,
    manifest: SnapshotManifest,
    tree: Option<JellyfishMerkleRestore<Sha256>>,
    frozen: Arc<FrozenNodes>,
    next_tree_chunk: u32,
}

impl<'a, B: KvBackend> SnapshotRestore<'a, B> {
    /// Starts restoring `manifest` into `store`, which must have no head;
    /// `header` is block `H`'s header, verified by the caller.
    pub fn new(
        store: &'a ChainStore<B>,
        manifest: SnapshotManifest,
        header: &BlockHeader,
    ) -> Result<Self> {
        if store.head_height()?.is_some() {
            return Err(StorageError::Snapshot(
                "state sync needs an empty store (this one has blocks)".into(),
            ));
        }
        if header.height != manifest.height
            || header.hash() != manifest.block_hash
            || header.state_root != manifest.state_root
        {
            return Err(StorageError::Snapshot(format!(
                "the snapshot's manifest names block {} ({}), not the verified block {} ({})",
                manifest.height,
                manifest.block_hash,
                header.height,
                header.hash()
            )));
        }
        let frozen = Arc::new(FrozenNodes::default());
        let tree = JellyfishMerkleRestore::new(
            frozen.clone(),
            manifest.height,
            RootHash(header.state_root.0),
        )
        .map_err(|e| StorageError::Snapshot(format!("starting the tree restore: {e:#}")))?;
        Ok(Self {
            store,
            manifest,
            tree: Some(tree),
            frozen,
            next_tree_chunk: 0,
        })
    }

    /// The snapshot being restored.
    pub fn manifest(&self) -> &SnapshotManifest {
        &self.manifest
    }

    /// The next tree chunk [`Self::add_tree_chunk`] takes.
    pub fn next_tree_chunk(&self) -> u32 {
        self.next_tree_chunk
    }

    fn bad(&self, index: u32, reason: impl Into<String>) -> StorageError {
        StorageError::BadChunk {
            height: self.manifest.height,
            index,
            reason: reason.into(),
        }
    }

    /// Checks tree chunk `index` against the root and writes it. A
    /// [`StorageError::BadChunk`] means the restore must start over.
    pub fn add_tree_chunk(
        &mut self,
        index: u32,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        proof: &[u8],
    ) -> Result<()> {
        if index != self.next_tree_chunk {
            return Err(StorageError::Snapshot(format!(
                "tree chunk {index} given while chunk {} is expected",
                self.next_tree_chunk
            )));
        }
        let expected_end = self.manifest.tree_chunk_ends[index as usize];
        let Some((last_key, _)) = entries.last() else {
            return Err(self.bad(index, "it is empty"));
        };
        if key_hash(last_key).0 != expected_end {
            return Err(self.bad(index, "it does not end where the manifest says"));
        }
        if let Some((key, _)) = entries.iter().find(|(k, _)| !is_committed(k)) {
            return Err(self.bad(
                index,
                format!("key {} is derived, not a tree leaf", hex::encode(key)),
            ));
        }
        let proof = SparseMerkleRangeProof::<Sha256>::try_from_slice(proof)
            .map_err(|e| self.bad(index, format!("its proof does not decode: {e}")))?;
        let leaves = entries
            .iter()
            .map(|(k, v)| (key_hash(k), v.clone()))
            .collect();
        let tree = self
            .tree
            .as_mut()
            .ok_or_else(|| StorageError::Snapshot("a bad chunk ended this restore".into()))?;
        if let Err(e) = tree.add_chunk(leaves, proof) {
            self.tree = None;
            return Err(self.bad(index, format!("{e:#}")));
        }
        let mut batch = WriteBatch::new();
        self.stage_frozen(&mut batch);
        for (k, v) in entries {
            batch.put(ns_key(STATE, &k), v);
        }
        self.store.backend.write(batch)?;
        self.next_tree_chunk += 1;
        Ok(())
    }

    fn stage_frozen(&self, batch: &mut WriteBatch) {
        for (k, n) in self.frozen.0.lock().drain(..) {
            batch.put(
                node_db_key(&k),
                borsh::to_vec(&n).expect("writing to a Vec cannot fail"),
            );
        }
    }

    /// Writes derived chunk `index` (numbered among the derived chunks)
    /// after checking that it holds derived keys only, in order, from its
    /// announced start up to the next chunk's.
    pub fn add_derived_chunk(
        &mut self,
        index: u32,
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    ) -> Result<()> {
        let chunk = self.manifest.tree_chunks() + index;
        let starts = &self.manifest.derived_chunk_starts;
        let Some(start) = starts.get(index as usize) else {
            return Err(StorageError::Snapshot(format!(
                "derived chunk {index} is not in the manifest"
            )));
        };
        let next = starts.get(index as usize + 1);
        if entries.first().map(|(k, _)| k) != Some(start) {
            return Err(self.bad(chunk, "it does not start where the manifest says"));
        }
        let mut previous: Option<&[u8]> = None;
        for (k, _) in &entries {
            if is_committed(k) {
                return Err(self.bad(chunk, format!("key {} is a tree leaf", hex::encode(k))));
            }
            if previous.is_some_and(|p| p >= k.as_slice()) || next.is_some_and(|n| k >= n) {
                return Err(self.bad(chunk, "its keys are out of order or out of its range"));
            }
            previous = Some(k);
        }
        let mut batch = WriteBatch::new();
        for (k, v) in entries {
            batch.put(ns_key(STATE, &k), v);
        }
        self.store.backend.write(batch)
    }

    /// Deletes derived chunk `index` (to take it again from another peer
    /// after the audit found it wrong).
    pub fn remove_derived_chunk(&mut self, index: u32) -> Result<()> {
        let starts = &self.manifest.derived_chunk_starts;
        let Some(start) = starts.get(index as usize) else {
            return Ok(());
        };
        let end = match starts.get(index as usize + 1) {
            Some(next) => ns_key(STATE, next),
            None => vec![STATE + 1],
        };
        let keys = self
            .store
            .backend
            .scan_keys(&ns_key(STATE, start), Some(&end), usize::MAX)?;
        let mut batch = WriteBatch::new();
        for k in keys {
            batch.delete(k);
        }
        self.store.backend.write(batch)
    }

    /// Ends the restore: the tree's last nodes, its root checked, and the
    /// genesis block, block `H`'s header, the head and the floor written
    /// in one batch. Every tree chunk must have been added.
    pub fn finish(mut self, genesis: &Block, header: &BlockHeader, tx_count: u32) -> Result<()> {
        if self.next_tree_chunk != self.manifest.tree_chunks() {
            return Err(StorageError::Snapshot(format!(
                "{} of {} tree chunks were restored",
                self.next_tree_chunk,
                self.manifest.tree_chunks()
            )));
        }
        let tree = self
            .tree
            .take()
            .ok_or_else(|| StorageError::Snapshot("a bad chunk ended this restore".into()))?;
        tree.finish()
            .map_err(|e| StorageError::Snapshot(format!("finishing the tree: {e:#}")))?;
        let mut batch = WriteBatch::new();
        self.stage_frozen(&mut batch);
        self.store.backend.write(batch)?;
        let height = self.manifest.height;
        let root = StateCommitment::root_at(&self.store.backend, height)?;
        if root != Some(header.state_root) {
            return Err(StorageError::Snapshot(format!(
                "the restored tree's root is {root:?}, block {height} says {}",
                header.state_root
            )));
        }
        let mut batch = WriteBatch::new();
        let zero = 0u64.to_be_bytes();
        batch.put(ns_key(BLOCK, &zero), encoding::encode(genesis));
        batch.put(
            ns_key(HEADERS, &zero),
            encoding::encode(&StoredHeader {
                header: genesis.header.clone(),
                tx_count: 0,
            }),
        );
        batch.put(
            ns_key(HASH_INDEX, genesis.header.hash().as_bytes()),
            zero.to_vec(),
        );
        let height_be = height.to_be_bytes();
        batch.put(
            ns_key(HEADERS, &height_be),
            encoding::encode(&StoredHeader {
                header: header.clone(),
                tx_count,
            }),
        );
        batch.put(
            ns_key(HASH_INDEX, header.hash().as_bytes()),
            height_be.to_vec(),
        );
        pruning::stage_state_sync_floor(&mut batch, height);
        // No history below the head, so nothing to index up to it.
        crate::tx_index::stage_indexed_height(&mut batch, height);
        batch.put(ns_key(META, b"format"), STORE_FORMAT.to_be_bytes().to_vec());
        batch.put(
            ns_key(META, crate::namespaces::HEAD_KEY),
            height_be.to_vec(),
        );
        let written = self.store.backend.write(batch);
        self.store.tx_index.forget();
        written
    }

    /// Deletes everything written so far, for a restore that starts over.
    pub fn wipe(self) -> Result<()> {
        self.store.wipe_for_restore()
    }
}

impl<B: KvBackend> ChainStore<B> {
    /// Deletes every entry of a store that has no head (what an
    /// interrupted or failed restore wrote).
    pub fn wipe_for_restore(&self) -> Result<()> {
        if self.head_height()?.is_some() {
            return Err(StorageError::Snapshot(
                "refusing to wipe a store that has a head".into(),
            ));
        }
        loop {
            let keys = self.backend.scan_keys(&[], None, 4_096)?;
            if keys.is_empty() {
                return Ok(());
            }
            let mut batch = WriteBatch::new();
            for k in keys {
                batch.delete(k);
            }
            self.backend.write(batch)?;
        }
    }

    /// The height this store was restored at by state sync, if it was.
    pub fn state_synced_at(&self) -> Result<Option<u64>> {
        pruning::state_synced_at(&self.backend)
    }
}
