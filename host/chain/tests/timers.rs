//! CIP-5 native timers, rule by rule. Test names carry the section they
//! check (`cip5_4_2_…` → §4.2), so a reader can map the spec to its tests.
//! Actors are the chain's deterministic mock runtime, whose timer handlers
//! call the same `timerhost_timers` host functions the Python VM calls.

mod common;

use timerhost_chain::testing::{dev_builders, dev_chain, TxBuilder};
use timerhost_chain::Chain;
use timerhost_state::MemoryBackend;
use timerhost_timers::store;
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{
    keys, Address, ErrorKind, Event, Hash, Receipt, SignedTransaction, TimerConfig, TxSource, Value,
};

const PROPOSER: Address = Address([0xee; 20]);

/// Funds for an actor that must lend timer deposits (~320,000 each at the
/// default `deposit_per_byte`) but cannot pay a single fire (max_cost ≈
/// 1.1e9 at the default basefees).
const DEPOSITS: u128 = 100_000_000;

struct Net {
    chain: Chain<MemoryBackend>,
    b: Vec<TxBuilder>,
}

impl Net {
    fn new() -> Self {
        Self::on(dev_chain())
    }

    /// A mock-runtime chain from `genesis`.
    fn with_genesis(genesis: timerhost_types::Genesis) -> Self {
        Self::on(
            Chain::open(
                MemoryBackend::new(),
                genesis,
                std::sync::Arc::new(timerhost_chain::testing::MockRuntime),
                std::sync::Arc::new(timerhost_chain::NoHooks),
            )
            .unwrap(),
        )
    }

    fn on(chain: Chain<MemoryBackend>) -> Self {
        let mut b = dev_builders();
        for x in &mut b {
            x.cycles_limit = 20_000_000;
            x.cells_limit = 3_000_000;
        }
        Net { chain, b }
    }

    fn height(&self) -> u64 {
        self.chain.head().unwrap().height
    }

    /// Mines one block with `txs`; asserts every tx was included.
    fn block(&self, txs: Vec<SignedTransaction>) -> Vec<Receipt> {
        let head = self.chain.head().unwrap();
        let p = self
            .chain
            .produce_block(&txs, head.timestamp_ms + 1, PROPOSER)
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        common::assert_invariants(
            &self.chain.store().state(),
            &format!("block {}", head.height + 1),
        );
        p.executed.receipts
    }

    fn mine_to(&self, height: u64) -> Vec<Vec<Receipt>> {
        let mut out = Vec::new();
        while self.height() < height {
            out.push(self.block(vec![]));
        }
        out
    }

    /// Deploys a mock actor from dev account `who`, funding it with `value`.
    fn deploy(&mut self, who: usize, value: u128) -> Address {
        let tx = self.b[who].deploy("mock", vec![], value);
        self.block(vec![tx])[0].created_actor.unwrap()
    }

    fn call(&mut self, who: usize, actor: Address, handler: &str, args: Vec<Value>) -> Receipt {
        let tx = self.b[who].call(actor, handler, args, 0);
        self.block(vec![tx]).remove(0)
    }

    #[allow(clippy::too_many_arguments)] // mirrors schedule_timer_ex's optional arguments
    fn schedule(
        &mut self,
        who: usize,
        actor: Address,
        height: u64,
        payload: &[u8],
        fee_payer: Option<Address>,
        gas: Option<u64>,
        expires: Option<u64>,
    ) -> Receipt {
        let opt = |v: Option<u64>| v.map(Value::int).unwrap_or(Value::None);
        let args = vec![
            Value::int(height),
            Value::Bytes(payload.to_vec()),
            fee_payer
                .map(|a| Value::Bytes(a.0.to_vec()))
                .unwrap_or(Value::None),
            opt(gas),
            opt(expires),
        ];
        self.call(who, actor, "schedule", args)
    }

    fn set(&mut self, who: usize, actor: Address, key: &str, v: Value) {
        assert!(self
            .call(who, actor, "set", vec![Value::str(key), v])
            .is_success());
    }

    fn governance(&mut self, tx: impl FnOnce(&mut TxBuilder) -> SignedTransaction) -> Receipt {
        let tx = tx(&mut self.b[0]);
        self.block(vec![tx]).remove(0)
    }

    fn balance(&self, a: &Address) -> u128 {
        self.chain.account(a).unwrap().balance
    }

    fn storage_int(&self, actor: &Address, key: &str) -> Option<i128> {
        use timerhost_state::StateRead;
        let v = self
            .chain
            .store()
            .state()
            .get(&keys::storage(actor, key.as_bytes()))
            .unwrap()?;
        match Value::from_bytes(&v).unwrap() {
            Value::Int(n) => Some(i128::try_from(n).unwrap()),
            other => panic!("{other:?}"),
        }
    }

    fn timer(&self, id: &Hash) -> Option<timerhost_types::Timer> {
        store::get(&self.chain.store().state(), id).unwrap()
    }
}

fn timer_id_of(r: &Receipt) -> Hash {
    match &r.return_value {
        Some(Value::Bytes(b)) => Hash::from_slice(b).unwrap(),
        other => panic!("schedule returned {other:?} ({:?})", r.error),
    }
}

fn failed(r: &Receipt, kind: ErrorKind, needle: &str) {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected failure containing {needle:?}"));
    assert_eq!(e.kind, kind, "{}", e.message);
    assert!(
        e.message.contains(needle),
        "{:?} does not contain {needle:?}",
        e.message
    );
}

fn events_named<'a>(receipts: &'a [Receipt], name: &str) -> Vec<&'a Event> {
    receipts
        .iter()
        .flat_map(|r| r.events.iter())
        .filter(|e| e.name == name)
        .collect()
}

fn field<'a>(e: &'a Event, k: &str) -> &'a Value {
    e.data
        .get(k)
        .unwrap_or_else(|| panic!("{} has no field {k}", e.name))
}

/// The `timer_id` field of a timer event.
fn id_field(e: &Event) -> Hash {
    match field(e, "timer_id") {
        Value::Bytes(b) => Hash::from_slice(b).unwrap(),
        other => panic!("timer_id is {other:?}"),
    }
}

/// Ids of the timers fired in these receipts, in order.
fn fired_ids(receipts: &[Receipt]) -> Vec<Hash> {
    events_named(receipts, "TimerFired")
        .into_iter()
        .map(id_field)
        .collect()
}

fn int(v: &Value) -> i128 {
    match v {
        Value::Int(n) => i128::try_from(n.clone()).unwrap(),
        other => panic!("{other:?}"),
    }
}

// ---- §3: records, ids, indexes ------------------------------------------------

#[test]
fn cip5_3_1_record_fields_and_3_3_ids_use_the_actor_schedule_nonce() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 5;
    // The same payload twice in one transaction: distinct ids (DESIGN.md deviation).
    let r1 = n.schedule(0, actor, h, b"same", None, None, None);
    let r2 = n.schedule(0, actor, h, b"same", None, None, None);
    let (a, b) = (timer_id_of(&r1), timer_id_of(&r2));
    assert_ne!(a, b);
    assert_eq!(a, timerhost_types::timer_id(&actor, h, b"same", 0));
    assert_eq!(b, timerhost_types::timer_id(&actor, h, b"same", 1));
    let t = n.timer(&a).unwrap();
    assert_eq!(
        (
            t.actor_address,
            t.height,
            t.payload.as_slice(),
            t.handler.as_str()
        ),
        (actor, h, &b"same"[..], "handle_timer")
    );
    let cfg = TimerConfig::default();
    assert_eq!(t.fee_payer, actor, "default fee payer is the actor");
    assert_eq!(t.gas_limit_per_fire, cfg.max_cycles_per_fire);
    assert_eq!(
        t.expires_at,
        n.height() - 1 + cfg.max_ttl_blocks,
        "default expiry is schedule height + max_ttl"
    );
    // Indexes: by actor, by height (FIFO), by fee payer; live count.
    let state = n.chain.store().state();
    assert_eq!(
        store::by_actor(&state, &actor, 10)
            .unwrap()
            .iter()
            .map(|t| t.timer_id)
            .collect::<Vec<_>>(),
        vec![a, b]
    );
    assert_eq!(
        store::by_height(&state, h, 10)
            .unwrap()
            .iter()
            .map(|t| t.timer_id)
            .collect::<Vec<_>>(),
        vec![a, b]
    );
    assert_eq!(store::by_fee_payer(&state, &actor, 10).unwrap().len(), 2);
    assert_eq!(store::live_count(&state, &actor).unwrap(), 2);
    // The TimerScheduled event.
    let e = &r1.events[0];
    assert_eq!(e.name, "TimerScheduled");
    assert_eq!(field(e, "timer_id"), &Value::Bytes(a.0.to_vec()));
    assert_eq!(field(e, "actor"), &Value::str(actor.to_hex()));
    assert_eq!(int(field(e, "height")), h as i128);
    assert_eq!(int(field(e, "gas_limit")), cfg.max_cycles_per_fire as i128);
}

// ---- §4.2 constraints -----------------------------------------------------------

#[test]
fn cip5_4_2_future_height_only() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let current = n.height() + 1; // the block the call lands in
    let r = n.schedule(0, actor, current, b"", None, None, None);
    failed(&r, ErrorKind::InvalidInput, "is not in the future");
    let r = n.schedule(0, actor, current - 1, b"", None, None, None);
    failed(&r, ErrorKind::InvalidInput, "is not in the future");
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        0
    );
}

#[test]
fn cip5_4_2_payload_at_most_one_mib() {
    let mut n = Net::new();
    // A 1 MiB timer lends a ~1.05e9 deposit.
    let actor = n.deploy(0, 10u128.pow(10));
    let h = n.height() + 3;
    let ok = n.schedule(0, actor, h, &vec![7u8; 1_048_576], None, None, None);
    assert!(ok.is_success(), "{:?}", ok.error);
    let r = n.schedule(0, actor, h, &vec![7u8; 1_048_577], None, None, None);
    failed(
        &r,
        ErrorKind::InvalidInput,
        "payload is 1048577 bytes, the maximum is 1048576",
    );
}

#[test]
fn cip5_4_2_custom_handler_convention_and_name_length() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 10;
    let long = format!(r#"{{"_handler": "{}", "_payload": ""}}"#, "h".repeat(257));
    failed(
        &n.schedule(0, actor, h, long.as_bytes(), None, None, None),
        ErrorKind::InvalidInput,
        "handler names are at most 256 bytes, this one has 257",
    );
    let private = br#"{"_handler": "_secret", "_payload": ""}"#;
    failed(
        &n.schedule(0, actor, h, private, None, None, None),
        ErrorKind::InvalidInput,
        "names starting with '_' are private",
    );
    // Bug 6: one handler-name rule with the VM — names it reserves for the
    // actor instance (storage, address, deployer) or for deployment are
    // refused at scheduling, not at every fire.
    for reserved in ["storage", "address", "deployer", "deploy"] {
        let payload = format!(r#"{{"_handler": "{reserved}", "_payload": ""}}"#);
        failed(
            &n.schedule(0, actor, h, payload.as_bytes(), None, None, None),
            ErrorKind::InvalidInput,
            &format!("'{reserved}' is reserved"),
        );
    }
    // A valid custom handler: "boom" runs (and reverts) instead of handle_timer.
    let id = timer_id_of(&n.schedule(
        0,
        actor,
        h,
        br#"{"_handler": "boom", "_payload": "AAE="}"#,
        None,
        None,
        None,
    ));
    assert_eq!(n.timer(&id).unwrap().handler, "boom");
    let fund = n.b[1].transfer(actor, 10u128.pow(20));
    n.block(vec![fund]);
    let receipts = n.mine_to(h).pop().unwrap();
    let fired = events_named(&receipts, "TimerFired");
    assert_eq!(fired.len(), 1);
    assert_eq!(field(fired[0], "handler"), &Value::str("boom"));
    assert_eq!(field(fired[0], "success"), &Value::Bool(false));
}

#[test]
fn cip5_4_2_fee_payer_zero_is_rejected() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 3;
    failed(
        &n.schedule(0, actor, h, b"", Some(Address::ZERO), None, None),
        ErrorKind::InvalidInput,
        "zero (burn) address",
    );
}

#[test]
fn cip5_4_2_fee_payer_system_band_is_rejected() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 10;
    for band in [0x01u8, 0x09, 0x0f] {
        failed(
            &n.schedule(0, actor, h, b"", Some(Address::system(band)), None, None),
            ErrorKind::InvalidInput,
            "reserved system-actor band",
        );
    }
}

#[test]
fn cip5_8_hostile_actor_with_a_victim_as_fee_payer_is_rejected() {
    let mut n = Net::new();
    let hostile = n.deploy(0, DEPOSITS);
    let victim = n.b[5].address();
    let h = n.height() + 3;
    // Called by account 1: the victim is neither the actor nor the tx sender.
    let r = n.schedule(1, hostile, h, b"", Some(victim), None, None);
    failed(&r, ErrorKind::InvalidInput, "must be the actor itself");
    assert_eq!(
        store::by_fee_payer(&n.chain.store().state(), &victim, 10)
            .unwrap()
            .len(),
        0
    );
}

#[test]
fn cip5_4_2_fee_payer_may_be_the_tx_sender_deployer_funded() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let sender = n.b[2].address();
    let h = n.height() + 3;
    let r = n.schedule(2, actor, h, b"", Some(sender), Some(200_000), None);
    let id = timer_id_of(&r);
    let timer = n.timer(&id).unwrap();
    assert_eq!(timer.fee_payer, sender);
    assert!(timer.deposit > 0, "the consenting sender lent the deposit");
    let before = n.balance(&sender);
    let receipts = n.mine_to(h).pop().unwrap();
    let fired = events_named(&receipts, "TimerFired");
    let cost = int(field(fired[0], "cost")) as u128;
    assert!(cost > 0);
    assert_eq!(
        n.balance(&sender),
        before - cost + timer.deposit,
        "the sender paid the fire, net of refund, and got its deposit back"
    );
}

#[test]
fn cip5_4_2_gas_limit_at_most_max_cycles_per_fire() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 10;
    let max = TimerConfig::default().max_cycles_per_fire;
    assert!(n
        .schedule(0, actor, h, b"", None, Some(max), None)
        .is_success());
    failed(
        &n.schedule(0, actor, h, b"", None, Some(max + 1), None),
        ErrorKind::InvalidInput,
        "exceeds max_cycles_per_fire",
    );
    failed(
        &n.schedule(0, actor, h, b"", None, Some(0), None),
        ErrorKind::InvalidInput,
        "at least 1",
    );
}

#[test]
fn cip5_4_2_expires_at_within_max_ttl() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let current = n.height() + 1;
    let ttl = TimerConfig::default().max_ttl_blocks;
    assert!(n
        .schedule(0, actor, current + 1, b"", None, None, Some(current + ttl))
        .is_success());
    let r = n.schedule(
        0,
        actor,
        current + 2,
        b"",
        None,
        None,
        Some(current + 1 + ttl + 1),
    );
    failed(&r, ErrorKind::InvalidInput, "beyond current height");
    let r = n.schedule(0, actor, current + 10, b"", None, None, Some(current + 5));
    failed(&r, ErrorKind::InvalidInput, "could never fire");
}

#[test]
fn cip5_4_2_per_actor_cap() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            max_timers_per_actor: 3,
            ..Default::default()
        })
    });
    let h = n.height() + 10;
    let r = n.call(
        0,
        actor,
        "schedule_many",
        vec![Value::int(3), Value::int(h)],
    );
    assert!(r.is_success(), "{:?}", r.error);
    failed(
        &n.schedule(0, actor, h, b"x", None, None, None),
        ErrorKind::InvalidInput,
        "already holds 3 live timers, the maximum is 3",
    );
    // Freed slots can be reused: cancel one, schedule again.
    let first = store::by_actor(&n.chain.store().state(), &actor, 1).unwrap()[0].timer_id;
    assert!(n
        .call(0, actor, "cancel", vec![Value::Bytes(first.0.to_vec())])
        .is_success());
    assert!(n.schedule(0, actor, h, b"x", None, None, None).is_success());
}

#[test]
fn cip5_4_2_cancel_by_another_actor_is_unauthorized() {
    let mut n = Net::new();
    let owner = n.deploy(0, DEPOSITS);
    let other = n.deploy(1, DEPOSITS);
    let h = n.height() + 5;
    let id = timer_id_of(&n.schedule(0, owner, h, b"", None, None, None));
    let r = n.call(1, other, "cancel", vec![Value::Bytes(id.0.to_vec())]);
    failed(&r, ErrorKind::Unauthorized, "unauthorized");
    let r = n.call(
        1,
        other,
        "extend",
        vec![Value::Bytes(id.0.to_vec()), Value::int(h + 10)],
    );
    failed(&r, ErrorKind::Unauthorized, "unauthorized");
    assert!(n.timer(&id).is_some(), "the timer survives");
    failed(
        &n.call(0, owner, "cancel", vec![Value::Bytes([9; 32].to_vec())]),
        ErrorKind::NotFound,
        "no timer",
    );
}

#[test]
fn cip5_4_2_extend_by_owner_is_clamped_to_max_ttl() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 5;
    let id = timer_id_of(&n.schedule(0, actor, h, b"", None, None, Some(h)));
    let current = n.height() + 1;
    let r = n.call(
        0,
        actor,
        "extend",
        vec![Value::Bytes(id.0.to_vec()), Value::int(u64::MAX / 2)],
    );
    assert!(r.is_success(), "{:?}", r.error);
    let ttl = TimerConfig::default().max_ttl_blocks;
    assert_eq!(n.timer(&id).unwrap().expires_at, current + ttl);
    assert_eq!(r.events[0].name, "timer.extended");
    assert_eq!(
        int(field(&r.events[0], "expires_at")),
        (current + ttl) as i128
    );
    let r = n.call(
        0,
        actor,
        "extend",
        vec![Value::Bytes(id.0.to_vec()), Value::int(current)],
    );
    failed(
        &r,
        ErrorKind::InvalidInput,
        "is not after the current height",
    );
}

// ---- §4.3 side effects ------------------------------------------------------------

#[test]
fn cip5_4_3_a_reverted_execution_leaves_no_timer() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 3;
    let r = n.call(
        0,
        actor,
        "schedule_then_fail",
        vec![Value::int(h), Value::Bytes(vec![1])],
    );
    failed(&r, ErrorKind::Revert, "failing after scheduling");
    assert!(
        r.events.is_empty(),
        "TimerScheduled is dropped with the revert"
    );
    let state = n.chain.store().state();
    assert_eq!(store::live_count(&state, &actor).unwrap(), 0);
    assert!(store::by_height(&state, h, 10).unwrap().is_empty());
    assert_eq!(
        n.chain.account(&actor).unwrap().schedule_nonce,
        0,
        "the schedule nonce is reverted too"
    );
}

// ---- §5 delivery -------------------------------------------------------------------

#[test]
fn cip5_5_1_fires_at_its_height_in_fifo_order_and_is_removed() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 4;
    let ids: Vec<Hash> = (0..3u8)
        .map(|i| timer_id_of(&n.schedule(0, actor, h, &[i], None, Some(10_000), None)))
        .collect();
    let blocks = n.mine_to(h);
    for early in &blocks[..blocks.len() - 1] {
        assert!(
            events_named(early, "TimerFired").is_empty(),
            "nothing fires before its height"
        );
    }
    let last = blocks.last().unwrap();
    let fired = fired_ids(last);
    assert_eq!(fired, ids, "FIFO within the height");
    for id in &ids {
        assert!(n.timer(id).is_none(), "one-shot: removed after firing");
    }
    assert_eq!(n.storage_int(&actor, "fires"), Some(3));
    assert_eq!(n.storage_int(&actor, "last_fire"), Some(h as i128));
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        0
    );
}

#[test]
fn cip5_3_2_cancelling_inside_index_chunks_keeps_the_rest_in_fifo_order() {
    // 40 timers span three 16-entry chunks of each index; cancelling every
    // third rewrites chunks in the middle of the queue.
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 60;
    let ids: Vec<Hash> = (0..40u8)
        .map(|i| timer_id_of(&n.schedule(0, actor, h, &[i], None, Some(10_000), None)))
        .collect();
    for id in ids.iter().skip(1).step_by(3) {
        let r = n.call(0, actor, "cancel", vec![Value::Bytes(id.0.to_vec())]);
        assert!(r.is_success(), "{:?}", r.error);
    }
    let kept: Vec<Hash> = ids
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 1)
        .map(|(_, id)| *id)
        .collect();
    let state = n.chain.store().state();
    let listed = |timers: Vec<timerhost_types::Timer>| -> Vec<Hash> {
        timers.into_iter().map(|t| t.timer_id).collect()
    };
    assert_eq!(listed(store::by_height(&state, h, 100).unwrap()), kept);
    assert_eq!(listed(store::by_actor(&state, &actor, 100).unwrap()), kept);
    assert_eq!(
        listed(store::by_fee_payer(&state, &actor, 100).unwrap()),
        kept
    );
    assert_eq!(
        store::live_count(&state, &actor).unwrap() as usize,
        kept.len()
    );
    let receipts: Vec<Receipt> = n.mine_to(h).into_iter().flatten().collect();
    assert_eq!(fired_ids(&receipts), kept, "FIFO of what is left");
    let state = n.chain.store().state();
    assert!(store::by_actor(&state, &actor, 100).unwrap().is_empty());
    assert!(store::by_height(&state, h, 100).unwrap().is_empty());
    assert_eq!(store::live_count(&state, &actor).unwrap(), 0);
}

#[test]
fn cip5_5_2_deferred_transaction_fields() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let payer = n.b[3].address();
    let h = n.height() + 3;
    let id = timer_id_of(&n.schedule(3, actor, h, b"pay", Some(payer), Some(5_000), None));
    let receipts = n.mine_to(h).pop().unwrap();
    let fire = receipts
        .iter()
        .find(|r| matches!(r.source, TxSource::Deferred { .. }))
        .unwrap();
    // §9 (state-triggered CIP): the delivery's number, its fire number and
    // deliver_id = H(height, parent_state_root, timer_id, fire_seq).
    let parent_root = n
        .chain
        .store()
        .block(h - 1)
        .unwrap()
        .unwrap()
        .header
        .state_root;
    assert_eq!(
        fire.source,
        TxSource::Deferred {
            origin_tx_hash: Hash::ZERO,
            fee_payer: payer,
            delivery: Some(timerhost_types::Delivery {
                deliver_seq: 0,
                fire_seq: 1,
                deliver_id: timerhost_types::Delivery::id(h, &parent_root, &id, 1),
            }),
        }
    );
    assert_eq!(
        fire.sender, actor,
        "sender = the actor (handler execution identity)"
    );
    assert!(
        fire.cycles_used <= 5_000 + TIMER_FIRE_BASE_CYCLES,
        "cycles limit = gas_limit_per_fire, plus the fire's base charge"
    );
    assert_eq!(fire.tip, 0);
    // A gas limit below what the handler needs: out of cycles, charged in full.
    let h2 = n.height() + 3;
    n.schedule(0, actor, h2, b"", None, Some(50), None);
    let receipts = n.mine_to(h2).pop().unwrap();
    let fire = receipts
        .iter()
        .find(|r| matches!(r.source, TxSource::Deferred { .. }))
        .unwrap();
    assert_eq!(fire.error.as_ref().unwrap().kind, ErrorKind::OutOfCycles);
    assert_eq!(fire.cycles_used, 50 + TIMER_FIRE_BASE_CYCLES);
}

#[test]
fn cip5_5_3_same_block_prohibition_for_handlers() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    n.set(0, actor, "interval", Value::int(0)); // handler reschedules at the current height
    let h = n.height() + 3;
    let id = timer_id_of(&n.schedule(0, actor, h, b"", None, None, None));
    let receipts = n.mine_to(h).pop().unwrap();
    let fire = receipts
        .iter()
        .find(|r| matches!(r.source, TxSource::Deferred { .. }))
        .unwrap();
    failed(fire, ErrorKind::InvalidInput, "is not in the future");
    assert!(n.timer(&id).is_none());
    assert_eq!(
        n.storage_int(&actor, "fires"),
        None,
        "the failed fire wrote nothing"
    );
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        0,
        "and scheduled nothing"
    );
}

#[test]
fn cip5_5_4_path1_fire_charges_actual_cost_and_refunds_the_rest() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 3;
    let id = timer_id_of(&n.schedule(0, actor, h, b"x", None, Some(100_000), None));
    let deposit = n.timer(&id).unwrap().deposit;
    n.mine_to(h - 1);
    let basefee = n.chain.basefee_config().unwrap();
    let cfg = TimerConfig::default();
    let before = n.balance(&actor);
    let receipts = n.mine_to(h).pop().unwrap();
    let fire = receipts
        .iter()
        .find(|r| matches!(r.source, TxSource::Deferred { .. }))
        .unwrap();
    let e = events_named(&receipts, "TimerFired")[0];
    let max_cost = (100_000 + TIMER_FIRE_BASE_CYCLES as u128) * basefee.cycle_basefee
        + cfg.max_cells_per_fire as u128 * basefee.cell_basefee;
    let cost = fire.cycles_used as u128 * basefee.cycle_basefee
        + fire.cells_used as u128 * basefee.cell_basefee;
    assert_eq!(int(field(e, "cost")) as u128, cost);
    assert_eq!(int(field(e, "refund")) as u128, max_cost - cost);
    assert_eq!(int(field(e, "cycles_used")) as u64, fire.cycles_used);
    assert_eq!(field(e, "success"), &Value::Bool(true));
    assert_eq!(field(e, "error"), &Value::None);
    assert_eq!(
        (fire.fee_paid, fire.burned),
        (cost, cost),
        "basefee only, all burned"
    );
    assert_eq!(
        n.balance(&actor),
        before - cost + deposit,
        "pre-charge max_cost, refund max_cost − cost, and the deposit back"
    );
}

#[test]
fn cip5_5_4_path1_reverting_handler_still_pays_and_writes_nothing() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 3;
    let id = timer_id_of(&n.schedule(
        0,
        actor,
        h,
        br#"{"_handler": "boom", "_payload": ""}"#,
        None,
        None,
        None,
    ));
    let deposit = n.timer(&id).unwrap().deposit;
    let before = n.balance(&actor);
    let receipts = n.mine_to(h).pop().unwrap();
    let fire = receipts
        .iter()
        .find(|r| matches!(r.source, TxSource::Deferred { .. }))
        .unwrap();
    failed(fire, ErrorKind::Revert, "boom");
    assert!(fire.fee_paid > 0);
    assert_eq!(n.balance(&actor), before - fire.fee_paid + deposit);
    use timerhost_state::StateRead;
    assert_eq!(
        n.chain
            .store()
            .state()
            .get(&keys::storage(&actor, b"boom"))
            .unwrap(),
        None
    );
    assert!(n.timer(&id).is_none(), "the timer is gone");
    let e = events_named(&receipts, "TimerFired")[0];
    assert_eq!(field(e, "success"), &Value::Bool(false));
    assert!(matches!(field(e, "error"), Value::Str(s) if s.contains("revert")));
}

#[test]
fn cip5_5_4_path2_insufficient_funds_self_destructs_without_executing() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS); // the actor pays and has little: its deposits
    let h = n.height() + 3;
    let id = timer_id_of(&n.schedule(0, actor, h, b"", None, Some(1_000), None));
    n.mine_to(h - 1);
    let basefee = n.chain.basefee_config().unwrap();
    let receipts = n.mine_to(h).pop().unwrap();
    assert!(
        receipts
            .iter()
            .all(|r| !matches!(r.source, TxSource::Deferred { .. })),
        "no handler runs"
    );
    let e = events_named(&receipts, "TimerCancelledInsufficientFunds");
    assert_eq!(e.len(), 1);
    let required = (1_000 + TIMER_FIRE_BASE_CYCLES as u128) * basefee.cycle_basefee
        + TimerConfig::default().max_cells_per_fire as u128 * basefee.cell_basefee;
    assert_eq!(int(field(e[0], "required")) as u128, required);
    assert_eq!(
        int(field(e[0], "available")) as u128,
        DEPOSITS,
        "its balance with the deposit the removal returns"
    );
    assert_eq!(n.balance(&actor), DEPOSITS, "the deposit came back");
    assert_eq!(field(e[0], "fee_payer"), &Value::str(actor.to_hex()));
    assert!(n.timer(&id).is_none());
    assert_eq!(n.storage_int(&actor, "fires"), None);
}

#[test]
fn cip5_5_4_path3_ttl_expiry_removes_without_executing() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    // A lane that holds one fire: the second timer carries over to h+1, past its expiry.
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            lane_cycles_per_block: 10_000 + TIMER_FIRE_BASE_CYCLES,
            max_cycles_per_fire: 10_000,
            ..Default::default()
        })
    });
    let h = n.height() + 3;
    let first = timer_id_of(&n.schedule(0, actor, h, b"a", None, Some(10_000), Some(h)));
    let second = timer_id_of(&n.schedule(0, actor, h, b"b", None, Some(10_000), Some(h)));
    let at_h = n.mine_to(h).pop().unwrap();
    assert_eq!(events_named(&at_h, "TimerFired").len(), 1);
    assert!(n.timer(&first).is_none());
    assert!(n.timer(&second).is_some(), "carried over");
    let next = n.block(vec![]);
    let e = events_named(&next, "TimerExpired");
    assert_eq!(e.len(), 1);
    assert_eq!(field(e[0], "timer_id"), &Value::Bytes(second.0.to_vec()));
    assert_eq!(int(field(e[0], "expires_at")), h as i128);
    assert_eq!(int(field(e[0], "current_height")), h as i128 + 1);
    assert!(n.timer(&second).is_none());
    assert_eq!(n.storage_int(&actor, "fires"), Some(1));
}

#[test]
fn cip5_5_4_explicit_cancel_by_the_owner() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 4;
    let id = timer_id_of(&n.schedule(0, actor, h, b"", None, None, None));
    let r = n.call(0, actor, "cancel", vec![Value::Bytes(id.0.to_vec())]);
    assert!(r.is_success());
    assert_eq!(r.events[0].name, "TimerCancelled");
    assert_eq!(field(&r.events[0], "actor"), &Value::str(actor.to_hex()));
    let receipts: Vec<Receipt> = n.mine_to(h + 1).into_iter().flatten().collect();
    assert!(
        events_named(&receipts, "TimerFired").is_empty(),
        "a cancelled timer never fires"
    );
}

// ---- §5.4 / §6.4 governance -------------------------------------------------------

#[test]
fn cip5_5_4_governance_cancel_is_idempotent_and_gated() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 6;
    let id = timer_id_of(&n.schedule(1, actor, h, b"", None, None, None));
    let deposit = n.timer(&id).unwrap().deposit;
    let payer_before = n.balance(&actor);
    let r = n.governance(|g| g.cancel_timer(id));
    assert!(r.is_success());
    assert_eq!(r.events[0].name, "timer.cancelled_by_governance");
    assert_eq!(r.events[0].emitter, timerhost_types::GOVERNANCE_ADDRESS);
    assert!(n.timer(&id).is_none());
    assert_eq!(
        n.balance(&actor),
        payer_before + deposit,
        "the deposit comes back; no pre-charge is outstanding between blocks"
    );
    // Again: a successful no-op.
    let r = n.governance(|g| g.cancel_timer(id));
    assert!(r.is_success());
    assert!(r.events.is_empty());
    // Anyone else: rejected before inclusion.
    let tx = n.b[4].cancel_timer(id);
    let err = n.chain.check_tx(&tx).unwrap_err().to_string();
    assert!(err.contains("not in system_deployers"), "{err}");
}

#[test]
fn cip5_5_4_governance_extend_is_clamped() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 6;
    let id = timer_id_of(&n.schedule(0, actor, h, b"", None, None, Some(h)));
    let current = n.height() + 1;
    let r = n.governance(|g| g.extend_timer(id, u64::MAX));
    assert!(r.is_success(), "{:?}", r.error);
    let ttl = TimerConfig::default().max_ttl_blocks;
    assert_eq!(n.timer(&id).unwrap().expires_at, current + ttl);
    assert_eq!(r.events[0].name, "timer.extended_by_governance");
    assert_eq!(
        int(field(&r.events[0], "expires_at")),
        (current + ttl) as i128
    );
    let r = n.governance(|g| g.extend_timer(Hash([1; 32]), h));
    failed(&r, ErrorKind::NotFound, "no timer");
}

#[test]
fn cip5_6_4_timer_config_defaults_in_state_and_governed_updates_apply_next_block() {
    let mut n = Net::new();
    assert_eq!(
        timerhost_chain::accounts::timer_config(&n.chain.store().state()).unwrap(),
        TimerConfig::default()
    );
    let bad = TimerConfig {
        max_cycles_per_fire: 0,
        ..Default::default()
    };
    let tx = n.b[0].update_timer_config(bad);
    let err = n.chain.check_tx(&tx).unwrap_err().to_string();
    assert!(
        err.contains("max_cycles_per_fire") && err.contains("greater than 0"),
        "{err}"
    );
    n.b[0].nonce -= 1;
    let actor = n.deploy(1, DEPOSITS);
    // In the update's own block the old config still applies to host calls.
    let new = TimerConfig {
        max_cycles_per_fire: 1_000,
        ..Default::default()
    };
    let h = n.height() + 5;
    let gov = n.b[0].update_timer_config(new.clone());
    let sched = n.b[1].call(
        actor,
        "schedule",
        vec![
            Value::int(h),
            Value::Bytes(vec![]),
            Value::None,
            Value::int(5_000),
            Value::None,
        ],
        0,
    );
    let receipts = n.block(vec![gov, sched]);
    assert_eq!(receipts[0].events[0].name, "timer_config.updated");
    assert_eq!(
        int(field(&receipts[0].events[0], "max_cycles_per_fire")),
        1_000
    );
    assert!(
        receipts[1].is_success(),
        "same block: old max applies ({:?})",
        receipts[1].error
    );
    // From the next block on, the new one.
    let r = n.call(
        1,
        actor,
        "schedule",
        vec![
            Value::int(h),
            Value::Bytes(vec![]),
            Value::None,
            Value::int(5_000),
            Value::None,
        ],
    );
    failed(
        &r,
        ErrorKind::InvalidInput,
        "exceeds max_cycles_per_fire 1000",
    );
}

// ---- §6.1 costs ------------------------------------------------------------------------

#[test]
fn cip5_6_1_host_call_costs_are_charged_to_the_caller() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 5;
    let r_empty = n.schedule(0, actor, h, b"", None, None, None);
    let r_big = n.schedule(0, actor, h, &[1u8; 1000], None, None, None);
    let base = timerhost_types::TX_BASE_CYCLES + timerhost_chain::testing::MOCK_CALL_CYCLES;
    assert_eq!(
        r_empty.cycles_used,
        base + timerhost_types::timer::SET_TIMER_BASE_CYCLES
    );
    assert_eq!(
        r_big.cycles_used, r_empty.cycles_used,
        "payload costs cells, not cycles"
    );
    // 1000 payload cells from the host call, plus the 1000 bytes in the tx itself.
    assert_eq!(r_big.cells_used - r_empty.cells_used, 2_000);
    // Bug 2: scheduling pays a cell for every byte it adds to state — the
    // record and its index entries — plus the accounts it rewrites (the
    // actor's schedule counter and balance, the deposit escrow), not only
    // the payload.
    let state = n.chain.store().state();
    let timer = store::get(&state, &timer_id_of(&r_empty)).unwrap().unwrap();
    let state_bytes = store::state_bytes(&timer);
    assert!(state_bytes > 200, "record + 3 index entries: {state_bytes}");
    // The same call's encoding (a clone of the builder: nonces are fixed-width).
    let args = vec![
        Value::int(h),
        Value::Bytes(vec![]),
        Value::None,
        Value::None,
        Value::None,
    ];
    let tx_len = n.b[0]
        .clone()
        .call(actor, "schedule", args, 0)
        .to_bytes()
        .len();
    let schedule_cells = r_empty.cells_used - timerhost_chain::validation::intrinsic(tx_len).1;
    assert_eq!(
        schedule_cells,
        state_bytes + 2 * timerhost_types::timer::ACCOUNT_WRITE_CELLS,
        "the empty timer's cells are its state bytes and two account rewrites"
    );
    assert_eq!(
        timer.deposit,
        u128::from(state_bytes) * TimerConfig::default().deposit_per_byte,
        "the deposit is deposit_per_byte × the same bytes"
    );
    // #29: cancel and extend pay for the caller's own record's bytes (one
    // cycle per 16), which they decode, hash (and rewrite).
    let record_cycles = |n: &Net, id: &timerhost_types::Hash| {
        let state = n.chain.store().state();
        let record = store::get_record(&state, id).unwrap().unwrap();
        let bytes = timerhost_types::encoding::encode(&record).len() as u64;
        assert_eq!(
            timerhost_timers::host::record_cycles(bytes),
            bytes / timerhost_timers::host::RECORD_BYTES_PER_CYCLE
        );
        bytes / 16
    };
    let id = timer_id_of(&r_empty);
    let own = record_cycles(&n, &id);
    assert!((10..20).contains(&own), "an empty timer's record: {own}");
    let r = n.call(0, actor, "cancel", vec![Value::Bytes(id.0.to_vec())]);
    assert_eq!(
        r.cycles_used,
        base + timerhost_types::timer::CANCEL_TIMER_CYCLES + own
    );
    let id = timer_id_of(&r_big);
    let own = record_cycles(&n, &id);
    assert!(own > 1_000 / 16, "a 1,000-byte payload's record: {own}");
    let r = n.call(
        0,
        actor,
        "extend",
        vec![Value::Bytes(id.0.to_vec()), Value::int(h + 1)],
    );
    assert_eq!(
        r.cycles_used,
        base + timerhost_types::timer::EXTEND_TIMER_CYCLES + own
    );
}

// ---- §6.5 budgets, §8 attacks -----------------------------------------------------

#[test]
fn cip5_6_5_timer_storm_of_10000_at_one_height_fifo_over_several_blocks() {
    let mut n = Net::new();
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            max_timers_per_actor: 10_000,
            // 1,000 fires of 1,000 cycles (+ the fire base) per block
            lane_cycles_per_block: 1_000 * (1_000 + TIMER_FIRE_BASE_CYCLES),
            max_cycles_per_fire: 1_000,
            ..Default::default()
        })
    });
    let actor = n.deploy(0, 10u128.pow(23));
    // 10,000 schedules pay the cells of every byte they add to state.
    n.b[0].cells_limit = 8_000_000;
    let h = n.height() + 3;
    let r = n.call(
        0,
        actor,
        "schedule_many",
        vec![Value::int(10_000), Value::int(h), Value::int(1_000)],
    );
    assert!(r.is_success(), "{:?}", r.error);
    let mut seen = Vec::new();
    let mut blocks_with_fires = 0;
    n.mine_to(h - 1);
    while seen.len() < 10_000 {
        let receipts = n.block(vec![]);
        let fired = events_named(&receipts, "TimerFired");
        assert!(
            fired.len() <= 1_000,
            "the lane admits at most 1,000 per block"
        );
        if !fired.is_empty() {
            blocks_with_fires += 1;
        }
        for r in receipts
            .iter()
            .filter(|r| matches!(r.source, TxSource::Deferred { .. }))
        {
            assert!(r.is_success(), "{:?}", r.error);
        }
        for e in fired {
            seen.push(id_field(e));
        }
        assert!(blocks_with_fires <= 10, "storm should clear in 10 blocks");
    }
    assert_eq!(blocks_with_fires, 10);
    let expected: Vec<Hash> = (0..10_000u64)
        .map(|i| timerhost_types::timer_id(&actor, h, &i.to_be_bytes(), i))
        .collect();
    assert_eq!(
        seen, expected,
        "exact FIFO, nothing lost, nothing fired twice"
    );
    assert_eq!(n.storage_int(&actor, "fires"), Some(10_000));
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        0
    );
}

#[test]
fn cip5_6_5_carried_over_timers_fire_before_timers_natively_due() {
    let mut n = Net::new();
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            // Three fires of 1,000 cycles (+ the fire base) per block.
            lane_cycles_per_block: 3 * (1_000 + TIMER_FIRE_BASE_CYCLES),
            max_cycles_per_fire: 1_000,
            ..Default::default()
        })
    });
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 10;
    let early: Vec<Hash> = (0..5u8)
        .map(|i| timer_id_of(&n.schedule(0, actor, h, &[i], None, Some(1_000), None)))
        .collect();
    let late: Vec<Hash> = (0..2u8)
        .map(|i| timer_id_of(&n.schedule(0, actor, h + 1, &[i], None, Some(1_000), None)))
        .collect();
    let ids = fired_ids;
    let at_h = n.mine_to(h).pop().unwrap();
    assert_eq!(ids(&at_h), early[..3]);
    let at_h1 = n.block(vec![]);
    assert_eq!(
        ids(&at_h1),
        vec![early[3], early[4], late[0]],
        "carry-over first, then the natively due"
    );
    assert_eq!(ids(&n.block(vec![])), vec![late[1]]);
}

#[test]
fn cip5_6_5_outage_gc_budget_clears_dead_timers_while_live_timers_keep_firing() {
    let mut n = Net::new();
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            max_timers_per_actor: 2_000,
            gc_cycles_per_block: 100_000, // 100 removals (and 1,000 deferrals) per block
            ..Default::default()
        })
    });
    // Lends 1,000 deposits (~3.2e8) but can never pay a fire (max_cost ≈
    // 5.5e8, deposits back included): every fire is unfunded.
    let dead = n.deploy(0, 400_000_000);
    let live = n.deploy(1, 10u128.pow(22));
    n.set(1, live, "interval", Value::int(1)); // a heartbeat every block
    let h = n.height() + 3;
    assert!(n
        .call(
            0,
            dead,
            "schedule_many",
            vec![Value::int(1_000), Value::int(h), Value::int(1_000)]
        )
        .is_success());
    // The heartbeat is queued behind all 1,000 dead timers.
    assert!(n
        .schedule(1, live, h, b"", None, Some(10_000), None)
        .is_success());
    n.mine_to(h - 1);
    let mut removed = 0;
    for i in 0..10 {
        let receipts = n.block(vec![]);
        let unfunded = events_named(&receipts, "TimerCancelledInsufficientFunds").len();
        assert!(unfunded <= 100, "GC budget respected");
        removed += unfunded;
        assert_eq!(
            events_named(&receipts, "TimerFired").len(),
            1,
            "the heartbeat fired in block {i} of the outage"
        );
        // The operators' query: nothing due is left queued; the GC backlog
        // holds exactly the dead timers not yet removed.
        let counts =
            timerhost_timers::queue::due_count(&n.chain.store().state(), n.height(), 0, 10_000)
                .unwrap();
        assert_eq!(
            counts,
            (0, 1_000 - removed),
            "after block {i} of the outage"
        );
    }
    assert_eq!(
        removed, 1_000,
        "the GC budget cleared the whole storm over ten blocks"
    );
    assert_eq!(
        store::live_count(&n.chain.store().state(), &dead).unwrap(),
        0
    );
    assert_eq!(n.storage_int(&live, "fires"), Some(10));
}

#[test]
fn cip5_8_unbounded_free_execution_ends_when_the_payer_runs_dry() {
    let mut n = Net::new();
    let actor = n.deploy(0, 0);
    n.set(0, actor, "interval", Value::int(2));
    // Let the basefee settle at its floor so that max_cost is the same at every fire.
    n.mine_to(30);
    let basefee = n.chain.basefee_config().unwrap();
    assert_eq!(basefee.cycle_basefee, basefee.min_cycle_basefee);
    let cfg = TimerConfig::default();
    let gas = 10_000u64;
    let max_cost = (gas + TIMER_FIRE_BASE_CYCLES) as u128 * basefee.cycle_basefee
        + cfg.max_cells_per_fire as u128 * basefee.cell_basefee;
    // Enough for exactly one fire, and room to lend one timer deposit at a
    // time (a fire's timer returns its deposit before the handler schedules
    // the next): after paying its actual cost, the balance cannot cover the
    // next fire.
    const DEPOSIT_ROOM: u128 = 400_000;
    let fund = n.b[2].transfer(actor, max_cost + DEPOSIT_ROOM);
    n.block(vec![fund]);
    let h = n.height() + 2;
    n.schedule(0, actor, h, b"", None, Some(gas), None);
    let receipts: Vec<Receipt> = n.mine_to(h + 10).into_iter().flatten().collect();
    assert_eq!(events_named(&receipts, "TimerFired").len(), 1);
    let destructs = events_named(&receipts, "TimerCancelledInsufficientFunds");
    assert_eq!(destructs.len(), 1, "the loop ends with one self-destruct");
    // The handler re-scheduled with protocol defaults (gas = max_cycles_per_fire).
    let next_cost = (cfg.max_cycles_per_fire + TIMER_FIRE_BASE_CYCLES) as u128
        * basefee.cycle_basefee
        + cfg.max_cells_per_fire as u128 * basefee.cell_basefee;
    assert_eq!(int(field(destructs[0], "required")) as u128, next_cost);
    assert!((int(field(destructs[0], "available")) as u128) < max_cost + DEPOSIT_ROOM);
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        0
    );
    assert_eq!(n.storage_int(&actor, "fires"), Some(1));
}

// ---- #14: every byte paid, every fire bounded, every payer in control ------------

/// Bug 3: a fixed base charge per fire (reserved from the lane) and
/// `max_fires_per_block` bound how many near-free fires a block admits; both
/// carry the rest over in FIFO order.
#[test]
fn bug3_fire_quota_and_base_charge_bound_cheap_fires_in_fifo_order() {
    let mut n = Net::new();
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            max_fires_per_block: 5,
            ..Default::default()
        })
    });
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 3;
    assert!(n
        .call(
            0,
            actor,
            "schedule_many",
            vec![Value::int(12), Value::int(h), Value::int(1)]
        )
        .is_success());
    let expected: Vec<Hash> = (0..12u64)
        .map(|i| timerhost_types::timer_id(&actor, h, &i.to_be_bytes(), i))
        .collect();
    let mut seen = Vec::new();
    let mut per_block = Vec::new();
    n.mine_to(h - 1);
    while seen.len() < 12 {
        let receipts = n.block(vec![]);
        for r in receipts
            .iter()
            .filter(|r| matches!(r.source, TxSource::Deferred { .. }))
        {
            assert!(
                r.cycles_used > TIMER_FIRE_BASE_CYCLES,
                "every fire pays the base charge: {}",
                r.cycles_used
            );
        }
        let ids = fired_ids(&receipts);
        per_block.push(ids.len());
        seen.extend(ids);
    }
    assert_eq!(per_block, [5, 5, 2], "max_fires_per_block, then carry-over");
    assert_eq!(seen, expected, "FIFO across the carry-over");

    // The base charge is reserved from the lane: a lane of three
    // gas-limit-1 fires admits three, whatever the quota.
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            lane_cycles_per_block: 3 * (1 + TIMER_FIRE_BASE_CYCLES),
            max_cycles_per_fire: 1,
            ..Default::default()
        })
    });
    let h = n.height() + 3;
    assert!(n
        .call(
            0,
            actor,
            "schedule_many",
            vec![Value::int(7), Value::int(h), Value::int(1)]
        )
        .is_success());
    n.mine_to(h - 1);
    let counts: Vec<usize> = (0..3).map(|_| fired_ids(&n.block(vec![])).len()).collect();
    assert_eq!(counts, [3, 3, 1]);
}

/// Bug 6: extend — by the owner or by governance — refuses an `expires_at`
/// below the firing height (the timer could never fire), like scheduling.
#[test]
fn bug6_extend_refuses_an_expiry_before_the_firing_height() {
    let mut n = Net::new();
    let actor = n.deploy(0, DEPOSITS);
    let h = n.height() + 10;
    let id = timer_id_of(&n.schedule(0, actor, h, b"", None, None, None));
    let r = n.call(
        0,
        actor,
        "extend",
        vec![Value::Bytes(id.0.to_vec()), Value::int(h - 5)],
    );
    failed(&r, ErrorKind::InvalidInput, "extend_timer: expires_at");
    failed(&r, ErrorKind::InvalidInput, "before the firing height");
    let r = n.governance(|g| g.extend_timer(id, h - 5));
    failed(&r, ErrorKind::InvalidInput, "ExtendTimer: expires_at");
    assert_eq!(
        n.timer(&id).unwrap().expires_at,
        n.timer(&id).unwrap().expires_at
    );
    assert!(n.timer(&id).unwrap().expires_at >= h, "unchanged");
    // At the firing height itself: allowed.
    assert!(n
        .call(
            0,
            actor,
            "extend",
            vec![Value::Bytes(id.0.to_vec()), Value::int(h)]
        )
        .is_success());
    assert_eq!(n.timer(&id).unwrap().expires_at, h);
}

/// Bug 6: governance `CancelTimer` on a timer already classified and waiting
/// in the GC backlog is the spec's no-op, and the timer's own removal event
/// still appears when the GC reaches it.
#[test]
fn bug6_governance_cancel_of_a_backlogged_timer_is_a_noop_and_its_event_still_appears() {
    let mut n = Net::new();
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            gc_cycles_per_block: 1_000, // one removal, ten deferrals per block
            ..Default::default()
        })
    });
    let actor = n.deploy(0, DEPOSITS); // can lend deposits, cannot pay a fire
    let h = n.height() + 6;
    let ids: Vec<Hash> = (0..3u8)
        .map(|i| timer_id_of(&n.schedule(0, actor, h, &[i], None, None, None)))
        .collect();
    let at_h = n.mine_to(h).pop().unwrap();
    assert_eq!(
        events_named(&at_h, "TimerCancelledInsufficientFunds").len(),
        1
    );
    let backlog = timerhost_timers::queue::backlog(&n.chain.store().state(), 10).unwrap();
    assert_eq!(backlog.len(), 2);
    let r = n.governance(|g| g.cancel_timer(ids[2]));
    assert!(r.is_success());
    assert!(r.events.is_empty(), "a no-op: {:?}", r.events);
    // That same block's GC removed ids[1]; the next removes ids[2] with its event.
    let next = n.block(vec![]);
    let removed: Vec<Hash> = events_named(&next, "TimerCancelledInsufficientFunds")
        .into_iter()
        .map(id_field)
        .collect();
    assert_eq!(removed, [ids[2]]);
    assert!(n.timer(&ids[2]).is_none());
}

/// Bug 6: GC cycles are protocol work nobody pays for; a block whose only
/// work is garbage collection moves the basefee like an empty block.
#[test]
fn bug6_gc_cycles_do_not_move_the_basefee() {
    let mut n = Net::new();
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            max_timers_per_actor: 2_000,
            ..Default::default()
        })
    });
    // A small block target (2,000,000 cycles), so that 100 removals (100,000
    // GC cycles) would visibly move the basefee if they counted.
    let small = timerhost_types::BasefeeConfig {
        max_block_cycles: 4_000_000,
        ..n.chain.basefee_config().unwrap()
    };
    n.governance(|g| g.update_basefee(small));
    for b in &mut n.b {
        b.cycles_limit = 3_000_000;
    }
    // Lends 100 deposits (~3.2e7); a fire costs ≥ 5.5e7 even at the floor basefee.
    let dead = n.deploy(0, 40_000_000);
    let h = n.height() + 3;
    assert!(n
        .call(
            0,
            dead,
            "schedule_many",
            vec![Value::int(100), Value::int(h), Value::int(1_000)]
        )
        .is_success());
    n.mine_to(h - 1);
    let before = n.chain.basefee_config().unwrap();
    let receipts = n.block(vec![]);
    assert_eq!(
        events_named(&receipts, "TimerCancelledInsufficientFunds").len(),
        100
    );
    let eob = receipts
        .iter()
        .find(|r| r.source == TxSource::EndOfBlock)
        .unwrap();
    assert_eq!(eob.cycles_used, 100_000, "the GC work is reported");
    assert_ne!(
        before.next(0, 0),
        before.next(100_000, 0),
        "the test can tell"
    );
    assert_eq!(
        n.chain.basefee_config().unwrap(),
        before.next(0, 0),
        "but prices like an empty block"
    );
}

/// Deposits (CAD018): taken from the fee payer that consented, refused with
/// a clear error when it cannot cover them, refunded in full by every way a
/// timer leaves; the escrow always holds exactly the live timers' deposits
/// (checked after every block by `Net::block`).
#[test]
fn deposits_are_lent_by_the_payer_and_refunded_by_every_removal() {
    let mut n = Net::new();
    // Refused: the payer cannot cover the deposit; nothing is left behind.
    let poor = n.deploy(0, 1_000);
    let h = n.height() + 5;
    let r = n.schedule(0, poor, h, b"", None, None, None);
    failed(
        &r,
        ErrorKind::InvalidInput,
        "cannot cover the timer's deposit",
    );
    assert_eq!(
        store::live_count(&n.chain.store().state(), &poor).unwrap(),
        0
    );
    assert_eq!(n.balance(&poor), 1_000);

    // A signer who consents to pay lends the deposit; the actor lends nothing.
    let actor = n.deploy(0, 0);
    let signer = n.b[2].address();
    let before = n.balance(&signer);
    let r = n.schedule(2, actor, h, b"", Some(signer), None, None);
    let id = timer_id_of(&r);
    let deposit = n.timer(&id).unwrap().deposit;
    assert_eq!(n.balance(&signer), before - r.fee_paid - deposit);
    let scheduled = &events_named(std::slice::from_ref(&r), "TimerScheduled")[0];
    assert_eq!(int(field(scheduled, "deposit")) as u128, deposit);
    assert_eq!(n.balance(&actor), 0);
    // The actor cancels it: the deposit goes back to the signer, who is
    // where it would be without the timer, less the fees.
    let r2 = n.call(0, actor, "cancel", vec![Value::Bytes(id.0.to_vec())]);
    assert!(r2.is_success(), "{:?}", r2.error);
    assert_eq!(n.balance(&signer), before - r.fee_paid);
    assert_eq!(field(&r2.events[0], "reason"), &Value::str("actor"));
}

/// Payer revocation (CAD018's account-takeover guard): the signer revokes
/// every timer that bills it; they are removed unexecuted and unbilled at
/// their next classification with their deposits refunded; timers scheduled
/// after the revocation, and timers billing others, are unaffected.
#[test]
fn revoke_timer_payments_removes_the_payers_timers_unexecuted_and_unbilled() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let payer = n.b[2].address();
    let h = n.height() + 12;
    let revoked: Vec<Hash> = (0..2u8)
        .map(|i| timer_id_of(&n.schedule(2, actor, h, &[i], Some(payer), None, None)))
        .collect();
    let own = timer_id_of(&n.schedule(0, actor, h, b"own", None, None, None));
    // A stranger's revocation touches only its own timers.
    let tx = n.b[4].revoke_timer_payments();
    let r = n.block(vec![tx]).remove(0);
    assert!(r.is_success());
    // The payer's own revocation.
    let tx = n.b[2].revoke_timer_payments();
    let r = n.block(vec![tx]).remove(0);
    assert!(r.is_success(), "{:?}", r.error);
    assert_eq!(r.events[0].name, "TimerPaymentsRevoked");
    assert_eq!(
        field(&r.events[0], "fee_payer"),
        &Value::str(payer.to_hex())
    );
    let later = timer_id_of(&n.schedule(2, actor, h, b"later", Some(payer), None, None));
    let deposits: u128 = revoked.iter().map(|id| n.timer(id).unwrap().deposit).sum();
    let later_deposit = n.timer(&later).unwrap().deposit;
    n.mine_to(h - 1);
    let before = n.balance(&payer);
    let at_h = n.mine_to(h).pop().unwrap();
    let gone: Vec<Hash> = events_named(&at_h, "TimerCancelledPaymentRevoked")
        .into_iter()
        .map(|e| {
            assert_eq!(field(e, "fee_payer"), &Value::str(payer.to_hex()));
            id_field(e)
        })
        .collect();
    assert_eq!(gone, revoked);
    assert_eq!(
        fired_ids(&at_h),
        [own, later],
        "the rest fire, in FIFO order"
    );
    let later_cost = at_h
        .iter()
        .find(|r| matches!(r.source, TxSource::Deferred { fee_payer, .. } if fee_payer == payer))
        .unwrap()
        .fee_paid;
    assert_eq!(
        n.balance(&payer),
        before + deposits + later_deposit - later_cost,
        "revoked timers cost the payer nothing and return their deposits"
    );
    assert_eq!(n.storage_int(&actor, "fires"), Some(2));
}

/// `pvm_host.revoke_timer_payments()`: an actor revokes the timers it pays for.
#[test]
fn an_actor_revokes_the_timers_it_pays_for() {
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    let h = n.height() + 4;
    let id = timer_id_of(&n.schedule(0, actor, h, b"", None, None, None));
    let r = n.call(0, actor, "revoke", vec![]);
    assert!(r.is_success(), "{:?}", r.error);
    let at_h = n.mine_to(h).pop().unwrap();
    assert_eq!(
        events_named(&at_h, "TimerCancelledPaymentRevoked")
            .into_iter()
            .map(id_field)
            .collect::<Vec<_>>(),
        [id]
    );
    assert!(fired_ids(&at_h).is_empty());
}

fn gov_refused_to_strangers(n: &mut Net, instruction: timerhost_types::SystemInstruction) {
    let tx = n.b[4].system(instruction);
    let err = n.chain.check_tx(&tx).unwrap_err().to_string();
    assert!(err.contains("not in system_deployers"), "{err}");
}

/// Pause (AIP-125): nothing fires or is classified and scheduling is refused;
/// due timers wait in order and fire after `ResumeTimers`.
#[test]
fn pause_holds_due_timers_in_order_and_resume_fires_them() {
    use timerhost_types::SystemInstruction as S;
    let mut n = Net::new();
    let actor = n.deploy(0, 10u128.pow(21));
    gov_refused_to_strangers(&mut n, S::PauseTimers);
    gov_refused_to_strangers(&mut n, S::ResumeTimers);
    let h = n.height() + 4;
    let ids: Vec<Hash> = (0..3u8)
        .map(|i| timer_id_of(&n.schedule(0, actor, h, &[i], None, None, None)))
        .collect();
    let r = n.governance(|g| g.system(S::PauseTimers));
    assert_eq!(r.events[0].name, "TimersPaused");
    let r = n.schedule(0, actor, h + 5, b"", None, None, None);
    failed(
        &r,
        ErrorKind::InvalidInput,
        "timers are paused by governance",
    );
    let paused: Vec<Receipt> = n.mine_to(h + 3).into_iter().flatten().collect();
    assert!(fired_ids(&paused).is_empty());
    assert!(ids.iter().all(|id| n.timer(id).is_some()), "waiting");
    let r = n.governance(|g| g.system(S::ResumeTimers));
    assert_eq!(r.events[0].name, "TimersResumed");
    // Resumed in the block that carried the instruction: they fired at its end.
    assert_eq!(fired_ids(std::slice::from_ref(&r)), Vec::<Hash>::new());
    let resumed = n.chain.store().receipts(n.height()).unwrap();
    assert_eq!(fired_ids(&resumed), ids, "in FIFO order");
    assert!(n
        .schedule(0, actor, n.height() + 2, b"", None, None, None)
        .is_success());
}

/// Shutdown (AIP-125): every pending timer, due or not, is removed over the
/// following blocks under the GC budget with its deposit refunded and
/// `TimerCancelled {reason: "shutdown"}`, then `TimersShutdown {complete:
/// true}`; scheduling stays refused until `ResumeTimers`.
#[test]
fn shutdown_removes_every_timer_refunds_deposits_then_completes() {
    use timerhost_types::SystemInstruction as S;
    let mut n = Net::new();
    gov_refused_to_strangers(&mut n, S::ShutdownTimers);
    n.governance(|g| {
        g.update_timer_config(TimerConfig {
            gc_cycles_per_block: 2_000, // two removals per block
            ..Default::default()
        })
    });
    let actor = n.deploy(0, 10u128.pow(21));
    let base = n.height();
    let ids: Vec<Hash> = (0..5u64)
        .map(|i| timer_id_of(&n.schedule(0, actor, base + 20 + i, b"", None, None, None)))
        .collect();
    let lent: u128 = ids.iter().map(|id| n.timer(id).unwrap().deposit).sum();
    let before = n.balance(&actor);
    let r = n.governance(|g| g.system(S::ShutdownTimers));
    assert_eq!(r.events[0].name, "TimersShutdown");
    assert_eq!(field(&r.events[0], "complete"), &Value::Bool(false));
    let first = n.chain.store().receipts(n.height()).unwrap();
    let mut cancelled: Vec<Hash> = events_named(&first, "TimerCancelled")
        .into_iter()
        .map(|e| {
            assert_eq!(field(e, "reason"), &Value::str("shutdown"));
            id_field(e)
        })
        .collect();
    assert_eq!(cancelled.len(), 2, "under the GC budget");
    let r = n.schedule(0, actor, n.height() + 30, b"", None, None, None);
    failed(
        &r,
        ErrorKind::InvalidInput,
        "timers are shutting_down by governance",
    );
    let receipts = n.chain.store().receipts(n.height()).unwrap();
    cancelled.extend(
        events_named(&receipts, "TimerCancelled")
            .into_iter()
            .map(id_field),
    );
    let mut completed = Vec::new();
    for _ in 0..3 {
        let receipts = n.block(vec![]);
        cancelled.extend(
            events_named(&receipts, "TimerCancelled")
                .into_iter()
                .map(id_field),
        );
        completed.extend(
            events_named(&receipts, "TimersShutdown")
                .into_iter()
                .map(|e| field(e, "complete").clone()),
        );
    }
    assert_eq!(cancelled, ids, "queue order");
    assert_eq!(completed, [Value::Bool(true)]);
    assert_eq!(
        store::live_count(&n.chain.store().state(), &actor).unwrap(),
        0
    );
    assert_eq!(
        n.balance(&actor),
        before + lent,
        "every deposit came back to the actor that lent it"
    );
    let r = n.schedule(0, actor, n.height() + 30, b"", None, None, None);
    failed(
        &r,
        ErrorKind::InvalidInput,
        "timers are shutdown by governance",
    );
    n.governance(|g| g.system(S::ResumeTimers));
    assert!(n
        .schedule(0, actor, n.height() + 3, b"", None, None, None)
        .is_success());
}

/// #46: a new chain starts under `located-fire-hashes` (the dev genesis
/// names it), so a fire's hash names its block and receipt and its receipt
/// is found without a transaction-index entry; a chain whose genesis names
/// no upgrade keeps the old hash and its index entry; a genesis naming an
/// upgrade this binary does not know does not open.
#[test]
fn a_fires_hash_names_its_receipt_on_a_chain_under_located_fire_hashes() {
    use timerhost_types::located::names_place;

    let fire_of = |n: &mut Net| {
        let actor = n.deploy(0, 10u128.pow(21));
        let due = n.height() + 2;
        n.schedule(0, actor, due, b"p", None, None, None);
        let blocks = n.mine_to(due);
        let receipts = blocks.last().unwrap().clone();
        let index = receipts
            .iter()
            .position(|r| {
                matches!(
                    r.source,
                    TxSource::Deferred {
                        delivery: Some(_),
                        ..
                    }
                )
            })
            .expect("the timer fired");
        (receipts[index].tx_hash, index as u32)
    };

    let mut located = Net::new();
    let (hash, index) = fire_of(&mut located);
    let height = located.height();
    assert!(
        names_place(&hash, height, index),
        "{hash} at {height}/{index}"
    );
    let (loc, receipt) = located.chain.store().receipt(&hash).unwrap().unwrap();
    assert_eq!(
        (loc.height, loc.index, receipt.tx_hash),
        (height, index, hash)
    );

    let mut genesis = timerhost_types::Genesis::dev();
    genesis.upgrades.clear();
    let mut plain = Net::with_genesis(genesis);
    let (hash, index) = fire_of(&mut plain);
    let height = plain.height();
    assert!(!names_place(&hash, height, index));
    let (loc, _) = plain.chain.store().receipt(&hash).unwrap().unwrap();
    assert_eq!(
        (loc.height, loc.index),
        (height, index),
        "found through its index entry"
    );

    let mut genesis = timerhost_types::Genesis::dev();
    genesis.upgrades.push("warp-drive".into());
    let refused = match Chain::open(
        MemoryBackend::new(),
        genesis,
        std::sync::Arc::new(timerhost_chain::testing::MockRuntime),
        std::sync::Arc::new(timerhost_chain::NoHooks),
    ) {
        Ok(_) => panic!("an unknown upgrade at genesis is refused"),
        Err(e) => e.to_string(),
    };
    assert!(
        refused.contains("warp-drive") && refused.contains("does not know"),
        "{refused}"
    );
}
