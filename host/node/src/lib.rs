//! # timerhost-node
//!
//! The `timerhost` command line and the node's on-disk home.
//!
//! - [`home`]: the home directory layout (`genesis.toml`, `data/`), opening
//!   the chain from it, and writing a new one (`init`).
//! - [`cli`]: argument parsing and dispatch: one module per command group
//!   below, human output by default and `--json` for scripts.
//! - [`home_cmds`]: `init` and `replay`; [`node_cmd`]: `node`;
//!   [`query`]: the read-only client commands; [`transact`]: the signed
//!   ones; [`dev_tools`]: `snapshot`, `revert`, `mine`.
//! - [`config`]: `node.toml` (documented in `config/node.toml`).
//! - [`run`]: a running node: RPC server, block producer, metrics, signals.
//! - [`producer`]: the single thread that writes the chain; [`block_report`]:
//!   what each committed block did, for the log and the metrics.
//! - [`network_node`]: `node` on a validator network (a genesis listing
//!   validators): Malachite drives the chain, transactions gossip to peers
//!   ([`gossip`]: a bounded queue and a thread per peer).
//! - [`testnet`]: `timerhost testnet`, N local validators in one command.
//! - [`metrics`]: Prometheus metrics.
//! - [`client`]: the client commands, which talk to a node over JSON-RPC.
//! - [`client_args`]: the node and signer options every client command
//!   shares, and sending a transaction; [`output`]: JSON or text output.
//! - [`gov`]: `timerhost gov …`, the governance commands.
//! - [`cron`]: `timerhost cron …`, ARC-21's cron registry from a wallet.
//! - [`dev`]: `timerhost dev`, the one-command devnet and its examples.
//! - [`follow`]: `events --follow`, streaming events as blocks arrive.
//! - [`keys`]: `keys new|list`, key files for `--key FILE`.
//! - [`load`]: `timerhost load`, a load generator with a latency report.

pub mod block_report;
pub mod cli;
pub mod client;
pub mod client_args;
pub mod config;
pub mod cron;
pub mod dev;
pub mod dev_tools;
pub mod disk;
pub mod error;
pub mod fd_limit;
pub mod follow;
pub mod follow_ws;
pub mod gossip;
pub mod gov;
pub mod home;
pub mod home_cmds;
pub mod keys;
pub mod load;
pub mod metrics;
pub mod network_control;
pub mod network_node;
pub mod node_cmd;
pub mod output;
pub mod priority;
pub mod producer;
pub mod pruner;
pub mod query;
pub mod run;
pub mod snapshotter;
pub mod state_sync;
pub mod testnet;
pub mod transact;

pub use error::{NodeError, Result};
