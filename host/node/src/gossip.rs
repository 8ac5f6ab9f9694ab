//! Transaction gossip: every transaction this node admits is forwarded
//! once to each peer's RPC (`[consensus] tx_gossip`), as JSON-RPC batches
//! of whatever arrived since the last one (one HTTP request per peer per
//! batch, not per transaction: at 1,500 tx/s on four local validators,
//! per-transaction requests were most of the machine's work, #34). A peer
//! that already holds a transaction refuses it by its hash, before any
//! signature is checked, and does not forward it again.
//!
//! Each peer has its own thread and its own bounded queue (#50): one
//! thread sending to the peers in turn, each call allowed 120 s and fed by
//! an unbounded channel, let a peer that accepted connections and never
//! answered delay every other peer's gossip by two minutes while the queue
//! grew without bound. Now a batch to a peer gives up after
//! [`PEER_TIMEOUT`], and a peer whose queue is full
//! ([`PEER_QUEUE_TXS`]) loses the new transactions — its own, never anyone
//! else's; they reach it anyway in the blocks it commits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value as Json};
use timerhost_rpc::Client;

/// Most transactions forwarded to a peer in one JSON-RPC batch (at most
/// half the server's batch bound, `timerhost_rpc::MAX_BATCH_CALLS`).
pub const GOSSIP_BATCH: usize = 500;

/// Transactions waiting for one peer before new ones are dropped for it.
pub const PEER_QUEUE_TXS: usize = 20_000;

/// How long one batch to one peer may take (connecting, sending, reading
/// the answer).
pub const PEER_TIMEOUT: Duration = Duration::from_secs(5);

/// One peer's queue and what it lost.
struct Peer {
    url: String,
    queue: SyncSender<Arc<Vec<u8>>>,
    dropped: AtomicU64,
}

/// The gossip of one node: a queue and a thread per peer.
pub struct Gossip {
    peers: Vec<Peer>,
}

impl Gossip {
    /// Starts a sending thread per peer URL.
    pub fn start(urls: &[String]) -> Gossip {
        Self::start_with(urls, PEER_QUEUE_TXS, PEER_TIMEOUT)
    }

    /// [`Gossip::start`] with a queue bound and a timeout of its own.
    pub fn start_with(urls: &[String], queue_txs: usize, timeout: Duration) -> Gossip {
        let peers = urls
            .iter()
            .map(|url| {
                let (queue, pending) = sync_channel(queue_txs);
                let client = Client::with_timeout(url, timeout);
                std::thread::Builder::new()
                    .name("tx-gossip".into())
                    .spawn(move || send_loop(&client, &pending))
                    .expect("spawning a gossip thread");
                Peer {
                    url: url.clone(),
                    queue,
                    dropped: AtomicU64::new(0),
                }
            })
            .collect();
        Gossip { peers }
    }

    /// Queues `raw` for every peer; a peer whose queue is full loses it.
    pub fn forward(&self, raw: &[u8]) {
        let raw = Arc::new(raw.to_vec());
        for peer in &self.peers {
            match peer.queue.try_send(raw.clone()) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    let lost = peer.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                    if lost.is_power_of_two() {
                        tracing::warn!(peer = %peer.url, lost, "the peer's gossip queue is full: dropping transactions for it");
                    }
                }
                Err(TrySendError::Disconnected(_)) => {}
            }
        }
    }

    /// Transactions dropped for each peer because its queue was full.
    pub fn dropped(&self) -> Vec<(String, u64)> {
        self.peers
            .iter()
            .map(|p| (p.url.clone(), p.dropped.load(Ordering::Relaxed)))
            .collect()
    }
}

/// One peer's thread: batches of what waits, each sent once.
fn send_loop(client: &Client, pending: &Receiver<Arc<Vec<u8>>>) {
    while let Ok(first) = pending.recv() {
        let mut batch = vec![first];
        while batch.len() < GOSSIP_BATCH {
            match pending.try_recv() {
                Ok(raw) => batch.push(raw),
                Err(_) => break,
            }
        }
        let calls: Vec<(&str, Json)> = batch
            .iter()
            .map(|raw| {
                (
                    "th_sendRawTransaction",
                    json!([format!("0x{}", hex::encode(raw.as_slice()))]),
                )
            })
            .collect();
        if let Err(e) = client.call_batch(&calls) {
            tracing::debug!(peer = client.url(), error = %e, "peer did not take gossiped transactions");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;
    use std::time::Instant;

    /// A peer that accepts connections and never answers.
    fn silent_peer() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                held.push(stream);
            }
        });
        url
    }

    /// A peer that answers every batch at once and counts what it got.
    fn honest_peer() -> (
        String,
        Arc<AtomicU64>,
        Arc<std::sync::Mutex<Option<Instant>>>,
    ) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let got = Arc::new(AtomicU64::new(0));
        let first = Arc::new(std::sync::Mutex::new(None));
        let (count, when) = (got.clone(), first.clone());
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                // The whole request: headers, then Content-Length bytes.
                let mut request = Vec::new();
                let mut buf = [0u8; 65_536];
                let body = loop {
                    let n = stream.read(&mut buf).unwrap_or(0);
                    if n == 0 {
                        break String::new();
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).into_owned();
                    if let Some(split) = text.find("\r\n\r\n") {
                        let length: usize = text[..split]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if text.len() >= split + 4 + length {
                            break text[split + 4..].to_string();
                        }
                    }
                };
                let calls = body.matches("th_sendRawTransaction").count() as u64;
                count.fetch_add(calls, Ordering::Relaxed);
                when.lock().unwrap().get_or_insert_with(Instant::now);
                let answer = "[]";
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        (url, got, first)
    }

    /// #50 defect 5: a peer that accepts the connection and never answers
    /// delayed an honest peer's first batch by 121 s, and the queue grew
    /// without bound. Now the honest peer gets its batch at once, and the
    /// stalled peer's queue stays bounded.
    #[test]
    fn defect5_a_stalled_peer_delays_no_other_peer_and_its_queue_is_bounded() {
        let (honest, got, first) = honest_peer();
        let queue = 1_000;
        let gossip = Gossip::start_with(&[silent_peer(), honest], queue, Duration::from_secs(30));
        let started = Instant::now();
        // Traffic as it arrives: 3,000 transactions over ~0.3 s.
        for chunk in 0..30u32 {
            for i in 0..100u32 {
                gossip.forward(&(chunk * 100 + i).to_be_bytes());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        while got.load(Ordering::Relaxed) < 3_000 && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            got.load(Ordering::Relaxed),
            3_000,
            "the honest peer got everything"
        );
        let delay = first.lock().unwrap().expect("a batch arrived") - started;
        assert!(
            delay < Duration::from_secs(2),
            "the honest peer waited {delay:?}"
        );
        let dropped = gossip.dropped();
        // The stalled peer holds one batch in flight and `queue` waiting.
        assert!(
            dropped[0].1 >= 3_000 - queue as u64 - GOSSIP_BATCH as u64,
            "{dropped:?}"
        );
        assert_eq!(dropped[1].1, 0, "{dropped:?}");
    }
}
