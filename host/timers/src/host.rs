//! The PVM timer host calls of CIP-5 §4.1 with every §4.2 constraint, plus
//! `revoke_timer_payments` (CAD018's account-takeover guard).
//!
//! Each returns `Ok(Err(TimerError))` for a rule violation — the runtime turns
//! it into a Python exception that reverts the calling execution — and writes
//! its effects straight into the execution's overlay. A rejected call writes
//! nothing (an actor may catch the exception and go on). Because the runtime
//! runs every execution (and every nested call) inside an overlay checkpoint,
//! a revert anywhere discards the effects: timers exist only if the execution
//! commits (§4.3).
//!
//! Costs (§6.1) are charged to the caller by the runtime: the cycle costs
//! are in `timerhost_types::timer`, and a successful schedule reports the
//! cells of every byte it adds to state in [`Scheduled::cells`].

use timerhost_state::accounts::{self, Debit};
use timerhost_state::{Overlay, StateReadExt};
use timerhost_types::keys::{self, Account};
use timerhost_types::timer::{
    RequestedTrigger, ACCOUNT_WRITE_CELLS, MAX_ESCROW_KEY_BYTES, MAX_TIMER_PAYLOAD,
    MAX_WATCH_KEY_BYTES,
};
use timerhost_types::{
    timer_id, Address, Event, Hash, Timer, TimerConfig, TimerKind, TimerRequest, Watch, WatchKey,
    TIMER_DEPOSIT_ESCROW,
};

use crate::error::{Result, TimerError};
use crate::record::Queued;
use crate::store::TimerRecord;
use crate::{control, escrow, events, handler, store};

/// Who is calling, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostCaller {
    /// The executing actor.
    pub actor: Address,
    /// The transaction sender (the actor itself during a timer fire).
    pub tx_sender: Address,
    /// The current block height.
    pub height: u64,
    /// The current block's timestamp (unix ms).
    pub timestamp_ms: u64,
    /// Was the actor reached through `pvm_host.call` rather than targeted by
    /// the transaction (or the fire) itself? A nested actor may bill only
    /// itself: the signer consented to pay for the actor it signed for.
    pub nested: bool,
}

/// A successful schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    /// The new timer.
    pub timer: Timer,
    /// `TimerScheduled`.
    pub event: Event,
    /// Cells the schedule costs: every byte it adds to state (the record and
    /// its index entries, [`store::state_bytes`]) plus the account records it
    /// rewrites (the actor's schedule counter; the payer's and the escrow's
    /// balances when a deposit moves).
    pub cells: u64,
}

/// Validates a fee payer (§4.2): not zero, not a system actor, and either the
/// actor itself or — only for the actor the transaction targets — the
/// transaction sender.
pub fn check_fee_payer(
    fee_payer: Address,
    caller: &HostCaller,
) -> std::result::Result<(), TimerError> {
    const CALL: &str = "schedule_timer";
    if fee_payer.is_zero() {
        return Err(TimerError::FeePayerZero { call: CALL });
    }
    // A system actor (the cron registry) pays its own timers; no other
    // address of the band can pay anything.
    if fee_payer.is_system_reserved() && fee_payer != caller.actor {
        return Err(TimerError::FeePayerSystemReserved {
            call: CALL,
            fee_payer,
        });
    }
    if fee_payer == caller.actor {
        return Ok(());
    }
    if fee_payer != caller.tx_sender {
        return Err(TimerError::FeePayerNotAllowed {
            call: CALL,
            fee_payer,
            actor: caller.actor,
            tx_sender: caller.tx_sender,
        });
    }
    if caller.nested {
        return Err(TimerError::FeePayerNotConsenting {
            call: CALL,
            fee_payer,
            actor: caller.actor,
        });
    }
    Ok(())
}

/// The host call a request comes from, as errors name it.
pub fn call_name(trigger: &RequestedTrigger) -> &'static str {
    match trigger {
        RequestedTrigger::Height(_) => "schedule_timer",
        RequestedTrigger::Time(_) => "schedule_timer_at",
        RequestedTrigger::State { .. } => "watch",
    }
}

/// `schedule_timer(height, payload)` / `schedule_timer_ex(...)`,
/// `schedule_timer_at(timestamp_ms, ...)` and `watch(keys, ...)`:
/// validates, takes the deposit from the fee payer into escrow, stores the
/// timer.
pub fn schedule(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    request: TimerRequest,
) -> Result<std::result::Result<Scheduled, TimerError>> {
    let call = call_name(&request.trigger);
    Ok(match schedule_checked(state, config, caller, request)? {
        Ok(scheduled) => Ok(scheduled),
        Err(e) => Err(e.in_call(call)),
    })
}

fn schedule_checked(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    request: TimerRequest,
) -> Result<std::result::Result<Scheduled, TimerError>> {
    let status = control::status(state)?;
    if !status.accepts_schedules() {
        return Ok(Err(TimerError::TimersSuspended {
            call: "schedule_timer",
            status: status.as_str(),
        }));
    }
    let Validated {
        handler,
        fee_payer,
        gas_limit,
        expires_at,
        bid,
        kind,
    } = match validate_schedule(state, config, caller, &request)? {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    let mut account = state
        .get_decoded::<Account>(&keys::account(&caller.actor))?
        .unwrap_or_default();
    // A height timer keeps CIP-5's id and record; a time timer's id hashes
    // its time, a watch's the height it was set at (the schedule nonce
    // makes every id unique either way).
    let (height, id_at) = match &kind {
        TimerKind::Height => {
            let RequestedTrigger::Height(h) = request.trigger else {
                unreachable!("a height kind comes from a height request")
            };
            (h, h)
        }
        TimerKind::Time { timestamp_ms } => (caller.height, *timestamp_ms),
        TimerKind::State(_) => (caller.height, caller.height),
    };
    let mut timer = Timer {
        actor_address: caller.actor,
        height,
        timer_id: timer_id(
            &caller.actor,
            id_at,
            &request.payload,
            account.schedule_nonce,
        ),
        payload: request.payload,
        handler,
        fee_payer,
        gas_limit_per_fire: gas_limit,
        expires_at,
        seq: store::peek_seq(state)?,
        deposit: 0,
        bid,
        kind,
        escrow_key: request.escrow_key,
    };
    let bytes = store::state_bytes(&timer);
    // Fits: deposit_per_byte ≤ 2^96 (validated) and bytes < 2^21.
    timer.deposit = config.deposit_per_byte * u128::from(bytes);
    // The deposit moves first: refused, it leaves nothing behind. An
    // escrow-funded timer's deposit is also the escrow's.
    if let Some(key) = &timer.escrow_key {
        let available = escrow::available(state, &caller.actor, key)?;
        if available < timer.deposit {
            return Ok(Err(TimerError::EscrowUnfunded {
                call: "schedule_timer",
                key: String::from_utf8_lossy(key).into_owned(),
                deposit: timer.deposit,
                available,
            }));
        }
    }
    if let Debit::Insufficient { available } =
        accounts::transfer(state, &fee_payer, &TIMER_DEPOSIT_ESCROW, timer.deposit)?
    {
        return Ok(Err(TimerError::DepositUnfunded {
            call: "schedule_timer",
            fee_payer,
            deposit: timer.deposit,
            bytes,
            per_byte: config.deposit_per_byte,
            available,
        }));
    }
    if let Some(key) = &timer.escrow_key {
        escrow::debit(state, &caller.actor, key, timer.deposit)?;
    }
    // The actor's account is read again only if the deposit came from it.
    if fee_payer == caller.actor && timer.deposit > 0 {
        account = state
            .get_decoded::<Account>(&keys::account(&caller.actor))?
            .unwrap_or_default();
    }
    account.schedule_nonce += 1;
    state.put_encoded(keys::account(&caller.actor), &account);
    store::take_seq(state, timer.seq);
    store::insert(state, &timer)?;
    let rewritten_accounts = if timer.deposit == 0 {
        1
    } else if fee_payer == caller.actor {
        2
    } else {
        3
    };
    let event = events::timer_scheduled(&timer);
    Ok(Ok(Scheduled {
        cells: bytes + rewritten_accounts * ACCOUNT_WRITE_CELLS,
        timer,
        event,
    }))
}

struct Validated {
    handler: String,
    fee_payer: Address,
    gas_limit: u64,
    expires_at: u64,
    bid: u64,
    kind: TimerKind,
}

fn validate_schedule(
    state: &Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    request: &TimerRequest,
) -> Result<std::result::Result<Validated, TimerError>> {
    macro_rules! reject {
        ($e:expr) => {
            return Ok(Err($e))
        };
    }
    // §4.2 payload size.
    if request.payload.len() > MAX_TIMER_PAYLOAD {
        reject!(TimerError::PayloadTooLarge {
            call: "schedule_timer",
            size: request.payload.len(),
            max: MAX_TIMER_PAYLOAD
        });
    }
    // What it is due on, and its handler: height and time timers follow
    // §4.2's custom-handler convention (a payload naming its handler); a
    // watch names its handler outright.
    let (kind, named_handler, fires_no_earlier_than) = match &request.trigger {
        RequestedTrigger::Height(height) => {
            // §4.2 future height only; §5.3 same-block prohibition follows.
            if *height <= caller.height {
                reject!(TimerError::HeightNotInFuture {
                    call: "schedule_timer",
                    height: *height,
                    current: caller.height
                });
            }
            (TimerKind::Height, None, *height)
        }
        RequestedTrigger::Time(timestamp_ms) => {
            if *timestamp_ms <= caller.timestamp_ms {
                reject!(TimerError::TimeNotInFuture {
                    call: "schedule_timer_at",
                    timestamp_ms: *timestamp_ms,
                    current_ms: caller.timestamp_ms
                });
            }
            let kind = TimerKind::Time {
                timestamp_ms: *timestamp_ms,
            };
            (kind, None, caller.height + 1)
        }
        RequestedTrigger::State {
            actor,
            keys,
            handler,
        } => {
            let watched = actor.unwrap_or(caller.actor);
            let watch = match watch_keys(config, keys) {
                Ok(keys) => Watch {
                    actor: watched,
                    keys,
                    fires: 0,
                },
                Err(e) => reject!(e),
            };
            if !accounts::load(state, &watched)?.is_actor {
                reject!(TimerError::NoWatchedActor { actor: watched });
            }
            let handler = handler
                .clone()
                .unwrap_or_else(|| timerhost_types::timer::DEFAULT_TIMER_HANDLER.to_string());
            if let Err(e) = handler::validate_handler(&handler) {
                reject!(e);
            }
            (TimerKind::State(watch), Some(handler), caller.height + 1)
        }
    };
    let handler = match named_handler {
        Some(h) => h,
        None => match handler::resolve(&request.payload) {
            Ok(r) => r.handler,
            Err(e) => reject!(e),
        },
    };
    // §4.2 fee_payer rules.
    let fee_payer = request.fee_payer.unwrap_or(caller.actor);
    if let Err(e) = check_fee_payer(fee_payer, caller) {
        reject!(e);
    }
    // §4.2 gas_limit_per_fire ≤ max_cycles_per_fire.
    let gas_limit = request.gas_limit.unwrap_or(config.max_cycles_per_fire);
    if gas_limit == 0 {
        reject!(TimerError::GasLimitZero {
            call: "schedule_timer"
        });
    }
    if gas_limit > config.max_cycles_per_fire {
        reject!(TimerError::GasLimitTooHigh {
            call: "schedule_timer",
            gas_limit,
            max: config.max_cycles_per_fire
        });
    }
    // §4.2 expires_at ≤ current_height + max_ttl_blocks.
    let ttl_cap = caller.height.saturating_add(config.max_ttl_blocks);
    let expires_at = request.expires_at.unwrap_or(ttl_cap);
    if expires_at > ttl_cap {
        reject!(TimerError::ExpiresTooLate {
            call: "schedule_timer",
            expires_at,
            current: caller.height,
            max_ttl: config.max_ttl_blocks
        });
    }
    if expires_at < fires_no_earlier_than {
        reject!(TimerError::ExpiresBeforeFire {
            call: "schedule_timer",
            expires_at,
            height: fires_no_earlier_than
        });
    }
    // #19: an escrow is part of the actor's own balance, so only the actor
    // itself can be the fee payer of a timer it funds.
    if let Some(key) = &request.escrow_key {
        let reason = if fee_payer != caller.actor {
            Some(format!(
                "escrow= funds a timer from the actor's own balance, so fee_payer must be the actor itself, not {fee_payer}"
            ))
        } else if key.is_empty() || key.len() > MAX_ESCROW_KEY_BYTES {
            Some(format!(
                "escrow= must be a storage key of 1 to {MAX_ESCROW_KEY_BYTES} bytes, got {}",
                key.len()
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            reject!(TimerError::InvalidArguments {
                call: "schedule_timer",
                reason
            });
        }
    }
    // #18: the bid is bounded by governance.
    let bid = request.bid.unwrap_or(0);
    if bid > config.max_bid {
        reject!(TimerError::BidTooHigh {
            call: "schedule_timer",
            bid,
            max: config.max_bid
        });
    }
    // §4.2 per-actor cap.
    let live = store::live_count(state, &caller.actor)?;
    if live >= config.max_timers_per_actor {
        reject!(TimerError::TooManyTimers {
            call: "schedule_timer",
            actor: caller.actor,
            live,
            max: config.max_timers_per_actor
        });
    }
    Ok(Ok(Validated {
        handler,
        fee_payer,
        gas_limit,
        expires_at,
        bid,
        kind,
    }))
}

/// Parses a watch's entries: 1 to `max_watch_keys` of them, each a key or
/// a `"prefix*"` of at most [`MAX_WATCH_KEY_BYTES`] bytes; returned sorted
/// and without duplicates.
fn watch_keys(
    config: &TimerConfig,
    entries: &[String],
) -> std::result::Result<Vec<WatchKey>, TimerError> {
    let bad = |reason: String| Err(TimerError::InvalidWatch { reason });
    if entries.is_empty() {
        return bad("watch at least one key (a key, or a prefix such as \"price*\")".into());
    }
    if entries.len() > config.max_watch_keys as usize {
        return bad(format!(
            "{} keys listed, max_watch_keys is {}",
            entries.len(),
            config.max_watch_keys
        ));
    }
    let mut keys = Vec::with_capacity(entries.len());
    for entry in entries {
        let key = WatchKey::parse(entry);
        if key.key.len() > MAX_WATCH_KEY_BYTES {
            let shown: String = entry.chars().take(32).collect();
            return bad(format!(
                "key {shown:?}... is {} bytes, the maximum is {MAX_WATCH_KEY_BYTES}",
                key.key.len()
            ));
        }
        keys.push(key);
    }
    keys.sort();
    keys.dedup();
    Ok(keys)
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

/// Sets a live timer's `expires_at` to `requested`, clamped to `height +
/// max_ttl_blocks` (§5.4), for the actor's own extend and governance alike:
/// the new value must be after the current height and, once clamped, not
/// before the timer's firing height (it could never fire).
pub fn set_expiry(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    call: &'static str,
    height: u64,
    mut record: TimerRecord,
    requested: u64,
) -> Result<std::result::Result<Timer, TimerError>> {
    let timer_id = record.timer.timer_id;
    match crate::record::queued(state, &timer_id)? {
        Some(Queued::Backlog) => return Ok(Err(TimerError::AlreadyFinal { call, timer_id })),
        Some(Queued::Globalbox) => return Ok(Err(TimerError::AlreadyDue { call, timer_id })),
        _ => {}
    }
    if requested <= height {
        return Ok(Err(TimerError::ExpiryNotInFuture {
            call,
            expires_at: requested,
            current: height,
        }));
    }
    let clamped = requested.min(height.saturating_add(config.max_ttl_blocks));
    if clamped < record.timer.height {
        return Ok(Err(TimerError::ExpiresBeforeFire {
            call,
            expires_at: clamped,
            height: record.timer.height,
        }));
    }
    let before = record.timer.clone();
    record.timer.expires_at = clamped;
    store::update(state, &before, &record)?;
    Ok(Ok(record.timer))
}

/// `extend_timer(timer_id, new_expires_at)`: owner only (§4.2), rules of
/// [`set_expiry`]. Returns the `timer.extended` event (with the clamped value).
pub fn extend(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    timer_id: &Hash,
    new_expires_at: u64,
) -> Result<std::result::Result<Event, TimerError>> {
    let record = match owned_timer(state, caller, "extend_timer", timer_id)? {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    Ok(set_expiry(
        state,
        config,
        "extend_timer",
        caller.height,
        record,
        new_expires_at,
    )?
    .map(|timer| events::timer_extended(&timer)))
}

/// `cancel_timer(timer_id)`: owner only (§4.2). No timer holds a pre-charge
/// between blocks (pre-charge and removal happen together at end of block);
/// the deposit goes back to the fee payer. Returns `TimerCancelled`.
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
    Ok(Ok(events::timer_cancelled(
        &record.timer,
        events::CancelReason::Actor,
    )))
}

/// `RevokeTimerPayments` / `pvm_host.revoke_timer_payments()`: every timer
/// scheduled so far that names `fee_payer` is revoked (removed at its next
/// classification without executing or charging). Returns
/// `TimerPaymentsRevoked`.
pub fn revoke_payments(state: &mut Overlay<'_>, fee_payer: &Address) -> Result<Event> {
    let before_seq = store::peek_seq(state)?;
    control::revoke_before(state, fee_payer, before_seq);
    Ok(events::timer_payments_revoked(fee_payer, before_seq))
}
