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
//! | `u r ‖ timer_id` | [`TimerRecord`](crate::record::TimerRecord): the timer and its index slots | its bucket (or its GC entry) |
//! | `u h ‖ height BE ‖ chunk BE` / `u H ‖ height BE` | chunked ids / head: the height index, FIFO within a height ([`crate::index`]) | its bucket |
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
/// `u r`: timer records.
pub const RECORD: Prefix = [TIMERS_DERIVED, b'r'];
/// `u l`: lattice hashes of large buckets.
pub const LATTICE: Prefix = [TIMERS_DERIVED, b'l'];
/// `u h` / `u H`: height index chunks and heads.
pub const HEIGHT_CHUNKS: Prefix = [TIMERS_DERIVED, b'h'];
/// See [`HEIGHT_CHUNKS`].
pub const HEIGHT_HEADS: Prefix = [TIMERS_DERIVED, b'H'];
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

/// Key of a timer record.
pub fn record_key(timer_id: &Hash) -> Vec<u8> {
    key(RECORD, &[timer_id.as_bytes()])
}

/// The range `[start, end)` of every record key.
pub fn record_range() -> (Vec<u8>, Vec<u8>) {
    (key(RECORD, &[]), end_of(RECORD))
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
    corrupt(what, &record_key(timer_id), "points to a missing timer")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_keys_are_distinct_and_ranges_cover_their_keys() {
        let committed = [BUCKET, BACKLOG, NEXT_SEQ, REVOKED];
        let derived = [
            RECORD,
            LATTICE,
            HEIGHT_CHUNKS,
            HEIGHT_HEADS,
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
        let (start, end) = record_range();
        let k = record_key(&Hash([0xff; 32]));
        assert!(start <= k && k < end);
        assert!(
            index_chunk_key(HEIGHT_CHUNKS, &7u64.to_be_bytes(), u64::MAX) < end_of(HEIGHT_CHUNKS)
        );
        assert!(backlog_key(u64::MAX).starts_with(&backlog_prefix()));
    }
}
