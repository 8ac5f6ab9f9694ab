//! `timerhost load`: a load generator for one node or a network (#34).
//!
//! ```text
//! timerhost load --rpc URL[,URL…] --rate N --duration S --kind transfer|call|timer|mixed --accounts K
//! ```
//!
//! It creates K fresh accounts and funds them from a dev account (or
//! `--key`) ([`setup`]); for `call` and `timer` it deploys a small actor
//! ([`setup::LOAD_ACTOR`]) and measures one call to size the limits; then
//! it signs every transaction of the run ahead of time on every core
//! ([`plan`]), sends them at the target rate as JSON-RPC batches spread over
//! the URLs, follows every block to find each accepted transaction in one
//! ([`drive`]), and prints a progress line per second and a summary
//! ([`report`]; `--json` for scripts). "Committed exactly once" is checked,
//! not assumed: the summary counts accepted transactions never seen in a
//! block and any seen in two. `--find-max` repeats runs at rising rates
//! and reports the highest that held ([`find_max`]).

pub mod args;
pub mod drive;
pub mod find_max;
pub mod plan;
pub mod report;
pub mod setup;

use std::time::Duration;

use timerhost_rpc::Client;

pub use self::args::{LoadArgs, LoadKind};
use crate::client::signer;
use crate::error::{NodeError, Result};

impl LoadArgs {
    /// Runs the load and prints its summary.
    pub fn execute(&self, json: bool) -> Result<()> {
        if self.rpc.is_empty() {
            return Err(NodeError::Usage("--rpc needs at least one URL".into()));
        }
        if self.rate == 0 || !self.duration.is_finite() || self.duration <= 0.0 {
            return Err(NodeError::Usage(
                "--rate and --duration must be above zero".into(),
            ));
        }
        if self.accounts == 0 {
            return Err(NodeError::Usage("--accounts must be at least 1".into()));
        }
        let drain = crate::config::parse_duration(&self.drain)
            .map_err(|e| NodeError::Usage(format!("--drain: {e}")))?;
        let funder = match (&self.key, self.dev_account) {
            (None, None) => signer(None, Some(0))?,
            (key, dev) => signer(key.as_deref(), dev)?,
        };
        let clients: Vec<Client> = self.rpc.iter().map(|u| Client::new(u)).collect();
        let seed = self.seed.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64)
        });
        let progress = |line: &str| {
            if !json {
                println!("{line}");
            }
        };
        if self.find_max {
            return self.find_max(&clients, &funder, seed, drain, json);
        }
        let summary = self.run_at(&clients, &funder, seed, self.rate, drain, &progress)?;
        if json {
            println!("{}", summary.to_json());
        } else {
            summary.print();
        }
        if summary.lost > 0 || summary.duplicated > 0 {
            return Err(NodeError::Usage(format!(
                "{} accepted transaction(s) were not committed and {} were committed twice",
                summary.lost, summary.duplicated
            )));
        }
        Ok(())
    }
}

impl LoadArgs {
    /// One run at `rate`: fresh accounts (from `seed`) funded, the
    /// transactions signed, sent and followed.
    fn run_at(
        &self,
        clients: &[Client],
        funder: &timerhost_types::PrivateKey,
        seed: u64,
        rate: u64,
        drain: Duration,
        progress: &dyn Fn(&str),
    ) -> Result<report::Summary> {
        let prepared = setup::prepare(&clients[0], funder, self, seed, progress)?;
        let total = ((rate as f64) * self.duration).ceil() as usize;
        progress(&format!(
            "signing {total} {:?} transactions from {} accounts…",
            self.kind, self.accounts
        ));
        let txs = plan::sign_all(&prepared, self.kind, total);
        let outcome = drive::run(
            clients,
            self.accounts as usize,
            &txs,
            rate,
            Duration::from_secs_f64(self.duration),
            drain,
            progress,
        )?;
        Ok(report::Summary::of(&txs, &outcome))
    }

    /// `--find-max`: runs at rising rates ([`find_max::Search`]) and
    /// reports each and the highest that held.
    fn find_max(
        &self,
        clients: &[Client],
        funder: &timerhost_types::PrivateKey,
        seed: u64,
        drain: Duration,
        json: bool,
    ) -> Result<()> {
        let bound = crate::config::parse_duration(&self.p99)
            .map_err(|e| NodeError::Usage(format!("--p99: {e}")))?;
        let bound_ms = bound.as_secs_f64() * 1_000.0;
        let quiet = |_: &str| {};
        let mut search = find_max::Search::new(self.rate, self.max_rate);
        let mut steps = Vec::new();
        while let Some(rate) = search.next_rate() {
            if !steps.is_empty() {
                // A run that fell behind leaves its backlog in the mempools:
                // the next starts once they are empty, not on top of it
                // (or refused by a full mempool in its set-up).
                wait_for_empty_mempools(clients, find_max::SETTLE_TIMEOUT);
            }
            // New accounts each run: nonces start afresh, and a run that
            // fell behind leaves nothing pending for the next.
            let run_seed = seed.wrapping_add(steps.len() as u64 * 1_000_003);
            let summary = self.run_at(clients, funder, run_seed, rate, drain, &quiet)?;
            let step = find_max::Step::judge(
                rate,
                summary.committed_tps,
                summary.latency_ms[2],
                summary.sent.saturating_sub(summary.committed),
                bound_ms,
            );
            if !json {
                println!(
                    "{rate:>7} tx/s: committed {:>8.0} tx/s, p99 {:>6.0} ms, not committed {} — {}",
                    step.committed_tps,
                    step.p99_ms,
                    step.uncommitted,
                    if step.held { "held" } else { "did not hold" }
                );
            }
            search.record(&step);
            steps.push(step);
        }
        let best = search.best();
        if json {
            println!(
                "{}",
                serde_json::json!({
                    "max_rate_held": best,
                    "p99_bound_ms": bound_ms,
                    "steps": steps.iter().map(|s| serde_json::json!({
                        "rate": s.rate,
                        "committed_tps": (s.committed_tps * 10.0).round() / 10.0,
                        "p99_ms": s.p99_ms.round(),
                        "uncommitted": s.uncommitted,
                        "held": s.held,
                    })).collect::<Vec<_>>(),
                })
            );
        } else {
            match best {
                Some(rate) => println!(
                    "highest rate that held: {rate} tx/s (every transaction committed, p99 ≤ {bound_ms:.0} ms)"
                ),
                None => println!("no rate held, down to 1 tx/s"),
            }
        }
        Ok(())
    }
}

/// Waits until every node's mempool is empty, at most `timeout` (then the
/// next run starts anyway, and says so).
fn wait_for_empty_mempools(clients: &[Client], timeout: Duration) {
    let start = std::time::Instant::now();
    loop {
        let waiting: u64 = clients
            .iter()
            .map(|c| {
                c.call("th_status", serde_json::json!([]))
                    .ok()
                    .and_then(|s| s["mempool"]["size"].as_u64())
                    .unwrap_or(0)
            })
            .sum();
        if waiting == 0 {
            return;
        }
        if start.elapsed() >= timeout {
            tracing::warn!(
                waiting,
                "the mempools did not empty; starting the next run anyway"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
