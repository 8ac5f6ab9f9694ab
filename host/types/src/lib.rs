//! # timerhost-types
//!
//! The vocabulary every other timerhost crate speaks: [`Address`] and [`Hash`],
//! signed [`SignedTransaction`]s, [`Block`]s and their headers, [`Receipt`]s and
//! [`Event`]s, the governed configs ([`BasefeeConfig`]), the genesis file format,
//! the consensus key layout ([`keys`]) and the canonical, versioned binary
//! encoding ([`encoding`]) used for everything that is hashed or stored.
//!
//! Nothing here touches storage or executes anything; it is pure data plus the
//! cryptography needed to sign and recover transaction senders.

pub mod block;
pub mod config;
pub mod crypto;
pub mod encoding;
pub mod error;
pub mod genesis;
pub mod governance;
pub mod keys;
pub mod lane;
pub mod located;
pub mod primitives;
pub mod quote;
pub mod receipt;
pub mod retry;
pub mod timer;
pub mod timer_config;
mod timer_config_encoding;
mod timer_encoding;
pub mod tx;
pub mod upgrade;
pub mod value;

pub use block::{merkle_root, Block, BlockHeader};
pub use config::{BasefeeConfig, ChainParams};
pub use crypto::{
    dev_account_key, dev_accounts, dev_validator_genesis, dev_validator_public_key, PrivateKey,
    DEV_ACCOUNT_COUNT,
};
pub use encoding::{decode, encode, Canonical};
pub use error::{Error, Result};
pub use genesis::{Genesis, GenesisAccount, GenesisValidator};
pub use governance::{
    GovernanceConfig, GovernanceMode, Proposal, ProposalAction, ProposalStatus, ValidatorInfo,
    ValidatorSetRecord, PROPOSAL_DEPOSIT_ESCROW, VALIDATOR_SET_DELAY,
};
pub use lane::{LaneMarket, LanePrice, SuggestedFees};
pub use primitives::{keccak256, keccak256_concat, Address, Hash};
pub use quote::{BookingQuote, QuoteRequest, TimerQuote};
pub use receipt::{
    is_protocol_event_name, ErrorKind, Event, ExecError, Receipt, ReceiptStatus, TxSource,
    PROTOCOL_EVENT_PREFIXES,
};
pub use retry::RetryPolicy;
pub use timer::{
    check_handler_name, timer_id, Delivery, FireDue, FireInfo, Invocation, RequestedTrigger, Timer,
    TimerKind, TimerRequest, TimerStatus, Watch, WatchKey, TIMER_DEPOSIT_ESCROW,
};
pub use timer_config::{TimerConfig, TimerOrdering};
pub use tx::{actor_address, SignedTransaction, SystemInstruction, Transaction, TxKind};
pub use upgrade::{UpgradePlan, UpgradePlans};
pub use value::Value;

/// System address that emits governance events (CIP-5's reserved band, slot 0x0a).
pub const GOVERNANCE_ADDRESS: Address = Address::system(0x0a);

/// ARC-21's cron registry (#19): the system actor `actors/system/cron.py`,
/// installed by every genesis at the address ARC-21 reserves for it.
pub const CRON_REGISTRY_ADDRESS: Address = Address::system(0x06);

/// Chain id reserved for development chains. Dev account keys are public, so
/// transactions they sign are only accepted on a chain with this id.
pub const DEV_CHAIN_ID: u64 = 1337;

/// Largest encoded signed transaction accepted anywhere (mempool, block).
/// One MiB of payload (the CIP-5 timer payload cap) plus room for the envelope.
pub const MAX_TX_BYTES: usize = 1024 * 1024 + 64 * 1024;

/// Cycles every transaction pays before doing anything (signature recovery,
/// nonce and balance bookkeeping). A plain transfer costs exactly this.
pub const TX_BASE_CYCLES: u64 = 1_000;

/// Largest actor source accepted by `DeployActor` (bytes of UTF-8).
pub const MAX_CODE_BYTES: usize = 256 * 1024;

/// Longest handler name accepted (bytes): transactions, `pvm_host.call` and
/// timers alike (CIP-5 §4.2); see [`check_handler_name`].
pub const MAX_HANDLER_BYTES: usize = 256;
