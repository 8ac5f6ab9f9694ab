//! The dead-letter host calls (#45): `pvm_host.dead_letters()`,
//! `retry_dead_letter(timer_id, due=None)` and `drop_dead_letter(timer_id)`.
//! An actor reaches only its own queue; re-scheduling bills the entry's fee
//! payer again, so it follows the fee-payer rule of scheduling
//! ([`crate::host::check_fee_payer`]): the actor itself, or the signer of
//! the transaction that targets the actor.

use timerhost_state::{Overlay, StateRead};
use timerhost_types::{Event, Hash, RequestedTrigger, TimerConfig, TimerKind, TimerRequest};

use crate::dead_letters::{self, DeadLetter};
use crate::error::{Result, TimerError};
use crate::host::{self, HostCaller, Scheduled};

/// `dead_letters()`: the bytes listing the caller's queue reads, known
/// before it is read (so it is priced first).
pub fn listing_bytes(state: &(impl StateRead + ?Sized), caller: &HostCaller) -> Result<u64> {
    Ok(dead_letters::held(state, &caller.actor)?.bytes)
}

/// `dead_letters()`: the caller's entries, in timer-id order.
pub fn list(state: &(impl StateRead + ?Sized), caller: &HostCaller) -> Result<Vec<DeadLetter>> {
    dead_letters::list(state, &caller.actor)
}

/// `drop_dead_letter(timer_id)`: removes the caller's entry and refunds
/// its deposit. Returns `DeadLetterRemoved`.
pub fn drop(
    state: &mut Overlay<'_>,
    caller: &HostCaller,
    timer_id: &Hash,
) -> Result<std::result::Result<Event, TimerError>> {
    Ok(
        match dead_letters::remove(state, &caller.actor, timer_id, "dropped")? {
            Some((_, event)) => Ok(event),
            None => Err(TimerError::NoDeadLetter {
                call: "drop_dead_letter",
                timer_id: *timer_id,
            }),
        },
    )
}

/// `retry_dead_letter(timer_id, due=None)`: schedules the caller's entry
/// again — same payload, handler, fee payer, limits, bid, escrow and retry
/// policy (its count restarted) — due at `due` (a height, or unix ms for a
/// time timer; default: the next block, or a millisecond from now), then
/// removes the entry and refunds its deposit. Returns the new timer and its
/// events (`DeadLetterRemoved`, `TimerScheduled`).
pub fn retry(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    timer_id: &Hash,
    due: Option<u64>,
) -> Result<std::result::Result<(Scheduled, Event), TimerError>> {
    const CALL: &str = "retry_dead_letter";
    let Some(entry) = dead_letters::get(state, &caller.actor, timer_id)? else {
        return Ok(Err(TimerError::NoDeadLetter {
            call: CALL,
            timer_id: *timer_id,
        }));
    };
    let t = &entry.timer;
    // Billing the fee payer again needs its consent now, as at scheduling.
    if let Err(e) = host::check_fee_payer(t.fee_payer, caller) {
        return Ok(Err(e.in_call(CALL)));
    }
    let trigger = match &t.kind {
        TimerKind::Height => RequestedTrigger::Height(due.unwrap_or(caller.height + 1)),
        TimerKind::Time { .. } => {
            RequestedTrigger::Time(due.unwrap_or(caller.timestamp_ms.saturating_add(1)))
        }
        TimerKind::State(_) => {
            return Ok(Err(TimerError::InvalidArguments {
                call: CALL,
                reason: "this dead letter is a state watch, which stays registered until it ends; drop it with drop_dead_letter and watch again if needed".into(),
            }))
        }
    };
    let policy = t.retry.as_ref();
    let request = TimerRequest {
        trigger,
        payload: t.payload.clone(),
        fee_payer: Some(t.fee_payer),
        gas_limit: Some(t.gas_limit_per_fire),
        expires_at: None,
        bid: Some(t.bid),
        max_fee_per_cycle: None,
        escrow_key: t.escrow_key.clone(),
        retries: policy.map(|p| p.retries),
        retry_backoff: policy.map(|p| p.backoff),
        // Not booked again: a booking is bought for a block, not a timer.
        book: false,
        // A handler the payload does not name (a booking's `handler=`).
        handler: match crate::handler::resolve(&t.payload) {
            Ok(r) if r.handler == t.handler => None,
            _ => Some(t.handler.clone()),
        },
    };
    // The deposit comes back first (the new timer may need it); a refused
    // schedule puts everything back, so a caller that catches the error
    // still has its entry.
    let before = state.checkpoint();
    let Some((_, removed)) = dead_letters::remove(state, &caller.actor, timer_id, "retried")?
    else {
        unreachable!("read above");
    };
    Ok(match host::schedule(state, config, caller, request)? {
        Ok(scheduled) => {
            state.release(before);
            Ok((scheduled, removed))
        }
        Err(e) => {
            state.revert_to(before);
            Err(e.in_call(CALL))
        }
    })
}
