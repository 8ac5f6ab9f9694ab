//! Timer delivery (CIP-5 §5, §6.2–6.3, §6.5; DESIGN.md "Timers" and "One
//! scheduler, many triggers").
//!
//! A block delivers in two places, under **one lane and one set of
//! budgets** ([`BlockBudgets`], created once per block):
//!
//! - [`deliver_time`], at the **start** of the block, before its user
//!   transactions: the time queue's timers due at or before the block's
//!   timestamp, in (time, scheduling) order;
//! - [`deliver`], at the **end**: the GC backlog, the height queue's due
//!   timers in (height, scheduling) order, then the waiting state-watch hits
//!   ([`crate::watch`]) in (height, watch) order — at most
//!   `max_watch_matches_per_block` of them — and the expired watches.
//!
//! What the start of the block uses of the lane and of `max_fires_per_block`
//! is no longer there at its end; whatever a budget leaves unprocessed
//! carries over, in order, to the same place in the next block.
//!
//! Each walk *classifies* before anything executes (§5.1): for each timer,
//!
//! 1. **payment revoked** (its fee payer revoked it, [`crate::control`]),
//!    **TTL expired** (`height > expires_at`) or **insufficient funds**
//!    (`balance(fee_payer) + deposit < max_cost`: the deposit comes back as
//!    the timer leaves) → removed under the GC budget
//!    (`GC_CYCLES_PER_REMOVAL` each) with `TimerCancelledPaymentRevoked` /
//!    `TimerExpired` / `TimerCancelledInsufficientFunds`; if the GC budget is
//!    spent, moved to the GC backlog (cleared first next block) — at most
//!    `gc_cycles_per_block / GC_CYCLES_PER_DEFERRAL` moves per block, so the
//!    work stays bounded while live timers behind them still get reached;
//! 2. otherwise **admitted** if the block has fired fewer than
//!    `max_fires_per_block` timers, its reservation (its
//!    `gas_limit_per_fire` plus `TIMER_FIRE_BASE_CYCLES`) fits what is left of the lane
//!    (`lane_cycles_per_block`) and its cells limit ([`cells_per_fire`])
//!    fits what is left of the block's cells (#28): the timer is removed (its
//!    deposit refunded), the fee payer (and an escrow-funded timer's escrow)
//!    is pre-charged `max_cost = (gas_limit + base) × cycle_basefee +
//!    cells_per_fire × cell_basefee`, and a [`Fire`] is returned. The first
//!    fire that does not fit a limit stops the walk: admission is strict
//!    FIFO and everything behind it carries over, in order, to the next
//!    block — except that a walk the cells stopped resumes in the same
//!    block once the admitted fires have run and given back the cells they
//!    did not use ([`deliver_more`]).
//!
//! The chain then *executes* the fires as deferred transactions, refunds
//! `max_cost − actual_cost`, and emits [`crate::events::timer_fired`].
//!
//! Governance's status ([`crate::control`]) comes first: while timers are
//! paused nothing is walked at all; while they shut down, the backlog is
//! cleared and then every queued timer — due or not — is removed under the
//! GC budget with `TimerCancelled {reason: "shutdown"}`, until none is left
//! and `TimersShutdown {complete: true}` closes the shutdown.
//! Work per block is proportional to the timers processed, never to the
//! number pending: the walk only ever reads entries it then removes, moves or
//! stops at.

use std::collections::BTreeMap;

use timerhost_state::accounts::{self, Debit};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::timer::{
    GC_CYCLES_PER_DEFERRAL, GC_CYCLES_PER_REMOVAL, GC_RECORD_BYTES_PER_BLOCK,
    GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK, GLOBALBOX_ENQUEUE_PER_BLOCK, TIMER_FIRE_BASE_CYCLES,
};
use timerhost_types::{
    Address, BasefeeConfig, Event, FireDue, FireInfo, Timer, TimerConfig, TimerKind, TimerOrdering,
    TimerStatus,
};

use crate::error::Result;
use crate::events::CancelReason;
use crate::keys::DueQueue;
use crate::keys::{self, missing};
use crate::queue::{self, Queued, RemovalReason};
use crate::record::TimerRecord;
use crate::removal::Removals;
use crate::{control, escrow, events, globalbox, handler, store, watch};

/// How many due entries are read per scan.
const SCAN_CHUNK: usize = 256;

/// An admitted, pre-charged timer fire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fire {
    /// The timer (already removed from the store; a watch stays, with its
    /// fire counted).
    pub timer: Timer,
    /// Why it fires, for `pvm_host.trigger()`.
    pub info: FireInfo,
    /// Handler to invoke.
    pub handler: String,
    /// Bytes delivered to it.
    pub payload: Vec<u8>,
    /// Cycles limit of the handler (`gas_limit_per_fire`).
    pub cycles_limit: u64,
    /// Cycles the fire pays on top ([`TIMER_FIRE_BASE_CYCLES`]).
    pub base_cycles: u64,
    /// Cells limit ([`cells_per_fire`]), held from the block's cells until
    /// the fire has run.
    pub cells_limit: u64,
    /// Cycle basefee of the pre-charge.
    pub cycle_basefee: u128,
    /// Cell basefee of the pre-charge.
    pub cell_basefee: u128,
    /// The bid: tip per handler cycle used, paid to the proposer.
    pub bid: u64,
    /// The pre-charge.
    pub max_cost: u128,
    /// Its global delivery number.
    pub deliver_seq: u64,
}

/// What happened at end of block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeliveryStats {
    /// Fires admitted.
    pub fired: u64,
    /// Timers removed as expired.
    pub expired: u64,
    /// Timers removed for insufficient funds.
    pub unfunded: u64,
    /// Timers removed because their fee payer revoked them.
    pub revoked: u64,
    /// Timers removed by a governance shutdown.
    pub shut_down: u64,
    /// Timers moved to the GC backlog (GC budget spent).
    pub backlogged: u64,
    /// Lane cycles reserved by admitted fires.
    pub lane_reserved: u64,
    /// GC cycles used.
    pub gc_cycles_used: u64,
    /// Did the lane stop admission (timers carried over)?
    pub lane_full: bool,
    /// Did `max_fires_per_block` stop admission (timers carried over)?
    pub fire_quota_full: bool,
    /// Did the block's cells stop admission (#28)? The chain executes what
    /// was admitted, gives back the cells it did not use, and walks on
    /// ([`deliver_more`]); what still does not fit carries over.
    pub cells_full: bool,
    /// State-watch hits evaluated (fired or removed).
    pub watch_hits_evaluated: u64,
    /// Did `max_watch_matches_per_block` leave hits waiting?
    pub watch_quota_full: bool,
    /// The governance status delivery ran under.
    pub status: TimerStatus,
}

/// The outcome of classification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeliveryPlan {
    /// Fires to execute, in order.
    pub fires: Vec<Fire>,
    /// Removal and governance events (`TimerExpired`,
    /// `TimerCancelledInsufficientFunds`, `TimerCancelledPaymentRevoked`,
    /// `TimerCancelled`, `TimersShutdown`), in order.
    pub events: Vec<Event>,
    /// Counters.
    pub stats: DeliveryStats,
}

impl DeliveryPlan {
    /// An empty plan for a walk under governance's current status, and
    /// that status.
    fn under_status(state: &Overlay<'_>) -> Result<(TimerStatus, DeliveryPlan)> {
        let status = control::status(state)?;
        let mut plan = DeliveryPlan::default();
        plan.stats.status = status;
        Ok((status, plan))
    }
}

/// `max_cost` of one fire (§6.3 step 2), its base charge included, plus
/// its bid on `gas_limit` (#18: the bid is a tip per handler cycle); `None`
/// on overflow (treated as unfundable).
pub fn max_cost(
    gas_limit: u64,
    bid: u64,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
) -> Option<u128> {
    (gas_limit as u128 + TIMER_FIRE_BASE_CYCLES as u128)
        .checked_mul(basefee.cycle_basefee)?
        .checked_add((cells_per_fire(config, basefee) as u128).checked_mul(basefee.cell_basefee)?)?
        .checked_add((gas_limit as u128).checked_mul(bid as u128)?)
}

/// The cells limit of every fire: `max_cells_per_fire`, but never more than
/// a whole block may hold (the two are governed apart), so that one fire
/// always fits an empty block (#28).
pub fn cells_per_fire(config: &TimerConfig, basefee: &BasefeeConfig) -> u64 {
    config.max_cells_per_fire.min(basefee.max_block_cells)
}

impl DeliveryStats {
    /// Adds another phase's counters to these (the start and the end of
    /// one block).
    pub fn absorb(&mut self, other: &DeliveryStats) {
        self.fired += other.fired;
        self.expired += other.expired;
        self.unfunded += other.unfunded;
        self.revoked += other.revoked;
        self.shut_down += other.shut_down;
        self.backlogged += other.backlogged;
        self.lane_reserved += other.lane_reserved;
        self.gc_cycles_used += other.gc_cycles_used;
        self.lane_full |= other.lane_full;
        self.cells_full |= other.cells_full;
        self.fire_quota_full |= other.fire_quota_full;
        self.watch_hits_evaluated += other.watch_hits_evaluated;
        self.watch_quota_full |= other.watch_quota_full;
        self.status = other.status;
    }
}

/// What one block may still spend on timers: one lane, one fire quota and
/// one GC budget shared by the start and the end of the block — and the
/// block's cells, which its user transactions spend too (#28).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockBudgets {
    gc_left: u64,
    moves_left: u64,
    /// Record bytes the GC may still remove or move (#29).
    gc_bytes_left: u64,
    /// Record bytes the Globalbox's enqueue may still move (#29).
    enqueue_bytes_left: u64,
    lane_left: u64,
    lane_total: u64,
    fires_left: u64,
    watch_hits_left: u64,
    /// Due timers and hits the Globalbox may still take in this block.
    enqueue_left: u64,
    /// Of `max_block_cells`: what neither a transaction used nor a fire
    /// holds. A fire holds [`cells_per_fire`] from admission until it has
    /// run, then gives back what it did not use.
    cells_left: u64,
    cells_per_fire: u64,
    /// Globalbox entries examined, and fires per target, in this block.
    examined: u64,
    per_target: BTreeMap<Address, u64>,
}

impl BlockBudgets {
    /// A fresh block's budgets under `config` and `basefee`.
    pub fn new(config: &TimerConfig, basefee: &BasefeeConfig) -> BlockBudgets {
        BlockBudgets {
            gc_left: config.gc_cycles_per_block,
            moves_left: config.gc_cycles_per_block / GC_CYCLES_PER_DEFERRAL,
            gc_bytes_left: GC_RECORD_BYTES_PER_BLOCK,
            enqueue_bytes_left: GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK,
            lane_left: config.lane_cycles_per_block,
            lane_total: config.lane_cycles_per_block,
            fires_left: config.max_fires_per_block,
            watch_hits_left: config.max_watch_matches_per_block,
            enqueue_left: GLOBALBOX_ENQUEUE_PER_BLOCK,
            cells_left: basefee.max_block_cells,
            cells_per_fire: cells_per_fire(config, basefee),
            examined: 0,
            per_target: BTreeMap::new(),
        }
    }

    /// Cells of the block neither used nor held: what a transaction may
    /// still ask for.
    pub fn cells_left(&self) -> u64 {
        self.cells_left
    }

    /// A transaction used `cells` of the block.
    pub fn spend_cells(&mut self, cells: u64) {
        self.cells_left = self.cells_left.saturating_sub(cells);
    }

    /// May the GC still remove (or move) a record of `bytes`? Its cycles
    /// for one removal, and its record bytes (#29) — a whole budget always
    /// takes one record, so a record larger than the budget still goes.
    fn gc_fits(&self, bytes: u64) -> bool {
        self.gc_left >= GC_CYCLES_PER_REMOVAL && self.gc_bytes_fit(bytes)
    }

    fn gc_bytes_fit(&self, bytes: u64) -> bool {
        bytes <= self.gc_bytes_left || self.gc_bytes_left == GC_RECORD_BYTES_PER_BLOCK
    }

    /// The GC removed a record of `bytes`.
    fn spend_removal(&mut self, bytes: u64) {
        self.gc_left -= GC_CYCLES_PER_REMOVAL;
        self.gc_bytes_left = self.gc_bytes_left.saturating_sub(bytes);
    }

    /// The GC moved a record of `bytes` to the backlog.
    fn spend_move(&mut self, bytes: u64) {
        self.moves_left -= 1;
        self.gc_bytes_left = self.gc_bytes_left.saturating_sub(bytes);
    }

    /// May the Globalbox still take a record (or watch) of `bytes`?
    fn enqueue_fits(&self, bytes: u64) -> bool {
        bytes <= self.enqueue_bytes_left
            || self.enqueue_bytes_left == GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK
    }

    /// The Globalbox took a record (or watch hit) of `bytes`.
    fn spend_enqueue(&mut self, bytes: u64) {
        self.enqueue_bytes_left = self.enqueue_bytes_left.saturating_sub(bytes);
    }

    /// A fire that held `held` cells used `used` of them: the rest is free
    /// again.
    pub fn settle_fire_cells(&mut self, held: u64, used: u64) {
        self.cells_left += held.saturating_sub(used);
    }
}

type Budgets = BlockBudgets;

/// Bytes of `record`'s canonical encoding (what reading, hashing and
/// rewriting it touch), counted without encoding it.
fn record_len(record: &TimerRecord) -> u64 {
    1 + borsh::object_length(record).expect("an in-memory record always encodes") as u64
}

/// Bytes stored at `key` (0 if nothing), read without copying them.
fn stored_len(state: &Overlay<'_>, key: &[u8]) -> Result<u64> {
    Ok(state.get_head(key, 0)?.map_or(0, |(_, len)| len as u64))
}

fn remove_for(
    state: &mut Overlay<'_>,
    record: &TimerRecord,
    queued: Queued,
    reason: &RemovalReason,
    height: u64,
    plan: &mut DeliveryPlan,
    removals: &mut Removals,
) -> Result<()> {
    store::remove_deferred(state, record, queued, removals)?;
    let timer = &record.timer;
    plan.stats.gc_cycles_used += GC_CYCLES_PER_REMOVAL;
    match reason {
        RemovalReason::Expired { .. } => {
            plan.stats.expired += 1;
            plan.events.push(events::timer_expired(timer, height));
        }
        RemovalReason::InsufficientFunds {
            required,
            available,
        } => {
            plan.stats.unfunded += 1;
            plan.events
                .push(events::timer_unfunded(timer, *required, *available));
        }
        RemovalReason::PaymentRevoked => {
            plan.stats.revoked += 1;
            plan.events.push(events::timer_payment_revoked(timer));
        }
    }
    Ok(())
}

/// Revocation marks read during one delivery, by fee payer.
#[derive(Default)]
struct RevocationMarks(BTreeMap<Address, u64>);

impl RevocationMarks {
    fn revoked(&mut self, state: &Overlay<'_>, timer: &Timer) -> Result<bool> {
        let mark = match self.0.get(&timer.fee_payer) {
            Some(mark) => *mark,
            None => {
                let mark = control::revoked_before(state, &timer.fee_payer)?;
                self.0.insert(timer.fee_payer, mark);
                mark
            }
        };
        Ok(timer.seq < mark)
    }
}

/// The start of block `height`: classifies and pre-charges the time timers
/// due at or before `timestamp_ms`, under `budgets` (which the end of the
/// block goes on spending).
pub fn deliver_time(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    height: u64,
    timestamp_ms: u64,
    budgets: &mut BlockBudgets,
) -> Result<DeliveryPlan> {
    let (status, mut plan) = DeliveryPlan::under_status(state)?;
    // Only an active scheduler fires; a shutdown removes time timers at the
    // end of the block with everything else. Under priority ordering every
    // kind is materialised from the Globalbox at the end, and after a switch
    // back to FIFO the Globalbox drains before FIFO's placement resumes.
    if status != TimerStatus::Active
        || config.ordering == TimerOrdering::Priority
        || !globalbox::is_empty(state)?
    {
        return Ok(plan);
    }
    let mut removals = Removals::default();
    let mut walk = Walk::new(config, basefee, height, budgets, &mut plan, &mut removals);
    walk.queue(state, DueQueue::Time, timestamp_ms)?;
    removals.apply(state)?;
    Ok(plan)
}

/// The end of block `height` (§5.1 steps 2–4): the GC backlog, the due
/// height timers, then the state watches — the hits of `written` (the
/// storage keys the block's committed executions wrote so far, sorted by
/// actor and key; see [`watch::storage_writes`]) join the waiting hits,
/// which are evaluated in order — and the expired watches, all under
/// `budgets`.
#[allow(clippy::too_many_arguments)]
pub fn deliver(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    height: u64,
    timestamp_ms: u64,
    written: &[(Address, Vec<u8>)],
    budgets: &mut BlockBudgets,
) -> Result<DeliveryPlan> {
    let (status, mut plan) = DeliveryPlan::under_status(state)?;
    if status == TimerStatus::Shutdown {
        return Ok(plan);
    }
    queue_watch_hits(state, status, written, height)?;
    if status == TimerStatus::Paused {
        return Ok(plan);
    }
    // Index entries of removed timers, applied once at the end: the walk
    // below only moves forward (cursors), so it never needs them gone.
    let mut removals = Removals::default();

    // The GC backlog first: it holds timers classified in earlier blocks.
    // Both walks resume from where the last chunk ended (see `DueCursor`).
    let mut backlog_cursor = 0u64;
    let mut backlog_cleared = true;
    'backlog: loop {
        let entries = queue::backlog_from(state, backlog_cursor, SCAN_CHUNK)?;
        if entries.is_empty() {
            break;
        }
        for (seq, entry) in entries {
            backlog_cursor = seq.saturating_add(1);
            let record_key = keys::backlog_record_key(seq);
            if !budgets.gc_fits(stored_len(state, &record_key)?) {
                backlog_cleared = false;
                break 'backlog;
            }
            let record = state
                .get_decoded::<TimerRecord>(&record_key)?
                .ok_or_else(|| missing("timer GC entry", &entry.timer_id))?;
            remove_for(
                state,
                &record,
                Queued::Backlog,
                &entry.reason,
                height,
                &mut plan,
                &mut removals,
            )?;
            budgets.spend_removal(record_len(&record));
        }
    }

    if status == TimerStatus::ShuttingDown {
        shut_down(state, backlog_cleared, budgets, &mut plan, &mut removals)?;
        removals.apply(state)?;
        return Ok(plan);
    }

    let mut walk = Walk::new(config, basefee, height, budgets, &mut plan, &mut removals);
    if config.ordering == TimerOrdering::Priority {
        walk.enqueue(state, timestamp_ms)?;
    }
    walk.due(state)?;
    walk.expired(state)?;
    removals.apply(state)?;
    Ok(plan)
}

/// Resumes the end of block `height`'s walk after the block's cells
/// stopped it ([`DeliveryStats::cells_full`]) and the fires it admitted ran
/// and gave back what they did not use: the Globalbox, the due height
/// timers and the waiting watch hits, in the same order and under the same
/// budgets as [`deliver`] — whose once-a-block work (the backlog, the
/// Globalbox enqueue, the watch hits of the block's writes, expiries) is
/// not repeated.
pub fn deliver_more(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    height: u64,
    budgets: &mut BlockBudgets,
) -> Result<DeliveryPlan> {
    let (status, mut plan) = DeliveryPlan::under_status(state)?;
    if status != TimerStatus::Active {
        return Ok(plan);
    }
    let mut removals = Removals::default();
    let mut walk = Walk::new(config, basefee, height, budgets, &mut plan, &mut removals);
    walk.due(state)?;
    removals.apply(state)?;
    Ok(plan)
}

/// Queues the watch hits of `written` (storage keys written by committed
/// executions, sorted) to be evaluated from block `height` on. A hit is
/// recorded even while timers are paused — it fires once they resume — but
/// not while they shut down. The end of block calls this for the keys its
/// fires and hooks wrote, with the next height ([`deliver`] does it for the
/// keys written before).
pub fn queue_end_of_block_writes(
    state: &mut Overlay<'_>,
    written: &[(Address, Vec<u8>)],
    height: u64,
) -> Result<()> {
    // Even with nothing written: matching left unfinished by the block's
    // first pass goes on (#29).
    let status = control::status(state)?;
    queue_watch_hits(state, status, written, height)
}

fn queue_watch_hits(
    state: &mut Overlay<'_>,
    status: TimerStatus,
    written: &[(Address, Vec<u8>)],
    height: u64,
) -> Result<()> {
    if matches!(status, TimerStatus::ShuttingDown | TimerStatus::Shutdown) {
        return Ok(());
    }
    watch::queue_hits(state, written, height)?;
    Ok(())
}

/// What a walk over due timers decided for one of them.
enum Verdict {
    /// Remove it (or move it to the backlog) for this reason.
    Remove(RemovalReason),
    /// It cannot fire in this block: stop, everything behind it waits.
    Stop,
    /// Fire it, pre-charging this much.
    Fire(u128),
}

/// One walk's state: the budgets it spends and the plan it fills.
struct Walk<'w> {
    config: &'w TimerConfig,
    basefee: &'w BasefeeConfig,
    height: u64,
    budgets: &'w mut BlockBudgets,
    plan: &'w mut DeliveryPlan,
    removals: &'w mut Removals,
    marks: RevocationMarks,
}

impl<'w> Walk<'w> {
    fn new(
        config: &'w TimerConfig,
        basefee: &'w BasefeeConfig,
        height: u64,
        budgets: &'w mut BlockBudgets,
        plan: &'w mut DeliveryPlan,
        removals: &'w mut Removals,
    ) -> Self {
        Walk {
            config,
            basefee,
            height,
            budgets,
            plan,
            removals,
            marks: RevocationMarks::default(),
        }
    }

    /// Classifies `timer` (§5.4's removal paths, then the fire quota and
    /// the lane). A timer that stays after firing (a watch) keeps its
    /// deposit, so only the balance pays its fire; a leaving timer's
    /// deposit comes back first and counts.
    fn classify(&mut self, state: &Overlay<'_>, timer: &Timer, stays: bool) -> Result<Verdict> {
        let required = max_cost(
            timer.gas_limit_per_fire,
            timer.bid,
            self.config,
            self.basefee,
        );
        if self.marks.revoked(state, timer)? {
            return Ok(Verdict::Remove(RemovalReason::PaymentRevoked));
        }
        if self.height > timer.expires_at {
            return Ok(Verdict::Remove(RemovalReason::Expired {
                classified_at: self.height,
            }));
        }
        let returning = if stays { 0 } else { timer.deposit };
        let balance = accounts::load(state, &timer.fee_payer)?.balance;
        let mut available = balance.saturating_add(returning);
        // #19: an escrow-funded timer must also be covered by its escrow.
        // A key holding no int covers nothing (#28): the deposit coming back
        // is not added to it and no pre-charge can be held there, so a fire
        // admitted on the deposit alone could never be paid for.
        if let Some(key) = &timer.escrow_key {
            let covered = match escrow::read(state, &timer.actor_address, key)? {
                Some(escrowed) => escrowed.saturating_add(returning),
                None => 0,
            };
            available = available.min(covered);
        }
        let required = match required {
            Some(r) if available >= r => r,
            _ => {
                return Ok(Verdict::Remove(RemovalReason::InsufficientFunds {
                    required: required.unwrap_or(u128::MAX),
                    available,
                }))
            }
        };
        // CIP-5 §8: at most max_fires_per_block fires per block.
        if self.budgets.fires_left == 0 {
            self.plan.stats.fire_quota_full = true;
            return Ok(Verdict::Stop);
        }
        // §6.5 lane: reserve gas_limit_per_fire plus the base charge. A
        // timer larger than the whole lane (possible after governance
        // shrank it) is admitted alone at the head of an empty lane so that
        // it cannot block the queue forever.
        let reserve = timer.gas_limit_per_fire + TIMER_FIRE_BASE_CYCLES;
        let budgets = &*self.budgets;
        if reserve > budgets.lane_left && budgets.lane_left != budgets.lane_total {
            self.plan.stats.lane_full = true;
            return Ok(Verdict::Stop);
        }
        // #28: the block's cells, transactions and every fire together,
        // never pass `max_block_cells`; a fire holds its whole cells limit
        // until it has run.
        if budgets.cells_per_fire > budgets.cells_left {
            self.plan.stats.cells_full = true;
            return Ok(Verdict::Stop);
        }
        Ok(Verdict::Fire(required))
    }

    /// Removes a classified timer under the GC budget, or moves it to the
    /// backlog; `false` when neither budget is left (the walk stops).
    fn remove(
        &mut self,
        state: &mut Overlay<'_>,
        record: &TimerRecord,
        from: Queued,
        reason: RemovalReason,
    ) -> Result<bool> {
        let bytes = record_len(record);
        if self.budgets.gc_fits(bytes) {
            remove_for(
                state,
                record,
                from,
                &reason,
                self.height,
                self.plan,
                self.removals,
            )?;
            self.budgets.spend_removal(bytes);
        } else if self.budgets.moves_left > 0 && self.budgets.gc_bytes_fit(bytes) {
            queue::move_to_backlog(state, record, from, reason, self.removals)?;
            self.budgets.spend_move(bytes);
            self.plan.stats.backlogged += 1;
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    /// Pre-charges an admitted fire and adds it to the plan.
    fn fire(
        &mut self,
        state: &mut Overlay<'_>,
        timer: Timer,
        max_cost: u128,
        info: FireInfo,
        payload: Vec<u8>,
    ) -> Result<()> {
        // `classify` checked both the balance and the escrow just before,
        // and no actor code runs between it and here (fires execute after
        // the whole walk), so neither debit can fall short unless this
        // crate's own bookkeeping is broken: that is no actor's doing.
        let short = |what: &'static str, available: u128| timerhost_state::StorageError::Corrupt {
            what,
            key: timer.timer_id.to_hex(),
            reason: format!(
                "{available} changed between the check and the pre-charge of {max_cost}"
            ),
        };
        if let Debit::Insufficient { available } =
            accounts::debit(state, &timer.fee_payer, max_cost)?
        {
            return Err(short("fee payer balance", available));
        }
        // #28: an escrow-funded fire's pre-charge leaves its escrow too, so
        // nothing the escrow's owner does before the fire settles (cancel a
        // job, pay it out) can spend it twice.
        if let Some(key) = &timer.escrow_key {
            if let Debit::Insufficient { available } =
                escrow::hold(state, &timer.actor_address, key, max_cost)?
            {
                return Err(short("escrow", available));
            }
        }
        let reserve = timer.gas_limit_per_fire + TIMER_FIRE_BASE_CYCLES;
        self.budgets.lane_left = self.budgets.lane_left.saturating_sub(reserve);
        self.budgets.fires_left -= 1;
        self.budgets.cells_left -= self.budgets.cells_per_fire;
        let deliver_seq = store::read_u64(state, &keys::next_delivery_key())?;
        state.put(
            keys::next_delivery_key(),
            (deliver_seq + 1).to_be_bytes().to_vec(),
        );
        self.plan.stats.lane_reserved += reserve;
        self.plan.stats.fired += 1;
        self.plan.fires.push(Fire {
            handler: timer.handler.clone(),
            payload,
            cycles_limit: timer.gas_limit_per_fire,
            base_cycles: TIMER_FIRE_BASE_CYCLES,
            cells_limit: self.budgets.cells_per_fire,
            cycle_basefee: self.basefee.cycle_basefee,
            cell_basefee: self.basefee.cell_basefee,
            bid: timer.bid,
            max_cost,
            deliver_seq,
            info,
            timer,
        });
        Ok(())
    }

    /// How many due entries to read at once: a chunk, but no more than the
    /// block's cells could still admit (plus the one that stops the walk).
    /// A walk the cells interrupt resumes in another round, so reading a
    /// whole chunk each time would decode most entries many times over.
    fn chunk(&self) -> usize {
        let room = self.budgets.cells_left / self.budgets.cells_per_fire.max(1);
        usize::try_from(room)
            .unwrap_or(usize::MAX)
            .saturating_add(1)
            .min(SCAN_CHUNK)
    }

    /// The end of the block's walk over what is due: the Globalbox under
    /// priority ordering; under FIFO the Globalbox drains first (back from
    /// priority, in its order), then the due height timers and the waiting
    /// watch hits.
    fn due(&mut self, state: &mut Overlay<'_>) -> Result<()> {
        let drained = self.materialize(state)?;
        if self.config.ordering == TimerOrdering::Fifo && drained {
            self.queue(state, DueQueue::Height, self.height)?;
            self.watch_hits(state)?;
        }
        Ok(())
    }

    /// Walks `queue` in order through `through` (a height or unix ms),
    /// strictly FIFO: the first timer that cannot fire stops the walk.
    fn queue(&mut self, state: &mut Overlay<'_>, due: DueQueue, through: u64) -> Result<()> {
        let mut cursor = queue::DueCursor::start(due);
        loop {
            let entries = queue::due_from(state, cursor, through, self.chunk())?;
            if entries.is_empty() {
                return Ok(());
            }
            for record in entries {
                let bucket = crate::record::bucket_of(&record.timer)
                    .expect("a queued record is a height or time timer");
                cursor = queue::DueCursor::after(bucket, &record.timer);
                match self.classify(state, &record.timer, false)? {
                    Verdict::Remove(reason) => {
                        if !self.remove(state, &record, Queued::Due, reason)? {
                            return Ok(());
                        }
                    }
                    Verdict::Stop => return Ok(()),
                    Verdict::Fire(max_cost) => {
                        self.fire_one_shot(state, record, Queued::Due, max_cost)?;
                    }
                }
            }
        }
    }

    /// Evaluates waiting watch hits in (height, watch) order, at most
    /// `max_watch_matches_per_block` per block. A hit on a watch that can
    /// fire fires it (the watch stays, its fire counted); one that must go
    /// is removed; one the lane or the fire quota cannot take waits.
    fn watch_hits(&mut self, state: &mut Overlay<'_>) -> Result<()> {
        loop {
            let limit = usize::try_from(self.budgets.watch_hits_left)
                .unwrap_or(usize::MAX)
                .min(self.chunk());
            if limit == 0 {
                // Only a quota that leaves hits behind is "full".
                self.plan.stats.watch_quota_full =
                    !watch::waiting(state, self.height, 1)?.is_empty();
                return Ok(());
            }
            let hits = watch::waiting(state, self.height, limit)?;
            if hits.is_empty() {
                return Ok(());
            }
            for (_, seq, hit) in hits {
                let record = watch_record(state, seq)?;
                match self.classify(state, &record.timer, true)? {
                    Verdict::Remove(reason) => {
                        if !self.remove(state, &record, Queued::Due, reason)? {
                            return Ok(());
                        }
                    }
                    Verdict::Stop => return Ok(()),
                    Verdict::Fire(max_cost) => {
                        self.fire_watch(state, record, hit.matched_keys, max_cost)?;
                    }
                }
                self.budgets.watch_hits_left -= 1;
                self.plan.stats.watch_hits_evaluated += 1;
            }
        }
    }

    /// Fires a height or time timer queued at `from`: it leaves the store
    /// first (its deposit is part of what pays), then its handler runs once.
    fn fire_one_shot(
        &mut self,
        state: &mut Overlay<'_>,
        record: TimerRecord,
        from: Queued,
        max_cost: u128,
    ) -> Result<()> {
        store::remove_deferred(state, &record, from, self.removals)?;
        let timer = record.timer;
        let due = match timer.kind {
            TimerKind::Time { timestamp_ms } => FireDue::Time(timestamp_ms),
            _ => FireDue::Height(timer.height),
        };
        let resolved = handler::resolve(&timer.payload).unwrap_or(handler::Resolved {
            handler: timer.handler.clone(),
            payload: timer.payload.clone(),
        });
        let info = FireInfo {
            timer_id: timer.timer_id,
            fire_seq: 1,
            due,
            escrow_key: timer.escrow_key.clone(),
        };
        self.fire(state, timer, max_cost, info, resolved.payload)
    }

    /// Fires watch `record` for a hit that matched `matched_keys`: its hit
    /// leaves (waiting or queued), its fire count grows, the watch stays.
    fn fire_watch(
        &mut self,
        state: &mut Overlay<'_>,
        record: TimerRecord,
        matched_keys: Vec<Vec<u8>>,
        max_cost: u128,
    ) -> Result<()> {
        watch::drop_hit(state, record.timer.seq)?;
        let mut after = record.clone();
        let TimerKind::State(w) = &mut after.timer.kind else {
            let key = keys::watch_record_key(record.timer.seq);
            return Err(keys::corrupt("watch record", &key, "not a watch"));
        };
        w.fires += 1;
        let fire_seq = w.fires;
        store::update(state, &record.timer, &after)?;
        let info = FireInfo {
            timer_id: after.timer.timer_id,
            fire_seq,
            due: FireDue::State(matched_keys),
            escrow_key: after.timer.escrow_key.clone(),
        };
        let payload = after.timer.payload.clone();
        self.fire(state, after.timer, max_cost, info, payload)
    }

    /// Priority ordering's enqueue (§7): the due height and time timers and
    /// the waiting watch hits join the Globalbox — at most
    /// [`GLOBALBOX_ENQUEUE_PER_BLOCK`] per block, each queue in its own
    /// order, so the work stays bounded; the rest join in later blocks,
    /// their priority (which counts from their due height) unharmed.
    fn enqueue(&mut self, state: &mut Overlay<'_>, timestamp_ms: u64) -> Result<()> {
        let mut left = usize::try_from(self.budgets.enqueue_left).unwrap_or(usize::MAX);
        // #29: and at most GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK bytes of
        // records, each record's length read before the record itself.
        let mut full = false;
        for (due, through) in [
            (DueQueue::Time, timestamp_ms),
            (DueQueue::Height, self.height),
        ] {
            let mut cursor = queue::DueCursor::start(due);
            'queue: while !full {
                if left == 0 {
                    full = true;
                    break;
                }
                let record_keys =
                    queue::due_keys_from(state, cursor, through, left.min(SCAN_CHUNK))?;
                if record_keys.is_empty() {
                    break;
                }
                for key in record_keys {
                    let bytes = stored_len(state, &key)?;
                    if left == 0 || !self.budgets.enqueue_fits(bytes) {
                        full = true;
                        break 'queue;
                    }
                    let record = state
                        .get_decoded::<TimerRecord>(&key)?
                        .ok_or_else(|| keys::corrupt("timer queue", &key, "vanished"))?;
                    let bucket = crate::record::bucket_of(&record.timer)
                        .expect("a queued record is a height or time timer");
                    cursor = queue::DueCursor::after(bucket, &record.timer);
                    // A time timer became due at the first block reaching
                    // its time: a crowded earlier block may have left it
                    // behind.
                    let due_height = match due {
                        DueQueue::Height => record.timer.height,
                        DueQueue::Time => match record.timer.kind {
                            TimerKind::Time { timestamp_ms } => {
                                globalbox::came_due_at(state, timestamp_ms, self.height)?
                            }
                            _ => self.height,
                        },
                    };
                    globalbox::enqueue_timer(
                        state,
                        self.config,
                        &record,
                        due_height,
                        self.height,
                        self.removals,
                    )?;
                    left -= 1;
                    self.budgets.spend_enqueue(bytes);
                }
            }
            if due == DueQueue::Time {
                let behind = full && !queue::due_keys_from(state, cursor, through, 1)?.is_empty();
                if behind {
                    globalbox::mark_time_lag(state, timestamp_ms, self.height);
                } else {
                    globalbox::clear_time_lag(state)?;
                }
            }
        }
        if left > 0 && !full {
            let hits = watch::waiting(state, self.height, left)?;
            for (hit_height, seq, hit) in hits {
                let key = keys::watch_record_key(seq);
                let bytes = stored_len(state, &key)?;
                if !self.budgets.enqueue_fits(bytes) {
                    break;
                }
                let record = watch_record(state, seq)?;
                globalbox::enqueue_hit(
                    state,
                    self.config,
                    &record.timer,
                    hit,
                    hit_height,
                    self.height,
                );
                left -= 1;
                self.budgets.spend_enqueue(bytes);
            }
        }
        self.budgets.enqueue_left = left as u64;
        Ok(())
    }

    /// Materialise from the Globalbox's head (§8.3 step 2, §9): each entry
    /// is judged now (revoked, expired, unfunded → removed), then fires if
    /// its target is under `max_fires_per_target` (else it keeps its place)
    /// and the block's fire quota and lane have room (else materialising
    /// stops: strict order). At most `2 × max_fires_per_block` entries are
    /// examined per block. Returns whether the Globalbox is now empty.
    fn materialize(&mut self, state: &mut Overlay<'_>) -> Result<bool> {
        let bound = self
            .config
            .max_fires_per_block
            .saturating_mul(2)
            .max(SCAN_CHUNK as u64);
        let mut skipped = false;
        let mut cursor: Option<Vec<u8>> = None;
        loop {
            let entries = globalbox::entries_from(state, cursor.as_deref(), self.chunk())?;
            if entries.is_empty() {
                return Ok(!skipped);
            }
            for (key, entry) in entries {
                // Counted for the whole block: a walk resumed after the
                // block's cells freed up examines no entry twice for free.
                self.budgets.examined += 1;
                if self.budgets.examined > bound {
                    return Ok(false);
                }
                let mut next = key;
                next.push(0);
                cursor = Some(next);
                let record = globalbox::record_of(state, &entry)?;
                let from = if entry.is_watch() {
                    Queued::Due
                } else {
                    Queued::Globalbox
                };
                match self.classify(state, &record.timer, entry.is_watch())? {
                    Verdict::Remove(reason) => {
                        if !self.remove(state, &record, from, reason)? {
                            return Ok(false);
                        }
                    }
                    Verdict::Stop => return Ok(false),
                    Verdict::Fire(max_cost) => {
                        let fired = self.budgets.per_target.entry(entry.actor).or_default();
                        if *fired >= self.config.max_fires_per_target {
                            skipped = true;
                            continue;
                        }
                        *fired += 1;
                        match entry.matched_keys {
                            Some(matched) => self.fire_watch(state, record, matched, max_cost)?,
                            None => self.fire_one_shot(state, record, from, max_cost)?,
                        }
                    }
                }
            }
        }
    }

    /// Removes time timers and watches whose TTL ran out before they came
    /// due (or were hit), soonest first, under the GC budget: they must
    /// still leave and return their deposit ([`crate::expiry`]).
    fn expired(&mut self, state: &mut Overlay<'_>) -> Result<()> {
        loop {
            let room = self.budgets.gc_left / GC_CYCLES_PER_REMOVAL;
            let limit = usize::try_from(room).unwrap_or(usize::MAX).min(SCAN_CHUNK);
            if limit == 0 {
                return Ok(());
            }
            let record_keys = crate::expiry::expired(state, self.height, limit)?;
            if record_keys.is_empty() {
                return Ok(());
            }
            for key in record_keys {
                if !self.budgets.gc_fits(stored_len(state, &key)?) {
                    return Ok(());
                }
                let record = state
                    .get_decoded::<TimerRecord>(&key)?
                    .ok_or_else(|| keys::corrupt("timer expiry", &key, "names no timer"))?;
                let reason = RemovalReason::Expired {
                    classified_at: self.height,
                };
                remove_for(
                    state,
                    &record,
                    Queued::Due,
                    &reason,
                    self.height,
                    self.plan,
                    self.removals,
                )?;
                self.budgets.spend_removal(record_len(&record));
            }
        }
    }
}

/// The record of watch `seq`.
fn watch_record(state: &Overlay<'_>, seq: u64) -> Result<TimerRecord> {
    let key = keys::watch_record_key(seq);
    state
        .get_decoded::<TimerRecord>(&key)?
        .ok_or_else(|| keys::corrupt("watch hit", &key, "names no watch"))
}

/// One block of a governance shutdown: removes queued timers — due or not,
/// in queue order — under the GC budget, each with its deposit refunded and
/// `TimerCancelled {reason: "shutdown"}`. Once none is left (and the backlog
/// is clear), the status becomes `Shutdown` with `TimersShutdown {complete:
/// true}`.
fn shut_down(
    state: &mut Overlay<'_>,
    backlog_cleared: bool,
    budget: &mut Budgets,
    plan: &mut DeliveryPlan,
    removals: &mut Removals,
) -> Result<()> {
    // The Globalbox's timers, time timers, height timers, then watches
    // (whose queued hits leave with them): each in its own order.
    let globalbox = (keys::GLOBALBOX_RECORD, Queued::Globalbox);
    if !shut_all(state, globalbox, budget, plan, removals)? {
        return Ok(());
    }
    for due in [DueQueue::Time, DueQueue::Height] {
        let mut cursor = queue::DueCursor::start(due);
        loop {
            let entries = queue::due_from(state, cursor, u64::MAX, SCAN_CHUNK)?;
            if entries.is_empty() {
                break;
            }
            for record in entries {
                if !budget.gc_fits(record_len(&record)) {
                    return Ok(());
                }
                let bucket = crate::record::bucket_of(&record.timer).expect("a queued timer");
                cursor = queue::DueCursor::after(bucket, &record.timer);
                shut_one(state, &record, Queued::Due, budget, plan, removals)?;
            }
        }
    }
    if !shut_all(
        state,
        (keys::WATCH_RECORD, Queued::Due),
        budget,
        plan,
        removals,
    )? {
        return Ok(());
    }
    if backlog_cleared {
        control::set_status(state, TimerStatus::Shutdown);
        plan.stats.status = TimerStatus::Shutdown;
        plan.events.push(events::timers_shutdown(true));
    }
    Ok(())
}

/// Shuts down every record under `prefix` (queued at `from`), in key
/// order; `false` when the GC budget ran out first.
fn shut_all(
    state: &mut Overlay<'_>,
    (prefix, from): (keys::Prefix, Queued),
    budget: &mut Budgets,
    plan: &mut DeliveryPlan,
    removals: &mut Removals,
) -> Result<bool> {
    let mut start = prefix.to_vec();
    let end = keys::end_of(prefix);
    loop {
        let page = StateRead::scan(&*state, &start, Some(&end), SCAN_CHUNK)?;
        if page.is_empty() {
            return Ok(true);
        }
        for (k, v) in page {
            if !budget.gc_fits(v.len() as u64) {
                return Ok(false);
            }
            let record = crate::record::decode_record(&k, &v)?;
            start = k;
            start.push(0);
            shut_one(state, &record, from, budget, plan, removals)?;
        }
    }
}

fn shut_one(
    state: &mut Overlay<'_>,
    record: &TimerRecord,
    from: Queued,
    budget: &mut Budgets,
    plan: &mut DeliveryPlan,
    removals: &mut Removals,
) -> Result<()> {
    store::remove_deferred(state, record, from, removals)?;
    budget.spend_removal(record_len(record));
    plan.stats.gc_cycles_used += GC_CYCLES_PER_REMOVAL;
    plan.stats.shut_down += 1;
    plan.events.push(events::timer_cancelled(
        &record.timer,
        CancelReason::Shutdown,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{self, HostCaller};
    use timerhost_state::EmptyState;
    use timerhost_types::timer::{GC_RECORD_BYTES_PER_BLOCK, GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK};
    use timerhost_types::{Hash, RequestedTrigger, TimerRequest};

    const ACTOR: Address = Address([7; 20]);

    /// 600 height timers at height 5 with 100 KB payloads, paid by an
    /// empty account (so every one is unfunded when due); returns the
    /// payload's size (each record is a little larger).
    fn big_unfunded_timers(state: &mut Overlay<'_>) -> u64 {
        const PAYLOAD_BYTES: usize = 100_000;
        for seq in 0..600u64 {
            let mut id = [0u8; 32];
            id[..8].copy_from_slice(&seq.to_be_bytes());
            let timer = Timer {
                actor_address: ACTOR,
                height: 5,
                payload: vec![1; PAYLOAD_BYTES],
                timer_id: Hash(id),
                handler: "handle_timer".into(),
                fee_payer: Address([8; 20]),
                gas_limit_per_fire: 1_000,
                expires_at: 100,
                seq,
                deposit: 0,
                bid: 0,
                kind: TimerKind::Height,
                escrow_key: None,
            };
            store::insert(state, &timer).unwrap();
        }
        PAYLOAD_BYTES as u64
    }

    fn still_due(state: &Overlay<'_>) -> usize {
        queue::due_from(state, queue::DueCursor::start(DueQueue::Height), 5, 1_000)
            .unwrap()
            .len()
    }

    /// #29: a block's GC moves and removes records by the byte, not only by
    /// the count: 600 unfunded timers of 100 KB (60 MB) fit the GC budget's
    /// count (5,000 removals) but not its bytes; the rest go in later
    /// blocks, each exactly once.
    #[test]
    fn gc_work_per_block_is_bounded_by_the_bytes_it_moves() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let each = big_unfunded_timers(&mut state);
        let config = TimerConfig::default();
        let basefee = BasefeeConfig::default();
        let mut removed = 0;
        for height in 5..20 {
            let mut budgets = BlockBudgets::new(&config, &basefee);
            let plan =
                deliver(&mut state, &config, &basefee, height, 0, &[], &mut budgets).unwrap();
            let touched = plan.stats.unfunded + plan.stats.backlogged;
            assert!(
                touched * each <= GC_RECORD_BYTES_PER_BLOCK + each,
                "block {height} moved {touched} records of {each} bytes"
            );
            removed += plan.stats.unfunded;
        }
        assert_eq!(removed, 600);
        assert_eq!(still_due(&state), 0);
        assert!(queue::backlog(&state, 10).unwrap().is_empty());
    }

    /// #29: the Globalbox's enqueue is bounded by the bytes of the records
    /// it moves, not only by their count (50,000 a block).
    #[test]
    fn globalbox_enqueue_per_block_is_bounded_by_the_bytes_it_moves() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let each = big_unfunded_timers(&mut state);
        let config = TimerConfig {
            ordering: TimerOrdering::Priority,
            ..TimerConfig::default()
        };
        let basefee = BasefeeConfig::default();
        let mut budgets = BlockBudgets::new(&config, &basefee);
        deliver(&mut state, &config, &basefee, 5, 0, &[], &mut budgets).unwrap();
        let moved = (600 - still_due(&state)) as u64;
        assert!(
            moved > 0 && moved * each <= GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK + each,
            "{moved} records of {each} bytes enqueued in one block"
        );
        for height in 6..30 {
            let mut budgets = BlockBudgets::new(&config, &basefee);
            deliver(&mut state, &config, &basefee, height, 0, &[], &mut budgets).unwrap();
        }
        assert_eq!(still_due(&state), 0);
        assert!(globalbox::entries_from(&state, None, 10)
            .unwrap()
            .is_empty());
    }

    /// Times the end of block over 600 unfunded 100 KB timers, under FIFO
    /// (the GC removes and moves them) and under priority (the Globalbox
    /// enqueues them first): #29's figures for docs/PERFORMANCE.md.
    /// `cargo test --release --ignore-rust-version -p timerhost-timers --lib
    /// -- --ignored --nocapture measure_big_records`
    #[test]
    #[ignore]
    fn measure_big_records_under_gc_and_enqueue() {
        for ordering in [TimerOrdering::Fifo, TimerOrdering::Priority] {
            let empty = EmptyState;
            let mut state = Overlay::new(&empty);
            big_unfunded_timers(&mut state);
            let config = TimerConfig {
                ordering,
                ..TimerConfig::default()
            };
            let basefee = BasefeeConfig::default();
            let mut budgets = BlockBudgets::new(&config, &basefee);
            let t = std::time::Instant::now();
            let plan = deliver(&mut state, &config, &basefee, 5, 0, &[], &mut budgets).unwrap();
            let elapsed = t.elapsed();
            println!(
                "{ordering:?}: first block {:.1} ms, {} removed, {} backlogged, {} still due",
                elapsed.as_secs_f64() * 1e3,
                plan.stats.unfunded,
                plan.stats.backlogged,
                still_due(&state)
            );
        }
    }

    /// #28 bug 7: a time timer that a crowded block's Globalbox enqueue
    /// left behind keeps the age it had from the block that reached its
    /// time, not from the block that finally enqueued it.
    #[test]
    fn a_time_timer_enqueued_late_keeps_its_age() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        accounts::credit(&mut state, &ACTOR, 10u128.pow(30)).unwrap();
        // One target, one fire per block: entries wait in the Globalbox
        // where their due height can be read.
        let config = TimerConfig {
            ordering: TimerOrdering::Priority,
            max_fires_per_target: 1,
            ..TimerConfig::default()
        };
        let basefee = BasefeeConfig::default();
        let caller = HostCaller {
            actor: ACTOR,
            tx_sender: ACTOR,
            height: 1,
            timestamp_ms: 1_000,
            nested: false,
        };
        for payload in [b"a", b"b", b"c"] {
            let request = TimerRequest {
                trigger: RequestedTrigger::Time(2_000),
                payload: payload.to_vec(),
                fee_payer: None,
                gas_limit: Some(10_000),
                expires_at: None,
                bid: None,
                escrow_key: None,
            };
            host::schedule(&mut state, &config, &caller, request)
                .unwrap()
                .unwrap();
        }
        // Block 2 reaches their time but enqueues only two of the three.
        let mut budgets = BlockBudgets::new(&config, &basefee);
        budgets.enqueue_left = 2;
        let plan = deliver(&mut state, &config, &basefee, 2, 2_500, &[], &mut budgets).unwrap();
        assert_eq!(plan.fires.len(), 1);
        // Block 3 enqueues the third: it came due at block 2.
        let mut budgets = BlockBudgets::new(&config, &basefee);
        let plan = deliver(&mut state, &config, &basefee, 3, 3_500, &[], &mut budgets).unwrap();
        assert_eq!(plan.fires.len(), 1);
        let waiting = globalbox::entries_from(&state, None, 10).unwrap();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].1.due_height, 2, "its age counts from block 2");
        // The time queue caught up: the marks are gone.
        let end = keys::end_of(keys::TIME_DUE_MARK);
        let marks = StateRead::scan(&state, &keys::TIME_DUE_MARK, Some(&end), 10).unwrap();
        assert!(marks.is_empty(), "{marks:?}");
    }
}
