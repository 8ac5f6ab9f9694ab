//! The timer-lane fee market's arithmetic (#31, CIP-1 v3 Part III): the
//! lane basefee kept in state ([`LaneMarket`]) and its per-block step
//! ([`LaneMarket::next`]), what a fire pays under its fee caps
//! ([`lane_price`]), the caps a schedule gets when it names none
//! ([`default_caps`]), and the quote's hints ([`SuggestedFees`]).
//! Integers only; nothing here reads state.

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::config::adjust_by;
use crate::encoding::Canonical;
pub use crate::timer_config::MAX_LANE_BASEFEE;
use crate::timer_config::{TimerConfig, TimerOrdering};

/// The largest `max_fee_per_cycle` a timer may carry.
pub const MAX_FEE_PER_CYCLE: u64 = 1 << 42;

/// The fairness weight of an actor with no recent fires relative to the
/// others is `2 × WEIGHT_ONE`; the busiest weigh `WEIGHT_ONE` (W ∈ [1, 2]
/// in thousandths).
pub const WEIGHT_ONE: u64 = 1_000;

/// The lane market's state, at
/// [`keys::lane_market`](crate::keys::lane_market): the lane basefee in
/// force for the current block, and the median priority fee per cycle of
/// the fires of the block before (the quote's tip hint).
#[derive(Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct LaneMarket {
    /// Burned per handler cycle of every fire under market ordering.
    pub basefee: u64,
    /// The median priority fee per cycle of the last block's fires.
    pub median_tip: u64,
}

impl Canonical for LaneMarket {
    const NAME: &'static str = "lane market";
}

impl LaneMarket {
    /// A chain that never ran the market: the basefee at its floor.
    pub fn at_floor(config: &TimerConfig) -> LaneMarket {
        LaneMarket {
            basefee: config.min_lane_basefee,
            median_tip: 0,
        }
    }

    /// The lane market of the next block, after one whose fires reserved
    /// `lane_used` cycles of the lane and paid `median_tip` (CIP-1 v3:
    /// `basefee × (1 + clip((u − target) / target, −1, 1) / denominator)`,
    /// here with EIP-1559's integer step: at least +1 above target, never
    /// below `min_lane_basefee`). Under FIFO and priority ordering it stays
    /// at the floor: nothing prices the lane there.
    pub fn next(&self, config: &TimerConfig, lane_used: u64, median_tip: u64) -> LaneMarket {
        let basefee = if config.ordering == TimerOrdering::Market {
            adjust_by(
                u128::from(self.basefee),
                lane_used,
                lane_target(config),
                u128::from(config.min_lane_basefee),
                u128::from(MAX_LANE_BASEFEE),
                u128::from(config.lane_basefee_change_denominator),
            ) as u64
        } else {
            config.min_lane_basefee
        };
        LaneMarket {
            basefee,
            median_tip,
        }
    }
}

/// Lane cycles per block the basefee steers toward:
/// `lane_cycles_per_block × lane_target_percent / 100`.
pub fn lane_target(config: &TimerConfig) -> u64 {
    let target =
        u128::from(config.lane_cycles_per_block) * u128::from(config.lane_target_percent) / 100;
    (target as u64).max(1)
}

/// What one fire pays per handler cycle under market ordering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LanePrice {
    /// The lane basefee (burned).
    pub lane_basefee: u64,
    /// The priority fee (to the proposer):
    /// `min(max_priority, max_fee − lane_basefee)`.
    pub priority: u64,
    /// Did the cap cut the priority fee below what the timer offered?
    pub clamped: bool,
}

/// The price of a fire with these caps at `lane_basefee`, or `None` while
/// the basefee is above `max_fee_per_cycle` (the timer waits).
pub fn lane_price(
    max_fee_per_cycle: u64,
    max_priority: u64,
    lane_basefee: u64,
) -> Option<LanePrice> {
    let headroom = max_fee_per_cycle.checked_sub(lane_basefee)?;
    Some(LanePrice {
        lane_basefee,
        priority: max_priority.min(headroom),
        clamped: max_priority > headroom,
    })
}

/// The caps of a schedule that names `bid` (its priority fee) and
/// `max_fee` or leaves them out: the priority fee defaults to 0 — under
/// market ordering, to the previous block's median tip — and the fee cap to
/// `2 × lane basefee + priority fee` (CIP-1 v3's default bid, with the tip
/// on top as EIP-1559 wallets do, so a tip given is payable at today's
/// basefee and the basefee may double before the timer waits).
pub fn default_caps(
    config: &TimerConfig,
    market: &LaneMarket,
    bid: Option<u64>,
    max_fee: Option<u64>,
) -> (u64, u64) {
    let priority = bid.unwrap_or(if config.ordering == TimerOrdering::Market {
        market.median_tip
    } else {
        0
    });
    let fee = max_fee.unwrap_or_else(|| {
        market
            .basefee
            .saturating_mul(2)
            .saturating_add(priority)
            .min(MAX_FEE_PER_CYCLE)
    });
    (fee, priority)
}

/// One tier's caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeeSuggestion {
    /// `max_fee_per_cycle`.
    pub max_fee_per_cycle: u64,
    /// `max_priority_fee_per_cycle`.
    pub max_priority_fee_per_cycle: u64,
}

/// The quote's hints (CIP-1 v3: the default bid scaled by 0.8, 1.0, 1.5
/// and 2.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuggestedFees {
    /// ×0.8: fires when the lane is quiet.
    pub economy: FeeSuggestion,
    /// ×1.0: the default bid.
    pub standard: FeeSuggestion,
    /// ×1.5.
    pub fast: FeeSuggestion,
    /// ×2.5: ahead of most under congestion.
    pub urgent: FeeSuggestion,
}

/// The tiers' multipliers in thousandths.
const TIERS: [(&str, u64); 4] = [
    ("economy", 800),
    ("standard", 1_000),
    ("fast", 1_500),
    ("urgent", 2_500),
];

impl SuggestedFees {
    /// The hints at `market`: per tier of multiplier `m`, a priority fee of
    /// `⌈median_tip × m⌉` and a fee cap of `⌈2 × basefee × m⌉` plus that
    /// priority fee — never below the basefee, so every tier is accepted.
    pub fn at(market: &LaneMarket) -> SuggestedFees {
        let tier = |per_mille: u64| {
            let scale = |v: u64| {
                (u128::from(v) * u128::from(per_mille))
                    .div_ceil(1_000)
                    .min(u128::from(MAX_FEE_PER_CYCLE)) as u64
            };
            let priority = scale(market.median_tip);
            let fee = scale(market.basefee.saturating_mul(2))
                .max(market.basefee)
                .saturating_add(priority)
                .min(MAX_FEE_PER_CYCLE);
            FeeSuggestion {
                max_fee_per_cycle: fee,
                max_priority_fee_per_cycle: priority,
            }
        };
        SuggestedFees {
            economy: tier(TIERS[0].1),
            standard: tier(TIERS[1].1),
            fast: tier(TIERS[2].1),
            urgent: tier(TIERS[3].1),
        }
    }

    /// `{economy|standard|fast|urgent: {max_fee_per_cycle,
    /// max_priority_fee_per_cycle}}`.
    pub fn to_value(&self) -> crate::Value {
        use crate::Value;
        let tiers = [self.economy, self.standard, self.fast, self.urgent];
        Value::dict_from(TIERS.iter().zip(tiers).map(|((name, _), s)| {
            (
                Value::str(*name),
                Value::dict_from([
                    (
                        Value::str("max_fee_per_cycle"),
                        Value::int(s.max_fee_per_cycle),
                    ),
                    (
                        Value::str("max_priority_fee_per_cycle"),
                        Value::int(s.max_priority_fee_per_cycle),
                    ),
                ])
                .expect("str keys are hashable"),
            )
        }))
        .expect("str keys are hashable")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn market_config() -> TimerConfig {
        TimerConfig {
            ordering: TimerOrdering::Market,
            lane_cycles_per_block: 1_000_000,
            max_cycles_per_fire: 100_000,
            ..TimerConfig::default()
        }
    }

    #[test]
    fn lane_basefee_rises_one_eighth_after_a_full_lane() {
        let config = market_config();
        let m = LaneMarket {
            basefee: 1_000,
            median_tip: 0,
        };
        assert_eq!(m.next(&config, 1_000_000, 0).basefee, 1_125);
    }

    #[test]
    fn lane_basefee_falls_one_eighth_after_an_empty_lane() {
        let config = market_config();
        let m = LaneMarket {
            basefee: 1_000,
            median_tip: 0,
        };
        assert_eq!(m.next(&config, 0, 0).basefee, 875);
    }

    #[test]
    fn lane_basefee_is_unchanged_at_target() {
        let config = market_config();
        let m = LaneMarket {
            basefee: 1_000,
            median_tip: 0,
        };
        assert_eq!(m.next(&config, 500_000, 0).basefee, 1_000);
        // Halfway above target: +6.25 %.
        assert_eq!(m.next(&config, 750_000, 0).basefee, 1_062);
    }

    #[test]
    fn lane_basefee_never_goes_below_its_floor() {
        let config = TimerConfig {
            min_lane_basefee: 900,
            ..market_config()
        };
        let mut m = LaneMarket {
            basefee: 1_000,
            median_tip: 0,
        };
        for _ in 0..10 {
            m = m.next(&config, 0, 0);
            assert!(m.basefee >= 900);
        }
        assert_eq!(m.basefee, 900);
    }

    #[test]
    fn lane_basefee_stops_at_its_ceiling() {
        let m = LaneMarket {
            basefee: MAX_LANE_BASEFEE - 1,
            median_tip: 0,
        };
        let full = m.next(&market_config(), 1_000_000, 0);
        assert_eq!(full.basefee, MAX_LANE_BASEFEE);
        assert_eq!(
            full.next(&market_config(), 1_000_000, 0).basefee,
            MAX_LANE_BASEFEE
        );
    }

    #[test]
    fn lane_basefee_stays_at_the_floor_outside_market_ordering() {
        for ordering in [TimerOrdering::Fifo, TimerOrdering::Priority] {
            let config = TimerConfig {
                ordering,
                ..market_config()
            };
            let m = LaneMarket {
                basefee: 5_000,
                median_tip: 3,
            };
            assert_eq!(
                m.next(&config, 1_000_000, 3).basefee,
                config.min_lane_basefee
            );
        }
    }

    #[test]
    fn a_governed_denominator_and_target_steer_the_step() {
        let config = TimerConfig {
            lane_basefee_change_denominator: 4,
            lane_target_percent: 25,
            ..market_config()
        };
        let m = LaneMarket {
            basefee: 1_000,
            median_tip: 0,
        };
        assert_eq!(m.next(&config, 250_000, 0).basefee, 1_000);
        // Far above a 25 % target: the step is clipped at 1/4.
        assert_eq!(m.next(&config, 1_000_000, 0).basefee, 1_250);
        assert_eq!(m.next(&config, 0, 0).basefee, 750);
    }

    #[test]
    fn the_priority_fee_is_clamped_to_the_cap() {
        assert_eq!(lane_price(99, 5, 100), None, "below the basefee: waits");
        let p = lane_price(110, 5, 100).unwrap();
        assert_eq!((p.priority, p.clamped), (5, false));
        let p = lane_price(103, 5, 100).unwrap();
        assert_eq!((p.priority, p.clamped), (3, true));
        let p = lane_price(100, 5, 100).unwrap();
        assert_eq!((p.priority, p.clamped), (0, true));
    }

    #[test]
    fn defaults_follow_the_spec_and_honour_what_is_given() {
        let market = LaneMarket {
            basefee: 100,
            median_tip: 7,
        };
        let fifo = TimerConfig::default();
        assert_eq!(default_caps(&fifo, &market, None, None), (200, 0));
        assert_eq!(default_caps(&fifo, &market, Some(5), None), (205, 5));
        let config = market_config();
        assert_eq!(default_caps(&config, &market, None, None), (207, 7));
        assert_eq!(default_caps(&config, &market, None, Some(150)), (150, 7));
    }

    #[test]
    fn suggested_fees_scale_by_tier_and_are_all_accepted() {
        let market = LaneMarket {
            basefee: 1_000,
            median_tip: 10,
        };
        let s = SuggestedFees::at(&market);
        assert_eq!(s.standard.max_priority_fee_per_cycle, 10);
        assert_eq!(s.standard.max_fee_per_cycle, 2_010);
        assert_eq!(s.economy.max_priority_fee_per_cycle, 8);
        assert_eq!(s.economy.max_fee_per_cycle, 1_608);
        assert_eq!(s.fast.max_fee_per_cycle, 3_015);
        assert_eq!(s.urgent.max_priority_fee_per_cycle, 25);
        assert_eq!(s.urgent.max_fee_per_cycle, 5_025);
        for t in [s.economy, s.standard, s.fast, s.urgent] {
            assert!(t.max_fee_per_cycle >= market.basefee);
        }
    }
}
