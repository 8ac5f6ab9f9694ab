//! # timerhost-chain
//!
//! Block execution for timerhost, as a pure function of committed state and a
//! block: no wall clock, no randomness, no I/O besides the state it reads.
//!
//! - [`error`]: the crate's errors, among them [`TxError`], every reason a
//!   transaction is rejected before it can be applied, each naming the
//!   problem; [`validation`] checks them.
//! - [`fees`]: CIP-3 dual-metered fee arithmetic (pre-pay, refund, burn, tip),
//!   integer-only and overflow-checked.
//! - [`runtime`]: what an execution sees ([`BlockEnv`], `TxEnv`), the
//!   [`ActorRuntime`] trait the actor VM implements, and the
//!   [`BlockHooks`] trait end-of-block subsystems (timers) implement.
//! - [`executor`]: the block pipeline — TX phase → end-of-block hooks →
//!   deferred transactions → basefee update — producing receipts, a change set
//!   and a state root without committing anything.
//! - [`chain`]: [`Chain`], which owns a store and drives
//!   propose → execute → commit, plus genesis and [`replay`](Chain::replay).
//! - [`vm_runtime`]: the Python actor VM ([`VmRuntime`]) behind [`ActorRuntime`].
//! - [`governance`]: the validator set in state and proposals voted by the
//!   validators' operators (#32).
//! - [`senders`]: a block's senders recovered on every core before it runs.
//! - [`state_sync`]: joining from a verified state snapshot instead of
//!   replaying from genesis (#44).
//! - [`summary`]: what each block did with timers, kept beside it (#33).
//! - [`system_actors`]: the actors every genesis installs (ARC-21's cron
//!   registry at `0x…06`).
//! - [`testing`]: a deterministic mock runtime and transaction builders, behind
//!   one import path, for tests across the workspace.

pub mod accounts;
pub mod chain;
pub mod error;
pub mod executor;
pub mod fees;
pub mod genesis;
pub mod governance;
pub mod runtime;
pub mod senders;
pub mod state_sync;
pub mod summary;
pub mod system_actors;
pub mod testing;
pub mod upgrades;
pub mod validation;
pub mod vm_runtime;

pub use chain::{Chain, ExecutedBlock, ProposedBlock, ReplayProgress, DEFAULT_MAX_FUTURE_DRIFT_MS};
pub use error::TxError;
pub use error::{BlockError, ChainError, Result};
pub use runtime::BlockEnv;
pub use runtime::{
    ActorRuntime, BlockHooks, DeferredTx, EobContext, ExecContext, ExecOutcome, NoActorRuntime,
    NoHooks,
};
pub use vm_runtime::VmRuntime;
