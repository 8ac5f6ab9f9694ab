//! CIP-5 timer data: the [`Timer`] record (§3.1) and the governed
//! [`TimerConfig`] (§6.4, plus the lane budget DESIGN.md adds).

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::encoding::Canonical;
use crate::error::{Error, Result};
use crate::primitives::{keccak256_concat, Address, Hash};

/// The default timer handler.
pub const DEFAULT_TIMER_HANDLER: &str = "handle_timer";

/// Largest timer payload (CIP-5 §4.2): 1 MiB.
pub const MAX_TIMER_PAYLOAD: usize = 1_048_576;

/// Longest handler name (CIP-5 §4.2).
pub const MAX_TIMER_HANDLER: usize = 256;

/// A scheduled timer (CIP-5 §3.1), plus its FIFO sequence number.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Timer {
    /// The actor that owns the timer and whose handler runs.
    pub actor_address: Address,
    /// Block height at which it fires.
    pub height: u64,
    /// Opaque bytes as scheduled (≤ 1 MiB).
    pub payload: Vec<u8>,
    /// Unique id (see [`timer_id`]).
    pub timer_id: Hash,
    /// Handler to invoke (`handle_timer` unless the payload names another).
    pub handler: String,
    /// Who pays each fire.
    pub fee_payer: Address,
    /// Most cycles one fire may use.
    pub gas_limit_per_fire: u64,
    /// Last height at which the timer may still fire.
    pub expires_at: u64,
    /// Global insertion sequence: orders the GC backlog. (FIFO within a
    /// height is the height index's slot order, which follows it.)
    pub seq: u64,
}

impl Canonical for Timer {
    const NAME: &'static str = "timer";
}

/// `timer_id = keccak256(actor ‖ height BE ‖ payload ‖ schedule_nonce BE)`
/// (CIP-5 §3.3 with DESIGN.md's deviation: the actor's own schedule counter,
/// not the transaction nonce, so one transaction or handler can schedule two
/// identical timers).
pub fn timer_id(actor: &Address, height: u64, payload: &[u8], schedule_nonce: u64) -> Hash {
    keccak256_concat(&[
        actor.as_bytes(),
        &height.to_be_bytes(),
        payload,
        &schedule_nonce.to_be_bytes(),
    ])
}

/// Governed timer parameters (CIP-5 §6.4 + the lane budget).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize)]
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
    /// Cycles fired handlers may reserve per block (`LANE_TIMER_CYCLES`).
    pub lane_cycles_per_block: u64,
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
        }
    }
}

/// Cycles the GC budget is charged for removing one expired or unfunded timer.
pub const GC_CYCLES_PER_REMOVAL: u64 = 1_000;

/// Cost of classifying a dead timer that cannot be removed this block and
/// moving it to the GC backlog. A block moves at most
/// `gc_cycles_per_block / GC_CYCLES_PER_DEFERRAL` timers: ten times more than
/// it removes, so live timers queued behind a storm of dead ones keep firing
/// while the backlog drains, and the work per block stays bounded.
pub const GC_CYCLES_PER_DEFERRAL: u64 = 100;

impl TimerConfig {
    /// Rejects zero or absurd values, naming the field.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &'static str, reason: String| Err(Error::Config { field, reason });
        let positive: [(&'static str, u64); 6] = [
            ("max_ttl_blocks", self.max_ttl_blocks),
            ("max_cycles_per_fire", self.max_cycles_per_fire),
            ("max_cells_per_fire", self.max_cells_per_fire),
            ("max_timers_per_actor", self.max_timers_per_actor as u64),
            ("gc_cycles_per_block", self.gc_cycles_per_block),
            ("lane_cycles_per_block", self.lane_cycles_per_block),
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
        if self.max_cycles_per_fire > self.lane_cycles_per_block {
            return bad(
                "max_cycles_per_fire",
                format!(
                    "{} exceeds lane_cycles_per_block {}: such a timer could never be admitted",
                    self.max_cycles_per_fire, self.lane_cycles_per_block
                ),
            );
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

    #[test]
    fn timer_ids_differ_by_every_input() {
        let a = Address([1; 20]);
        let base = timer_id(&a, 10, b"p", 0);
        assert_ne!(base, timer_id(&Address([2; 20]), 10, b"p", 0));
        assert_ne!(base, timer_id(&a, 11, b"p", 0));
        assert_ne!(base, timer_id(&a, 10, b"q", 0));
        assert_ne!(base, timer_id(&a, 10, b"p", 1));
    }
}
