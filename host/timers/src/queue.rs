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
use crate::store::hash_value;

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

/// Takes a timer out of the due queue and the backlog (whichever holds it).
pub fn dequeue(state: &mut Overlay<'_>, timer: &Timer) -> Result<()> {
    let due = due_key(timer.height, timer.seq);
    if state.get(&due)?.is_some() {
        state.delete(due);
    }
    let backlog = backlog_key(timer.seq);
    if state.get(&backlog)?.is_some() {
        state.delete(backlog);
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

/// Up to `limit` due timer ids with height ≤ `height`, oldest first.
pub fn due(state: &(impl StateRead + ?Sized), height: u64, limit: usize) -> Result<Vec<Hash>> {
    let start = vec![TIMERS, DUE];
    let end = due_key(height.saturating_add(1), 0);
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
    let start = vec![TIMERS, BACKLOG];
    let end = vec![TIMERS, BACKLOG + 1];
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            timerhost_types::decode::<GcEntry>(&v).map_err(|e| {
                timerhost_state::StorageError::Corrupt {
                    what: GcEntry::NAME,
                    key: k.iter().map(|b| format!("{b:02x}")).collect(),
                    reason: e.to_string(),
                }
            })
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
