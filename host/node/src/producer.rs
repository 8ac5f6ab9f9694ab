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
use timerhost_chain::{Chain, ExecutedBlock, TxError};
use timerhost_rpc::{Mempool, NodeControl, NodeSnapshot, RpcError};
use timerhost_state::KvBackend;
use timerhost_types::{Address, Receipt, TimerConfig, TxSource};

use crate::error::Result;
use crate::metrics::Metrics;

/// Most due timers and GC backlog entries counted after each block for the
/// carry-over metrics: the count scans the queue, so it is capped to keep a
/// timer storm from slowing every block (the gauges then read this value).
pub const CARRY_COUNT_LIMIT: usize = 100_000;

/// When blocks are produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// One block every interval.
    Interval(Duration),
    /// Only when asked (`dev_mine`).
    Manual,
}

/// What one produced block did, for the log and the metrics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSummary {
    /// Height.
    pub height: u64,
    /// Block timestamp (unix ms).
    pub timestamp_ms: u64,
    /// User transactions included.
    pub txs: usize,
    /// Mempool transactions the block refused (dropped from the pool).
    pub rejected: usize,
    /// Timers fired (`TimerFired`).
    pub timers_fired: u64,
    /// Timers expired (`TimerExpired`).
    pub timers_expired: u64,
    /// Timers destroyed for lack of funds (`TimerCancelledInsufficientFunds`).
    pub timers_unfunded: u64,
    /// Timers removed unexecuted because their fee payer revoked them
    /// (`TimerCancelledPaymentRevoked`).
    pub timers_revoked: u64,
    /// Timers removed by a governance shutdown (`TimerCancelled {reason: "shutdown"}`).
    pub timers_shut_down: u64,
    /// Timers still due after the block (height ≤ this block's), left in
    /// the due queue for a later block because the lane was full; counted up
    /// to [`CARRY_COUNT_LIMIT`].
    pub timers_carried_over: u64,
    /// Dead timers waiting in the GC backlog after the block (GC budget
    /// spent); counted up to [`CARRY_COUNT_LIMIT`].
    pub gc_backlog: u64,
    /// Cycles used by timer fires.
    pub lane_cycles: u64,
    /// Lane cycles reserved by the fires admitted (their gas limits).
    pub lane_reserved: u64,
    /// The timer lane's budget in force.
    pub lane_budget: u64,
    /// GC cycles used removing expired and unfunded timers.
    pub gc_cycles: u64,
    /// The GC budget in force.
    pub gc_budget: u64,
    /// Cycles used by the whole block.
    pub cycles_used: u64,
    /// Wall time spent proposing and committing.
    pub elapsed: Duration,
}

impl BlockSummary {
    /// The summary of `executed`, just committed to `chain` under `timers`
    /// (the timer config in force for it), `refused` mempool transactions
    /// dropped, `elapsed` since the block was started.
    pub fn after_commit<B: KvBackend>(
        chain: &Chain<B>,
        executed: &ExecutedBlock,
        refused: usize,
        timers: &TimerConfig,
        elapsed: Duration,
    ) -> Result<BlockSummary> {
        let block = &executed.block;
        let stats = &executed.timer_stats;
        let (fired, expired, unfunded, lane) = BlockSummary::of(&executed.receipts);
        // Due timers still queued at or below this height (or time) are
        // the ones the lane left for later; backlog entries are dead timers
        // awaiting GC.
        let (carried, backlog) = timerhost_timers::queue::due_count(
            &chain.store().state(),
            block.header.height,
            block.header.timestamp_ms,
            CARRY_COUNT_LIMIT,
        )?;
        Ok(BlockSummary {
            height: block.header.height,
            timestamp_ms: block.header.timestamp_ms,
            txs: block.txs.len(),
            rejected: refused,
            timers_fired: fired,
            timers_expired: expired,
            timers_unfunded: unfunded,
            timers_revoked: stats.revoked,
            timers_shut_down: stats.shut_down,
            timers_carried_over: carried as u64,
            gc_backlog: backlog as u64,
            lane_cycles: lane,
            lane_reserved: stats.lane_reserved,
            lane_budget: timers.lane_cycles_per_block,
            gc_cycles: stats.gc_cycles_used,
            gc_budget: timers.gc_cycles_per_block,
            cycles_used: block.header.cycles_used,
            elapsed,
        })
    }

    fn of(receipts: &[Receipt]) -> (u64, u64, u64, u64) {
        let (mut fired, mut expired, mut unfunded, mut lane) = (0, 0, 0, 0);
        for r in receipts {
            for e in &r.events {
                match e.name.as_str() {
                    "TimerFired" => fired += 1,
                    "TimerExpired" => expired += 1,
                    "TimerCancelledInsufficientFunds" => unfunded += 1,
                    _ => {}
                }
            }
            if matches!(r.source, TxSource::Deferred { .. })
                && r.events.iter().any(|e| e.name == "TimerFired")
            {
                lane += r.cycles_used;
            }
        }
        (fired, expired, unfunded, lane)
    }

    /// The human log line.
    pub fn line(&self) -> String {
        format!(
            "block {} ts {}: {} tx{}{}, timers fired {} expired {} unfunded {} carried over {}, lane {}/{} cycles, gc {}/{} cycles, block {} cycles, {:.1} ms",
            self.height,
            self.timestamp_ms,
            self.txs,
            if self.txs == 1 { "" } else { "s" },
            if self.rejected > 0 {
                format!(" ({} refused)", self.rejected)
            } else {
                String::new()
            },
            self.timers_fired,
            self.timers_expired,
            self.timers_unfunded,
            self.timers_carried_over,
            self.lane_cycles,
            self.lane_budget,
            self.gc_cycles,
            self.gc_budget,
            self.cycles_used,
            self.elapsed.as_secs_f64() * 1000.0
        )
    }
}

/// What the producer reports to the node's log.
#[derive(Clone, Copy, Debug)]
pub enum ProducerEvent<'a> {
    /// A block was committed.
    Block(&'a BlockSummary),
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
        match self.schedule {
            Schedule::Interval(d) => {
                json!({ "mode": "interval", "block_time_ms": d.as_millis() as u64 })
            }
            Schedule::Manual => json!({ "mode": "manual" }),
        }
    }
}

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
    ) -> (Self, ProducerHandle) {
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let handle = ProducerHandle {
            tx,
            stop: stop.clone(),
            schedule,
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
                None => {
                    self.produce()?;
                    if let (Schedule::Interval(d), Some(at)) = (self.schedule, due.as_mut()) {
                        *at += d;
                        let now = Instant::now();
                        if *at < now {
                            *at = now + d;
                        }
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
    pub fn produce(&mut self) -> Result<BlockSummary> {
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
        let summary = BlockSummary::after_commit(
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
