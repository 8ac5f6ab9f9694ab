//! Who controls timers besides their actors: governance's status (pause,
//! resume, shutdown — AIP-125) and each fee payer's revocation mark
//! (CAD018's account-takeover guard).
//!
//! | key | value |
//! |---|---|
//! | `g timer_status` | [`TimerStatus`] (absent = active) |
//! | `t v ‖ fee_payer` | u64 BE: timers of this payer with `seq` below it are revoked |
//!
//! A revocation is one write, whatever the number of timers it covers: the
//! timers are found where they already are, at their next classification
//! ([`crate::delivery`]), which compares their `seq` with the mark.

use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::keys;
use timerhost_types::{Address, Timer, TimerStatus};

use crate::counters::read_u64;
use crate::error::Result;
use crate::keys::revoked_key;

/// The governance status of timers.
pub fn status(state: &(impl StateRead + ?Sized)) -> Result<TimerStatus> {
    Ok(state
        .get_decoded::<TimerStatus>(&keys::timer_status())?
        .unwrap_or_default())
}

/// Sets the governance status (active is stored as no key).
pub fn set_status(state: &mut Overlay<'_>, status: TimerStatus) {
    match status {
        TimerStatus::Active => state.delete(keys::timer_status()),
        other => state.put_encoded(keys::timer_status(), &other),
    }
}

/// Revokes the payments of every timer naming `fee_payer` with `seq <
/// before_seq`. Marks only move forward.
pub fn revoke_before(state: &mut Overlay<'_>, fee_payer: &Address, before_seq: u64) {
    state.put(revoked_key(fee_payer), before_seq.to_be_bytes().to_vec());
}

/// The revocation mark of `fee_payer` (0: nothing revoked).
pub fn revoked_before(state: &(impl StateRead + ?Sized), fee_payer: &Address) -> Result<u64> {
    read_u64(state, &revoked_key(fee_payer))
}

/// Has `timer`'s fee payer revoked it (a retry: the schedule it retries)?
pub fn is_revoked(state: &(impl StateRead + ?Sized), timer: &Timer) -> Result<bool> {
    Ok(timer.consent_seq() < revoked_before(state, &timer.fee_payer)?)
}
