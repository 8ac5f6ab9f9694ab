//! What the store keeps per timer ([`TimerRecord`]: the CIP-5 §3.1 record
//! and its index slots), and the hash by which the state root commits to it.
//!
//! The record hash covers the [`Timer`] only, never its slots: slots are
//! positions in derived indexes and depend on history (a group's slots
//! restart at 0 when it empties), while the root must be a function of the
//! pending timers alone ([`crate::bucket`]).

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::encoding::Canonical;
use timerhost_types::{Hash, Timer, TimerKind};

use crate::error::Result;
use crate::keys::{self, BucketId};

/// Domain of [`record_hash`].
const RECORD_DOMAIN: &[u8] = b"timerhost/timer-record/v1";

/// Where a timer sits in each listing index (see [`crate::index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct IndexSlots {
    /// Slot in its actor's group.
    pub actor: u64,
    /// Slot in its fee payer's group.
    pub payer: u64,
}

/// What the store keeps per timer: the CIP-5 record and its index slots
/// (bookkeeping, not part of the record §3.1 defines).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct TimerRecord {
    /// The timer.
    pub timer: Timer,
    /// Its positions in the indexes.
    pub slots: IndexSlots,
}

impl Canonical for TimerRecord {
    const NAME: &'static str = "timer record";
}

/// Where a timer is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// In its due queue (a height or time timer: its record is at its
    /// position, bucket then sequence), or registered (a state watch).
    Due,
    /// In the GC backlog (`t g`): its record is out of the due queue.
    Backlog,
    /// Due and waiting in the Globalbox (`t x`) to be materialised.
    Globalbox,
}

impl Queued {
    /// Where the record whose key is `record_key` (the id lookup's value)
    /// is queued.
    pub fn of_record_key(record_key: &[u8]) -> Queued {
        if record_key.starts_with(&keys::BACKLOG_RECORD) {
            Queued::Backlog
        } else if record_key.starts_with(&keys::GLOBALBOX_RECORD) {
            Queued::Globalbox
        } else {
            Queued::Due
        }
    }
}

/// The due bucket of a height or time timer; `None` for a state watch,
/// which is never due by position.
pub fn bucket_of(timer: &Timer) -> Option<BucketId> {
    match &timer.kind {
        TimerKind::Height => Some(BucketId::height(timer.height)),
        TimerKind::Time { timestamp_ms } => Some(BucketId::time(*timestamp_ms)),
        TimerKind::State(_) => None,
    }
}

/// The key of `timer`'s record while it is queued at `queued`.
pub fn record_key(timer: &Timer, queued: Queued) -> Vec<u8> {
    match (queued, bucket_of(timer)) {
        (Queued::Due, Some(bucket)) => keys::record_key(bucket, timer.seq),
        (Queued::Due, None) => keys::watch_record_key(timer.seq),
        (Queued::Backlog, _) => keys::backlog_record_key(timer.seq),
        (Queued::Globalbox, _) => keys::globalbox_record_key(timer.seq),
    }
}

/// What removing a record does with its id lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdLookup {
    /// Deleted with the record (a cancel, an expiry, every removal but a
    /// fire).
    Delete,
    /// Left behind, stale (#46): a fire. The lookup names a record key that
    /// is gone, which every reader ([`live_record_key`]) treats as no timer;
    /// pruning deletes it with the block's history
    /// (`timerhost_state::pruning`). A lookup's key is random, so deleting
    /// it cost a fire more than its handler did; a record key names a fresh
    /// sequence number, so no later record can take the key a stale lookup
    /// names.
    LeaveStale,
}

/// The key of pending timer `timer_id`'s record: its id lookup, unless the
/// lookup is stale (its record is gone: the timer fired, [`IdLookup`]).
pub fn live_record_key(
    state: &(impl StateRead + ?Sized),
    timer_id: &Hash,
) -> Result<Option<Vec<u8>>> {
    let Some(key) = state.get(&keys::id_key(timer_id))? else {
        return Ok(None);
    };
    Ok(state.get_head(&key, 0)?.map(|_| key))
}

/// Where the timer `timer_id` is queued, if it is pending.
pub fn queued(state: &(impl StateRead + ?Sized), timer_id: &Hash) -> Result<Option<Queued>> {
    Ok(live_record_key(state, timer_id)?.map(|k| Queued::of_record_key(&k)))
}

/// Reads a timer and its listing slots by id (through the id lookup).
pub fn get_record(
    state: &(impl StateRead + ?Sized),
    timer_id: &Hash,
) -> Result<Option<TimerRecord>> {
    Ok(get_queued_record(state, timer_id)?.map(|(record, _)| record))
}

/// Reads a timer and its listing slots by id, and where it is queued (one
/// read of the id lookup for both); `None` if it is not pending, including
/// when its lookup is stale ([`IdLookup::LeaveStale`]).
pub fn get_queued_record(
    state: &(impl StateRead + ?Sized),
    timer_id: &Hash,
) -> Result<Option<(TimerRecord, Queued)>> {
    let Some(key) = state.get(&keys::id_key(timer_id))? else {
        return Ok(None);
    };
    let Some(record) = state.get_decoded::<TimerRecord>(&key)? else {
        return Ok(None);
    };
    if record.timer.timer_id != *timer_id {
        return Err(keys::corrupt(
            "timer id lookup",
            &keys::id_key(timer_id),
            "names another timer's record",
        ));
    }
    Ok(Some((record, Queued::of_record_key(&key))))
}

/// Writes `record` at `queued` and points its id there.
pub fn put_record(state: &mut Overlay<'_>, record: &TimerRecord, queued: Queued) {
    let key = record_key(&record.timer, queued);
    state.put(keys::id_key(&record.timer.timer_id), key.clone());
    state.put_encoded(key, record);
}

/// Deletes the record of `timer` queued at `queued`, and its id lookup
/// unless `lookup` leaves it stale.
pub fn delete_record(state: &mut Overlay<'_>, timer: &Timer, queued: Queued, lookup: IdLookup) {
    state.delete(record_key(timer, queued));
    if lookup == IdLookup::Delete {
        state.delete(keys::id_key(&timer.timer_id));
    }
}

/// Decodes a record read from `key`.
pub fn decode_record(key: &[u8], bytes: &[u8]) -> Result<TimerRecord> {
    timerhost_types::decode::<TimerRecord>(bytes)
        .map_err(|e| keys::corrupt("timer record", key, &e.to_string()))
}

/// blake3 of the timer's canonical (borsh) encoding under a domain tag:
/// every field — height and sequence (its FIFO position), id, actor,
/// payload, handler, fee payer, limits, expiry, deposit.
pub fn record_hash(timer: &Timer) -> Hash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(RECORD_DOMAIN);
    borsh::to_writer(&mut hasher, timer).expect("hashing into a blake3 hasher cannot fail");
    Hash(*hasher.finalize().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_types::Address;

    fn timer() -> Timer {
        Timer {
            actor_address: Address([1; 20]),
            height: 7,
            payload: vec![1, 2, 3],
            timer_id: Hash([2; 32]),
            handler: "handle_timer".into(),
            fee_payer: Address([3; 20]),
            gas_limit_per_fire: 10,
            expires_at: 9,
            seq: 4,
            deposit: 123,
            bid: 0,
            max_fee_per_cycle: 0,
            kind: TimerKind::Height,
            escrow_key: None,
            booked: false,
            retry: None,
        }
    }

    #[test]
    fn every_byte_of_the_record_is_in_its_hash() {
        let base = timer();
        let encoded = borsh::to_vec(&base).unwrap();
        let h = record_hash(&base);
        for i in 0..encoded.len() {
            let mut changed = encoded.clone();
            changed[i] ^= 1;
            // Not every flipped byte still decodes (lengths, strings); every
            // one that does is a different timer with a different hash.
            if let Ok(other) = borsh::from_slice::<Timer>(&changed) {
                assert_ne!(record_hash(&other), h, "byte {i}");
            }
        }
    }
}
