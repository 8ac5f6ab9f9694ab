//! End-to-end tests for timerhost. The tests live in `tests/`; this crate
//! builds the real `timerhost` binary under its own name (so that tests can
//! locate it with `CARGO_BIN_EXE_timerhost`) and `crash-writer`, a block
//! producer used by the crash tests.
