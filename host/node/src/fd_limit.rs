//! The process's file-descriptor limit (#48): every RPC connection (a
//! WebSocket subscriber, an HTTP client) holds a descriptor, and the RPC
//! server accepts up to `RpcLimits::max_connections` of them. At start the
//! node raises its soft limit toward what that needs (never past the hard
//! limit the operator set) and says so when it cannot.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Raises the soft `RLIMIT_NOFILE` to at least `wanted` (capped by the hard
/// limit; `None` means unlimited). Returns the soft limit in force after.
pub fn raise(wanted: u64) -> u64 {
    let now = getrlimit(Resource::Nofile);
    let current = now.current.unwrap_or(u64::MAX);
    let target = wanted.min(now.maximum.unwrap_or(u64::MAX));
    if current >= target {
        return current;
    }
    let raised = Rlimit {
        current: Some(target),
        maximum: now.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => target,
        Err(_) => current,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn raising_never_lowers_the_limit() {
        let now = super::raise(0);
        assert!(super::raise(16) >= now.min(16));
        assert!(super::raise(0) >= now);
    }
}
