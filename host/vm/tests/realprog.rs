//! Ordinary programs as metered actor calls, for before/after timing of
//! the VM (#29: ordinary code must not get slower). Wall time per call,
//! best of 7, and the cycles charged.
//!
//! `cargo test --release -p timerhost-vm --test realprog -- --ignored --nocapture`

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

use std::time::{Duration, Instant};

use timerhost_types::{Address, Invocation, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

/// The five programs, as `benches/programs` has them (one text of each: the
/// program bench runs the same files).
const PROGRAMS: &[(&str, &str)] = &[
    (
        "scheduler",
        include_str!("../benches/programs/scheduler.py"),
    ),
    ("records", include_str!("../benches/programs/records.py")),
    ("queens", include_str!("../benches/programs/queens.py")),
    ("ledger", include_str!("../benches/programs/ledger.py")),
    ("shuffle", include_str!("../benches/programs/shuffle.py")),
];

fn limits() -> ExecLimits {
    ExecLimits::new(2_000_000_000, 1_000_000)
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn real_programs() {
    let sizes = [
        ("scheduler", 300),
        ("records", 2000),
        ("queens", 7),
        ("ledger", 5000),
        ("shuffle", 20000),
    ];
    for (name, source) in PROGRAMS {
        let n = sizes.iter().find(|(s, _)| s == name).unwrap().1;
        let vm = Vm::new().unwrap();
        let mut host = MockHost::new();
        let actor = Address([7; 20]);
        host.install_actor(actor, source);
        let deployed = vm.deploy(&mut host, &actor, source, &[], limits());
        assert!(deployed.is_success(), "{name}: {:?}", deployed.result);
        let mut best = Duration::MAX;
        let mut cycles = 0;
        for _ in 0..7 {
            let started = Instant::now();
            let outcome = vm.call(
                &mut host,
                &actor,
                "run",
                &[Value::int(n)],
                limits(),
                Invocation::Transaction,
            );
            let elapsed = started.elapsed();
            assert!(outcome.is_success(), "{name}: {:?}", outcome.result);
            best = best.min(elapsed);
            cycles = outcome.cycles_used;
        }
        println!(
            "REAL {name:<10} {:>8.2} ms  {cycles:>9} cycles  {:.1} ns/cycle",
            best.as_secs_f64() * 1e3,
            best.as_nanos() as f64 / cycles as f64
        );
    }
}
