//! The `timerhost` command line.
//!
//! Human-readable output by default; `--json` prints one JSON document per
//! command for scripts. Exit codes: 0 success, 1 error (the message names
//! what was wrong), 2 replay found a state-root mismatch.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::json;
use timerhost_chain::ChainError;
use timerhost_types::{dev_accounts, Genesis, DEV_CHAIN_ID};

use crate::error::{NodeError, Result};
use crate::home::{parse_genesis, Home, DEFAULT_GENESIS_TOML};

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
}

/// Entry point used by `main`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(&cli.log_format);
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = match &e {
                NodeError::Chain(ChainError::ReplayMismatch { .. }) => 2,
                _ => 1,
            };
            if cli.json {
                println!("{}", json!({ "error": e.to_string() }));
            } else {
                eprintln!("error: {e}");
            }
            ExitCode::from(code)
        }
    }
}

fn init_logging(format: &str) {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
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
        } => init(cli.json, home, *dev, *chain_id, genesis.as_ref()),
        Command::Replay { home } => replay(cli.json, home),
    }
}

fn init(
    as_json: bool,
    home: &PathBuf,
    dev: bool,
    chain_id: Option<u64>,
    genesis_file: Option<&PathBuf>,
) -> Result<()> {
    let mut genesis = if dev {
        if chain_id.is_some_and(|id| id != DEV_CHAIN_ID) {
            return Err(NodeError::Usage(format!(
                "dev chains always use chain id {DEV_CHAIN_ID}; drop --chain-id or --dev"
            )));
        }
        Genesis::dev()
    } else if let Some(path) = genesis_file {
        let text = std::fs::read_to_string(path).map_err(|source| NodeError::Io {
            action: "reading",
            path: path.clone(),
            source,
        })?;
        parse_genesis(&text).map_err(|reason| NodeError::Genesis {
            path: path.clone(),
            reason,
        })?
    } else {
        parse_genesis(DEFAULT_GENESIS_TOML).map_err(|reason| NodeError::Genesis {
            path: "config/genesis.toml".into(),
            reason,
        })?
    };
    if let Some(id) = chain_id {
        if !dev && id == DEV_CHAIN_ID {
            return Err(NodeError::Usage(format!(
                "chain id {DEV_CHAIN_ID} is reserved for dev chains; use --dev"
            )));
        }
        genesis.chain_id = id;
    }
    let chain = Home::new(home).init(&genesis)?;
    let head = chain.head()?;
    let accounts: Vec<_> = if genesis.is_dev() {
        dev_accounts()
            .iter()
            .enumerate()
            .map(|(i, k)| json!({ "index": i, "address": k.address(), "private_key": k.to_hex() }))
            .collect()
    } else {
        Vec::new()
    };
    if as_json {
        println!(
            "{}",
            json!({
                "home": home,
                "chain_id": genesis.chain_id,
                "dev": genesis.is_dev(),
                "genesis_hash": head.hash(),
                "state_root": head.state_root,
                "dev_accounts": accounts,
            })
        );
    } else {
        println!("Initialised timerhost home at {}", home.display());
        println!(
            "  chain id      {}{}",
            genesis.chain_id,
            if genesis.is_dev() { " (dev)" } else { "" }
        );
        println!("  genesis hash  {}", head.hash());
        println!("  state root    {}", head.state_root);
        if genesis.is_dev() {
            println!(
                "Dev accounts (their keys are public: only accepted on chain {DEV_CHAIN_ID}):"
            );
            for a in &accounts {
                println!(
                    "  #{:<2} {}  key {}",
                    a["index"],
                    a["address"].as_str().unwrap_or(""),
                    a["private_key"].as_str().unwrap_or("")
                );
            }
        }
    }
    Ok(())
}

fn replay(as_json: bool, home: &PathBuf) -> Result<()> {
    let chain = Home::new(home).open()?;
    let head = chain.head()?;
    let bar = if std::io::stderr().is_terminal() && !as_json {
        let bar = indicatif::ProgressBar::new(head.height + 1);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "replaying {bar:40} {pos}/{len} blocks ({per_sec}, eta {eta})",
            )
            .expect("valid template"),
        );
        Some(bar)
    } else {
        None
    };
    let step = (head.height / 10).max(1);
    let verified = chain.replay(|p| match &bar {
        Some(bar) => bar.set_position(p.height + 1),
        None if !as_json && (p.height % step == 0 || p.height == p.head) => {
            eprintln!("replay: verified height {}/{}", p.height, p.head)
        }
        None => {}
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if as_json {
        println!(
            "{}",
            json!({ "verified_height": verified, "state_root": head.state_root, "ok": true })
        );
    } else {
        println!(
            "replayed {} blocks from genesis: every state root matches (head {} at height {})",
            verified, head.state_root, verified
        );
    }
    Ok(())
}
