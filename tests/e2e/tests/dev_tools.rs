//! The dev tooling of a running node, driven through the CLI and JSON-RPC:
//! `dev_snapshot` / `dev_revert` (chain, mempool and timestamp override
//! restored; snapshots lost on restart), `timerhost events --follow` (each
//! event once, across blocks and across a revert), and the timer metrics on
//! `--metrics` (carry-over, lane and GC budget use).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{home_arg, Node, HEARTBEAT, TIMERHOST};
use serde_json::{json, Value};

/// 1,000 tokens in the smallest unit.
const THOUSAND: &str = "1000000000000000000000";

fn dev_node(home: &std::path::Path, extra: &[&str]) -> Node {
    let mut args = vec![
        "dev",
        "--home",
        home_arg(home),
        "--manual",
        "--rpc",
        "127.0.0.1:0",
        "--no-examples",
    ];
    args.extend_from_slice(extra);
    Node::start(&args)
}

/// Submits a transaction command with `--no-wait`; returns its hash.
fn submit(node: &Node, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--no-wait");
    let r = node.cli_json(&all);
    r["tx_hash"].as_str().unwrap().to_string()
}

#[test]
fn dev_snapshot_and_revert_restore_the_chain_mempool_and_next_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("dev");
    let node = dev_node(&home, &[]);
    node.cli_json(&["mine", "2"]);

    // A fresh key (not a dev account) that will only have funds after the snapshot.
    let key_file = dir.path().join("alice.key");
    let out = Command::new(TIMERHOST)
        .args(["keys", "new", "--out", key_file.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let alice: Value = serde_json::from_slice(&out.stdout).unwrap();
    let alice = alice["address"].as_str().unwrap().to_string();

    // A timestamp override pending when the snapshot is taken comes back with it.
    let head = node.rpc("th_getBlock", json!(["latest"]));
    let ts = head["timestamp"].as_u64().unwrap() + 500;
    node.rpc("dev_setNextBlockTimestamp", json!([ts]));
    let snap = node.cli_json(&["snapshot"]);
    assert_eq!(snap, json!({ "id": "0x1", "height": 2 }));

    // After the snapshot: a heartbeat, funds for alice, blocks, and a
    // transaction from alice left pending in the mempool.
    let deploy = submit(
        &node,
        &[
            "deploy",
            HEARTBEAT,
            "--args",
            "[2]",
            "--value",
            THOUSAND,
            "--dev-account",
            "1",
        ],
    );
    submit(&node, &["transfer", &alice, THOUSAND, "--dev-account", "2"]);
    node.cli_json(&["mine"]);
    assert_eq!(node.rpc("th_getBlock", json!([3]))["timestamp"], ts);
    node.cli_json(&["mine", "4"]);
    let actor = node.rpc("th_getReceipt", json!([deploy]))["created_actor"]
        .as_str()
        .unwrap()
        .to_string();
    let beats = node.rpc("th_getEvents", json!([{ "name": "Heartbeat" }]));
    assert_eq!(beats.as_array().unwrap().len(), 2, "{beats}");
    let pending = submit(
        &node,
        &[
            "transfer",
            "0x00000000000000000000000000000000000000aa",
            "100",
            "--key",
            key_file.to_str().unwrap(),
        ],
    );
    assert_eq!(node.rpc("th_getReceipt", json!([pending]))["pending"], true);

    let r = node.cli_json(&["revert", "0x1"]);
    assert_eq!(r, json!({ "id": "0x1", "reverted": true, "height": 2 }));
    let status = node.cli_json(&["status"]);
    assert_eq!(status["height"], 2);
    assert_eq!(status["head_hash"], head["hash"]);
    assert_eq!(status["state_root"], head["state_root"]);
    // Everything after the snapshot is gone: blocks, receipts, events,
    // timers, balances.
    assert_eq!(node.rpc("th_getBlock", json!([3])), Value::Null);
    assert_eq!(node.rpc("th_getReceipt", json!([deploy])), Value::Null);
    assert_eq!(
        node.rpc("th_getEvents", json!([{ "name": "Heartbeat" }])),
        json!([])
    );
    assert_eq!(node.cli_json(&["timers", "--actor", &actor]), json!([]));
    assert_eq!(node.cli_json(&["balance", &alice])["balance"], "0");
    // Alice's pending transaction cannot be paid for any more: dropped, and
    // the node says why (#50).
    let dropped = node.rpc("th_getReceipt", json!([pending]));
    assert_eq!(dropped["pending"], false, "{dropped}");
    assert!(
        dropped["dropped"]
            .as_str()
            .is_some_and(|r| r.contains("refused again after a revert: insufficient balance")),
        "{dropped}"
    );
    assert_eq!(node.cli_json(&["status"])["mempool"]["size"], 0);
    let out = node.out.lock().unwrap().clone();
    assert!(
        out.contains("reverted to a dev snapshot: head at height 2, 1 mempool transaction(s) no longer valid dropped"),
        "{out}"
    );
    // The restored override times the next block again.
    node.cli_json(&["mine"]);
    assert_eq!(node.rpc("th_getBlock", json!([3]))["timestamp"], ts);

    // That snapshot was used up; unknown ids answer false.
    let out = node.cli(&["revert", "0x1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("holds no snapshot 0x1"), "{err}");
    let r = node.raw(r#"{"jsonrpc":"2.0","id":1,"method":"dev_revert","params":["0x9"]}"#);
    assert_eq!(r["result"], false, "{r}");
    let r = node.raw(r#"{"jsonrpc":"2.0","id":2,"method":"dev_revert","params":[]}"#);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(node.cli_json(&["snapshot"])["id"], "0x2");

    // The reverted chain is what is on disk; snapshots do not survive a restart.
    let out = node.terminate();
    assert!(out.contains("stopped at height 3"), "{out}");
    let replay = Command::new(TIMERHOST)
        .args(["replay", "--home", home_arg(&home), "--json"])
        .output()
        .unwrap();
    assert!(replay.status.success(), "{replay:?}");
    let v: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(v["verified_height"], 3);
    let node = dev_node(&home, &[]);
    assert_eq!(node.cli_json(&["status"])["height"], 3);
    assert_eq!(node.rpc("dev_revert", json!(["0x2"])), json!(false));
    node.terminate();
}

/// A running `timerhost events --follow`; killed on drop.
struct Follower {
    child: Child,
    lines: Receiver<String>,
    err: Arc<Mutex<String>>,
}

impl Follower {
    fn spawn(node: &Node, args: &[&str]) -> Follower {
        let mut all = vec!["events", "--follow", "--rpc", node.url.as_str()];
        all.extend_from_slice(args);
        let mut child = Command::new(TIMERHOST)
            .args(&all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err = Arc::new(Mutex::new(String::new()));
        let sink = err.clone();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        Follower { child, lines, err }
    }

    /// The next `n` lines (fails after 30 s).
    fn take(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        (0..n)
            .map(|i| {
                self.lines
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    .unwrap_or_else(|e| {
                        panic!(
                            "line {} of {n} did not come ({e}); stderr: {}",
                            i + 1,
                            self.err.lock().unwrap()
                        )
                    })
            })
            .collect()
    }

    /// Asserts that nothing more is printed for a while.
    fn assert_quiet(&self) {
        match self.lines.recv_timeout(Duration::from_millis(800)) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(line) => panic!("unexpected line: {line}"),
            Err(e) => panic!("the follower stopped: {e}; {}", self.err.lock().unwrap()),
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// (height, beat) of Heartbeat event lines printed with --json.
fn beats(lines: &[String]) -> Vec<(u64, u64)> {
    lines
        .iter()
        .map(|l| {
            let e: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert_eq!(e["name"], "Heartbeat", "{l}");
            (
                e["height"].as_u64().unwrap(),
                e["data"]["beat"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn events_follow_prints_each_event_once_across_blocks_and_a_revert() {
    let dir = tempfile::tempdir().unwrap();
    let node = dev_node(&dir.path().join("dev"), &[]);
    // A heartbeat every block from height 2 on.
    let deploy = submit(
        &node,
        &[
            "deploy",
            HEARTBEAT,
            "--args",
            "[1]",
            "--value",
            THOUSAND,
            "--dev-account",
            "1",
        ],
    );
    node.cli_json(&["mine"]);
    let actor = node.rpc("th_getReceipt", json!([deploy]))["created_actor"]
        .as_str()
        .unwrap()
        .to_string();

    let a = Follower::spawn(
        &node,
        &[
            "--name",
            "Heartbeat",
            "--actor",
            &actor,
            "--from",
            "2",
            "--json",
        ],
    );
    // Blocks arrive in uneven batches while it polls.
    for n in ["1", "3", "1", "5"] {
        node.cli_json(&["mine", n]);
        std::thread::sleep(Duration::from_millis(150));
    }
    let first = a.take(10);
    let expected: Vec<(u64, u64)> = (1..=10).map(|b| (b + 1, b)).collect();
    assert_eq!(beats(&first), expected);
    a.assert_quiet();

    // With --to it stops by itself once that height is read.
    let out = node.cli(&[
        "events",
        "--follow",
        "--name",
        "Heartbeat",
        "--from",
        "0",
        "--to",
        "5",
        "--json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(beats(&lines), vec![(2, 1), (3, 2), (4, 3), (5, 4)]);
    // --limit makes no sense with a stream.
    let out = node.cli(&["events", "--follow", "--limit", "3"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // Without --from it starts at the current head (11, which has a beat),
    // in human form.
    let b = Follower::spawn(&node, &["--name", "Heartbeat"]);
    let human = b.take(1);
    assert!(human[0].starts_with("#11 Heartbeat from "), "{human:?}");
    node.cli_json(&["mine"]);
    let human = b.take(1);
    assert!(human[0].starts_with("#12 Heartbeat from "), "{human:?}");
    assert!(human[0].contains(r#""beat":11"#), "{human:?}");
    drop(b);
    assert_eq!(beats(&a.take(1)), vec![(12, 11)]);

    // A revert replaces blocks 13..15: the follower says so and prints the
    // replacement blocks' events, without repeating blocks ≤ 12.
    assert_eq!(node.cli_json(&["snapshot"])["height"], 12);
    node.cli_json(&["mine", "3"]);
    assert_eq!(beats(&a.take(3)), vec![(13, 12), (14, 13), (15, 14)]);
    node.cli_json(&["revert", "0x1"]);
    // A later timestamp makes the new blocks differ from the old ones.
    let ts = node.rpc("th_getBlock", json!(["latest"]))["timestamp"]
        .as_u64()
        .unwrap();
    node.rpc("dev_setNextBlockTimestamp", json!([ts + 1000]));
    node.cli_json(&["mine", "3"]);
    assert_eq!(beats(&a.take(3)), vec![(13, 12), (14, 13), (15, 14)]);
    a.assert_quiet();
    let err = a.err.lock().unwrap().clone();
    assert!(
        err.contains("the chain was reverted: blocks above height 12 were replaced"),
        "{err}"
    );
    drop(a);
    node.terminate();
}

/// Schedules `count` timers `after` blocks ahead, paid by the actor; each
/// fire emits `Tick`.
const BURST_PY: &str = r#"
import pvm_host


class Burst:
    def deploy(self, count=3, after=2):
        for _ in range(count):
            pvm_host.schedule_timer(pvm_host.block_height() + after, b"")

    def handle_timer(self, payload):
        pvm_host.emit("Tick", {"height": pvm_host.block_height()})
"#;

#[test]
fn metrics_report_carried_over_timers_lane_and_gc_budget_use() {
    let dir = tempfile::tempdir().unwrap();
    let node = dev_node(
        &dir.path().join("dev"),
        &["--metrics", "127.0.0.1:0", "--json"],
    );
    let burst = dir.path().join("burst.py");
    std::fs::write(&burst, BURST_PY).unwrap();
    let burst = burst.to_str().unwrap();

    // Block 1: a lane that fits exactly one default fire and its base
    // charge (from block 2 on), two timers nobody pays for (their actor can
    // lend their deposits, not pay a fire), three the actor pays for; all
    // due at 3.
    submit(
        &node,
        &[
            "gov",
            "set-timer-config",
            "lane_cycles_per_block=553000",
            "--dev-account",
            "0",
        ],
    );
    let unfunded = submit(
        &node,
        &[
            "deploy",
            burst,
            "--args",
            "[2]",
            "--value",
            "1000000",
            "--dev-account",
            "2",
        ],
    );
    let funded = submit(
        &node,
        &[
            "deploy",
            burst,
            "--args",
            "[3]",
            "--value",
            THOUSAND,
            "--dev-account",
            "1",
        ],
    );
    node.cli_json(&["mine", "2"]);
    for tx in [&unfunded, &funded] {
        let r = node.rpc("th_getReceipt", json!([tx]));
        assert_eq!(r["status"], "success", "{r}");
    }
    assert_eq!(node.metric("timerhost_timers_carried_over"), 0.0);
    assert_eq!(node.metric("timerhost_timer_lane_budget_cycles"), 553_000.0);

    // Block 3: the unfunded pair is collected (GC), one fire fits the lane,
    // two wait.
    node.cli_json(&["mine"]);
    assert_eq!(node.metric("timerhost_block_height"), 3.0);
    assert_eq!(node.metric("timerhost_timers_unfunded_total"), 2.0);
    assert_eq!(node.metric("timerhost_timer_gc_cycles"), 2_000.0);
    assert_eq!(node.metric("timerhost_timer_gc_budget_cycles"), 5_000_000.0);
    assert_eq!(node.metric("timerhost_timers_gc_backlog"), 0.0);
    assert_eq!(node.metric("timerhost_timers_fired_total"), 1.0);
    assert_eq!(
        node.metric("timerhost_timer_lane_reserved_cycles"),
        553_000.0
    );
    let used = node.metric("timerhost_timer_lane_cycles");
    assert!(used > 3_000.0 && used < 553_000.0, "{used}");
    assert_eq!(node.metric("timerhost_timers_carried_over"), 2.0);

    // Blocks 4 and 5 drain the carry-over, one fire each.
    node.cli_json(&["mine"]);
    assert_eq!(node.metric("timerhost_timers_carried_over"), 1.0);
    assert_eq!(node.metric("timerhost_timer_gc_cycles"), 0.0);
    assert_eq!(node.metric("timerhost_timers_fired_total"), 2.0);
    node.cli_json(&["mine"]);
    assert_eq!(node.metric("timerhost_timers_carried_over"), 0.0);
    assert_eq!(node.metric("timerhost_timers_fired_total"), 3.0);
    let ticks = node.rpc("th_getEvents", json!([{ "name": "Tick" }]));
    let heights: Vec<u64> = ticks
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["height"].as_u64().unwrap())
        .collect();
    assert_eq!(heights, vec![3, 4, 5]);

    // The JSON block log carries the same numbers.
    let out = node.out.lock().unwrap().clone();
    let block3: Value = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["event"] == "block" && v["height"] == 3)
        .unwrap_or_else(|| panic!("no block 3 line in {out}"));
    assert_eq!(block3["timers_carried_over"], 2, "{block3}");
    assert_eq!(block3["gc_cycles"], 2_000, "{block3}");
    assert_eq!(block3["lane_reserved"], 553_000, "{block3}");
    node.terminate();
}

/// #14 from the command line: governance pauses, resumes and shuts timers
/// down (and a stranger cannot), `status` and `th_status` show it, and any
/// signer can revoke the timers that bill it.
#[test]
fn governance_pause_resume_shutdown_and_payment_revocation_from_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let node = dev_node(&dir.path().join("dev"), &["--metrics", "127.0.0.1:0"]);
    let status = |node: &Node| node.cli_json(&["status"])["timers"]["status"].clone();
    assert_eq!(status(&node), "active");
    // A heartbeat's pending timer holds a deposit in the escrow.
    submit(
        &node,
        &[
            "deploy",
            HEARTBEAT,
            "--args",
            "[5]",
            "--value",
            "1000000000000000000",
            "--dev-account",
            "1",
        ],
    );
    node.cli_json(&["mine"]);
    let held = node.cli_json(&["status"])["timers"]["deposits_held"].clone();
    assert_ne!(held, "0", "{held}");

    let out = node.cli(&["gov", "pause-timers", "--dev-account", "5", "--json"]);
    assert!(!out.status.success());
    let err =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("system_deployers"), "{err}");

    submit(&node, &["gov", "pause-timers", "--dev-account", "0"]);
    node.cli_json(&["mine"]);
    assert_eq!(status(&node), "paused");
    let human = node.cli(&["status"]);
    assert!(
        String::from_utf8_lossy(&human.stdout).contains("timers paused"),
        "{human:?}"
    );
    submit(&node, &["gov", "resume-timers", "--dev-account", "0"]);
    node.cli_json(&["mine"]);
    assert_eq!(status(&node), "active");

    let tx = submit(&node, &["revoke-timer-payments", "--dev-account", "3"]);
    node.cli_json(&["mine"]);
    let r = node.rpc("th_getReceipt", json!([tx]));
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["events"][0]["name"], "TimerPaymentsRevoked", "{r}");

    submit(&node, &["gov", "shutdown-timers", "--dev-account", "0"]);
    node.cli_json(&["mine"]);
    assert_eq!(status(&node), "shutdown");
    let cancelled = node.rpc("th_getEvents", json!([{ "name": "TimerCancelled" }]));
    let cancelled = cancelled.as_array().unwrap();
    assert!(!cancelled.is_empty());
    assert!(cancelled.iter().all(|e| e["data"]["reason"] == "shutdown"));
    assert_eq!(node.cli_json(&["status"])["timers"]["deposits_held"], "0");
    assert_eq!(
        node.metric("timerhost_timers_shutdown_total"),
        cancelled.len() as f64
    );
    node.terminate();
}

/// `timerhost timer ID --follow` (#48): the node pushes the timer's life —
/// scheduled, then fired — and the command ends by itself when it does.
#[test]
fn timer_follow_prints_a_timers_life_and_ends_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let node = dev_node(&dir.path().join("dev"), &[]);
    let deploy = submit(
        &node,
        &[
            "deploy",
            HEARTBEAT,
            "--args",
            "[3]",
            "--value",
            THOUSAND,
            "--dev-account",
            "1",
        ],
    );
    node.cli_json(&["mine"]);
    let actor = node.rpc("th_getReceipt", json!([deploy]))["created_actor"]
        .as_str()
        .unwrap()
        .to_string();
    let timers = node.rpc("th_getTimers", json!([{ "actor": actor }]));
    let id = timers[0]["timer_id"].as_str().unwrap().to_string();
    let child = Command::new(TIMERHOST)
        .args([
            "timer",
            &id,
            "--follow",
            "--json",
            "--rpc",
            node.url.as_str(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    node.cli_json(&["mine", "4"]);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        names.first().map(String::as_str),
        Some("TimerScheduled"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "TimerFired"), "{names:?}");
    node.terminate();
}
