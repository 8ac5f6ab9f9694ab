//! Retries (#45): what the protocol does when a fire of a timer with a
//! retry policy fails — an exception, out of cycles, cells or memory,
//! whatever made the handler's execution fail.
//!
//! While the policy has retries left, the timer is **armed again** at its
//! next attempt's due point, `backoff × 2^(n−1)` after the failed fire
//! (blocks, or seconds for a time timer), under the same timer id (a
//! watch, which stays registered, arms a height timer of its own:
//! [`watch_retry_id`]). The retry is a timer like any other: it lends its
//! deposit again, is classified, pre-charged and refunded like the first
//! fire, from the same fee payer — whose consent is the original schedule's
//! ([`Timer::consent_seq`]): revoking it revokes the retries. `TimerRetried`
//! says when it is due and why.
//!
//! When the last retry fails, or a retry cannot be armed (its TTL ends
//! first, its actor holds `max_timers_per_actor` timers, its fee payer
//! cannot lend the deposit, governance suspended scheduling), the timer
//! goes to its actor's dead-letter queue ([`crate::dead_letters`]).

use timerhost_state::Overlay;
use timerhost_types::{keccak256_concat, Event, ExecError, Hash, Timer, TimerConfig, TimerKind};

use crate::error::Result;
use crate::{control, dead_letters, deposit, events, store};

/// The id of the height timer that retries fire `fire_seq` of watch
/// `watch_id`.
pub fn watch_retry_id(watch_id: &Hash, fire_seq: u64) -> Hash {
    keccak256_concat(&[
        b"timerhost/watch-retry",
        watch_id.as_bytes(),
        &fire_seq.to_be_bytes(),
    ])
}

/// After fire of `fired` failed with `error` in block `height` (timestamp
/// `timestamp_ms`): arms its retry or dead-letters it. No events for a
/// timer without a retry policy.
pub fn after_failed_fire(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    fired: &Timer,
    error: &ExecError,
    height: u64,
    timestamp_ms: u64,
) -> Result<Vec<Event>> {
    let Some(policy) = &fired.retry else {
        return Ok(Vec::new());
    };
    let mut failed = fired.clone();
    let mut counted = policy.clone();
    counted.failures = counted.failures.saturating_add(1);
    let attempts = counted.failures;
    failed.retry = Some(counted.clone());
    let text = events::error_text(error);
    let traceback = error.traceback.as_deref();
    let dead_letter = |state: &mut Overlay<'_>, why: Option<String>| -> Result<Vec<Event>> {
        let text = match why {
            Some(why) => format!("{text} (no retry: {why})"),
            None => text.clone(),
        };
        Ok(vec![dead_letters::add(
            state, config, &failed, attempts, &text, traceback, height,
        )?])
    };
    if !counted.has_retry_left() {
        return dead_letter(state, None);
    }
    if !control::status(state)?.accepts_schedules() {
        return dead_letter(state, Some("governance suspended scheduling".into()));
    }
    let delay = counted.delay(attempts);
    let mut retry = failed.clone();
    // A retry holds no booked capacity: it is an ordinary timer.
    retry.booked = false;
    match &fired.kind {
        TimerKind::Height => retry.height = height.saturating_add(delay),
        TimerKind::Time { .. } => {
            retry.height = height;
            retry.kind = TimerKind::Time {
                timestamp_ms: timestamp_ms.saturating_add(delay.saturating_mul(1_000)),
            };
        }
        TimerKind::State(watch) => {
            retry.height = height.saturating_add(delay);
            retry.kind = TimerKind::Height;
            retry.timer_id = watch_retry_id(&fired.timer_id, watch.fires);
        }
    }
    if !matches!(retry.kind, TimerKind::Time { .. }) && retry.height > fired.expires_at {
        return dead_letter(
            state,
            Some(format!(
                "retry {attempts} would be due at height {}, after the timer expires at {}",
                retry.height, fired.expires_at
            )),
        );
    }
    let live = store::live_count(state, &fired.actor_address)?;
    if live >= config.max_timers_per_actor {
        return dead_letter(
            state,
            Some(format!(
                "the actor holds {live} timers (max_timers_per_actor)"
            )),
        );
    }
    retry.seq = store::peek_seq(state)?;
    // Fits: deposit_per_byte ≤ 2^96 and a timer is below 2^21 bytes.
    retry.deposit = config.deposit_per_byte * u128::from(store::state_bytes(&retry));
    if let Err(why) = deposit::lend(state, &retry, retry.deposit)? {
        return dead_letter(state, Some(why.describe("retry", retry.deposit)));
    }
    store::take_seq(state, retry.seq);
    store::insert(state, &retry)?;
    Ok(vec![events::timer_retried(fired, &retry, attempts, error)])
}
