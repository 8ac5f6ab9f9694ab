//! Rough throughput numbers (run explicitly; they are not assertions):
//! `cargo test --release -p timerhost-vm --test bench -- --ignored --nocapture`.
//! Results are recorded in docs/METERING.md ("Measured overhead") and
//! docs/PERFORMANCE.md; `cost_rates` prints what a cycle buys for the
//! operations METERING.md "Size surcharges" quotes.

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use std::time::{Duration, Instant};

use common::addr;
use rustpython_vm::scope::Scope;
use timerhost_types::{Invocation, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

/// Arithmetic loop: the iterator's charge per iteration, no guards (`i * 2`
/// is an exempt loop index product, the rest number-exempt).
const ARITHMETIC: &str =
    "    total = 0\n    for i in range(n):\n        total += i * 2 % 7\n    return total\n";
/// Assignment loop: the iterator's charge per iteration, no guards.
const ASSIGNMENT: &str =
    "    total = 0\n    for i in range(n):\n        total = i\n    return total\n";
const ITERATIONS: u64 = 100_000;
/// Each loop figure is the best of this many runs.
const ROUNDS: usize = 5;

fn indent(body: &str) -> String {
    body.lines().map(|l| format!("    {l}\n")).collect()
}

fn unmetered(name: &str, body: &str) -> Duration {
    let plain = rustpython_vm::Interpreter::builder(Default::default()).build();
    plain.enter(|vm| {
        let code = format!("def {name}(n):\n{body}\n{name}({ITERATIONS})\n");
        let code = vm
            .compile(&code, rustpython_vm::compiler::Mode::Exec, "<bench>")
            .unwrap();
        let started = Instant::now();
        vm.run_code_obj(code, Scope::with_builtins(None, vm.ctx.new_dict(), vm))
            .unwrap();
        started.elapsed()
    })
}

fn cpython(body: &str) -> Option<f64> {
    let script = format!(
        "import time\ndef work(n):\n{body}\nbest=None\nfor _ in range({ROUNDS}):\n    s=time.perf_counter()\n    work({ITERATIONS})\n    t=time.perf_counter()-s\n    best=t if best is None else min(best,t)\nprint(best)"
    );
    let output = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .ok()?;
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn throughput() {
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(1);
    let source = format!(
        "class Bench:\n    def noop(self):\n        return 1\n    def arithmetic(self, n):\n{}    def assignment(self, n):\n{}",
        indent(ARITHMETIC),
        indent(ASSIGNMENT)
    );
    host.install_actor(actor, &source);
    let limits = ExecLimits::new(u64::MAX / 2, 1_000_000);
    assert!(vm
        .deploy(&mut host, &actor, &source, &[], limits)
        .is_success());

    let calls = 20_000;
    let started = Instant::now();
    for _ in 0..calls {
        assert!(vm
            .call(
                &mut host,
                &actor,
                "noop",
                &[],
                limits,
                Invocation::Transaction
            )
            .is_success());
    }
    let per_call = started.elapsed() / calls;
    println!(
        "trivial handler call: {per_call:?} ({:.0} calls/s)",
        1.0 / per_call.as_secs_f64()
    );

    // Best of ROUNDS, metered and unmetered interleaved, so a burst of load
    // from the shared machine does not land on one side of the ratio only.
    for (name, body) in [("arithmetic", ARITHMETIC), ("assignment", ASSIGNMENT)] {
        let mut metered = Duration::MAX;
        let mut plain = Duration::MAX;
        let mut cycles = 0;
        for _ in 0..ROUNDS {
            let started = Instant::now();
            let outcome = vm.call(
                &mut host,
                &actor,
                name,
                &[Value::int(ITERATIONS)],
                limits,
                Invocation::Transaction,
            );
            metered = metered.min(started.elapsed());
            assert!(outcome.is_success());
            cycles = outcome.cycles_used;
            plain = plain.min(unmetered(name, body));
        }
        let mut line = format!(
            "{name} loop x{ITERATIONS}: metered {metered:?} ({cycles} cycles), unmetered {plain:?}, ratio {:.2}",
            metered.as_secs_f64() / plain.as_secs_f64()
        );
        if let Some(seconds) = cpython(body) {
            line.push_str(&format!(
                ", CPython {seconds:.4}s, metered/CPython {:.1}",
                metered.as_secs_f64() / seconds
            ));
        }
        println!("{line}");
    }
}

/// Operations whose work grows with their input (setup, step, how many more
/// steps the second run does): nanoseconds per cycle charged (ordinary code
/// runs at 10–17 in release).
const RATES: &[(&str, &str, i64)] = &[
    ("s = 'ab' * 500000", "len(set(s))", 10),
    ("s = 'ab' * 500000", "s.translate({97: 98})", 10),
    ("s = 'ab' * 500000", "s.count('b')", 10),
    ("s = 'ab' * 500000", "s.replace('a', 'c')", 10),
    ("s = 'ab' * 500000", "s.expandtabs()", 10),
    ("s = 'ab' * 500000", "s.isalpha()", 10),
    ("big = list(range(20000))", "json.dumps(big)", 10),
    (
        "big = list(range(20000))",
        "json.loads(json.dumps(big))",
        10,
    ),
    ("xs = list(range(100))", "f'{xs}'", 2000),
    ("xs = list(range(100))", "str(xs)", 2000),
    (
        "a = 3 ** 2500\n        m = 7 ** 2200 + 2\n        e = 5 ** 2600",
        "pow(a, e, m)",
        3,
    ),
    (
        "a = 3 ** 2500\n        m = 7 ** 2200 + 2",
        "math.gcd(a, m)",
        10,
    ),
    ("b = b'ab' * 500000", "keccak256(b)", 10),
    ("xs = list(range(100))", "lambda: 1", 20000),
];

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn cost_rates() {
    for &(setup, step, extra) in RATES {
        let source = format!(
            "import json\nimport math\nfrom hashing import keccak256\nclass Rates:\n    def run(self, n):\n        {setup}\n        for _ in range(n):\n            {step}\n"
        );
        let vm = Vm::new().unwrap();
        let mut host = MockHost::new();
        let actor = addr(1);
        let limits = ExecLimits::new(u64::MAX / 2, 1_000_000);
        common::deploy_at(&vm, &mut host, actor, &source, &[], limits);
        let mut run = |n: i64| {
            let started = Instant::now();
            let outcome = vm.call(
                &mut host,
                &actor,
                "run",
                &[Value::int(n)],
                limits,
                Invocation::Transaction,
            );
            assert!(outcome.is_success(), "{step}: {:?}", outcome.result);
            (started.elapsed(), outcome.cycles_used)
        };
        // Median of 5 of the difference between 1 + extra steps and 1.
        let mut samples: Vec<(f64, u64)> = (0..5)
            .map(|_| {
                let (t1, c1) = run(1);
                let (t2, c2) = run(1 + extra);
                let nanos = t2.saturating_sub(t1).as_nanos() as f64 / extra as f64;
                (nanos, (c2 - c1) / extra as u64)
            })
            .collect();
        samples.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (nanos, cycles) = samples[2];
        println!(
            "{step:30} {cycles:>9} cycles {:>10.1} µs  {:>6.1} ns per cycle",
            nanos / 1e3,
            nanos / cycles.max(1) as f64
        );
    }
}

/// `json.loads` of the ~900 KB documents of hostile.rs h54
/// (`common::JSON_DOCUMENTS`), and `json.dumps` of ~900 KB of big ints: per shape, the
/// time and cycles a call that parses (or writes) the document takes beyond
/// one that only builds the value (best of 5 each), and the nanoseconds per
/// cycle that leaves.
#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn json_loads() {
    let source = common::JSON_DOCUMENTS;
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(1);
    let limits = ExecLimits::new(u64::MAX / 2, 1_000_000);
    common::deploy_at(&vm, &mut host, actor, source, &[], limits);
    let mut run = |shape: i64, parse: i64| {
        let started = Instant::now();
        let outcome = vm.call(
            &mut host,
            &actor,
            "run",
            &[Value::int(shape), Value::int(parse)],
            limits,
            Invocation::Transaction,
        );
        let Ok(Value::Int(length)) = outcome.result else {
            panic!("{shape}: {:?}", outcome.result);
        };
        (started.elapsed(), outcome.cycles_used, length)
    };
    for (shape, name) in [
        (1, "loads, one 900 KB string"),
        (2, "loads, 180,000 short strings"),
        (3, "loads, an object of 81,800 members"),
        (4, "loads, 209 ints of 4,299 digits"),
        (5, "dumps, 45 ints of 19,568 digits"),
    ] {
        let (mut built, mut parsed) = (Duration::MAX, Duration::MAX);
        let (mut cycles, mut length) = (0, 0.into());
        for _ in 0..5 {
            let (time, built_cycles, _) = run(shape, 0);
            built = built.min(time);
            let (time, parsed_cycles, parsed_length) = run(shape, 1);
            parsed = parsed.min(time);
            cycles = parsed_cycles - built_cycles;
            length = parsed_length;
        }
        let took = parsed.saturating_sub(built);
        println!(
            "json.{name} (len {length}): {took:?}, {cycles} cycles, {:.1} ns per cycle",
            took.as_nanos() as f64 / cycles as f64
        );
    }
}
