//! The block pipeline end to end on an in-memory chain: fee arithmetic to the
//! unit, reverts that leave no trace, deployments, governance, basefee
//! adjustment, end-of-block hooks with deferred transactions, and supply
//! conservation after every block.

use std::sync::Arc;

use timerhost_chain::testing::{dev_builders, dev_chain, total_balances, MockRuntime};
use timerhost_chain::{BlockHooks, Chain, DeferredTx, EobContext, Result};
use timerhost_state::{MemoryBackend, StateRead};
use timerhost_types::keys;
use timerhost_types::{
    Address, BasefeeConfig, ErrorKind, Event, Genesis, Hash, Receipt, ReceiptStatus, TxSource,
    Value,
};

/// The dev genesis timestamp, in unix ms (block timestamps are ms).
const T: u64 = 1_767_225_600_000;
const PROPOSER: Address = Address([0xee; 20]);

/// total supply = genesis supply − burned, after every block.
fn assert_conserved(chain: &Chain<MemoryBackend>) {
    let state = chain.store().state();
    let supply = timerhost_chain::accounts::supply(&state).unwrap();
    let total = total_balances(&state).unwrap();
    assert_eq!(
        total,
        supply.genesis_supply - supply.burned,
        "supply not conserved"
    );
}

#[test]
fn transfer_charges_exact_fees_and_pays_the_proposer() {
    let chain = dev_chain();
    let mut alice = dev_builders().remove(0);
    let bob = Address([0xb0; 20]);
    let before = chain.account(&alice.address()).unwrap().balance;
    let basefee = chain.basefee_config().unwrap();
    let tx = alice.transfer(bob, 12345);
    let size = tx.to_bytes().len() as u64;
    let block = chain
        .produce_block(&[tx], T + 1, PROPOSER)
        .unwrap()
        .executed;
    let r = &block.receipts[0];
    assert_eq!(r.status, ReceiptStatus::Success);
    assert_eq!(r.cycles_used, timerhost_types::TX_BASE_CYCLES);
    assert_eq!(r.cells_used, size);
    let burned =
        r.cycles_used as u128 * basefee.cycle_basefee + r.cells_used as u128 * basefee.cell_basefee;
    let tip = r.cycles_used as u128 * alice.priority_fee_per_cycle;
    assert_eq!((r.burned, r.tip, r.fee_paid), (burned, tip, burned + tip));
    assert_eq!(
        chain.account(&alice.address()).unwrap().balance,
        before - 12345 - burned - tip
    );
    assert_eq!(chain.account(&alice.address()).unwrap().nonce, 1);
    assert_eq!(chain.account(&bob).unwrap().balance, 12345);
    assert_eq!(chain.account(&PROPOSER).unwrap().balance, tip);
    assert_conserved(&chain);
}

#[test]
fn failed_call_reverts_its_writes_but_pays_for_what_it_used() {
    let chain = dev_chain();
    let mut alice = dev_builders().remove(0);
    let deploy = alice.deploy("mock", vec![Value::int(7)], 1_000);
    let receipts = chain
        .produce_block(&[deploy], T + 1, PROPOSER)
        .unwrap()
        .executed
        .receipts;
    let actor = receipts[0].created_actor.expect("deployed");
    assert_eq!(actor, timerhost_types::actor_address(&alice.address(), 0));
    assert_eq!(chain.account(&actor).unwrap().balance, 1_000);
    let state = chain.store().state();
    assert_eq!(
        state.get(&keys::storage(&actor, b"init")).unwrap(),
        Some(Value::int(7).to_bytes())
    );

    let before = chain.account(&alice.address()).unwrap().balance;
    let fail = alice.call(actor, "fail", vec![Value::str("k"), Value::int(1)], 500);
    let r = chain
        .produce_block(&[fail], T + 2, PROPOSER)
        .unwrap()
        .executed
        .receipts
        .remove(0);
    assert_eq!(r.status, ReceiptStatus::Failed);
    let err = r.error.as_ref().unwrap();
    assert_eq!(err.kind, ErrorKind::Revert);
    assert!(err.message.contains("asked to fail"));
    assert!(r.events.is_empty());
    // No write, no value moved; fees for the cycles used were still charged.
    assert_eq!(
        chain
            .store()
            .state()
            .get(&keys::storage(&actor, b"k"))
            .unwrap(),
        None
    );
    assert_eq!(chain.account(&actor).unwrap().balance, 1_000);
    assert!(r.fee_paid > 0);
    assert_eq!(
        chain.account(&alice.address()).unwrap().balance,
        before - r.fee_paid
    );
    assert_conserved(&chain);
}

#[test]
fn out_of_cycles_is_an_outcome_charged_in_full() {
    let chain = dev_chain();
    let mut alice = dev_builders().remove(0);
    let actor = chain
        .produce_block(&[alice.deploy("mock", vec![], 0)], T + 1, PROPOSER)
        .unwrap()
        .executed
        .receipts[0]
        .created_actor
        .unwrap();
    alice.cycles_limit = 50_000;
    let tx = alice.call(actor, "burn", vec![Value::int(10_000_000)], 0);
    let r = chain
        .produce_block(&[tx], T + 2, PROPOSER)
        .unwrap()
        .executed
        .receipts
        .remove(0);
    assert_eq!(r.error.unwrap().kind, ErrorKind::OutOfCycles);
    assert_eq!(r.cycles_used, 50_000, "all cycles are consumed");
    assert_conserved(&chain);
}

#[test]
fn calling_a_non_actor_fails_with_not_found() {
    let chain = dev_chain();
    let mut alice = dev_builders().remove(0);
    let r = chain
        .produce_block(
            &[alice.call(Address([5; 20]), "x", vec![], 10)],
            T + 1,
            PROPOSER,
        )
        .unwrap()
        .executed
        .receipts
        .remove(0);
    assert_eq!(r.error.unwrap().kind, ErrorKind::NotFound);
    assert_eq!(
        chain.account(&Address([5; 20])).unwrap().balance,
        0,
        "value not moved"
    );
    assert_conserved(&chain);
}

#[test]
fn several_transactions_in_one_block_see_each_other() {
    let chain = dev_chain();
    let mut b = dev_builders();
    let actor = timerhost_types::actor_address(&b[0].address(), 0);
    let txs = vec![
        b[0].deploy("mock", vec![], 0),
        b[1].call(actor, "set", vec![Value::str("a"), Value::int(1)], 0),
        b[0].call(actor, "get", vec![Value::str("a")], 0),
        b[2].call(actor, "emit", vec![Value::str("Hello"), Value::int(3)], 0),
    ];
    let block = chain.produce_block(&txs, T + 1, PROPOSER).unwrap().executed;
    assert!(block.receipts.iter().all(Receipt::is_success));
    assert_eq!(block.receipts[2].return_value, Some(Value::int(1)));
    assert_eq!(
        block.receipts[3].events,
        vec![Event {
            emitter: actor,
            name: "Hello".into(),
            data: Value::int(3)
        }]
    );
    let events = chain
        .store()
        .events(&timerhost_state::EventFilter {
            name: Some("Hello".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].height, 1);
    let (loc, receipt) = chain
        .store()
        .receipt(&block.receipts[1].tx_hash)
        .unwrap()
        .unwrap();
    assert_eq!((loc.height, loc.index), (1, 1));
    assert_eq!(receipt, block.receipts[1]);
}

#[test]
fn basefee_follows_utilisation_and_governance_applies_next_block() {
    let chain = dev_chain();
    let start = chain.basefee_config().unwrap();
    // An empty block is below target: basefee drops by 12.5 %.
    chain.produce_block(&[], T + 1, PROPOSER).unwrap();
    let after_empty = chain.basefee_config().unwrap();
    assert_eq!(
        after_empty.cycle_basefee,
        start.cycle_basefee - start.cycle_basefee / 8
    );

    let mut gov = dev_builders().remove(0);
    let wanted = BasefeeConfig {
        cycle_basefee: 5_000,
        min_cycle_basefee: 5_000,
        ..BasefeeConfig::default()
    };
    gov.max_fee_per_cycle = 100_000;
    let block = chain
        .produce_block(&[gov.update_basefee(wanted.clone())], T + 2, PROPOSER)
        .unwrap()
        .executed;
    // The update's own block was charged at the old basefee…
    assert_eq!(block.receipts[0].burned % after_empty.cycle_basefee, 0);
    assert_eq!(block.receipts[0].events[0].name, "basefee_config.updated");
    assert_eq!(
        block.receipts[0].events[0].emitter,
        timerhost_types::GOVERNANCE_ADDRESS
    );
    // …and the new config is in force from the next block.
    assert_eq!(chain.basefee_config().unwrap(), wanted);
    chain.produce_block(&[], T + 3, PROPOSER).unwrap();
    assert_eq!(
        chain.basefee_config().unwrap().cycle_basefee,
        5_000,
        "floor holds"
    );
}

#[test]
fn timestamps_must_increase() {
    let chain = dev_chain();
    let err = chain
        .produce_block(&[], T, PROPOSER)
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not after its parent's"), "{err}");
}

/// A block from elsewhere is accepted only if its timestamp is at most the
/// allowed drift ahead of the accepting node's clock; the same block is
/// accepted once the clock catches up (execution itself never reads it).
#[test]
fn a_peers_block_from_too_far_in_the_future_is_refused() {
    let proposer = dev_chain();
    let follower = dev_chain();
    let block = proposer
        .propose(&[], T + 60_000, PROPOSER)
        .unwrap()
        .executed
        .block;
    let drift = timerhost_chain::DEFAULT_MAX_FUTURE_DRIFT_MS;
    let early = T + 60_000 - drift - 1;
    let err = follower
        .accept(&block, early, drift)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("15001 ms ahead of this node's clock") && err.contains("at most 15000 ms"),
        "{err}"
    );
    let executed = follower.accept(&block, early + 1, drift).unwrap();
    assert_eq!(executed.block.header, block.header);
}

/// A hook that, at every block, pre-charges dev account 1 and schedules a
/// deferred `set` on a fixed actor, then tags the receipt with an event.
struct PingHook {
    actor: Address,
    payer: Address,
}

impl BlockHooks for PingHook {
    fn end_of_block(&self, ctx: &mut EobContext<'_, '_>) -> Result<Vec<DeferredTx>> {
        if !timerhost_chain::accounts::load(ctx.state, &self.actor)?.is_actor {
            return Ok(Vec::new());
        }
        let (cycles, cells) = (10_000u64, 1_000u64);
        let prepaid =
            cycles as u128 * ctx.basefee.cycle_basefee + cells as u128 * ctx.basefee.cell_basefee;
        assert_eq!(
            timerhost_chain::accounts::debit(ctx.state, &self.payer, prepaid)?,
            timerhost_chain::accounts::Debit::Done
        );
        ctx.events.push(Event {
            emitter: self.actor,
            name: "Precharged".into(),
            data: Value::int(prepaid),
        });
        Ok(vec![DeferredTx {
            origin_tx_hash: Hash::ZERO,
            sender: self.actor,
            fee_payer: self.payer,
            actor: self.actor,
            handler: "set".into(),
            args: vec![Value::str("height"), Value::int(ctx.env.height)],
            cycles_limit: cycles,
            base_cycles: 0,
            cells_limit: cells,
            invocation: timerhost_types::Invocation::Transaction,
            cycle_basefee: ctx.basefee.cycle_basefee,
            cell_basefee: ctx.basefee.cell_basefee,
            lane: Default::default(),
            prepaid,
            tag: b"ping".to_vec(),
            delivery: None,
            escrow_key: None,
        }])
    }

    fn after_deferred(
        &self,
        ctx: &mut EobContext<'_, '_>,
        _tx: &DeferredTx,
        receipt: &Receipt,
    ) -> Result<()> {
        ctx.events.push(Event {
            emitter: self.actor,
            name: "Fired".into(),
            data: Value::Bool(receipt.is_success()),
        });
        Ok(())
    }
}

#[test]
fn end_of_block_hook_runs_deferred_transactions_with_refunds() {
    let builders = dev_builders();
    let actor = timerhost_types::actor_address(&builders[0].address(), 0);
    let payer = builders[1].address();
    let chain = Chain::open(
        MemoryBackend::new(),
        Genesis::dev(),
        Arc::new(MockRuntime),
        Arc::new(PingHook { actor, payer }),
    )
    .unwrap();
    let mut alice = builders[0].clone();
    chain
        .produce_block(&[alice.deploy("mock", vec![], 0)], T + 1, PROPOSER)
        .unwrap();
    let payer_before = chain.account(&payer).unwrap().balance;
    let basefee = chain.basefee_config().unwrap();
    let block = chain.produce_block(&[], T + 2, PROPOSER).unwrap().executed;
    // End-of-block receipt (hook events) first, then the deferred receipt.
    assert_eq!(block.receipts.len(), 2);
    assert_eq!(block.receipts[0].source, TxSource::EndOfBlock);
    assert_eq!(block.receipts[0].events[0].name, "Precharged");
    let fired = &block.receipts[1];
    assert_eq!(
        fired.source,
        TxSource::Deferred {
            origin_tx_hash: Hash::ZERO,
            fee_payer: payer,
            delivery: None,
        }
    );
    assert!(fired.is_success());
    assert_eq!(fired.sender, actor);
    assert_eq!(fired.events.last().unwrap().name, "Fired");
    assert_eq!(
        fired.tip, 0,
        "timer-style deferred transactions pay basefee only"
    );
    let cost = fired.cycles_used as u128 * basefee.cycle_basefee
        + fired.cells_used as u128 * basefee.cell_basefee;
    assert_eq!(fired.fee_paid, cost);
    assert_eq!(
        chain.account(&payer).unwrap().balance,
        payer_before - cost,
        "pre-charge minus refund"
    );
    let stored = chain
        .store()
        .state()
        .get(&keys::storage(&actor, b"height"))
        .unwrap();
    assert_eq!(stored, Some(Value::int(2).to_bytes()));
    // Deferred usage counts toward the block.
    assert_eq!(block.block.header.cycles_used, fired.cycles_used);
    assert_conserved(&chain);
    // Strict re-execution on a second node agrees on everything.
    let other = Chain::open(
        MemoryBackend::new(),
        Genesis::dev(),
        Arc::new(MockRuntime),
        Arc::new(PingHook { actor, payer }),
    )
    .unwrap();
    for h in 1..=2 {
        let b = chain.store().block(h).unwrap().unwrap();
        let e = other.execute(&b).unwrap();
        other.commit(&e).unwrap();
    }
    assert_eq!(other.head().unwrap(), chain.head().unwrap());
}

#[test]
fn conservation_over_many_mixed_blocks() {
    let chain = dev_chain();
    let mut b = dev_builders();
    let actor = timerhost_types::actor_address(&b[0].address(), 0);
    chain
        .produce_block(&[b[0].deploy("mock", vec![], 5_000)], T + 1, PROPOSER)
        .unwrap();
    for i in 0..30u64 {
        let txs = vec![
            b[1].transfer(Address([i as u8 + 1; 20]), 1_000 + i as u128),
            b[2].call(
                actor,
                "set",
                vec![Value::str(format!("k{i}")), Value::int(i)],
                10,
            ),
            b[3].call(actor, "fail", vec![Value::str("x")], 10),
            b[4].call(
                actor,
                "send",
                vec![Value::Bytes(vec![9; 20]), Value::int(7)],
                0,
            ),
        ];
        chain.produce_block(&txs, T + 2 + i, PROPOSER).unwrap();
        assert_conserved(&chain);
    }
    assert_eq!(chain.head().unwrap().height, 31);
    chain.replay(|_| {}).unwrap();
}
