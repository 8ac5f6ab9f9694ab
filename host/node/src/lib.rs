//! # timerhost-node
//!
//! The `timerhost` command line and the node's on-disk home.
//!
//! - [`home`]: the home directory layout (`genesis.toml`, `data/`), opening
//!   the chain from it, and writing a new one (`init`).
//! - [`cli`]: argument parsing and the commands (`init`, `replay`), with
//!   human output by default and `--json` for scripts.

pub mod cli;
pub mod error;
pub mod home;

pub use error::{NodeError, Result};
