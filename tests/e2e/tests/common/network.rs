//! A validator network on loopback for the tests (`timerhost testnet
//! --init-only` writes the homes; each node is its own process), and what
//! they ask of it: heights, headers, agreement.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{home_arg, Node, TIMERHOST};

/// `count` consecutive free loopback ports for RPC and as many for p2p,
/// below Linux's ephemeral range (32768–60999): a node started late (the
/// follower joins after height 30) must still find its port free, and an
/// ephemeral port can be taken meanwhile by any outgoing connection — the
/// validators' own dials included (a CI run saw the follower stay at height 0
/// for 240 s with its port in that range).
pub fn free_ports(count: u16) -> (u16, u16) {
    let seed = u64::from(std::process::id()).wrapping_mul(2_654_435_761)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos() as u64;
    for attempt in 0..200u64 {
        let base = 20_000 + ((seed.wrapping_add(attempt * 7_919)) % 12_000) as u16;
        let all_free = (0..2 * count).all(|i| TcpListener::bind(("127.0.0.1", base + i)).is_ok());
        if all_free {
            return (base, base + count);
        }
    }
    panic!("no free port range");
}

/// Writes a testnet's homes under `dir`; returns them (validators first).
pub fn testnet(dir: &Path, validators: u16, followers: u16) -> Vec<PathBuf> {
    let (rpc, p2p) = free_ports(validators + followers);
    let out = Command::new(TIMERHOST)
        .args([
            "testnet",
            "--init-only",
            "--dir",
            home_arg(dir),
            "--validators",
            &validators.to_string(),
            "--followers",
            &followers.to_string(),
            "--rpc-port",
            &rpc.to_string(),
            "--p2p-port",
            &p2p.to_string(),
            "--block-time",
            "200ms",
            "--timeout-propose",
            "1s",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["event"], "created");
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| PathBuf::from(n["home"].as_str().unwrap()))
        .collect()
}

pub fn start(home: &Path, extra: &[&str]) -> Node {
    let mut args = vec!["node", "--home", home_arg(home), "--metrics", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    Node::start(&args)
}

pub fn height(node: &Node) -> u64 {
    node.rpc("th_status", json!([]))["height"].as_u64().unwrap()
}

pub fn wait_for_height(nodes: &[&Node], target: u64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let heights: Vec<u64> = nodes.iter().map(|n| height(n)).collect();
        if heights.iter().all(|h| *h >= target) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "nodes at heights {heights:?} did not all reach {target} within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// (hash, state root, receipts root, tx count) of block `h`.
pub fn header(node: &Node, h: u64) -> (String, String, String, usize) {
    let b = node.rpc("th_getBlock", json!([h]));
    assert!(!b.is_null(), "{} has no block {h}", node.url);
    (
        b["hash"].as_str().unwrap().to_string(),
        b["state_root"].as_str().unwrap().to_string(),
        b["receipts_root"].as_str().unwrap().to_string(),
        b["tx_count"]
            .as_u64()
            .or_else(|| b["txs"].as_array().map(|t| t.len() as u64))
            .unwrap() as usize,
    )
}

pub fn assert_same_chain(nodes: &[&Node], through: u64) {
    for h in 1..=through {
        let first = header(nodes[0], h);
        for n in &nodes[1..] {
            assert_eq!(
                header(n, h),
                first,
                "height {h}: {} and {} differ",
                nodes[0].url,
                n.url
            );
        }
    }
}

pub fn kill9(node: &mut Node) {
    let status = Command::new("kill")
        .args(["-KILL", &node.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let _ = node.child.wait();
}
