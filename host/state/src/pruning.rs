//! Pruning old history (`[storage] keep_blocks` in node.toml, #44).
//!
//! A node that keeps the last N blocks removes, for every height below
//! `head + 1 - N`, the block's transactions (`B`), receipts (`R`), events
//! (`V`) and the index entries that point into them (`X`, `E`), oldest
//! first, a bounded number of heights per atomic batch — and the id
//! lookups its fires left stale (#46: a fire does not delete its timer's
//! `u i` entry, which is random-keyed and cost a fire more than its
//! handler; pruning deletes the ones still stale). It keeps:
//!
//! - consensus state and its tree, which execution and state sync need;
//! - block 0 (the genesis block every open checks the genesis file against);
//! - every height's header (`h`), hash index entry (`H`) and timer summary
//!   (`Y`): a few hundred bytes per block, what the head, the dashboard's
//!   timeline, a light client following headers and the search for when a
//!   time timer was due read.
//!
//! The lowest height whose history is whole — the *floor* — is `M
//! history_floor` (absent: 1, nothing pruned), written in the same batch as
//! the deletions, so a crash leaves the floor and the entries in agreement.
//! Reads below the floor fail with [`StorageError::Pruned`], whose message
//! starts with "pruned" and says how many blocks the node keeps.

use timerhost_types::keys;

use crate::backend::{KvBackend, WriteBatch};
use crate::error::{Result, StorageError};
use crate::history;
use crate::namespaces::{ns_key, BLOCK, META, STATE};

/// Metadata key of the floor.
const FLOOR_KEY: &[u8] = b"history_floor";
/// Metadata key of the `keep_blocks` the last pruning used (for messages).
const KEEP_KEY: &[u8] = b"keep_blocks";
/// Metadata key of the height a state sync restored (for messages).
const SYNCED_KEY: &[u8] = b"state_synced_at";

/// What one pruning step removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PruneStep {
    /// Heights whose history was removed (`floor_before..floor_after`).
    pub heights: u64,
    /// Backend entries deleted.
    pub entries: u64,
    /// The floor after the step.
    pub floor: u64,
}

fn read_u64(backend: &dyn KvBackend, name: &[u8]) -> Result<Option<u64>> {
    crate::namespaces::read_meta_u64(backend, name, "pruning marker")
}

/// The lowest height above 0 whose block, receipts and events are kept.
pub(crate) fn history_floor(backend: &dyn KvBackend) -> Result<u64> {
    Ok(read_u64(backend, FLOOR_KEY)?.unwrap_or(1).max(1))
}

/// `Ok` if block `height`'s history is kept (block 0 always is).
pub(crate) fn check_kept(backend: &dyn KvBackend, height: u64) -> Result<()> {
    if height == 0 {
        return Ok(());
    }
    let floor = history_floor(backend)?;
    if height >= floor {
        return Ok(());
    }
    Err(StorageError::Pruned {
        height,
        floor,
        keep_blocks: read_u64(backend, KEEP_KEY)?.unwrap_or(0),
        synced_at: read_u64(backend, SYNCED_KEY)?,
    })
}

/// Stages the floor of a store restored from the snapshot of `height`
/// ([`crate::restore`]): it has no block below `height + 1`.
pub(crate) fn stage_state_sync_floor(batch: &mut WriteBatch, height: u64) {
    batch.put(ns_key(META, FLOOR_KEY), (height + 1).to_be_bytes().to_vec());
    batch.put(ns_key(META, SYNCED_KEY), height.to_be_bytes().to_vec());
}

/// The height a state sync restored this store at, if it was.
pub(crate) fn state_synced_at(backend: &dyn KvBackend) -> Result<Option<u64>> {
    read_u64(backend, SYNCED_KEY)
}

/// Removes the history of at most `max_heights` heights above the floor
/// that lie below `head + 1 - keep_blocks`, in one atomic batch with the
/// new floor. `keep_blocks == 0` keeps everything (an archive node).
pub(crate) fn prune_step(
    backend: &dyn KvBackend,
    head: u64,
    keep_blocks: u64,
    max_heights: u64,
) -> Result<PruneStep> {
    let floor = history_floor(backend)?;
    if keep_blocks == 0 {
        return Ok(PruneStep {
            floor,
            ..PruneStep::default()
        });
    }
    let target = (head + 1).saturating_sub(keep_blocks).max(1);
    let end = target.min(floor.saturating_add(max_heights));
    if end <= floor {
        return Ok(PruneStep {
            floor,
            ..PruneStep::default()
        });
    }
    let mut batch = WriteBatch::new();
    let mut entries = 0u64;
    let mut fired = Vec::new();
    for height in floor..end {
        batch.delete(ns_key(BLOCK, &height.to_be_bytes()));
        entries += 1 + history::unstage(backend, &mut batch, height, &mut fired)? as u64;
    }
    // Before the batch that moves the floor: a crash between the two sweeps
    // these heights again, never skips them.
    entries += sweep_stale_lookups(backend, &fired)?;
    batch.put(ns_key(META, FLOOR_KEY), end.to_be_bytes().to_vec());
    batch.put(ns_key(META, KEEP_KEY), keep_blocks.to_be_bytes().to_vec());
    backend.write(batch)?;
    Ok(PruneStep {
        heights: end - floor,
        entries,
        floor: end,
    })
}

/// Deletes the id lookups that the fires of `fired` left stale (#46,
/// `timerhost_timers::record::IdLookup`): a lookup whose record is gone.
/// One that names a record again (the timer was retried, or its dead
/// letter re-armed) is the pending timer's and stays. Each deletion is a
/// compare-and-swap against the value read, so a commit that re-points the
/// lookup meanwhile wins; the record key a stale lookup names holds a
/// sequence number no later record takes, so it cannot come back.
fn sweep_stale_lookups(backend: &dyn KvBackend, fired: &[[u8; 32]]) -> Result<u64> {
    let mut swept = 0u64;
    for id in fired {
        let lookup = ns_key(STATE, &keys::timer_id_lookup_key(id));
        let Some(record_key) = backend.get(&lookup)? else {
            continue;
        };
        if backend.get_head(&ns_key(STATE, &record_key), 0)?.is_some() {
            continue;
        }
        if backend.delete_if(&lookup, &record_key)? {
            swept += 1;
        }
    }
    Ok(swept)
}
