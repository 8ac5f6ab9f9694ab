//! #50 defect 1: a config governance accepts can never make a block fail.
//!
//! `TimerConfig` validation once added `max_cycles_per_fire +
//! TIMER_FIRE_BASE_CYCLES` unchecked: `max_cycles_per_fire = 2^64 − 2999`
//! wrapped, passed, and the next funded timer made every block fail. Here a
//! property test takes the default configs, moves one to three of their
//! governed fields to boundary values (0, 1, powers of two, `u64::MAX` and
//! its neighbours, each field's own limits), keeps what validation
//! accepts, installs it by a governance transaction, and drives random
//! height, time and state timers through it: every block must be produced,
//! and the chain's books must hold after each.

mod common;

use std::sync::Arc;

use proptest::prelude::*;
use timerhost_chain::testing::dev_builders;
use timerhost_chain::{Chain, NoHooks, VmRuntime};
use timerhost_state::MemoryBackend;
use timerhost_types::{
    BasefeeConfig, Genesis, SystemInstruction, TimerConfig, TimerOrdering, Value,
};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const SCHEDULER: &str = r#"
import pvm_host

class Scheduler:
    def arm(self, specs):
        armed = 0
        for kind, delta, gas, bid, cap in specs:
            h = pvm_host.block_height()
            try:
                if kind == 0:
                    pvm_host.schedule_timer_ex(h + 1 + delta, b"h", gas_limit=gas, bid=bid, max_fee_per_cycle=cap)
                elif kind == 1:
                    pvm_host.schedule_timer_at(pvm_host.block_timestamp_ms() + 1 + delta * 400, b"t", gas_limit=gas, bid=bid, max_fee_per_cycle=cap)
                else:
                    pvm_host.watch(["k"], payload=b"w", gas_limit=gas, expires_at=h + 3 + delta)
                armed += 1
            except pvm_host.HostError:
                pass
        self.storage["k"] = armed
        return armed

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["fired"] = self.storage.get("fired", 0) + 1
        if payload == b"w":
            self.storage["k"] = self.storage.get("fired", 0)
"#;

/// Values at and around every limit a u64 field could meet.
fn edge_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(2),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(u64::MAX - 2_999),
        Just(u64::MAX - 3_000),
        Just(u32::MAX as u64),
        Just(1_000),
        Just(3_000_000_000),
        (0u32..64).prop_map(|s| 1u64 << s),
        (0u32..64).prop_map(|s| (1u64 << s) - 1),
        any::<u64>(),
    ]
}

fn edge_u128() -> impl Strategy<Value = u128> {
    prop_oneof![
        Just(0u128),
        Just(1),
        Just(u128::MAX),
        (0u32..128).prop_map(|s| 1u128 << s),
        (0u32..128).prop_map(|s| (1u128 << s) - 1),
        any::<u128>(),
    ]
}

/// One governed field set to a value.
#[derive(Clone, Debug)]
enum Change {
    Timer(usize, u64),
    Ordering(TimerOrdering),
    Deposit(u128),
    Basefee(usize, u128),
    BlockLimit(usize, u64),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        4 => (0usize..18, edge_u64()).prop_map(|(f, v)| Change::Timer(f, v)),
        1 => prop_oneof![
            Just(TimerOrdering::Fifo),
            Just(TimerOrdering::Priority),
            Just(TimerOrdering::Market)
        ]
        .prop_map(Change::Ordering),
        1 => edge_u128().prop_map(Change::Deposit),
        2 => (0usize..6, edge_u128()).prop_map(|(f, v)| Change::Basefee(f, v)),
        1 => (0usize..2, edge_u64()).prop_map(|(f, v)| Change::BlockLimit(f, v)),
    ]
}

fn apply(changes: &[Change]) -> (TimerConfig, BasefeeConfig) {
    let mut t = TimerConfig::default();
    let mut b = Genesis::dev().basefee;
    for c in changes {
        match *c {
            Change::Timer(field, v) => {
                let v32 = v.min(u32::MAX as u64) as u32;
                match field {
                    0 => t.max_ttl_blocks = v,
                    1 => t.max_cycles_per_fire = v,
                    2 => t.max_cells_per_fire = v,
                    3 => t.max_timers_per_actor = v32,
                    4 => t.gc_cycles_per_block = v,
                    5 => t.lane_cycles_per_block = v,
                    6 => t.max_fires_per_block = v,
                    7 => t.max_watch_keys = v32,
                    8 => t.max_watch_matches_per_block = v,
                    9 => t.max_bid = v,
                    10 => t.w_age = v,
                    11 => t.w_bid = v,
                    12 => t.max_fires_per_target = v,
                    13 => t.lane_target_percent = v,
                    14 => t.lane_basefee_change_denominator = v,
                    15 => t.min_lane_basefee = v,
                    16 => t.fairness_window_blocks = v,
                    _ => t.max_cycles_per_fire = v.min(t.lane_cycles_per_block),
                }
            }
            Change::Ordering(o) => t.ordering = o,
            Change::Deposit(v) => t.deposit_per_byte = v,
            Change::Basefee(field, v) => match field {
                0 => b.cycle_basefee = v,
                1 => b.cell_basefee = v,
                2 => b.min_cycle_basefee = v,
                3 => b.min_cell_basefee = v,
                4 => b.max_cycle_basefee = v,
                _ => b.max_cell_basefee = v,
            },
            Change::BlockLimit(field, v) => match field {
                0 => b.max_block_cycles = v,
                _ => b.max_block_cells = v,
            },
        }
    }
    (t, b)
}

/// A timer request: (kind, delta, gas_limit, bid, fee cap).
fn timer_spec() -> impl Strategy<Value = (u64, u64, u64, u64, u64)> {
    (
        0u64..3,
        0u64..4,
        prop_oneof![Just(0u64), Just(1), 1_000u64..600_000, edge_u64()],
        prop_oneof![Just(0u64), 0u64..2_000, edge_u64()],
        prop_oneof![Just(0u64), 0u64..5_000, edge_u64()],
    )
}

fn specs_value(specs: &[(u64, u64, u64, u64, u64)]) -> Value {
    Value::List(
        specs
            .iter()
            .map(|&(k, d, g, b, c)| {
                Value::List(vec![
                    Value::int(k),
                    Value::int(d),
                    Value::int(g),
                    Value::int(b),
                    Value::int(c),
                ])
            })
            .collect(),
    )
}

/// Installs the configs by governance between two batches of timers and
/// mines blocks through them: every block must be produced.
fn run(
    timer: TimerConfig,
    basefee: BasefeeConfig,
    before: Vec<(u64, u64, u64, u64, u64)>,
    after: Vec<(u64, u64, u64, u64, u64)>,
) {
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
    let mut now = chain.head().unwrap().timestamp_ms;
    let mut mine = |txs: Vec<timerhost_types::SignedTransaction>, what: &str| {
        now += 700;
        let produced = chain
            .produce_block(&txs, now, common::PROPOSER)
            .unwrap_or_else(|e| panic!("{what}: the block failed: {e}\n{timer:?}\n{basefee:?}"));
        common::assert_invariants(&chain.store().state(), what);
        produced
    };
    let deploy = b[1].deploy(SCHEDULER, vec![], 10u128.pow(21));
    let deployed = mine(vec![deploy], "deploy");
    let actor = deployed.executed.receipts[0]
        .created_actor
        .expect("the scheduler deploys");
    let arm = b[2].call(actor, "arm", vec![specs_value(&before)], 0);
    mine(vec![arm], "timers under the default configs");
    let govern = vec![
        b[0].system(SystemInstruction::UpdateTimerConfig(timer.clone())),
        b[0].system(SystemInstruction::UpdateBasefeeConfig(basefee.clone())),
    ];
    mine(govern, "the configs installed");
    let arm = b[3].call(actor, "arm", vec![specs_value(&after)], 0);
    mine(vec![arm], "timers under the new configs");
    for i in 0..6 {
        let poke = b[4].call(actor, "arm", vec![Value::List(vec![])], 0);
        mine(vec![poke], &format!("block {i} after the change"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(24),
        max_global_rejects: 100_000,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_accepted_config_never_fails_a_block(
        changes in prop::collection::vec(change(), 1..4),
        before in prop::collection::vec(timer_spec(), 0..6),
        after in prop::collection::vec(timer_spec(), 0..6),
    ) {
        let (timer, basefee) = apply(&changes);
        prop_assume!(timer.validate().is_ok() && basefee.validate().is_ok());
        run(timer, basefee, before, after);
    }
}

/// The issue's reproduction: refused by validation now, and had it been in
/// force, its timers fail their fires without failing any block.
#[test]
fn a_fire_cycles_cap_that_wraps_is_refused() {
    let cfg = TimerConfig {
        max_cycles_per_fire: u64::MAX - 2_999,
        ..TimerConfig::default()
    };
    let error = cfg.validate().expect_err("refused").to_string();
    assert!(error.contains("max_cycles_per_fire"), "{error}");
}
