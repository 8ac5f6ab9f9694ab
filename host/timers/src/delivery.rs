//! End-of-block delivery (CIP-5 §5, §6.2–6.3, §6.5; DESIGN.md "Timers").
//!
//! Two phases, as §5.1 prescribes. [`deliver`] *classifies*: it walks the
//! due queue in FIFO order (carried-over timers first) and, for each timer,
//!
//! 1. **TTL expired** (`height > expires_at`) or **insufficient funds**
//!    (`balance(fee_payer) < max_cost`) → removed under the GC budget
//!    (`GC_CYCLES_PER_REMOVAL` each) with `TimerExpired` /
//!    `TimerCancelledInsufficientFunds`; if the GC budget is spent, moved to
//!    the GC backlog (cleared first next block) — at most
//!    `gc_cycles_per_block / GC_CYCLES_PER_DEFERRAL` moves per block, so the
//!    work stays bounded while live timers behind them still get reached;
//! 2. otherwise **admitted** if its `gas_limit_per_fire` fits what is left
//!    of the lane (`lane_cycles_per_block`): the fee payer is pre-charged
//!    `max_cost = gas_limit × cycle_basefee + max_cells_per_fire ×
//!    cell_basefee`, the timer is removed, and a [`Fire`] is returned. The
//!    first fire that does not fit stops the walk: the lane is strict FIFO
//!    and everything behind it carries over, in order, to the next block.
//!
//! The chain then *executes* the fires as deferred transactions, refunds
//! `max_cost − actual_cost`, and emits [`crate::events::timer_fired`].
//! Work per block is proportional to the timers processed, never to the
//! number pending: the walk only ever reads entries it then removes, moves or
//! stops at.

use timerhost_state::accounts::{self, Debit};
use timerhost_state::Overlay;
use timerhost_types::timer::{GC_CYCLES_PER_DEFERRAL, GC_CYCLES_PER_REMOVAL};
use timerhost_types::{BasefeeConfig, Event, Timer, TimerConfig};

use crate::error::Result;
use crate::index::Removals;
use crate::queue::{self, Queued, RemovalReason};
use crate::store::TimerRecord;
use crate::{events, handler, store};

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
    /// Cycles limit (`gas_limit_per_fire`).
    pub cycles_limit: u64,
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
    /// Timers moved to the GC backlog (GC budget spent).
    pub backlogged: u64,
    /// Lane cycles reserved by admitted fires.
    pub lane_reserved: u64,
    /// GC cycles used.
    pub gc_cycles_used: u64,
    /// Did the lane stop admission (timers carried over)?
    pub lane_full: bool,
}

/// The outcome of classification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeliveryPlan {
    /// Fires to execute, in order.
    pub fires: Vec<Fire>,
    /// `TimerExpired` / `TimerCancelledInsufficientFunds` events, in order.
    pub events: Vec<Event>,
    /// Counters.
    pub stats: DeliveryStats,
}

/// `max_cost` of one fire (§6.3 step 2); `None` on overflow (treated as unfundable).
pub fn max_cost(gas_limit: u64, config: &TimerConfig, basefee: &BasefeeConfig) -> Option<u128> {
    (gas_limit as u128)
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
    }
    Ok(())
}

/// Classifies and pre-charges the due timers of block `height` (§5.1 steps 2–4).
pub fn deliver(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    height: u64,
) -> Result<DeliveryPlan> {
    let mut plan = DeliveryPlan::default();
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
    'backlog: loop {
        let entries = queue::backlog_from(state, backlog_cursor, SCAN_CHUNK)?;
        if entries.is_empty() {
            break;
        }
        for (seq, entry) in entries {
            backlog_cursor = seq.saturating_add(1);
            if budget.gc_left < GC_CYCLES_PER_REMOVAL {
                break 'backlog;
            }
            let record = store::get_record(state, &entry.timer_id)?.ok_or_else(|| {
                timerhost_state::StorageError::Corrupt {
                    what: "timer GC entry",
                    key: entry.timer_id.to_hex(),
                    reason: "points to a missing timer".into(),
                }
            })?;
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

    // Then the due queue, strictly FIFO.
    let mut due_cursor = queue::DueCursor::START;
    'due: loop {
        let entries = queue::due_from(state, due_cursor, height, SCAN_CHUNK)?;
        if entries.is_empty() {
            break;
        }
        for entry in entries {
            let record = store::get_record(state, &entry.timer_id)?.ok_or_else(|| {
                timerhost_state::StorageError::Corrupt {
                    what: "timer height index",
                    key: entry.timer_id.to_hex(),
                    reason: "points to a missing timer".into(),
                }
            })?;
            let timer = &record.timer;
            due_cursor = queue::DueCursor::after(&entry);
            let required = max_cost(timer.gas_limit_per_fire, config, basefee);
            // §5.4 path 3: TTL expiry; path 2: insufficient funds.
            let removal = if height > timer.expires_at {
                Some(RemovalReason::Expired {
                    classified_at: height,
                })
            } else {
                let available = accounts::load(state, &timer.fee_payer)?.balance;
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
            // §6.5 lane: reserve gas_limit_per_fire. A timer larger than the
            // whole lane (possible after governance shrank it) is admitted
            // alone at the head of an empty lane so that it cannot block the
            // queue forever.
            let fits = timer.gas_limit_per_fire <= budget.lane_left
                || budget.lane_left == budget.lane_total;
            if !fits {
                plan.stats.lane_full = true;
                break 'due;
            }
            let max_cost = required.expect("funded implies computable");
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
            store::remove_deferred(state, &record, Queued::Due, &mut removals)?;
            budget.lane_left = budget.lane_left.saturating_sub(timer.gas_limit_per_fire);
            plan.stats.lane_reserved += timer.gas_limit_per_fire;
            plan.stats.fired += 1;
            let resolved = handler::resolve(&timer.payload).unwrap_or(handler::Resolved {
                handler: timer.handler.clone(),
                payload: timer.payload.clone(),
            });
            plan.fires.push(Fire {
                handler: timer.handler.clone(),
                payload: resolved.payload,
                cycles_limit: timer.gas_limit_per_fire,
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
