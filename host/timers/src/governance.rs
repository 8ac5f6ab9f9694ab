//! Governance over timers (CIP-5 §5.4, §6.4; AIP-125): `CancelTimer`,
//! `ExtendTimer`, `PauseTimers`, `ResumeTimers` and `ShutdownTimers` system
//! instructions. Authorization (sender ∈ `system_deployers`) is checked by
//! the chain before these run; `UpdateTimerConfig` is validated by
//! `TimerConfig::validate` and applied by the chain at the end of the block
//! (it takes effect from the next one).

use timerhost_state::Overlay;
use timerhost_types::{Address, Event, Hash, TimerConfig, TimerStatus};

use crate::error::{Result, TimerError};
use crate::{control, events, host, queue, store};

/// `CancelTimer`: removes the timer if it still exists and refunds its
/// deposit. Idempotent: a timer that already fired, expired or
/// self-destructed — or that is classified and waiting in the GC backlog,
/// whose removal event is still to come — makes this a successful no-op with
/// no event. Nothing else to refund (no timer holds a pre-charge between
/// blocks).
pub fn cancel(state: &mut Overlay<'_>, emitter: Address, timer_id: &Hash) -> Result<Option<Event>> {
    match store::get_record(state, timer_id)? {
        None => Ok(None),
        Some(record) if queue::in_backlog(state, &record.timer)? => Ok(None),
        Some(record) => {
            store::remove(state, &record)?;
            Ok(Some(events::cancelled_by_governance(emitter, timer_id)))
        }
    }
}

/// `ExtendTimer`: sets `expires_at` under the rules of [`host::set_expiry`]
/// (after the current height, clamped to `height + max_ttl_blocks`, not
/// before the firing height).
pub fn extend(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    emitter: Address,
    height: u64,
    timer_id: &Hash,
    new_expires_at: u64,
) -> Result<std::result::Result<Event, TimerError>> {
    let Some(record) = store::get_record(state, timer_id)? else {
        return Ok(Err(TimerError::NotFound {
            call: "ExtendTimer",
            timer_id: *timer_id,
        }));
    };
    Ok(
        host::set_expiry(state, config, "ExtendTimer", height, record, new_expires_at)?
            .map(|timer| events::extended_by_governance(emitter, &timer)),
    )
}

/// `PauseTimers`: from now on nothing fires or is classified and scheduling
/// is refused, until `ResumeTimers`. Returns `TimersPaused`.
pub fn pause(state: &mut Overlay<'_>) -> Event {
    control::set_status(state, TimerStatus::Paused);
    events::timers_paused(true)
}

/// `ResumeTimers`: timers schedule and fire again (after a pause, an
/// unfinished or a finished shutdown). Returns `TimersResumed`.
pub fn resume(state: &mut Overlay<'_>) -> Event {
    control::set_status(state, TimerStatus::Active);
    events::timers_paused(false)
}

/// `ShutdownTimers`: scheduling is refused and, from this block's end on,
/// every pending timer is removed under the GC budget with its deposit
/// refunded ([`crate::delivery`]). Returns `TimersShutdown {complete: false}`.
pub fn shutdown(state: &mut Overlay<'_>) -> Event {
    control::set_status(state, TimerStatus::ShuttingDown);
    events::timers_shutdown(false)
}
