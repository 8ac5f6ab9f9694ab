//! Fairness: what a cycle buys, for every rule of the natives allow-list and
//! the host calls (`timerhost_vm::natives::workloads`), at sizes n, 4n and
//! 16n. Prints nanoseconds per cycle of each native's marginal work (a call
//! with the operation repeated k times minus one with only its setup), the
//! median, the worst ten, every entry beyond 3× the median and every entry
//! whose ns/cycle at 16n exceeds 1.5× its value at n, and the ratio of a
//! block filled with the worst entry to one filled with ordinary code (equal
//! cycles, so the ratio of their ns/cycle).
//!
//! `cargo bench -p timerhost-vm --bench fairness --ignore-rust-version`
//! (`-- NAME` runs the workloads whose native contains NAME; `-- --cycles`
//! times nothing and prints what every workload is charged instead, one
//! line per size and repeat count: the meter's fingerprint, which a change
//! meant to keep behaviour, like #43's move, must leave identical).

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

use std::time::{Duration, Instant};

use timerhost_types::{Address, Invocation, Value};
use timerhost_vm::natives::workloads::{Workload, ORDINARY, WORKLOADS};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}\n")).collect()
}

fn source(workload: &Workload) -> String {
    let setup = if workload.setup.is_empty() {
        "pass"
    } else {
        workload.setup
    };
    format!(
        "class Fair:\n    def run(self, n, k):\n{}        for _ in range(k):\n            {}\n        return 0\n",
        indent(setup, "        "),
        workload.op
    )
}

struct Runner {
    vm: Vm,
    host: MockHost,
    actor: Address,
}

impl Runner {
    fn new(workload: &Workload) -> Runner {
        let vm = Vm::new().expect("the allocator is installed");
        let mut host = MockHost::new();
        let actor = Address([9; 20]);
        let source = source(workload);
        host.install_actor(actor, &source);
        let deployed = vm.deploy(&mut host, &actor, &source, &[], limits());
        assert!(
            deployed.is_success(),
            "{}: {:?}",
            workload.native,
            deployed.result
        );
        Runner { vm, host, actor }
    }

    /// Best time of three and the cycles of `run(n, k)`.
    fn measure(&mut self, n: u64, k: u64) -> Option<(Duration, u64)> {
        let mut best: Option<(Duration, u64)> = None;
        for _ in 0..3 {
            let started = Instant::now();
            let outcome = self.vm.call(
                &mut self.host,
                &self.actor,
                "run",
                &[Value::int(n), Value::int(k)],
                limits(),
                Invocation::Transaction,
            );
            let elapsed = started.elapsed();
            if !outcome.is_success() {
                eprintln!("  run({n}, {k}) failed: {:?}", outcome.result);
                return None;
            }
            if best.is_none_or(|(t, _)| elapsed < t) {
                best = Some((elapsed, outcome.cycles_used));
            }
        }
        best
    }

    /// `(succeeded, cycles, cells)` of one `run(n, k)`.
    fn charged(&mut self, n: u64, k: u64) -> (bool, u64, u64) {
        let outcome = self.vm.call(
            &mut self.host,
            &self.actor,
            "run",
            &[Value::int(n), Value::int(k)],
            limits(),
            Invocation::Transaction,
        );
        (
            outcome.is_success(),
            outcome.cycles_used,
            outcome.cells_used,
        )
    }

    /// Marginal ns per cycle of the operation at size `n`.
    fn ns_per_cycle(&mut self, n: u64) -> Option<f64> {
        let (_, base_cycles) = self.measure(n, 0)?;
        let (_, one_cycles) = self.measure(n, 1)?;
        let per_op = one_cycles.saturating_sub(base_cycles).max(1);
        let k = (2_000_000 / per_op).clamp(3, 20_000);
        let (base_time, base_cycles) = self.measure(n, 0)?;
        let (time, cycles) = self.measure(n, k)?;
        let cycles = cycles.saturating_sub(base_cycles).max(1);
        let nanos = time.saturating_sub(base_time).as_nanos() as f64;
        Some(nanos / cycles as f64)
    }
}

fn limits() -> ExecLimits {
    ExecLimits::new(2_000_000_000, 1_000_000_000_000)
}

/// `--cycles`: what every workload is charged at n, 4n and 16n, with the
/// operation run 0, 1 and 3 times.
fn print_charges(filter: Option<&str>) {
    for workload in WORKLOADS.iter().chain([&ORDINARY]) {
        if filter.is_some_and(|f| !workload.native.contains(f)) {
            continue;
        }
        let mut runner = Runner::new(workload);
        for factor in [1u64, 4, 16] {
            for k in [0u64, 1, 3] {
                let n = workload.n * factor;
                let (ok, cycles, cells) = runner.charged(n, k);
                println!(
                    "{} n={n} k={k} ok={ok} cycles={cycles} cells={cells}",
                    workload.native
                );
            }
        }
    }
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    if std::env::args().any(|a| a == "--cycles") {
        print_charges(filter.as_deref());
        return;
    }
    // Warm the machine up first (CPU frequency, caches, the allocator): on
    // this shared box the first entries measured cold ran up to 2× slower
    // than the same entries later in the run.
    let warm_up = Instant::now();
    while warm_up.elapsed() < Duration::from_secs(3) {
        let _ = Runner::new(&ORDINARY).ns_per_cycle(1);
    }
    let mut rows: Vec<(&str, [f64; 3])> = Vec::new();
    for workload in WORKLOADS {
        if filter
            .as_ref()
            .is_some_and(|f| !workload.native.contains(f.as_str()))
        {
            continue;
        }
        let mut runner = Runner::new(workload);
        let mut row = [f64::NAN; 3];
        for (slot, factor) in [1u64, 4, 16].into_iter().enumerate() {
            if let Some(ns) = runner.ns_per_cycle(workload.n * factor) {
                row[slot] = ns;
            }
        }
        println!(
            "{:<28} {:>8.1} {:>8.1} {:>8.1}",
            workload.native, row[0], row[1], row[2]
        );
        rows.push((workload.native, row));
    }
    let ordinary = Runner::new(&ORDINARY).ns_per_cycle(1).unwrap_or(f64::NAN);
    println!("{:<28} {:>8.1}", "ordinary (a mixed loop body)", ordinary);

    let mut all: Vec<f64> = rows
        .iter()
        .flat_map(|(_, r)| r.iter().copied())
        .filter(|v| v.is_finite())
        .collect();
    all.sort_by(f64::total_cmp);
    let median = all.get(all.len() / 2).copied().unwrap_or(f64::NAN);
    println!(
        "\nmedian: {median:.1} ns/cycle over {} measurements",
        all.len()
    );
    let mut by_worst: Vec<(&str, f64)> = rows
        .iter()
        .map(|(n, r)| {
            (
                *n,
                r.iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .fold(0.0, f64::max),
            )
        })
        .collect();
    by_worst.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("worst ten:");
    for (native, worst) in by_worst.iter().take(10) {
        println!(
            "  {native:<28} {worst:>8.1} ({:.2}× the median)",
            worst / median
        );
    }
    let over: Vec<String> = by_worst
        .iter()
        .filter(|(_, w)| *w > 3.0 * median)
        .map(|(n, w)| format!("{n} {:.2}×", w / median))
        .collect();
    println!(
        "beyond 3× the median: {}",
        if over.is_empty() {
            "none".into()
        } else {
            over.join(", ")
        }
    );
    let growing: Vec<String> = rows
        .iter()
        .filter(|(_, r)| r[0].is_finite() && r[2].is_finite() && r[2] > 1.5 * r[0])
        .map(|(n, r)| format!("{n} {:.2}×", r[2] / r[0]))
        .collect();
    println!(
        "growing (16n > 1.5× n): {}",
        if growing.is_empty() {
            "none".into()
        } else {
            growing.join(", ")
        }
    );
    let failed: Vec<&str> = rows
        .iter()
        .filter(|(_, r)| r.iter().any(|v| !v.is_finite()))
        .map(|(n, _)| *n)
        .collect();
    if !failed.is_empty() {
        println!("not measured at every size: {}", failed.join(", "));
    }
    if let Some((native, worst)) = by_worst.first() {
        println!(
            "block of {native} vs a block of ordinary code (same cycles): {:.2}×",
            worst / ordinary
        );
    }
}
