//! State snapshots that syncing nodes fetch in verified chunks (#44).
//!
//! A snapshot is the whole consensus state at one height `H` — every key
//! of the `S` namespace, tree leaves and derived keys alike — cut into
//! chunks a joining node can check one by one:
//!
//! - **Tree chunks** hold consecutive leaves of the state tree in key-hash
//!   order (raw key and value; the receiver hashes both) with the range
//!   proof of the last one: the receiver feeds them to `jmt`'s
//!   `JellyfishMerkleRestore`, which checks every chunk against the state
//!   root of block `H` before writing anything ([`crate::restore`]).
//! - **Derived chunks** hold the keys the tree does not (the timer records
//!   and their indexes, committed through the due-bucket digests,
//!   `timerhost_types::keys::is_committed`), in key order. They are checked
//!   against the restored leaves once all have arrived (the timers crate's
//!   audit), since a record is committed by a leaf of another chunk.
//!
//! Chunking is a function of the content alone, so every honest node's
//! snapshot of height `H` has the same chunks and a receiver can take each
//! from whichever peer answers.
//!
//! ## Taking one while blocks commit
//!
//! The node keeps only the latest tree and the latest values, and sled has
//! no read snapshots. A snapshot therefore *captures* height `H`: from its
//! start — in the commit of `H` itself when `H` is a multiple of the
//! node's interval ([`ChainStore::set_snapshot_interval`], so every node
//! snapshots the same heights), or at the head for
//! [`ChainStore::take_snapshot`], in both cases under the lock every commit
//! holds — until it is done, each commit
//! first remembers the value at `H` of every key it is about to change
//! ([`Capture`]), and keeps the tree nodes it makes stale (listed under
//! `n`) instead of deleting them. The copy of `S` is taken while blocks go
//! on; the remembered values then overwrite whatever the copy read after
//! `H`, which makes the copy exactly the state at `H`; the range proofs are
//! made from the tree of version `H`, still whole; and the deferred stale
//! nodes are deleted at the end. A commit pays one read per written key
//! while a snapshot is being taken, nothing otherwise.
//!
//! A crash mid-snapshot leaves an unfinished snapshot (no manifest) and
//! deferred stale nodes; [`ChainStore::discard_unfinished_snapshots`]
//! removes both.
//!
//! ## Layout (`Z ‖ height BE ‖ part ‖ …`)
//!
//! | part | key | value |
//! |---|---|---|
//! | `L` | key hash | `key len u32 BE ‖ key ‖ value`: a tree leaf |
//! | `D` | key | value: a derived key |
//! | `P` | chunk BE u32 | [`TreeChunkEnd`]: the chunk's last key hash and range proof |
//! | `M` | — | [`SnapshotManifest`], written last: the snapshot is complete |

use borsh::{BorshDeserialize, BorshSerialize};
use jmt::KeyHash;
use sha2::Sha256;
use timerhost_types::keys::is_committed;
use timerhost_types::Hash;

use crate::backend::{KvBackend, WriteBatch};
use crate::capture::Capture;
use crate::commitment::StateCommitment;
use crate::error::{corrupt, Result, StorageError};
use crate::namespaces::{ns_key, DEFERRED_STALE, SNAPSHOTS, STATE, TREE_NODES};
use crate::store::ChainStore;

/// A chunk holds at most this many entries…
pub const CHUNK_ENTRIES: usize = 4_096;
/// …and stops growing once it holds this many bytes of keys and values.
pub const CHUNK_BYTES: usize = 1 << 20;
/// Entries read or written per backend call while a snapshot is copied.
const PAGE: usize = 4_096;

const LEAF: u8 = b'L';
const DERIVED: u8 = b'D';
const TREE_END: u8 = b'P';
const MANIFEST: u8 = b'M';

/// What a snapshot holds, and how to check it.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct SnapshotManifest {
    /// The height whose state it is.
    pub height: u64,
    /// That block's hash.
    pub block_hash: Hash,
    /// That block's state root: what every tree chunk is checked against.
    pub state_root: Hash,
    /// The key hash of each tree chunk's last leaf: where each chunk
    /// must end (chunks are numbered from 0).
    pub tree_chunk_ends: Vec<[u8; 32]>,
    /// The first key of each derived chunk (numbered after the tree
    /// chunks): a derived chunk holds the keys from its start to the next.
    pub derived_chunk_starts: Vec<Vec<u8>>,
    /// Tree leaves.
    pub leaves: u64,
    /// Derived keys.
    pub derived_entries: u64,
    /// Bytes of keys and values.
    pub bytes: u64,
}

impl SnapshotManifest {
    /// Tree chunks.
    pub fn tree_chunks(&self) -> u32 {
        self.tree_chunk_ends.len() as u32
    }

    /// Derived chunks.
    pub fn derived_chunks(&self) -> u32 {
        self.derived_chunk_starts.len() as u32
    }

    /// Every chunk.
    pub fn chunks(&self) -> u32 {
        self.tree_chunks() + self.derived_chunks()
    }

    /// blake3 of the manifest: peers offering the same snapshot offer the
    /// same id, and chunks are only taken from peers offering it.
    pub fn id(&self) -> Hash {
        Hash(*blake3::hash(&borsh::to_vec(self).expect("writing to a Vec cannot fail")).as_bytes())
    }

    /// The derived chunk `key` belongs to (an index among the derived
    /// chunks), if any.
    pub fn derived_chunk_of(&self, key: &[u8]) -> Option<u32> {
        let after = self
            .derived_chunk_starts
            .partition_point(|start| start.as_slice() <= key);
        after.checked_sub(1).map(|i| i as u32)
    }
}

/// One chunk, as served.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum SnapshotChunk {
    /// Consecutive tree leaves in key-hash order, and the borsh-encoded
    /// `jmt` range proof of the last.
    Tree {
        /// `(key, value)`, in key-hash order.
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        /// `borsh(SparseMerkleRangeProof<Sha256>)`.
        proof: Vec<u8>,
    },
    /// Derived keys in key order.
    Derived {
        /// `(key, value)`, in key order.
        entries: Vec<(Vec<u8>, Vec<u8>)>,
    },
}

/// Where a tree chunk ends.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
struct TreeChunkEnd {
    last: [u8; 32],
    proof: Vec<u8>,
}

fn prefix(height: u64, part: u8) -> Vec<u8> {
    let mut k = Vec::with_capacity(10 + 32);
    k.push(SNAPSHOTS);
    k.extend_from_slice(&height.to_be_bytes());
    k.push(part);
    k
}

fn part_key(height: u64, part: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = prefix(height, part);
    k.extend_from_slice(rest);
    k
}

fn part_end(height: u64, part: u8) -> Vec<u8> {
    prefix(height, part + 1)
}

fn chunk_key(height: u64, part: u8, index: u32) -> Vec<u8> {
    part_key(height, part, &index.to_be_bytes())
}

/// The key hash of a state key, as the tree hashes it.
pub fn key_hash(key: &[u8]) -> KeyHash {
    KeyHash::with::<Sha256>(key)
}

fn encode_leaf(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + key.len() + value.len());
    v.extend_from_slice(&(key.len() as u32).to_be_bytes());
    v.extend_from_slice(key);
    v.extend_from_slice(value);
    v
}

fn decode_leaf(k: &[u8], v: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let len = v
        .get(..4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
        .filter(|len| 4 + len <= v.len())
        .ok_or_else(|| corrupt("snapshot leaf", k, "shorter than its key length"))?;
    Ok((v[4..4 + len].to_vec(), v[4 + len..].to_vec()))
}

/// Stages `key` = `value` (`None`: absent) into the snapshot of `height`.
fn stage_entry(batch: &mut WriteBatch, height: u64, key: &[u8], value: Option<&[u8]>) {
    let (k, v) = if is_committed(key) {
        (
            part_key(height, LEAF, &key_hash(key).0),
            value.map(|v| encode_leaf(key, v)),
        )
    } else {
        (part_key(height, DERIVED, key), value.map(<[u8]>::to_vec))
    };
    match v {
        Some(v) => batch.put(k, v),
        None => batch.delete(k),
    }
}

/// Deletes every key in `[start, end)`, a page per batch.
fn delete_range(backend: &dyn KvBackend, start: &[u8], end: &[u8]) -> Result<u64> {
    let mut deleted = 0;
    loop {
        let keys = backend.scan_keys(start, Some(end), PAGE)?;
        if keys.is_empty() {
            return Ok(deleted);
        }
        deleted += keys.len() as u64;
        let mut batch = WriteBatch::new();
        for k in keys {
            batch.delete(k);
        }
        backend.write(batch)?;
    }
}

fn after(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(0);
    k
}

impl<B: KvBackend> ChainStore<B> {
    /// Takes a snapshot of the state at the current head while blocks go on
    /// committing, keeps the newest `keep` snapshots and deletes the rest.
    /// Fails if one is already being taken.
    pub fn take_snapshot(&self, keep: usize) -> Result<SnapshotManifest> {
        {
            let mut capture = self.capture.lock();
            if capture.is_some() {
                return Err(StorageError::Snapshot(
                    "a snapshot is already being taken".into(),
                ));
            }
            let head = self
                .head_height()?
                .ok_or_else(|| StorageError::Snapshot("the store has no block yet".into()))?;
            *capture = Some(Capture::new(head));
        }
        self.build_captured_snapshot(keep)?
            .ok_or_else(|| StorageError::Snapshot("another builder took the snapshot".into()))
    }

    /// Builds the snapshot whose height a commit started capturing
    /// ([`ChainStore::set_snapshot_interval`]), if there is one no other
    /// builder has taken; keeps the newest `keep`.
    pub fn build_captured_snapshot(&self, keep: usize) -> Result<Option<SnapshotManifest>> {
        let height = {
            let mut capture = self.capture.lock();
            match capture.as_mut() {
                Some(c) if !c.building => {
                    c.building = true;
                    c.height
                }
                _ => return Ok(None),
            }
        };
        let built = match self.header(height) {
            Ok(Some(stored)) => self.build_snapshot(&stored.header),
            Ok(None) => Err(StorageError::Snapshot(format!(
                "no header of height {height}"
            ))),
            Err(e) => Err(e),
        };
        let ended = self.end_capture();
        if built.is_err() {
            // Whatever was written of it is useless.
            let (start, end) = height_range(height);
            delete_range(&self.backend, &start, &end)?;
        }
        let manifest = built?;
        ended?;
        self.keep_snapshots(keep)?;
        Ok(Some(manifest))
    }

    fn build_snapshot(&self, header: &timerhost_types::BlockHeader) -> Result<SnapshotManifest> {
        let height = header.height;
        // 1. Copy `S` as it is while blocks commit.
        let end = vec![STATE + 1];
        let mut start = vec![STATE];
        loop {
            let page = self.backend.scan(&start, Some(&end), PAGE)?;
            let Some((last, _)) = page.last() else { break };
            start = after(last);
            let mut batch = WriteBatch::new();
            for (k, v) in &page {
                stage_entry(&mut batch, height, &k[1..], Some(v));
            }
            self.backend.write(batch)?;
            if page.len() < PAGE {
                break;
            }
        }
        // 2. Put back what the blocks after `height` changed. The capture
        // is still on, so the tree of `height` stays whole for step 3.
        let undo: Vec<(Vec<u8>, Option<Vec<u8>>)> = {
            let capture = self.capture.lock();
            let capture = capture
                .as_ref()
                .expect("the capture lasts until end_capture");
            debug_assert_eq!(capture.height, height);
            capture
                .undo
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        for page in undo.chunks(PAGE) {
            let mut batch = WriteBatch::new();
            for (k, v) in page {
                stage_entry(&mut batch, height, k, v.as_deref());
            }
            self.backend.write(batch)?;
        }
        // 3. Cut the leaves into chunks and prove each one's end.
        let value_of = |kh: KeyHash| -> Result<Option<Vec<u8>>> {
            let k = part_key(height, LEAF, &kh.0);
            self.backend
                .get(&k)?
                .map(|v| decode_leaf(&k, &v).map(|(_, value)| value))
                .transpose()
        };
        let mut manifest = SnapshotManifest {
            height,
            block_hash: header.hash(),
            state_root: header.state_root,
            tree_chunk_ends: Vec::new(),
            derived_chunk_starts: Vec::new(),
            leaves: 0,
            derived_entries: 0,
            bytes: 0,
        };
        let mut chunk = ChunkCut::default();
        let end = part_end(height, LEAF);
        let mut start = prefix(height, LEAF);
        let mut last_hash: Option<[u8; 32]> = None;
        loop {
            let page = self.backend.scan(&start, Some(&end), PAGE)?;
            let Some((last, _)) = page.last() else { break };
            start = after(last);
            for (k, v) in &page {
                let kh: [u8; 32] = k[k.len() - 32..].try_into().expect("32 bytes");
                manifest.leaves += 1;
                manifest.bytes += v.len() as u64;
                last_hash = Some(kh);
                if chunk.add(v.len()) {
                    self.end_tree_chunk(height, &mut manifest, kh, &value_of)?;
                    last_hash = None;
                }
            }
            if page.len() < PAGE {
                break;
            }
        }
        if let Some(kh) = last_hash {
            self.end_tree_chunk(height, &mut manifest, kh, &value_of)?;
        }
        // 4. Cut the derived keys into chunks.
        let mut chunk = ChunkCut::default();
        let end = part_end(height, DERIVED);
        let mut start = prefix(height, DERIVED);
        let body = start.len();
        loop {
            let page = self.backend.scan(&start, Some(&end), PAGE)?;
            let Some((last, _)) = page.last() else { break };
            start = after(last);
            for (k, v) in &page {
                if chunk.count == 0 {
                    manifest.derived_chunk_starts.push(k[body..].to_vec());
                }
                manifest.derived_entries += 1;
                manifest.bytes += (k.len() - body + v.len()) as u64;
                chunk.add(k.len() - body + v.len());
            }
            if page.len() < PAGE {
                break;
            }
        }
        let mut batch = WriteBatch::new();
        batch.put(
            part_key(height, MANIFEST, &[]),
            borsh::to_vec(&manifest).expect("writing to a Vec cannot fail"),
        );
        self.backend.write(batch)?;
        Ok(manifest)
    }

    fn end_tree_chunk(
        &self,
        height: u64,
        manifest: &mut SnapshotManifest,
        last: [u8; 32],
        value_of: &dyn Fn(KeyHash) -> Result<Option<Vec<u8>>>,
    ) -> Result<()> {
        let proof = StateCommitment::range_proof(&self.backend, height, KeyHash(last), value_of)?;
        let end = TreeChunkEnd {
            last,
            proof: borsh::to_vec(&proof).expect("writing to a Vec cannot fail"),
        };
        let mut batch = WriteBatch::new();
        batch.put(
            chunk_key(height, TREE_END, manifest.tree_chunks()),
            borsh::to_vec(&end).expect("writing to a Vec cannot fail"),
        );
        self.backend.write(batch)?;
        manifest.tree_chunk_ends.push(last);
        Ok(())
    }

    /// Stops capturing and deletes the tree nodes kept for the snapshot.
    fn end_capture(&self) -> Result<()> {
        let mut capture = self.capture.lock();
        *capture = None;
        self.delete_deferred_stale()
    }

    fn delete_deferred_stale(&self) -> Result<()> {
        let start = vec![DEFERRED_STALE];
        let end = vec![DEFERRED_STALE + 1];
        loop {
            let keys = self.backend.scan_keys(&start, Some(&end), PAGE)?;
            if keys.is_empty() {
                return Ok(());
            }
            let mut batch = WriteBatch::new();
            for k in keys {
                batch.delete(ns_key(TREE_NODES, &k[1..]));
                batch.delete(k);
            }
            self.backend.write(batch)?;
        }
    }

    /// Removes what a crash left of a snapshot being taken: snapshots with
    /// no manifest, and the stale tree nodes kept for one.
    pub fn discard_unfinished_snapshots(&self) -> Result<()> {
        let capture = self.capture.lock();
        if capture.is_some() {
            return Ok(());
        }
        self.delete_deferred_stale()?;
        drop(capture);
        for height in self.snapshot_heights()? {
            if self.snapshot_manifest(height)?.is_none() {
                let (start, end) = height_range(height);
                delete_range(&self.backend, &start, &end)?;
            }
        }
        Ok(())
    }

    fn keep_snapshots(&self, keep: usize) -> Result<()> {
        let heights = self.snapshot_heights()?;
        let drop = heights.len().saturating_sub(keep);
        for height in &heights[..drop] {
            let (start, end) = height_range(*height);
            delete_range(&self.backend, &start, &end)?;
        }
        Ok(())
    }

    /// Heights with a snapshot (finished or not), ascending.
    fn snapshot_heights(&self) -> Result<Vec<u64>> {
        let mut heights = Vec::new();
        let mut start = vec![SNAPSHOTS];
        let end = vec![SNAPSHOTS + 1];
        while let Some(k) = self
            .backend
            .scan_keys(&start, Some(&end), 1)?
            .into_iter()
            .next()
        {
            let height = k
                .get(1..9)
                .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
                .ok_or_else(|| corrupt("snapshot", &k, "key shorter than a height"))?;
            heights.push(height);
            match height.checked_add(1) {
                Some(next) => start = height_range(next).0,
                None => break,
            }
        }
        Ok(heights)
    }

    /// The manifest of the finished snapshot of `height`, if there is one.
    pub fn snapshot_manifest(&self, height: u64) -> Result<Option<SnapshotManifest>> {
        let k = part_key(height, MANIFEST, &[]);
        self.backend
            .get(&k)?
            .map(|v| {
                SnapshotManifest::try_from_slice(&v)
                    .map_err(|e| corrupt("snapshot manifest", &k, e))
            })
            .transpose()
    }

    /// The finished snapshots this node serves, oldest first.
    pub fn snapshots(&self) -> Result<Vec<SnapshotManifest>> {
        let mut out = Vec::new();
        for height in self.snapshot_heights()? {
            if let Some(m) = self.snapshot_manifest(height)? {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// Chunk `index` of the snapshot of `height` (`None`: no such snapshot
    /// or chunk).
    pub fn snapshot_chunk(&self, height: u64, index: u32) -> Result<Option<SnapshotChunk>> {
        let Some(manifest) = self.snapshot_manifest(height)? else {
            return Ok(None);
        };
        if index < manifest.tree_chunks() {
            let read_end = |i: u32| -> Result<TreeChunkEnd> {
                let k = chunk_key(height, TREE_END, i);
                let v = self
                    .backend
                    .get(&k)?
                    .ok_or_else(|| corrupt("snapshot chunk end", &k, "missing"))?;
                TreeChunkEnd::try_from_slice(&v).map_err(|e| corrupt("snapshot chunk end", &k, e))
            };
            let end = read_end(index)?;
            let start = match index {
                0 => prefix(height, LEAF),
                i => after(&part_key(
                    height,
                    LEAF,
                    &manifest.tree_chunk_ends[i as usize - 1],
                )),
            };
            let stop = after(&part_key(height, LEAF, &end.last));
            let entries = self
                .backend
                .scan(&start, Some(&stop), usize::MAX)?
                .into_iter()
                .map(|(k, v)| decode_leaf(&k, &v))
                .collect::<Result<_>>()?;
            return Ok(Some(SnapshotChunk::Tree {
                entries,
                proof: end.proof,
            }));
        }
        let derived = (index - manifest.tree_chunks()) as usize;
        let Some(first) = manifest.derived_chunk_starts.get(derived) else {
            return Ok(None);
        };
        let start = part_key(height, DERIVED, first);
        let stop = match manifest.derived_chunk_starts.get(derived + 1) {
            Some(next) => part_key(height, DERIVED, next),
            None => part_end(height, DERIVED),
        };
        let body = prefix(height, DERIVED).len();
        let entries = self
            .backend
            .scan(&start, Some(&stop), usize::MAX)?
            .into_iter()
            .map(|(k, v)| (k[body..].to_vec(), v))
            .collect();
        Ok(Some(SnapshotChunk::Derived { entries }))
    }
}

fn height_range(height: u64) -> (Vec<u8>, Vec<u8>) {
    let mut start = vec![SNAPSHOTS];
    start.extend_from_slice(&height.to_be_bytes());
    let mut end = vec![SNAPSHOTS];
    match height.checked_add(1) {
        Some(next) => end.extend_from_slice(&next.to_be_bytes()),
        None => end = vec![SNAPSHOTS + 1],
    }
    (start, end)
}

/// Where chunks are cut: after [`CHUNK_ENTRIES`] entries or once
/// [`CHUNK_BYTES`] are reached.
#[derive(Default)]
struct ChunkCut {
    count: usize,
    bytes: usize,
}

impl ChunkCut {
    /// Adds an entry of `bytes`; `true` when the chunk is full (and starts
    /// a new one).
    fn add(&mut self, bytes: usize) -> bool {
        self.count += 1;
        self.bytes += bytes;
        if self.count >= CHUNK_ENTRIES || self.bytes >= CHUNK_BYTES {
            *self = ChunkCut::default();
            return true;
        }
        false
    }
}
