//! Ordered key-value backends with atomic, durable batch writes.
//!
//! The chain needs only four things from a database: point reads, ordered
//! range scans, and an all-or-nothing batch write that is durable when it
//! returns. Everything the node stores — consensus state, tree nodes, blocks,
//! receipts, indexes, the head pointer — is written in one such batch per
//! block, so a crash leaves the database at the previous block or the new
//! one, never in between.

use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Result, StorageError};

/// An atomic set of puts and deletes.
#[derive(Debug, Default, Clone)]
pub struct WriteBatch {
    ops: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `key` to `value`.
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.ops.push((key, Some(value)));
    }

    /// Deletes `key`.
    pub fn delete(&mut self, key: Vec<u8>) {
        self.ops.push((key, None));
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Is the batch empty?
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The operations in order (later ones win).
    pub fn ops(&self) -> &[(Vec<u8>, Option<Vec<u8>>)] {
        &self.ops
    }
}

/// An ordered byte-key store.
pub trait KvBackend: Send + Sync + 'static {
    /// Reads one key.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// The first `n` bytes of the value at `key` and its whole length,
    /// without copying the rest (`StateRead::get_head`).
    fn get_head(&self, key: &[u8], n: usize) -> Result<Option<(Vec<u8>, usize)>> {
        Ok(self.get(key)?.map(|mut v| {
            let len = v.len();
            v.truncate(n);
            (v, len)
        }))
    }

    /// Up to `limit` entries with `start ≤ key < end` (`end = None`: no upper
    /// bound), in ascending key order.
    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;

    /// The keys of [`KvBackend::scan`], without copying the values.
    fn scan_keys(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Vec<u8>>> {
        Ok(self
            .scan(start, end, limit)?
            .into_iter()
            .map(|(k, _)| k)
            .collect())
    }

    /// The entry with the greatest key in `[start, end)`, if any.
    fn last_in(&self, start: &[u8], end: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>>;

    /// Applies every operation of `batch` atomically; when this returns `Ok`
    /// the batch survives a crash.
    fn write(&self, batch: WriteBatch) -> Result<()>;

    /// Deletes `key` if its value is still `expected`; returns whether it
    /// did. Atomic against writes from other threads in the memory and
    /// sled backends (the pruner sweeps beside commits); this default
    /// reads then writes, which suits a backend written by one thread. The
    /// deletion is durable once a later [`KvBackend::write`] returns.
    fn delete_if(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
        if self.get(key)?.as_deref() != Some(expected) {
            return Ok(false);
        }
        let mut batch = WriteBatch::new();
        batch.delete(key.to_vec());
        self.write(batch)?;
        Ok(true)
    }
}

/// A boxed or shared backend is a backend, so a program can choose sled or
/// memory at run time (`Chain<Box<dyn KvBackend>>`, as the Python package
/// does) and tests can keep a handle on a store's map.
macro_rules! forward_backend {
    ($pointer:ident) => {
        impl<T: KvBackend + ?Sized> KvBackend for $pointer<T> {
            fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
                (**self).get(key)
            }

            fn get_head(&self, key: &[u8], n: usize) -> Result<Option<(Vec<u8>, usize)>> {
                (**self).get_head(key, n)
            }

            fn scan(
                &self,
                start: &[u8],
                end: Option<&[u8]>,
                limit: usize,
            ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
                (**self).scan(start, end, limit)
            }

            fn scan_keys(
                &self,
                start: &[u8],
                end: Option<&[u8]>,
                limit: usize,
            ) -> Result<Vec<Vec<u8>>> {
                (**self).scan_keys(start, end, limit)
            }

            fn last_in(&self, start: &[u8], end: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
                (**self).last_in(start, end)
            }

            fn write(&self, batch: WriteBatch) -> Result<()> {
                (**self).write(batch)
            }

            fn delete_if(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
                (**self).delete_if(key, expected)
            }
        }
    };
}

forward_backend!(Box);
forward_backend!(Arc);

fn bounds<'a>(start: &'a [u8], end: Option<&'a [u8]>) -> (Bound<&'a [u8]>, Bound<&'a [u8]>) {
    (
        Bound::Included(start),
        end.map_or(Bound::Unbounded, Bound::Excluded),
    )
}

/// An in-memory backend (tests, replay, the in-process Python chain).
#[derive(Debug, Default)]
pub struct MemoryBackend {
    map: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl MemoryBackend {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A deep copy (used for snapshots in dev tooling).
    pub fn clone_contents(&self) -> MemoryBackend {
        MemoryBackend {
            map: RwLock::new(self.map.read().clone()),
        }
    }

    /// Replaces the contents with those of `other`.
    pub fn restore_from(&self, other: &MemoryBackend) {
        *self.map.write() = other.map.read().clone();
    }

    /// Number of keys stored.
    pub fn len(&self) -> usize {
        self.map.read().len()
    }

    /// Is the store empty?
    pub fn is_empty(&self) -> bool {
        self.map.read().is_empty()
    }
}

impl KvBackend for MemoryBackend {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.map.read().get(key).cloned())
    }

    fn delete_if(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
        let mut map = self.map.write();
        if map.get(key).map(Vec::as_slice) != Some(expected) {
            return Ok(false);
        }
        map.remove(key);
        Ok(true)
    }

    fn get_head(&self, key: &[u8], n: usize) -> Result<Option<(Vec<u8>, usize)>> {
        Ok(self
            .map
            .read()
            .get(key)
            .map(|v| (v[..v.len().min(n)].to_vec(), v.len())))
    }

    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let map = self.map.read();
        Ok(map
            .range::<[u8], _>(bounds(start, end))
            .take(limit)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    }

    fn scan_keys(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Vec<u8>>> {
        let map = self.map.read();
        Ok(map
            .range::<[u8], _>(bounds(start, end))
            .take(limit)
            .map(|(k, _)| k.clone())
            .collect())
    }

    fn last_in(&self, start: &[u8], end: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let map = self.map.read();
        Ok(map
            .range::<[u8], _>(bounds(start, Some(end)))
            .next_back()
            .map(|(k, v)| (k.clone(), v.clone())))
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let mut map = self.map.write();
        for (k, v) in batch.ops {
            match v {
                Some(v) => map.insert(k, v),
                None => map.remove(&k),
            };
        }
        Ok(())
    }
}

/// The file that marks a finished compaction copy (`crate::compaction`).
pub(crate) const COMPACTION_COMPLETE: &str = "COMPLETE";

/// `DIR` + `suffix`, beside `DIR`.
pub(crate) fn compaction_sibling(dir: &Path, suffix: &str) -> std::path::PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    dir.with_file_name(name)
}

/// Finishes or discards a compaction of the database in `dir` that a crash
/// interrupted (the steps are in `crate::compaction`); every open runs it.
pub fn finish_interrupted_compaction(dir: &Path) -> Result<()> {
    let io = |action: &str, path: &Path, e: std::io::Error| {
        StorageError::Backend(format!("{action} {}: {e}", path.display()))
    };
    let copy = compaction_sibling(dir, ".compact");
    let old = compaction_sibling(dir, ".old");
    let complete = copy.join(COMPACTION_COMPLETE).exists();
    if !dir.exists() && complete {
        std::fs::rename(&copy, dir).map_err(|e| io("moving into place", &copy, e))?;
        std::fs::remove_file(dir.join(COMPACTION_COMPLETE)).map_err(|e| io("unmarking", dir, e))?;
    } else if copy.exists() {
        std::fs::remove_dir_all(&copy).map_err(|e| io("removing", &copy, e))?;
    }
    if old.exists() && dir.exists() {
        std::fs::remove_dir_all(&old).map_err(|e| io("removing", &old, e))?;
    }
    Ok(())
}

/// A sled-backed store (one sled tree, keys namespaced by prefix so that one
/// `apply_batch` covers everything a block writes).
pub struct SledBackend {
    db: sled::Db,
}

impl std::fmt::Debug for SledBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledBackend").finish_non_exhaustive()
    }
}

/// Why opening a database held by someone else fails.
const LOCKED: &str =
    "the database is locked by another process (is a node already running on this home?)";

impl SledBackend {
    /// How long [`SledBackend::open`] keeps retrying a locked database.
    const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

    /// Opens (creating if needed) the database in directory `path`. Fails with
    /// a clear error if another process has it open.
    ///
    /// A database closed earlier in this process can hold its file lock for a
    /// moment after the close (sled releases the file when deferred epoch
    /// garbage is collected), so a locked database is retried for up to
    /// [`Self::LOCK_WAIT`] before the error.
    pub fn open(path: &Path) -> Result<Self> {
        finish_interrupted_compaction(path)?;
        let started = std::time::Instant::now();
        loop {
            match Self::open_once(path) {
                Err(StorageError::Open { reason, .. })
                    if reason == LOCKED && started.elapsed() < Self::LOCK_WAIT =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    fn open_once(path: &Path) -> Result<Self> {
        let db = sled::Config::new()
            .path(path)
            // Durability comes from the explicit flush after every batch; the
            // background flusher only adds latency jitter.
            .flush_every_ms(None)
            .cache_capacity(256 * 1024 * 1024)
            .open()
            .map_err(|e| {
                // sled reports a held file lock as an I/O error whose text is
                // the only stable signal; turn it into advice for the operator.
                let text = e.to_string();
                let reason =
                    if text.contains("could not acquire lock") || text.contains("WouldBlock") {
                        LOCKED.to_string()
                    } else {
                        text
                    };
                StorageError::Open {
                    path: path.display().to_string(),
                    reason,
                }
            })?;
        Ok(Self { db })
    }

    /// Bytes on disk (approximate).
    pub fn size_on_disk(&self) -> Result<u64> {
        Ok(self.db.size_on_disk()?)
    }
}

impl KvBackend for SledBackend {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get(key)?.map(|v| v.to_vec()))
    }

    fn delete_if(&self, key: &[u8], expected: &[u8]) -> Result<bool> {
        // sled's compare-and-swap: one atomic step against every other
        // writer of the tree, batches included.
        Ok(self
            .db
            .compare_and_swap(key, Some(expected), None::<&[u8]>)?
            .is_ok())
    }

    fn get_head(&self, key: &[u8], n: usize) -> Result<Option<(Vec<u8>, usize)>> {
        // sled hands out its buffer (`IVec`) without copying it.
        Ok(self
            .db
            .get(key)?
            .map(|v| (v[..v.len().min(n)].to_vec(), v.len())))
    }

    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let iter = match end {
            Some(end) => self.db.range(start..end),
            None => self.db.range(start..),
        };
        iter.take(limit)
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).map_err(Into::into))
            .collect()
    }

    fn scan_keys(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Vec<u8>>> {
        // sled's values come out as shared buffers: only the keys are copied.
        let iter = match end {
            Some(end) => self.db.range(start..end),
            None => self.db.range(start..),
        };
        iter.take(limit)
            .map(|r| r.map(|(k, _)| k.to_vec()).map_err(Into::into))
            .collect()
    }

    fn last_in(&self, start: &[u8], end: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        match self.db.range(start..end).next_back() {
            Some(r) => {
                let (k, v) = r?;
                Ok(Some((k.to_vec(), v.to_vec())))
            }
            None => Ok(None),
        }
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let mut sled_batch = sled::Batch::default();
        for (k, v) in batch.ops {
            match v {
                Some(v) => sled_batch.insert(k, v),
                None => sled_batch.remove(k),
            }
        }
        self.db.apply_batch(sled_batch)?;
        // The batch is atomic in sled's log; flushing makes it durable before
        // we report the block committed.
        self.db.flush()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(backend: &dyn KvBackend) {
        let mut b = WriteBatch::new();
        b.put(b"a1".to_vec(), b"x".to_vec());
        b.put(b"a2".to_vec(), b"y".to_vec());
        b.put(b"b1".to_vec(), b"z".to_vec());
        b.put(b"a3".to_vec(), b"w".to_vec());
        b.delete(b"a3".to_vec());
        backend.write(b).unwrap();
        assert_eq!(backend.get(b"a1").unwrap(), Some(b"x".to_vec()));
        assert_eq!(backend.get(b"a3").unwrap(), None);
        // The pruner's sweep (#46): a value that changed since it was read
        // is not deleted; one that did not is.
        assert!(!backend.delete_if(b"a1", b"old").unwrap());
        assert!(!backend.delete_if(b"zz", b"x").unwrap());
        assert_eq!(backend.get(b"a1").unwrap(), Some(b"x".to_vec()));
        let mut b = WriteBatch::new();
        b.put(b"a9".to_vec(), b"v".to_vec());
        backend.write(b).unwrap();
        assert!(backend.delete_if(b"a9", b"v").unwrap());
        assert_eq!(backend.get(b"a9").unwrap(), None);
        let all = backend.scan(b"a", Some(b"b"), 10).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].0, b"a1");
        assert_eq!(backend.scan(b"a", None, 1).unwrap().len(), 1);
        assert_eq!(backend.scan(b"a", None, 10).unwrap().len(), 3);
        assert_eq!(backend.last_in(b"a", b"b").unwrap().unwrap().0, b"a2");
        assert_eq!(backend.last_in(b"c", b"d").unwrap(), None);
    }

    #[test]
    fn memory_backend_contract() {
        exercise(&MemoryBackend::new());
    }

    #[test]
    fn sled_backend_contract_and_persistence() {
        let dir = tempfile::tempdir().unwrap();
        {
            let sled = SledBackend::open(dir.path()).unwrap();
            exercise(&sled);
        }
        let sled = SledBackend::open(dir.path()).unwrap();
        assert_eq!(sled.get(b"b1").unwrap(), Some(b"z".to_vec()));
    }
}
