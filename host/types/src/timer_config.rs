//! The governed timer parameters ([`TimerConfig`], CIP-5 §6.4 plus the
//! lane budget, the fire quota, the deposit rate and the fee market's
//! fields), how due timers are ordered ([`TimerOrdering`]), and the bounds
//! `validate` holds every governed value to.

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::encoding::Canonical;
use crate::error::{Error, Result};
use crate::timer::{GC_CYCLES_PER_REMOVAL, TIMER_FIRE_BASE_CYCLES};

/// The lane basefee's ceiling: a fee per cycle of 2^40 on 2^40 lane cycles
/// still fits a u128 fee, and no demand reaches it (it takes ~230 full
/// blocks from the floor at +12.5 %).
pub const MAX_LANE_BASEFEE: u64 = 1 << 40;

/// Governed timer parameters (CIP-5 §6.4 + the lane budget, the per-block
/// fire quota and the deposit rate).
///
/// Its borsh encoding is hand-written ([`crate::timer_config_encoding`]):
/// the fields #45 added are written only when they differ from
/// [`TimerConfig::PRE_RETRY`]'s, so every config, proposal and transaction
/// encoded before them keeps its bytes, its hash and the state root that
/// holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerConfig {
    /// Longest a timer may live past its scheduling height.
    pub max_ttl_blocks: u64,
    /// Largest `gas_limit_per_fire`, and the default.
    pub max_cycles_per_fire: u64,
    /// Cells every fire may use (flat cap, refunded when unused).
    pub max_cells_per_fire: u64,
    /// Most live timers one actor may hold.
    pub max_timers_per_actor: u32,
    /// GC budget per block for removing expired and unfunded timers.
    pub gc_cycles_per_block: u64,
    /// Cycles fired handlers may reserve per block (`LANE_TIMER_CYCLES`),
    /// [`TIMER_FIRE_BASE_CYCLES`] per fire included.
    pub lane_cycles_per_block: u64,
    /// Most timers one block fires (CIP-5 §8); the rest carry over in order.
    pub max_fires_per_block: u64,
    /// State-memory deposit per byte a timer adds to state, taken from its
    /// fee payer at scheduling and refunded when the timer leaves.
    #[serde(with = "crate::primitives::u128_string")]
    pub deposit_per_byte: u128,
    /// Most entries (keys or prefixes) one state watch may list.
    pub max_watch_keys: u32,
    /// Most watch hits one block evaluates (fires or removes); the rest
    /// wait, in order, for the next block.
    pub max_watch_matches_per_block: u64,
    /// Largest bid (priority fee per cycle) a timer may offer.
    pub max_bid: u64,
    /// How due timers are ordered: CIP-5's FIFO or the Globalbox's priority.
    pub ordering: TimerOrdering,
    /// Priority weight of a block of age (`score = w_age × age + w_bid × bid`).
    pub w_age: u64,
    /// Priority weight of a unit of bid.
    pub w_bid: u64,
    /// Most fires one target actor gets per block under priority and
    /// market ordering.
    pub max_fires_per_target: u64,
    /// Market ordering (#31): the share of `lane_cycles_per_block` the lane
    /// basefee steers toward (CIP-1 v3: 50).
    #[serde(default = "defaults::lane_target_percent")]
    pub lane_target_percent: u64,
    /// Market ordering: the lane basefee moves by at most `1 /` this per
    /// block (CIP-1 v3: 8, i.e. ±12.5 %).
    #[serde(default = "defaults::lane_basefee_change_denominator")]
    pub lane_basefee_change_denominator: u64,
    /// The lane basefee's floor, and its value under FIFO and priority
    /// ordering (where it is charged to nobody).
    #[serde(default = "defaults::min_lane_basefee")]
    pub min_lane_basefee: u64,
    /// Market ordering: the window (blocks) over which an actor's recent
    /// fires set its fairness weight (CIP-1 v3: 1,000).
    #[serde(default = "defaults::fairness_window_blocks")]
    pub fairness_window_blocks: u64,
    /// Market ordering (#50): the share, in percent, of a fire's *unused*
    /// reserved handler cycles that pays the lane basefee (the used ones
    /// always do). The basefee moves by what fires reserve, so reserving
    /// must cost what it moves: at 100, a timer reserving 550,000 cycles
    /// whose handler returns at once pays the lane basefee on all of them.
    #[serde(default = "defaults::lane_reservation_percent")]
    pub lane_reservation_percent: u64,
    /// Most retries a timer's retry policy may ask for (#45); 0 refuses
    /// every policy. A fire that fails (an exception, out of cycles or
    /// cells) is re-armed at most this many times before it is
    /// dead-lettered.
    #[serde(default)]
    pub max_retries: u32,
    /// Blocks a dead-lettered timer stays in its actor's dead-letter queue
    /// before it is removed and its deposit refunded.
    #[serde(default = "defaults::dead_letter_ttl_blocks")]
    pub dead_letter_ttl_blocks: u64,
    /// Most entries one actor's dead-letter queue holds; a timer that fails
    /// for good while it is full is dropped (`TimerDeadLettered` says so).
    #[serde(default = "defaults::max_dead_letters_per_actor")]
    pub max_dead_letters_per_actor: u32,
    /// The share, in percent, of each block's timer lane — its cycles, its
    /// `max_fires_per_block` and the cells its fires may hold — that can
    /// be booked ahead (#45, `pvm_host.book_timer`); 0 refuses every
    /// booking.
    #[serde(default)]
    pub bookable_lane_percent: u64,
    /// How far ahead (blocks, or the seconds of as many blocks for a time
    /// booking) a booking may be made; also the horizon whose average
    /// occupancy prices a booking.
    #[serde(default = "defaults::max_booking_blocks")]
    pub max_booking_blocks: u64,
}

/// Defaults of the fields added after genesis files were first written, so
/// that a file without them still reads.
mod defaults {
    pub fn lane_target_percent() -> u64 {
        50
    }
    pub fn lane_basefee_change_denominator() -> u64 {
        8
    }
    pub fn min_lane_basefee() -> u64 {
        100
    }
    pub fn fairness_window_blocks() -> u64 {
        1_000
    }
    pub fn lane_reservation_percent() -> u64 {
        100
    }
    pub fn dead_letter_ttl_blocks() -> u64 {
        100_000
    }
    pub fn max_dead_letters_per_actor() -> u32 {
        64
    }
    pub fn max_booking_blocks() -> u64 {
        100_000
    }
}

/// `max_retries` as a chain without retries (#45) behaves: none. A genesis
/// file that omits it means this value (so its state root is what it
/// was); `Default` turns retries on.
pub const PRE_RETRY_MAX_RETRIES: u32 = 0;
/// Largest `max_retries`: the backoff doubles per attempt, and 2^32 blocks
/// is past any TTL.
pub const MAX_RETRIES_CAP: u32 = 32;
/// `bookable_lane_percent` as a chain without bookings (#45) behaves:
/// nothing bookable. A genesis file that omits it means this value;
/// `Default` turns bookings on.
pub const PRE_BOOKING_BOOKABLE_LANE_PERCENT: u64 = 0;
/// Largest `bookable_lane_percent`: at least a tenth of every block stays
/// for timers nobody booked.
pub const MAX_BOOKABLE_LANE_PERCENT: u64 = 90;

/// How due timers are ordered (#18).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    BorshSerialize,
    BorshDeserialize,
    Serialize,
    Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TimerOrdering {
    /// CIP-5: each trigger kind in its own queue, FIFO, at its own place in
    /// the block (time timers at the start, the rest at the end).
    #[default]
    Fifo,
    /// The Globalbox: every due timer, of every kind, queued by score
    /// (`w_age × age + w_bid × bid`) and materialised at the end of the
    /// block under the block and per-target quotas.
    Priority,
    /// CIP-1 v3 Part III's fee market (#31): the Globalbox ordered by
    /// effective priority × fairness weight (plus `w_age × age`), under a
    /// lane basefee that moves toward `lane_target_percent` of the lane.
    Market,
}

impl TimerOrdering {
    /// `"fifo"`, `"priority"` or `"market"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TimerOrdering::Fifo => "fifo",
            TimerOrdering::Priority => "priority",
            TimerOrdering::Market => "market",
        }
    }

    /// Do due timers wait in the Globalbox (priority and market)?
    pub fn uses_globalbox(self) -> bool {
        self != TimerOrdering::Fifo
    }
}

impl Canonical for TimerConfig {
    const NAME: &'static str = "timer config";
}

impl Default for TimerConfig {
    fn default() -> Self {
        Self {
            max_ttl_blocks: 2_592_000,
            max_cycles_per_fire: 550_000,
            max_cells_per_fire: 550_000,
            max_timers_per_actor: 1_024,
            gc_cycles_per_block: 5_000_000,
            lane_cycles_per_block: 100_000_000,
            max_fires_per_block: 10_000,
            deposit_per_byte: 1_000,
            max_watch_keys: 16,
            max_watch_matches_per_block: 1_000,
            max_bid: 1_000_000_000,
            ordering: TimerOrdering::Fifo,
            w_age: 1,
            w_bid: 1,
            max_fires_per_target: 10_000,
            lane_target_percent: defaults::lane_target_percent(),
            lane_basefee_change_denominator: defaults::lane_basefee_change_denominator(),
            min_lane_basefee: defaults::min_lane_basefee(),
            fairness_window_blocks: defaults::fairness_window_blocks(),
            lane_reservation_percent: defaults::lane_reservation_percent(),
            max_retries: 8,
            dead_letter_ttl_blocks: defaults::dead_letter_ttl_blocks(),
            max_dead_letters_per_actor: defaults::max_dead_letters_per_actor(),
            bookable_lane_percent: 20,
            max_booking_blocks: defaults::max_booking_blocks(),
        }
    }
}

impl TimerConfig {
    /// Does this config hold the retry fields of a chain that predates
    /// them ([`PRE_RETRY_MAX_RETRIES`])? Such a config encodes to the bytes
    /// it always had.
    pub fn is_pre_retry(&self) -> bool {
        self.max_retries == PRE_RETRY_MAX_RETRIES
            && self.dead_letter_ttl_blocks == defaults::dead_letter_ttl_blocks()
            && self.max_dead_letters_per_actor == defaults::max_dead_letters_per_actor()
    }

    /// The config with the retry fields of a chain that predates them,
    /// every other field kept.
    pub fn pre_retry(self) -> TimerConfig {
        TimerConfig {
            max_retries: PRE_RETRY_MAX_RETRIES,
            dead_letter_ttl_blocks: defaults::dead_letter_ttl_blocks(),
            max_dead_letters_per_actor: defaults::max_dead_letters_per_actor(),
            ..self
        }
    }

    /// Does this config hold the booking fields of a chain that predates
    /// them? Such a config encodes without them.
    pub fn is_pre_booking(&self) -> bool {
        self.bookable_lane_percent == PRE_BOOKING_BOOKABLE_LANE_PERCENT
            && self.max_booking_blocks == defaults::max_booking_blocks()
    }

    /// The config with the booking fields of a chain that predates them.
    pub fn pre_booking(self) -> TimerConfig {
        TimerConfig {
            bookable_lane_percent: PRE_BOOKING_BOOKABLE_LANE_PERCENT,
            max_booking_blocks: defaults::max_booking_blocks(),
            ..self
        }
    }

    /// The config a chain that predates #45 holds: no retries, no bookings.
    pub fn pre_45(self) -> TimerConfig {
        self.pre_retry().pre_booking()
    }
}

impl TimerConfig {
    /// Rejects zero or absurd values, naming the field.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &'static str, reason: String| Err(Error::Config { field, reason });
        let positive: [(&'static str, u64); 13] = [
            ("max_ttl_blocks", self.max_ttl_blocks),
            ("max_cycles_per_fire", self.max_cycles_per_fire),
            ("max_cells_per_fire", self.max_cells_per_fire),
            ("max_timers_per_actor", self.max_timers_per_actor as u64),
            ("gc_cycles_per_block", self.gc_cycles_per_block),
            ("lane_cycles_per_block", self.lane_cycles_per_block),
            ("max_fires_per_block", self.max_fires_per_block),
            ("max_watch_keys", self.max_watch_keys as u64),
            (
                "max_watch_matches_per_block",
                self.max_watch_matches_per_block,
            ),
            ("max_fires_per_target", self.max_fires_per_target),
            ("min_lane_basefee", self.min_lane_basefee),
            (
                "lane_basefee_change_denominator",
                self.lane_basefee_change_denominator,
            ),
            ("fairness_window_blocks", self.fairness_window_blocks),
        ];
        for (field, value) in positive {
            if value == 0 {
                return bad(field, "must be greater than 0".into());
            }
        }
        // ~100 years of one-second blocks.
        if self.max_ttl_blocks > 3_153_600_000 {
            return bad(
                "max_ttl_blocks",
                format!("{} is absurd (at most 3,153,600,000)", self.max_ttl_blocks),
            );
        }
        // Checked (#50): 2^64 − 2999 once wrapped to a small sum and passed.
        let fits = self
            .max_cycles_per_fire
            .checked_add(TIMER_FIRE_BASE_CYCLES)
            .is_some_and(|reserve| reserve <= self.lane_cycles_per_block);
        if !fits {
            return bad(
                "max_cycles_per_fire",
                format!(
                    "{} plus the fire base charge {TIMER_FIRE_BASE_CYCLES} exceeds lane_cycles_per_block {}: such a timer could never be admitted",
                    self.max_cycles_per_fire, self.lane_cycles_per_block
                ),
            );
        }
        // Scores stay far inside i128: w ≤ 2^40, bid ≤ 2^40, height < 2^64.
        for (field, w) in [("w_age", self.w_age), ("w_bid", self.w_bid)] {
            if w > 1 << 40 {
                return bad(field, "must be at most 2^40".into());
            }
        }
        // A bid of 2^40 per cycle on 2^40 lane cycles still fits in u128.
        if self.max_bid > 1 << 40 {
            return bad("max_bid", "must be at most 2^40".into());
        }
        if self.max_watch_keys > 1_024 {
            return bad("max_watch_keys", "must be at most 1,024".into());
        }
        if self.max_watch_matches_per_block > 1_000_000 {
            return bad(
                "max_watch_matches_per_block",
                "must be at most 1,000,000".into(),
            );
        }
        if self.max_fires_per_block > 1_000_000 {
            return bad("max_fires_per_block", "must be at most 1,000,000".into());
        }
        // A deposit of 2^96 per byte over a 1 MiB timer still fits in u128.
        if self.deposit_per_byte > 1 << 96 {
            return bad("deposit_per_byte", "must be at most 2^96".into());
        }
        if self.lane_cycles_per_block > 1 << 40 {
            return bad("lane_cycles_per_block", "must be at most 2^40".into());
        }
        if self.max_cells_per_fire > 1 << 32 {
            return bad("max_cells_per_fire", "must be at most 2^32".into());
        }
        if self.max_timers_per_actor > 1_000_000 {
            return bad("max_timers_per_actor", "must be at most 1,000,000".into());
        }
        if self.gc_cycles_per_block < GC_CYCLES_PER_REMOVAL {
            return bad(
                "gc_cycles_per_block",
                format!("must be at least {GC_CYCLES_PER_REMOVAL} (one removal)"),
            );
        }
        if self.gc_cycles_per_block > 1 << 40 {
            return bad("gc_cycles_per_block", "must be at most 2^40".into());
        }
        if !(1..=100).contains(&self.lane_target_percent) {
            return bad(
                "lane_target_percent",
                format!(
                    "{} is not a percentage in 1..=100",
                    self.lane_target_percent
                ),
            );
        }
        if self.lane_basefee_change_denominator > 1_000 {
            return bad(
                "lane_basefee_change_denominator",
                "must be at most 1,000".into(),
            );
        }
        if self.min_lane_basefee > MAX_LANE_BASEFEE {
            return bad(
                "min_lane_basefee",
                format!("must be at most {}", MAX_LANE_BASEFEE),
            );
        }
        if self.fairness_window_blocks > 100_000_000 {
            return bad(
                "fairness_window_blocks",
                "must be at most 100,000,000".into(),
            );
        }
        if self.max_retries > MAX_RETRIES_CAP {
            return bad(
                "max_retries",
                format!("{} is more than {MAX_RETRIES_CAP}", self.max_retries),
            );
        }
        if self.dead_letter_ttl_blocks == 0 || self.dead_letter_ttl_blocks > 3_153_600_000 {
            return bad(
                "dead_letter_ttl_blocks",
                format!(
                    "{} is not in 1..=3,153,600,000",
                    self.dead_letter_ttl_blocks
                ),
            );
        }
        if self.max_dead_letters_per_actor == 0 || self.max_dead_letters_per_actor > 10_000 {
            return bad(
                "max_dead_letters_per_actor",
                format!("{} is not in 1..=10,000", self.max_dead_letters_per_actor),
            );
        }
        if self.bookable_lane_percent > MAX_BOOKABLE_LANE_PERCENT {
            return bad(
                "bookable_lane_percent",
                format!(
                    "{} is more than {MAX_BOOKABLE_LANE_PERCENT}: a tenth of every block stays for timers nobody booked",
                    self.bookable_lane_percent
                ),
            );
        }
        if self.max_booking_blocks == 0 || self.max_booking_blocks > 3_153_600_000 {
            return bad(
                "max_booking_blocks",
                format!("{} is not in 1..=3,153,600,000", self.max_booking_blocks),
            );
        }
        if self.lane_reservation_percent > 100 {
            return bad(
                "lane_reservation_percent",
                format!(
                    "{} is not a percentage in 0..=100",
                    self.lane_reservation_percent
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_cip5_and_validate() {
        let c = TimerConfig::default();
        assert_eq!(c.max_ttl_blocks, 2_592_000);
        assert_eq!(c.max_cycles_per_fire, 550_000);
        assert_eq!(c.max_cells_per_fire, 550_000);
        assert_eq!(c.max_timers_per_actor, 1_024);
        assert_eq!(c.gc_cycles_per_block, 5_000_000);
        assert_eq!(c.max_fires_per_block, 10_000);
        c.validate().unwrap();
    }

    #[test]
    fn zero_and_absurd_values_are_named() {
        let c = TimerConfig {
            max_ttl_blocks: 0,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("max_ttl_blocks"));
        let c = TimerConfig {
            max_cycles_per_fire: 200_000_000,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("never be admitted"));
        let c = TimerConfig {
            gc_cycles_per_block: 10,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("gc_cycles_per_block"));
    }
}
