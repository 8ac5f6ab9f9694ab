//! The timer-lane fee market (#31, CIP-1 v3 Part III), block by block on
//! the mock runtime: the lane basefee in every header, refusal below it,
//! waiting uncharged above a cap, the settlement split to the unit,
//! ordering by effective priority × fairness weight, the quote's
//! pre-charge, and switching orderings with timers in flight.
//!
//! Every timer here reserves `GAS + TIMER_FIRE_BASE_CYCLES = 10,000` lane
//! cycles, and the lane holds `LANE_FIRES` of them: half of that is the
//! basefee's target. The cycle and cell basefees sit at their floors, so
//! only the lane's moves.

mod common;

use std::sync::Arc;

use timerhost_chain::testing::{dev_builders, MockRuntime, TxBuilder};
use timerhost_chain::{Chain, NoHooks};
use timerhost_state::{MemoryBackend, SledBackend, StateRead};
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{
    actor_address, Address, BasefeeConfig, Event, Genesis, Hash, QuoteRequest, Receipt,
    SignedTransaction, TimerConfig, TimerOrdering, Value,
};

const T: u64 = 1_767_225_600_000;
const GAS: u64 = 7_000;
const LANE_FIRES: u64 = 10;
const FLOOR: u64 = 1_000;
const PROPOSER: Address = Address([0xee; 20]);

fn config(ordering: TimerOrdering) -> TimerConfig {
    TimerConfig {
        ordering,
        max_cycles_per_fire: GAS,
        lane_cycles_per_block: LANE_FIRES * (GAS + TIMER_FIRE_BASE_CYCLES),
        min_lane_basefee: FLOOR,
        ..TimerConfig::default()
    }
}

fn genesis(ordering: TimerOrdering) -> Genesis {
    let mut g = Genesis::dev();
    g.timers = config(ordering);
    g.basefee = BasefeeConfig {
        cycle_basefee: 100,
        cell_basefee: 100,
        ..BasefeeConfig::default()
    };
    g
}

/// A market chain with the mock actor deployed by dev account 0.
struct Market {
    chain: Chain<MemoryBackend>,
    b: Vec<TxBuilder>,
    actor: Address,
}

impl Market {
    fn new(ordering: TimerOrdering) -> Market {
        let chain = Chain::open(
            MemoryBackend::new(),
            genesis(ordering),
            Arc::new(MockRuntime),
            Arc::new(NoHooks),
        )
        .unwrap();
        let mut b = dev_builders();
        let actor = actor_address(&b[0].address(), b[0].nonce);
        let m = Market {
            chain,
            b: Vec::new(),
            actor,
        };
        let deploy = b[0].deploy("mock", vec![], 10u128.pow(23));
        let m = Market { b, ..m };
        m.block(vec![deploy]);
        m
    }

    fn height(&self) -> u64 {
        self.chain.head().unwrap().height
    }

    fn block(&self, txs: Vec<SignedTransaction>) -> Vec<Receipt> {
        let height = self.height() + 1;
        let p = self
            .chain
            .produce_block(&txs, T + height * 1_000, PROPOSER)
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        common::assert_invariants(&self.chain.store().state(), &format!("block {height}"));
        p.executed.receipts
    }

    /// `schedule(height, payload, fee_payer, gas, expires_at, bid, max_fee)`
    /// on `actor`, sent by dev account `who`.
    #[allow(clippy::too_many_arguments)]
    fn schedule(
        &mut self,
        who: usize,
        actor: Address,
        height: u64,
        tag: u8,
        payer: Option<Address>,
        expires_at: Option<u64>,
        bid: u64,
        max_fee: Option<u64>,
    ) -> SignedTransaction {
        let opt = |v: Option<u64>| v.map_or(Value::None, Value::int);
        self.b[who].call(
            actor,
            "schedule",
            vec![
                Value::int(height),
                Value::Bytes(vec![tag]),
                payer.map_or(Value::None, |p| Value::Bytes(p.0.to_vec())),
                Value::int(GAS),
                opt(expires_at),
                Value::int(bid),
                opt(max_fee),
            ],
            0,
        )
    }

    /// `n` timers of the mock actor due at `height`, default caps.
    fn fillers(&mut self, height: u64, n: u8) -> Vec<SignedTransaction> {
        let actor = self.actor;
        (0..n)
            .map(|i| self.schedule(0, actor, height, 100 + i, None, None, 0, None))
            .collect()
    }

    fn lane_basefee_of_head(&self) -> u64 {
        self.chain.head().unwrap().lane_basefee
    }

    /// The lane basefee the next block will carry.
    fn next_lane_basefee(&self) -> u64 {
        let state = self.chain.store().state();
        let config = timerhost_chain::accounts::timer_config(&state).unwrap();
        timerhost_timers::lane::market(&state, &config)
            .unwrap()
            .basefee
    }

    fn balance(&self, a: &Address) -> u128 {
        self.chain.account(a).unwrap().balance
    }
}

fn events<'r>(receipts: &'r [Receipt], name: &'r str) -> impl Iterator<Item = &'r Event> + 'r {
    receipts
        .iter()
        .flat_map(|r| r.events.iter())
        .filter(move |e| e.name == name)
}

fn field(e: &Event, key: &str) -> Value {
    e.data.get(key).cloned().unwrap_or(Value::None)
}

fn int(e: &Event, key: &str) -> u128 {
    field(e, key)
        .as_u128()
        .unwrap_or_else(|| panic!("{key} of {e:?}"))
}

fn ok(receipts: &[Receipt]) {
    for r in receipts {
        assert!(r.is_success(), "{:?}", r.error);
    }
}

/// The lane basefee of every header follows the lane: +12.5 % after a full
/// lane, unchanged after a lane at target, −12.5 % after an empty one but
/// never below its floor.
#[test]
fn every_header_carries_the_lane_basefee_as_the_lane_moves_it() {
    let mut m = Market::new(TimerOrdering::Market);
    assert_eq!(m.lane_basefee_of_head(), FLOOR);
    let h = m.height();
    let mut txs = m.fillers(h + 2, LANE_FIRES as u8);
    txs.extend(m.fillers(h + 3, (LANE_FIRES / 2) as u8));
    ok(&m.block(txs));
    assert_eq!(m.next_lane_basefee(), FLOOR);
    let full = m.block(vec![]);
    assert_eq!(events(&full, "TimerFired").count(), LANE_FIRES as usize);
    // The block's committed summary (#33) says the same, without receipts.
    let summary = m.chain.block_summary(m.height()).unwrap().unwrap();
    assert_eq!(summary.fired, [LANE_FIRES, 0, 0]);
    assert_eq!(
        summary.lane_reserved,
        LANE_FIRES * (GAS + TIMER_FIRE_BASE_CYCLES)
    );
    assert_eq!((summary.fired_late, summary.deliveries), (0, LANE_FIRES));
    assert_eq!(m.lane_basefee_of_head(), FLOOR);
    assert_eq!(m.next_lane_basefee(), 1_125, "+12.5 % after a full lane");
    let target = m.block(vec![]);
    assert_eq!(events(&target, "TimerFired").count(), 5);
    assert_eq!(m.lane_basefee_of_head(), 1_125);
    assert_eq!(m.next_lane_basefee(), 1_125, "unchanged at target");
    m.block(vec![]);
    assert_eq!(m.lane_basefee_of_head(), 1_125);
    assert_eq!(
        m.next_lane_basefee(),
        FLOOR,
        "−12.5 % (984) after an empty lane, held at the floor"
    );
    m.block(vec![]);
    assert_eq!(m.lane_basefee_of_head(), FLOOR);
}

/// Under FIFO the lane basefee stays at its floor and nobody pays it,
/// however full the lane.
#[test]
fn under_fifo_the_lane_basefee_stays_at_its_floor_and_costs_nothing() {
    let mut m = Market::new(TimerOrdering::Fifo);
    let h = m.height();
    let txs = m.fillers(h + 2, LANE_FIRES as u8);
    ok(&m.block(txs));
    let full = m.block(vec![]);
    for e in events(&full, "TimerFired") {
        assert_eq!(int(e, "lane_basefee"), 0);
    }
    assert_eq!(m.next_lane_basefee(), FLOOR);
    assert!(m
        .chain
        .store()
        .state()
        .get(&timerhost_types::keys::lane_market())
        .unwrap()
        .is_none());
}

/// Makes the lane basefee at least `at_least` by filling the lane block
/// after block.
fn raise_basefee(m: &mut Market, at_least: u64) {
    while m.next_lane_basefee() < at_least {
        let h = m.height();
        let txs = m.fillers(h + 2, LANE_FIRES as u8);
        ok(&m.block(txs));
    }
    // The last fillers fire in the next block: let them, keeping it full.
    let h = m.height();
    let txs = m.fillers(h + 2, LANE_FIRES as u8);
    ok(&m.block(txs));
}

#[test]
fn a_schedule_below_the_lane_basefee_is_refused_naming_it() {
    let mut m = Market::new(TimerOrdering::Market);
    raise_basefee(&mut m, 1_125);
    let basefee = m.next_lane_basefee();
    let actor = m.actor;
    let h = m.height();
    let tx = m.schedule(0, actor, h + 5, 1, None, None, 0, Some(basefee - 1));
    let r = m.block(vec![tx]).remove(0);
    let error = r.error.expect("refused").message;
    assert!(
        error.contains("below the lane basefee") && error.contains(&basefee.to_string()),
        "{error}"
    );
    // At the basefee itself (it moved with that block's fires), accepted.
    let basefee = m.next_lane_basefee();
    let tx = m.schedule(0, actor, h + 5, 2, None, None, 0, Some(basefee));
    let r = m.block(vec![tx]).remove(0);
    assert!(r.is_success(), "{:?}", r.error);
}

/// A timer whose cap the basefee passes while it waits is neither fired nor
/// charged; it says so once (`TimerDeferred`), and fires once the basefee
/// falls back to its cap.
#[test]
fn a_timer_priced_out_waits_uncharged_then_fires_when_the_basefee_falls() {
    let mut m = Market::new(TimerOrdering::Market);
    let payer = m.b[1].address();
    let actor = m.actor;
    let h = m.height();
    // Cap 1,100: accepted at the floor; due once the lane has been full for
    // a block (basefee 1,125), so it is priced out when it comes due.
    let tx = m.schedule(1, actor, h + 5, 7, Some(payer), None, 0, Some(1_100));
    ok(&m.block(vec![tx]));
    let before = m.balance(&payer);
    raise_basefee(&mut m, 1_125);
    let mut fired = None;
    for _ in 0..12 {
        let receipts = m.block(vec![]);
        let payer_hex = Value::str(payer.to_hex());
        if let Some(e) =
            events(&receipts, "TimerFired").find(|e| field(e, "fee_payer") == payer_hex)
        {
            fired = Some(e.clone());
            break;
        }
        assert_eq!(m.balance(&payer), before, "charged while waiting");
    }
    let fired = fired.expect("it fired once the basefee fell");
    assert!(int(&fired, "lane_basefee") <= 1_100);
    let all: Vec<Event> = (1..=m.height())
        .flat_map(|h| m.chain.store().receipts(h).unwrap())
        .flat_map(|r| r.events)
        .filter(|e| e.name == "TimerDeferred")
        .collect();
    assert_eq!(all.len(), 1, "one TimerDeferred for one wait: {all:?}");
    assert_eq!(field(&all[0], "reason"), Value::str("below_basefee"));
    assert_eq!(int(&all[0], "max_fee_per_cycle"), 1_100);
    assert!(int(&all[0], "lane_basefee") > 1_100);
}

/// A waiting timer whose basefee never falls back expires, its deposit
/// refunded, without ever being charged for a fire.
#[test]
fn a_waiting_timer_expires_with_its_deposit_refunded_and_is_never_charged() {
    let mut m = Market::new(TimerOrdering::Market);
    let payer = m.b[1].address();
    let actor = m.actor;
    let h = m.height();
    let tx = m.schedule(1, actor, h + 5, 7, Some(payer), Some(h + 6), 0, Some(1_100));
    let r = m.block(vec![tx]);
    ok(&r);
    let deposit = int(events(&r, "TimerScheduled").next().unwrap(), "deposit");
    let before = m.balance(&payer);
    // Keep the lane full until well past its expiry.
    let mut expired = Vec::new();
    let mut fired = 0;
    for _ in 0..8 {
        let h = m.height();
        let txs = m.fillers(h + 2, LANE_FIRES as u8);
        let receipts = m.block(txs);
        expired.extend(events(&receipts, "TimerExpired").cloned());
        fired += events(&receipts, "TimerFired")
            .filter(|e| field(e, "fee_payer") == Value::str(payer.to_hex()))
            .count();
    }
    assert_eq!(fired, 0);
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert_eq!(
        m.balance(&payer),
        before + deposit,
        "the deposit came back and nothing was charged"
    );
}

/// The exact split of one fire: burned = base and handler cycles × cycle
/// basefee + cells × cell basefee + handler cycles × lane basefee; tip =
/// handler cycles × priority fee; refund = the rest of the pre-charge.
#[test]
fn settlement_splits_burn_tip_and_refund_to_the_unit() {
    let mut m = Market::new(TimerOrdering::Market);
    let payer = m.b[1].address();
    let actor = m.actor;
    let h = m.height();
    let tx = m.schedule(1, actor, h + 2, 9, Some(payer), None, 500, Some(3_000));
    ok(&m.block(vec![tx]));
    let basefee = m.chain.basefee_config().unwrap();
    let lane = m.next_lane_basefee();
    let proposer_before = m.balance(&PROPOSER);
    let receipts = m.block(vec![]);
    let r = receipts
        .iter()
        .find(|r| r.events.iter().any(|e| e.name == "TimerFired"))
        .unwrap();
    let fired = r.events.iter().find(|e| e.name == "TimerFired").unwrap();
    let handler = r.cycles_used - TIMER_FIRE_BASE_CYCLES;
    assert_eq!(handler, 140, "the mock's handle_timer");
    let cells =
        timerhost_timers::delivery::cells_per_fire(&config(TimerOrdering::Market), &basefee);
    let prepay = u128::from(GAS + TIMER_FIRE_BASE_CYCLES) * basefee.cycle_basefee
        + u128::from(cells) * basefee.cell_basefee
        + u128::from(GAS) * 3_000;
    // #50: the lane basefee is paid on every handler cycle reserved (the
    // default `lane_reservation_percent` is 100), the tip on those used.
    let burned = u128::from(r.cycles_used) * basefee.cycle_basefee
        + u128::from(r.cells_used) * basefee.cell_basefee
        + u128::from(GAS) * u128::from(lane);
    let tip = u128::from(handler) * 500;
    assert_eq!(r.burned, burned);
    assert_eq!(r.tip, tip);
    assert_eq!(int(fired, "cost"), burned + tip);
    assert_eq!(int(fired, "refund"), prepay - burned - tip);
    assert_eq!(int(fired, "lane_basefee"), u128::from(lane));
    assert_eq!(int(fired, "priority_fee"), 500);
    assert_eq!(field(fired, "priority_clamped"), Value::Bool(false));
    assert_eq!(
        int(fired, "weight"),
        2_000,
        "a first fire: the quietest weight"
    );
    assert_eq!(m.balance(&PROPOSER) - proposer_before, tip);
}

/// A tip above what the cap leaves over the basefee is clamped, and the
/// fire says so.
#[test]
fn a_tip_above_the_cap_is_clamped_with_the_fire_saying_so() {
    let mut m = Market::new(TimerOrdering::Market);
    let actor = m.actor;
    let h = m.height();
    let tx = m.schedule(0, actor, h + 2, 9, None, None, 500, Some(FLOOR + 200));
    ok(&m.block(vec![tx]));
    let receipts = m.block(vec![]);
    let fired = events(&receipts, "TimerFired").next().unwrap();
    assert_eq!(int(fired, "priority_fee"), 200);
    assert_eq!(field(fired, "priority_clamped"), Value::Bool(true));
    let r = receipts.iter().find(|r| r.tip > 0).unwrap();
    assert_eq!(r.tip, 140 * 200);
}

/// Under congestion the highest effective priority fires first: the bid,
/// or what the cap leaves over the basefee when that is less.
#[test]
fn higher_effective_priority_fires_first_under_congestion() {
    let mut m = Market::new(TimerOrdering::Market);
    let actor = m.actor;
    let h = m.height();
    // Twelve timers for a ten-fire lane: bids 10, 20, …, 120; the one
    // bidding 120 has a cap leaving only 5 over the basefee.
    let mut txs = Vec::new();
    for i in 1..=12u8 {
        let cap = if i == 12 { FLOOR + 5 } else { 10 * FLOOR };
        txs.push(m.schedule(0, actor, h + 2, i, None, None, 10 * u64::from(i), Some(cap)));
    }
    ok(&m.block(txs));
    let receipts = m.block(vec![]);
    let priorities: Vec<u128> = events(&receipts, "TimerFired")
        .map(|e| int(e, "priority_fee"))
        .collect();
    assert_eq!(
        priorities,
        vec![110, 100, 90, 80, 70, 60, 50, 40, 30, 20],
        "by effective priority, the capped bid of 120 (5) and the bid of 10 carried over"
    );
    // The full lane raised the basefee past the capped timer's 1,005: the
    // bid of 10 fires, the capped one waits.
    let next = m.block(vec![]);
    let rest: Vec<u128> = events(&next, "TimerFired")
        .map(|e| int(e, "priority_fee"))
        .collect();
    assert_eq!(rest, vec![10]);
    assert_eq!(events(&next, "TimerDeferred").count(), 1);
}

/// Two actors bid the same; the one that fired a lot lately waits behind
/// the quiet one.
#[test]
fn a_recently_busy_actor_fires_after_an_equally_bidding_quiet_one() {
    let mut m = Market::new(TimerOrdering::Market);
    let busy = m.actor;
    let quiet = actor_address(&m.b[2].address(), m.b[2].nonce);
    let deploy = m.b[2].deploy("mock", vec![], 10u128.pow(23));
    ok(&m.block(vec![deploy]));
    // The busy actor fires five timers first.
    let h = m.height();
    let txs: Vec<_> = (0..5u8)
        .map(|i| m.schedule(0, busy, h + 2, 50 + i, None, None, 10, None))
        .collect();
    ok(&m.block(txs));
    let receipts = m.block(vec![]);
    assert_eq!(events(&receipts, "TimerFired").count(), 5);
    // Then both bid 10 for the same height, in a lane that takes 9 of the
    // busy actor's and one of the quiet's... with room for exactly 10:
    // eleven timers, the quiet one scheduled last.
    let h = m.height();
    let mut txs: Vec<_> = (0..10u8)
        .map(|i| m.schedule(0, busy, h + 2, 60 + i, None, None, 10, None))
        .collect();
    txs.push(m.schedule(2, quiet, h + 2, 70, None, None, 10, None));
    ok(&m.block(txs));
    let receipts = m.block(vec![]);
    let fired: Vec<(String, u128)> = events(&receipts, "TimerFired")
        .map(|e| match field(e, "actor") {
            Value::Str(a) => (a, int(e, "weight")),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(fired.len(), 10);
    assert_eq!(
        fired[0],
        (quiet.to_hex(), 2_000),
        "the quiet actor first, at twice the weight: {fired:?}"
    );
    assert!(fired[1..]
        .iter()
        .all(|(a, w)| *a == busy.to_hex() && *w == 1_000));
}

/// The quote's `max_cost` is exactly what a fire with those caps
/// pre-charges (what it costs plus what it refunds).
#[test]
fn the_quotes_max_cost_equals_the_pre_charge_with_caps() {
    let mut m = Market::new(TimerOrdering::Market);
    let actor = m.actor;
    let h = m.height();
    let quote = m
        .chain
        .quote_timer(QuoteRequest {
            height: Some(h + 3),
            gas_limit: Some(GAS),
            bid: Some(500),
            max_fee_per_cycle: Some(3_000),
            ..QuoteRequest::default()
        })
        .unwrap()
        .unwrap();
    assert_eq!(quote.lane_basefee, FLOOR);
    assert_eq!(quote.max_fee_per_cycle, 3_000);
    assert_eq!(quote.max_priority_fee_per_cycle, 500);
    let tx = m.schedule(0, actor, h + 3, 3, None, None, 500, Some(3_000));
    ok(&m.block(vec![tx]));
    let mut fired = None;
    for _ in 0..3 {
        if let Some(e) = events(&m.block(vec![]), "TimerFired").next() {
            fired = Some(e.clone());
        }
    }
    let fired = fired.unwrap();
    assert_eq!(int(&fired, "cost") + int(&fired, "refund"), quote.max_cost);
    // Without caps the default bid prices it: 2 × basefee + the tip hint.
    let plain = m
        .chain
        .quote_timer(QuoteRequest {
            gas_limit: Some(GAS),
            ..QuoteRequest::default()
        })
        .unwrap()
        .unwrap();
    assert_eq!(
        plain.max_fee_per_cycle,
        2 * FLOOR + 500,
        "median tip of the last fire: 500"
    );
    assert_eq!(plain.max_priority_fee_per_cycle, 500);
    assert_eq!(
        plain.suggested_fees.standard.max_priority_fee_per_cycle,
        500
    );
    assert_eq!(
        plain.suggested_fees.urgent.max_priority_fee_per_cycle,
        1_250
    );
}

/// FIFO → market → priority → FIFO while timers are queued, due, carried
/// over and waiting for the basefee: every timer fires exactly once, and a
/// second node replaying the blocks computes every header.
#[test]
fn switching_orderings_with_timers_in_flight_loses_none_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let sled = Chain::open(
        SledBackend::open(dir.path()).unwrap(),
        genesis(TimerOrdering::Fifo),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let replica = Chain::open(
        MemoryBackend::new(),
        genesis(TimerOrdering::Fifo),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut b = dev_builders();
    let actor = actor_address(&b[0].address(), b[0].nonce);
    let mut scheduled: Vec<Hash> = Vec::new();
    let mut fired: Vec<Hash> = Vec::new();
    let mut deferred = 0;
    let produce = |txs: &[SignedTransaction], height: u64| -> Vec<Receipt> {
        let p = sled
            .produce_block(txs, T + height * 1_000, PROPOSER)
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        let again = replica.execute(&p.executed.block).unwrap();
        assert_eq!(again.block.header, p.executed.block.header, "at {height}");
        replica.commit(&again).unwrap();
        common::assert_invariants(&sled.store().state(), &format!("block {height}"));
        p.executed.receipts
    };
    produce(&[b[0].deploy("mock", vec![], 10u128.pow(23))], 1);
    let switches = [
        (6, TimerOrdering::Market),
        (14, TimerOrdering::Priority),
        (20, TimerOrdering::Fifo),
    ];
    for height in 2..=50u64 {
        let mut txs = Vec::new();
        if let Some((_, ordering)) = switches.iter().find(|(at, _)| *at == height) {
            txs.push(b[0].update_timer_config(config(*ordering)));
        }
        if height <= 24 {
            // Fifteen timers for a ten-fire lane, due two blocks on, with
            // varied bids and caps: some wait for the basefee under market.
            for i in 0..15u64 {
                let cap = if i % 5 == 0 { 1_050 } else { 5_000 };
                txs.push(b[1].call(
                    actor,
                    "schedule",
                    vec![
                        Value::int(height + 2),
                        Value::Bytes(vec![height as u8, i as u8]),
                        Value::None,
                        Value::int(GAS),
                        Value::None,
                        Value::int(i * 3),
                        Value::int(cap),
                    ],
                    0,
                ));
            }
        }
        for r in produce(&txs, height) {
            // Under market ordering a cap of 1,050 is refused once the
            // basefee passes it; nothing else fails.
            if let Some(e) = &r.error {
                assert!(
                    e.message.contains("below the lane basefee"),
                    "at {height}: {e:?}"
                );
            }
            for e in &r.events {
                let id = || match field(e, "timer_id") {
                    Value::Bytes(b) => Hash::from_slice(&b).unwrap(),
                    other => panic!("{other:?}"),
                };
                match e.name.as_str() {
                    "TimerScheduled" => scheduled.push(id()),
                    "TimerFired" => fired.push(id()),
                    "TimerDeferred" => deferred += 1,
                    "TimerExpired" | "TimerCancelledInsufficientFunds" => {
                        panic!("at {height}: {e:?}")
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(deferred > 0, "some timers waited for the basefee");
    let mut once = fired.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), fired.len(), "a timer fired twice");
    scheduled.sort();
    assert_eq!(once, scheduled, "every timer fired exactly once");
}

/// Hostile: timers that outbid everyone and then get priced out cannot
/// hold the head of the queue. A block examines at most `max(2 ×
/// max_fires_per_block, 256)` entries; the priced-out entries it meets
/// leave for the waiting band (they pay nothing while they wait, so
/// skipping them in place would let 256 of them stop every block), and the
/// fundable timers behind them fire within a few blocks instead of never.
#[test]
fn priced_out_entries_leave_the_head_so_fundable_ones_behind_them_fire() {
    let mut m = Market::new(TimerOrdering::Market);
    let quota = 2u64;
    let with = |min_lane_basefee| TimerConfig {
        max_fires_per_block: quota,
        min_lane_basefee,
        ..config(TimerOrdering::Market)
    };
    let tx = m.b[0].update_timer_config(with(FLOOR));
    ok(&m.block(vec![tx]));
    let actor = m.actor;
    let h = m.height();
    // 300 high bidders with caps just above the floor, then two honest
    // timers with room to spare, all due together.
    let mut txs: Vec<_> = (0..300u16)
        .map(|i| {
            let who = 3 + usize::from(i % 6);
            m.schedule(
                who,
                actor,
                h + 3,
                i as u8,
                None,
                None,
                900,
                Some(FLOOR + 900),
            )
        })
        .collect();
    txs.push(m.schedule(0, actor, h + 3, 200, None, None, 1, Some(100 * FLOOR)));
    txs.push(m.schedule(0, actor, h + 3, 201, None, None, 1, Some(100 * FLOOR)));
    ok(&m.block(txs));
    m.block(vec![]);
    // They are enqueued in the bidders' favour and two bidders fire; in the
    // same block governance raises the floor past the bidders' caps.
    let raise = m.b[0].update_timer_config(with(3 * FLOOR));
    let receipts = m.block(vec![raise]);
    assert_eq!(events(&receipts, "TimerFired").count(), quota as usize);
    let mut honest = 0;
    let mut deferred = 0;
    for _ in 0..12 {
        let receipts = m.block(vec![]);
        let now = events(&receipts, "TimerDeferred").count();
        assert!(now <= 256, "a block examines at most max(2 × quota, 256)");
        deferred += now;
        honest += events(&receipts, "TimerFired")
            .filter(|e| int(e, "priority_fee") == 1)
            .count();
    }
    assert_eq!(
        honest, 2,
        "the fundable timers behind the priced-out ones fired"
    );
    assert_eq!(
        deferred, 298,
        "every queued bidder moved out of the way once"
    );
    let state = m.chain.store().state();
    assert!(timerhost_timers::globalbox::entries_from(&state, None, 10)
        .unwrap()
        .is_empty());
    assert_eq!(
        timerhost_timers::globalbox::waiting(&state, 1_000)
            .unwrap()
            .len(),
        298
    );
}

/// A fee cap above `MAX_FEE_PER_CYCLE` is refused naming the limit.
#[test]
fn a_fee_cap_above_the_largest_is_refused() {
    let mut m = Market::new(TimerOrdering::Market);
    let actor = m.actor;
    let h = m.height();
    let too_high = timerhost_types::lane::MAX_FEE_PER_CYCLE + 1;
    let tx = m.schedule(0, actor, h + 3, 1, None, None, 0, Some(too_high));
    let r = m.block(vec![tx]).remove(0);
    let error = r.error.expect("refused").message;
    assert!(error.contains("exceeds the largest fee cap"), "{error}");
}

/// The owner can still cancel a timer that waits for the basefee: its
/// deposit comes back and nothing of it stays behind.
#[test]
fn a_waiting_timer_can_be_cancelled_with_its_deposit_refunded() {
    let mut m = Market::new(TimerOrdering::Market);
    let payer = m.b[1].address();
    let actor = m.actor;
    let h = m.height();
    let tx = m.schedule(1, actor, h + 5, 7, Some(payer), None, 0, Some(1_100));
    let r = m.block(vec![tx]);
    let id = match field(events(&r, "TimerScheduled").next().unwrap(), "timer_id") {
        Value::Bytes(b) => b,
        other => panic!("{other:?}"),
    };
    let deposit = int(events(&r, "TimerScheduled").next().unwrap(), "deposit");
    let before = m.balance(&payer);
    let mut waited = false;
    for _ in 0..4 {
        let h = m.height();
        let txs = m.fillers(h + 2, LANE_FIRES as u8);
        waited |= events(&m.block(txs), "TimerDeferred").count() > 0;
    }
    assert!(waited);
    let tx = m.b[2].call(actor, "cancel", vec![Value::Bytes(id)], 0);
    ok(&m.block(vec![tx]));
    assert_eq!(m.balance(&payer), before + deposit);
    let state = m.chain.store().state();
    let waiting = timerhost_timers::globalbox::waiting(&state, 10).unwrap();
    assert!(waiting.is_empty(), "{waiting:?}");
}
