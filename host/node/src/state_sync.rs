//! Joining by state sync (`[sync] enable`, `timerhost node --state-sync`,
//! #44): before the chain is opened, a home with no blocks restores the
//! newest snapshot at or below the trusted height from its peers' JSON-RPC
//! endpoints, then the node starts as usual and follows the chain from the
//! snapshot's height.
//!
//! What is trusted, and why (docs/ARCHITECTURE.md, "State sync"): the
//! operator gives one block it trusts, `trust_height` and `trust_hash`
//! (CometBFT's light-client model: a recent hash from another operator or
//! a block explorer). The snapshot's block `H ≤ trust_height` is tied to it
//! by the chain of parent hashes from the trusted block down to `H`, which
//! nobody can forge; the state root of `H` then checks every tree chunk,
//! and the restored leaves check the derived state. Peers are trusted for
//! nothing: a peer serving a bad chunk is blamed and asked no more, and
//! its chunks are taken from another.
//!
//! Chunks are fetched `fetchers` at a time, spread over the peers that
//! offer the chosen snapshot, a bounded window ahead of the one being
//! restored (at most `2 × fetchers` chunks of about 1 MiB held).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use serde_json::{json, Value as Json};
use timerhost_chain::state_sync::{restore_snapshot, ChunkSource};
use timerhost_chain::ChainError;
use timerhost_rpc::Client;
use timerhost_state::{ChainStore, SledBackend, SnapshotChunk, SnapshotManifest};
use timerhost_types::{encoding, BlockHeader, Hash};

use crate::config::SyncSection;
use crate::error::{NodeError, Result};
use crate::home::Home;

/// How long one request to a peer may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

fn sync_error(reason: impl Into<String>) -> NodeError {
    NodeError::Chain(ChainError::StateSync(reason.into()))
}

/// Restores a snapshot into `home` if it has no blocks past genesis yet
/// (`timerhost init` writes block 0); a home with blocks is left alone (a
/// restarted synced node just goes on).
pub fn sync_if_empty(home: &Home, cfg: &SyncSection) -> Result<()> {
    let mut store = ChainStore::new(SledBackend::open(&home.data_path())?);
    match store.head_height()? {
        None => {}
        Some(0) => {
            // Only the genesis block `init` wrote: the restore writes its
            // own (checked against the same genesis file) into a fresh
            // database.
            drop(store);
            std::fs::remove_dir_all(home.data_path()).map_err(|source| NodeError::Io {
                action: "clearing the genesis-only database of",
                path: home.data_path(),
                source,
            })?;
            store = ChainStore::new(SledBackend::open(&home.data_path())?);
        }
        Some(_) => {
            tracing::info!("the home has blocks: no state sync needed");
            return Ok(());
        }
    }
    cfg.check().map_err(NodeError::Usage)?;
    let trust_hash = cfg.trusted_hash().map_err(NodeError::Usage)?;
    let genesis = home.genesis()?;
    let started = Instant::now();
    let clients: Vec<Client> = cfg
        .rpc_servers
        .iter()
        .map(|url| Client::with_timeout(url, REQUEST_TIMEOUT))
        .collect();
    let (manifest, offering) = choose_snapshot(&clients, cfg.trust_height)?;
    tracing::info!(
        height = manifest.height,
        chunks = manifest.chunks(),
        bytes = manifest.bytes,
        peers = offering.len(),
        "state sync: restoring the snapshot of height {}",
        manifest.height
    );
    let (header, tx_count) = verified_header(
        &offering.iter().map(|&i| &clients[i]).collect::<Vec<_>>(),
        manifest.height,
        cfg.trust_height,
        &trust_hash,
    )?;
    let peers: Vec<Client> = offering.iter().map(|&i| clients[i].clone()).collect();
    let mut source = RpcPeers::start(peers, &manifest, cfg.fetchers as usize);
    let mut shown = 0u32;
    let report = restore_snapshot(
        &store,
        &genesis,
        &manifest,
        &header,
        tx_count,
        &mut source,
        |done, total| {
            let percent = done * 100 / total.max(1);
            if percent >= shown + 10 || done == total {
                shown = percent;
                tracing::info!("state sync: {done}/{total} chunks ({percent}%)");
            }
        },
    );
    source.stop();
    let report = report?;
    for (peer, reason) in source.blamed_reasons() {
        tracing::warn!(peer, %reason, "state sync: a peer served a bad chunk and was avoided");
    }
    tracing::info!(
        height = manifest.height,
        chunks_fetched = report.chunks_fetched,
        restarts = report.restarts,
        records = report.records,
        chunks_seconds = report.chunks_time.as_secs_f64(),
        audit_seconds = report.audit_time.as_secs_f64(),
        seconds = started.elapsed().as_secs_f64(),
        "state sync: restored height {} in {:.1} s; following the chain from there",
        manifest.height,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The newest snapshot at or below `trust_height` the most peers offer,
/// and which peers (indexes into `clients`) offer it.
fn choose_snapshot(
    clients: &[Client],
    trust_height: u64,
) -> Result<(SnapshotManifest, Vec<usize>)> {
    let mut offers: BTreeMap<(u64, Hash), (SnapshotManifest, Vec<usize>)> = BTreeMap::new();
    let mut heard = Vec::new();
    for (i, client) in clients.iter().enumerate() {
        let list = match client.call("th_getSnapshots", json!([])) {
            Ok(Json::Array(list)) => list,
            Ok(other) => {
                tracing::warn!(
                    peer = client.url(),
                    "state sync: th_getSnapshots answered {other}"
                );
                continue;
            }
            Err(error) => {
                tracing::warn!(peer = client.url(), %error, "state sync: peer unreachable");
                continue;
            }
        };
        for offer in list {
            let Some(manifest) = offer["manifest"]
                .as_str()
                .and_then(|h| hex::decode(h.trim_start_matches("0x")).ok())
                .and_then(|b| borsh::from_slice::<SnapshotManifest>(&b).ok())
            else {
                continue;
            };
            heard.push(manifest.height);
            if manifest.height > trust_height || manifest.chunks() == 0 {
                continue;
            }
            let entry = offers
                .entry((manifest.height, manifest.id()))
                .or_insert_with(|| (manifest, Vec::new()));
            if !entry.1.contains(&i) {
                entry.1.push(i);
            }
        }
    }
    // Highest height first; at one height, the manifest most peers offer.
    let best = offers
        .into_values()
        .max_by_key(|(m, peers)| (m.height, peers.len()));
    best.ok_or_else(|| {
        sync_error(format!(
            "none of the {} rpc_servers offers a snapshot at or below the trusted height {trust_height} (heights offered: {heard:?}); trust a later block or wait for the next snapshot",
            clients.len()
        ))
    })
}

/// Block `height`'s header, tied to the trusted block by parent hashes,
/// and its transaction count; from the first peer whose headers check out.
fn verified_header(
    peers: &[&Client],
    height: u64,
    trust_height: u64,
    trust_hash: &Hash,
) -> Result<(BlockHeader, u32)> {
    let mut why = Vec::new();
    for peer in peers {
        match header_chain(peer, height, trust_height, trust_hash) {
            Ok(found) => return Ok(found),
            Err(reason) => {
                tracing::warn!(peer = peer.url(), %reason, "state sync: headers refused");
                why.push(format!("{}: {reason}", peer.url()));
            }
        }
    }
    Err(sync_error(format!(
        "no peer gave headers from {height} to the trusted block {trust_height} that hash to {trust_hash}: {}",
        why.join("; ")
    )))
}

fn header_chain(
    peer: &Client,
    height: u64,
    trust_height: u64,
    trust_hash: &Hash,
) -> std::result::Result<(BlockHeader, u32), String> {
    let mut headers: Vec<(BlockHeader, u32)> = Vec::new();
    let mut from = height;
    while from <= trust_height {
        let count = (trust_height - from + 1).min(timerhost_rpc::MAX_RAW_HEADERS);
        let reply = peer
            .call("th_getRawHeaders", json!([from, count]))
            .map_err(|e| e.to_string())?;
        let list = reply["headers"].as_array().cloned().unwrap_or_default();
        if list.is_empty() {
            return Err(format!("no header from height {from}"));
        }
        for item in list {
            let bytes = item["header"]
                .as_str()
                .and_then(|h| hex::decode(h.trim_start_matches("0x")).ok())
                .ok_or_else(|| format!("header {from} is missing or not hex"))?;
            let header: BlockHeader =
                encoding::decode(&bytes).map_err(|e| format!("header {from}: {e}"))?;
            if header.height != from {
                return Err(format!("asked for header {from}, got {}", header.height));
            }
            let tx_count = item["tx_count"].as_u64().unwrap_or(0) as u32;
            headers.push((header, tx_count));
            from += 1;
        }
    }
    let (last, _) = headers.last().ok_or("no headers")?;
    if last.hash() != *trust_hash {
        return Err(format!(
            "block {trust_height} hashes to {}, not the trusted {trust_hash}",
            last.hash()
        ));
    }
    for pair in headers.windows(2) {
        if pair[1].0.parent_hash != pair[0].0.hash() {
            return Err(format!(
                "block {} does not name block {} as its parent",
                pair[1].0.height, pair[0].0.height
            ));
        }
    }
    Ok(headers.swap_remove(0))
}

/// What the fetchers share.
#[derive(Default)]
struct Shared {
    /// The next index a fetcher takes.
    next: u32,
    /// The index the restore waits for (fetchers stay within a window of it).
    wanted: u32,
    /// Fetched chunks not yet taken, with the peer that served each.
    ready: BTreeMap<u32, std::result::Result<(SnapshotChunk, usize), String>>,
    /// Indexes a fetcher is working on.
    in_flight: HashSet<u32>,
    /// Peers blamed for a bad chunk, with why.
    blamed: Vec<(usize, String)>,
    stop: bool,
}

/// The peers offering the chosen snapshot, as a [`ChunkSource`].
struct RpcPeers {
    peers: Arc<Vec<Client>>,
    height: u64,
    shared: Arc<(Mutex<Shared>, Condvar)>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl RpcPeers {
    fn start(peers: Vec<Client>, manifest: &SnapshotManifest, fetchers: usize) -> RpcPeers {
        let peers = Arc::new(peers);
        let shared = Arc::new((Mutex::new(Shared::default()), Condvar::new()));
        let total = manifest.chunks();
        let window = 2 * fetchers as u32;
        let height = manifest.height;
        let threads = (0..fetchers)
            .map(|_| {
                let peers = peers.clone();
                let shared = shared.clone();
                std::thread::spawn(move || loop {
                    let index = {
                        let (lock, cv) = &*shared;
                        let mut s = lock.lock();
                        while !s.stop && (s.next >= total || s.next >= s.wanted + window) {
                            cv.wait(&mut s);
                        }
                        if s.stop {
                            return;
                        }
                        let index = s.next;
                        s.next += 1;
                        s.in_flight.insert(index);
                        index
                    };
                    let result = fetch_from_any(&peers, &shared, height, index);
                    let (lock, cv) = &*shared;
                    let mut s = lock.lock();
                    s.in_flight.remove(&index);
                    s.ready.insert(index, result);
                    cv.notify_all();
                })
            })
            .collect();
        RpcPeers {
            peers,
            height,
            shared,
            threads,
        }
    }

    fn stop(&mut self) {
        {
            let (lock, cv) = &*self.shared;
            lock.lock().stop = true;
            cv.notify_all();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    fn blamed_reasons(&self) -> Vec<(String, String)> {
        let s = self.shared.0.lock();
        s.blamed
            .iter()
            .map(|(p, why)| (self.peers[*p].url().to_string(), why.clone()))
            .collect()
    }
}

impl Drop for RpcPeers {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Chunk `index` from the first peer not blamed that serves it, starting
/// from a peer chosen by the index (so fetchers spread over the peers).
fn fetch_from_any(
    peers: &[Client],
    shared: &(Mutex<Shared>, Condvar),
    height: u64,
    index: u32,
) -> std::result::Result<(SnapshotChunk, usize), String> {
    let mut errors = Vec::new();
    for attempt in 0..peers.len() {
        let peer = (index as usize + attempt) % peers.len();
        if shared.0.lock().blamed.iter().any(|(p, _)| *p == peer) {
            continue;
        }
        let reply = match peers[peer].call("th_getSnapshotChunk", json!([height, index])) {
            Ok(reply) => reply,
            Err(e) => {
                // Unreachable or refusing: try another, without blame.
                errors.push(format!("{}: {e}", peers[peer].url()));
                continue;
            }
        };
        let decoded = reply["chunk"]
            .as_str()
            .and_then(|h| hex::decode(h.trim_start_matches("0x")).ok())
            .ok_or_else(|| "no chunk in its answer".to_string())
            .and_then(|b| {
                borsh::from_slice::<SnapshotChunk>(&b)
                    .map_err(|e| format!("its chunk {index} does not decode: {e}"))
            });
        match decoded {
            Ok(chunk) => return Ok((chunk, peer)),
            Err(reason) => {
                // An answer that is not a chunk is a lie like a bad one.
                shared.0.lock().blamed.push((peer, reason.clone()));
                errors.push(format!("{}: {reason}", peers[peer].url()));
            }
        }
    }
    Err(format!(
        "no peer served chunk {index} of the snapshot of height {height}: {}",
        errors.join("; ")
    ))
}

impl ChunkSource for RpcPeers {
    fn fetch(&mut self, index: u32) -> timerhost_chain::Result<(SnapshotChunk, usize)> {
        let (lock, cv) = &*self.shared;
        let mut s = lock.lock();
        s.wanted = s.wanted.max(index);
        cv.notify_all();
        loop {
            if let Some(result) = s.ready.remove(&index) {
                return result.map_err(ChainError::StateSync);
            }
            if !s.in_flight.contains(&index) && index < s.next {
                // Taken before (a restart, or a chunk sent back): fetch
                // it again here, from a peer not blamed.
                drop(s);
                return fetch_from_any(&self.peers, &self.shared, self.height, index)
                    .map_err(ChainError::StateSync);
            }
            cv.wait(&mut s);
        }
    }

    fn blame(&mut self, peer: usize, reason: &str) {
        let (lock, _) = &*self.shared;
        let mut s = lock.lock();
        s.blamed.push((peer, reason.to_string()));
        // Chunks it served that wait unread are dropped, to be fetched again.
        s.ready
            .retain(|_, r| !matches!(r, Ok((_, p)) if *p == peer));
    }
}
