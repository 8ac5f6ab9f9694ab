//! The child's side: runs one program metered in this process and reports
//! what a cycle bought and how far the process grew. The parent
//! ([`crate::runner`]) runs every program in a child of its own, so a crash
//! (an abort, a stack overflow, a signal) ends that child alone and is
//! reported as the worst finding of all.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use timerhost_types::{Address, Invocation, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

use crate::program::Program;

/// Cycles one measured call may use: about 0.1–1 s of ordinary code, so a
/// program's setup at the generator's largest sizes fits, and a block's
/// largest transaction (400M) is not needed to see a price's slope.
pub const CALL_CYCLES: u64 = 60_000_000;

/// Marginal cycles the repeated operation is sized to (the fairness
/// benchmark's target): enough that the timer's noise is small.
const TARGET_MARGINAL_CYCLES: u64 = 2_000_000;

/// The marginal time must be at least the base call's time over this for
/// its ratio to count (else the whole call's is used).
const MARGINAL_SHARE_OF_BASE: u32 = 4;

/// Below this much marginal time a ratio is noise; the whole call's ratio
/// is used only when the call took at least this long too.
const MIN_TIMED: Duration = Duration::from_micros(500);

/// What the child is asked to measure.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Request {
    /// A generated (or seed, or finding) program: `run(n, k)`.
    Fuzz(Program),
    /// A program of the ordinary suite: its source and `run(n)`'s `n`.
    Ordinary {
        /// The program's name.
        name: String,
        /// Its actor source.
        source: String,
        /// `run`'s argument.
        n: u64,
    },
}

/// What the child measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Report {
    /// Nanoseconds per cycle of the work measured: the operation's marginal
    /// cost (k runs minus none), or the whole call's when that is larger and
    /// long enough to time.
    pub ns_per_cycle: f64,
    /// Cycles of the measured call.
    pub cycles: u64,
    /// Its wall time in nanoseconds.
    pub nanos: u64,
    /// How often the operation ran in it.
    pub k: u64,
    /// How the call ended: "ok", or the failure kind and message.
    pub outcome: String,
    /// Peak net bytes the metered allocator counted in the last execution.
    pub counted_peak_bytes: u64,
    /// How far the process's resident set grew past what it held after the
    /// deploy (`VmHWM` − `VmRSS`): what a node would have to hold.
    pub rss_growth_bytes: u64,
}

fn limits() -> ExecLimits {
    ExecLimits::new(CALL_CYCLES, 1_000_000_000)
}

/// A field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`).
pub fn proc_status_bytes(field: &str) -> u64 {
    proc_status_of("self", field)
}

/// A field of `/proc/<pid>/status` in bytes (0 when unreadable).
pub fn proc_status_of(pid: &str, field: &str) -> u64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

struct Actor {
    vm: Vm,
    host: MockHost,
    address: Address,
}

impl Actor {
    fn deploy(source: &str) -> Result<Actor, String> {
        let vm = Vm::new().map_err(|e| e.to_string())?;
        let mut host = MockHost::new();
        let address = Address([7; 20]);
        host.install_actor(address, source);
        let deployed = vm.deploy(&mut host, &address, source, &[], limits());
        if !deployed.is_success() {
            return Err(describe(&deployed));
        }
        Ok(Actor { vm, host, address })
    }

    fn call(&mut self, args: &[Value]) -> (Duration, timerhost_vm::Outcome) {
        let started = Instant::now();
        let outcome = self.vm.call(
            &mut self.host,
            &self.address,
            "run",
            args,
            limits(),
            Invocation::Transaction,
        );
        (started.elapsed(), outcome)
    }

    /// The fastest of `rounds` calls, with its outcome.
    fn best(&mut self, args: &[Value], rounds: usize) -> (Duration, timerhost_vm::Outcome) {
        let mut best = self.call(args);
        for _ in 1..rounds {
            let next = self.call(args);
            if next.0 < best.0 {
                best = next;
            }
        }
        best
    }
}

fn describe(outcome: &timerhost_vm::Outcome) -> String {
    match &outcome.result {
        Ok(_) => "ok".into(),
        Err(error) => {
            let first_line = error.message.lines().next().unwrap_or("");
            let short: String = first_line.chars().take(160).collect();
            format!("{:?}: {short}", error.kind)
        }
    }
}

/// Measures `request` in this process.
pub fn measure(request: &Request) -> Report {
    let rss_before;
    let mut report = match request {
        Request::Fuzz(program) => {
            let mut actor = match Actor::deploy(&program.source()) {
                Ok(actor) => actor,
                Err(refused) => {
                    return Report {
                        outcome: format!("deploy refused: {refused}"),
                        ..Report::default()
                    }
                }
            };
            rss_before = proc_status_bytes("VmRSS");
            measure_fuzz(&mut actor, program.n)
        }
        Request::Ordinary { source, n, .. } => {
            let mut actor = match Actor::deploy(source) {
                Ok(actor) => actor,
                Err(refused) => {
                    return Report {
                        outcome: format!("deploy refused: {refused}"),
                        ..Report::default()
                    }
                }
            };
            rss_before = proc_status_bytes("VmRSS");
            let args = [Value::int(*n)];
            actor.call(&args);
            let (time, outcome) = actor.best(&args, 3);
            Report {
                ns_per_cycle: time.as_nanos() as f64 / outcome.cycles_used.max(1) as f64,
                cycles: outcome.cycles_used,
                nanos: time.as_nanos() as u64,
                k: 1,
                outcome: describe(&outcome),
                ..Report::default()
            }
        }
    };
    report.counted_peak_bytes = timerhost_vm::alloc::last_peak_bytes();
    report.rss_growth_bytes = proc_status_bytes("VmHWM").saturating_sub(rss_before);
    report
}

fn measure_fuzz(actor: &mut Actor, n: u64) -> Report {
    let args = |k: u64| [Value::int(n), Value::int(k)];
    let (_, base) = actor.call(&args(0));
    let (_, once) = actor.call(&args(1));
    let (_, twice) = actor.call(&args(2));
    // The steady cost of one more operation: the first may do work the
    // rest do not (drain an iterator, fill a cache), and sizing `k` by it
    // left a marginal too small to time against a heavy setup.
    let first = once.cycles_used.saturating_sub(base.cycles_used);
    let steady = twice.cycles_used.saturating_sub(once.cycles_used);
    let per_op = if twice.is_success() { steady } else { first }.max(1);
    // An operation that ends the call (an abort) is measured once.
    let k = if once.is_success() {
        (TARGET_MARGINAL_CYCLES / per_op).clamp(1, 20_000)
    } else {
        1
    };
    let (base_time, base) = actor.best(&args(0), 3);
    let (time, outcome) = actor.best(&args(k), 3);
    let marginal_cycles = outcome.cycles_used.saturating_sub(base.cycles_used).max(1);
    let marginal_time = time.saturating_sub(base_time);
    // A setup that fails (refused at some size) leaves nothing marginal to
    // time: the whole call is what it bought.
    // A marginal much smaller than the call around it is the call's noise
    // (a setup of 40 ms moves by a millisecond between runs).
    let marginal = if base.is_success()
        && marginal_time >= MIN_TIMED
        && marginal_time * MARGINAL_SHARE_OF_BASE >= base_time
    {
        marginal_time.as_nanos() as f64 / marginal_cycles as f64
    } else {
        0.0
    };
    let whole = if time >= MIN_TIMED * 10 {
        time.as_nanos() as f64 / outcome.cycles_used.max(1) as f64
    } else {
        0.0
    };
    Report {
        ns_per_cycle: marginal.max(whole),
        cycles: outcome.cycles_used,
        nanos: time.as_nanos() as u64,
        k,
        outcome: describe(&outcome),
        ..Report::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_status_reads_this_process() {
        assert!(proc_status_bytes("VmRSS") > 0);
        assert!(proc_status_bytes("VmHWM") >= proc_status_bytes("VmRSS") / 2);
        assert_eq!(proc_status_bytes("NoSuchField"), 0);
    }
}
