//! The quote before scheduling (#17; Hedera's `hasScheduleCapacity`,
//! Massa's quote): what a timer at a height or a time would pre-charge per
//! fire, its deposit, and whether one more would fire there without
//! carry-over.
//!
//! O(1) reads: the configs (passed in) and one due bucket's leaf, which
//! keeps its queued count and reserved lane cycles ([`crate::bucket`]).
//! Timers carried over from earlier blocks also compete for a block's lane;
//! knowing them would mean walking the queue, so the quote counts the
//! timers queued *for* that height (or millisecond) only, and says so. A
//! time slot's timers share their block's lane with every other timer due
//! in it, which the quote cannot know in advance either.

use timerhost_state::StateRead;
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{
    Address, BasefeeConfig, Hash, QuoteRequest, Timer, TimerConfig, TimerKind, TimerQuote,
};

use crate::bucket;
use crate::delivery::max_cost;
use crate::error::{Result, TimerError};
use crate::keys::BucketId;
use crate::store;

const CALL: &str = "timer_quote";

/// Quotes a timer at `request.height` (default: the next block) or at
/// `request.timestamp_ms`, with `gas_limit` per fire (default:
/// `max_cycles_per_fire`), asked at height `current` in a block stamped
/// `current_ms`. The same rules as scheduling refuse a height or time that
/// is not in the future, both at once, and a gas limit of 0 or above
/// `max_cycles_per_fire`.
pub fn quote(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    current: u64,
    current_ms: u64,
    request: QuoteRequest,
) -> Result<std::result::Result<TimerQuote, TimerError>> {
    let next = current.saturating_add(1);
    let (height, bucket, kind) = match (request.height, request.timestamp_ms) {
        (Some(_), Some(_)) => {
            return Ok(Err(TimerError::InvalidArguments {
                call: CALL,
                reason: "give height or timestamp_ms, not both".into(),
            }))
        }
        (_, Some(timestamp_ms)) => {
            if timestamp_ms <= current_ms {
                return Ok(Err(TimerError::TimeNotInFuture {
                    call: CALL,
                    timestamp_ms,
                    current_ms,
                }));
            }
            (
                next,
                BucketId::time(timestamp_ms),
                TimerKind::Time { timestamp_ms },
            )
        }
        (height, None) => {
            let height = height.unwrap_or(next);
            if height <= current {
                return Ok(Err(TimerError::HeightNotInFuture {
                    call: CALL,
                    height,
                    current,
                }));
            }
            (height, BucketId::height(height), TimerKind::Height)
        }
    };
    let gas_limit = request.gas_limit.unwrap_or(config.max_cycles_per_fire);
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
    let market = crate::lane::market(state, config)?;
    let (max_fee_per_cycle, bid) = match crate::host::check_fee_caps(
        config,
        &market,
        request.bid,
        request.max_fee_per_cycle,
    ) {
        Ok(caps) => caps,
        Err(e) => return Ok(Err(e.in_call(CALL))),
    };
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
        bid,
        max_fee_per_cycle,
        kind,
        escrow_key: None,
        booked: false,
        retry: None,
    };
    let retries = request.retries.unwrap_or(0);
    if retries > config.max_retries {
        return Ok(Err(TimerError::InvalidArguments {
            call: CALL,
            reason: format!(
                "retries={retries} is more than this chain allows (TimerConfig.max_retries = {})",
                config.max_retries
            ),
        }));
    }
    let max_attempts = u64::from(retries) + 1;
    let booking = if request.book {
        let place = match request.timestamp_ms {
            Some(timestamp_ms) => crate::bookings::Place::Second(timestamp_ms / 1_000),
            None => crate::bookings::Place::Height(height),
        };
        let cycles = crate::bookings::cycles_of(gas_limit);
        let offer =
            crate::bookings::offer(state, config, basefee, current, current_ms, place, cycles)?;
        let held = crate::bookings::slot(state, place)?;
        let share = crate::bookings::share(config, basefee);
        let free_heights = match place {
            crate::bookings::Place::Height(h) => {
                crate::bookings::free_heights(state, config, basefee, current, h, cycles)?
            }
            crate::bookings::Place::Second(_) => Vec::new(),
        };
        Some(timerhost_types::BookingQuote {
            bookable: offer.is_ok(),
            booking_fee: offer.as_ref().ok().copied(),
            reason: offer.err(),
            booked_cycles: held.cycles,
            booked_fires: held.fires,
            share_cycles: share.cycles,
            share_fires: share.fires,
            free_heights,
        })
    } else {
        None
    };
    let deposit = config.deposit_per_byte * u128::from(store::state_bytes(&prototype));
    let leaf = bucket::leaf(state, bucket)?;
    let (queued, reserved) = leaf.map_or((0, 0), |l| (l.live, l.reserved));
    let need = gas_limit + TIMER_FIRE_BASE_CYCLES;
    let lane = config.lane_cycles_per_block;
    // Delivery admits a timer larger than the whole lane alone, at the head
    // of an empty lane (delivery.rs).
    let lane_fits = reserved.saturating_add(need) <= lane || (queued == 0 && need > lane);
    // What delivery would pre-charge with these caps (#31).
    let max_cost = max_cost(
        gas_limit,
        crate::lane::fee_cap(&prototype, config),
        config,
        basefee,
    )
    .unwrap_or(u128::MAX);
    Ok(Ok(TimerQuote {
        height,
        timestamp_ms: request.timestamp_ms,
        gas_limit,
        max_cost,
        max_attempts,
        worst_case_cost: max_cost.saturating_mul(u128::from(max_attempts)),
        booking,
        lane_basefee: market.basefee,
        max_fee_per_cycle,
        max_priority_fee_per_cycle: bid,
        suggested_fees: timerhost_types::SuggestedFees::at(&market),
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

    const T: u64 = 1_767_225_600_000;

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
            bid: 0,
            max_fee_per_cycle: 0,
            kind: timerhost_types::TimerKind::Height,
            escrow_key: None,
            booked: false,
            retry: None,
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
        // A quote at `height` with 4,000 cycles per fire, asked at height 5.
        let quote_at = |state: &Overlay<'_>, height| {
            let request = QuoteRequest {
                height: Some(height),
                timestamp_ms: None,
                gas_limit: Some(4_000),
                ..Default::default()
            };
            quote(state, &config, &basefee, 5, T, request)
                .unwrap()
                .unwrap()
        };
        let q = quote_at(&state, 9);
        assert_eq!((q.queued, q.reserved, q.fits), (0, 0, true));
        assert_eq!(q.max_cost, max_cost(4_000, 0, &config, &basefee).unwrap());
        let mut prototype = timer(9, 0, 4_000);
        prototype.handler = "handle_timer".into();
        assert_eq!(
            q.deposit,
            config.deposit_per_byte * u128::from(store::state_bytes(&prototype)),
            "the deposit of an empty payload with the default handler"
        );
        store::insert(&mut state, &timer(9, 1, 4_000)).unwrap();
        let q = quote_at(&state, 9);
        assert_eq!((q.queued, q.reserved, q.fits), (1, 7_000, true));
        store::insert(&mut state, &timer(9, 2, 9_000)).unwrap();
        let q = quote_at(&state, 9);
        assert_eq!((q.reserved, q.fits), (19_000, false), "the lane is full");
        let other = quote_at(&state, 10);
        assert!(other.fits, "another height has its own lane");
    }

    #[test]
    fn a_quote_refuses_what_scheduling_refuses_and_names_itself() {
        let config = TimerConfig::default();
        let basefee = BasefeeConfig::default();
        let refused = |height, gas| {
            quote(
                &EmptyState,
                &config,
                &basefee,
                5,
                T,
                QuoteRequest {
                    height,
                    timestamp_ms: None,
                    gas_limit: gas,
                    ..Default::default()
                },
            )
            .unwrap()
            .unwrap_err()
            .to_string()
        };
        assert!(refused(Some(5), None).starts_with("timer_quote: height 5 is not in the future"));
        assert!(refused(None, Some(0)).contains("at least 1"));
        assert!(refused(None, Some(config.max_cycles_per_fire + 1)).contains("max_cycles_per_fire"));
        let q = quote(
            &EmptyState,
            &config,
            &basefee,
            5,
            T,
            QuoteRequest {
                height: None,
                timestamp_ms: None,
                gas_limit: None,
                ..Default::default()
            },
        )
        .unwrap()
        .unwrap();
        assert_eq!((q.height, q.gas_limit), (6, config.max_cycles_per_fire));
        let at = |timestamp_ms| {
            let request = QuoteRequest {
                height: None,
                timestamp_ms: Some(timestamp_ms),
                gas_limit: None,
                ..Default::default()
            };
            quote(&EmptyState, &config, &basefee, 5, T, request).unwrap()
        };
        assert!(at(T).unwrap_err().to_string().starts_with(
            "timer_quote: timestamp_ms 1767225600000 is not after the current block's timestamp"
        ));
        let q = at(T + 1).unwrap();
        assert_eq!((q.height, q.timestamp_ms, q.queued), (6, Some(T + 1), 0));
        let both = QuoteRequest {
            height: Some(9),
            timestamp_ms: Some(T + 1),
            gas_limit: None,
            ..Default::default()
        };
        let both = quote(&EmptyState, &config, &basefee, 5, T, both);
        assert!(both.unwrap().unwrap_err().to_string().contains("not both"));
    }

    #[test]
    fn a_time_quote_counts_what_is_queued_in_its_millisecond() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let config = TimerConfig::default();
        let basefee = BasefeeConfig::default();
        let mut t = timer(5, 1, 4_000);
        t.kind = TimerKind::Time {
            timestamp_ms: T + 500,
        };
        store::insert(&mut state, &t).unwrap();
        let at = |timestamp_ms| {
            let request = QuoteRequest {
                height: None,
                timestamp_ms: Some(timestamp_ms),
                gas_limit: Some(4_000),
                ..Default::default()
            };
            quote(&state, &config, &basefee, 5, T, request)
                .unwrap()
                .unwrap()
        };
        assert_eq!((at(T + 500).queued, at(T + 500).reserved), (1, 7_000));
        assert_eq!(at(T + 501).queued, 0);
        let mut prototype = t.clone();
        prototype.payload.clear();
        assert_eq!(
            at(T + 500).deposit,
            config.deposit_per_byte * u128::from(store::state_bytes(&prototype))
        );
    }
}
