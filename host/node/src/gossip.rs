//! Transaction gossip: every transaction this node's clients send it is
//! forwarded once to each peer's RPC (`[consensus] tx_gossip`), in batches
//! of whatever arrived since the last one: one `th_sendRawTransactions`
//! call per peer per batch, marked relayed (at 1,500 tx/s on four local
//! validators, per-transaction requests were most of the machine's work,
//! #34; a JSON-RPC batch of one call per transaction was still an envelope
//! and an answer object each, #46). A peer that already holds a
//! transaction refuses it by its hash, before decoding it, and forwards
//! what it admits from a peer only if it relays (`[consensus] tx_relay`,
//! off: in a full mesh the others got it from this node too).
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
use timerhost_rpc::{Client, Origin, RpcError};

/// Most transactions forwarded to a peer in one call (at most half the
/// server's bound, `timerhost_rpc::MAX_BATCH_CALLS`).
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
    /// Forward what peers gossiped here too (`[consensus] tx_relay`).
    relay: bool,
}

impl Gossip {
    /// Starts a sending thread per peer URL; `relay`: forward what peers
    /// gossiped here too.
    pub fn start(urls: &[String], relay: bool) -> Gossip {
        let mut gossip = Self::start_with(urls, PEER_QUEUE_TXS, PEER_TIMEOUT);
        gossip.relay = relay;
        gossip
    }

    /// [`Gossip::start`] (not relaying) with a queue bound and a timeout of
    /// its own.
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
        Gossip {
            peers,
            relay: false,
        }
    }

    /// A transaction entered this node's mempool: a client's goes to every
    /// peer; a peer's only when this node relays (in a full mesh its peers
    /// got it from the node its client chose).
    pub fn accepted(&self, raw: &[u8], origin: Origin) {
        if origin == Origin::Client || self.relay {
            self.forward(raw);
        }
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
    // Set once the peer turns out to predate `th_sendRawTransactions`: it
    // then gets a JSON-RPC batch of singular calls, as before #46.
    let mut older_peer = false;
    while let Ok(first) = pending.recv() {
        let mut batch = vec![first];
        while batch.len() < GOSSIP_BATCH {
            match pending.try_recv() {
                Ok(raw) => batch.push(raw),
                Err(_) => break,
            }
        }
        let raws: Vec<Json> = batch
            .iter()
            .map(|raw| json!(format!("0x{}", hex::encode(raw.as_slice()))))
            .collect();
        if !older_peer {
            // Relayed: the peer forwards them no further unless it relays.
            match client.call("th_sendRawTransactions", json!([raws, true])) {
                // A peer whose binary predates `th_sendRawTransactions` (a
                // network upgrading one validator at a time).
                Err(RpcError::Remote { code, .. })
                    if code == i64::from(timerhost_rpc::error::codes::METHOD_NOT_FOUND) =>
                {
                    tracing::info!(peer = client.url(), "the peer predates th_sendRawTransactions: gossiping to it in JSON-RPC batches");
                    older_peer = true;
                }
                Err(e) => {
                    tracing::debug!(peer = client.url(), error = %e, "peer did not take gossiped transactions");
                    continue;
                }
                Ok(_) => continue,
            }
        }
        let calls: Vec<(&str, Json)> = raws
            .into_iter()
            .map(|raw| ("th_sendRawTransaction", json!([raw])))
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

    /// When a fake peer got its first transactions.
    type FirstArrival = Arc<std::sync::Mutex<Option<Instant>>>;

    /// A peer that answers every batch at once and counts what it got.
    fn honest_peer() -> (String, Arc<AtomicU64>, FirstArrival) {
        let (url, got, first, _) = peer_of(true);
        (url, got, first)
    }

    /// A peer that counts the transactions it got and when the first came;
    /// `knows_plural = false`: one from before `th_sendRawTransactions`,
    /// which answers it "method not found" and takes JSON-RPC batches of
    /// `th_sendRawTransaction`. The last counter: plural calls it got.
    fn peer_of(knows_plural: bool) -> (String, Arc<AtomicU64>, FirstArrival, Arc<AtomicU64>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let got = Arc::new(AtomicU64::new(0));
        let first = Arc::new(std::sync::Mutex::new(None));
        let plural = Arc::new(AtomicU64::new(0));
        let (count, when, plurals) = (got.clone(), first.clone(), plural.clone());
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
                let calls: Json = serde_json::from_str(&body).unwrap_or(Json::Null);
                let answer = if let Some(batch) = calls.as_array() {
                    // A JSON-RPC batch: what an older peer is sent.
                    assert!(!knows_plural, "a peer that knows the plural got a batch");
                    let singular = batch
                        .iter()
                        .filter(|c| c["method"] == "th_sendRawTransaction")
                        .count();
                    count.fetch_add(singular as u64, Ordering::Relaxed);
                    when.lock().unwrap().get_or_insert_with(Instant::now);
                    "[]".to_string()
                } else {
                    assert_eq!(calls["method"], "th_sendRawTransactions", "{body}");
                    assert_eq!(calls["params"][1], true, "marked relayed: {body}");
                    plurals.fetch_add(1, Ordering::Relaxed);
                    if knows_plural {
                        let txs = calls["params"][0].as_array().map_or(0, Vec::len) as u64;
                        count.fetch_add(txs, Ordering::Relaxed);
                        when.lock().unwrap().get_or_insert_with(Instant::now);
                        r#"{"jsonrpc":"2.0","id":1,"result":[]}"#.to_string()
                    } else {
                        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#.to_string()
                    }
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
            }
        });
        (url, got, first, plural)
    }

    /// #46: a peer from before `th_sendRawTransactions` (a network
    /// upgrading one validator at a time) still gets every transaction: the
    /// first batch falls back to a JSON-RPC batch, and the rest go that way
    /// without asking again.
    #[test]
    fn a_peer_that_predates_the_plural_call_gets_json_rpc_batches() {
        let (peer, got, _, plural) = peer_of(false);
        let gossip = Gossip::start(&[peer], false);
        let started = Instant::now();
        for round in 0..3u32 {
            for i in 0..100u32 {
                gossip.accepted(&(round * 100 + i).to_be_bytes(), Origin::Client);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        while got.load(Ordering::Relaxed) < 300 && started.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(got.load(Ordering::Relaxed), 300);
        assert_eq!(plural.load(Ordering::Relaxed), 1, "asked once");
    }

    /// #46: a transaction a peer gossiped here goes no further unless the
    /// node relays; a client's goes to every peer, in one call per batch
    /// marked relayed (`honest_peer` checks the call).
    #[test]
    fn a_peers_transaction_is_forwarded_only_by_a_relaying_node() {
        for relay in [false, true] {
            let (peer, got, _) = honest_peer();
            let gossip = Gossip::start(&[peer], relay);
            // The peer's first: on one queue, it would arrive before the client's.
            gossip.accepted(b"from a peer", Origin::Peer);
            gossip.accepted(b"from a client", Origin::Client);
            let started = Instant::now();
            let expected = if relay { 2 } else { 1 };
            while got.load(Ordering::Relaxed) < expected
                && started.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            // Anything queued after the client's would have come with or
            // after it: a moment more shows nothing else follows.
            std::thread::sleep(Duration::from_millis(200));
            assert_eq!(got.load(Ordering::Relaxed), expected, "relay = {relay}");
        }
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
