//! End-of-block delivery (CIP-5 §5, §6.2–6.3, §6.5; DESIGN.md "Timers").
//!
//! Two phases, as §5.1 prescribes. [`deliver`] *classifies*: it walks the
//! due queue in FIFO order (carried-over timers first) and, for each timer,
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
//!    `max_fires_per_block` timers and its reservation (its
//!    `gas_limit_per_fire` plus `TIMER_FIRE_BASE_CYCLES`) fits what is left of the lane
//!    (`lane_cycles_per_block`): the timer is removed (its deposit refunded),
//!    the fee payer is pre-charged `max_cost = (gas_limit + base) ×
//!    cycle_basefee + max_cells_per_fire × cell_basefee`, and a [`Fire`] is
//!    returned. The first fire that does not fit either limit stops the
//!    walk: admission is strict FIFO and everything behind it carries over,
//!    in order, to the next block.
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
use timerhost_types::timer::{
    GC_CYCLES_PER_DEFERRAL, GC_CYCLES_PER_REMOVAL, TIMER_FIRE_BASE_CYCLES,
};
use timerhost_types::{Address, BasefeeConfig, Event, Timer, TimerConfig, TimerStatus};

use crate::error::Result;
use crate::events::CancelReason;
use crate::keys::{self, missing};
use crate::queue::{self, Queued, RemovalReason};
use crate::record::TimerRecord;
use crate::removal::Removals;
use crate::{control, events, handler, store};

/// How many due entries are read per scan.
const SCAN_CHUNK: usize = 256;

/// An admitted, pre-charged timer fire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fire {
    /// The timer (already removed from the store).
    pub timer: Timer,
    /// Handler to invoke.
    pub handler: String,
    /// Bytes delivered to it.
    pub payload: Vec<u8>,
    /// Cycles limit of the handler (`gas_limit_per_fire`).
    pub cycles_limit: u64,
    /// Cycles the fire pays on top ([`TIMER_FIRE_BASE_CYCLES`]).
    pub base_cycles: u64,
    /// Cells limit (`max_cells_per_fire`).
    pub cells_limit: u64,
    /// Cycle basefee of the pre-charge.
    pub cycle_basefee: u128,
    /// Cell basefee of the pre-charge.
    pub cell_basefee: u128,
    /// The pre-charge.
    pub max_cost: u128,
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

/// `max_cost` of one fire (§6.3 step 2), its base charge included; `None`
/// on overflow (treated as unfundable).
pub fn max_cost(gas_limit: u64, config: &TimerConfig, basefee: &BasefeeConfig) -> Option<u128> {
    (gas_limit as u128 + TIMER_FIRE_BASE_CYCLES as u128)
        .checked_mul(basefee.cycle_basefee)?
        .checked_add((config.max_cells_per_fire as u128).checked_mul(basefee.cell_basefee)?)
}

struct Budgets {
    gc_left: u64,
    moves_left: u64,
    lane_left: u64,
    lane_total: u64,
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

/// Classifies and pre-charges the due timers of block `height` (§5.1 steps 2–4).
pub fn deliver(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    height: u64,
) -> Result<DeliveryPlan> {
    let status = control::status(state)?;
    let mut plan = DeliveryPlan::default();
    plan.stats.status = status;
    if status == TimerStatus::Paused || status == TimerStatus::Shutdown {
        return Ok(plan);
    }
    // Index entries of removed timers, applied once at the end: the walk
    // below only moves forward (cursors), so it never needs them gone.
    let mut removals = Removals::default();
    let mut budget = Budgets {
        gc_left: config.gc_cycles_per_block,
        moves_left: config.gc_cycles_per_block / GC_CYCLES_PER_DEFERRAL,
        lane_left: config.lane_cycles_per_block,
        lane_total: config.lane_cycles_per_block,
    };

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
            if budget.gc_left < GC_CYCLES_PER_REMOVAL {
                backlog_cleared = false;
                break 'backlog;
            }
            let record = state
                .get_decoded::<TimerRecord>(&keys::backlog_record_key(seq))?
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
            budget.gc_left -= GC_CYCLES_PER_REMOVAL;
        }
    }

    if status == TimerStatus::ShuttingDown {
        shut_down(
            state,
            backlog_cleared,
            &mut budget,
            &mut plan,
            &mut removals,
        )?;
        removals.apply(state)?;
        return Ok(plan);
    }

    // Then the due queue, strictly FIFO.
    let mut marks = RevocationMarks::default();
    let mut due_cursor = queue::DueCursor::START;
    'due: loop {
        let entries = queue::due_from(state, due_cursor, height, SCAN_CHUNK)?;
        if entries.is_empty() {
            break;
        }
        for record in entries {
            let timer = &record.timer;
            due_cursor = queue::DueCursor::after(timer);
            let required = max_cost(timer.gas_limit_per_fire, config, basefee);
            // The payer's revocation; §5.4 path 3: TTL expiry; path 2:
            // insufficient funds (counting the deposit the removal returns).
            let removal = if marks.revoked(state, timer)? {
                Some(RemovalReason::PaymentRevoked)
            } else if height > timer.expires_at {
                Some(RemovalReason::Expired {
                    classified_at: height,
                })
            } else {
                let available = accounts::load(state, &timer.fee_payer)?
                    .balance
                    .saturating_add(timer.deposit);
                match required {
                    Some(r) if available >= r => None,
                    _ => Some(RemovalReason::InsufficientFunds {
                        required: required.unwrap_or(u128::MAX),
                        available,
                    }),
                }
            };
            if let Some(reason) = removal {
                if budget.gc_left >= GC_CYCLES_PER_REMOVAL {
                    remove_for(
                        state,
                        &record,
                        Queued::Due,
                        &reason,
                        height,
                        &mut plan,
                        &mut removals,
                    )?;
                    budget.gc_left -= GC_CYCLES_PER_REMOVAL;
                } else if budget.moves_left > 0 {
                    queue::move_to_backlog(state, &record, reason, &mut removals);
                    budget.moves_left -= 1;
                    plan.stats.backlogged += 1;
                } else {
                    break 'due;
                }
                continue;
            }
            // CIP-5 §8: at most max_fires_per_block fires per block.
            if plan.stats.fired >= config.max_fires_per_block {
                plan.stats.fire_quota_full = true;
                break 'due;
            }
            // §6.5 lane: reserve gas_limit_per_fire plus the base charge. A
            // timer larger than the whole lane (possible after governance
            // shrank it) is admitted alone at the head of an empty lane so
            // that it cannot block the queue forever.
            let reserve = timer.gas_limit_per_fire + TIMER_FIRE_BASE_CYCLES;
            let fits = reserve <= budget.lane_left || budget.lane_left == budget.lane_total;
            if !fits {
                plan.stats.lane_full = true;
                break 'due;
            }
            let max_cost = required.expect("funded implies computable");
            // Removal first: its deposit is part of what pays the fire.
            store::remove_deferred(state, &record, Queued::Due, &mut removals)?;
            match accounts::debit(state, &timer.fee_payer, max_cost)? {
                Debit::Done => {}
                Debit::Insufficient { available } => {
                    return Err(timerhost_state::StorageError::Corrupt {
                        what: "account",
                        key: timer.fee_payer.to_hex(),
                        reason: format!("balance {available} changed between check and pre-charge of {max_cost}"),
                    })
                }
            }
            budget.lane_left = budget.lane_left.saturating_sub(reserve);
            plan.stats.lane_reserved += reserve;
            plan.stats.fired += 1;
            let resolved = handler::resolve(&timer.payload).unwrap_or(handler::Resolved {
                handler: timer.handler.clone(),
                payload: timer.payload.clone(),
            });
            plan.fires.push(Fire {
                handler: timer.handler.clone(),
                payload: resolved.payload,
                cycles_limit: timer.gas_limit_per_fire,
                base_cycles: TIMER_FIRE_BASE_CYCLES,
                cells_limit: config.max_cells_per_fire,
                cycle_basefee: basefee.cycle_basefee,
                cell_basefee: basefee.cell_basefee,
                max_cost,
                timer: record.timer,
            });
        }
    }
    removals.apply(state)?;
    Ok(plan)
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
    let mut cursor = queue::DueCursor::START;
    loop {
        let entries = queue::due_from(state, cursor, u64::MAX, SCAN_CHUNK)?;
        if entries.is_empty() {
            break;
        }
        for record in entries {
            if budget.gc_left < GC_CYCLES_PER_REMOVAL {
                return Ok(());
            }
            cursor = queue::DueCursor::after(&record.timer);
            store::remove_deferred(state, &record, Queued::Due, removals)?;
            budget.gc_left -= GC_CYCLES_PER_REMOVAL;
            plan.stats.gc_cycles_used += GC_CYCLES_PER_REMOVAL;
            plan.stats.shut_down += 1;
            plan.events.push(events::timer_cancelled(
                &record.timer,
                CancelReason::Shutdown,
            ));
        }
    }
    if backlog_cleared {
        control::set_status(state, TimerStatus::Shutdown);
        plan.stats.status = TimerStatus::Shutdown;
        plan.events.push(events::timers_shutdown(true));
    }
    Ok(())
}
