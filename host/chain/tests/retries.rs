//! Retries and the dead-letter queue (#45) on the real VM: a failed fire is
//! armed again with a doubling backoff, paid like the first fire by the
//! same fee payer, and dead-lettered when its retries run out; the queue is
//! the actor's own, bounded, deposit-backed and expiring. The books hold
//! after every block (`common::assert_invariants`, dead letters' deposits
//! included).

mod common;

use common::Net;
use timerhost_timers::dead_letters;
use timerhost_types::{Address, Event, Receipt, TimerConfig, TxSource, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const FLAKY: &str = r#"
import pvm_host

class Flaky:
    def deploy(self):
        self.storage["failing"] = 1
        self.storage["paid"] = 0

    def arm(self, height, retries, backoff, payer=None, gas_limit=50000):
        return pvm_host.schedule_timer_ex(height, b"pay:42", fee_payer=payer,
                                          gas_limit=gas_limit, retries=retries,
                                          retry_backoff=backoff)

    def arm_at(self, timestamp_ms, retries, backoff):
        return pvm_host.schedule_timer_at(timestamp_ms, b"pay:at", gas_limit=50000,
                                          retries=retries, retry_backoff=backoff)

    def arm_watch(self, retries, backoff):
        return pvm_host.watch("price", b"pay:watch", handler="on_price", gas_limit=50000,
                              retries=retries, retry_backoff=backoff)

    def set_price(self, p):
        self.storage["price"] = p

    def set_failing(self, on):
        self.storage["failing"] = on

    def quote(self, retries):
        return pvm_host.timer_quote(gas_limit=50000, retries=retries)

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        if self.storage["failing"] == 2:
            while True:
                pass
        if self.storage["failing"]:
            raise ValueError("payment rejected by the bank")
        self.storage["paid"] = self.storage["paid"] + 1

    @pvm_host.timer_handler
    def on_price(self, payload):
        self.handle_timer(payload)

    def letters(self):
        return pvm_host.dead_letters()

    def retry(self, timer_id, due=None):
        return pvm_host.retry_dead_letter(timer_id, due)

    def drop(self, timer_id):
        pvm_host.drop_dead_letter(timer_id)

    def poke(self, other, handler, timer_id):
        return pvm_host.call(other, handler, timer_id)

    def cancel(self, timer_id):
        pvm_host.cancel_timer(timer_id)
"#;

fn events<'r>(receipts: &'r [Receipt], name: &'r str) -> Vec<&'r Event> {
    receipts
        .iter()
        .flat_map(|r| r.events.iter())
        .filter(|e| e.name == name)
        .collect()
}

fn int(e: &Event, k: &str) -> u128 {
    match e.data.get(k) {
        Some(Value::Int(n)) => u128::try_from(n.clone()).unwrap(),
        other => panic!("{} {k}: {other:?}", e.name),
    }
}

fn text(e: &Event, k: &str) -> String {
    match e.data.get(k) {
        Some(Value::Str(s)) => s.clone(),
        other => panic!("{} {k}: {other:?}", e.name),
    }
}

fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => panic!("{other:?}"),
    }
}

/// Mines blocks until one holds an event named `name` (at most `limit`).
fn mine_until(n: &Net, name: &str, limit: u64) -> (u64, Vec<Receipt>) {
    for _ in 0..limit {
        let receipts = n.block(vec![]);
        if !events(&receipts, name).is_empty() {
            return (n.height(), receipts);
        }
    }
    panic!("no {name} within {limit} blocks");
}

fn deploy(n: &mut Net) -> Address {
    n.deploy(0, FLAKY, vec![], 10u128.pow(21))
}

#[test]
fn a_failed_fire_is_retried_with_a_doubling_backoff_then_dead_lettered() {
    let mut n = Net::new();
    let a = deploy(&mut n);
    let due = n.height() + 2;
    let r = n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(due), Value::int(2), Value::int(3)],
        0,
    );
    let id = bytes(r.return_value.as_ref().unwrap());

    let (h1, r1) = mine_until(&n, "TimerRetried", 5);
    assert_eq!(h1, due, "the first fire runs when due");
    let retried = events(&r1, "TimerRetried")[0];
    assert_eq!(int(retried, "attempt"), 1);
    assert!(text(retried, "error").contains("payment rejected by the bank"));
    let next = match retried.data.get("next_due").unwrap() {
        Value::Dict(_) => retried.data.get("next_due").unwrap().get("height").cloned(),
        other => panic!("{other:?}"),
    };
    assert_eq!(next, Some(Value::int(due + 3)), "backoff 3");
    assert_eq!(
        bytes(retried.data.get("timer_id").unwrap()),
        id,
        "same timer id"
    );

    let (h2, r2) = mine_until(&n, "TimerRetried", 10);
    assert_eq!(h2, due + 3);
    assert_eq!(int(events(&r2, "TimerRetried")[0], "attempt"), 2);

    let (h3, r3) = mine_until(&n, "TimerDeadLettered", 20);
    assert_eq!(h3, due + 3 + 6, "the backoff doubles");
    let dl = events(&r3, "TimerDeadLettered")[0];
    assert_eq!(int(dl, "attempts"), 3);
    assert_eq!(dl.data.get("kept"), Some(&Value::Bool(true)));
    assert!(int(dl, "deposit") > 0);
    // Every attempt was a fire of its own, each one failed.
    assert_eq!(events(&r3, "TimerFired").len(), 1);
    let pending = |n: &Net, id: &[u8]| {
        timerhost_timers::store::get(
            &n.chain.store().state(),
            &timerhost_types::Hash(id.try_into().unwrap()),
        )
        .unwrap()
        .is_some()
    };
    assert!(!pending(&n, &id));

    // The actor sees its queue.
    let letters = n.call_ok(0, a, "letters", vec![], 0);
    let Some(Value::List(list)) = letters.return_value else {
        panic!("{:?}", letters.return_value)
    };
    assert_eq!(list.len(), 1);
    let entry = &list[0];
    assert_eq!(bytes(entry.get("timer_id").unwrap()), id);
    assert_eq!(
        entry.get("payload"),
        Some(&Value::Bytes(b"pay:42".to_vec()))
    );
    assert_eq!(entry.get("attempts"), Some(&Value::int(3)));
    let Some(Value::Str(error)) = entry.get("error") else {
        panic!()
    };
    assert!(error.contains("payment rejected"), "{error}");
    let Some(Value::Str(tb)) = entry.get("traceback") else {
        panic!()
    };
    assert!(tb.contains("handle_timer"), "{tb}");
}

#[test]
fn a_retry_that_succeeds_ends_the_timer_and_the_actor_can_retry_a_dead_letter() {
    let mut n = Net::new();
    let a = deploy(&mut n);
    let due = n.height() + 2;
    n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(due), Value::int(1), Value::int(2)],
        0,
    );
    mine_until(&n, "TimerRetried", 5);
    n.call_ok(0, a, "set_failing", vec![Value::int(0)], 0);
    let (_, r) = mine_until(&n, "TimerFired", 5);
    assert!(events(&r, "TimerRetried").is_empty());
    assert!(events(&r, "TimerDeadLettered").is_empty());
    assert_eq!(n.storage(&a, "paid"), Some(Value::int(1)));

    // Dead-letter a second one, then retry it by hand.
    n.call_ok(0, a, "set_failing", vec![Value::int(1)], 0);
    let r = n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(n.height() + 2), Value::int(1), Value::int(1)],
        0,
    );
    let id = r.return_value.clone().unwrap();
    mine_until(&n, "TimerDeadLettered", 10);
    let payer_before = n.balance(&a);
    n.call_ok(0, a, "set_failing", vec![Value::int(0)], 0);
    let r = n.call_ok(0, a, "retry", vec![id.clone()], 0);
    let names: Vec<&str> = r.events.iter().map(|e| e.name.as_str()).collect();
    assert!(names.contains(&"DeadLetterRemoved"), "{names:?}");
    assert!(names.contains(&"TimerScheduled"), "{names:?}");
    assert!(n.balance(&a) != payer_before);
    mine_until(&n, "TimerFired", 5);
    assert_eq!(n.storage(&a, "paid"), Some(Value::int(2)));
    assert_eq!(
        dead_letters::held(&n.chain.store().state(), &a)
            .unwrap()
            .count,
        0
    );
}

#[test]
fn each_attempt_is_paid_by_the_fee_payer_that_consented() {
    let mut n = Net::new();
    let a = deploy(&mut n);
    let payer = n.b[1].address();
    let due = n.height() + 2;
    // The transaction's signer names itself as fee payer: its consent.
    n.call_ok(
        1,
        a,
        "arm",
        vec![
            Value::int(due),
            Value::int(2),
            Value::int(1),
            Value::Bytes(payer.0.to_vec()),
        ],
        0,
    );
    let mut fires = 0;
    for _ in 0..10 {
        for r in n.block(vec![]) {
            if let TxSource::Deferred { fee_payer, .. } = r.source {
                assert_eq!(fee_payer, payer, "every attempt bills the consenting payer");
                assert!(r.fee_paid > 0);
                fires += 1;
            }
        }
    }
    assert_eq!(fires, 3, "the first fire and two retries");
}

#[test]
fn revoking_a_schedule_revokes_its_retries() {
    let mut n = Net::new();
    let a = deploy(&mut n);
    let payer = n.b[1].address();
    n.call_ok(
        1,
        a,
        "arm",
        vec![
            Value::int(n.height() + 2),
            Value::int(3),
            Value::int(5),
            Value::Bytes(payer.0.to_vec()),
        ],
        0,
    );
    mine_until(&n, "TimerRetried", 5);
    let revoke = n.b[1].revoke_timer_payments();
    n.block(vec![revoke]);
    let (_, r) = mine_until(&n, "TimerCancelledPaymentRevoked", 10);
    assert!(events(&r, "TimerFired").is_empty(), "the retry never fires");
}

#[test]
fn a_stranger_cannot_reach_another_actors_dead_letters_nor_bill_a_payer_without_consent() {
    let mut n = Net::new();
    let a = deploy(&mut n);
    let b = n.deploy(0, FLAKY, vec![], 10u128.pow(21));
    let payer = n.b[1].address();
    let r = n.call_ok(
        1,
        a,
        "arm",
        vec![
            Value::int(n.height() + 2),
            Value::int(1),
            Value::int(1),
            Value::Bytes(payer.0.to_vec()),
        ],
        0,
    );
    let id = r.return_value.clone().unwrap();
    mine_until(&n, "TimerDeadLettered", 10);
    // Actor b has no such entry: an actor reaches only its own queue.
    for handler in ["retry", "drop"] {
        let r = n.call(0, b, handler, vec![id.clone()]);
        let e = r.error.expect("refused");
        assert!(e.message.contains("no dead letter"), "{}", e.message);
    }
    // Re-scheduling bills the entry's fee payer again, so it needs that
    // payer's consent as scheduling does: account 2 signing is refused...
    let r = n.call(2, a, "retry", vec![id.clone()]);
    let e = r.error.expect("refused");
    assert!(e.message.contains("retry_dead_letter"), "{}", e.message);
    // ...and so is the payer's own transaction to another actor that
    // reaches `a` through pvm_host.call: it consented to b, not to a.
    let r = n.call(
        1,
        b,
        "poke",
        vec![Value::Bytes(a.0.to_vec()), Value::str("retry"), id.clone()],
    );
    let e = r.error.expect("refused");
    assert!(e.message.contains("retry_dead_letter"), "{}", e.message);
    assert_eq!(
        dead_letters::held(&n.chain.store().state(), &a)
            .unwrap()
            .count,
        1
    );
    // The payer signing for `a` itself may.
    n.call_ok(1, a, "retry", vec![id], 0);
    assert_eq!(
        dead_letters::held(&n.chain.store().state(), &a)
            .unwrap()
            .count,
        0
    );
}

#[test]
fn the_queue_is_bounded_and_entries_expire_with_their_deposit_refunded() {
    let mut n = Net::with_timers(TimerConfig {
        max_dead_letters_per_actor: 1,
        dead_letter_ttl_blocks: 5,
        ..TimerConfig::default()
    });
    let a = deploy(&mut n);
    let h = n.height();
    n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(h + 2), Value::int(1), Value::int(1)],
        0,
    );
    n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(h + 3), Value::int(1), Value::int(1)],
        0,
    );
    let (_, r) = mine_until(&n, "TimerDeadLettered", 10);
    assert_eq!(
        events(&r, "TimerDeadLettered")[0].data.get("kept"),
        Some(&Value::Bool(true))
    );
    let (_, r) = mine_until(&n, "TimerDeadLettered", 10);
    let dropped = events(&r, "TimerDeadLettered")[0];
    assert_eq!(dropped.data.get("kept"), Some(&Value::Bool(false)));
    assert!(text(dropped, "reason").contains("full"));
    let (_, r) = mine_until(&n, "DeadLetterRemoved", 10);
    let removed = events(&r, "DeadLetterRemoved")[0];
    assert_eq!(text(removed, "reason"), "expired");
    assert!(int(removed, "refund") > 0);
    assert_eq!(
        dead_letters::held(&n.chain.store().state(), &a)
            .unwrap()
            .count,
        0
    );
}

#[test]
fn out_of_cycles_time_timers_and_watches_are_retried_too() {
    let mut n = Net::new();
    let a = deploy(&mut n);
    // Out of cycles.
    n.call_ok(0, a, "set_failing", vec![Value::int(2)], 0);
    n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(n.height() + 2), Value::int(1), Value::int(1)],
        0,
    );
    let (_, r) = mine_until(&n, "TimerRetried", 5);
    assert!(text(events(&r, "TimerRetried")[0], "error").contains("OutOfCycles"));
    mine_until(&n, "TimerDeadLettered", 5);

    // A time timer: the backoff is in seconds.
    n.call_ok(0, a, "set_failing", vec![Value::int(1)], 0);
    let at = n.now() + 10;
    n.call_ok(
        0,
        a,
        "arm_at",
        vec![Value::int(at), Value::int(1), Value::int(7)],
        0,
    );
    let mut t = n.now();
    let retried = loop {
        t += 5;
        let r = n.block_at(vec![], t);
        if let Some(e) = events(&r, "TimerRetried").first() {
            break (*e).clone();
        }
        assert!(t < at + 1_000, "never retried");
    };
    let next = retried
        .data
        .get("next_due")
        .unwrap()
        .get("timestamp_ms")
        .cloned()
        .unwrap();
    let Value::Int(next) = next else { panic!() };
    assert_eq!(u64::try_from(next).unwrap(), t + 7_000);

    // A watch stays registered; its failed fire is retried by a height
    // timer of its own.
    let r = n.call_ok(0, a, "arm_watch", vec![Value::int(1), Value::int(2)], 0);
    let watch_id = bytes(r.return_value.as_ref().unwrap());
    // The watch fires at the end of the block that writes its key.
    let tx = n.b[0].call(a, "set_price", vec![Value::int(5)], 0);
    let r = n.block(vec![tx]);
    let retried = events(&r, "TimerRetried")
        .into_iter()
        .find(|e| bytes(e.data.get("timer_id").unwrap()) == watch_id)
        .expect("the watch's fire was retried");
    let retry_id = bytes(retried.data.get("retry_timer_id").unwrap());
    assert_ne!(retry_id, watch_id);
    assert!(timerhost_timers::store::get(
        &n.chain.store().state(),
        &timerhost_types::Hash(watch_id.try_into().unwrap()),
    )
    .unwrap()
    .is_some());
}

#[test]
fn policies_are_checked_and_quoted_at_their_worst_case() {
    let mut n = Net::with_timers(TimerConfig {
        max_retries: 3,
        ..TimerConfig::default()
    });
    let a = deploy(&mut n);
    let h = n.height() + 100;
    let e = n
        .call(
            0,
            a,
            "arm",
            vec![Value::int(h), Value::int(4), Value::int(1)],
        )
        .error
        .unwrap();
    assert!(e.message.contains("max_retries"), "{}", e.message);
    let e = n
        .call(
            0,
            a,
            "arm",
            vec![Value::int(h), Value::int(2), Value::int(0)],
        )
        .error
        .unwrap();
    assert!(e.message.contains("retry_backoff"), "{}", e.message);
    // retries=0 asks for no retry: the backoff is moot.
    let r = n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(h), Value::int(0), Value::int(5)],
        0,
    );
    let id = timerhost_types::Hash(bytes(r.return_value.as_ref().unwrap()).try_into().unwrap());
    let t = timerhost_timers::store::get(&n.chain.store().state(), &id)
        .unwrap()
        .unwrap();
    assert_eq!(t.retry, None);
    let q = n
        .call_ok(0, a, "quote", vec![Value::int(3)], 0)
        .return_value
        .unwrap();
    let get = |k: &str| match q.get(k) {
        Some(Value::Int(v)) => u128::try_from(v.clone()).unwrap(),
        other => panic!("{k}: {other:?}"),
    };
    assert_eq!(get("max_attempts"), 4);
    assert_eq!(get("worst_case_cost"), 4 * get("max_cost"));
}

#[test]
fn a_chain_without_retries_refuses_policies() {
    let mut n = Net::with_timers(TimerConfig::default().pre_retry());
    let a = deploy(&mut n);
    let e = n
        .call(
            0,
            a,
            "arm",
            vec![Value::int(n.height() + 2), Value::int(1), Value::int(1)],
        )
        .error
        .unwrap();
    assert!(e.message.contains("max_retries = 0"), "{}", e.message);
}

/// #46: a fire leaves its timer's id lookup behind, stale. Everything that
/// reads it sees no timer (a cancel of the fired timer is refused as "no
/// timer", a receipt outcome; the audit passes after every block), a retry
/// makes it the pending timer's again, and pruning deletes it with the
/// fire's block history — but not one a retry made live again.
#[test]
fn a_fired_timers_id_lookup_is_left_stale_and_pruning_removes_it() {
    use timerhost_state::StateRead;
    use timerhost_timers::{keys, record};
    use timerhost_types::Hash;

    let mut n = Net::new();
    let a = deploy(&mut n);
    n.call_ok(0, a, "set_failing", vec![Value::int(0)], 0);
    let due = n.height() + 2;
    let r = n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(due), Value::int(0), Value::int(1)],
        0,
    );
    let done = Hash(bytes(r.return_value.as_ref().unwrap()).try_into().unwrap());
    mine_until(&n, "TimerFired", 5);
    let lookup = |n: &Net, id: &Hash| n.chain.store().state().get(&keys::id_key(id)).unwrap();
    assert!(lookup(&n, &done).is_some(), "the fire left the lookup");
    let state = n.chain.store().state();
    assert_eq!(record::queued(&state, &done).unwrap(), None);
    assert!(record::get_record(&state, &done).unwrap().is_none());
    let refused = n.call(0, a, "cancel", vec![Value::Bytes(done.0.to_vec())]);
    let error = refused.error.expect("a fired timer cannot be cancelled");
    assert!(error.message.contains("no timer"), "{}", error.message);

    // A failing fire with a retry left: the same id is pending again.
    n.call_ok(0, a, "set_failing", vec![Value::int(1)], 0);
    let due = n.height() + 2;
    let r = n.call_ok(
        0,
        a,
        "arm",
        vec![Value::int(due), Value::int(1), Value::int(40)],
        0,
    );
    let retried = Hash(bytes(r.return_value.as_ref().unwrap()).try_into().unwrap());
    mine_until(&n, "TimerRetried", 5);
    let state = n.chain.store().state();
    assert!(
        record::get_record(&state, &retried).unwrap().is_some(),
        "retried: pending"
    );
    common::assert_invariants(&n.chain.store().state(), "after a retry");

    // Prune every block but the head: the stale lookup goes, the live stays.
    let step = n.chain.store().prune(1, 1_000).unwrap();
    assert!(step.floor >= n.height(), "{step:?}");
    assert!(
        lookup(&n, &done).is_none(),
        "pruning swept the stale lookup"
    );
    assert!(
        lookup(&n, &retried).is_some(),
        "the retried timer's lookup stays"
    );
    let state = n.chain.store().state();
    assert!(record::get_record(&state, &retried).unwrap().is_some());
    common::assert_invariants(&n.chain.store().state(), "after pruning");
}
