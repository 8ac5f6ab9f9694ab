//! Governed configuration stored in consensus state: [`BasefeeConfig`] (CIP-3
//! dual-metered fees) and [`ChainParams`] (fixed at genesis).

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::encoding::Canonical;
use crate::error::{Error, Result};
use crate::primitives::{u128_string, Address};

/// Largest per-block change of a basefee: `1 / BASEFEE_CHANGE_DENOMINATOR`
/// (= 12.5 %), as in EIP-1559.
pub const BASEFEE_CHANGE_DENOMINATOR: u128 = 8;

/// The dual basefee (cycles and cells) and the block limits it steers toward.
///
/// Each block, each basefee moves toward 50 % utilisation of its block limit
/// (`target = max_block_* / 2`) by `basefee × (used − target) / target / 8`,
/// clamped to ±12.5 % and to `[min_*, max_*]`.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BasefeeConfig {
    /// Current price of one cycle (burned).
    #[serde(with = "u128_string")]
    pub cycle_basefee: u128,
    /// Current price of one cell (burned).
    #[serde(with = "u128_string")]
    pub cell_basefee: u128,
    /// Floor for `cycle_basefee`.
    #[serde(with = "u128_string")]
    pub min_cycle_basefee: u128,
    /// Floor for `cell_basefee`.
    #[serde(with = "u128_string")]
    pub min_cell_basefee: u128,
    /// Ceiling for `cycle_basefee`.
    #[serde(with = "u128_string")]
    pub max_cycle_basefee: u128,
    /// Ceiling for `cell_basefee`.
    #[serde(with = "u128_string")]
    pub max_cell_basefee: u128,
    /// Most cycles all transactions of a block may use; the target is half.
    pub max_block_cycles: u64,
    /// Most cells all transactions of a block may use; the target is half.
    pub max_block_cells: u64,
}

impl Canonical for BasefeeConfig {
    const NAME: &'static str = "basefee config";
}

impl Default for BasefeeConfig {
    fn default() -> Self {
        Self {
            cycle_basefee: 1_000,
            cell_basefee: 1_000,
            min_cycle_basefee: 100,
            min_cell_basefee: 100,
            max_cycle_basefee: 1_000_000_000_000,
            max_cell_basefee: 1_000_000_000_000,
            max_block_cycles: 400_000_000,
            max_block_cells: 16_000_000,
        }
    }
}

impl BasefeeConfig {
    /// Rejects zero, inverted or absurd values, naming the field.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &'static str, reason: String| Err(Error::Config { field, reason });
        if self.min_cycle_basefee == 0 {
            return bad(
                "min_cycle_basefee",
                "must be at least 1 (a zero basefee makes computation free and never recovers)"
                    .into(),
            );
        }
        if self.min_cell_basefee == 0 {
            return bad("min_cell_basefee", "must be at least 1".into());
        }
        if self.max_cycle_basefee < self.min_cycle_basefee {
            return bad(
                "max_cycle_basefee",
                format!(
                    "{} is below min_cycle_basefee {}",
                    self.max_cycle_basefee, self.min_cycle_basefee
                ),
            );
        }
        if self.max_cell_basefee < self.min_cell_basefee {
            return bad(
                "max_cell_basefee",
                format!(
                    "{} is below min_cell_basefee {}",
                    self.max_cell_basefee, self.min_cell_basefee
                ),
            );
        }
        if !(self.min_cycle_basefee..=self.max_cycle_basefee).contains(&self.cycle_basefee) {
            return bad(
                "cycle_basefee",
                format!(
                    "{} is outside [{}, {}]",
                    self.cycle_basefee, self.min_cycle_basefee, self.max_cycle_basefee
                ),
            );
        }
        if !(self.min_cell_basefee..=self.max_cell_basefee).contains(&self.cell_basefee) {
            return bad(
                "cell_basefee",
                format!(
                    "{} is outside [{}, {}]",
                    self.cell_basefee, self.min_cell_basefee, self.max_cell_basefee
                ),
            );
        }
        // Above 2^96 a single block's fees could overflow u128 arithmetic.
        if self.max_cycle_basefee > 1 << 96 || self.max_cell_basefee > 1 << 96 {
            return bad(
                "max_cycle_basefee",
                "basefee ceilings must be at most 2^96".into(),
            );
        }
        if self.max_block_cycles < 2 * crate::TX_BASE_CYCLES {
            return bad(
                "max_block_cycles",
                format!("must be at least {}", 2 * crate::TX_BASE_CYCLES),
            );
        }
        if self.max_block_cycles > 1 << 40 {
            return bad("max_block_cycles", "must be at most 2^40".into());
        }
        if self.max_block_cells < 2 * crate::MAX_TX_BYTES as u64 {
            return bad(
                "max_block_cells",
                format!(
                    "must be at least {} (two maximal transactions)",
                    2 * crate::MAX_TX_BYTES
                ),
            );
        }
        if self.max_block_cells > 1 << 40 {
            return bad("max_block_cells", "must be at most 2^40".into());
        }
        Ok(())
    }

    /// Target cycles per block (50 % utilisation).
    pub fn target_cycles(&self) -> u64 {
        self.max_block_cycles / 2
    }

    /// Target cells per block (50 % utilisation).
    pub fn target_cells(&self) -> u64 {
        self.max_block_cells / 2
    }

    /// The config for the next block given this block's usage.
    pub fn next(&self, cycles_used: u64, cells_used: u64) -> BasefeeConfig {
        BasefeeConfig {
            cycle_basefee: adjust(
                self.cycle_basefee,
                cycles_used,
                self.target_cycles(),
                self.min_cycle_basefee,
                self.max_cycle_basefee,
            ),
            cell_basefee: adjust(
                self.cell_basefee,
                cells_used,
                self.target_cells(),
                self.min_cell_basefee,
                self.max_cell_basefee,
            ),
            ..self.clone()
        }
    }
}

/// One EIP-1559 step: `fee ± fee × |used − target| / target / 8`, the change
/// capped at `fee / 8` (12.5 %), an increase of at least 1 when above target,
/// and the result clamped to `[min, max]`. Integer arithmetic only.
pub fn adjust(fee: u128, used: u64, target: u64, min: u128, max: u128) -> u128 {
    adjust_by(fee, used, target, min, max, BASEFEE_CHANGE_DENOMINATOR)
}

/// [`adjust`] with another change denominator (the timer lane's is
/// governed: `TimerConfig.lane_basefee_change_denominator`): the change is
/// at most `fee / denominator` per block.
pub fn adjust_by(
    fee: u128,
    used: u64,
    target: u64,
    min: u128,
    max: u128,
    denominator: u128,
) -> u128 {
    let target = target.max(1) as u128;
    let denominator = denominator.max(1);
    let used = used as u128;
    let max_step = fee / denominator;
    let next = if used > target {
        let delta = (fee.saturating_mul(used - target) / target / denominator)
            .min(max_step)
            .max(1);
        fee.saturating_add(delta)
    } else {
        let delta = (fee.saturating_mul(target - used) / target / denominator).min(max_step);
        fee - delta
    };
    next.clamp(min, max)
}

/// Chain-wide parameters fixed at genesis and stored in state.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize)]
pub struct ChainParams {
    /// The chain id every transaction must carry.
    pub chain_id: u64,
    /// Governance: senders allowed to submit system instructions.
    pub system_deployers: Vec<Address>,
}

impl Canonical for ChainParams {
    const NAME: &'static str = "chain params";
}

impl ChainParams {
    /// Is this a development chain (public dev keys accepted)?
    pub fn is_dev(&self) -> bool {
        self.chain_id == crate::DEV_CHAIN_ID
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_valid() {
        BasefeeConfig::default().validate().unwrap();
    }

    #[test]
    fn validation_names_the_field() {
        let mut c = BasefeeConfig {
            min_cycle_basefee: 0,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("min_cycle_basefee"));
        c = BasefeeConfig {
            cycle_basefee: 1,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("`cycle_basefee`"));
        c = BasefeeConfig {
            max_block_cells: 10,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("max_block_cells"));
    }

    #[test]
    fn adjust_moves_toward_target_and_clamps_to_one_eighth() {
        // At target: unchanged.
        assert_eq!(adjust(1000, 50, 50, 1, u128::MAX), 1000);
        // Full block (2×target): +12.5 %.
        assert_eq!(adjust(1000, 100, 50, 1, u128::MAX), 1125);
        // Way over target (timers can push usage past the limit): still +12.5 %.
        assert_eq!(adjust(1000, 10_000, 50, 1, u128::MAX), 1125);
        // Empty block: −12.5 %.
        assert_eq!(adjust(1000, 0, 50, 1, u128::MAX), 875);
        // Halfway between: ±6.25 %.
        assert_eq!(adjust(1000, 75, 50, 1, u128::MAX), 1062);
        // Tiny fee above target still rises by at least one.
        assert_eq!(adjust(3, 60, 50, 1, u128::MAX), 4);
        // Floors and ceilings.
        assert_eq!(adjust(100, 0, 50, 100, 1000), 100);
        assert_eq!(adjust(1000, 100, 50, 1, 1000), 1000);
    }

    #[test]
    fn next_adjusts_both_dimensions_independently() {
        let c = BasefeeConfig::default();
        let n = c.next(c.max_block_cycles, 0);
        assert_eq!(n.cycle_basefee, 1125);
        assert_eq!(n.cell_basefee, 875);
        assert_eq!(n.max_block_cycles, c.max_block_cycles);
    }
}
