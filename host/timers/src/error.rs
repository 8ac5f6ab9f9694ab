//! Timer rule violations. Each variant names the CIP-5 rule it enforces; a
//! violation inside an actor reverts the calling execution with this message.

use timerhost_types::{Address, Hash};

/// A timer rule was violated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimerError {
    /// §4.2 future height only / §5.3 same-block prohibition.
    #[error("{call}: height {height} is not in the future (current height {current}); timers fire at a later block only")]
    HeightNotInFuture {
        /// The host call refused (`schedule_timer` or `timer_quote`).
        call: &'static str,
        /// Requested height.
        height: u64,
        /// Current height.
        current: u64,
    },
    /// §4.2 payload size.
    #[error("{call}: payload is {size} bytes, the maximum is {max}")]
    PayloadTooLarge {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
        /// Payload size.
        size: usize,
        /// Limit.
        max: usize,
    },
    /// §4.2 custom handler convention: the named handler is not one the VM
    /// could invoke (the one rule, `timerhost_types::check_handler_name`).
    #[error("{call}: handler {name:?} cannot be a timer handler: {reason}")]
    InvalidHandler {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
        /// The name (its first 64 characters).
        name: String,
        /// Which part of the rule it breaks.
        reason: String,
    },
    /// §4.2 fee_payer: the zero address.
    #[error("{call}: fee_payer is the zero (burn) address")]
    FeePayerZero {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
    },
    /// §4.2 fee_payer: the reserved system band.
    #[error("{call}: fee_payer {fee_payer} is in the reserved system-actor band 0x..01-0x..0f")]
    FeePayerSystemReserved {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
        /// The address.
        fee_payer: Address,
    },
    /// §4.2 fee_payer: neither the actor nor the transaction sender.
    #[error("{call}: fee_payer {fee_payer} must be the actor itself ({actor}) or the transaction sender ({tx_sender})")]
    FeePayerNotAllowed {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
        /// The address.
        fee_payer: Address,
        /// The scheduling actor.
        actor: Address,
        /// The transaction sender.
        tx_sender: Address,
    },
    /// The signer named as fee payer by an actor the transaction did not
    /// target: only the transaction's own target may bill its signer.
    #[error("{call}: fee_payer {fee_payer} is the transaction's signer, but {actor} was reached through pvm_host.call, not targeted by the transaction; an actor called by another actor may name only itself as fee payer")]
    FeePayerNotConsenting {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
        /// The signer.
        fee_payer: Address,
        /// The nested actor that tried to bill it.
        actor: Address,
    },
    /// The fee payer cannot lend the timer's state-memory deposit.
    #[error("{call}: fee_payer {fee_payer} cannot cover the timer's deposit of {deposit} ({bytes} bytes × deposit_per_byte {per_byte}); its balance is {available}")]
    DepositUnfunded {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
        /// The payer.
        fee_payer: Address,
        /// The deposit.
        deposit: u128,
        /// State bytes of the timer.
        bytes: u64,
        /// `TimerConfig.deposit_per_byte`.
        per_byte: u128,
        /// The payer's balance.
        available: u128,
    },
    /// An `escrow=` timer whose escrow cannot lend its deposit.
    #[error("{call}: the escrow at storage key {key:?} holds {available}, less than the timer's deposit of {deposit}; put at least that int there before scheduling")]
    EscrowUnfunded {
        /// Which call.
        call: &'static str,
        /// The escrow's storage key.
        key: String,
        /// The deposit.
        deposit: u128,
        /// What the escrow holds (0 if it is not an int).
        available: u128,
    },
    /// Governance paused or shut timers down.
    #[error("{call}: timers are {status} by governance; no timer can be scheduled until governance resumes them (ResumeTimers)")]
    TimersSuspended {
        /// Which call.
        call: &'static str,
        /// `paused`, `shutting_down` or `shutdown`.
        status: &'static str,
    },
    /// §4.2 gas_limit_per_fire ≤ max_cycles_per_fire.
    #[error("{call}: gas_limit {gas_limit} exceeds max_cycles_per_fire {max}")]
    GasLimitTooHigh {
        /// The host call refused (`schedule_timer` or `timer_quote`).
        call: &'static str,
        /// Requested.
        gas_limit: u64,
        /// Limit.
        max: u64,
    },
    /// A fire with no cycles could not run anything.
    #[error("{call}: gas_limit must be at least 1")]
    GasLimitZero {
        /// The host call refused (`schedule_timer` or `timer_quote`).
        call: &'static str,
    },
    /// §4.2 expires_at ≤ current_height + max_ttl_blocks.
    #[error("{call}: expires_at {expires_at} is beyond current height {current} + max_ttl_blocks {max_ttl}")]
    ExpiresTooLate {
        /// Which call.
        call: &'static str,
        /// Requested.
        expires_at: u64,
        /// Current height.
        current: u64,
        /// TTL cap.
        max_ttl: u64,
    },
    /// A timer that expires before it fires would only ever be garbage.
    #[error("{call}: expires_at {expires_at} is before the firing height {height}; the timer could never fire")]
    ExpiresBeforeFire {
        /// Which call.
        call: &'static str,
        /// Requested expiry (after clamping, for extend).
        expires_at: u64,
        /// Firing height.
        height: u64,
    },
    /// §5.4 extend: the new TTL must be after the current height.
    #[error("{call}: new expires_at {expires_at} is not after the current height {current}")]
    ExpiryNotInFuture {
        /// Which call.
        call: &'static str,
        /// Requested.
        expires_at: u64,
        /// Current height.
        current: u64,
    },
    /// §4.2 per-actor cap.
    #[error("{call}: actor {actor} already holds {live} live timers, the maximum is {max}")]
    TooManyTimers {
        /// The host call refused (`schedule_timer`, `schedule_timer_at` or `watch`).
        call: &'static str,
        /// The actor.
        actor: Address,
        /// Live timers.
        live: u32,
        /// Cap.
        max: u32,
    },
    /// `schedule_timer_at`: the time must be after the current block's.
    #[error("{call}: timestamp_ms {timestamp_ms} is not after the current block's timestamp {current_ms} (unix ms); time timers fire in a later block only")]
    TimeNotInFuture {
        /// The host call refused (`schedule_timer_at` or `timer_quote`).
        call: &'static str,
        /// Requested time.
        timestamp_ms: u64,
        /// The current block's timestamp.
        current_ms: u64,
    },
    /// #18: a bid above `TimerConfig.max_bid`.
    #[error("{call}: bid {bid} per cycle exceeds max_bid {max}")]
    BidTooHigh {
        /// Which call.
        call: &'static str,
        /// Requested.
        bid: u64,
        /// Limit.
        max: u64,
    },
    /// #31, CIP-1 v3 `TimerRejectedBelowBasefee`: under market ordering, a
    /// fee cap below the current lane basefee could not fire now.
    #[error("{call}: max_fee_per_cycle {max_fee} is below the lane basefee {lane_basefee} (raise it to at least {lane_basefee}; timer_quote()['suggested_fees'] has caps that fire)")]
    BelowLaneBasefee {
        /// Which call.
        call: &'static str,
        /// The cap given (or defaulted).
        max_fee: u64,
        /// The current block's lane basefee.
        lane_basefee: u64,
    },
    /// #31: a fee cap above [`MAX_FEE_PER_CYCLE`](timerhost_types::lane::MAX_FEE_PER_CYCLE).
    #[error("{call}: max_fee_per_cycle {max_fee} exceeds the largest fee cap {max}")]
    FeeCapTooHigh {
        /// Which call.
        call: &'static str,
        /// Requested.
        max_fee: u64,
        /// Limit.
        max: u64,
    },
    /// Arguments that contradict each other.
    #[error("{call}: {reason}")]
    InvalidArguments {
        /// Which call.
        call: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// `watch`: the keys are not a valid watch list.
    #[error("watch: {reason}")]
    InvalidWatch {
        /// What is wrong, naming the key.
        reason: String,
    },
    /// `watch`: the watched actor does not exist.
    #[error("watch: no actor at {actor}; only an existing actor's storage can be watched")]
    NoWatchedActor {
        /// The address given.
        actor: Address,
    },
    /// §4.2 cancel/extend authorization.
    #[error("{call}: unauthorized: timer {timer_id} belongs to {owner}, not to {caller}")]
    Unauthorized {
        /// Which call.
        call: &'static str,
        /// The timer.
        timer_id: Hash,
        /// Its owner.
        owner: Address,
        /// The caller.
        caller: Address,
    },
    /// No live timer with this id.
    #[error("{call}: no timer {timer_id}")]
    NotFound {
        /// Which call.
        call: &'static str,
        /// The timer.
        timer_id: Hash,
    },
    /// A booking that cannot be made (#45): what is full, out of the
    /// horizon, or unpayable.
    #[error("{call}: cannot book: {reason}")]
    BookingRefused {
        /// Which call.
        call: &'static str,
        /// Why, with the numbers.
        reason: String,
    },
    /// No dead letter with this id in the calling actor's queue (#45).
    #[error("{call}: no dead letter {timer_id} in this actor's dead-letter queue (an actor reaches only its own)")]
    NoDeadLetter {
        /// Which call.
        call: &'static str,
        /// The timer.
        timer_id: Hash,
    },
    /// The timer is due and queued in the Globalbox: its TTL is judged when
    /// it is materialised, and can no longer move.
    #[error("{call}: timer {timer_id} is already due and queued in the Globalbox; it fires (or expires) when its turn comes")]
    AlreadyDue {
        /// Which call.
        call: &'static str,
        /// The timer.
        timer_id: Hash,
    },
    /// The timer was already classified for removal (expired, unfunded or revoked).
    #[error(
        "{call}: timer {timer_id} has already expired, run out of funds or lost its payer and is awaiting removal"
    )]
    AlreadyFinal {
        /// Which call.
        call: &'static str,
        /// The timer.
        timer_id: Hash,
    },
}

impl TimerError {
    /// The same violation reported for host call `call` (validation shared
    /// by `schedule_timer`, `schedule_timer_at` and `watch` builds it for
    /// `schedule_timer`).
    pub fn in_call(mut self, name: &'static str) -> TimerError {
        use TimerError::*;
        match &mut self {
            HeightNotInFuture { call, .. }
            | PayloadTooLarge { call, .. }
            | InvalidHandler { call, .. }
            | FeePayerZero { call }
            | FeePayerSystemReserved { call, .. }
            | FeePayerNotAllowed { call, .. }
            | FeePayerNotConsenting { call, .. }
            | DepositUnfunded { call, .. }
            | EscrowUnfunded { call, .. }
            | TimersSuspended { call, .. }
            | GasLimitTooHigh { call, .. }
            | GasLimitZero { call }
            | ExpiresTooLate { call, .. }
            | ExpiresBeforeFire { call, .. }
            | ExpiryNotInFuture { call, .. }
            | TooManyTimers { call, .. }
            | TimeNotInFuture { call, .. }
            | InvalidArguments { call, .. }
            | BidTooHigh { call, .. }
            | BelowLaneBasefee { call, .. }
            | FeeCapTooHigh { call, .. }
            | Unauthorized { call, .. }
            | NotFound { call, .. }
            | NoDeadLetter { call, .. }
            | BookingRefused { call, .. }
            | AlreadyFinal { call, .. }
            | AlreadyDue { call, .. } => *call = name,
            InvalidWatch { .. } | NoWatchedActor { .. } => {}
        }
        self
    }
}

/// Result alias: the outer error is storage failure (the node's problem), the
/// inner [`TimerError`] is a rule violation (the caller's problem).
pub type Result<T> = std::result::Result<T, timerhost_state::StorageError>;
