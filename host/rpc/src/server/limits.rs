//! What one request may cost the node (#50, docs/RPC.md "Bounds"): the read
//! bound of `th_getEvents`, the batch length, and the slots of the
//! expensive queries.
//!
//! Every method reads a bounded number of keys and bytes (each documents
//! its bound). Bounded is not free: a flood of bounded but expensive
//! queries (pages, ranges of blocks, indexes) could still take every core.
//! So at most [`RpcLimits::max_expensive_queries`] of them run at once; the
//! next wait up to [`RpcLimits::expensive_wait`] for a slot and are then
//! refused with `busy`. The cheap methods (a few keys each: `th_status`,
//! balances, nonces, single records, submissions) run on the server's own
//! workers, never behind them, and block production on its own thread.

use std::time::Duration;

use crate::error::{Result, RpcError};

/// Connections an RPC server holds at once by default.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 4_096;

/// The expensive methods (see the module docs).
pub const EXPENSIVE_METHODS: &[&str] = &[
    "th_getBlock",
    "th_getSnapshotChunk",
    "th_getRawHeaders",
    "th_getReceipt",
    "th_getStorageKeys",
    "th_getTimers",
    "th_quoteTimer",
    "th_getGlobalbox",
    "th_getDeadLetters",
    "th_getEvents",
    "th_getProposals",
    "th_getBlockStats",
    "th_getAhead",
    "th_getTimersPage",
    "th_getTimerLife",
    "th_getWatches",
    "th_getCronJobs",
];

/// Most calls one JSON-RPC batch may hold (a batch was bounded only by the
/// 8 MiB request size). `timerhost load` sends batches of at most half this.
pub const MAX_BATCH_CALLS: u32 = 1_000;

/// The limits of one server (docs/RPC.md, "Bounds").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpcLimits {
    /// Entries one `th_getEvents` reads before it stops with `read_limit`
    /// (blocks opened, index entries and events decoded): a name and an
    /// actor that never meet made it read every block of the chain.
    pub max_event_reads: usize,
    /// Expensive queries running at once.
    pub max_expensive_queries: usize,
    /// How long an expensive query waits for a slot before `busy`.
    pub expensive_wait: Duration,
    /// Connections (HTTP and WebSocket) the server holds at once (#48):
    /// jsonrpsee's default of 100 let 100 subscribers lock every HTTP
    /// client out. Each connection is a file descriptor and a bounded
    /// buffer (`subscriptions::MESSAGE_BUFFER` messages); the node raises
    /// its descriptor limit to fit at start.
    pub max_connections: u32,
}

impl Default for RpcLimits {
    fn default() -> Self {
        Self {
            max_event_reads: 50_000,
            // Half the cores, at least one: the rest stay with block
            // production and the cheap methods.
            max_expensive_queries: std::thread::available_parallelism()
                .map_or(1, |n| (n.get() / 2).max(1)),
            expensive_wait: Duration::from_secs(1),
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// The slots of the expensive queries: a semaphore an expensive query
/// waits on *before* it takes a thread of the blocking pool, so a flood
/// of them neither runs more than the bound nor fills the pool with
/// waiters.
#[derive(Debug)]
pub(crate) struct ExpensiveSlots {
    permits: tokio::sync::Semaphore,
}

impl ExpensiveSlots {
    /// Slots for `limits.max_expensive_queries` queries at once.
    pub(crate) fn new(limits: &RpcLimits) -> Self {
        Self {
            permits: tokio::sync::Semaphore::new(limits.max_expensive_queries.max(1)),
        }
    }

    /// A slot for `method`, waiting up to `limits.expensive_wait`, or `busy`.
    pub(crate) async fn acquire(
        &self,
        method: &'static str,
        limits: &RpcLimits,
    ) -> Result<tokio::sync::SemaphorePermit<'_>> {
        match tokio::time::timeout(limits.expensive_wait, self.permits.acquire()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(RpcError::Busy {
                method,
                running: limits.max_expensive_queries,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn slots_bound_the_concurrency_and_refuse_after_the_wait() {
        let limits = RpcLimits {
            max_expensive_queries: 2,
            expensive_wait: Duration::from_millis(50),
            ..RpcLimits::default()
        };
        let slots = ExpensiveSlots::new(&limits);
        let a = slots.acquire("a", &limits).await.unwrap();
        let _b = slots.acquire("b", &limits).await.unwrap();
        let started = std::time::Instant::now();
        let e = slots.acquire("c", &limits).await.expect_err("busy");
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(e.to_string().contains("busy"), "{e}");
        drop(a);
        let _c = slots.acquire("c", &limits).await.unwrap();
    }
}
