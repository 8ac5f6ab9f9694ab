//! The run's summary: what was sent, accepted and committed, how fast, how
//! long transactions waited, and why any were refused.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::drive::Outcome;
use super::plan::PlannedTx;

/// The figures of one run.
#[derive(Debug)]
pub struct Summary {
    /// Transactions sent.
    pub sent: usize,
    /// Accepted by the node they were sent to.
    pub accepted: usize,
    /// Accepted and found in a block.
    pub committed: usize,
    /// Accepted but never found in a block.
    pub lost: usize,
    /// Found in more than one block.
    pub duplicated: usize,
    /// Committed per second, from the first send to the last commit seen.
    pub committed_tps: f64,
    /// Latency percentiles (ms): p50, p90, p99, max.
    pub latency_ms: [f64; 4],
    /// Blocks that held any of the run's transactions.
    pub blocks: usize,
    /// Mean of the run's transactions per such block.
    pub mean_txs_per_block: f64,
    /// Most of the run's transactions in one block.
    pub max_txs_per_block: usize,
    /// Refusals by reason.
    pub errors: BTreeMap<String, u64>,
    /// Accepted transactions no block held (`lost`), by the reason the
    /// nodes give.
    pub lost_reasons: BTreeMap<String, u64>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Summary {
    /// Summarises a run.
    pub fn of(txs: &[PlannedTx], outcome: &Outcome) -> Self {
        let sent = outcome.sent_ns.iter().filter(|s| **s > 0).count();
        let accepted = outcome.accepted.iter().filter(|a| **a).count();
        let mut latencies = Vec::new();
        let mut committed = 0;
        let mut lost = 0;
        let mut duplicated = 0;
        let mut first_send = u64::MAX;
        let mut last_commit = 0u64;
        for i in 0..txs.len() {
            if outcome.sent_ns[i] > 0 {
                first_send = first_send.min(outcome.sent_ns[i]);
            }
            if outcome.seen[i] > 1 {
                duplicated += 1;
            }
            if !outcome.accepted[i] {
                continue;
            }
            if outcome.committed_ns[i] == 0 {
                lost += 1;
                continue;
            }
            committed += 1;
            last_commit = last_commit.max(outcome.committed_ns[i]);
            latencies.push(outcome.committed_ns[i].saturating_sub(outcome.sent_ns[i]) as f64 / 1e6);
        }
        latencies.sort_by(f64::total_cmp);
        let span_s = last_commit.saturating_sub(first_send) as f64 / 1e9;
        let with_ours: Vec<usize> = outcome
            .blocks
            .iter()
            .map(|(_, n)| *n)
            .filter(|n| *n > 0)
            .collect();
        Summary {
            sent,
            accepted,
            committed,
            lost,
            duplicated,
            committed_tps: if span_s > 0.0 {
                committed as f64 / span_s
            } else {
                0.0
            },
            latency_ms: [
                percentile(&latencies, 50.0),
                percentile(&latencies, 90.0),
                percentile(&latencies, 99.0),
                latencies.last().copied().unwrap_or(0.0),
            ],
            blocks: with_ours.len(),
            mean_txs_per_block: if with_ours.is_empty() {
                0.0
            } else {
                with_ours.iter().sum::<usize>() as f64 / with_ours.len() as f64
            },
            max_txs_per_block: with_ours.iter().copied().max().unwrap_or(0),
            errors: outcome.errors.clone(),
            lost_reasons: outcome.missing.clone(),
        }
    }

    /// The summary as JSON (`--json`).
    pub fn to_json(&self) -> Json {
        json!({
            "sent": self.sent,
            "accepted": self.accepted,
            "committed": self.committed,
            "lost": self.lost,
            "duplicated": self.duplicated,
            "committed_tps": (self.committed_tps * 10.0).round() / 10.0,
            "latency_ms": {
                "p50": self.latency_ms[0].round(),
                "p90": self.latency_ms[1].round(),
                "p99": self.latency_ms[2].round(),
                "max": self.latency_ms[3].round(),
            },
            "blocks": self.blocks,
            "mean_txs_per_block": (self.mean_txs_per_block * 10.0).round() / 10.0,
            "max_txs_per_block": self.max_txs_per_block,
            "errors": self.errors,
            "lost_reasons": self.lost_reasons,
        })
    }

    /// The summary for people.
    pub fn print(&self) {
        println!(
            "sent {}  accepted {}  committed {}  (lost {}, committed twice {})",
            self.sent, self.accepted, self.committed, self.lost, self.duplicated
        );
        println!("committed {:.0} tx/s", self.committed_tps);
        println!(
            "latency p50 {:.0} ms  p90 {:.0} ms  p99 {:.0} ms  max {:.0} ms",
            self.latency_ms[0], self.latency_ms[1], self.latency_ms[2], self.latency_ms[3]
        );
        println!(
            "{} blocks held the load: {:.1} transactions per block on average, {} at most",
            self.blocks, self.mean_txs_per_block, self.max_txs_per_block
        );
        if self.errors.is_empty() {
            println!("no refusals");
        }
        for (reason, n) in &self.errors {
            println!("refused {n}: {reason}");
        }
        for (reason, n) in &self.lost_reasons {
            println!("not committed {n}: {reason}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&xs, 50.0), 50.0);
        assert_eq!(percentile(&xs, 99.0), 99.0);
        assert_eq!(percentile(&[], 99.0), 0.0);
        assert_eq!(percentile(&[7.0], 1.0), 7.0);
    }
}
