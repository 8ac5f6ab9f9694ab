//! The state root: a Jellyfish Merkle Tree (the `jmt` crate, as used by
//! Penumbra and Sovereign) over every consensus key.
//!
//! Keys, values and nodes are hashed with SHA-256 (jmt's own `Sha256Jmt`
//! choice, as in Penumbra): the tree hashes ~50 internal-node pairs per key
//! update, and SHA-256 runs on the CPU's SHA extensions where present — about
//! 3× faster than keccak256 here (docs/PERFORMANCE.md). Addresses, transaction
//! hashes and timer ids stay keccak256. The tree version is the block
//! height, so the root of block `h` is the tree root at version `h`. Updating
//! costs O(writes × log₁₆ N) node reads/writes — proportional to the block's
//! writes, not to the size of the state. Nodes made stale by a block are
//! deleted in the same atomic commit, or kept for the last `proof_blocks`
//! blocks so their states stay provable ([`crate::recent`], #48).
//!
//! Keys in the derived namespace (`timerhost_types::keys::is_committed`) are
//! not leaves: the timers crate commits to them through one digest per due
//! bucket, so a block's tree work follows its committed writes only.

use std::collections::HashMap;

use borsh::BorshDeserialize;
use jmt::proof::SparseMerkleRangeProof;
use jmt::storage::{LeafNode, Node, NodeKey, TreeReader, TreeUpdateBatch};
use jmt::{JellyfishMerkleTree, KeyHash, OwnedValue, Version};
use parking_lot::RwLock;
use sha2::Sha256;
use timerhost_types::Hash;

use crate::backend::{KvBackend, WriteBatch};
use crate::error::{Result, StorageError};
use crate::overlay::ChangeSet;

/// The tree update a block persists (new nodes, stale nodes to prune).
pub type TreeUpdate = TreeUpdateBatch;

use crate::namespaces::DEFERRED_STALE;
pub use crate::namespaces::TREE_NODES as NODE_NAMESPACE;

pub(crate) fn node_db_key(node_key: &NodeKey) -> Vec<u8> {
    let mut key = vec![NODE_NAMESPACE];
    borsh::to_writer(&mut key, node_key).expect("writing to a Vec cannot fail");
    key
}

/// Nodes whose nibble path is at most this long are cached: at most
/// 1 + 16 + 16² + 16³ + 16⁴ = 69,905 nodes (under ~50 MiB), the levels every
/// key update walks through whatever the size of the state.
pub const CACHED_DEPTH: usize = 4;

/// Decoded nodes of the tree's upper levels, kept across blocks.
///
/// Every key update walks from the root, so the top levels are read for
/// every write of every block; caching them decoded makes a block's tree
/// reads depend on how many keys it writes, not on how deep the tree has
/// grown. A node never changes under its key (the key holds the version that
/// created it), so entries stay valid until a commit makes them stale or the
/// store is rewritten wholesale (`ChainStore::restore`), which clears it.
#[derive(Debug, Default)]
pub struct NodeCache {
    nodes: RwLock<HashMap<NodeKey, Node>>,
}

impl NodeCache {
    fn cacheable(node_key: &NodeKey) -> bool {
        node_key.nibble_path().num_nibbles() <= CACHED_DEPTH
    }

    fn get(&self, node_key: &NodeKey) -> Option<Node> {
        self.nodes.read().get(node_key).cloned()
    }

    fn insert(&self, node_key: &NodeKey, node: &Node) {
        self.nodes.write().insert(node_key.clone(), node.clone());
    }

    /// Applies a committed tree update: drops the nodes it made stale and
    /// keeps the new upper-level nodes.
    pub fn apply(&self, update: &TreeUpdateBatch) {
        let mut nodes = self.nodes.write();
        for stale in &update.stale_node_index_batch {
            nodes.remove(&stale.node_key);
        }
        for (node_key, node) in update.node_batch.nodes() {
            if Self::cacheable(node_key) {
                nodes.insert(node_key.clone(), node.clone());
            }
        }
    }

    /// Forgets everything (the store was rewritten under it).
    pub fn clear(&self) {
        self.nodes.write().clear();
    }

    /// Number of cached nodes.
    pub fn len(&self) -> usize {
        self.nodes.read().len()
    }

    /// Is the cache empty?
    pub fn is_empty(&self) -> bool {
        self.nodes.read().is_empty()
    }
}

/// Reads tree nodes from a backend, through the cache when given one.
struct NodeReader<'a> {
    backend: &'a dyn KvBackend,
    cache: Option<&'a NodeCache>,
}

impl TreeReader for NodeReader<'_> {
    fn get_node_option(&self, node_key: &NodeKey) -> anyhow::Result<Option<Node>> {
        let cache = self.cache.filter(|_| NodeCache::cacheable(node_key));
        if let Some(node) = cache.and_then(|c| c.get(node_key)) {
            return Ok(Some(node));
        }
        let Some(bytes) = self.backend.get(&node_db_key(node_key))? else {
            return Ok(None);
        };
        let node = Node::try_from_slice(&bytes)?;
        // Only committed nodes are ever read here, so caching on read is safe.
        if let Some(cache) = cache {
            cache.insert(node_key, &node);
        }
        Ok(Some(node))
    }

    fn get_value_option(
        &self,
        _max_version: Version,
        _key_hash: KeyHash,
    ) -> anyhow::Result<Option<OwnedValue>> {
        // Values live in the flat state namespace; the tree stores only their
        // hashes. Root computation never needs this (only proof generation does).
        anyhow::bail!("the node does not retain historical values for proofs")
    }

    fn get_rightmost_leaf(&self) -> anyhow::Result<Option<(NodeKey, LeafNode)>> {
        anyhow::bail!("tree restoration is not supported")
    }
}

/// Reads nodes from the backend and values from a snapshot, for range
/// proofs ([`StateCommitment::range_proof`]).
pub(crate) struct ProofReader<'a> {
    pub(crate) backend: &'a dyn KvBackend,
    pub(crate) value_of: &'a dyn Fn(KeyHash) -> Result<Option<Vec<u8>>>,
}

impl TreeReader for ProofReader<'_> {
    fn get_node_option(&self, node_key: &NodeKey) -> anyhow::Result<Option<Node>> {
        NodeReader {
            backend: self.backend,
            cache: None,
        }
        .get_node_option(node_key)
    }

    fn get_value_option(
        &self,
        _max_version: Version,
        key_hash: KeyHash,
    ) -> anyhow::Result<Option<OwnedValue>> {
        Ok((self.value_of)(key_hash)?)
    }

    fn get_rightmost_leaf(&self) -> anyhow::Result<Option<(NodeKey, LeafNode)>> {
        anyhow::bail!("tree restoration does not read through a proof reader")
    }
}

/// Computes and persists the state root.
#[derive(Debug, Clone, Copy, Default)]
pub struct StateCommitment;

impl StateCommitment {
    /// The root after applying `changes` at `version` (= block height) on top
    /// of the tree at `version − 1`, and the tree update to persist with the
    /// block. Reads nodes but writes nothing.
    pub fn compute(
        backend: &dyn KvBackend,
        changes: &ChangeSet,
        version: Version,
    ) -> Result<(Hash, TreeUpdateBatch)> {
        Self::compute_with(backend, None, changes, version)
    }

    /// [`Self::compute`] reading the upper levels through `cache`.
    pub fn compute_with(
        backend: &dyn KvBackend,
        cache: Option<&NodeCache>,
        changes: &ChangeSet,
        version: Version,
    ) -> Result<(Hash, TreeUpdateBatch)> {
        let reader = NodeReader { backend, cache };
        let tree: JellyfishMerkleTree<'_, _, Sha256> = JellyfishMerkleTree::new(&reader);
        // Derived keys are committed through what they derive from, not as
        // leaves (`timerhost_types::keys::is_committed`).
        let value_set = changes
            .iter()
            .filter(|(k, _)| timerhost_types::keys::is_committed(k))
            .map(|(k, v)| (KeyHash::with::<Sha256>(k), v.clone()));
        let (root, update) = tree.put_value_set(value_set, version).map_err(|e| {
            StorageError::Commitment(format!("updating the tree at version {version}: {e:#}"))
        })?;
        Ok((Hash(root.0), update))
    }

    /// Adds the new nodes of `update` to `batch` (what becomes of the stale
    /// ones is the caller's: [`Self::stage`], [`crate::recent`]).
    pub fn stage_new_nodes(update: &TreeUpdateBatch, batch: &mut WriteBatch) {
        for (node_key, node) in update.node_batch.nodes() {
            batch.put(
                node_db_key(node_key),
                borsh::to_vec(node).expect("writing to a Vec cannot fail"),
            );
        }
    }

    /// Adds the new nodes of `update` to `batch` and deletes the nodes it made stale.
    pub fn stage(update: &TreeUpdateBatch, batch: &mut WriteBatch) {
        Self::stage_new_nodes(update, batch);
        for stale in &update.stale_node_index_batch {
            batch.delete(node_db_key(&stale.node_key));
        }
    }

    /// [`Self::stage`] while a snapshot is being taken: the nodes `update`
    /// made stale are kept (listed under [`DEFERRED_STALE`]) so the tree of
    /// the snapshot's height stays whole until its proofs are made
    /// ([`crate::snapshots`]).
    pub fn stage_keeping_stale(update: &TreeUpdateBatch, batch: &mut WriteBatch) {
        for (node_key, node) in update.node_batch.nodes() {
            batch.put(
                node_db_key(node_key),
                borsh::to_vec(node).expect("writing to a Vec cannot fail"),
            );
        }
        for stale in &update.stale_node_index_batch {
            let mut key = vec![DEFERRED_STALE];
            borsh::to_writer(&mut key, &stale.node_key).expect("writing to a Vec cannot fail");
            batch.put(key, Vec::new());
        }
    }

    /// The proof that the leaves up to `rightmost` (in key-hash order) are
    /// all the tree at `version` holds up to there; `value_of` gives the
    /// value of `rightmost` (the tree keeps value hashes only).
    pub fn range_proof(
        backend: &dyn KvBackend,
        version: Version,
        rightmost: KeyHash,
        value_of: &dyn Fn(KeyHash) -> Result<Option<Vec<u8>>>,
    ) -> Result<SparseMerkleRangeProof<Sha256>> {
        let reader = ProofReader { backend, value_of };
        let tree: JellyfishMerkleTree<'_, _, Sha256> = JellyfishMerkleTree::new(&reader);
        tree.get_range_proof(rightmost, version).map_err(|e| {
            StorageError::Commitment(format!("range proof at version {version}: {e:#}"))
        })
    }

    /// The committed root at `version`, if that tree is still stored.
    pub fn root_at(backend: &dyn KvBackend, version: Version) -> Result<Option<Hash>> {
        let reader = NodeReader {
            backend,
            cache: None,
        };
        let tree: JellyfishMerkleTree<'_, _, Sha256> = JellyfishMerkleTree::new(&reader);
        tree.get_root_hash_option(version)
            .map(|r| r.map(|r| Hash(r.0)))
            .map_err(|e| StorageError::Commitment(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;

    fn apply(backend: &MemoryBackend, changes: &ChangeSet, version: u64) -> Hash {
        let (root, update) = StateCommitment::compute(backend, changes, version).unwrap();
        let mut batch = WriteBatch::new();
        StateCommitment::stage(&update, &mut batch);
        backend.write(batch).unwrap();
        root
    }

    #[test]
    fn root_depends_on_content_not_history() {
        let a = MemoryBackend::new();
        let b = MemoryBackend::new();
        let mut c1 = ChangeSet::new();
        c1.insert(b"x".to_vec(), Some(b"1".to_vec()));
        c1.insert(b"y".to_vec(), Some(b"2".to_vec()));
        let ra0 = apply(&a, &c1, 0);
        let mut c2 = ChangeSet::new();
        c2.insert(b"y".to_vec(), None);
        let ra1 = apply(&a, &c2, 1);
        assert_ne!(ra0, ra1);

        // Same final content written differently → same root.
        let mut d1 = ChangeSet::new();
        d1.insert(b"x".to_vec(), Some(b"1".to_vec()));
        apply(&b, &d1, 0);
        let mut d2 = ChangeSet::new();
        d2.insert(b"z".to_vec(), None);
        d2.insert(b"x".to_vec(), Some(b"1".to_vec()));
        let rb1 = apply(&b, &d2, 1);
        assert_eq!(ra1, rb1);
        assert_eq!(StateCommitment::root_at(&a, 1).unwrap(), Some(ra1));
    }

    #[test]
    fn derived_keys_are_not_leaves() {
        let backend = MemoryBackend::new();
        let mut plain = ChangeSet::new();
        plain.insert(b"x".to_vec(), Some(b"1".to_vec()));
        let with_derived = {
            let mut c = plain.clone();
            let mut derived = vec![timerhost_types::keys::TIMERS_DERIVED];
            derived.extend_from_slice(b"record");
            c.insert(derived, Some(b"anything".to_vec()));
            c
        };
        let (a, _) = StateCommitment::compute(&backend, &plain, 0).unwrap();
        let (b, _) = StateCommitment::compute(&backend, &with_derived, 0).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn stale_nodes_are_pruned() {
        let backend = MemoryBackend::new();
        for v in 0..50u64 {
            let mut c = ChangeSet::new();
            c.insert(b"counter".to_vec(), Some(v.to_be_bytes().to_vec()));
            apply(&backend, &c, v);
        }
        // One leaf, rewritten 50 times: only the latest version's nodes remain.
        assert!(backend.len() <= 2, "{} nodes kept", backend.len());
    }
}
