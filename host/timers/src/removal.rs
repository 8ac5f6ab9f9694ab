//! Everything a batch of timer removals changes, gathered and applied once:
//! index entries (each chunk rewritten once), due buckets (each leaf
//! rewritten once, an emptied one deleted without hashing) and the owning
//! actors' live counts (each account rewritten once). End of block removes
//! thousands of timers from the same few chunks, buckets and actors.

use std::collections::BTreeMap;

use timerhost_state::accounts;
use timerhost_state::Overlay;
use timerhost_types::Address;

use crate::error::Result;
use crate::{bucket, index};

/// Removals gathered during a walk, applied by [`Removals::apply`].
#[derive(Debug, Default)]
pub struct Removals {
    /// Index entries to remove.
    pub index: index::Removals,
    /// Bucket changes.
    pub buckets: bucket::Changes,
    /// Timers leaving each actor.
    pub actors: BTreeMap<Address, u32>,
}

impl Removals {
    /// Is there nothing to apply?
    pub fn is_empty(&self) -> bool {
        self.index.is_empty() && self.buckets.is_empty() && self.actors.is_empty()
    }

    /// Applies everything: the index first, because a small bucket is
    /// recomputed from it.
    pub fn apply(self, state: &mut Overlay<'_>) -> Result<()> {
        self.index.apply(state)?;
        self.buckets.apply(state)?;
        let total: u64 = self.actors.values().map(|n| u64::from(*n)).sum();
        if total > 0 {
            crate::counters::add_pending(state, 0, total)?;
        }
        for (actor, leaving) in self.actors {
            let mut account = accounts::load(state, &actor)?;
            account.live_timers = account.live_timers.checked_sub(leaving).ok_or_else(|| {
                crate::keys::corrupt(
                    "account",
                    actor.as_bytes(),
                    "more timers leave the actor than it holds",
                )
            })?;
            accounts::store(state, &actor, &account);
        }
        Ok(())
    }
}
