//! A pending timer's proof of presence (#48, `th_getProof` kind `timer`):
//! what ties a timer record to a block's state root, though records are
//! derived state and not tree leaves.
//!
//! - A height or time timer is committed by its due bucket's leaf: the
//!   proof carries the leaf with its `jmt` proof, the record hashes of every
//!   timer in the bucket, and the timer itself. The verifier hashes the
//!   timer, finds it among the hashes, and folds the hashes into the digest
//!   the leaf holds (and their count into its `live`).
//! - A state watch is committed by its own leaf, the record's hash: the
//!   proof is that leaf's.
//!
//! Buckets of more than [`MAX_PROVEN_BUCKET`] timers are not proven (the
//! proof would carry every hash), nor timers waiting in the Globalbox or
//! the GC backlog. A timer's *absence* cannot be proven: the root commits
//! to pending timers, not to an index of their ids.

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{ChainStore, KvBackend, StateAt, StateRead, StorageError};
use timerhost_types::{Hash, Timer};

use crate::bucket;
use crate::error::Result;
use crate::keys;
use crate::record::{self, bucket_of, record_hash, Queued};

/// Most timers a proven bucket may hold.
pub const MAX_PROVEN_BUCKET: usize = 4_096;

/// A pending timer's proof, as `th_getProof` serves it (borsh).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct TimerProof {
    /// The timer.
    pub timer: Timer,
    /// The state key of the leaf that commits to it.
    pub leaf_key: Vec<u8>,
    /// That leaf's value.
    pub leaf_value: Vec<u8>,
    /// The leaf's `jmt` proof (`timerhost_state::proofs`).
    pub leaf_proof: Vec<u8>,
    /// A due bucket's timers' record hashes (empty for a watch).
    pub bucket: Vec<Hash>,
}

fn refused(why: String) -> StorageError {
    StorageError::NotProvable(why)
}

/// The proof of pending timer `id` at `store`'s head, and that height.
pub fn prove<B: KvBackend>(store: &ChainStore<B>, id: &Hash) -> Result<(u64, TimerProof)> {
    prove_at(store, id, None)
}

/// The proof of timer `id` pending at `height` (the head when `None`; any
/// of the last `proof_blocks`, `timerhost_state::recent`), and that height.
pub fn prove_at<B: KvBackend>(
    store: &ChainStore<B>,
    id: &Hash,
    height: Option<u64>,
) -> Result<(u64, TimerProof)> {
    let height = match height {
        Some(h) => h,
        None => store
            .head_height()?
            .ok_or_else(|| refused("the store has no block yet".into()))?,
    };
    store.at_height(height, |state| Ok((height, prove_in(state, id)?)))
}

fn prove_in<B: KvBackend>(state: &StateAt<'_, B>, id: &Hash) -> Result<TimerProof> {
    let at = state.height();
    let Some(key) = record::live_record_key(state, id)? else {
        return Err(refused(format!("no timer {id} is pending at height {at} (a timer's absence cannot be proven: the root commits to pending timers, not to their ids)")));
    };
    if Queued::of_record_key(&key) != Queued::Due {
        return Err(refused(format!(
            "timer {id} waits in the Globalbox or the GC backlog, whose timers are not proven yet"
        )));
    }
    let timer = record::get_record(state, id)?
        .ok_or_else(|| refused(format!("no timer {id} is pending at height {at}")))?
        .timer;
    let (leaf_key, bucket) = match bucket_of(&timer) {
        Some(b) => {
            let (start, end) = keys::records_range(b);
            let records = state.scan(&start, Some(&end), MAX_PROVEN_BUCKET + 1)?;
            if records.len() > MAX_PROVEN_BUCKET {
                return Err(refused(format!(
                    "timer {id}'s bucket holds more than {MAX_PROVEN_BUCKET} timers: too large to prove"
                )));
            }
            let hashes = records
                .iter()
                .map(|(k, v)| record::decode_record(k, v).map(|r| record_hash(&r.timer)))
                .collect::<Result<Vec<_>>>()?;
            (keys::bucket_key(b), hashes)
        }
        None => (keys::watch_leaf_key(timer.seq), Vec::new()),
    };
    let leaf = state.prove(&leaf_key)?;
    let leaf_value = leaf
        .value
        .ok_or_else(|| refused(format!("timer {id}'s leaf is missing")))?;
    Ok(TimerProof {
        timer,
        leaf_key,
        leaf_value,
        leaf_proof: leaf.proof,
        bucket,
    })
}

/// Checks `proof` (borsh [`TimerProof`]) of timer `id` against `root`;
/// the proven timer, or why not.
pub fn verify(root: &Hash, id: &Hash, proof: &[u8]) -> std::result::Result<Timer, String> {
    let p =
        TimerProof::try_from_slice(proof).map_err(|e| format!("the proof does not decode: {e}"))?;
    if p.timer.timer_id != *id {
        return Err(format!(
            "the proof is of timer {}, not {id}",
            p.timer.timer_id
        ));
    }
    timerhost_state::verify_proof(root, &p.leaf_key, Some(&p.leaf_value), &p.leaf_proof)?;
    let hash = record_hash(&p.timer);
    match bucket_of(&p.timer) {
        Some(b) => {
            if p.leaf_key != keys::bucket_key(b) {
                return Err("the leaf is not the timer's due bucket".into());
            }
            let leaf =
                bucket::decode_leaf_value(&p.leaf_value).ok_or("the leaf is not a bucket leaf")?;
            if !p.bucket.contains(&hash) {
                return Err("the timer is not among its bucket's timers".into());
            }
            if leaf.live != p.bucket.len() as u64 || bucket::digest_of(&p.bucket) != leaf.digest {
                return Err("the bucket's timers do not hash to its leaf".into());
            }
        }
        None => {
            if p.leaf_key != keys::watch_leaf_key(p.timer.seq) || p.leaf_value != hash.as_bytes() {
                return Err("the watch's leaf does not hold its record's hash".into());
            }
        }
    }
    Ok(p.timer)
}
