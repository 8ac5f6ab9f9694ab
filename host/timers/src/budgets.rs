//! What one block may spend on timers ([`BlockBudgets`]: one lane, one
//! fire quota, one GC budget, the Globalbox's enqueue and the block's
//! cells, shared by the start and the end of the block), and how the bytes
//! a budget counts are measured.

use std::collections::BTreeMap;

use timerhost_state::{Overlay, StateRead};
use timerhost_types::timer::{
    GC_CYCLES_PER_DEFERRAL, GC_CYCLES_PER_REMOVAL, GC_RECORD_BYTES_PER_BLOCK,
    GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK, GLOBALBOX_ENQUEUE_PER_BLOCK,
};
use timerhost_types::{Address, BasefeeConfig, TimerConfig};

use crate::error::Result;
use crate::record::TimerRecord;

/// The cells limit of every fire: `max_cells_per_fire`, but never more than
/// a whole block may hold (the two are governed apart), so that one fire
/// always fits an empty block (#28).
pub fn cells_per_fire(config: &TimerConfig, basefee: &BasefeeConfig) -> u64 {
    config.max_cells_per_fire.min(basefee.max_block_cells)
}

/// What one block may still spend on timers: one lane, one fire quota and
/// one GC budget shared by the start and the end of the block — and the
/// block's cells, which its user transactions spend too (#28).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockBudgets {
    pub(crate) gc_left: u64,
    pub(crate) moves_left: u64,
    /// Record bytes the GC may still remove or move (#29).
    pub(crate) gc_bytes_left: u64,
    /// Record bytes the Globalbox's enqueue may still move (#29).
    pub(crate) enqueue_bytes_left: u64,
    pub(crate) lane_left: u64,
    pub(crate) lane_total: u64,
    pub(crate) fires_left: u64,
    pub(crate) watch_hits_left: u64,
    /// Due timers and hits the Globalbox may still take in this block.
    pub(crate) enqueue_left: u64,
    /// Of `max_block_cells`: what neither a transaction used nor a fire
    /// holds. A fire holds [`cells_per_fire`] from admission until it has
    /// run, then gives back what it did not use.
    pub(crate) cells_left: u64,
    pub(crate) cells_per_fire: u64,
    /// Globalbox entries examined, and fires per target, in this block.
    pub(crate) examined: u64,
    pub(crate) per_target: BTreeMap<Address, u64>,
}

impl BlockBudgets {
    /// A fresh block's budgets under `config` and `basefee`.
    pub fn new(config: &TimerConfig, basefee: &BasefeeConfig) -> BlockBudgets {
        BlockBudgets {
            gc_left: config.gc_cycles_per_block,
            moves_left: config.gc_cycles_per_block / GC_CYCLES_PER_DEFERRAL,
            gc_bytes_left: GC_RECORD_BYTES_PER_BLOCK,
            enqueue_bytes_left: GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK,
            lane_left: config.lane_cycles_per_block,
            lane_total: config.lane_cycles_per_block,
            fires_left: config.max_fires_per_block,
            watch_hits_left: config.max_watch_matches_per_block,
            enqueue_left: GLOBALBOX_ENQUEUE_PER_BLOCK,
            cells_left: basefee.max_block_cells,
            cells_per_fire: cells_per_fire(config, basefee),
            examined: 0,
            per_target: BTreeMap::new(),
        }
    }

    /// Cells of the block neither used nor held: what a transaction may
    /// still ask for.
    pub fn cells_left(&self) -> u64 {
        self.cells_left
    }

    /// A transaction used `cells` of the block.
    pub fn spend_cells(&mut self, cells: u64) {
        self.cells_left = self.cells_left.saturating_sub(cells);
    }

    /// May the GC still remove (or move) a record of `bytes`? Its cycles
    /// for one removal, and its record bytes (#29) — a whole budget always
    /// takes one record, so a record larger than the budget still goes.
    pub(crate) fn gc_fits(&self, bytes: u64) -> bool {
        self.gc_left >= GC_CYCLES_PER_REMOVAL && self.gc_bytes_fit(bytes)
    }

    pub(crate) fn gc_bytes_fit(&self, bytes: u64) -> bool {
        bytes <= self.gc_bytes_left || self.gc_bytes_left == GC_RECORD_BYTES_PER_BLOCK
    }

    /// The GC removed a record of `bytes`.
    pub(crate) fn spend_removal(&mut self, bytes: u64) {
        self.gc_left -= GC_CYCLES_PER_REMOVAL;
        self.gc_bytes_left = self.gc_bytes_left.saturating_sub(bytes);
    }

    /// The GC moved a record of `bytes` to the backlog.
    pub(crate) fn spend_move(&mut self, bytes: u64) {
        self.moves_left -= 1;
        self.gc_bytes_left = self.gc_bytes_left.saturating_sub(bytes);
    }

    /// May the Globalbox still take a record (or watch) of `bytes`?
    pub(crate) fn enqueue_fits(&self, bytes: u64) -> bool {
        bytes <= self.enqueue_bytes_left
            || self.enqueue_bytes_left == GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK
    }

    /// The Globalbox took a record (or watch hit) of `bytes`.
    pub(crate) fn spend_enqueue(&mut self, bytes: u64) {
        self.enqueue_bytes_left = self.enqueue_bytes_left.saturating_sub(bytes);
    }

    /// A fire that held `held` cells used `used` of them: the rest is free
    /// again.
    pub fn settle_fire_cells(&mut self, held: u64, used: u64) {
        self.cells_left += held.saturating_sub(used);
    }
}

/// Bytes of `record`'s canonical encoding (what reading, hashing and
/// rewriting it touch), counted without encoding it.
pub(crate) fn record_len(record: &TimerRecord) -> u64 {
    1 + borsh::object_length(record).expect("an in-memory record always encodes") as u64
}

/// Bytes stored at `key` (0 if nothing), read without copying them.
pub(crate) fn stored_len(state: &Overlay<'_>, key: &[u8]) -> Result<u64> {
    Ok(state.get_head(key, 0)?.map_or(0, |(_, len)| len as u64))
}
