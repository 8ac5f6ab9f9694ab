//! Giving pruned space back to the filesystem (`timerhost compact`, #44).
//!
//! sled keeps a log of segments and reclaims one only when little of it is
//! still live; deleting old history (pruning, `crate::pruning`) writes
//! tombstones into new segments while the old ones stay mostly live among
//! state writes, so a pruned database does not shrink by itself (measured
//! in docs/PERFORMANCE.md: 100,000 loaded blocks pruned to 1,000 grew from
//! 2,665 to 3,001 MiB). Compaction copies every live entry, in key order,
//! into a fresh database beside the old one and swaps the two directories.
//!
//! Crash safety, by steps, each leaving a state the next open finishes
//! ([`finish_interrupted`], run by every [`SledBackend::open`]):
//!
//! 1. `DIR.compact` is built, flushed, and marked `COMPLETE` last; a crash
//!    before the mark leaves an unmarked copy, deleted on the next open;
//! 2. `DIR` is renamed `DIR.old`; a crash here leaves no `DIR` and a
//!    complete `DIR.compact`, which the next open moves into place;
//! 3. `DIR.compact` is renamed `DIR`, then `DIR.old` is removed; a crash
//!    in between leaves a `DIR.old` the next open removes.

use std::path::Path;

pub use crate::backend::finish_interrupted_compaction as finish_interrupted;
use crate::backend::{
    compaction_sibling as sibling, KvBackend, SledBackend, WriteBatch,
    COMPACTION_COMPLETE as COMPLETE,
};
use crate::error::{Result, StorageError};

/// Entries copied per batch.
const BATCH: usize = 8_192;

/// What a compaction did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactionReport {
    /// Entries copied.
    pub entries: u64,
    /// Bytes of the directory before.
    pub bytes_before: u64,
    /// Bytes after.
    pub bytes_after: u64,
}

/// Bytes of the files under `path`.
pub fn dir_bytes(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Compacts the sled database in `dir` (no process may have it open).
pub fn compact(dir: &Path, mut progress: impl FnMut(u64)) -> Result<CompactionReport> {
    finish_interrupted(dir)?;
    let bytes_before = dir_bytes(dir);
    let copy = sibling(dir, ".compact");
    let mut entries = 0u64;
    {
        let from = SledBackend::open(dir)?;
        let to = SledBackend::open(&copy)?;
        let mut start = Vec::new();
        loop {
            let page = from.scan(&start, None, BATCH)?;
            let Some((last, _)) = page.last() else { break };
            start = last.clone();
            start.push(0);
            entries += page.len() as u64;
            let full = page.len() == BATCH;
            let mut batch = WriteBatch::new();
            for (k, v) in page {
                batch.put(k, v);
            }
            to.write(batch)?;
            progress(entries);
            if !full {
                break;
            }
        }
    }
    let io = |action: &str, path: &Path, e: std::io::Error| {
        StorageError::Backend(format!("{action} {}: {e}", path.display()))
    };
    std::fs::write(copy.join(COMPLETE), b"").map_err(|e| io("marking", &copy, e))?;
    let old = sibling(dir, ".old");
    std::fs::rename(dir, &old).map_err(|e| io("moving aside", dir, e))?;
    std::fs::rename(&copy, dir).map_err(|e| io("moving into place", &copy, e))?;
    std::fs::remove_file(dir.join(COMPLETE)).map_err(|e| io("unmarking", dir, e))?;
    std::fs::remove_dir_all(&old).map_err(|e| io("removing", &old, e))?;
    Ok(CompactionReport {
        entries,
        bytes_before,
        bytes_after: dir_bytes(dir),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(dir: &Path, n: u32) {
        let db = SledBackend::open(dir).unwrap();
        let mut batch = WriteBatch::new();
        for i in 0..n {
            batch.put(i.to_be_bytes().to_vec(), vec![7; 200]);
        }
        db.write(batch).unwrap();
        let mut batch = WriteBatch::new();
        for i in 0..n - 10 {
            batch.delete(i.to_be_bytes().to_vec());
        }
        db.write(batch).unwrap();
    }

    fn entries(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
        SledBackend::open(dir)
            .unwrap()
            .scan(&[], None, usize::MAX)
            .unwrap()
    }

    #[test]
    fn compaction_keeps_every_live_entry_and_shrinks_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        fill(&dir, 20_000);
        let before = entries(&dir);
        let report = compact(&dir, |_| {}).unwrap();
        assert_eq!(report.entries, 10);
        assert_eq!(entries(&dir), before);
        assert!(report.bytes_after < report.bytes_before, "{report:?}");
        assert!(!sibling(&dir, ".compact").exists() && !sibling(&dir, ".old").exists());
    }

    #[test]
    fn a_compaction_cut_at_any_step_is_finished_or_undone_by_the_next_open() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        fill(&dir, 1_000);
        let before = entries(&dir);
        let copy = sibling(&dir, ".compact");
        let old = sibling(&dir, ".old");
        // Cut before the mark: the copy is discarded.
        compact(&dir, |_| {}).unwrap();
        std::fs::create_dir_all(&copy).unwrap();
        std::fs::write(copy.join("junk"), b"x").unwrap();
        assert_eq!(entries(&dir), before);
        assert!(!copy.exists());
        // Cut after moving the old one aside: the marked copy goes in place.
        compact(&dir, |_| {}).unwrap();
        std::fs::rename(&dir, &copy).unwrap();
        std::fs::write(copy.join(COMPLETE), b"").unwrap();
        assert_eq!(entries(&dir), before);
        // Cut before removing the old one: it is removed.
        std::fs::create_dir_all(&old).unwrap();
        assert_eq!(entries(&dir), before);
        assert!(!old.exists());
    }
}
