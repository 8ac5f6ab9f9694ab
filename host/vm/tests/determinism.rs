//! Determinism: the reference actor's results, cycles, cells and final state
//! are identical across runs and across processes, and its cycle count is
//! pinned so any change to the cost model shows up in review.

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use common::{addr, limits};
use timerhost_types::{ErrorKind, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

const REFERENCE: &str = r#"
import pvm_host
import json

class Reference:
    def deploy(self):
        self.storage["count"] = 0

    def work(self, n):
        total = 0
        squares = [i * i for i in range(n)]
        for i in range(n):
            if i % 3 == 0:
                total += squares[i]
            else:
                total -= i
        words = {"w" + str(i): i for i in range(10)}
        ordered = sorted(words.keys())
        self.storage["count"] = self.storage["count"] + 1
        self.storage["last"] = {"total": total, "first": ordered[0], "set": sorted({3, 1, 2})}
        pvm_host.emit("Worked", {"n": n, "total": total})
        return json.dumps({"total": total, "keys": ordered[:3]})
"#;

/// Runs the reference scenario and renders everything observable.
fn scenario() -> String {
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(1);
    host.install_actor(actor, REFERENCE);
    let mut rendered = String::new();
    let deploy = vm.deploy(&mut host, &actor, REFERENCE, &[], limits());
    rendered.push_str(&format!(
        "deploy {:?} {} {}\n",
        deploy.result, deploy.cycles_used, deploy.cells_used
    ));
    for n in [10, 100, 1000] {
        let outcome = vm.call(&mut host, &actor, "work", &[Value::int(n)], limits());
        rendered.push_str(&format!(
            "work({n}) {:?} events={:?} cycles={} cells={}\n",
            outcome.result, outcome.events, outcome.cycles_used, outcome.cells_used
        ));
    }
    rendered.push_str(&format!("state {}\n", host.state_digest()));
    rendered
}

#[test]
fn same_result_in_repeated_runs() {
    assert_eq!(scenario(), scenario());
}

#[test]
fn same_result_in_another_thread() {
    let here = scenario();
    let there = std::thread::spawn(scenario).join().unwrap();
    assert_eq!(here, there);
}

#[test]
fn child_process_scenario() {
    if std::env::var_os("TIMERHOST_VM_DETERMINISM_CHILD").is_some() {
        println!("BEGIN\n{}END", scenario());
    }
}

#[test]
fn same_result_in_another_process() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process_scenario",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TIMERHOST_VM_DETERMINISM_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let start = stdout.find("BEGIN\n").expect("child printed the scenario") + "BEGIN\n".len();
    let end = stdout.find("END").unwrap();
    assert_eq!(&stdout[start..end], scenario());
}

/// Pinned cycle count of `work(100)`. If this fails, the cost model changed:
/// update the number *and* docs/METERING.md in the same change.
#[test]
fn reference_cycle_count_is_pinned() {
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(1);
    host.install_actor(actor, REFERENCE);
    assert!(vm
        .deploy(&mut host, &actor, REFERENCE, &[], limits())
        .is_success());
    let outcome = vm.call(&mut host, &actor, "work", &[Value::int(100)], limits());
    assert!(outcome.is_success(), "{:?}", outcome.result);
    assert_eq!((outcome.cycles_used, outcome.cells_used), PINNED_WORK_100);
}

const PINNED_WORK_100: (u64, u64) = (1805, 267);

/// Memory-bound executions (the budget trips, not the cycles) run on a cold
/// interpreter (fresh thread), on a warm one (after unrelated actors ran on
/// it), and twice in a row. Consensus needs the same outcome — kind, cycles
/// and cells at the abort — whatever the interpreter's history.
#[test]
fn out_of_memory_trips_at_the_same_point_on_cold_and_warm_interpreters() {
    const WORKLOADS: &[&str] = &[
        "        xs = []\n        while True:\n            xs.append('x' * 1000)\n",
        "        return len([x for x in range(10**9)])\n",
        "        d = {}\n        i = 0\n        while True:\n            d[str(i)] = [i, str(i)]\n            i += 1\n",
    ];
    const WARMUP: &str = "class Warm:\n    def run(self, n):\n        d = {}\n        for i in range(n):\n            d[str(i)] = [i] * 5 + [str(i) * 3]\n        return len(str(d)) + len(sorted(d))\n";
    let limits = ExecLimits {
        cycles: 200_000_000,
        cells: 1_000_000,
        memory_bytes: 8 * 1024 * 1024,
    };
    let run = move |workload: &'static str, warm: bool| -> Vec<(Option<ErrorKind>, u64, u64)> {
        std::thread::spawn(move || {
            let vm = Vm::new().unwrap();
            let mut host = MockHost::new();
            if warm {
                let warm_actor = addr(9);
                host.install_actor(warm_actor, WARMUP);
                assert!(vm
                    .deploy(&mut host, &warm_actor, WARMUP, &[], limits)
                    .is_success());
                for n in [10, 1000, 20_000] {
                    let _ = vm.call(&mut host, &warm_actor, "run", &[Value::int(n)], limits);
                }
            }
            let source = format!("class Hostile:\n    def run(self):\n{workload}");
            let actor = addr(1);
            host.install_actor(actor, &source);
            assert!(vm
                .deploy(&mut host, &actor, &source, &[], limits)
                .is_success());
            (0..2)
                .map(|_| {
                    let o = vm.call(&mut host, &actor, "run", &[], limits);
                    (o.error_kind(), o.cycles_used, o.cells_used)
                })
                .collect()
        })
        .join()
        .unwrap()
    };
    for workload in WORKLOADS {
        let cold = run(workload, false);
        let warm = run(workload, true);
        assert_eq!(
            cold[0].0,
            Some(ErrorKind::OutOfMemory),
            "{workload}: {cold:?}"
        );
        assert_eq!(
            cold[0], cold[1],
            "{workload}: second run on the same interpreter differs"
        );
        assert_eq!(
            cold[0], warm[0],
            "{workload}: warm interpreter differs from cold"
        );
    }
}
