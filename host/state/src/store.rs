//! [`ChainStore`]: consensus state plus the chain's history, over one backend.
//!
//! Its keys live in the backend namespaces of [`crate::namespaces`].
//!
//! [`ChainStore::commit`] writes all of a block's entries in one atomic batch.
//!
//! How receipts and events are laid out, and why, is in [`crate::history`].

use jmt::storage::TreeUpdateBatch;
use timerhost_types::encoding::{self, Canonical};
use timerhost_types::{Block, BlockHeader, Hash, Receipt};

use crate::backend::{KvBackend, WriteBatch};
use crate::capture::Capture;
use crate::commitment::{NodeCache, StateCommitment};
use crate::error::{corrupt, Result, StorageError};
pub use crate::headers::StoredHeader;
use crate::history;
pub use crate::history::{EventFilter, EventRecord, EventsPage, TxLocation};
use crate::migrations;
pub use crate::migrations::{MigrationReport, STORE_FORMAT};
use crate::namespaces::{ns_key, BLOCK, HASH_INDEX, HEADERS, META, STATE, SUMMARY};
use crate::overlay::{ChangeSet, StateRead};
use crate::pruning::{self, PruneStep};

/// Every entry of a store at one moment: state, tree, history and metadata
/// (dev tooling: `dev_snapshot`, the Python package's `Chain.snapshot()`).
///
/// Taking and restoring one costs time and memory proportional to the whole
/// store, which is what a devnet or a test chain wants and a validator never
/// does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreSnapshot {
    entries: std::sync::Arc<Vec<(Vec<u8>, Vec<u8>)>>,
}

impl StoreSnapshot {
    /// Number of backend entries captured.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Is the snapshot empty?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Everything one block commits.
pub struct CommitRequest<'a> {
    /// The block, with its final header (state root included).
    pub block: &'a Block,
    /// Receipts of user transactions then deferred transactions.
    pub receipts: &'a [Receipt],
    /// The block's consensus-state writes.
    pub changes: &'a ChangeSet,
    /// The tree update that produced `block.header.state_root`.
    pub tree_update: &'a TreeUpdateBatch,
    /// An opaque summary of the block kept beside it (the chain's timer
    /// figures, #33); not part of any root.
    pub summary: Option<&'a [u8]>,
}

/// Consensus state and chain history over a [`KvBackend`].
#[derive(Debug)]
pub struct ChainStore<B: KvBackend> {
    pub(crate) backend: B,
    /// Decoded upper levels of the state tree (see [`NodeCache`]).
    nodes: NodeCache,
    /// The snapshot being taken, if one is: held through every commit, so
    /// a commit and the start or end of a snapshot never interleave.
    pub(crate) capture: parking_lot::Mutex<Option<Capture>>,
    /// Every this many heights a commit starts capturing a snapshot
    /// (0: never; `[sync] snapshot_interval`).
    snapshot_interval: std::sync::atomic::AtomicU64,
    /// Blocks whose state stays provable (`[storage] proof_blocks`; 0:
    /// the head's only), [`crate::recent`].
    proof_blocks: std::sync::atomic::AtomicU64,
    /// Recent-state records leaving the window are deleted by
    /// [`ChainStore::prune_recent_states`] (a node's pruner thread), not in
    /// the commit (#46).
    recent_pruned_apart: std::sync::atomic::AtomicBool,
    /// Transaction index entries not written yet (`crate::tx_index`).
    pub(crate) tx_index: crate::tx_index::PendingTxIndex,
}

/// Read-only view of committed consensus state.
pub struct StateView<'a> {
    backend: &'a dyn KvBackend,
}

impl StateRead for StateView<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.backend.get(&ns_key(STATE, key))
    }

    fn get_head(&self, key: &[u8], n: usize) -> Result<Option<(Vec<u8>, usize)>> {
        self.backend.get_head(&ns_key(STATE, key), n)
    }

    fn scan_keys(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Vec<u8>>> {
        let start = ns_key(STATE, start);
        let end = match end {
            Some(e) => ns_key(STATE, e),
            None => vec![STATE + 1],
        };
        Ok(self
            .backend
            .scan_keys(&start, Some(&end), limit)?
            .into_iter()
            .map(|mut k| {
                k.remove(0);
                k
            })
            .collect())
    }

    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let start = ns_key(STATE, start);
        let end = match end {
            Some(e) => ns_key(STATE, e),
            None => vec![STATE + 1],
        };
        Ok(self
            .backend
            .scan(&start, Some(&end), limit)?
            .into_iter()
            .map(|(mut k, v)| {
                k.remove(0);
                (k, v)
            })
            .collect())
    }
}

impl<B: KvBackend> ChainStore<B> {
    /// Wraps a backend.
    pub fn new(backend: B) -> Self {
        Self {
            backend,
            nodes: NodeCache::default(),
            capture: parking_lot::Mutex::new(None),
            snapshot_interval: std::sync::atomic::AtomicU64::new(0),
            proof_blocks: std::sync::atomic::AtomicU64::new(0),
            recent_pruned_apart: std::sync::atomic::AtomicBool::new(false),
            tx_index: crate::tx_index::PendingTxIndex::default(),
        }
    }

    /// The backend, given back (a store restored by state sync is then
    /// opened as a chain).
    pub fn into_backend(self) -> B {
        self.backend
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Committed consensus state.
    pub fn state(&self) -> StateView<'_> {
        StateView {
            backend: &self.backend,
        }
    }

    fn get_decoded<T: Canonical>(&self, key: &[u8]) -> Result<Option<T>> {
        match self.backend.get(key)? {
            None => Ok(None),
            Some(bytes) => encoding::decode(&bytes)
                .map(Some)
                .map_err(|e| corrupt(T::NAME, key, e)),
        }
    }

    /// Height of the last committed block, `None` before genesis.
    pub fn head_height(&self) -> Result<Option<u64>> {
        crate::namespaces::read_head(&self.backend)
    }

    /// Header of the last committed block.
    pub fn head_header(&self) -> Result<Option<BlockHeader>> {
        match self.head_height()? {
            None => Ok(None),
            Some(h) => Ok(self.header(h)?.map(|s| s.header)),
        }
    }

    /// The header and transaction count of the block at `height`, without
    /// reading its transactions.
    pub fn header(&self, height: u64) -> Result<Option<StoredHeader>> {
        self.get_decoded(&ns_key(HEADERS, &height.to_be_bytes()))
    }

    /// The block at `height` ([`StorageError::Pruned`] below the floor).
    pub fn block(&self, height: u64) -> Result<Option<Block>> {
        pruning::check_kept(&self.backend, height)?;
        self.get_decoded(&ns_key(BLOCK, &height.to_be_bytes()))
    }

    /// The lowest height above 0 whose block, receipts and events this
    /// store keeps (1 unless pruned; `crate::pruning`).
    pub fn history_floor(&self) -> Result<u64> {
        pruning::history_floor(&self.backend)
    }

    /// Removes the history of at most `max_heights` heights that lie more
    /// than `keep_blocks` below the head, oldest first, in one atomic batch
    /// (`crate::pruning`). Safe beside commits: they write other keys.
    pub fn prune(&self, keep_blocks: u64, max_heights: u64) -> Result<PruneStep> {
        let Some(head) = self.head_height()? else {
            return Ok(PruneStep::default());
        };
        pruning::prune_step(&self.backend, head, keep_blocks, max_heights)
    }

    /// Height of the block with this hash.
    pub fn height_of_block(&self, hash: &Hash) -> Result<Option<u64>> {
        let key = ns_key(HASH_INDEX, hash.as_bytes());
        match self.backend.get(&key)? {
            None => Ok(None),
            Some(bytes) => {
                let arr: [u8; 8] = bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| corrupt("block hash index", &key, "not 8 bytes"))?;
                Ok(Some(u64::from_be_bytes(arr)))
            }
        }
    }

    /// The receipts of the block at `height` (empty if none;
    /// [`StorageError::Pruned`] below the floor).
    pub fn receipts(&self, height: u64) -> Result<Vec<Receipt>> {
        pruning::check_kept(&self.backend, height)?;
        history::receipts(&self.backend, height)
    }

    /// The summary committed with block `height`, if one was.
    pub fn summary(&self, height: u64) -> Result<Option<Vec<u8>>> {
        self.backend.get(&ns_key(SUMMARY, &height.to_be_bytes()))
    }

    /// The committed state root at the head.
    pub fn state_root(&self) -> Result<Option<Hash>> {
        Ok(self.head_header()?.map(|h| h.state_root))
    }

    /// Events matching `filter`, in chain order.
    pub fn events(&self, filter: &EventFilter) -> Result<Vec<EventRecord>> {
        Ok(self.events_within(filter, 0)?.events)
    }

    /// [`ChainStore::events`] reading at most about `max_reads` entries
    /// (`history::events_within`): what a query from outside gets.
    /// Below the floor: [`StorageError::Pruned`] for a `from_height` given,
    /// the floor for none.
    pub fn events_within(&self, filter: &EventFilter, max_reads: usize) -> Result<EventsPage> {
        let Some(head) = self.head_height()? else {
            return Ok(EventsPage::default());
        };
        let mut filter = filter.clone();
        let floor = self.history_floor()?;
        match filter.from_height {
            // From genesis on a pruned node is below the floor too.
            Some(from) if from < floor && floor > 1 => {
                pruning::check_kept(&self.backend, from.max(1))?
            }
            Some(_) => {}
            None => filter.from_height = Some(floor),
        }
        history::events_within(&self.backend, head, &filter, max_reads)
    }

    /// The events that name timer `timer_id` in their data (scheduled,
    /// fired, deferred, cancelled, …), in chain order, at most `limit`;
    /// read through their own indexes, whatever else the actor emitted.
    /// `pending`: the timer is still pending (so no fire is searched for).
    pub fn timer_events(
        &self,
        timer_id: &Hash,
        pending: bool,
        limit: usize,
    ) -> Result<Vec<EventRecord>> {
        match self.head_height()? {
            None => Ok(Vec::new()),
            Some(head) => history::timer_life(&self.backend, head, timer_id, pending, limit),
        }
    }

    /// The root and tree update for `changes` applied at `height`.
    pub fn compute_root(
        &self,
        changes: &ChangeSet,
        height: u64,
    ) -> Result<(Hash, TreeUpdateBatch)> {
        StateCommitment::compute_with(&self.backend, Some(&self.nodes), changes, height)
    }

    /// Commits a block atomically: state writes, tree nodes (stale ones
    /// pruned), block, receipts, indexes and the new head — all or nothing.
    pub fn commit(&self, req: CommitRequest<'_>) -> Result<()> {
        let header = &req.block.header;
        let head = self.head_height()?;
        let expected = head.map_or(0, |h| h + 1);
        if header.height != expected {
            return Err(StorageError::OutOfOrder {
                head,
                height: header.height,
            });
        }
        let height_be = header.height.to_be_bytes();
        let mut batch = WriteBatch::new();
        let mut capture = self.capture.lock();
        if let Some(capture) = capture.as_mut() {
            capture.remember(&self.backend, req.changes)?;
        }
        for (key, value) in req.changes {
            let k = ns_key(STATE, key);
            match value {
                Some(v) => batch.put(k, v.clone()),
                None => batch.delete(k),
            }
        }
        let keep = self.proof_blocks();
        if keep > 0 {
            // Stale nodes stay, listed by height (a snapshot being taken
            // finds the tree of its height whole among them).
            crate::recent_records::stage(
                &self.backend,
                header.height,
                req.changes,
                &req.tree_update.stale_node_index_batch,
                &mut batch,
            )?;
            StateCommitment::stage_new_nodes(req.tree_update, &mut batch);
        } else {
            crate::recent_records::stop(&mut batch);
            if capture.is_some() {
                StateCommitment::stage_keeping_stale(req.tree_update, &mut batch);
            } else {
                StateCommitment::stage(req.tree_update, &mut batch);
            }
        }
        if capture.is_none()
            && !self
                .recent_pruned_apart
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            crate::recent_records::prune(&self.backend, header.height, keep, &mut batch)?;
        }
        batch.put(ns_key(BLOCK, &height_be), encoding::encode(req.block));
        let stored = StoredHeader {
            header: header.clone(),
            tx_count: req.block.txs.len() as u32,
        };
        batch.put(ns_key(HEADERS, &height_be), encoding::encode(&stored));
        if let Some(summary) = req.summary {
            batch.put(ns_key(SUMMARY, &height_be), summary.to_vec());
        }
        batch.put(
            ns_key(HASH_INDEX, header.hash().as_bytes()),
            height_be.to_vec(),
        );
        history::stage(&mut batch, header.height, req.receipts);
        let indexing = self.stage_tx_index(&mut batch, header.height, req.receipts)?;
        batch.put(
            ns_key(META, crate::namespaces::HEAD_KEY),
            height_be.to_vec(),
        );
        if header.height == 0 {
            batch.put(ns_key(META, b"format"), STORE_FORMAT.to_be_bytes().to_vec());
        }
        // The batch is atomic: on failure nothing was written and the cache
        // still matches the store.
        let written = self.backend.write(batch);
        self.finish_tx_index(indexing, written.is_ok());
        written?;
        self.nodes.apply(req.tree_update);
        let every = self
            .snapshot_interval
            .load(std::sync::atomic::Ordering::Relaxed);
        if every > 0
            && header.height > 0
            && header.height.is_multiple_of(every)
            && capture.is_none()
        {
            // Exactly at the interval's heights, so that every node offers
            // the same snapshots (a builder thread takes it from here).
            *capture = Some(Capture::new(header.height));
        }
        Ok(())
    }

    /// Starts a snapshot capture in the commit of every height that is a
    /// multiple of `every` (0: never); [`ChainStore::build_captured_snapshot`]
    /// builds it. A height reached while the previous snapshot is still
    /// being built is skipped.
    pub fn set_snapshot_interval(&self, every: u64) {
        self.snapshot_interval
            .store(every, std::sync::atomic::Ordering::Relaxed);
    }

    /// Keeps the state of the last `blocks` blocks provable (0: the head's
    /// only), [`crate::recent`]; takes effect from the next commit.
    pub fn set_proof_blocks(&self, blocks: u64) {
        self.proof_blocks
            .store(blocks, std::sync::atomic::Ordering::Relaxed);
    }

    /// See [`Self::set_proof_blocks`].
    pub fn proof_blocks(&self) -> u64 {
        self.proof_blocks.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Leaves the deletion of recent-state records that leave the window
    /// to [`Self::prune_recent_states`] instead of every commit (#46: on a
    /// node it was a third of a full block's commit). Whoever sets it must
    /// call that, or the records grow.
    pub fn prune_recent_states_apart(&self, apart: bool) {
        self.recent_pruned_apart
            .store(apart, std::sync::atomic::Ordering::Relaxed);
    }

    /// Deletes the recent-state records (and retained tree nodes) of every
    /// height that left the window, a few heights per atomic batch, each
    /// batch under the commit lock (so not while a snapshot is being taken,
    /// whose tree they may hold, and never between a reader's check of the
    /// window and its walk). Returns the entries deleted. The heights a
    /// reader may ask for lie above what this deletes: a height's records
    /// are what reading *older* states needs.
    pub fn prune_recent_states(&self) -> Result<u64> {
        let mut deleted = 0u64;
        loop {
            let capture = self.capture.lock();
            if capture.is_some() {
                return Ok(deleted);
            }
            let Some(head) = self.head_height()? else {
                return Ok(deleted);
            };
            let mut batch = WriteBatch::new();
            crate::recent_records::prune(&self.backend, head, self.proof_blocks(), &mut batch)?;
            if batch.is_empty() {
                return Ok(deleted);
            }
            deleted += batch.len() as u64;
            self.backend.write(batch)?;
            drop(capture);
        }
    }

    /// Captures every entry of the store (see [`StoreSnapshot`]).
    pub fn snapshot(&self) -> Result<StoreSnapshot> {
        let entries = self.backend.scan(&[], None, usize::MAX)?;
        Ok(StoreSnapshot {
            entries: std::sync::Arc::new(entries),
        })
    }

    /// Makes the store equal to `snapshot` in one atomic batch that touches
    /// only the entries that differ (a merge of two sorted key lists), so a
    /// revert right after a few blocks writes only what those blocks wrote.
    pub fn restore(&self, snapshot: &StoreSnapshot) -> Result<()> {
        let current = self.backend.scan(&[], None, usize::MAX)?;
        let mut batch = WriteBatch::new();
        let mut now = current.into_iter().peekable();
        let mut then = snapshot.entries.iter().peekable();
        loop {
            match (now.peek(), then.peek()) {
                (None, None) => break,
                (Some(_), None) => batch.delete(now.next().expect("peeked").0),
                (None, Some(_)) => {
                    let (k, v) = then.next().expect("peeked");
                    batch.put(k.clone(), v.clone());
                }
                (Some((nk, nv)), Some((tk, tv))) => match nk.cmp(tk) {
                    std::cmp::Ordering::Less => batch.delete(now.next().expect("peeked").0),
                    std::cmp::Ordering::Greater => {
                        let (k, v) = then.next().expect("peeked");
                        batch.put(k.clone(), v.clone());
                    }
                    std::cmp::Ordering::Equal => {
                        if nv != tv {
                            batch.put(tk.clone(), tv.clone());
                        }
                        now.next();
                        then.next();
                    }
                },
            }
        }
        if batch.is_empty() {
            return Ok(());
        }
        let written = self.backend.write(batch);
        // Tree nodes were rewritten under keys the cache may hold, and the
        // pending index entries are the snapshot's.
        self.nodes.clear();
        self.tx_index.forget();
        written
    }

    /// Number of decoded tree nodes held in memory (metrics).
    pub fn cached_tree_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Refuses a database written in another layout (see [`STORE_FORMAT`]):
    /// [`StorageError::NeedsMigration`] for one [`ChainStore::migrate`]
    /// can bring up to date, [`StorageError::Format`] otherwise. An empty
    /// database passes: its block 0 will carry the marker.
    pub fn check_format(&self) -> Result<()> {
        if self.head_height()?.is_none() {
            return Ok(());
        }
        migrations::check(&self.backend)
    }

    /// Migrates the store in place to [`STORE_FORMAT`] (`crate::migrations`:
    /// crash-safe, one format at a time); `progress` hears the format being
    /// left and the entries written after every batch. An empty or current
    /// store is left as it is.
    pub fn migrate(&self, progress: impl FnMut(u32, u64)) -> Result<MigrationReport> {
        if self.head_height()?.is_none() {
            return Ok(MigrationReport {
                from: STORE_FORMAT,
                to: STORE_FORMAT,
                entries_written: 0,
            });
        }
        let report = migrations::migrate(&self.backend, progress)?;
        // Nothing a migration writes is a tree node, but the cache is cheap
        // to refill and must never outlive a rewrite.
        self.nodes.clear();
        Ok(report)
    }

    /// Reads a node-local metadata value (not consensus state).
    pub fn meta(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.backend.get(&ns_key(META, name.as_bytes()))
    }

    /// Writes a node-local metadata value (not consensus state).
    pub fn put_meta(&self, name: &str, value: Vec<u8>) -> Result<()> {
        assert!(
            name != "head" && name != "format",
            "the head pointer and the format marker are only written by commit"
        );
        let mut batch = WriteBatch::new();
        batch.put(ns_key(META, name.as_bytes()), value);
        self.backend.write(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::MemoryBackend;
    use timerhost_types::{Address, Event, Receipt, Value};

    /// Commits `changes` as the next block; returns its root.
    fn commit(
        store: &ChainStore<MemoryBackend>,
        changes: &ChangeSet,
        receipts: &[Receipt],
    ) -> Hash {
        let height = store.head_height().unwrap().map_or(0, |h| h + 1);
        // The cache never changes the root: a cold computation agrees.
        let (cold, _) = StateCommitment::compute(store.backend(), changes, height).unwrap();
        let root = crate::test_support::commit_block(store, height, changes, receipts);
        assert_eq!(root, cold, "cached and uncached roots differ at {height}");
        root
    }

    fn writes(seed: u64, n: u64) -> ChangeSet {
        (0..n)
            .map(|i| {
                let key = format!("k{}", (seed * 7 + i * 13) % 3000).into_bytes();
                // Every fifth write is a deletion, so the tree also shrinks.
                let value = (i % 5 != 0).then(|| format!("v{seed}-{i}").into_bytes());
                (key, value)
            })
            .collect()
    }

    #[test]
    fn node_cache_agrees_with_the_store_across_commits_and_a_divergent_revert() {
        let store = ChainStore::new(MemoryBackend::new());
        for h in 0..20 {
            commit(&store, &writes(h, 400), &[]);
        }
        assert!(store.cached_tree_nodes() > 0);
        let snapshot = store.snapshot().unwrap();
        let first = commit(&store, &writes(100, 400), &[]);
        commit(&store, &writes(101, 400), &[]);
        // Revert, then build *different* blocks at the same heights: node
        // keys (version, path) repeat with other contents, so a cache that
        // survived the restore would produce wrong roots here.
        store.restore(&snapshot).unwrap();
        assert_eq!(store.cached_tree_nodes(), 0);
        let second = commit(&store, &writes(200, 400), &[]);
        assert_ne!(first, second);
        commit(&store, &writes(201, 400), &[]);
        // A fresh store over the same backend contents computes the same next root.
        let fresh = ChainStore::new(MemoryBackend::new());
        fresh.restore(&store.snapshot().unwrap()).unwrap();
        let next = writes(300, 400);
        let height = store.head_height().unwrap().unwrap() + 1;
        assert_eq!(
            store.compute_root(&next, height).unwrap().0,
            fresh.compute_root(&next, height).unwrap().0
        );
    }

    #[test]
    fn a_database_without_this_format_is_refused_by_name() {
        let store = ChainStore::new(MemoryBackend::new());
        store.check_format().unwrap();
        commit(&store, &writes(0, 3), &[]);
        store.check_format().unwrap();
        // What a database written before the marker existed looks like.
        let mut batch = WriteBatch::new();
        batch.delete(ns_key(META, b"format"));
        store.backend().write(batch).unwrap();
        let e = store.check_format().unwrap_err().to_string();
        assert!(
            e.contains("store format none") && e.contains(&format!("reads format {STORE_FORMAT}")),
            "{e}"
        );
        let mut batch = WriteBatch::new();
        let other = STORE_FORMAT + 1;
        batch.put(ns_key(META, b"format"), other.to_be_bytes().to_vec());
        store.backend().write(batch).unwrap();
        let e = store.check_format().unwrap_err().to_string();
        assert!(e.contains(&format!("store format {other}")), "{e}");
    }

    fn receipt_with(events: &[(&str, u8)]) -> Receipt {
        crate::history::tests::receipt(
            events.len() as u8,
            events
                .iter()
                .map(|(name, who)| Event {
                    name: name.to_string(),
                    emitter: Address([*who; 20]),
                    data: Value::None,
                })
                .collect(),
        )
    }

    #[test]
    fn event_postings_find_every_event_by_name_and_emitter_in_order() {
        let store = ChainStore::new(MemoryBackend::new());
        commit(&store, &writes(0, 3), &[]);
        let receipts = vec![
            receipt_with(&[("Fired", 1), ("Other", 2), ("Fired", 2)]),
            receipt_with(&[]),
            receipt_with(&[("Fired", 1)]),
        ];
        commit(&store, &writes(1, 3), &receipts);
        commit(&store, &writes(2, 3), &[receipt_with(&[("Fired", 3)])]);
        let found = |filter: EventFilter| -> Vec<(u64, u32, u32)> {
            store
                .events(&filter)
                .unwrap()
                .iter()
                .map(|e| (e.height, e.receipt_index, e.event_index))
                .collect()
        };
        let by_name = EventFilter {
            name: Some("Fired".into()),
            ..EventFilter::default()
        };
        assert_eq!(
            found(by_name.clone()),
            [(1, 0, 0), (1, 0, 2), (1, 2, 0), (2, 0, 0)]
        );
        assert_eq!(
            found(EventFilter {
                limit: 2,
                ..by_name.clone()
            }),
            [(1, 0, 0), (1, 0, 2)]
        );
        assert_eq!(
            found(EventFilter {
                from_height: Some(2),
                ..by_name.clone()
            }),
            [(2, 0, 0)]
        );
        assert_eq!(
            found(EventFilter {
                emitter: Some(Address([2; 20])),
                ..EventFilter::default()
            }),
            [(1, 0, 1), (1, 0, 2)]
        );
        assert_eq!(
            found(EventFilter {
                emitter: Some(Address([1; 20])),
                ..by_name
            }),
            [(1, 0, 0), (1, 2, 0)]
        );
        // A name past the 255 bytes the index keeps is still found by its whole name.
        let long = "L".repeat(300);
        commit(
            &store,
            &writes(3, 3),
            &[receipt_with(&[(long.as_str(), 4)])],
        );
        assert_eq!(
            found(EventFilter {
                name: Some(long.clone()),
                ..EventFilter::default()
            }),
            [(3, 0, 0)]
        );
        assert!(found(EventFilter {
            name: Some("L".repeat(255)),
            ..EventFilter::default()
        })
        .is_empty());
        // One posting list per (name, block) and (emitter, block), not per event.
        let index_entries = store
            .backend()
            .scan(
                &[crate::namespaces::EVENT_INDEX],
                Some(&[crate::namespaces::EVENT_INDEX + 1]),
                usize::MAX,
            )
            .unwrap()
            .len();
        // Block 1: names Fired, Other and emitters 1, 2; blocks 2 and 3: one name and one emitter.
        assert_eq!(index_entries, (2 + 2) + (1 + 1) + (1 + 1));
    }

    /// Block `height`'s receipts in the pruning test: two transactions,
    /// events by name, emitter and timer, one of them a scheduled fire.
    fn pruning_receipts(height: u64) -> Vec<Receipt> {
        use crate::history::tests::{event, receipt};
        let tag = height as u8;
        let mut fire = event("TimerFired", 9, Some([tag; 32]));
        // Canonical dicts keep their keys sorted.
        if let Value::Dict(entries) = &mut fire.data {
            entries.insert(0, (Value::str("kind"), Value::str("height")));
        }
        vec![
            receipt(
                tag,
                vec![
                    event("Ping", 1, None),
                    event("TimerScheduled", 2, Some([tag; 32])),
                ],
            ),
            receipt(tag.wrapping_add(100), vec![fire, event("Ping", 3, None)]),
        ]
    }

    /// The keys block `height`'s history writes (what pruning must delete).
    fn history_keys(height: u64) -> Vec<Vec<u8>> {
        let mut batch = WriteBatch::new();
        history::stage(&mut batch, height, &pruning_receipts(height));
        crate::tx_index::stage(
            &mut batch,
            &crate::tx_index::entries(height, &pruning_receipts(height)),
        );
        let mut keys: Vec<Vec<u8>> = batch.ops().iter().map(|(k, _)| k.clone()).collect();
        keys.push(ns_key(BLOCK, &height.to_be_bytes()));
        keys
    }

    #[test]
    fn pruning_removes_exactly_the_old_history_in_bounded_steps() {
        let store = ChainStore::new(MemoryBackend::new());
        commit(&store, &writes(0, 4), &[]);
        for height in 1..=12 {
            commit(&store, &writes(height, 4), &pruning_receipts(height));
        }
        let state_before: Vec<_> = store
            .backend
            .scan(&[STATE], Some(&[STATE + 1]), usize::MAX)
            .unwrap();
        // An archive node keeps everything.
        assert_eq!(store.prune(0, 100).unwrap().heights, 0);
        assert_eq!(store.history_floor().unwrap(), 1);
        // Keep 4 of 13 blocks (0..=12): heights 1..=8 go, 3 per step.
        let mut steps = Vec::new();
        loop {
            let step = store.prune(4, 3).unwrap();
            if step.heights == 0 {
                break;
            }
            steps.push(step.heights);
        }
        assert_eq!(steps, vec![3, 3, 2]);
        assert_eq!(store.history_floor().unwrap(), 9);
        for height in 1..=12 {
            for key in history_keys(height) {
                let present = store.backend.get(&key).unwrap().is_some();
                assert_eq!(present, height >= 9, "height {height} key {key:?}");
            }
            // Headers stay for every height.
            assert!(store.header(height).unwrap().is_some());
        }
        // State and its tree are untouched; block 0 stays.
        let state_after: Vec<_> = store
            .backend
            .scan(&[STATE], Some(&[STATE + 1]), usize::MAX)
            .unwrap();
        assert_eq!(state_before, state_after);
        assert!(store.block(0).unwrap().is_some());
        // Reads below the floor say so.
        let error = store.block(5).unwrap_err().to_string();
        assert!(
            error.starts_with("pruned: this node keeps the last 4 blocks"),
            "{error}"
        );
        assert!(store
            .receipts(8)
            .unwrap_err()
            .to_string()
            .starts_with("pruned"));
        assert!(store.block(9).unwrap().is_some());
        assert_eq!(store.receipts(9).unwrap(), pruning_receipts(9));
        // A transaction of a pruned block is no longer indexed; a kept one is.
        assert!(store.receipt(&Hash([5; 32])).unwrap().is_none());
        assert_eq!(
            store.receipt(&Hash([10; 32])).unwrap().unwrap().0.height,
            10
        );
        // Events: from the floor by default, an error from below it.
        let pings = store
            .events(&EventFilter {
                name: Some("Ping".into()),
                ..EventFilter::default()
            })
            .unwrap();
        assert_eq!(pings.iter().map(|e| e.height).min(), Some(9));
        assert_eq!(pings.len(), 4 * 2);
        let below = store.events(&EventFilter {
            from_height: Some(0),
            ..EventFilter::default()
        });
        assert!(below.unwrap_err().to_string().starts_with("pruned"));
        // Commits go on, and pruning follows the head.
        commit(&store, &writes(13, 4), &pruning_receipts(13));
        assert_eq!(store.prune(4, 100).unwrap().floor, 10);
    }
}
