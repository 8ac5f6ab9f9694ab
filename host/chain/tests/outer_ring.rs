//! #50: nothing a client, a peer or a governance input controls may halt
//! block production or make a node report what did not happen. The
//! chain-side defects, each test named for the defect it pins (`defectN_…`,
//! the issue's numbering); each failed before its fix.

mod common;

use std::sync::Arc;

use common::Net;
use timerhost_chain::testing::dev_builders;
use timerhost_chain::{
    BlockHooks, Chain, DeferredTx, EobContext, Result as ChainResult, VmRuntime,
};
use timerhost_state::MemoryBackend;
use timerhost_types::{Address, ErrorKind, Genesis, Hash, SignedTransaction, TxSource, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const FUNDS: u128 = 10u128.pow(18);

/// Schedules a timer (`arm`) and emits whatever it is told (`say`).
const VICTIM_AND_FORGER: &str = r#"
import pvm_host

class Actor:
    def arm(self):
        t = pvm_host.schedule_timer_ex(pvm_host.block_height() + 2, b"", gas_limit=50_000)
        self.storage["t"] = t
        return t

    def say(self, name, timer_id):
        pvm_host.emit(name, {"timer_id": timer_id, "reason": "actor"})

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["fired"] = True
"#;

#[test]
fn defect2_an_actor_cannot_forge_another_actors_timer_history() {
    let mut net = Net::new();
    let victim = net.deploy(1, VICTIM_AND_FORGER, vec![], FUNDS);
    let forger = net.deploy(2, VICTIM_AND_FORGER, vec![], FUNDS);
    let armed = net.call_ok(1, victim, "arm", vec![], 0);
    let Some(Value::Bytes(id)) = armed.return_value.clone() else {
        panic!("arm returns the timer id: {armed:?}");
    };
    let timer_id = timerhost_types::Hash(id.clone().try_into().unwrap());
    // The protocol's names are refused to actors, with a message saying why.
    for name in [
        "TimerCancelled",
        "TimerFired",
        "TimersPaused",
        "timer.extended",
    ] {
        let r = net.call(
            2,
            forger,
            "say",
            vec![Value::str(name), Value::Bytes(id.clone())],
        );
        let error = r.error.expect("refused");
        assert_eq!(error.kind, ErrorKind::InvalidInput, "{name}");
        assert!(
            error.message.contains("protocol's namespace"),
            "{}",
            error.message
        );
    }
    // An event of the forger's own naming that names the timer is its own
    // business: it does not enter the timer's history.
    let own = net.call(
        2,
        forger,
        "say",
        vec![Value::str("Cancelled"), Value::Bytes(id)],
    );
    assert!(own.is_success(), "{:?}", own.error);
    net.block(vec![]);
    net.block(vec![]);
    assert_eq!(net.storage(&victim, "fired"), Some(Value::Bool(true)));
    let life = net
        .chain
        .store()
        .timer_events(&timer_id, false, 100)
        .unwrap();
    let names: Vec<&str> = life.iter().map(|r| r.event.name.as_str()).collect();
    assert_eq!(names, vec!["TimerScheduled", "TimerFired"], "{life:?}");
    // The summaries count only the protocol's events: one cancellation
    // would have been counted for the forged one.
    let head = net.height();
    let cancelled: u64 = (1..=head)
        .map(|h| net.chain.block_summary(h).unwrap().unwrap().cancelled)
        .sum();
    assert_eq!(cancelled, 0);
}

/// A deferred execution the fire path cannot price (its cycles limit and
/// base cycles overflow a u64 together — what a timer scheduled under a
/// cycles cap that wrapped past validation before #50 would carry) made the
/// block fail ("deferred transaction quote …"). Now it fails alone, its
/// pre-charge back with its payer, and the block goes on.
struct UnpriceableHook {
    payer: Address,
    actor: Address,
}

impl BlockHooks for UnpriceableHook {
    fn end_of_block(&self, ctx: &mut EobContext<'_, '_>) -> ChainResult<Vec<DeferredTx>> {
        if !timerhost_chain::accounts::load(ctx.state, &self.actor)?.is_actor {
            return Ok(Vec::new());
        }
        let prepaid = 1_000_000u128;
        timerhost_chain::accounts::debit(ctx.state, &self.payer, prepaid)?;
        Ok(vec![DeferredTx {
            origin_tx_hash: Hash::ZERO,
            sender: self.actor,
            fee_payer: self.payer,
            actor: self.actor,
            handler: "run".into(),
            args: vec![],
            cycles_limit: u64::MAX - 2_999,
            base_cycles: timerhost_types::timer::TIMER_FIRE_BASE_CYCLES,
            cells_limit: 1_000,
            invocation: timerhost_types::Invocation::Transaction,
            cycle_basefee: ctx.basefee.cycle_basefee,
            cell_basefee: ctx.basefee.cell_basefee,
            lane: Default::default(),
            prepaid,
            tag: b"unpriceable".to_vec(),
            delivery: None,
            escrow_key: None,
        }])
    }
}

#[test]
fn defect1_a_fire_that_cannot_be_priced_fails_alone_and_the_block_goes_on() {
    let b = dev_builders();
    let payer = b[3].address();
    let actor = timerhost_types::actor_address(&b[1].address(), 0);
    let chain = Chain::open(
        MemoryBackend::new(),
        Genesis::dev(),
        Arc::new(VmRuntime::new().unwrap()),
        Arc::new(UnpriceableHook { payer, actor }),
    )
    .unwrap();
    let mut b = b;
    let mut now = chain.head().unwrap().timestamp_ms;
    let mut mine = |txs: Vec<SignedTransaction>| {
        now += 1_000;
        let p = chain
            .produce_block(&txs, now, common::PROPOSER)
            .expect("the block is produced");
        common::assert_invariants(&chain.store().state(), "block");
        p.executed.receipts
    };
    let source = "class T:\n    def run(self):\n        return 1\n";
    let deployed = mine(vec![b[1].deploy(source, vec![], 0)]);
    assert_eq!(deployed[0].created_actor, Some(actor));
    let before = chain.account(&payer).unwrap().balance;
    let receipts = mine(vec![]);
    let failed = receipts
        .iter()
        .find(|r| matches!(r.source, TxSource::Deferred { .. }))
        .expect("the deferred execution has a receipt");
    let error = failed.error.as_ref().expect("it failed");
    assert!(
        error.message.contains("cannot be priced"),
        "{}",
        error.message
    );
    assert_eq!(failed.fee_paid, 0);
    assert_eq!(chain.account(&payer).unwrap().balance, before, "refunded");
}

/// #50 defect 6: the lane basefee moves by the cycles fires *reserve*, but
/// fires paid only for the cycles they *used*: timers reserving 550,000
/// cycles whose handlers return at once lifted the basefee from 1,000 to
/// 14,372 in 24 blocks for fees an order of magnitude below what the
/// reserved lane would cost. With `lane_reservation_percent` at 100 the
/// unused reservation pays the lane basefee too: the pump pays at least
/// what the lane it reserved — and denied to others — would have cost.
#[test]
fn defect6_pumping_the_lane_basefee_costs_what_the_reserved_lane_would() {
    use timerhost_chain::testing::MockRuntime;
    use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
    use timerhost_types::{TimerConfig, TimerOrdering};
    const GAS: u64 = 550_000;
    let mut genesis = Genesis::dev();
    genesis.timers = TimerConfig {
        ordering: TimerOrdering::Market,
        min_lane_basefee: 1_000,
        ..TimerConfig::default()
    };
    let lane = genesis.timers.lane_cycles_per_block;
    let chain = Chain::open(
        MemoryBackend::new(),
        genesis,
        Arc::new(MockRuntime),
        Arc::new(timerhost_chain::NoHooks),
    )
    .unwrap();
    let mut b = dev_builders();
    let actor = timerhost_types::actor_address(&b[1].address(), b[1].nonce);
    let mut now = chain.head().unwrap().timestamp_ms;
    let mut mine = |txs: Vec<SignedTransaction>| {
        now += 1_000;
        let p = chain
            .produce_block(&txs, now, common::PROPOSER)
            .expect("produced");
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        p.executed
    };
    mine(vec![b[1].deploy("mock", vec![], 10u128.pow(23))]);
    // Each block the attacker schedules, for two blocks on, as many
    // 550,000-cycle timers as the lane holds, each with a fee cap far above
    // the basefee; the mock handler returns at once (140 cycles).
    let per_block = lane / (GAS + TIMER_FIRE_BASE_CYCLES);
    let (mut paid_for_lane, mut lane_cost) = (0u128, 0u128);
    let start = chain.head().unwrap().lane_basefee;
    for _ in 0..24 {
        let h = chain.head().unwrap().height + 1;
        let txs = (0..per_block)
            .map(|i| {
                b[1].call(
                    actor,
                    "schedule",
                    vec![
                        Value::int(h + 2),
                        Value::Bytes(vec![(h % 251) as u8, i as u8]),
                        Value::None,
                        Value::int(GAS),
                        Value::int(h + 100),
                        Value::int(0),
                        Value::int(1_000_000),
                    ],
                    0,
                )
            })
            .collect();
        let prices = chain.basefee_config().unwrap();
        let executed = mine(txs);
        for r in &executed.receipts {
            for e in r.events.iter().filter(|e| e.name == "TimerFired") {
                let get = |k: &str| e.data.get(k).and_then(Value::as_u128).unwrap();
                // What the fire paid beyond its cycles and cells at the
                // block's cycle and cell basefees is its lane fee.
                let basefees = get("cycles_used") * prices.cycle_basefee
                    + get("cells_used") * prices.cell_basefee;
                paid_for_lane += get("cost") - basefees;
                lane_cost += u128::from(GAS) * get("lane_basefee");
            }
        }
    }
    let end = chain.head().unwrap().lane_basefee;
    assert!(
        end > start * 4,
        "the pump moved the basefee {start} → {end}"
    );
    assert!(
        paid_for_lane >= lane_cost,
        "the pump paid {paid_for_lane} for a reserved lane worth {lane_cost}"
    );
}
