//! The snapshot builder (`[sync] snapshot_interval`, #44): the commit of
//! every height that is a multiple of the interval starts capturing that
//! height (`timerhost_state::snapshots`); this thread builds the snapshot
//! beside the commits that follow, keeps the newest `snapshot_keep`, and
//! serves them through `th_getSnapshots`/`th_getSnapshotChunk`. At start it
//! removes what a crash left of a snapshot being built.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use timerhost_chain::Chain;
use timerhost_state::SledBackend;

/// How often the thread looks for a capture to build.
pub const POLL: Duration = Duration::from_millis(50);

/// A running builder; stopping (or dropping) it waits for the snapshot in
/// progress.
pub struct Snapshotter {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Snapshotter {
    /// Starts building `chain`'s snapshots every `interval` heights; `None`
    /// when `interval` is 0.
    pub fn start(chain: Arc<Chain<SledBackend>>, interval: u64, keep: u64) -> Option<Snapshotter> {
        if interval == 0 {
            return None;
        }
        if let Err(error) = chain.store().discard_unfinished_snapshots() {
            tracing::warn!(%error, "could not remove an unfinished snapshot");
        }
        chain.store().set_snapshot_interval(interval);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let keep = usize::try_from(keep).unwrap_or(usize::MAX).max(1);
        let thread = std::thread::Builder::new()
            .name("snapshotter".into())
            .spawn(move || {
                while !flag.load(Ordering::SeqCst) {
                    let started = Instant::now();
                    match chain.store().build_captured_snapshot(keep) {
                        Ok(Some(m)) => tracing::info!(
                            height = m.height,
                            chunks = m.chunks(),
                            bytes = m.bytes,
                            seconds = started.elapsed().as_secs_f64(),
                            "state snapshot of height {} ready for state sync",
                            m.height
                        ),
                        Ok(None) => std::thread::sleep(POLL),
                        Err(error) => {
                            tracing::warn!(%error, "state snapshot failed; the next interval tries again");
                            std::thread::sleep(POLL);
                        }
                    }
                }
            })
            .ok()?;
        Some(Snapshotter {
            stop,
            thread: Some(thread),
        })
    }

    fn finish(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Snapshotter {
    fn drop(&mut self) {
        self.finish();
    }
}
