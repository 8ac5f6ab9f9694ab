//! The two extension points of block execution, and the block and
//! transaction facts ([`BlockEnv`], [`TxEnv`]) both of them see.
//!
//! - [`ActorRuntime`]: runs actor code (`DeployActor`, `CallActor`, deferred
//!   calls). The Python VM implements it; [`crate::testing::MockRuntime`] is a
//!   deterministic stand-in for tests. A runtime reports an actor's failure as
//!   an [`ExecOutcome`], never as a Rust error: the chain then discards the
//!   execution's writes and still charges for the resources used.
//! - [`BlockHooks`]: protocol work at end of block (timer delivery plugs in
//!   here). A hook may read and write state, emit events, and return
//!   [`DeferredTx`]s that the chain executes right after, in order.

use timerhost_state::Overlay;
use timerhost_types::{
    Address, BasefeeConfig, Event, ExecError, Hash, Invocation, Receipt, TimerConfig, Value,
};

use crate::error::Result;

/// The block-level facts every execution can see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockEnv {
    /// Chain id.
    pub chain_id: u64,
    /// Height of the block being executed.
    pub height: u64,
    /// Its timestamp (unix ms).
    pub timestamp_ms: u64,
    /// Its proposer (receives tips).
    pub proposer: Address,
    /// The parent block's state root (a fire's `deliver_id` hashes it).
    pub parent_state_root: Hash,
}

/// Context of one transaction (user or deferred) as an actor sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxEnv {
    /// The block being executed.
    pub block: BlockEnv,
    /// `tx_sender`: the signer of a user transaction, or the actor itself for a timer fire.
    pub sender: Address,
    /// Hash of the transaction (or of the deferred transaction).
    pub tx_hash: Hash,
    /// Timer config in force for this block (read once at its start).
    pub timer_config: TimerConfig,
}

impl TxEnv {
    /// The caller identity timer host calls need; `nested`: `actor` was
    /// reached through `pvm_host.call`, not targeted by the transaction.
    pub fn timer_caller(&self, actor: Address, nested: bool) -> timerhost_timers::HostCaller {
        timerhost_timers::HostCaller {
            actor,
            tx_sender: self.sender,
            height: self.block.height,
            timestamp_ms: self.block.timestamp_ms,
            nested,
        }
    }
}

/// What a runtime gets for one execution.
pub struct ExecContext<'s, 'a> {
    /// Block state; the chain reverts it if the outcome is a failure.
    pub state: &'s mut Overlay<'a>,
    /// Who, when, what.
    pub env: TxEnv,
    /// Cycles available to the runtime (the transaction limit minus what the chain already charged).
    pub cycles_limit: u64,
    /// Cells available to the runtime.
    pub cells_limit: u64,
    /// Who invokes the handler: a transaction, or a timer fire (which may
    /// reach timer handlers and whose payload is already paid for).
    pub invocation: Invocation,
    /// What the transaction sent to the actor (already credited to it):
    /// `pvm_host.value()`.
    pub value: u128,
    /// Set by the handler of an escrow-funded fire through
    /// `pvm_host.release_escrow(to)`: once the fire is settled, what is
    /// left in its escrow goes to this address.
    pub escrow_release: Option<Address>,
}

/// The result of running actor code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecOutcome {
    /// Return value on success, the actor's error on failure.
    pub result: std::result::Result<Option<Value>, ExecError>,
    /// Cycles used (≤ the limit given).
    pub cycles_used: u64,
    /// Cells used (≤ the limit given).
    pub cells_used: u64,
    /// Events emitted (dropped by the chain on failure).
    pub events: Vec<Event>,
}

impl ExecOutcome {
    /// A failure that used nothing.
    pub fn failed(error: ExecError) -> Self {
        Self {
            result: Err(error),
            cycles_used: 0,
            cells_used: 0,
            events: Vec::new(),
        }
    }
}

/// Runs actor code.
pub trait ActorRuntime: Send + Sync {
    /// Runs a freshly created actor's `deploy(*args)`. The chain has already
    /// created the actor account and stored `code`.
    fn deploy(
        &self,
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        code: &str,
        args: &[Value],
    ) -> Result<ExecOutcome>;

    /// Runs `handler(*args)` of an existing actor.
    fn call(
        &self,
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        handler: &str,
        args: &[Value],
    ) -> Result<ExecOutcome>;
}

/// A runtime for chains that run no actors: every actor transaction fails
/// with a clear outcome (and pays its intrinsic cost).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoActorRuntime;

impl ActorRuntime for NoActorRuntime {
    fn deploy(
        &self,
        _ctx: &mut ExecContext<'_, '_>,
        _actor: Address,
        _code: &str,
        _args: &[Value],
    ) -> Result<ExecOutcome> {
        Ok(ExecOutcome::failed(ExecError::invalid(
            "this chain was started without an actor runtime",
        )))
    }

    fn call(
        &self,
        _ctx: &mut ExecContext<'_, '_>,
        _actor: Address,
        _handler: &str,
        _args: &[Value],
    ) -> Result<ExecOutcome> {
        Ok(ExecOutcome::failed(ExecError::invalid(
            "this chain was started without an actor runtime",
        )))
    }
}

/// A transaction created at end of block (CIP-5 §5.2), already pre-charged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeferredTx {
    /// Parent transaction hash (zero: none).
    pub origin_tx_hash: Hash,
    /// Execution identity (`tx_sender` inside the handler).
    pub sender: Address,
    /// Who pre-paid and receives the refund.
    pub fee_payer: Address,
    /// The actor to call.
    pub actor: Address,
    /// Handler name.
    pub handler: String,
    /// Arguments.
    pub args: Vec<Value>,
    /// Cycles limit of the handler.
    pub cycles_limit: u64,
    /// Cycles charged on top of the handler's use (a timer fire's
    /// `TIMER_FIRE_BASE_CYCLES`); pre-paid with the limits.
    pub base_cycles: u64,
    /// Cells limit.
    pub cells_limit: u64,
    /// Who invokes the handler (a timer fire, or a hook's transaction).
    pub invocation: Invocation,
    /// Cycle basefee used for the pre-charge.
    pub cycle_basefee: u128,
    /// Cell basefee used for the pre-charge.
    pub cell_basefee: u128,
    /// What a handler cycle pays beside the cycle basefee (a timer's
    /// priority fee and lane basefee, pre-paid at its fee cap; all 0 for
    /// hooks); the base cycles pay none of it.
    pub lane: crate::fees::FireLanePrice,
    /// Amount already debited from `fee_payer` (must equal the limits, base
    /// cycles included, × basefees, plus `cycles_limit × lane.fee_cap`).
    pub prepaid: u128,
    /// Identifies the work (e.g. the timer id) for the receipt hash and hooks.
    pub tag: Vec<u8>,
    /// For a timer fire, which delivery it is (its receipt carries it).
    pub delivery: Option<timerhost_types::Delivery>,
    /// The firing timer's escrow (#19): its settled cost is subtracted from
    /// that integer of the actor's storage.
    pub escrow_key: Option<Vec<u8>>,
}

/// What an end-of-block hook can touch.
pub struct EobContext<'s, 'a> {
    /// Block state.
    pub state: &'s mut Overlay<'a>,
    /// The block.
    pub env: BlockEnv,
    /// Basefees read at the start of the block.
    pub basefee: BasefeeConfig,
    /// Events emitted by the hook; stored in the block's end-of-block receipt.
    pub events: Vec<Event>,
    /// Cycles of protocol work done by the hook (counted in block usage).
    pub cycles_used: u64,
}

/// Protocol work at end of block.
pub trait BlockHooks: Send + Sync {
    /// Runs after the user transactions; returns deferred transactions to execute in order.
    fn end_of_block(&self, ctx: &mut EobContext<'_, '_>) -> Result<Vec<DeferredTx>>;

    /// Called after each deferred transaction with its receipt (refunds are already done).
    fn after_deferred(
        &self,
        _ctx: &mut EobContext<'_, '_>,
        _tx: &DeferredTx,
        _receipt: &Receipt,
    ) -> Result<()> {
        Ok(())
    }
}

/// No end-of-block work.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl BlockHooks for NoHooks {
    fn end_of_block(&self, _ctx: &mut EobContext<'_, '_>) -> Result<Vec<DeferredTx>> {
        Ok(Vec::new())
    }
}
