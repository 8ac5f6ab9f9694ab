//! `timerhost load`'s arguments ([`LoadArgs`]) and the kinds of load
//! ([`LoadKind`]), apart from the code that runs them so that every step of
//! the run reads them without reaching back into its parent.

use clap::{Args, ValueEnum};

/// What the load's transactions do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LoadKind {
    /// Transfers of 1 unit to fresh addresses (no Python).
    Transfer,
    /// Calls of a method that bumps a counter in the load actor.
    Call,
    /// Calls that schedule a timer firing a few blocks later, so fires and
    /// transactions share blocks.
    Timer,
    /// A third of each.
    Mixed,
}

/// `timerhost load`'s arguments.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// JSON-RPC URLs of the nodes to load, comma-separated; transactions
    /// are spread over them and blocks are followed on the first.
    #[arg(long, default_value = crate::config::DEFAULT_RPC, value_delimiter = ',')]
    pub rpc: Vec<String>,
    /// Transactions per second to send.
    #[arg(long, default_value_t = 1_000)]
    pub rate: u64,
    /// Seconds to send for.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// What the transactions do.
    #[arg(long, value_enum, default_value = "transfer")]
    pub kind: LoadKind,
    /// Fresh accounts the load is sent from.
    #[arg(long, default_value_t = 100)]
    pub accounts: u32,
    /// The funding account's key file (default: --dev-account 0).
    #[arg(long)]
    pub key: Option<std::path::PathBuf>,
    /// The dev account that funds the load (dev chains).
    #[arg(long)]
    pub dev_account: Option<u32>,
    /// Seed of the fresh accounts' keys (default: the clock, so every run
    /// has new accounts).
    #[arg(long)]
    pub seed: Option<u64>,
    /// How long to wait, after sending, for accepted transactions to commit.
    #[arg(long, default_value = "30s")]
    pub drain: String,
    /// Find the highest rate the node or network keeps up with: runs of
    /// --duration from --rate, doubling while a run holds (every
    /// transaction sent is committed, p99 within --p99), then bisecting.
    #[arg(long)]
    pub find_max: bool,
    /// The p99 latency a rate must keep to hold (--find-max).
    #[arg(long, default_value = "1s")]
    pub p99: String,
    /// The highest rate --find-max tries.
    #[arg(long, default_value_t = 100_000)]
    pub max_rate: u64,
}
