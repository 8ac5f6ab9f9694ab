//! The timer-lane fee market under sustained demand (#31, CIP-1 v3 Part
//! III): a simulation, not a timing.
//!
//! ```text
//! cargo bench -p timerhost-chain --bench market --ignore-rust-version
//! ```
//!
//! 260 blocks on the mock runtime under market ordering. Every block, 20
//! timers are offered (twice the lane's target of 10 fires; the lane holds
//! 20) by 8 actors, each due two blocks on with 200 blocks to live, its fee
//! cap drawn uniformly from 1,000–9,000 per cycle and its tip from 0–200
//! (seeded: every run is the same chain). The lane basefee must settle so
//! that lane use over blocks 60–260 averages within ±10 % of the target,
//! and every timer whose cap stayed above the basefee from its scheduling
//! to its fire must fire — none starves. The run prints the basefee every
//! 20 blocks, the lane use, and the wait (blocks from due to fire) by cap
//! tier, and exits non-zero if either property fails.
//!
//! A booked population rides along (#45): every block a ninth actor books
//! [`BOOKED_PER_BLOCK`] timers [`BOOK_AHEAD`] blocks on (within the
//! bookable share). Every booked timer must fire in exactly the block it
//! was booked for — never late, whatever the lane basefee — while the
//! unbooked ones still fire, and the lane still settles on its target.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use timerhost_chain::testing::{dev_builders, MockRuntime};
use timerhost_chain::{Chain, NoHooks};
use timerhost_state::MemoryBackend;
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{
    actor_address, Address, BasefeeConfig, Genesis, Hash, TimerConfig, TimerOrdering, Value,
};

const T: u64 = 1_767_225_600_000;
const GAS: u64 = 7_000;
const RESERVE: u64 = GAS + TIMER_FIRE_BASE_CYCLES;
const LANE_FIRES: u64 = 20;
const DEMAND_PER_BLOCK: usize = 20;
const ACTORS: usize = 8;
const BLOCKS: u64 = 260;
const WARM_UP: u64 = 60;
const TTL: u64 = 200;
/// Booked timers per block (#45), and how far ahead they are booked.
const BOOKED_PER_BLOCK: usize = 2;
const BOOK_AHEAD: u64 = 3;
const TIERS: [(&str, u64, u64); 4] = [
    ("cap 1,000–2,999", 1_000, 3_000),
    ("cap 3,000–4,999", 3_000, 5_000),
    ("cap 5,000–6,999", 5_000, 7_000),
    ("cap 7,000–9,000", 7_000, 9_001),
];

/// One offered timer's life.
struct Offer {
    cap: u64,
    due: u64,
    fired_at: Option<u64>,
    expired: bool,
    /// The highest lane basefee from its scheduling to its fire or the end.
    peak_basefee: u64,
}

fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[(sorted.len() - 1) * p / 100]
}

fn main() {
    let mut genesis = Genesis::dev();
    genesis.timers = TimerConfig {
        ordering: TimerOrdering::Market,
        max_cycles_per_fire: GAS,
        lane_cycles_per_block: LANE_FIRES * RESERVE,
        min_lane_basefee: 1_000,
        bookable_lane_percent: 20,
        ..TimerConfig::default()
    };
    genesis.basefee = BasefeeConfig {
        cycle_basefee: 100,
        cell_basefee: 100,
        ..BasefeeConfig::default()
    };
    let target = timerhost_types::lane::lane_target(&genesis.timers);
    let chain = Chain::open(
        MemoryBackend::new(),
        genesis,
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut b = dev_builders();
    let mut height = 0u64;
    let mut produce = |txs: Vec<timerhost_types::SignedTransaction>| {
        height += 1;
        let p = chain
            .produce_block(&txs, T + height * 1_000, Address([0xee; 20]))
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        p.executed
    };
    let actors: Vec<Address> = (0..=ACTORS)
        .map(|i| actor_address(&b[i].address(), b[i].nonce))
        .collect();
    let booker = actors[ACTORS];
    let deploys = (0..=ACTORS)
        .map(|i| b[i].deploy("mock", vec![], 10u128.pow(23)))
        .collect();
    produce(deploys);
    // Booked timer id → (booked height, fired at).
    let mut booked: BTreeMap<Hash, (u64, Option<u64>)> = BTreeMap::new();
    let mut booking_refused = 0u64;

    let mut rng = ChaCha20Rng::seed_from_u64(31);
    let mut offers: BTreeMap<Hash, Offer> = BTreeMap::new();
    let mut refused: Vec<u64> = Vec::new();
    let mut deferred = 0u64;
    let mut lane_used: Vec<u64> = Vec::new();
    println!("timer-lane market simulation: demand {DEMAND_PER_BLOCK} timers/block, target {} fires/block, lane {LANE_FIRES}\n", target / RESERVE);
    println!("| block | lane basefee | fires | lane use / target |");
    println!("|---|---|---|---|");
    for _ in 0..BLOCKS {
        let basefee_now = {
            let state = chain.store().state();
            let config = timerhost_chain::accounts::timer_config(&state).unwrap();
            timerhost_timers::lane::market(&state, &config)
                .unwrap()
                .basefee
        };
        let h = chain.head().unwrap().height + 1;
        let mut caps = Vec::new();
        let mut txs: Vec<_> = (0..DEMAND_PER_BLOCK)
            .map(|i| {
                let who = rng.gen_range(0..ACTORS);
                let cap = rng.gen_range(1_000..=9_000u64);
                let tip = rng.gen_range(0..=200u64);
                caps.push(cap);
                b[who].call(
                    actors[who],
                    "schedule",
                    vec![
                        Value::int(h + 2),
                        Value::Bytes(vec![(h % 251) as u8, i as u8]),
                        Value::None,
                        Value::int(GAS),
                        Value::int(h + 2 + TTL),
                        Value::int(tip),
                        Value::int(cap),
                    ],
                    0,
                )
            })
            .collect();
        for i in 0..BOOKED_PER_BLOCK {
            txs.push(b[ACTORS].call(
                booker,
                "book",
                vec![
                    Value::int(h + BOOK_AHEAD),
                    Value::Bytes(vec![0xbb, (h % 251) as u8, i as u8]),
                    Value::int(GAS),
                ],
                0,
            ));
        }
        let executed = produce(txs);
        let header = &executed.block.header;
        for o in offers.values_mut() {
            if o.fired_at.is_none() && !o.expired {
                o.peak_basefee = o.peak_basefee.max(header.lane_basefee);
            }
        }
        let mut fires = 0;
        for (i, r) in executed.receipts.iter().enumerate() {
            if let Some(e) = &r.error {
                if e.message.contains("cannot book") {
                    booking_refused += 1;
                    continue;
                }
                assert!(e.message.contains("below the lane basefee"), "{e:?}");
                refused.push(caps.get(i).copied().unwrap_or(0));
            }
            for e in &r.events {
                let id = || match e.data.get("timer_id") {
                    Some(Value::Bytes(b)) => Hash::from_slice(b).unwrap(),
                    other => panic!("{other:?}"),
                };
                match e.name.as_str() {
                    "TimerBooked" => {
                        booked.insert(id(), (h + BOOK_AHEAD, None));
                    }
                    "TimerScheduled" if e.emitter == booker => {}
                    "TimerFired" if booked.contains_key(&id()) => {
                        fires += 1;
                        booked.get_mut(&id()).expect("checked").1 = Some(header.height);
                    }
                    "TimerScheduled" => {
                        let cap = e
                            .data
                            .get("max_fee_per_cycle")
                            .and_then(Value::as_u128)
                            .unwrap();
                        offers.insert(
                            id(),
                            Offer {
                                cap: cap as u64,
                                due: h + 2,
                                fired_at: None,
                                expired: false,
                                peak_basefee: basefee_now,
                            },
                        );
                    }
                    "TimerFired" => {
                        fires += 1;
                        if let Some(o) = offers.get_mut(&id()) {
                            o.fired_at = Some(header.height);
                        }
                    }
                    "TimerExpired" => {
                        if let Some(o) = offers.get_mut(&id()) {
                            o.expired = true;
                        }
                    }
                    "TimerDeferred" => deferred += 1,
                    _ => {}
                }
            }
        }
        let used = executed.timer_stats.lane_reserved;
        if header.height > WARM_UP {
            lane_used.push(used);
        }
        if header.height % 20 == 0 {
            println!(
                "| {} | {} | {fires} | {:.2} |",
                header.height,
                header.lane_basefee,
                used as f64 / target as f64
            );
        }
    }
    let mean = lane_used.iter().sum::<u64>() as f64 / lane_used.len() as f64 / target as f64;
    println!(
        "\nlane use over blocks {}–{BLOCKS}: {:.3} of the target (must be within 0.90–1.10)",
        WARM_UP + 1,
        mean
    );
    println!(
        "{deferred} TimerDeferred events; {} schedules refused below the lane basefee\n",
        refused.len()
    );
    println!(
        "| tier | offered | refused | fired | expired waiting | wait p50 / p90 / max (blocks) |"
    );
    println!("|---|---|---|---|---|---|");
    let end = chain.head().unwrap().height;
    for (name, lo, hi) in TIERS {
        let tier: Vec<&Offer> = offers
            .values()
            .filter(|o| (lo..hi).contains(&o.cap))
            .collect();
        let mut waits: Vec<u64> = tier
            .iter()
            .filter_map(|o| o.fired_at.map(|f| f - o.due))
            .collect();
        waits.sort_unstable();
        let refused = refused.iter().filter(|c| (lo..hi).contains(*c)).count();
        println!(
            "| {name} | {} | {refused} | {} | {} | {} / {} / {} |",
            tier.len() + refused,
            waits.len(),
            tier.iter().filter(|o| o.expired).count(),
            percentile(&waits, 50),
            percentile(&waits, 90),
            waits.last().copied().unwrap_or(0),
        );
    }
    // Never starved: a timer whose cap stayed at or above every basefee
    // since it was scheduled, and that was due long enough before the end
    // to have had its turn, fired.
    let starved: Vec<&Offer> = offers
        .values()
        .filter(|o| o.cap >= o.peak_basefee && o.due + 20 < end && o.fired_at.is_none())
        .collect();
    println!(
        "\ntimers whose cap stayed above the basefee and did not fire: {}",
        starved.len()
    );
    // #45: every booked timer due before the end fired in its block.
    let due_booked: Vec<&(u64, Option<u64>)> =
        booked.values().filter(|(at, _)| *at <= end).collect();
    let on_time = due_booked
        .iter()
        .filter(|(at, fired)| *fired == Some(*at))
        .count();
    let unbooked_fired = offers.values().filter(|o| o.fired_at.is_some()).count();
    println!(
        "booked: {} due, {on_time} fired in the block booked, {} late or missing ({booking_refused} bookings refused); unbooked: {unbooked_fired} fired",
        due_booked.len(),
        due_booked.len() - on_time
    );
    let settled = (0.9..=1.1).contains(&mean);
    let booked_ok = !due_booked.is_empty() && on_time == due_booked.len() && unbooked_fired > 0;
    if !settled || !starved.is_empty() || !booked_ok {
        eprintln!(
            "FAILED: lane use {mean:.3} of target, {} starved, {} of {} booked fires late or missing, {unbooked_fired} unbooked fired",
            starved.len(),
            due_booked.len() - on_time,
            due_booked.len()
        );
        std::process::exit(1);
    }
}
