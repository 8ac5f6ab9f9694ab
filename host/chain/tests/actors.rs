//! The shipped Python actors (`actors/heartbeat`) on the real VM, run for
//! more than 100 blocks with every fire, charge and refund checked to the
//! unit; plus CIP-5 rules that need real actors (nested-call reverts,
//! cross-actor cancel through the VM).

mod common;

use common::{cron_escrows, Net, PROPOSER};
use timerhost_timers::store;
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{Address, ErrorKind, Event, TimerConfig, TxSource, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const HEARTBEAT: &str = include_str!("../../../actors/heartbeat/heartbeat.py");
const DEPLOYER_FUNDED: &str =
    include_str!("../../../actors/heartbeat/heartbeat_deployer_funded.py");
/// Enough to lend a few timer deposits, far from a fire's max_cost.
const DEPOSITS: u128 = 100_000_000;

fn field<'a>(e: &'a Event, k: &str) -> &'a Value {
    e.data
        .get(k)
        .unwrap_or_else(|| panic!("{} has no {k}", e.name))
}

fn int(v: &Value) -> u128 {
    match v {
        Value::Int(n) => u128::try_from(n.clone()).unwrap(),
        other => panic!("{other:?}"),
    }
}

/// Mines one block and checks every timer fire in it against the basefee in
/// force for that block: cost = cycles × cycle_basefee + cells × cell_basefee,
/// refund = max_cost − cost, and the payer's balance moved by exactly −cost.
/// Returns the TimerFired events.
fn mine_checked(n: &Net, payer: Address, gas_limit: u64) -> Vec<Event> {
    let basefee = n.chain.basefee_config().unwrap();
    let cfg = TimerConfig::default();
    // What the payer owns: its balance and the deposits its timers hold.
    let owned = |n: &Net| {
        let lent: u128 = store::by_fee_payer(&n.chain.store().state(), &payer, usize::MAX)
            .unwrap()
            .iter()
            .map(|t| t.deposit)
            .sum();
        n.balance(&payer) + lent
    };
    let before = owned(n);
    let receipts = n.block(vec![]);
    let mut fired = Vec::new();
    let mut charged = 0u128;
    for r in &receipts {
        if let TxSource::Deferred { fee_payer, .. } = r.source {
            assert_eq!(fee_payer, payer);
            assert!(r.is_success(), "fire failed: {:?}", r.error);
            let e = r
                .events
                .iter()
                .find(|e| e.name == "TimerFired")
                .unwrap()
                .clone();
            let cost = r.cycles_used as u128 * basefee.cycle_basefee
                + r.cells_used as u128 * basefee.cell_basefee;
            let max_cost = (gas_limit + TIMER_FIRE_BASE_CYCLES) as u128 * basefee.cycle_basefee
                + cfg.max_cells_per_fire as u128 * basefee.cell_basefee;
            assert_eq!(int(field(&e, "cost")), cost, "cost to the unit");
            assert_eq!(
                int(field(&e, "refund")),
                max_cost - cost,
                "refund to the unit"
            );
            assert_eq!(int(field(&e, "cycles_used")), r.cycles_used as u128);
            assert_eq!(r.fee_paid, cost);
            assert_eq!(r.burned, cost, "timer fees are basefee only, all burned");
            charged += cost;
            fired.push(e);
        }
    }
    assert_eq!(
        owned(n),
        before - charged,
        "the payer paid exactly the fires' cost (deposits it lent still its own)"
    );
    fired
}

#[test]
fn heartbeat_self_funded_beats_every_interval_for_100_blocks() {
    let mut n = Net::new();
    let actor = n.deploy(0, HEARTBEAT, vec![Value::int(5)], 10u128.pow(21));
    let start = n.height();
    let mut beats = 0u128;
    while n.height() < start + 110 {
        let fired = mine_checked(&n, actor, TimerConfig::default().max_cycles_per_fire);
        let h = n.height();
        if (h - start).is_multiple_of(5) {
            assert_eq!(fired.len(), 1, "a beat at height {h}");
            beats += 1;
            let receipts = n.chain.store().receipts(h).unwrap();
            let hb: Vec<&Event> = receipts
                .iter()
                .flat_map(|r| &r.events)
                .filter(|e| e.name == "Heartbeat")
                .collect();
            assert_eq!(hb.len(), 1);
            assert_eq!(int(field(hb[0], "beat")), beats);
            assert_eq!(int(field(hb[0], "height")), h as u128);
        } else {
            assert!(fired.is_empty(), "no beat at height {h}");
        }
    }
    assert_eq!(beats, 22);
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        1,
        "the next beat is pending"
    );
    // Bug 4: a stranger can neither stop the heartbeat nor add a beat.
    let r = n.call(1, actor, "stop", vec![]);
    assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::Revert);
    assert!(
        r.error
            .as_ref()
            .unwrap()
            .message
            .contains("only the deployer"),
        "{:?}",
        r.error
    );
    let r = n.call(1, actor, "handle_timer", vec![Value::Bytes(vec![])]);
    assert_eq!(
        r.error.as_ref().unwrap().kind,
        ErrorKind::Unauthorized,
        "{:?}",
        r.error
    );
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        1,
        "no second loop"
    );
    // Stop: its deployer has the actor cancel its own pending timer.
    let r = n.call(0, actor, "stop", vec![]);
    assert!(r.is_success(), "{:?}", r.error);
    assert!(r.events.iter().any(|e| e.name == "TimerCancelled"));
    for _ in 0..10 {
        assert!(mine_checked(&n, actor, 550_000).is_empty());
    }
}

#[test]
fn heartbeat_stops_when_its_payer_runs_dry() {
    let mut n = Net::new();
    // Let the basefee settle at its floor so that max_cost is constant.
    while n.height() < 30 {
        n.block(vec![]);
    }
    let basefee = n.chain.basefee_config().unwrap();
    let cfg = TimerConfig::default();
    let max_cost = (cfg.max_cycles_per_fire + TIMER_FIRE_BASE_CYCLES) as u128
        * basefee.cycle_basefee
        + cfg.max_cells_per_fire as u128 * basefee.cell_basefee;
    // max_cost plus room for one deposit: the first beat's fire is covered
    // and its handler can lend the next timer's deposit (the balance after
    // the pre-charge must hold it), but once the fire's actual cost is paid
    // the next fire cannot be pre-charged, even with the deposit back.
    let actor = n.deploy(0, HEARTBEAT, vec![Value::int(3)], max_cost + 400_000);
    let mut fired = 0;
    let mut unfunded = Vec::new();
    for _ in 0..120 {
        fired += mine_checked(&n, actor, cfg.max_cycles_per_fire).len();
        let receipts = n.chain.store().receipts(n.height()).unwrap();
        unfunded.extend(
            receipts
                .iter()
                .flat_map(|r| r.events.clone())
                .filter(|e| e.name == "TimerCancelledInsufficientFunds"),
        );
    }
    assert!(fired >= 1);
    assert_eq!(
        unfunded.len(),
        1,
        "exactly one self-destruct ends the loop (after {fired} beats)"
    );
    assert_eq!(int(field(&unfunded[0], "required")), max_cost);
    assert!(int(field(&unfunded[0], "available")) < max_cost);
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        0
    );
}

#[test]
fn heartbeat_deployer_funded_for_100_blocks() {
    let mut n = Net::new();
    let deployer = n.b[2].address();
    let gas = 200_000u64;
    let actor = n.deploy(
        2,
        DEPLOYER_FUNDED,
        vec![Value::int(4), Value::int(30), Value::int(gas)],
        0,
    );
    let start = n.height();
    let state = n.chain.store().state();
    let timers = store::by_actor(&state, &actor, 100).unwrap();
    assert_eq!(timers.len(), 30);
    assert!(timers
        .iter()
        .all(|t| t.fee_payer == deployer && t.gas_limit_per_fire == gas));
    let mut beats = 0;
    while n.height() < start + 120 {
        let fired = mine_checked(&n, deployer, gas);
        for e in &fired {
            assert_eq!(field(e, "fee_payer"), &Value::str(deployer.to_hex()));
        }
        beats += fired.len();
    }
    assert_eq!(beats, 30);
    assert_eq!(n.balance(&actor), 0, "the actor never paid anything");
    // Only the deployer may extend the series.
    let r = n.call(3, actor, "renew", vec![Value::int(2)]);
    assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::Revert);
    assert!(
        r.error
            .as_ref()
            .unwrap()
            .message
            .contains("only the deployer"),
        "{:?}",
        r.error
    );
    let r = n.call(2, actor, "renew", vec![Value::int(2)]);
    assert!(r.is_success(), "{:?}", r.error);
    assert_eq!(
        r.events
            .iter()
            .filter(|e| e.name == "TimerScheduled")
            .count(),
        2
    );
}

#[test]
fn governance_cancel_stops_a_heartbeat() {
    let mut n = Net::new();
    let actor = n.deploy(1, HEARTBEAT, vec![Value::int(5)], 10u128.pow(21));
    let pending = store::by_actor(&n.chain.store().state(), &actor, 1).unwrap()[0].timer_id;
    let tx = n.b[0].cancel_timer(pending);
    let r = n.block(vec![tx]).remove(0);
    assert_eq!(r.events[0].name, "timer.cancelled_by_governance");
    for _ in 0..12 {
        assert!(mine_checked(&n, actor, 550_000).is_empty());
    }
}

const NESTED: &str = r#"
import pvm_host

class Scheduler:
    def schedule_and_fail(self, height):
        pvm_host.schedule_timer(height, b"x")
        raise ValueError("changed my mind")

    def schedule(self, height):
        return pvm_host.schedule_timer(height, b"y")

    def cancel(self, timer_id):
        pvm_host.cancel_timer(timer_id)

    def handle_timer(self, payload):
        pass
"#;

const CALLER: &str = r#"
import pvm_host

class Caller:
    def try_nested(self, target, height):
        try:
            pvm_host.call(target, "schedule_and_fail", height)
        except Exception:
            self.storage["caught"] = True
        return pvm_host.call(target, "schedule", height)

    def cancel_other(self, target, timer_id):
        pvm_host.call(target, "cancel", timer_id)

    def cancel_directly(self, timer_id):
        pvm_host.cancel_timer(timer_id)
"#;

#[test]
fn cip5_4_3_a_reverted_nested_call_leaves_no_timer() {
    let mut n = Net::new();
    let scheduler = n.deploy(0, NESTED, vec![], DEPOSITS);
    let caller = n.deploy(0, CALLER, vec![], 0);
    let h = n.height() + 10;
    let r = n.call(
        1,
        caller,
        "try_nested",
        vec![Value::str(scheduler.to_hex()), Value::int(h)],
    );
    assert!(r.is_success(), "{:?}", r.error);
    let timers = store::by_actor(&n.chain.store().state(), &scheduler, 10).unwrap();
    assert_eq!(
        timers.len(),
        1,
        "only the committed nested call's timer exists"
    );
    assert_eq!(timers[0].payload, b"y");
    assert_eq!(
        r.events
            .iter()
            .filter(|e| e.name == "TimerScheduled")
            .count(),
        1
    );
    assert_eq!(n.chain.account(&scheduler).unwrap().schedule_nonce, 1);
}

#[test]
fn cip5_4_2_cancel_by_another_actor_is_unauthorized_through_the_vm() {
    let mut n = Net::new();
    let scheduler = n.deploy(0, NESTED, vec![], DEPOSITS);
    let caller = n.deploy(0, CALLER, vec![], 0);
    let h = n.height() + 10;
    let r = n.call(1, scheduler, "schedule", vec![Value::int(h)]);
    let Some(Value::Bytes(id)) = r.return_value.clone() else {
        panic!("{r:?}")
    };
    let r = n.call(1, caller, "cancel_directly", vec![Value::Bytes(id.clone())]);
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Unauthorized, "{}", e.message);
    assert!(e.message.contains("unauthorized"), "{}", e.message);
    // Through a call into the owner, the owner cancels its own timer: allowed.
    let r = n.call(
        1,
        caller,
        "cancel_other",
        vec![Value::str(scheduler.to_hex()), Value::Bytes(id)],
    );
    assert!(r.is_success(), "{:?}", r.error);
    assert_eq!(
        store::live_count(&n.chain.store().state(), &scheduler).unwrap(),
        0
    );
}

const BILLER: &str = r#"
import pvm_host

class Biller:
    def bill_signer(self, height):
        return pvm_host.schedule_timer_ex(height, b"", fee_payer=pvm_host.tx_sender())

    def whoami(self):
        return pvm_host.caller()

    def handle_timer(self, payload):
        self.storage["fire_caller"] = pvm_host.caller()
"#;

const RELAY: &str = r#"
import pvm_host

class Relay:
    def relay_bill(self, target, height):
        return pvm_host.call(target, "bill_signer", height)

    def relay_whoami(self, target):
        return pvm_host.call(target, "whoami")
"#;

/// Bug 5: only the actor a transaction targets may name its signer as fee
/// payer; an actor reached through `pvm_host.call` is refused, with an
/// error that says why, and the signer is not billed.
#[test]
fn nested_actors_cannot_bill_the_signer_and_caller_names_the_invoker() {
    let mut n = Net::new();
    let biller = n.deploy(0, BILLER, vec![], DEPOSITS);
    let relay = n.deploy(0, RELAY, vec![], 0);
    let signer = n.b[1].address();
    let h = n.height() + 5;

    let r = n.call(
        1,
        relay,
        "relay_bill",
        vec![Value::str(biller.to_hex()), Value::int(h)],
    );
    let e = r.error.as_ref().expect("refused");
    assert!(
        e.message.contains("reached through pvm_host.call"),
        "{}",
        e.message
    );
    assert!(store::by_fee_payer(&n.chain.store().state(), &signer, 10)
        .unwrap()
        .is_empty());

    // Targeted directly by the signer's own transaction: consented.
    let before = n.balance(&signer);
    let r = n.call(1, biller, "bill_signer", vec![Value::int(h)]);
    assert!(r.is_success(), "{:?}", r.error);
    let timers = store::by_fee_payer(&n.chain.store().state(), &signer, 10).unwrap();
    assert_eq!(timers.len(), 1);
    assert_eq!(
        n.balance(&signer),
        before - r.fee_paid - timers[0].deposit,
        "the signer lent the deposit of the timer it consented to"
    );

    // caller(): the signer at depth 0, the calling actor when nested, the
    // actor itself for a timer fire.
    let r = n.call(1, biller, "whoami", vec![]);
    assert_eq!(r.return_value, Some(Value::str(signer.to_hex())));
    let r = n.call(1, relay, "relay_whoami", vec![Value::str(biller.to_hex())]);
    assert_eq!(r.return_value, Some(Value::str(relay.to_hex())));
    let fund = n.b[2].transfer(signer, 10u128.pow(20));
    n.block(vec![fund]);
    while n.height() < h {
        n.block(vec![]);
    }
    use timerhost_state::StateRead;
    let stored = n
        .chain
        .store()
        .state()
        .get(&timerhost_types::keys::storage(&biller, b"fire_caller"))
        .unwrap()
        .expect("the fire ran");
    assert_eq!(
        Value::from_bytes(&stored).unwrap(),
        Value::str(biller.to_hex())
    );
}

/// Bug 1: a timer's payload is paid for once, at scheduling; a 1,000,000-byte
/// payload under the default TimerConfig fires and its handler sees it all.
#[test]
fn a_megabyte_payload_timer_fires_under_the_default_config() {
    const BIG: &str = r#"
import pvm_host

class Big:
    def arm(self, height):
        return pvm_host.schedule_timer(height, b"\x07" * 999_999 + b"\x2a")

    def handle_timer(self, payload):
        self.storage["len"] = len(payload)
        self.storage["last"] = payload[-1]
"#;
    let mut n = Net::new();
    let actor = n.deploy(0, BIG, vec![], 10u128.pow(21));
    let h = n.height() + 3;
    // The schedule pays ~1,000,300 cells: the payload and the rest of the record.
    n.b[0].cells_limit = 2_000_000;
    let r = n.call(0, actor, "arm", vec![Value::int(h)]);
    assert!(r.is_success(), "{:?}", r.error);
    assert!(
        r.cells_used > 1_000_000,
        "paid at scheduling: {}",
        r.cells_used
    );
    let mut fired = Vec::new();
    while n.height() < h {
        fired = mine_checked(&n, actor, TimerConfig::default().max_cycles_per_fire);
    }
    assert_eq!(fired.len(), 1);
    assert_eq!(
        field(&fired[0], "success"),
        &Value::Bool(true),
        "{:?}",
        fired[0]
    );
    assert!(
        int(field(&fired[0], "cells_used")) < 1_000,
        "delivery cost no payload cells"
    );
    use timerhost_state::StateRead;
    let get = |k: &[u8]| {
        Value::from_bytes(
            &n.chain
                .store()
                .state()
                .get(&timerhost_types::keys::storage(&actor, k))
                .unwrap()
                .unwrap(),
        )
        .unwrap()
    };
    assert_eq!(get(b"len"), Value::int(1_000_000));
    assert_eq!(get(b"last"), Value::int(42));
}

/// ARC-21's registry (#19) on the real VM, driven by transactions on two
/// chains at once: every block leaves the same state root on both, the
/// registry's balance is exactly the sum of its jobs' escrows after every
/// block, and total supply is conserved (`Net::block`).
#[test]
fn cron_registry_books_balance_after_every_block_and_both_chains_agree() {
    const TARGET: &str = "class Target:\n    def ping(self):\n        self.storage['n'] = self.storage.get('n', 0) + 1\n";
    let registry = timerhost_types::CRON_REGISTRY_ADDRESS;
    let mut nets = [Net::new(), Net::new()];
    let mut target = Address::ZERO;
    for n in &mut nets {
        target = n.deploy(1, TARGET, vec![], 0);
    }
    let start_s = nets[0].chain.head().unwrap().timestamp_ms / 1000;
    let schedule = |n: &mut Net, who: usize, at: u64, interval: u64, max_runs: u64| {
        n.b[who].call(
            registry,
            "schedule",
            vec![
                Value::str(target.to_hex()),
                Value::str("ping"),
                Value::List(vec![]),
                Value::int(at),
                Value::int(interval),
                Value::int(max_runs),
                Value::int(20_000),
            ],
            10u128.pow(16),
        )
    };
    let mut roots = Vec::new();
    for (i, n) in nets.iter_mut().enumerate() {
        let txs = vec![
            schedule(n, 2, start_s + 30, 0, 0),
            schedule(n, 3, start_s + 60, 60, 3),
            schedule(n, 4, start_s + 60, 120, 0),
        ];
        let mut ts = n.chain.head().unwrap().timestamp_ms + 1_000;
        let mut block_roots = Vec::new();
        for step in 0..12 {
            let txs = if step == 0 { txs.clone() } else { vec![] };
            let p = n.chain.produce_block(&txs, ts, PROPOSER).unwrap();
            assert!(p.rejected.is_empty(), "{:?}", p.rejected);
            assert!(
                p.executed.receipts.iter().all(|r| r.is_success()),
                "chain {i}"
            );
            assert_eq!(
                n.balance(&registry),
                cron_escrows(&n.chain).iter().sum::<u128>(),
                "chain {i}, block {}",
                p.executed.block.header.height
            );
            block_roots.push(p.executed.block.header.state_root);
            ts += 45_000;
        }
        roots.push(block_roots);
        // The one-shot ran once, the three-run job three times, the third
        // job at least once.
        let pings = {
            use timerhost_state::StateRead;
            let state = n.chain.store().state();
            let bytes = state.get(&timerhost_types::keys::storage(&target, b"n"));
            Value::from_bytes(&bytes.unwrap().unwrap()).unwrap()
        };
        assert!(pings.as_u128().unwrap() >= 5, "{pings:?}");
    }
    assert_eq!(roots[0], roots[1], "same blocks, same roots");
}
