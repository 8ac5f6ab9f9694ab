//! # timerhost-rpc
//!
//! The node's JSON-RPC 2.0 interface over HTTP (every method is documented,
//! with an example, in `docs/RPC.md`).
//!
//! - [`json`]: JSON forms of blocks, receipts, events, timers and configs,
//!   and the [`Value`](timerhost_types::Value) ↔ JSON mapping.
//! - [`mempool`]: admission checks, bounds and the deterministic inclusion order.
//! - [`server`]: the method table and the HTTP listener; dev-only methods
//!   reach the block producer through [`NodeControl`].
//! - [`snapshots`]: the dev snapshots behind `dev_snapshot` / `dev_revert`.
//! - [`client`]: a small blocking client for the CLI's client commands.
//! - [`dashboard`]: the embedded web dashboard served at `GET /` (#33).

pub mod client;
pub mod dashboard;
pub mod error;
pub mod json;
pub mod mempool;
pub mod server;
pub mod snapshots;

pub use client::Client;
pub use error::{Result, RpcError};
pub use jsonrpsee::server::ServerHandle;
pub use mempool::{Mempool, MempoolConfig};
pub use server::{
    methods, start, NodeControl, Origin, RpcContext, RpcLimits, EXPENSIVE_METHODS, MAX_BATCH_CALLS,
    MAX_RAW_HEADERS, MESSAGE_BUFFER, METHODS, SEND_TIMEOUT,
};
pub use snapshots::{DevSnapshots, NodeSnapshot};
