//! State proofs (#48): a value of the state tree — or its absence — with
//! the Jellyfish Merkle proof that ties it to a block's state root, which a
//! client checks against a header without trusting the node that answered.
//!
//! The format, for a client in another language (docs/RPC.md, "Proofs"):
//! the key hash is SHA-256 of the state key; the proof is `jmt` 0.12's
//! `SparseMerkleProof` in borsh — an optional leaf `(key hash, value hash)`
//! and the siblings from the bottom level up — verified as `jmt` verifies
//! it (leaf = SHA-256(`"JMT::LeafNode"` ‖ key hash ‖ SHA-256(value)),
//! internal = SHA-256(`"JMT::IntrnalNode"` ‖ left ‖ right), the empty
//! subtree a fixed placeholder).
//!
//! [`ChainStore::prove`] proves at the head; [`ChainStore::prove_at`]
//! ([`crate::recent`]) at any of the last `proof_blocks` heights. Derived keys
//! (timer records and indexes, `timerhost_types::keys::is_committed`) are
//! not leaves and have no proof of their own.

use borsh::BorshDeserialize;
use jmt::proof::SparseMerkleProof;
use jmt::{JellyfishMerkleTree, RootHash};
use sha2::Sha256;
use timerhost_types::keys::is_committed;
use timerhost_types::Hash;

use crate::backend::KvBackend;
use crate::commitment::ProofReader;
use crate::error::{Result, StorageError};
use crate::namespaces::{ns_key, STATE};
use crate::snapshots::key_hash;
use crate::store::ChainStore;

/// A proven value of the state at one height.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateProof {
    /// The height whose state root it is checked against.
    pub height: u64,
    /// That block's state root.
    pub state_root: Hash,
    /// The state key.
    pub key: Vec<u8>,
    /// Its value (`None`: proven absent).
    pub value: Option<Vec<u8>>,
    /// borsh of `jmt`'s `SparseMerkleProof<Sha256>`.
    pub proof: Vec<u8>,
}

impl<B: KvBackend> ChainStore<B> {
    /// The head's value at `key` with its proof.
    pub fn prove(&self, key: &[u8]) -> Result<StateProof> {
        check_provable(key)?;
        // Commits hold this lock: the head's tree cannot go stale mid-walk.
        let _no_commit = self.capture.lock();
        let header = self
            .head_header()?
            .ok_or_else(|| StorageError::Snapshot("the store has no block yet".into()))?;
        let value = self.backend.get(&ns_key(STATE, key))?;
        prove_leaf(&self.backend, key, value, header.height, header.state_root).map_err(|e| {
            StorageError::Commitment(format!("proof at version {}: {e}", header.height))
        })
    }
}

/// Refuses a derived key: it is committed through its timer's bucket, not
/// as a leaf with a proof of its own.
pub(crate) fn check_provable(key: &[u8]) -> Result<()> {
    if is_committed(key) {
        Ok(())
    } else {
        Err(StorageError::NotProvable(
            "this key is derived state, committed through its timer's bucket, not a leaf with a proof of its own".into(),
        ))
    }
}

/// The proof of `key` holding `value` (`None`: absent) in the tree of
/// `height`, whose root is `state_root`: the walk the head's proofs and the
/// recent heights' ([`crate::recent`]) share. The error is `jmt`'s, for the
/// caller to name (a missing node at the head is corruption; at a recent
/// height, a tree this node no longer keeps whole).
pub(crate) fn prove_leaf(
    backend: &dyn KvBackend,
    key: &[u8],
    value: Option<Vec<u8>>,
    height: u64,
    state_root: Hash,
) -> std::result::Result<StateProof, String> {
    let wanted = key_hash(key);
    let value_of = |kh: jmt::KeyHash| -> Result<Option<Vec<u8>>> {
        Ok(if kh == wanted { value.clone() } else { None })
    };
    let reader = ProofReader {
        backend,
        value_of: &value_of,
    };
    let tree: JellyfishMerkleTree<'_, _, Sha256> = JellyfishMerkleTree::new(&reader);
    let (proven, proof) = tree
        .get_with_proof(wanted, height)
        .map_err(|e| format!("{e:#}"))?;
    Ok(StateProof {
        height,
        state_root,
        key: key.to_vec(),
        value: proven,
        proof: borsh::to_vec(&proof).expect("writing to a Vec cannot fail"),
    })
}

/// Checks that `value` (`None`: absent) is what the state with root `root`
/// holds at `key`, by `proof`; the reason if not.
pub fn verify_proof(
    root: &Hash,
    key: &[u8],
    value: Option<&[u8]>,
    proof: &[u8],
) -> std::result::Result<(), String> {
    let proof = SparseMerkleProof::<Sha256>::try_from_slice(proof)
        .map_err(|e| format!("the proof does not decode: {e}"))?;
    proof
        .verify(RootHash(root.0), key_hash(key), value)
        .map_err(|e| format!("the proof does not hold: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;
    use crate::overlay::ChangeSet;

    fn commit(store: &ChainStore<MemoryBackend>, height: u64, changes: ChangeSet) {
        crate::test_support::commit_block(store, height, &changes, &[]);
    }

    #[test]
    fn values_and_absences_are_proven_and_a_tampered_claim_is_not() {
        let store = ChainStore::new(MemoryBackend::new());
        for height in 0..5u64 {
            let mut c = ChangeSet::new();
            for i in 0..50u64 {
                c.insert(
                    format!("k{i}").into_bytes(),
                    Some((height * i).to_be_bytes().to_vec()),
                );
            }
            commit(&store, height, c);
        }
        let p = store.prove(b"k7").unwrap();
        assert_eq!(p.height, 4);
        assert_eq!(p.value, Some(28u64.to_be_bytes().to_vec()));
        verify_proof(&p.state_root, b"k7", p.value.as_deref(), &p.proof).unwrap();
        // Another value, another key, another root: refused.
        assert!(verify_proof(&p.state_root, b"k7", Some(b"x"), &p.proof).is_err());
        assert!(verify_proof(&p.state_root, b"k8", p.value.as_deref(), &p.proof).is_err());
        assert!(verify_proof(&Hash([1; 32]), b"k7", p.value.as_deref(), &p.proof).is_err());
        assert!(verify_proof(&p.state_root, b"k7", None, &p.proof).is_err());
        let mut bent = p.proof.clone();
        let last = bent.len() - 1;
        bent[last] ^= 1;
        assert!(verify_proof(&p.state_root, b"k7", p.value.as_deref(), &bent).is_err());
        // An absent key: proven absent, and not present.
        let absent = store.prove(b"nobody").unwrap();
        assert_eq!(absent.value, None);
        verify_proof(&absent.state_root, b"nobody", None, &absent.proof).unwrap();
        assert!(verify_proof(&absent.state_root, b"nobody", Some(b"1"), &absent.proof).is_err());
        // Derived keys have no proof of their own.
        assert!(store.prove(b"u-derived").is_err());
    }
}
