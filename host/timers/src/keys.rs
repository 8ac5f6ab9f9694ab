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
//! | `t d ‖ height BE` | due bucket: `live` u64 BE ‖ blake3 of its lattice hash ([`crate::bucket`]) | the tree |
//! | `t g ‖ seq BE` | [`GcEntry`](crate::queue::GcEntry), with the record's hash | the tree |
//! | `t s` | u64 BE: next sequence number | the tree |
//! | `t v ‖ fee_payer` | u64 BE: revocation mark ([`crate::control`]) | the tree |
//! | `u r ‖ height BE ‖ seq BE` | [`TimerRecord`](crate::record::TimerRecord): the timer and its listing slots. Key order is FIFO order: these records *are* the due queue ([`crate::queue`]) | its bucket |
//! | `u b ‖ seq BE` | the record of a timer waiting in the GC backlog (out of the due queue) | its GC entry |
//! | `u i ‖ timer_id` | the key of its record (`u r …` or `u b …`): the id → position lookup | the records |
//! | `u l ‖ height BE` | the bucket's lattice hash, 2,048 bytes, kept only above [`SMALL_BUCKET`](crate::bucket::SMALL_BUCKET) timers | its bucket |
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

/// `t d`: due-bucket leaves.
pub const BUCKET: Prefix = [TIMERS, b'd'];
/// `t g`: the GC backlog.
pub const BACKLOG: Prefix = [TIMERS, b'g'];
/// `t s`: the next sequence number.
pub const NEXT_SEQ: Prefix = [TIMERS, b's'];
/// `t v`: revocation marks.
pub const REVOKED: Prefix = [TIMERS, b'v'];
/// `u r`: records of queued timers, by position (height, sequence).
pub const RECORD: Prefix = [TIMERS_DERIVED, b'r'];
/// `u b`: records of timers in the GC backlog, by sequence.
pub const BACKLOG_RECORD: Prefix = [TIMERS_DERIVED, b'b'];
/// `u i`: timer id → record key.
pub const ID_LOOKUP: Prefix = [TIMERS_DERIVED, b'i'];
/// `u l`: lattice hashes of large buckets.
pub const LATTICE: Prefix = [TIMERS_DERIVED, b'l'];
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

/// Key of the record of the timer queued at `height` with sequence `seq`.
pub fn record_key(height: u64, seq: u64) -> Vec<u8> {
    key(RECORD, &[&height.to_be_bytes(), &seq.to_be_bytes()])
}

/// The prefix of every queued record at `height`.
pub fn records_at(height: u64) -> Vec<u8> {
    key(RECORD, &[&height.to_be_bytes()])
}

/// The range `[start, end)` of the records queued at `height`.
pub fn records_range(height: u64) -> (Vec<u8>, Vec<u8>) {
    let end = match height.checked_add(1) {
        Some(next) => records_at(next),
        None => end_of(RECORD),
    };
    (records_at(height), end)
}

/// Key of the record of a backlogged timer with sequence `seq`.
pub fn backlog_record_key(seq: u64) -> Vec<u8> {
    key(BACKLOG_RECORD, &[&seq.to_be_bytes()])
}

/// Key of the id → record-key lookup of `timer_id`.
pub fn id_key(timer_id: &Hash) -> Vec<u8> {
    key(ID_LOOKUP, &[timer_id.as_bytes()])
}

/// Key of the due bucket of `height`.
pub fn bucket_key(height: u64) -> Vec<u8> {
    key(BUCKET, &[&height.to_be_bytes()])
}

/// Key of the stored lattice hash of the bucket of `height`.
pub fn lattice_key(height: u64) -> Vec<u8> {
    key(LATTICE, &[&height.to_be_bytes()])
}

/// Key of the next sequence number.
pub fn next_seq_key() -> Vec<u8> {
    key(NEXT_SEQ, &[])
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
        let committed = [BUCKET, BACKLOG, NEXT_SEQ, REVOKED];
        let derived = [
            RECORD,
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
        let k = record_key(7, u64::MAX);
        assert!(k.starts_with(&records_at(7)) && k < end_of(RECORD));
        assert!(
            record_key(7, u64::MAX) < record_key(8, 0),
            "FIFO: height, then sequence"
        );
        assert!(index_chunk_key(ACTOR_CHUNKS, &[0xff; 20], u64::MAX) < end_of(ACTOR_CHUNKS));
        assert!(backlog_key(u64::MAX).starts_with(&backlog_prefix()));
    }
}
