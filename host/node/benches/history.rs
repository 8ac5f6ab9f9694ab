//! What a long-running validator's disk holds (#44): a chain of 100,000
//! loaded blocks kept whole (an archive node) against the same chain pruned
//! to its last 1,000 blocks, and how long a store migration takes on it.
//!
//! ```text
//! cargo bench -p timerhost-node --bench history --ignore-rust-version
//! TIMERHOST_HISTORY_BLOCKS=10000 cargo bench -p timerhost-node --bench history …   # smaller
//! ```
//!
//! The chain (setup, timed and reported) is written in process on a dev
//! home: every block carries `TXS_PER_BLOCK` transfers from rotating dev
//! accounts and a heartbeat actor's timer fires every other block, so each
//! block has transactions, receipts, events and index entries. Then:
//!
//! - **archive**: the size of `HOME/data` as written;
//! - **pruned**: a copy of it pruned offline to its last `KEEP` blocks with
//!   the node's own step (`ChainStore::prune`, 16 heights a batch), then
//!   opened and closed once more so sled can reclaim its segments — the
//!   size after, and how long pruning took; then `timerhost compact`'s
//!   copy of it (and of the archive, for comparison);
//! - **migration**: a copy turned into a format-9 store (its `h` header
//!   records removed, its marker set to 9: formats 9 and 10 differ by
//!   exactly that, `timerhost_state::migrations`), then `timerhost migrate`
//!   timed on it.

use std::process::Command;
use std::time::Instant;

use timerhost_chain::testing::dev_builders;
use timerhost_node::home::Home;
use timerhost_state::namespaces::{ns_key, HEADERS, META};
use timerhost_state::{ChainStore, KvBackend, SledBackend, WriteBatch};
use timerhost_types::{Address, Genesis, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const TXS_PER_BLOCK: usize = 10;
const HEARTBEAT: &str = include_str!("../../../actors/heartbeat/heartbeat.py");
const KEEP: u64 = 1_000;

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    let status = Command::new("cp")
        .arg("-r")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

fn fill(home: &Home, blocks: u64) {
    let chain = home.init(&Genesis::dev()).expect("init the home");
    let mut b = dev_builders();
    let proposer = Address([0xee; 20]);
    let mut ts = chain.head().unwrap().timestamp_ms;
    let started = Instant::now();
    let mut produce = |txs: Vec<timerhost_types::SignedTransaction>| {
        ts += 200;
        let p = chain.produce_block(&txs, ts, proposer).unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
    };
    produce(vec![b[0].deploy(
        HEARTBEAT,
        vec![Value::int(2)],
        10u128.pow(22),
    )]);
    while chain.head().unwrap().height < blocks {
        let height = chain.head().unwrap().height;
        let txs = (0..TXS_PER_BLOCK)
            .map(|i| {
                let from = 1 + (height as usize * TXS_PER_BLOCK + i) % 9;
                let to = b[(from % 9) + 1].address();
                b[from].transfer(to, 1)
            })
            .collect();
        produce(txs);
    }
    eprintln!(
        "setup: {blocks} blocks of {TXS_PER_BLOCK} transfers and a heartbeat in {:.0} s",
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    let blocks: u64 = std::env::var("TIMERHOST_HISTORY_BLOCKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path().join("home"));
    fill(&home, blocks);
    let archive = timerhost_state::compaction::dir_bytes(&home.data_path());

    let pruned_dir = dir.path().join("pruned");
    copy_dir(&home.data_path(), &pruned_dir);
    let started = Instant::now();
    let mut removed = 0u64;
    {
        let store = ChainStore::new(SledBackend::open(&pruned_dir).unwrap());
        loop {
            let step = store.prune(KEEP, 16).unwrap();
            if step.heights == 0 {
                break;
            }
            removed += step.entries;
        }
    }
    let pruning = started.elapsed();
    // Reopened once: sled reclaims segments it can on open and flush.
    drop(ChainStore::new(SledBackend::open(&pruned_dir).unwrap()));
    let pruned = timerhost_state::compaction::dir_bytes(&pruned_dir);
    // `timerhost compact`, on the pruned copy and on the archive.
    let compact = |dir: &std::path::Path| {
        let started = Instant::now();
        let report = timerhost_state::compaction::compact(dir, |_| {}).unwrap();
        (report, started.elapsed())
    };
    let (pruned_compacted, pruned_compact_time) = compact(&pruned_dir);
    let archive_copy = dir.path().join("archive-copy");
    copy_dir(&home.data_path(), &archive_copy);
    let (archive_compacted, archive_compact_time) = compact(&archive_copy);

    let old_dir = dir.path().join("format9");
    copy_dir(home.root(), &old_dir);
    {
        let backend = SledBackend::open(&old_dir.join("data")).unwrap();
        let mut batch = WriteBatch::new();
        for height in 0..=blocks {
            batch.delete(ns_key(HEADERS, &height.to_be_bytes()));
        }
        batch.put(ns_key(META, b"format"), 9u32.to_be_bytes().to_vec());
        backend.write(batch).unwrap();
    }
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_timerhost"))
        .args(["--json", "migrate", "--home"])
        .arg(&old_dir)
        .output()
        .unwrap();
    let migration = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    println!(
        "\n| {blocks} blocks ({TXS_PER_BLOCK} transfers each, a heartbeat every 2) | result |"
    );
    println!("|---|---|");
    println!(
        "| archive node (`keep_blocks = 0`): HOME/data | {:.0} MiB |",
        mib(archive)
    );
    println!(
        "| pruned to the last {KEEP} (`keep_blocks = {KEEP}`): HOME/data | {:.0} MiB ({removed} entries removed in {:.1} s) |",
        mib(pruned),
        pruning.as_secs_f64()
    );
    println!(
        "| … pruned, then `timerhost compact` | {:.0} MiB ({} entries copied in {:.1} s) |",
        mib(pruned_compacted.bytes_after),
        pruned_compacted.entries,
        pruned_compact_time.as_secs_f64()
    );
    println!(
        "| archive, `timerhost compact` (for comparison) | {:.0} MiB ({} entries copied in {:.1} s) |",
        mib(archive_compacted.bytes_after),
        archive_compacted.entries,
        archive_compact_time.as_secs_f64()
    );
    println!(
        "| migration format 9 → 11 (`timerhost migrate`) | {:.1} s: {} |",
        migration.as_secs_f64(),
        String::from_utf8_lossy(&out.stdout).trim()
    );
}
