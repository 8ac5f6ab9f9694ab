//! State watches (#17): timers due whenever a block writes a watched key.
//!
//! A watch is a persistent timer whose [`TimerKind::State`] lists keys and
//! prefixes of one actor's storage. It is registered in three derived
//! structures beside its record (`u w ‖ seq`, [`crate::keys`]):
//!
//! - the **watch index**, one entry per listed key, `u x ‖ actor ‖ 0 ‖ len ‖
//!   key ‖ seq` for an exact key and `… 1 ‖ len ‖ prefix ‖ seq` for a prefix;
//! - per watched actor, a [`WatchedActor`] counting its entries and the
//!   prefix lengths in use;
//! - the expiry queue ([`crate::expiry`]), which removes watches whose TTL
//!   ran out even if nothing ever writes their keys.
//!
//! The state root commits to a watch through its own leaf, `t w ‖ seq` =
//! the watch's record hash (its fire count included), so a fire or an
//! extension rewrites one leaf.
//!
//! **Matching** ([`queue_hits`]) looks up each written key of a watched actor:
//! one index scan for the key itself and one per prefix length in use for
//! that actor (at most [`MAX_WATCH_KEY_BYTES`] + 1 distinct lengths), each
//! returning only the watches it hits. The work is proportional to the keys
//! written and the watches hit, never to the number of watches registered;
//! an actor nobody watches costs one read per block. It is also bounded per
//! block (#29): a pass takes at most [`WATCH_MATCH_STEPS_PER_PASS`] probes
//! and hits, and leaves the rest of its work, in order, in `t f`
//! ([`PendingMatch`]) for the next pass — so one write watched 20,000 times
//! no longer enqueues 20,000 hits in one block, paid by nobody.
//!
//! **Hits wait in order** in `t h ‖ height ‖ seq` (committed: which fires
//! are owed is consensus state), `height` being the first block that may
//! evaluate them: the block whose user phase wrote the keys, or the next
//! block for writes made by end-of-block fires. A watch has at most one
//! waiting hit (`u h ‖ seq`); a hit on a watch that already waits adds
//! nothing, so a watch fires at most once per block and can never loop
//! inside one. Delivery ([`crate::delivery`]) evaluates waiting hits in
//! (height, watch sequence) order, at most `max_watch_matches_per_block`
//! per block; the rest wait, like carried-over timers.

use std::collections::BTreeMap;

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::encoding::Canonical;
use timerhost_types::timer::{MAX_REPORTED_MATCHED_KEYS, MAX_WATCH_KEY_BYTES};
use timerhost_types::{Address, Timer, TimerKind, Watch};

use crate::error::Result;
use crate::keys::{self, corrupt};
use crate::record::record_hash;

/// How many index entries watch one actor, and which prefix lengths they
/// use (so matching a written key tries only those lengths).
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct WatchedActor {
    /// Index entries (exact and prefix) over this actor's keys.
    pub entries: u64,
    /// Prefix length → how many prefix entries have it.
    pub prefix_lengths: BTreeMap<u16, u64>,
}

impl Canonical for WatchedActor {
    const NAME: &'static str = "watched actor";
}

/// A waiting hit: the watched keys that were written (the first
/// [`MAX_REPORTED_MATCHED_KEYS`] in key order).
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Hit {
    /// The matched keys.
    pub matched_keys: Vec<Vec<u8>>,
}

impl Canonical for Hit {
    const NAME: &'static str = "watch hit";
}

/// The state bytes a watch adds beside its record and expiry entry: its
/// leaf and one index entry per key (keys and values). The deposit and the
/// schedule's cells count them.
pub fn registration_bytes(watch: &Watch) -> u64 {
    let leaf = keys::watch_leaf_key(0).len() + 32;
    let index: usize = watch
        .keys
        .iter()
        .map(|k| keys::watch_index_key(&watch.actor, k.prefix, &k.key, 0).len())
        .sum();
    (leaf + index) as u64
}

fn load_watched(state: &(impl StateRead + ?Sized), actor: &Address) -> Result<WatchedActor> {
    Ok(state
        .get_decoded::<WatchedActor>(&keys::watched_actor_key(actor))?
        .unwrap_or_default())
}

fn store_watched(state: &mut Overlay<'_>, actor: &Address, watched: &WatchedActor) {
    let key = keys::watched_actor_key(actor);
    if watched.entries == 0 {
        state.delete(key);
    } else {
        state.put_encoded(key, watched);
    }
}

/// Registers a new watch (its record and expiry entry are the caller's):
/// index entries, counts and leaf.
pub fn register(state: &mut Overlay<'_>, timer: &Timer, watch: &Watch) -> Result<()> {
    let mut watched = load_watched(state, &watch.actor)?;
    for k in &watch.keys {
        state.put(
            keys::watch_index_key(&watch.actor, k.prefix, &k.key, timer.seq),
            Vec::new(),
        );
        watched.entries += 1;
        if k.prefix {
            *watched
                .prefix_lengths
                .entry(k.key.len() as u16)
                .or_default() += 1;
        }
    }
    store_watched(state, &watch.actor, &watched);
    write_leaf(state, timer);
    Ok(())
}

/// Takes a watch out of every structure [`register`] put it in, and drops
/// its waiting hit (its record is the caller's).
pub fn unregister(state: &mut Overlay<'_>, timer: &Timer, watch: &Watch) -> Result<()> {
    let mut watched = load_watched(state, &watch.actor)?;
    for k in &watch.keys {
        state.delete(keys::watch_index_key(
            &watch.actor,
            k.prefix,
            &k.key,
            timer.seq,
        ));
        watched.entries = watched.entries.checked_sub(1).ok_or_else(|| {
            corrupt(
                WatchedActor::NAME,
                &keys::watched_actor_key(&watch.actor),
                "more entries leave than it counts",
            )
        })?;
        if k.prefix {
            let len = k.key.len() as u16;
            match watched.prefix_lengths.get_mut(&len) {
                Some(1) => {
                    watched.prefix_lengths.remove(&len);
                }
                Some(n) => *n -= 1,
                None => {
                    return Err(corrupt(
                        WatchedActor::NAME,
                        &keys::watched_actor_key(&watch.actor),
                        "a prefix length it does not count",
                    ))
                }
            }
        }
    }
    store_watched(state, &watch.actor, &watched);
    state.delete(keys::watch_leaf_key(timer.seq));
    drop_hit(state, timer.seq)?;
    Ok(())
}

/// Rewrites a watch's leaf after its record changed (a fire, an extension).
pub fn write_leaf(state: &mut Overlay<'_>, timer: &Timer) {
    state.put(
        keys::watch_leaf_key(timer.seq),
        record_hash(timer).as_bytes().to_vec(),
    );
}

/// Steps one matching pass may take ([`queue_hits`]): each index probe
/// (a written key of a watched actor, then each prefix length in use that
/// could cover it) and each index entry it yields (a watch hit) is one (a
/// probe always yields at least one entry, so a pass may take one more).
/// Delivery makes two passes a block (the writes before the end of block,
/// then those of its fires), so a block enqueues at most twice this many
/// hits, however many watches a key has (#29).
pub const WATCH_MATCH_STEPS_PER_PASS: u64 = 4_096;

/// A written key whose matching is unfinished: the next probe (the exact
/// key unless `exact_done`, then the prefix lengths from `next_len` up)
/// resumes at watch sequence `after_seq`.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct PendingMatch {
    /// The watched actor.
    pub actor: Address,
    /// The key written.
    pub key: Vec<u8>,
    /// The exact-key probe is done.
    pub exact_done: bool,
    /// The shortest prefix length still to probe.
    pub next_len: u16,
    /// The first watch sequence the next probe still has to yield.
    pub after_seq: u64,
}

impl Canonical for PendingMatch {
    const NAME: &'static str = "pending watch match";
}

impl PendingMatch {
    fn fresh(actor: Address, key: Vec<u8>) -> PendingMatch {
        PendingMatch {
            actor,
            key,
            exact_done: false,
            next_len: 0,
            after_seq: 0,
        }
    }
}

fn record_hit(out: &mut BTreeMap<u64, Hit>, seq: u64, key: &[u8]) {
    let hit = out.entry(seq).or_default();
    if hit.matched_keys.len() < MAX_REPORTED_MATCHED_KEYS
        && hit.matched_keys.last().map(Vec::as_slice) != Some(key)
    {
        hit.matched_keys.push(key.to_vec());
    }
}

/// One probe of the watch index from `after_seq`: `Some(seq)` to resume at
/// if `steps` ran out before it was done.
fn probe(
    state: &(impl StateRead + ?Sized),
    prefix: Vec<u8>,
    after_seq: u64,
    key: &[u8],
    steps: &mut u64,
    out: &mut BTreeMap<u64, Hit>,
) -> Result<Option<u64>> {
    if *steps == 0 {
        return Ok(Some(after_seq));
    }
    *steps -= 1;
    let mut start = prefix.clone();
    start.extend_from_slice(&after_seq.to_be_bytes());
    let mut end = prefix.clone();
    end.extend_from_slice(&[0xff; 9]);
    // At least one entry per probe, so that every pass makes progress.
    let room = usize::try_from(*steps).unwrap_or(usize::MAX).max(1);
    let found = state.scan(&start, Some(&end), room.saturating_add(1))?;
    let seq_of = |k: &[u8]| {
        k.get(prefix.len()..)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_be_bytes)
            .ok_or_else(|| corrupt("watch index", k, "no 8-byte sequence"))
    };
    let take = found.len().min(room);
    for (k, _) in &found[..take] {
        record_hit(out, seq_of(k)?, key);
    }
    *steps = steps.saturating_sub(take as u64);
    match found.get(take) {
        Some((k, _)) => Ok(Some(seq_of(k)?)),
        None => Ok(None),
    }
}

/// Matches `m` against `actor`'s watches (`counts`) within `steps`:
/// `None` when done, else where to resume.
fn match_one(
    state: &(impl StateRead + ?Sized),
    counts: &WatchedActor,
    mut m: PendingMatch,
    steps: &mut u64,
    out: &mut BTreeMap<u64, Hit>,
) -> Result<Option<PendingMatch>> {
    if !m.exact_done {
        if m.key.len() <= MAX_WATCH_KEY_BYTES {
            let prefix = keys::watch_index_prefix(&m.actor, false, &m.key);
            if let Some(resume) = probe(state, prefix, m.after_seq, &m.key, steps, out)? {
                m.after_seq = resume;
                return Ok(Some(m));
            }
        }
        m.exact_done = true;
        m.after_seq = 0;
    }
    let longest = m.key.len().min(u16::MAX as usize) as u16;
    if m.next_len > longest {
        return Ok(None);
    }
    let lengths: Vec<u16> = counts
        .prefix_lengths
        .range(m.next_len..=longest)
        .map(|(&len, _)| len)
        .collect();
    for len in lengths {
        let prefix = keys::watch_index_prefix(&m.actor, true, &m.key[..len as usize]);
        if let Some(resume) = probe(state, prefix, m.after_seq, &m.key, steps, out)? {
            m.next_len = len;
            m.after_seq = resume;
            return Ok(Some(m));
        }
        m.after_seq = 0;
    }
    Ok(None)
}

/// Which watches the written storage keys `written` (watched actor, key;
/// sorted) hit, by watch sequence, with the keys that matched — all of
/// them, however many (tests and audits; delivery uses [`queue_hits`]).
pub fn hits(
    state: &(impl StateRead + ?Sized),
    written: &[(Address, Vec<u8>)],
) -> Result<BTreeMap<u64, Hit>> {
    let mut out: BTreeMap<u64, Hit> = BTreeMap::new();
    let mut watched = Watched::default();
    let mut steps = u64::MAX;
    for (actor, key) in written {
        let counts = watched.of(state, actor)?;
        if counts.entries == 0 {
            continue;
        }
        let m = PendingMatch::fresh(*actor, key.clone());
        match_one(state, counts, m, &mut steps, &mut out)?;
    }
    Ok(out)
}

/// The watched-actor counts of the actor last asked about.
#[derive(Default)]
struct Watched(Option<(Address, WatchedActor)>);

impl Watched {
    fn of(&mut self, state: &(impl StateRead + ?Sized), actor: &Address) -> Result<&WatchedActor> {
        if self.0.as_ref().map(|(a, _)| a) != Some(actor) {
            self.0 = Some((*actor, load_watched(state, actor)?));
        }
        Ok(&self.0.as_ref().expect("just set").1)
    }
}

/// Matches the written storage keys `written` (watched actor, key; sorted)
/// against the watches and queues their hits to be evaluated from block
/// `height` on, within [`WATCH_MATCH_STEPS_PER_PASS`] steps (#29): first
/// what earlier passes left unfinished (`t f`, oldest first), then
/// `written`; whatever the steps do not reach is left in `t f`, in order,
/// for the next pass. A watch so matched late still fires once per hit
/// (its hit waits once, [`enqueue`]). Returns how many hits were queued.
pub fn queue_hits(
    state: &mut Overlay<'_>,
    written: &[(Address, Vec<u8>)],
    height: u64,
) -> Result<u64> {
    queue_hits_within(state, written, height, WATCH_MATCH_STEPS_PER_PASS)
}

fn queue_hits_within(
    state: &mut Overlay<'_>,
    written: &[(Address, Vec<u8>)],
    height: u64,
    mut steps: u64,
) -> Result<u64> {
    let mut out: BTreeMap<u64, Hit> = BTreeMap::new();
    let mut watched = Watched::default();
    let mut blocked = false;
    // What earlier passes left, in order.
    let mut cursor = keys::watch_pending_key(0);
    let end = keys::end_of(keys::WATCH_PENDING);
    'pending: loop {
        let page = state.scan(&cursor, Some(&end), 64)?;
        if page.is_empty() {
            break;
        }
        for (k, v) in page {
            cursor = k.clone();
            cursor.push(0);
            if steps == 0 {
                blocked = true;
                break 'pending;
            }
            let m = timerhost_types::decode::<PendingMatch>(&v)
                .map_err(|e| corrupt(PendingMatch::NAME, &k, &e.to_string()))?;
            let counts = watched.of(&*state, &m.actor)?.clone();
            match match_one(&*state, &counts, m, &mut steps, &mut out)? {
                None => state.delete(k),
                Some(resume) => {
                    state.put_encoded(k, &resume);
                    blocked = true;
                    break 'pending;
                }
            }
        }
    }
    // This pass's writes, after them.
    let mut left: Vec<PendingMatch> = Vec::new();
    for (actor, key) in written {
        let counts = watched.of(&*state, actor)?.clone();
        if counts.entries == 0 {
            continue;
        }
        let m = PendingMatch::fresh(*actor, key.clone());
        if blocked {
            left.push(m);
            continue;
        }
        if let Some(resume) = match_one(&*state, &counts, m, &mut steps, &mut out)? {
            left.push(resume);
            blocked = true;
        }
    }
    if !left.is_empty() {
        let next_key = keys::watch_pending_next_key();
        let mut next = crate::counters::read_u64(&*state, &next_key)?;
        for m in &left {
            state.put_encoded(keys::watch_pending_key(next), m);
            next += 1;
        }
        state.put(next_key, next.to_be_bytes().to_vec());
    }
    enqueue(state, out, height)
}

/// Queues `hits` to be evaluated from block `height` on; a watch that
/// already has a waiting hit keeps it (and its matched keys). Returns how
/// many were queued.
pub fn enqueue(state: &mut Overlay<'_>, hits: BTreeMap<u64, Hit>, height: u64) -> Result<u64> {
    let mut queued = 0;
    for (seq, hit) in hits {
        let lookup = keys::watch_hit_lookup_key(seq);
        if state.get(&lookup)?.is_some() {
            continue;
        }
        state.put(lookup, height.to_be_bytes().to_vec());
        state.put_encoded(keys::watch_hit_key(height, seq), &hit);
        queued += 1;
    }
    Ok(queued)
}

/// Removes watch `seq`'s waiting hit, if it has one (waiting in `t h` or
/// queued in the Globalbox).
pub fn drop_hit(state: &mut Overlay<'_>, seq: u64) -> Result<()> {
    let lookup = keys::watch_hit_lookup_key(seq);
    if let Some(v) = state.get(&lookup)? {
        if v.starts_with(&keys::GLOBALBOX) || v.starts_with(&keys::GLOBALBOX_WAITING) {
            // Queued in the Globalbox: the value is its entry's key.
            state.delete(v);
        } else {
            let height = <[u8; 8]>::try_from(v.as_slice())
                .map(u64::from_be_bytes)
                .map_err(|_| corrupt("watch hit lookup", &lookup, "not 8 bytes"))?;
            state.delete(keys::watch_hit_key(height, seq));
        }
        state.delete(lookup);
    }
    Ok(())
}

/// Up to `limit` waiting hits evaluable at `height` (queued for `height` or
/// before), in (height, watch sequence) order: `(hit height, seq, hit)`.
pub fn waiting(
    state: &(impl StateRead + ?Sized),
    height: u64,
    limit: usize,
) -> Result<Vec<(u64, u64, Hit)>> {
    let start = keys::watch_hit_key(0, 0);
    let end = match height.checked_add(1) {
        Some(next) => keys::watch_hit_key(next, 0),
        None => keys::end_of(keys::WATCH_HIT),
    };
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            let part = |range: std::ops::Range<usize>| {
                k.get(range)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map(u64::from_be_bytes)
                    .ok_or_else(|| corrupt(Hit::NAME, &k, "not height ‖ sequence"))
            };
            let hit = timerhost_types::decode::<Hit>(&v)
                .map_err(|e| corrupt(Hit::NAME, &k, &e.to_string()))?;
            Ok((part(2..10)?, part(10..18)?, hit))
        })
        .collect()
}

/// The watch of a record, if it is one.
pub fn watch_of(timer: &Timer) -> Option<&Watch> {
    match &timer.kind {
        TimerKind::State(w) => Some(w),
        _ => None,
    }
}

/// The written storage keys among `changes` keys (`s ‖ actor ‖ key`), as
/// (actor, key), in key order.
pub fn storage_writes<'k>(written: impl IntoIterator<Item = &'k [u8]>) -> Vec<(Address, Vec<u8>)> {
    written
        .into_iter()
        .filter_map(|k| {
            if k.first() != Some(&timerhost_types::keys::STORAGE) || k.len() < 21 {
                return None;
            }
            let actor = Address::from_slice(&k[1..21]).ok()?;
            Some((actor, k[21..].to_vec()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::EmptyState;
    use timerhost_types::{Hash, WatchKey};

    const WATCHED: Address = Address([0x44; 20]);

    fn watch_timer(seq: u64, entries: &[&str]) -> Timer {
        let mut keys: Vec<WatchKey> = entries.iter().map(|e| WatchKey::parse(e)).collect();
        keys.sort();
        Timer {
            actor_address: Address([0x11; 20]),
            height: 1,
            payload: vec![],
            timer_id: Hash([seq as u8; 32]),
            handler: "handle_timer".into(),
            fee_payer: Address([0x11; 20]),
            gas_limit_per_fire: 1_000,
            expires_at: 100,
            seq,
            deposit: 0,
            bid: 0,
            max_fee_per_cycle: 0,
            kind: TimerKind::State(Watch {
                actor: WATCHED,
                keys,
                fires: 0,
            }),
            escrow_key: None,
            booked: false,
            retry: None,
        }
    }

    fn written(keys: &[&str]) -> Vec<(Address, Vec<u8>)> {
        keys.iter()
            .map(|k| (WATCHED, k.as_bytes().to_vec()))
            .collect()
    }

    fn matched(state: &Overlay<'_>, keys: &[&str]) -> BTreeMap<u64, Vec<String>> {
        hits(state, &written(keys))
            .unwrap()
            .into_iter()
            .map(|(seq, hit)| {
                (
                    seq,
                    hit.matched_keys
                        .into_iter()
                        .map(|k| String::from_utf8(k).unwrap())
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn exact_keys_and_prefixes_match_only_what_they_name() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        for (seq, entries) in [
            (1, vec!["price"]),
            (2, vec!["price*"]),
            (3, vec!["pr*", "volume"]),
        ] {
            let t = watch_timer(seq, &entries);
            register(&mut state, &t, watch_of(&t).unwrap()).unwrap();
        }
        assert_eq!(
            matched(&state, &["price"]),
            BTreeMap::from([
                (1, vec!["price".to_string()]),
                (2, vec!["price".into()]),
                (3, vec!["price".into()])
            ])
        );
        // "prices" is not the exact key "price"; "p" matches no prefix.
        assert_eq!(
            matched(&state, &["p", "prices"]),
            BTreeMap::from([(2, vec!["prices".to_string()]), (3, vec!["prices".into()])])
        );
        assert_eq!(
            matched(&state, &["volume"]),
            BTreeMap::from([(3, vec!["volume".to_string()])])
        );
        assert!(matched(&state, &["volumes", "other"]).is_empty());
        // Another actor's identical keys hit nothing.
        assert!(hits(&state, &[(Address([9; 20]), b"price".to_vec())])
            .unwrap()
            .is_empty());
    }

    #[test]
    fn unregistering_leaves_nothing_behind() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let t = watch_timer(7, &["a*", "b", "ab*"]);
        register(&mut state, &t, watch_of(&t).unwrap()).unwrap();
        let hit = hits(&state, &written(&["abc"])).unwrap();
        enqueue(&mut state, hit, 5).unwrap();
        assert_eq!(waiting(&state, 5, 10).unwrap().len(), 1);
        unregister(&mut state, &t, watch_of(&t).unwrap()).unwrap();
        assert!(
            state.changes().values().all(Option::is_none),
            "every key written was deleted"
        );
    }

    /// #29: one write watched by more watches than a pass may match
    /// enqueues at most the bound in a block; the rest follow in the next
    /// passes, each watch exactly once (before, all of them at once, paid
    /// by nobody: one write watched 20,000 times took 0.31 s).
    #[test]
    fn a_write_watched_beyond_the_bound_fans_out_over_several_passes() {
        const BOUND: usize = WATCH_MATCH_STEPS_PER_PASS as usize;
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let watches = BOUND as u64 + 2_000;
        for seq in 0..watches {
            let t = watch_timer(seq, if seq % 2 == 0 { &["k"] } else { &["k*"] });
            register(&mut state, &t, watch_of(&t).unwrap()).unwrap();
        }
        let all = usize::MAX;
        crate::delivery::queue_end_of_block_writes(&mut state, &written(&["k"]), 5).unwrap();
        let first = waiting(&state, 5, all).unwrap().len();
        assert!(
            first > 0 && first <= BOUND,
            "{first} hits queued in one pass"
        );
        crate::delivery::queue_end_of_block_writes(&mut state, &[], 6).unwrap();
        let mut seqs: Vec<u64> = waiting(&state, 6, all)
            .unwrap()
            .into_iter()
            .map(|(_, s, _)| s)
            .collect();
        assert_eq!(seqs.len() as u64, watches, "every watch, once");
        seqs.sort_unstable();
        seqs.dedup();
        assert_eq!(seqs.len() as u64, watches, "every watch, once");
        assert!(state
            .scan(
                &keys::watch_pending_key(0),
                Some(&keys::end_of(keys::WATCH_PENDING)),
                1
            )
            .unwrap()
            .is_empty());
    }

    /// Matching resumed in passes of a few steps (probes and hits, across
    /// keys, exact entries and prefix lengths) queues the same watches as
    /// one unbounded pass.
    #[test]
    fn matching_in_small_passes_queues_what_one_pass_would() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        for seq in 0..30u64 {
            let entries: &[&str] = match seq % 5 {
                0 => &["price"],
                1 => &["p*"],
                2 => &["pri*", "volume"],
                3 => &["price*"],
                _ => &["other"],
            };
            let t = watch_timer(seq, entries);
            register(&mut state, &t, watch_of(&t).unwrap()).unwrap();
        }
        let keys = ["other", "price", "prices", "volume"];
        let expected: Vec<u64> = hits(&state, &written(&keys)).unwrap().into_keys().collect();
        for steps in [1u64, 2, 3, 7] {
            let mut s = Overlay::new(&state);
            queue_hits_within(&mut s, &written(&keys), 5, steps).unwrap();
            for pass in 0..200 {
                queue_hits_within(&mut s, &written(&[]), 6 + pass, steps).unwrap();
            }
            let mut got: Vec<u64> = waiting(&s, u64::MAX, usize::MAX)
                .unwrap()
                .into_iter()
                .map(|(_, seq, _)| seq)
                .collect();
            got.sort_unstable();
            assert_eq!(got, expected, "passes of {steps} steps");
        }
    }

    #[test]
    fn a_watch_waits_once_and_hits_wait_in_height_then_sequence_order() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        for seq in [4, 9] {
            let t = watch_timer(seq, &["k"]);
            register(&mut state, &t, watch_of(&t).unwrap()).unwrap();
        }
        let first = hits(&state, &written(&["k"])).unwrap();
        assert_eq!(enqueue(&mut state, first.clone(), 6).unwrap(), 2);
        assert_eq!(enqueue(&mut state, first, 7).unwrap(), 0, "already waiting");
        assert!(waiting(&state, 5, 10).unwrap().is_empty(), "not before 6");
        let order: Vec<u64> = waiting(&state, 7, 10)
            .unwrap()
            .into_iter()
            .map(|(_, s, _)| s)
            .collect();
        assert_eq!(order, vec![4, 9]);
    }
}
