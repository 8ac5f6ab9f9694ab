//! Every key of the timer store, and how a malformed one is reported — one
//! module, so the layout is read and changed in one place.
//!
//! Timers live in two namespaces. `t` ([`TIMERS`]) is committed state: each
//! key is a leaf of the state tree. `u` ([`TIMERS_DERIVED`]) is derived
//! state, written in the same atomic batch but committed through the `t d`
//! bucket digests instead of one leaf per key
//! ([`timerhost_types::keys::is_committed`]); that is what keeps a block's
//! tree work independent of the number of pending timers ([`crate::bucket`]).
//!
//! | key | value | committed by |
//! |---|---|---|
//! | `t d ‖ height BE` | height bucket: `live` u64 BE ‖ `reserved` u64 BE ‖ blake3 of its lattice hash ([`crate::bucket`]) | the tree |
//! | `t e ‖ timestamp_ms BE` | time bucket, the same leaf for the time timers due at that millisecond | the tree |
//! | `t w ‖ seq BE` | a state watch: the [`record_hash`](crate::record::record_hash) of its record | the tree |
//! | `t h ‖ height BE ‖ seq BE` | a watch hit waiting to be evaluated from block `height` on: its matched keys ([`crate::watch`]) | the tree |
//! | `t g ‖ seq BE` | [`GcEntry`](crate::queue::GcEntry), with the record's hash | the tree |
//! | `t f ‖ n BE` | [`PendingMatch`](crate::watch::PendingMatch): a written key whose watch matching a pass left unfinished, and where to resume (#29) | the tree |
//! | `t F` | u64 BE: the next `t f` number | the tree |
//! | `t s` | u64 BE: next sequence number | the tree |
//! | `t n` | u64 BE: next delivery number (`deliver_seq`) | the tree |
//! | `t v ‖ fee_payer` | u64 BE: revocation mark ([`crate::control`]) | the tree |
//! | `u r ‖ height BE ‖ seq BE` | [`TimerRecord`](crate::record::TimerRecord): the timer and its listing slots. Key order is FIFO order: these records *are* the due queue ([`crate::queue`]) | its bucket |
//! | `u t ‖ timestamp_ms BE ‖ seq BE` | the record of a queued time timer: the time queue, in (time, scheduling) order | its bucket |
//! | `u l ‖ height BE` / `u m ‖ timestamp_ms BE` | a height / time bucket's stored form: the record hashes of its timers (32 bytes each) while it has never held more than [`SMALL_BUCKET`](crate::bucket::SMALL_BUCKET), else its 2,048-byte lattice hash until it empties (#29) | its bucket |
//! | `u w ‖ seq BE` | the record of a state watch | its `t w` leaf |
//! | `u x ‖ actor ‖ 0/1 ‖ len u16 BE ‖ key ‖ seq BE` | watch index: exact keys (0) and prefixes (1) of `actor` → watch | the records |
//! | `u y ‖ actor` | [`WatchedActor`](crate::watch::WatchedActor): how many entries watch `actor`, and the prefix lengths in use | the records |
//! | `u e ‖ expires_at BE ‖ seq BE` | expiry queue of time timers and watches → their record key ([`crate::expiry`]) | the records |
//! | `u h ‖ seq BE` | height of a watch's waiting hit (`t h`), or its Globalbox key | the hits |
//! | `t x ‖ order u128 BE ‖ due_height BE ‖ target ‖ seq BE` | a Globalbox entry ([`crate::globalbox`]) | the tree |
//! | `t y ‖ !max_fee_per_cycle u64 BE ‖ seq BE` | a Globalbox entry waiting while the lane basefee is above its timer's fee cap (#31), highest cap first ([`crate::globalbox`]) | the tree |
//! | `t k ‖ address` | [`Recent`](crate::fairness::Recent): an actor's or fee payer's fires in the fairness window (#31) | the tree |
//! | `t K` | [`Recent`](crate::fairness::Recent) of every address's fires, and of the addresses that fired, in the window | the tree |
//! | `t a ‖ timestamp_ms BE` | u64 BE height: a block whose Globalbox enqueue left due time timers behind, so that they keep their age when enqueued later ([`crate::globalbox::came_due_at`]) | the tree |
//! | `u X ‖ seq BE` | the record of a height or time timer queued in the Globalbox | its entry |
//! | `u q ‖ seq BE` | that timer's Globalbox key | the entries |
//! | `t L ‖ actor ‖ timer_id` | [`DeadLetter`](crate::dead_letters::DeadLetter): a timer whose retries ran out (#45) | the tree |
//! | `t M ‖ expires_at BE ‖ actor ‖ timer_id` | empty: the dead letters' expiry queue | the tree |
//! | `t N ‖ actor` | [`Held`](crate::dead_letters::Held): how many dead letters `actor` holds, and their bytes | the tree |
//! | `t B ‖ height BE` / `t C ‖ second BE` | [`Slot`](crate::bookings::Slot): the capacity booked in a block / a unix second (#45) | the tree |
//! | `t b ‖ height BE ‖ seq BE` / `t c ‖ timestamp_ms BE ‖ seq BE` | timer id: the booked timers, by due point | the tree |
//! | `t T` | u128 BE: every booked cycle not yet fired | the tree |
//! | `u c` | u64 BE: how many timers are pending (derived: a function of the records) | the records |
//! | `u b ‖ seq BE` | the record of a timer waiting in the GC backlog (out of the due queue) | its GC entry |
//! | `u i ‖ timer_id` | the key of its record (`u r …`, `u t …`, `u w …`, `u b …` or `u X …`): the id → position lookup. A fire leaves it behind, stale — naming a record that is gone, which readers treat as no timer — and pruning deletes it with the fire's block history (#46, [`IdLookup`](crate::record::IdLookup)) | the records |
//! | `u a ‖ actor ‖ chunk BE` / `u A ‖ actor` | chunked ids / head: per-actor listing | the records |
//! | `u p ‖ fee_payer ‖ chunk BE` / `u P ‖ fee_payer` | chunked ids / head: per-fee-payer listing | the records |
//!
//! The per-actor live count (the §4.2 cap) is consensus state in the actor's
//! [`Account`](timerhost_types::keys::Account); the governance status
//! (`g timer_status`) lives with the other governance keys in
//! [`timerhost_types::keys`].

use timerhost_state::StorageError;
use timerhost_types::keys::{TIMERS, TIMERS_DERIVED};
use timerhost_types::{Address, Hash};

/// A two-byte key prefix: namespace and sub-byte.
pub type Prefix = [u8; 2];

/// `t d`: height-bucket leaves.
pub const BUCKET: Prefix = [TIMERS, b'd'];
/// `t e`: time-bucket leaves.
pub const TIME_BUCKET: Prefix = [TIMERS, b'e'];
/// `t w`: state-watch leaves.
pub const WATCH_LEAF: Prefix = [TIMERS, b'w'];
/// `t h`: watch hits waiting to be evaluated.
pub const WATCH_HIT: Prefix = [TIMERS, b'h'];
/// `t x`: the Globalbox, by order key.
pub const GLOBALBOX: Prefix = [TIMERS, b'x'];
/// `t y`: Globalbox entries waiting for the lane basefee to fall (#31).
pub const GLOBALBOX_WAITING: Prefix = [TIMERS, b'y'];
/// `t k`: recent fires per address (#31's fairness weight).
pub const RECENT_FIRES: Prefix = [TIMERS, b'k'];
/// `t K`: recent fires chain-wide.
pub const CHAIN_RECENT_FIRES: Prefix = [TIMERS, b'K'];
/// `t a`: blocks that left due time timers out of the Globalbox, by timestamp.
pub const TIME_DUE_MARK: Prefix = [TIMERS, b'a'];
/// `t g`: the GC backlog.
pub const BACKLOG: Prefix = [TIMERS, b'g'];
/// `t f`: written keys whose watch matching a pass left unfinished (#29).
pub const WATCH_PENDING: Prefix = [TIMERS, b'f'];
/// `t F`: the number of the next `t f` entry.
pub const WATCH_PENDING_NEXT: Prefix = [TIMERS, b'F'];
/// `t s`: the next sequence number.
pub const NEXT_SEQ: Prefix = [TIMERS, b's'];
/// `t n`: the next delivery number (`deliver_seq`).
pub const NEXT_DELIVERY: Prefix = [TIMERS, b'n'];
/// `t v`: revocation marks.
pub const REVOKED: Prefix = [TIMERS, b'v'];
/// `t L`: dead letters, by actor and timer id (#45).
pub const DEAD_LETTER: Prefix = [TIMERS, b'L'];
/// `t M`: the dead letters' expiry queue, by height.
pub const DEAD_LETTER_EXPIRY: Prefix = [TIMERS, b'M'];
/// `t N`: how many dead letters each actor holds.
pub const DEAD_LETTER_COUNT: Prefix = [TIMERS, b'N'];
/// `t B`: capacity booked per height (#45).
pub const BOOKED_HEIGHT: Prefix = [TIMERS, b'B'];
/// `t C`: capacity booked per unix second.
pub const BOOKED_SECOND: Prefix = [TIMERS, b'C'];
/// `t b`: booked height timers, by height and sequence.
pub const BOOKED_HEIGHT_INDEX: Prefix = [TIMERS, b'b'];
/// `t c`: booked time timers, by time and sequence.
pub const BOOKED_TIME_INDEX: Prefix = [TIMERS, b'c'];
/// `t T`: every booked cycle not yet fired.
pub const BOOKED_TOTAL: Prefix = [TIMERS, b'T'];
/// `u r`: records of queued height timers, by position (height, sequence).
pub const RECORD: Prefix = [TIMERS_DERIVED, b'r'];
/// `u t`: records of queued time timers, by position (time, sequence).
pub const TIME_RECORD: Prefix = [TIMERS_DERIVED, b't'];
/// `u w`: state-watch records, by sequence.
pub const WATCH_RECORD: Prefix = [TIMERS_DERIVED, b'w'];
/// `u x`: the watch index.
pub const WATCH_INDEX: Prefix = [TIMERS_DERIVED, b'x'];
/// `u y`: per watched actor, its entry counts.
pub const WATCHED_ACTOR: Prefix = [TIMERS_DERIVED, b'y'];
/// `u e`: the expiry queue of time timers and watches.
pub const EXPIRY: Prefix = [TIMERS_DERIVED, b'e'];
/// `u h`: a watch's waiting hit.
pub const WATCH_HIT_LOOKUP: Prefix = [TIMERS_DERIVED, b'h'];
/// `u X`: records of height and time timers queued in the Globalbox.
pub const GLOBALBOX_RECORD: Prefix = [TIMERS_DERIVED, b'X'];
/// `u q`: a Globalbox timer's order key, by sequence.
pub const GLOBALBOX_LOOKUP: Prefix = [TIMERS_DERIVED, b'q'];
/// `u b`: records of timers in the GC backlog, by sequence.
pub const BACKLOG_RECORD: Prefix = [TIMERS_DERIVED, b'b'];
/// `u i`: timer id → record key (one definition, in the types crate).
pub const ID_LOOKUP: Prefix = timerhost_types::keys::TIMER_ID_LOOKUP;
/// `u l`: stored forms (record hashes or lattice) of height buckets.
pub const LATTICE: Prefix = [TIMERS_DERIVED, b'l'];
/// `u m`: stored forms (record hashes or lattice) of time buckets.
pub const TIME_LATTICE: Prefix = [TIMERS_DERIVED, b'm'];

/// The two due queues: timers due by height (fired at the end of the block)
/// and by time (fired at its start). Both are the same structure — buckets
/// committed as tree leaves over records keyed by position — under
/// different prefixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DueQueue {
    /// Keyed by height.
    Height,
    /// Keyed by unix milliseconds.
    Time,
}

impl DueQueue {
    fn bucket_prefix(self) -> Prefix {
        match self {
            DueQueue::Height => BUCKET,
            DueQueue::Time => TIME_BUCKET,
        }
    }

    /// The prefix of this queue's records.
    pub fn record_prefix(self) -> Prefix {
        match self {
            DueQueue::Height => RECORD,
            DueQueue::Time => TIME_RECORD,
        }
    }

    fn lattice_prefix(self) -> Prefix {
        match self {
            DueQueue::Height => LATTICE,
            DueQueue::Time => TIME_LATTICE,
        }
    }
}

/// A due bucket: the timers of one queue due at the same height or
/// millisecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BucketId {
    /// Which queue.
    pub queue: DueQueue,
    /// The height or unix millisecond.
    pub at: u64,
}

impl BucketId {
    /// The height bucket of `height`.
    pub fn height(height: u64) -> BucketId {
        BucketId {
            queue: DueQueue::Height,
            at: height,
        }
    }

    /// The time bucket of `timestamp_ms`.
    pub fn time(timestamp_ms: u64) -> BucketId {
        BucketId {
            queue: DueQueue::Time,
            at: timestamp_ms,
        }
    }
}
/// `u a` / `u A`: actor index chunks and heads.
pub const ACTOR_CHUNKS: Prefix = [TIMERS_DERIVED, b'a'];
/// See [`ACTOR_CHUNKS`].
pub const ACTOR_HEADS: Prefix = [TIMERS_DERIVED, b'A'];
/// `u p` / `u P`: fee-payer index chunks and heads.
pub const PAYER_CHUNKS: Prefix = [TIMERS_DERIVED, b'p'];
/// See [`PAYER_CHUNKS`].
pub const PAYER_HEADS: Prefix = [TIMERS_DERIVED, b'P'];

fn key(prefix: Prefix, parts: &[&[u8]]) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + parts.iter().map(|p| p.len()).sum::<usize>());
    k.extend_from_slice(&prefix);
    for part in parts {
        k.extend_from_slice(part);
    }
    k
}

/// Key of the record of the timer queued in `bucket` with sequence `seq`.
pub fn record_key(bucket: BucketId, seq: u64) -> Vec<u8> {
    key(
        bucket.queue.record_prefix(),
        &[&bucket.at.to_be_bytes(), &seq.to_be_bytes()],
    )
}

/// The prefix of every record queued in `bucket`.
pub fn records_at(bucket: BucketId) -> Vec<u8> {
    key(bucket.queue.record_prefix(), &[&bucket.at.to_be_bytes()])
}

/// The end of the records of `queue` due at or before `at`.
pub fn records_through(queue: DueQueue, at: u64) -> Vec<u8> {
    match at.checked_add(1) {
        Some(next) => records_at(BucketId { queue, at: next }),
        None => end_of(queue.record_prefix()),
    }
}

/// The range `[start, end)` of the records queued in `bucket`.
pub fn records_range(bucket: BucketId) -> (Vec<u8>, Vec<u8>) {
    (records_at(bucket), records_through(bucket.queue, bucket.at))
}

/// Key of the record of state watch `seq`.
pub fn watch_record_key(seq: u64) -> Vec<u8> {
    key(WATCH_RECORD, &[&seq.to_be_bytes()])
}

/// Key of the tree leaf of state watch `seq`.
pub fn watch_leaf_key(seq: u64) -> Vec<u8> {
    key(WATCH_LEAF, &[&seq.to_be_bytes()])
}

/// The prefix of the index entries of `actor`'s `entry` (exact key or
/// prefix); the watch's sequence number follows.
pub fn watch_index_prefix(actor: &Address, prefix: bool, entry: &[u8]) -> Vec<u8> {
    let len = u16::try_from(entry.len()).expect("watch keys are at most 256 bytes");
    key(
        WATCH_INDEX,
        &[
            actor.as_bytes(),
            &[u8::from(prefix)],
            &len.to_be_bytes(),
            entry,
        ],
    )
}

/// Key of the index entry of watch `seq` for `actor`'s `entry`.
pub fn watch_index_key(actor: &Address, prefix: bool, entry: &[u8], seq: u64) -> Vec<u8> {
    let mut k = watch_index_prefix(actor, prefix, entry);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// Key of `actor`'s watched-entry counts.
pub fn watched_actor_key(actor: &Address) -> Vec<u8> {
    key(WATCHED_ACTOR, &[actor.as_bytes()])
}

/// Key of timer `seq`'s entry in the expiry queue.
pub fn expiry_key(expires_at: u64, seq: u64) -> Vec<u8> {
    key(EXPIRY, &[&expires_at.to_be_bytes(), &seq.to_be_bytes()])
}

/// Key of a watch hit waiting from block `height` on.
pub fn watch_hit_key(height: u64, seq: u64) -> Vec<u8> {
    key(WATCH_HIT, &[&height.to_be_bytes(), &seq.to_be_bytes()])
}

/// Key of the record of timer `seq` while it waits in the Globalbox.
pub fn globalbox_record_key(seq: u64) -> Vec<u8> {
    key(GLOBALBOX_RECORD, &[&seq.to_be_bytes()])
}

/// Key of timer `seq`'s Globalbox order-key lookup.
pub fn globalbox_lookup_key(seq: u64) -> Vec<u8> {
    key(GLOBALBOX_LOOKUP, &[&seq.to_be_bytes()])
}

/// A Globalbox entry's key: its order (see [`crate::globalbox`]), then the
/// comparator's tie-breakers (due height, target, creation order).
pub fn globalbox_key(order: u128, due_height: u64, target: &Address, seq: u64) -> Vec<u8> {
    key(
        GLOBALBOX,
        &[
            &order.to_be_bytes(),
            &due_height.to_be_bytes(),
            target.as_bytes(),
            &seq.to_be_bytes(),
        ],
    )
}

/// The key of a Globalbox entry waiting for the lane basefee to fall to
/// its timer's `max_fee_per_cycle` (#31): highest cap first, then creation
/// order.
pub fn globalbox_waiting_key(max_fee_per_cycle: u64, seq: u64) -> Vec<u8> {
    let mut k = GLOBALBOX_WAITING.to_vec();
    k.extend_from_slice(&(!max_fee_per_cycle).to_be_bytes());
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The fee cap a waiting entry's key was made from.
pub fn waiting_fee_cap(key: &[u8]) -> Option<u64> {
    let bytes: [u8; 8] = key.get(2..10)?.try_into().ok()?;
    Some(!u64::from_be_bytes(bytes))
}

/// The number of pending timers (`u c`, #33).
pub fn pending_count_key() -> Vec<u8> {
    vec![TIMERS_DERIVED, b'c']
}

/// The recent fires of `address` (#31).
pub fn recent_fires_key(address: &Address) -> Vec<u8> {
    [&RECENT_FIRES[..], address.as_bytes()].concat()
}

/// The chain-wide recent fires (#31).
pub fn chain_recent_fires_key() -> Vec<u8> {
    CHAIN_RECENT_FIRES.to_vec()
}

/// Where the sweep of stale fairness counters resumes (#50).
pub fn recent_fires_sweep_key() -> Vec<u8> {
    [&CHAIN_RECENT_FIRES[..], b"sweep"].concat()
}

/// Key of watch `seq`'s waiting-hit lookup.
pub fn watch_hit_lookup_key(seq: u64) -> Vec<u8> {
    key(WATCH_HIT_LOOKUP, &[&seq.to_be_bytes()])
}

/// Key of pending watch match number `n` (`t f`).
pub fn watch_pending_key(n: u64) -> Vec<u8> {
    key(WATCH_PENDING, &[&n.to_be_bytes()])
}

/// Key of the next pending watch match number (`t F`).
pub fn watch_pending_next_key() -> Vec<u8> {
    key(WATCH_PENDING_NEXT, &[])
}

/// Key of the record of a backlogged timer with sequence `seq`.
pub fn backlog_record_key(seq: u64) -> Vec<u8> {
    key(BACKLOG_RECORD, &[&seq.to_be_bytes()])
}

/// Key of the id → record-key lookup of `timer_id`.
pub fn id_key(timer_id: &Hash) -> Vec<u8> {
    timerhost_types::keys::timer_id_lookup_key(&timer_id.0)
}

/// Key of the leaf of `bucket`.
pub fn bucket_key(bucket: BucketId) -> Vec<u8> {
    key(bucket.queue.bucket_prefix(), &[&bucket.at.to_be_bytes()])
}

/// The end of the bucket leaves of `queue` at or before `at`.
pub fn buckets_through(queue: DueQueue, at: u64) -> Vec<u8> {
    match at.checked_add(1) {
        Some(next) => bucket_key(BucketId { queue, at: next }),
        None => end_of(queue.bucket_prefix()),
    }
}

/// Key of the stored form of `bucket` (its record hashes or its lattice).
pub fn lattice_key(bucket: BucketId) -> Vec<u8> {
    key(bucket.queue.lattice_prefix(), &[&bucket.at.to_be_bytes()])
}

/// Key of the next sequence number.
pub fn next_seq_key() -> Vec<u8> {
    key(NEXT_SEQ, &[])
}

/// Key of the next delivery number.
pub fn next_delivery_key() -> Vec<u8> {
    key(NEXT_DELIVERY, &[])
}

/// Key of the mark of a block (at `timestamp_ms`) whose Globalbox enqueue
/// left due time timers behind.
pub fn time_due_mark_key(timestamp_ms: u64) -> Vec<u8> {
    key(TIME_DUE_MARK, &[&timestamp_ms.to_be_bytes()])
}

/// Key of the GC backlog entry with sequence `seq`.
pub fn backlog_key(seq: u64) -> Vec<u8> {
    key(BACKLOG, &[&seq.to_be_bytes()])
}

/// The prefix of every GC backlog key.
pub fn backlog_prefix() -> Vec<u8> {
    key(BACKLOG, &[])
}

/// Key of `fee_payer`'s revocation mark.
pub fn revoked_key(fee_payer: &Address) -> Vec<u8> {
    key(REVOKED, &[fee_payer.as_bytes()])
}

/// Key of an index group's head (`heads` is the index's head prefix).
pub fn index_head_key(heads: Prefix, group: &[u8]) -> Vec<u8> {
    key(heads, &[group])
}

/// Key of chunk `chunk` of an index group (`chunks`: the index's prefix).
pub fn index_chunk_key(chunks: Prefix, group: &[u8], chunk: u64) -> Vec<u8> {
    key(chunks, &[group, &chunk.to_be_bytes()])
}

/// A key above every key with prefix `prefix`.
pub fn end_of(prefix: Prefix) -> Vec<u8> {
    vec![prefix[0], prefix[1] + 1]
}

/// A timer key that does not hold what it should.
///
/// Why no actor reaches it (#28): every key of this module is written by
/// the timer store alone — actor storage lives under its own namespace
/// ([`timerhost_types::keys::storage`]), and what actors choose (payloads,
/// handlers, escrow ints, balances) is validated before it is stored or
/// judged as a removal or a failed fire when it is read. A missing record
/// behind an index entry, a malformed bucket or a record that does not
/// decode therefore means a broken database or a bug in this crate, and
/// stopping the block is right: a node must not commit state it cannot
/// read. Every caller of this and [`missing`] relies on that.
/// `key` in hex, as errors show it.
pub fn hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// A malformed entry at `key`.
pub fn corrupt(what: &'static str, key: &[u8], reason: &str) -> StorageError {
    StorageError::Corrupt {
        what,
        key: key.iter().map(|b| format!("{b:02x}")).collect(),
        reason: reason.into(),
    }
}

/// An index or backlog entry that names a timer with no record.
pub fn missing(what: &'static str, timer_id: &Hash) -> StorageError {
    corrupt(what, &id_key(timer_id), "points to a missing timer")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_keys_are_distinct_and_ranges_cover_their_keys() {
        let committed = [
            BUCKET,
            TIME_BUCKET,
            WATCH_LEAF,
            WATCH_HIT,
            GLOBALBOX,
            BACKLOG,
            WATCH_PENDING,
            WATCH_PENDING_NEXT,
            NEXT_SEQ,
            NEXT_DELIVERY,
            REVOKED,
        ];
        let derived = [
            RECORD,
            TIME_RECORD,
            TIME_LATTICE,
            WATCH_RECORD,
            WATCH_INDEX,
            WATCHED_ACTOR,
            EXPIRY,
            WATCH_HIT_LOOKUP,
            GLOBALBOX_RECORD,
            GLOBALBOX_LOOKUP,
            BACKLOG_RECORD,
            ID_LOOKUP,
            LATTICE,
            ACTOR_CHUNKS,
            ACTOR_HEADS,
            PAYER_CHUNKS,
            PAYER_HEADS,
        ];
        let unique: std::collections::BTreeSet<Prefix> =
            committed.iter().chain(&derived).copied().collect();
        assert_eq!(unique.len(), committed.len() + derived.len());
        use timerhost_types::keys::is_committed;
        assert!(committed.iter().all(|p| is_committed(p)));
        assert!(derived.iter().all(|p| !is_committed(p)));
        for queue in [DueQueue::Height, DueQueue::Time] {
            let at = |a| BucketId { queue, at: a };
            let k = record_key(at(7), u64::MAX);
            assert!(k.starts_with(&records_at(at(7))) && k < records_through(queue, 7));
            assert!(
                record_key(at(7), u64::MAX) < record_key(at(8), 0),
                "FIFO: height or time, then sequence"
            );
            assert!(records_through(queue, u64::MAX) > record_key(at(u64::MAX), u64::MAX));
        }
        // An exact key's index entries never share a prefix with a longer key's.
        let a = Address([1; 20]);
        assert!(
            !watch_index_key(&a, false, b"ab", 0).starts_with(&watch_index_prefix(&a, false, b"a"))
        );
        assert!(index_chunk_key(ACTOR_CHUNKS, &[0xff; 20], u64::MAX) < end_of(ACTOR_CHUNKS));
        assert!(backlog_key(u64::MAX).starts_with(&backlog_prefix()));
    }
}
