//! The metering fuzzer (issue #47): searches for actor programs that buy
//! more time or memory per cycle than ordinary code, or crash the process
//! that runs them.
//!
//! Layers, each using only those before it:
//! - [`program`]: a candidate (inputs built from `n`, an operation run `k`
//!   times) and its actor source;
//! - [`shapes`], [`ops`]: what candidates are made of — inputs long, nested,
//!   colliding, big, subclassed, self-referencing; operations from the priced
//!   surface; [`corpus`]: the named findings, always run first;
//! - [`measure`]: the child's side, timing a program metered in-process;
//! - [`runner`]: the parent's side, a child process per program, watched for
//!   time, memory and crashes;
//! - [`ordinary`]: the yardstick, the VM benchmark's real programs;
//! - [`search`]: the genetic loop, confirmation and minimisation.
//!
//! The binary `timerhost-meterfuzz` runs a search (docs/METERING.md,
//! "Keeping prices honest"); `tests/short_run.rs` runs a short one with a
//! fixed seed as part of the test command.

pub mod corpus;
pub mod error;
pub mod measure;
pub mod ops;
pub mod ordinary;
pub mod program;
pub mod runner;
pub mod search;
pub mod shapes;

pub use error::{FuzzError, Result};
