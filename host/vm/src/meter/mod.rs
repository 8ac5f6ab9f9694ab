//! **Meter**: everything that decides or charges a price at run time —
//! the meter of the execution in progress and its sticky aborts
//! ([`budget`], [`charge`]), the memory budget ([`alloc`]) and the large
//! allocations it maps from the OS itself ([`direct_map`]), sizes of
//! values ([`sizes`]), the operator guards ([`operators`],
//! [`guard_natives`]), the charges inside type slots ([`slots`],
//! [`subscripts`], [`contains`], [`int_hash`], the integer work the
//! interpreter does inline ([`inline_ints`]), [`range_drain`], [`resume`]), natives' swallowed exceptions
//! ([`swallowed`]), a module's missing attributes ([`module_attributes`]), metered iteration
//! ([`iteration`]), the guarded builtins ([`builtin_natives`]), the
//! allow-list of natives with their prices ([`natives`]) and the
//! deterministic bound on native nesting ([`nesting`]).
//!
//! Entry points: [`charge::charge`] (every charge point), the `install`
//! function of each slot wrapper (called once per interpreter), and the
//! natives the interpreter registers.
//!
//! Never: call back into the interpreter or the host API — the one thing
//! it needs of them, recording a write to a value made at load, it reaches
//! through the hook the interpreter registers ([`writes`]); and it reads
//! only [`crate::rules`] besides its own files.

pub mod alloc;
pub mod budget;
pub(crate) mod builtin_natives;
pub(crate) mod charge;
pub(crate) mod contains;
pub mod direct_map;
pub(crate) mod guard_natives;
pub(crate) mod inline_ints;
pub(crate) mod int_hash;
pub(crate) mod iteration;
pub(crate) mod module_attributes;
pub mod natives;
pub mod nesting;
pub(crate) mod operators;
pub(crate) mod range_drain;
pub(crate) mod resume;
pub(crate) mod sizes;
pub(crate) mod slots;
pub(crate) mod subscripts;
pub(crate) mod swallowed;
pub(crate) mod writes;

pub use budget::{Abort, Meter};
