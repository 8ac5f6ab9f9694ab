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

use crate::client_args::{NodeArgs, TxArgs};
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
    /// Node status (height, head, mempool, block production).
    Status {
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Balance and nonce of an address.
    Balance {
        /// The address.
        address: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A block (default: the latest).
    Block {
        /// Height.
        height: Option<u64>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A transaction's receipt (events, error and Python traceback, fees).
    Receipt {
        /// Transaction hash.
        hash: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A pending timer by id.
    Timer {
        /// Timer id (0x…).
        id: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Pending timers of an actor, at a height, or paid by an address.
    Timers {
        /// Timers of this actor.
        #[arg(long)]
        actor: Option<String>,
        /// Timers due at this height.
        #[arg(long)]
        height: Option<u64>,
        /// Timers paid by this address.
        #[arg(long)]
        fee_payer: Option<String>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The validator set of consensus at a height (`th_getValidators`):
    /// address, public key, power and operator of each validator.
    Validators {
        /// The height (default: the next block's).
        #[arg(long)]
        height: Option<u64>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The Globalbox under priority ordering: the due fires queued by score,
    /// in the order they will be materialised (`th_getGlobalbox`).
    Globalbox {
        /// Most entries to show.
        #[arg(long)]
        limit: Option<u64>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// What a timer would cost before you schedule it: the pre-charge per
    /// fire at today's basefees, the deposit, the lane cycles already
    /// reserved at that height and whether one more fits (`th_quoteTimer`).
    Quote {
        /// Firing height (default: the first height a transaction sent now
        /// could schedule, the next block's + 1).
        #[arg(long)]
        height: Option<u64>,
        /// A time timer due at this unix millisecond instead (after the
        /// head's timestamp).
        #[arg(long, conflicts_with = "height")]
        timestamp_ms: Option<u64>,
        /// Cycles per fire (default: `max_cycles_per_fire`).
        #[arg(long)]
        gas_limit: Option<u64>,
        /// The lane fee cap per cycle to price (#31; default `2 × lane
        /// basefee + priority fee`).
        #[arg(long)]
        max_fee_per_cycle: Option<u64>,
        /// The priority fee (bid) per cycle to price.
        #[arg(long, alias = "bid")]
        max_priority_fee_per_cycle: Option<u64>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Events, filtered by name, actor and height range.
    Events {
        /// Event name (e.g. TimerFired).
        #[arg(long)]
        name: Option<String>,
        /// Emitting actor.
        #[arg(long)]
        actor: Option<String>,
        /// Lowest height.
        #[arg(long)]
        from: Option<u64>,
        /// Highest height (with --follow: stop once it is reached).
        #[arg(long)]
        to: Option<u64>,
        /// Most events.
        #[arg(long, conflicts_with = "follow")]
        limit: Option<u64>,
        /// Keep polling and print new matching events as blocks arrive, from
        /// the current head (or --from) until Ctrl-C; with --json, one event
        /// per line.
        #[arg(long)]
        follow: bool,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Produce N blocks now (dev chains only).
    Mine {
        /// Number of blocks.
        #[arg(default_value_t = 1)]
        blocks: u64,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Save the dev chain's state and print its id for `timerhost revert`
    /// (dev chains only; held in the node's memory, lost when it stops).
    Snapshot {
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Return the dev chain to a snapshot: head, state, blocks, receipts and
    /// events. That snapshot and every later one are forgotten.
    Revert {
        /// Snapshot id, as `timerhost snapshot` printed it (e.g. 0x1).
        id: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Create a signing key, or list the dev accounts and key files.
    Keys {
        /// What to do.
        #[command(subcommand)]
        action: KeysAction,
    },
    /// Deploy a Python actor.
    Deploy {
        /// The actor's source file.
        file: PathBuf,
        /// Arguments of `deploy`, as a JSON array.
        #[arg(long)]
        args: Option<String>,
        /// Amount transferred to the new actor.
        #[arg(long, default_value = "0")]
        value: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Call an actor's handler.
    Call {
        /// The actor.
        actor: String,
        /// Handler name.
        handler: String,
        /// Arguments, as a JSON array.
        args: Option<String>,
        /// Amount transferred to the actor.
        #[arg(long, default_value = "0")]
        value: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Transfer funds.
    Transfer {
        /// Recipient.
        to: String,
        /// Amount in the smallest unit.
        amount: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Revoke every timer that names the signer as fee payer and was
    /// scheduled before now: each is removed when it comes due, without
    /// running and without charging the signer; its deposit is refunded.
    RevokeTimerPayments {
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
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
    /// Call any JSON-RPC method: `timerhost rpc th_getTimers '[{"actor":"0x…"}]'`.
    Rpc {
        /// Method name.
        method: String,
        /// Parameters, as JSON (an array, or one value).
        params: Option<String>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// Key commands.
#[derive(Debug, Subcommand)]
pub enum KeysAction {
    /// Generate a secp256k1 key from OS randomness and write it to a new
    /// file (mode 0600, never overwritten) that `--key FILE` reads; prints
    /// its address. With --consensus: a validator's ed25519 consensus key,
    /// with its public key for the genesis validator set.
    New {
        /// The key file to create.
        #[arg(long, conflicts_with = "home", required_unless_present = "home")]
        out: Option<PathBuf>,
        /// Write it to HOME/keys/ADDRESS.key (HOME/consensus.key with
        /// --consensus) instead.
        #[arg(long)]
        home: Option<PathBuf>,
        /// A validator's consensus key (ed25519) instead of an account key.
        #[arg(long)]
        consensus: bool,
    },
    /// A node's consensus key: its validator address and public key (what
    /// a proposal adding it names: `timerhost gov propose add-validator`).
    ShowConsensus {
        /// The node's home (reads HOME/consensus.key).
        #[arg(long)]
        home: PathBuf,
    },
    /// The ten dev accounts (their keys are public) and, with --home, the
    /// key files in HOME/keys.
    List {
        /// List the key files of HOME/keys too.
        #[arg(long)]
        home: Option<PathBuf>,
    },
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
        Command::Snapshot { .. } | Command::Revert { .. } | Command::Mine { .. } => {
            crate::dev_tools::run(cli.json, &cli.command)
        }
        Command::Deploy { .. }
        | Command::Call { .. }
        | Command::Transfer { .. }
        | Command::RevokeTimerPayments { .. } => crate::transact::run(cli.json, &cli.command),
        _ => crate::query::run(cli.json, &cli.command),
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
