//! `timerhost node` on a chain whose genesis lists validators: the node
//! joins the network under Malachite (`timerhost-consensus`) instead of
//! producing blocks alone.
//!
//! - A node whose consensus key (`[consensus] key_file`) is in the set
//!   votes and proposes in turn; any other node follows: it verifies and
//!   commits decided blocks, syncs, and serves RPC.
//! - Transactions sent to this node's RPC enter its mempool and are
//!   forwarded once to the peers' RPC (`[consensus] tx_gossip`); whichever
//!   validator proposes next includes them.
//! - Dev methods (`dev_mine`, snapshots, timestamps) are refused: blocks
//!   are decided by the network.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::json;
use timerhost_chain::accounts::timer_config;
use timerhost_chain::{Chain, ExecutedBlock, TxError};
use timerhost_consensus::app::{App, AppHooks, AppSettings};
use timerhost_consensus::core_types::{LinearTimeouts, Round};
use timerhost_consensus::{
    ByzantineMode, ConsensusKey, ConsensusMetrics, ConsensusSigner, DecidedStore, NetworkSettings,
    ValidatorSet,
};
use timerhost_rpc::{Mempool, RpcContext};
use timerhost_state::SledBackend;
use timerhost_types::{Address, Hash, SignedTransaction};

use crate::block_report::BlockReport;
use crate::config::{parse_duration, NodeConfig};
use crate::error::{NodeError, Result};
use crate::home::Home;
use crate::metrics::Metrics;
use crate::network_control::NetworkControl;
use crate::run::Services;

/// The mempool, log and metrics, as the consensus app sees them.
struct NodeHooks {
    chain: Arc<Chain<SledBackend>>,
    pool: Arc<Mutex<Mempool>>,
    metrics: Arc<Metrics>,
    as_json: bool,
    disk: crate::disk::DiskGuard,
}

impl AppHooks for NodeHooks {
    fn commit_allowed(&self) -> std::result::Result<(), String> {
        self.disk.allows_commit()
    }

    fn candidates(&self) -> Vec<(SignedTransaction, Address)> {
        let chain = &self.chain;
        let pool = self.pool.lock();
        let max = pool.config().max_block_txs;
        pool.candidates_with_senders(|a| Ok(chain.account(a)?.nonce), max)
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "could not read the mempool's candidates; proposing an empty block");
                Vec::new()
            })
    }

    fn known_senders(&self, txs: &[SignedTransaction]) -> Vec<Option<Address>> {
        self.pool.lock().known_senders(txs)
    }

    fn refused(&self, rejected: &[(usize, Hash, TxError)]) {
        let mut pool = self.pool.lock();
        for (_, hash, err) in rejected {
            if !matches!(err, TxError::BlockFull { .. }) {
                tracing::warn!(%hash, error = %err, "the block refused a mempool transaction; dropped");
                pool.drop_tx(hash, format!("refused by the block: {err}"));
            }
        }
    }

    fn committed(&self, executed: &ExecutedBlock, round: Round, started: Instant) {
        let chain = &self.chain;
        {
            let mut pool = self.pool.lock();
            if let Err(e) = pool.remove_stale(|a| Ok(chain.account(a)?.nonce)) {
                tracing::warn!(error = %e, "could not prune the mempool");
            }
            self.metrics.mempool_size.set(pool.len() as u64);
        }
        let summary = timer_config(&chain.store().state())
            .map_err(NodeError::from)
            .and_then(|timers| {
                BlockReport::after_commit(chain, executed, 0, &timers, started.elapsed())
            });
        match summary {
            Ok(s) => {
                self.metrics.record_block(&s);
                tracing::debug!(height = s.height, %round, "committed");
                crate::run::log_block(self.as_json, &s);
            }
            Err(e) => tracing::warn!(error = %e, "could not summarise a committed block"),
        }
    }
}

fn duration(field: &str, v: &str) -> Result<Duration> {
    parse_duration(v).map_err(|e| NodeError::Usage(format!("consensus.{field}: {e}")))
}

fn settings(home: &Home, cfg: &NodeConfig, moniker: String) -> Result<NetworkSettings> {
    let c = &cfg.consensus;
    let addr = |a: &str| {
        a.parse()
            .map_err(|e| NodeError::Usage(format!("consensus: {a:?} is not a multiaddr: {e}")))
    };
    let propose = duration("timeout_propose", &c.timeout_propose)?;
    let prevote = duration("timeout_prevote", &c.timeout_prevote)?;
    let precommit = duration("timeout_precommit", &c.timeout_precommit)?;
    Ok(NetworkSettings {
        moniker,
        listen: addr(&c.listen)?,
        peers: c.peers.iter().map(|p| addr(p)).collect::<Result<_>>()?,
        timeouts: LinearTimeouts {
            propose,
            prevote,
            precommit,
            rebroadcast: propose + prevote + precommit,
            ..LinearTimeouts::default()
        },
        block_time: parse_duration(&cfg.block_time).map_err(NodeError::Usage)?,
        status_interval: duration("status_interval", &c.status_interval)?,
        dir: home.root().join("consensus"),
        max_future_drift_ms: duration("max_future_drift", &c.max_future_drift)?.as_millis() as u64,
    })
}

/// This node's consensus key, if its key file exists.
fn load_key(home: &Home, cfg: &NodeConfig) -> Result<Option<ConsensusKey>> {
    let path = home.root().join(&cfg.consensus.key_file);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|source| NodeError::Io {
        action: "reading",
        path: path.clone(),
        source,
    })?;
    ConsensusKey::from_hex(text.trim())
        .map(Some)
        .map_err(|e| NodeError::Config {
            path,
            reason: e.to_string(),
        })
}

/// Runs a network node until SIGINT/SIGTERM; returns the last committed height.
pub(crate) fn run(
    chain: Chain<SledBackend>,
    home: &Home,
    cfg: &NodeConfig,
    metrics_addr: Option<std::net::SocketAddr>,
    as_json: bool,
    byzantine: Option<ByzantineMode>,
) -> Result<u64> {
    let chain_id = chain.genesis().chain_id;
    // #32: the set is state; the one of the next height is where this node
    // starts (it changes by proposal, at heights every node agrees on).
    let next = chain.head()?.height + 1;
    let record = chain
        .validators_at(next)?
        .ok_or_else(|| NodeError::Genesis {
            path: home.genesis_path(),
            reason: "a network node needs [[validators]] in its genesis".into(),
        })?;
    let validators = ValidatorSet::from_record(&record).map_err(|e| NodeError::Genesis {
        path: home.genesis_path(),
        reason: e.to_string(),
    })?;
    let key = load_key(home, cfg)?;
    let member = key
        .as_ref()
        .filter(|k| validators.contains(&k.address()))
        .cloned();
    if let (Some(k), None) = (&key, &member) {
        tracing::warn!(address = %k.address(), "this node's consensus key is not in the validator set of height {next}: it follows, and votes from the height a proposal adds it");
    }
    if member.is_none() && byzantine.is_some() {
        return Err(NodeError::Usage(
            "--byzantine-proposer needs this node's key in the validator set".into(),
        ));
    }
    let moniker = match &key {
        Some(k) => format!("validator-{}", &k.address().to_string()[..10]),
        None => "follower".to_string(),
    };
    let settings = settings(home, cfg, moniker)?;
    let store = DecidedStore::open(&settings.store_dir())?;
    let chain = Arc::new(chain);
    let pool = Arc::new(Mutex::new(Mempool::new(cfg.mempool)));
    let metrics = Arc::new(Metrics::default());
    metrics.height.set(chain.head()?.height);
    let consensus_metrics = Arc::new(ConsensusMetrics::default());
    let _ = metrics.consensus.set(consensus_metrics.clone());

    // A node with a consensus key runs as a validator identity, in the set
    // or not: the engine votes only at heights whose set holds it, so a
    // follower a proposal adds starts voting at the activation height. A
    // node without one only verifies (its signatures are never asked for).
    let is_validator = key.is_some();
    let signer = ConsensusSigner::new(chain_id, key.clone().unwrap_or_else(ConsensusKey::generate));
    let describe = json!({
        "mode": "consensus",
        "validators": validators.validators().len(),
        "validator": member.as_ref().map(|k| k.address().to_string()),
        "block_time_ms": settings.block_time.as_millis() as u64,
        "p2p": cfg.consensus.listen,
    });
    let disk = crate::disk::DiskGuard::new(home.data_path(), cfg.storage.min_free_bytes);
    let control = NetworkControl {
        describe,
        gossip: crate::gossip::Gossip::start(&cfg.consensus.tx_gossip, cfg.consensus.tx_relay),
        key: key.as_ref().map(|k| k.address().to_string()),
        consensus: consensus_metrics.clone(),
        disk: disk.clone(),
        decided: store.clone(),
        chain: chain.clone(),
    };

    let ctx = RpcContext::new(chain.clone(), pool.clone(), Arc::new(control));
    let services = Services::start(
        4,
        "node",
        false,
        cfg.rpc,
        ctx,
        metrics_addr,
        metrics.clone(),
    )?;
    chain.store().set_proof_blocks(cfg.storage.proof_blocks);
    let pruner = crate::pruner::Pruner::start(chain.clone(), cfg.storage.keep_blocks);
    let snapshotter = crate::snapshotter::Snapshotter::start(
        chain.clone(),
        cfg.sync.snapshot_interval,
        cfg.sync.snapshot_keep,
    );
    let head = chain.head()?;
    let role = match (&member, &key) {
        (Some(k), _) => format!("validator {}", k.address()),
        (None, Some(k)) => format!("standby validator {} (not in the set yet)", k.address()),
        (None, None) => "follower".into(),
    };
    services.announce(
        as_json,
        chain_id,
        head.height,
        json!({ "role": role, "p2p": cfg.consensus.listen }),
        format!(
            "— {role} of {} on {}; Ctrl-C stops",
            validators.validators().len(),
            cfg.consensus.listen
        ),
    );

    let hooks = Arc::new(NodeHooks {
        chain: chain.clone(),
        pool,
        metrics,
        as_json,
        disk,
    });
    let app_settings = AppSettings {
        timeouts: settings.timeouts,
        block_time: settings.block_time,
        max_future_drift_ms: settings.max_future_drift_ms,
        tip_recipient: cfg.proposer,
        byzantine,
        reassembly: cfg.consensus.reassembly_limits(),
    };
    let outcome: Result<()> = services.runtime.block_on(async {
        let (mut channels, engine) =
            timerhost_consensus::engine::start(&settings, signer.clone(), is_validator).await?;
        timerhost_consensus::engine::watch(&channels, consensus_metrics.clone());
        let mut app = App::new(
            chain.clone(),
            hooks,
            signer,
            validators,
            app_settings,
            store,
            consensus_metrics,
        );
        let task = tokio::spawn(async move { app.run(&mut channels).await });
        let result = tokio::select! {
            r = task => match r {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(e.into()),
                Err(e) => Err(NodeError::Usage(format!("the consensus app stopped: {e}"))),
            },
            _ = crate::run::wait_for_signal() => Ok(()),
        };
        engine.actor.stop(None);
        result
    });
    if let Some(pruner) = pruner {
        pruner.stop();
    }
    drop(snapshotter);
    services.stop();
    outcome?;
    let height = chain.head()?.height;
    if as_json {
        println!("{}", json!({ "event": "stopped", "height": height }));
    } else {
        println!("stopped at height {height}");
    }
    Ok(height)
}
