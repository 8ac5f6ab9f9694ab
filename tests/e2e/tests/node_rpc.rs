//! The running node, driven only through the CLI and JSON-RPC: `timerhost dev`
//! on a random loopback port in a temporary home; deploy the heartbeat actor,
//! watch it fire for 20 blocks, read its events, timers and storage, stop it;
//! JSON-RPC errors; the home lock; SIGTERM; replay; a non-dev node refusing
//! dev methods and serving metrics; a dev node (which produces blocks on its
//! command thread) surviving #49's deeply nested transactions.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{call_receipt, home_arg, Node, DEEP, HEARTBEAT, TIMERHOST};
use serde_json::{json, Value};

#[test]
fn dev_node_heartbeat_fires_for_20_blocks_over_rpc_and_cli() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("dev");
    let node = Node::dev(&home, &["--manual", "--no-examples"]);
    let out = node.out.lock().unwrap().clone();
    assert_eq!(out.matches("key 0x").count(), 10, "{out}");

    let status = node.cli_json(&["status"]);
    assert_eq!(status["chain_id"], 1337);
    assert_eq!(status["height"], 0);
    assert_eq!(status["producer"]["mode"], "manual");

    // Deploy the heartbeat (every 2 blocks, self-funded) from dev account 1.
    let sent = node.cli_json(&[
        "deploy",
        HEARTBEAT,
        "--args",
        "[2]",
        "--value",
        "1000000000000000000000",
        "--dev-account",
        "1",
        "--no-wait",
    ]);
    let tx_hash = sent["tx_hash"].as_str().unwrap().to_string();
    let pending = node.rpc("th_getReceipt", json!([tx_hash]));
    assert_eq!(pending["pending"], true);
    let mined = node.cli_json(&["mine", "1"]);
    assert_eq!(mined["to"], 1);
    let receipt = node.rpc("th_getReceipt", json!([tx_hash]));
    assert_eq!(receipt["status"], "success", "{receipt}");
    assert_eq!(receipt["height"], 1);
    let actor = receipt["created_actor"].as_str().unwrap().to_string();
    let scheduled: Vec<_> = receipt["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "TimerScheduled")
        .collect();
    assert_eq!(scheduled.len(), 1, "{receipt}");

    // One pending timer, due at height 3.
    let timers = node.cli_json(&["timers", "--actor", &actor]);
    assert_eq!(timers.as_array().unwrap().len(), 1, "{timers}");
    assert_eq!(timers[0]["height"], 3);
    let id = timers[0]["timer_id"].as_str().unwrap().to_string();
    assert_eq!(node.cli_json(&["timer", &id])["actor"], actor.as_str());
    assert_eq!(
        node.rpc("th_getTimers", json!([{ "height": 3 }]))[0]["timer_id"],
        id.as_str()
    );

    // Watch it fire for 20 blocks: heights 3, 5, …, 21.
    let mined = node.cli_json(&["mine", "20"]);
    assert_eq!(
        (mined["from"].clone(), mined["to"].clone()),
        (json!(2), json!(21))
    );
    let beats = node.cli_json(&["events", "--name", "Heartbeat", "--actor", &actor]);
    let beats = beats.as_array().unwrap();
    assert_eq!(beats.len(), 10, "{beats:?}");
    for (i, b) in beats.iter().enumerate() {
        assert_eq!(b["data"]["beat"], i as u64 + 1);
        assert_eq!(b["height"], 3 + 2 * i as u64);
        assert_eq!(b["data"]["height"], b["height"]);
    }
    let fired = node.rpc(
        "th_getEvents",
        json!([{ "name": "TimerFired", "from": 10, "to": 21 }]),
    );
    assert_eq!(fired.as_array().unwrap().len(), 6, "{fired}");
    assert!(fired
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["data"]["success"] == true));
    assert_eq!(
        node.rpc("th_getStorage", json!([actor, "beats"])),
        json!(10)
    );
    assert_eq!(
        node.rpc("th_getStorage", json!([actor, "nope"])),
        Value::Null
    );
    let code = node.rpc("th_getCode", json!([actor]));
    assert!(code["source"]
        .as_str()
        .unwrap()
        .contains("class HeartbeatActor"));

    // Stop it: the pending timer is cancelled.
    let sent = node.cli_json(&["call", &actor, "stop", "--dev-account", "1", "--no-wait"]);
    node.cli_json(&["mine"]);
    let receipt = node.rpc("th_getReceipt", json!([sent["tx_hash"]]));
    assert_eq!(receipt["status"], "success", "{receipt}");
    assert!(receipt["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "TimerCancelled"));
    assert_eq!(node.cli_json(&["timers", "--actor", &actor]), json!([]));
    node.cli_json(&["mine", "4"]);
    assert_eq!(
        node.rpc("th_getEvents", json!([{ "name": "Heartbeat" }]))
            .as_array()
            .unwrap()
            .len(),
        10
    );

    // Blocks, balances, configs.
    let block = node.cli_json(&["block", "1"]);
    assert_eq!(block["txs"], json!([tx_hash]));
    let latest = node.rpc("th_getBlock", json!(["latest"]));
    assert_eq!(latest["height"], 26);
    let acct = node.cli_json(&["balance", &actor]);
    assert_eq!(acct["is_actor"], true);
    assert!(acct["balance"].as_str().unwrap().parse::<u128>().unwrap() < 10u128.pow(21));
    assert!(node.rpc("th_getTimerConfig", json!([]))["lane_cycles_per_block"].is_u64());
    assert!(node.rpc("th_getBasefeeConfig", json!([]))["cycle_basefee"].is_string());

    // A dev-set timestamp is used by the next block.
    let ts = latest["timestamp"].as_u64().unwrap() + 1000;
    node.rpc("dev_setNextBlockTimestamp", json!([ts]));
    node.cli_json(&["mine"]);
    assert_eq!(node.rpc("th_getBlock", json!([]))["timestamp"], ts);

    // Transfers and the mempool's clear errors.
    let to = "0x00000000000000000000000000000000000000aa";
    let r = node.cli_json(&["transfer", to, "5", "--dev-account", "2", "--no-wait"]);
    assert_eq!(r["pending"], true);
    node.cli_json(&["mine"]);
    assert_eq!(node.rpc("th_getBalance", json!([to])), json!("5"));
    let bad =
        node.raw(r#"{"jsonrpc":"2.0","id":7,"method":"th_sendRawTransaction","params":["0x00"]}"#);
    assert_eq!(bad["error"]["code"], -32000, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("malformed"),
        "{bad}"
    );

    // JSON-RPC errors.
    let r = node.raw(r#"{"jsonrpc":"2.0","id":1,"method":"th_nope","params":[]}"#);
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = node.raw(r#"{"jsonrpc":"2.0","id":2,"method":"th_getBalance","params":["0x12"]}"#);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bad address"),
        "{r}"
    );
    let r =
        node.raw(r#"{"jsonrpc":"2.0","id":3,"method":"th_getTimers","params":[{"actr":"0x"}]}"#);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown filter field"),
        "{r}"
    );

    // A second node on the same home is refused.
    let out = Command::new(TIMERHOST)
        .args(["node", "--home", home_arg(&home), "--rpc", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("locked by another process"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // SIGTERM stops cleanly; the chain replays.
    let out = node.terminate();
    assert!(out.contains("block 21 "), "{out}");
    assert!(out.contains("stopped at height 28"), "{out}");
    let replay = Command::new(TIMERHOST)
        .args(["replay", "--home", home_arg(&home), "--json"])
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let v: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(v["verified_height"], 28);
}

#[test]
fn non_dev_node_produces_blocks_refuses_dev_methods_and_serves_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("n");
    let init = Command::new(TIMERHOST)
        .args(["init", "--home", home_arg(&home), "--chain-id", "7"])
        .output()
        .unwrap();
    assert!(init.status.success());
    let node = Node::start(&[
        "node",
        "--home",
        home_arg(&home),
        "--rpc",
        "127.0.0.1:0",
        "--block-time",
        "100ms",
        "--metrics",
        "127.0.0.1:0",
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while node.cli_json(&["status"])["height"].as_u64().unwrap() < 3 {
        assert!(Instant::now() < deadline, "no blocks produced");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = node.cli_json(&["status"]);
    assert_eq!(status["dev"], false);
    assert_eq!(status["producer"]["block_time_ms"], 100);
    let out = node.cli(&["mine", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("only available on a dev chain"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Dev keys are refused on a non-dev chain, with the reason.
    let out = node.cli(&[
        "transfer",
        "0x00000000000000000000000000000000000000aa",
        "1",
        "--dev-account",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dev account"));

    // The snapshot methods are dev-only too.
    let out = node.cli(&["snapshot"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("dev_snapshot is only available on a dev chain"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = node.raw(r#"{"jsonrpc":"2.0","id":4,"method":"dev_revert","params":["0x1"]}"#);
    assert_eq!(r["error"]["code"], -32002, "{r}");

    let text = node.scrape();
    assert!(text.contains("timerhost_block_height "), "{text}");
    assert!(text.contains("timerhost_mempool_size 0"), "{text}");
    for name in [
        "timerhost_timers_carried_over",
        "timerhost_timers_gc_backlog",
        "timerhost_timer_lane_reserved_cycles",
        "timerhost_timer_gc_cycles",
    ] {
        // Blocks without timers: nothing carried over, reserved or collected.
        assert!(text.contains(&format!("\n{name} 0\n")), "{name}: {text}");
    }
    assert_eq!(node.metric("timerhost_timer_gc_budget_cycles"), 5_000_000.0);

    // Restart continues from the last committed block.
    let before = node.cli_json(&["status"])["height"].as_u64().unwrap();
    let out = node.terminate();
    assert!(out.contains("stopped at height"), "{out}");
    let node = Node::start(&[
        "node",
        "--home",
        home_arg(&home),
        "--rpc",
        "127.0.0.1:0",
        "--manual",
    ]);
    assert!(node.cli_json(&["status"])["height"].as_u64().unwrap() >= before);
    node.terminate();
}

#[test]
fn dev_examples_and_governance_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("dev");
    let node = Node::dev(&home, &["--manual", "--json"]);
    let out = node.out.lock().unwrap().clone();
    let banner: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let examples = banner["examples"].as_array().unwrap().clone();
    let names: Vec<&str> = examples
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "heartbeat",
            "heartbeat_deployer_funded",
            "arc20_token",
            "subscriptions",
            "cron_registry"
        ],
        "{banner}"
    );
    // The examples are deployed by the first block (the registry is in genesis).
    node.cli_json(&["mine"]);
    for e in examples.iter().filter(|e| !e["tx_hash"].is_null()) {
        let r = node.rpc("th_getReceipt", json!([e["tx_hash"]]));
        assert_eq!(r["status"], "success", "{r}");
        assert_eq!(r["created_actor"], e["address"]);
    }
    // The sample subscription's cron job waits in the registry.
    let subscriptions = examples[3]["address"].as_str().unwrap();
    let jobs = node.cli_json(&["cron", "jobs", subscriptions]);
    assert_eq!(jobs[0]["method"], "chargeSubscription", "{jobs}");
    assert_eq!(jobs[0]["intervalSec"], 60, "{jobs}");

    // A wallet schedules, tops up and cancels a job of its own.
    let token = examples[2]["address"].as_str().unwrap();
    let now_s = node.cli_json(&["status"])["timestamp"].as_u64().unwrap() / 1000;
    let at = (now_s + 3600).to_string();
    let r = node.cli_json(&[
        "cron",
        "schedule",
        token,
        "balanceOf",
        "[\"0x893e3d59bbbcd581d9fd28cb7a7827f62023a335\"]",
        "--at",
        &at,
        "--interval",
        "60",
        "--escrow",
        "10000000000000000",
        "--dev-account",
        "4",
        "--no-wait",
    ]);
    node.cli_json(&["mine"]);
    let r = node.rpc("th_getReceipt", json!([r["tx_hash"]]));
    assert_eq!(r["status"], "success", "{r}");
    let id = r["return_value"].as_str().unwrap().to_string();
    let dev4 = "0x55fe20239088b5e1ae5b4d3c2cf8c33a4cc5ccff";
    let jobs = node.cli_json(&["cron", "jobs", dev4]);
    assert_eq!(jobs[0]["id"], id.as_str(), "{jobs}");
    let r = node.cli_json(&[
        "cron",
        "top-up",
        &id,
        "5",
        "--dev-account",
        "5",
        "--no-wait",
    ]);
    node.cli_json(&["mine"]);
    assert_eq!(
        node.rpc("th_getReceipt", json!([r["tx_hash"]]))["status"],
        "success"
    );
    // A stranger cannot cancel it; its owner can.
    let out = node.cli(&["cron", "cancel", &id, "--dev-account", "5"]);
    assert_eq!(out.status.code(), Some(1));
    let r = node.cli_json(&["cron", "cancel", &id, "--dev-account", "4", "--no-wait"]);
    node.cli_json(&["mine"]);
    let r = node.rpc("th_getReceipt", json!([r["tx_hash"]]));
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["events"][0]["name"], "JobCancelled", "{r}");
    assert_eq!(node.cli_json(&["cron", "jobs", dev4]), json!([]));
    let beat = examples[0]["address"].as_str().unwrap().to_string();
    let funded = examples[1]["address"].as_str().unwrap().to_string();
    assert_eq!(
        node.cli_json(&["timers", "--actor", &funded])
            .as_array()
            .unwrap()
            .len(),
        10
    );

    // Governance (dev account 0 is the genesis system deployer).
    let r = node.cli_json(&[
        "gov",
        "set-timer-config",
        "max_ttl_blocks=5_000",
        "--dev-account",
        "0",
        "--no-wait",
    ]);
    node.cli_json(&["mine"]);
    let r = node.rpc("th_getReceipt", json!([r["tx_hash"]]));
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["events"][0]["name"], "timer_config.updated");
    let shown = node.cli_json(&["gov", "show-config"]);
    assert_eq!(shown["timer_config"]["max_ttl_blocks"], 5000);
    // Not governance: refused at admission with the reason.
    let out = node.cli(&[
        "gov",
        "set-timer-config",
        "max_ttl_blocks=6000",
        "--dev-account",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("rejected"), "{err}");
    let out = node.cli(&["gov", "set-timer-config", "nope=1", "--dev-account", "0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no field \"nope\""));
    // Invalid values are refused before signing, naming the config and field.
    for (command, setting, what) in [
        (
            "set-timer-config",
            "max_ttl_blocks=0",
            "invalid TimerConfig",
        ),
        (
            "set-basefee-config",
            "min_cycle_basefee=0",
            "invalid BasefeeConfig",
        ),
    ] {
        let out = node.cli(&["gov", command, setting, "--dev-account", "0"]);
        assert_eq!(out.status.code(), Some(1), "{command} {setting}");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let field = setting.split('=').next().unwrap();
        assert!(err.contains(what) && err.contains(field), "{err}");
    }

    // Cancel the heartbeat's timer and extend one of the funded beats.
    let t = node.cli_json(&["timers", "--actor", &beat]);
    let id = t[0]["timer_id"].as_str().unwrap().to_string();
    let r = node.cli_json(&[
        "gov",
        "cancel-timer",
        &id,
        "--dev-account",
        "0",
        "--no-wait",
    ]);
    let ft = node.cli_json(&["timers", "--actor", &funded]);
    let fid = ft[0]["timer_id"].as_str().unwrap().to_string();
    let new_exp = ft[0]["expires_at"].as_u64().unwrap() + 7;
    let r2 = node.cli_json(&[
        "gov",
        "extend-timer",
        &fid,
        &new_exp.to_string(),
        "--dev-account",
        "0",
        "--no-wait",
    ]);
    node.cli_json(&["mine"]);
    let r = node.rpc("th_getReceipt", json!([r["tx_hash"]]));
    assert_eq!(
        r["events"][0]["name"], "timer.cancelled_by_governance",
        "{r}"
    );
    assert_eq!(node.cli_json(&["timers", "--actor", &beat]), json!([]));
    let r2 = node.rpc("th_getReceipt", json!([r2["tx_hash"]]));
    assert_eq!(
        r2["events"][0]["name"], "timer.extended_by_governance",
        "{r2}"
    );
    assert_eq!(node.cli_json(&["timer", &fid])["expires_at"], new_exp);
    // Human output of a failed call shows the actor's error and traceback.
    let r = node.cli_json(&[
        "call",
        &funded,
        "renew",
        "[1]",
        "--dev-account",
        "4",
        "--no-wait",
    ]);
    node.cli_json(&["mine"]);
    let r = node.rpc("th_getReceipt", json!([r["tx_hash"]]));
    assert_eq!(r["status"], "failed", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only the deployer"),
        "{r}"
    );
    let out = node.cli(&["receipt", r["tx_hash"].as_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("FAILED") && text.contains("error [revert]"),
        "{text}"
    );
    assert!(text.contains("  | ") && text.contains("renew"), "{text}");
    node.terminate();
}

/// #49: `timerhost dev` built blocks on the process's 8 MiB main thread,
/// and a frozenset nested 200,000 deep (or 20,000 generators) aborted it.
#[test]
fn a_dev_node_survives_transactions_nesting_200000_deep() {
    let dir = tempfile::tempdir().unwrap();
    let node = Node::dev(
        &dir.path().join("dev"),
        &["--block-time", "200ms", "--no-examples"],
    );
    let source = dir.path().join("deep.py");
    std::fs::write(&source, DEEP).unwrap();
    let deployed = node.cli_json(&["deploy", source.to_str().unwrap(), "--dev-account", "1"]);
    assert_eq!(deployed["status"], "success", "{deployed}");
    let actor = deployed["created_actor"].as_str().unwrap().to_string();
    for (handler, n, expected) in [
        ("frozensets", 200_000, "failed"),
        ("generators", 20_000, "success"),
        ("generators", 150_000, "success"),
        ("zips", 200_000, "failed"),
        ("exceptions", 200_000, "failed"),
    ] {
        let receipt = call_receipt(&node, &actor, handler, n);
        assert_eq!(receipt["status"], expected, "{handler}({n}): {receipt}");
    }
    let status = node.cli_json(&["status"]);
    assert!(status["height"].as_u64().unwrap() > 5, "{status}");
}
