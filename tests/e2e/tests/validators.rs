//! Several validators under Malachite, on loopback, through the real
//! binary: `timerhost testnet --init-only` writes the homes, each node is
//! its own `timerhost node` process.
//!
//! - Four validators reach height 50 with identical block hashes, state
//!   roots and receipt roots at every height; a heartbeat deployed through
//!   one node fires on schedule, once network-wide, with identical events
//!   everywhere; a validator killed with SIGKILL leaves the others
//!   committing and, restarted, syncs and matches; a follower started after
//!   height 30 syncs to the head.
//! - A byzantine proposer (wrong state root, then a bad transaction) is
//!   refused by the honest validators, none of its blocks is committed, and
//!   the network continues.
//! - `timerhost testnet` itself runs its validators to agreement and stops
//!   them all on SIGTERM; a second start reuses the homes.
//! - Transactions whose actors nest frozensets, generators, iterators and
//!   exceptions 20,000–200,000 deep — one of which aborted every proposer
//!   before #49 — are committed with their outcomes while all four keep
//!   committing and agreeing.
//! - The set changes by proposal (#32): four validators vote a fifth in
//!   through the CLI — it was following, and signs from the activation
//!   height — then vote one of the four out, which is killed while the
//!   remaining four commit on; a node syncing from genesis afterwards
//!   follows both changes and replays.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::network::{
    assert_same_chain, free_ports, header, height, kill9, start, testnet, wait_for_height,
};
use common::{call_receipt, home_arg, offline_json, Node, DEEP, HEARTBEAT, TIMERHOST};
use serde_json::{json, Value};

#[test]
fn four_validators_agree_fire_timers_once_survive_a_sigkill_and_sync_a_late_follower() {
    let dir = tempfile::tempdir().unwrap();
    let homes = testnet(&dir.path().join("net"), 4, 1);
    let mut nodes: Vec<Node> = homes[..4].iter().map(|h| start(h, &[])).collect();
    wait_for_height(
        &nodes.iter().collect::<Vec<_>>(),
        2,
        Duration::from_secs(120),
    );

    // A heartbeat every 2 blocks, deployed through node 1: the transaction
    // reaches the proposers by gossip.
    let deployed = nodes[1].cli_json(&[
        "deploy",
        HEARTBEAT,
        "--args",
        "[2]",
        "--value",
        "1000000000000000000000",
        "--dev-account",
        "1",
    ]);
    assert_eq!(deployed["status"], "success", "{deployed}");
    let deployed_at = deployed["height"].as_u64().unwrap();
    let actor = deployed["created_actor"].as_str().unwrap().to_string();

    // Validator 3 dies hard; the other three keep committing.
    let all: Vec<&Node> = nodes.iter().collect();
    wait_for_height(&all, deployed_at + 4, Duration::from_secs(120));
    kill9(&mut nodes[3]);
    let killed_at = height(&nodes[0]);
    let live: Vec<&Node> = nodes[..3].iter().collect();
    wait_for_height(&live, killed_at + 8, Duration::from_secs(120));
    let m = nodes[0].metric("timerhost_consensus_peers");
    assert!(m >= 2.0, "peers {m}");

    // Restarted, it syncs; a follower joins after height 30.
    nodes[3] = start(&homes[3], &[]);
    let live: Vec<&Node> = nodes[..3].iter().collect();
    wait_for_height(&live, 30, Duration::from_secs(180));
    let follower = start(&homes[4], &[]);
    let everyone: Vec<&Node> = nodes.iter().chain(std::iter::once(&follower)).collect();
    wait_for_height(&everyone, 50, Duration::from_secs(240));

    assert_same_chain(&everyone, 50);

    // The heartbeat fired every 2 blocks from its deployment, once per
    // slot, with the same events on every node.
    let beats: Vec<Value> = everyone
        .iter()
        .map(|n| {
            n.rpc(
                "th_getEvents",
                json!([{ "name": "Heartbeat", "actor": actor, "to": 50 }]),
            )
        })
        .collect();
    for b in &beats[1..] {
        assert_eq!(b, &beats[0]);
    }
    let heights: Vec<u64> = beats[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["height"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (deployed_at + 2..=50).step_by(2).collect();
    assert_eq!(heights, expected, "{}", beats[0]);

    // Metrics name the consensus view.
    let scrape = nodes[0].scrape();
    for name in [
        "timerhost_consensus_height",
        "timerhost_consensus_round",
        "timerhost_consensus_peers",
        "timerhost_consensus_proposals_made_total",
        "timerhost_consensus_votes_received_total",
        "timerhost_consensus_commit_latency_ms",
    ] {
        assert!(scrape.contains(name), "no {name} in {scrape}");
    }
    assert!(nodes[0].metric("timerhost_consensus_votes_received_total") > 0.0);
    assert!(nodes[3].metric("timerhost_consensus_blocks_synced_total") > 0.0);
    assert!(follower.metric("timerhost_consensus_blocks_synced_total") > 0.0);

    // Dev methods are refused on a network node.
    let mine = nodes[0].cli(&["mine", "1"]);
    assert!(!mine.status.success());
    assert!(
        String::from_utf8_lossy(&mine.stderr).contains("decided by consensus"),
        "{}",
        String::from_utf8_lossy(&mine.stderr)
    );

    // Every node's stored chain replays to the same roots.
    let stopped = follower.terminate();
    assert!(stopped.contains("stopped at height"), "{stopped}");
    let replay = Command::new(TIMERHOST)
        .args(["replay", "--home", home_arg(&homes[4])])
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}

#[test]
fn a_byzantine_proposer_is_refused_and_the_network_continues() {
    let dir = tempfile::tempdir().unwrap();
    let homes = testnet(&dir.path().join("net"), 4, 0);
    for mode in ["wrong-state-root", "bad-transaction"] {
        let nodes: Vec<Node> = homes
            .iter()
            .enumerate()
            .map(|(i, h)| {
                if i == 0 {
                    start(h, &["--byzantine-proposer", mode])
                } else {
                    start(h, &[])
                }
            })
            .collect();
        let honest: Vec<&Node> = nodes[1..].iter().collect();
        let from = height(&nodes[1]);
        wait_for_height(&honest, from + 12, Duration::from_secs(180));
        assert!(
            nodes[0].metric("timerhost_consensus_proposals_made_total") >= 1.0,
            "{mode}"
        );
        for n in &honest {
            assert!(
                n.metric("timerhost_consensus_proposals_refused_total") >= 1.0,
                "{mode}: {} refused nothing",
                n.url
            );
        }
        let to = honest.iter().map(|n| height(n)).min().unwrap();
        assert_same_chain(&honest, to);
        for h in 1..=to {
            let (_, root, _, txs) = header(honest[0], h);
            assert_ne!(
                root,
                format!("0x{}", "bb".repeat(32)),
                "{mode}: a corrupted root committed at {h}"
            );
            assert_eq!(
                txs, 0,
                "{mode}: the byzantine transaction was committed at {h}"
            );
        }
        for n in nodes {
            n.terminate();
        }
    }
}

#[test]
fn transactions_nesting_200000_deep_do_not_stop_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let homes = testnet(&dir.path().join("net"), 4, 0);
    let nodes: Vec<Node> = homes.iter().map(|h| start(h, &[])).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    wait_for_height(&all, 2, Duration::from_secs(120));
    let source = dir.path().join("deep.py");
    std::fs::write(&source, DEEP).unwrap();
    let deployed = nodes[0].cli_json(&["deploy", source.to_str().unwrap(), "--dev-account", "1"]);
    assert_eq!(deployed["status"], "success", "{deployed}");
    let actor = deployed["created_actor"].as_str().unwrap().to_string();
    let mut last = 0;
    for (i, (handler, n, expected)) in [
        ("frozensets", 200_000, "failed"),
        ("generators", 20_000, "success"),
        ("generators", 150_000, "success"),
        ("zips", 200_000, "failed"),
        ("exceptions", 200_000, "failed"),
    ]
    .into_iter()
    .enumerate()
    {
        // Sent to a different node each time: every proposer executes one.
        let receipt = call_receipt(&nodes[i % 4], &actor, handler, n);
        assert_eq!(receipt["status"], expected, "{handler}({n}): {receipt}");
        last = receipt["height"].as_u64().unwrap();
    }
    wait_for_height(&all, last + 5, Duration::from_secs(120));
    let mut nodes = nodes;
    for node in &mut nodes {
        assert!(
            node.child.try_wait().unwrap().is_none(),
            "{} exited: {}",
            node.url,
            node.out.lock().unwrap()
        );
    }
    assert_same_chain(&nodes.iter().collect::<Vec<_>>(), last + 5);
}

#[test]
fn timerhost_testnet_runs_the_validators_and_stops_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net");
    let (rpc, p2p) = free_ports(2);
    let mut testnet = Command::new(TIMERHOST)
        .args([
            "testnet",
            "--validators",
            "2",
            "--dir",
            home_arg(&net),
            "--rpc-port",
            &rpc.to_string(),
            "--p2p-port",
            &p2p.to_string(),
            "--block-time",
            "200ms",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = |port: u16| -> Option<Value> {
        let out = Command::new(TIMERHOST)
            .args([
                "status",
                "--json",
                "--rpc",
                &format!("http://127.0.0.1:{port}"),
            ])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| serde_json::from_slice(&out.stdout).unwrap())
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let heights: Vec<u64> = [rpc, rpc + 1]
            .iter()
            .map(|p| status(*p).map_or(0, |s| s["height"].as_u64().unwrap()))
            .collect();
        if heights.iter().all(|h| *h >= 3) {
            break;
        }
        assert!(Instant::now() < deadline, "testnet stuck at {heights:?}");
        std::thread::sleep(Duration::from_millis(300));
    }
    let s = status(rpc).unwrap();
    assert_eq!(s["producer"]["mode"], "consensus", "{s}");
    assert_eq!(s["producer"]["validators"], 2, "{s}");
    let block = |port: u16| {
        let out = Command::new(TIMERHOST)
            .args([
                "block",
                "3",
                "--json",
                "--rpc",
                &format!("http://127.0.0.1:{port}"),
            ])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(block(rpc)["state_root"], block(rpc + 1)["state_root"]);
    assert_eq!(block(rpc)["hash"], block(rpc + 1)["hash"]);
    let pids = std::fs::read_to_string(net.join("pids")).unwrap();
    assert_eq!(pids.lines().count(), 2, "{pids}");

    // SIGTERM stops every node, then the command.
    let killed = Command::new("kill")
        .args(["-TERM", &testnet.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let exit = loop {
        if let Some(st) = testnet.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "testnet did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "{exit}");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut testnet.stdout.take().unwrap(), &mut out).unwrap();
    assert!(out.contains("created a testnet of 2 validator(s)"), "{out}");
    assert!(out.contains("testnet stopped"), "{out}");
    assert!(!net.join("pids").exists());
    for pid in pids.lines() {
        let alive = Command::new("kill")
            .args(["-0", pid])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!alive.success(), "node {pid} still running");
    }
    // The homes are reused on the next start.
    let again = Command::new(TIMERHOST)
        .args([
            "testnet",
            "--validators",
            "2",
            "--dir",
            home_arg(&net),
            "--init-only",
            "--json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(v["event"], "reused", "{v}");
}

/// The `data` of the first event named `name` in a CLI receipt.
fn event_data(receipt: &Value, name: &str) -> Value {
    receipt["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {receipt}"))["data"]
        .clone()
}

/// Proposes `action` (CLI words) through `node` as dev account 5, has
/// the operators `voters` (dev accounts) vote yes, executes it; returns the
/// height the change applies from.
fn vote_through(node: &Node, action: &[&str], voters: &[usize]) -> u64 {
    let mut args = vec!["gov", "propose"];
    args.extend_from_slice(action);
    args.extend(["--dev-account", "5"]);
    let submitted = node.cli_json(&args);
    assert_eq!(submitted["status"], "success", "{submitted}");
    let id = event_data(&submitted, "ProposalSubmitted")["proposal_id"]
        .as_u64()
        .unwrap();
    for who in voters {
        let voted = node.cli_json(&[
            "gov",
            "vote",
            &id.to_string(),
            "--dev-account",
            &who.to_string(),
        ]);
        assert_eq!(voted["status"], "success", "{voted}");
    }
    let listed = node.cli_json(&["gov", "proposals"]);
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["proposal_id"] == id && p["status"] == "passed"),
        "{listed}"
    );
    let executed = node.cli_json(&["gov", "execute", &id.to_string(), "--dev-account", "5"]);
    assert_eq!(executed["status"], "success", "{executed}");
    event_data(&executed, "ProposalExecuted")["effective_height"]
        .as_u64()
        .unwrap()
}

fn validator_keys(node: &Node, height: u64) -> Vec<String> {
    let set = node.rpc("th_getValidators", json!([height]));
    set["validators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["public_key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_validators_vote_a_follower_in_and_one_of_themselves_out() {
    let dir = tempfile::tempdir().unwrap();
    // Four validators, the standby fifth, and a node that joins at the end.
    let homes = testnet(&dir.path().join("net"), 4, 2);
    let mut nodes: Vec<Node> = homes[..5].iter().map(|h| start(h, &[])).collect();
    wait_for_height(
        &nodes.iter().collect::<Vec<_>>(),
        2,
        Duration::from_secs(120),
    );
    assert_eq!(nodes[4].metric("timerhost_consensus_in_validator_set"), 0.0);

    // The fifth's key, as its operator would read it; dev account 4 operates it.
    let fifth = offline_json(&["keys", "show-consensus", "--home", home_arg(&homes[4])])
        ["public_key"]
        .as_str()
        .unwrap()
        .to_string();
    let accounts = offline_json(&["keys", "list"]);
    let operator4 = accounts["dev_accounts"][4]["address"]
        .as_str()
        .unwrap_or_else(|| panic!("dev account 4 in {accounts}"))
        .to_string();

    // Three of four vote it in (75 % > 2/3).
    let added_at = vote_through(
        &nodes[0],
        &[
            "add-validator",
            &fifth,
            "--power",
            "1",
            "--operator",
            &operator4,
        ],
        &[0, 1, 2],
    );
    assert!(!validator_keys(&nodes[0], added_at - 1).contains(&fifth));
    assert!(validator_keys(&nodes[0], added_at).contains(&fifth));
    let all: Vec<&Node> = nodes.iter().collect();
    wait_for_height(&all, added_at + 10, Duration::from_secs(180));
    assert_eq!(nodes[4].metric("timerhost_consensus_in_validator_set"), 1.0);
    assert_eq!(nodes[0].metric("timerhost_consensus_validators"), 5.0);
    assert!(
        nodes[4].metric("timerhost_consensus_votes_published_total") > 0.0,
        "the fifth signs from its activation height"
    );
    let cli_set = nodes[2].cli_json(&["validators"]);
    assert_eq!(
        cli_set["validators"].as_array().unwrap().len(),
        5,
        "{cli_set}"
    );
    let through = nodes.iter().map(height).min().unwrap();
    assert_same_chain(&all, through);

    // Four of five (80 %) vote validator 3 out; it is then killed, and the
    // remaining four keep committing.
    let third = offline_json(&["keys", "show-consensus", "--home", home_arg(&homes[3])])
        ["public_key"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(validator_keys(&nodes[0], added_at).contains(&third));
    let removed_at = vote_through(&nodes[0], &["remove-validator", &third], &[0, 1, 2, 4]);
    wait_for_height(&all, removed_at, Duration::from_secs(120));
    assert!(!validator_keys(&nodes[0], removed_at).contains(&third));
    kill9(&mut nodes[3]);
    let remaining: Vec<&Node> = [0, 1, 2, 4].iter().map(|i| &nodes[*i]).collect();
    let from = height(&nodes[0]);
    wait_for_height(&remaining, from + 10, Duration::from_secs(180));
    let through = remaining.iter().map(|n| height(n)).min().unwrap();
    assert_same_chain(&remaining, through);

    // A node syncing from genesis follows both changes, then replays.
    let late = start(&homes[5], &[]);
    let mut everyone = remaining.clone();
    everyone.push(&late);
    wait_for_height(&everyone, through, Duration::from_secs(240));
    assert_same_chain(&everyone, through);
    let stopped = late.terminate();
    assert!(stopped.contains("stopped at height"), "{stopped}");
    let replay = Command::new(TIMERHOST)
        .args(["replay", "--home", home_arg(&homes[5])])
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}

/// A transfer of 0 from dev account 6 through `node`: its receipt,
/// success or not.
fn transfer_of_zero(node: &Node) -> Value {
    let out = node.cli(&[
        "transfer",
        "0x00000000000000000000000000000000000000cc",
        "0",
        "--dev-account",
        "6",
        "--json",
    ]);
    // A failed transaction prints its receipt, then the error.
    serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Value>()
        .next()
        .and_then(|first| first.ok())
        .unwrap_or_else(|| {
            panic!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

#[test]
fn a_governed_upgrade_stops_the_old_release_and_the_new_one_applies_it_from_its_height() {
    const UPGRADE: &str = "zero-value-transfer-guard";
    let dir = tempfile::tempdir().unwrap();
    let homes = testnet(&dir.path().join("net"), 4, 0);
    // Validator 3 runs "the previous release": one that does not know the
    // upgrade (`--forget-upgrade`, the test's stand-in for an older binary).
    let old_log = dir.path().join("old-release.log");
    let mut nodes: Vec<Node> = homes[..3].iter().map(|h| start(h, &[])).collect();
    nodes.push(Node::start_logged(
        &[
            "node",
            "--home",
            home_arg(&homes[3]),
            "--forget-upgrade",
            UPGRADE,
        ],
        &old_log,
    ));
    wait_for_height(
        &nodes.iter().collect::<Vec<_>>(),
        2,
        Duration::from_secs(120),
    );
    // Before the upgrade, a transfer of 0 succeeds (and does nothing).
    let before = transfer_of_zero(&nodes[0]);
    assert_eq!(before["status"], "success", "{before}");
    let at = height(&nodes[0]) + 40;
    let effective = vote_through(
        &nodes[0],
        &[
            "schedule-upgrade",
            UPGRADE,
            "--height",
            &at.to_string(),
            "--info",
            "install a timerhost that knows zero-value-transfer-guard",
        ],
        &[0, 1, 2],
    );
    assert_eq!(effective, at);
    // The old release stops cleanly before the upgrade's height, naming it.
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = nodes[3].child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the old release did not stop");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(!status.success());
    let log = std::fs::read_to_string(&old_log).unwrap();
    assert!(
        log.contains(&format!("upgrade {UPGRADE} applies from height {at}"))
            && log.contains("install a timerhost that knows zero-value-transfer-guard"),
        "{log}"
    );
    {
        let store = timerhost_state::ChainStore::new(
            timerhost_state::SledBackend::open(&homes[3].join("data")).unwrap(),
        );
        assert_eq!(
            store.head_height().unwrap(),
            Some(at - 1),
            "it stopped before {at}"
        );
    }
    // The three that know it continue past it, under its rule.
    let three: Vec<&Node> = nodes[..3].iter().collect();
    wait_for_height(&three, at + 3, Duration::from_secs(120));
    let after = transfer_of_zero(&nodes[1]);
    assert_eq!(after["status"], "failed", "{after}");
    assert!(
        after["error"]["message"]
            .as_str()
            .unwrap()
            .contains(UPGRADE),
        "{after}"
    );
    // The new release on validator 3's home catches up; every root agrees.
    nodes[3] = start(&homes[3], &[]);
    let target = height(&nodes[0]) + 2;
    wait_for_height(
        &nodes.iter().collect::<Vec<_>>(),
        target,
        Duration::from_secs(120),
    );
    assert_same_chain(&nodes.iter().collect::<Vec<_>>(), target);
    // A node replaying from genesis crosses the upgrade as the network did.
    let node0 = nodes.remove(0);
    node0.terminate();
    let replay = offline_json(&["replay", "--home", home_arg(&homes[0])]);
    assert!(
        replay["verified_height"].as_u64().unwrap() >= target,
        "{replay}"
    );
    assert_eq!(replay["ok"], true, "{replay}");
}
