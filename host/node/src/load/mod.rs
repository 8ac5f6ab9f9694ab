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
//! block and any seen in two.

pub mod args;
pub mod drive;
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
        let prepared = setup::prepare(&clients[0], &funder, self, seed, &progress)?;
        let total = ((self.rate as f64) * self.duration).ceil() as usize;
        progress(&format!(
            "signing {total} {:?} transactions from {} accounts…",
            self.kind, self.accounts
        ));
        let txs = plan::sign_all(&prepared, self.kind, total);
        let outcome = drive::run(
            &clients,
            self.accounts as usize,
            &txs,
            self.rate,
            Duration::from_secs_f64(self.duration),
            drain,
            &progress,
        )?;
        let summary = report::Summary::of(&txs, &outcome);
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
