//! Timer delivery (CIP-5 §5, §6.2–6.3, §6.5; DESIGN.md "Timers" and "One
//! scheduler, many triggers").
//!
//! A block delivers in two places, under **one lane and one set of
//! budgets** ([`BlockBudgets`], created once per block):
//!
//! - [`deliver_booked`], first of all at the **start** of the block: the
//!   booked timers due by its height or time (#45, [`crate::bookings`]);
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
use timerhost_state::{Overlay, StateReadExt};
use timerhost_types::lane::{lane_price, LanePrice, WEIGHT_ONE};
use timerhost_types::timer::{GC_CYCLES_PER_REMOVAL, TIMER_FIRE_BASE_CYCLES};
use timerhost_types::{
    Address, BasefeeConfig, Event, FireDue, FireInfo, Timer, TimerConfig, TimerKind, TimerOrdering,
    TimerStatus,
};

use crate::error::Result;
use crate::keys::DueQueue;
use crate::keys::{self, missing};
use crate::queue::{self, Queued, RemovalReason};
use crate::record::{IdLookup, TimerRecord};
use crate::removal::Removals;
use crate::{control, escrow, events, globalbox, handler, store, watch};

mod booked;
mod globalbox_walk;
mod shutdown;

pub use booked::deliver_booked;

pub use crate::budgets::{cells_per_fire, BlockBudgets};
use crate::budgets::{record_len, stored_len};

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
    /// What the pre-charge holds per handler cycle beside the cycle
    /// basefee ([`crate::lane::fee_cap`]).
    pub fee_cap: u64,
    /// The lane basefee burned per handler cycle used (0 outside market
    /// ordering, #31).
    pub lane_basefee: u64,
    /// The priority fee per handler cycle used, paid to the proposer: the
    /// bid, under market ordering clamped to `max_fee_per_cycle − lane
    /// basefee`.
    pub priority_fee: u64,
    /// Did the fee cap clamp the priority fee below the bid?
    pub priority_clamped: bool,
    /// The fairness weight that ranked it, in thousandths (`WEIGHT_ONE`
    /// outside market ordering).
    pub weight: u64,
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
    /// Due timers that started waiting because the lane basefee is above
    /// their fee cap (#31).
    pub deferred: u64,
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
    /// Fires to execute, in order. Boxed (#46): a `Fire` is ~500 bytes and
    /// a block holds tens of thousands of them; unboxed, every doubling of
    /// the vector moved all of them into fresh pages (a twentieth of a
    /// fire block), where boxes move pointers.
    #[allow(clippy::vec_box)]
    pub fires: Vec<Box<Fire>>,
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
/// its fee cap per handler cycle on `gas_limit` (#18: the bid, a tip per
/// handler cycle; #31: under market ordering `max_fee_per_cycle`, which
/// pays the lane basefee and the tip — [`crate::lane::fee_cap`]); `None`
/// on overflow (treated as unfundable).
pub fn max_cost(
    gas_limit: u64,
    fee_cap: u64,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
) -> Option<u128> {
    (gas_limit as u128 + TIMER_FIRE_BASE_CYCLES as u128)
        .checked_mul(basefee.cycle_basefee)?
        .checked_add((cells_per_fire(config, basefee) as u128).checked_mul(basefee.cell_basefee)?)?
        .checked_add((gas_limit as u128).checked_mul(fee_cap as u128)?)
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
        self.deferred += other.deferred;
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

fn remove_for(
    state: &mut Overlay<'_>,
    record: &TimerRecord,
    queued: Queued,
    reason: &RemovalReason,
    height: u64,
    plan: &mut DeliveryPlan,
    removals: &mut Removals,
) -> Result<()> {
    store::remove_deferred(state, record, queued, IdLookup::Delete, removals)?;
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
        Ok(timer.consent_seq() < mark)
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
        || config.ordering.uses_globalbox()
        || !globalbox::is_empty(state)?
    {
        return Ok(plan);
    }
    let mut removals = Removals::default();
    let mut walk = Walk::new(
        state,
        config,
        basefee,
        height,
        budgets,
        &mut plan,
        &mut removals,
    )?;
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
        shutdown::shut_down(state, backlog_cleared, budgets, &mut plan, &mut removals)?;
        removals.apply(state)?;
        return Ok(plan);
    }

    let mut walk = Walk::new(
        state,
        config,
        basefee,
        height,
        budgets,
        &mut plan,
        &mut removals,
    )?;
    if config.ordering.uses_globalbox() {
        walk.enqueue(state, timestamp_ms)?;
    } else {
        // Back to FIFO from market ordering: what waited for the lane
        // basefee joins the drain.
        walk.readmit(state)?;
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
    let mut walk = Walk::new(
        state,
        config,
        basefee,
        height,
        budgets,
        &mut plan,
        &mut removals,
    )?;
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
    /// Market ordering (#31): the lane basefee is above its fee cap; it
    /// waits, uncharged, for the basefee to fall.
    Defer,
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
    /// The block's lane basefee (#31).
    lane_basefee: u64,
}

impl<'w> Walk<'w> {
    fn new(
        state: &Overlay<'_>,
        config: &'w TimerConfig,
        basefee: &'w BasefeeConfig,
        height: u64,
        budgets: &'w mut BlockBudgets,
        plan: &'w mut DeliveryPlan,
        removals: &'w mut Removals,
    ) -> Result<Self> {
        Ok(Walk {
            config,
            basefee,
            height,
            budgets,
            plan,
            removals,
            marks: RevocationMarks::default(),
            lane_basefee: crate::lane::market(state, config)?.basefee,
        })
    }

    fn market(&self) -> bool {
        self.config.ordering == TimerOrdering::Market
    }

    /// Classifies `timer` (§5.4's removal paths, then the fire quota and
    /// the lane). A timer that stays after firing (a watch) keeps its
    /// deposit, so only the balance pays its fire; a leaving timer's
    /// deposit comes back first and counts.
    fn classify(&mut self, state: &Overlay<'_>, timer: &Timer, stays: bool) -> Result<Verdict> {
        let required = max_cost(
            timer.gas_limit_per_fire,
            crate::lane::fee_cap(timer, self.config),
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
        // #31: priced out of the lane, it waits — neither charged nor
        // judged on funds it will only need once the basefee falls.
        // #45: a booked timer paid for its place; it never waits.
        if self.market() && !timer.booked && timer.max_fee_per_cycle < self.lane_basefee {
            return Ok(Verdict::Defer);
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
        let reserve = timer
            .gas_limit_per_fire
            .saturating_add(TIMER_FIRE_BASE_CYCLES);
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
    #[allow(clippy::too_many_arguments)]
    fn fire(
        &mut self,
        state: &mut Overlay<'_>,
        timer: Timer,
        max_cost: u128,
        weight: u64,
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
        // #31: under market ordering the fire pays the lane basefee and a
        // priority fee clamped to its cap, and counts toward its actor's
        // and fee payer's recent fires.
        let (lane_basefee, price) = if self.market() && !timer.booked {
            // `classify` deferred every timer priced out of the lane.
            let Some(price) = lane_price(timer.max_fee_per_cycle, timer.bid, self.lane_basefee)
            else {
                return Err(timerhost_state::StorageError::Corrupt {
                    what: "lane fee cap",
                    key: timer.timer_id.to_hex(),
                    reason: format!(
                        "admitted with max_fee_per_cycle {} below the lane basefee {}",
                        timer.max_fee_per_cycle, self.lane_basefee
                    ),
                });
            };
            crate::fairness::record_fire(
                state,
                self.config,
                self.height,
                &timer.actor_address,
                &timer.fee_payer,
            )?;
            (self.lane_basefee, price)
        } else {
            let bid = LanePrice {
                lane_basefee: 0,
                priority: timer.bid,
                clamped: false,
            };
            (0, bid)
        };
        let reserve = timer
            .gas_limit_per_fire
            .saturating_add(TIMER_FIRE_BASE_CYCLES);
        self.budgets.lane_left = self.budgets.lane_left.saturating_sub(reserve);
        self.budgets.fires_left -= 1;
        self.budgets.cells_left -= self.budgets.cells_per_fire;
        let deliver_seq = crate::counters::read_u64(state, &keys::next_delivery_key())?;
        state.put(
            keys::next_delivery_key(),
            (deliver_seq + 1).to_be_bytes().to_vec(),
        );
        self.plan.stats.lane_reserved += reserve;
        self.plan.stats.fired += 1;
        self.plan.fires.push(Box::new(Fire {
            handler: timer.handler.clone(),
            payload,
            cycles_limit: timer.gas_limit_per_fire,
            base_cycles: TIMER_FIRE_BASE_CYCLES,
            cells_limit: self.budgets.cells_per_fire,
            cycle_basefee: self.basefee.cycle_basefee,
            cell_basefee: self.basefee.cell_basefee,
            fee_cap: crate::lane::fee_cap(&timer, self.config),
            lane_basefee,
            priority_fee: price.priority,
            priority_clamped: price.clamped,
            weight,
            max_cost,
            deliver_seq,
            info,
            timer,
        }));
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
                    // FIFO never defers (only market ordering prices the lane).
                    Verdict::Stop | Verdict::Defer => return Ok(()),
                    Verdict::Fire(max_cost) => {
                        self.fire_one_shot(state, record, Queued::Due, max_cost, WEIGHT_ONE)?;
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
                    Verdict::Stop | Verdict::Defer => return Ok(()),
                    Verdict::Fire(max_cost) => {
                        self.fire_watch(state, record, hit.matched_keys, max_cost, WEIGHT_ONE)?;
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
        weight: u64,
    ) -> Result<()> {
        // The id lookup stays behind, stale (`IdLookup::LeaveStale`): pruning
        // removes it with this block's history.
        store::remove_deferred(state, &record, from, IdLookup::LeaveStale, self.removals)?;
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
        self.fire(state, timer, max_cost, weight, info, resolved.payload)
    }

    /// Fires watch `record` for a hit that matched `matched_keys`: its hit
    /// leaves (waiting or queued), its fire count grows, the watch stays.
    fn fire_watch(
        &mut self,
        state: &mut Overlay<'_>,
        record: TimerRecord,
        matched_keys: Vec<Vec<u8>>,
        max_cost: u128,
        weight: u64,
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
        self.fire(state, after.timer, max_cost, weight, info, payload)
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
                // A watch or a time timer in its queue, or (#31) a timer
                // waiting in the Globalbox for the lane basefee to fall.
                remove_for(
                    state,
                    &record,
                    Queued::of_record_key(&key),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{self, HostCaller};
    use timerhost_state::{EmptyState, StateRead};
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
                max_fee_per_cycle: 0,
                kind: TimerKind::Height,
                escrow_key: None,
                booked: false,
                retry: None,
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
                max_fee_per_cycle: None,
                escrow_key: None,
                book: false,
                handler: None,
                retries: None,
                retry_backoff: None,
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
