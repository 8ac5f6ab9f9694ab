//! The audit of derived timer state against what the state root commits
//! to (#44).
//!
//! The records of pending timers and their indexes are derived state
//! (`u …`, [`crate::keys`]): the root commits to them through the due-bucket
//! digests, the watch leaves, the GC backlog and the Globalbox entries, not
//! one leaf per key. A node that restores a state snapshot checks the tree
//! leaves chunk by chunk against the root (`timerhost_state::restore`), and
//! then everything derived at once with [`audit`]:
//!
//! - every due bucket: its records fold to the leaf's digest and
//!   reservation, its stored form to the same digest, and no record sits
//!   outside a bucket with a leaf;
//! - every watch record hashes to its `t w` leaf; every backlog record is
//!   named by a GC entry; every Globalbox record hashes to its entry;
//! - every record's id lookup points at it and there is no other lookup;
//!   the pending count counts them;
//! - every record sits in its actor's and its fee payer's index at its
//!   slots, the indexes hold nothing else, and each group's head counts its
//!   entries and hands out a slot above every one in use;
//! - every expiry entry names an existing record with that expiry.
//!
//! A finding names the derived key that is wrong, so the caller can tell
//! which chunk (and which peer) it came from. What the audit cannot check
//! is history no record carries: the slot numbers themselves (positions in
//! insertion order, restarted when a group empties) — a peer that renumbers
//! a group consistently changes the order `th_getTimers` lists it in, not
//! any root.

use std::collections::HashSet;

use timerhost_state::StateRead;
use timerhost_types::Hash;

use crate::bucket::{self, BucketFinding};
use crate::error::Result;
use crate::globalbox;
use crate::index::CHUNK;
use crate::keys::{self, BucketId, DueQueue, Prefix};
use crate::queue::GcEntry;
use crate::record::{record_hash, TimerRecord};

/// Entries read per scan.
const PAGE: usize = 1_024;

/// A derived key that does not agree with the committed state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The derived key found wrong, or where the keys that may be start.
    pub key: Vec<u8>,
    /// When one of several keys is wrong (a bucket's records: its lattice
    /// cannot tell which): the end (exclusive) of the range from `key`.
    pub range_end: Option<Vec<u8>>,
    /// When two keys disagree and either may be the wrong one (an index
    /// entry and the record it lists): the other.
    pub or_else: Option<Vec<u8>>,
    /// What is wrong.
    pub reason: String,
}

/// What a clean audit counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuditSummary {
    /// Timer and watch records.
    pub records: u64,
    /// Due buckets.
    pub buckets: u64,
}

type Outcome = std::result::Result<(), Finding>;

fn finding(key: &[u8], reason: impl Into<String>) -> Finding {
    Finding {
        key: key.to_vec(),
        range_end: None,
        or_else: None,
        reason: reason.into(),
    }
}

/// Calls `f` on every entry in `[start, end)`, a page at a time, until it
/// reports a finding.
fn each(
    state: &(impl StateRead + ?Sized),
    start: &[u8],
    end: &[u8],
    mut f: impl FnMut(&[u8], &[u8]) -> Result<Outcome>,
) -> Result<Outcome> {
    let mut from = start.to_vec();
    loop {
        let page = state.scan(&from, Some(end), PAGE)?;
        for (k, v) in &page {
            if let Err(found) = f(k, v)? {
                return Ok(Err(found));
            }
        }
        match page.last() {
            Some((k, _)) if page.len() == PAGE => {
                from = k.clone();
                from.push(0);
            }
            _ => return Ok(Ok(())),
        }
    }
}

fn range(prefix: Prefix) -> (Vec<u8>, Vec<u8>) {
    (prefix.to_vec(), keys::end_of(prefix))
}

fn decode_record(k: &[u8], v: &[u8]) -> std::result::Result<TimerRecord, Finding> {
    timerhost_types::decode::<TimerRecord>(v)
        .map_err(|e| finding(k, format!("the record does not decode: {e}")))
}

/// Checks every derived timer key of `state` against the committed ones.
/// `Ok(Err(finding))` names the first key found wrong; `Err` is a failure
/// to read.
pub fn audit(
    state: &(impl StateRead + ?Sized),
) -> Result<std::result::Result<AuditSummary, Finding>> {
    let mut summary = AuditSummary::default();
    macro_rules! check {
        ($e:expr) => {
            if let Err(found) = $e? {
                return Ok(Err(found));
            }
        };
    }
    for queue in [DueQueue::Height, DueQueue::Time] {
        check!(audit_buckets(state, queue, &mut summary));
    }
    let mut listed = Listings::default();
    check!(audit_records(state, &mut summary, &mut listed));
    for (index, mut expected) in [
        (Index::Actor, std::mem::take(&mut listed.actor)),
        (Index::Payer, std::mem::take(&mut listed.payer)),
    ] {
        expected.sort_unstable();
        check!(audit_index(state, index, &expected));
    }
    check!(audit_expiry(state));
    let count_key = keys::pending_count_key();
    let counted = crate::counters::pending_count(state)?;
    if counted != summary.records {
        return Ok(Err(finding(
            &count_key,
            format!(
                "counts {counted} pending timers, {} records are stored",
                summary.records
            ),
        )));
    }
    Ok(Ok(summary))
}

fn audit_buckets(
    state: &(impl StateRead + ?Sized),
    queue: DueQueue,
    summary: &mut AuditSummary,
) -> Result<Outcome> {
    let mut live = 0u64;
    let mut from = 0u64;
    loop {
        let leaves = bucket::leaves_from(state, queue, from, PAGE)?;
        for (id, leaf) in &leaves {
            match bucket::audit(state, *id, leaf)? {
                None => {}
                Some(BucketFinding::StoredForm(reason)) => {
                    return Ok(Err(finding(&keys::lattice_key(*id), reason)));
                }
                Some(BucketFinding::Records(reason)) => {
                    let (start, end) = keys::records_range(*id);
                    return Ok(Err(Finding {
                        key: start,
                        range_end: Some(end),
                        or_else: None,
                        reason,
                    }));
                }
            }
            live = live.saturating_add(leaf.live);
            summary.buckets += 1;
        }
        match leaves.last() {
            Some((id, _)) if leaves.len() == PAGE && id.at < u64::MAX => from = id.at + 1,
            _ => break,
        }
    }
    // Every record counted by a leaf was found under it; any other record
    // sits in a bucket without a leaf.
    let (start, end) = range(queue.record_prefix());
    let mut stored = 0u64;
    let found = each(state, &start, &end, |k, _| {
        stored += 1;
        if stored > live {
            let at = k
                .get(2..10)
                .map(|b| u64::from_be_bytes(b.try_into().expect("8 bytes")))
                .unwrap_or(0);
            if bucket::leaf(state, BucketId { queue, at })?.is_none() {
                return Ok(Err(finding(
                    k,
                    "a record in a bucket the state does not commit to",
                )));
            }
        }
        Ok(Ok(()))
    })?;
    if found.is_err() {
        return Ok(found);
    }
    if stored != live {
        return Ok(Err(finding(
            &start,
            format!("the buckets count {live} timers, {stored} records are queued"),
        )));
    }
    Ok(Ok(()))
}

/// Where a family of records is committed.
#[derive(Clone, Copy)]
enum Family {
    /// In a due bucket (checked by [`audit_buckets`]).
    Due,
    /// By its `t w` leaf.
    Watch,
    /// By a GC backlog entry.
    Backlog,
    /// By its Globalbox entry.
    Globalbox,
}

/// Where every record says it is listed: `(group, slot, timer id, record
/// key)`, one vector per index, compared with the index chunks in one
/// ordered walk (a lookup per listed timer was 4 reads each, 4 million for a
/// million timers).
#[derive(Default)]
struct Listings {
    actor: Vec<Listed>,
    payer: Vec<Listed>,
}

type Listed = ([u8; GROUP], u64, Hash, Vec<u8>);

fn audit_records(
    state: &(impl StateRead + ?Sized),
    summary: &mut AuditSummary,
    listed: &mut Listings,
) -> Result<Outcome> {
    let mut backlog_hashes = HashSet::new();
    let (start, end) = range(keys::BACKLOG);
    each(state, &start, &end, |k, v| {
        match timerhost_types::decode::<GcEntry>(v) {
            Ok(entry) => {
                backlog_hashes.insert(entry.record_hash);
                Ok(Ok(()))
            }
            Err(e) => Ok(Err(finding(k, format!("a GC entry does not decode: {e}")))),
        }
    })?
    .ok();
    let families = [
        (keys::RECORD, Family::Due),
        (keys::TIME_RECORD, Family::Due),
        (keys::WATCH_RECORD, Family::Watch),
        (keys::BACKLOG_RECORD, Family::Backlog),
        (keys::GLOBALBOX_RECORD, Family::Globalbox),
    ];
    let mut records = 0u64;
    for (prefix, family) in families {
        let (start, end) = range(prefix);
        let found = each(state, &start, &end, |k, v| {
            records += 1;
            let record = match decode_record(k, v) {
                Ok(r) => r,
                Err(f) => return Ok(Err(f)),
            };
            let hash = record_hash(&record.timer);
            let committed = match family {
                Family::Due => true,
                Family::Watch => {
                    let leaf = state.get(&keys::watch_leaf_key(record.timer.seq))?;
                    leaf.as_deref() == Some(hash.as_bytes())
                }
                Family::Backlog => backlog_hashes.contains(&hash),
                Family::Globalbox => globalbox_commits(state, record.timer.seq, &hash)?,
            };
            if !committed {
                return Ok(Err(finding(k, "no committed entry has this record's hash")));
            }
            let lookup = state.get(&keys::id_key(&record.timer.timer_id))?;
            if lookup.as_deref() != Some(k) {
                return Ok(Err(finding(
                    k,
                    "the timer's id lookup does not point at its record",
                )));
            }
            let id = record.timer.timer_id;
            listed.actor.push((
                record.timer.actor_address.0,
                record.slots.actor,
                id,
                k.to_vec(),
            ));
            listed
                .payer
                .push((record.timer.fee_payer.0, record.slots.payer, id, k.to_vec()));
            Ok(Ok(()))
        })?;
        if found.is_err() {
            return Ok(found);
        }
    }
    // A committed watch with no record.
    let (start, end) = range(keys::WATCH_LEAF);
    let found = each(state, &start, &end, |k, _| {
        let seq = u64::from_be_bytes(k[2..10].try_into().unwrap_or([0; 8]));
        if state.get(&keys::watch_record_key(seq))?.is_none() {
            return Ok(Err(finding(
                &keys::watch_record_key(seq),
                "a committed watch has no record",
            )));
        }
        Ok(Ok(()))
    })?;
    if found.is_err() {
        return Ok(found);
    }
    // Every record's own lookup points at it (checked above); a lookup
    // whose record is gone is a fired timer's, left stale on purpose
    // (`record::IdLookup::LeaveStale`). So exactly as many lookups as
    // records may name a record that exists: one more would be a second id
    // for some record.
    let (start, end) = range(keys::ID_LOOKUP);
    let mut live = 0u64;
    each(state, &start, &end, |_, record_key| {
        if state.get_head(record_key, 0)?.is_some() {
            live += 1;
        }
        Ok(Ok(()))
    })?
    .ok();
    if live != records {
        return Ok(Err(finding(
            &start,
            format!("{live} id lookups name a record, for {records} records"),
        )));
    }
    summary.records = records;
    Ok(Ok(()))
}

/// Does the Globalbox entry of timer `seq` commit to `hash`?
fn globalbox_commits(state: &(impl StateRead + ?Sized), seq: u64, hash: &Hash) -> Result<bool> {
    let Some(entry_key) = state.get(&keys::globalbox_lookup_key(seq))? else {
        return Ok(false);
    };
    if !entry_key.starts_with(&keys::GLOBALBOX) && !entry_key.starts_with(&keys::GLOBALBOX_WAITING)
    {
        return Ok(false);
    }
    let Some(bytes) = state.get(&entry_key)? else {
        return Ok(false);
    };
    Ok(timerhost_types::decode::<globalbox::Entry>(&bytes)
        .map(|e| e.record_hash.as_ref() == Some(hash))
        .unwrap_or(false))
}

#[derive(Clone, Copy)]
enum Index {
    Actor,
    Payer,
}

impl Index {
    fn prefixes(self) -> (Prefix, Prefix) {
        match self {
            Index::Actor => (keys::ACTOR_CHUNKS, keys::ACTOR_HEADS),
            Index::Payer => (keys::PAYER_CHUNKS, keys::PAYER_HEADS),
        }
    }
}

/// Group bytes: an address.
const GROUP: usize = 20;
const ENTRY: usize = 8 + 32;

fn audit_index(
    state: &(impl StateRead + ?Sized),
    index: Index,
    expected: &[Listed],
) -> Result<Outcome> {
    let (chunks, heads) = index.prefixes();
    let (start, end) = range(chunks);
    // The next record the walk expects to list, in (group, slot) order.
    let mut next = 0usize;
    // The group being walked: its bytes, entries and highest slot.
    let mut group: Option<(Vec<u8>, u64, u64)> = None;
    let close = |group: &Option<(Vec<u8>, u64, u64)>| -> Result<Outcome> {
        let Some((g, count, max_slot)) = group else {
            return Ok(Ok(()));
        };
        let head_key = keys::index_head_key(heads, g);
        let head = state.get(&head_key)?.unwrap_or_default();
        let (live, next_slot) = match head.len() {
            16 => (
                u64::from_be_bytes(head[..8].try_into().expect("8 bytes")),
                u64::from_be_bytes(head[8..].try_into().expect("8 bytes")),
            ),
            _ => return Ok(Err(finding(&head_key, "a group with entries has no head"))),
        };
        if live != *count || next_slot <= *max_slot {
            return Ok(Err(finding(
                &head_key,
                format!("the head counts {live} (next slot {next_slot}), the group holds {count} up to slot {max_slot}"),
            )));
        }
        Ok(Ok(()))
    };
    let found = each(state, &start, &end, |k, v| {
        if k.len() != 2 + GROUP + 8 || v.is_empty() || v.len() % ENTRY != 0 {
            return Ok(Err(finding(k, "a malformed index chunk")));
        }
        let g = &k[2..2 + GROUP];
        let chunk = u64::from_be_bytes(k[2 + GROUP..].try_into().expect("8 bytes"));
        if group.as_ref().map(|(cur, _, _)| cur.as_slice()) != Some(g) {
            if let Err(f) = close(&group)? {
                return Ok(Err(f));
            }
            group = Some((g.to_vec(), 0, 0));
        }
        for raw in v.chunks_exact(ENTRY) {
            let slot = u64::from_be_bytes(raw[..8].try_into().expect("8 bytes"));
            let id = Hash::from_slice(&raw[8..]).expect("32 bytes");
            if slot / CHUNK != chunk {
                return Ok(Err(finding(
                    k,
                    format!("slot {slot} is not in chunk {chunk}"),
                )));
            }
            match expected.get(next) {
                Some((eg, es, eid, _)) if eg.as_slice() == g && *es == slot && *eid == id => {}
                other => {
                    // Either this entry or the record expected here is wrong.
                    let mut found = finding(
                        k,
                        format!("timer {id} is listed at slot {slot}, which no record holds"),
                    );
                    found.or_else = other.map(|(_, _, _, record_key)| record_key.clone());
                    return Ok(Err(found));
                }
            }
            next += 1;
            let (_, count, max_slot) = group.as_mut().expect("set above");
            *count += 1;
            *max_slot = (*max_slot).max(slot);
        }
        Ok(Ok(()))
    })?;
    if found.is_err() {
        return Ok(found);
    }
    if let Err(f) = close(&group)? {
        return Ok(Err(f));
    }
    if let Some((_, slot, id, record_key)) = expected.get(next) {
        return Ok(Err(finding(
            record_key,
            format!("timer {id} is not listed at its slot {slot}"),
        )));
    }
    // A head whose group has no entries.
    let (start, end) = range(heads);
    each(state, &start, &end, |k, _| {
        let group = &k[2..];
        let first = keys::index_chunk_key(chunks, group, 0);
        let mut last = keys::index_chunk_key(chunks, group, u64::MAX);
        last.push(0);
        if state.scan_keys(&first, Some(&last), 1)?.is_empty() {
            return Ok(Err(finding(k, "a head of a group with no entries")));
        }
        Ok(Ok(()))
    })
}

fn audit_expiry(state: &(impl StateRead + ?Sized)) -> Result<Outcome> {
    let (start, end) = range(keys::EXPIRY);
    each(state, &start, &end, |k, v| {
        let Some(record) = state.get(v)? else {
            return Ok(Err(finding(k, "an expiry entry names no record")));
        };
        let record = match decode_record(v, &record) {
            Ok(r) => r,
            Err(f) => return Ok(Err(f)),
        };
        if k != keys::expiry_key(record.timer.expires_at, record.timer.seq).as_slice() {
            return Ok(Err(finding(k, "an expiry entry disagrees with its record")));
        }
        Ok(Ok(()))
    })
}

/// Checks the bookings' books against the booked timers (reads them all:
/// for tests and audits): every index entry names a pending booked timer
/// at its place, every slot holds exactly what its timers hold, and the
/// horizon total is their sum. `Err` names the first disagreement.
pub fn bookings(state: &(impl StateRead + ?Sized)) -> Result<std::result::Result<(), String>> {
    use std::collections::BTreeMap;
    let mut held: BTreeMap<Vec<u8>, crate::bookings::Slot> = BTreeMap::new();
    let mut total = 0u128;
    for prefix in [
        crate::keys::BOOKED_HEIGHT_INDEX,
        crate::keys::BOOKED_TIME_INDEX,
    ] {
        let end = [prefix[0], prefix[1] + 1];
        for (k, v) in state.scan(&prefix, Some(&end), usize::MAX)? {
            let id =
                Hash(v.as_slice().try_into().map_err(|_| {
                    crate::keys::corrupt("booked timer index", &k, "not a timer id")
                })?);
            let Some(timer) = crate::store::get(state, &id)? else {
                return Ok(Err(format!(
                    "booking index entry {} names no pending timer",
                    id
                )));
            };
            if !timer.booked || crate::bookings::index_key(&timer) != k {
                return Ok(Err(format!(
                    "booking index entry {id} does not match its timer"
                )));
            }
            let cycles = crate::bookings::cycles_of(timer.gas_limit_per_fire);
            let slot = held
                .entry(crate::bookings::Place::of(&timer).key())
                .or_default();
            slot.cycles += cycles;
            slot.fires += 1;
            total += u128::from(cycles);
        }
    }
    for prefix in [crate::keys::BOOKED_HEIGHT, crate::keys::BOOKED_SECOND] {
        let end = [prefix[0], prefix[1] + 1];
        for (k, v) in state.scan(&prefix, Some(&end), usize::MAX)? {
            let stored = timerhost_types::decode::<crate::bookings::Slot>(&v)
                .map_err(|e| crate::keys::corrupt("booked slot", &k, &e.to_string()))?;
            if held.remove(&k) != Some(stored) {
                return Ok(Err(format!(
                    "booked slot {} holds {stored:?}, not its timers' sum",
                    crate::keys::hex(&k)
                )));
            }
        }
    }
    if let Some((k, slot)) = held.into_iter().next() {
        return Ok(Err(format!(
            "booked timers at {} hold {slot:?} with no slot",
            crate::keys::hex(&k)
        )));
    }
    let stored = crate::bookings::total_booked(state)?;
    if stored != total {
        return Ok(Err(format!(
            "the horizon total is {stored}, the bookings hold {total}"
        )));
    }
    Ok(Ok(()))
}
