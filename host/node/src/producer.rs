//! The block producer: the single thread that writes the chain.
//!
//! It owns block production: it takes ready transactions from the mempool in
//! their deterministic order, proposes and commits a block, prunes the pool
//! and logs one line per block. Blocks come on a timer (`--block-time`) or
//! on request (`dev_mine`, `--manual`). Timestamps are chosen here, never
//! inside execution: `max(parent + 1, now)`, or the value set with
//! `dev_setNextBlockTimestamp` for the next block.
//!
//! Stopping (Ctrl-C, SIGTERM) sets a flag checked between blocks: the block
//! in progress is finished and committed atomically, then the loop returns.
//!
//! Dev snapshots are taken and restored here too (`dev_snapshot`,
//! `dev_revert`), as commands handled between blocks: the store scan and
//! the restoring batch never overlap a block being built or committed, and
//! the mempool is purged of what the restored state makes invalid before the
//! next block is proposed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde_json::{json, Value as Json};
use timerhost_chain::accounts::timer_config;
use timerhost_chain::{Chain, TxError};
use timerhost_rpc::{Mempool, NodeControl, NodeSnapshot, RpcError};
use timerhost_state::KvBackend;
use timerhost_types::Address;

use crate::block_report::BlockReport;
use crate::disk::DiskGuard;
use crate::error::Result;
use crate::metrics::Metrics;

/// When blocks are produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// One block every interval.
    Interval(Duration),
    /// Only when asked (`dev_mine`).
    Manual,
}

/// What the producer reports to the node's log.
#[derive(Clone, Copy, Debug)]
pub enum ProducerEvent<'a> {
    /// A block was committed.
    Block(&'a BlockReport),
    /// The chain was returned to a dev snapshot (`dev_revert`).
    Reverted {
        /// The head's height now.
        height: u64,
        /// Mempool transactions dropped because the restored state makes them invalid.
        dropped: usize,
    },
}

enum Cmd {
    Mine(u64, Sender<Result<Vec<u64>, RpcError>>),
    SetTimestamp(u64, Sender<Result<(), RpcError>>),
    Snapshot(Sender<Result<NodeSnapshot, RpcError>>),
    Revert(Box<NodeSnapshot>, Sender<Result<(), RpcError>>),
    Wake,
}

/// The producer's side of the RPC: implements [`NodeControl`].
#[derive(Clone)]
pub struct ProducerHandle {
    tx: Sender<Cmd>,
    stop: Arc<AtomicBool>,
    schedule: Schedule,
    disk: Option<DiskGuard>,
}

impl std::fmt::Debug for ProducerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerHandle")
            .field("schedule", &self.schedule)
            .finish_non_exhaustive()
    }
}

impl ProducerHandle {
    /// Asks the producer to stop after the block in progress.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.tx.send(Cmd::Wake);
    }

    fn ask<T>(&self, make: impl FnOnce(Sender<Result<T, RpcError>>) -> Cmd) -> Result<T, RpcError> {
        let (reply, rx) = mpsc::channel();
        self.tx
            .send(make(reply))
            .map_err(|_| RpcError::Producer("the block producer has stopped".into()))?;
        rx.recv()
            .map_err(|_| RpcError::Producer("the block producer stopped before answering".into()))?
    }
}

impl NodeControl for ProducerHandle {
    fn mine(&self, blocks: u64) -> Result<Vec<u64>, RpcError> {
        self.ask(|r| Cmd::Mine(blocks, r))
    }

    fn set_next_timestamp(&self, timestamp: u64) -> Result<(), RpcError> {
        self.ask(|r| Cmd::SetTimestamp(timestamp, r))
    }

    fn snapshot(&self) -> Result<NodeSnapshot, RpcError> {
        self.ask(Cmd::Snapshot)
    }

    fn revert(&self, snapshot: &NodeSnapshot) -> Result<(), RpcError> {
        self.ask(|r| Cmd::Revert(Box::new(snapshot.clone()), r))
    }

    fn describe(&self) -> Json {
        let mut described = match self.schedule {
            Schedule::Interval(d) => {
                json!({ "mode": "interval", "block_time_ms": d.as_millis() as u64 })
            }
            Schedule::Manual => json!({ "mode": "manual" }),
        };
        if let Some(disk) = &self.disk {
            described["disk"] = disk.describe();
        }
        described
    }
}

/// How often a producer facing a full disk looks again.
const DISK_RECHECK: Duration = Duration::from_secs(1);

/// The block producer (run it with [`Producer::run`] on its own thread).
pub struct Producer<B: KvBackend> {
    chain: Arc<Chain<B>>,
    pool: Arc<Mutex<Mempool>>,
    proposer: Address,
    schedule: Schedule,
    rx: Receiver<Cmd>,
    stop: Arc<AtomicBool>,
    next_timestamp: Option<u64>,
    metrics: Arc<Metrics>,
    log: Box<dyn Fn(ProducerEvent<'_>) + Send>,
    /// Refuses commits while the disk is full (`crate::disk`).
    disk: Option<DiskGuard>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl<B: KvBackend> Producer<B> {
    /// A producer and its handle. `log` receives each block's summary and
    /// each dev revert.
    pub fn new(
        chain: Arc<Chain<B>>,
        pool: Arc<Mutex<Mempool>>,
        proposer: Address,
        schedule: Schedule,
        metrics: Arc<Metrics>,
        log: Box<dyn Fn(ProducerEvent<'_>) + Send>,
        disk: Option<DiskGuard>,
    ) -> (Self, ProducerHandle) {
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let handle = ProducerHandle {
            tx,
            stop: stop.clone(),
            schedule,
            disk: disk.clone(),
        };
        let producer = Self {
            chain,
            pool,
            proposer,
            schedule,
            rx,
            stop,
            next_timestamp: None,
            metrics,
            log,
            disk,
        };
        (producer, handle)
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Runs until stopped. Returns the last committed height.
    pub fn run(mut self) -> Result<u64> {
        let mut due = match self.schedule {
            Schedule::Interval(d) => Some(Instant::now() + d),
            Schedule::Manual => None,
        };
        while !self.stopping() {
            let cmd = match due {
                Some(at) => match self
                    .rx
                    .recv_timeout(at.saturating_duration_since(Instant::now()))
                {
                    Ok(cmd) => Some(cmd),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match self.rx.recv() {
                    Ok(cmd) => Some(cmd),
                    Err(_) => break,
                },
            };
            match cmd {
                // A full disk: no block this tick; reads go on, and the
                // next tick checks again.
                None if self.disk_refuses().is_some() => {
                    if let Some(at) = due.as_mut() {
                        *at = Instant::now() + DISK_RECHECK.min(self.interval());
                    }
                }
                None => {
                    self.produce()?;
                    if let (Schedule::Interval(d), Some(at)) = (self.schedule, due.as_mut()) {
                        *at = next_due(*at, d, Instant::now());
                    }
                }
                Some(Cmd::Wake) => {}
                Some(Cmd::SetTimestamp(ts, reply)) => {
                    let _ = reply.send(self.set_next_timestamp(ts));
                }
                Some(Cmd::Snapshot(reply)) => {
                    let _ = reply.send(timerhost_rpc::snapshots::take(
                        &self.chain,
                        self.next_timestamp,
                    ));
                }
                Some(Cmd::Revert(snapshot, reply)) => {
                    let _ = reply.send(self.revert(&snapshot));
                }
                Some(Cmd::Mine(_, reply)) if self.disk_refuses().is_some() => {
                    let why = self.disk_refuses().unwrap_or_default();
                    let _ = reply.send(Err(RpcError::Producer(why)));
                }
                Some(Cmd::Mine(n, reply)) => {
                    let mut heights = Vec::new();
                    let mut outcome = Ok(());
                    for _ in 0..n {
                        if self.stopping() {
                            break;
                        }
                        match self.produce() {
                            Ok(s) => heights.push(s.height),
                            Err(e) => {
                                outcome = Err(e);
                                break;
                            }
                        }
                    }
                    match outcome {
                        Ok(()) => {
                            let _ = reply.send(Ok(heights));
                        }
                        Err(e) => {
                            let _ = reply.send(Err(RpcError::Producer(e.to_string())));
                            return Err(e);
                        }
                    }
                }
            }
        }
        Ok(self.chain.head()?.height)
    }

    /// Why the disk refuses a commit now, if it does.
    fn disk_refuses(&self) -> Option<String> {
        self.disk.as_ref().and_then(|d| d.allows_commit().err())
    }

    fn interval(&self) -> Duration {
        match self.schedule {
            Schedule::Interval(d) => d,
            Schedule::Manual => DISK_RECHECK,
        }
    }

    fn set_next_timestamp(&mut self, ts: u64) -> Result<(), RpcError> {
        let head = self.chain.head()?;
        if ts <= head.timestamp_ms {
            return Err(RpcError::InvalidParams(format!(
                "the next timestamp (unix ms) must exceed the head's ({} at height {}), got {ts}",
                head.timestamp_ms, head.height
            )));
        }
        self.next_timestamp = Some(ts);
        Ok(())
    }

    /// Returns the chain, the pending timestamp override and the mempool to
    /// `snapshot` (see [`timerhost_rpc::snapshots::restore`]). A failed
    /// restore wrote nothing (one atomic batch), so the node carries on.
    fn revert(&mut self, snapshot: &NodeSnapshot) -> Result<(), RpcError> {
        let dropped = timerhost_rpc::snapshots::restore(&self.chain, &self.pool, snapshot)?;
        for (hash, reason) in &dropped {
            tracing::warn!(%hash, %reason, "dev_revert: dropped a mempool transaction the restored state refuses");
        }
        self.next_timestamp = snapshot.next_timestamp;
        let height = self.chain.head()?.height;
        self.metrics.height.set(height);
        self.metrics.mempool_size.set(self.pool.lock().len() as u64);
        (self.log)(ProducerEvent::Reverted {
            height,
            dropped: dropped.len(),
        });
        Ok(())
    }

    /// Produces and commits one block.
    pub fn produce(&mut self) -> Result<BlockReport> {
        let started = Instant::now();
        let head = self.chain.head()?;
        let timestamp = self
            .next_timestamp
            .take()
            .unwrap_or_else(|| now_ms().max(head.timestamp_ms + 1));
        let chain = &self.chain;
        let (candidates, senders): (Vec<_>, Vec<_>) = {
            let pool = self.pool.lock();
            let max = pool.config().max_block_txs;
            pool.candidates_with_senders(|a| Ok(chain.account(a)?.nonce), max)
                .map_err(|e| crate::error::NodeError::Rpc(Box::new(e)))?
                .into_iter()
                .map(|(tx, sender)| (tx, Ok(sender)))
                .unzip()
        };
        // The config in force for this block: changes apply from the next one.
        let timers = timer_config(&chain.store().state())?;
        let proposed = chain.propose_recovered(&candidates, &senders, timestamp, self.proposer)?;
        chain.commit(&proposed.executed)?;
        let mut refused = 0;
        {
            let mut pool = self.pool.lock();
            for (_, hash, err) in &proposed.rejected {
                if matches!(err, TxError::BlockFull { .. }) {
                    continue; // stays for a later block
                }
                refused += 1;
                tracing::warn!(%hash, error = %err, "block refused a mempool transaction; dropped");
                pool.drop_tx(hash, format!("refused by the block: {err}"));
            }
            pool.remove_stale(|a| Ok(chain.account(a)?.nonce))
                .map_err(|e| crate::error::NodeError::Rpc(Box::new(e)))?;
            self.metrics.mempool_size.set(pool.len() as u64);
        }
        let summary = BlockReport::after_commit(
            chain,
            &proposed.executed,
            refused,
            &timers,
            started.elapsed(),
        )?;
        self.metrics.record_block(&summary);
        (self.log)(ProducerEvent::Block(&summary));
        Ok(summary)
    }
}

/// When the block after one due at `at` is due, `now` being when that one
/// was committed: an `interval` after it — or at once if that has passed.
/// A block that took longer than the interval (a backlog: full blocks of
/// `max_block_txs`) is followed by the next straight away, so the node
/// drains a backlog at the speed it produces blocks. Waiting a whole
/// interval after a late block, as before #46, capped a node whose full
/// blocks took 340 ms at 5,000 transactions every 540 ms (9,260 tx/s):
/// under 10,000 tx/s a backlog, once formed, only grew. At most one block
/// is owed: a pause (a full disk, a stopped clock) is not made up in a
/// burst.
fn next_due(at: Instant, interval: Duration, now: Instant) -> Instant {
    (at + interval).max(now)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_block_is_followed_at_once_and_an_early_one_after_its_interval() {
        let start = Instant::now();
        let d = Duration::from_millis(200);
        // Committed 50 ms after it was due: the next is due 200 ms after.
        let on_time = start + Duration::from_millis(50);
        assert_eq!(next_due(start, d, on_time), start + d);
        // Committed 340 ms after it was due: the next is due now, not 200
        // ms from now.
        let late = start + Duration::from_millis(340);
        assert_eq!(next_due(start, d, late), late);
        // A long pause owes one block, not a burst of them.
        let paused = start + Duration::from_secs(60);
        assert_eq!(next_due(start, d, paused), paused);
        assert_eq!(
            next_due(paused, d, paused + Duration::from_millis(1)),
            paused + d
        );
    }
}
