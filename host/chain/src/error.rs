//! Errors of block execution. A transaction that is invalid is a [`TxError`];
//! a block that is invalid is a [`BlockError`]; the node being unable to read
//! or write its database is a storage error. An actor's failure is none of
//! these: it is a receipt outcome.

use timerhost_state::StorageError;
use timerhost_types::{Address, Hash};

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
    /// A governed upgrade this binary does not know applies to the block
    /// about to be executed: the node stops before it (#44).
    #[error("upgrade {name} applies from height {height} and this timerhost (version {}) does not know it: stopping before block {height}. Install a release that knows {name} and restart{}", env!("CARGO_PKG_VERSION"), if info.is_empty() { String::new() } else { format!(" (the plan says: {info})") })]
    UnknownUpgrade {
        /// The upgrade's name.
        name: String,
        /// Its height.
        height: u64,
        /// The plan's text for operators.
        info: String,
    },
    /// A state sync could not finish (#44): no honest peer was left, or
    /// the snapshot contradicts its root.
    #[error("state sync: {0}")]
    StateSync(String),
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

/// Why a transaction was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TxError {
    /// The bytes are not a valid encoded transaction.
    #[error("malformed transaction: {0}")]
    Malformed(String),
    /// The encoded transaction is larger than allowed.
    #[error("transaction is {size} bytes, the maximum is {max}")]
    TooLarge {
        /// Encoded size.
        size: usize,
        /// Limit.
        max: usize,
    },
    /// The signature is invalid or recovers no signer.
    #[error("bad signature: {0}")]
    BadSignature(String),
    /// Signed for another chain.
    #[error("wrong chain id: transaction is for chain {got}, this chain is {expected}")]
    WrongChainId {
        /// This chain.
        expected: u64,
        /// The transaction's.
        got: u64,
    },
    /// Signed by a public dev key on a non-dev chain.
    #[error("sender {sender} is a dev account whose private key is public; dev keys are only accepted on the dev chain (id {dev_chain_id}), not chain {chain_id}")]
    DevKeyOnNonDevChain {
        /// Sender.
        sender: Address,
        /// This chain.
        chain_id: u64,
        /// The dev chain id.
        dev_chain_id: u64,
    },
    /// Nonce already used.
    #[error("nonce too low: account {sender} expects nonce {expected}, transaction has {got}")]
    NonceTooLow {
        /// Sender.
        sender: Address,
        /// Account nonce.
        expected: u64,
        /// Transaction nonce.
        got: u64,
    },
    /// Nonce ahead of the account.
    #[error("nonce too high: account {sender} expects nonce {expected}, transaction has {got}")]
    NonceTooHigh {
        /// Sender.
        sender: Address,
        /// Account nonce.
        expected: u64,
        /// Transaction nonce.
        got: u64,
    },
    /// The sender cannot pay the pre-charge plus the value moved.
    #[error("insufficient balance: {sender} has {available}, needs {required} (fee pre-charge {fee} + value {value})")]
    InsufficientBalance {
        /// Sender.
        sender: Address,
        /// Balance.
        available: u128,
        /// Pre-charge + value.
        required: u128,
        /// Pre-charge part.
        fee: u128,
        /// Value part.
        value: u128,
    },
    /// The fee cap is below the current basefee.
    #[error(
        "max_fee_per_{dimension} {max_fee} is below the current {dimension} basefee {basefee}"
    )]
    FeeCapBelowBasefee {
        /// `cycle` or `cell`.
        dimension: &'static str,
        /// The cap.
        max_fee: u128,
        /// The basefee.
        basefee: u128,
    },
    /// A limit is larger than a whole block allows.
    #[error("{dimension}_limit {limit} exceeds the block limit {max}")]
    LimitAboveBlockLimit {
        /// `cycles` or `cells`.
        dimension: &'static str,
        /// The limit.
        limit: u64,
        /// The block limit.
        max: u64,
    },
    /// A limit is below what the transaction costs before doing anything.
    #[error("{dimension}_limit {limit} is below the intrinsic cost {intrinsic}")]
    LimitBelowIntrinsic {
        /// `cycles` or `cells`.
        dimension: &'static str,
        /// The limit.
        limit: u64,
        /// Intrinsic cost.
        intrinsic: u64,
    },
    /// The block has no room left for this transaction's limits.
    #[error("block is full: {dimension}_limit {limit} exceeds the {remaining} left in this block")]
    BlockFull {
        /// `cycles` or `cells`.
        dimension: &'static str,
        /// The limit.
        limit: u64,
        /// Room left.
        remaining: u64,
    },
    /// Fee arithmetic overflowed (absurd limits or prices).
    #[error("fee computation overflows: {0}")]
    FeeOverflow(String),
    /// A system instruction from outside the governance set.
    #[error("{instruction} rejected: sender {sender} is not in system_deployers")]
    NotGovernance {
        /// Sender.
        sender: Address,
        /// Instruction name.
        instruction: &'static str,
    },
    /// A field is out of its allowed range.
    #[error("invalid {field}: {reason}")]
    InvalidField {
        /// The field.
        field: &'static str,
        /// Why.
        reason: String,
    },
}

impl TxError {
    /// A short machine-readable name of the reason (`snake_case`), which
    /// the RPC puts in a refusal's error data and `timerhost load` counts.
    pub fn reason(&self) -> &'static str {
        match self {
            TxError::Malformed(_) => "malformed",
            TxError::TooLarge { .. } => "too_large",
            TxError::BadSignature(_) => "bad_signature",
            TxError::WrongChainId { .. } => "wrong_chain_id",
            TxError::DevKeyOnNonDevChain { .. } => "dev_key_on_non_dev_chain",
            TxError::NonceTooLow { .. } => "nonce_too_low",
            TxError::NonceTooHigh { .. } => "nonce_too_high",
            TxError::InsufficientBalance { .. } => "insufficient_balance",
            TxError::FeeCapBelowBasefee { .. } => "fee_cap_below_basefee",
            TxError::LimitAboveBlockLimit { .. } => "limit_above_block_limit",
            TxError::LimitBelowIntrinsic { .. } => "limit_below_intrinsic",
            TxError::BlockFull { .. } => "block_full",
            TxError::FeeOverflow(_) => "fee_overflow",
            TxError::NotGovernance { .. } => "not_governance",
            TxError::InvalidField { .. } => "invalid_field",
        }
    }
}
