//! The timer lane's market state as delivery and scheduling read it (#31):
//! the [`LaneMarket`] the chain writes after each block, or its floor on a
//! chain that never wrote one.

use timerhost_state::{StateRead, StateReadExt};
use timerhost_types::{keys, LaneMarket, Timer, TimerConfig, TimerOrdering};

use crate::error::Result;

/// The lane market in force for the block being executed. The basefee
/// never reads below the config's floor (governance may have raised it
/// since the last block wrote it), and outside market ordering it *is* the
/// floor.
pub fn market(state: &(impl StateRead + ?Sized), config: &TimerConfig) -> Result<LaneMarket> {
    let mut market = state
        .get_decoded::<LaneMarket>(&keys::lane_market())?
        .unwrap_or_else(|| LaneMarket::at_floor(config));
    market.basefee = if config.ordering == TimerOrdering::Market {
        market.basefee.max(config.min_lane_basefee)
    } else {
        config.min_lane_basefee
    };
    Ok(market)
}

/// What a fire of `timer` pre-charges per handler cycle on top of the
/// cycle basefee: its `max_fee_per_cycle` under market ordering, its bid
/// under the others — and its bid alone when it is booked (#45): its
/// booking paid for its place in the lane, so it never pays the lane
/// basefee.
pub fn fee_cap(timer: &Timer, config: &TimerConfig) -> u64 {
    if config.ordering == TimerOrdering::Market && !timer.booked {
        timer.max_fee_per_cycle
    } else {
        timer.bid
    }
}
