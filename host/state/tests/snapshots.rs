//! State snapshots (#44): one taken while blocks commit is the state of its
//! height exactly, restores into a store with the same root and keys, and
//! a tampered chunk is refused by name.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use timerhost_state::namespaces::{ns_key, SNAPSHOTS, STATE, TREE_NODES};
use timerhost_state::{
    ChainStore, ChangeSet, CommitRequest, KvBackend, MemoryBackend, SnapshotChunk, SnapshotRestore,
    StorageError, WriteBatch,
};
use timerhost_types::{Address, Block, BlockHeader, Hash};

/// A backend over a shared map that, once armed, stops at the first write
/// into the snapshot namespace until the test says go: blocks commit in the
/// middle of a snapshot, deterministically.
struct Gated {
    inner: Arc<MemoryBackend>,
    gate: Mutex<Option<(Sender<()>, Receiver<()>)>>,
}

impl KvBackend for Gated {
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
        let into_snapshot = batch
            .ops()
            .iter()
            .any(|(k, _)| k.first() == Some(&SNAPSHOTS));
        if into_snapshot {
            if let Some((paused, go)) = self.gate.lock().unwrap().take() {
                paused.send(()).unwrap();
                go.recv().unwrap();
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

/// Block `height`'s writes: new tree leaves and derived keys, rewrites and
/// deletions of earlier ones.
fn changes(height: u64) -> ChangeSet {
    let mut c = ChangeSet::new();
    for i in 0..40u64 {
        c.insert(
            format!("a{height}-{i}").into_bytes(),
            Some(vec![height as u8; 30]),
        );
        c.insert(
            format!("u{height}-{i}").into_bytes(),
            Some(vec![i as u8; 50]),
        );
    }
    if height > 0 {
        c.insert(format!("a{}-3", height - 1).into_bytes(), None);
        c.insert(format!("u{}-4", height - 1).into_bytes(), None);
        c.insert(b"counter".to_vec(), Some(height.to_be_bytes().to_vec()));
        c.insert(b"ucounter".to_vec(), Some(height.to_be_bytes().to_vec()));
    }
    c
}

fn commit<B: KvBackend>(store: &ChainStore<B>, height: u64) {
    let changes = changes(height);
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

fn namespace(map: &MemoryBackend, ns: u8) -> Vec<(Vec<u8>, Vec<u8>)> {
    map.scan(&[ns], Some(&[ns + 1]), usize::MAX).unwrap()
}

/// Restores the snapshot of `height` served by `from` into a new store.
fn restore_from<B: KvBackend>(
    from: &ChainStore<B>,
    height: u64,
) -> (Arc<MemoryBackend>, timerhost_state::Result<()>) {
    let map = Arc::new(MemoryBackend::new());
    let store = ChainStore::new(map.clone());
    let manifest = from.snapshot_manifest(height).unwrap().unwrap();
    let header = from.header(height).unwrap().unwrap();
    let genesis = from.block(0).unwrap().unwrap();
    let mut restore = SnapshotRestore::new(&store, manifest.clone(), &header.header).unwrap();
    let result = (|| {
        for index in 0..manifest.chunks() {
            match from.snapshot_chunk(height, index)?.unwrap() {
                SnapshotChunk::Tree { entries, proof } => {
                    restore.add_tree_chunk(index, entries, &proof)?
                }
                SnapshotChunk::Derived { entries } => {
                    restore.add_derived_chunk(index - manifest.tree_chunks(), entries)?
                }
            }
        }
        restore.finish(&genesis, &header.header, header.tx_count)
    })();
    (map, result)
}

#[test]
fn a_snapshot_taken_while_blocks_commit_is_exactly_its_height() {
    let map = Arc::new(MemoryBackend::new());
    let (paused_tx, paused_rx) = channel();
    let (go_tx, go_rx) = channel();
    let store = Arc::new(ChainStore::new(Gated {
        inner: map.clone(),
        gate: Mutex::new(None),
    }));
    // The same blocks, up to the snapshot's height only, and all of them
    // without any snapshot: what the snapshot and the tree must equal.
    let at_height_map = Arc::new(MemoryBackend::new());
    let at_height = ChainStore::new(at_height_map.clone());
    let plain_map = Arc::new(MemoryBackend::new());
    let plain = ChainStore::new(plain_map.clone());
    for height in 0..30 {
        commit(&store, height);
        commit(&at_height, height);
        commit(&plain, height);
    }
    *store.backend().gate.lock().unwrap() = Some((paused_tx, go_rx));
    let taker = {
        let store = store.clone();
        std::thread::spawn(move || store.take_snapshot(2))
    };
    // Six blocks commit while the snapshot of height 29 is being copied.
    paused_rx.recv().unwrap();
    for height in 30..36 {
        commit(&*store, height);
        commit(&plain, height);
    }
    go_tx.send(()).unwrap();
    let manifest = taker.join().unwrap().unwrap();
    assert_eq!(manifest.height, 29);
    assert_eq!(store.snapshots().unwrap(), vec![manifest.clone()]);
    assert!(manifest.tree_chunks() >= 1 && manifest.derived_chunks() >= 1);

    // The nodes kept whole for the snapshot are gone again: the tree is
    // node for node the tree of a store that never took one.
    assert_eq!(
        namespace(&map, TREE_NODES),
        namespace(&plain_map, TREE_NODES)
    );
    assert!(namespace(&map, b'n').is_empty());

    let (restored, result) = restore_from(&*store, 29);
    result.unwrap();
    assert_eq!(
        namespace(&restored, STATE),
        namespace(&at_height_map, STATE)
    );
    // Its nodes all carry version 29 where the replayed tree's carry the
    // version that wrote each: the same tree under other node keys, as many.
    assert_eq!(
        namespace(&restored, TREE_NODES).len(),
        namespace(&at_height_map, TREE_NODES).len()
    );
    let restored = ChainStore::new(restored);
    assert_eq!(restored.head_height().unwrap(), Some(29));
    assert_eq!(
        restored.state_root().unwrap(),
        at_height.state_root().unwrap()
    );
    // It goes on like the replayed store.
    for height in 30..36 {
        commit(&restored, height);
    }
    assert_eq!(restored.state_root().unwrap(), plain.state_root().unwrap());
    // History below the sync says why it is missing.
    let err = restored.block(12).unwrap_err();
    assert!(
        err.to_string()
            .contains("joined by state sync at height 29"),
        "{err}"
    );
}

/// Changes a tree chunk's entries or proof.
type Tamper = dyn Fn(&mut Vec<(Vec<u8>, Vec<u8>)>, &mut Vec<u8>);

#[test]
fn tampered_chunks_are_refused_by_name() {
    let store = ChainStore::new(MemoryBackend::new());
    for height in 0..200 {
        commit(&store, height);
    }
    let manifest = store.take_snapshot(2).unwrap();
    assert!(manifest.tree_chunks() >= 2, "{manifest:?}");
    let h = manifest.height;
    let header = store.header(h).unwrap().unwrap().header;
    let chunk = |i| match store.snapshot_chunk(h, i).unwrap().unwrap() {
        SnapshotChunk::Tree { entries, proof } => (entries, proof),
        SnapshotChunk::Derived { .. } => panic!("chunk {i} is a tree chunk"),
    };
    let refused = |f: &Tamper| {
        let fresh = ChainStore::new(MemoryBackend::new());
        let mut restore = SnapshotRestore::new(&fresh, manifest.clone(), &header).unwrap();
        let (entries, proof) = chunk(0);
        restore.add_tree_chunk(0, entries, &proof).unwrap();
        let (mut entries, mut proof) = chunk(1);
        f(&mut entries, &mut proof);
        let err = restore.add_tree_chunk(1, entries, &proof).unwrap_err();
        assert!(
            matches!(err, StorageError::BadChunk { index: 1, .. }),
            "{err}"
        );
        // Nothing of the bad chunk was written.
        assert_eq!(fresh.backend().len(), {
            let again = ChainStore::new(MemoryBackend::new());
            let mut r = SnapshotRestore::new(&again, manifest.clone(), &header).unwrap();
            let (entries, proof) = chunk(0);
            r.add_tree_chunk(0, entries, &proof).unwrap();
            again.backend().len()
        });
        err.to_string()
    };
    let e = refused(&|entries, _| entries[5].1.push(1));
    assert!(
        e.contains("snapshot chunk 1 of height 199 is invalid"),
        "{e}"
    );
    refused(&|entries, _| {
        entries.remove(7);
    });
    refused(&|entries, _| {
        let last = entries.pop().unwrap();
        entries.push((b"u-derived".to_vec(), last.1));
    });
    refused(&|_, proof| proof.truncate(proof.len() / 2));
    let e = refused(&|entries, _| {
        entries.pop();
    });
    assert!(e.contains("does not end where the manifest says"), "{e}");

    // A derived chunk may hold derived keys of its range only.
    let fresh = ChainStore::new(MemoryBackend::new());
    let mut restore = SnapshotRestore::new(&fresh, manifest.clone(), &header).unwrap();
    let first_derived = manifest.tree_chunks();
    let SnapshotChunk::Derived { mut entries } =
        store.snapshot_chunk(h, first_derived).unwrap().unwrap()
    else {
        panic!("derived chunk expected")
    };
    entries.push((b"a-tree-key".to_vec(), vec![1]));
    let err = restore.add_derived_chunk(0, entries).unwrap_err();
    assert!(matches!(err, StorageError::BadChunk { .. }), "{err}");
}

#[test]
fn a_snapshot_cut_short_is_discarded_and_the_next_one_works() {
    let map = Arc::new(MemoryBackend::new());
    let store = ChainStore::new(map.clone());
    let plain_map = Arc::new(MemoryBackend::new());
    let plain = ChainStore::new(plain_map.clone());
    for height in 0..20 {
        commit(&store, height);
        commit(&plain, height);
    }
    // A crash in the middle of a snapshot, with a block committed during
    // it: a half-written snapshot and a kept stale node are left behind.
    {
        let mut capture_batch = WriteBatch::new();
        capture_batch.put(ns_key(SNAPSHOTS, &19u64.to_be_bytes()), b"partial".to_vec());
        map.write(capture_batch).unwrap();
    }
    let manifest = store.take_snapshot(1).unwrap();
    assert_eq!(manifest.height, 19);
    // Same height: the half-written one was overwritten by the finished
    // one; a later height replaces it (keep = 1).
    commit(&store, 20);
    commit(&plain, 20);
    let later = store.take_snapshot(1).unwrap();
    assert_eq!(store.snapshots().unwrap(), vec![later]);
    let mut partial = WriteBatch::new();
    partial.put(
        ns_key(SNAPSHOTS, &[0, 0, 0, 0, 0, 0, 0, 7, b'L', 1]),
        vec![1],
    );
    partial.put(vec![b'n', 9, 9], Vec::new());
    map.write(partial).unwrap();
    let reopened = ChainStore::new(map.clone());
    reopened.discard_unfinished_snapshots().unwrap();
    assert_eq!(reopened.snapshots().unwrap().len(), 1);
    assert!(namespace(&map, b'n').is_empty());
    assert_eq!(
        namespace(&map, TREE_NODES),
        namespace(&plain_map, TREE_NODES)
    );
    let (_, result) = restore_from(&reopened, 20);
    result.unwrap();
}
