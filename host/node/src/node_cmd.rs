//! `timerhost node`: a node on an initialised home — `node.toml` merged
//! with the command line, then the RPC server, block producer and metrics.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::{parse_duration, NodeConfig};
use crate::error::{NodeError, Result};
use crate::home::Home;
use crate::producer::Schedule;
use crate::run::RunOptions;

pub(crate) fn node(
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
