//! Determinism: the reference actor's results, cycles, cells and final state
//! are identical across runs and across processes, and its cycle count is
//! pinned so any change to the cost model shows up in review.

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use common::{addr, call, deploy_at, deployed, limits};
use timerhost_types::{ErrorKind, Invocation, Value};
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
        let outcome = vm.call(
            &mut host,
            &actor,
            "work",
            &[Value::int(n)],
            limits(),
            Invocation::Transaction,
        );
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
    let outcome = vm.call(
        &mut host,
        &actor,
        "work",
        &[Value::int(100)],
        limits(),
        Invocation::Transaction,
    );
    assert!(outcome.is_success(), "{:?}", outcome.result);
    assert_eq!((outcome.cycles_used, outcome.cells_used), PINNED_WORK_100);
}

const PINNED_WORK_100: (u64, u64) = (2321, 267);

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
                deploy_at(&vm, &mut host, warm_actor, WARMUP, &[], limits);
                for n in [10, 1000, 20_000] {
                    let _ = vm.call(
                        &mut host,
                        &warm_actor,
                        "run",
                        &[Value::int(n)],
                        limits,
                        Invocation::Transaction,
                    );
                }
            }
            let source = format!("class Hostile:\n    def run(self):\n{workload}");
            let actor = addr(1);
            deploy_at(&vm, &mut host, actor, &source, &[], limits);
            (0..2)
                .map(|_| {
                    let o = vm.call(
                        &mut host,
                        &actor,
                        "run",
                        &[],
                        limits,
                        Invocation::Transaction,
                    );
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

/// What an execution is charged for memory must not depend on what ran before
/// it on the same thread: each workload's peak is measured on a fresh
/// interpreter and again after a polluter that leaves behind what RustPython
/// keeps across executions (cyclic garbage, dead dicts with big tables, big
/// ints and ranges on free lists, a slice holding a big list, grown free
/// lists).
#[test]
fn memory_peak_does_not_depend_on_earlier_executions() {
    const WORKLOADS: &[&str] = &[
        "        for i in range(n):\n            a = [0] * 50\n            a.append(a)\n        return 1\n",
        "        d = {str(i): i for i in range(n)}\n        e = {i: [i] for i in range(n)}\n        return len(d) + len(e)\n",
        "        xs = [i * 1000003 for i in range(n)]\n        t = 0\n        for r in [range(i, i + 3) for i in range(n // 10)]:\n            t += len(xs[r[0]:r[2]])\n        return t\n",
        "        ts = [(i, str(i), [i]) for i in range(n)]\n        fs = [i / 7 for i in range(n)]\n        return len(ts) + len(fs)\n",
    ];
    const POLLUTER: &str = "class Polluter:\n    def run(self, n):\n        big = [0] * n\n        try:\n            [1][:big]\n        except TypeError:\n            pass\n        d = {i: i for i in range(n)}\n        ints = [2 ** 4000 + i for i in range(200)]\n        rs = [range(2 ** 4000, 2 ** 4001) for i in range(10)]\n        ts = [(i, i) for i in range(n)]\n        fs = [i / 3 for i in range(n)]\n        for i in range(n // 10):\n            a = [0] * 30\n            a.append(a)\n        return len(d) + len(ints) + len(rs) + len(ts) + len(fs)\n";
    let limits = ExecLimits {
        cycles: 200_000_000,
        cells: 1_000_000,
        memory_bytes: 256 * 1024 * 1024,
    };
    let run = move |workload: &'static str, polluter_sizes: &'static [i64]| {
        std::thread::spawn(move || {
            let vm = Vm::new().unwrap();
            let mut host = MockHost::new();
            let polluter = addr(9);
            deploy_at(&vm, &mut host, polluter, POLLUTER, &[], limits);
            for &n in polluter_sizes {
                let o = vm.call(
                    &mut host,
                    &polluter,
                    "run",
                    &[Value::int(n)],
                    limits,
                    Invocation::Transaction,
                );
                assert!(o.is_success(), "{o:?}");
            }
            // A host of its own: only the interpreter's history differs.
            let mut host = MockHost::new();
            let source = format!("class Workload:\n    def run(self, n):\n{workload}");
            let actor = addr(1);
            deploy_at(&vm, &mut host, actor, &source, &[], limits);
            let o = vm.call(
                &mut host,
                &actor,
                "run",
                &[Value::int(5_000)],
                limits,
                Invocation::Transaction,
            );
            (
                o.error_kind(),
                o.cycles_used,
                timerhost_vm::alloc::last_peak_bytes(),
            )
        })
        .join()
        .unwrap()
    };
    for workload in WORKLOADS {
        let fresh = run(workload, &[]);
        assert_eq!(fresh.0, None, "{workload}: {fresh:?}");
        for polluter_sizes in [&[0][..], &[20_000], &[20_000, 3_000]] {
            let polluted = run(workload, polluter_sizes);
            assert_eq!(
                fresh, polluted,
                "{workload} after polluters {polluter_sizes:?}: (outcome, cycles, peak bytes)"
            );
        }
    }
}

/// RustPython's collector counts allocations process-wide: with automatic
/// collection on, another thread's executions (RPC dry runs) would decide when
/// cyclic garbage is freed inside this one. The peak of a cycle-building loop
/// must be the same whether or not another thread is busy making garbage.
#[test]
fn memory_peak_does_not_depend_on_other_threads() {
    const CYCLES: &str = "class Cycles:\n    def run(self, n):\n        for i in range(n):\n            a = [0] * 20\n            a.append(a)\n        return 1\n";
    let limits = ExecLimits {
        cycles: 200_000_000,
        cells: 1_000_000,
        memory_bytes: 256 * 1024 * 1024,
    };
    let peak = move || {
        let vm = Vm::new().unwrap();
        let mut host = MockHost::new();
        let actor = addr(1);
        deploy_at(&vm, &mut host, actor, CYCLES, &[], limits);
        let o = vm.call(
            &mut host,
            &actor,
            "run",
            &[Value::int(3_000)],
            limits,
            Invocation::Transaction,
        );
        assert!(o.is_success(), "{o:?}");
        (o.cycles_used, timerhost_vm::alloc::last_peak_bytes())
    };
    let alone = std::thread::spawn(peak).join().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let vm = Vm::new().unwrap();
            let mut host = MockHost::new();
            let actor = addr(2);
            deploy_at(&vm, &mut host, actor, CYCLES, &[], limits);
            let mut runs = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || runs < 3 {
                let _ = vm.call(
                    &mut host,
                    &actor,
                    "run",
                    &[Value::int(500)],
                    limits,
                    Invocation::Transaction,
                );
                runs += 1;
            }
        })
    };
    let beside_busy: Vec<_> = (0..3)
        .map(|_| std::thread::spawn(peak).join().unwrap())
        .collect();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    busy.join().unwrap();
    for other in beside_busy {
        assert_eq!(
            alone, other,
            "(cycles, peak bytes) alone vs beside a busy thread"
        );
    }
}

/// RustPython specialises warm instructions (a class call, a store, a
/// method call); no specialisation may change what a call is charged, or a
/// warm node and a cold one would write different receipts (#30: a class
/// call once cost 10 cycles less from the third call on).
#[test]
fn repeated_calls_cost_the_same_once_warm() {
    let source = r#"
class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y
    def moved(self, d):
        return Point(self.x + d, self.y)
class Plain:
    pass
class Failure(Exception):
    def __init__(self, m):
        super().__init__(m)
@actor
class A:
    def go(self, n):
        out = []
        d = {}
        for i in range(n):
            p = Point(i, i).moved(1)
            out.append(p.x)
            d[i] = p
            out[-1] = p.y
            Plain()
            try:
                raise Failure(i)
            except Failure:
                pass
        return len(out) + len(d)
"#;
    let (vm, mut host, actor) = deployed(source, &[]);
    let cycles: Vec<u64> = (0..5)
        .map(|_| {
            let outcome = call(&vm, &mut host, &actor, "go", &[Value::int(20)]);
            assert!(outcome.is_success(), "{:?}", outcome.result);
            outcome.cycles_used
        })
        .collect();
    assert!(
        cycles.windows(2).all(|pair| pair[0] == pair[1]),
        "cycles changed as the code warmed up: {cycles:?}"
    );
}

/// The real programs of the benchmark (`benches/programs/*.py`, sizes above
/// ten at a twentieth): each call of one costs what the first did.
#[test]
fn every_bench_program_costs_the_same_once_warm() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("the programs") {
        let path = entry.expect("an entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("py") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("readable");
        let n: i64 = source
            .lines()
            .find_map(|line| line.strip_prefix("# bench: n = "))
            .and_then(|n| n.trim().parse().ok())
            .expect("a `# bench: n = N` line");
        // Small sizes (queens, fannkuch) are kept: they are not scales.
        let n = if n <= 10 { n } else { n / 20 };
        let limits = ExecLimits {
            cycles: 400_000_000,
            cells: 1_000_000,
            memory_bytes: 256 << 20,
        };
        let vm = Vm::new().unwrap();
        let mut host = MockHost::new();
        deploy_at(&vm, &mut host, addr(1), &source, &[], limits);
        let cycles: Vec<u64> = (0..3)
            .map(|_| {
                let outcome = vm.call(
                    &mut host,
                    &addr(1),
                    "run",
                    &[Value::int(n)],
                    limits,
                    Invocation::Transaction,
                );
                assert!(outcome.is_success(), "{path:?}: {:?}", outcome.result);
                outcome.cycles_used
            })
            .collect();
        assert!(
            cycles.windows(2).all(|pair| pair[0] == pair[1]),
            "{path:?}: {cycles:?}"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} programs found");
}

/// No value an actor can make shows a memory address: built-in types
/// without a `repr` of their own (iterators, views, `map`, `zip`, …)
/// inherited `object`'s, which printed `<map object at 0x39183d0db60>` —
/// a different value on every node (#47).
#[test]
fn no_repr_shows_a_memory_address() {
    let source = "class Reprs:\n    def run(self):\n        d = {1: 2}\n        values = [map(abs, []), zip(), filter(None, []), enumerate([]), iter([]), iter(()), iter(range(3)), iter('ab'), reversed([]), d.keys(), d.values(), d.items(), iter(d), iter({1}), object(), (x for x in [])]\n        return [repr(v) for v in values] + [str(v) for v in values] + [f'{v}' for v in values]\n";
    let (vm, mut host, actor) = deployed(source, &[]);
    let outcome = call(&vm, &mut host, &actor, "run", &[]);
    let Ok(Value::List(texts)) = &outcome.result else {
        panic!("{:?}", outcome.result);
    };
    assert_eq!(texts.len(), 48);
    for text in texts {
        let Value::Str(text) = text else {
            panic!("{text:?}")
        };
        assert!(!text.contains(" at 0x"), "{text}");
    }
}
