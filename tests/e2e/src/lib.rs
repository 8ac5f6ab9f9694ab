//! End-to-end tests for timerhost. The tests live in `tests/`; this crate
//! builds the real `timerhost` binary under its own name (so that tests can
//! locate it with `CARGO_BIN_EXE_timerhost`) and `crash-writer`, a block
//! producer used by the crash tests.
//!
//! [`module_graph`] reads a crate's module graph from its sources, for the
//! architecture tests (`tests/architecture.rs`, and the actor VM's
//! `host/vm/tests/layers.rs`, which includes the same file).

pub mod module_graph;
