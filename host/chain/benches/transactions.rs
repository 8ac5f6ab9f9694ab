//! Block execution of ordinary transactions (#34): transfers/s and trivial
//! actor calls/s, one core, persisted (sled).
//!
//! ```text
//! cargo bench -p timerhost-chain --bench transactions --ignore-rust-version
//! ```
//!
//! Each block holds `TRANSFERS` signed transfers to fresh addresses (or
//! `CALLS` calls of a Python method that returns at once) from the ten dev
//! accounts; the figure is the median of five blocks of the time to
//! execute, seal and commit the block on sled — what a node spends per
//! block once the block's senders are recovered, which the node does ahead
//! of execution, on every core (`timerhost_chain::senders`). The time to
//! recover the senders on one core is printed beside it.

use std::time::{Duration, Instant};

use timerhost_chain::testing::{bench_builders, bench_sled_chain};
use timerhost_types::{Address, SignedTransaction};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const PROPOSER: Address = Address([0xee; 20]);
const TRANSFERS: usize = 5_000;
const CALLS: usize = 2_000;
const ROUNDS: usize = 5;

const ACTOR: &str = r#"
class Ping:
    def ping(self):
        return 1
"#;

struct Figure {
    execute: Vec<Duration>,
    recover: Vec<Duration>,
}

impl Figure {
    fn median(times: &mut [Duration]) -> Duration {
        times.sort();
        times[times.len() / 2]
    }

    fn print(mut self, what: &str, per_block: usize) {
        let execute = Self::median(&mut self.execute);
        let recover = Self::median(&mut self.recover);
        println!(
            "{what:<18} {per_block:>6} per block  execute+seal+commit {:>7.1} ms  {:>8.0} {what}/s   (recovering the senders on one core: {:>6.1} ms, {:>6.0}/s)",
            execute.as_secs_f64() * 1e3,
            per_block as f64 / execute.as_secs_f64(),
            recover.as_secs_f64() * 1e3,
            per_block as f64 / recover.as_secs_f64(),
        );
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let chain = bench_sled_chain(dir.path());
    let mut b = bench_builders();
    for x in &mut b {
        // An ordinary transaction's limits, not a bench load's.
        x.cycles_limit = 1_000_000;
        x.cells_limit = 100_000;
    }
    let builders = b.len();
    let produce = |txs: &[SignedTransaction]| -> (Duration, Duration) {
        let started = Instant::now();
        for tx in txs {
            tx.recover_sender().unwrap();
        }
        let recover = started.elapsed();
        let senders = timerhost_chain::senders::recover_all(txs);
        let head = chain.head().unwrap();
        let started = Instant::now();
        let proposed = chain
            .propose_recovered(txs, &senders, head.timestamp_ms + 1, PROPOSER)
            .unwrap();
        chain.commit(&proposed.executed).unwrap();
        let execute = started.elapsed();
        assert!(proposed.rejected.is_empty(), "{:?}", proposed.rejected);
        for receipt in &proposed.executed.receipts {
            assert!(receipt.is_success(), "{:?}", receipt.error);
        }
        assert_eq!(proposed.executed.receipts.len(), txs.len());
        (execute, recover)
    };
    let deploy = b[0].deploy(ACTOR, vec![], 0);
    let deployed = chain
        .produce_block(&[deploy], chain.head().unwrap().timestamp_ms + 1, PROPOSER)
        .unwrap();
    let actor = deployed.executed.receipts[0].created_actor.unwrap();

    println!("timerhost block execution (median of {ROUNDS} blocks, sled)");
    let mut transfers = Figure {
        execute: Vec::new(),
        recover: Vec::new(),
    };
    let mut calls = Figure {
        execute: Vec::new(),
        recover: Vec::new(),
    };
    let mut fresh = 0u64;
    for _ in 0..ROUNDS {
        let txs: Vec<_> = (0..TRANSFERS)
            .map(|i| {
                fresh += 1;
                let mut to = [0x77u8; 20];
                to[12..].copy_from_slice(&fresh.to_be_bytes());
                b[i % builders].transfer(Address(to), 1)
            })
            .collect();
        let (e, r) = produce(&txs);
        transfers.execute.push(e);
        transfers.recover.push(r);
        let txs: Vec<_> = (0..CALLS)
            .map(|i| b[i % builders].call(actor, "ping", vec![], 0))
            .collect();
        let (e, r) = produce(&txs);
        calls.execute.push(e);
        calls.recover.push(r);
    }
    transfers.print("transfers", TRANSFERS);
    calls.print("calls", CALLS);
}
