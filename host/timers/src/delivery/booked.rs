//! The start of a block's booked fires (#45, [`crate::bookings`]): before
//! the time timers, before any transaction, every booked timer due by the
//! block's height (or timestamp) is classified and fired, in due order.
//! A booked timer is never priced out by the lane basefee (its booking paid
//! for its place: it pays its bid alone) and never waits behind another
//! fire: the block's budgets are fresh and the bookings of one block fit
//! its bookable share. What still stops it: governance's pause (nothing
//! fires; it fires first in the first block after the resume), its fee
//! payer's revocation or funds (removed, as any timer), or — only after a
//! pause or a stall gathered more than one block's bookings — the block's
//! budgets, in which case the rest fire first in the next block.

use timerhost_state::Overlay;
use timerhost_types::lane::WEIGHT_ONE;
use timerhost_types::{BasefeeConfig, TimerConfig, TimerStatus};

use super::{remove_for, BlockBudgets, DeliveryPlan, Verdict, Walk};
use crate::bookings;
use crate::error::Result;
use crate::keys::missing;
use crate::record::get_queued_record;
use crate::removal::Removals;

/// Most booked timers one block's start reads: far above any share (a
/// block's fires are at most 1,000,000), so only a pause's backlog waits.
const BOOKED_PER_BLOCK: usize = 4_096;

/// Classifies and pre-charges the booked timers due by `height` and
/// `timestamp_ms`, first thing in the block, under `budgets`.
pub fn deliver_booked(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    height: u64,
    timestamp_ms: u64,
    budgets: &mut BlockBudgets,
) -> Result<DeliveryPlan> {
    let (status, mut plan) = DeliveryPlan::under_status(state)?;
    if status != TimerStatus::Active {
        return Ok(plan);
    }
    let due = bookings::due(state, height, timestamp_ms, BOOKED_PER_BLOCK)?;
    if due.is_empty() {
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
    for timer_id in due {
        let (record, from) = get_queued_record(state, &timer_id)?
            .ok_or_else(|| missing("booked timer index", &timer_id))?;
        match walk.classify(state, &record.timer, false)? {
            Verdict::Fire(max_cost) => {
                walk.fire_one_shot(state, record, from, max_cost, WEIGHT_ONE)?
            }
            Verdict::Remove(reason) => {
                remove_for(
                    state,
                    &record,
                    from,
                    &reason,
                    height,
                    walk.plan,
                    walk.removals,
                )?;
            }
            // Budgets a pause's backlog used up: the rest first next block.
            Verdict::Stop | Verdict::Defer => break,
        }
    }
    removals.apply(state)?;
    Ok(plan)
}
