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
//! Pipeline: [`sandbox`] validates the AST, [`instrument`] inserts meter
//! calls and size guards, [`compile`] produces bytecode, [`runtime`] provides
//! the per-thread interpreter and everything actors can call, [`alloc`]
//! bounds memory. [`testing::MockHost`] is an in-memory host for tests.
//!
//! **Binaries must install the allocator**:
//! `#[global_allocator] static A: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;`
//! — [`Vm::new`] refuses to run without it.

pub mod alloc;
mod args;
mod builtin_natives;
mod builtin_types;
mod call_native;
mod code_cache;
pub mod compile;
mod constants;
mod contains_meter;
pub mod convert;
pub mod costs;
pub mod error;
mod exec;
pub mod formatting;
mod free_lists;
mod generic_ops;
mod guard_natives;
pub mod guards;
pub mod helpers;
pub mod host;
mod identity;
mod identity_hash;
pub mod instrument;
mod int_hash;
mod iteration;
pub mod library;
pub mod load;
pub mod meter;
pub mod names;
pub mod natives;
pub mod nesting;
mod operator_costs;
mod pvm_host;
mod release;
pub mod runtime;
pub mod sandbox;
mod sizes;
mod slot_meter;
mod storage_natives;
mod subscript_meter;
pub mod testing;
pub mod vm;

pub use alloc::MeteredAllocator;
pub use compile::CompiledActor;
pub use error::{Result, VmError};
pub use host::{ActorRecord, BlockInfo, CheckpointId, Cost, Host, HostCall, HostFailure};
pub use sandbox::DeployRejection;
pub use vm::{ExecLimits, Outcome, Vm};

#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: MeteredAllocator = MeteredAllocator;
