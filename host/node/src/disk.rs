//! The full-disk guard (#44): before a block is committed the node checks
//! the free space of the filesystem holding its data directory, and below
//! `[storage] min_free_bytes` it refuses to commit — it says so once in its
//! log and in `th_status` (`producer.disk`), keeps serving reads, and
//! resumes by itself when space returns. Checking before the write keeps
//! sled from ever meeting `ENOSPC` mid-batch: a failed write would leave
//! its log in an error state only a restart clears.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

/// Free bytes below which a node stops committing, by default: room for
/// the largest block batch and sled's own segment rewrites.
pub const DEFAULT_MIN_FREE_BYTES: u64 = 256 << 20;

/// The guard of one data directory; cheap to clone (shared state).
#[derive(Clone, Debug)]
pub struct DiskGuard {
    path: PathBuf,
    min_free_bytes: u64,
    full: Arc<AtomicBool>,
    last_free: Arc<AtomicU64>,
}

impl DiskGuard {
    /// A guard of `path` requiring `min_free_bytes` free to commit.
    pub fn new(path: PathBuf, min_free_bytes: u64) -> DiskGuard {
        DiskGuard {
            path,
            min_free_bytes,
            full: Arc::new(AtomicBool::new(false)),
            last_free: Arc::new(AtomicU64::new(u64::MAX)),
        }
    }

    /// `Ok` when a block may be committed; the reason otherwise. Logs the
    /// moment the disk fills and the moment it has room again.
    pub fn allows_commit(&self) -> Result<(), String> {
        let free = match fs2::available_space(&self.path) {
            Ok(free) => free,
            // Cannot tell: do not stop a node over a failing statfs; a
            // real failure to write still stops the commit.
            Err(_) => return Ok(()),
        };
        self.last_free.store(free, Ordering::Relaxed);
        let full = free < self.min_free_bytes;
        let was_full = self.full.swap(full, Ordering::SeqCst);
        if full {
            let why = format!(
                "disk full: {free} bytes free under {}, this node commits with at least {} ([storage] min_free_bytes); not committing until space returns",
                self.path.display(),
                self.min_free_bytes
            );
            if !was_full {
                tracing::error!("{why}");
                eprintln!("{why}");
            }
            return Err(why);
        }
        if was_full {
            tracing::warn!(free, "disk space is back; committing again");
            eprintln!("disk space is back ({free} bytes free); committing again");
        }
        Ok(())
    }

    /// What `th_status` shows (`producer.disk`).
    pub fn describe(&self) -> Value {
        let free = self.last_free.load(Ordering::Relaxed);
        json!({
            "full": self.full.load(Ordering::SeqCst),
            "free_bytes": (free != u64::MAX).then_some(free),
            "min_free_bytes": self.min_free_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_above_the_free_space_refuses_and_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let guard = DiskGuard::new(dir.path().to_path_buf(), u64::MAX);
        let why = guard.allows_commit().unwrap_err();
        assert!(why.starts_with("disk full:"), "{why}");
        assert_eq!(guard.describe()["full"], true);
        let roomy = DiskGuard {
            min_free_bytes: 0,
            ..guard.clone()
        };
        roomy.allows_commit().unwrap();
        // The flag is shared: the node's status sees the recovery.
        assert_eq!(guard.describe()["full"], false);
    }
}
