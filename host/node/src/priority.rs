//! Scheduling priority of the RPC workers of a node whose blocks are made
//! on a thread of their own (`timerhost dev`, a single-producer node).
//!
//! When the node's cores are busy, every RPC worker thread competes with
//! the producer for them on equal terms: admitting transactions (signature
//! recovery), answering queries and pushing notifications to subscribers
//! (each a system call that also runs the loopback or NIC path) then stretch
//! the block being made. The workers run one step of niceness per
//! [`RPC_NICENESS`] below the producer, so under contention the kernel
//! gives the producer the larger share (CFS weights: ~3:1 against one
//! worker at +5) while an idle core still runs RPC at full speed. Raising
//! a thread's niceness needs no privilege; a failure is logged and ignored
//! (the node runs, only without the preference).
//!
//! A validator's node is not touched: its blocks are made by the consensus
//! engine on the same runtime as its RPC server.

/// How much nicer than the producer the RPC workers run.
pub const RPC_NICENESS: i32 = 5;

/// Makes the calling thread [`RPC_NICENESS`] nicer than it is now.
pub fn lower_this_thread() {
    let tid = rustix::thread::gettid();
    let lowered = rustix::process::getpriority_process(Some(tid))
        .and_then(|now| rustix::process::setpriority_process(Some(tid), now + RPC_NICENESS));
    if let Err(e) = lowered {
        tracing::debug!("could not lower an RPC worker's priority: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lowered_thread_is_nicer_and_others_are_not() {
        let before = rustix::process::getpriority_process(None).unwrap();
        let lowered = std::thread::spawn(|| {
            lower_this_thread();
            rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap()
        })
        .join()
        .unwrap();
        // Capped at 19 by the kernel when the process is already nice.
        assert_eq!(lowered, (before + RPC_NICENESS).min(19));
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), before);
    }
}
