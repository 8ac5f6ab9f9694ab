//! `timerhost node`: a node on an initialised home — `node.toml` merged
//! with the command line, then either the single-node block producer (a
//! genesis without validators) or a member of a validator network (a
//! genesis listing `[[validators]]`, see [`crate::network_node`]).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use timerhost_consensus::ByzantineMode;

use crate::config::{parse_duration, NodeConfig};
use crate::error::{NodeError, Result};
use crate::home::Home;
use crate::producer::Schedule;
use crate::run::RunOptions;

/// `timerhost node`'s arguments.
#[derive(Debug, Args)]
pub struct RunNodeArgs {
    /// Home directory (see `timerhost init`).
    #[arg(long)]
    pub home: PathBuf,
    /// JSON-RPC listen address [config: rpc; default 127.0.0.1:8645].
    #[arg(long)]
    pub rpc: Option<SocketAddr>,
    /// Interval between blocks, e.g. 1s, 250ms [config: block_time].
    #[arg(long, conflicts_with = "manual")]
    pub block_time: Option<String>,
    /// Produce blocks only on request (dev_mine) [config: manual]; single-node chains only.
    #[arg(long)]
    pub manual: bool,
    /// Prometheus metrics listen address [config: metrics].
    #[arg(long)]
    pub metrics: Option<SocketAddr>,
    /// Node config file (default: HOME/node.toml when present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Test hook for the end-to-end tests: this validator proposes corrupted
    /// blocks (wrong-state-root | bad-transaction).
    #[arg(long, hide = true)]
    pub byzantine_proposer: Option<ByzantineMode>,
    /// Join by state sync when the home has no blocks: restore a recent
    /// snapshot from [sync] rpc_servers, checked against [sync]
    /// trust_height/trust_hash, instead of replaying from genesis
    /// [config: sync.enable].
    #[arg(long)]
    pub state_sync: bool,
    /// Test hook for the end-to-end tests: run as a release that does not
    /// know this governed upgrade (it stops at the upgrade's height).
    #[arg(long, hide = true)]
    pub forget_upgrade: Vec<String>,
}

impl RunNodeArgs {
    /// Runs the node until SIGINT/SIGTERM.
    pub fn execute(&self, as_json: bool) -> Result<()> {
        for name in &self.forget_upgrade {
            timerhost_chain::upgrades::forget(name);
        }
        let home = Home::new(&self.home);
        let mut cfg = match &self.config {
            Some(path) => NodeConfig::load(path)?,
            None if home.root().join("node.toml").exists() => {
                NodeConfig::load(&home.root().join("node.toml"))?
            }
            None => NodeConfig::default(),
        };
        if let Some(r) = self.rpc {
            cfg.rpc = r;
        }
        if let Some(b) = &self.block_time {
            cfg.block_time = b.clone();
            cfg.manual = false;
        }
        if self.manual {
            cfg.manual = true;
        }
        let metrics = match self.metrics {
            Some(m) => Some(m),
            None => cfg.metrics_addr().map_err(NodeError::Usage)?,
        };
        if self.state_sync {
            cfg.sync.enable = true;
        }
        if cfg.sync.enable {
            crate::state_sync::sync_if_empty(&home, &cfg.sync)?;
        }
        let chain = home.open()?;
        if !chain.genesis().validators.is_empty() {
            if cfg.manual {
                return Err(NodeError::Usage(
                    "manual blocks (--manual, manual = true) are for single-node chains: this genesis lists validators, whose blocks are decided by consensus".into(),
                ));
            }
            crate::network_node::run(
                chain,
                &home,
                &cfg,
                metrics,
                as_json,
                self.byzantine_proposer,
            )?;
            return Ok(());
        }
        if self.byzantine_proposer.is_some() {
            return Err(NodeError::Usage(
                "--byzantine-proposer needs a validator network (a genesis with [[validators]])"
                    .into(),
            ));
        }
        let schedule = if cfg.manual {
            Schedule::Manual
        } else {
            Schedule::Interval(parse_duration(&cfg.block_time).map_err(NodeError::Usage)?)
        };
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
                keep_blocks: cfg.storage.keep_blocks,
                proof_blocks: cfg.storage.proof_blocks,
                disk: Some(crate::disk::DiskGuard::new(
                    home.data_path(),
                    cfg.storage.min_free_bytes,
                )),
            },
        )?;
        Ok(())
    }
}
