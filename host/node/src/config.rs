//! The node configuration file (`config/node.toml` documents every field;
//! `timerhost node` reads `HOME/node.toml` when present, or `--config FILE`).
//! Command-line flags override the file.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use timerhost_chain::DEFAULT_MAX_FUTURE_DRIFT_MS;
use timerhost_consensus::reassembly::{max_stream_footprint, ReassemblyLimits, MAX_BUFFERED_BYTES};
use timerhost_consensus::streaming::MAX_STREAMED_BLOCK_BYTES;
use timerhost_rpc::MempoolConfig;
use timerhost_types::Address;

use crate::error::{NodeError, Result};

/// The shipped, documented configuration (`config/node.toml`).
pub const DEFAULT_NODE_TOML: &str = include_str!("../../../config/node.toml");

/// Default JSON-RPC listen address.
pub const DEFAULT_RPC: &str = "127.0.0.1:8645";

/// `node.toml`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NodeConfig {
    /// JSON-RPC listen address.
    pub rpc: SocketAddr,
    /// Interval between blocks (`"1s"`, `"250ms"`, `"2m"`); a block that
    /// takes longer is followed by the next at once.
    pub block_time: String,
    /// Produce blocks only on request (`dev_mine`).
    pub manual: bool,
    /// Prometheus listen address; empty = off.
    pub metrics: String,
    /// Address credited with the tips of the blocks this node produces.
    pub proposer: Address,
    /// Mempool bounds.
    pub mempool: MempoolConfig,
    /// Validator networks: peers, keys, timeouts (used when the genesis
    /// lists validators).
    pub consensus: ConsensusSection,
    /// What history the node keeps on disk.
    pub storage: StorageSection,
    /// State snapshots served to joining nodes, and joining by one.
    pub sync: SyncSection,
}

/// `[sync]` in `node.toml`: state sync (#44). A node serves snapshots of
/// its state every `snapshot_interval` blocks; a new node with `enable`
/// (or `timerhost node --state-sync`) and an empty home restores one from
/// `rpc_servers` instead of replaying from genesis.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SyncSection {
    /// Blocks between two snapshots this node takes and serves; 0 takes
    /// none.
    pub snapshot_interval: u64,
    /// Snapshots kept (the newest); older ones are deleted.
    pub snapshot_keep: u64,
    /// Join by state sync when the home has no blocks yet.
    pub enable: bool,
    /// JSON-RPC URLs of the peers whose snapshots are fetched (two or more,
    /// so one bad peer cannot stop a sync).
    pub rpc_servers: Vec<String>,
    /// Height of a block the operator trusts (from a block explorer or
    /// another operator): the snapshot is of this height or below it.
    pub trust_height: u64,
    /// That block's hash (`0x…`).
    pub trust_hash: String,
    /// Chunks fetched at once, spread over the servers.
    pub fetchers: u64,
}

impl Default for SyncSection {
    fn default() -> Self {
        Self {
            snapshot_interval: 1_000,
            snapshot_keep: 2,
            enable: false,
            rpc_servers: Vec::new(),
            trust_height: 0,
            trust_hash: String::new(),
            fetchers: 4,
        }
    }
}

impl SyncSection {
    /// Checks what a sync needs, when it is enabled.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.snapshot_keep == 0 {
            return Err("sync.snapshot_keep must be at least 1".into());
        }
        if self.fetchers == 0 || self.fetchers > 64 {
            return Err("sync.fetchers must be between 1 and 64".into());
        }
        if !self.enable {
            return Ok(());
        }
        if self.rpc_servers.is_empty() {
            return Err("sync.enable needs sync.rpc_servers: the JSON-RPC URLs of peers that serve snapshots".into());
        }
        if self.trust_height == 0 {
            return Err("sync.enable needs sync.trust_height and sync.trust_hash: a recent block you trust (ask another operator or a block explorer)".into());
        }
        self.trusted_hash()?;
        Ok(())
    }

    /// `trust_hash`, parsed.
    pub fn trusted_hash(&self) -> std::result::Result<timerhost_types::Hash, String> {
        self.trust_hash
            .parse()
            .map_err(|e| format!("sync.trust_hash = {:?}: {e}", self.trust_hash))
    }
}

/// `[storage]` in `node.toml`: how much history the node keeps and how
/// much disk it leaves free (#44).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageSection {
    /// Blocks whose transactions, receipts and events are kept (the last
    /// N); older ones are pruned in the background. 0 keeps every block
    /// (an archive node, the default). Headers and state are always kept.
    pub keep_blocks: u64,
    /// Blocks whose state stays provable (`th_getProof` with a `height`,
    /// #48): their stale tree nodes and each written key's previous value
    /// are kept (`timerhost_state::recent`). 0 proves at the head only.
    pub proof_blocks: u64,
    /// Free bytes the data directory's filesystem must have for the node to
    /// commit a block (`crate::disk`); below it the node waits, serving
    /// reads, until space returns.
    pub min_free_bytes: u64,
}

impl Default for StorageSection {
    fn default() -> Self {
        Self {
            keep_blocks: 0,
            proof_blocks: timerhost_state::DEFAULT_PROOF_BLOCKS,
            min_free_bytes: crate::disk::DEFAULT_MIN_FREE_BYTES,
        }
    }
}

/// `[consensus]` in `node.toml`: how the node joins a validator network.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsensusSection {
    /// libp2p listen address (`/ip4/127.0.0.1/tcp/26656`).
    pub listen: String,
    /// Peers to dial and keep connected (libp2p multiaddrs).
    pub peers: Vec<String>,
    /// The validator's consensus key file, relative to the home.
    pub key_file: String,
    /// JSON-RPC URLs of peers that transactions sent to this node are
    /// forwarded to.
    pub tx_gossip: Vec<String>,
    /// Forward the transactions peers gossiped here to `tx_gossip` too:
    /// for a network whose gossip lists do not each reach every validator.
    /// Off by default: in a full mesh (what `timerhost testnet` writes)
    /// every peer already got them from the node their client chose.
    pub tx_relay: bool,
    /// How long validators wait for a round's proposal.
    pub timeout_propose: String,
    /// How long validators wait for prevotes after seeing 2/3 of any.
    pub timeout_prevote: String,
    /// How long validators wait for precommits after seeing 2/3 of any.
    pub timeout_precommit: String,
    /// Largest lead a proposed block's timestamp may have over this
    /// node's clock.
    pub max_future_drift: String,
    /// How often peers exchange their heights (drives sync).
    pub status_interval: String,
    /// Most bytes of proposal streams from peers held before their
    /// signatures can be checked, all publishers together (#28): the
    /// oldest streams are dropped past it. At least one largest stream.
    pub max_buffered_proposal_bytes: u64,
}

impl Default for ConsensusSection {
    fn default() -> Self {
        Self {
            listen: "/ip4/127.0.0.1/tcp/26656".into(),
            peers: Vec::new(),
            key_file: "consensus.key".into(),
            tx_gossip: Vec::new(),
            tx_relay: false,
            timeout_propose: "3s".into(),
            timeout_prevote: "1s".into(),
            timeout_precommit: "1s".into(),
            // The chain's one default (15 s), as config/node.toml shows it.
            max_future_drift: format!("{}s", DEFAULT_MAX_FUTURE_DRIFT_MS / 1000),
            status_interval: "2s".into(),
            max_buffered_proposal_bytes: MAX_BUFFERED_BYTES as u64,
        }
    }
}

impl ConsensusSection {
    /// The byte caps of the proposal-stream buffer (checked by `check`).
    pub fn reassembly_limits(&self) -> ReassemblyLimits {
        ReassemblyLimits {
            stream_bytes: MAX_STREAMED_BLOCK_BYTES,
            total_bytes: usize::try_from(self.max_buffered_proposal_bytes).unwrap_or(usize::MAX),
        }
    }

    fn check(&self) -> std::result::Result<(), String> {
        for (name, v) in [
            ("timeout_propose", &self.timeout_propose),
            ("timeout_prevote", &self.timeout_prevote),
            ("timeout_precommit", &self.timeout_precommit),
            ("max_future_drift", &self.max_future_drift),
            ("status_interval", &self.status_interval),
        ] {
            parse_duration(v).map_err(|e| format!("consensus.{name}: {e}"))?;
        }
        let least = max_stream_footprint(MAX_STREAMED_BLOCK_BYTES) as u64;
        if self.max_buffered_proposal_bytes < least {
            return Err(format!(
                "consensus.max_buffered_proposal_bytes: {} cannot hold one largest proposal stream; use at least {least}",
                self.max_buffered_proposal_bytes
            ));
        }
        for a in std::iter::once(&self.listen).chain(&self.peers) {
            a.parse::<timerhost_consensus::settings::Multiaddr>()
                .map_err(|e| format!("consensus: {a:?} is not a libp2p multiaddr ({e}), e.g. /ip4/127.0.0.1/tcp/26656"))?;
        }
        Ok(())
    }
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            rpc: DEFAULT_RPC.parse().expect("valid default"),
            block_time: "1s".into(),
            manual: false,
            metrics: String::new(),
            proposer: Address::ZERO,
            mempool: MempoolConfig::default(),
            consensus: ConsensusSection::default(),
            storage: StorageSection::default(),
            sync: SyncSection::default(),
        }
    }
}

impl NodeConfig {
    /// Parses and checks a config file's text.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let bad = |reason: String| NodeError::Config {
            path: path.to_path_buf(),
            reason,
        };
        let c: NodeConfig = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        parse_duration(&c.block_time).map_err(bad)?;
        c.metrics_addr().map_err(bad)?;
        c.consensus.check().map_err(bad)?;
        c.sync.check().map_err(bad)?;
        if c.mempool.max_txs == 0 || c.mempool.max_per_sender == 0 {
            return Err(bad(
                "mempool.max_txs and mempool.max_per_sender must be at least 1".into(),
            ));
        }
        Ok(c)
    }

    /// Reads `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| NodeError::Io {
            action: "reading",
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// The metrics address, if enabled.
    pub fn metrics_addr(&self) -> std::result::Result<Option<SocketAddr>, String> {
        if self.metrics.trim().is_empty() {
            return Ok(None);
        }
        self.metrics
            .trim()
            .parse()
            .map(Some)
            .map_err(|e| format!("metrics = {:?}: {e}", self.metrics))
    }
}

/// Parses a duration: a number followed by `ms`, `s` or `m` (`"100ms"`,
/// `"1s"`, `"1.5s"`, `"2m"`). Must be at least 1 ms.
pub fn parse_duration(s: &str) -> std::result::Result<Duration, String> {
    let t = s.trim();
    let (num, unit_ms) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        return Err(format!(
            "bad duration {s:?}: give a number with a unit, e.g. 100ms, 1s, 2m"
        ));
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("bad duration {s:?}: {num:?} is not a number"))?;
    let ms = v * unit_ms;
    if !ms.is_finite() || !(1.0..=86_400_000.0).contains(&ms) {
        return Err(format!("bad duration {s:?}: must be between 1ms and 24h"));
    }
    Ok(Duration::from_micros((ms * 1000.0) as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_node_toml_is_the_default() {
        let c = NodeConfig::parse(DEFAULT_NODE_TOML, Path::new("config/node.toml")).unwrap();
        assert_eq!(c, NodeConfig::default());
    }

    #[test]
    fn durations_and_bad_fields() {
        assert_eq!(parse_duration("100ms").unwrap(), Duration::from_millis(100));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("5").unwrap_err().contains("unit"));
        assert!(parse_duration("0s").is_err());
        let e = NodeConfig::parse("rpc = 3", Path::new("x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("x"), "{e}");
        let e = NodeConfig::parse("nope = 1", Path::new("x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown field"), "{e}");
    }

    /// #28: the proposal-stream buffer's cap comes from node.toml and must
    /// hold one largest stream.
    #[test]
    fn the_proposal_buffer_cap_is_configured_and_checked() {
        let c = NodeConfig::parse(
            "[consensus]\nmax_buffered_proposal_bytes = 134217728\n",
            Path::new("x"),
        )
        .unwrap();
        assert_eq!(c.consensus.reassembly_limits().total_bytes, 134_217_728);
        let e = NodeConfig::parse(
            "[consensus]\nmax_buffered_proposal_bytes = 1000\n",
            Path::new("x"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cannot hold one largest proposal stream"), "{e}");
    }
}
