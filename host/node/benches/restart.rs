//! Restart with 1,000,000 pending timers (issue 16): how long the real
//! `timerhost node` takes from process start to its first produced block,
//! and its peak resident memory, on a home whose sled database holds a
//! million pending timers.
//!
//! ```text
//! cargo bench -p timerhost-node --bench restart --ignore-rust-version
//! ```
//!
//! The setup (not timed) initialises a dev home and schedules the timers
//! through a Python actor, 20,000 per transaction, at a far height. Then
//! the `timerhost` binary of this build is started on that home three
//! times (`--json`, a block every 200 ms); each run is timed until its
//! `{"event": "block"}` line, its `VmHWM` (peak RSS) read from
//! `/proc/<pid>/status`, and it is stopped with SIGINT. Runs 1 and 3 first
//! drop the kernel's page cache when allowed (root), so the database is
//! read from disk. Targets: under 5 s and under 1 GiB.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use timerhost_chain::testing::{bench_builders, bench_genesis, BENCH_TICK_ACTOR};
use timerhost_node::home::Home;
use timerhost_timers::store;
use timerhost_types::{Address, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const PENDING: u64 = 1_000_000;
const PER_TX: u64 = 20_000;

fn setup(home: &Home) -> Address {
    let chain = home.init(&bench_genesis()).expect("init the home");
    let mut b = bench_builders();
    let proposer = Address([0xee; 20]);
    let produce = |txs: Vec<timerhost_types::SignedTransaction>| {
        let head = chain.head().unwrap();
        let p = chain
            .produce_block(&txs, head.timestamp_ms + 1, proposer)
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        for r in &p.executed.receipts {
            assert!(r.is_success(), "{:?}", r.error);
        }
        p.executed.receipts
    };
    let r = produce(vec![b[0].deploy(BENCH_TICK_ACTOR, vec![], 10u128.pow(23))]);
    let actor = r[0].created_actor.unwrap();
    // Far beyond any block the runs produce, within the default TTL.
    let far = chain.head().unwrap().height + 10_000;
    let started = Instant::now();
    for _ in 0..PENDING / PER_TX {
        produce(vec![b[0].call(
            actor,
            "arm",
            vec![Value::int(PER_TX), Value::int(far)],
            0,
        )]);
    }
    let live = store::live_count(&chain.store().state(), &actor).unwrap();
    assert_eq!(u64::from(live), PENDING);
    eprintln!(
        "setup: {PENDING} pending timers in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    actor
}

/// Peak resident set of `pid` in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/<pid>/status")
}

/// Drops the kernel's page cache (needs root; returns whether it could), so
/// that a run reads the database from disk like a node after a reboot.
fn drop_page_cache() -> bool {
    Command::new("sync").status().is_ok_and(|s| s.success())
        && std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

fn restart(home: &Home) -> (Duration, u64, u64) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_timerhost"))
        .args([
            "--json",
            "node",
            "--block-time",
            "200ms",
            "--rpc",
            "127.0.0.1:0",
        ])
        .arg("--home")
        .arg(home.root())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start timerhost node");
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut height = 0;
    for line in stdout.lines() {
        let line = line.unwrap();
        let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if event["event"] == "block" {
            height = event["height"].as_u64().unwrap();
            break;
        }
    }
    let elapsed = started.elapsed();
    let rss = peak_rss_kib(child.id());
    // SIGINT: the node finishes its block and stops cleanly.
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    (elapsed, rss, height)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    setup(&home);
    println!(
        "timerhost restart benchmark: {PENDING} pending timers, database {:.0} MiB\n",
        timerhost_state::compaction::dir_bytes(&home.data_path()) as f64 / (1024.0 * 1024.0)
    );
    println!("| run | page cache | process start → first block | peak RSS | block |");
    println!("|---|---|---|---|---|");
    for run in 1..=3 {
        // Runs 1 and 3 start with a cold page cache where the kernel allows it.
        let cold = run != 2 && drop_page_cache();
        let (elapsed, rss, height) = restart(&home);
        println!(
            "| {run} | {} | {:.2} s | {:.0} MiB | {height} |",
            if cold { "dropped" } else { "warm" },
            elapsed.as_secs_f64(),
            rss as f64 / 1024.0
        );
    }
}
