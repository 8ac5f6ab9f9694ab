//! The Globalbox (#18; state-triggered CIP §5.3, §7–§9): under
//! `TimerConfig.ordering = "priority"`, the persistent, committed queue of
//! due fires, ordered by score.
//!
//! **Score** (§8.1): `score = w_age × age_blocks + w_bid × bid`, integers
//! only, `age_blocks = h − due_height` (for a watch hit, the height of the
//! block that wrote its keys).
//!
//! **Order frozen at enqueue, aging kept.** An entry's key holds its
//! *priority* `w_bid × bid − w_age × due_height`, which for every height `h`
//! differs from its score by the same `w_age × h`. So comparing two entries'
//! frozen keys is comparing their scores *now*, whenever either was
//! enqueued: an entry never moves (§5.3), yet a new high-bid entry lands
//! behind an old low-bid one once `w_age × age` exceeds `w_bid × Δbid` —
//! aging without re-sorting, and no starvation. (A governance change of the
//! weights applies to entries enqueued afterwards; queued ones keep theirs.)
//!
//! **Comparator** (§8.2), as the key's byte order: score descending, then
//! due height, target actor and creation order (the timer's sequence
//! number: §8.2 allows "lexicographic / creation order"; creation order
//! keeps equals FIFO) ascending. The optional priority
//! bucket and round-robin cursor are dropped: `max_fires_per_target` already
//! bounds one target's share of a block, and a cursor would be state that
//! reorders entries after enqueue.
//!
//! Each entry is a tree leaf `t x ‖ order ‖ due_height ‖ target ‖ seq`
//! holding an [`Entry`]. A height or time timer's record moves to
//! `u X ‖ seq` (its entry carries the record's hash, as a GC entry does),
//! leaving its bucket; a watch stays registered and its entry carries the
//! hit's matched keys. Enqueueing, materialising and removing one entry is
//! one leaf each: a block's cost follows the entries it touches, not the
//! queue's length ([`crate::delivery`] bounds both per block).
//!
//! **Market ordering (#31)** uses the same queue with another rank: instead
//! of the bid, an entry is ranked by its effective priority at the lane
//! basefee of the block that enqueues it (`min(bid, max_fee_per_cycle −
//! lane basefee)`) times its fairness weight ([`crate::fairness`]), frozen
//! like a bid — aging (`w_age`) keeps working as above. An entry whose fee
//! cap is below the lane basefee, when enqueued or when reached, *waits*:
//! it moves to the waiting band `t y`, keyed by its cap (highest first), and
//! is registered in the expiry queue so that it still expires (deposit
//! refunded) if the basefee never falls back. Each block re-admits waiting
//! entries from the head of that band while their cap reaches the lane
//! basefee ([`readmit`]), under the enqueue budget; under FIFO and priority
//! every waiting entry is re-admitted (nothing prices the lane there).

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::encoding::Canonical;
use timerhost_types::lane::{lane_price, WEIGHT_ONE};
use timerhost_types::{Address, Hash, Timer, TimerConfig, TimerOrdering};

use crate::error::Result;
use crate::keys::{self, corrupt};
use crate::record::{self, record_hash, Queued, TimerRecord};
use crate::removal::Removals;
use crate::watch::Hit;

/// One queued fire.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Entry {
    /// The timer (or watch).
    pub timer_id: Hash,
    /// Its sequence number (where its record is).
    pub seq: u64,
    /// The target actor.
    pub actor: Address,
    /// Its fee payer (its fairness weight counts it, #31).
    pub fee_payer: Address,
    /// Its timer's `expires_at` when enqueued (a height or time timer's
    /// cannot change once due; a watch's expiry is the watch's own).
    pub expires_at: u64,
    /// The height it became due at (a watch: the hit's).
    pub due_height: u64,
    /// Its bid (its `max_priority_fee_per_cycle`).
    pub bid: u64,
    /// Its timer's `max_fee_per_cycle` (#31).
    pub max_fee_per_cycle: u64,
    /// Its fairness weight when ranked, in thousandths (`WEIGHT_ONE` under
    /// priority ordering).
    pub weight: u64,
    /// What ranked it: the bid, or under market ordering its effective
    /// priority × weight.
    pub rank: u64,
    /// Its score when it was enqueued.
    pub score: u128,
    /// A height or time timer: its record's hash (the record left its
    /// bucket). `None` for a watch, committed by its own leaf.
    pub record_hash: Option<Hash>,
    /// A watch hit: the matched keys.
    pub matched_keys: Option<Vec<Vec<u8>>>,
}

impl Canonical for Entry {
    const NAME: &'static str = "globalbox entry";
}

impl Entry {
    /// Is this a watch hit?
    pub fn is_watch(&self) -> bool {
        self.matched_keys.is_some()
    }

    /// Its score at height `height` under `config`'s weights.
    pub fn score_at(&self, config: &TimerConfig, height: u64) -> u128 {
        score(config, self.rank, height.saturating_sub(self.due_height))
    }
}

/// Where an entry goes when it joins the Globalbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Into the queue, ranked by `rank` (the bid, or the weighted effective
    /// priority), with fairness `weight`.
    Ranked {
        /// The rank in the score's `w_bid × rank` term.
        rank: u64,
        /// The fairness weight (thousandths).
        weight: u64,
    },
    /// Into the waiting band: its fee cap is below the lane basefee.
    Waiting,
}

/// Where `timer` goes under `config`'s ordering at `lane_basefee` in block
/// `height`: ranked by its bid (priority, and FIFO's drain), or by its
/// effective priority × fairness weight (market) — or waiting when its cap
/// is below the lane basefee.
pub fn place(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    lane_basefee: u64,
    height: u64,
    timer: &Timer,
) -> Result<Place> {
    let bidder = Bidder {
        actor: &timer.actor_address,
        fee_payer: &timer.fee_payer,
        bid: timer.bid,
        max_fee_per_cycle: timer.max_fee_per_cycle,
    };
    place_bidder(state, config, lane_basefee, height, bidder)
}

/// What ranks an entry: who it is for and what it offers.
#[derive(Clone, Copy)]
struct Bidder<'a> {
    actor: &'a Address,
    fee_payer: &'a Address,
    bid: u64,
    max_fee_per_cycle: u64,
}

fn place_bidder(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    lane_basefee: u64,
    height: u64,
    bidder: Bidder<'_>,
) -> Result<Place> {
    if config.ordering != TimerOrdering::Market {
        return Ok(Place::Ranked {
            rank: bidder.bid,
            weight: WEIGHT_ONE,
        });
    }
    let Some(price) = lane_price(bidder.max_fee_per_cycle, bidder.bid, lane_basefee) else {
        return Ok(Place::Waiting);
    };
    let weight = crate::fairness::weight(state, config, height, bidder.actor, bidder.fee_payer)?;
    let rank = u128::from(price.priority) * u128::from(weight) / u128::from(WEIGHT_ONE);
    Ok(Place::Ranked {
        rank: rank as u64,
        weight,
    })
}

/// `w_age × age + w_bid × bid` (§8.1; under market ordering the bid is the
/// weighted effective priority).
pub fn score(config: &TimerConfig, bid: u64, age: u64) -> u128 {
    u128::from(config.w_age) * u128::from(age) + u128::from(config.w_bid) * u128::from(bid)
}

/// The key of an entry: its priority `w_bid × bid − w_age × due_height`
/// mapped order-preservingly onto u128 and inverted (higher first), then
/// the tie-breakers.
pub fn entry_key(
    config: &TimerConfig,
    bid: u64,
    due_height: u64,
    target: &Address,
    seq: u64,
) -> Vec<u8> {
    // |w × rank| ≤ 2^84 and |w × height| ≤ 2^104: far inside i128.
    let priority = i128::from(config.w_bid) * i128::from(bid)
        - i128::from(config.w_age) * i128::from(due_height);
    let order = !((priority as u128) ^ (1 << 127));
    keys::globalbox_key(order, due_height, target, seq)
}

/// The height a time timer due at `timestamp_ms` came due at, for one
/// enqueued at `height` (#28): the first block, among those whose enqueue
/// left due time timers behind ([`mark_time_lag`]), that reached its time —
/// or `height` itself when none did. Its age then counts from when it came
/// due, not from when a crowded block got round to it.
pub fn came_due_at(state: &Overlay<'_>, timestamp_ms: u64, height: u64) -> Result<u64> {
    let start = keys::time_due_mark_key(timestamp_ms);
    let end = keys::end_of(keys::TIME_DUE_MARK);
    let first = StateRead::scan(state, &start, Some(&end), 1)?;
    match first.first() {
        Some((k, v)) => {
            let bytes: [u8; 8] = v
                .as_slice()
                .try_into()
                .map_err(|_| corrupt("time due mark", k, "not a u64 height"))?;
            Ok(u64::from_be_bytes(bytes))
        }
        None => Ok(height),
    }
}

/// Records that block `height` (at `timestamp_ms`) left due time timers
/// out of the Globalbox.
pub fn mark_time_lag(state: &mut Overlay<'_>, timestamp_ms: u64, height: u64) {
    state.put(
        keys::time_due_mark_key(timestamp_ms),
        height.to_be_bytes().to_vec(),
    );
}

/// Forgets the marks once the time queue's due timers are all enqueued:
/// the marks of one run of crowded blocks, each deleted once.
pub fn clear_time_lag(state: &mut Overlay<'_>) -> Result<()> {
    let start = keys::TIME_DUE_MARK.to_vec();
    let end = keys::end_of(keys::TIME_DUE_MARK);
    loop {
        let page = StateRead::scan(&*state, &start, Some(&end), 256)?;
        if page.is_empty() {
            return Ok(());
        }
        for (k, _) in page {
            state.delete(k);
        }
    }
}

/// Moves a due height or time timer into the Globalbox: out of its bucket
/// (through `removals`) and the expiry queue, its record to `u X`.
#[allow(clippy::too_many_arguments)]
pub fn enqueue_timer(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    record: &TimerRecord,
    due_height: u64,
    height: u64,
    place: Place,
    removals: &mut Removals,
) -> Result<()> {
    let timer = &record.timer;
    let hash = record_hash(timer);
    removals.buckets.remove(timer, hash);
    crate::expiry::unregister(state, timer);
    state.delete(record::record_key(timer, Queued::Due));
    record::put_record(state, record, Queued::Globalbox);
    let entry = new_entry(config, timer, due_height, height, place, Some(hash), None);
    let key = put_entry(state, config, &entry, place);
    if place == Place::Waiting {
        // It may wait past its TTL: the expiry queue must reach it.
        state.put(
            keys::expiry_key(timer.expires_at, timer.seq),
            keys::globalbox_record_key(timer.seq),
        );
    }
    state.put(keys::globalbox_lookup_key(timer.seq), key);
    Ok(())
}

/// Moves watch `watch`'s waiting hit (queued at `hit_height`) into the
/// Globalbox; the watch's hit lookup now names its entry.
pub fn enqueue_hit(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    watch: &Timer,
    hit: Hit,
    hit_height: u64,
    height: u64,
    place: Place,
) {
    state.delete(keys::watch_hit_key(hit_height, watch.seq));
    let entry = new_entry(
        config,
        watch,
        hit_height,
        height,
        place,
        None,
        Some(hit.matched_keys),
    );
    let key = put_entry(state, config, &entry, place);
    state.put(keys::watch_hit_lookup_key(watch.seq), key);
}

fn new_entry(
    config: &TimerConfig,
    timer: &Timer,
    due_height: u64,
    height: u64,
    place: Place,
    record_hash: Option<Hash>,
    matched_keys: Option<Vec<Vec<u8>>>,
) -> Entry {
    let (rank, weight) = match place {
        Place::Ranked { rank, weight } => (rank, weight),
        Place::Waiting => (0, WEIGHT_ONE),
    };
    Entry {
        timer_id: timer.timer_id,
        seq: timer.seq,
        actor: timer.actor_address,
        fee_payer: timer.fee_payer,
        expires_at: timer.expires_at,
        due_height,
        bid: timer.bid,
        max_fee_per_cycle: timer.max_fee_per_cycle,
        weight,
        rank,
        score: score(config, rank, height.saturating_sub(due_height)),
        record_hash,
        matched_keys,
    }
}

/// Writes `entry` where `place` puts it — ranked into the queue, or into
/// the waiting band (a height or time timer then also registered in the
/// expiry queue, so that it expires while it waits) — and returns its key.
fn put_entry(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    entry: &Entry,
    place: Place,
) -> Vec<u8> {
    let key = match place {
        Place::Ranked { rank, .. } => {
            entry_key(config, rank, entry.due_height, &entry.actor, entry.seq)
        }
        Place::Waiting => keys::globalbox_waiting_key(entry.max_fee_per_cycle, entry.seq),
    };
    state.put_encoded(key.clone(), entry);
    key
}

/// The expiry entry of a waiting height or time timer, which names its
/// Globalbox record. (A watch is in the expiry queue anyway.)
fn waiting_expiry(entry: &Entry) -> Option<Vec<u8>> {
    (!entry.is_watch()).then(|| keys::expiry_key(entry.expires_at, entry.seq))
}

/// Points the entry's lookup (a timer's, or its watch's hit) at `key`.
fn point_lookup(state: &mut Overlay<'_>, entry: &Entry, key: Vec<u8>) {
    let lookup = if entry.is_watch() {
        keys::watch_hit_lookup_key(entry.seq)
    } else {
        keys::globalbox_lookup_key(entry.seq)
    };
    state.put(lookup, key);
}

/// Moves the ranked entry at `key` to the waiting band (#31): its fee cap
/// is below the lane basefee. A height or time timer is registered in the
/// expiry queue while it waits.
pub fn defer(state: &mut Overlay<'_>, key: &[u8], entry: &Entry) {
    state.delete(key.to_vec());
    let waiting = put_entry_waiting(state, entry);
    if let Some(expiry) = waiting_expiry(entry) {
        state.put(expiry, keys::globalbox_record_key(entry.seq));
    }
    point_lookup(state, entry, waiting);
}

fn put_entry_waiting(state: &mut Overlay<'_>, entry: &Entry) -> Vec<u8> {
    let key = keys::globalbox_waiting_key(entry.max_fee_per_cycle, entry.seq);
    state.put_encoded(key.clone(), entry);
    key
}

/// Re-admits waiting entries (#31), highest fee cap first, at most
/// `limit`: under market ordering while their cap reaches `lane_basefee`
/// (ranked anew at this block's basefee and weights; their due height, and
/// so their age, kept), under FIFO and priority all of them. Reads only
/// the entries (never their records, which may be large). Returns how many
/// moved.
pub fn readmit(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    lane_basefee: u64,
    height: u64,
    limit: usize,
) -> Result<usize> {
    let start = keys::GLOBALBOX_WAITING.to_vec();
    let end = keys::end_of(keys::GLOBALBOX_WAITING);
    let page = StateRead::scan(&*state, &start, Some(&end), limit)?;
    let mut moved = 0;
    for (key, value) in page {
        let mut entry = timerhost_types::decode::<Entry>(&value)
            .map_err(|e| corrupt(Entry::NAME, &key, &e.to_string()))?;
        let bidder = Bidder {
            actor: &entry.actor,
            fee_payer: &entry.fee_payer,
            bid: entry.bid,
            max_fee_per_cycle: entry.max_fee_per_cycle,
        };
        let place = place_bidder(state, config, lane_basefee, height, bidder)?;
        let Place::Ranked { rank, weight } = place else {
            // The band is sorted by cap: nothing behind can fire either.
            break;
        };
        state.delete(key);
        if let Some(expiry) = waiting_expiry(&entry) {
            state.delete(expiry);
        }
        entry.rank = rank;
        entry.weight = weight;
        entry.score = score(config, rank, height.saturating_sub(entry.due_height));
        let ranked = put_entry(state, config, &entry, place);
        point_lookup(state, &entry, ranked);
        moved += 1;
    }
    Ok(moved)
}

/// Takes a height or time timer's entry out of the Globalbox — ranked or
/// waiting, and a waiting one out of the expiry queue — (its record is the
/// caller's); returns its record's hash.
pub fn dequeue_timer(state: &mut Overlay<'_>, timer: &Timer) -> Result<Hash> {
    let lookup = keys::globalbox_lookup_key(timer.seq);
    let key = state
        .get(&lookup)?
        .ok_or_else(|| keys::missing("globalbox lookup", &timer.timer_id))?;
    if key.starts_with(&keys::GLOBALBOX_WAITING) {
        state.delete(keys::expiry_key(timer.expires_at, timer.seq));
    }
    state.delete(key);
    state.delete(lookup);
    Ok(record_hash(timer))
}

/// Up to `limit` waiting entries (#31), highest fee cap first.
pub fn waiting(state: &(impl StateRead + ?Sized), limit: usize) -> Result<Vec<(Vec<u8>, Entry)>> {
    decode_entries(state.scan(
        &keys::GLOBALBOX_WAITING,
        Some(&keys::end_of(keys::GLOBALBOX_WAITING)),
        limit,
    )?)
}

fn decode_entries(page: Vec<(Vec<u8>, Vec<u8>)>) -> Result<Vec<(Vec<u8>, Entry)>> {
    page.into_iter()
        .map(|(k, v)| {
            let entry = timerhost_types::decode::<Entry>(&v)
                .map_err(|e| corrupt(Entry::NAME, &k, &e.to_string()))?;
            Ok((k, entry))
        })
        .collect()
}

/// Up to `limit` entries at or after `from` (a key; `None`: the head), in
/// order: `(key, entry)`.
pub fn entries_from(
    state: &(impl StateRead + ?Sized),
    from: Option<&[u8]>,
    limit: usize,
) -> Result<Vec<(Vec<u8>, Entry)>> {
    let start = from.map_or_else(|| keys::GLOBALBOX.to_vec(), <[u8]>::to_vec);
    decode_entries(state.scan(&start, Some(&keys::end_of(keys::GLOBALBOX)), limit)?)
}

/// One queued fire as the inspection calls show it (`th_getGlobalbox`,
/// `timerhost globalbox`, `chain.globalbox()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Its place from the head (0 fires first).
    pub position: usize,
    /// The entry.
    pub entry: Entry,
    /// `"height"`, `"time"` or `"state"`.
    pub kind: &'static str,
    /// Its score at the given height under the current weights.
    pub score_now: u128,
    /// Waiting for the lane basefee to fall to its fee cap (#31), listed
    /// after the queue.
    pub waiting: bool,
}

/// The first `limit` entries in order, with their score at `height`, then
/// (within `limit`) those waiting for the lane basefee, highest cap first.
pub fn listing(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    height: u64,
    limit: usize,
) -> Result<Vec<Listed>> {
    let queued = entries_from(state, None, limit)?;
    let room = limit - queued.len();
    let waiting = if room > 0 {
        waiting(state, room)?
    } else {
        Vec::new()
    };
    queued
        .into_iter()
        .map(|e| (e, false))
        .chain(waiting.into_iter().map(|e| (e, true)))
        .enumerate()
        .map(|(position, ((_, entry), waiting))| {
            let kind = record_of(state, &entry)?.timer.kind.name();
            Ok(Listed {
                position,
                score_now: entry.score_at(config, height),
                kind,
                entry,
                waiting,
            })
        })
        .collect()
}

/// Is the Globalbox empty, waiting band included?
pub fn is_empty(state: &(impl StateRead + ?Sized)) -> Result<bool> {
    Ok(entries_from(state, None, 1)?.is_empty() && waiting(state, 1)?.is_empty())
}

/// The record an entry fires: a watch's registered record, or the
/// Globalbox record of a height or time timer.
pub fn record_of(state: &(impl StateRead + ?Sized), entry: &Entry) -> Result<TimerRecord> {
    let key = if entry.is_watch() {
        keys::watch_record_key(entry.seq)
    } else {
        keys::globalbox_record_key(entry.seq)
    };
    state
        .get_decoded::<TimerRecord>(&key)?
        .ok_or_else(|| keys::missing("globalbox entry", &entry.timer_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(config: &TimerConfig, bid: u64, due: u64) -> Vec<u8> {
        entry_key(config, bid, due, &Address([1; 20]), 2)
    }

    #[test]
    fn key_order_is_score_order_at_every_height() {
        let config = TimerConfig {
            w_age: 3,
            w_bid: 2,
            ..TimerConfig::default()
        };
        let cases = [
            (0u64, 0u64),
            (5, 10),
            (100, 0),
            (7, 40),
            (0, 90),
            (u32::MAX as u64, 1),
        ];
        for &(bid_a, due_a) in &cases {
            for &(bid_b, due_b) in &cases {
                for h in [90u64, 100, 1_000] {
                    let (sa, sb) = (
                        score(&config, bid_a, h - due_a.min(h)),
                        score(&config, bid_b, h - due_b.min(h)),
                    );
                    if due_a > h || due_b > h || sa == sb {
                        continue;
                    }
                    assert_eq!(
                        sa > sb,
                        order(&config, bid_a, due_a) < order(&config, bid_b, due_b),
                        "({bid_a}, {due_a}) vs ({bid_b}, {due_b}) at {h}"
                    );
                }
            }
        }
    }

    #[test]
    fn ties_fall_to_due_height_then_target_then_creation_order() {
        let config = TimerConfig::default();
        // Same score (w = 1): bid 10 due at 5 vs bid 11 due at 6.
        let a = entry_key(&config, 10, 5, &Address([9; 20]), 9);
        let b = entry_key(&config, 11, 6, &Address([1; 20]), 1);
        assert!(a < b, "earlier due height first");
        let c = entry_key(&config, 10, 5, &Address([1; 20]), 9);
        assert!(c < a, "then the target");
        let d = entry_key(&config, 10, 5, &Address([1; 20]), 1);
        assert!(d < c, "then creation order");
    }
}
