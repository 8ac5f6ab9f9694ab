//! Restart safety of `timerhost node`: SIGKILL a running node 10 times at
//! random moments while clients send transactions. Every restart resumes at a
//! committed height at least as high as any the clients saw, every receipt a
//! client saw is still there (same block), and `timerhost replay` verifies
//! every state root at the end.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};

const TIMERHOST: &str = env!("CARGO_BIN_EXE_timerhost");

fn cli(url: &str, args: &[&str]) -> Value {
    let out = Command::new(TIMERHOST)
        .args(args)
        .args(["--rpc", url, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "timerhost {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn sigkill_a_running_node_10_times_loses_nothing_a_client_saw() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let home = home.to_str().unwrap();
    let init = Command::new(TIMERHOST)
        .args(["init", "--dev", "--home", home])
        .output()
        .unwrap();
    assert!(init.status.success());
    let mut rng = ChaCha20Rng::seed_from_u64(0x5eed);
    let mut seen: Vec<(Value, u64)> = Vec::new();
    let mut max_height_seen = 0;
    for round in 0..10 {
        let mut child = Command::new(TIMERHOST)
            .args([
                "node",
                "--home",
                home,
                "--rpc",
                "127.0.0.1:0",
                "--block-time",
                "30ms",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let url = loop {
            let line = lines.next().expect("node exited before starting").unwrap();
            if let Some(u) = line.strip_prefix("rpc: ") {
                break u.to_string();
            }
        };
        // Keep draining stdout so the node never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});

        let status = cli(&url, &["status"]);
        let height = status["height"].as_u64().unwrap();
        assert!(
            height >= max_height_seen,
            "round {round}: restarted at {height}, a client saw {max_height_seen}"
        );
        for (hash, h) in &seen {
            let r = cli(&url, &["rpc", "th_getReceipt", &json!([hash]).to_string()]);
            assert_eq!(r["height"], *h, "round {round}: receipt {hash} lost: {r}");
        }
        // A client sends transfers and waits for each receipt.
        let from = (round % 5).to_string();
        for _ in 0..rng.gen_range(1..4) {
            let to = format!("0x{:040x}", rng.gen_range(0x100u64..0x200));
            let r = cli(&url, &["transfer", &to, "1", "--dev-account", &from]);
            assert_eq!(r["status"], "success", "{r}");
            let h = r["height"].as_u64().unwrap();
            max_height_seen = max_height_seen.max(h);
            seen.push((r["tx_hash"].clone(), h));
        }
        let h = cli(&url, &["status"])["height"].as_u64().unwrap();
        max_height_seen = max_height_seen.max(h);
        // Kill at a random moment while blocks keep coming.
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..200)));
        child.kill().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    assert!(seen.len() >= 10);
    let replay = Command::new(TIMERHOST)
        .args(["replay", "--home", home, "--json"])
        .output()
        .unwrap();
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let v: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert!(v["verified_height"].as_u64().unwrap() >= max_height_seen);
}
