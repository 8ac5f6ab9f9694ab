//! Store migrations (#44): a store of the previous formats is migrated in
//! place, and a migration cut short anywhere leaves a store of the old
//! format or the new, which a second run finishes.
//!
//! The format-9 store is made by writing a current store and removing what
//! format 10 added (the `h` header records) and setting the marker to 9:
//! formats 9 and 10 differ by exactly that (`timerhost_state::migrations`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use timerhost_state::namespaces::{ns_key, HEADERS, META};
use timerhost_state::{
    ChainStore, CommitRequest, KvBackend, MemoryBackend, StorageError, WriteBatch, STORE_FORMAT,
};
use timerhost_types::{Address, Block, BlockHeader, Hash};

/// A backend over a shared memory map; with a budget, its writes fail once
/// the budget is spent: a process killed between two batches.
struct Shared {
    inner: Arc<MemoryBackend>,
    writes_left: Option<AtomicUsize>,
}

impl Shared {
    fn new(inner: Arc<MemoryBackend>) -> Shared {
        Shared {
            inner,
            writes_left: None,
        }
    }

    fn cut_after(inner: Arc<MemoryBackend>, writes: usize) -> Shared {
        Shared {
            inner,
            writes_left: Some(AtomicUsize::new(writes)),
        }
    }
}

impl KvBackend for Shared {
    fn get(&self, key: &[u8]) -> timerhost_state::Result<Option<Vec<u8>>> {
        self.inner.get(key)
    }
    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> timerhost_state::Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.scan(start, end, limit)
    }
    fn last_in(
        &self,
        start: &[u8],
        end: &[u8],
    ) -> timerhost_state::Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.inner.last_in(start, end)
    }
    fn write(&self, batch: WriteBatch) -> timerhost_state::Result<()> {
        if let Some(left) = &self.writes_left {
            let spent = left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
            if spent.is_err() {
                return Err(StorageError::Backend("killed".into()));
            }
        }
        self.inner.write(batch)
    }
}

fn block(height: u64, root: Hash) -> Block {
    Block {
        header: BlockHeader {
            chain_id: 1,
            height,
            timestamp_ms: 1_000 + height,
            proposer: Address::ZERO,
            parent_hash: Hash([height as u8; 32]),
            tx_root: Hash::ZERO,
            state_root: root,
            receipts_root: Hash::ZERO,
            cycles_used: height,
            cells_used: 0,
            lane_basefee: 0,
        },
        txs: Vec::new(),
    }
}

/// A current store of `blocks` blocks, turned into format 9.
fn format_nine_store(
    blocks: u64,
) -> (
    Arc<MemoryBackend>,
    Vec<Option<timerhost_state::StoredHeader>>,
) {
    let map = Arc::new(MemoryBackend::new());
    let store = ChainStore::new(Shared::new(map.clone()));
    for height in 0..blocks {
        let changes = vec![(format!("k{height}").into_bytes(), Some(vec![height as u8]))]
            .into_iter()
            .collect();
        let (root, update) = store.compute_root(&changes, height).unwrap();
        store
            .commit(CommitRequest {
                block: &block(height, root),
                receipts: &[],
                changes: &changes,
                tree_update: &update,
                summary: None,
            })
            .unwrap();
    }
    let headers = (0..blocks).map(|h| store.header(h).unwrap()).collect();
    let mut batch = WriteBatch::new();
    for height in 0..blocks {
        batch.delete(ns_key(HEADERS, &height.to_be_bytes()));
    }
    batch.put(ns_key(META, b"format"), 9u32.to_be_bytes().to_vec());
    map.write(batch).unwrap();
    (map, headers)
}

fn format_of(map: &MemoryBackend) -> u32 {
    u32::from_be_bytes(
        map.get(&ns_key(META, b"format"))
            .unwrap()
            .unwrap()
            .try_into()
            .unwrap(),
    )
}

#[test]
fn a_format_nine_store_is_refused_until_migrated_then_reads_whole() {
    let (map, headers) = format_nine_store(1_300);
    let store = ChainStore::new(Shared::new(map.clone()));
    let refused = store.check_format().unwrap_err().to_string();
    assert!(
        refused.contains("store format 9") && refused.contains("timerhost migrate"),
        "{refused}"
    );
    let mut calls = Vec::new();
    let report = store
        .migrate(|format, written| calls.push((format, written)))
        .unwrap();
    assert_eq!((report.from, report.to), (9, STORE_FORMAT));
    // 1,300 headers in three batches, then the markers (10, 11, 12, 13)
    // and, with 13, the indexed height.
    assert_eq!(report.entries_written, 1_300 + 5);
    assert!(calls.len() >= 4, "{calls:?}");
    store.check_format().unwrap();
    // Every block of the old store is in the transaction index.
    assert_eq!(
        store.meta("tx_indexed").unwrap(),
        Some(1_299u64.to_be_bytes().to_vec())
    );
    for (height, header) in headers.iter().enumerate() {
        assert_eq!(
            &store.header(height as u64).unwrap(),
            header,
            "height {height}"
        );
    }
    assert_eq!(store.head_header().unwrap().unwrap().height, 1_299);
    // A second run does nothing.
    let again = store.migrate(|_, _| {}).unwrap();
    assert_eq!(
        (again.from, again.to, again.entries_written),
        (STORE_FORMAT, STORE_FORMAT, 0)
    );
}

#[test]
fn a_migration_cut_short_anywhere_leaves_one_format_and_finishes_on_the_next_run() {
    // 1,300 blocks: three header batches, the 10, 11, 12 and 13 markers.
    for allowed_writes in 0..=7 {
        let (map, headers) = format_nine_store(1_300);
        let cut = ChainStore::new(Shared::cut_after(map.clone(), allowed_writes));
        let outcome = cut.migrate(|_, _| {});
        let format = format_of(&map);
        match allowed_writes {
            0..=3 => assert_eq!(format, 9, "after {allowed_writes} writes"),
            4 => assert_eq!(format, 10),
            5 => assert_eq!(format, 11),
            6 => assert_eq!(format, 12),
            _ => assert_eq!(format, 13),
        }
        assert_eq!(outcome.is_ok(), allowed_writes >= 7);
        // Whatever it left reads as that format: 9 to 12 need a migration,
        // 13 is current; a second run (a restart) finishes.
        let store = ChainStore::new(Shared::new(map.clone()));
        if format < STORE_FORMAT {
            assert!(
                matches!(store.check_format(), Err(StorageError::NeedsMigration { found, .. }) if found == format)
            );
        }
        store.migrate(|_, _| {}).unwrap();
        store.check_format().unwrap();
        for (height, header) in headers.iter().enumerate() {
            assert_eq!(&store.header(height as u64).unwrap(), header);
        }
    }
}

#[test]
fn stores_older_than_the_policy_or_newer_are_refused_by_name() {
    for format in [
        timerhost_state::OLDEST_MIGRATABLE_FORMAT - 1,
        STORE_FORMAT + 1,
    ] {
        let (map, _) = format_nine_store(3);
        let mut batch = WriteBatch::new();
        batch.put(ns_key(META, b"format"), format.to_be_bytes().to_vec());
        map.write(batch).unwrap();
        let store = ChainStore::new(Shared::new(map.clone()));
        let error = store.migrate(|_, _| {}).unwrap_err().to_string();
        assert!(
            error.contains(&format!("store format {format}")) && error.contains("new node home"),
            "{error}"
        );
        assert_eq!(format_of(&map), format, "a refused store is not touched");
    }
}
