//! Every key of the timer store, and how a malformed one is reported — one
//! module, so the layout is read and changed in one place. All consensus
//! state lives under the `t` namespace ([`TIMERS`]):
//!
//! | key | value | purpose |
//! |---|---|---|
//! | `t r ‖ timer_id` | [`TimerRecord`](crate::store::TimerRecord) | the canonical record and its index slots |
//! | `t h ‖ height BE ‖ chunk BE` / `t H ‖ height BE` | chunked ids / head | height index, FIFO within a height ([`crate::queue`], [`crate::index`]) |
//! | `t g ‖ seq BE` | [`GcEntry`](crate::queue::GcEntry) | GC backlog: classified for removal, budget ran out ([`crate::queue`]) |
//! | `t a ‖ actor ‖ chunk BE` / `t A ‖ actor` | chunked ids / head | per-actor index (listing in scheduling order; its live count is the §4.2 cap) |
//! | `t p ‖ fee_payer ‖ chunk BE` / `t P ‖ fee_payer` | chunked ids / head | per-fee-payer index |
//! | `t s` | u64 BE | next sequence number |
//! | `t v ‖ fee_payer` | u64 BE | revocation mark ([`crate::control`]) |
//!
//! The governance status (`g timer_status`) lives with the other governance
//! keys in [`timerhost_types::keys`].

use timerhost_state::StorageError;
use timerhost_types::keys::TIMERS;
use timerhost_types::{Address, Hash};

/// `t r`: timer records.
pub const RECORD: u8 = b'r';
/// `t s`: the next sequence number.
pub const NEXT_SEQ: u8 = b's';
/// `t g`: the GC backlog.
pub const BACKLOG: u8 = b'g';
/// `t v`: revocation marks.
pub const REVOKED: u8 = b'v';
/// `t h` / `t H`: height index chunks and heads.
pub const HEIGHT_CHUNKS: u8 = b'h';
/// See [`HEIGHT_CHUNKS`].
pub const HEIGHT_HEADS: u8 = b'H';
/// `t a` / `t A`: actor index chunks and heads.
pub const ACTOR_CHUNKS: u8 = b'a';
/// See [`ACTOR_CHUNKS`].
pub const ACTOR_HEADS: u8 = b'A';
/// `t p` / `t P`: fee-payer index chunks and heads.
pub const PAYER_CHUNKS: u8 = b'p';
/// See [`PAYER_CHUNKS`].
pub const PAYER_HEADS: u8 = b'P';

fn key(sub: u8, parts: &[&[u8]]) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + parts.iter().map(|p| p.len()).sum::<usize>());
    k.extend_from_slice(&[TIMERS, sub]);
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
    (key(RECORD, &[]), key(RECORD + 1, &[]))
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

/// Key of an index group's head (`heads` is the index's head sub-byte).
pub fn index_head_key(heads: u8, group: &[u8]) -> Vec<u8> {
    key(heads, &[group])
}

/// Key of chunk `chunk` of an index group (`chunks`: the index's sub-byte).
pub fn index_chunk_key(chunks: u8, group: &[u8], chunk: u64) -> Vec<u8> {
    key(chunks, &[group, &chunk.to_be_bytes()])
}

/// A key above every key with sub-byte `sub`.
pub fn end_of(sub: u8) -> Vec<u8> {
    key(sub + 1, &[])
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
        let subs = [
            RECORD,
            NEXT_SEQ,
            BACKLOG,
            REVOKED,
            HEIGHT_CHUNKS,
            HEIGHT_HEADS,
            ACTOR_CHUNKS,
            ACTOR_HEADS,
            PAYER_CHUNKS,
            PAYER_HEADS,
        ];
        let unique: std::collections::BTreeSet<u8> = subs.iter().copied().collect();
        assert_eq!(unique.len(), subs.len());
        let (start, end) = record_range();
        let k = record_key(&Hash([0xff; 32]));
        assert!(start <= k && k < end);
        assert!(
            index_chunk_key(HEIGHT_CHUNKS, &7u64.to_be_bytes(), u64::MAX) < end_of(HEIGHT_CHUNKS)
        );
        assert!(backlog_key(u64::MAX).starts_with(&backlog_prefix()));
    }
}
