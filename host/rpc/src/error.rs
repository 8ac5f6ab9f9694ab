//! [`RpcError`]: every failure of the RPC server, the mempool and the client,
//! and its JSON-RPC error code.

use jsonrpsee::types::ErrorObjectOwned;

/// JSON-RPC error codes used by the server (`-32602`/`-32603` are the
/// standard "invalid params" and "internal error").
pub mod codes {
    /// No such method (jsonrpsee answers it): to a node's gossip, a peer
    /// whose binary predates the method it called.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i32 = -32602;
    /// The node failed internally (storage, chain).
    pub const INTERNAL: i32 = -32603;
    /// A transaction was refused by validation.
    pub const TX_REJECTED: i32 = -32000;
    /// The mempool is full.
    pub const MEMPOOL_FULL: i32 = -32001;
    /// A dev-only method was called on a non-dev chain.
    pub const DEV_ONLY: i32 = -32002;
    /// The block producer could not do what was asked.
    pub const PRODUCER: i32 = -32003;
    /// A query reached its read bound before finishing (`data.resume_from`).
    pub const READ_LIMIT: i32 = -32004;
    /// The server is busy with expensive queries; retry shortly.
    pub const BUSY: i32 = -32005;
    /// The history asked for was pruned on this node (`[storage]
    /// keep_blocks`); `data.floor` is its oldest whole block.
    pub const PRUNED: i32 = -32006;
}

/// Errors of the RPC crate.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// A parameter was missing or malformed.
    #[error("invalid params: {0}")]
    InvalidParams(String),
    /// A submitted transaction was refused.
    #[error("transaction rejected: {message}")]
    TxRejected {
        /// A short machine-readable reason (`nonce_too_low`,
        /// `nonce_too_far_ahead`, `sender_full`, … — docs/RPC.md), sent as
        /// the error's `data.reason`.
        reason: &'static str,
        /// What was wrong, in words.
        message: String,
    },
    /// The mempool holds as many transactions as it may.
    #[error("mempool full: it holds {capacity} transactions; retry after the next block")]
    MempoolFull {
        /// Capacity.
        capacity: usize,
    },
    /// A dev-only method on a non-dev chain.
    #[error("{method} is only available on a dev chain (chain id {dev_chain_id}); this node runs chain {chain_id}")]
    DevOnly {
        /// The method.
        method: String,
        /// This chain.
        chain_id: u64,
        /// The dev chain id.
        dev_chain_id: u64,
    },
    /// The block producer refused or failed (e.g. it has stopped).
    #[error("block producer: {0}")]
    Producer(String),
    /// A query read as much as one request may (docs/RPC.md, "Bounds")
    /// without filling its page: `found` (in `data.events`) is what it found
    /// below height `resume_from`; asking again from `resume_from`
    /// continues.
    #[error("{method} read its bound of {max_reads} entries before reaching the end of the range: {} event(s) found below height {resume_from} (in data.events); continue with \"from\": {resume_from} or narrow the filter", found.len())]
    ReadLimit {
        /// The method.
        method: &'static str,
        /// The read bound.
        max_reads: usize,
        /// What it found before it stopped.
        found: Vec<serde_json::Value>,
        /// The first height not examined.
        resume_from: u64,
    },
    /// Too many expensive queries are running; this one was not started.
    #[error("the node is busy answering {running} expensive queries; retry {method} shortly")]
    Busy {
        /// The method.
        method: &'static str,
        /// Expensive queries running.
        running: usize,
    },
    /// The chain failed.
    #[error(transparent)]
    Chain(#[from] timerhost_chain::ChainError),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] timerhost_state::StorageError),
    /// The server could not start.
    #[error("cannot start the RPC server on {addr}: {reason}")]
    Server {
        /// Listen address.
        addr: String,
        /// Why.
        reason: String,
    },
    /// The client could not reach the node or read its answer.
    #[error("cannot reach the node at {url}: {reason}")]
    Transport {
        /// Node URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The node answered with a JSON-RPC error.
    #[error("{message} (JSON-RPC error {code})")]
    Remote {
        /// JSON-RPC error code.
        code: i64,
        /// Message.
        message: String,
        /// The machine-readable reason of a refusal (`data.reason`), if given.
        reason: Option<String>,
    },
}

impl RpcError {
    /// The JSON-RPC error code of this error.
    pub fn code(&self) -> i32 {
        match self {
            RpcError::InvalidParams(_) => codes::INVALID_PARAMS,
            RpcError::TxRejected { .. } => codes::TX_REJECTED,
            RpcError::MempoolFull { .. } => codes::MEMPOOL_FULL,
            RpcError::DevOnly { .. } => codes::DEV_ONLY,
            RpcError::Producer(_) => codes::PRODUCER,
            RpcError::ReadLimit { .. } => codes::READ_LIMIT,
            RpcError::Busy { .. } => codes::BUSY,
            _ if self.pruned_floor().is_some() => codes::PRUNED,
            _ => codes::INTERNAL,
        }
    }

    /// The node's history floor when this error is a read of pruned
    /// history (from the store, directly or through the chain).
    pub fn pruned_floor(&self) -> Option<u64> {
        let storage = match self {
            RpcError::Storage(e) => e,
            RpcError::Chain(timerhost_chain::ChainError::Storage(e)) => e,
            _ => return None,
        };
        match storage {
            timerhost_state::StorageError::Pruned { floor, .. } => Some(*floor),
            _ => None,
        }
    }
}

impl RpcError {
    /// A transaction refused by validation, with its reason.
    pub fn rejected(e: &timerhost_chain::validation::TxError) -> Self {
        RpcError::TxRejected {
            reason: e.reason(),
            message: e.to_string(),
        }
    }

    /// The machine-readable reason of a refusal: a rejected transaction's,
    /// `mempool_full`, or `None` for any other error.
    pub fn reason(&self) -> Option<&str> {
        match self {
            RpcError::TxRejected { reason, .. } => Some(reason),
            RpcError::MempoolFull { .. } => Some("mempool_full"),
            RpcError::ReadLimit { .. } => Some("read_limit"),
            RpcError::Busy { .. } => Some("busy"),
            _ if self.pruned_floor().is_some() => Some("pruned"),
            RpcError::Remote { reason, .. } => reason.as_deref(),
            _ => None,
        }
    }
}

impl From<RpcError> for ErrorObjectOwned {
    fn from(e: RpcError) -> Self {
        let mut data = e.reason().map(|r| serde_json::json!({ "reason": r }));
        if let (
            Some(data),
            RpcError::ReadLimit {
                resume_from, found, ..
            },
        ) = (data.as_mut(), &e)
        {
            data["resume_from"] = serde_json::json!(resume_from);
            data["events"] = serde_json::Value::Array(found.clone());
        }
        if let (Some(data), Some(floor)) = (data.as_mut(), e.pruned_floor()) {
            data["floor"] = serde_json::json!(floor);
        }
        ErrorObjectOwned::owned(e.code(), e.to_string(), data)
    }
}

/// Result alias for this crate.
pub type Result<T, E = RpcError> = std::result::Result<T, E>;
