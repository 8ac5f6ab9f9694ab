//! Receipts and events: the outcome of every executed transaction, user or
//! deferred. A guest failure (an actor's exception, running out of cycles, a
//! forbidden import…) is an outcome recorded here, never a host error.

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::encoding::{self, Canonical};
use crate::primitives::{keccak256, Address, Hash};
use crate::value::Value;

/// Whether the execution's effects were kept.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ReceiptStatus {
    /// Effects committed.
    Success,
    /// Effects discarded; fees for the resources used were still charged.
    Failed,
}

/// Why an execution failed. Stable snake_case names are used in JSON and Python.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The actor raised an exception.
    Revert,
    /// The cycles limit was exhausted.
    OutOfCycles,
    /// The cells limit was exhausted.
    OutOfCells,
    /// The execution exceeded its memory budget.
    OutOfMemory,
    /// The actor used a forbidden construct (import, introspection…).
    Forbidden,
    /// An argument or input was invalid (bad handler, bad value…).
    InvalidInput,
    /// The sender was not allowed to do this.
    Unauthorized,
    /// A referenced actor, handler or record does not exist.
    NotFound,
    /// A balance was too small for a transfer.
    InsufficientFunds,
    /// Nested calls went deeper than allowed.
    CallDepthExceeded,
}

impl ErrorKind {
    /// The stable snake_case name.
    pub fn as_str(&self) -> &'static str {
        match self {
            ErrorKind::Revert => "revert",
            ErrorKind::OutOfCycles => "out_of_cycles",
            ErrorKind::OutOfCells => "out_of_cells",
            ErrorKind::OutOfMemory => "out_of_memory",
            ErrorKind::Forbidden => "forbidden",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::NotFound => "not_found",
            ErrorKind::InsufficientFunds => "insufficient_funds",
            ErrorKind::CallDepthExceeded => "call_depth_exceeded",
        }
    }
}

/// A failed execution's error.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize)]
pub struct ExecError {
    /// The kind of failure.
    pub kind: ErrorKind,
    /// A one-line message (e.g. `ValueError: bad amount`).
    pub message: String,
    /// A short Python traceback, if the failure came from actor code.
    pub traceback: Option<String>,
}

/// An event emitted during execution.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Event {
    /// The actor (or system address) that emitted it.
    pub emitter: Address,
    /// Stable event name (`TimerFired`, `Bumped`, …).
    pub name: String,
    /// Event fields.
    pub data: Value,
}

/// Event name prefixes only the protocol emits into (#50): the timers'
/// life (`TimerScheduled`, `TimerFired`, `TimersPaused`, `timer.extended`,
/// `timer_config.updated`, …) and governance's config events. An actor's
/// `emit` of such a name is refused, so an event named so is the
/// protocol's by construction: only these feed the timer index, the block
/// summaries and the dashboard, and no actor can forge another's timer
/// history.
pub const PROTOCOL_EVENT_PREFIXES: &[&str] = &["Timer", "timer", "basefee_config."];

/// Is `name` in the protocol's own event namespace?
pub fn is_protocol_event_name(name: &str) -> bool {
    PROTOCOL_EVENT_PREFIXES
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

impl Event {
    /// Was this event emitted by the protocol (its name is in the
    /// protocol's namespace, which actors cannot emit into)?
    pub fn is_protocol(&self) -> bool {
        is_protocol_event_name(&self.name)
    }
}

/// Where an executed transaction came from.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum TxSource {
    /// A signed user transaction included in the block.
    User,
    /// A deferred transaction created at end of block (e.g. a timer fire).
    Deferred {
        /// Parent transaction hash, zero for "no parent" (CIP-5 §5.2).
        origin_tx_hash: Hash,
        /// Who paid for it.
        fee_payer: Address,
        /// For a timer fire, which delivery it is.
        delivery: Option<crate::timer::Delivery>,
    },
    /// Protocol work at end of block that is not a transaction (e.g. timers
    /// expired or destroyed for lack of funds); carries their events.
    EndOfBlock,
    /// The start of a block: removals of due time timers (expired,
    /// unfunded, revoked) before its transactions.
    StartOfBlock,
}

/// The outcome of one executed transaction.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Receipt {
    /// Transaction hash (for deferred transactions, a hash derived from their content).
    pub tx_hash: Hash,
    /// Who executed it (`tx_sender`).
    pub sender: Address,
    /// User or deferred.
    pub source: TxSource,
    /// Success or failure.
    pub status: ReceiptStatus,
    /// The failure, if any.
    pub error: Option<ExecError>,
    /// Cycles used.
    pub cycles_used: u64,
    /// Cells used.
    pub cells_used: u64,
    /// Total fee debited (burned + tip).
    pub fee_paid: u128,
    /// Part of the fee burned (basefee).
    pub burned: u128,
    /// Part of the fee paid to the proposer.
    pub tip: u128,
    /// Events emitted (empty on failure).
    pub events: Vec<Event>,
    /// Handler return value, if any.
    pub return_value: Option<Value>,
    /// Address of the actor created by a `DeployActor`.
    pub created_actor: Option<Address>,
}

impl Canonical for Receipt {
    const NAME: &'static str = "receipt";
}

impl Receipt {
    /// Hash of the canonical encoding (the receipts-root leaf).
    pub fn hash(&self) -> Hash {
        keccak256(&encoding::encode(self))
    }

    /// Did the execution succeed?
    pub fn is_success(&self) -> bool {
        self.status == ReceiptStatus::Success
    }
}

impl ExecError {
    /// An error of `kind` with no traceback.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ExecError {
            kind,
            message: message.into(),
            traceback: None,
        }
    }

    /// An `invalid_input` error with no traceback.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }
}
