//! The timer store (CIP-5 §3.2): timer records, the sequence counter and
//! the indexes they sit in (the key layout is [`crate::keys`]).
//!
//! Every timer holds a deposit in [`TIMER_DEPOSIT_ESCROW`](timerhost_types::TIMER_DEPOSIT_ESCROW); [`remove_deferred`],
//! the one way out of the store, returns it to the fee payer, so no removal
//! path (fire, expiry, insufficient funds, revocation, cancel, governance,
//! shutdown) can keep it.
//!
//! The sequence number is global and strictly increasing; it orders the GC
//! backlog. The height index orders timers by height and then by insertion
//! (its slots) — the FIFO of §3.2. The three indexes pack 16 timers to a key
//! ([`crate::index`] says why).

use timerhost_state::accounts;
use timerhost_state::{Overlay, StateRead};
use timerhost_types::timer::TIMER_INDEX_ENTRY_BYTES;
use timerhost_types::{Address, Hash, Timer};

use crate::bucket;
pub use crate::counters::pending_count;
use crate::counters::{add_pending, read_u64};
use crate::error::Result;
use crate::index::{BY_ACTOR, BY_PAYER};
use crate::keys::{self, corrupt};
use crate::queue::{self, Queued};
use crate::record::{self, decode_record, record_hash, IdLookup};
pub use crate::record::{get_record, IndexSlots, TimerRecord};
use crate::removal::Removals;
use crate::{expiry, watch};

/// Reads a timer by id.
pub fn get(state: &(impl StateRead + ?Sized), timer_id: &Hash) -> Result<Option<Timer>> {
    Ok(get_record(state, timer_id)?.map(|r| r.timer))
}

/// Live timers held by `actor` (the §4.2 cap): consensus state kept in its
/// account.
pub fn live_count(state: &(impl StateRead + ?Sized), actor: &Address) -> Result<u32> {
    Ok(accounts::load(state, actor)?.live_timers)
}

/// The sequence number the next timer will get.
pub fn peek_seq(state: &(impl StateRead + ?Sized)) -> Result<u64> {
    read_u64(state, &keys::next_seq_key())
}

/// Consumes sequence number `seq` (read with [`peek_seq`]).
pub fn take_seq(state: &mut Overlay<'_>, seq: u64) {
    state.put(keys::next_seq_key(), (seq + 1).to_be_bytes().to_vec());
}

/// Bytes `timer` adds to state: its record (key and canonical encoding,
/// listing slots included), its id lookup (key and value), one entry in
/// each of the two listing indexes, for a time timer or a watch its expiry
/// entry ([`crate::expiry`]), and for a watch its leaf and index entries
/// ([`crate::watch::registration_bytes`]). The deposit is `deposit_per_byte` times
/// this; scheduling charges it in cells. (Index chunk keys, group heads,
/// bucket leaves and their stored forms — at most 512 bytes of record
/// hashes or a 2,048-byte lattice per bucket — are shared and not counted
/// per timer.)
pub fn state_bytes(timer: &Timer) -> u64 {
    // `TimerRecord` = version byte ‖ borsh(timer) ‖ two u64 slots; counted
    // without building one (a payload can be 1 MiB).
    const SLOTS_BYTES: usize = 2 * 8;
    let timer_bytes = borsh::object_length(timer).expect("an in-memory timer always encodes");
    let record_key = record::record_key(timer, Queued::Due).len();
    let record = 1 + timer_bytes + SLOTS_BYTES;
    let id_lookup = keys::id_key(&timer.timer_id).len() + record_key;
    let watch = watch::watch_of(timer).map_or(0, watch::registration_bytes);
    (record_key + record + id_lookup) as u64
        + 2 * TIMER_INDEX_ENTRY_BYTES
        + watch
        + expiry::entry_bytes(timer)
}

/// Inserts a new timer into the store, every index, its due bucket and its
/// actor's live count.
pub fn insert(state: &mut Overlay<'_>, timer: &Timer) -> Result<()> {
    let slots = IndexSlots {
        actor: BY_ACTOR.append(state, timer.actor_address.as_bytes(), &timer.timer_id)?,
        payer: BY_PAYER.append(state, timer.fee_payer.as_bytes(), &timer.timer_id)?,
    };
    // Writing the record at its position is what queues it.
    record::put_record(
        state,
        &TimerRecord {
            timer: timer.clone(),
            slots,
        },
        Queued::Due,
    );
    expiry::register(state, timer);
    match watch::watch_of(timer) {
        Some(w) => watch::register(state, timer, w)?,
        None => {
            let mut bucket = bucket::Changes::default();
            bucket.add(timer, record_hash(timer));
            bucket.apply(state)?;
        }
    }
    let mut account = accounts::load(state, &timer.actor_address)?;
    account.live_timers = account.live_timers.checked_add(1).ok_or_else(|| {
        corrupt(
            "account",
            timer.actor_address.as_bytes(),
            "more live timers than a u32",
        )
    })?;
    accounts::store(state, &timer.actor_address, &account);
    add_pending(state, 1, 0)
}

/// How many fires have been delivered since genesis (the next
/// `deliver_seq`): an O(1) read for the dashboard (#33).
pub fn deliveries_total(state: &(impl StateRead + ?Sized)) -> Result<u64> {
    read_u64(state, &keys::next_delivery_key())
}

/// Rewrites a queued timer's record, `before` as read with [`get_record`]
/// and `after` the same timer in the same place with other fields changed
/// (its TTL extended, a watch's fire count), and what commits to it: its
/// bucket's leaf, or a watch's own leaf and expiry entry.
pub fn update(state: &mut Overlay<'_>, before: &Timer, after: &TimerRecord) -> Result<()> {
    debug_assert_eq!(
        record::record_key(before, Queued::Due),
        record::record_key(&after.timer, Queued::Due)
    );
    state.put_encoded(record::record_key(&after.timer, Queued::Due), after);
    expiry::moved(state, before, &after.timer);
    if watch::watch_of(before).is_some() {
        watch::write_leaf(state, &after.timer);
        return Ok(());
    }
    let mut bucket = bucket::Changes::default();
    bucket.remove(before, record_hash(before));
    bucket.add(&after.timer, record_hash(&after.timer));
    bucket.apply(state)
}

/// Removes a timer, read with [`get_record`], from the store, every index
/// and its bucket, wherever it is queued.
pub fn remove(state: &mut Overlay<'_>, record: &TimerRecord) -> Result<()> {
    let queued = record::queued(state, &record.timer.timer_id)?.unwrap_or(Queued::Due);
    let mut removals = Removals::default();
    remove_deferred(state, record, queued, IdLookup::Delete, &mut removals)?;
    removals.apply(state)
}

/// Removes a timer queued at `queued` and refunds its deposit to its fee
/// payer: the record and the backlog entry go now, the index entries are
/// added to `removals` (applied by the caller); the id lookup goes too
/// unless `lookup` leaves it stale (a fire, [`IdLookup`]).
pub fn remove_deferred(
    state: &mut Overlay<'_>,
    record: &TimerRecord,
    queued: Queued,
    lookup: IdLookup,
    removals: &mut Removals,
) -> Result<()> {
    let timer = &record.timer;
    crate::deposit::give_back(state, timer, timer.deposit)?;
    // #45: whatever removes a booked timer — its fire, a cancel, a
    // shutdown — frees its capacity (the booking fee stays paid).
    if timer.booked {
        crate::bookings::release(state, timer)?;
    }
    record::delete_record(state, timer, queued, lookup);
    queue::dequeue(state, record, queued, removals)?;
    removals
        .index
        .add(BY_ACTOR, timer.actor_address.as_bytes(), record.slots.actor);
    removals
        .index
        .add(BY_PAYER, timer.fee_payer.as_bytes(), record.slots.payer);
    *removals.actors.entry(timer.actor_address).or_default() += 1;
    Ok(())
}

/// The sum of the live timers' and the dead letters' deposits (at most
/// `limit` timers read): what [`TIMER_DEPOSIT_ESCROW`](timerhost_types::TIMER_DEPOSIT_ESCROW) must hold. For tests
/// and audits; its cost grows with the number of pending timers.
pub fn deposits_held(state: &(impl StateRead + ?Sized), limit: usize) -> Result<u128> {
    let timers: u128 = all(state, limit)?.iter().map(|t| t.deposit).sum();
    Ok(timers + crate::dead_letters::deposits_held(state)?)
}

fn records_of(
    state: &(impl StateRead + ?Sized),
    ids: impl IntoIterator<Item = Hash>,
    what: &'static str,
) -> Result<Vec<Timer>> {
    ids.into_iter()
        .map(|id| get(state, &id)?.ok_or_else(|| keys::missing(what, &id)))
        .collect()
}

/// Every timer (at most `limit`): the GC backlog's, then the time queue's,
/// the height queue's (each in queue order) and the state watches — the
/// unfiltered listing of dev tooling. A validator never needs it, and its
/// cost grows with the number of pending timers.
pub fn all(state: &(impl StateRead + ?Sized), limit: usize) -> Result<Vec<Timer>> {
    let mut out = Vec::new();
    for prefix in [
        keys::BACKLOG_RECORD,
        keys::GLOBALBOX_RECORD,
        keys::TIME_RECORD,
        keys::RECORD,
        keys::WATCH_RECORD,
    ] {
        let left = limit - out.len();
        for (k, v) in state.scan(&prefix, Some(&keys::end_of(prefix)), left)? {
            out.push(decode_record(&k, &v)?.timer);
        }
    }
    Ok(out)
}

/// Where a page of timers resumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageCursor {
    /// The next slot of an actor's or fee payer's listing.
    Slot(u64),
    /// The next record key of the unfiltered listing.
    Key(Vec<u8>),
}

/// One page of at most `limit` timers (#33, the dashboard's table): of
/// `actor`, else of `fee_payer` (their listing indexes, in scheduling
/// order), else of every timer in the order of [`all`]; from `cursor`.
/// Returns the page and where the next one starts. Reads `limit` records
/// whatever the number pending.
pub fn page(
    state: &(impl StateRead + ?Sized),
    actor: Option<&Address>,
    fee_payer: Option<&Address>,
    cursor: Option<PageCursor>,
    limit: usize,
) -> Result<(Vec<Timer>, Option<PageCursor>)> {
    let indexed = match (actor, fee_payer) {
        (Some(a), _) => Some((BY_ACTOR, a)),
        (None, Some(p)) => Some((BY_PAYER, p)),
        (None, None) => None,
    };
    if let Some((index, group)) = indexed {
        let from = match cursor {
            Some(PageCursor::Slot(s)) => s,
            _ => 0,
        };
        let entries = index.entries(state, group.as_bytes(), from, limit + 1)?;
        let next = entries.get(limit).map(|e| PageCursor::Slot(e.slot));
        let timers = records_of(
            state,
            entries.into_iter().take(limit).map(|e| e.timer_id),
            "timer listing index",
        )?;
        return Ok((timers, next));
    }
    // In key order, so that a cursor key says which prefixes are done.
    let mut prefixes = [
        keys::BACKLOG_RECORD,
        keys::GLOBALBOX_RECORD,
        keys::TIME_RECORD,
        keys::RECORD,
        keys::WATCH_RECORD,
    ];
    prefixes.sort();
    let from = match cursor {
        Some(PageCursor::Key(k)) => Some(k),
        _ => None,
    };
    let mut out = Vec::new();
    for prefix in prefixes {
        let end = keys::end_of(prefix);
        let start = match &from {
            Some(k) if k.as_slice() >= end.as_slice() => continue,
            Some(k) if k.starts_with(&prefix) => k.clone(),
            _ => prefix.to_vec(),
        };
        for (k, v) in state.scan(&start, Some(&end), limit + 1 - out.len())? {
            if out.len() == limit {
                return Ok((out, Some(PageCursor::Key(k))));
            }
            out.push(decode_record(&k, &v)?.timer);
        }
    }
    Ok((out, None))
}

/// Live timers of `actor`, in scheduling order (at most `limit`).
pub fn by_actor(
    state: &(impl StateRead + ?Sized),
    actor: &Address,
    limit: usize,
) -> Result<Vec<Timer>> {
    let entries = BY_ACTOR.entries(state, actor.as_bytes(), 0, limit)?;
    records_of(
        state,
        entries.into_iter().map(|e| e.timer_id),
        "timer actor index",
    )
}

/// Live timers paid by `fee_payer`, in scheduling order (at most `limit`).
pub fn by_fee_payer(
    state: &(impl StateRead + ?Sized),
    fee_payer: &Address,
    limit: usize,
) -> Result<Vec<Timer>> {
    let entries = BY_PAYER.entries(state, fee_payer.as_bytes(), 0, limit)?;
    records_of(
        state,
        entries.into_iter().map(|e| e.timer_id),
        "timer fee-payer index",
    )
}

/// Timers queued to fire at exactly `height`, in FIFO order (at most `limit`).
pub fn by_height(
    state: &(impl StateRead + ?Sized),
    height: u64,
    limit: usize,
) -> Result<Vec<Timer>> {
    Ok(
        queue::in_bucket(state, keys::BucketId::height(height), limit)?
            .into_iter()
            .map(|r| r.timer)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::EmptyState;

    /// The deposit and the schedule's cells are computed from `state_bytes`
    /// without storing the record: it must equal what is stored.
    #[test]
    fn state_bytes_are_what_insert_writes_for_this_timer_alone() {
        let empty = EmptyState;
        let watch = timerhost_types::Watch {
            actor: Address([5; 20]),
            keys: vec![
                timerhost_types::WatchKey::parse("price*"),
                timerhost_types::WatchKey::parse("volume"),
            ],
            fires: 0,
        };
        let kinds = [
            timerhost_types::TimerKind::Height,
            timerhost_types::TimerKind::Time {
                timestamp_ms: 1_767_225_600_000,
            },
            timerhost_types::TimerKind::State(watch),
        ];
        // Keys shared with other timers (index chunks and heads, bucket
        // leaves and their stored forms — a list of at most 16 record
        // hashes or a lattice —, per-actor watch counts, accounts) are not
        // the timer's.
        let shared = [
            keys::ACTOR_CHUNKS,
            keys::ACTOR_HEADS,
            keys::PAYER_CHUNKS,
            keys::PAYER_HEADS,
            keys::BUCKET,
            keys::TIME_BUCKET,
            keys::LATTICE,
            keys::TIME_LATTICE,
            keys::WATCHED_ACTOR,
            // The pending-timer counter (#33) is one key for all timers.
            [timerhost_types::keys::TIMERS_DERIVED, b'c'],
        ];
        for kind in kinds {
            for (payload, handler) in [(vec![], "handle_timer"), (vec![9u8; 1000], "tick")] {
                let mut state = Overlay::new(&empty);
                let timer = Timer {
                    actor_address: Address([1; 20]),
                    height: 7,
                    payload,
                    timer_id: Hash([2; 32]),
                    handler: handler.into(),
                    fee_payer: Address([3; 20]),
                    gas_limit_per_fire: 10,
                    expires_at: 9,
                    seq: 4,
                    deposit: 123,
                    bid: 0,
                    max_fee_per_cycle: 0,
                    kind: kind.clone(),
                    escrow_key: None,
                    booked: false,
                    retry: None,
                };
                insert(&mut state, &timer).unwrap();
                let own: usize = state
                    .changes()
                    .iter()
                    .filter(|(k, _)| {
                        k[0] != timerhost_types::keys::ACCOUNT
                            && !shared.iter().any(|p| k.starts_with(p))
                    })
                    .map(|(k, v)| k.len() + v.as_ref().map_or(0, Vec::len))
                    .sum();
                assert_eq!(
                    state_bytes(&timer),
                    own as u64 + 2 * TIMER_INDEX_ENTRY_BYTES,
                    "{}",
                    kind.name()
                );
            }
        }
    }
}
