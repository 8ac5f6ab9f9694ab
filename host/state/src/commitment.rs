//! The state root: a Jellyfish Merkle Tree (the `jmt` crate, as used by
//! Penumbra and Sovereign) over every consensus key.
//!
//! Keys and values are hashed with keccak256. The tree version is the block
//! height, so the root of block `h` is the tree root at version `h`. Updating
//! costs O(writes × log₁₆ N) node reads/writes — proportional to the block's
//! writes, not to the size of the state. Nodes made stale by a block are
//! deleted in the same atomic commit: the node keeps the latest tree only
//! (historical proofs would need an archive mode, which no issue asks for).

use borsh::BorshDeserialize;
use jmt::storage::{LeafNode, Node, NodeKey, TreeReader, TreeUpdateBatch};
use jmt::{JellyfishMerkleTree, KeyHash, OwnedValue, Version};
use sha3::Keccak256;
use timerhost_types::Hash;

use crate::backend::{KvBackend, WriteBatch};
use crate::error::{Result, StorageError};
use crate::overlay::ChangeSet;

/// The tree update a block persists (new nodes, stale nodes to prune).
pub type TreeUpdate = TreeUpdateBatch;

/// Namespace byte of tree nodes in the backend.
pub const NODE_NAMESPACE: u8 = b'N';

fn node_db_key(node_key: &NodeKey) -> Vec<u8> {
    let mut key = vec![NODE_NAMESPACE];
    borsh::to_writer(&mut key, node_key).expect("writing to a Vec cannot fail");
    key
}

/// Reads tree nodes from a backend.
struct NodeReader<'a> {
    backend: &'a dyn KvBackend,
}

impl TreeReader for NodeReader<'_> {
    fn get_node_option(&self, node_key: &NodeKey) -> anyhow::Result<Option<Node>> {
        let Some(bytes) = self.backend.get(&node_db_key(node_key))? else {
            return Ok(None);
        };
        Ok(Some(Node::try_from_slice(&bytes)?))
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
        let reader = NodeReader { backend };
        let tree: JellyfishMerkleTree<'_, _, Keccak256> = JellyfishMerkleTree::new(&reader);
        let value_set = changes
            .iter()
            .map(|(k, v)| (KeyHash::with::<Keccak256>(k), v.clone()));
        let (root, update) = tree.put_value_set(value_set, version).map_err(|e| {
            StorageError::Commitment(format!("updating the tree at version {version}: {e:#}"))
        })?;
        Ok((Hash(root.0), update))
    }

    /// Adds the new nodes of `update` to `batch` and deletes the nodes it made stale.
    pub fn stage(update: &TreeUpdateBatch, batch: &mut WriteBatch) {
        for (node_key, node) in update.node_batch.nodes() {
            batch.put(
                node_db_key(node_key),
                borsh::to_vec(node).expect("writing to a Vec cannot fail"),
            );
        }
        for stale in &update.stale_node_index_batch {
            batch.delete(node_db_key(&stale.node_key));
        }
    }

    /// The committed root at `version`, if that tree is still stored.
    pub fn root_at(backend: &dyn KvBackend, version: Version) -> Result<Option<Hash>> {
        let reader = NodeReader { backend };
        let tree: JellyfishMerkleTree<'_, _, Keccak256> = JellyfishMerkleTree::new(&reader);
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
