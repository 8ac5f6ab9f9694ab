//! Timer events with stable names and fields (DESIGN.md "Events"). Amounts
//! are ints, timer ids are bytes (hex in JSON), addresses are lowercase
//! `0x…` strings. Protocol events are emitted with the timer's actor as
//! emitter so that "events of actor X" includes its timers' lifecycle.

use timerhost_types::{
    Address, Event, ExecError, Hash, Timer, TimerConfig, Value, GOVERNANCE_ADDRESS,
};

fn dict(emitter: Address, name: &str, fields: Vec<(&str, Value)>) -> Event {
    let data = Value::dict_of_names(fields);
    Event {
        emitter,
        name: name.to_string(),
        data,
    }
}

fn id(timer_id: &Hash) -> Value {
    Value::Bytes(timer_id.0.to_vec())
}

fn addr(a: &Address) -> Value {
    Value::str(a.to_hex())
}

/// `TimerScheduled {timer_id, actor, height, fee_payer, gas_limit, expires_at, handler, deposit}`.
pub fn timer_scheduled(t: &Timer) -> Event {
    dict(
        t.actor_address,
        "TimerScheduled",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("actor", addr(&t.actor_address)),
            ("height", Value::int(t.height)),
            ("fee_payer", addr(&t.fee_payer)),
            ("gas_limit", Value::int(t.gas_limit_per_fire)),
            ("expires_at", Value::int(t.expires_at)),
            ("handler", Value::str(&t.handler)),
            ("deposit", Value::int(t.deposit)),
            ("bid", Value::int(t.bid)),
            ("max_fee_per_cycle", Value::int(t.max_fee_per_cycle)),
            ("max_priority_fee_per_cycle", Value::int(t.bid)),
            ("trigger", t.trigger_value()),
        ],
    )
}

/// Outcome of one fire, for `TimerFired`.
#[derive(Debug, Clone)]
pub struct FireOutcome<'a> {
    /// The error, if the handler failed.
    pub error: Option<&'a ExecError>,
    /// Cycles used.
    pub cycles_used: u64,
    /// Cells used.
    pub cells_used: u64,
    /// `actual_cost` charged.
    pub cost: u128,
    /// `max_cost − actual_cost` refunded.
    pub refund: u128,
    /// The tip paid to the proposer (the priority fee on the handler's
    /// cycles used).
    pub tip: u128,
    /// The lane basefee burned per handler cycle (#31; 0 outside market
    /// ordering).
    pub lane_basefee: u64,
    /// The priority fee per handler cycle.
    pub priority_fee: u64,
    /// Did the fee cap clamp the priority fee below the bid?
    pub priority_clamped: bool,
    /// The fairness weight, in thousandths.
    pub weight: u64,
    /// Which delivery this fire is.
    pub delivery: timerhost_types::Delivery,
}

/// `TimerFired {timer_id, actor, fee_payer, handler, success, error,
/// cycles_used, cells_used, cost, refund, tip, lane_basefee, priority_fee,
/// priority_clamped, weight, kind, due_height, due_timestamp_ms,
/// deliver_seq, fire_seq, deliver_id}`.
pub fn timer_fired(t: &Timer, o: &FireOutcome<'_>) -> Event {
    let error = match o.error {
        None => Value::None,
        Some(e) => Value::str(format!("{}: {}", e.kind.as_str(), e.message)),
    };
    dict(
        t.actor_address,
        "TimerFired",
        // Written in the dict's canonical order (by length, then bytes), so
        // `dict_of_names` finds them sorted and skips its sort (#46).
        vec![
            ("tip", Value::int(o.tip)),
            ("cost", Value::int(o.cost)),
            ("kind", Value::str(t.kind.name())),
            ("actor", addr(&t.actor_address)),
            ("error", error),
            ("refund", Value::int(o.refund)),
            ("weight", Value::int(o.weight)),
            ("handler", Value::str(&t.handler)),
            ("success", Value::Bool(o.error.is_none())),
            ("fire_seq", Value::int(o.delivery.fire_seq)),
            ("timer_id", id(&t.timer_id)),
            ("fee_payer", addr(&t.fee_payer)),
            ("cells_used", Value::int(o.cells_used)),
            ("deliver_id", id(&o.delivery.deliver_id)),
            // What made it due (#33: the dashboard counts fires by kind and
            // those that came later than due).
            (
                "due_height",
                match t.kind {
                    timerhost_types::TimerKind::Height => Value::int(t.height),
                    _ => Value::None,
                },
            ),
            ("cycles_used", Value::int(o.cycles_used)),
            ("deliver_seq", Value::int(o.delivery.deliver_seq)),
            ("lane_basefee", Value::int(o.lane_basefee)),
            ("priority_fee", Value::int(o.priority_fee)),
            (
                "due_timestamp_ms",
                match t.kind {
                    timerhost_types::TimerKind::Time { timestamp_ms } => Value::int(timestamp_ms),
                    _ => Value::None,
                },
            ),
            ("priority_clamped", Value::Bool(o.priority_clamped)),
        ],
    )
}

/// `TimerDeferred {timer_id, actor, fee_payer, reason: "below_basefee",
/// max_fee_per_cycle, lane_basefee}` (#31): a due timer starts waiting,
/// uncharged, because the lane basefee is above its fee cap.
pub fn timer_deferred(t: &Timer, lane_basefee: u64) -> Event {
    dict(
        t.actor_address,
        "TimerDeferred",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("actor", addr(&t.actor_address)),
            ("fee_payer", addr(&t.fee_payer)),
            ("reason", Value::str("below_basefee")),
            ("max_fee_per_cycle", Value::int(t.max_fee_per_cycle)),
            ("lane_basefee", Value::int(lane_basefee)),
        ],
    )
}

/// `TimerExpired {timer_id, expires_at, current_height}`.
pub fn timer_expired(t: &Timer, current_height: u64) -> Event {
    dict(
        t.actor_address,
        "TimerExpired",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("expires_at", Value::int(t.expires_at)),
            ("current_height", Value::int(current_height)),
        ],
    )
}

/// `TimerCancelledInsufficientFunds {timer_id, fee_payer, required, available}`.
pub fn timer_unfunded(t: &Timer, required: u128, available: u128) -> Event {
    dict(
        t.actor_address,
        "TimerCancelledInsufficientFunds",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("fee_payer", addr(&t.fee_payer)),
            ("required", Value::int(required)),
            ("available", Value::int(available)),
        ],
    )
}

/// Who cancelled a timer, in `TimerCancelled.reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CancelReason {
    /// The actor's own `cancel_timer` (`"actor"`).
    Actor,
    /// A governance shutdown (`"shutdown"`).
    Shutdown,
}

/// `TimerCancelled {timer_id, actor, reason}`: `reason` is `"actor"` (its
/// own cancel) or `"shutdown"` (governance shut timers down).
pub fn timer_cancelled(t: &Timer, reason: CancelReason) -> Event {
    let reason = match reason {
        CancelReason::Actor => "actor",
        CancelReason::Shutdown => "shutdown",
    };
    dict(
        t.actor_address,
        "TimerCancelled",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("actor", addr(&t.actor_address)),
            ("reason", Value::str(reason)),
        ],
    )
}

/// `TimerCancelledPaymentRevoked {timer_id, fee_payer}`: removed unexecuted
/// because its fee payer revoked it.
pub fn timer_payment_revoked(t: &Timer) -> Event {
    dict(
        t.actor_address,
        "TimerCancelledPaymentRevoked",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("fee_payer", addr(&t.fee_payer)),
        ],
    )
}

/// `TimerPaymentsRevoked {fee_payer, before_seq}`: the payer revoked every
/// timer naming it with a sequence number below `before_seq`.
pub fn timer_payments_revoked(fee_payer: &Address, before_seq: u64) -> Event {
    dict(
        *fee_payer,
        "TimerPaymentsRevoked",
        vec![
            ("fee_payer", addr(fee_payer)),
            ("before_seq", Value::int(before_seq)),
        ],
    )
}

/// `TimersPaused {}`, `TimersResumed {}`: governance's pause and resume.
pub fn timers_paused(paused: bool) -> Event {
    let name = if paused {
        "TimersPaused"
    } else {
        "TimersResumed"
    };
    dict(GOVERNANCE_ADDRESS, name, vec![])
}

/// `TimersShutdown {complete}`: `false` when governance orders it, `true`
/// once the last pending timer is gone.
pub fn timers_shutdown(complete: bool) -> Event {
    dict(
        GOVERNANCE_ADDRESS,
        "TimersShutdown",
        vec![("complete", Value::Bool(complete))],
    )
}

/// `timer.extended {timer_id, expires_at}` (the actor's own extend).
pub fn timer_extended(t: &Timer) -> Event {
    dict(
        t.actor_address,
        "timer.extended",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("expires_at", Value::int(t.expires_at)),
        ],
    )
}

/// `timer.cancelled_by_governance {timer_id}`.
pub fn cancelled_by_governance(emitter: Address, timer_id: &Hash) -> Event {
    dict(
        emitter,
        "timer.cancelled_by_governance",
        vec![("timer_id", id(timer_id))],
    )
}

/// `timer.extended_by_governance {timer_id, expires_at}`.
pub fn extended_by_governance(emitter: Address, t: &Timer) -> Event {
    dict(
        emitter,
        "timer.extended_by_governance",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("expires_at", Value::int(t.expires_at)),
        ],
    )
}

/// `timer_config.updated` with every field's new value.
pub fn timer_config_updated(emitter: Address, c: &TimerConfig) -> Event {
    dict(
        emitter,
        "timer_config.updated",
        vec![
            ("max_ttl_blocks", Value::int(c.max_ttl_blocks)),
            ("max_cycles_per_fire", Value::int(c.max_cycles_per_fire)),
            ("max_cells_per_fire", Value::int(c.max_cells_per_fire)),
            ("max_timers_per_actor", Value::int(c.max_timers_per_actor)),
            ("gc_cycles_per_block", Value::int(c.gc_cycles_per_block)),
            ("lane_cycles_per_block", Value::int(c.lane_cycles_per_block)),
            ("max_fires_per_block", Value::int(c.max_fires_per_block)),
            ("deposit_per_byte", Value::int(c.deposit_per_byte)),
            ("max_watch_keys", Value::int(c.max_watch_keys)),
            ("max_bid", Value::int(c.max_bid)),
            ("ordering", Value::str(c.ordering.as_str())),
            ("w_age", Value::int(c.w_age)),
            ("w_bid", Value::int(c.w_bid)),
            ("max_fires_per_target", Value::int(c.max_fires_per_target)),
            (
                "max_watch_matches_per_block",
                Value::int(c.max_watch_matches_per_block),
            ),
            ("lane_target_percent", Value::int(c.lane_target_percent)),
            (
                "lane_basefee_change_denominator",
                Value::int(c.lane_basefee_change_denominator),
            ),
            ("min_lane_basefee", Value::int(c.min_lane_basefee)),
            (
                "fairness_window_blocks",
                Value::int(c.fairness_window_blocks),
            ),
            (
                "lane_reservation_percent",
                Value::int(c.lane_reservation_percent),
            ),
            ("max_retries", Value::int(c.max_retries)),
            (
                "dead_letter_ttl_blocks",
                Value::int(c.dead_letter_ttl_blocks),
            ),
            (
                "max_dead_letters_per_actor",
                Value::int(c.max_dead_letters_per_actor),
            ),
            ("bookable_lane_percent", Value::int(c.bookable_lane_percent)),
            ("max_booking_blocks", Value::int(c.max_booking_blocks)),
        ],
    )
}

/// `TimerBooked {timer_id, actor, fee_payer, booking_fee, cycles, height |
/// timestamp_ms}` (#45): the timer holds capacity in its block (or second),
/// its booking fee burned.
pub fn timer_booked(t: &Timer, booking_fee: u128) -> Event {
    let at = match &t.kind {
        timerhost_types::TimerKind::Time { timestamp_ms } => {
            ("timestamp_ms", Value::int(*timestamp_ms))
        }
        _ => ("height", Value::int(t.height)),
    };
    dict(
        t.actor_address,
        "TimerBooked",
        vec![
            ("timer_id", id(&t.timer_id)),
            ("actor", addr(&t.actor_address)),
            ("fee_payer", addr(&t.fee_payer)),
            ("booking_fee", Value::int(booking_fee)),
            (
                "cycles",
                Value::int(crate::bookings::cycles_of(t.gas_limit_per_fire)),
            ),
            at,
        ],
    )
}

/// `"ExceptionKind: message"` of a failed fire, as retry and dead-letter
/// events and entries carry it.
pub fn error_text(error: &ExecError) -> String {
    format!("{:?}: {}", error.kind, error.message)
}

/// `TimerRetried {timer_id, actor, fee_payer, attempt, retries, next_due,
/// error, deposit}` (#45): fire `attempt` failed and the timer is armed
/// again, due at `next_due` (`{"height": h}` or `{"timestamp_ms": t}`).
/// A watch's retry is a height timer of its own, `retry_timer_id`.
pub fn timer_retried(failed: &Timer, retry: &Timer, attempt: u32, error: &ExecError) -> Event {
    let next_due = match &retry.kind {
        timerhost_types::TimerKind::Time { timestamp_ms } => {
            (Value::str("timestamp_ms"), Value::int(*timestamp_ms))
        }
        _ => (Value::str("height"), Value::int(retry.height)),
    };
    let retries = retry.retry.as_ref().map_or(0, |r| r.retries);
    dict(
        failed.actor_address,
        "TimerRetried",
        vec![
            ("timer_id", id(&failed.timer_id)),
            ("retry_timer_id", id(&retry.timer_id)),
            ("actor", addr(&failed.actor_address)),
            ("fee_payer", addr(&failed.fee_payer)),
            ("attempt", Value::int(attempt)),
            ("retries", Value::int(retries)),
            (
                "next_due",
                Value::dict_from([next_due]).expect("str keys are hashable"),
            ),
            ("error", Value::str(error_text(error))),
            ("deposit", Value::int(retry.deposit)),
        ],
    )
}

/// `TimerDeadLettered {timer_id, actor, fee_payer, attempts, error, kept,
/// reason, expires_at, deposit}` (#45): the timer's last attempt failed.
/// `kept` says whether it is in the actor's dead-letter queue (until
/// `expires_at`, holding `deposit`) or was dropped, and `reason` why not.
pub fn timer_dead_lettered(
    timer: &Timer,
    attempts: u32,
    error: &str,
    kept: Result<(u64, u128), String>,
) -> Event {
    let (kept, reason, expires_at, deposit) = match kept {
        Ok((expires_at, deposit)) => (true, Value::None, Value::int(expires_at), deposit),
        Err(reason) => (false, Value::str(reason), Value::None, 0),
    };
    dict(
        timer.actor_address,
        "TimerDeadLettered",
        vec![
            ("timer_id", id(&timer.timer_id)),
            ("actor", addr(&timer.actor_address)),
            ("fee_payer", addr(&timer.fee_payer)),
            ("attempts", Value::int(attempts)),
            ("error", Value::str(error)),
            ("kept", Value::Bool(kept)),
            ("reason", reason),
            ("expires_at", expires_at),
            ("deposit", Value::int(deposit)),
        ],
    )
}

/// `DeadLetterRemoved {timer_id, actor, reason, refund}`: a dead letter
/// left its queue — `"retried"`, `"dropped"` or `"expired"` — and its
/// deposit went back to its fee payer.
pub fn dead_letter_removed(actor: &Address, timer_id: &Hash, reason: &str, refund: u128) -> Event {
    dict(
        *actor,
        "DeadLetterRemoved",
        vec![
            ("timer_id", id(timer_id)),
            ("actor", addr(actor)),
            ("reason", Value::str(reason)),
            ("refund", Value::int(refund)),
        ],
    )
}
