//! The Globalbox side of a block's walk (#18, #31): the enqueue of due
//! timers and watch hits (priority and market ordering), the re-admission
//! of entries that waited for the lane basefee, and materialisation from
//! the queue's head. Part of [`super::Walk`]; the FIFO walks, the judging
//! of one timer and the fire itself are in [`super`].

use timerhost_state::{Overlay, StateReadExt};
use timerhost_types::{Timer, TimerKind};

use super::{watch_record, Verdict, Walk, SCAN_CHUNK};
use crate::budgets::stored_len;
use crate::error::Result;
use crate::keys::{self, DueQueue};
use crate::queue::{self, Queued};
use crate::record::TimerRecord;
use crate::{events, globalbox, watch};

impl Walk<'_> {
    /// Priority ordering's enqueue (§7): the due height and time timers and
    /// the waiting watch hits join the Globalbox — at most
    /// [`GLOBALBOX_ENQUEUE_PER_BLOCK`](timerhost_types::timer::GLOBALBOX_ENQUEUE_PER_BLOCK) per block, each queue in its own
    /// order, so the work stays bounded; the rest join in later blocks,
    /// their priority (which counts from their due height) unharmed.
    pub(super) fn enqueue(&mut self, state: &mut Overlay<'_>, timestamp_ms: u64) -> Result<()> {
        self.readmit(state)?;
        let mut left = usize::try_from(self.budgets.enqueue_left).unwrap_or(usize::MAX);
        // #29: and at most GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK bytes of
        // records, each record's length read before the record itself.
        let mut full = false;
        for (due, through) in [
            (DueQueue::Time, timestamp_ms),
            (DueQueue::Height, self.height),
        ] {
            let mut cursor = queue::DueCursor::start(due);
            'queue: while !full {
                if left == 0 {
                    full = true;
                    break;
                }
                let record_keys =
                    queue::due_keys_from(state, cursor, through, left.min(SCAN_CHUNK))?;
                if record_keys.is_empty() {
                    break;
                }
                for key in record_keys {
                    let bytes = stored_len(state, &key)?;
                    if left == 0 || !self.budgets.enqueue_fits(bytes) {
                        full = true;
                        break 'queue;
                    }
                    let record = state
                        .get_decoded::<TimerRecord>(&key)?
                        .ok_or_else(|| keys::corrupt("timer queue", &key, "vanished"))?;
                    let bucket = crate::record::bucket_of(&record.timer)
                        .expect("a queued record is a height or time timer");
                    cursor = queue::DueCursor::after(bucket, &record.timer);
                    // A time timer became due at the first block reaching
                    // its time: a crowded earlier block may have left it
                    // behind.
                    let due_height = match due {
                        DueQueue::Height => record.timer.height,
                        DueQueue::Time => match record.timer.kind {
                            TimerKind::Time { timestamp_ms } => {
                                globalbox::came_due_at(state, timestamp_ms, self.height)?
                            }
                            _ => self.height,
                        },
                    };
                    let place = self.place(state, &record.timer)?;
                    globalbox::enqueue_timer(
                        state,
                        self.config,
                        &record,
                        due_height,
                        self.height,
                        place,
                        self.removals,
                    )?;
                    left -= 1;
                    self.budgets.spend_enqueue(bytes);
                }
            }
            if due == DueQueue::Time {
                let behind = full && !queue::due_keys_from(state, cursor, through, 1)?.is_empty();
                if behind {
                    globalbox::mark_time_lag(state, timestamp_ms, self.height);
                } else {
                    globalbox::clear_time_lag(state)?;
                }
            }
        }
        if left > 0 && !full {
            let hits = watch::waiting(state, self.height, left)?;
            for (hit_height, seq, hit) in hits {
                let key = keys::watch_record_key(seq);
                let bytes = stored_len(state, &key)?;
                if !self.budgets.enqueue_fits(bytes) {
                    break;
                }
                let record = watch_record(state, seq)?;
                let place = self.place(state, &record.timer)?;
                globalbox::enqueue_hit(
                    state,
                    self.config,
                    &record.timer,
                    hit,
                    hit_height,
                    self.height,
                    place,
                );
                left -= 1;
                self.budgets.spend_enqueue(bytes);
            }
        }
        self.budgets.enqueue_left = left as u64;
        Ok(())
    }

    /// Where `timer` joins the Globalbox ([`globalbox::place`]); one that
    /// starts waiting for the lane basefee gets its `TimerDeferred`.
    fn place(&mut self, state: &Overlay<'_>, timer: &Timer) -> Result<globalbox::Place> {
        let place = globalbox::place(state, self.config, self.lane_basefee, self.height, timer)?;
        if place == globalbox::Place::Waiting {
            self.deferred(timer);
        }
        Ok(place)
    }

    fn deferred(&mut self, timer: &Timer) {
        self.plan.stats.deferred += 1;
        self.plan
            .events
            .push(events::timer_deferred(timer, self.lane_basefee));
    }

    /// Re-admits entries that waited for the lane basefee (#31) under the
    /// enqueue budget, before this block's newly due timers join.
    pub(super) fn readmit(&mut self, state: &mut Overlay<'_>) -> Result<()> {
        let limit = usize::try_from(self.budgets.enqueue_left)
            .unwrap_or(usize::MAX)
            .min(SCAN_CHUNK);
        loop {
            let limit = limit.min(usize::try_from(self.budgets.enqueue_left).unwrap_or(0));
            if limit == 0 {
                return Ok(());
            }
            let moved =
                globalbox::readmit(state, self.config, self.lane_basefee, self.height, limit)?;
            self.budgets.enqueue_left -= moved as u64;
            if moved < limit {
                return Ok(());
            }
        }
    }

    /// Materialise from the Globalbox's head (§8.3 step 2, §9): each entry
    /// is judged now (revoked, expired, unfunded → removed), then fires if
    /// its target is under `max_fires_per_target` (else it keeps its place)
    /// and the block's fire quota and lane have room (else materialising
    /// stops: strict order). At most `2 × max_fires_per_block` entries are
    /// examined per block. Returns whether the Globalbox is now empty.
    pub(super) fn materialize(&mut self, state: &mut Overlay<'_>) -> Result<bool> {
        let bound = self
            .config
            .max_fires_per_block
            .saturating_mul(2)
            .max(SCAN_CHUNK as u64);
        let mut skipped = false;
        let mut cursor: Option<Vec<u8>> = None;
        loop {
            let entries = globalbox::entries_from(state, cursor.as_deref(), self.chunk())?;
            if entries.is_empty() {
                return Ok(!skipped && globalbox::waiting(state, 1)?.is_empty());
            }
            for (key, entry) in entries {
                // Counted for the whole block: a walk resumed after the
                // block's cells freed up examines no entry twice for free.
                self.budgets.examined += 1;
                if self.budgets.examined > bound {
                    return Ok(false);
                }
                let mut next = key;
                next.push(0);
                cursor = Some(next);
                let record = globalbox::record_of(state, &entry)?;
                let from = if entry.is_watch() {
                    Queued::Due
                } else {
                    Queued::Globalbox
                };
                match self.classify(state, &record.timer, entry.is_watch())? {
                    Verdict::Remove(reason) => {
                        if !self.remove(state, &record, from, reason)? {
                            return Ok(false);
                        }
                    }
                    Verdict::Stop => return Ok(false),
                    Verdict::Defer => {
                        // Out of the way, so that it cannot hold the head.
                        globalbox::defer(state, cursor_key(&cursor), &entry);
                        self.deferred(&record.timer);
                    }
                    Verdict::Fire(max_cost) => {
                        let fired = self.budgets.per_target.entry(entry.actor).or_default();
                        if *fired >= self.config.max_fires_per_target {
                            skipped = true;
                            continue;
                        }
                        *fired += 1;
                        let weight = entry.weight;
                        match entry.matched_keys {
                            Some(matched) => {
                                self.fire_watch(state, record, matched, max_cost, weight)?
                            }
                            None => self.fire_one_shot(state, record, from, max_cost, weight)?,
                        }
                    }
                }
            }
        }
    }
}

/// The entry key a materialising walk's cursor was made from (the key with
/// a 0 byte pushed).
fn cursor_key(cursor: &Option<Vec<u8>>) -> &[u8] {
    let next = cursor.as_deref().expect("set before an entry is judged");
    &next[..next.len() - 1]
}
