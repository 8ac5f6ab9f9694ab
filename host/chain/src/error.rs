//! Errors of block execution. A transaction that is invalid is a [`TxError`];
//! a block that is invalid is a [`BlockError`]; the node being unable to read
//! or write its database is a storage error. An actor's failure is none of
//! these: it is a receipt outcome.

use timerhost_state::StorageError;
use timerhost_types::Hash;

use crate::validation::TxError;

/// Why a block was rejected.
#[derive(Debug, thiserror::Error)]
pub enum BlockError {
    /// A transaction in the block is invalid.
    #[error("transaction {index} ({hash}) is invalid: {error}")]
    InvalidTx {
        /// Position in the block.
        index: usize,
        /// Transaction hash.
        hash: Hash,
        /// Why (boxed: keeps every `Result` of this crate small).
        error: Box<TxError>,
    },
    /// The header does not extend the current head.
    #[error("block {height} does not extend the head: {reason}")]
    BadParent {
        /// Height of the offending block.
        height: u64,
        /// What does not match.
        reason: String,
    },
    /// The timestamp is not after the parent's.
    #[error("block {height} timestamp {timestamp_ms} ms is not after its parent's {parent_timestamp_ms} ms")]
    TimestampNotIncreasing {
        /// Height.
        height: u64,
        /// Block timestamp (unix ms).
        timestamp_ms: u64,
        /// Parent timestamp (unix ms).
        parent_timestamp_ms: u64,
    },
    /// The timestamp is further ahead of the accepting node's clock than
    /// its allowed future drift.
    #[error("block {height} timestamp {timestamp_ms} ms is {ahead_ms} ms ahead of this node's clock ({now_ms} ms); at most {max_drift_ms} ms is allowed")]
    TimestampTooFarAhead {
        /// Height.
        height: u64,
        /// Block timestamp (unix ms).
        timestamp_ms: u64,
        /// The node's clock (unix ms).
        now_ms: u64,
        /// How far ahead it is.
        ahead_ms: u64,
        /// The allowed drift.
        max_drift_ms: u64,
    },
    /// The header's state root disagrees with re-execution.
    #[error("block {height}: header state_root is {claimed} but execution gives {computed}")]
    StateRootMismatch {
        /// Height.
        height: u64,
        /// Root in the header.
        claimed: Hash,
        /// Root from re-execution.
        computed: Hash,
    },
    /// A header field other than the state root disagrees with re-execution.
    #[error("block {height}: header {field} is {claimed} but execution gives {computed}")]
    HeaderMismatch {
        /// Height.
        height: u64,
        /// Which field (`state_root`, `receipts_root`, …).
        field: &'static str,
        /// Value in the header.
        claimed: String,
        /// Value computed.
        computed: String,
    },
    /// The block was built for another chain.
    #[error("block {height} has chain id {found}, this chain is {expected}")]
    WrongChain {
        /// Height.
        height: u64,
        /// Chain id found.
        found: u64,
        /// This chain's id.
        expected: u64,
    },
}

/// Errors of the chain crate.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    /// A transaction was rejected.
    #[error(transparent)]
    Tx(#[from] TxError),
    /// A block was rejected.
    #[error(transparent)]
    Block(#[from] BlockError),
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// Genesis is invalid or does not match the database.
    #[error("genesis: {0}")]
    Genesis(String),
    /// Replay found a block whose re-executed state root differs.
    #[error(
        "replay: state root mismatch at height {height}: stored {stored}, re-executed {computed}"
    )]
    ReplayMismatch {
        /// First mismatching height.
        height: u64,
        /// Root in the stored header.
        stored: Hash,
        /// Root from re-execution.
        computed: Hash,
    },
    /// Replay could not re-execute a stored block.
    #[error("replay: block {height} failed to re-execute: {source}")]
    ReplayFailed {
        /// Height.
        height: u64,
        /// Why.
        #[source]
        source: Box<ChainError>,
    },
    /// An internal invariant was broken (a bug, never an actor's doing).
    #[error("internal error: {0}")]
    Internal(String),
}

/// Result alias for this crate.
pub type Result<T, E = ChainError> = std::result::Result<T, E>;
