//! The Python actor VM as the chain's [`ActorRuntime`].
//!
//! [`ChainHost`] implements the VM's [`Host`] over the block overlay: actor
//! storage maps to `keys::storage`, balances to accounts, the four CIP-5
//! calls to `timerhost_timers::host` (so every §4.2 rule is enforced in the
//! timers crate), and VM checkpoints to overlay checkpoints, so a failed
//! nested call discards exactly its own writes, transfers and timer effects.
//!
//! Timer host calls produce protocol events (`TimerScheduled`,
//! `TimerCancelled`, `timer.extended`) that the VM does not know about; the
//! host keeps them on the same checkpoint stack (a reverted callee drops its
//! own) and the runtime appends them after the actor's events in the receipt.
//!
//! Binaries that use this runtime must install the VM's allocator:
//! `#[global_allocator] static A: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;`

use timerhost_state::accounts::{self, Debit};
use timerhost_state::{Checkpoint, StateRead, StateReadExt};
use timerhost_timers::host as timer_host;
use timerhost_timers::TimerError;
use timerhost_types::keys::{self, ActorMeta};
use timerhost_types::timer::{
    CANCEL_TIMER_CYCLES, EXTEND_TIMER_CYCLES, REVOKE_TIMER_PAYMENTS_CYCLES, SET_TIMER_BASE_CYCLES,
    TIMER_QUOTE_CYCLES,
};
use timerhost_types::{Address, ErrorKind, Event, Hash, TimerQuote, TimerRequest, Value};
use timerhost_vm::costs::{self, cells};
use timerhost_vm::{
    ActorRecord, BlockInfo, CheckpointId, Cost, ExecLimits, Host, HostCall, HostFailure, Outcome,
    Vm,
};

use crate::error::{ChainError, Result};
use crate::runtime::{ActorRuntime, ExecContext, ExecOutcome};

/// The chain's [`Host`] for one execution.
pub struct ChainHost<'c, 's, 'a> {
    ctx: &'c mut ExecContext<'s, 'a>,
    /// Overlay checkpoints by VM checkpoint id, with the protocol-event count at that point.
    checkpoints: Vec<(Checkpoint, usize)>,
    /// Protocol events from timer host calls.
    events: Vec<Event>,
    /// The first storage failure, if any: the node's problem, surfaced after the VM returns.
    storage_error: Option<timerhost_state::StorageError>,
}

impl<'c, 's, 'a> ChainHost<'c, 's, 'a> {
    /// A host over an execution context.
    pub fn new(ctx: &'c mut ExecContext<'s, 'a>) -> Self {
        Self {
            ctx,
            checkpoints: Vec::new(),
            events: Vec::new(),
            storage_error: None,
        }
    }

    /// Records a storage failure and returns a rejection the actor cannot
    /// meaningfully handle; the chain aborts the block when it sees it.
    fn fail<T>(&mut self, e: timerhost_state::StorageError, cost: Cost) -> HostCall<T> {
        let message = e.to_string();
        self.storage_error.get_or_insert(e);
        HostCall::rejected(
            HostFailure::new(
                ErrorKind::InvalidInput,
                format!("node storage failure: {message}"),
            ),
            cost,
        )
    }

    fn timer_rejection<T>(e: &TimerError, cost: Cost) -> HostCall<T> {
        // Same kinds as everywhere else a timer rule is violated.
        let error = crate::executor::timer_error(e);
        HostCall::rejected(HostFailure::new(error.kind, error.message), cost)
    }

    fn caller(&self, actor: &Address, nested: bool) -> timerhost_timers::HostCaller {
        self.ctx.env.timer_caller(*actor, nested)
    }
}

impl Host for ChainHost<'_, '_, '_> {
    fn block(&self) -> BlockInfo {
        BlockInfo {
            height: self.ctx.env.block.height,
            timestamp_ms: self.ctx.env.block.timestamp_ms,
        }
    }

    fn tx_sender(&self) -> Address {
        self.ctx.env.sender
    }

    fn call_value(&self) -> u128 {
        self.ctx.value
    }

    fn release_escrow(&mut self, to: &Address) -> HostCall<()> {
        let cost = Cost::cycles(costs::host::CONTEXT_READ);
        if let Some(refusal) = to.payment_refusal() {
            return HostCall::rejected(
                HostFailure::new(
                    ErrorKind::InvalidInput,
                    format!("release_escrow to {to}: {refusal}"),
                ),
                cost,
            );
        }
        self.ctx.escrow_release = Some(*to);
        HostCall::ok((), cost)
    }

    fn actor_record(&mut self, actor: &Address) -> HostCall<Option<ActorRecord>> {
        let cost = Cost::cycles(costs::host::ACTOR_LOOKUP);
        match self.ctx.state.get_decoded::<ActorMeta>(&keys::code(actor)) {
            Ok(meta) => HostCall::ok(
                meta.map(|m| ActorRecord {
                    code_hash: m.code_hash,
                    deployer: m.deployer,
                }),
                cost,
            ),
            Err(e) => self.fail(e, cost),
        }
    }

    fn load_code(&mut self, code_hash: &Hash) -> Option<String> {
        match self.ctx.state.get(&keys::code_source(code_hash)) {
            Ok(bytes) => bytes.and_then(|b| String::from_utf8(b).ok()),
            Err(e) => {
                self.storage_error.get_or_insert(e);
                None
            }
        }
    }

    fn storage_get(&mut self, actor: &Address, key: &[u8]) -> HostCall<Option<Vec<u8>>> {
        let cost = Cost::cycles(costs::host::STORAGE_READ);
        match self.ctx.state.get(&keys::storage(actor, key)) {
            Ok(v) => HostCall::ok(v, cost),
            Err(e) => self.fail(e, cost),
        }
    }

    fn storage_set(&mut self, actor: &Address, key: &[u8], value: &[u8]) -> HostCall<()> {
        let cost = Cost::new(
            costs::host::STORAGE_WRITE,
            cells::STORAGE_WRITE_OVERHEAD + key.len() as u64 + value.len() as u64,
        );
        self.ctx
            .state
            .put(keys::storage(actor, key), value.to_vec());
        HostCall::ok((), cost)
    }

    fn storage_delete(&mut self, actor: &Address, key: &[u8]) -> HostCall<()> {
        let cost = Cost::cycles(costs::host::STORAGE_WRITE);
        let k = keys::storage(actor, key);
        match self.ctx.state.get(&k) {
            Ok(Some(_)) => {
                self.ctx.state.delete(k);
                HostCall::ok((), cost)
            }
            Ok(None) => HostCall::ok((), cost),
            Err(e) => self.fail(e, cost),
        }
    }

    fn storage_next_key(
        &mut self,
        actor: &Address,
        prefix: &[u8],
        after: Option<&[u8]>,
    ) -> HostCall<Option<Vec<u8>>> {
        // One scan step, plus one per key deleted earlier in the block that
        // the walk steps over (#29: they stay in the block's overlay as
        // tombstones until it commits). The walk gives up past what the
        // execution could pay for, so its work is bounded before the charge.
        let step = costs::host::STORAGE_NEXT_KEY;
        let base = keys::storage_prefix(actor);
        let (start, end) = keys::storage_scan_range(actor, prefix, after);
        let max_skipped = self.ctx.cycles_limit / step;
        match self.ctx.state.next_key(&start, &end, max_skipped) {
            Ok(next) => {
                let cost = Cost::cycles(step.saturating_mul(next.skipped.saturating_add(1)));
                HostCall::ok(next.key.map(|k| k[base.len()..].to_vec()), cost)
            }
            Err(e) => self.fail(e, Cost::cycles(step)),
        }
    }

    fn balance(&mut self, account: &Address) -> HostCall<u128> {
        let cost = Cost::cycles(costs::host::BALANCE);
        match accounts::load(self.ctx.state, account) {
            Ok(a) => HostCall::ok(a.balance, cost),
            Err(e) => self.fail(e, cost),
        }
    }

    fn transfer(&mut self, from: &Address, to: &Address, amount: u128) -> HostCall<()> {
        let cost = Cost::cycles(costs::host::TRANSFER);
        // Value sent along a call to a system actor is for its handler (the
        // cron registry's schedule and topUp); a plain payment to one is
        // refused by `pvm_host.transfer` itself. No value may burn.
        if to.is_zero() {
            let refusal = to.payment_refusal().unwrap_or_default();
            return HostCall::rejected(
                HostFailure::new(
                    ErrorKind::InvalidInput,
                    format!("transfer to {to}: {refusal}"),
                ),
                cost,
            );
        }
        match accounts::transfer(self.ctx.state, from, to, amount) {
            Ok(Debit::Done) => HostCall::ok((), cost),
            Ok(Debit::Insufficient { available }) => HostCall::rejected(
                HostFailure::new(
                    ErrorKind::InsufficientFunds,
                    format!("{from} has {available}, cannot transfer {amount}"),
                ),
                cost,
            ),
            Err(e) => self.fail(e, cost),
        }
    }

    fn emit(&mut self, _emitter: &Address, name: &str, encoded_data: &[u8]) -> HostCall<()> {
        HostCall::ok(
            (),
            Cost::new(
                costs::host::EMIT,
                cells::EVENT_OVERHEAD + name.len() as u64 + encoded_data.len() as u64,
            ),
        )
    }

    fn checkpoint(&mut self) -> CheckpointId {
        self.checkpoints
            .push((self.ctx.state.checkpoint(), self.events.len()));
        CheckpointId(self.checkpoints.len() as u64 - 1)
    }

    fn commit(&mut self, checkpoint: CheckpointId) {
        // Keeping a checkpoint's writes merges them into its parent: forget the marker.
        self.checkpoints.truncate(checkpoint.0 as usize);
    }

    fn revert(&mut self, checkpoint: CheckpointId) {
        if let Some(&(cp, events)) = self.checkpoints.get(checkpoint.0 as usize) {
            self.ctx.state.revert_to(cp);
            self.events.truncate(events);
        }
        self.checkpoints.truncate(checkpoint.0 as usize);
    }

    fn schedule_timer(
        &mut self,
        actor: &Address,
        nested: bool,
        request: TimerRequest,
    ) -> HostCall<Hash> {
        // A refused schedule still paid for its request (the payload came in).
        let refused_cost = Cost::new(SET_TIMER_BASE_CYCLES, request.payload.len() as u64);
        let caller = self.caller(actor, nested);
        match timer_host::schedule(self.ctx.state, &self.ctx.env.timer_config, &caller, request) {
            Ok(Ok(scheduled)) => {
                self.events.push(scheduled.event);
                self.events.extend(scheduled.booked_event);
                // Every byte the timer adds to state, in cells (§6.1 and the
                // deposit rule): payload, record, index entries, accounts.
                HostCall::ok(
                    scheduled.timer.timer_id,
                    Cost::new(SET_TIMER_BASE_CYCLES, scheduled.cells),
                )
            }
            Ok(Err(e)) => Self::timer_rejection(&e, refused_cost),
            Err(e) => self.fail(e, refused_cost),
        }
    }

    fn extend_timer(
        &mut self,
        actor: &Address,
        timer_id: &Hash,
        new_expires_at: u64,
    ) -> HostCall<()> {
        let caller = self.caller(actor, false);
        // The base price, plus the caller's own record's bytes once it is
        // known to be the caller's (#29: decoded, hashed, rewritten).
        let mut record_bytes = 0;
        let result = timer_host::extend(
            self.ctx.state,
            &self.ctx.env.timer_config,
            &caller,
            timer_id,
            new_expires_at,
            &mut record_bytes,
        );
        let cost = Cost::cycles(EXTEND_TIMER_CYCLES + timer_host::record_cycles(record_bytes));
        match result {
            Ok(Ok(event)) => {
                self.events.push(event);
                HostCall::ok((), cost)
            }
            Ok(Err(e)) => Self::timer_rejection(&e, cost),
            Err(e) => self.fail(e, cost),
        }
    }

    fn cancel_timer(&mut self, actor: &Address, timer_id: &Hash) -> HostCall<()> {
        let caller = self.caller(actor, false);
        let mut record_bytes = 0;
        let result = timer_host::cancel(self.ctx.state, &caller, timer_id, &mut record_bytes);
        let cost = Cost::cycles(CANCEL_TIMER_CYCLES + timer_host::record_cycles(record_bytes));
        match result {
            Ok(Ok(event)) => {
                self.events.push(event);
                HostCall::ok((), cost)
            }
            Ok(Err(e)) => Self::timer_rejection(&e, cost),
            Err(e) => self.fail(e, cost),
        }
    }

    fn revoke_timer_payments(&mut self, actor: &Address) -> HostCall<()> {
        let cost = Cost::cycles(REVOKE_TIMER_PAYMENTS_CYCLES);
        match timer_host::revoke_payments(self.ctx.state, actor) {
            Ok(event) => {
                self.events.push(event);
                HostCall::ok((), cost)
            }
            Err(e) => self.fail(e, cost),
        }
    }

    fn dead_letters_size(&mut self, actor: &Address) -> HostCall<u64> {
        let cost = Cost::cycles(TIMER_QUOTE_CYCLES);
        let caller = self.caller(actor, false);
        match timerhost_timers::dead_letter_calls::listing_bytes(self.ctx.state, &caller) {
            Ok(bytes) => HostCall::ok(bytes, cost),
            Err(e) => self.fail(e, cost),
        }
    }

    fn dead_letters(&mut self, actor: &Address) -> HostCall<Vec<Value>> {
        // Its bytes were priced through `dead_letters_size` before this read.
        let caller = self.caller(actor, false);
        match timerhost_timers::dead_letter_calls::list(self.ctx.state, &caller) {
            Ok(entries) => HostCall::ok(
                entries.iter().map(|e| e.to_value()).collect(),
                Cost::default(),
            ),
            Err(e) => self.fail(e, Cost::default()),
        }
    }

    fn retry_dead_letter(
        &mut self,
        actor: &Address,
        nested: bool,
        timer_id: &Hash,
        due: Option<u64>,
    ) -> HostCall<Hash> {
        let refused_cost = Cost::cycles(SET_TIMER_BASE_CYCLES);
        let caller = self.caller(actor, nested);
        match timerhost_timers::dead_letter_calls::retry(
            self.ctx.state,
            &self.ctx.env.timer_config,
            &caller,
            timer_id,
            due,
        ) {
            Ok(Ok((scheduled, removed))) => {
                self.events.push(removed);
                self.events.push(scheduled.event);
                HostCall::ok(
                    scheduled.timer.timer_id,
                    Cost::new(SET_TIMER_BASE_CYCLES, scheduled.cells),
                )
            }
            Ok(Err(e)) => Self::timer_rejection(&e, refused_cost),
            Err(e) => self.fail(e, refused_cost),
        }
    }

    fn drop_dead_letter(&mut self, actor: &Address, timer_id: &Hash) -> HostCall<()> {
        let cost = Cost::cycles(CANCEL_TIMER_CYCLES);
        let caller = self.caller(actor, false);
        match timerhost_timers::dead_letter_calls::drop(self.ctx.state, &caller, timer_id) {
            Ok(Ok(event)) => {
                self.events.push(event);
                HostCall::ok((), cost)
            }
            Ok(Err(e)) => Self::timer_rejection(&e, cost),
            Err(e) => self.fail(e, cost),
        }
    }

    fn timer_quote(&mut self, request: timerhost_types::QuoteRequest) -> HostCall<TimerQuote> {
        let booking = if request.book {
            timerhost_types::timer::BOOKING_QUOTE_CYCLES
        } else {
            0
        };
        let cost = Cost::cycles(TIMER_QUOTE_CYCLES + booking);
        // The basefees in state are this block's: they change at its end.
        let basefee = match self
            .ctx
            .state
            .get_decoded::<timerhost_types::BasefeeConfig>(&keys::basefee_config())
        {
            Ok(Some(b)) => b,
            Ok(None) => {
                let missing = timerhost_state::StorageError::Corrupt {
                    what: "basefee config",
                    key: "g basefee".into(),
                    reason: "missing from state (no genesis?)".into(),
                };
                return self.fail(missing, cost);
            }
            Err(e) => return self.fail(e, cost),
        };
        match timerhost_timers::quote::quote(
            self.ctx.state,
            &self.ctx.env.timer_config,
            &basefee,
            self.ctx.env.block.height,
            self.ctx.env.block.timestamp_ms,
            request,
        ) {
            Ok(Ok(quote)) => HostCall::ok(quote, cost),
            Ok(Err(e)) => Self::timer_rejection(&e, cost),
            Err(e) => self.fail(e, cost),
        }
    }
}

/// The Python VM behind the chain's [`ActorRuntime`] trait.
pub struct VmRuntime {
    vm: Vm,
}

impl std::fmt::Debug for VmRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VmRuntime").finish_non_exhaustive()
    }
}

impl VmRuntime {
    /// Creates the runtime. Fails if the binary did not install
    /// [`timerhost_vm::MeteredAllocator`] as its global allocator.
    pub fn new() -> Result<Self> {
        Ok(Self {
            vm: Vm::new()
                .map_err(|e| ChainError::Internal(format!("starting the actor VM: {e}")))?,
        })
    }

    /// The VM (for deploy-time validation in tools).
    pub fn vm(&self) -> &Vm {
        &self.vm
    }

    fn finish(outcome: Outcome, host: ChainHost<'_, '_, '_>) -> Result<ExecOutcome> {
        if let Some(e) = host.storage_error {
            return Err(ChainError::Storage(e));
        }
        let mut events = outcome.events;
        if outcome.result.is_ok() {
            events.extend(host.events);
        }
        Ok(ExecOutcome {
            result: outcome
                .result
                .map(|v| if v == Value::None { None } else { Some(v) }),
            cycles_used: outcome.cycles_used,
            cells_used: outcome.cells_used,
            events,
        })
    }
}

impl ActorRuntime for VmRuntime {
    fn deploy(
        &self,
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        code: &str,
        args: &[Value],
    ) -> Result<ExecOutcome> {
        let limits = ExecLimits::new(ctx.cycles_limit, ctx.cells_limit);
        let mut host = ChainHost::new(ctx);
        let outcome = self.vm.deploy(&mut host, &actor, code, args, limits);
        Self::finish(outcome, host)
    }

    fn call(
        &self,
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        handler: &str,
        args: &[Value],
    ) -> Result<ExecOutcome> {
        let limits = ExecLimits::new(ctx.cycles_limit, ctx.cells_limit);
        let invocation = ctx.invocation.clone();
        let mut host = ChainHost::new(ctx);
        let outcome = self
            .vm
            .call(&mut host, &actor, handler, args, limits, invocation);
        Self::finish(outcome, host)
    }
}
