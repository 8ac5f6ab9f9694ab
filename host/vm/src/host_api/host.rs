//! The boundary between the actor VM and the chain: the [`Host`] trait.
//!
//! The chain implements [`Host`] over its state overlay; the VM never touches
//! state directly. Following cosmwasm-vm, every metered host call returns its
//! result *and* its [`Cost`] in one [`HostCall`], so the VM cannot forget to
//! charge: it charges the cost before the result reaches Python, whether the
//! call succeeded or was rejected. The costs themselves are the host's choice;
//! the reference numbers are in [`crate::rules::costs`] and `docs/METERING.md`.
//!
//! A rejected call ([`HostFailure`]) becomes a catchable Python `HostError`
//! in the actor. Running out of cycles or cells is never a host failure: the
//! VM decides that from the returned cost.

use timerhost_types::{Address, ErrorKind, Hash, TimerQuote, TimerRequest};

/// Resources a host call consumed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Computation, in cycles.
    pub cycles: u64,
    /// Bytes made durable or emitted, in cells.
    pub cells: u64,
}

impl Cost {
    /// A cost of `cycles` cycles and no cells.
    pub const fn cycles(cycles: u64) -> Cost {
        Cost { cycles, cells: 0 }
    }

    /// A cost of `cycles` cycles and `cells` cells.
    pub const fn new(cycles: u64, cells: u64) -> Cost {
        Cost { cycles, cells }
    }
}

/// Why the host rejected a call; surfaces in the actor as `pvm_host.HostError`
/// with `kind` set to [`ErrorKind::as_str`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostFailure {
    /// The kind of rejection (e.g. `InvalidInput` for a timer in the past).
    pub kind: ErrorKind,
    /// Human-readable reason.
    pub message: String,
}

impl HostFailure {
    /// A rejection of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> HostFailure {
        HostFailure {
            kind,
            message: message.into(),
        }
    }
}

/// The result of a metered host call together with what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a host call's cost must be charged"]
pub struct HostCall<T> {
    /// What the call returned, or why it was rejected.
    pub result: Result<T, HostFailure>,
    /// What the call cost (charged even when `result` is an error).
    pub cost: Cost,
}

impl<T> HostCall<T> {
    /// A successful call.
    pub fn ok(value: T, cost: Cost) -> HostCall<T> {
        HostCall {
            result: Ok(value),
            cost,
        }
    }

    /// A rejected call.
    pub fn rejected(failure: HostFailure, cost: Cost) -> HostCall<T> {
        HostCall {
            result: Err(failure),
            cost,
        }
    }
}

/// What the chain knows about a deployed actor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActorRecord {
    /// keccak256 of the actor's source (the VM's code-cache key).
    pub code_hash: Hash,
    /// Who deployed it (`self.deployer`).
    pub deployer: Address,
}

/// The block an execution runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockInfo {
    /// Block height.
    pub height: u64,
    /// Block timestamp (unix ms, set by the producer);
    /// `pvm_host.block_timestamp()` returns it in whole seconds.
    pub timestamp_ms: u64,
}

/// Identifies a state checkpoint taken with [`Host::checkpoint`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CheckpointId(pub u64);

/// Everything an executing actor can reach outside its interpreter.
///
/// Storage calls address one actor's key space (`actor`); the host maps it to
/// the consensus key layout (`timerhost_types::keys::storage`). Keys are the
/// UTF-8 bytes of the actor's `str` keys; values are canonical
/// [`Value`](timerhost_types::Value) encodings, which the VM produces and checks.
///
/// Checkpoints nest: the VM takes one before a nested `pvm_host.call` and
/// either commits it (the callee succeeded) or reverts to it (the callee
/// failed), so everything the callee did — storage, transfers, timer side
/// effects — disappears with it. The outermost execution is wrapped the same
/// way, so a failed execution leaves the host as it found it, except for the
/// cost, which the chain charges from the [`Outcome`](crate::Outcome).
pub trait Host {
    /// The block being executed. Free: it is fixed for the whole block.
    fn block(&self) -> BlockInfo;
    /// The signer of the transaction (for a timer fire, the timer's actor).
    fn tx_sender(&self) -> Address;
    /// What the transaction sent to the actor it calls (already credited):
    /// `pvm_host.value()` of the outermost frame. 0 for a fire.
    fn call_value(&self) -> u128;

    /// The record of a deployed actor, if `actor` has code.
    fn actor_record(&mut self, actor: &Address) -> HostCall<Option<ActorRecord>>;
    /// The source of code with this hash. Unmetered, because whether the VM
    /// asks depends on its cache, and costs must not; [`Host::actor_record`]
    /// carries the charge for locating code.
    fn load_code(&mut self, code_hash: &Hash) -> Option<String>;

    /// Reads one storage slot of `actor`.
    fn storage_get(&mut self, actor: &Address, key: &[u8]) -> HostCall<Option<Vec<u8>>>;
    /// Writes one storage slot of `actor`.
    fn storage_set(&mut self, actor: &Address, key: &[u8], value: &[u8]) -> HostCall<()>;
    /// Deletes one storage slot of `actor` (a no-op if absent).
    fn storage_delete(&mut self, actor: &Address, key: &[u8]) -> HostCall<()>;
    /// The smallest key of `actor` that starts with `prefix` and is strictly
    /// greater than `after` (if given): one step of an ordered key scan, so
    /// iteration is charged per key and never materialises the key space.
    fn storage_next_key(
        &mut self,
        actor: &Address,
        prefix: &[u8],
        after: Option<&[u8]>,
    ) -> HostCall<Option<Vec<u8>>>;

    /// Balance of any account.
    fn balance(&mut self, account: &Address) -> HostCall<u128>;
    /// Moves `amount` from `from` (the executing actor) to `to`.
    fn transfer(&mut self, from: &Address, to: &Address, amount: u128) -> HostCall<()>;
    /// Prices (and may reject) an event. The VM keeps the event list itself and
    /// returns it in the outcome, so the host must not store events here.
    fn emit(&mut self, emitter: &Address, name: &str, encoded_data: &[u8]) -> HostCall<()>;

    /// Opens a nested checkpoint of all state the host manages.
    fn checkpoint(&mut self) -> CheckpointId;
    /// Keeps everything done since `checkpoint` (merging it into the parent).
    fn commit(&mut self, checkpoint: CheckpointId);
    /// Discards everything done since `checkpoint`.
    fn revert(&mut self, checkpoint: CheckpointId);

    /// CIP-5 `schedule_timer` / `schedule_timer_ex`, `schedule_timer_at`
    /// and `watch` for `actor` (the request's trigger says which); returns
    /// the 32-byte timer id. Validation (§4.2) is the host's. `nested`: `actor`
    /// was reached through `pvm_host.call`, not targeted by the transaction
    /// or fire itself (it may then name only itself as fee payer).
    fn schedule_timer(
        &mut self,
        actor: &Address,
        nested: bool,
        request: TimerRequest,
    ) -> HostCall<Hash>;
    /// CIP-5 `extend_timer` by `actor`.
    fn extend_timer(
        &mut self,
        actor: &Address,
        timer_id: &Hash,
        new_expires_at: u64,
    ) -> HostCall<()>;
    /// CIP-5 `cancel_timer` by `actor`.
    fn cancel_timer(&mut self, actor: &Address, timer_id: &Hash) -> HostCall<()>;
    /// `revoke_timer_payments()` by `actor`: every timer scheduled so far
    /// that names `actor` as fee payer is revoked.
    fn revoke_timer_payments(&mut self, actor: &Address) -> HostCall<()>;
    /// `timer_quote(height=None, timestamp_ms=None, gas_limit=None)`: what
    /// a timer at a height (default: the next block) or a time would cost
    /// and whether it would fire there without carry-over. Reads only;
    /// refused like scheduling for a height or time not in the future or a
    /// gas limit out of range.
    fn timer_quote(&mut self, request: timerhost_types::QuoteRequest) -> HostCall<TimerQuote>;
    /// `dead_letters()` (#45), first half: the bytes listing `actor`'s
    /// dead-letter queue reads, known before it is read so the VM prices it
    /// first.
    fn dead_letters_size(&mut self, actor: &Address) -> HostCall<u64>;
    /// `dead_letters()`, second half: `actor`'s entries as dicts
    /// (`timer_id`, `payload`, `error`, `traceback`, `attempts`, …).
    fn dead_letters(&mut self, actor: &Address) -> HostCall<Vec<timerhost_types::Value>>;
    /// `retry_dead_letter(timer_id, due=None)` by `actor`: schedules its
    /// entry again (its fee payer's consent as at scheduling: `nested` as
    /// for [`Host::schedule_timer`]); returns the new timer id.
    fn retry_dead_letter(
        &mut self,
        actor: &Address,
        nested: bool,
        timer_id: &Hash,
        due: Option<u64>,
    ) -> HostCall<Hash>;
    /// `drop_dead_letter(timer_id)` by `actor`: removes its entry, refunding
    /// the deposit.
    fn drop_dead_letter(&mut self, actor: &Address, timer_id: &Hash) -> HostCall<()>;
    /// `release_escrow(to)` in the handler of a fire funded by an escrow
    /// (the VM checked that): once the fire's cost is settled against the
    /// escrow, what is left in it is paid to `to` and the key deleted. The
    /// request dies with the fire if the fire fails.
    fn release_escrow(&mut self, to: &Address) -> HostCall<()>;
}
