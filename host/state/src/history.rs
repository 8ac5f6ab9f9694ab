//! How a block's receipts and events are laid out in the backend, and the
//! queries over them (the `R`, `V`, `X` and `E` namespaces of
//! [`crate::namespaces`]).
//!
//! A block's receipts are one record without their events (`R ‖ height`);
//! the events are kept apart, in the block's order, in chunks of
//! [`EVENTS_PER_CHUNK`] (`V ‖ height ‖ chunk`). Both are stored
//! LZ4-compressed since store format 13 ([`crate::compressed`]: a fire
//! block's events were 12 MB of a 17 MB batch). Reading one event then
//! decodes one chunk, not the block: a transaction that schedules 100,000
//! timers emits 100,000 events, and the dashboard's views of one timer or
//! of an actor's latest events read a few of them (#33: 388 ms → well under
//! a millisecond with 1,000,000 pending timers).
//!
//! Three indexes point at events by their position in the block's order
//! (a big-endian u32, so a posting list is four bytes per event):
//! - `E n ‖ len ‖ name ‖ height` and `E a ‖ address ‖ height`: one posting
//!   list per (name, block) and (emitter, block), not one entry per event —
//!   a block of 20,000 timer fires emits 20,000 `TimerFired` events, and one
//!   index write per event was a sixth of that block's sled writes;
//! - `E t ‖ timer id[..8] ‖ height ‖ position`: every event whose data
//!   names a `timer_id` — but the fires of height and time timers — so a
//!   timer's life is found without reading its actor's other events;
//! - `E f ‖ height`: the fires of height and time timers in that block, one
//!   sorted list of `(timer id[..8] ‖ position)` per block. A fire block
//!   holds up to tens of thousands of fires, and one key per fire cost 12%
//!   of the fire path (sled's cost is per key: #34); a fire is found from
//!   its timer's `TimerScheduled` instead, which says when it was due: the
//!   search reads the fire lists from the due block on (a carried-over
//!   timer fires a few blocks later), binary-searching each.

use std::collections::BTreeMap;

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_types::encoding::{self, Canonical};
use timerhost_types::located;
use timerhost_types::{Address, Event, Hash, Receipt, Value};

use crate::backend::{KvBackend, WriteBatch};
use crate::compressed;
use crate::error::{corrupt, Result};
use crate::namespaces::{ns_key, EVENT_CHUNKS, EVENT_INDEX, HEADERS, RECEIPTS, TX_INDEX};

/// Events per stored chunk: small enough that reading one event is cheap,
/// large enough that a block of 20,000 fires adds under a hundred keys.
pub const EVENTS_PER_CHUNK: usize = 256;

/// Bytes of a timer id its index keeps (the query compares the whole id).
const TIMER_ID_PREFIX: usize = 8;

/// Bytes of one entry of a block's fire list: timer id prefix ‖ position.
const FIRE_ENTRY: usize = TIMER_ID_PREFIX + 4;

/// Index keys [`timer_life`] reads beyond its limit: room for other timers
/// sharing the id's first eight bytes (found by grinding ids, if at all).
pub const TIMER_INDEX_SLACK_KEYS: usize = 64;

/// Most fire blocks a search for one timer's fire reads past its due block.
pub const FIRE_SEARCH_BLOCKS: usize = 2_048;

/// Where a transaction's receipt lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct TxLocation {
    /// Block height.
    pub height: u64,
    /// Index into that block's receipts (user transactions first, then deferred).
    pub index: u32,
}

/// An event with its position in the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    /// Block height.
    pub height: u64,
    /// Receipt index within the block.
    pub receipt_index: u32,
    /// Event index within the receipt.
    pub event_index: u32,
    /// Hash of the transaction that emitted it.
    pub tx_hash: Hash,
    /// The event.
    pub event: Event,
}

/// Which events to return.
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    /// Only events with this name.
    pub name: Option<String>,
    /// Only events emitted by this address.
    pub emitter: Option<Address>,
    /// Lowest height (inclusive).
    pub from_height: Option<u64>,
    /// Highest height (inclusive).
    pub to_height: Option<u64>,
    /// Most events to return (0 = no limit).
    pub limit: usize,
}

/// A block's receipts as stored: each without its events, and how many it had.
#[derive(BorshSerialize, BorshDeserialize)]
struct StoredReceipts {
    receipts: Vec<Receipt>,
    event_counts: Vec<u32>,
}

impl Canonical for StoredReceipts {
    const NAME: &'static str = "block receipts";
}

/// [`EVENTS_PER_CHUNK`] consecutive events of a block.
#[derive(BorshSerialize, BorshDeserialize)]
struct EventChunk(Vec<Event>);

impl Canonical for EventChunk {
    const NAME: &'static str = "event chunk";
}

fn chunk_key(height: u64, chunk: u32) -> Vec<u8> {
    let mut k = ns_key(EVENT_CHUNKS, &height.to_be_bytes());
    k.extend_from_slice(&chunk.to_be_bytes());
    k
}

/// `E n ‖ len ‖ name`: the by-name event index of `name`, which commit and
/// query must build alike. Names longer than 255 bytes are indexed by their
/// first 255 (the query then filters on the whole name).
fn events_by_name_prefix(name: &str) -> Vec<u8> {
    let name = &name.as_bytes()[..name.len().min(255)];
    let mut prefix = vec![EVENT_INDEX, b'n', name.len() as u8];
    prefix.extend_from_slice(name);
    prefix
}

/// `E a ‖ address`: the by-emitter event index of `emitter`.
fn events_by_emitter_prefix(emitter: &Address) -> Vec<u8> {
    let mut prefix = vec![EVENT_INDEX, b'a'];
    prefix.extend_from_slice(emitter.as_bytes());
    prefix
}

/// `E t ‖ timer id[..8]`: the by-timer event index.
fn events_by_timer_prefix(timer_id: &[u8]) -> Vec<u8> {
    let mut prefix = vec![EVENT_INDEX, b't'];
    prefix.extend_from_slice(&timer_id[..TIMER_ID_PREFIX]);
    prefix
}

/// `E f ‖ height`: the fire list of block `height`.
fn fires_key(height: u64) -> Vec<u8> {
    let mut key = vec![EVENT_INDEX, b'f'];
    key.extend_from_slice(&height.to_be_bytes());
    key
}

/// The timer id an event's data names, if it names one.
fn timer_id_of(event: &Event) -> Option<&[u8]> {
    // Only the protocol's events make a timer's history (#50): an actor
    // naming someone's timer in its own event changes nothing there.
    if !event.is_protocol() {
        return None;
    }
    match event.data.get("timer_id") {
        Some(Value::Bytes(id)) if id.len() == 32 => Some(id),
        _ => None,
    }
}

/// Is this the fire of a height or time timer (listed per block, found
/// through when it was due)?
fn is_scheduled_fire(event: &Event) -> bool {
    event.name == "TimerFired"
        && matches!(event.data.get("kind"), Some(Value::Str(k)) if k == "height" || k == "time")
}

/// Adds block `height`'s receipts, events and indexes to `batch`.
pub(crate) fn stage(batch: &mut WriteBatch, height: u64, receipts: &[Receipt]) {
    let height_be = height.to_be_bytes();
    let mut postings: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut stripped = Vec::with_capacity(receipts.len());
    let mut event_counts = Vec::with_capacity(receipts.len());
    let mut chunk: Vec<u8> = vec![0; 4];
    let mut chunk_len = 0u32;
    let mut chunk_index = 0u32;
    let mut position = 0u32;
    let mut fires: Vec<[u8; FIRE_ENTRY]> = Vec::new();
    // The transaction index is written apart (`crate::tx_index`).
    for receipt in receipts {
        for event in &receipt.events {
            let pos = position.to_be_bytes();
            let mut by_name = events_by_name_prefix(&event.name);
            by_name.extend_from_slice(&height_be);
            postings.entry(by_name).or_default().extend_from_slice(&pos);
            let mut by_emitter = events_by_emitter_prefix(&event.emitter);
            by_emitter.extend_from_slice(&height_be);
            postings
                .entry(by_emitter)
                .or_default()
                .extend_from_slice(&pos);
            if let Some(id) = timer_id_of(event) {
                if is_scheduled_fire(event) {
                    let mut entry = [0u8; FIRE_ENTRY];
                    entry[..TIMER_ID_PREFIX].copy_from_slice(&id[..TIMER_ID_PREFIX]);
                    entry[TIMER_ID_PREFIX..].copy_from_slice(&pos);
                    fires.push(entry);
                } else {
                    let mut key = events_by_timer_prefix(id);
                    key.extend_from_slice(&height_be);
                    key.extend_from_slice(&pos);
                    batch.put(key, Vec::new());
                }
            }
            // The chunk's borsh encoding built in place (a count, then
            // each event): the events are not cloned to be stored.
            event
                .serialize(&mut chunk)
                .expect("writing to a Vec<u8> cannot fail");
            chunk_len += 1;
            if chunk_len == EVENTS_PER_CHUNK as u32 {
                chunk[..4].copy_from_slice(&chunk_len.to_le_bytes());
                batch.put(
                    chunk_key(height, chunk_index),
                    compressed::encode_body::<EventChunk>(&chunk),
                );
                chunk.truncate(4);
                chunk_len = 0;
                chunk_index += 1;
            }
            position += 1;
        }
        event_counts.push(receipt.events.len() as u32);
        stripped.push(Receipt {
            tx_hash: receipt.tx_hash,
            sender: receipt.sender,
            source: receipt.source.clone(),
            status: receipt.status,
            error: receipt.error.clone(),
            cycles_used: receipt.cycles_used,
            cells_used: receipt.cells_used,
            fee_paid: receipt.fee_paid,
            burned: receipt.burned,
            tip: receipt.tip,
            events: Vec::new(),
            return_value: receipt.return_value.clone(),
            created_actor: receipt.created_actor,
        });
    }
    if chunk_len > 0 {
        chunk[..4].copy_from_slice(&chunk_len.to_le_bytes());
        batch.put(
            chunk_key(height, chunk_index),
            compressed::encode_body::<EventChunk>(&chunk),
        );
    }
    batch.put(
        ns_key(RECEIPTS, &height_be),
        compressed::encode(&StoredReceipts {
            receipts: stripped,
            event_counts,
        }),
    );
    for (key, positions) in postings {
        batch.put(key, positions);
    }
    if !fires.is_empty() {
        fires.sort_unstable();
        batch.put(fires_key(height), fires.concat());
    }
}

/// Adds to `batch` the deletion of every entry [`stage`] wrote for block
/// `height` — its receipts, event chunks, transaction index entries and
/// event postings — found by reading the block's receipts and events back.
/// Returns how many entries it deletes, and adds to `fired` the ids of the
/// height and time timers the block fired (whose id lookups the fires left
/// stale). (Pruning, `crate::pruning`.)
pub(crate) fn unstage(
    backend: &dyn KvBackend,
    batch: &mut WriteBatch,
    height: u64,
    fired: &mut Vec<[u8; 32]>,
) -> Result<usize> {
    let height_be = height.to_be_bytes();
    let mut block = BlockEvents::open(backend, height)?;
    let mut keys: std::collections::BTreeSet<Vec<u8>> = std::collections::BTreeSet::new();
    for receipt in &block.receipts {
        // A transaction hash belongs to one block; delete its entry only if
        // it still points here.
        if indexed_location(backend, &receipt.tx_hash)?.is_some_and(|loc| loc.height == height) {
            keys.insert(ns_key(TX_INDEX, receipt.tx_hash.as_bytes()));
        }
    }
    for position in 0..block.event_total() {
        let record = block.event(position)?;
        let event = &record.event;
        let mut by_name = events_by_name_prefix(&event.name);
        by_name.extend_from_slice(&height_be);
        keys.insert(by_name);
        let mut by_emitter = events_by_emitter_prefix(&event.emitter);
        by_emitter.extend_from_slice(&height_be);
        keys.insert(by_emitter);
        if let Some(id) = timer_id_of(event) {
            if is_scheduled_fire(event) {
                fired.extend(<[u8; 32]>::try_from(id).ok());
            } else {
                let mut key = events_by_timer_prefix(id);
                key.extend_from_slice(&height_be);
                key.extend_from_slice(&position.to_be_bytes());
                keys.insert(key);
            }
        }
    }
    let chunks = block.event_total().div_ceil(EVENTS_PER_CHUNK as u32);
    for chunk in 0..chunks {
        keys.insert(chunk_key(height, chunk));
    }
    keys.insert(fires_key(height));
    keys.insert(ns_key(RECEIPTS, &height_be));
    let deleted = keys.len();
    for key in keys {
        batch.delete(key);
    }
    Ok(deleted)
}

fn get_decoded<T: Canonical>(backend: &dyn KvBackend, key: &[u8]) -> Result<Option<T>> {
    get_with(backend, key, |bytes| {
        encoding::decode(bytes).map_err(|e| e.to_string())
    })
}

/// [`get_decoded`] of a record stored compressed (or stored before
/// compression: [`compressed::decode`] reads both).
fn get_stored<T: Canonical>(backend: &dyn KvBackend, key: &[u8]) -> Result<Option<T>> {
    get_with(backend, key, compressed::decode)
}

/// The record under `key`, read by `decode`; a failure is a corrupt `T`.
fn get_with<T: Canonical>(
    backend: &dyn KvBackend,
    key: &[u8],
    decode: impl FnOnce(&[u8]) -> std::result::Result<T, String>,
) -> Result<Option<T>> {
    match backend.get(key)? {
        None => Ok(None),
        Some(bytes) => decode(&bytes)
            .map(Some)
            .map_err(|e| corrupt(T::NAME, key, e)),
    }
}

/// One block's receipts and events, read as needed: the receipts record
/// once, and one chunk of events at a time.
struct BlockEvents<'a> {
    backend: &'a dyn KvBackend,
    height: u64,
    receipts: Vec<Receipt>,
    /// `starts[i]`: position of receipt i's first event; one past the end last.
    starts: Vec<u32>,
    chunk: Option<(u32, Vec<Event>)>,
}

impl<'a> BlockEvents<'a> {
    fn open(backend: &'a dyn KvBackend, height: u64) -> Result<Self> {
        let stored =
            get_stored::<StoredReceipts>(backend, &ns_key(RECEIPTS, &height.to_be_bytes()))?
                .unwrap_or(StoredReceipts {
                    receipts: Vec::new(),
                    event_counts: Vec::new(),
                });
        if stored.event_counts.len() != stored.receipts.len() {
            return Err(corrupt(
                "block receipts",
                &ns_key(RECEIPTS, &height.to_be_bytes()),
                "event counts do not match the receipts",
            ));
        }
        let mut starts = Vec::with_capacity(stored.receipts.len() + 1);
        let mut at = 0u32;
        starts.push(0);
        for n in &stored.event_counts {
            at = at.saturating_add(*n);
            starts.push(at);
        }
        Ok(Self {
            backend,
            height,
            receipts: stored.receipts,
            starts,
            chunk: None,
        })
    }

    fn event_total(&self) -> u32 {
        *self.starts.last().expect("starts has a final entry")
    }

    /// The event at `position` in the block's order.
    fn event(&mut self, position: u32) -> Result<EventRecord> {
        let key = || chunk_key(self.height, position / EVENTS_PER_CHUNK as u32);
        if position >= self.event_total() {
            return Err(corrupt(
                "event index",
                &key(),
                "points past the block's events",
            ));
        }
        let chunk_index = position / EVENTS_PER_CHUNK as u32;
        if self.chunk.as_ref().map(|(i, _)| *i) != Some(chunk_index) {
            let chunk = get_stored::<EventChunk>(self.backend, &key())?
                .ok_or_else(|| corrupt("event chunk", &key(), "missing"))?;
            self.chunk = Some((chunk_index, chunk.0));
        }
        let (_, events) = self.chunk.as_ref().expect("loaded above");
        let event = events
            .get(position as usize % EVENTS_PER_CHUNK)
            .ok_or_else(|| corrupt("event chunk", &key(), "shorter than the receipts say"))?
            .clone();
        // The receipt whose range holds `position`.
        let ri = self.starts.partition_point(|s| *s <= position) - 1;
        Ok(EventRecord {
            height: self.height,
            receipt_index: ri as u32,
            event_index: position - self.starts[ri],
            tx_hash: self.receipts[ri].tx_hash,
            event,
        })
    }

    /// The events of receipts `range`, in order.
    fn events_of(&mut self, first: u32, end: u32) -> Result<Vec<Event>> {
        (first..end)
            .map(|p| self.event(p).map(|r| r.event))
            .collect()
    }
}

/// The receipts of block `height` with their events (empty if none).
pub(crate) fn receipts(backend: &dyn KvBackend, height: u64) -> Result<Vec<Receipt>> {
    let block = BlockEvents::open(backend, height)?;
    let start = chunk_key(height, 0);
    let end = ns_key(EVENT_CHUNKS, &(height.saturating_add(1)).to_be_bytes());
    let mut events = Vec::with_capacity(block.event_total() as usize);
    for (key, bytes) in backend.scan(&start, Some(&end), usize::MAX)? {
        let chunk: EventChunk =
            compressed::decode(&bytes).map_err(|e| corrupt(EventChunk::NAME, &key, e))?;
        events.extend(chunk.0);
    }
    if events.len() != block.event_total() as usize {
        return Err(corrupt(
            "event chunk",
            &start,
            "the block's chunks hold another number of events than its receipts",
        ));
    }
    let mut events = events.into_iter();
    let mut out = block.receipts;
    for (ri, receipt) in out.iter_mut().enumerate() {
        let n = (block.starts[ri + 1] - block.starts[ri]) as usize;
        receipt.events = events.by_ref().take(n).collect();
    }
    Ok(out)
}

/// The receipt of `tx_hash` with its place: through its index entry, or
/// at the place a located hash names (#46) — the block's receipts record
/// read once for both the check and the receipt.
pub(crate) fn receipt_of(
    backend: &dyn KvBackend,
    tx_hash: &Hash,
    pending: Option<TxLocation>,
) -> Result<Option<(TxLocation, Receipt)>> {
    // A pending entry (`crate::tx_index`) may name a block not written yet.
    let indexed = match pending {
        Some(_) => None,
        None => indexed_location(backend, tx_hash)?,
    };
    let loc = pending.or(indexed).unwrap_or_else(|| {
        let (height, index) = located::named_place(tx_hash);
        TxLocation { height, index }
    });
    let mut block = BlockEvents::open(backend, loc.height)?;
    let i = loc.index as usize;
    match block.receipts.get(i) {
        Some(r) if r.tx_hash == *tx_hash => {}
        // A located or pending place that misses is an unknown hash (or
        // one not committed yet); an index entry that misses is a corrupt
        // store.
        _ if indexed.is_none() => return Ok(None),
        _ => {
            return Err(corrupt(
                "receipt",
                tx_hash.as_bytes(),
                "tx index points past the block's receipts",
            ))
        }
    }
    let events = block.events_of(block.starts[i], block.starts[i + 1])?;
    let mut receipt = block.receipts.swap_remove(i);
    receipt.events = events;
    Ok(Some((loc, receipt)))
}

/// The transaction hashes of block `height`'s receipts, in order (empty if
/// none are kept).
pub(crate) fn receipt_hashes(backend: &dyn KvBackend, height: u64) -> Result<Vec<Hash>> {
    let block = BlockEvents::open(backend, height)?;
    Ok(block.receipts.iter().map(|r| r.tx_hash).collect())
}

/// The index entry of `tx_hash`, if one was written.
fn indexed_location(backend: &dyn KvBackend, tx_hash: &Hash) -> Result<Option<TxLocation>> {
    let key = ns_key(TX_INDEX, tx_hash.as_bytes());
    match backend.get(&key)? {
        None => Ok(None),
        Some(bytes) => encoding::decode_raw("tx location", &bytes)
            .map(Some)
            .map_err(|e| corrupt("tx location", &key, e)),
    }
}

fn height_in(key: &[u8], at: usize) -> Result<u64> {
    key.get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| corrupt("event index", key, "bad height length"))
}

/// Events matching `filter`, in chain order, up to the head `head`.
#[cfg(test)]
pub(crate) fn events(
    backend: &dyn KvBackend,
    head: u64,
    filter: &EventFilter,
) -> Result<Vec<EventRecord>> {
    Ok(events_within(backend, head, filter, 0)?.events)
}

/// What [`events_within`] found, and where its read budget stopped it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventsPage {
    /// The matching events, in chain order.
    pub events: Vec<EventRecord>,
    /// The first height not examined, when the read budget ran out before
    /// the range's end and before `limit` matches (`None`: the range was
    /// examined whole, or the page is full).
    pub resume_from: Option<u64>,
}

/// [`events`] reading at most about `max_reads` entries (blocks opened,
/// index entries and events decoded; 0: no bound). The budget is checked
/// between blocks, so a block is always examined whole (bounded by one
/// block's events) and `resume_from` continues exactly after it.
pub(crate) fn events_within(
    backend: &dyn KvBackend,
    head: u64,
    filter: &EventFilter,
    max_reads: usize,
) -> Result<EventsPage> {
    let from = filter.from_height.unwrap_or(0);
    let to = filter.to_height.unwrap_or(head).min(head);
    let limit = if filter.limit == 0 {
        usize::MAX
    } else {
        filter.limit
    };
    let budget = if max_reads == 0 {
        usize::MAX
    } else {
        max_reads
    };
    let mut page = EventsPage::default();
    if from > to {
        return Ok(page);
    }
    let mut reads = 0usize;
    let matches = |e: &Event| {
        filter.name.as_ref().is_none_or(|n| *n == e.name)
            && filter.emitter.is_none_or(|a| a == e.emitter)
    };
    // With a name or emitter, walk that index; otherwise walk the blocks.
    let index_prefix = match &filter.name {
        Some(name) => Some(events_by_name_prefix(name)),
        None => filter.emitter.as_ref().map(events_by_emitter_prefix),
    };
    let Some(prefix) = index_prefix else {
        for height in from..=to {
            if reads >= budget {
                page.resume_from = Some(height);
                return Ok(page);
            }
            let mut block = BlockEvents::open(backend, height)?;
            reads += 1;
            for position in 0..block.event_total() {
                page.events.push(block.event(position)?);
                reads += 1;
                if page.events.len() >= limit {
                    return Ok(page);
                }
            }
        }
        return Ok(page);
    };
    let mut cursor = prefix.clone();
    cursor.extend_from_slice(&from.to_be_bytes());
    let mut end = prefix.clone();
    end.extend_from_slice(&(to.saturating_add(1)).to_be_bytes());
    loop {
        let entries = backend.scan(&cursor, Some(&end), 64)?;
        let exhausted = entries.len() < 64;
        for (key, positions) in &entries {
            let height = height_in(key, prefix.len())?;
            if reads >= budget {
                page.resume_from = Some(height);
                return Ok(page);
            }
            if positions.len() % 4 != 0 {
                return Err(corrupt("event index", key, "positions not 4-byte aligned"));
            }
            let mut block = BlockEvents::open(backend, height)?;
            reads += 1;
            for pos in positions.chunks_exact(4) {
                let record = block.event(u32::from_be_bytes(pos.try_into().expect("4 bytes")))?;
                reads += 1;
                if matches(&record.event) {
                    page.events.push(record);
                    if page.events.len() >= limit {
                        return Ok(page);
                    }
                }
            }
        }
        if exhausted {
            return Ok(page);
        }
        let mut next = entries.last().expect("non-empty").0.clone();
        next.push(0);
        cursor = next;
    }
}

/// The fire of timer `timer_id` (due at height `due`), searched in the
/// fire lists of blocks `due..=head`, at most [`FIRE_SEARCH_BLOCKS`] of them.
fn find_fire(
    backend: &dyn KvBackend,
    timer_id: &Hash,
    due: u64,
    head: u64,
) -> Result<Option<EventRecord>> {
    let prefix = &timer_id.as_bytes()[..TIMER_ID_PREFIX];
    let wanted = Value::Bytes(timer_id.0.to_vec());
    let end = fires_key(head.saturating_add(1));
    let mut cursor = fires_key(due);
    let mut read = 0usize;
    while read < FIRE_SEARCH_BLOCKS {
        let lists = backend.scan(&cursor, Some(&end), 16)?;
        let exhausted = lists.len() < 16;
        for (key, list) in &lists {
            read += 1;
            let height = height_in(key, 2)?;
            if list.len() % FIRE_ENTRY != 0 {
                return Err(corrupt("fire list", key, "not whole entries"));
            }
            let entries: Vec<&[u8]> = list.chunks_exact(FIRE_ENTRY).collect();
            let first = entries.partition_point(|e| &e[..TIMER_ID_PREFIX] < prefix);
            let mut block: Option<BlockEvents<'_>> = None;
            for entry in entries[first..]
                .iter()
                .take_while(|e| &e[..TIMER_ID_PREFIX] == prefix)
            {
                let position =
                    u32::from_be_bytes(entry[TIMER_ID_PREFIX..].try_into().expect("4 bytes"));
                if block.is_none() {
                    block = Some(BlockEvents::open(backend, height)?);
                }
                let record = block.as_mut().expect("opened above").event(position)?;
                if record.event.data.get("timer_id") == Some(&wanted) {
                    return Ok(Some(record));
                }
            }
        }
        if exhausted {
            break;
        }
        let mut next = lists.last().expect("non-empty").0.clone();
        next.push(0);
        cursor = next;
    }
    Ok(None)
}

/// The first height at or above `from` whose block's timestamp is at least
/// `due_ms` (a binary search over block headers), or `head + 1`.
fn first_block_at(backend: &dyn KvBackend, from: u64, head: u64, due_ms: u64) -> Result<u64> {
    // Headers, kept for every height (pruning removes blocks, not headers).
    let timestamp = |h: u64| -> Result<u64> {
        let key = ns_key(HEADERS, &h.to_be_bytes());
        let stored = get_decoded::<crate::headers::StoredHeader>(backend, &key)?
            .ok_or_else(|| corrupt("block header", &key, "missing below the head"))?;
        Ok(stored.header.timestamp_ms)
    };
    let (mut lo, mut hi) = (from, head.saturating_add(1));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if timestamp(mid)? >= due_ms {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

/// When a scheduled height or time timer was due, from its `TimerScheduled`
/// event's trigger: the first block at which it could fire.
fn due_block(backend: &dyn KvBackend, scheduled: &EventRecord, head: u64) -> Result<Option<u64>> {
    let Some(trigger) = scheduled.event.data.get("trigger") else {
        return Ok(None);
    };
    let number = |key: &str| trigger.get(key).and_then(Value::as_u128).map(|n| n as u64);
    match trigger.get("kind") {
        Some(Value::Str(k)) if k == "height" => Ok(number("height")),
        Some(Value::Str(k)) if k == "time" => match number("timestamp_ms") {
            Some(due_ms) => first_block_at(backend, scheduled.height, head, due_ms).map(Some),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// Events that end a timer.
const ENDINGS: [&str; 5] = [
    "TimerCancelled",
    "TimerExpired",
    "TimerCancelledInsufficientFunds",
    "TimerCancelledPaymentRevoked",
    "TimerFired",
];

/// The events that name timer `timer_id`, in chain order, at most `limit`:
/// those of its own index, and its fire from the fire lists when it was a
/// height or time timer that fired (`pending` says it has not).
pub(crate) fn timer_life(
    backend: &dyn KvBackend,
    head: u64,
    timer_id: &Hash,
    pending: bool,
    limit: usize,
) -> Result<Vec<EventRecord>> {
    let mut events = timer_events(backend, timer_id, limit)?;
    let ended = events
        .iter()
        .any(|r| ENDINGS.contains(&r.event.name.as_str()));
    let scheduled = events
        .iter()
        .find(|r| r.event.name == "TimerScheduled")
        .cloned();
    if let (false, false, Some(scheduled)) = (pending, ended, scheduled) {
        if let Some(due) = due_block(backend, &scheduled, head)? {
            if let Some(fire) = find_fire(backend, timer_id, due.max(scheduled.height), head)? {
                events.push(fire);
                events.sort_by_key(|r| (r.height, r.receipt_index, r.event_index));
                events.truncate(limit);
            }
        }
    }
    Ok(events)
}

/// The events of timer `timer_id` in its own index (all but the fires of
/// height and time timers), in chain order, at most `limit`.
fn timer_events(
    backend: &dyn KvBackend,
    timer_id: &Hash,
    limit: usize,
) -> Result<Vec<EventRecord>> {
    let prefix = events_by_timer_prefix(timer_id.as_bytes());
    let mut end = prefix.clone();
    end.push(0xff);
    end.extend_from_slice(&[0xff; 12]);
    let wanted = Value::Bytes(timer_id.0.to_vec());
    let mut out = Vec::new();
    let mut cursor = prefix.clone();
    // A timer's events often share a block (scheduled and deferred, say).
    let mut block: Option<BlockEvents<'_>> = None;
    // The index keeps eight bytes of the id, so other timers' events may
    // share the prefix (#50): the keys read are bounded, not the matches.
    let max_keys = limit.saturating_add(TIMER_INDEX_SLACK_KEYS);
    let mut keys_read = 0usize;
    loop {
        let keys = backend.scan_keys(&cursor, Some(&end), 64)?;
        let exhausted = keys.len() < 64;
        for key in &keys {
            keys_read += 1;
            if keys_read > max_keys {
                return Ok(out);
            }
            let height = height_in(key, prefix.len())?;
            let position = key
                .get(prefix.len() + 8..)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .map(u32::from_be_bytes)
                .ok_or_else(|| corrupt("timer event index", key, "bad position"))?;
            if block.as_ref().map(|b| b.height) != Some(height) {
                block = Some(BlockEvents::open(backend, height)?);
            }
            let record = block.as_mut().expect("opened above").event(position)?;
            // The index keeps eight bytes of the id; another timer may share them.
            if record.event.data.get("timer_id") == Some(&wanted) {
                out.push(record);
                if out.len() >= limit {
                    return Ok(out);
                }
            }
        }
        if exhausted {
            return Ok(out);
        }
        let mut next = keys.last().expect("non-empty").clone();
        next.push(0);
        cursor = next;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::backend::MemoryBackend;
    use timerhost_types::{ReceiptStatus, TxSource};

    pub(crate) fn event(name: &str, who: u8, timer: Option<[u8; 32]>) -> Event {
        let data = match timer {
            Some(id) => Value::Dict(vec![(Value::str("timer_id"), Value::Bytes(id.to_vec()))]),
            None => Value::None,
        };
        Event {
            name: name.to_string(),
            emitter: Address([who; 20]),
            data,
        }
    }

    /// A successful user receipt with these events (shared with the store's tests).
    pub(crate) fn receipt(tag: u8, events: Vec<Event>) -> Receipt {
        Receipt {
            tx_hash: Hash([tag; 32]),
            sender: Address::ZERO,
            source: TxSource::User,
            status: ReceiptStatus::Success,
            error: None,
            cycles_used: 0,
            cells_used: 0,
            fee_paid: 0,
            burned: 0,
            tip: 0,
            events,
            return_value: None,
            created_actor: None,
        }
    }

    fn commit(backend: &MemoryBackend, height: u64, receipts: &[Receipt]) {
        let mut batch = WriteBatch::new();
        stage(&mut batch, height, receipts);
        crate::tx_index::stage(&mut batch, &crate::tx_index::entries(height, receipts));
        backend.write(batch).unwrap();
    }

    /// Timer ids that share the eight bytes the index keeps.
    fn timer(n: u8) -> [u8; 32] {
        let mut id = [7u8; 32];
        id[31] = n;
        id
    }

    #[test]
    fn receipts_and_events_read_back_whole_across_chunk_boundaries() {
        let backend = MemoryBackend::new();
        // 600 events: three chunks, the middle receipt straddling two of them.
        let written = vec![
            receipt(
                1,
                (0..200).map(|i| event(&format!("a{i}"), 1, None)).collect(),
            ),
            receipt(2, Vec::new()),
            receipt(
                3,
                (0..400).map(|i| event(&format!("b{i}"), 2, None)).collect(),
            ),
        ];
        commit(&backend, 5, &written);
        assert_eq!(receipts(&backend, 5).unwrap(), written);
        assert_eq!(receipts(&backend, 6).unwrap(), Vec::new());
        let at = |index| TxLocation { height: 5, index };
        let found = |tag: u8| receipt_of(&backend, &Hash([tag; 32]), None).unwrap();
        assert_eq!(found(3), Some((at(2), written[2].clone())));
        assert_eq!(found(2), Some((at(1), written[1].clone())));
        assert_eq!(found(9), None);
        let chunks = backend
            .scan(&[EVENT_CHUNKS], Some(&[EVENT_CHUNKS + 1]), usize::MAX)
            .unwrap();
        assert_eq!(chunks.len(), 3);
        // The 301st event of the block is the 101st of the third receipt.
        let found = events(
            &backend,
            5,
            &EventFilter {
                emitter: Some(Address([2; 20])),
                from_height: Some(5),
                limit: 101,
                ..EventFilter::default()
            },
        )
        .unwrap();
        let last = found.last().unwrap();
        assert_eq!((last.receipt_index, last.event_index), (2, 100));
        assert_eq!(last.event.name, "b100");
        assert_eq!(last.tx_hash, Hash([3; 32]));
    }

    /// #46 (store format 13): a block's receipts and event chunks are
    /// stored compressed, and a block stored plain — as every format before
    /// 13 wrote it, and a migrated store keeps it — reads the same through
    /// every reader.
    #[test]
    fn receipts_and_events_stored_plain_before_format_13_read_as_compressed_ones() {
        let written = vec![
            receipt(
                1,
                (0..300)
                    .map(|i| event("TimerFired", 1, Some(timer(i as u8))))
                    .collect(),
            ),
            receipt(2, vec![event("Bumped", 2, None)]),
        ];
        let compressed_store = MemoryBackend::new();
        commit(&compressed_store, 5, &written);
        let stored = compressed_store
            .scan(&[RECEIPTS], Some(&[EVENT_CHUNKS + 1]), usize::MAX)
            .unwrap();
        let records: Vec<_> = stored
            .iter()
            .filter(|(k, _)| k[0] == RECEIPTS || k[0] == EVENT_CHUNKS)
            .collect();
        assert_eq!(records.len(), 3, "the receipts record and two chunks");
        // The same block as format 12 stored it: each record plain.
        let plain_store = MemoryBackend::new();
        commit(&plain_store, 5, &written);
        let mut batch = WriteBatch::new();
        for (key, bytes) in &records {
            assert_eq!(bytes[0], compressed::LZ4_TAG, "stored compressed");
            let plain = if key[0] == RECEIPTS {
                let value: StoredReceipts = compressed::decode(bytes).unwrap();
                let plain = encoding::encode(&value);
                assert!(bytes.len() < plain.len());
                plain
            } else {
                let value: EventChunk = compressed::decode(bytes).unwrap();
                let plain = encoding::encode(&value);
                assert!(
                    bytes.len() * 4 < plain.len(),
                    "{} vs {}",
                    bytes.len(),
                    plain.len()
                );
                plain
            };
            batch.put(key.clone(), plain);
        }
        plain_store.write(batch).unwrap();
        for backend in [&compressed_store, &plain_store] {
            assert_eq!(receipts(backend, 5).unwrap(), written);
            assert_eq!(
                receipt_of(backend, &Hash([2; 32]), None).unwrap(),
                Some((
                    TxLocation {
                        height: 5,
                        index: 1
                    },
                    written[1].clone()
                ))
            );
            let fires = events(
                backend,
                5,
                &EventFilter {
                    name: Some("TimerFired".into()),
                    from_height: Some(5),
                    ..EventFilter::default()
                },
            )
            .unwrap();
            assert_eq!(fires.len(), 300);
            assert_eq!(fires[299].event, written[0].events[299]);
        }
    }

    /// #46: a hash naming its own place gets no index entry and is found
    /// at that place; a hash that names a place whose receipt carries
    /// another hash is not found there, and an ordinary hash is indexed.
    #[test]
    fn a_located_hash_is_found_at_its_place_without_an_index_entry() {
        let backend = MemoryBackend::new();
        let mut fire = receipt(2, Vec::new());
        fire.tx_hash = located::located_tx_hash(Hash([0x5a; 32]), 9, 1);
        let forged = located::located_tx_hash(Hash([0x5b; 32]), 9, 1);
        let user = receipt(1, Vec::new());
        commit(&backend, 9, &[user.clone(), fire.clone()]);
        let indexed = |h: &Hash| backend.get(&ns_key(TX_INDEX, h.as_bytes())).unwrap();
        assert!(
            indexed(&fire.tx_hash).is_none(),
            "no entry for a located hash"
        );
        assert!(
            indexed(&user.tx_hash).is_some(),
            "an ordinary hash is indexed"
        );
        let at = |height, index| Some(TxLocation { height, index });
        let place = |h: &Hash| receipt_of(&backend, h, None).unwrap().map(|(loc, _)| loc);
        let found = |h: &Hash| receipt_of(&backend, h, None).unwrap().map(|(_, r)| r);
        assert_eq!(place(&fire.tx_hash), at(9, 1));
        assert_eq!(found(&fire.tx_hash), Some(fire.clone()));
        assert_eq!(place(&user.tx_hash), at(9, 0));
        assert_eq!(found(&user.tx_hash), Some(user.clone()));
        assert_eq!(place(&forged), None, "another hash there");
        let past = located::located_tx_hash(Hash([0x5a; 32]), 10, 1);
        assert_eq!(place(&past), None, "no such block");
        let beyond = located::located_tx_hash(Hash([0x5a; 32]), 9, 7);
        assert_eq!(place(&beyond), None, "no such receipt");
        // Pruning the block deletes the ordinary entry and finds nothing else to.
        let mut batch = WriteBatch::new();
        unstage(&backend, &mut batch, 9, &mut Vec::new()).unwrap();
        backend.write(batch).unwrap();
        assert!(indexed(&user.tx_hash).is_none());
        assert_eq!(place(&fire.tx_hash), None);
        assert_eq!(place(&user.tx_hash), None);
    }

    #[test]
    fn a_timers_events_are_found_by_its_id_and_not_by_a_neighbours() {
        let backend = MemoryBackend::new();
        commit(
            &backend,
            1,
            &[receipt(
                1,
                vec![
                    event("TimerScheduled", 9, Some(timer(1))),
                    event("Noise", 9, None),
                    event("TimerScheduled", 9, Some(timer(2))),
                ],
            )],
        );
        commit(
            &backend,
            4,
            &[
                receipt(2, vec![event("TimerFired", 9, Some(timer(2)))]),
                receipt(3, vec![event("TimerFired", 9, Some(timer(1)))]),
            ],
        );
        let life = |n: u8, limit: usize| -> Vec<(u64, u32, String)> {
            timer_events(&backend, &Hash(timer(n)), limit)
                .unwrap()
                .into_iter()
                .map(|r| (r.height, r.receipt_index, r.event.name))
                .collect()
        };
        assert_eq!(
            life(1, 10),
            [(1, 0, "TimerScheduled".into()), (4, 1, "TimerFired".into())]
        );
        assert_eq!(
            life(2, 10),
            [(1, 0, "TimerScheduled".into()), (4, 0, "TimerFired".into())]
        );
        assert_eq!(life(2, 1).len(), 1);
        assert!(life(3, 10).is_empty());
    }

    fn dict(entries: Vec<(&str, Value)>) -> Value {
        Value::dict_from(entries.into_iter().map(|(k, v)| (Value::str(k), v))).unwrap()
    }

    fn scheduled(id: [u8; 32], trigger: Value) -> Event {
        Event {
            name: "TimerScheduled".into(),
            emitter: Address([9; 20]),
            data: dict(vec![
                ("timer_id", Value::Bytes(id.to_vec())),
                ("trigger", trigger),
            ]),
        }
    }

    fn fired(id: [u8; 32], kind: &str) -> Event {
        Event {
            name: "TimerFired".into(),
            emitter: Address([9; 20]),
            data: dict(vec![
                ("timer_id", Value::Bytes(id.to_vec())),
                ("kind", Value::str(kind)),
            ]),
        }
    }

    /// Writes block `height` with this timestamp and these receipts.
    fn block_at(backend: &MemoryBackend, height: u64, timestamp_ms: u64, receipts: &[Receipt]) {
        let block = timerhost_types::Block {
            header: timerhost_types::BlockHeader {
                chain_id: 1,
                height,
                timestamp_ms,
                proposer: Address::ZERO,
                parent_hash: Hash::ZERO,
                tx_root: Hash::ZERO,
                state_root: Hash::ZERO,
                receipts_root: Hash::ZERO,
                cycles_used: 0,
                cells_used: 0,
                lane_basefee: 0,
            },
            txs: Vec::new(),
        };
        let mut batch = WriteBatch::new();
        batch.put(
            ns_key(HEADERS, &height.to_be_bytes()),
            encoding::encode(&crate::headers::StoredHeader {
                header: block.header,
                tx_count: 0,
            }),
        );
        stage(&mut batch, height, receipts);
        backend.write(batch).unwrap();
    }

    #[test]
    fn the_fire_of_a_height_or_time_timer_is_found_from_when_it_was_due() {
        let backend = MemoryBackend::new();
        let height_trigger = |h: u64| {
            dict(vec![
                ("kind", Value::str("height")),
                ("height", Value::int(h)),
            ])
        };
        let time_trigger = |ms: u64| {
            dict(vec![
                ("kind", Value::str("time")),
                ("timestamp_ms", Value::int(ms)),
            ])
        };
        block_at(
            &backend,
            1,
            1_000,
            &[receipt(
                1,
                vec![
                    scheduled(timer(1), height_trigger(3)),
                    scheduled(timer(2), height_trigger(3)),
                    scheduled(timer(3), time_trigger(4_500)),
                ],
            )],
        );
        for h in 2..=4 {
            block_at(&backend, h, h * 1_000, &[]);
        }
        // Height 5: timer 2 fires (two blocks late, carried over), then
        // timer 3 (due at 4.5 s: the first block at or after it).
        block_at(
            &backend,
            5,
            5_000,
            &[
                receipt(2, vec![fired(timer(2), "height")]),
                receipt(3, vec![fired(timer(3), "time")]),
            ],
        );
        block_at(
            &backend,
            6,
            6_000,
            &[receipt(4, vec![fired(timer(1), "height")])],
        );
        // The fires are in the per-block lists, not in the per-timer keys.
        assert_eq!(
            timer_events(&backend, &Hash(timer(1)), 10).unwrap().len(),
            1
        );
        let life = |n: u8, pending: bool| -> Vec<(u64, String)> {
            timer_life(&backend, 6, &Hash(timer(n)), pending, 10)
                .unwrap()
                .into_iter()
                .map(|r| (r.height, r.event.name))
                .collect()
        };
        assert_eq!(
            life(1, false),
            [(1, "TimerScheduled".into()), (6, "TimerFired".into())]
        );
        assert_eq!(
            life(2, false),
            [(1, "TimerScheduled".into()), (5, "TimerFired".into())]
        );
        assert_eq!(
            life(3, false),
            [(1, "TimerScheduled".into()), (5, "TimerFired".into())]
        );
        // A pending timer is not searched for (nor found).
        assert_eq!(life(1, true), [(1, "TimerScheduled".into())]);
        assert_eq!(first_block_at(&backend, 1, 6, 4_500).unwrap(), 5);
        assert_eq!(first_block_at(&backend, 1, 6, 60_000).unwrap(), 7);
        assert_eq!(first_block_at(&backend, 1, 6, 0).unwrap(), 1);
    }
}
