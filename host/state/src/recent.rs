//! Recent states (#48): the state of each of the last `proof_blocks`
//! blocks stays readable and provable, so `th_getProof` answers at a
//! height a client names (the block its light client verified), not only
//! at the head — what `eth_getProof` gives for the last 128 blocks.
//!
//! Two records, both written in the block's own atomic commit and deleted
//! once their height leaves the window — in a later commit, or, on a node,
//! by its pruner thread ([`ChainStore::prune_recent_states`], #46: the
//! deletions were a third of a full block's commit):
//!
//! - **The tree.** A commit normally deletes the tree nodes it makes
//!   stale, keeping the head's tree only. While recent states are kept
//!   (`proof_blocks > 0`) it keeps them instead, listed under
//!   [`RETAINED_STALE`] by the height that made them stale; a node is
//!   deleted once that height is `proof_blocks` below the head. The tree of
//!   every height in the window is then whole (every version has a root:
//!   `jmt` copies an unchanged root to the next version).
//! - **The values.** The tree holds value hashes only, and the flat state
//!   holds the head's values. Each commit records, for every key it writes,
//!   the value before ([`PREVIOUS_VALUES`], one read per written key). The
//!   value at height `h` is the value recorded by the first write after
//!   `h`, or the head's value when nothing wrote the key since.
//!
//! The cost is that read and two small entries per written key, and the
//! stale nodes of `proof_blocks` blocks on disk: `[storage] proof_blocks =
//! 0` turns it off (then the head alone is provable). Heights before the
//! retention began (`M proofs_from`, set by the first commit that keeps,
//! cleared by one that does not) are refused by name, as are heights older
//! than the window.
//!
//! While a snapshot is being taken ([`crate::snapshots`]) nothing is pruned
//! here: the snapshot's tree must stay whole until it is built, and the
//! nodes it needs are among the retained ones; the commits after it catch
//! up, [`PRUNE_HEIGHTS_PER_COMMIT`] heights at a time.
//!
//! This module reads recent states; what a commit writes and prunes is
//! [`crate::recent_records`] (the store's commit uses it, and this module
//! uses the store).

use std::collections::BTreeMap;

use timerhost_types::Hash;

use crate::backend::KvBackend;
use crate::error::{corrupt, Result, StorageError};
use crate::namespaces::{ns_key, META, PREVIOUS_VALUES, STATE};
use crate::overlay::StateRead;
use crate::proofs::{check_provable, prove_leaf, StateProof};
use crate::recent_records::{decode_previous, height_key, PROOFS_FROM};
use crate::store::ChainStore;

pub use crate::recent_records::{DEFAULT_PROOF_BLOCKS, PRUNE_HEIGHTS_PER_COMMIT};

/// The state of one recent height, readable and provable; made by
/// [`ChainStore::at_height`], which holds off commits while it is used.
pub struct StateAt<'a, B: KvBackend> {
    store: &'a ChainStore<B>,
    height: u64,
    head: u64,
    state_root: Hash,
}

impl<B: KvBackend> StateAt<'_, B> {
    /// The height this state is of.
    pub fn height(&self) -> u64 {
        self.height
    }

    /// That block's state root.
    pub fn state_root(&self) -> Hash {
        self.state_root
    }

    /// Writes after this height to keys in `[start, end)`: each key's value
    /// at this height (the value before its first write since).
    fn changed_since(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
    ) -> Result<BTreeMap<Vec<u8>, Option<Vec<u8>>>> {
        let mut changed = BTreeMap::new();
        for h in self.height + 1..=self.head {
            let from = height_key(PREVIOUS_VALUES, h, start);
            let to = match end {
                Some(e) => height_key(PREVIOUS_VALUES, h, e),
                None => height_key(PREVIOUS_VALUES, h + 1, &[]),
            };
            for (key, value) in self.store.backend.scan(&from, Some(&to), usize::MAX)? {
                changed
                    .entry(key[9..].to_vec())
                    .or_insert(decode_previous(&key, &value)?);
            }
        }
        Ok(changed)
    }

    /// `key`'s value and its proof against this height's state root.
    pub fn prove(&self, key: &[u8]) -> Result<StateProof> {
        check_provable(key)?;
        let value = self.get(key)?;
        prove_leaf(
            &self.store.backend,
            key,
            value,
            self.height,
            self.state_root,
        )
        .map_err(|e| {
            StorageError::NotProvable(format!(
                "the state tree of height {} is not whole on this node: {e}",
                self.height
            ))
        })
    }
}

impl<B: KvBackend> StateRead for StateAt<'_, B> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        for h in self.height + 1..=self.head {
            let record = height_key(PREVIOUS_VALUES, h, key);
            if let Some(before) = self.store.backend.get(&record)? {
                return decode_previous(&record, &before);
            }
        }
        self.store.backend.get(&ns_key(STATE, key))
    }

    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let changed = self.changed_since(start, end)?;
        // At most `changed.len()` of the head's entries are gone at this
        // height, so this many hold the first `limit` of its entries.
        let current = self
            .store
            .state()
            .scan(start, end, limit.saturating_add(changed.len()))?;
        let mut merged: BTreeMap<Vec<u8>, Vec<u8>> = current.into_iter().collect();
        for (key, value) in changed {
            match value {
                Some(v) => merged.insert(key, v),
                None => merged.remove(&key),
            };
        }
        Ok(merged.into_iter().take(limit).collect())
    }
}

impl<B: KvBackend> ChainStore<B> {
    /// The first height whose state this node can still prove, if any
    /// beside the head: `head − proof_blocks`, and not before retention
    /// began.
    pub fn oldest_provable(&self) -> Result<Option<u64>> {
        let Some(head) = self.head_height()? else {
            return Ok(None);
        };
        let keep = self.proof_blocks();
        let Some(from) = self.backend.get(&ns_key(META, PROOFS_FROM))? else {
            return Ok(Some(head));
        };
        let from = u64::from_be_bytes(
            from.as_slice()
                .try_into()
                .map_err(|_| corrupt("proofs_from", PROOFS_FROM, "not 8 bytes"))?,
        );
        Ok(Some(from.max(head.saturating_sub(keep)).min(head)))
    }

    /// Runs `f` on the state of `height` (the head, or one of the last
    /// `proof_blocks`), with commits held off meanwhile so nothing it reads
    /// is pruned under it.
    pub fn at_height<R>(
        &self,
        height: u64,
        f: impl FnOnce(&StateAt<'_, B>) -> Result<R>,
    ) -> Result<R> {
        // Commits hold this lock: the kept trees cannot be pruned mid-walk.
        let _no_commit = self.capture.lock();
        let head = self
            .head_height()?
            .ok_or_else(|| StorageError::NotProvable("the store has no block yet".into()))?;
        if height > head {
            return Err(StorageError::NotProvable(format!(
                "height {height} is beyond this node's head ({head})"
            )));
        }
        let oldest = self.oldest_provable()?.unwrap_or(head);
        if height < oldest {
            let keep = self.proof_blocks();
            return Err(StorageError::NotProvable(if keep == 0 {
                format!("this node keeps the state of its head only ([storage] proof_blocks = 0): it proves at height {head}, not {height}")
            } else {
                format!("this node keeps the state of its last {keep} blocks for proofs ([storage] proof_blocks): the oldest it proves is height {oldest} (head {head}), not {height}")
            }));
        }
        let header = self.header(height)?.ok_or_else(|| {
            StorageError::NotProvable(format!("this node has no header of height {height}"))
        })?;
        f(&StateAt {
            store: self,
            height,
            head,
            state_root: header.header.state_root,
        })
    }

    /// `key`'s value at `height` with its proof (see [`Self::at_height`]).
    pub fn prove_at(&self, key: &[u8], height: u64) -> Result<StateProof> {
        self.at_height(height, |state| state.prove(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;
    use crate::commitment::NODE_NAMESPACE;
    use crate::namespaces::{PREVIOUS_VALUES, RETAINED_STALE};
    use crate::overlay::ChangeSet;
    use crate::proofs::verify_proof;
    use crate::recent_records::height_of;

    fn commit(store: &ChainStore<MemoryBackend>, height: u64, changes: &ChangeSet) {
        crate::test_support::commit_block(store, height, changes, &[]);
    }

    /// What block `h` writes: `k{i}` for a few i set or deleted, a derived
    /// key now and then, and sometimes nothing at all.
    fn changes_of(h: u64) -> ChangeSet {
        let mut c = ChangeSet::new();
        if h % 7 == 3 {
            return c; // an empty block
        }
        for i in 0..12u64 {
            let key = format!("k{i}").into_bytes();
            match (h + i) % 5 {
                0 => {
                    c.insert(key, Some((h * 100 + i).to_be_bytes().to_vec()));
                }
                1 if h > 2 => {
                    c.insert(key, None);
                }
                _ => {}
            }
        }
        c.insert(b"u-derived".to_vec(), Some(h.to_be_bytes().to_vec()));
        c
    }

    /// The whole state after each height, as a reference.
    fn run(store: &ChainStore<MemoryBackend>, heights: u64) -> Vec<BTreeMap<Vec<u8>, Vec<u8>>> {
        let mut states = Vec::new();
        let mut state = BTreeMap::new();
        for h in 0..heights {
            let c = changes_of(h);
            for (k, v) in &c {
                match v {
                    Some(v) => state.insert(k.clone(), v.clone()),
                    None => state.remove(k),
                };
            }
            commit(store, h, &c);
            states.push(state.clone());
        }
        states
    }

    #[test]
    fn every_recent_height_is_read_and_proven_as_it_was() {
        let store = ChainStore::new(MemoryBackend::new());
        store.set_proof_blocks(6);
        let states = run(&store, 30);
        let head = 29;
        assert_eq!(store.oldest_provable().unwrap(), Some(head - 6));
        for h in head - 6..=head {
            store
                .at_height(h, |at| {
                    let expected = &states[h as usize];
                    // Every key as it was, and the range scans too.
                    for i in 0..12u64 {
                        let key = format!("k{i}").into_bytes();
                        assert_eq!(at.get(&key)?, expected.get(&key).cloned(), "k{i} at {h}");
                        let proof = at.prove(&key)?;
                        assert_eq!(proof.value, expected.get(&key).cloned());
                        let header = store.header(h)?.unwrap().header;
                        assert_eq!(proof.state_root, header.state_root);
                        verify_proof(
                            &header.state_root,
                            &key,
                            proof.value.as_deref(),
                            &proof.proof,
                        )
                        .unwrap_or_else(|e| panic!("k{i} at {h}: {e}"));
                        // Not against another height's root when it differs.
                        let head_root = store.header(head)?.unwrap().header.state_root;
                        if head_root != header.state_root {
                            assert!(
                                verify_proof(
                                    &head_root,
                                    &key,
                                    proof.value.as_deref(),
                                    &proof.proof
                                )
                                .is_err()
                                    || states[head as usize].get(&key) == expected.get(&key)
                            );
                        }
                    }
                    let all: Vec<(Vec<u8>, Vec<u8>)> = expected
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    assert_eq!(at.scan(b"", None, usize::MAX)?, all, "scan at {h}");
                    assert_eq!(
                        at.scan(b"k", Some(b"k5"), 3)?,
                        all.iter()
                            .filter(|(k, _)| k.as_slice() >= b"k".as_slice()
                                && k.as_slice() < b"k5".as_slice())
                            .take(3)
                            .cloned()
                            .collect::<Vec<_>>()
                    );
                    assert_eq!(
                        at.get(b"u-derived")?,
                        expected.get(b"u-derived".as_slice()).cloned()
                    );
                    Ok(())
                })
                .unwrap();
        }
        // Older than the window, or beyond the head: refused by name.
        let old = store.prove_at(b"k1", head - 7).unwrap_err().to_string();
        assert!(
            old.contains("last 6 blocks") && old.contains("oldest it proves is height 23"),
            "{old}"
        );
        let ahead = store.prove_at(b"k1", head + 1).unwrap_err().to_string();
        assert!(ahead.contains("beyond"), "{ahead}");
        // Derived keys have no proof of their own at any height.
        assert!(store.prove_at(b"u-derived", head - 1).is_err());
    }

    /// #46: a node leaves the window's pruning to its pruner thread. The
    /// commits then keep every height's records; `prune_recent_states`
    /// deletes those below the window (the window still reads and proves
    /// as it was), and nothing while a snapshot is being taken.
    #[test]
    fn the_window_pruned_apart_from_the_commits_keeps_every_recent_height() {
        let store = ChainStore::new(MemoryBackend::new());
        store.set_proof_blocks(4);
        store.prune_recent_states_apart(true);
        let states = run(&store, 30);
        let lowest = |ns: u8| -> Option<u64> {
            let first = store.backend.scan_keys(&[ns], Some(&[ns + 1]), 1).unwrap();
            first.first().map(|k| height_of(k).unwrap())
        };
        assert!(
            lowest(PREVIOUS_VALUES).unwrap() < 10,
            "the commits pruned nothing"
        );
        assert!(store.prune_recent_states().unwrap() > 0);
        assert!(lowest(PREVIOUS_VALUES).unwrap() > 29 - 4);
        assert!(lowest(RETAINED_STALE).unwrap() > 29 - 4);
        assert_eq!(
            store.prune_recent_states().unwrap(),
            0,
            "nothing left below"
        );
        for h in 29 - 4..=29 {
            for i in 0..12u64 {
                let key = format!("k{i}").into_bytes();
                let proof = store.prove_at(&key, h).unwrap();
                assert_eq!(
                    proof.value,
                    states[h as usize].get(&key).cloned(),
                    "k{i} at {h}"
                );
            }
        }
        // A snapshot being taken holds the window's pruning off.
        store.set_snapshot_interval(32);
        run_from(&store, 30, 40);
        assert!(
            store.capture.lock().is_some(),
            "height 32 started a capture"
        );
        assert_eq!(store.prune_recent_states().unwrap(), 0);
        assert!(
            lowest(PREVIOUS_VALUES).unwrap() < 39 - 4,
            "kept below the window"
        );
    }

    fn run_from(store: &ChainStore<MemoryBackend>, from: u64, to: u64) {
        for h in from..to {
            commit(store, h, &changes_of(h));
        }
    }

    #[test]
    fn the_window_is_pruned_and_turning_it_off_forgets_it() {
        let store = ChainStore::new(MemoryBackend::new());
        store.set_proof_blocks(4);
        run(&store, 40);
        let heights = |ns: u8| -> Vec<u64> {
            let mut hs: Vec<u64> = store
                .backend
                .scan_keys(&[ns], Some(&[ns + 1]), usize::MAX)
                .unwrap()
                .iter()
                .map(|k| height_of(k).unwrap())
                .collect();
            hs.dedup();
            hs
        };
        assert!(
            heights(RETAINED_STALE).iter().all(|h| *h > 39 - 4),
            "{:?}",
            heights(RETAINED_STALE)
        );
        assert!(heights(PREVIOUS_VALUES).iter().all(|h| *h > 39 - 4));
        assert!(!heights(PREVIOUS_VALUES).is_empty());
        // A node that keeps no recent states is no larger than one that
        // never did once the leftovers are gone.
        store.set_proof_blocks(0);
        let plain = ChainStore::new(MemoryBackend::new());
        let mut c = ChangeSet::new();
        for h in 0..40 {
            c = changes_of(h);
            commit(&plain, h, &c);
        }
        let _ = c;
        for h in 40..44 {
            commit(&store, h, &changes_of(h));
            commit(&plain, h, &changes_of(h));
        }
        assert!(heights(RETAINED_STALE).is_empty());
        assert!(heights(PREVIOUS_VALUES).is_empty());
        let nodes = |s: &ChainStore<MemoryBackend>| {
            s.backend
                .scan_keys(&[NODE_NAMESPACE], Some(&[NODE_NAMESPACE + 1]), usize::MAX)
                .unwrap()
                .len()
        };
        assert!(
            nodes(&store) <= nodes(&plain) + 40,
            "{} vs {}",
            nodes(&store),
            nodes(&plain)
        );
        let off = store.prove_at(b"k1", 42).unwrap_err().to_string();
        assert!(off.contains("head only"), "{off}");
        assert_eq!(store.prove_at(b"k1", 43).unwrap().height, 43);
        // Turned on again: provable from where it began, not before.
        store.set_proof_blocks(4);
        commit(&store, 44, &changes_of(44));
        commit(&store, 45, &changes_of(45));
        assert_eq!(store.oldest_provable().unwrap(), Some(43));
        assert!(store.prove_at(b"k1", 42).is_err());
        assert_eq!(store.prove_at(b"k3", 43).unwrap().height, 43);
    }
}
