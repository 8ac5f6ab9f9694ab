//! Sending the run at its rate and following the chain until every
//! accepted transaction is in a block.
//!
//! The main thread paces: every few milliseconds it hands the transactions
//! now due, as one batch per URL, to that URL's sender threads (two per
//! URL, so one slow answer does not stall the rate). Each account sends to
//! one URL, as a wallet talks to one node: its transactions reach that
//! node in nonce order, and the network's gossip keeps that order, where
//! spreading one account's nonces over nodes would leave gaps that stop its
//! later transactions from being proposed until the earlier ones arrive. A tracker thread reads
//! each new block of the first URL and marks the run's transactions in it
//! with the time it saw them: latency is from just before a transaction's
//! batch was posted to the moment its block was seen (polled every 10 ms).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use timerhost_rpc::Client;
use timerhost_types::Hash;

use super::plan::PlannedTx;
use crate::error::Result;

/// Most transactions in one JSON-RPC batch.
const MAX_BATCH: usize = 500;
/// Sender threads per URL.
const SENDERS_PER_URL: usize = 2;
/// How often the pacer wakes.
const PACE: Duration = Duration::from_millis(5);
/// How often the tracker asks for the next block.
const POLL: Duration = Duration::from_millis(10);
/// The drain stops when no accepted transaction was committed for this long.
const DRAIN_STALL: Duration = Duration::from_secs(20);

const UNSENT: u8 = 0;
const SENT: u8 = 1;
const ACCEPTED: u8 = 2;
const REFUSED: u8 = 3;

/// What happened to every transaction of the run.
pub struct Outcome {
    /// Per transaction: nanoseconds from the start to its sending (0: never sent).
    pub sent_ns: Vec<u64>,
    /// Per transaction: accepted by the node it was sent to.
    pub accepted: Vec<bool>,
    /// Per transaction: nanoseconds from the start until its block was seen (0: never).
    pub committed_ns: Vec<u64>,
    /// Per transaction: the number of blocks it was found in.
    pub seen: Vec<u32>,
    /// Refusals by reason (`data.reason`, or `transport`, or `code N`).
    pub errors: BTreeMap<String, u64>,
    /// The blocks followed, with how many of the run's transactions each held.
    pub blocks: Vec<(u64, usize)>,
    /// Accepted transactions no block held, by the reason the nodes give.
    pub missing: BTreeMap<String, u64>,
}

struct Shared {
    start: Instant,
    sent_ns: Vec<AtomicU64>,
    state: Vec<AtomicU8>,
    committed_ns: Vec<AtomicU64>,
    seen: Vec<AtomicU32>,
    errors: Mutex<BTreeMap<String, u64>>,
    stop: AtomicBool,
}

impl Shared {
    fn now_ns(&self) -> u64 {
        (self.start.elapsed().as_nanos() as u64).max(1)
    }

    fn count(&self, state: u8) -> usize {
        self.state
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) == state)
            .count()
    }

    fn committed(&self) -> usize {
        self.committed_ns
            .iter()
            .filter(|c| c.load(Ordering::Relaxed) > 0)
            .count()
    }

    fn refuse(&self, reason: String, n: u64) {
        *self
            .errors
            .lock()
            .expect("not poisoned")
            .entry(reason)
            .or_default() += n;
    }
}

/// Posts one batch (indexes into `txs`) as one `th_sendRawTransactions`
/// call and records each answer: a hash, or the error that refused it.
fn send_batch(client: &Client, txs: &[PlannedTx], batch: Vec<usize>, shared: &Shared) {
    let raws: Vec<&str> = batch.iter().map(|&i| txs[i].raw.as_str()).collect();
    let at = shared.now_ns();
    for &i in &batch {
        shared.sent_ns[i].store(at, Ordering::Relaxed);
        shared.state[i].store(SENT, Ordering::Relaxed);
    }
    let answers = client
        .call("th_sendRawTransactions", json!([raws]))
        .and_then(|answers| match answers {
            Json::Array(answers) if answers.len() == batch.len() => Ok(answers),
            other => Err(timerhost_rpc::RpcError::Transport {
                url: client.url().to_string(),
                reason: format!(
                    "{} answers to {} transactions",
                    other.as_array().map_or(0, Vec::len),
                    batch.len()
                ),
            }),
        });
    match answers {
        Err(e) => {
            tracing::warn!(error = %e, "a batch of transactions was not delivered");
            for &i in &batch {
                shared.state[i].store(REFUSED, Ordering::Relaxed);
            }
            shared.refuse("transport".into(), batch.len() as u64);
        }
        Ok(answers) => {
            for (i, answer) in batch.into_iter().zip(answers) {
                let error = &answer["error"];
                if error.is_null() {
                    shared.state[i].store(ACCEPTED, Ordering::Relaxed);
                    continue;
                }
                shared.state[i].store(REFUSED, Ordering::Relaxed);
                let reason = match error["data"]["reason"].as_str() {
                    Some(reason) => reason.to_string(),
                    None => format!("code {}", error["code"]),
                };
                shared.refuse(reason, 1);
            }
        }
    }
}

/// Follows blocks from `from` until told to stop and caught up, on the
/// first of `clients` that answers (a node killed, paused or cut off by a
/// fault is skipped for the next).
fn track(
    clients: &[Client],
    from: u64,
    index: &HashMap<Hash, usize>,
    shared: &Shared,
) -> Result<Vec<(u64, usize)>> {
    let mut blocks = Vec::new();
    let mut next = from;
    let mut current = 0usize;
    let mut failures = 0usize;
    loop {
        let block = match clients[current].call("th_getBlock", json!([next])) {
            Ok(block) => {
                failures = 0;
                block
            }
            Err(e) => {
                failures += 1;
                if failures > 10 * clients.len() {
                    return Err(e.into());
                }
                current = (current + 1) % clients.len();
                std::thread::sleep(POLL);
                continue;
            }
        };
        if block.is_null() {
            if shared.stop.load(Ordering::Relaxed) {
                return Ok(blocks);
            }
            std::thread::sleep(POLL);
            continue;
        }
        let at = shared.now_ns();
        let mut ours = 0;
        for hash in block["txs"].as_array().into_iter().flatten() {
            let Ok(hash) = serde_json::from_value::<Hash>(hash.clone()) else {
                continue;
            };
            if let Some(&i) = index.get(&hash) {
                ours += 1;
                shared.seen[i].fetch_add(1, Ordering::Relaxed);
                let _ = shared.committed_ns[i].compare_exchange(
                    0,
                    at,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
        }
        blocks.push((next, ours));
        next += 1;
    }
}

/// Why each accepted transaction that no block held is not there, as the
/// nodes tell it (`th_getReceipt`: still pending, or dropped with a reason)
/// — or, when no node knows it, that the node it was sent to forgot it
/// (a killed node's mempool is not kept).
fn explain_missing(
    clients: &[Client],
    txs: &[PlannedTx],
    missing: &[usize],
    url_of: impl Fn(usize) -> usize,
) -> BTreeMap<String, u64> {
    let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
    for &i in missing {
        let hash = json!([txs[i].hash]);
        let mut reason = None;
        for client in clients {
            match client.call("th_getReceipt", hash.clone()) {
                Ok(r) if r.get("pending") == Some(&Json::Bool(true)) => {
                    reason = Some("still pending".to_string());
                }
                Ok(r) => {
                    if let Some(d) = r.get("dropped").and_then(Json::as_str) {
                        // The reason without its numbers, so alike ones add up.
                        let head: String = d
                            .split(|c: char| c.is_ascii_digit())
                            .next()
                            .unwrap_or(d)
                            .trim()
                            .to_string();
                        reason = Some(format!("dropped by a node: {head}"));
                    } else if r.get("height").is_some() {
                        reason = Some("committed after the drain".to_string());
                    }
                }
                Err(_) => {}
            }
            if reason.is_some() {
                break;
            }
        }
        let reason = reason.unwrap_or_else(|| {
            format!(
                "unknown to every node: forgotten by {} (a restarted node's mempool is not kept)",
                clients[url_of(i)].url()
            )
        });
        *reasons.entry(reason).or_default() += 1;
    }
    reasons
}

/// Sends `txs` at `rate` per second over `clients` (transaction `i` from
/// account `i % accounts`, account `k` to URL `k % clients`), follows the
/// chain, and waits up to `drain` after the last send for the accepted ones
/// to commit.
pub fn run(
    clients: &[Client],
    accounts: usize,
    txs: &[PlannedTx],
    rate: u64,
    duration: Duration,
    drain: Duration,
    progress: &dyn Fn(&str),
) -> Result<Outcome> {
    let total = txs.len();
    let index: HashMap<Hash, usize> = txs.iter().enumerate().map(|(i, t)| (t.hash, i)).collect();
    let from = clients[0].call("th_status", json!([]))?["height"]
        .as_u64()
        .unwrap_or_default()
        + 1;
    let shared = Shared {
        start: Instant::now(),
        sent_ns: (0..total).map(|_| AtomicU64::new(0)).collect(),
        state: (0..total).map(|_| AtomicU8::new(UNSENT)).collect(),
        committed_ns: (0..total).map(|_| AtomicU64::new(0)).collect(),
        seen: (0..total).map(|_| AtomicU32::new(0)).collect(),
        errors: Mutex::new(BTreeMap::new()),
        stop: AtomicBool::new(false),
    };
    progress(&format!(
        "sending {total} transactions at {rate}/s over {} node(s) for {:.1} s…",
        clients.len(),
        duration.as_secs_f64()
    ));
    let blocks = std::thread::scope(|scope| -> Result<Vec<(u64, usize)>> {
        let shared = &shared;
        let tracker = scope.spawn(|| track(clients, from, &index, shared));
        let mut queues = Vec::new();
        for client in clients {
            let (tx, rx) = mpsc::channel::<Vec<usize>>();
            let rx = Arc::new(Mutex::new(rx));
            for _ in 0..SENDERS_PER_URL {
                let rx = rx.clone();
                scope.spawn(move || loop {
                    let next = rx.lock().expect("not poisoned").recv();
                    match next {
                        Ok(batch) => send_batch(client, txs, batch, shared),
                        Err(_) => return,
                    }
                });
            }
            queues.push(tx);
        }
        // Pace.
        let urls = clients.len();
        let url_of = |i: usize| (i % accounts.max(1)) % urls;
        let mut next = 0usize;
        let mut last_line = Duration::ZERO;
        let mut last_committed = 0usize;
        while next < total {
            let elapsed = shared.start.elapsed();
            let due = ((rate as f64 * elapsed.as_secs_f64()) as usize).min(total);
            let mut batches: Vec<Vec<usize>> = vec![Vec::new(); urls];
            for i in next..due {
                let url = url_of(i);
                batches[url].push(i);
                if batches[url].len() == MAX_BATCH {
                    let _ = queues[url].send(std::mem::take(&mut batches[url]));
                }
            }
            for (url, batch) in batches.into_iter().enumerate() {
                if !batch.is_empty() {
                    let _ = queues[url].send(batch);
                }
            }
            next = next.max(due);
            if elapsed >= last_line + Duration::from_secs(1) {
                last_line = elapsed;
                last_committed = line(shared, elapsed, last_committed, progress);
            }
            std::thread::sleep(PACE);
        }
        drop(queues);
        let sent_at = shared.start.elapsed();
        // Drain: wait for every accepted transaction to be seen in a block,
        // or for the commits to stop coming (what is left then waits for a
        // nonce that never came, or was lost: the nodes say which below).
        let mut progress_at = (shared.start.elapsed(), shared.committed());
        loop {
            let elapsed = shared.start.elapsed();
            let unanswered = shared.count(SENT) + shared.count(UNSENT);
            let accepted = shared.count(ACCEPTED);
            let committed = shared.committed();
            if unanswered == 0 && committed >= accepted {
                break;
            }
            if committed != progress_at.1 {
                progress_at = (elapsed, committed);
            } else if unanswered == 0 && elapsed > progress_at.0 + DRAIN_STALL {
                progress(&format!(
                    "no commit for {:.0} s: {} accepted transaction(s) not in a block",
                    DRAIN_STALL.as_secs_f64(),
                    accepted.saturating_sub(committed)
                ));
                break;
            }
            if elapsed > sent_at + drain {
                progress(&format!(
                    "gave up waiting after {:.0} s: {} accepted transaction(s) not yet in a block",
                    drain.as_secs_f64(),
                    accepted.saturating_sub(committed)
                ));
                break;
            }
            if elapsed >= last_line + Duration::from_secs(1) {
                last_line = elapsed;
                last_committed = line(shared, elapsed, last_committed, progress);
            }
            std::thread::sleep(PACE);
        }
        // One more block, so a transaction included twice would be seen.
        std::thread::sleep(Duration::from_millis(50));
        shared.stop.store(true, Ordering::Relaxed);
        tracker.join().expect("the tracker does not panic")
    })?;
    Ok(Outcome {
        sent_ns: shared
            .sent_ns
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect(),
        accepted: shared
            .state
            .iter()
            .map(|s| s.load(Ordering::Relaxed) == ACCEPTED)
            .collect(),
        committed_ns: shared
            .committed_ns
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect(),
        seen: shared
            .seen
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .collect(),
        errors: shared.errors.into_inner().expect("not poisoned"),
        blocks,
        missing: BTreeMap::new(),
    })
    .map(|mut outcome| {
        let urls = clients.len();
        let url_of = |i: usize| (i % accounts.max(1)) % urls;
        let missing: Vec<usize> = (0..total)
            .filter(|&i| outcome.accepted[i] && outcome.committed_ns[i] == 0)
            .collect();
        outcome.missing = explain_missing(clients, txs, &missing, url_of);
        outcome
    })
}

/// Prints a progress line; returns the committed count for the next one.
fn line(
    shared: &Shared,
    elapsed: Duration,
    last_committed: usize,
    progress: &dyn Fn(&str),
) -> usize {
    let committed = shared.committed();
    let refused = shared.count(REFUSED);
    progress(&format!(
        "{:>5.1}s  sent {:>8}  accepted {:>8}  refused {:>6}  committed {:>8}  ({} tx/s in the last second)",
        elapsed.as_secs_f64(),
        shared.state.len() - shared.count(UNSENT),
        shared.count(ACCEPTED),
        refused,
        committed,
        committed.saturating_sub(last_committed)
    ));
    committed
}
