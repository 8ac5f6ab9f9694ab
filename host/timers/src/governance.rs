//! Governance over timers (CIP-5 §5.4, §6.4): `CancelTimer` and
//! `ExtendTimer` system instructions. Authorization (sender ∈
//! `system_deployers`) is checked by the chain before these run;
//! `UpdateTimerConfig` is validated by `TimerConfig::validate` and applied
//! by the chain at the end of the block (it takes effect from the next one).

use timerhost_state::Overlay;
use timerhost_types::{Address, Event, Hash, TimerConfig};

use crate::error::{Result, TimerError};
use crate::{events, store};

/// `CancelTimer`: removes the timer if it still exists. Idempotent: a timer
/// that already fired, expired or self-destructed makes this a successful
/// no-op with no event. Nothing to refund (no timer holds a pre-charge
/// between blocks).
pub fn cancel(state: &mut Overlay<'_>, emitter: Address, timer_id: &Hash) -> Result<Option<Event>> {
    match store::get_record(state, timer_id)? {
        None => Ok(None),
        Some(record) => {
            store::remove(state, &record)?;
            Ok(Some(events::cancelled_by_governance(emitter, timer_id)))
        }
    }
}

/// `ExtendTimer`: sets `expires_at`, clamped to `height + max_ttl_blocks`;
/// the new value must be after the current height.
pub fn extend(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    emitter: Address,
    height: u64,
    timer_id: &Hash,
    new_expires_at: u64,
) -> Result<std::result::Result<Event, TimerError>> {
    let Some(mut record) = store::get_record(state, timer_id)? else {
        return Ok(Err(TimerError::NotFound {
            call: "ExtendTimer",
            timer_id: *timer_id,
        }));
    };
    if crate::queue::in_backlog(state, &record.timer)? {
        return Ok(Err(TimerError::AlreadyFinal {
            call: "ExtendTimer",
            timer_id: *timer_id,
        }));
    }
    if new_expires_at <= height {
        return Ok(Err(TimerError::ExpiryNotInFuture {
            call: "ExtendTimer",
            expires_at: new_expires_at,
            current: height,
        }));
    }
    record.timer.expires_at = new_expires_at.min(height.saturating_add(config.max_ttl_blocks));
    store::update(state, &record);
    Ok(Ok(events::extended_by_governance(emitter, &record.timer)))
}
