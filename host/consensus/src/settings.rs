//! A validator's network and timing settings (parsed once from `node.toml`
//! by the node) and the engine configuration built from them.

use std::path::PathBuf;
use std::time::Duration;

use malachitebft_app_channel::app::config::{
    ConsensusConfig, NodeConfig, P2pConfig, ValueSyncConfig,
};
pub use malachitebft_app_channel::app::net::Multiaddr;
use malachitebft_core_types::LinearTimeouts;

/// How a node takes part in the network.
#[derive(Clone, Debug)]
pub struct NetworkSettings {
    /// Name in logs and metrics.
    pub moniker: String,
    /// Where this node listens for peers (`/ip4/127.0.0.1/tcp/26656`).
    pub listen: Multiaddr,
    /// Peers dialled and kept connected.
    pub peers: Vec<Multiaddr>,
    /// Round step timeouts.
    pub timeouts: LinearTimeouts,
    /// Target interval between blocks: a height is finalised no earlier
    /// than this after it started.
    pub block_time: Duration,
    /// How often peers exchange their heights (drives sync).
    pub status_interval: Duration,
    /// The directory of the write-ahead log and the decided-block store.
    pub dir: PathBuf,
    /// How far ahead of this node's clock a proposed block's timestamp may be.
    pub max_future_drift_ms: u64,
}

impl NetworkSettings {
    /// The write-ahead log's directory.
    pub fn wal_dir(&self) -> PathBuf {
        self.dir.join("wal")
    }

    /// The decided-block store's directory.
    pub fn store_dir(&self) -> PathBuf {
        self.dir.join("store")
    }

    /// The engine's configuration.
    pub fn engine_config(&self) -> EngineConfig {
        let p2p = P2pConfig {
            listen_addr: self.listen.clone(),
            persistent_peers: self.peers.clone(),
            ..P2pConfig::default()
        };
        EngineConfig {
            moniker: self.moniker.clone(),
            consensus: ConsensusConfig {
                p2p,
                ..ConsensusConfig::default()
            },
            value_sync: ValueSyncConfig {
                status_update_interval: self.status_interval,
                request_timeout: Duration::from_secs(5),
                ..ValueSyncConfig::default()
            },
        }
    }
}

/// Malachite's view of the node configuration.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    moniker: String,
    consensus: ConsensusConfig,
    value_sync: ValueSyncConfig,
}

impl NodeConfig for EngineConfig {
    fn moniker(&self) -> &str {
        &self.moniker
    }

    fn consensus(&self) -> &ConsensusConfig {
        &self.consensus
    }

    fn consensus_mut(&mut self) -> &mut ConsensusConfig {
        &mut self.consensus
    }

    fn value_sync(&self) -> &ValueSyncConfig {
        &self.value_sync
    }

    fn value_sync_mut(&mut self) -> &mut ValueSyncConfig {
        &mut self.value_sync
    }
}
