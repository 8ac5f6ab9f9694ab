//! Garbage cycles left by executions are collected by the bytes they hold
//! (issue #47), not only by the count of tracked objects made.

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use common::addr;
use timerhost_types::{Invocation, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

fn limits() -> ExecLimits {
    ExecLimits::new(50_000_000, 1_000_000)
}

/// Cyclic garbage an execution leaves is collected once 16 MiB of it has
/// piled up, not only after 2,000 tracked objects: eight calls that each
/// left a 12 MB self-referencing list grew the process by 128 MB (#47).
#[test]
fn garbage_cycles_left_by_executions_are_collected_by_their_bytes() {
    let source = "class Leaky:\n    def run(self, n):\n        x = list(range(n))\n        x.append(x)\n        return 0\n";
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(5);
    host.install_actor(actor, source);
    assert!(vm
        .deploy(&mut host, &actor, source, &[], limits())
        .is_success());
    let mut retained_most = 0u64;
    for _ in 0..12 {
        let outcome = vm.call(
            &mut host,
            &actor,
            "run",
            &[Value::int(400_000)],
            limits(),
            Invocation::Transaction,
        );
        assert!(outcome.is_success(), "{:?}", outcome.result);
        retained_most = retained_most.max(timerhost_vm::alloc::last_live_bytes().max(0) as u64);
    }
    // Each call leaves its list behind ...
    assert!(retained_most > 1024 * 1024, "{retained_most}");
    // ... and the process does not hold twelve of them (~230 MB): the
    // resident set stays within the threshold plus a few calls' lists.
    // (A test binary of its own: no other test's memory in the figure.)
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let rss_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(rss_kib < 150 * 1024, "{rss_kib} KiB resident");
}
