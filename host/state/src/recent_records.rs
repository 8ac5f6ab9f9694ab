//! What a commit writes and prunes to keep recent states provable (#48;
//! the reading side, and why, is [`crate::recent`]): each written key's
//! previous value (`U ‖ height ‖ key`), the tree nodes the block made
//! stale (`K ‖ height ‖ node`, the nodes themselves kept), the height
//! retention began (`M proofs_from`), and the deletion of all of it once a
//! height leaves the window.

use crate::backend::{KvBackend, WriteBatch};
use crate::commitment::NODE_NAMESPACE;
use crate::error::{corrupt, Result};
use crate::namespaces::{ns_key, META, PREVIOUS_VALUES, RETAINED_STALE, STATE};
use crate::overlay::ChangeSet;

/// Blocks whose state a node keeps provable unless configured otherwise
/// (`[storage] proof_blocks`; geth serves `eth_getProof` for 128).
pub const DEFAULT_PROOF_BLOCKS: u64 = 128;

/// Heights of old records a commit deletes at most: one keeps pace with
/// the chain, the second catches up after a snapshot or a smaller window.
pub const PRUNE_HEIGHTS_PER_COMMIT: usize = 2;

/// `M proofs_from`: the first height whose state is provable here.
pub(crate) const PROOFS_FROM: &[u8] = b"proofs_from";

pub(crate) fn height_key(ns: u8, height: u64, rest: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(9 + rest.len());
    key.push(ns);
    key.extend_from_slice(&height.to_be_bytes());
    key.extend_from_slice(rest);
    key
}

fn encode_previous(value: Option<&[u8]>) -> Vec<u8> {
    match value {
        None => vec![0],
        Some(v) => {
            let mut out = Vec::with_capacity(1 + v.len());
            out.push(1);
            out.extend_from_slice(v);
            out
        }
    }
}

pub(crate) fn decode_previous(key: &[u8], bytes: &[u8]) -> Result<Option<Vec<u8>>> {
    match bytes.split_first() {
        Some((0, [])) => Ok(None),
        Some((1, value)) => Ok(Some(value.to_vec())),
        _ => Err(corrupt("previous value", key, "neither 0 nor 1 ‖ value")),
    }
}

/// What a commit at `height` adds while recent states are kept: the value
/// before of every key `changes` writes, the tree nodes the block made
/// stale listed (they stay), and the marker of where retention began.
pub(crate) fn stage(
    backend: &dyn KvBackend,
    height: u64,
    changes: &ChangeSet,
    stale_nodes: &std::collections::BTreeSet<jmt::storage::StaleNodeIndex>,
    batch: &mut WriteBatch,
) -> Result<()> {
    for key in changes.keys() {
        let before = backend.get(&ns_key(STATE, key))?;
        batch.put(
            height_key(PREVIOUS_VALUES, height, key),
            encode_previous(before.as_deref()),
        );
    }
    for stale in stale_nodes {
        let node = borsh::to_vec(&stale.node_key).expect("writing to a Vec cannot fail");
        batch.put(height_key(RETAINED_STALE, height, &node), Vec::new());
    }
    if backend.get(&ns_key(META, PROOFS_FROM))?.is_none() {
        // The tree of `height − 1` is whole from here on: its nodes made
        // stale by this block are the first retained.
        let from = height.saturating_sub(1);
        batch.put(ns_key(META, PROOFS_FROM), from.to_be_bytes().to_vec());
    }
    Ok(())
}

/// A commit that keeps no recent states forgets where retention began.
pub(crate) fn stop(batch: &mut WriteBatch) {
    batch.delete(ns_key(META, PROOFS_FROM));
}

/// Deletes the records (and retained nodes) of the oldest heights at or
/// below `head − keep`, at most [`PRUNE_HEIGHTS_PER_COMMIT`] heights of
/// each kind (`keep = 0`: every height, the leftovers of a larger window).
pub(crate) fn prune(
    backend: &dyn KvBackend,
    head: u64,
    keep: u64,
    batch: &mut WriteBatch,
) -> Result<()> {
    let floor = head.saturating_sub(keep);
    for ns in [RETAINED_STALE, PREVIOUS_VALUES] {
        let mut from = vec![ns];
        let end = vec![ns + 1];
        for _ in 0..PRUNE_HEIGHTS_PER_COMMIT {
            let Some(first) = backend.scan_keys(&from, Some(&end), 1)?.into_iter().next() else {
                break;
            };
            let height = height_of(&first)?;
            if height > floor || (keep > 0 && height == head) {
                break;
            }
            let (start, stop) = (height_key(ns, height, &[]), height_key(ns, height + 1, &[]));
            for key in backend.scan_keys(&start, Some(&stop), usize::MAX)? {
                if ns == RETAINED_STALE {
                    batch.delete(ns_key(NODE_NAMESPACE, &key[9..]));
                }
                batch.delete(key);
            }
            from = stop;
        }
    }
    Ok(())
}

pub(crate) fn height_of(key: &[u8]) -> Result<u64> {
    key.get(1..9)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| corrupt("recent-state record", key, "no height"))
}
