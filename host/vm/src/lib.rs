//! # timerhost-vm
//!
//! The actor VM: runs Python actors in an embedded RustPython interpreter,
//! sandboxed, deterministic and metered (see `docs/METERING.md`).
//!
//! - [`Vm::validate_and_compile`] checks an actor at deploy (a
//!   [`DeployRejection`] names the line and construct) and caches its
//!   instrumented bytecode by code hash;
//! - [`Vm::deploy`] and [`Vm::call`] run `deploy(self, *args)` or a handler
//!   against a [`Host`] — the chain's view of state — and return an
//!   [`Outcome`]: the value or an [`ExecError`](timerhost_types::ExecError),
//!   events, cycles and cells. An actor failing is an outcome, never an `Err`.
//!
//! Four folders, one job each, imports running one way:
//! - [`rules`]: the static tables both sides read (prices, guard names,
//!   reachable names, format rules);
//! - [`deploy`]: once per source — validate, instrument, compile, cache;
//! - [`meter`]: everything that decides or charges a price at run time;
//! - [`host_api`]: what an actor calls to reach the chain, and the state of
//!   the execution in progress;
//! - [`interpreter`]: the per-thread interpreter, its deterministic set-up,
//!   loading and the library.
//!
//! A call flows: deploy once, then load → run → meter → host API.
//! [`testing::MockHost`] is an in-memory host for tests.
//!
//! **Binaries must install the allocator**:
//! `#[global_allocator] static A: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;`
//! — [`Vm::new`] refuses to run without it.

// The four jobs, each a folder (docs/ARCHITECTURE.md, "The actor VM"):
// imports run one way, rules ← deploy ← meter ← host_api ← interpreter ←
// the entry points below (`tests/layers.rs` checks it).
pub mod deploy;
pub mod host_api;
pub mod interpreter;
pub mod meter;
pub mod rules;

pub mod error;
pub mod testing;
pub mod vm;

// The paths these modules had before the folders, kept for the crate's
// users.
pub use deploy::{compile, instrument, sandbox};
pub use host_api::{convert, helpers, host};
pub use interpreter::{library, load, runtime};
pub use meter::{alloc, natives, nesting};
pub use rules::{costs, formatting, guards, names};

pub use alloc::MeteredAllocator;
pub use compile::CompiledActor;
pub use error::{Result, VmError};
pub use host::{ActorRecord, BlockInfo, CheckpointId, Cost, Host, HostCall, HostFailure};
pub use sandbox::DeployRejection;
pub use vm::{ExecLimits, Outcome, Vm};

#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: MeteredAllocator = MeteredAllocator;
