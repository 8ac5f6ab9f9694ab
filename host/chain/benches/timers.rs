//! Timer benchmarks (issue 4), printed as a table for docs/PERFORMANCE.md.
//!
//! ```text
//! cargo bench -p timerhost-chain --bench timers --ignore-rust-version -- ratios
//! ```
//!
//! With `ratios` the run ends with exactly seven lines (issues 16–18, 31,
//! 46): `ratio end_of_block 1M/10k: <x>`, `ratio schedule 1M/1k: <y>`,
//! `ratio time_block 1M/10k: <t>`, `ratio priority_block 1M/10k: <p>`,
//! `ratio market_block 1M/10k: <m>`, `fires_per_s: <z>`,
//! `ratio fire_call: <c>`.
//!
//! 1. End-to-end fires per second: 20,000 timers with a trivial Python
//!    handler fire in one block on a sled store (execution, refunds, events,
//!    state root and the durable commit all included); median of 3 blocks.
//! 2. End-of-block time for 10,000 due timers with 10,000 vs 1,000,000 timers
//!    pending at a later height (target ratio ≤ 1.2); medians of 5 blocks
//!    per chain, the two chains measured alternately.
//! 3. Cost of a block that schedules 1,000 timers with 1,000 vs 1,000,000
//!    pending (target ratio ≤ 1.5); measured the same way.
//! 4. The same two for time timers (#17): a block whose start fires 10,000
//!    due time timers with 10,000 vs 1,000,000 time timers pending at a far
//!    time (`time_block`, target ≤ 1.2), and a block scheduling 1,000 time
//!    timers with 1,000 vs 1,000,000 pending (`time_schedule`, a table row).
//! 5. The end-of-block comparison under priority ordering (#18): the
//!    10,000 due timers go through the Globalbox — enqueued and
//!    materialised in the measured block (`priority_block`, target ≤ 1.5).
//! 6. The same under market ordering (#31): ranked by effective priority ×
//!    fairness weight (each enqueue reads the weights, each fire writes
//!    them), the lane basefee updated after the block (`market_block`,
//!    target ≤ 1.2).
//!
//! 7. A fire over a call of the same trivial handler (#46, `fire_call`):
//!    blocks of 20,000 fires and of 20,000 call transactions alternating on
//!    one sled chain (target ≤ 1.5).
//!
//! 2–5 use the deterministic mock runtime (the timer machinery, not
//! Python, is what scales with the pending count) on the in-memory store.
//! Each ratio compares two measurements taken in the same run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use timerhost_chain::testing::{
    bench_builders, bench_genesis, bench_sled_chain, MockRuntime, TxBuilder, BENCH_TICK_ACTOR,
};
use timerhost_chain::{Chain, NoHooks};
use timerhost_state::{KvBackend, MemoryBackend, SledBackend};
use timerhost_types::{Address, Genesis, SignedTransaction, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const PROPOSER: Address = Address([0xee; 20]);

// The actor, genesis and builders are shared with the node's restart
// benchmark (`timerhost_chain::testing`). `bench_genesis` lifts
// `max_fires_per_block` so that the 20,000 fires stay one block, as before
// the per-block fire quota existed (its default, 10,000, would split it).
const TICK: &str = BENCH_TICK_ACTOR;

fn genesis() -> Genesis {
    bench_genesis()
}

fn builders() -> Vec<TxBuilder> {
    bench_builders()
}

fn produce<B: KvBackend>(
    chain: &Chain<B>,
    txs: Vec<SignedTransaction>,
) -> (Duration, Vec<timerhost_types::Receipt>) {
    let head = chain.head().unwrap();
    let start = Instant::now();
    let p = chain
        .produce_block(&txs, head.timestamp_ms + 1, PROPOSER)
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

/// Blocks measured per figure; each figure is their median (the machine is
/// shared, and one slow block must not decide a ratio).
const ROUNDS: usize = 5;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// Fires per second of the median of three blocks, each firing 20,000
/// timers with a trivial Python handler on a sled store.
fn fires_per_second() -> (usize, Duration) {
    let n = 20_000;
    let blocks = 3;
    let armed = ArmedTicks::new(n, blocks, 1);
    let chain = &armed.chain;
    let times = (0..blocks)
        .map(|_| {
            let (elapsed, receipts) = produce(chain, vec![]);
            assert_eq!(fired(&receipts), n as usize);
            elapsed
        })
        .collect();
    (n as usize, median(times))
}

/// A sled chain whose Tick actor has armed `n` timers for each of `rounds`
/// blocks, `spacing` blocks apart, the first the block after the head.
struct ArmedTicks {
    chain: Chain<SledBackend>,
    builders: Vec<TxBuilder>,
    actor: Address,
    _dir: tempfile::TempDir,
}

impl ArmedTicks {
    fn new(n: u64, rounds: u64, spacing: u64) -> ArmedTicks {
        let dir = tempfile::tempdir().unwrap();
        let chain = bench_sled_chain(dir.path());
        let mut b = builders();
        let (_, r) = produce(&chain, vec![b[0].deploy(TICK, vec![], 10u128.pow(23))]);
        let actor = r[0].created_actor.unwrap();
        let first = chain.head().unwrap().height + 2 + rounds;
        for i in 0..rounds {
            let at = first + spacing * i;
            produce(
                &chain,
                vec![b[0].call(actor, "arm", vec![Value::int(n), Value::int(at)], 0)],
            );
        }
        mine_to(&chain, first - 1);
        ArmedTicks {
            chain,
            builders: b,
            actor,
            _dir: dir,
        }
    }
}

/// #46's machine-independent figure: the cost of a fire over the cost of
/// running the same trivial handler in a call. On one sled chain, blocks of
/// `n` fires and blocks of `n` call transactions (`tick(b"")`, the senders
/// recovered beforehand as a mempool does at admission) alternate; each is
/// produced and committed. Returns the medians (fire block, call block).
fn fire_and_call_blocks(n: u64) -> (Duration, Duration) {
    // Five of each (three let one slow block of either kind, often the
    // first, on a shared machine, move the ratio by a fifth).
    let rounds = 5;
    // Fire blocks at h, h + 2, h + 4, …; call blocks between them.
    let mut armed = ArmedTicks::new(n, rounds, 2);
    let (chain, actor) = (&armed.chain, armed.actor);
    let caller = &mut armed.builders[1];
    caller.cycles_limit = 1_000_000;
    let (mut fires, mut calls) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (elapsed, receipts) = produce(chain, vec![]);
        assert_eq!(fired(&receipts), n as usize);
        fires.push(elapsed);
        let txs: Vec<_> = (0..n)
            .map(|_| caller.call(actor, "tick", vec![Value::Bytes(Vec::new())], 0))
            .collect();
        let senders = timerhost_chain::senders::recover_all(&txs);
        let head = chain.head().unwrap();
        let start = Instant::now();
        let p = chain
            .propose_recovered(&txs, &senders, head.timestamp_ms + 1, PROPOSER)
            .unwrap();
        chain.commit(&p.executed).unwrap();
        calls.push(start.elapsed());
        assert_eq!(p.executed.receipts.len(), n as usize, "{:?}", p.rejected);
        assert!(p.executed.receipts.iter().all(|r| r.is_success()));
    }
    (median(fires), median(calls))
}

fn fire_call_ratio() -> f64 {
    let n = 20_000;
    let (fire, call) = fire_and_call_blocks(n);
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    println!(
        "| a fire / a call of the same trivial handler, {n} a block, sled | {:.1} us / {:.1} us | {:.2} |",
        per(fire),
        per(call),
        fire.as_secs_f64() / call.as_secs_f64(),
    );
    fire.as_secs_f64() / call.as_secs_f64()
}

/// Which queue the pending load sits in, and the ordering.
#[derive(Clone, Copy)]
enum Pending {
    /// Height timers at a far height.
    Height,
    /// Time timers at a far time.
    Time,
    /// Height timers at a far height, on a chain under priority ordering
    /// (#18: due timers go through the Globalbox).
    Priority,
    /// The same under market ordering (#31).
    Market,
}

/// A mock chain with `pending` timers at a far height or time.
fn mock_chain_with(pending: u64, kind: Pending) -> (Chain<MemoryBackend>, Vec<TxBuilder>, Address) {
    let mut genesis = genesis();
    let ordering = match kind {
        Pending::Priority => Some(timerhost_types::TimerOrdering::Priority),
        Pending::Market => Some(timerhost_types::TimerOrdering::Market),
        Pending::Height | Pending::Time => None,
    };
    if let Some(ordering) = ordering {
        genesis.timers.ordering = ordering;
        genesis.timers.max_fires_per_target = 1_000_000;
    }
    let chain = Chain::open(
        MemoryBackend::new(),
        genesis,
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut b = builders();
    let (_, r) = produce(&chain, vec![b[0].deploy("mock", vec![], 10u128.pow(23))]);
    let far_actor = r[0].created_actor.unwrap();
    let (_, r) = produce(&chain, vec![b[1].deploy("mock", vec![], 10u128.pow(23))]);
    let near_actor = r[0].created_actor.unwrap();
    let mut left = pending;
    while left > 0 {
        let n = left.min(100_000);
        match kind {
            Pending::Height | Pending::Priority | Pending::Market => {
                schedule_many(&chain, &mut b[0], far_actor, n, 1_000_000)
            }
            Pending::Time => {
                let far = chain.head().unwrap().timestamp_ms + 1_000_000_000;
                schedule_many_at(&chain, &mut b[0], far_actor, n, far)
            }
        };
        left -= n;
    }
    (chain, b, near_actor)
}

/// A block in which `builder` has the mock `actor` schedule `n` time timers
/// at `timestamp_ms` (1,000 cycles each); its time and receipts.
fn schedule_many_at(
    chain: &Chain<MemoryBackend>,
    builder: &mut TxBuilder,
    actor: Address,
    n: u64,
    timestamp_ms: u64,
) -> (Duration, Vec<timerhost_types::Receipt>) {
    produce(
        chain,
        vec![builder.call(
            actor,
            "schedule_many_at",
            vec![Value::int(n), Value::int(timestamp_ms), Value::int(1_000)],
            0,
        )],
    )
}

/// A block in which `builder` has the mock `actor` schedule `n` timers at
/// `height` (1,000 cycles each); its time and receipts.
fn schedule_many(
    chain: &Chain<MemoryBackend>,
    builder: &mut TxBuilder,
    actor: Address,
    n: u64,
    height: u64,
) -> (Duration, Vec<timerhost_types::Receipt>) {
    produce(
        chain,
        vec![builder.call(
            actor,
            "schedule_many",
            vec![Value::int(n), Value::int(height), Value::int(1_000)],
            0,
        )],
    )
}

/// Timer fires among `receipts`.
fn fired(receipts: &[timerhost_types::Receipt]) -> usize {
    receipts
        .iter()
        .filter(|r| r.events.iter().any(|e| e.name == "TimerFired"))
        .count()
}

/// Schedules 10,000 timers due two blocks on (not measured), then times the
/// block that fires them: the pending count at that block is the far
/// timers plus these.
fn end_of_block(chain: &Chain<MemoryBackend>, b: &mut [TxBuilder], actor: Address) -> Duration {
    let h = chain.head().unwrap().height + 3;
    schedule_many(chain, &mut b[1], actor, 10_000, h);
    mine_to(chain, h - 1);
    let (elapsed, receipts) = produce(chain, vec![]);
    assert_eq!(fired(&receipts), 10_000);
    elapsed
}

/// Times a block that schedules 1,000 timers (at a height 500 blocks on).
fn schedule_block(chain: &Chain<MemoryBackend>, b: &mut [TxBuilder], actor: Address) -> Duration {
    let h = chain.head().unwrap().height + 500;
    schedule_many(chain, &mut b[1], actor, 1_000, h).0
}

/// Schedules 10,000 time timers due two blocks on (blocks here are 1 ms
/// apart; not measured), then times the block whose start fires them.
fn time_block(chain: &Chain<MemoryBackend>, b: &mut [TxBuilder], actor: Address) -> Duration {
    let due = chain.head().unwrap().timestamp_ms + 3;
    schedule_many_at(chain, &mut b[1], actor, 10_000, due);
    produce(chain, vec![]);
    let (elapsed, receipts) = produce(chain, vec![]);
    assert_eq!(fired(&receipts), 10_000);
    elapsed
}

/// Times a block that schedules 1,000 time timers (500 ms on).
fn time_schedule_block(
    chain: &Chain<MemoryBackend>,
    b: &mut [TxBuilder],
    actor: Address,
) -> Duration {
    let due = chain.head().unwrap().timestamp_ms + 500;
    schedule_many_at(chain, &mut b[1], actor, 1_000, due).0
}

/// Medians of `ROUNDS` blocks on a chain with `small` and one with `large`
/// pending timers, measured alternately so that a slow stretch of the
/// machine hits both.
fn compare(
    small: u64,
    large: u64,
    kind: Pending,
    block: fn(&Chain<MemoryBackend>, &mut [TxBuilder], Address) -> Duration,
) -> (Duration, Duration) {
    let (small_chain, mut small_b, small_actor) = mock_chain_with(small, kind);
    let (large_chain, mut large_b, large_actor) = mock_chain_with(large, kind);
    let mut small_times = Vec::new();
    let mut large_times = Vec::new();
    for _ in 0..ROUNDS {
        small_times.push(block(&small_chain, &mut small_b, small_actor));
        large_times.push(block(&large_chain, &mut large_b, large_actor));
    }
    (median(small_times), median(large_times))
}

fn main() {
    // `cargo bench` passes flags like --bench; a bare word selects benchmarks
    // by name (`fires`, `end_of_block`, `schedule`), as criterion's filter
    // does. `ratios` runs all three and ends with the issue's three lines.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let ratios = filters.iter().any(|f| f == "ratios");
    let selected = |name: &str| {
        ratios || filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
    };
    println!("timerhost timer benchmarks\n");
    let fires = selected("fires").then(fires);
    let fire_call = selected("fire_call").then(fire_call_ratio);
    let end_of_block = selected("end_of_block").then(end_of_block_ratio);
    let schedule = selected("schedule").then(schedule_ratio);
    let time_block = selected("time_block").then(time_block_ratio);
    let priority_block = selected("priority_block").then(priority_block_ratio);
    let market_block = selected("market_block").then(market_block_ratio);
    if selected("time_schedule") {
        time_schedule_ratio();
    }
    if ratios {
        // Last, exactly these six lines, each measured in this run.
        println!();
        println!(
            "ratio end_of_block 1M/10k: {:.2}",
            end_of_block.expect("run")
        );
        println!("ratio schedule 1M/1k: {:.2}", schedule.expect("run"));
        println!("ratio time_block 1M/10k: {:.2}", time_block.expect("run"));
        println!(
            "ratio priority_block 1M/10k: {:.2}",
            priority_block.expect("run")
        );
        println!(
            "ratio market_block 1M/10k: {:.2}",
            market_block.expect("run")
        );
        println!("fires_per_s: {:.0}", fires.expect("run"));
        println!("ratio fire_call: {:.2}", fire_call.expect("run"));
    }
}

fn fires() -> f64 {
    let (fired, elapsed) = fires_per_second();
    let per_second = fired as f64 / elapsed.as_secs_f64();
    println!(
        "| end-to-end fires, trivial Python handler, sled, one block | {fired} fires in {:.1} ms | {per_second:.0} fires/s |",
        elapsed.as_secs_f64() * 1e3,
    );
    per_second
}

/// Runs `block` on a chain with `small` and one with `large` pending timers
/// of `kind` ([`compare`]), prints the table row `what` and returns the
/// ratio of the medians.
fn ratio(
    what: &str,
    small: u64,
    large: u64,
    kind: Pending,
    block: fn(&Chain<MemoryBackend>, &mut [TxBuilder], Address) -> Duration,
) -> f64 {
    let (small, large) = compare(small, large, kind, block);
    let ratio = large.as_secs_f64() / small.as_secs_f64();
    println!(
        "| {what} | {:.2} ms vs {:.2} ms | ratio {ratio:.2} |",
        small.as_secs_f64() * 1e3,
        large.as_secs_f64() * 1e3,
    );
    ratio
}

fn end_of_block_ratio() -> f64 {
    ratio(
        "end of block, 10,000 due, 10,000 vs 1,000,000 pending",
        10_000,
        1_000_000,
        Pending::Height,
        end_of_block,
    )
}

fn schedule_ratio() -> f64 {
    ratio(
        "block scheduling 1,000 timers, 1,000 vs 1,000,000 pending",
        1_000,
        1_000_000,
        Pending::Height,
        schedule_block,
    )
}

fn time_block_ratio() -> f64 {
    ratio(
        "start of block, 10,000 time timers due, 10,000 vs 1,000,000 time timers pending",
        10_000,
        1_000_000,
        Pending::Time,
        time_block,
    )
}

fn time_schedule_ratio() -> f64 {
    ratio(
        "block scheduling 1,000 time timers, 1,000 vs 1,000,000 pending",
        1_000,
        1_000_000,
        Pending::Time,
        time_schedule_block,
    )
}

fn priority_block_ratio() -> f64 {
    ratio(
        "end of block under priority ordering, 10,000 due through the Globalbox, 10,000 vs 1,000,000 pending",
        10_000,
        1_000_000,
        Pending::Priority,
        end_of_block,
    )
}

fn market_block_ratio() -> f64 {
    ratio(
        "end of block under market ordering, 10,000 due ranked by effective priority × weight, 10,000 vs 1,000,000 pending",
        10_000,
        1_000_000,
        Pending::Market,
        end_of_block,
    )
}
