//! The due queue: which timers are due, in which order.
//!
//! Today's ordering is CIP-5's: by height, FIFO within a height (the
//! `t h ‖ height ‖ seq` index). Timers a budget leaves unprocessed simply stay
//! in the index, so at the next block they come *before* the timers natively
//! due then (carry-over, DESIGN.md). Timers classified for removal when the GC
//! budget was already spent move to the GC backlog (`t g ‖ seq`), which the
//! next block clears first; each due timer is therefore examined once, and
//! end-of-block work stays proportional to the timers processed.
//!
//! Everything that knows the index layout is in this module, so new trigger
//! kinds (wall clock, state triggers) and orderings (priority) are new queue
//! implementations, not rewrites of delivery.

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead};
use timerhost_types::encoding::Canonical;
use timerhost_types::keys::TIMERS;
use timerhost_types::{Hash, Timer};

use crate::error::Result;
use crate::store::{corrupt, hash_value};

const DUE: u8 = b'h';
const BACKLOG: u8 = b'g';

fn due_key(height: u64, seq: u64) -> Vec<u8> {
    let mut k = vec![TIMERS, DUE];
    k.extend_from_slice(&height.to_be_bytes());
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

fn backlog_key(seq: u64) -> Vec<u8> {
    let mut k = vec![TIMERS, BACKLOG];
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// Why a timer is in the GC backlog (decided when it was classified).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum RemovalReason {
    /// `current_height > expires_at` at classification.
    Expired {
        /// Height at classification.
        classified_at: u64,
    },
    /// `balance(fee_payer) < max_cost` at classification.
    InsufficientFunds {
        /// `max_cost` then.
        required: u128,
        /// The balance then.
        available: u128,
    },
}

/// A GC backlog entry.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct GcEntry {
    /// The timer.
    pub timer_id: Hash,
    /// Why it must go.
    pub reason: RemovalReason,
}

impl Canonical for GcEntry {
    const NAME: &'static str = "timer GC entry";
}

/// Puts a new timer in the due queue.
pub fn enqueue(state: &mut Overlay<'_>, timer: &Timer) {
    state.put(due_key(timer.height, timer.seq), timer.timer_id.0.to_vec());
}

/// Where a timer is queued, when the caller already knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// In the due queue (`t h`): delivery walking that queue.
    Due,
    /// In the GC backlog (`t g`): delivery clearing the backlog.
    Backlog,
    /// Not known (cancellation by the actor or governance): look it up.
    Unknown,
}

/// Takes a timer out of the due queue or the backlog. With a known location
/// this costs no reads (end of block removes thousands of timers); deleting
/// only keys that exist keeps absent keys out of the block's change set.
pub fn dequeue(state: &mut Overlay<'_>, timer: &Timer, queued: Queued) -> Result<()> {
    let due = due_key(timer.height, timer.seq);
    let backlog = backlog_key(timer.seq);
    match queued {
        Queued::Due => state.delete(due),
        Queued::Backlog => state.delete(backlog),
        Queued::Unknown => {
            if state.get(&due)?.is_some() {
                state.delete(due);
            }
            if state.get(&backlog)?.is_some() {
                state.delete(backlog);
            }
        }
    }
    Ok(())
}

/// Moves a classified timer from the due queue to the GC backlog.
pub fn move_to_backlog(state: &mut Overlay<'_>, timer: &Timer, reason: RemovalReason) {
    state.delete(due_key(timer.height, timer.seq));
    state.put_encoded(
        backlog_key(timer.seq),
        &GcEntry {
            timer_id: timer.timer_id,
            reason,
        },
    );
}

/// Is this timer waiting in the GC backlog?
pub fn in_backlog(state: &(impl StateRead + ?Sized), timer: &Timer) -> Result<bool> {
    Ok(state.get(&backlog_key(timer.seq))?.is_some())
}

/// A position in the due queue: everything strictly before it has been
/// walked. Resuming a walk from here instead of from the queue's start keeps
/// a block's walk linear: entries it removed are still in the committed store
/// underneath the overlay, and rescanning them per chunk would be quadratic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DueCursor {
    height: u64,
    seq: u64,
}

impl DueCursor {
    /// The queue's start.
    pub const START: DueCursor = DueCursor { height: 0, seq: 0 };

    /// Just past `timer`'s entry.
    pub fn after(timer: &Timer) -> DueCursor {
        match timer.seq.checked_add(1) {
            Some(seq) => DueCursor {
                height: timer.height,
                seq,
            },
            None => DueCursor {
                height: timer.height.saturating_add(1),
                seq: 0,
            },
        }
    }
}

/// Up to `limit` due timer ids with height ≤ `height`, oldest first.
pub fn due(state: &(impl StateRead + ?Sized), height: u64, limit: usize) -> Result<Vec<Hash>> {
    due_from(state, DueCursor::START, height, limit)
}

/// Up to `limit` due timer ids at or after `from` with height ≤ `height`, oldest first.
pub fn due_from(
    state: &(impl StateRead + ?Sized),
    from: DueCursor,
    height: u64,
    limit: usize,
) -> Result<Vec<Hash>> {
    let start = due_key(from.height, from.seq);
    let end = due_key(height.saturating_add(1), 0);
    if start >= end {
        return Ok(Vec::new());
    }
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| hash_value(&k, &v))
        .collect()
}

/// Up to `limit` timer ids queued at exactly `height`, FIFO.
pub fn at_height(
    state: &(impl StateRead + ?Sized),
    height: u64,
    limit: usize,
) -> Result<Vec<Hash>> {
    let start = due_key(height, 0);
    let end = due_key(height.saturating_add(1), 0);
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| hash_value(&k, &v))
        .collect()
}

/// Up to `limit` GC backlog entries, oldest first.
pub fn backlog(state: &(impl StateRead + ?Sized), limit: usize) -> Result<Vec<GcEntry>> {
    Ok(backlog_from(state, 0, limit)?
        .into_iter()
        .map(|(_, entry)| entry)
        .collect())
}

/// Up to `limit` GC backlog entries with sequence ≥ `from_seq`, oldest first
/// (resumable, for the same reason as [`due_from`]).
pub fn backlog_from(
    state: &(impl StateRead + ?Sized),
    from_seq: u64,
    limit: usize,
) -> Result<Vec<(u64, GcEntry)>> {
    let start = backlog_key(from_seq);
    let end = vec![TIMERS, BACKLOG + 1];
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            let seq = k
                .get(2..10)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_be_bytes)
                .ok_or_else(|| {
                    corrupt(GcEntry::NAME, &k, "backlog key without an 8-byte sequence")
                })?;
            let entry = timerhost_types::decode::<GcEntry>(&v)
                .map_err(|e| corrupt(GcEntry::NAME, &k, &e.to_string()))?;
            Ok((seq, entry))
        })
        .collect()
}

/// How many timers are due at or before `height` (queued or in the backlog);
/// counts up to `limit` (a query for operators, not used in consensus paths).
pub fn due_count(
    state: &(impl StateRead + ?Sized),
    height: u64,
    limit: usize,
) -> Result<(usize, usize)> {
    Ok((
        due(state, height, limit)?.len(),
        backlog(state, limit)?.len(),
    ))
}
