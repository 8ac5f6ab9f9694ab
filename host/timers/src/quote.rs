//! The quote before scheduling (#17; Hedera's `hasScheduleCapacity`,
//! Massa's quote): what a timer at a height would pre-charge per fire, its
//! deposit, and whether one more would fire there without carry-over.
//!
//! O(1) reads: the configs (passed in) and one due bucket's leaf, which
//! keeps its queued count and reserved lane cycles ([`crate::bucket`]).
//! Timers carried over from earlier blocks also compete for a block's lane;
//! knowing them would mean walking the queue, so the quote counts the
//! timers queued *for* that height only, and says so.

use timerhost_state::StateRead;
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{Address, BasefeeConfig, Hash, Timer, TimerConfig, TimerQuote};

use crate::bucket;
use crate::delivery::max_cost;
use crate::error::{Result, TimerError};
use crate::store;

const CALL: &str = "timer_quote";

/// Quotes a timer at `height` (default: the next block) with `gas_limit`
/// per fire (default: `max_cycles_per_fire`), asked at `current` height.
/// The same rules as scheduling refuse a height that is not in the future
/// and a gas limit of 0 or above `max_cycles_per_fire`.
pub fn quote(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    current: u64,
    height: Option<u64>,
    gas_limit: Option<u64>,
) -> Result<std::result::Result<TimerQuote, TimerError>> {
    let height = height.unwrap_or(current.saturating_add(1));
    if height <= current {
        return Ok(Err(TimerError::HeightNotInFuture {
            call: CALL,
            height,
            current,
        }));
    }
    let gas_limit = gas_limit.unwrap_or(config.max_cycles_per_fire);
    if gas_limit == 0 {
        return Ok(Err(TimerError::GasLimitZero { call: CALL }));
    }
    if gas_limit > config.max_cycles_per_fire {
        return Ok(Err(TimerError::GasLimitTooHigh {
            call: CALL,
            gas_limit,
            max: config.max_cycles_per_fire,
        }));
    }
    // A timer with an empty payload and the default handler: every other
    // field is fixed-width, so its size does not depend on who asks.
    let prototype = Timer {
        actor_address: Address::ZERO,
        height,
        payload: Vec::new(),
        timer_id: Hash::ZERO,
        handler: timerhost_types::timer::DEFAULT_TIMER_HANDLER.into(),
        fee_payer: Address::ZERO,
        gas_limit_per_fire: gas_limit,
        expires_at: height,
        seq: 0,
        deposit: 0,
    };
    let deposit = config.deposit_per_byte * u128::from(store::state_bytes(&prototype));
    let leaf = bucket::leaf(state, height)?;
    let (queued, reserved) = leaf.map_or((0, 0), |l| (l.live, l.reserved));
    let need = gas_limit + TIMER_FIRE_BASE_CYCLES;
    let lane = config.lane_cycles_per_block;
    // Delivery admits a timer larger than the whole lane alone, at the head
    // of an empty lane (delivery.rs).
    let lane_fits = reserved.saturating_add(need) <= lane || (queued == 0 && need > lane);
    Ok(Ok(TimerQuote {
        height,
        gas_limit,
        max_cost: max_cost(gas_limit, config, basefee).unwrap_or(u128::MAX),
        deposit,
        lane_budget: lane,
        reserved,
        queued,
        fits: lane_fits && queued < config.max_fires_per_block,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::{EmptyState, Overlay};

    fn timer(height: u64, seq: u64, gas: u64) -> Timer {
        Timer {
            actor_address: Address([1; 20]),
            height,
            payload: vec![],
            timer_id: Hash([seq as u8; 32]),
            handler: "handle_timer".into(),
            fee_payer: Address([1; 20]),
            gas_limit_per_fire: gas,
            expires_at: height + 10,
            seq,
            deposit: 0,
        }
    }

    #[test]
    fn a_quote_counts_what_is_queued_at_its_height_and_the_lane() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let config = TimerConfig {
            lane_cycles_per_block: 20_000,
            max_cycles_per_fire: 10_000,
            max_fires_per_block: 3,
            ..TimerConfig::default()
        };
        let basefee = BasefeeConfig::default();
        let q = quote(&state, &config, &basefee, 5, Some(9), Some(4_000))
            .unwrap()
            .unwrap();
        assert_eq!((q.queued, q.reserved, q.fits), (0, 0, true));
        assert_eq!(q.max_cost, max_cost(4_000, &config, &basefee).unwrap());
        let mut prototype = timer(9, 0, 4_000);
        prototype.handler = "handle_timer".into();
        assert_eq!(
            q.deposit,
            config.deposit_per_byte * u128::from(store::state_bytes(&prototype)),
            "the deposit of an empty payload with the default handler"
        );
        store::insert(&mut state, &timer(9, 1, 4_000)).unwrap();
        let q = quote(&state, &config, &basefee, 5, Some(9), Some(4_000))
            .unwrap()
            .unwrap();
        assert_eq!((q.queued, q.reserved, q.fits), (1, 7_000, true));
        store::insert(&mut state, &timer(9, 2, 9_000)).unwrap();
        let q = quote(&state, &config, &basefee, 5, Some(9), Some(4_000))
            .unwrap()
            .unwrap();
        assert_eq!((q.reserved, q.fits), (19_000, false), "the lane is full");
        let other = quote(&state, &config, &basefee, 5, Some(10), Some(4_000))
            .unwrap()
            .unwrap();
        assert!(other.fits, "another height has its own lane");
    }

    #[test]
    fn a_quote_refuses_what_scheduling_refuses_and_names_itself() {
        let config = TimerConfig::default();
        let basefee = BasefeeConfig::default();
        let refused = |height, gas| {
            quote(&EmptyState, &config, &basefee, 5, height, gas)
                .unwrap()
                .unwrap_err()
                .to_string()
        };
        assert!(refused(Some(5), None).starts_with("timer_quote: height 5 is not in the future"));
        assert!(refused(None, Some(0)).contains("at least 1"));
        assert!(refused(None, Some(config.max_cycles_per_fire + 1)).contains("max_cycles_per_fire"));
        let q = quote(&EmptyState, &config, &basefee, 5, None, None)
            .unwrap()
            .unwrap();
        assert_eq!((q.height, q.gas_limit), (6, config.max_cycles_per_fire));
    }
}
