//! The expiry queue of timers that are not due by height: time timers and
//! state watches.
//!
//! A height timer is due no later than its TTL (scheduling refuses
//! `expires_at` below its height), so delivery always reaches it and
//! classifies it then. A time timer may expire long before its time comes,
//! and a watch may never be hit at all; without this queue either would
//! hold its deposit and its state until then — or forever. Each is entered
//! under `u e ‖ expires_at ‖ seq` (derived, [`crate::keys`]), valued with
//! its record's key, and [`crate::delivery`] removes the ones whose TTL ran
//! out, under the GC budget, soonest first.

use timerhost_state::{Overlay, StateRead};
use timerhost_types::{Timer, TimerKind};

use crate::error::Result;
use crate::keys;
use crate::record::{self, Queued};

/// Does `timer` need an expiry entry (it is not a height timer)?
pub fn tracked(timer: &Timer) -> bool {
    !matches!(timer.kind, TimerKind::Height)
}

/// Enters a queued timer (a no-op for height timers).
pub fn register(state: &mut Overlay<'_>, timer: &Timer) {
    if tracked(timer) {
        state.put(
            keys::expiry_key(timer.expires_at, timer.seq),
            record::record_key(timer, Queued::Due),
        );
    }
}

/// Takes a timer out of the queue (a no-op for height timers).
pub fn unregister(state: &mut Overlay<'_>, timer: &Timer) {
    if tracked(timer) {
        state.delete(keys::expiry_key(timer.expires_at, timer.seq));
    }
}

/// Moves a timer's entry after its `expires_at` changed.
pub fn moved(state: &mut Overlay<'_>, before: &Timer, after: &Timer) {
    if before.expires_at != after.expires_at {
        unregister(state, before);
        register(state, after);
    }
}

/// The record keys of up to `limit` timers whose `expires_at` is below
/// `height`, soonest first.
pub fn expired(
    state: &(impl StateRead + ?Sized),
    height: u64,
    limit: usize,
) -> Result<Vec<Vec<u8>>> {
    let start = keys::expiry_key(0, 0);
    let end = keys::expiry_key(height, 0);
    Ok(state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(_, record_key)| record_key)
        .collect())
}

/// The state bytes an expiry entry adds (key and value).
pub fn entry_bytes(timer: &Timer) -> u64 {
    if tracked(timer) {
        (keys::expiry_key(0, 0).len() + record::record_key(timer, Queued::Due).len()) as u64
    } else {
        0
    }
}
