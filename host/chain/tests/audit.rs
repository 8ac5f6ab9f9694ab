//! The audit of derived timer state (#44, `timerhost_timers::audit`): what
//! a state-synced node runs on what its peers sent. A clean chain passes;
//! each way a peer could bend the derived keys — a record, its id lookup,
//! its index slot, a group's head, a bucket's stored form, the pending
//! count, a record no leaf commits to — is found and named by its key.

mod common;

use common::Net;
use timerhost_chain::testing::BENCH_TICK_ACTOR;
use timerhost_state::namespaces::{ns_key, STATE};
use timerhost_state::{KvBackend, StateRead, WriteBatch};
use timerhost_timers::audit::{audit, Finding};
use timerhost_timers::keys::{self, BucketId};
use timerhost_types::{Hash, Value};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

/// A chain with timers in three buckets of two actors' (one of which has
/// more than a bucket's small-form limit), some fired.
fn chain() -> (Net, u64) {
    let mut net = Net::new();
    let a = net.deploy(1, BENCH_TICK_ACTOR, vec![], 10u128.pow(20));
    let b = net.deploy(2, BENCH_TICK_ACTOR, vec![], 10u128.pow(20));
    let due = net.height() + 30;
    net.call_ok(1, a, "arm", vec![Value::int(40), Value::int(due)], 0);
    net.call_ok(2, b, "arm", vec![Value::int(5), Value::int(due)], 0);
    net.call_ok(2, b, "arm", vec![Value::int(7), Value::int(due + 1)], 0);
    net.call_ok(
        1,
        a,
        "arm",
        vec![Value::int(3), Value::int(net.height() + 2)],
        0,
    );
    for _ in 0..3 {
        net.block(Vec::new());
    }
    (net, due)
}

fn tamper(net: &Net, f: impl FnOnce(&dyn StateRead, &mut WriteBatch)) -> Finding {
    let state = net.chain.store().state();
    let mut batch = WriteBatch::new();
    f(&state, &mut batch);
    net.chain.store().backend().write(batch).unwrap();
    audit(&net.chain.store().state())
        .unwrap()
        .expect_err("the audit finds the change")
}

fn put(batch: &mut WriteBatch, key: &[u8], value: Vec<u8>) {
    batch.put(ns_key(STATE, key), value);
}

fn first(state: &dyn StateRead, prefix: keys::Prefix) -> (Vec<u8>, Vec<u8>) {
    state
        .scan(&prefix, Some(&keys::end_of(prefix)), 1)
        .unwrap()
        .remove(0)
}

#[test]
fn a_clean_chain_passes_and_every_bent_derived_key_is_named() {
    let (net, due) = chain();
    let clean = net.chain.store().snapshot().unwrap();
    let summary = audit(&net.chain.store().state()).unwrap().unwrap();
    assert_eq!(summary.records, 52);
    assert_eq!(summary.buckets, 2);
    let reset = || net.chain.store().restore(&clean).unwrap();

    // A record's timer changed: its bucket's records no longer fold to the
    // leaf, and the finding spans the bucket's records.
    let found = tamper(&net, |s, b| {
        let (k, mut v) = first(s, keys::RECORD);
        let last = v.len() - 60;
        v[last] ^= 1;
        put(b, &k, v);
    });
    assert!(found.range_end.is_some(), "{found:?}");
    assert!(found.key.starts_with(&keys::RECORD), "{found:?}");
    reset();

    // An id lookup deleted.
    let found = tamper(&net, |s, b| {
        let (k, _) = first(s, keys::ID_LOOKUP);
        b.delete(ns_key(STATE, &k));
    });
    assert!(found.reason.contains("id lookup"), "{found:?}");
    reset();

    // A record's actor slot changed (slots are outside the record hash):
    // the index and the record disagree; both are named.
    let found = tamper(&net, |s, b| {
        let (k, mut v) = first(s, keys::RECORD);
        let n = v.len();
        // The record ends with its slots: actor (8 bytes LE), payer (8).
        v[n - 16] ^= 1;
        put(b, &k, v);
    });
    assert!(found.key.starts_with(&keys::ACTOR_CHUNKS), "{found:?}");
    assert!(found.or_else.is_some(), "{found:?}");
    reset();

    // A group's head handing out a slot already in use.
    let found = tamper(&net, |s, b| {
        let (k, v) = first(s, keys::ACTOR_HEADS);
        let mut head = v[..8].to_vec();
        head.extend_from_slice(&1u64.to_be_bytes());
        put(b, &k, head);
    });
    assert!(found.key.starts_with(&keys::ACTOR_HEADS), "{found:?}");
    reset();

    // A bucket's stored form.
    let found = tamper(&net, |s, b| {
        let k = keys::lattice_key(BucketId::height(due));
        let mut v = s.get(&k).unwrap().unwrap();
        v[0] ^= 1;
        put(b, &k, v);
    });
    assert_eq!(
        found.key,
        keys::lattice_key(BucketId::height(due)),
        "{found:?}"
    );
    reset();

    // The pending count.
    let found = tamper(&net, |_, b| {
        put(b, &keys::pending_count_key(), 53u64.to_be_bytes().to_vec());
    });
    assert!(found.reason.contains("pending"), "{found:?}");
    reset();

    // A record in a bucket no leaf commits to.
    let found = tamper(&net, |s, b| {
        let (_, v) = first(s, keys::RECORD);
        put(b, &keys::record_key(BucketId::height(due + 500), 1), v);
    });
    assert!(found.key.starts_with(&keys::RECORD), "{found:?}");
    reset();

    assert!(audit(&net.chain.store().state()).unwrap().is_ok());
}

/// A pending timer's proof of presence (#48): its bucket's leaf, proven
/// against the root, and the bucket's record hashes, which must hold the
/// timer and fold to the leaf's digest.
#[test]
fn a_pending_timer_is_proven_by_its_bucket_and_a_bent_proof_is_not() {
    use borsh::BorshDeserialize;
    use timerhost_timers::proof::{prove, verify, TimerProof};

    let (net, due) = chain();
    let state = net.chain.store().state();
    let timers: Vec<_> = timerhost_timers::store::all(&state, usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|t| t.height == due)
        .collect();
    let id = timers[7].timer_id;
    let root = net.chain.head().unwrap().state_root;
    let (height, proof) = prove(net.chain.store(), &id).unwrap();
    assert_eq!(height, net.height());
    assert_eq!(proof.bucket.len(), timers.len());
    let bytes = borsh::to_vec(&proof).unwrap();
    assert_eq!(verify(&root, &id, &bytes).unwrap().timer_id, id);
    let bent = |f: &dyn Fn(&mut TimerProof)| {
        let mut p = TimerProof::try_from_slice(&bytes).unwrap();
        f(&mut p);
        verify(&root, &id, &borsh::to_vec(&p).unwrap()).unwrap_err()
    };
    // A timer left out of its bucket, another timer's fields, another leaf.
    assert!(bent(&|p| {
        p.bucket.pop();
    })
    .contains("not"));
    assert!(!bent(&|p| p.timer.gas_limit_per_fire += 1).is_empty());
    assert!(!bent(&|p| p.leaf_value[0] ^= 1).is_empty());
    assert!(verify(&Hash([3; 32]), &id, &bytes).is_err());
    assert!(verify(&root, &timers[8].timer_id, &bytes).is_err());
}
