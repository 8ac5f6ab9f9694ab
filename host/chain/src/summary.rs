//! What a block did with timers, summarised once when it is committed
//! (#33): the dashboard's timeline reads these few bytes per block instead
//! of decoding blocks' receipts (a block scheduling 100,000 timers holds as
//! many events). Local history, like receipts: every node computes it from
//! the block it executed, and it is not part of any root.

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_timers::DeliveryStats;
use timerhost_types::encoding::Canonical;
use timerhost_types::{Receipt, TimerKind, TxSource, Value};

/// One block's timer figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct BlockSummary {
    /// Fires by trigger kind: height, time, state.
    pub fired: [u64; 3],
    /// Fires of timers due in an earlier block (carried over to this one).
    pub fired_late: u64,
    /// Timers expired.
    pub expired: u64,
    /// Timers removed for insufficient funds.
    pub unfunded: u64,
    /// Timers removed because their payer revoked them.
    pub revoked: u64,
    /// Timers cancelled (by their actor or a shutdown).
    pub cancelled: u64,
    /// Timers that started waiting below the lane basefee.
    pub deferred: u64,
    /// Lane cycles the block's fires reserved.
    pub lane_reserved: u64,
    /// Cycles the block's fires used.
    pub lane_used: u64,
    /// Did the lane, the fire quota or the cells leave due timers for later?
    pub carried_over: bool,
    /// Fees burned by every execution of the block.
    pub burned: u128,
    /// Tips paid to the proposer.
    pub tipped: u128,
    /// Deferred executions with a delivery (fires).
    pub deliveries: u64,
}

impl Canonical for BlockSummary {
    const NAME: &'static str = "block summary";
}

fn int(e: &Value, key: &str) -> u128 {
    e.get(key).and_then(Value::as_u128).unwrap_or(0)
}

impl BlockSummary {
    /// The summary of block `height` from its receipts and delivery stats;
    /// `parent_ms` is its parent's timestamp (a time timer due at or
    /// before it fired late).
    pub fn of(height: u64, parent_ms: u64, receipts: &[Receipt], stats: &DeliveryStats) -> Self {
        let mut s = BlockSummary {
            lane_reserved: stats.lane_reserved,
            carried_over: stats.lane_full || stats.fire_quota_full || stats.cells_full,
            ..BlockSummary::default()
        };
        for r in receipts {
            s.burned += r.burned;
            s.tipped += r.tip;
            if matches!(
                r.source,
                TxSource::Deferred {
                    delivery: Some(_),
                    ..
                }
            ) {
                s.deliveries += 1;
            }
            // Protocol events only (#50): their names are the protocol's.
            for e in r.events.iter().filter(|e| e.is_protocol()) {
                match e.name.as_str() {
                    "TimerFired" => {
                        let kind = match e.data.get("kind") {
                            Some(Value::Str(k)) => k.as_str(),
                            _ => "height",
                        };
                        let slot = TimerKind::NAMES
                            .iter()
                            .position(|k| *k == kind)
                            .unwrap_or(0);
                        s.fired[slot] += 1;
                        s.lane_used += int(&e.data, "cycles_used") as u64;
                        let late = match kind {
                            "height" => int(&e.data, "due_height") < u128::from(height),
                            "time" => int(&e.data, "due_timestamp_ms") <= u128::from(parent_ms),
                            _ => false,
                        };
                        s.fired_late += u64::from(late);
                    }
                    "TimerExpired" => s.expired += 1,
                    "TimerCancelledInsufficientFunds" => s.unfunded += 1,
                    "TimerCancelledPaymentRevoked" => s.revoked += 1,
                    "TimerCancelled" => s.cancelled += 1,
                    "TimerDeferred" => s.deferred += 1,
                    _ => {}
                }
            }
        }
        s
    }
}
