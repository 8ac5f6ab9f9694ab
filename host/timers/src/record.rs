//! What the store keeps per timer ([`TimerRecord`]: the CIP-5 §3.1 record
//! and its index slots), and the hash by which the state root commits to it.
//!
//! The record hash covers the [`Timer`] only, never its slots: slots are
//! positions in derived indexes and depend on history (a group's slots
//! restart at 0 when it empties), while the root must be a function of the
//! pending timers alone ([`crate::bucket`]).

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{StateRead, StateReadExt};
use timerhost_types::encoding::Canonical;
use timerhost_types::{Hash, Timer};

use crate::error::Result;
use crate::keys::record_key;

/// Domain of [`record_hash`].
const RECORD_DOMAIN: &[u8] = b"timerhost/timer-record/v1";

/// Where a timer sits in each index (see [`crate::index`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct IndexSlots {
    /// Slot in its height's group of the height index.
    pub height: u64,
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

/// Reads a timer and its index slots by id.
pub fn get_record(
    state: &(impl StateRead + ?Sized),
    timer_id: &Hash,
) -> Result<Option<TimerRecord>> {
    state.get_decoded::<TimerRecord>(&record_key(timer_id))
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
