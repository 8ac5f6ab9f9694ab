//! The background pruner (`[storage] keep_blocks`, #44): removes the
//! history of blocks more than `keep_blocks` below the head, oldest first,
//! [`PRUNE_STEP_HEIGHTS`] heights per atomic batch on a thread of its own,
//! pausing [`PRUNE_PAUSE`] between batches. It never takes a lock the
//! producer or consensus holds: a commit and a pruning batch write disjoint
//! keys of one sled database, so commits are never delayed by more than
//! sharing the disk (`timerhost_state::pruning` says what is kept).
//!
//! The same thread deletes the recent-state records (`[storage]
//! proof_blocks`, #48) of the heights that leave the window, which commits
//! no longer do (#46: a third of a full block's commit on a node), and
//! writes the transaction index (`timerhost_state::tx_index`), which
//! commits leave pending (#46: a quarter of the producer's time per
//! transaction). Those batches take the store's commit lock, a few heights
//! each, so a commit waits at most for one of them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use timerhost_chain::Chain;
use timerhost_state::SledBackend;

/// Heights one batch removes: a block of 20,000 fires has ~40,000 index
/// entries, so a batch stays within a few hundred thousand deletions.
pub const PRUNE_STEP_HEIGHTS: u64 = 16;

/// Pause between two batches while behind, so a node catching up on a
/// long backlog leaves the disk to commits.
pub const PRUNE_PAUSE: Duration = Duration::from_millis(20);

/// Pause when nothing is left to prune.
pub const PRUNE_IDLE: Duration = Duration::from_millis(500);

/// Pause between two rounds of recent-state pruning and indexing on a node
/// that keeps all its history: about a block, so each round deletes and
/// indexes about one height.
pub const RECENT_PAUSE: Duration = Duration::from_millis(200);

/// Most heights one indexing batch writes (a round writes all it finds).
pub const INDEX_STEP_HEIGHTS: usize = 16;

/// A running pruner; [`Pruner::stop`] (or dropping it) ends its thread
/// after the batch in progress.
pub struct Pruner {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Pruner {
    /// Starts indexing `chain`'s transactions, pruning it to its last
    /// `keep_blocks` blocks of history (0: all kept), and its recent states
    /// to the store's `proof_blocks` window; `None` if the thread could not
    /// be started (the commits then keep doing all three).
    pub fn start(chain: Arc<Chain<SledBackend>>, keep_blocks: u64) -> Option<Pruner> {
        let recent = chain.store().proof_blocks() > 0;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let store_chain = chain.clone();
        let thread = std::thread::Builder::new()
            .name("pruner".into())
            .spawn(move || run(&chain, keep_blocks, recent, &flag))
            .ok()?;
        // Only once the thread runs: the commits stop pruning and indexing
        // for it.
        store_chain.store().prune_recent_states_apart(recent);
        store_chain.store().index_transactions_apart(true);
        if keep_blocks > 0 {
            tracing::info!(
                keep_blocks,
                "pruning history older than the last {keep_blocks} blocks"
            );
        }
        Some(Pruner {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the thread after its current batch and waits for it.
    pub fn stop(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Pruner {
    fn drop(&mut self) {
        self.finish();
    }
}

fn sleep_unless_stopped(pause: Duration, stop: &AtomicBool) {
    let slice = Duration::from_millis(20);
    let mut slept = Duration::ZERO;
    while slept < pause && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(slice);
        slept += slice;
    }
}

fn run(chain: &Chain<SledBackend>, keep_blocks: u64, recent: bool, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        // Indexing first: a block is indexed before pruning can reach it.
        loop {
            match chain.store().index_transactions(INDEX_STEP_HEIGHTS) {
                Ok(heights) if heights == INDEX_STEP_HEIGHTS as u64 => continue,
                Ok(_) => break,
                Err(error) => {
                    tracing::warn!(%error, "indexing transactions failed; retrying");
                    break;
                }
            }
        }
        if recent {
            if let Err(error) = chain.store().prune_recent_states() {
                tracing::warn!(%error, "pruning recent states failed; retrying");
            }
        }
        if keep_blocks == 0 {
            sleep_unless_stopped(RECENT_PAUSE, stop);
            continue;
        }
        match chain.store().prune(keep_blocks, PRUNE_STEP_HEIGHTS) {
            Ok(step) if step.heights > 0 => {
                tracing::debug!(
                    heights = step.heights,
                    entries = step.entries,
                    floor = step.floor,
                    "pruned"
                );
                sleep_unless_stopped(PRUNE_PAUSE, stop);
            }
            Ok(_) => sleep_unless_stopped(PRUNE_IDLE, stop),
            Err(error) => {
                // A full disk or a failing backend: commits will say so too;
                // the pruner waits and tries again.
                tracing::warn!(%error, "pruning failed; retrying");
                sleep_unless_stopped(PRUNE_IDLE * 4, stop);
            }
        }
    }
}
