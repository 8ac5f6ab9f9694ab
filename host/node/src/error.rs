//! Errors of the node binary, each naming what the operator must fix.

use std::path::PathBuf;

/// Errors of the node.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The home directory is not initialised.
    #[error("{path} is not a timerhost home (no genesis.toml); run `timerhost init --home {path}` first")]
    NotInitialised {
        /// The home.
        path: PathBuf,
    },
    /// `init` on a home that already has a chain.
    #[error(
        "{path} is already initialised (genesis.toml exists); pick another --home or delete it"
    )]
    AlreadyInitialised {
        /// The home.
        path: PathBuf,
    },
    /// A file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Which file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The genesis file is invalid.
    #[error("invalid genesis file {path}: {reason}")]
    Genesis {
        /// Which file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Bad command-line input.
    #[error("{0}")]
    Usage(String),
    /// The node configuration file is invalid.
    #[error("invalid node config {path}: {reason}")]
    Config {
        /// Which file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The RPC server, mempool or client failed.
    #[error(transparent)]
    Rpc(Box<timerhost_rpc::RpcError>),
    /// The chain failed.
    #[error(transparent)]
    Chain(#[from] timerhost_chain::ChainError),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] timerhost_state::StorageError),
    /// Consensus: the engine, its store, or a consensus key.
    #[error(transparent)]
    Consensus(#[from] timerhost_consensus::ConsensusError),
}

impl From<timerhost_rpc::RpcError> for NodeError {
    fn from(e: timerhost_rpc::RpcError) -> Self {
        NodeError::Rpc(Box::new(e))
    }
}

/// Result alias for this crate.
pub type Result<T, E = NodeError> = std::result::Result<T, E>;
