//! Booked capacity (#45) on the real VM: a booked timer fires at the start
//! of the block it is due in, before every unbooked fire, however crowded
//! the lane and whatever the lane basefee; a block's bookings never pass
//! its bookable share, whatever governance does later; the fee rises with
//! occupancy, is burned, and is not refunded on cancel. The books hold
//! after every block (`common::assert_invariants`).

mod common;

use common::Net;
use timerhost_timers::bookings::{self, Place};
use timerhost_types::{
    Address, Event, Receipt, SystemInstruction, TimerConfig, TimerOrdering, TxSource, Value,
};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const AUCTION: &str = r#"
import pvm_host

class Auction:
    def deploy(self):
        self.storage["closed_at"] = None
        self.storage["ticks"] = 0

    def book_close(self, height, gas_limit=50000):
        return pvm_host.book_timer(height, b"close", gas_limit=gas_limit, handler="close")

    def book_close_at(self, timestamp_ms):
        return pvm_host.book_timer_at(timestamp_ms, b"close", gas_limit=50000, handler="close")

    def book_for(self, height, payer):
        return pvm_host.book_timer(height, b"close", gas_limit=50000, handler="close", fee_payer=payer)

    def crowd(self, height, n, gas_limit=50000, max_fee=None):
        for i in range(n):
            pvm_host.schedule_timer_ex(height, b"tick", gas_limit=gas_limit, max_fee_per_cycle=max_fee)

    def quote(self, height, gas_limit=50000):
        return pvm_host.timer_quote(height, gas_limit=gas_limit, book=True)

    def quote_then_book(self, height):
        q = pvm_host.timer_quote(height, gas_limit=50000, book=True)
        return [q["booking_fee"], self.book_close(height)]

    def fees(self, a, b):
        return [pvm_host.timer_quote(h, gas_limit=50000, book=True)["booking_fee"] for h in (a, b)]

    def cancel(self, timer_id):
        pvm_host.cancel_timer(timer_id)

    def poke(self, other, height, payer):
        return pvm_host.call(other, "book_for", height, payer)

    @pvm_host.timer_handler
    def close(self, payload):
        self.storage["closed_at"] = pvm_host.block_height()
        pvm_host.emit("Closed", {"height": pvm_host.block_height()})

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["ticks"] = self.storage["ticks"] + 1
"#;

/// A small lane, so that a handful of timers crowds it: 5 fires of 53,000
/// cycles fit, half the lane (and of the fire quota) is bookable.
fn crowded() -> TimerConfig {
    TimerConfig {
        lane_cycles_per_block: 300_000,
        max_cycles_per_fire: 100_000,
        max_fires_per_block: 10,
        bookable_lane_percent: 50,
        ..TimerConfig::default()
    }
}

fn events<'r>(receipts: &'r [Receipt], name: &'r str) -> Vec<&'r Event> {
    receipts
        .iter()
        .flat_map(|r| r.events.iter())
        .filter(|e| e.name == name)
        .collect()
}

fn int(v: Option<&Value>) -> u128 {
    match v {
        Some(Value::Int(n)) => u128::try_from(n.clone()).unwrap(),
        other => panic!("{other:?}"),
    }
}

fn deploy(n: &mut Net) -> Address {
    n.deploy(0, AUCTION, vec![], 10u128.pow(21))
}

/// The fires of a block, in order: (booked?, handler).
fn fires(receipts: &[Receipt]) -> Vec<String> {
    events(receipts, "TimerFired")
        .into_iter()
        .map(|e| match e.data.get("handler") {
            Some(Value::Str(h)) => h.clone(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_booked_timer_fires_first_in_its_block_however_crowded_the_lane() {
    let mut n = Net::with_timers(crowded());
    let a = deploy(&mut n);
    let h = n.height() + 4;
    // Twelve unbooked timers due at h: the lane holds five a block.
    n.call_ok(0, a, "crowd", vec![Value::int(h), Value::int(12)], 0);
    let r = n.call_ok(0, a, "book_close", vec![Value::int(h)], 0);
    assert!(r.events.iter().any(|e| e.name == "TimerBooked"));
    let receipts = loop {
        let receipts = n.block(vec![]);
        if n.height() == h {
            break receipts;
        }
    };
    let order = fires(&receipts);
    assert_eq!(
        order.first().map(String::as_str),
        Some("close"),
        "{order:?}"
    );
    assert_eq!(n.storage(&a, "closed_at"), Some(Value::int(h)));
    // It ran at the start of the block, before the block's other fires.
    let first = receipts
        .iter()
        .position(|r| matches!(r.source, TxSource::Deferred { .. }))
        .unwrap();
    assert!(events(&receipts[first..=first], "TimerFired")
        .iter()
        .any(|e| e.data.get("handler") == Some(&Value::str("close"))));
    // The unbooked ones still fire, carried over in order.
    for _ in 0..4 {
        n.block(vec![]);
    }
    assert_eq!(n.storage(&a, "ticks"), Some(Value::int(12)));
    assert_eq!(
        bookings::slot(&n.chain.store().state(), Place::Height(h))
            .unwrap()
            .fires,
        0
    );
}

#[test]
fn a_full_block_refuses_a_booking_and_the_quote_suggests_free_heights() {
    let mut n = Net::with_timers(crowded());
    let a = deploy(&mut n);
    let h = n.height() + 10;
    // The share: 150,000 cycles → two bookings of 53,000 cycles.
    n.call_ok(0, a, "book_close", vec![Value::int(h)], 0);
    n.call_ok(0, a, "book_close", vec![Value::int(h)], 0);
    let e = n
        .call(0, a, "book_close", vec![Value::int(h)])
        .error
        .expect("refused");
    assert!(
        e.message.contains("cannot book") && e.message.contains("share"),
        "{}",
        e.message
    );
    let q = n
        .call_ok(0, a, "quote", vec![Value::int(h)], 0)
        .return_value
        .unwrap();
    assert_eq!(q.get("bookable"), Some(&Value::Bool(false)));
    let Some(Value::Dict(_)) = q.get("booking") else {
        panic!("{q:?}")
    };
    let free = q
        .get("booking")
        .unwrap()
        .get("free_heights")
        .unwrap()
        .clone();
    let Value::List(free) = free else { panic!() };
    assert_eq!(
        free.first(),
        Some(&Value::int(h + 1)),
        "the nearest free height"
    );
    // Beyond the horizon is refused by name.
    let far = n.height() + crowded().max_booking_blocks + 5;
    let e = n
        .call(0, a, "book_close", vec![Value::int(far)])
        .error
        .unwrap();
    assert!(e.message.contains("max_booking_blocks"), "{}", e.message);
}

#[test]
fn the_fee_rises_with_occupancy_is_burned_and_is_not_refunded_on_cancel() {
    let mut n = Net::with_timers(crowded());
    let a = deploy(&mut n);
    let h = n.height() + 10;
    let burned_before = timerhost_chain::accounts::supply(&n.chain.store().state())
        .unwrap()
        .burned;
    let r = n.call_ok(0, a, "quote_then_book", vec![Value::int(h)], 0);
    let Some(Value::List(pair)) = r.return_value.clone() else {
        panic!()
    };
    let fee0 = int(pair.first());
    let booked = r.events.iter().find(|e| e.name == "TimerBooked").unwrap();
    assert_eq!(
        int(booked.data.get("booking_fee")),
        fee0,
        "the fee is the quote's"
    );
    assert!(
        timerhost_chain::accounts::supply(&n.chain.store().state())
            .unwrap()
            .burned
            >= burned_before + fee0,
        "the fee is burned"
    );
    // Quoted in one execution (one basefee): the half-booked block h costs
    // more than the empty h + 1.
    let r2 = n.call_ok(0, a, "fees", vec![Value::int(h), Value::int(h + 1)], 0);
    let Some(Value::List(fees)) = r2.return_value.clone() else {
        panic!()
    };
    assert!(
        int(fees.first()) > int(fees.get(1)),
        "a fuller block costs more: {fees:?}"
    );
    // Cancel: the capacity is free again, the fee stays paid.
    let id = pair[1].clone();
    let balance = n.balance(&a);
    n.call_ok(0, a, "cancel", vec![id], 0);
    assert_eq!(
        bookings::slot(&n.chain.store().state(), Place::Height(h))
            .unwrap()
            .fires,
        0
    );
    let refund_bound = fee0 / 2;
    assert!(
        n.balance(&a) < balance + refund_bound,
        "no booking fee comes back"
    );
}

#[test]
fn bookings_made_survive_a_governance_change_that_shrinks_the_share() {
    let mut n = Net::with_timers(crowded());
    let a = deploy(&mut n);
    let h = n.height() + 8;
    n.call_ok(0, a, "book_close", vec![Value::int(h)], 0);
    n.call_ok(0, a, "book_close", vec![Value::int(h)], 0);
    let shrink = TimerConfig {
        bookable_lane_percent: 10,
        ..crowded()
    };
    let tx = n.b[0].system(SystemInstruction::UpdateTimerConfig(shrink));
    n.block(vec![tx]);
    // New bookings see the smaller share (75,000 cycles): none fits in h.
    let e = n
        .call(0, a, "book_close", vec![Value::int(h)])
        .error
        .unwrap();
    assert!(e.message.contains("share"), "{}", e.message);
    let receipts = loop {
        let receipts = n.block(vec![]);
        if n.height() == h {
            break receipts;
        }
    };
    assert_eq!(
        fires(&receipts).iter().filter(|h| *h == "close").count(),
        2,
        "grandfathered"
    );
}

#[test]
fn a_booked_timer_is_never_priced_out_by_the_lane_basefee() {
    let mut n = Net::with_timers(TimerConfig {
        ordering: TimerOrdering::Market,
        ..crowded()
    });
    let a = deploy(&mut n);
    let h = n.height() + 6;
    n.call_ok(0, a, "book_close", vec![Value::int(h)], 0);
    n.call_ok(
        0,
        a,
        "crowd",
        vec![
            Value::int(h),
            Value::int(1),
            Value::int(50_000),
            Value::int(300),
        ],
        0,
    );
    // Governance raises the lane basefee's floor past both timers' caps.
    let tx = n.b[0].system(SystemInstruction::UpdateTimerConfig(TimerConfig {
        ordering: TimerOrdering::Market,
        min_lane_basefee: 10_000,
        ..crowded()
    }));
    n.block(vec![tx]);
    let mut deferred = 0;
    let mut closed = None;
    while n.height() < h + 2 {
        let r = n.block(vec![]);
        deferred += events(&r, "TimerDeferred").len();
        if fires(&r).iter().any(|x| x == "close") {
            closed = Some(n.height());
        }
    }
    assert_eq!(closed, Some(h), "the booking fired on time");
    assert!(deferred >= 1, "the unbooked timer waits for the basefee");
}

#[test]
fn a_stranger_cannot_book_on_someone_elses_account() {
    let mut n = Net::with_timers(crowded());
    let a = deploy(&mut n);
    let b = deploy(&mut n);
    let payer = n.b[1].address();
    let h = n.height() + 5;
    // Account 2 signs, naming account 1 as the payer: refused.
    let e = n
        .call(
            2,
            a,
            "book_for",
            vec![Value::int(h), Value::Bytes(payer.0.to_vec())],
        )
        .error
        .unwrap();
    assert!(e.message.contains("fee_payer"), "{}", e.message);
    // Account 1's transaction to b, which reaches a through pvm_host.call:
    // it consented to b, not to a.
    let e = n
        .call(
            1,
            b,
            "poke",
            vec![
                Value::Bytes(a.0.to_vec()),
                Value::int(h),
                Value::Bytes(payer.0.to_vec()),
            ],
        )
        .error
        .unwrap();
    assert!(e.message.contains("fee_payer"), "{}", e.message);
    // Account 1 itself may, and pays the fee.
    let before = n.balance(&payer);
    n.call_ok(
        1,
        a,
        "book_for",
        vec![Value::int(h), Value::Bytes(payer.0.to_vec())],
        0,
    );
    assert!(n.balance(&payer) < before);
}

#[test]
fn a_time_booking_fires_at_the_start_of_the_first_block_at_its_time() {
    let mut n = Net::with_timers(crowded());
    let a = deploy(&mut n);
    let at = n.now() + 5_000;
    n.call_ok(0, a, "book_close_at", vec![Value::int(at)], 0);
    let e = n
        .call(
            0,
            a,
            "book_close_at",
            vec![Value::int(n.now() + 10u64.pow(12))],
        )
        .error
        .unwrap();
    assert!(e.message.contains("max_booking_blocks"), "{}", e.message);
    n.block_at(vec![], at - 1);
    assert_eq!(n.storage(&a, "closed_at"), Some(Value::None));
    let r = n.block_at(vec![], at);
    assert_eq!(fires(&r).first().map(String::as_str), Some("close"));
}

#[test]
fn paused_bookings_fire_first_after_the_resume() {
    let mut n = Net::with_timers(crowded());
    let a = deploy(&mut n);
    let h = n.height() + 4;
    n.call_ok(0, a, "book_close", vec![Value::int(h)], 0);
    let pause = n.b[0].system(SystemInstruction::PauseTimers);
    n.block(vec![pause]);
    while n.height() < h + 2 {
        n.block(vec![]);
    }
    assert_eq!(
        n.storage(&a, "closed_at"),
        Some(Value::None),
        "paused: nothing fires"
    );
    // The resume takes effect within its block: the booking, the oldest due
    // timer, fires at that block's end (or the next block's start).
    let resume = n.b[0].system(SystemInstruction::ResumeTimers);
    let r = n.block(vec![resume]);
    let fired_now = fires(&r).iter().any(|x| x == "close");
    if !fired_now {
        let r = n.block(vec![]);
        assert_eq!(fires(&r).first().map(String::as_str), Some("close"));
    }
    assert!(n.storage(&a, "closed_at") != Some(Value::None));
    assert_eq!(
        bookings::slot(&n.chain.store().state(), Place::Height(h))
            .unwrap()
            .fires,
        0
    );
}

#[test]
fn a_chain_without_bookings_refuses_them_by_name() {
    let mut n = Net::with_timers(crowded().pre_booking());
    let a = deploy(&mut n);
    let e = n
        .call(0, a, "book_close", vec![Value::int(n.height() + 3)])
        .error
        .unwrap();
    assert!(
        e.message.contains("bookable_lane_percent = 0"),
        "{}",
        e.message
    );
}
