//! #29: host calls priced by their work. Each hostile test asserts on what
//! a host call charges or does, never on wall time; `measure_29_host_calls`
//! (ignored) times the same workloads for docs/PERFORMANCE.md:
//!
//! ```text
//! cargo test --release --ignore-rust-version -p timerhost-chain --test host_work \
//!     -- --ignored --nocapture measure
//! ```

mod common;

use std::time::Instant;

use common::Net;
use timerhost_types::{Receipt, SignedTransaction, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const FUNDS: u128 = 10u128.pow(18);
const MB: u64 = 1_000_000;

/// Timers with payloads of any size, and loops of extends and cancels.
const TIMERS: &str = r#"
import pvm_host

class Timers:
    def big(self, height, size):
        pvm_host.schedule_timer_ex(height, b"x" * size, gas_limit=1000)

    def arm(self, height, size):
        self.storage["id"] = pvm_host.schedule_timer_ex(height, b"y" * size, gas_limit=1000)

    def extend(self, k, expires_at):
        tid = self.storage["id"]
        for i in range(k):
            pvm_host.extend_timer(tid, expires_at + i % 2)

    def poke(self, tid, k):
        for i in range(k):
            try:
                pvm_host.cancel_timer(tid)
            except pvm_host.HostError:
                pass
"#;

/// Keys written, deleted and probed.
const KEYS: &str = r#"
class Keys:
    def fill(self, start, n):
        for i in range(start, start + n):
            self.storage["k%06d" % i] = 1
        self.storage["z"] = 1

    def wipe(self, start, n):
        for i in range(start, start + n):
            del self.storage["k%06d" % i]

    def probe(self, k):
        found = 0
        for i in range(k):
            for key in self.storage.keys():
                found += 1
                break
        return found
"#;

/// Watches on a target's key, many per actor.
const WATCHER: &str = r#"
import pvm_host

class Watcher:
    def arm(self, target, n):
        for i in range(n):
            pvm_host.watch(["p"], actor=target, gas_limit=1000)

    def handle_timer(self, payload):
        pass
"#;

const TARGET: &str = r#"
class Target:
    def poke(self, v):
        self.storage["p"] = v
"#;

fn timed(n: &Net, txs: Vec<SignedTransaction>) -> (Vec<Receipt>, f64) {
    let t = Instant::now();
    let r = n.block(txs);
    (r, t.elapsed().as_secs_f64())
}

fn ok(r: &Receipt) -> &Receipt {
    assert!(r.is_success(), "{:?}", r.error);
    r
}

/// A chain with one Timers actor holding `others` timers of `size` bytes
/// at `height`, and a second Timers actor with its own timer there.
fn timers_next_to(others: u64, size: u64, mine: u64) -> (Net, timerhost_types::Address, u64) {
    let mut n = Net::new();
    for b in &mut n.b {
        b.cells_limit = 2 * MB;
        b.cycles_limit = 20_000_000;
    }
    let stranger = n.deploy(2, TIMERS, vec![], FUNDS);
    let owner = n.deploy(1, TIMERS, vec![], FUNDS);
    let height = n.height() + 1_000;
    for _ in 0..others {
        n.call_ok(
            2,
            stranger,
            "big",
            vec![Value::int(height), Value::int(size)],
            0,
        );
    }
    n.call_ok(
        1,
        owner,
        "arm",
        vec![Value::int(height), Value::int(mine)],
        0,
    );
    (n, owner, height)
}

/// An extend of one's own timer pays for its record's bytes: it decodes,
/// hashes and rewrites them (a 1 MB record for the price of an empty one
/// before #29).
#[test]
fn extending_ones_own_big_timer_pays_for_its_bytes() {
    let mut cycles = Vec::new();
    for mine in [0, MB] {
        let (mut n, owner, height) = timers_next_to(0, 0, mine);
        let r = n.call_value(
            1,
            owner,
            "extend",
            vec![Value::int(10), Value::int(height + 5)],
            0,
        );
        cycles.push(ok(&r).cycles_used);
    }
    assert!(
        cycles[1] >= cycles[0] + 10 * MB / 16,
        "10 extends of a 1 MB timer {} vs an empty one {}",
        cycles[1],
        cycles[0]
    );
}

/// Next to 15 timers of 1 MB, an extend costs what it costs next to empty
/// ones — and does the same work (`host::tests` in the timers crate counts
/// the bytes read: none of the neighbours').
#[test]
fn extending_next_to_big_timers_costs_what_it_costs_next_to_empty_ones() {
    let mut cycles = Vec::new();
    for size in [0, MB] {
        let (mut n, owner, height) = timers_next_to(3, size, 0);
        let r = n.call_value(
            1,
            owner,
            "extend",
            vec![Value::int(20), Value::int(height + 5)],
            0,
        );
        cycles.push(ok(&r).cycles_used);
    }
    assert_eq!(cycles[0], cycles[1]);
}

fn keys_chain(deleted: u64) -> (Net, timerhost_types::Address) {
    let mut n = Net::new();
    for b in &mut n.b {
        b.cycles_limit = 50_000_000;
        b.cells_limit = 4 * MB;
    }
    let actor = n.deploy(1, KEYS, vec![], 0);
    let mut start = 0;
    while start < deleted {
        let k = (deleted - start).min(10_000);
        n.call_ok(1, actor, "fill", vec![Value::int(start), Value::int(k)], 0);
        start += k;
    }
    n.call_ok(
        1,
        actor,
        "fill",
        vec![Value::int(deleted), Value::int(0)],
        0,
    );
    (n, actor)
}

/// Deletes, then probes, in one block; the probe's receipt.
fn probe_after_deletes(
    n: &mut Net,
    actor: timerhost_types::Address,
    deleted: u64,
    probes: u64,
) -> (Receipt, f64) {
    let mut txs = Vec::new();
    let mut start = 0;
    while start < deleted {
        let k = (deleted - start).min(10_000);
        txs.push(n.b[1].call(actor, "wipe", vec![Value::int(start), Value::int(k)], 0));
        start += k;
    }
    txs.push(n.b[2].call(actor, "probe", vec![Value::int(probes)], 0));
    let (mut r, t) = timed(n, txs);
    (r.pop().unwrap(), t)
}

/// `storage.keys()` steps over every key deleted earlier in the block:
/// each one stepped over is charged as a scan step (before #29, 1,000
/// probes after 20,000 deletions cost 27,000 cycles and 1.9 s).
#[test]
fn keys_after_many_deletions_pay_for_every_deleted_key_stepped_over() {
    let mut cycles = Vec::new();
    for deleted in [0u64, 2_000] {
        let (mut n, actor) = keys_chain(deleted);
        let (r, _) = probe_after_deletes(&mut n, actor, deleted, 100);
        assert_eq!(ok(&r).return_value, Some(Value::int(100)));
        cycles.push(r.cycles_used);
    }
    assert!(
        cycles[1] >= cycles[0] + 100 * 2_000,
        "100 probes past 2,000 deleted keys {} vs none {}",
        cycles[1],
        cycles[0]
    );
}

/// Times the workloads of #29 (not a test: wall time is for the record).
#[test]
#[ignore]
fn measure_29_host_calls() {
    // 1. 300 extends next to 15 timers of 1 MB vs 15 empty ones.
    for size in [0, MB] {
        let (mut n, owner, height) = timers_next_to(15, size, 0);
        let tx = n.b[1].call(
            owner,
            "extend",
            vec![Value::int(300), Value::int(height + 5)],
            0,
        );
        let (r, t) = timed(&n, vec![tx]);
        println!(
            "extend x300 next to 15 timers of {size} B: {:.1} ms, {} cycles",
            t * 1e3,
            ok(&r[0]).cycles_used
        );
    }
    // 2. 1,000 keys() probes after 20,000 deletions in the same block.
    for deleted in [0u64, 20_000] {
        let (mut n, actor) = keys_chain(deleted);
        let (r, t) = probe_after_deletes(&mut n, actor, deleted, 1_000);
        println!(
            "keys() x1000 after {deleted} deletions: block {:.1} ms, probe {} cycles ({:?})",
            t * 1e3,
            r.cycles_used,
            r.error.as_ref().map(|e| &e.kind)
        );
    }
    // 3. One write watched 20,000 times (20 actors × 1,000 watches).
    let mut n = Net::new();
    for b in &mut n.b {
        b.cycles_limit = 20_000_000;
        b.cells_limit = 4 * MB;
    }
    let target = n.deploy(1, TARGET, vec![], 0);
    for _ in 0..20 {
        let w = n.deploy(2, WATCHER, vec![], FUNDS);
        let to = Value::str(target.to_hex());
        n.call_ok(2, w, "arm", vec![to, Value::int(1_000)], 0);
    }
    for block in 0..3 {
        let tx = n.b[1].call(target, "poke", vec![Value::int(block)], 0);
        let (r, t) = timed(&n, vec![tx]);
        let fired = r
            .iter()
            .filter(|r| r.events.iter().any(|e| e.name == "TimerFired"))
            .count();
        println!(
            "write watched 20,000 times, block {block}: {:.1} ms, {fired} fires",
            t * 1e3
        );
    }
    let (r, t) = timed(&n, vec![]);
    let fired = r
        .iter()
        .filter(|r| r.events.iter().any(|e| e.name == "TimerFired"))
        .count();
    println!("the next block, no write: {:.1} ms, {fired} fires", t * 1e3);
}
