//! The four PVM host calls of CIP-5 §4.1 with every §4.2 constraint.
//!
//! Each returns `Ok(Err(TimerError))` for a rule violation — the runtime turns
//! it into a Python exception that reverts the calling execution — and writes
//! its effects straight into the execution's overlay. Because the runtime
//! runs every execution (and every nested call) inside an overlay checkpoint,
//! a revert anywhere discards them: timers exist only if the execution
//! commits (§4.3).
//!
//! Costs (§6.1) are charged to the caller by the runtime: see
//! [`SET_TIMER_BASE_CYCLES`], [`EXTEND_TIMER_CYCLES`], [`CANCEL_TIMER_CYCLES`];
//! `schedule_timer` also charges one cell per payload byte.

use timerhost_state::Overlay;
use timerhost_types::timer::MAX_TIMER_PAYLOAD;
use timerhost_types::{timer_id, Address, Event, Hash, Timer, TimerConfig};

use crate::error::{Result, TimerError};
use crate::store::TimerRecord;
use crate::{events, handler, queue, store};

/// `SET_TIMER_BASE_CYCLES` (§6.1): base cost of `schedule_timer`/`schedule_timer_ex`.
pub const SET_TIMER_BASE_CYCLES: u64 = 200;
/// Cost of `extend_timer` (§6.1).
pub const EXTEND_TIMER_CYCLES: u64 = 200;
/// `CANCEL_TIMER_CYCLES` (§6.1).
pub const CANCEL_TIMER_CYCLES: u64 = 200;

/// Who is calling, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCaller {
    /// The executing actor.
    pub actor: Address,
    /// The transaction sender (the actor itself during a timer fire).
    pub tx_sender: Address,
    /// The current block height.
    pub height: u64,
}

/// Arguments of `schedule_timer_ex` (`None` = protocol default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScheduleArgs {
    /// Firing height.
    pub height: u64,
    /// Payload.
    pub payload: Vec<u8>,
    /// Fee payer (default: the actor).
    pub fee_payer: Option<Address>,
    /// Cycles per fire (default: `max_cycles_per_fire`).
    pub gas_limit: Option<u64>,
    /// Expiry height (default: current height + `max_ttl_blocks`).
    pub expires_at: Option<u64>,
}

/// A successful schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    /// The new timer.
    pub timer: Timer,
    /// `TimerScheduled`.
    pub event: Event,
}

/// Validates a fee payer (§4.2): not zero, not a system actor, and either the
/// actor itself or the transaction sender.
pub fn check_fee_payer(
    fee_payer: Address,
    caller: &HostCaller,
) -> std::result::Result<(), TimerError> {
    if fee_payer.is_zero() {
        return Err(TimerError::FeePayerZero);
    }
    if fee_payer.is_system_reserved() {
        return Err(TimerError::FeePayerSystemReserved { fee_payer });
    }
    if fee_payer != caller.actor && fee_payer != caller.tx_sender {
        return Err(TimerError::FeePayerNotAllowed {
            fee_payer,
            actor: caller.actor,
            tx_sender: caller.tx_sender,
        });
    }
    Ok(())
}

/// `schedule_timer(height, payload)` / `schedule_timer_ex(...)`.
pub fn schedule(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    args: ScheduleArgs,
) -> Result<std::result::Result<Scheduled, TimerError>> {
    Ok(match validate_schedule(state, config, caller, &args)? {
        Err(e) => Err(e),
        Ok((handler, fee_payer, gas_limit, expires_at)) => {
            let mut account = timerhost_state::StateReadExt::get_decoded::<
                timerhost_types::keys::Account,
            >(state, &timerhost_types::keys::account(&caller.actor))?
            .unwrap_or_default();
            let id = timer_id(
                &caller.actor,
                args.height,
                &args.payload,
                account.schedule_nonce,
            );
            account.schedule_nonce += 1;
            state.put_encoded(timerhost_types::keys::account(&caller.actor), &account);
            let timer = Timer {
                actor_address: caller.actor,
                height: args.height,
                payload: args.payload,
                timer_id: id,
                handler,
                fee_payer,
                gas_limit_per_fire: gas_limit,
                expires_at,
                seq: store::next_seq(state)?,
            };
            store::insert(state, &timer)?;
            let event = events::timer_scheduled(&timer);
            Ok(Scheduled { timer, event })
        }
    })
}

type Validated = (String, Address, u64, u64);

fn validate_schedule(
    state: &Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    args: &ScheduleArgs,
) -> Result<std::result::Result<Validated, TimerError>> {
    macro_rules! reject {
        ($e:expr) => {
            return Ok(Err($e))
        };
    }
    // §4.2 future height only; §5.3 same-block prohibition follows from it.
    if args.height <= caller.height {
        reject!(TimerError::HeightNotInFuture {
            height: args.height,
            current: caller.height
        });
    }
    // §4.2 payload size.
    if args.payload.len() > MAX_TIMER_PAYLOAD {
        reject!(TimerError::PayloadTooLarge {
            size: args.payload.len(),
            max: MAX_TIMER_PAYLOAD
        });
    }
    // §4.2 custom handler convention and handler name length.
    let resolved = match handler::resolve(&args.payload) {
        Ok(r) => r,
        Err(e) => reject!(e),
    };
    // §4.2 fee_payer rules.
    let fee_payer = args.fee_payer.unwrap_or(caller.actor);
    if let Err(e) = check_fee_payer(fee_payer, caller) {
        reject!(e);
    }
    // §4.2 gas_limit_per_fire ≤ max_cycles_per_fire.
    let gas_limit = args.gas_limit.unwrap_or(config.max_cycles_per_fire);
    if gas_limit == 0 {
        reject!(TimerError::GasLimitZero);
    }
    if gas_limit > config.max_cycles_per_fire {
        reject!(TimerError::GasLimitTooHigh {
            gas_limit,
            max: config.max_cycles_per_fire
        });
    }
    // §4.2 expires_at ≤ current_height + max_ttl_blocks.
    let ttl_cap = caller.height.saturating_add(config.max_ttl_blocks);
    let expires_at = args.expires_at.unwrap_or(ttl_cap);
    if expires_at > ttl_cap {
        reject!(TimerError::ExpiresTooLate {
            call: "schedule_timer",
            expires_at,
            current: caller.height,
            max_ttl: config.max_ttl_blocks
        });
    }
    if expires_at < args.height {
        reject!(TimerError::ExpiresBeforeFire {
            expires_at,
            height: args.height
        });
    }
    // §4.2 per-actor cap.
    let live = store::live_count(state, &caller.actor)?;
    if live >= config.max_timers_per_actor {
        reject!(TimerError::TooManyTimers {
            actor: caller.actor,
            live,
            max: config.max_timers_per_actor
        });
    }
    Ok(Ok((resolved.handler, fee_payer, gas_limit, expires_at)))
}

fn owned_timer(
    state: &Overlay<'_>,
    caller: &HostCaller,
    call: &'static str,
    timer_id: &Hash,
) -> Result<std::result::Result<TimerRecord, TimerError>> {
    let Some(record) = store::get_record(state, timer_id)? else {
        return Ok(Err(TimerError::NotFound {
            call,
            timer_id: *timer_id,
        }));
    };
    // §4.2: only the owning actor, never another actor.
    if record.timer.actor_address != caller.actor {
        return Ok(Err(TimerError::Unauthorized {
            call,
            timer_id: *timer_id,
            owner: record.timer.actor_address,
            caller: caller.actor,
        }));
    }
    Ok(Ok(record))
}

/// `extend_timer(timer_id, new_expires_at)`: owner only, new TTL after the
/// current height, clamped to `current_height + max_ttl_blocks` (§5.4).
/// Returns the `timer.extended` event (with the clamped value).
pub fn extend(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    timer_id: &Hash,
    new_expires_at: u64,
) -> Result<std::result::Result<Event, TimerError>> {
    let mut record = match owned_timer(state, caller, "extend_timer", timer_id)? {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    if queue::in_backlog(state, &record.timer)? {
        return Ok(Err(TimerError::AlreadyFinal {
            call: "extend_timer",
            timer_id: *timer_id,
        }));
    }
    if new_expires_at <= caller.height {
        return Ok(Err(TimerError::ExpiryNotInFuture {
            call: "extend_timer",
            expires_at: new_expires_at,
            current: caller.height,
        }));
    }
    record.timer.expires_at =
        new_expires_at.min(caller.height.saturating_add(config.max_ttl_blocks));
    store::update(state, &record);
    Ok(Ok(events::timer_extended(&record.timer)))
}

/// `cancel_timer(timer_id)`: owner only (§4.2). No timer ever holds a
/// pre-charge between blocks (pre-charge and removal happen together at end
/// of block), so there is nothing to refund. Returns `TimerCancelled`.
pub fn cancel(
    state: &mut Overlay<'_>,
    caller: &HostCaller,
    timer_id: &Hash,
) -> Result<std::result::Result<Event, TimerError>> {
    let record = match owned_timer(state, caller, "cancel_timer", timer_id)? {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    store::remove(state, &record)?;
    Ok(Ok(events::timer_cancelled(&record.timer)))
}
