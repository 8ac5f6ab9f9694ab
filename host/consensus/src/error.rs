//! The crate's error type.

use thiserror::Error;

/// What can go wrong building the consensus context.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConsensusError {
    /// A validator set must have at least one validator.
    #[error("the validator set is empty")]
    EmptyValidatorSet,
    /// Two validators share a key.
    #[error("validator {0} is listed twice")]
    DuplicateValidator(String),
    /// Voting power must be positive.
    #[error("validator {0} has no voting power")]
    ZeroVotingPower(String),
    /// The set's total voting power must fit a u64.
    #[error("the validators' total voting power overflows a u64")]
    PowerOverflow,
    /// A public or private key that does not decode.
    #[error("bad consensus key: {0}")]
    BadKey(String),
    /// The block pipeline failed (not a refused block: an I/O or internal error).
    #[error("chain: {0}")]
    Chain(String),
    /// The validator's side store (certificates, proposals) failed.
    #[error("consensus store: {0}")]
    Store(String),
    /// The node stops: a governed upgrade this binary does not know applies
    /// to the next height (#44).
    #[error("{0}")]
    Halted(String),
    /// The engine could not start, or stopped.
    #[error("consensus engine: {0}")]
    Engine(String),
}

/// `Result` with [`ConsensusError`].
pub type Result<T> = std::result::Result<T, ConsensusError>;
