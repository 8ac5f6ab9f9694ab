//! Crash safety: SIGKILL a process that is committing blocks, at random
//! moments, 20 times. After every kill the database reopens at a committed
//! height, every block the writer reported committed is there with all its
//! transactions, and `timerhost replay` verifies every state root.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use timerhost_node::home::Home;
use timerhost_types::Hash;

// This test opens the home in-process, which starts the actor VM.
#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const TIMERHOST: &str = env!("CARGO_BIN_EXE_timerhost");
const WRITER: &str = env!("CARGO_BIN_EXE_crash-writer");

#[test]
fn sigkill_during_commits_never_loses_a_committed_block() {
    let dir = tempfile::tempdir().unwrap();
    let home_dir = dir.path().join("home");
    let status = Command::new(TIMERHOST)
        .args(["init", "--dev", "--home"])
        .arg(&home_dir)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());

    let mut rng = ChaCha20Rng::seed_from_u64(0xc4a5);
    let mut reported: Vec<(u64, Vec<Hash>)> = Vec::new();
    let mut kills_mid_run = 0;
    for round in 0..20 {
        let mut child = Command::new(WRITER)
            .arg("--home")
            .arg(&home_dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel::<String>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Kill after a random number of reported commits plus a random delay,
        // so the kill lands anywhere: during open, mid-block, mid-commit.
        let wait_lines = rng.gen_range(0..6);
        let extra_delay = Duration::from_micros(rng.gen_range(0..30_000));
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut lines = Vec::new();
        while lines.len() < wait_lines && Instant::now() < deadline {
            if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
                lines.push(line);
            }
        }
        std::thread::sleep(extra_delay);
        child.kill().unwrap(); // SIGKILL on unix
        child.wait().unwrap();
        reader.join().unwrap();
        lines.extend(rx.try_iter());
        if !lines.is_empty() {
            kills_mid_run += 1;
        }
        for line in &lines {
            let mut parts = line.split_whitespace();
            assert_eq!(
                parts.next(),
                Some("COMMITTED"),
                "unexpected output {line:?}"
            );
            let height: u64 = parts.next().unwrap().parse().unwrap();
            let hashes = parts
                .next()
                .unwrap_or("")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(|h| h.parse().unwrap())
                .collect();
            reported.push((height, hashes));
        }

        // Reopen: head is at or past everything reported, and all of it is there.
        {
            let chain = Home::new(&home_dir)
                .open()
                .unwrap_or_else(|e| panic!("round {round}: reopen failed: {e}"));
            let head = chain.head().unwrap().height;
            if let Some((last, _)) = reported.last() {
                assert!(
                    head >= *last,
                    "round {round}: head {head} is behind reported commit {last}"
                );
            }
            for (height, hashes) in &reported {
                let block = chain
                    .store()
                    .block(*height)
                    .unwrap()
                    .unwrap_or_else(|| panic!("block {height} lost"));
                let stored: Vec<Hash> = block.txs.iter().map(|t| t.hash()).collect();
                assert_eq!(
                    &stored, hashes,
                    "round {round}: block {height} differs from what was reported"
                );
                for h in hashes {
                    let (loc, receipt) = chain
                        .store()
                        .receipt(h)
                        .unwrap()
                        .unwrap_or_else(|| panic!("receipt of {h} lost"));
                    assert_eq!(loc.height, *height);
                    assert!(receipt.is_success());
                }
            }
        }
        let out = Command::new(TIMERHOST)
            .args(["replay", "--json", "--home"])
            .arg(&home_dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "round {round}: replay failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["ok"], true);
    }
    assert!(
        kills_mid_run >= 10,
        "most kills should land while blocks are being committed ({kills_mid_run}/20)"
    );
    assert!(
        reported.len() >= 20,
        "the writer should have committed blocks ({})",
        reported.len()
    );
}
