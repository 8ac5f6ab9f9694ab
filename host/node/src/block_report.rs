//! [`BlockReport`]: what one committed block did, as the node's log line
//! and its metrics read it (the chain's stored per-block summary is
//! `timerhost_chain::summary::BlockSummary`; this adds the node's view:
//! refused mempool transactions, carried-over counts and wall time).

use std::time::Duration;

use timerhost_chain::{Chain, ExecutedBlock};
use timerhost_state::KvBackend;
use timerhost_types::{Receipt, TimerConfig, TxSource};

use crate::error::Result;

/// Most due timers and GC backlog entries counted after each block for the
/// carry-over metrics: the count scans the queue, so it is capped to keep a
/// timer storm from slowing every block (the gauges then read this value).
pub const CARRY_COUNT_LIMIT: usize = 100_000;

/// What one produced block did, for the log and the metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockReport {
    /// Height.
    pub height: u64,
    /// Block timestamp (unix ms).
    pub timestamp_ms: u64,
    /// User transactions included.
    pub txs: usize,
    /// Mempool transactions the block refused (dropped from the pool).
    pub rejected: usize,
    /// Timers fired (`TimerFired`).
    pub timers_fired: u64,
    /// Timers expired (`TimerExpired`).
    pub timers_expired: u64,
    /// Timers destroyed for lack of funds (`TimerCancelledInsufficientFunds`).
    pub timers_unfunded: u64,
    /// Timers removed unexecuted because their fee payer revoked them
    /// (`TimerCancelledPaymentRevoked`).
    pub timers_revoked: u64,
    /// Timers removed by a governance shutdown (`TimerCancelled {reason: "shutdown"}`).
    pub timers_shut_down: u64,
    /// Timers still due after the block (height ≤ this block's), left in
    /// the due queue for a later block because the lane was full; counted up
    /// to [`CARRY_COUNT_LIMIT`].
    pub timers_carried_over: u64,
    /// Dead timers waiting in the GC backlog after the block (GC budget
    /// spent); counted up to [`CARRY_COUNT_LIMIT`].
    pub gc_backlog: u64,
    /// Cycles used by timer fires.
    pub lane_cycles: u64,
    /// Lane cycles reserved by the fires admitted (their gas limits).
    pub lane_reserved: u64,
    /// The timer lane's budget in force.
    pub lane_budget: u64,
    /// GC cycles used removing expired and unfunded timers.
    pub gc_cycles: u64,
    /// The GC budget in force.
    pub gc_budget: u64,
    /// Cycles used by the whole block.
    pub cycles_used: u64,
    /// Wall time spent proposing and committing.
    pub elapsed: Duration,
}

impl BlockReport {
    /// The summary of `executed`, just committed to `chain` under `timers`
    /// (the timer config in force for it), `refused` mempool transactions
    /// dropped, `elapsed` since the block was started.
    pub fn after_commit<B: KvBackend>(
        chain: &Chain<B>,
        executed: &ExecutedBlock,
        refused: usize,
        timers: &TimerConfig,
        elapsed: Duration,
    ) -> Result<BlockReport> {
        let block = &executed.block;
        let stats = &executed.timer_stats;
        let (fired, expired, unfunded, lane) = BlockReport::of(&executed.receipts);
        // Due timers still queued at or below this height (or time) are
        // the ones the lane left for later; backlog entries are dead timers
        // awaiting GC.
        let (carried, backlog) = timerhost_timers::queue::due_count(
            &chain.store().state(),
            block.header.height,
            block.header.timestamp_ms,
            CARRY_COUNT_LIMIT,
        )?;
        Ok(BlockReport {
            height: block.header.height,
            timestamp_ms: block.header.timestamp_ms,
            txs: block.txs.len(),
            rejected: refused,
            timers_fired: fired,
            timers_expired: expired,
            timers_unfunded: unfunded,
            timers_revoked: stats.revoked,
            timers_shut_down: stats.shut_down,
            timers_carried_over: carried as u64,
            gc_backlog: backlog as u64,
            lane_cycles: lane,
            lane_reserved: stats.lane_reserved,
            lane_budget: timers.lane_cycles_per_block,
            gc_cycles: stats.gc_cycles_used,
            gc_budget: timers.gc_cycles_per_block,
            cycles_used: block.header.cycles_used,
            elapsed,
        })
    }

    fn of(receipts: &[Receipt]) -> (u64, u64, u64, u64) {
        let (mut fired, mut expired, mut unfunded, mut lane) = (0, 0, 0, 0);
        for r in receipts {
            for e in &r.events {
                match e.name.as_str() {
                    "TimerFired" => fired += 1,
                    "TimerExpired" => expired += 1,
                    "TimerCancelledInsufficientFunds" => unfunded += 1,
                    _ => {}
                }
            }
            if matches!(r.source, TxSource::Deferred { .. })
                && r.events.iter().any(|e| e.name == "TimerFired")
            {
                lane += r.cycles_used;
            }
        }
        (fired, expired, unfunded, lane)
    }

    /// The human log line.
    pub fn line(&self) -> String {
        format!(
            "block {} ts {}: {} tx{}{}, timers fired {} expired {} unfunded {} carried over {}, lane {}/{} cycles, gc {}/{} cycles, block {} cycles, {:.1} ms",
            self.height,
            self.timestamp_ms,
            self.txs,
            if self.txs == 1 { "" } else { "s" },
            if self.rejected > 0 {
                format!(" ({} refused)", self.rejected)
            } else {
                String::new()
            },
            self.timers_fired,
            self.timers_expired,
            self.timers_unfunded,
            self.timers_carried_over,
            self.lane_cycles,
            self.lane_budget,
            self.gc_cycles,
            self.gc_budget,
            self.cycles_used,
            self.elapsed.as_secs_f64() * 1000.0
        )
    }
}
