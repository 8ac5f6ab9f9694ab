//! The timer store and its indexes (CIP-5 §3.2), all consensus state under
//! the `t` namespace:
//!
//! | key | value | purpose |
//! |---|---|---|
//! | `t r ‖ timer_id` | [`Timer`] | the canonical record |
//! | `t h ‖ height BE ‖ seq BE` | timer_id | height index, FIFO within a height ([`crate::queue`]) |
//! | `t g ‖ seq BE` | [`GcEntry`] | GC backlog: classified for removal, budget ran out ([`crate::queue`]) |
//! | `t a ‖ actor ‖ seq BE` | timer_id | per-actor index (listing, in scheduling order) |
//! | `t p ‖ fee_payer ‖ seq BE` | timer_id | per-fee-payer index |
//! | `t n ‖ actor` | u32 BE | live timers of the actor (the §4.2 cap, O(1)) |
//! | `t s` | u64 BE | next sequence number |
//!
//! The sequence number is global and strictly increasing, so `(height, seq)`
//! orders timers by height and then by insertion — the FIFO of §3.2.

use timerhost_state::{Overlay, StateRead, StateReadExt, StorageError};
use timerhost_types::keys::TIMERS;
use timerhost_types::{Address, Hash, Timer};

use crate::error::Result;
use crate::queue;

const RECORD: u8 = b'r';
const BY_ACTOR: u8 = b'a';
const BY_PAYER: u8 = b'p';
const LIVE_COUNT: u8 = b'n';
const NEXT_SEQ: u8 = b's';

fn key(sub: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut k = vec![TIMERS, sub];
    for p in parts {
        k.extend_from_slice(p);
    }
    k
}

/// Key of a timer record.
pub fn record_key(timer_id: &Hash) -> Vec<u8> {
    key(RECORD, &[timer_id.as_bytes()])
}

fn actor_key(actor: &Address, seq: u64) -> Vec<u8> {
    key(BY_ACTOR, &[actor.as_bytes(), &seq.to_be_bytes()])
}

fn payer_key(payer: &Address, seq: u64) -> Vec<u8> {
    key(BY_PAYER, &[payer.as_bytes(), &seq.to_be_bytes()])
}

fn count_key(actor: &Address) -> Vec<u8> {
    key(LIVE_COUNT, &[actor.as_bytes()])
}

pub(crate) fn corrupt(what: &'static str, k: &[u8], reason: &str) -> StorageError {
    StorageError::Corrupt {
        what,
        key: k.iter().map(|b| format!("{b:02x}")).collect(),
        reason: reason.into(),
    }
}

pub(crate) fn read_u64(state: &(impl StateRead + ?Sized), k: &[u8]) -> Result<u64> {
    match state.get(k)? {
        None => Ok(0),
        Some(v) => Ok(u64::from_be_bytes(
            v.as_slice()
                .try_into()
                .map_err(|_| corrupt("timer counter", k, "not 8 bytes"))?,
        )),
    }
}

pub(crate) fn hash_value(k: &[u8], v: &[u8]) -> Result<Hash> {
    Hash::from_slice(v).map_err(|_| corrupt("timer index entry", k, "not a 32-byte timer id"))
}

/// Reads a timer by id.
pub fn get(state: &(impl StateRead + ?Sized), timer_id: &Hash) -> Result<Option<Timer>> {
    state.get_decoded::<Timer>(&record_key(timer_id))
}

/// Live timers held by `actor`.
pub fn live_count(state: &(impl StateRead + ?Sized), actor: &Address) -> Result<u32> {
    let k = count_key(actor);
    match state.get(&k)? {
        None => Ok(0),
        Some(v) => {
            Ok(u32::from_be_bytes(v.as_slice().try_into().map_err(
                |_| corrupt("live timer count", &k, "not 4 bytes"),
            )?))
        }
    }
}

fn set_live_count(state: &mut Overlay<'_>, actor: &Address, n: u32) {
    if n == 0 {
        state.delete(count_key(actor));
    } else {
        state.put(count_key(actor), n.to_be_bytes().to_vec());
    }
}

/// Allocates the next FIFO sequence number.
pub fn next_seq(state: &mut Overlay<'_>) -> Result<u64> {
    let k = key(NEXT_SEQ, &[]);
    let seq = read_u64(state, &k)?;
    state.put(k, (seq + 1).to_be_bytes().to_vec());
    Ok(seq)
}

/// Inserts a new timer into the store and every index.
pub fn insert(state: &mut Overlay<'_>, timer: &Timer) -> Result<()> {
    state.put_encoded(record_key(&timer.timer_id), timer);
    queue::enqueue(state, timer);
    state.put(
        actor_key(&timer.actor_address, timer.seq),
        timer.timer_id.0.to_vec(),
    );
    state.put(
        payer_key(&timer.fee_payer, timer.seq),
        timer.timer_id.0.to_vec(),
    );
    let n = live_count(state, &timer.actor_address)?;
    set_live_count(state, &timer.actor_address, n + 1);
    Ok(())
}

/// Rewrites a timer's record (same indexes; used when extending its TTL).
pub fn update(state: &mut Overlay<'_>, timer: &Timer) {
    state.put_encoded(record_key(&timer.timer_id), timer);
}

/// Removes a timer from the store and every index (wherever it is queued).
pub fn remove(state: &mut Overlay<'_>, timer: &Timer) -> Result<()> {
    remove_queued(state, timer, queue::Queued::Unknown)
}

/// Removes a timer known to be queued at `queued` from the store and every index.
pub fn remove_queued(state: &mut Overlay<'_>, timer: &Timer, queued: queue::Queued) -> Result<()> {
    state.delete(record_key(&timer.timer_id));
    queue::dequeue(state, timer, queued)?;
    state.delete(actor_key(&timer.actor_address, timer.seq));
    state.delete(payer_key(&timer.fee_payer, timer.seq));
    let n = live_count(state, &timer.actor_address)?;
    set_live_count(state, &timer.actor_address, n.saturating_sub(1));
    Ok(())
}

fn list_index(
    state: &(impl StateRead + ?Sized),
    prefix: Vec<u8>,
    limit: usize,
) -> Result<Vec<Timer>> {
    let mut end = prefix.clone();
    end.push(0xff);
    end.extend_from_slice(&[0xff; 8]);
    let mut out = Vec::new();
    for (k, v) in state.scan(&prefix, Some(&end), limit)? {
        let id = hash_value(&k, &v)?;
        let timer = get(state, &id)?
            .ok_or_else(|| corrupt("timer index entry", &k, "points to a missing timer"))?;
        out.push(timer);
    }
    Ok(out)
}

/// Every timer record, in timer-id order (at most `limit`): the unfiltered
/// listing of dev tooling. A validator never needs it, and its cost grows
/// with the number of pending timers.
pub fn all(state: &(impl StateRead + ?Sized), limit: usize) -> Result<Vec<Timer>> {
    let prefix = key(RECORD, &[]);
    let end = key(RECORD + 1, &[]);
    state
        .scan(&prefix, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            timerhost_types::decode::<Timer>(&v).map_err(|e| corrupt("timer", &k, &e.to_string()))
        })
        .collect()
}

/// Live timers of `actor`, in scheduling order (at most `limit`).
pub fn by_actor(
    state: &(impl StateRead + ?Sized),
    actor: &Address,
    limit: usize,
) -> Result<Vec<Timer>> {
    list_index(state, key(BY_ACTOR, &[actor.as_bytes()]), limit)
}

/// Live timers paid by `fee_payer`, in scheduling order (at most `limit`).
pub fn by_fee_payer(
    state: &(impl StateRead + ?Sized),
    fee_payer: &Address,
    limit: usize,
) -> Result<Vec<Timer>> {
    list_index(state, key(BY_PAYER, &[fee_payer.as_bytes()]), limit)
}

/// Timers queued to fire at exactly `height`, in FIFO order (at most `limit`).
pub fn by_height(
    state: &(impl StateRead + ?Sized),
    height: u64,
    limit: usize,
) -> Result<Vec<Timer>> {
    queue::at_height(state, height, limit)?
        .into_iter()
        .map(|id| {
            get(state, &id)?.ok_or_else(|| {
                corrupt(
                    "height index entry",
                    id.as_bytes(),
                    "points to a missing timer",
                )
            })
        })
        .collect()
}
