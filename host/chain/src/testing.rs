//! Test support, behind one import path (`timerhost_chain::testing`):
//! a deterministic [`MockRuntime`] standing in for the Python VM, a
//! [`TxBuilder`] that signs transactions with sensible defaults, and
//! [`dev_chain`] for an in-memory dev chain.
//!
//! The mock runtime's "actors" ignore their source and understand a few
//! handlers with fixed, documented costs, enough to exercise storage writes,
//! reverts, out-of-cycles, events and transfers from the chain's side.

use std::sync::Arc;

use timerhost_state::{MemoryBackend, StateRead};
use timerhost_types::keys;
use timerhost_types::timer::{CANCEL_TIMER_CYCLES, EXTEND_TIMER_CYCLES, SET_TIMER_BASE_CYCLES};
use timerhost_types::{
    Address, BasefeeConfig, ErrorKind, Event, ExecError, Genesis, Hash, Invocation, PrivateKey,
    RequestedTrigger, SignedTransaction, SystemInstruction, TimerConfig, TimerRequest, Transaction,
    TxKind, Value,
};

use timerhost_timers::host as timer_host;

use crate::accounts::{self, Debit};
use crate::chain::Chain;
use crate::error::Result;
use crate::executor::timer_error;
use crate::runtime::{ActorRuntime, ExecContext, ExecOutcome, NoHooks};

/// Cycles every mock handler costs before its own work.
pub const MOCK_CALL_CYCLES: u64 = 100;

/// A deterministic stand-in for the actor VM.
///
/// | handler | args | effect | cycles | cells |
/// |---|---|---|---|---|
/// | `deploy` | `[v]` (optional) | storage `init` = v | 100 | len(v) |
/// | `set` | `[key: str, v]` | storage key = v | 150 | len(key) + len(v) |
/// | `get` | `[key: str]` | returns storage key | 110 | 0 |
/// | `fail` | `[key: str]` | writes key, then reverts | 150 | … |
/// | `burn` | `[n: int]` | uses n cycles (out of cycles if over the limit) | 100 + n | 0 |
/// | `emit` | `[name: str, data]` | emits an event | 120 | len(data) |
/// | `send` | `[to: bytes(20), amount: int]` | transfers from the actor | 130 | 0 |
/// | `schedule` | `[height, payload: bytes, fee_payer: bytes(20)?, gas_limit?, expires_at?, bid?, max_fee_per_cycle?, retries?, retry_backoff?]` | `schedule_timer_ex`, returns the id | 100 + 200 | the timer's state bytes and account rewrites (len(payload) if refused) |
/// | `book` | `[height, payload: bytes, gas_limit]` | `book_timer` (#45), returns the id | 100 + 200 | as `schedule` |
/// | `schedule_then_fail` | same as `schedule` | schedules, then reverts | 100 + 200 | as `schedule` |
/// | `cancel` | `[timer_id: bytes]` | `cancel_timer` | 100 + 200 | 0 |
/// | `extend` | `[timer_id: bytes, new_expires_at]` | `extend_timer` | 100 + 200 | 0 |
/// | `handle_timer` | `[payload: bytes]` (timer fires only) | fails (`RuntimeError`) while storage `failing` holds a non-zero int (#45); else counts fires in storage `fires`, records `last_fire` = height; if storage `interval` is set, reschedules itself `interval` blocks later with the same payload (fee payer: storage `payer` or the actor) | 100 + 40 (+ 200) | … |
/// | `schedule_many` | `[count, height, gas_limit?, expires_at?, fee_payer: bytes(20)?]` | schedules `count` timers, payload = index (8 bytes BE) | 100 + 200 each | as `schedule`, each |
/// | `revoke` | none | `revoke_timer_payments` for the actor | 100 + 200 | 0 |
/// | `boom` | any | writes storage `boom`, then reverts | 150 | 0 |
///
/// Timer rule violations revert the call with the rule's message, exactly as
/// the Python VM does.
#[derive(Debug, Default, Clone, Copy)]
pub struct MockRuntime;

struct Meter {
    cycles_limit: u64,
    cells_limit: u64,
    cycles: u64,
    cells: u64,
}

impl Meter {
    fn charge(&mut self, cycles: u64, cells: u64) -> std::result::Result<(), ExecError> {
        self.cycles = self.cycles.saturating_add(cycles);
        self.cells = self.cells.saturating_add(cells);
        if self.cycles > self.cycles_limit {
            self.cycles = self.cycles_limit;
            return Err(ExecError::new(ErrorKind::OutOfCycles, "out of cycles"));
        }
        if self.cells > self.cells_limit {
            self.cells = self.cells_limit;
            return Err(ExecError::new(ErrorKind::OutOfCells, "out of cells"));
        }
        Ok(())
    }
}

fn arg_str(args: &[Value], i: usize) -> std::result::Result<String, ExecError> {
    match args.get(i) {
        Some(Value::Str(s)) => Ok(s.clone()),
        _ => Err(ExecError::invalid(format!("argument {i} must be a str"))),
    }
}

fn arg_u64(args: &[Value], i: usize) -> std::result::Result<u64, ExecError> {
    match args.get(i) {
        Some(Value::Int(n)) => {
            u64::try_from(n).map_err(|_| ExecError::invalid(format!("argument {i} out of range")))
        }
        _ => Err(ExecError::invalid(format!("argument {i} must be an int"))),
    }
}

/// An optional int argument (absent or `None` → `None`).
fn arg_opt_u64(args: &[Value], i: usize) -> std::result::Result<Option<u64>, ExecError> {
    match args.get(i) {
        None | Some(Value::None) => Ok(None),
        _ => arg_u64(args, i).map(Some),
    }
}

/// `schedule_timer_ex` as the VM's host performs it: apply the timer rules,
/// charge the §6.1 cost (base cycles plus the cells of every byte the timer
/// adds to state; the payload's bytes when refused), record
/// `TimerScheduled`. A rule violation is the call's error.
fn mock_schedule(
    ctx: &mut ExecContext<'_, '_>,
    meter: &mut Meter,
    events: &mut Vec<Event>,
    actor: Address,
    request: TimerRequest,
) -> Result<std::result::Result<Hash, ExecError>> {
    let refused_cells = request.payload.len() as u64;
    let caller = ctx.env.timer_caller(actor, false);
    Ok(
        match timer_host::schedule(ctx.state, &ctx.env.timer_config, &caller, request)? {
            Ok(scheduled) => {
                if let Err(e) = meter.charge(SET_TIMER_BASE_CYCLES, scheduled.cells) {
                    return Ok(Err(e));
                }
                events.push(scheduled.event);
                events.extend(scheduled.booked_event);
                Ok(scheduled.timer.timer_id)
            }
            Err(e) => {
                if let Err(e) = meter.charge(SET_TIMER_BASE_CYCLES, refused_cells) {
                    return Ok(Err(e));
                }
                Err(timer_error(&e))
            }
        },
    )
}

/// Reads an int from an actor's storage (mock encoding: canonical values).
fn storage_u64(ctx: &ExecContext<'_, '_>, actor: &Address, key: &[u8]) -> Result<Option<u64>> {
    Ok(match ctx.state.get(&keys::storage(actor, key))? {
        Some(v) => match Value::from_bytes(&v) {
            Ok(Value::Int(n)) => u64::try_from(&n).ok(),
            _ => None,
        },
        None => None,
    })
}

impl MockRuntime {
    fn run(
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        handler: &str,
        args: &[Value],
    ) -> Result<ExecOutcome> {
        let mut meter = Meter {
            cycles_limit: ctx.cycles_limit,
            cells_limit: ctx.cells_limit,
            cycles: 0,
            cells: 0,
        };
        let mut events = Vec::new();
        let result = Self::dispatch(ctx, actor, handler, args, &mut meter, &mut events)?;
        Ok(ExecOutcome {
            result,
            cycles_used: meter.cycles,
            cells_used: meter.cells,
            events,
        })
    }

    fn dispatch(
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        handler: &str,
        args: &[Value],
        meter: &mut Meter,
        events: &mut Vec<Event>,
    ) -> Result<std::result::Result<Option<Value>, ExecError>> {
        macro_rules! try_exec {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(err) => return Ok(Err(err)),
                }
            };
        }
        try_exec!(meter.charge(MOCK_CALL_CYCLES, 0));
        match handler {
            "deploy" => {
                if let Some(v) = args.first() {
                    let bytes = v.to_bytes();
                    try_exec!(meter.charge(0, bytes.len() as u64));
                    ctx.state.put(keys::storage(&actor, b"init"), bytes);
                }
                Ok(Ok(None))
            }
            "set" | "fail" => {
                let key = try_exec!(arg_str(args, 0));
                let value = args.get(1).cloned().unwrap_or(Value::None).to_bytes();
                try_exec!(meter.charge(50, (key.len() + value.len()) as u64));
                ctx.state.put(keys::storage(&actor, key.as_bytes()), value);
                if handler == "fail" {
                    return Ok(Err(ExecError {
                        kind: ErrorKind::Revert,
                        message: format!("RuntimeError: asked to fail after writing {key}"),
                        traceback: Some("  mock actor, handler fail".into()),
                    }));
                }
                Ok(Ok(None))
            }
            "get" => {
                let key = try_exec!(arg_str(args, 0));
                try_exec!(meter.charge(10, 0));
                let value = ctx.state.get(&keys::storage(&actor, key.as_bytes()))?;
                Ok(Ok(Some(match value {
                    Some(bytes) => Value::from_bytes(&bytes).unwrap_or(Value::Bytes(bytes)),
                    None => Value::None,
                })))
            }
            "burn" => {
                let n = try_exec!(arg_u64(args, 0));
                try_exec!(meter.charge(n, 0));
                Ok(Ok(Some(Value::int(n))))
            }
            "emit" => {
                let name = try_exec!(arg_str(args, 0));
                let data = args.get(1).cloned().unwrap_or(Value::None);
                try_exec!(meter.charge(20, data.to_bytes().len() as u64));
                events.push(Event {
                    emitter: actor,
                    name,
                    data,
                });
                Ok(Ok(None))
            }
            "send" => {
                let to = match args.first() {
                    Some(Value::Bytes(b)) if b.len() == 20 => {
                        Address::from_slice(b).expect("20 bytes")
                    }
                    _ => return Ok(Err(ExecError::invalid("argument 0 must be 20 bytes"))),
                };
                let amount = try_exec!(arg_u64(args, 1)) as u128;
                try_exec!(meter.charge(30, 0));
                match accounts::transfer(ctx.state, &actor, &to, amount)? {
                    Debit::Done => Ok(Ok(None)),
                    Debit::Insufficient { available } => Ok(Err(ExecError::new(
                        ErrorKind::InsufficientFunds,
                        format!("actor has {available}, cannot send {amount}"),
                    ))),
                }
            }
            "book" => {
                let height = try_exec!(arg_u64(args, 0));
                let payload = match args.get(1) {
                    Some(Value::Bytes(b)) => b.clone(),
                    _ => return Ok(Err(ExecError::invalid("argument 1 must be bytes"))),
                };
                let request = TimerRequest {
                    trigger: RequestedTrigger::Height(height),
                    payload,
                    gas_limit: try_exec!(arg_opt_u64(args, 2)),
                    book: true,
                    ..Default::default()
                };
                let timer_id = try_exec!(mock_schedule(ctx, meter, events, actor, request)?);
                Ok(Ok(Some(Value::Bytes(timer_id.0.to_vec()))))
            }
            "schedule" | "schedule_then_fail" => {
                let height = try_exec!(arg_u64(args, 0));
                let payload = match args.get(1) {
                    Some(Value::Bytes(b)) => b.clone(),
                    _ => return Ok(Err(ExecError::invalid("argument 1 must be bytes"))),
                };
                let fee_payer = match args.get(2) {
                    None | Some(Value::None) => None,
                    Some(Value::Bytes(b)) if b.len() == 20 => {
                        Some(Address::from_slice(b).expect("20 bytes"))
                    }
                    _ => {
                        return Ok(Err(ExecError::invalid(
                            "argument 2 must be 20 bytes or None",
                        )))
                    }
                };
                let gas_limit = try_exec!(arg_opt_u64(args, 3));
                let expires_at = try_exec!(arg_opt_u64(args, 4));
                let bid = try_exec!(arg_opt_u64(args, 5));
                let max_fee_per_cycle = try_exec!(arg_opt_u64(args, 6));
                let retries =
                    try_exec!(arg_opt_u64(args, 7)).map(|n| n.min(u64::from(u32::MAX)) as u32);
                let retry_backoff = try_exec!(arg_opt_u64(args, 8));
                let request = TimerRequest {
                    trigger: RequestedTrigger::Height(height),
                    payload,
                    fee_payer,
                    gas_limit,
                    expires_at,
                    bid,
                    max_fee_per_cycle,
                    escrow_key: None,
                    book: false,
                    handler: None,
                    retries,
                    retry_backoff,
                };
                let timer_id = try_exec!(mock_schedule(ctx, meter, events, actor, request)?);
                if handler == "schedule_then_fail" {
                    return Ok(Err(ExecError::new(
                        ErrorKind::Revert,
                        "RuntimeError: failing after scheduling",
                    )));
                }
                Ok(Ok(Some(Value::Bytes(timer_id.0.to_vec()))))
            }
            "cancel" | "extend" => {
                let id = match args.first() {
                    Some(Value::Bytes(b)) if b.len() == 32 => {
                        Hash::from_slice(b).expect("32 bytes")
                    }
                    _ => {
                        return Ok(Err(ExecError::invalid(
                            "argument 0 must be a 32-byte timer id",
                        )))
                    }
                };
                let caller = ctx.env.timer_caller(actor, false);
                let mut record_bytes = 0;
                let event = if handler == "cancel" {
                    try_exec!(meter.charge(CANCEL_TIMER_CYCLES, 0));
                    let result = timer_host::cancel(ctx.state, &caller, &id, &mut record_bytes)?;
                    try_exec!(meter.charge(timer_host::record_cycles(record_bytes), 0));
                    try_exec!(result.map_err(|e| timer_error(&e)))
                } else {
                    let new_expires_at = try_exec!(arg_u64(args, 1));
                    try_exec!(meter.charge(EXTEND_TIMER_CYCLES, 0));
                    let result = timer_host::extend(
                        ctx.state,
                        &ctx.env.timer_config,
                        &caller,
                        &id,
                        new_expires_at,
                        &mut record_bytes,
                    )?;
                    try_exec!(meter.charge(timer_host::record_cycles(record_bytes), 0));
                    try_exec!(result.map_err(|e| timer_error(&e)))
                };
                events.push(event);
                Ok(Ok(None))
            }
            "handle_timer" => {
                let payload = match args.first() {
                    Some(Value::Bytes(b)) => b.clone(),
                    _ => {
                        return Ok(Err(ExecError::invalid(
                            "handle_timer expects the payload bytes",
                        )))
                    }
                };
                try_exec!(meter.charge(40, 16));
                if storage_u64(ctx, &actor, b"failing")?.unwrap_or(0) != 0 {
                    return Ok(Err(ExecError {
                        kind: ErrorKind::Revert,
                        message: "RuntimeError: failing on purpose".into(),
                        traceback: Some("  mock actor, handle_timer while `failing`".into()),
                    }));
                }
                let fires = storage_u64(ctx, &actor, b"fires")?.unwrap_or(0);
                ctx.state.put(
                    keys::storage(&actor, b"fires"),
                    Value::int(fires + 1).to_bytes(),
                );
                ctx.state.put(
                    keys::storage(&actor, b"last_fire"),
                    Value::int(ctx.env.block.height).to_bytes(),
                );
                if let Some(interval) = storage_u64(ctx, &actor, b"interval")? {
                    let fee_payer = match ctx.state.get(&keys::storage(&actor, b"payer"))? {
                        Some(v) => match Value::from_bytes(&v) {
                            Ok(Value::Bytes(b)) if b.len() == 20 => {
                                Some(Address::from_slice(&b).expect("20 bytes"))
                            }
                            _ => None,
                        },
                        None => None,
                    };
                    let request = TimerRequest {
                        trigger: RequestedTrigger::Height(ctx.env.block.height + interval),
                        payload,
                        fee_payer,
                        ..Default::default()
                    };
                    try_exec!(mock_schedule(ctx, meter, events, actor, request)?);
                }
                Ok(Ok(None))
            }
            "schedule_many" | "schedule_many_at" => {
                // [count, height (or timestamp_ms for schedule_many_at),
                // gas_limit?, expires_at?, fee_payer?]; payload = index as
                // 8 bytes BE.
                let count = try_exec!(arg_u64(args, 0));
                let at = try_exec!(arg_u64(args, 1));
                let gas_limit = try_exec!(arg_opt_u64(args, 2));
                let expires_at = try_exec!(arg_opt_u64(args, 3));
                let fee_payer = match args.get(4) {
                    Some(Value::Bytes(b)) if b.len() == 20 => {
                        Some(Address::from_slice(b).expect("20 bytes"))
                    }
                    _ => None,
                };
                for i in 0..count {
                    let trigger = if handler == "schedule_many_at" {
                        RequestedTrigger::Time(at)
                    } else {
                        RequestedTrigger::Height(at)
                    };
                    let request = TimerRequest {
                        trigger,
                        payload: i.to_be_bytes().to_vec(),
                        fee_payer,
                        gas_limit,
                        expires_at,
                        bid: None,
                        max_fee_per_cycle: None,
                        escrow_key: None,
                        book: false,
                        handler: None,
                        retries: None,
                        retry_backoff: None,
                    };
                    try_exec!(mock_schedule(ctx, meter, events, actor, request)?);
                }
                Ok(Ok(None))
            }
            "watch" => {
                // [[key or "prefix*", ...], gas_limit?]: a state watch over
                // the actor's own storage, calling handle_timer.
                let keys = match args.first() {
                    Some(Value::List(items)) => items
                        .iter()
                        .map(|v| match v {
                            Value::Str(s) => Ok(s.clone()),
                            _ => Err(ExecError::invalid("watch keys must be str")),
                        })
                        .collect::<std::result::Result<Vec<_>, _>>(),
                    _ => Err(ExecError::invalid("argument 0 must be a list of keys")),
                };
                let request = TimerRequest {
                    trigger: RequestedTrigger::State {
                        actor: None,
                        keys: try_exec!(keys),
                        handler: None,
                    },
                    gas_limit: try_exec!(arg_opt_u64(args, 1)),
                    ..Default::default()
                };
                let timer_id = try_exec!(mock_schedule(ctx, meter, events, actor, request)?);
                Ok(Ok(Some(Value::Bytes(timer_id.as_bytes().to_vec()))))
            }
            "revoke" => {
                try_exec!(meter.charge(timerhost_types::timer::REVOKE_TIMER_PAYMENTS_CYCLES, 0));
                events.push(timer_host::revoke_payments(ctx.state, &actor)?);
                Ok(Ok(None))
            }
            "boom" => {
                try_exec!(meter.charge(50, 0));
                ctx.state
                    .put(keys::storage(&actor, b"boom"), Value::Bool(true).to_bytes());
                Ok(Err(ExecError::new(ErrorKind::Revert, "RuntimeError: boom")))
            }
            other => Ok(Err(ExecError::new(
                ErrorKind::NotFound,
                format!("mock actor has no handler {other:?}"),
            ))),
        }
    }
}

impl ActorRuntime for MockRuntime {
    fn deploy(
        &self,
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        _code: &str,
        args: &[Value],
    ) -> Result<ExecOutcome> {
        Self::run(ctx, actor, "deploy", args)
    }

    fn call(
        &self,
        ctx: &mut ExecContext<'_, '_>,
        actor: Address,
        handler: &str,
        args: &[Value],
    ) -> Result<ExecOutcome> {
        if handler == "deploy" {
            return Ok(ExecOutcome::failed(ExecError::invalid(
                "deploy can only run at deployment",
            )));
        }
        // As the VM: the timer handler is reachable by timer fires only.
        if handler == "handle_timer" && ctx.invocation == Invocation::Transaction {
            return Ok(ExecOutcome::failed(ExecError::new(
                ErrorKind::Unauthorized,
                "'handle_timer' is a timer handler: only a timer fire can invoke it, not a transaction or pvm_host.call",
            )));
        }
        Self::run(ctx, actor, handler, args)
    }
}

/// Builds and signs transactions for one sender, tracking its nonce.
#[derive(Debug, Clone)]
pub struct TxBuilder {
    /// Signing key.
    pub key: PrivateKey,
    /// Chain id stamped on every transaction.
    pub chain_id: u64,
    /// Next nonce.
    pub nonce: u64,
    /// Cycles limit for new transactions.
    pub cycles_limit: u64,
    /// Cells limit for new transactions.
    pub cells_limit: u64,
    /// Fee cap per cycle.
    pub max_fee_per_cycle: u128,
    /// Fee cap per cell.
    pub max_fee_per_cell: u128,
    /// Tip per cycle.
    pub priority_fee_per_cycle: u128,
}

impl TxBuilder {
    /// A builder with generous default limits and fee caps.
    pub fn new(key: PrivateKey, chain_id: u64) -> Self {
        Self {
            key,
            chain_id,
            nonce: 0,
            cycles_limit: 1_000_000,
            cells_limit: 100_000,
            max_fee_per_cycle: 10_000,
            max_fee_per_cell: 10_000,
            priority_fee_per_cycle: 2,
        }
    }

    /// The sender address.
    pub fn address(&self) -> Address {
        self.key.address()
    }

    /// An unsigned transaction of `kind` with the builder's settings (nonce not advanced).
    pub fn unsigned(&self, kind: TxKind) -> Transaction {
        Transaction {
            chain_id: self.chain_id,
            nonce: self.nonce,
            cycles_limit: self.cycles_limit,
            cells_limit: self.cells_limit,
            max_fee_per_cycle: self.max_fee_per_cycle,
            max_fee_per_cell: self.max_fee_per_cell,
            priority_fee_per_cycle: self.priority_fee_per_cycle,
            kind,
        }
    }

    /// Signs a transaction of `kind` and advances the nonce.
    pub fn sign(&mut self, kind: TxKind) -> SignedTransaction {
        let tx = self.unsigned(kind).sign(&self.key);
        self.nonce += 1;
        tx
    }

    /// A transfer.
    pub fn transfer(&mut self, to: Address, amount: u128) -> SignedTransaction {
        self.sign(TxKind::Transfer { to, amount })
    }

    /// A deployment (the mock runtime ignores `code`).
    pub fn deploy(&mut self, code: &str, args: Vec<Value>, value: u128) -> SignedTransaction {
        self.sign(TxKind::DeployActor {
            code: code.into(),
            args,
            value,
        })
    }

    /// A call.
    pub fn call(
        &mut self,
        actor: Address,
        handler: &str,
        args: Vec<Value>,
        value: u128,
    ) -> SignedTransaction {
        self.sign(TxKind::CallActor {
            actor,
            handler: handler.into(),
            args,
            value,
        })
    }

    /// A timer config update (governance).
    pub fn update_timer_config(&mut self, cfg: TimerConfig) -> SignedTransaction {
        self.sign(TxKind::System(SystemInstruction::UpdateTimerConfig(cfg)))
    }

    /// A governance timer cancellation.
    pub fn cancel_timer(&mut self, timer_id: Hash) -> SignedTransaction {
        self.sign(TxKind::System(SystemInstruction::CancelTimer { timer_id }))
    }

    /// A governance timer extension.
    pub fn extend_timer(&mut self, timer_id: Hash, new_expires_at: u64) -> SignedTransaction {
        self.sign(TxKind::System(SystemInstruction::ExtendTimer {
            timer_id,
            new_expires_at,
        }))
    }

    /// A basefee config update.
    pub fn update_basefee(&mut self, cfg: BasefeeConfig) -> SignedTransaction {
        self.sign(TxKind::System(SystemInstruction::UpdateBasefeeConfig(cfg)))
    }

    /// A governance instruction without arguments (`PauseTimers`, …).
    pub fn system(&mut self, instruction: SystemInstruction) -> SignedTransaction {
        self.sign(TxKind::System(instruction))
    }

    /// Revokes every timer that names this sender as fee payer.
    pub fn revoke_timer_payments(&mut self) -> SignedTransaction {
        self.sign(TxKind::RevokeTimerPayments)
    }
}

/// A fresh in-memory dev chain running the [`MockRuntime`] and no hooks.
pub fn dev_chain() -> Chain<MemoryBackend> {
    Chain::open(
        MemoryBackend::new(),
        Genesis::dev(),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .expect("dev genesis opens")
}

/// Builders for the ten dev accounts.
pub fn dev_builders() -> Vec<TxBuilder> {
    timerhost_types::dev_accounts()
        .into_iter()
        .map(|k| TxBuilder::new(k, timerhost_types::DEV_CHAIN_ID))
        .collect()
}

/// A Python actor for load benchmarks: `arm(n, height)` schedules `n`
/// timers at `height` (2,000 cycles each), `handle_timer` does nothing, and
/// `tick(payload)` does the same nothing for a call (#46 compares the two).
pub const BENCH_TICK_ACTOR: &str = r#"
import pvm_host

class Tick:
    def arm(self, n, height):
        for i in range(n):
            pvm_host.schedule_timer_ex(height, b"", gas_limit=2000)

    def handle_timer(self, payload):
        pass

    def tick(self, payload):
        pass
"#;

/// The dev genesis with room for benchmark loads: a million timers per
/// actor and per block, and block limits that a 20,000-schedule
/// transaction fits in.
pub fn bench_genesis() -> timerhost_types::Genesis {
    let mut g = timerhost_types::Genesis::dev();
    g.timers = timerhost_types::TimerConfig {
        max_timers_per_actor: 1_000_000,
        max_fires_per_block: 1_000_000,
        ..timerhost_types::TimerConfig::default()
    };
    g.basefee.max_block_cycles = 1 << 38;
    g.basefee.max_block_cells = 1 << 34;
    g
}

/// `TIMERHOST_PROOF_BLOCKS` for the benchmarks (0 when unset): how many
/// recent states a benchmarked store keeps provable, as a node's
/// `[storage] proof_blocks` does.
fn proof_blocks_from_env() -> u64 {
    std::env::var("TIMERHOST_PROOF_BLOCKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A chain on `backend` at [`bench_genesis`], running `runtime` with no
/// hooks: what the benchmarks load.
pub fn bench_chain<B: timerhost_state::KvBackend>(
    backend: B,
    runtime: Arc<dyn ActorRuntime>,
) -> Chain<B> {
    Chain::open(backend, bench_genesis(), runtime, Arc::new(NoHooks)).expect("bench genesis opens")
}

/// A [`bench_chain`] on a sled store in `dir` running the Python VM, with
/// the store set as a node sets it: the block benchmarks' chain.
/// `TIMERHOST_PROOF_BLOCKS=128` keeps recent states provable as a node does
/// by default (`[storage] proof_blocks`), to measure what that costs.
pub fn bench_sled_chain(dir: &std::path::Path) -> Chain<timerhost_state::SledBackend> {
    let chain = bench_chain(
        timerhost_state::SledBackend::open(dir).expect("a sled store opens in a fresh directory"),
        Arc::new(crate::VmRuntime::new().expect("the Python VM starts")),
    );
    chain.store().set_proof_blocks(proof_blocks_from_env());
    chain
}

/// The dev builders with limits and fee caps for [`bench_genesis`] loads.
pub fn bench_builders() -> Vec<TxBuilder> {
    let mut b = dev_builders();
    for x in &mut b {
        x.cycles_limit = 1 << 36;
        x.cells_limit = 1 << 32;
        x.max_fee_per_cycle = 1_000_000;
        x.max_fee_per_cell = 1_000_000;
    }
    b
}

/// Sum of all account balances in a state (for conservation checks).
pub use crate::accounts::total_balances;
