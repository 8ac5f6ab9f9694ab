//! A governance shutdown, one block at a time (AIP-125): every queued
//! timer — due or not, in queue order — is removed under the GC budget with
//! its deposit refunded, until none is left.

use timerhost_state::{Overlay, StateRead};
use timerhost_types::timer::GC_CYCLES_PER_REMOVAL;
use timerhost_types::TimerStatus;

use super::{DeliveryPlan, SCAN_CHUNK};
use crate::budgets::{record_len, BlockBudgets as Budgets};
use crate::error::Result;
use crate::events::{self, CancelReason};
use crate::keys::{self, DueQueue};
use crate::queue::{self, Queued};
use crate::record::{IdLookup, TimerRecord};
use crate::removal::Removals;
use crate::{control, store};

/// One block of a governance shutdown: removes queued timers — due or not,
/// in queue order — under the GC budget, each with its deposit refunded and
/// `TimerCancelled {reason: "shutdown"}`. Once none is left (and the backlog
/// is clear), the status becomes `Shutdown` with `TimersShutdown {complete:
/// true}`.
pub(super) fn shut_down(
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
    store::remove_deferred(state, record, from, IdLookup::Delete, removals)?;
    budget.spend_removal(record_len(record));
    plan.stats.gc_cycles_used += GC_CYCLES_PER_REMOVAL;
    plan.stats.shut_down += 1;
    plan.events.push(events::timer_cancelled(
        &record.timer,
        CancelReason::Shutdown,
    ));
    Ok(())
}
