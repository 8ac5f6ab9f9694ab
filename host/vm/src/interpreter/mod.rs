//! **Interpreter**: the per-thread RustPython interpreter and its
//! deterministic set-up — creating it, wiring in the builtins, the guard
//! and storage natives, the host API's modules and the slot wrappers
//! ([`runtime`]); loading actor modules under a budget of their own and
//! freezing what they made ([`load`]); values made at load and their
//! restoration ([`constants`]); address-free identity ([`identity`],
//! [`identity_hash`]); the builtin type stand-ins ([`builtin_types`]); the
//! library modules written in Python ([`library`], `stdlib/`); settling
//! free lists ([`free_lists`]); which instructions may be specialised
//! ([`generic_ops`]); and freeing deep object graphs without native
//! recursion ([`release`]).
//!
//! Entry points: [`runtime::ExecutionWorker`], `runtime()` (this thread's
//! interpreter) and its `invoke`.
//!
//! It may use every other folder; nothing below it imports it.

pub mod builtin_types;
pub(crate) mod constants;
pub(crate) mod free_lists;
pub(crate) mod generic_ops;
pub(crate) mod identity;
pub(crate) mod identity_hash;
pub mod library;
pub mod load;
pub(crate) mod release;
pub mod runtime;
