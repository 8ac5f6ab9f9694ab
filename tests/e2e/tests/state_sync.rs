//! State sync end to end (#44), through the real binary: four validators
//! take a snapshot every 20 blocks while a heartbeat actor keeps timers
//! pending; a new node joins with `--state-sync` from three peers' RPC, the
//! first of which is a proxy that corrupts every chunk it forwards. The
//! node restores the newest snapshot below the trusted block, blames the
//! liar (its log says so), follows the chain, and agrees with the
//! validators — which replayed every block — at every height after the
//! snapshot; its own history below the snapshot answers "pruned … joined by
//! state sync". And a node far behind three pruning validators takes the
//! blocks they no longer keep from the fourth, an archive.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use common::network::{assert_same_chain, height, start, testnet, wait_for_height};
use common::{home_arg, Node, HEARTBEAT};
use serde_json::{json, Value};

const SNAPSHOT_INTERVAL: u64 = 20;

/// Reads one HTTP/1.1 message's head and body from `reader`.
fn read_message(reader: &mut BufReader<TcpStream>) -> Option<(String, Vec<u8>)> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((head, body))
}

/// A JSON-RPC proxy to `upstream` that flips a hex digit in the middle of
/// every snapshot chunk it forwards; returns its URL.
fn lying_proxy(upstream: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let upstream = upstream.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(client.try_clone().unwrap());
                let Some((_, body)) = read_message(&mut reader) else {
                    return;
                };
                let target = upstream.trim_start_matches("http://");
                let mut up = TcpStream::connect(target).unwrap();
                write!(
                    up,
                    "POST / HTTP/1.1\r\nHost: {target}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                )
                .unwrap();
                up.write_all(&body).unwrap();
                let mut up_reader = BufReader::new(up);
                let Some((_, answer)) = read_message(&mut up_reader) else {
                    return;
                };
                let mut answer: Value = serde_json::from_slice(&answer).unwrap();
                if let Some(chunk) = answer["result"]["chunk"].as_str() {
                    let mut bytes = chunk.as_bytes().to_vec();
                    let middle = bytes.len() / 2;
                    bytes[middle] = if bytes[middle] == b'0' { b'1' } else { b'0' };
                    answer["result"]["chunk"] = json!(String::from_utf8(bytes).unwrap());
                }
                let answer = serde_json::to_vec(&answer).unwrap();
                let mut client = client;
                let _ = write!(
                    client,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    answer.len()
                );
                let _ = client.write_all(&answer);
            });
        }
    });
    url
}

fn append(path: &std::path::Path, text: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

#[test]
fn a_node_joins_by_state_sync_past_a_lying_peer_and_agrees_at_every_later_height() {
    let dir = tempfile::tempdir().unwrap();
    let homes = testnet(&dir.path().join("net"), 4, 1);
    for home in &homes[..4] {
        append(
            &home.join("node.toml"),
            &format!("\n[sync]\nsnapshot_interval = {SNAPSHOT_INTERVAL}\nsnapshot_keep = 2\n"),
        );
    }
    let nodes: Vec<Node> = homes[..4].iter().map(|h| start(h, &[])).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    wait_for_height(&all, 2, Duration::from_secs(120));
    // Timers stay pending across the snapshot: a heartbeat every 3 blocks.
    let deployed = nodes[1].cli_json(&[
        "deploy",
        HEARTBEAT,
        "--args",
        "[3]",
        "--value",
        "1000000000000000000000",
        "--dev-account",
        "1",
    ]);
    assert_eq!(deployed["status"], "success", "{deployed}");

    // Two snapshots (20, 40), the same on every validator.
    wait_for_height(&all, 2 * SNAPSHOT_INTERVAL + 6, Duration::from_secs(240));
    let offered: Vec<Value> = nodes
        .iter()
        .map(|n| {
            let list = n.rpc("th_getSnapshots", json!([]));
            list.as_array()
                .unwrap()
                .iter()
                .find(|m| m["height"] == 2 * SNAPSHOT_INTERVAL)
                .cloned()
                .unwrap_or_else(|| panic!("{} offers {list}", n.url))
        })
        .collect();
    for m in &offered[1..] {
        assert_eq!(
            m["id"], offered[0]["id"],
            "the validators' snapshots differ"
        );
    }
    assert!(
        offered[0]["derived_entries"].as_u64().unwrap() > 0,
        "{}",
        offered[0]
    );

    // The operator trusts a recent block.
    let trust_height = height(&nodes[0]) - 1;
    let trusted = nodes[0].rpc("th_getBlock", json!([trust_height]));
    let trust_hash = trusted["hash"].as_str().unwrap().to_string();
    // The trusted block's commit certificate, checked by the node against
    // the set of its height (#48): what makes a header the chain's.
    let commit = nodes[1].rpc("th_getCommit", json!([trust_height]));
    assert_eq!(commit["quorum"], true, "{commit}");
    assert_eq!(commit["block_hash"], trust_hash.as_str(), "{commit}");
    assert_eq!(commit["matches_stored_block"], true, "{commit}");
    assert!(
        commit["signatures"].as_array().unwrap().len() >= 3,
        "{commit}"
    );
    assert_eq!(commit["total_power"], 4, "{commit}");
    let liar = lying_proxy(nodes[3].url.clone());
    append(
        &homes[4].join("node.toml"),
        &format!(
            "\n[sync]\nsnapshot_interval = {SNAPSHOT_INTERVAL}\nrpc_servers = [{:?}, {:?}, {:?}]\ntrust_height = {trust_height}\ntrust_hash = {trust_hash:?}\n",
            liar, nodes[1].url, nodes[2].url
        ),
    );
    let log = dir.path().join("synced.log");
    let synced = Node::start_logged(
        &["node", "--home", home_arg(&homes[4]), "--state-sync"],
        &log,
    );
    let target = height(&nodes[0]) + 10;
    let everyone: Vec<&Node> = nodes.iter().chain(std::iter::once(&synced)).collect();
    wait_for_height(&everyone, target, Duration::from_secs(240));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains(&format!(
            "state sync: restored height {}",
            2 * SNAPSHOT_INTERVAL
        )),
        "{text}"
    );
    assert!(
        text.contains("a peer served a bad chunk and was avoided") && text.contains(&liar),
        "the liar went unnoticed: {text}"
    );

    // Every height after the snapshot: the same block, roots and receipts
    // as the validators, which executed every block since genesis.
    let status = synced.rpc("th_status", json!([]));
    assert_eq!(
        status["history_floor"],
        2 * SNAPSHOT_INTERVAL + 1,
        "{status}"
    );
    for h in 2 * SNAPSHOT_INTERVAL + 1..=target {
        let ours = common::network::header(&synced, h);
        for n in &nodes {
            assert_eq!(
                common::network::header(n, h),
                ours,
                "height {h}: {} differs",
                n.url
            );
        }
    }
    assert_same_chain(&all, target);
    let below = synced.raw(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"th_getBlock","params":[{}]}}"#,
        SNAPSHOT_INTERVAL
    ));
    assert!(
        below["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("joined by state sync")),
        "{below}"
    );
    // The timers restored with the state keep firing on the synced node.
    let fired = synced.rpc(
        "th_getEvents",
        json!([{"name": "Heartbeat", "from": 2 * SNAPSHOT_INTERVAL + 1}]),
    );
    assert!(fired.as_array().is_some_and(|a| !a.is_empty()), "{fired}");
    // A restart of the synced node does not sync again.
    synced.terminate();
    let again = start(&homes[4], &["--state-sync"]);
    wait_for_height(&[&again], target + 3, Duration::from_secs(120));
}

/// A node far behind asks its peers for blocks: three of the four
/// validators prune to their last 10 blocks, so they answer with their
/// floor (Malachite's history range) and the node takes the blocks they
/// no longer have from the archive one — and replays every one of them.
#[test]
fn a_late_follower_syncs_past_pruning_validators_from_the_archive_one() {
    let dir = tempfile::tempdir().unwrap();
    let homes = testnet(&dir.path().join("net"), 4, 1);
    for home in &homes[..3] {
        append(&home.join("node.toml"), "\n[storage]\nkeep_blocks = 10\n");
    }
    let nodes: Vec<Node> = homes[..4].iter().map(|h| start(h, &[])).collect();
    let all: Vec<&Node> = nodes.iter().collect();
    wait_for_height(&all, 60, Duration::from_secs(240));
    for n in &nodes[..3] {
        let floor = n.rpc("th_status", json!([]))["history_floor"]
            .as_u64()
            .unwrap();
        assert!(floor > 30, "{} has not pruned: floor {floor}", n.url);
    }
    let follower = start(&homes[4], &[]);
    let target = height(&nodes[0]) + 5;
    wait_for_height(&[&follower, &nodes[3]], target, Duration::from_secs(240));
    assert_same_chain(&[&nodes[3], &follower], target);
}
