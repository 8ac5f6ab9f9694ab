//! The shipped Python actors (`actors/heartbeat`) on the real VM, run for
//! more than 100 blocks with every fire, charge and refund checked to the
//! unit; plus CIP-5 rules that need real actors (nested-call reverts,
//! cross-actor cancel through the VM).

use std::sync::Arc;

use timerhost_chain::testing::{dev_builders, total_balances, TxBuilder};
use timerhost_chain::{Chain, NoHooks, VmRuntime};
use timerhost_state::MemoryBackend;
use timerhost_timers::store;
use timerhost_types::{Address, ErrorKind, Event, Genesis, Receipt, TimerConfig, TxSource, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const HEARTBEAT: &str = include_str!("../../../actors/heartbeat/heartbeat.py");
const DEPLOYER_FUNDED: &str =
    include_str!("../../../actors/heartbeat/heartbeat_deployer_funded.py");
const PROPOSER: Address = Address([0xee; 20]);

struct Net {
    chain: Chain<MemoryBackend>,
    b: Vec<TxBuilder>,
}

impl Net {
    fn new() -> Self {
        let chain = Chain::open(
            MemoryBackend::new(),
            Genesis::dev(),
            Arc::new(VmRuntime::new().unwrap()),
            Arc::new(NoHooks),
        )
        .unwrap();
        let mut b = dev_builders();
        for x in &mut b {
            x.cycles_limit = 5_000_000;
            x.cells_limit = 1_000_000;
        }
        Net { chain, b }
    }

    fn height(&self) -> u64 {
        self.chain.head().unwrap().height
    }

    fn block(&self, txs: Vec<timerhost_types::SignedTransaction>) -> Vec<Receipt> {
        let head = self.chain.head().unwrap();
        let p = self
            .chain
            .produce_block(&txs, head.timestamp + 1, PROPOSER)
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        let state = self.chain.store().state();
        let s = timerhost_chain::accounts::supply(&state).unwrap();
        assert_eq!(
            total_balances(&state).unwrap(),
            s.genesis_supply - s.burned,
            "conservation"
        );
        p.executed.receipts
    }

    fn deploy(&mut self, who: usize, code: &str, args: Vec<Value>, value: u128) -> Address {
        let tx = self.b[who].deploy(code, args, value);
        let r = self.block(vec![tx]).remove(0);
        assert!(r.is_success(), "deploy failed: {:?}", r.error);
        r.created_actor.unwrap()
    }

    fn call(&mut self, who: usize, actor: Address, handler: &str, args: Vec<Value>) -> Receipt {
        let tx = self.b[who].call(actor, handler, args, 0);
        self.block(vec![tx]).remove(0)
    }

    fn balance(&self, a: &Address) -> u128 {
        self.chain.account(a).unwrap().balance
    }
}

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
    let before = n.balance(&payer);
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
            let max_cost = gas_limit as u128 * basefee.cycle_basefee
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
        n.balance(&payer),
        before - charged,
        "the payer paid exactly the fires' cost"
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
    // Stop: the actor cancels its own pending timer.
    let r = n.call(1, actor, "stop", vec![]);
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
    let max_cost = cfg.max_cycles_per_fire as u128 * basefee.cycle_basefee
        + cfg.max_cells_per_fire as u128 * basefee.cell_basefee;
    // max_cost plus a sliver: the first beats are covered, and once their
    // actual costs add up past the sliver the next fire cannot be pre-charged.
    let actor = n.deploy(
        0,
        HEARTBEAT,
        vec![Value::int(3)],
        max_cost + max_cost / 1_000,
    );
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
    let scheduler = n.deploy(0, NESTED, vec![], 0);
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
    let scheduler = n.deploy(0, NESTED, vec![], 0);
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
