//! The `timerhost` command line: the argument definitions and the dispatch
//! to one module per command group (`home_cmds`, `node_cmd`, `testnet`, `dev`,
//! `query`, `transact`, `dev_tools`, `keys`, `gov`, `cron`).
//!
//! Human-readable output by default; `--json` prints one JSON document per
//! command for scripts. Exit codes: 0 success, 1 error (the message names
//! what was wrong), 2 replay found a state-root mismatch.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::json;
use timerhost_chain::ChainError;

use crate::cron::{cron, CronAction};
use crate::dev::dev;
use crate::error::{NodeError, Result};
use crate::gov::{gov, GovAction};

/// timerhost: a node for Python actors with native, protocol-level timers.
#[derive(Debug, Parser)]
#[command(name = "timerhost", version, about, long_about = None)]
pub struct Cli {
    /// Print machine-readable JSON instead of human output.
    #[arg(long, global = true)]
    pub json: bool,

    /// Log format on stderr.
    #[arg(long, global = true, value_parser = ["text", "json"], default_value = "text")]
    pub log_format: String,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a node home: genesis.toml and a database holding block 0.
    Init {
        /// Home directory to create.
        #[arg(long)]
        home: PathBuf,
        /// A development chain: chain id 1337, ten funded dev accounts with public keys.
        #[arg(long)]
        dev: bool,
        /// Chain id (not with --dev, which always uses 1337).
        #[arg(long)]
        chain_id: Option<u64>,
        /// Use this genesis file instead of the shipped template (config/genesis.toml).
        #[arg(long, conflicts_with = "dev")]
        genesis: Option<PathBuf>,
    },
    /// Re-execute every stored block from genesis on a fresh in-memory state
    /// and verify each state root.
    Replay {
        /// Home directory.
        #[arg(long)]
        home: PathBuf,
    },
    /// Migrate the home's store in place to this release's format (a node
    /// also migrates at start). Crash-safe: an interrupted migration leaves
    /// the old format or the new, and running it again finishes.
    Migrate {
        /// Home directory.
        #[arg(long)]
        home: PathBuf,
    },
    /// Give the disk space of pruned history back to the filesystem: copy
    /// the home's live entries into a fresh database and swap it in (the
    /// node must be stopped; crash-safe, an interrupted run is finished or
    /// undone by the next open).
    Compact {
        /// Home directory.
        #[arg(long)]
        home: PathBuf,
    },
    /// Run a node on an initialised home: JSON-RPC, block production (or,
    /// when the genesis lists validators, a member of the validator
    /// network), metrics. Restarting continues from the last committed block.
    Node(crate::node_cmd::RunNodeArgs),
    /// Run a local validator network in one command: keys, genesis and a
    /// home per validator, every node started on loopback ports.
    Testnet(crate::testnet::TestnetArgs),
    /// Send transactions to one node or a network at a steady rate and
    /// report committed tx/s, latency and refusals (fresh funded accounts;
    /// transfers, actor calls, timers or a mix).
    Load(crate::load::LoadArgs),
    /// A local devnet in one command: dev genesis, funded dev accounts, the
    /// example actors deployed, a block every --block-time.
    Dev {
        /// Home directory (default: a temporary one, deleted on exit). An
        /// existing dev home is reused.
        #[arg(long)]
        home: Option<PathBuf>,
        /// Interval between blocks.
        #[arg(long, default_value = "1s", conflicts_with = "manual")]
        block_time: String,
        /// Produce blocks only on request (dev_mine / `timerhost mine`).
        #[arg(long)]
        manual: bool,
        /// JSON-RPC listen address (port 0 picks a free port).
        #[arg(long, default_value = crate::config::DEFAULT_RPC)]
        rpc: SocketAddr,
        /// Prometheus metrics listen address.
        #[arg(long)]
        metrics: Option<SocketAddr>,
        /// Do not deploy the example actors.
        #[arg(long)]
        no_examples: bool,
    },
    /// The read-only client commands.
    #[command(flatten)]
    Query(crate::query::QueryCommand),
    /// The dev-chain client commands.
    #[command(flatten)]
    DevTools(crate::dev_tools::DevToolsCommand),
    /// Create a signing key, or list the dev accounts and key files.
    Keys {
        /// What to do.
        #[command(subcommand)]
        action: crate::keys::KeysAction,
    },
    /// The client commands that sign and send a transaction.
    #[command(flatten)]
    Transact(crate::transact::TransactCommand),
    /// Governance: show or update configs, cancel or extend timers, pause,
    /// resume or shut timers down (the signer must be one of the genesis
    /// `system_deployers`).
    Gov {
        /// The governance action.
        #[command(subcommand)]
        action: GovAction,
    },
    /// ARC-21's cron registry (0x…06): schedule a call, top up or cancel
    /// a job, list an owner's jobs.
    Cron {
        /// The cron action.
        #[command(subcommand)]
        action: CronAction,
    },
}

/// `timerhost block | head` closes stdout before the command is done
/// printing: Rust's `println!` then panics ("failed printing to stdout:
/// Broken pipe") with a backtrace. A client command exits quietly instead,
/// with the status a shell gives a process ended by SIGPIPE (128 + 13).
/// (Restoring SIGPIPE itself would need `unsafe`, which the workspace
/// denies; a node keeps the default, it never prints to a pipe it needs.)
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// Entry point used by `main`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let long_running = matches!(
        cli.command,
        Command::Node(_) | Command::Dev { .. } | Command::Testnet(_)
    );
    init_logging(
        &cli.log_format,
        if long_running {
            "warn,timerhost_node=info,timerhost_consensus=info"
        } else {
            "warn"
        },
    );
    if !long_running {
        quiet_on_closed_stdout();
    }
    // Every command may run actor code (a dev chain's blocks, a replay, a
    // validator's): not on the 8 MiB main thread but on one with the stack
    // the VM's bounds are sized for (#49: `timerhost dev` aborted there).
    let as_json = cli.json;
    let outcome = timerhost_vm::runtime::on_execution_thread("timerhost", move || run(&cli));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = match &e {
                NodeError::Chain(ChainError::ReplayMismatch { .. }) => 2,
                _ => 1,
            };
            if as_json {
                println!("{}", json!({ "error": e.to_string() }));
            } else {
                eprintln!("error: {e}");
            }
            ExitCode::from(code)
        }
    }
}

fn init_logging(format: &str, default: &str) {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default.into());
    // Colours only on a terminal: log files and pipes get plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// Runs a parsed command.
pub fn run(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Init {
            home,
            dev,
            chain_id,
            genesis,
        } => crate::home_cmds::init(cli.json, home, *dev, *chain_id, genesis.as_ref()),
        Command::Replay { home } => crate::home_cmds::replay(cli.json, home),
        Command::Migrate { home } => crate::home_cmds::migrate(cli.json, home),
        Command::Compact { home } => crate::home_cmds::compact(cli.json, home),
        Command::Node(args) => args.execute(cli.json),
        Command::Testnet(args) => args.execute(cli.json),
        Command::Load(args) => args.execute(cli.json),
        Command::Dev {
            home,
            block_time,
            manual,
            rpc,
            metrics,
            no_examples,
        } => dev(
            cli.json,
            home.as_ref(),
            block_time,
            *manual,
            *rpc,
            *metrics,
            *no_examples,
        ),
        Command::Gov { action } => gov(cli.json, action),
        Command::Cron { action } => cron(cli.json, action),
        Command::Keys { action } => crate::keys::command(cli.json, action),
        Command::Query(command) => command.execute(cli.json),
        Command::DevTools(command) => command.execute(cli.json),
        Command::Transact(command) => command.execute(cli.json),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
