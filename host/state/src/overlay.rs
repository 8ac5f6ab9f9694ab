//! Reading state, and the write overlay that a block executes in.
//!
//! A block runs in one [`Overlay`] over committed state. Each transaction
//! takes a [`Checkpoint`] first; if it fails, [`Overlay::revert_to`] undoes
//! exactly its writes (and a failed nested actor call undoes only its own).
//! When the block is done, [`Overlay::into_changes`] yields the sorted
//! [`ChangeSet`] that is hashed into the state root and committed.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::ops::{Bound, ControlFlow};

use timerhost_types::encoding::{self, Canonical};

use crate::error::{hex_key, Result, StorageError};

/// The writes of a block: key → new value (`None` = deleted), sorted by key.
pub type ChangeSet = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// Read access to consensus state.
pub trait StateRead {
    /// Reads one key.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// The first `n` bytes of the value at `key` (fewer if it is shorter)
    /// and the value's whole length, without copying the rest: for callers
    /// that must look at a record's fixed-size head (its owner) before
    /// they may spend work on its bytes (#29).
    fn get_head(&self, key: &[u8], n: usize) -> Result<Option<(Vec<u8>, usize)>> {
        Ok(self.get(key)?.map(|mut v| {
            let len = v.len();
            v.truncate(n);
            (v, len)
        }))
    }

    /// Up to `limit` entries with `start ≤ key < end` (`None`: unbounded), ascending.
    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;

    /// The keys of [`StateRead::scan`], without copying the values (a
    /// key walk must not pay for the bytes stored under the keys, #29).
    fn scan_keys(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Vec<u8>>> {
        Ok(self
            .scan(start, end, limit)?
            .into_iter()
            .map(|(k, _)| k)
            .collect())
    }
}

/// What [`Overlay::next_key`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NextKey {
    /// The first live key of the range, if any (`None` also when the walk
    /// gave up).
    pub key: Option<Vec<u8>>,
    /// Deleted entries stepped over to get there: keys this overlay
    /// deleted, each counted once whether or not the base holds it.
    pub skipped: u64,
    /// The walk stopped after stepping over more than its `max_skipped`.
    pub gave_up: bool,
}

/// Committed state with nothing in it: what genesis is built on, and a base
/// for overlays in tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptyState;

impl StateRead for EmptyState {
    fn get(&self, _key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(None)
    }

    fn scan(
        &self,
        _start: &[u8],
        _end: Option<&[u8]>,
        _limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        Ok(Vec::new())
    }
}

/// Typed helpers over [`StateRead`].
pub trait StateReadExt: StateRead {
    /// Reads and decodes a canonical value; a decoding failure is corruption.
    fn get_decoded<T: Canonical>(&self, key: &[u8]) -> Result<Option<T>> {
        match self.get(key)? {
            None => Ok(None),
            Some(bytes) => encoding::decode(&bytes)
                .map(Some)
                .map_err(|e| StorageError::Corrupt {
                    what: T::NAME,
                    key: hex_key(key),
                    reason: e.to_string(),
                }),
        }
    }
}

impl<T: StateRead + ?Sized> StateReadExt for T {}

/// The smallest key strictly greater than `key` in byte order.
fn successor(key: &[u8]) -> Vec<u8> {
    let mut next = key.to_vec();
    next.push(0);
    next
}

/// One undo-log entry: a key, what `writes` held for it before (`None`: the
/// key was not buffered) and the key's previous undo entry, if any.
type JournalEntry = (Vec<u8>, Option<Option<Vec<u8>>>, Option<usize>);

/// A position in the overlay's journal to return to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use = "a checkpoint is only useful if you revert to it or release it"]
pub struct Checkpoint(usize);

/// Buffered writes over a [`StateRead`] base, with nested checkpoints.
pub struct Overlay<'a> {
    base: &'a dyn StateRead,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// Undo log for checkpoints.
    journal: Vec<JournalEntry>,
    /// Index of each buffered key's latest undo entry.
    journaled: HashMap<Vec<u8>, usize>,
    /// Journal position of the latest checkpoint taken (lowered by reverts).
    /// A key whose latest undo entry is at or after it already restores the
    /// value that checkpoint needs, so rewriting it journals nothing: a loop
    /// rewriting one key keeps one undo entry per checkpoint, not one per
    /// write (memory an execution is charged for).
    latest_checkpoint: Cell<usize>,
}

impl<'a> Overlay<'a> {
    /// An empty overlay over `base`.
    pub fn new(base: &'a dyn StateRead) -> Self {
        Self {
            base,
            writes: BTreeMap::new(),
            journal: Vec::new(),
            journaled: HashMap::new(),
            latest_checkpoint: Cell::new(0),
        }
    }

    /// Sets `key` to `value`.
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.record(key, Some(value));
    }

    /// Encodes and stores a canonical value.
    pub fn put_encoded<T: Canonical>(&mut self, key: Vec<u8>, value: &T) {
        self.put(key, encoding::encode(value));
    }

    /// Deletes `key`.
    pub fn delete(&mut self, key: Vec<u8>) {
        self.record(key, None);
    }

    fn record(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        let latest_undo = self.journaled.get(&key).copied();
        if latest_undo.is_some_and(|i| i >= self.latest_checkpoint.get()) {
            self.writes.insert(key, value);
            return;
        }
        let previous = self.writes.insert(key.clone(), value);
        self.journaled.insert(key.clone(), self.journal.len());
        self.journal.push((key, previous, latest_undo));
    }

    /// Marks the current position; writes after it can be undone.
    pub fn checkpoint(&self) -> Checkpoint {
        self.latest_checkpoint.set(self.journal.len());
        Checkpoint(self.journal.len())
    }

    /// Undoes every write made since `checkpoint`.
    pub fn revert_to(&mut self, checkpoint: Checkpoint) {
        while self.journal.len() > checkpoint.0 {
            let (key, previous, earlier_undo) =
                self.journal.pop().expect("journal longer than checkpoint");
            match earlier_undo {
                Some(i) => self.journaled.insert(key.clone(), i),
                None => self.journaled.remove(&key),
            };
            match previous {
                Some(prev) => {
                    self.writes.insert(key, prev);
                }
                None => {
                    self.writes.remove(&key);
                }
            }
        }
        // Checkpoints nest: any taken after this one are gone with their writes.
        let latest = self.latest_checkpoint.get().min(checkpoint.0);
        self.latest_checkpoint.set(latest);
    }

    /// Keeps the writes since `checkpoint` (nothing to do; named for clarity
    /// at call sites that pair every checkpoint with a decision).
    pub fn release(&mut self, _checkpoint: Checkpoint) {}

    /// Number of buffered keys.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// Has nothing been written?
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// The buffered writes, sorted by key.
    pub fn into_changes(self) -> ChangeSet {
        self.writes
    }

    /// Every key written since `checkpoint` and not reverted, sorted and
    /// once each (a write journals its key again after every checkpoint
    /// taken since its last undo entry, so the journal from `checkpoint` on
    /// names exactly these).
    pub fn keys_written_since(&self, checkpoint: Checkpoint) -> Vec<&[u8]> {
        let mut keys: Vec<&[u8]> = self.journal[checkpoint.0.min(self.journal.len())..]
            .iter()
            .map(|(key, _, _)| key.as_slice())
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The buffered writes, sorted by key, without consuming the overlay.
    pub fn changes(&self) -> &ChangeSet {
        &self.writes
    }

    /// The first live key in `[start, end)`, reading keys only, and how
    /// many deleted entries it stepped over on the way ([`NextKey`]). A
    /// key deleted in this overlay still sits in the base (and in the
    /// overlay, as a tombstone) until the block commits, so a walk from
    /// the start of a range steps over every key deleted in it; the caller
    /// charges for each (`storage.keys()`, #29), and `max_skipped` bounds
    /// the work before the charge: past it the walk gives up.
    pub fn next_key(&self, start: &[u8], end: &[u8], max_skipped: u64) -> Result<NextKey> {
        let mut found = NextKey {
            key: None,
            skipped: 0,
            gave_up: false,
        };
        // Deleted runs are long or absent: start small, fetch more at a time.
        self.merge(
            start,
            Some(end),
            Chunks::Growing(16),
            |cursor, end, n| self.base.scan_keys(cursor, end, n),
            |key: &Vec<u8>| key.as_slice(),
            |entry| match entry {
                Merged::Own(key, Some(_)) | Merged::Base(key) => {
                    found.key = Some(key.clone());
                    ControlFlow::Break(())
                }
                Merged::Own(_, None) => {
                    found.skipped += 1;
                    found.gave_up = found.skipped > max_skipped;
                    if found.gave_up {
                        ControlFlow::Break(())
                    } else {
                        ControlFlow::Continue(())
                    }
                }
            },
        )?;
        Ok(found)
    }

    /// Walks `[start, end)` in key order, merging the base's entries
    /// (fetched by `fetch`, a chunk at a time) with this overlay's writes in
    /// the same key interval, and hands each to `visit` until it breaks or
    /// the base runs out. Deletions may swallow base entries, so a walk
    /// that wants `n` live entries keeps fetching, but no chunk past the
    /// one where `visit` stops is read. One merge serves `scan`,
    /// `scan_keys` and `next_key`, which differ in what the base gives
    /// (entries or keys) and what they keep.
    fn merge<B>(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        chunks: Chunks,
        fetch: impl Fn(&[u8], Option<&[u8]>, usize) -> Result<Vec<B>>,
        key_of: impl Fn(&B) -> &[u8],
        mut visit: impl FnMut(Merged<'_, B>) -> ControlFlow<()>,
    ) -> Result<()> {
        let (mut chunk, grow) = match chunks {
            Chunks::Fixed(n) => (n, false),
            Chunks::Growing(n) => (n, true),
        };
        let mut cursor = start.to_vec();
        loop {
            let base = fetch(&cursor, end, chunk)?;
            let exhausted = base.len() < chunk;
            let upper: Bound<&[u8]> = if exhausted {
                end.map_or(Bound::Unbounded, Bound::Excluded)
            } else {
                Bound::Included(key_of(base.last().expect("non-empty chunk")))
            };
            let mut own = self
                .writes
                .range::<[u8], _>((Bound::Included(cursor.as_slice()), upper))
                .peekable();
            let mut base_iter = base.iter().peekable();
            loop {
                let take_own = match (own.peek(), base_iter.peek()) {
                    (None, None) => break,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (Some((own_key, _)), Some(base_entry)) => {
                        own_key.as_slice() <= key_of(base_entry)
                    }
                };
                let entry = if take_own {
                    let (key, value) = own.next().expect("peeked");
                    // An overlay write shadows the base entry with the same key.
                    if base_iter
                        .peek()
                        .is_some_and(|base_entry| key_of(base_entry) == key.as_slice())
                    {
                        base_iter.next();
                    }
                    Merged::Own(key, value.as_ref())
                } else {
                    Merged::Base(base_iter.next().expect("peeked"))
                };
                if visit(entry).is_break() {
                    return Ok(());
                }
            }
            if exhausted {
                return Ok(());
            }
            cursor = successor(key_of(base.last().expect("non-empty chunk")));
            if grow {
                chunk = (chunk * 2).min(1024);
            }
        }
    }
}

/// How [`Overlay::merge`] fetches the base.
enum Chunks {
    /// This many entries each time.
    Fixed(usize),
    /// This many first, then twice as many each time, up to 1,024.
    Growing(usize),
}

/// What [`Overlay::merge`] hands its visitor, in key order.
enum Merged<'a, B> {
    /// This overlay's write of the key: `Some` the value, `None` a deletion
    /// (which hides the base's entry of the key, if any).
    Own(&'a Vec<u8>, Option<&'a Vec<u8>>),
    /// A base entry that no write of this overlay shadows.
    Base(&'a B),
}

impl StateRead for Overlay<'_> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.writes.get(key) {
            Some(value) => Ok(value.clone()),
            None => self.base.get(key),
        }
    }

    fn get_head(&self, key: &[u8], n: usize) -> Result<Option<(Vec<u8>, usize)>> {
        match self.writes.get(key) {
            Some(value) => Ok(value
                .as_ref()
                .map(|v| (v[..v.len().min(n)].to_vec(), v.len()))),
            None => self.base.get_head(key, n),
        }
    }

    fn scan_keys(&self, start: &[u8], end: Option<&[u8]>, limit: usize) -> Result<Vec<Vec<u8>>> {
        // `scan`'s merge, over keys only: neither the base's values nor the
        // overlay's are copied.
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        self.merge(
            start,
            end,
            Chunks::Fixed(limit.clamp(16, 1024)),
            |cursor, end, n| self.base.scan_keys(cursor, end, n),
            |key: &Vec<u8>| key.as_slice(),
            |entry| {
                match entry {
                    Merged::Own(key, Some(_)) | Merged::Base(key) => out.push(key.clone()),
                    Merged::Own(_, None) => {}
                }
                if out.len() >= limit {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )?;
        Ok(out)
    }

    fn scan(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        self.merge(
            start,
            end,
            Chunks::Fixed(limit.clamp(16, 1024)),
            |cursor, end, n| self.base.scan(cursor, end, n),
            |(key, _): &(Vec<u8>, Vec<u8>)| key.as_slice(),
            |entry| {
                match entry {
                    Merged::Own(key, Some(value)) | Merged::Base((key, value)) => {
                        out.push((key.clone(), value.clone()))
                    }
                    Merged::Own(_, None) => {}
                }
                if out.len() >= limit {
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            },
        )?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Default)]
    struct MapState(BTreeMap<Vec<u8>, Vec<u8>>);

    impl StateRead for MapState {
        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
            Ok(self.0.get(key).cloned())
        }
        fn scan(
            &self,
            start: &[u8],
            end: Option<&[u8]>,
            limit: usize,
        ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
            let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
            Ok(self
                .0
                .range::<[u8], _>((Bound::Included(start), upper))
                .take(limit)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect())
        }
    }

    #[test]
    fn checkpoints_nest_and_revert_exactly() {
        let base = MapState([(b"k".to_vec(), b"base".to_vec())].into());
        let mut o = Overlay::new(&base);
        o.put(b"a".to_vec(), b"1".to_vec());
        let outer = o.checkpoint();
        o.put(b"a".to_vec(), b"2".to_vec());
        o.delete(b"k".to_vec());
        let inner = o.checkpoint();
        o.put(b"b".to_vec(), b"3".to_vec());
        o.revert_to(inner);
        assert_eq!(o.get(b"b").unwrap(), None);
        assert_eq!(o.get(b"a").unwrap(), Some(b"2".to_vec()));
        assert_eq!(o.get(b"k").unwrap(), None);
        o.revert_to(outer);
        assert_eq!(o.get(b"a").unwrap(), Some(b"1".to_vec()));
        assert_eq!(o.get(b"k").unwrap(), Some(b"base".to_vec()));
        let changes = o.into_changes();
        assert_eq!(changes.len(), 1);
    }

    #[test]
    fn keys_written_since_a_checkpoint_are_the_kept_writes_after_it() {
        let base = MapState(Default::default());
        let mut o = Overlay::new(&base);
        o.put(b"before".to_vec(), b"1".to_vec());
        o.put(b"both".to_vec(), b"1".to_vec());
        let mark = o.checkpoint();
        let kept = o.checkpoint();
        o.put(b"both".to_vec(), b"2".to_vec());
        o.put(b"after".to_vec(), b"2".to_vec());
        o.put(b"after".to_vec(), b"3".to_vec());
        o.release(kept);
        let reverted = o.checkpoint();
        o.put(b"reverted".to_vec(), b"x".to_vec());
        o.revert_to(reverted);
        assert_eq!(
            o.keys_written_since(mark),
            vec![&b"after"[..], &b"both"[..]],
            "rewritten keys count, reverted ones and earlier ones do not"
        );
    }

    #[test]
    fn next_key_steps_over_deleted_keys_and_counts_them() {
        let base = MapState((0u8..50).map(|i| (vec![1, i], vec![0; 1_000])).collect());
        let mut o = Overlay::new(&base);
        for i in 0u8..40 {
            o.delete(vec![1, i]);
        }
        o.delete(vec![1, 200]); // not in the base: still a tombstone to step over
        o.put(vec![1, 45, 0], b"own".to_vec());
        let found = o.next_key(&[1], &[2], u64::MAX).unwrap();
        assert_eq!(
            found,
            NextKey {
                key: Some(vec![1, 40]),
                skipped: 40,
                gave_up: false
            }
        );
        let from = o.next_key(&[1, 45, 0], &[2], u64::MAX).unwrap();
        assert_eq!(from.key, Some(vec![1, 45, 0]));
        assert_eq!(from.skipped, 0);
        let past = o.next_key(&[1, 50], &[2], u64::MAX).unwrap();
        assert_eq!((past.key, past.skipped), (None, 1));
        let bounded = o.next_key(&[1], &[2], 10).unwrap();
        assert_eq!(
            (bounded.key, bounded.skipped, bounded.gave_up),
            (None, 11, true)
        );
    }

    proptest! {
        /// `next_key` finds what a full scan finds first.
        #[test]
        fn next_key_matches_scan(
            base in proptest::collection::btree_map(proptest::collection::vec(0u8..4, 1..4), proptest::collection::vec(any::<u8>(), 1..3), 0..40),
            writes in proptest::collection::vec((proptest::collection::vec(0u8..4, 1..4), proptest::option::of(proptest::collection::vec(any::<u8>(), 1..3))), 0..40),
            start in proptest::collection::vec(0u8..4, 0..3),
        ) {
            let state = MapState(base);
            let mut overlay = Overlay::new(&state);
            for (k, v) in writes {
                match v {
                    Some(v) => overlay.put(k, v),
                    None => overlay.delete(k),
                }
            }
            let end = vec![3u8, 3];
            let keys: Vec<Vec<u8>> = overlay
                .scan(&start, Some(&end), 50)
                .unwrap()
                .into_iter()
                .map(|(k, _)| k)
                .collect();
            prop_assert_eq!(overlay.scan_keys(&start, Some(&end), 50).unwrap(), keys.clone());
            let first = keys.first().cloned();
            let next = overlay.next_key(&start, &end, u64::MAX).unwrap();
            prop_assert!(!next.gave_up);
            prop_assert_eq!(next.key, first);
        }
    }

    proptest! {
        /// The merged scan equals a scan over the materialised result.
        #[test]
        fn scan_matches_model(
            base in proptest::collection::btree_map(proptest::collection::vec(0u8..4, 1..4), proptest::collection::vec(any::<u8>(), 1..3), 0..40),
            writes in proptest::collection::vec((proptest::collection::vec(0u8..4, 1..4), proptest::option::of(proptest::collection::vec(any::<u8>(), 1..3))), 0..40),
            start in proptest::collection::vec(0u8..4, 0..3),
            limit in 0usize..50,
        ) {
            let state = MapState(base.clone());
            let mut overlay = Overlay::new(&state);
            let mut model = base;
            for (k, v) in writes {
                match v {
                    Some(v) => { overlay.put(k.clone(), v.clone()); model.insert(k, v); }
                    None => { overlay.delete(k.clone()); model.remove(&k); }
                }
            }
            let end = vec![3u8, 3];
            let expected: Vec<_> = model
                .range::<[u8], _>((Bound::Included(start.as_slice()), Bound::Excluded(end.as_slice())))
                .take(limit)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            prop_assert_eq!(overlay.scan(&start, Some(&end), limit).unwrap(), expected);
        }
    }

    type Model = BTreeMap<Vec<u8>, Vec<u8>>;

    /// One step of the checkpoint model test.
    #[derive(Clone, Debug)]
    enum Op {
        Put(u8, u8),
        Delete(u8),
        Checkpoint,
        Revert,
        Release,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u8..3, any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
            1 => (0u8..3).prop_map(Op::Delete),
            1 => Just(Op::Checkpoint),
            1 => Just(Op::Revert),
            1 => Just(Op::Release),
        ]
    }

    proptest! {
        /// Nested checkpoints over repeated writes of a few keys (the case
        /// where only the first write after a checkpoint is journaled)
        /// revert to exactly the state each checkpoint saw.
        #[test]
        fn checkpoints_match_a_snapshot_model(ops in proptest::collection::vec(op(), 0..80)) {
            let base = MapState([(vec![0], vec![100])].into());
            let mut overlay = Overlay::new(&base);
            let mut model: Model = base.0.clone();
            let mut stack: Vec<(Checkpoint, Model)> = Vec::new();
            for op in ops {
                match op {
                    Op::Put(k, v) => { overlay.put(vec![k], vec![v]); model.insert(vec![k], vec![v]); }
                    Op::Delete(k) => { overlay.delete(vec![k]); model.remove(&vec![k]); }
                    Op::Checkpoint => stack.push((overlay.checkpoint(), model.clone())),
                    Op::Revert => if let Some((cp, saved)) = stack.pop() {
                        overlay.revert_to(cp);
                        model = saved;
                    },
                    Op::Release => if let Some((cp, _)) = stack.pop() {
                        overlay.release(cp);
                    },
                }
                for k in 0u8..3 {
                    prop_assert_eq!(overlay.get(&[k]).unwrap(), model.get(&vec![k]).cloned());
                }
            }
        }
    }
}
