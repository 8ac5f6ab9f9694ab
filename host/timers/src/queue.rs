//! The due queues: which timers are due, in which order.
//!
//! Two queues share one structure ([`DueQueue`]): height timers, due at the
//! end of a block, and time timers, due at the start of the first block
//! whose timestamp reaches theirs. Today's ordering is CIP-5's FIFO: by
//! height (or millisecond), then by scheduling order. A queue is the
//! records themselves: a queued timer's record is keyed by its position,
//! `u r ‖ height ‖ seq` or `u t ‖ timestamp_ms ‖ seq` ([`crate::keys`]), and
//! sequence numbers
//! grow with scheduling order, so key order is FIFO order and walking the
//! due timers is one ordered scan that yields their records — no index to
//! consult and no lookup per timer. Timers a budget leaves unprocessed
//! simply stay, so at the next block they come *before* the timers natively
//! due then (carry-over, DESIGN.md). Timers classified for removal when the
//! GC budget was already spent move to the GC backlog (`t g ‖ seq`, their
//! records to `u b ‖ seq`), which the next block clears first; each due
//! timer is therefore examined once, and end-of-block work stays
//! proportional to the timers processed.
//!
//! Everything that knows the queues' layout is in this module, so a new
//! ordering (priority) is a new queue implementation, not a rewrite of
//! delivery. State watches are not due by position; their hits queue in
//! [`crate::watch`].

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead};
use timerhost_types::encoding::Canonical;
use timerhost_types::{Hash, Timer};

use crate::error::Result;
pub use crate::keys::DueQueue;
use crate::keys::{self, backlog_key, corrupt, BucketId};
use crate::record::{self, decode_record, TimerRecord};
use crate::removal::Removals;

pub use crate::record::Queued;

/// Why a timer is in the GC backlog (decided when it was classified).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum RemovalReason {
    /// `current_height > expires_at` at classification.
    Expired {
        /// Height at classification.
        classified_at: u64,
    },
    /// `balance(fee_payer) < max_cost` at classification.
    InsufficientFunds {
        /// `max_cost` then.
        required: u128,
        /// The balance then (the deposit it gets back included).
        available: u128,
    },
    /// The fee payer revoked the timer's payments before it was due.
    PaymentRevoked,
}

/// A GC backlog entry: a leaf of the state tree, which commits to the
/// timer's record through `record_hash` while it waits here (it has left
/// its due bucket or, for a watch, its own leaf).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct GcEntry {
    /// The timer.
    pub timer_id: Hash,
    /// Why it must go.
    pub reason: RemovalReason,
    /// [`record_hash`](crate::record::record_hash) of its record.
    pub record_hash: Hash,
}

impl Canonical for GcEntry {
    const NAME: &'static str = "timer GC entry";
}

/// Takes a timer out of the due queue or the backlog (its record is the
/// caller's to delete). The backlog entry goes now; a due timer's bucket
/// change is added to `removals`, so that a block removing thousands of
/// timers rewrites each bucket once. Returns the record's
/// [`record_hash`](crate::record::record_hash) when it left a bucket (a
/// backlog entry leaves none, and is not hashed).
pub fn dequeue(
    state: &mut Overlay<'_>,
    record: &TimerRecord,
    queued: Queued,
    removals: &mut Removals,
) -> Result<Option<Hash>> {
    match queued {
        Queued::Due => {
            let record_hash = record::record_hash(&record.timer);
            crate::expiry::unregister(state, &record.timer);
            if let Some(watch) = crate::watch::watch_of(&record.timer) {
                crate::watch::unregister(state, &record.timer, watch)?;
            } else {
                removals.buckets.remove(&record.timer, record_hash);
            }
            Ok(Some(record_hash))
        }
        Queued::Backlog => {
            state.delete(backlog_key(record.timer.seq));
            Ok(None)
        }
        Queued::Globalbox => Ok(Some(crate::globalbox::dequeue_timer(state, &record.timer)?)),
    }
}

/// Moves a classified timer from where it is queued (`from`: its due queue,
/// the watch registry or the Globalbox) to the GC backlog, its record to
/// `u b`.
pub fn move_to_backlog(
    state: &mut Overlay<'_>,
    record: &TimerRecord,
    from: Queued,
    reason: RemovalReason,
    removals: &mut Removals,
) -> Result<()> {
    let record_hash =
        dequeue(state, record, from, removals)?.expect("a queued timer leaves its place");
    state.delete(record::record_key(&record.timer, from));
    record::put_record(state, record, Queued::Backlog);
    state.put_encoded(
        backlog_key(record.timer.seq),
        &GcEntry {
            timer_id: record.timer.timer_id,
            reason,
            record_hash,
        },
    );
    Ok(())
}

/// Is this timer waiting in the GC backlog?
pub fn in_backlog(state: &(impl StateRead + ?Sized), timer: &Timer) -> Result<bool> {
    Ok(state.get(&backlog_key(timer.seq))?.is_some())
}

/// A position in the due queue: everything strictly before it has been
/// walked. Resuming a walk from here instead of from the queue's start keeps
/// a block's walk linear: records it removed are still in the committed
/// store underneath the overlay, and rescanning them per batch would be
/// quadratic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DueCursor {
    queue: DueQueue,
    at: u64,
    seq: u64,
}

impl DueCursor {
    /// The start of `queue`.
    pub fn start(queue: DueQueue) -> DueCursor {
        DueCursor {
            queue,
            at: 0,
            seq: 0,
        }
    }

    /// Just past `timer`, queued in `bucket`.
    pub fn after(bucket: BucketId, timer: &Timer) -> DueCursor {
        match timer.seq.checked_add(1) {
            Some(seq) => DueCursor {
                queue: bucket.queue,
                at: bucket.at,
                seq,
            },
            None => DueCursor {
                queue: bucket.queue,
                at: bucket.at.saturating_add(1),
                seq: 0,
            },
        }
    }
}

fn decode_all(page: Vec<(Vec<u8>, Vec<u8>)>) -> Result<Vec<TimerRecord>> {
    page.into_iter()
        .map(|(k, v)| decode_record(&k, &v))
        .collect()
}

/// Up to `limit` records of timers of the cursor's queue at or after
/// `from` and due at or before `through` (a height or unix ms), oldest
/// first: one ordered scan.
pub fn due_from(
    state: &(impl StateRead + ?Sized),
    from: DueCursor,
    through: u64,
    limit: usize,
) -> Result<Vec<TimerRecord>> {
    let Some((start, end)) = due_range(from, through) else {
        return Ok(Vec::new());
    };
    decode_all(state.scan(&start, Some(&end), limit)?)
}

/// The keys of [`due_from`]'s records, without reading the records (a
/// walk that must check each record's size before it reads it, #29).
pub fn due_keys_from(
    state: &(impl StateRead + ?Sized),
    from: DueCursor,
    through: u64,
    limit: usize,
) -> Result<Vec<Vec<u8>>> {
    let Some((start, end)) = due_range(from, through) else {
        return Ok(Vec::new());
    };
    state.scan_keys(&start, Some(&end), limit)
}

/// The key interval `[start, end)` that [`due_from`] and [`due_keys_from`]
/// scan; `None` when the cursor is already past `through`.
fn due_range(from: DueCursor, through: u64) -> Option<(Vec<u8>, Vec<u8>)> {
    if from.at > through {
        return None;
    }
    let start = keys::record_key(
        BucketId {
            queue: from.queue,
            at: from.at,
        },
        from.seq,
    );
    Some((start, keys::records_through(from.queue, through)))
}

/// Up to `limit` records queued in exactly `bucket`, FIFO.
pub fn in_bucket(
    state: &(impl StateRead + ?Sized),
    bucket: BucketId,
    limit: usize,
) -> Result<Vec<TimerRecord>> {
    let (start, end) = keys::records_range(bucket);
    decode_all(state.scan(&start, Some(&end), limit)?)
}

/// Up to `limit` GC backlog entries, oldest first.
pub fn backlog(state: &(impl StateRead + ?Sized), limit: usize) -> Result<Vec<GcEntry>> {
    Ok(backlog_from(state, 0, limit)?
        .into_iter()
        .map(|(_, entry)| entry)
        .collect())
}

/// Up to `limit` GC backlog entries with sequence ≥ `from_seq`, oldest first
/// (resumable, for the same reason as [`due_from`]).
pub fn backlog_from(
    state: &(impl StateRead + ?Sized),
    from_seq: u64,
    limit: usize,
) -> Result<Vec<(u64, GcEntry)>> {
    let start = backlog_key(from_seq);
    let end = keys::end_of(keys::BACKLOG);
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            let seq = k
                .get(2..10)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_be_bytes)
                .ok_or_else(|| {
                    corrupt(GcEntry::NAME, &k, "backlog key without an 8-byte sequence")
                })?;
            let entry = timerhost_types::decode::<GcEntry>(&v)
                .map_err(|e| corrupt(GcEntry::NAME, &k, &e.to_string()))?;
            Ok((seq, entry))
        })
        .collect()
}

/// How many timers are due at or before `height` and `timestamp_ms`
/// (queued in either queue) and how many wait in the backlog; counts up to
/// `limit` each (a query for operators, not used in consensus paths; the
/// node asks after every block). The queued ones are summed from the due
/// buckets' leaves, so no record is read or decoded.
pub fn due_count(
    state: &(impl StateRead + ?Sized),
    height: u64,
    timestamp_ms: u64,
    limit: usize,
) -> Result<(usize, usize)> {
    let by_height = crate::bucket::queued_through(state, DueQueue::Height, height, limit)?;
    let by_time = crate::bucket::queued_through(state, DueQueue::Time, timestamp_ms, limit)?;
    Ok((
        by_height.saturating_add(by_time).min(limit),
        backlog(state, limit)?.len(),
    ))
}
