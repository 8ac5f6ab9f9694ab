//! Joining a chain from a state snapshot instead of replaying it (#44).
//!
//! [`restore_snapshot`] drives a restore into an empty store from any
//! [`ChunkSource`] (the node's is a set of peers' JSON-RPC endpoints; tests
//! use a store in the same process):
//!
//! 1. every tree chunk, in order, is checked against the state root of the
//!    verified header before it is written
//!    (`timerhost_state::SnapshotRestore`); a chunk that fails blames the
//!    peer that served it, and the restore starts over without it (`jmt`'s
//!    restorer cannot take a chunk back);
//! 2. every derived chunk is checked for its range and kind, then written;
//! 3. the derived state is audited against the restored leaves
//!    (`timerhost_timers::audit`); a finding names a key, the key names its
//!    chunk, the chunk its peer: that chunk is deleted, blamed and taken
//!    again from another peer, until the audit is clean;
//! 4. the genesis block, block `H`'s header, the head and the floor are
//!    written last, so a store without them is an unfinished sync that a
//!    restart wipes and begins again.
//!
//! What the header is checked against (a trusted hash, a commit
//! certificate) is the caller's business: this module trusts the header it
//! is given, and nothing the peers say about the state.

use timerhost_state::{
    ChainStore, KvBackend, SnapshotChunk, SnapshotManifest, SnapshotRestore, StorageError,
};
use timerhost_types::{Block, BlockHeader, Genesis};

use crate::chain::expected_genesis_header;
use crate::error::{ChainError, Result};

/// Where chunks come from: peers, each with an id to blame.
pub trait ChunkSource {
    /// Chunk `index` of the snapshot being restored, and who served it.
    /// Fails when no peer is left to ask.
    fn fetch(&mut self, index: u32) -> Result<(SnapshotChunk, usize)>;

    /// `peer` served a chunk that failed its check: ask it no more.
    fn blame(&mut self, peer: usize, reason: &str);
}

/// What a restore did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestoreReport {
    /// Chunks taken (every chunk once, plus those taken again).
    pub chunks_fetched: u64,
    /// Times the restore started over after a bad tree chunk.
    pub restarts: u32,
    /// Derived chunks the audit sent back.
    pub derived_refetched: u32,
    /// Timer and watch records the audit checked.
    pub records: u64,
    /// Time spent fetching, checking and writing chunks.
    pub chunks_time: std::time::Duration,
    /// Time spent auditing the derived state (and taking chunks again).
    pub audit_time: std::time::Duration,
}

/// A restore gives up after this many bad chunks.
pub const MAX_BAD_CHUNKS: u32 = 64;

/// Restores `manifest` (the state after block `header`, verified by the
/// caller) into the empty `store`, from `source`.
pub fn restore_snapshot<B: KvBackend>(
    store: &ChainStore<B>,
    genesis: &Genesis,
    manifest: &SnapshotManifest,
    header: &BlockHeader,
    tx_count: u32,
    source: &mut dyn ChunkSource,
    mut progress: impl FnMut(u32, u32),
) -> Result<RestoreReport> {
    let genesis_block = Block {
        header: expected_genesis_header(genesis)?,
        txs: Vec::new(),
    };
    let mut report = RestoreReport::default();
    let mut bad = 0u32;
    let mut count_bad = |report: &RestoreReport| -> Result<()> {
        bad += 1;
        if bad > MAX_BAD_CHUNKS {
            return Err(ChainError::StateSync(format!(
                "gave up after {MAX_BAD_CHUNKS} bad chunks ({} restarts)",
                report.restarts
            )));
        }
        Ok(())
    };
    'attempt: loop {
        store.wipe_for_restore()?;
        let mut restore = SnapshotRestore::new(store, manifest.clone(), header)?;
        let mut served_by = vec![usize::MAX; manifest.derived_chunks() as usize];
        let chunks_started = std::time::Instant::now();
        for index in 0..manifest.chunks() {
            loop {
                let (chunk, peer) = source.fetch(index)?;
                report.chunks_fetched += 1;
                let added = match chunk {
                    SnapshotChunk::Tree { entries, proof } => {
                        if index >= manifest.tree_chunks() {
                            Err(bad_kind(manifest, index))
                        } else {
                            restore.add_tree_chunk(index, entries, &proof)
                        }
                    }
                    SnapshotChunk::Derived { entries } => {
                        match index.checked_sub(manifest.tree_chunks()) {
                            Some(derived) => {
                                served_by[derived as usize] = peer;
                                restore.add_derived_chunk(derived, entries)
                            }
                            None => Err(bad_kind(manifest, index)),
                        }
                    }
                };
                match added {
                    Ok(()) => break,
                    Err(e @ StorageError::BadChunk { .. }) => {
                        source.blame(peer, &e.to_string());
                        count_bad(&report)?;
                        if index < manifest.tree_chunks() {
                            report.restarts += 1;
                            continue 'attempt;
                        }
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            progress(index + 1, manifest.chunks());
        }
        report.chunks_time += chunks_started.elapsed();
        // The derived chunks are all in: audit them against the leaves.
        let audit_started = std::time::Instant::now();
        loop {
            match timerhost_timers::audit::audit(&store.state())? {
                Ok(summary) => {
                    report.records = summary.records;
                    break;
                }
                Err(finding) => {
                    let reason = format!(
                        "derived key {} is wrong: {}",
                        hex::encode(&finding.key),
                        finding.reason
                    );
                    let Some(first) = manifest.derived_chunk_of(&finding.key) else {
                        return Err(ChainError::StateSync(format!(
                            "the snapshot's derived state does not agree with its root: {reason}"
                        )));
                    };
                    // A bucket's records fail together: every chunk they
                    // span is taken again, and its peer blamed only when
                    // one chunk holds them all.
                    let last = finding
                        .range_end
                        .as_deref()
                        .and_then(|end| manifest.derived_chunk_of(end))
                        .unwrap_or(first);
                    let mut suspects: Vec<u32> = (first..=last).collect();
                    if let Some(other) = finding
                        .or_else
                        .as_deref()
                        .and_then(|k| manifest.derived_chunk_of(k))
                    {
                        if !suspects.contains(&other) {
                            suspects.push(other);
                        }
                    }
                    count_bad(&report)?;
                    let alone = suspects.len() == 1;
                    for derived in suspects {
                        if alone {
                            source.blame(served_by[derived as usize], &reason);
                        }
                        restore.remove_derived_chunk(derived)?;
                        let index = manifest.tree_chunks() + derived;
                        loop {
                            let (chunk, peer) = source.fetch(index)?;
                            report.chunks_fetched += 1;
                            let added = match chunk {
                                SnapshotChunk::Derived { entries } => {
                                    served_by[derived as usize] = peer;
                                    restore.add_derived_chunk(derived, entries)
                                }
                                SnapshotChunk::Tree { .. } => Err(bad_kind(manifest, index)),
                            };
                            match added {
                                Ok(()) => break,
                                Err(e @ StorageError::BadChunk { .. }) => {
                                    source.blame(peer, &e.to_string());
                                    count_bad(&report)?;
                                }
                                Err(e) => return Err(e.into()),
                            }
                        }
                    }
                    report.derived_refetched += 1;
                }
            }
        }
        report.audit_time = audit_started.elapsed();
        restore.finish(&genesis_block, header, tx_count)?;
        return Ok(report);
    }
}

fn bad_kind(manifest: &SnapshotManifest, index: u32) -> StorageError {
    StorageError::BadChunk {
        height: manifest.height,
        index,
        reason: "a chunk of the wrong kind".into(),
    }
}
