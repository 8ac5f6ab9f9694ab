//! Validator operations on the store (#44): a node that prunes keeps its
//! last `keep_blocks` blocks and says "pruned" for older ones, and a store
//! of the previous format is migrated in place — by `timerhost migrate`
//! killed at random moments, then finished — and the node runs on it with
//! every state root verified.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{home_arg, offline_json, Node, TIMERHOST};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::{json, Value};
use timerhost_state::namespaces::{ns_key, HEADERS, META};
use timerhost_state::{ChainStore, KvBackend, SledBackend, WriteBatch, STORE_FORMAT};

fn init(home: &Path) {
    let out = Command::new(TIMERHOST)
        .args(["init", "--dev", "--home", home_arg(home)])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run_node(home: &Path, block_time: &str) -> Node {
    Node::start(&[
        "node",
        "--home",
        home_arg(home),
        "--rpc",
        "127.0.0.1:0",
        "--block-time",
        block_time,
    ])
}

fn height(node: &Node) -> u64 {
    node.rpc("th_status", json!([]))["height"].as_u64().unwrap()
}

fn wait_for(what: &str, deadline: Duration, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + deadline;
    while !done() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn raw_call(node: &Node, method: &str, params: Value) -> Value {
    node.raw(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
}

#[test]
fn a_pruning_node_keeps_its_last_blocks_and_says_pruned_for_older_ones() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    init(&home);
    std::fs::write(home.join("node.toml"), "[storage]\nkeep_blocks = 20\n").unwrap();
    let node = run_node(&home, "20ms");
    // Transactions in the early blocks, which pruning will remove.
    let early = node.cli_json(&[
        "transfer",
        "0x00000000000000000000000000000000000000aa",
        "5",
        "--dev-account",
        "1",
    ]);
    let early_height = early["height"].as_u64().unwrap();
    let early_hash = early["tx_hash"].as_str().unwrap().to_string();
    wait_for(
        "60 blocks past the transfer",
        Duration::from_secs(60),
        || height(&node) > early_height + 60,
    );
    wait_for("the pruner to catch up", Duration::from_secs(30), || {
        let status = node.rpc("th_status", json!([]));
        status["history_floor"].as_u64().unwrap() + 20 + 16 >= status["height"].as_u64().unwrap()
    });
    let status = node.rpc("th_status", json!([]));
    let floor = status["history_floor"].as_u64().unwrap();
    assert!(floor > early_height, "{status}");
    // Below the floor: a "pruned" error naming what the node keeps.
    let old = raw_call(&node, "th_getBlock", json!([early_height]));
    assert_eq!(old["error"]["code"], -32006, "{old}");
    let message = old["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("pruned: this node keeps the last 20 blocks"),
        "{message}"
    );
    assert!(old["error"]["data"]["floor"].as_u64().unwrap() >= floor);
    let events = raw_call(&node, "th_getEvents", json!([{ "from": 0 }]));
    assert!(
        events["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("pruned"),
        "{events}"
    );
    // The pruned transaction is no longer indexed; the genesis block and
    // recent blocks are whole; headers stay for every height.
    assert_eq!(node.rpc("th_getReceipt", json!([early_hash])), Value::Null);
    assert_eq!(node.rpc("th_getBlock", json!([0]))["height"], 0);
    let recent = status["height"].as_u64().unwrap() - 5;
    assert_eq!(node.rpc("th_getBlock", json!([recent]))["height"], recent);
    // Blocks keep coming while it prunes, and it stops cleanly.
    let before = height(&node);
    wait_for("more blocks", Duration::from_secs(30), || {
        height(&node) > before + 10
    });
    let out = node.terminate();
    assert!(out.contains("stopped at height"), "{out}");
    // A replay needs every block: it says which are gone.
    let replay = Command::new(TIMERHOST)
        .args(["replay", "--home", home_arg(&home)])
        .output()
        .unwrap();
    assert!(!replay.status.success());
    assert!(
        String::from_utf8_lossy(&replay.stderr).contains("pruned"),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
}

/// Turns the home's store into format 9: what format 10 added (`h`
/// header records) removed and the marker set (see
/// `timerhost_state::migrations`; formats 9 and 10 differ by exactly that).
fn downgrade_to_format_nine(home: &Path) -> u64 {
    let backend = SledBackend::open(&home.join("data")).unwrap();
    let store = ChainStore::new(backend);
    let head = store.head_height().unwrap().unwrap();
    let mut batch = WriteBatch::new();
    for height in 0..=head {
        batch.delete(ns_key(HEADERS, &height.to_be_bytes()));
    }
    batch.put(ns_key(META, b"format"), 9u32.to_be_bytes().to_vec());
    store.backend().write(batch).unwrap();
    head
}

fn format_of(home: &Path) -> u32 {
    let backend = SledBackend::open(&home.join("data")).unwrap();
    let bytes = backend.get(&ns_key(META, b"format")).unwrap().unwrap();
    u32::from_be_bytes(bytes.try_into().unwrap())
}

#[test]
fn a_store_of_the_previous_format_migrates_through_kills_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    init(&home);
    let node = run_node(&home, "2ms");
    node.cli_json(&[
        "transfer",
        "0x00000000000000000000000000000000000000bb",
        "7",
        "--dev-account",
        "1",
    ]);
    wait_for("3,000 blocks", Duration::from_secs(120), || {
        height(&node) >= 3_000
    });
    node.terminate();
    let head = downgrade_to_format_nine(&home);
    // How long a whole migration takes here, to kill others within it.
    let started = Instant::now();
    let whole = Command::new(TIMERHOST)
        .args(["migrate", "--home", home_arg(&home)])
        .output()
        .unwrap();
    assert!(whole.status.success());
    let took = started.elapsed().as_millis() as u64;
    // A format-9 store opens only through a migration (`timerhost node`
    // migrates at start); here `timerhost migrate` is killed at random
    // moments within its run, each time on a fresh format-9 store.
    let mut rng = ChaCha20Rng::seed_from_u64(44);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..12 {
        downgrade_to_format_nine(&home);
        let mut child = Command::new(TIMERHOST)
            .args(["migrate", "--home", home_arg(&home)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..=took)));
        let _ = child.kill();
        child.wait().unwrap();
        let format = format_of(&home);
        assert!((9..=STORE_FORMAT).contains(&format), "format {format}");
        // Whatever header records a killed run left are right.
        let store = ChainStore::new(SledBackend::open(&home.join("data")).unwrap());
        for height in (0..=head).step_by(97) {
            if let Some(stored) = store.header(height).unwrap() {
                let block = store
                    .backend()
                    .get(&ns_key(
                        timerhost_state::namespaces::BLOCK,
                        &height.to_be_bytes(),
                    ))
                    .unwrap()
                    .unwrap();
                let block: timerhost_types::Block =
                    timerhost_types::encoding::decode(&block).unwrap();
                assert_eq!(stored.header, block.header);
            } else {
                assert!(
                    format < 10,
                    "format {format} without the header of {height}"
                );
            }
        }
        seen.insert(format);
    }
    eprintln!("formats left by the killed migrations: {seen:?}");
    let report = offline_json(&["migrate", "--home", home_arg(&home)]);
    assert_eq!(
        report["to"], STORE_FORMAT,
        "{report} (formats seen after kills: {seen:?})"
    );
    assert_eq!(format_of(&home), STORE_FORMAT);
    // Every root verifies, and the node continues from the same head.
    let verified = offline_json(&["replay", "--home", home_arg(&home)]);
    assert_eq!(verified["verified_height"], head);
    let node = run_node(&home, "20ms");
    wait_for(
        "a block past the migrated head",
        Duration::from_secs(30),
        || height(&node) > head,
    );
    let header = node.rpc("th_getBlock", json!([head / 2]));
    assert_eq!(header["height"], head / 2);
    node.terminate();
}

#[test]
fn a_node_migrates_a_previous_format_store_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    init(&home);
    let node = run_node(&home, "5ms");
    wait_for("50 blocks", Duration::from_secs(60), || height(&node) >= 50);
    node.terminate();
    let head = downgrade_to_format_nine(&home);
    let node = run_node(&home, "20ms");
    assert!(height(&node) >= head);
    assert_eq!(node.rpc("th_getBlock", json!([head]))["height"], head);
    node.terminate();
    assert_eq!(format_of(&home), STORE_FORMAT);
}

/// A tmpfs of `megabytes` mounted at `dir` (root only), unmounted on drop.
struct SmallDisk {
    dir: std::path::PathBuf,
}

impl SmallDisk {
    fn mount(dir: &Path, megabytes: u64) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).ok()?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| SmallDisk {
            dir: dir.to_path_buf(),
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// Fills the filesystem of `dir` until fewer than `leave` bytes are free.
fn fill(dir: &Path, leave: u64) -> std::path::PathBuf {
    let path = dir.join("filler");
    let free = fs_free(dir);
    let size = free.saturating_sub(leave);
    let file = std::fs::File::create(&path).unwrap();
    use std::io::Write;
    let mut writer = std::io::BufWriter::new(file);
    let chunk = vec![7u8; 1 << 20];
    let mut written = 0;
    while written < size {
        let n = (size - written).min(chunk.len() as u64) as usize;
        if writer.write_all(&chunk[..n]).is_err() {
            break;
        }
        written += n as u64;
    }
    let _ = writer.flush();
    path
}

fn fs_free(dir: &Path) -> u64 {
    let out = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_full_disk_stops_commits_keeps_reads_and_resumes_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mount_at = dir.path().join("disk");
    let Some(disk) = SmallDisk::mount(&mount_at, 96) else {
        eprintln!("full disk: skipped — mounting a tmpfs needs root");
        return;
    };
    let home = disk.dir.join("home");
    init(&home);
    std::fs::write(
        home.join("node.toml"),
        "[storage]\nmin_free_bytes = 24000000\n",
    )
    .unwrap();
    let log = dir.path().join("node.log");
    let node = Node::start_logged(
        &[
            "node",
            "--home",
            home_arg(&home),
            "--rpc",
            "127.0.0.1:0",
            "--block-time",
            "50ms",
        ],
        &log,
    );
    wait_for("ten blocks", Duration::from_secs(30), || {
        height(&node) >= 10
    });
    let filler = fill(&disk.dir, 16_000_000);
    // Commits stop (at most the block in flight lands), reads go on.
    wait_for(
        "the node to see the full disk",
        Duration::from_secs(10),
        || node.rpc("th_status", json!([]))["producer"]["disk"]["full"] == true,
    );
    let stopped_at = height(&node);
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        height(&node) <= stopped_at + 1,
        "blocks kept coming on a full disk"
    );
    assert_eq!(node.rpc("th_getBlock", json!([5]))["height"], 5);
    let status = node.rpc("th_status", json!([]));
    assert!(
        status["producer"]["disk"]["free_bytes"].as_u64().unwrap() < 24_000_000,
        "{status}"
    );
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("disk full:"));
    // Space returns: commits resume by themselves.
    std::fs::remove_file(&filler).unwrap();
    wait_for("commits to resume", Duration::from_secs(15), || {
        height(&node) > stopped_at + 5
    });
    assert_eq!(
        node.rpc("th_status", json!([]))["producer"]["disk"]["full"],
        false
    );
    // Full again, then a stop request: it exits promptly.
    let _filler = fill(&disk.dir, 16_000_000);
    wait_for("the full disk again", Duration::from_secs(10), || {
        node.rpc("th_status", json!([]))["producer"]["disk"]["full"] == true
    });
    let out = node.terminate();
    assert!(out.contains("stopped at height"), "{out}");
    drop(disk);
}
