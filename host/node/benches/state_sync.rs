//! Joining by state sync against replaying (#44): a node joins a chain at
//! height ≥ 100,000 holding 1,000,000 pending timers.
//!
//! ```text
//! cargo bench -p timerhost-node --bench state_sync --ignore-rust-version
//! TIMERHOST_SYNC_BLOCKS=20000 TIMERHOST_SYNC_TIMERS=200000 cargo bench …   # a smaller run
//! ```
//!
//! Setup (timed, reported): `timerhost testnet --init-only` writes one
//! validator and one follower on the benchmark genesis; the validator's
//! chain is written in process — a Python actor schedules the timers,
//! 20,000 per transaction at 50 different heights beyond the run, then
//! empty blocks to the height — and a snapshot of its head is taken. Then:
//!
//! - **replay**: `timerhost replay` of the validator's home re-executes
//!   every block from genesis (what joining without state sync costs);
//! - **state sync**: the validator runs (`timerhost node`), and the
//!   follower starts with `--state-sync` trusting the validator's head; the
//!   time is from its process start to its first block after the snapshot
//!   (`th_status.height > H`), chunks fetched over JSON-RPC and verified.
//!
//! Target: state sync ≤ 60 s.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use timerhost_chain::testing::{bench_builders, bench_genesis, BENCH_TICK_ACTOR};
use timerhost_node::home::Home;
use timerhost_timers::store;
use timerhost_types::{Address, Genesis, Value as ActorValue};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const PER_TX: u64 = 20_000;
const BIN: &str = env!("CARGO_BIN_EXE_timerhost");

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rpc(port: u16, method: &str, params: Value) -> Value {
    let client =
        timerhost_rpc::Client::with_timeout(&format!("127.0.0.1:{port}"), Duration::from_secs(30));
    client.call(method, params).unwrap_or(Value::Null)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Writes the two homes and gives them the benchmark genesis.
fn homes(dir: &std::path::Path) -> (Home, Home, u16, u16) {
    let (rpc0, p2p0) = (free_port(), free_port());
    let out = Command::new(BIN)
        .args([
            "testnet",
            "--init-only",
            "--validators",
            "1",
            "--followers",
            "1",
        ])
        .args(["--dir"])
        .arg(dir)
        .args([
            "--rpc-port",
            &rpc0.to_string(),
            "--p2p-port",
            &p2p0.to_string(),
        ])
        .args(["--block-time", "200ms", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<String> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["home"].as_str().unwrap().to_string())
        .collect();
    let bench = bench_genesis();
    for path in &paths {
        let home = Home::new(path);
        let text = std::fs::read_to_string(home.genesis_path()).unwrap();
        let mut genesis = Genesis::from_toml(&text).unwrap();
        genesis.timers = bench.timers.clone();
        genesis.basefee = bench.basefee.clone();
        std::fs::write(home.genesis_path(), genesis.to_toml()).unwrap();
        let _ = std::fs::remove_dir_all(home.data_path());
    }
    (Home::new(&paths[0]), Home::new(&paths[1]), rpc0, rpc0 + 1)
}

/// The validator's chain: `timers` pending, then empty blocks to `blocks`.
fn fill(home: &Home, timers: u64, blocks: u64) {
    let chain = home.open().unwrap();
    let mut b = bench_builders();
    let proposer = Address([0xee; 20]);
    let mut ts = chain.head().unwrap().timestamp_ms;
    let mut produce = |txs: Vec<timerhost_types::SignedTransaction>| {
        ts += 200;
        let p = chain.produce_block(&txs, ts, proposer).unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        for r in &p.executed.receipts {
            assert!(r.is_success(), "{:?}", r.error);
        }
        p.executed.receipts
    };
    let started = Instant::now();
    let r = produce(vec![b[0].deploy(BENCH_TICK_ACTOR, vec![], 10u128.pow(23))]);
    let actor = r[0].created_actor.unwrap();
    for i in 0..timers.div_ceil(PER_TX) {
        let due = blocks + 1_000 + i * 7;
        produce(vec![b[0].call(
            actor,
            "arm",
            vec![
                ActorValue::int(PER_TX.min(timers - i * PER_TX)),
                ActorValue::int(due),
            ],
            0,
        )]);
    }
    let live = store::live_count(&chain.store().state(), &actor).unwrap();
    assert_eq!(u64::from(live), timers);
    eprintln!(
        "setup: {timers} timers in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    while chain.head().unwrap().height < blocks {
        produce(Vec::new());
    }
    eprintln!(
        "setup: empty blocks to height {blocks} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let m = chain.store().take_snapshot(1).unwrap();
    println!(
        "snapshot of height {}: {} chunks ({} tree, {} derived), {} leaves, {} derived keys, {:.0} MiB, built in {:.1} s",
        m.height,
        m.chunks(),
        m.tree_chunks(),
        m.derived_chunks(),
        m.leaves,
        m.derived_entries,
        m.bytes as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64()
    );
}

fn spawn(home: &Home, extra: &[&str], log: &std::path::Path) -> Child {
    Command::new(BIN)
        .arg("node")
        .arg("--home")
        .arg(home.root())
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

fn stop(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

fn main() {
    let blocks = env_u64("TIMERHOST_SYNC_BLOCKS", 100_000);
    let timers = env_u64("TIMERHOST_SYNC_TIMERS", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let (validator, follower, rpc_v, rpc_f) = homes(&dir.path().join("net"));
    fill(&validator, timers, blocks);

    let started = Instant::now();
    let out = Command::new(BIN)
        .args(["--json", "replay", "--home"])
        .arg(validator.root())
        .output()
        .unwrap();
    let replay = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "replay from genesis: {:.1} s ({})",
        replay.as_secs_f64(),
        String::from_utf8_lossy(&out.stdout).trim()
    );

    let mut toml = std::fs::OpenOptions::new()
        .append(true)
        .open(validator.root().join("node.toml"))
        .unwrap();
    writeln!(toml, "\n[sync]\nsnapshot_interval = 0\nsnapshot_keep = 1").unwrap();
    let v = spawn(&validator, &[], &dir.path().join("validator.log"));
    let deadline = Instant::now() + Duration::from_secs(300);
    let snapshot_height = loop {
        let h = rpc(rpc_v, "th_status", json!([]))["height"]
            .as_u64()
            .unwrap_or(0);
        if h > blocks {
            break blocks;
        }
        assert!(Instant::now() < deadline, "the validator does not produce");
        std::thread::sleep(Duration::from_millis(200));
    };
    let trust_height = rpc(rpc_v, "th_status", json!([]))["height"]
        .as_u64()
        .unwrap();
    let trust_hash = rpc(rpc_v, "th_getBlock", json!([trust_height]))["hash"]
        .as_str()
        .unwrap()
        .to_string();
    let mut toml = std::fs::OpenOptions::new()
        .append(true)
        .open(follower.root().join("node.toml"))
        .unwrap();
    writeln!(
        toml,
        "\n[sync]\nsnapshot_interval = 0\nrpc_servers = [\"http://127.0.0.1:{rpc_v}\"]\ntrust_height = {trust_height}\ntrust_hash = {trust_hash:?}"
    )
    .unwrap();
    let log = dir.path().join("follower.log");
    let started = Instant::now();
    let f = spawn(&follower, &["--state-sync"], &log);
    let deadline = Instant::now() + Duration::from_secs(900);
    loop {
        let h = rpc(rpc_f, "th_status", json!([]))["height"]
            .as_u64()
            .unwrap_or(0);
        if h > snapshot_height {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no block after the snapshot: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let synced = started.elapsed();
    stop(f);
    stop(v);
    let restored = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .find(|l| l.contains("state sync: restored"))
        .map(str::to_string)
        .unwrap_or_default();
    println!("\n| join a chain at height {snapshot_height} with {timers} pending timers | time |");
    println!("|---|---|");
    println!(
        "| replay from genesis (`timerhost replay`) | {:.1} s |",
        replay.as_secs_f64()
    );
    println!(
        "| state sync: process start → first verified block after the snapshot | {:.1} s |",
        synced.as_secs_f64()
    );
    println!("\nfollower: {restored}");
}
