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
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::keys::{self, Account};
use timerhost_types::timer::{
    RequestedTrigger, ACCOUNT_WRITE_CELLS, MAX_ESCROW_KEY_BYTES, MAX_TIMER_PAYLOAD,
    MAX_WATCH_KEY_BYTES,
};
use timerhost_types::{
    timer_id, Address, Event, Hash, RetryPolicy, Timer, TimerConfig, TimerKind, TimerRequest,
    Watch, WatchKey,
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
    /// `TimerBooked` after `TimerScheduled`, for a booking (#45).
    pub booked_event: Option<Event>,
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
pub fn call_name(request: &TimerRequest) -> &'static str {
    match (&request.trigger, request.book) {
        (RequestedTrigger::Height(_), true) => "book_timer",
        (RequestedTrigger::Time(_), true) => "book_timer_at",
        (RequestedTrigger::Height(_), false) => "schedule_timer",
        (RequestedTrigger::Time(_), false) => "schedule_timer_at",
        (RequestedTrigger::State { .. }, _) => "watch",
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
    let call = call_name(&request);
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
        retry,
        handler,
        fee_payer,
        gas_limit,
        expires_at,
        bid,
        max_fee_per_cycle,
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
        max_fee_per_cycle,
        kind,
        escrow_key: request.escrow_key,
        retry: None,
        booked: false,
    };
    timer.retry = retry.map(|(retries, backoff)| RetryPolicy {
        retries,
        backoff,
        failures: 0,
        consent_seq: timer.seq,
    });
    timer.booked = request.book;
    let bytes = store::state_bytes(&timer);
    // Fits: deposit_per_byte ≤ 2^96 (validated) and bytes < 2^21.
    timer.deposit = config.deposit_per_byte * u128::from(bytes);
    // #45: a booking is judged, and its fee checked against what the payer
    // holds beside the deposit, before anything moves.
    let booking_fee = if request.book {
        match crate::bookings::quote_for(state, config, caller.height, caller.timestamp_ms, &timer)?
        {
            Ok(fee) => Some(fee),
            Err(e) => return Ok(Err(e)),
        }
    } else {
        None
    };
    // The deposit moves first: refused, it leaves nothing behind. An
    // escrow-funded timer's deposit is also the escrow's.
    match crate::deposit::lend(state, &timer, timer.deposit)? {
        Ok(()) => {}
        Err(crate::deposit::Shortfall::Escrow { available }) => {
            let key = timer.escrow_key.as_deref().unwrap_or_default();
            return Ok(Err(TimerError::EscrowUnfunded {
                call: "schedule_timer",
                key: String::from_utf8_lossy(key).into_owned(),
                deposit: timer.deposit,
                available,
            }));
        }
        Err(crate::deposit::Shortfall::FeePayer { available }) => {
            return Ok(Err(TimerError::DepositUnfunded {
                call: "schedule_timer",
                fee_payer,
                deposit: timer.deposit,
                bytes,
                per_byte: config.deposit_per_byte,
                available,
            }));
        }
    }
    if let Some(fee) = booking_fee {
        // Checked with the deposit above (`bookings::quote_for`): the payer
        // (and escrow) held both.
        if let Debit::Insufficient { available } = accounts::debit(state, &fee_payer, fee)? {
            return Err(crate::keys::corrupt(
                "booking fee",
                fee_payer.as_bytes(),
                &format!("{available} changed between the check and the charge of {fee}"),
            ));
        }
        if let Some(key) = &timer.escrow_key {
            escrow::debit(state, &caller.actor, key, fee)?;
        }
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
    if let Some(fee) = booking_fee {
        crate::bookings::book(state, &timer, fee)?;
    }
    let rewritten_accounts = if timer.deposit == 0 {
        1
    } else if fee_payer == caller.actor {
        2
    } else {
        3
    };
    let event = events::timer_scheduled(&timer);
    let booked_event = booking_fee.map(|fee| events::timer_booked(&timer, fee));
    let booking_cells = if booked_event.is_some() {
        crate::bookings::BOOKING_STATE_BYTES
    } else {
        0
    };
    Ok(Ok(Scheduled {
        cells: bytes + rewritten_accounts * ACCOUNT_WRITE_CELLS + booking_cells,
        timer,
        event,
        booked_event,
    }))
}

struct Validated {
    retry: Option<(u32, u64)>,
    handler: String,
    fee_payer: Address,
    gas_limit: u64,
    expires_at: u64,
    bid: u64,
    max_fee_per_cycle: u64,
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
    // A booking may name its handler outright (`book_timer(handler=…)`).
    let named_handler = match (&request.handler, named_handler) {
        (Some(h), None) => {
            if let Err(e) = handler::validate_handler(h) {
                reject!(e);
            }
            Some(h.clone())
        }
        (_, named) => named,
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
    // #18: the bid is bounded by governance; #31: the fee caps, given or
    // defaulted, must reach the lane basefee under market ordering.
    // A booking (#45) never pays the lane basefee, so its cap need not
    // reach it.
    let market = crate::lane::market(state, config)?;
    let (max_fee_per_cycle, bid) =
        match check_fee_caps(config, &market, request.bid, request.max_fee_per_cycle) {
            Ok(caps) => caps,
            Err(TimerError::BelowLaneBasefee { max_fee, .. }) if request.book => {
                (max_fee, request.bid.unwrap_or(0))
            }
            Err(e) => reject!(e),
        };
    let retry = match retry_policy(config, request) {
        Ok(retry) => retry,
        Err(e) => reject!(e),
    };
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
        retry,
        handler,
        fee_payer,
        gas_limit,
        expires_at,
        bid,
        max_fee_per_cycle,
        kind,
    }))
}

/// A schedule's retry policy (#45): `retries=` at most `max_retries`, with
/// a `retry_backoff=` of at least 1 (blocks, or seconds for a time timer)
/// whose doubled delays stay within a TTL. `None` without retries.
pub fn retry_policy(
    config: &TimerConfig,
    request: &TimerRequest,
) -> std::result::Result<Option<(u32, u64)>, TimerError> {
    let call = call_name(request);
    let bad = |reason: String| Err(TimerError::InvalidArguments { call, reason });
    match (request.retries.unwrap_or(0), request.retry_backoff) {
        // retries=0 asks for no retry, whatever the backoff.
        (0, _) => Ok(None),
        (n, _) if n > config.max_retries => bad(format!(
            "retries={n} is more than this chain allows (TimerConfig.max_retries = {})",
            config.max_retries
        )),
        (_, None) | (_, Some(0)) => bad(
            "retries= needs retry_backoff= of at least 1 (blocks, or seconds for schedule_timer_at)"
                .into(),
        ),
        (n, Some(backoff)) => {
            let policy = RetryPolicy {
                retries: n,
                backoff,
                failures: 0,
                consent_seq: 0,
            };
            // Seconds are counted as blocks here: either way a policy
            // that waits longer than a timer may live is a mistake.
            if policy.total_delay() > config.max_ttl_blocks {
                return bad(format!(
                    "retries={n} with retry_backoff={backoff} waits {} in all, more than max_ttl_blocks ({}) allows",
                    policy.total_delay(),
                    config.max_ttl_blocks
                ));
            }
            Ok(Some((n, backoff)))
        }
    }
}

/// A schedule's (or a quote's) fee caps, defaulted
/// ([`default_caps`](timerhost_types::lane::default_caps)) and checked:
/// the bid at most `max_bid`, the cap at most `MAX_FEE_PER_CYCLE`, and under
/// market ordering at least the lane basefee. `(max_fee_per_cycle, bid)`.
pub fn check_fee_caps(
    config: &TimerConfig,
    market: &timerhost_types::LaneMarket,
    bid: Option<u64>,
    max_fee: Option<u64>,
) -> std::result::Result<(u64, u64), TimerError> {
    use timerhost_types::lane::{default_caps, MAX_FEE_PER_CYCLE};
    let call = "schedule_timer";
    if let Some(bid) = bid {
        if bid > config.max_bid {
            return Err(TimerError::BidTooHigh {
                call,
                bid,
                max: config.max_bid,
            });
        }
    }
    let (max_fee, bid) = default_caps(config, market, bid, max_fee);
    if max_fee > MAX_FEE_PER_CYCLE {
        return Err(TimerError::FeeCapTooHigh {
            call,
            max_fee,
            max: MAX_FEE_PER_CYCLE,
        });
    }
    if config.ordering == timerhost_types::TimerOrdering::Market && max_fee < market.basefee {
        return Err(TimerError::BelowLaneBasefee {
            call,
            max_fee,
            lane_basefee: market.basefee,
        });
    }
    Ok((max_fee, bid.min(config.max_bid)))
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

/// The caller's own timer `timer_id`. The owner is read from the record's
/// fixed head (version byte, then the actor: the first field of the
/// canonical encoding) before anything else, so refusing a stranger reads
/// 21 bytes of a record that may hold 1 MiB (#29). `record_bytes` is set to
/// the record's length once it is known to be the caller's: what the call
/// then decodes, hashes and rewrites, and is charged for
/// ([`record_cycles`]).
fn owned_timer(
    state: &Overlay<'_>,
    caller: &HostCaller,
    call: &'static str,
    timer_id: &Hash,
    record_bytes: &mut u64,
) -> Result<std::result::Result<TimerRecord, TimerError>> {
    const OWNER_HEAD: usize = 1 + 20;
    let not_found = TimerError::NotFound {
        call,
        timer_id: *timer_id,
    };
    let Some(key) = state.get(&crate::keys::id_key(timer_id))? else {
        return Ok(Err(not_found));
    };
    // A fired timer's lookup is left stale (`record::IdLookup`): no record.
    let Some((head, len)) = state.get_head(&key, OWNER_HEAD)? else {
        return Ok(Err(not_found));
    };
    let owner = head
        .get(1..OWNER_HEAD)
        .and_then(|a| Address::from_slice(a).ok())
        .ok_or_else(|| crate::keys::corrupt("timer record", &key, "shorter than its owner"))?;
    // §4.2: only the owning actor, never another actor.
    if owner != caller.actor {
        return Ok(Err(TimerError::Unauthorized {
            call,
            timer_id: *timer_id,
            owner,
            caller: caller.actor,
        }));
    }
    *record_bytes = len as u64;
    let record = store::get_record(state, timer_id)?
        .ok_or_else(|| crate::keys::missing("timer id lookup", timer_id))?;
    Ok(Ok(record))
}

/// Cycles an `extend_timer` or `cancel_timer` of the caller's own timer
/// pays for its record's bytes, on top of its base price: the record is
/// read, decoded and hashed (an extend re-encodes, hashes and writes it
/// again), so a 1 MiB payload is not rewritten for the price of an empty
/// one. One cycle per [`RECORD_BYTES_PER_CYCLE`] bytes.
pub fn record_cycles(record_bytes: u64) -> u64 {
    record_bytes / RECORD_BYTES_PER_CYCLE
}

/// See [`record_cycles`].
pub const RECORD_BYTES_PER_CYCLE: u64 = 16;

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
/// [`set_expiry`]. Returns the `timer.extended` event (with the clamped
/// value); `record_bytes` gets the length of the caller's record, if it was
/// reached ([`record_cycles`]).
pub fn extend(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    caller: &HostCaller,
    timer_id: &Hash,
    new_expires_at: u64,
    record_bytes: &mut u64,
) -> Result<std::result::Result<Event, TimerError>> {
    let record = match owned_timer(state, caller, "extend_timer", timer_id, record_bytes)? {
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
/// the deposit goes back to the fee payer. Returns `TimerCancelled`;
/// `record_bytes` as for [`extend`].
pub fn cancel(
    state: &mut Overlay<'_>,
    caller: &HostCaller,
    timer_id: &Hash,
    record_bytes: &mut u64,
) -> Result<std::result::Result<Event, TimerError>> {
    let record = match owned_timer(state, caller, "cancel_timer", timer_id, record_bytes)? {
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

#[cfg(test)]
mod tests {
    //! #29: what a host call reads must not depend on what others stored.
    use std::cell::Cell;
    use std::collections::BTreeMap;
    use std::ops::Bound;

    use timerhost_state::{Overlay, StateRead};
    use timerhost_types::{Address, Hash, Timer, TimerConfig, TimerKind};

    use super::*;

    const MINE: Address = Address([0x11; 20]);
    const OTHER: Address = Address([0x22; 20]);

    /// Committed state that counts the value bytes handed out.
    #[derive(Default)]
    struct Counting {
        map: BTreeMap<Vec<u8>, Vec<u8>>,
        bytes: Cell<u64>,
    }

    impl StateRead for Counting {
        fn get(&self, key: &[u8]) -> timerhost_state::Result<Option<Vec<u8>>> {
            let v = self.map.get(key).cloned();
            self.bytes
                .set(self.bytes.get() + v.as_ref().map_or(0, |v| v.len() as u64));
            Ok(v)
        }

        fn get_head(
            &self,
            key: &[u8],
            n: usize,
        ) -> timerhost_state::Result<Option<(Vec<u8>, usize)>> {
            let v = self
                .map
                .get(key)
                .map(|v| (v[..v.len().min(n)].to_vec(), v.len()));
            self.bytes
                .set(self.bytes.get() + v.as_ref().map_or(0, |(h, _)| h.len() as u64));
            Ok(v)
        }

        fn scan(
            &self,
            start: &[u8],
            end: Option<&[u8]>,
            limit: usize,
        ) -> timerhost_state::Result<Vec<(Vec<u8>, Vec<u8>)>> {
            let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
            let out: Vec<_> = self
                .map
                .range::<[u8], _>((Bound::Included(start), upper))
                .take(limit)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let read: u64 = out.iter().map(|(_, v)| v.len() as u64).sum();
            self.bytes.set(self.bytes.get() + read);
            Ok(out)
        }
    }

    fn timer(actor: Address, seq: u64, payload: usize) -> Timer {
        let mut id = [0u8; 32];
        id[..8].copy_from_slice(&seq.to_be_bytes());
        id[8] = actor.0[0];
        Timer {
            actor_address: actor,
            height: 50,
            payload: vec![7; payload],
            timer_id: Hash(id),
            handler: "handle_timer".into(),
            fee_payer: actor,
            gas_limit_per_fire: 1_000,
            expires_at: 60,
            seq,
            deposit: 0,
            bid: 0,
            max_fee_per_cycle: 0,
            kind: TimerKind::Height,
            escrow_key: None,
            booked: false,
            retry: None,
        }
    }

    /// Committed state with `mine` (one small timer of MINE) and `others`
    /// timers of OTHER with `payload`-byte payloads, all due at height 50.
    fn committed(others: u64, payload: usize) -> Counting {
        let empty = timerhost_state::EmptyState;
        let mut o = Overlay::new(&empty);
        for s in 0..others {
            store::insert(&mut o, &timer(OTHER, s, payload)).unwrap();
        }
        store::insert(&mut o, &timer(MINE, 100, 0)).unwrap();
        Counting {
            map: o
                .into_changes()
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .collect(),
            bytes: Cell::new(0),
        }
    }

    fn caller() -> HostCaller {
        HostCaller {
            actor: MINE,
            tx_sender: MINE,
            height: 10,
            timestamp_ms: 10_000,
            nested: false,
        }
    }

    /// Bytes read from committed state by `call` over an overlay on `base`.
    fn bytes_read(base: &Counting, call: impl FnOnce(&mut Overlay<'_>)) -> u64 {
        base.bytes.set(0);
        let mut o = Overlay::new(base);
        call(&mut o);
        base.bytes.get()
    }

    #[test]
    fn extend_and_cancel_read_nothing_of_other_timers_in_their_bucket() {
        let config = TimerConfig::default();
        let id = timer(MINE, 100, 0).timer_id;
        let mut reads = Vec::new();
        for payload in [0usize, 100_000] {
            let base = committed(15, payload);
            let extend = bytes_read(&base, |o| {
                extend(o, &config, &caller(), &id, 70, &mut 0)
                    .unwrap()
                    .unwrap();
            });
            let cancel = bytes_read(&base, |o| {
                cancel(o, &caller(), &id, &mut 0).unwrap().unwrap();
            });
            reads.push((payload, extend, cancel));
        }
        let (_, extend_small, cancel_small) = reads[0];
        let (_, extend_big, cancel_big) = reads[1];
        assert_eq!(
            (extend_big, cancel_big),
            (extend_small, cancel_small),
            "bytes read next to 15 empty timers vs 15 of 100 KB: {reads:?}"
        );
        assert!(extend_big < 8_192 && cancel_big < 8_192, "{reads:?}");
    }

    #[test]
    fn a_refused_cancel_or_extend_of_a_strangers_timer_reads_no_record() {
        let config = TimerConfig::default();
        let victim = timer(OTHER, 3, 0).timer_id;
        let base = committed(15, 100_000);
        let cancel = bytes_read(&base, |o| {
            let e = cancel(o, &caller(), &victim, &mut 0).unwrap().unwrap_err();
            assert!(matches!(e, TimerError::Unauthorized { .. }), "{e:?}");
        });
        let extend = bytes_read(&base, |o| {
            let e = extend(o, &config, &caller(), &victim, 70, &mut 0)
                .unwrap()
                .unwrap_err();
            assert!(matches!(e, TimerError::Unauthorized { .. }), "{e:?}");
        });
        assert!(
            cancel < 1_024 && extend < 1_024,
            "a 100 KB record read to refuse a stranger: cancel {cancel}, extend {extend} bytes"
        );
    }
}
