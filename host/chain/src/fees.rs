//! CIP-3 dual-metered fee arithmetic, integer-only and overflow-checked.
//!
//! A transaction pre-pays `cycles_limit × (cycle_basefee + tip) +
//! cells_limit × cell_basefee`, where `tip = min(priority_fee_per_cycle,
//! max_fee_per_cycle − cycle_basefee)`. After execution it pays
//! `cycles_used × (cycle_basefee + tip) + cells_used × cell_basefee`: the
//! basefee part is burned, the tip part goes to the proposer, the rest of the
//! pre-payment is refunded. Timer fires (CIP-5 §6.3) pay the basefees, plus
//! per handler cycle their priority fee (a tip) and under market ordering
//! the lane basefee (burned), pre-paid at their fee cap (#18, #31).

use timerhost_types::{BasefeeConfig, Transaction};

use crate::error::TxError;

/// Prices locked in for one transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeeQuote {
    /// Cycle basefee of this block.
    pub cycle_basefee: u128,
    /// Cell basefee of this block.
    pub cell_basefee: u128,
    /// Effective tip per cycle.
    pub tip_per_cycle: u128,
    /// Burned per tipped cycle on top of the cycle basefee: a timer fire's
    /// lane basefee (#31); 0 for transactions.
    pub lane_basefee: u128,
    /// Of the tipped cycles reserved but not used, the percent that pays
    /// the lane basefee all the same (#50; 0 for transactions).
    pub lane_reservation_percent: u64,
    /// Cycles reserved.
    pub cycles_limit: u64,
    /// The first cycles used pay no tip (a timer fire's base charge: the
    /// bid is a tip on the handler's cycles).
    pub untipped_cycles: u64,
    /// Cells reserved.
    pub cells_limit: u64,
    /// Amount debited up front.
    pub prepay: u128,
}

/// What a timer fire pays per handler cycle beside the cycle basefee.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FireLanePrice {
    /// Pre-paid per handler cycle (its `max_fee_per_cycle` under market
    /// ordering, its bid otherwise).
    pub fee_cap: u128,
    /// Burned per handler cycle used (the lane basefee; 0 outside market
    /// ordering).
    pub lane_basefee: u128,
    /// Paid to the proposer per handler cycle used.
    pub priority: u128,
    /// Of the handler cycles reserved but not used, the percent that pays
    /// the lane basefee (`TimerConfig::lane_reservation_percent`).
    pub reservation_percent: u64,
}

/// How a pre-payment was split after execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Settlement {
    /// Burned (basefee × usage).
    pub burned: u128,
    /// Paid to the proposer.
    pub tip: u128,
    /// Returned to the payer.
    pub refund: u128,
}

impl Settlement {
    /// Total fee charged (burned + tip).
    pub fn fee(&self) -> u128 {
        self.burned + self.tip
    }
}

fn overflow(what: &str) -> TxError {
    TxError::FeeOverflow(format!("{what} exceeds 2^128"))
}

impl FeeQuote {
    /// Quotes a user transaction at the block's basefee.
    pub fn for_tx(tx: &Transaction, basefee: &BasefeeConfig) -> Result<FeeQuote, TxError> {
        if tx.max_fee_per_cycle < basefee.cycle_basefee {
            return Err(TxError::FeeCapBelowBasefee {
                dimension: "cycle",
                max_fee: tx.max_fee_per_cycle,
                basefee: basefee.cycle_basefee,
            });
        }
        if tx.max_fee_per_cell < basefee.cell_basefee {
            return Err(TxError::FeeCapBelowBasefee {
                dimension: "cell",
                max_fee: tx.max_fee_per_cell,
                basefee: basefee.cell_basefee,
            });
        }
        let tip_per_cycle = tx
            .priority_fee_per_cycle
            .min(tx.max_fee_per_cycle - basefee.cycle_basefee);
        Self::new(
            basefee.cycle_basefee,
            basefee.cell_basefee,
            tip_per_cycle,
            tx.cycles_limit,
            tx.cells_limit,
        )
    }

    /// A timer fire's quote: `base_cycles + handler_cycles` at the cycle
    /// basefee, `cells` at the cell basefee, and on the handler's cycles
    /// only the lane basefee (burned) and the priority fee (a tip), pre-paid
    /// at `fee_cap` per handler cycle — the pre-charge is delivery's
    /// `max_cost`. `lane.lane_basefee + lane.priority` must not pass
    /// `fee_cap`: what is pre-paid covers what is paid.
    pub fn for_fire(
        cycle_basefee: u128,
        cell_basefee: u128,
        lane: FireLanePrice,
        handler_cycles: u64,
        base_cycles: u64,
        cells: u64,
    ) -> Result<FeeQuote, TxError> {
        if lane.lane_basefee.saturating_add(lane.priority) > lane.fee_cap {
            return Err(TxError::FeeOverflow(format!(
                "lane basefee {} + priority fee {} exceed the fire's fee cap {}",
                lane.lane_basefee, lane.priority, lane.fee_cap
            )));
        }
        let cycles = handler_cycles
            .checked_add(base_cycles)
            .ok_or_else(|| overflow("cycles limit"))?;
        let mut quote = Self::new(cycle_basefee, cell_basefee, 0, cycles, cells)?;
        quote.tip_per_cycle = lane.priority;
        quote.lane_basefee = lane.lane_basefee;
        quote.lane_reservation_percent = lane.reservation_percent.min(100);
        quote.untipped_cycles = base_cycles;
        quote.prepay = (handler_cycles as u128)
            .checked_mul(lane.fee_cap)
            .and_then(|t| t.checked_add(quote.prepay))
            .ok_or_else(|| overflow("pre-charge"))?;
        Ok(quote)
    }

    /// A quote with explicit prices (deferred transactions use `tip = 0`).
    pub fn new(
        cycle_basefee: u128,
        cell_basefee: u128,
        tip_per_cycle: u128,
        cycles_limit: u64,
        cells_limit: u64,
    ) -> Result<FeeQuote, TxError> {
        let cycle_price = cycle_basefee
            .checked_add(tip_per_cycle)
            .ok_or_else(|| overflow("cycle price"))?;
        let prepay = (cycles_limit as u128)
            .checked_mul(cycle_price)
            .and_then(|c| {
                (cells_limit as u128)
                    .checked_mul(cell_basefee)
                    .and_then(|e| c.checked_add(e))
            })
            .ok_or_else(|| overflow("pre-charge"))?;
        Ok(FeeQuote {
            cycle_basefee,
            cell_basefee,
            tip_per_cycle,
            lane_basefee: 0,
            lane_reservation_percent: 0,
            cycles_limit,
            untipped_cycles: 0,
            cells_limit,
            prepay,
        })
    }

    /// Splits the pre-payment for the resources actually used (clamped to the limits).
    pub fn settle(&self, cycles_used: u64, cells_used: u64) -> Settlement {
        let cycles = cycles_used.min(self.cycles_limit) as u128;
        let cells = cells_used.min(self.cells_limit) as u128;
        // Cannot overflow: each term is bounded by its part of `prepay`.
        let tipped = cycles.saturating_sub(self.untipped_cycles as u128);
        // #50: the lane basefee moves by reservations, so the unused part of
        // a fire's reservation pays it too (at the governed percent).
        let reserved = (self.cycles_limit as u128).saturating_sub(self.untipped_cycles as u128);
        let unused = reserved.saturating_sub(tipped);
        let lane_cycles = tipped + unused * u128::from(self.lane_reservation_percent) / 100;
        let burned = cycles * self.cycle_basefee
            + cells * self.cell_basefee
            + lane_cycles * self.lane_basefee;
        let tip = tipped * self.tip_per_cycle;
        Settlement {
            burned,
            tip,
            refund: self.prepay - burned - tip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_types::{Address, TxKind};

    fn tx(max_fee: u128, tip: u128) -> Transaction {
        Transaction {
            chain_id: 1,
            nonce: 0,
            cycles_limit: 10_000,
            cells_limit: 500,
            max_fee_per_cycle: max_fee,
            max_fee_per_cell: 1_000,
            priority_fee_per_cycle: tip,
            kind: TxKind::Transfer {
                to: Address([1; 20]),
                amount: 1,
            },
        }
    }

    #[test]
    fn prepay_refund_burn_tip_add_up() {
        let basefee = BasefeeConfig::default(); // 1000 / 1000
        let q = FeeQuote::for_tx(&tx(1_500, 20), &basefee).unwrap();
        assert_eq!(q.tip_per_cycle, 20);
        assert_eq!(q.prepay, 10_000 * 1_020 + 500 * 1_000);
        let s = q.settle(3_000, 200);
        assert_eq!(s.burned, 3_000 * 1_000 + 200 * 1_000);
        assert_eq!(s.tip, 3_000 * 20);
        assert_eq!(s.burned + s.tip + s.refund, q.prepay);
    }

    #[test]
    fn tip_is_capped_by_fee_cap() {
        let basefee = BasefeeConfig::default();
        let q = FeeQuote::for_tx(&tx(1_005, 50), &basefee).unwrap();
        assert_eq!(q.tip_per_cycle, 5);
    }

    #[test]
    fn fee_cap_below_basefee_is_named() {
        let basefee = BasefeeConfig::default();
        let e = FeeQuote::for_tx(&tx(999, 0), &basefee).unwrap_err();
        assert_eq!(
            e.to_string(),
            "max_fee_per_cycle 999 is below the current cycle basefee 1000"
        );
    }

    #[test]
    fn usage_is_clamped_to_limits() {
        let q = FeeQuote::new(2, 3, 1, 10, 10).unwrap();
        let s = q.settle(1_000, 1_000);
        assert_eq!(s.refund, 0);
        assert_eq!(s.fee(), q.prepay);
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(FeeQuote::new(u128::MAX, 0, 1, 1, 0).is_err());
        assert!(FeeQuote::new(u128::MAX / 2, 0, 0, 3, 0).is_err());
    }
}
