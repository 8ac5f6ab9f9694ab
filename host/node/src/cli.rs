//! The `timerhost` command line.
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
use timerhost_rpc::Client;
use timerhost_types::{Genesis, TxKind, DEV_CHAIN_ID};

use crate::client;
use crate::client_args::{pretty, print, send_and_report, NodeArgs, TxArgs};
use crate::config::{parse_duration, NodeConfig};
use crate::cron::{cron, CronAction};
use crate::dev::{dev, dev_account_rows, print_dev_accounts};
use crate::error::{NodeError, Result};
use crate::gov::{gov, GovAction};
use crate::home::{parse_genesis, Home, DEFAULT_GENESIS_TOML};
use crate::producer::Schedule;
use crate::run::RunOptions;

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
    /// Run a node on an initialised home: JSON-RPC, block production, metrics.
    /// Restarting continues from the last committed block.
    Node {
        /// Home directory (see `timerhost init`).
        #[arg(long)]
        home: PathBuf,
        /// JSON-RPC listen address [config: rpc; default 127.0.0.1:8645].
        #[arg(long)]
        rpc: Option<SocketAddr>,
        /// Interval between blocks, e.g. 1s, 250ms [config: block_time].
        #[arg(long, conflicts_with = "manual")]
        block_time: Option<String>,
        /// Produce blocks only on request (dev_mine) [config: manual].
        #[arg(long)]
        manual: bool,
        /// Prometheus metrics listen address [config: metrics].
        #[arg(long)]
        metrics: Option<SocketAddr>,
        /// Node config file (default: HOME/node.toml when present).
        #[arg(long)]
        config: Option<PathBuf>,
    },
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
    /// its address.
    New {
        /// The key file to create.
        #[arg(long, conflicts_with = "home", required_unless_present = "home")]
        out: Option<PathBuf>,
        /// Write it to HOME/keys/ADDRESS.key instead.
        #[arg(long)]
        home: Option<PathBuf>,
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
    let long_running = matches!(cli.command, Command::Node { .. } | Command::Dev { .. });
    init_logging(
        &cli.log_format,
        if long_running {
            "warn,timerhost_node=info"
        } else {
            "warn"
        },
    );
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
        } => init(cli.json, home, *dev, *chain_id, genesis.as_ref()),
        Command::Replay { home } => replay(cli.json, home),
        Command::Node {
            home,
            rpc,
            block_time,
            manual,
            metrics,
            config,
        } => node(
            cli.json,
            home,
            *rpc,
            block_time.as_deref(),
            *manual,
            *metrics,
            config.as_ref(),
        ),
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
        _ => client_command(cli),
    }
}

fn node(
    as_json: bool,
    home: &PathBuf,
    rpc: Option<SocketAddr>,
    block_time: Option<&str>,
    manual: bool,
    metrics: Option<SocketAddr>,
    config: Option<&PathBuf>,
) -> Result<()> {
    let home = Home::new(home);
    let mut cfg = match config {
        Some(path) => NodeConfig::load(path)?,
        None if home.root().join("node.toml").exists() => {
            NodeConfig::load(&home.root().join("node.toml"))?
        }
        None => NodeConfig::default(),
    };
    if let Some(r) = rpc {
        cfg.rpc = r;
    }
    if let Some(b) = block_time {
        cfg.block_time = b.to_string();
        cfg.manual = false;
    }
    if manual {
        cfg.manual = true;
    }
    let schedule = if cfg.manual {
        Schedule::Manual
    } else {
        Schedule::Interval(parse_duration(&cfg.block_time).map_err(NodeError::Usage)?)
    };
    let metrics = match metrics {
        Some(m) => Some(m),
        None => cfg.metrics_addr().map_err(NodeError::Usage)?,
    };
    let chain = home.open()?;
    crate::run::run(
        chain,
        RunOptions {
            rpc: cfg.rpc,
            schedule,
            metrics,
            proposer: cfg.proposer,
            mempool: cfg.mempool,
            json: as_json,
            prelude: Vec::new(),
        },
    )?;
    Ok(())
}

/// Normalises a snapshot id (`0x1`, or decimal `1`) to the node's form (`0x1`).
fn parse_snapshot_id(id: &str) -> Result<String> {
    let t = id.trim();
    let n = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    };
    n.map(|n| format!("{n:#x}")).ok_or_else(|| {
        NodeError::Usage(format!(
            "bad snapshot id {id:?}: give it as `timerhost snapshot` printed it, e.g. 0x1"
        ))
    })
}

/// The height of snapshot `id` as `th_status` lists it (`null` if it is not held).
fn snapshot_height(c: &Client, id: &serde_json::Value) -> Result<serde_json::Value> {
    let status = c.call("th_status", json!([]))?;
    Ok(status["snapshots"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == *id)
        .map_or(serde_json::Value::Null, |s| s["height"].clone()))
}

fn print_event(e: &serde_json::Value) {
    println!(
        "#{} {} from {}: {}",
        e["height"],
        e["name"].as_str().unwrap_or("?"),
        e["emitter"].as_str().unwrap_or("?"),
        e["data"]
    );
}

fn keys(j: bool, action: &KeysAction) -> Result<()> {
    match action {
        KeysAction::New { out, home } => {
            let key = crate::keys::generate();
            let address = key.address();
            let path = match (out, home) {
                (Some(out), _) => out.clone(),
                (None, Some(home)) => crate::keys::key_path(home, &address),
                (None, None) => unreachable!("clap requires --out or --home"),
            };
            crate::keys::write_new(&path, &key)?;
            let v = json!({ "address": address, "file": path });
            print(j, &v, |_| {
                println!("address {address}");
                println!(
                    "key written to {} (mode 0600); sign with --key {}",
                    path.display(),
                    path.display()
                );
            });
        }
        KeysAction::List { home } => {
            let dir = home.as_deref().map(crate::keys::keys_dir);
            let files = match &dir {
                Some(d) => crate::keys::list_dir(d)?,
                None => Vec::new(),
            };
            let file_rows: Vec<_> = files
                .iter()
                .map(|k| match &k.address {
                    Ok(a) => json!({ "file": k.path, "address": a }),
                    Err(e) => json!({ "file": k.path, "error": e }),
                })
                .collect();
            let v = json!({
                "dev_accounts": dev_account_rows(),
                "keys_dir": dir,
                "keys": file_rows,
            });
            print(j, &v, |v| {
                print_dev_accounts(v["dev_accounts"].as_array().map_or(&[], Vec::as_slice));
                if let Some(d) = &dir {
                    println!("Key files in {}:", d.display());
                    if files.is_empty() {
                        println!("  (none; create one with `timerhost keys new --home ...`)");
                    }
                    for k in &files {
                        match &k.address {
                            Ok(a) => println!("  {a}  {}", k.path.display()),
                            Err(e) => println!("  unreadable  {}: {e}", k.path.display()),
                        }
                    }
                }
            });
        }
    }
    Ok(())
}

fn client_command(cli: &Cli) -> Result<()> {
    let j = cli.json;
    match &cli.command {
        Command::Status { node } => {
            let s = Client::new(&node.rpc).call("th_status", json!([]))?;
            print(j, &s, |s| {
                println!(
                    "chain {}{} at height {} (head {}, timestamp {} ms)",
                    s["chain_id"],
                    if s["dev"] == true { " (dev)" } else { "" },
                    s["height"],
                    s["head_hash"].as_str().unwrap_or("?"),
                    s["timestamp"]
                );
                println!(
                    "mempool {}/{}; producer {}",
                    s["mempool"]["size"], s["mempool"]["capacity"], s["producer"]
                );
                println!(
                    "timers {}; deposits held {}",
                    s["timers"]["status"].as_str().unwrap_or("?"),
                    s["timers"]["deposits_held"].as_str().unwrap_or("?")
                );
            });
        }
        Command::Balance { address, node } => {
            let a = client::address(address)?;
            let acct = Client::new(&node.rpc).call("th_getAccount", json!([a]))?;
            print(j, &acct, |a| {
                println!(
                    "{}: balance {} nonce {}{}",
                    a["address"].as_str().unwrap_or("?"),
                    a["balance"].as_str().unwrap_or("?"),
                    a["nonce"],
                    if a["is_actor"] == true {
                        " (actor)"
                    } else {
                        ""
                    }
                )
            });
        }
        Command::Block { height, node } => {
            let b = Client::new(&node.rpc).call("th_getBlock", json!([height]))?;
            if b.is_null() {
                return Err(NodeError::Usage(format!(
                    "no block at height {}",
                    height.unwrap_or_default()
                )));
            }
            print(j, &b, pretty);
        }
        Command::Timer { id, node } => {
            let t = Client::new(&node.rpc).call("th_getTimer", json!([id]))?;
            if t.is_null() {
                return Err(NodeError::Usage(format!(
                    "no pending timer {id} (it fired, expired or was cancelled)"
                )));
            }
            print(j, &t, pretty);
        }
        Command::Quote {
            height,
            timestamp_ms,
            gas_limit,
            node,
        } => {
            let q = Client::new(&node.rpc).call(
                "th_quoteTimer",
                json!([{ "height": height, "timestamp_ms": timestamp_ms, "gas_limit": gas_limit }]),
            )?;
            print(j, &q, |q| {
                let at = match q["timestamp_ms"].as_u64() {
                    Some(t) => format!("due at {t} ms"),
                    None => format!("at height {}", q["height"]),
                };
                println!(
                    "a timer {at} with gas_limit {}: max_cost {} per fire, deposit {} (empty payload)",
                    q["gas_limit"],
                    q["max_cost"].as_str().unwrap_or("?"),
                    q["deposit"].as_str().unwrap_or("?")
                );
                println!(
                    "lane {} cycles, {} reserved by {} timer(s) queued there; {}",
                    q["lane_budget"],
                    q["reserved"],
                    q["queued"],
                    if q["fits"] == true {
                        "one more fits"
                    } else {
                        "one more would be carried over"
                    }
                );
            });
        }
        Command::Timers {
            actor,
            height,
            fee_payer,
            node,
        } => {
            let ts = Client::new(&node.rpc).call(
                "th_getTimers",
                json!([{ "actor": actor, "height": height, "fee_payer": fee_payer }]),
            )?;
            print(j, &ts, |ts| {
                let list = ts.as_array().cloned().unwrap_or_default();
                println!("{} pending timer(s)", list.len());
                for t in list {
                    println!(
                        "  {}  actor {}  trigger {} {}  handler {}  payer {}  expires {}  deposit {}",
                        t["timer_id"].as_str().unwrap_or("?"),
                        t["actor"].as_str().unwrap_or("?"),
                        t["trigger"]["kind"].as_str().unwrap_or("?"),
                        t["height"],
                        t["handler"].as_str().unwrap_or("?"),
                        t["fee_payer"].as_str().unwrap_or("?"),
                        t["expires_at"],
                        t["deposit"].as_str().unwrap_or("?")
                    );
                }
            });
        }
        Command::Globalbox { limit, node } => {
            let entries =
                Client::new(&node.rpc).call("th_getGlobalbox", json!([{ "limit": limit }]))?;
            print(j, &entries, |entries| {
                let list = entries.as_array().cloned().unwrap_or_default();
                println!("{} queued fire(s), head first", list.len());
                for e in list {
                    println!(
                        "  #{}  {}  {} timer {}  due at {}  bid {}  score {} (at enqueue {})",
                        e["position"],
                        e["actor"].as_str().unwrap_or("?"),
                        e["kind"].as_str().unwrap_or("?"),
                        e["timer_id"].as_str().unwrap_or("?"),
                        e["due_height"],
                        e["bid"],
                        e["score_now"].as_str().unwrap_or("?"),
                        e["score"].as_str().unwrap_or("?"),
                    );
                }
            });
        }
        Command::Events {
            name,
            actor,
            from,
            to,
            limit,
            follow,
            node,
        } => {
            let c = Client::new(&node.rpc);
            if *follow {
                let f = crate::follow::Follow {
                    name: name.clone(),
                    actor: actor.clone(),
                    from: *from,
                    to: *to,
                    ..Default::default()
                };
                // JSON Lines: the stream has no end to close an array with.
                crate::follow::follow(
                    &c,
                    &f,
                    |e| {
                        if j {
                            println!("{e}");
                        } else {
                            print_event(e);
                        }
                    },
                    |msg| eprintln!("note: {msg}"),
                )?;
                return Ok(());
            }
            let es = c.call(
                "th_getEvents",
                json!([{ "name": name, "actor": actor, "from": from, "to": to, "limit": limit }]),
            )?;
            print(j, &es, |es| {
                for e in es.as_array().into_iter().flatten() {
                    print_event(e);
                }
            });
        }
        Command::Snapshot { node } => {
            let c = Client::new(&node.rpc);
            let id = c.call("dev_snapshot", json!([]))?;
            let v = json!({ "id": id, "height": snapshot_height(&c, &id)? });
            print(j, &v, |v| {
                println!(
                    "snapshot {} at height {} (revert with `timerhost revert {}`)",
                    v["id"].as_str().unwrap_or("?"),
                    v["height"],
                    v["id"].as_str().unwrap_or("?")
                )
            });
        }
        Command::Revert { id, node } => {
            let c = Client::new(&node.rpc);
            let id = &parse_snapshot_id(id)?;
            // Read before reverting: the revert forgets the snapshot, and on
            // an interval node the head may move on right after it.
            let height = snapshot_height(&c, &json!(id))?;
            if c.call("dev_revert", json!([id]))? != json!(true) {
                return Err(NodeError::Usage(format!(
                    "the node holds no snapshot {id}: unknown, already reverted to, or forgotten by a revert to an earlier one (snapshots are lost when the node stops)"
                )));
            }
            let v = json!({ "id": id, "reverted": true, "height": height });
            print(j, &v, |v| {
                println!("reverted to snapshot {id}: head at height {}", v["height"])
            });
        }
        Command::Keys { action } => keys(j, action)?,
        Command::Mine { blocks, node } => {
            let r = Client::new(&node.rpc).call("dev_mine", json!([blocks]))?;
            print(j, &r, |r| {
                println!("mined {} block(s), head at {}", r["mined"], r["to"]);
            });
        }
        Command::Deploy {
            file,
            args,
            value,
            tx,
        } => {
            let code = std::fs::read_to_string(file).map_err(|source| NodeError::Io {
                action: "reading",
                path: file.clone(),
                source,
            })?;
            let kind = TxKind::DeployActor {
                code,
                args: client::parse_args(args.as_deref())?,
                value: client::parse_amount(value)?,
            };
            send_and_report(j, tx, kind)?;
        }
        Command::Call {
            actor,
            handler,
            args,
            value,
            tx,
        } => {
            let kind = TxKind::CallActor {
                actor: client::address(actor)?,
                handler: handler.clone(),
                args: client::parse_args(args.as_deref())?,
                value: client::parse_amount(value)?,
            };
            send_and_report(j, tx, kind)?;
        }
        Command::Transfer { to, amount, tx } => {
            let kind = TxKind::Transfer {
                to: client::address(to)?,
                amount: client::parse_amount(amount)?,
            };
            send_and_report(j, tx, kind)?;
        }
        Command::RevokeTimerPayments { tx } => {
            send_and_report(j, tx, TxKind::RevokeTimerPayments)?;
        }
        Command::Rpc {
            method,
            params,
            node,
        } => {
            let params: serde_json::Value = match params {
                None => json!([]),
                Some(p) => serde_json::from_str(p)
                    .map_err(|e| NodeError::Usage(format!("params are not JSON ({e}): {p}")))?,
            };
            let r = Client::new(&node.rpc).call(method, params)?;
            if j {
                println!("{r}");
            } else {
                pretty(&r);
            }
        }
        Command::Gov { action } => gov(j, action)?,
        Command::Cron { action } => cron(j, action)?,
        Command::Receipt { hash, node } => {
            let r = Client::new(&node.rpc).call("th_getReceipt", json!([hash]))?;
            if r.is_null() {
                return Err(NodeError::Usage(format!("no transaction {hash} is known")));
            }
            if j {
                println!("{r}");
            } else if r.get("pending").is_some() {
                println!("{hash} is pending in the mempool");
            } else {
                client::print_receipt(&r);
            }
        }
        Command::Init { .. }
        | Command::Replay { .. }
        | Command::Node { .. }
        | Command::Dev { .. } => {
            unreachable!("handled in run")
        }
    }
    Ok(())
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
        dev_account_rows()
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
            print_dev_accounts(&accounts);
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn snapshot_ids_are_normalised_to_the_nodes_form() {
        assert_eq!(parse_snapshot_id("0x1a").unwrap(), "0x1a");
        assert_eq!(parse_snapshot_id(" 26 ").unwrap(), "0x1a");
        let e = parse_snapshot_id("one").unwrap_err().to_string();
        assert!(e.contains("bad snapshot id \"one\""), "{e}");
    }
}
