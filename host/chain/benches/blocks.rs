//! Blocks of equal cycles, of the worst native and of ordinary code (issue
//! #29: a block filled with transactions of the worst entry of the
//! fairness benchmark must take at most 3× as long as a block filled with
//! ordinary code).
//!
//! ```text
//! cargo bench -p timerhost-chain --bench blocks --ignore-rust-version
//! ```
//!
//! One actor, three handlers: `ordinary` (arithmetic, a list append, a dict
//! read per iteration), `hashing` (keccak256 of 1 KB per iteration — the
//! worst entry of the fairness runs recorded in PERFORMANCE.md) and `calls`
//! (a Python function call per iteration, the runner-up). Each block holds
//! 40 transactions of one handler, each sized to ~2,000,000 cycles, on the
//! real VM and an in-memory store; the figure is the median of 5 blocks of
//! each kind, measured alternately, and the ratio compares nanoseconds per
//! cycle of the blocks (their cycles are equal within a few percent).

use std::sync::Arc;
use std::time::{Duration, Instant};

use timerhost_chain::testing::{bench_builders, bench_chain};
use timerhost_chain::{Chain, VmRuntime};
use timerhost_state::MemoryBackend;
use timerhost_types::{Address, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const PROPOSER: Address = Address([0xee; 20]);

const ACTOR: &str = r#"
import hashing

def step(x):
    return x + 1

class Loads:
    def ordinary(self, k):
        total = 0
        xs = []
        d = {1: 2}
        for _ in range(k):
            total = (total + d[1]) % 1000
            xs.append(total)
        return total

    def hashing(self, k):
        data = b"x" * 1024
        for _ in range(k):
            hashing.keccak256(data)
        return k

    def calls(self, k):
        total = 0
        for _ in range(k):
            total = step(total)
        return total
"#;

const TXS_PER_BLOCK: usize = 40;
const CYCLES_PER_TX: u64 = 2_000_000;
const ROUNDS: usize = 5;

fn main() {
    let chain = bench_chain(
        MemoryBackend::default(),
        Arc::new(VmRuntime::new().unwrap()),
    );
    let mut b = bench_builders();
    let builders = b.len();
    let produce = |chain: &Chain<MemoryBackend>, txs: Vec<timerhost_types::SignedTransaction>| {
        let head = chain.head().unwrap();
        let started = Instant::now();
        let produced = chain
            .produce_block(&txs, head.timestamp_ms + 1, PROPOSER)
            .unwrap();
        let elapsed = started.elapsed();
        assert!(produced.rejected.is_empty(), "{:?}", produced.rejected);
        for receipt in &produced.executed.receipts {
            assert!(receipt.is_success(), "{:?}", receipt.error);
        }
        let cycles: u64 = produced
            .executed
            .receipts
            .iter()
            .map(|r| r.cycles_used)
            .sum();
        (elapsed, cycles, produced.executed.receipts)
    };
    let (_, _, receipts) = produce(&chain, vec![b[0].deploy(ACTOR, vec![], 0)]);
    let actor = receipts[0].created_actor.unwrap();

    // Calibrate each handler's iterations per transaction to ~2M cycles.
    let mut per_iteration = Vec::new();
    for handler in ["ordinary", "hashing", "calls"] {
        let (_, c1, _) = produce(
            &chain,
            vec![b[0].call(actor, handler, vec![Value::int(1)], 0)],
        );
        let (_, c2, _) = produce(
            &chain,
            vec![b[0].call(actor, handler, vec![Value::int(1001)], 0)],
        );
        per_iteration.push((handler, (c2 - c1) as f64 / 1000.0));
    }
    let mut results: Vec<(&str, Vec<Duration>, u64)> = per_iteration
        .iter()
        .map(|(h, _)| (*h, Vec::new(), 0))
        .collect();
    for _ in 0..ROUNDS {
        for (index, (handler, cycles_per_iteration)) in per_iteration.iter().enumerate() {
            let k = (CYCLES_PER_TX as f64 / cycles_per_iteration) as i64;
            let txs = (0..TXS_PER_BLOCK)
                .map(|i| b[i % builders].call(actor, handler, vec![Value::int(k)], 0))
                .collect();
            let (elapsed, cycles, _) = produce(&chain, txs);
            results[index].1.push(elapsed);
            results[index].2 = cycles;
        }
    }
    let mut ordinary_ns_per_cycle = f64::NAN;
    for (handler, mut times, cycles) in results {
        times.sort();
        let median = times[times.len() / 2];
        let ns = median.as_nanos() as f64 / cycles as f64;
        if handler == "ordinary" {
            ordinary_ns_per_cycle = ns;
        }
        println!(
            "block of {handler:<9} {:>8.1} ms  {cycles:>11} cycles  {ns:>5.1} ns/cycle  ratio to ordinary {:.2}",
            median.as_secs_f64() * 1e3,
            ns / ordinary_ns_per_cycle
        );
    }
}
