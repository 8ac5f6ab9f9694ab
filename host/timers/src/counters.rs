//! The timer store's counters: 8-byte big-endian integers under one key
//! each (the pending count, the sequence and delivery counters, revocation
//! marks), read as 0 when absent.

use timerhost_state::{Overlay, StateRead};

use crate::error::Result;
use crate::keys::{self, corrupt};

/// The counter at `k` (0 when absent).
pub(crate) fn read_u64(state: &(impl StateRead + ?Sized), k: &[u8]) -> Result<u64> {
    match state.get(k)? {
        None => Ok(0),
        Some(v) => Ok(u64::from_be_bytes(
            v.as_slice()
                .try_into()
                .map_err(|_| corrupt("timer counter", k, "not 8 bytes"))?,
        )),
    }
}

/// How many timers (and watches) are pending, whatever their state: an O(1)
/// read for the dashboard and `th_status` (#33).
pub fn pending_count(state: &(impl StateRead + ?Sized)) -> Result<u64> {
    read_u64(state, &keys::pending_count_key())
}

/// Adds `added` and subtracts `removed` pending timers.
pub(crate) fn add_pending(state: &mut Overlay<'_>, added: u64, removed: u64) -> Result<()> {
    let key = keys::pending_count_key();
    let now = read_u64(state, &key)?;
    let next = now
        .checked_add(added)
        .and_then(|n| n.checked_sub(removed))
        .ok_or_else(|| {
            corrupt(
                "pending timer count",
                &key,
                "more timers leave than are pending",
            )
        })?;
    state.put(key, next.to_be_bytes().to_vec());
    Ok(())
}
