//! The block pipeline: start of block (due time timers) → TX phase →
//! end-of-block hooks (height timers, state watches) → deferred
//! transactions → basefee update. [`BlockExecutor`] applies these to an
//! [`Overlay`] and yields receipts and a change set; nothing is committed
//! here. Every driver calls [`BlockExecutor::begin_block`] before the
//! transactions and [`BlockExecutor::end_of_block`] after them.
//!
//! Configs (`ChainParams`, `BasefeeConfig`, `TimerConfig`) are read once when the executor is
//! created; a governance update inside the block takes effect from the next
//! block. Everything is integer arithmetic over state and the block header, so
//! the same block on the same state gives the same result everywhere.

use timerhost_state::{ChangeSet, Checkpoint, Overlay, StateRead};
use timerhost_types::keys::{self, Account, HeadMeta};
use timerhost_types::{
    actor_address, keccak256, keccak256_concat as keccak_concat, Address, BasefeeConfig,
    ChainParams, ErrorKind, Event, ExecError, Invocation, LaneMarket, Receipt, ReceiptStatus,
    SignedTransaction, SystemInstruction, TimerConfig, TxKind, TxSource, Value, GOVERNANCE_ADDRESS,
};

use timerhost_timers::delivery::BlockBudgets;
use timerhost_timers::{
    events as timer_events, governance as timer_governance, host as timer_host, watch,
    DeliveryPlan, DeliveryStats, TimerError,
};

use crate::accounts::{self, Debit};
use crate::error::{ChainError, Result, TxError};
use crate::governance;
use crate::runtime::{
    ActorRuntime, BlockEnv, BlockHooks, EobContext, ExecContext, ExecOutcome, TxEnv,
};
use crate::validation::{check_against_state, check_static, intrinsic};

mod fires;

/// The result of executing a block's body.
#[derive(Debug)]
pub struct BlockOutput {
    /// Receipts: user transactions, then the end-of-block receipt (if it has
    /// events), then deferred transactions.
    pub receipts: Vec<Receipt>,
    /// Consensus-state writes.
    pub changes: ChangeSet,
    /// Cycles used by the whole block.
    pub cycles_used: u64,
    /// Cells used by the whole block.
    pub cells_used: u64,
    /// The timer lane's basefee in force for this block (its header's).
    pub lane_basefee: u64,
}

/// Executes one block on top of committed state.
pub struct BlockExecutor<'a> {
    overlay: Overlay<'a>,
    env: BlockEnv,
    params: ChainParams,
    basefee: BasefeeConfig,
    runtime: &'a dyn ActorRuntime,
    hooks: &'a dyn BlockHooks,
    /// User-transaction usage, bounded by the block limits.
    tx_cycles_used: u64,
    tx_cells_used: u64,
    /// Deferred and protocol usage (timers contribute to throughput accounting).
    extra_cycles_used: u64,
    extra_cells_used: u64,
    receipts: Vec<Receipt>,
    burned: u128,
    tips: u128,
    pending_basefee: Option<BasefeeConfig>,
    timer_config: TimerConfig,
    pending_timer_config: Option<TimerConfig>,
    /// `system_deployers` a proposal replaced (#32), from the next block.
    pending_system_deployers: Option<Vec<Address>>,
    timer_stats: DeliveryStats,
    /// One lane, fire quota and GC budget for the start and the end.
    timer_budgets: BlockBudgets,
    /// Deferred transactions executed so far (their hashes number them).
    deferred_count: u64,
    /// The timer lane's market in force for this block (#31).
    lane_market: LaneMarket,
    /// The priority fee per cycle of every fire so far: their median is
    /// the next quote's tip hint.
    fire_priority_fees: Vec<u64>,
    /// Upgrade `zero-value-transfer-guard` applies to this block (#44).
    zero_value_transfer_guard: bool,
    /// Upgrade `located-fire-hashes` applies to this block (#46).
    located_fire_hashes: bool,
}

/// What a receipt records of an execution once its writes were kept or discarded.
struct Concluded {
    status: ReceiptStatus,
    error: Option<ExecError>,
    events: Vec<Event>,
    return_value: Option<Value>,
}

impl<'a> BlockExecutor<'a> {
    /// Starts a block; reads the configs once.
    pub fn new(
        state: &'a dyn StateRead,
        env: BlockEnv,
        runtime: &'a dyn ActorRuntime,
        hooks: &'a dyn BlockHooks,
    ) -> Result<Self> {
        // A governed upgrade this binary does not know stops it here,
        // before the block (#44).
        let plans = crate::upgrades::plans(state)?;
        crate::upgrades::check_plans_known(&plans, env.height)?;
        let zero_value_transfer_guard = crate::upgrades::is_active(
            &plans,
            crate::upgrades::ZERO_VALUE_TRANSFER_GUARD,
            env.height,
        );
        let located_fire_hashes =
            crate::upgrades::is_active(&plans, crate::upgrades::LOCATED_FIRE_HASHES, env.height);
        let params = accounts::chain_params(state)?;
        let basefee = accounts::basefee_config(state)?;
        let timer_config = accounts::timer_config(state)?;
        let timer_budgets = BlockBudgets::new(&timer_config, &basefee);
        let lane_market = timerhost_timers::lane::market(state, &timer_config)?;
        Ok(Self {
            overlay: Overlay::new(state),
            env,
            params,
            basefee,
            runtime,
            hooks,
            tx_cycles_used: 0,
            tx_cells_used: 0,
            extra_cycles_used: 0,
            extra_cells_used: 0,
            receipts: Vec::new(),
            burned: 0,
            tips: 0,
            pending_basefee: None,
            timer_budgets,
            timer_config,
            pending_timer_config: None,
            pending_system_deployers: None,
            timer_stats: DeliveryStats::default(),
            deferred_count: 0,
            lane_market,
            fire_priority_fees: Vec::new(),
            zero_value_transfer_guard,
            located_fire_hashes,
        })
    }

    /// Start of block: the time timers due at the block's timestamp fire,
    /// in (time, scheduling) order, before any user transaction (DESIGN.md
    /// "One scheduler, many triggers"); they spend the block's one timer
    /// lane first.
    pub fn begin_block(&mut self) -> Result<()> {
        // #45: booked timers first, in a fresh block: before the time
        // timers and every transaction. Their protocol receipt (if they
        // removed any) is told apart from the time walk's by its round.
        let plan = timerhost_timers::delivery::deliver_booked(
            &mut self.overlay,
            &self.timer_config,
            &self.basefee,
            self.env.height,
            self.env.timestamp_ms,
            &mut self.timer_budgets,
        )?;
        self.run_round(TxSource::StartOfBlock, BOOKED_ROUND, plan)?;
        // #28: when the block's cells stop admission, what was admitted runs,
        // gives back the cells it did not use, and the walk goes on.
        for round in 0u64.. {
            let plan = timerhost_timers::delivery::deliver_time(
                &mut self.overlay,
                &self.timer_config,
                &self.basefee,
                self.env.height,
                self.env.timestamp_ms,
                &mut self.timer_budgets,
            )?;
            if !self.run_round(TxSource::StartOfBlock, round, plan)? {
                break;
            }
        }
        Ok(())
    }

    /// One walk's outcome at the start or the end of the block: its
    /// removal events in a protocol receipt, then its fires. Returns whether
    /// the block's cells stopped the walk after admitting something — the
    /// fires have given back what they did not use, so it may go on.
    fn run_round(&mut self, source: TxSource, round: u64, plan: DeliveryPlan) -> Result<bool> {
        let more = plan.stats.cells_full && !plan.fires.is_empty();
        self.timer_stats.absorb(&plan.stats);
        if !plan.events.is_empty() {
            let receipt =
                self.protocol_receipt(source, round, plan.stats.gc_cycles_used, plan.events);
            self.receipts.push(receipt);
        }
        self.execute_fires(plan.fires)?;
        Ok(more)
    }

    /// The receipt of protocol work at the start or the end of the block:
    /// no sender, no fee, its events; its hash names the phase and height
    /// (and the round of a walk the block's cells interrupted, from 1).
    fn protocol_receipt(
        &self,
        source: TxSource,
        round: u64,
        cycles_used: u64,
        events: Vec<Event>,
    ) -> Receipt {
        let phase: &[u8] = match source {
            TxSource::StartOfBlock => b"timerhost/start-of-block",
            _ => b"timerhost/end-of-block",
        };
        let height = self.env.height.to_be_bytes();
        let round_bytes = round.to_be_bytes();
        let parts: &[&[u8]] = if round == 0 {
            &[phase, &height]
        } else {
            &[phase, &height, &round_bytes]
        };
        Receipt {
            tx_hash: keccak_concat(parts),
            sender: Address::ZERO,
            source,
            status: ReceiptStatus::Success,
            error: None,
            cycles_used,
            cells_used: 0,
            fee_paid: 0,
            burned: 0,
            tip: 0,
            events,
            return_value: None,
            created_actor: None,
        }
    }

    /// What timer delivery did in this block (after [`Self::end_of_block`]).
    pub fn timer_stats(&self) -> &DeliveryStats {
        &self.timer_stats
    }

    /// The basefee config in force for this block.
    pub fn basefee(&self) -> &BasefeeConfig {
        &self.basefee
    }

    /// The timer lane's market in force for this block (#31).
    pub fn lane_market(&self) -> &LaneMarket {
        &self.lane_market
    }

    /// Keeps an execution's writes if it succeeded and discards them (and its
    /// events) if it failed; its fee is settled by the caller either way.
    fn conclude(
        &mut self,
        checkpoint: Checkpoint,
        result: std::result::Result<Option<Value>, ExecError>,
        events: Vec<Event>,
    ) -> Concluded {
        match result {
            Ok(return_value) => {
                self.overlay.release(checkpoint);
                Concluded {
                    status: ReceiptStatus::Success,
                    error: None,
                    events,
                    return_value,
                }
            }
            Err(error) => {
                self.overlay.revert_to(checkpoint);
                Concluded {
                    status: ReceiptStatus::Failed,
                    error: Some(error),
                    events: Vec::new(),
                    return_value: None,
                }
            }
        }
    }

    /// Applies a user transaction, whose sender the caller may have
    /// recovered already (`recovered`, [`crate::senders`]). `Ok(Err(_))`:
    /// the transaction is invalid and nothing was applied; `Err(_)`: the node
    /// failed (storage).
    pub fn apply_tx(
        &mut self,
        tx: &SignedTransaction,
        recovered: Option<&crate::senders::Recovered>,
    ) -> Result<std::result::Result<&Receipt, TxError>> {
        let encoded = tx.to_bytes();
        let tx_hash = keccak256(&encoded);
        let sender = match check_static(tx, encoded.len(), &self.params, &self.basefee, recovered) {
            Ok(s) => s,
            Err(e) => return Ok(Err(e)),
        };
        let t = &tx.tx;
        let cycles_room = self.basefee.max_block_cycles - self.tx_cycles_used;
        if t.cycles_limit > cycles_room {
            return Ok(Err(TxError::BlockFull {
                dimension: "cycles",
                limit: t.cycles_limit,
                remaining: cycles_room,
            }));
        }
        // The block's cells are shared with the timers' fires (#28).
        let cells_room = self.timer_budgets.cells_left();
        if t.cells_limit > cells_room {
            return Ok(Err(TxError::BlockFull {
                dimension: "cells",
                limit: t.cells_limit,
                remaining: cells_room,
            }));
        }
        let mut account = accounts::load(&self.overlay, &sender)?;
        let quote =
            match check_against_state(tx, sender, account.nonce, account.balance, &self.basefee) {
                Ok(q) => q,
                Err(e) => return Ok(Err(e)),
            };
        // Valid from here on: the pre-charge and nonce bump survive even if execution fails.
        account.balance -= quote.prepay;
        account.nonce += 1;
        accounts::store(&mut self.overlay, &sender, &account);

        let (base_cycles, base_cells) = intrinsic(encoded.len());
        let env = TxEnv {
            block: self.env.clone(),
            sender,
            tx_hash,
            timer_config: self.timer_config.clone(),
        };
        let checkpoint = self.overlay.checkpoint();
        let mut created_actor = None;
        let outcome = match &t.kind {
            TxKind::Transfer { amount: 0, .. } if self.zero_value_transfer_guard => {
                ExecOutcome::failed(ExecError::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "a transfer of 0 moves nothing: refused by upgrade {}",
                        crate::upgrades::ZERO_VALUE_TRANSFER_GUARD
                    ),
                ))
            }
            TxKind::Transfer { to, amount } => {
                match accounts::transfer(&mut self.overlay, &sender, to, *amount)? {
                    Debit::Done => ExecOutcome {
                        result: Ok(None),
                        cycles_used: 0,
                        cells_used: 0,
                        events: Vec::new(),
                    },
                    // `check_against_state` just checked the balance covers
                    // the pre-charge plus the amount; nothing ran since.
                    Debit::Insufficient { available } => {
                        return Err(ChainError::Internal(format!(
                            "validated transfer found balance {available} < {amount}"
                        )))
                    }
                }
            }
            TxKind::DeployActor { code, args, value } => {
                let actor = actor_address(&sender, t.nonce);
                created_actor = Some(actor);
                self.deploy(
                    env,
                    actor,
                    code,
                    args,
                    *value,
                    t.cycles_limit - base_cycles,
                    t.cells_limit - base_cells,
                )?
            }
            TxKind::CallActor {
                actor,
                handler,
                args,
                value,
            } => self.call(
                env,
                *actor,
                handler,
                args,
                *value,
                t.cycles_limit - base_cycles,
                t.cells_limit - base_cells,
            )?,
            TxKind::System(instruction) => self.system(sender, instruction)?,
            TxKind::RevokeTimerPayments => ExecOutcome {
                result: Ok(None),
                cycles_used: 0,
                cells_used: 0,
                events: vec![timer_host::revoke_payments(&mut self.overlay, &sender)?],
            },
        };
        let Concluded {
            status,
            error,
            events,
            return_value,
        } = self.conclude(checkpoint, outcome.result, outcome.events);
        if error.is_some() {
            created_actor = None;
        }
        let cycles_used = (base_cycles + outcome.cycles_used).min(t.cycles_limit);
        let cells_used = (base_cells + outcome.cells_used).min(t.cells_limit);
        let settlement = quote.settle(cycles_used, cells_used);
        accounts::credit(&mut self.overlay, &sender, settlement.refund)?;
        self.burned += settlement.burned;
        self.tips += settlement.tip;
        self.tx_cycles_used += cycles_used;
        self.tx_cells_used += cells_used;
        self.timer_budgets.spend_cells(cells_used);
        self.receipts.push(Receipt {
            tx_hash,
            sender,
            source: TxSource::User,
            status,
            error,
            cycles_used,
            cells_used,
            fee_paid: settlement.fee(),
            burned: settlement.burned,
            tip: settlement.tip,
            events,
            return_value,
            created_actor,
        });
        Ok(Ok(self.receipts.last().expect("just pushed")))
    }

    #[allow(clippy::too_many_arguments)]
    fn deploy(
        &mut self,
        env: TxEnv,
        actor: Address,
        code: &str,
        args: &[Value],
        value: u128,
        cycles: u64,
        cells: u64,
    ) -> Result<ExecOutcome> {
        let existing = accounts::load(&self.overlay, &actor)?;
        if existing.is_actor {
            return Ok(ExecOutcome::failed(ExecError::invalid(format!(
                "an actor already exists at {actor}"
            ))));
        }
        // Storing the code is a state write of its size.
        let code_cells = code.len() as u64;
        if code_cells > cells {
            return Ok(ExecOutcome {
                result: Err(ExecError::new(
                    ErrorKind::OutOfCells,
                    format!(
                        "storing {code_cells} bytes of code needs more cells than the {cells} left"
                    ),
                )),
                cycles_used: 0,
                cells_used: cells,
                events: Vec::new(),
            });
        }
        accounts::store(
            &mut self.overlay,
            &actor,
            &Account {
                is_actor: true,
                ..existing
            },
        );
        let code_hash = keccak256(code.as_bytes());
        self.overlay.put_encoded(
            keys::code(&actor),
            &keys::ActorMeta {
                code_hash,
                deployer: env.sender,
            },
        );
        // The source is stored once per distinct code; every deployment still
        // pays its size in cells (charged above).
        if self.overlay.get(&keys::code_source(&code_hash))?.is_none() {
            self.overlay
                .put(keys::code_source(&code_hash), code.as_bytes().to_vec());
        }
        // Validated with the pre-charge before any code ran: unreachable
        // unless the validation and this path disagree.
        if let Debit::Insufficient { available } =
            accounts::transfer(&mut self.overlay, &env.sender, &actor, value)?
        {
            return Err(ChainError::Internal(format!(
                "validated deploy value found balance {available} < {value}"
            )));
        }
        let mut ctx = ExecContext {
            state: &mut self.overlay,
            env,
            cycles_limit: cycles,
            cells_limit: cells - code_cells,
            invocation: Invocation::Transaction,
            value,
            escrow_release: None,
        };
        let mut outcome = self.runtime.deploy(&mut ctx, actor, code, args)?;
        outcome.cells_used += code_cells;
        Ok(outcome)
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        env: TxEnv,
        actor: Address,
        handler: &str,
        args: &[Value],
        value: u128,
        cycles: u64,
        cells: u64,
    ) -> Result<ExecOutcome> {
        if !accounts::load(&self.overlay, &actor)?.is_actor {
            return Ok(ExecOutcome::failed(ExecError::new(
                ErrorKind::NotFound,
                format!("no actor at {actor}"),
            )));
        }
        if let Debit::Insufficient { available } =
            accounts::transfer(&mut self.overlay, &env.sender, &actor, value)?
        {
            return Ok(ExecOutcome::failed(ExecError::new(
                ErrorKind::InsufficientFunds,
                format!("{} cannot send {value}: balance {available}", env.sender),
            )));
        }
        let mut ctx = ExecContext {
            state: &mut self.overlay,
            env,
            cycles_limit: cycles,
            cells_limit: cells,
            invocation: Invocation::Transaction,
            value,
            escrow_release: None,
        };
        self.runtime.call(&mut ctx, actor, handler, args)
    }

    fn system(&mut self, sender: Address, instruction: &SystemInstruction) -> Result<ExecOutcome> {
        let ok = |events: Vec<Event>| ExecOutcome {
            result: Ok(None),
            cycles_used: 0,
            cells_used: 0,
            events,
        };
        // A proposal step the rules refuse fails the transaction, naming why.
        let governed = |outcome: governance::Outcome| match outcome {
            Ok(events) => ok(events),
            Err(why) => ExecOutcome::failed(ExecError::new(ErrorKind::InvalidInput, why)),
        };
        Ok(match instruction {
            SystemInstruction::UpdateBasefeeConfig(cfg) => {
                if let Some(why) = governance::direct_config_refusal(&self.overlay)? {
                    return Ok(ExecOutcome::failed(ExecError::new(
                        ErrorKind::Unauthorized,
                        why,
                    )));
                }
                self.pending_basefee = Some(cfg.clone());
                ok(vec![Event {
                    emitter: GOVERNANCE_ADDRESS,
                    name: "basefee_config.updated".into(),
                    data: governance::basefee_config_value(cfg),
                }])
            }
            SystemInstruction::UpdateTimerConfig(cfg) => {
                if let Some(why) = governance::direct_config_refusal(&self.overlay)? {
                    return Ok(ExecOutcome::failed(ExecError::new(
                        ErrorKind::Unauthorized,
                        why,
                    )));
                }
                // Read once per block (CIP-5 §7): applies from the next block.
                self.pending_timer_config = Some(cfg.clone());
                ok(vec![timer_events::timer_config_updated(
                    GOVERNANCE_ADDRESS,
                    cfg,
                )])
            }
            SystemInstruction::CancelTimer { timer_id } => {
                ok(
                    timer_governance::cancel(&mut self.overlay, GOVERNANCE_ADDRESS, timer_id)?
                        .into_iter()
                        .collect(),
                )
            }
            SystemInstruction::ExtendTimer {
                timer_id,
                new_expires_at,
            } => {
                match timer_governance::extend(
                    &mut self.overlay,
                    &self.timer_config,
                    GOVERNANCE_ADDRESS,
                    self.env.height,
                    timer_id,
                    *new_expires_at,
                )? {
                    Ok(event) => ok(vec![event]),
                    Err(e) => ExecOutcome::failed(timer_error(&e)),
                }
            }
            SystemInstruction::PauseTimers => ok(vec![timer_governance::pause(&mut self.overlay)]),
            SystemInstruction::ResumeTimers => {
                ok(vec![timer_governance::resume(&mut self.overlay)])
            }
            SystemInstruction::ShutdownTimers => {
                ok(vec![timer_governance::shutdown(&mut self.overlay)])
            }
            SystemInstruction::SubmitProposal(action) => governed(governance::submit(
                &mut self.overlay,
                sender,
                action.clone(),
                self.env.height,
            )?),
            SystemInstruction::CastVote {
                proposal_id,
                approve,
            } => governed(governance::vote(
                &mut self.overlay,
                sender,
                *proposal_id,
                *approve,
                self.env.height,
                &mut self.burned,
            )?),
            SystemInstruction::ExecuteProposal { proposal_id } => {
                let mut applied = governance::Applied::default();
                let outcome = governance::execute(
                    &mut self.overlay,
                    *proposal_id,
                    self.env.height,
                    &mut applied,
                )?;
                if outcome.is_ok() {
                    if let Some(cfg) = applied.timer_config {
                        self.pending_timer_config = Some(cfg);
                    }
                    if let Some(cfg) = applied.basefee_config {
                        self.pending_basefee = Some(cfg);
                    }
                    if let Some(list) = applied.system_deployers {
                        self.pending_system_deployers = Some(list);
                    }
                }
                governed(outcome)
            }
        })
    }

    /// End of block: timer delivery (CIP-5 §5.1: height timers, then the
    /// state watches the block's writes hit), the other hooks, then the
    /// deferred transactions — timer fires first, in order. What the fires
    /// and hooks write here counts toward the next block's watches.
    pub fn end_of_block(&mut self) -> Result<()> {
        // The block's ModifiedKeySet: every storage key its committed
        // executions (start-of-block fires included) wrote so far.
        let storage = [timerhost_types::keys::STORAGE];
        let storage_end = [timerhost_types::keys::STORAGE + 1];
        let written = watch::storage_writes(
            self.overlay
                .changes()
                .range::<[u8], _>((
                    std::ops::Bound::Included(&storage[..]),
                    std::ops::Bound::Excluded(&storage_end[..]),
                ))
                .map(|(k, _)| k.as_slice()),
        );
        // Everything written from here on — the protocol's own writes to
        // actor storage during delivery (a removed timer's deposit back in
        // its escrow, a fire's pre-charge held out of it: #28), the fires,
        // the hooks — wakes watches from the next block, like any write of
        // the end of the block.
        let end_of_block_writes = self.overlay.checkpoint();
        let plan = timerhost_timers::deliver(
            &mut self.overlay,
            &self.timer_config,
            &self.basefee,
            self.env.height,
            self.env.timestamp_ms,
            &written,
            &mut self.timer_budgets,
        )?;
        // #32: proposals whose voting period ended expire, their deposits
        // returned.
        let mut protocol_events = plan.events;
        protocol_events.extend(governance::expire(&mut self.overlay, self.env.height)?);
        // #45: dead letters past their TTL leave, their deposits refunded.
        protocol_events.extend(timerhost_timers::dead_letters::expire(
            &mut self.overlay,
            self.env.height,
        )?);
        governance::prune(&mut self.overlay, self.env.height)?;
        timerhost_timers::fairness::sweep(&mut self.overlay, &self.timer_config, self.env.height)?;
        let mut ctx = EobContext {
            state: &mut self.overlay,
            env: self.env.clone(),
            basefee: self.basefee.clone(),
            events: protocol_events,
            cycles_used: plan.stats.gc_cycles_used,
        };
        let cells_full = plan.stats.cells_full;
        let hook_deferred = self.hooks.end_of_block(&mut ctx)?;
        let eob_events = std::mem::take(&mut ctx.events);
        let eob_cycles = ctx.cycles_used;
        // GC cycles are protocol work nobody pays for: they bound a block's
        // removals but must not move the basefee that users pay.
        let mut protocol_cycles = eob_cycles - plan.stats.gc_cycles_used;
        self.timer_stats.absorb(&plan.stats);
        if !eob_events.is_empty() || eob_cycles > 0 {
            let receipt = self.protocol_receipt(TxSource::EndOfBlock, 0, eob_cycles, eob_events);
            self.receipts.push(receipt);
        }
        let mut more = cells_full && !plan.fires.is_empty();
        self.execute_fires(plan.fires)?;
        // #28: the block's cells stopped admission; the fires that ran gave
        // back what they did not use, so the walk goes on where it stopped.
        let mut round = 0;
        while more {
            round += 1;
            let plan = timerhost_timers::delivery::deliver_more(
                &mut self.overlay,
                &self.timer_config,
                &self.basefee,
                self.env.height,
                &mut self.timer_budgets,
            )?;
            more = self.run_round(TxSource::EndOfBlock, round, plan)?;
        }
        for tx in &hook_deferred {
            let mut receipt = self.execute_deferred(tx)?;
            let mut ctx = EobContext {
                state: &mut self.overlay,
                env: self.env.clone(),
                basefee: self.basefee.clone(),
                events: Vec::new(),
                cycles_used: 0,
            };
            self.hooks.after_deferred(&mut ctx, tx, &receipt)?;
            receipt.events.extend(ctx.events);
            protocol_cycles += ctx.cycles_used;
            self.receipts.push(receipt);
        }
        self.extra_cycles_used += protocol_cycles;
        // Writes made here wake watches from the next block on, so a watch
        // fires at most once per block and cannot loop within one.
        let written = watch::storage_writes(self.overlay.keys_written_since(end_of_block_writes));
        self.overlay.release(end_of_block_writes);
        timerhost_timers::delivery::queue_end_of_block_writes(
            &mut self.overlay,
            &written,
            self.env.height + 1,
        )?;
        Ok(())
    }

    /// Pays tips, records burns, updates the basefee and the head metadata,
    /// and returns the block's receipts and writes.
    pub fn finish(mut self) -> Result<BlockOutput> {
        accounts::credit(&mut self.overlay, &self.env.proposer, self.tips)?;
        let mut supply = accounts::supply(&self.overlay)?;
        supply.burned = supply
            .burned
            .checked_add(self.burned)
            .ok_or_else(|| ChainError::Internal("burned total overflows".into()))?;
        self.overlay.put_encoded(keys::supply(), &supply);
        let cycles_used = self.tx_cycles_used + self.extra_cycles_used;
        let cells_used = self.tx_cells_used + self.extra_cells_used;
        let next_basefee = match self.pending_basefee.take() {
            // A governance update replaces the config as of the next block.
            Some(cfg) => cfg,
            None => self.basefee.next(cycles_used, cells_used),
        };
        self.overlay
            .put_encoded(keys::basefee_config(), &next_basefee);
        // #31: the lane basefee steps toward its target from the lane cycles
        // the block's fires reserved (what admission packs, so a lane full
        // of generous gas limits prices as full); the tip hint is their
        // median priority fee, kept from the last block that fired.
        let median_tip =
            median(&mut self.fire_priority_fees).unwrap_or(self.lane_market.median_tip);
        let next_lane = self.lane_market.next(
            &self.timer_config,
            self.timer_stats.lane_reserved,
            median_tip,
        );
        // Unwritten, it reads as the floor: a chain that never leaves it
        // never writes it.
        if next_lane != self.lane_market {
            self.overlay.put_encoded(keys::lane_market(), &next_lane);
        }
        if let Some(cfg) = self.pending_timer_config.take() {
            self.overlay.put_encoded(keys::timer_config(), &cfg);
        }
        if let Some(list) = self.pending_system_deployers.take() {
            let params = ChainParams {
                system_deployers: list,
                ..self.params.clone()
            };
            self.overlay.put_encoded(keys::chain_params(), &params);
        }
        self.overlay.put_encoded(
            keys::head(),
            &HeadMeta {
                height: self.env.height,
                timestamp_ms: self.env.timestamp_ms,
            },
        );
        Ok(BlockOutput {
            receipts: self.receipts,
            changes: self.overlay.into_changes(),
            cycles_used,
            cells_used,
            lane_basefee: self.lane_market.basefee,
        })
    }

    /// Read access to the block's state so far.
    pub fn state(&self) -> &Overlay<'a> {
        &self.overlay
    }
}

/// The middle value (the upper of the two middle ones), `None` when empty.
/// The round number that names the booked fires' protocol receipt at the
/// start of a block (#45): the time walk's rounds count from 0.
const BOOKED_ROUND: u64 = u64::MAX;

fn median(values: &mut [u64]) -> Option<u64> {
    if values.is_empty() {
        return None;
    }
    let middle = values.len() / 2;
    Some(*values.select_nth_unstable(middle).1)
}

/// A timer rule violation as an execution error (the calling execution reverts).
pub fn timer_error(e: &TimerError) -> ExecError {
    let kind = match e {
        TimerError::Unauthorized { .. } => ErrorKind::Unauthorized,
        TimerError::NotFound { .. } | TimerError::NoDeadLetter { .. } => ErrorKind::NotFound,
        _ => ErrorKind::InvalidInput,
    };
    ExecError::new(kind, e.to_string())
}
