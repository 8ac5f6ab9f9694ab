//! Determinism: two independent stores (sled on disk and in-memory) fed the
//! same 1,000 random valid blocks agree on every state root; changing one
//! byte of one transaction changes the root; replay verifies every root and
//! names the first height that disagrees.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use timerhost_chain::testing::{dev_builders, MockRuntime, TxBuilder};
use timerhost_chain::{Chain, ChainError, NoHooks};
use timerhost_state::{KvBackend, MemoryBackend, SledBackend, WriteBatch};
use timerhost_types::{actor_address, encoding, Address, Genesis, SignedTransaction, Value};

/// The dev genesis timestamp, in unix ms (block timestamps are ms).
const T: u64 = 1_767_225_600_000;

fn memory_chain() -> Chain<MemoryBackend> {
    Chain::open(
        MemoryBackend::new(),
        Genesis::dev(),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap()
}

/// Random but valid transactions for one block.
fn random_block(
    rng: &mut ChaCha20Rng,
    builders: &mut [TxBuilder],
    actors: &mut Vec<Address>,
) -> Vec<SignedTransaction> {
    let n = rng.gen_range(0..6);
    let mut txs = Vec::new();
    let mut used = [false; 10];
    for _ in 0..n {
        let i = rng.gen_range(0..builders.len());
        if used[i] {
            continue; // one tx per sender per block keeps nonces trivially valid
        }
        used[i] = true;
        let b = &mut builders[i];
        let tx = match rng.gen_range(0..10) {
            0 => {
                actors.push(actor_address(&b.address(), b.nonce));
                b.deploy(
                    "mock",
                    vec![Value::int(rng.gen_range(0..100))],
                    rng.gen_range(0..1000),
                )
            }
            1..=4 if !actors.is_empty() => {
                let actor = actors[rng.gen_range(0..actors.len())];
                let handler = ["set", "fail", "get", "emit", "burn", "send"][rng.gen_range(0..6)];
                let args = match handler {
                    "burn" => vec![Value::int(rng.gen_range(0..2_000_000u64))],
                    "send" => vec![
                        Value::Bytes(vec![rng.gen(); 20]),
                        Value::int(rng.gen_range(0..50)),
                    ],
                    _ => vec![
                        Value::str(format!("k{}", rng.gen_range(0..20))),
                        Value::int(rng.gen::<i64>()),
                    ],
                };
                b.call(actor, handler, args, rng.gen_range(0..100))
            }
            _ => {
                let mut to = [0u8; 20];
                rng.fill(&mut to);
                to[0] |= 0x80; // never the zero address or the system band
                b.transfer(Address(to), rng.gen_range(1..10u128.pow(18)))
            }
        };
        txs.push(tx);
    }
    txs
}

#[test]
fn thousand_random_blocks_same_roots_on_sled_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let sled = Chain::open(
        SledBackend::open(dir.path()).unwrap(),
        Genesis::dev(),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let memory = memory_chain();
    assert_eq!(sled.head().unwrap(), memory.head().unwrap());
    let mut rng = ChaCha20Rng::seed_from_u64(0x7133);
    let mut builders = dev_builders();
    let mut actors = Vec::new();
    let mut roots = std::collections::BTreeSet::new();
    for height in 1..=1_000u64 {
        let txs = random_block(&mut rng, &mut builders, &mut actors);
        let proposer = Address([(height % 7) as u8 + 0x20; 20]);
        let proposed = sled.produce_block(&txs, T + height * 2, proposer).unwrap();
        assert!(
            proposed.rejected.is_empty(),
            "generator made an invalid tx at {height}: {:?}",
            proposed.rejected
        );
        // The second store re-executes the proposed block strictly.
        let executed = memory.execute(&proposed.executed.block).unwrap();
        assert_eq!(
            executed.block.header, proposed.executed.block.header,
            "header differs at height {height}"
        );
        assert_eq!(
            executed.receipts, proposed.executed.receipts,
            "receipts differ at height {height}"
        );
        memory.commit(&executed).unwrap();
        roots.insert(proposed.executed.block.header.state_root);
    }
    assert_eq!(
        roots.len(),
        1_000,
        "every block changes the root (head metadata at least)"
    );
    assert_eq!(
        sled.head().unwrap().state_root,
        memory.head().unwrap().state_root
    );
    assert_eq!(sled.replay(|_| {}).unwrap(), 1_000);
}

#[test]
fn one_changed_byte_changes_the_root() {
    let run = |amount: u128| {
        let chain = memory_chain();
        let mut b = dev_builders();
        for h in 1..=5u64 {
            let amt = if h == 3 { amount } else { 10 };
            chain
                .produce_block(
                    &[b[0].transfer(Address([0x99; 20]), amt)],
                    T + h,
                    Address([1; 20]),
                )
                .unwrap();
        }
        (1..=5)
            .map(|h| chain.store().block(h).unwrap().unwrap().header.state_root)
            .collect::<Vec<_>>()
    };
    let a = run(10);
    let b = run(11); // one byte of one transaction's amount differs (re-signed)
    assert_eq!(a[..2], b[..2], "blocks before the change agree");
    assert!(
        a[2..].iter().zip(&b[2..]).all(|(x, y)| x != y),
        "every root from the changed block on differs"
    );
    assert_eq!(run(10), a, "and the same input gives the same roots again");
}

#[test]
fn replay_names_the_first_mismatching_height() {
    let chain = memory_chain();
    let mut b = dev_builders();
    for h in 1..=6u64 {
        chain
            .produce_block(
                &[b[1].transfer(Address([0x42; 20]), h as u128)],
                T + h,
                Address([1; 20]),
            )
            .unwrap();
    }
    let mut seen = Vec::new();
    assert_eq!(chain.replay(|p| seen.push(p.height)).unwrap(), 6);
    assert_eq!(seen, vec![0, 1, 2, 3, 4, 5, 6]);

    // Corrupt the state root recorded in block 4.
    let mut block = chain.store().block(4).unwrap().unwrap();
    block.header.state_root.0[0] ^= 1;
    let mut batch = WriteBatch::new();
    let mut key = vec![b'B'];
    key.extend_from_slice(&4u64.to_be_bytes());
    batch.put(key, encoding::encode(&block));
    chain.store().backend().write(batch).unwrap();
    match chain.replay(|_| {}) {
        Err(ChainError::ReplayMismatch {
            height,
            stored,
            computed,
        }) => {
            assert_eq!(height, 4);
            assert_eq!(stored, block.header.state_root);
            assert_ne!(stored, computed);
        }
        other => panic!("expected a mismatch at height 4, got {other:?}"),
    }
}

#[test]
fn reopening_with_a_different_genesis_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(
        Chain::open(
            SledBackend::open(dir.path()).unwrap(),
            Genesis::dev(),
            Arc::new(MockRuntime),
            Arc::new(NoHooks),
        )
        .unwrap(),
    );
    let mut other = Genesis::dev();
    other.genesis_timestamp += 1;
    let err = Chain::open(
        SledBackend::open(dir.path()).unwrap(),
        other,
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("does not match the database"),
        "{err}"
    );
}

/// Dev snapshot/revert: after reverting, the store is byte-for-byte what it
/// was, and replaying the same blocks gives the same roots again — on sled
/// and in memory.
fn snapshot_revert_roundtrip<B: KvBackend>(chain: &Chain<B>) {
    let mut rng = ChaCha20Rng::seed_from_u64(0x5a9);
    let mut builders = dev_builders();
    let mut actors = Vec::new();
    for height in 1..=5u64 {
        let txs = random_block(&mut rng, &mut builders, &mut actors);
        chain
            .produce_block(&txs, T + height, Address([1; 20]))
            .unwrap();
    }
    let snapshot = chain.snapshot().unwrap();
    let head = chain.head().unwrap();
    let mut first_run = Vec::new();
    for height in 6..=25u64 {
        let txs = random_block(&mut rng, &mut builders, &mut actors);
        let p = chain
            .produce_block(&txs, T + height, Address([1; 20]))
            .unwrap();
        first_run.push((txs, p.executed.block.header));
    }
    assert_eq!(chain.head().unwrap().height, 25);
    chain.revert(&snapshot).unwrap();
    assert_eq!(chain.head().unwrap(), head);
    assert_eq!(
        chain.snapshot().unwrap(),
        snapshot,
        "store differs after revert"
    );
    assert!(
        chain.store().block(6).unwrap().is_none(),
        "later blocks forgotten"
    );
    for (txs, header) in first_run {
        let p = chain
            .produce_block(&txs, header.timestamp_ms, Address([1; 20]))
            .unwrap();
        assert_eq!(p.executed.block.header, header, "replayed block differs");
    }
    assert_eq!(chain.replay(|_| {}).unwrap(), 25);
}

#[test]
fn snapshot_and_revert_restore_the_store_exactly_in_memory() {
    snapshot_revert_roundtrip(&memory_chain());
}

#[test]
fn snapshot_and_revert_restore_the_store_exactly_on_sled() {
    let dir = tempfile::tempdir().unwrap();
    let chain = Chain::open(
        SledBackend::open(dir.path()).unwrap(),
        Genesis::dev(),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    snapshot_revert_roundtrip(&chain);
}

/// Timers of all three kinds — height timers scheduled at many heights,
/// cancelled, extended and carried over (a small per-block fire quota),
/// time timers due at the start of later blocks, and state watches woken by
/// user writes and by end-of-block fires — on sled: a second store
/// re-executing the blocks agrees on every root, and replay from genesis
/// reproduces them.
#[test]
fn replay_over_the_timer_layout_reproduces_every_root() {
    replay_over_timers(timerhost_types::TimerOrdering::Fifo);
}

/// The same blocks under priority ordering (#18): every due timer and watch
/// hit goes through the Globalbox, timers bid, and a small fire quota keeps
/// the Globalbox non-empty across blocks.
#[test]
fn replay_over_priority_blocks_reproduces_every_root() {
    replay_over_timers(timerhost_types::TimerOrdering::Priority);
}

/// The same blocks under market ordering (#31): the lane basefee moves
/// with every block's fires, fairness counters change with every fire, and
/// entries wait and come back as the basefee passes their caps.
#[test]
fn replay_over_market_blocks_reproduces_every_root() {
    replay_over_timers(timerhost_types::TimerOrdering::Market);
}

fn replay_over_timers(ordering: timerhost_types::TimerOrdering) {
    let mut genesis = Genesis::dev();
    genesis.timers.max_fires_per_block = 25;
    genesis.timers.ordering = ordering;
    genesis.timers.max_fires_per_target = 20;
    let dir = tempfile::tempdir().unwrap();
    let sled = Chain::open(
        SledBackend::open(dir.path()).unwrap(),
        genesis.clone(),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let memory = Chain::open(
        MemoryBackend::new(),
        genesis,
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut b = dev_builders();
    let mut rng = ChaCha20Rng::seed_from_u64(0x16);
    let actor = actor_address(&b[0].address(), b[0].nonce);
    let produce = |txs: &[SignedTransaction], height: u64| {
        let proposed = sled
            .produce_block(txs, T + height * 2, Address([1; 20]))
            .unwrap();
        assert!(proposed.rejected.is_empty(), "{:?}", proposed.rejected);
        let executed = memory.execute(&proposed.executed.block).unwrap();
        assert_eq!(
            executed.block.header, proposed.executed.block.header,
            "at {height}"
        );
        memory.commit(&executed).unwrap();
        proposed.executed.receipts
    };
    produce(&[b[0].deploy("mock", vec![], 10u128.pow(22))], 1);
    // Watches: one on user-written keys, one on what every fire writes
    // (so it wakes itself, at most once per block, from the next block on).
    let watch = |keys: &[&str]| Value::List(keys.iter().map(|k| Value::str(*k)).collect());
    let mut ids: Vec<Vec<u8>> = Vec::new();
    for height in 2..=40u64 {
        let mut txs = Vec::new();
        if height == 2 {
            txs.push(b[3].call(
                actor,
                "watch",
                vec![watch(&["k1", "k2*"]), Value::int(500)],
                0,
            ));
            txs.push(b[4].call(actor, "watch", vec![watch(&["fires"]), Value::int(500)], 0));
        }
        // A batch of 1–30 timers (small and large buckets) a few blocks on.
        let count = rng.gen_range(1..30u64);
        let at = height + rng.gen_range(1..6u64);
        txs.push(b[0].call(
            actor,
            "schedule_many",
            vec![Value::int(count), Value::int(at), Value::int(500)],
            0,
        ));
        // Time timers, due at the start of a later block (blocks are 2 ms
        // apart here), and a user write some watch may see.
        txs.push(b[3].call(
            actor,
            "schedule_many_at",
            vec![
                Value::int(rng.gen_range(1..8u64)),
                Value::int(T + (height + rng.gen_range(1..4u64)) * 2 - 1),
                Value::int(500),
            ],
            0,
        ));
        txs.push(b[4].call(
            actor,
            "set",
            vec![
                Value::str(["k1", "k2x", "k3"][rng.gen_range(0..3)]),
                Value::int(height),
            ],
            0,
        ));
        // One timer we may cancel or extend later.
        txs.push(b[1].call(
            actor,
            "schedule",
            vec![
                Value::int(height + 8),
                Value::Bytes(vec![height as u8]),
                Value::None,
                Value::int(800),
                Value::None,
                Value::int(rng.gen_range(0..100u64)),
            ],
            0,
        ));
        if let Some(id) = (height % 3 == 0).then(|| ids.pop()).flatten() {
            txs.push(b[2].call(actor, "cancel", vec![Value::Bytes(id)], 0));
        } else if let Some(id) = (height % 3 == 1).then(|| ids.last().cloned()).flatten() {
            txs.push(b[2].call(
                actor,
                "extend",
                vec![Value::Bytes(id), Value::int(height + 50)],
                0,
            ));
        }
        for receipt in &produce(&txs, height) {
            if let Some(Value::Bytes(id)) = receipt.return_value.as_ref() {
                if id.len() == 32 {
                    ids.push(id.clone());
                }
            }
        }
    }
    assert_eq!(memory.head().unwrap().height, 40);
    let fired = memory
        .store()
        .events(&timerhost_state::EventFilter {
            name: Some("TimerFired".into()),
            ..Default::default()
        })
        .unwrap()
        .len();
    assert!(fired > 100, "timers fired across blocks ({fired})");
    let state = memory.store().state();
    let kinds: std::collections::BTreeSet<&str> = timerhost_timers::store::all(&state, 10_000)
        .unwrap()
        .iter()
        .map(|t| t.kind.name())
        .collect();
    assert!(kinds.contains("state"), "the watches stay: {kinds:?}");
    let watch_fires: Vec<u64> = timerhost_timers::store::all(&state, 10_000)
        .unwrap()
        .iter()
        .filter_map(|t| match &t.kind {
            timerhost_types::TimerKind::State(w) => Some(w.fires),
            _ => None,
        })
        .collect();
    assert_eq!(watch_fires.len(), 2);
    assert!(
        watch_fires.iter().all(|&n| n >= 5),
        "both watches fired: {watch_fires:?}"
    );
    let seqs: Vec<u64> = (1..=memory.head().unwrap().height)
        .flat_map(|h| memory.store().receipts(h).unwrap())
        .filter_map(|r| match r.source {
            timerhost_types::TxSource::Deferred {
                delivery: Some(d), ..
            } => Some(d.deliver_seq),
            _ => None,
        })
        .collect();
    assert!(seqs.len() > 100);
    assert_eq!(
        seqs,
        (0..seqs.len() as u64).collect::<Vec<_>>(),
        "deliver_seq numbers every fire, in order"
    );
    assert_eq!(sled.replay(|_| {}).unwrap(), memory.head().unwrap().height);
    assert_eq!(memory.replay(|_| {}).unwrap(), sled.head().unwrap().height);
}
