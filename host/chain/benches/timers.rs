//! Timer benchmarks (issue 4), printed as a table for docs/PERFORMANCE.md.
//!
//! ```text
//! cargo bench -p timerhost-chain --bench timers --ignore-rust-version
//! ```
//!
//! 1. End-to-end fires per second: 20,000 timers with a trivial Python
//!    handler fire in one block on a sled store (execution, refunds, events,
//!    state root and the durable commit all included).
//! 2. End-of-block time for 10,000 due timers with 10,000 vs 1,000,000 timers
//!    pending at later heights (target ratio ≤ 1.2).
//! 3. Cost of a block that schedules 1,000 timers with 1,000 vs 1,000,000
//!    pending (target ratio ≤ 1.5).
//!
//! 2 and 3 use the deterministic mock runtime (the timer machinery, not
//! Python, is what scales with the pending count) on the in-memory store.
//! Each ratio compares two measurements taken in the same run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use timerhost_chain::testing::{dev_builders, MockRuntime, TxBuilder};
use timerhost_chain::{ActorRuntime, Chain, NoHooks, VmRuntime};
use timerhost_state::{KvBackend, MemoryBackend, SledBackend};
use timerhost_types::{Address, Genesis, SignedTransaction, TimerConfig, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const PROPOSER: Address = Address([0xee; 20]);

const TICK: &str = r#"
import pvm_host

class Tick:
    def arm(self, n, height):
        for i in range(n):
            pvm_host.schedule_timer_ex(height, b"", gas_limit=2000)

    def handle_timer(self, payload):
        pass
"#;

fn genesis() -> Genesis {
    let mut g = Genesis::dev();
    g.timers = TimerConfig {
        max_timers_per_actor: 1_000_000,
        // One 20,000-fire block, as before the per-block fire quota existed
        // (its default, 10,000, would split it in two).
        max_fires_per_block: 1_000_000,
        ..TimerConfig::default()
    };
    g.basefee.max_block_cycles = 1 << 38;
    g.basefee.max_block_cells = 1 << 34;
    g
}

fn builders() -> Vec<TxBuilder> {
    let mut b = dev_builders();
    for x in &mut b {
        x.cycles_limit = 1 << 36;
        x.cells_limit = 1 << 32;
        x.max_fee_per_cycle = 1_000_000;
        x.max_fee_per_cell = 1_000_000;
    }
    b
}

fn produce<B: KvBackend>(
    chain: &Chain<B>,
    txs: Vec<SignedTransaction>,
) -> (Duration, Vec<timerhost_types::Receipt>) {
    let head = chain.head().unwrap();
    let start = Instant::now();
    let p = chain
        .produce_block(&txs, head.timestamp + 1, PROPOSER)
        .unwrap();
    let elapsed = start.elapsed();
    if std::env::var_os("TIMERHOST_BENCH_MARKS").is_some() {
        // CLOCK_MONOTONIC bounds of every block, for `perf record -k mono`
        // followed by `perf report --time START,END` on one block.
        eprintln!("block {:?} .. {:?}", start, Instant::now());
    }
    assert!(p.rejected.is_empty(), "{:?}", p.rejected);
    for r in &p.executed.receipts {
        assert!(r.is_success(), "{:?}", r.error);
    }
    (elapsed, p.executed.receipts)
}

fn mine_to<B: KvBackend>(chain: &Chain<B>, height: u64) {
    while chain.head().unwrap().height < height {
        produce(chain, vec![]);
    }
}

fn fires_per_second() -> (usize, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let runtime: Arc<dyn ActorRuntime> = Arc::new(VmRuntime::new().unwrap());
    let chain = Chain::open(
        SledBackend::open(dir.path()).unwrap(),
        genesis(),
        runtime,
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut b = builders();
    let (_, r) = produce(&chain, vec![b[0].deploy(TICK, vec![], 10u128.pow(23))]);
    let actor = r[0].created_actor.unwrap();
    let n = 20_000;
    let h = chain.head().unwrap().height + 3;
    produce(
        &chain,
        vec![b[0].call(actor, "arm", vec![Value::int(n), Value::int(h)], 0)],
    );
    mine_to(&chain, h - 1);
    let (elapsed, receipts) = produce(&chain, vec![]);
    let fired = receipts
        .iter()
        .filter(|r| r.events.iter().any(|e| e.name == "TimerFired"))
        .count();
    assert_eq!(fired, n as usize);
    (fired, elapsed)
}

/// A mock chain with `pending` timers at far heights and `due` timers at `h`.
fn mock_chain_with(pending: u64, due: u64) -> (Chain<MemoryBackend>, Vec<TxBuilder>, Address, u64) {
    let chain = Chain::open(
        MemoryBackend::new(),
        genesis(),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut b = builders();
    let (_, r) = produce(&chain, vec![b[0].deploy("mock", vec![], 10u128.pow(23))]);
    let far_actor = r[0].created_actor.unwrap();
    let (_, r) = produce(&chain, vec![b[1].deploy("mock", vec![], 10u128.pow(23))]);
    let due_actor = r[0].created_actor.unwrap();
    let far = 1_000_000u64;
    let mut left = pending;
    while left > 0 {
        let n = left.min(100_000);
        produce(
            &chain,
            vec![b[0].call(
                far_actor,
                "schedule_many",
                vec![Value::int(n), Value::int(far), Value::int(1_000)],
                0,
            )],
        );
        left -= n;
    }
    let h = chain.head().unwrap().height + 3;
    if due > 0 {
        produce(
            &chain,
            vec![b[1].call(
                due_actor,
                "schedule_many",
                vec![Value::int(due), Value::int(h), Value::int(1_000)],
                0,
            )],
        );
    }
    (chain, b, due_actor, h)
}

fn end_of_block(pending: u64) -> Duration {
    let (chain, _, _, h) = mock_chain_with(pending, 10_000);
    mine_to(&chain, h - 1);
    let (elapsed, receipts) = produce(&chain, vec![]);
    assert_eq!(
        receipts
            .iter()
            .filter(|r| r.events.iter().any(|e| e.name == "TimerFired"))
            .count(),
        10_000
    );
    elapsed
}

fn schedule_block(pending: u64) -> Duration {
    let (chain, mut b, actor, _) = mock_chain_with(pending, 0);
    let h = chain.head().unwrap().height + 500;
    // Median of 5 blocks, each scheduling 1,000 timers.
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            produce(
                &chain,
                vec![b[1].call(
                    actor,
                    "schedule_many",
                    vec![Value::int(1_000), Value::int(h), Value::int(1_000)],
                    0,
                )],
            )
            .0
        })
        .collect();
    times.sort();
    times[2]
}

fn main() {
    // `cargo bench` passes flags like --bench; a bare word selects benchmarks
    // by name (`fires`, `end_of_block`, `schedule`), as criterion's filter does.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let selected =
        |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()));
    println!("timerhost timer benchmarks\n");
    if selected("fires") {
        fires();
    }
    if selected("end_of_block") {
        end_of_block_ratio();
    }
    if selected("schedule") {
        schedule_ratio();
    }
}

fn fires() {
    let (fired, elapsed) = fires_per_second();
    println!(
        "| end-to-end fires, trivial Python handler, sled, one block | {fired} fires in {:.1} ms | {:.0} fires/s |",
        elapsed.as_secs_f64() * 1e3,
        fired as f64 / elapsed.as_secs_f64()
    );
}

fn end_of_block_ratio() {
    let small = end_of_block(10_000);
    let large = end_of_block(1_000_000);
    println!(
        "| end of block, 10,000 due, 10,000 vs 1,000,000 pending | {:.1} ms vs {:.1} ms | ratio {:.2} |",
        small.as_secs_f64() * 1e3,
        large.as_secs_f64() * 1e3,
        large.as_secs_f64() / small.as_secs_f64()
    );
}

fn schedule_ratio() {
    let small = schedule_block(1_000);
    let large = schedule_block(1_000_000);
    println!(
        "| block scheduling 1,000 timers, 1,000 vs 1,000,000 pending | {:.2} ms vs {:.2} ms | ratio {:.2} |",
        small.as_secs_f64() * 1e3,
        large.as_secs_f64() * 1e3,
        large.as_secs_f64() / small.as_secs_f64()
    );
}
