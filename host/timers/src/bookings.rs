//! Booked capacity (#45): a share of every block's timer lane that can be
//! reserved ahead, so that a booked timer fires in the block it is due in —
//! at that block's **start**, before every other fire and every
//! transaction — never carried over and never priced out by the lane
//! basefee, unless its fee payer cannot pay its fire or governance pauses
//! timers.
//!
//! **The share.** `bookable_lane_percent` of the block's lane cycles and of
//! its `max_fires_per_block`, and no more fires than that share of the
//! block's cells can hold at each fire's cells limit ([`share`]). A block's
//! bookings ([`Slot`], `t B ‖ height`) never pass it: a booking that does not
//! fit is refused when it is made, with the nearest heights that have room
//! ([`free_heights`]). Booked fires run first in a fresh block, so the
//! share is always there for them. A time booking (`book_timer_at`) holds
//! capacity in its unix **second** (`t C ‖ second`), whose share is a
//! block's: with blocks at least a second apart every block holds at most
//! one second's bookings; a block that follows a stall runs every booked
//! time fire that came due during it, above its share, and still carries
//! none over.
//!
//! **The price** ([`price`]), paid at booking and burned: the cycles booked
//! at the current cycle basefee, times a multiplier that grows with the
//! share already booked in that block — the integral of `1 + 15 f²` over
//! the fraction `f` the booking takes, so a block booked out costs six
//! times its cycles and splitting a booking in pieces saves nothing — and
//! with the average booked occupancy over the horizon (`max_booking_blocks`
//! blocks: up to twice as much when the whole horizon is booked). The fire's
//! own cycles are then settled as for any timer.
//!
//! **Cancel.** Cancelling a booked timer frees its capacity; the booking fee
//! is not refunded. The fee paid for holding capacity others could not
//! book; refunding it would let anyone book out blocks at no cost and
//! cancel at the last moment (or "resell" by cancelling against a side
//! payment), which is exactly what a booking market must not allow.
//!
//! **Governance.** A change of the share applies to bookings made after it;
//! bookings already made keep their capacity and fire first in their block
//! even if the new share is smaller (grandfathered), so nothing booked is
//! ever discovered unfireable at firing.

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::encoding::Canonical;
use timerhost_types::keys::SupplyMeta;
use timerhost_types::timer::TIMER_FIRE_BASE_CYCLES;
use timerhost_types::{BasefeeConfig, Hash, Timer, TimerConfig, TimerKind};

use crate::budgets::cells_per_fire;
use crate::error::Result;
use crate::keys::{self, corrupt};

/// State bytes a booking adds beside its timer (its index entry, its share
/// of a slot leaf), charged in cells at booking.
pub const BOOKING_STATE_BYTES: u64 = 96;

/// Most free heights a quote suggests.
pub const SUGGESTED_HEIGHTS: usize = 5;
/// Most heights a quote looks through for them.
pub const SUGGESTION_WINDOW: u64 = 256;

/// What a block's (or a second's) bookings hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Slot {
    /// Lane cycles booked (each booking's gas limit plus the fire base).
    pub cycles: u64,
    /// Fires booked.
    pub fires: u64,
}

impl Canonical for Slot {
    const NAME: &'static str = "booked slot";
}

/// The bookable share of one block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    /// Lane cycles.
    pub cycles: u64,
    /// Fires: the share of `max_fires_per_block`, and no more than the
    /// share of the block's cells holds at each fire's cells limit.
    pub fires: u64,
}

/// The bookable share of a block under `config` and `basefee`.
pub fn share(config: &TimerConfig, basefee: &BasefeeConfig) -> Share {
    let pct = config.bookable_lane_percent;
    let cycles = (u128::from(config.lane_cycles_per_block) * u128::from(pct) / 100) as u64;
    let by_quota = (u128::from(config.max_fires_per_block) * u128::from(pct) / 100) as u64;
    let cells = (u128::from(basefee.max_block_cells) * u128::from(pct) / 100) as u64;
    let by_cells = cells / cells_per_fire(config, basefee).max(1);
    Share {
        cycles,
        fires: by_quota.min(by_cells),
    }
}

/// Where a booking holds capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The block at this height.
    Height(u64),
    /// The block(s) whose timestamps reach this unix second.
    Second(u64),
}

impl Place {
    /// Where `timer` (booked) holds capacity.
    pub fn of(timer: &Timer) -> Place {
        match &timer.kind {
            TimerKind::Time { timestamp_ms } => Place::Second(timestamp_ms / 1_000),
            _ => Place::Height(timer.height),
        }
    }

    pub(crate) fn key(self) -> Vec<u8> {
        let (prefix, n) = match self {
            Place::Height(h) => (keys::BOOKED_HEIGHT, h),
            Place::Second(s) => (keys::BOOKED_SECOND, s),
        };
        let mut k = prefix.to_vec();
        k.extend_from_slice(&n.to_be_bytes());
        k
    }
}

/// The lane cycles a booking of `gas_limit` holds.
pub fn cycles_of(gas_limit: u64) -> u64 {
    gas_limit.saturating_add(TIMER_FIRE_BASE_CYCLES)
}

/// What `place` holds.
pub fn slot(state: &(impl StateRead + ?Sized), place: Place) -> Result<Slot> {
    Ok(state.get_decoded(&place.key())?.unwrap_or_default())
}

fn set_slot(state: &mut Overlay<'_>, place: Place, slot: Slot) {
    if slot.fires == 0 {
        state.delete(place.key());
    } else {
        state.put_encoded(place.key(), &slot);
    }
}

/// Every booked cycle not yet fired, chain-wide: the horizon's occupancy.
pub fn total_booked(state: &(impl StateRead + ?Sized)) -> Result<u128> {
    let key = keys::BOOKED_TOTAL.to_vec();
    match state.get(&key)? {
        None => Ok(0),
        Some(b) => {
            Ok(u128::from_be_bytes(b.as_slice().try_into().map_err(
                |_| corrupt("booked total", &key, "not 16 bytes"),
            )?))
        }
    }
}

fn set_total(state: &mut Overlay<'_>, total: u128) {
    state.put(keys::BOOKED_TOTAL.to_vec(), total.to_be_bytes().to_vec());
}

/// The index entry of booked `timer`: by due point, then sequence, so that
/// the start of a block reads its booked timers in order.
pub(crate) fn index_key(timer: &Timer) -> Vec<u8> {
    let (prefix, at) = match &timer.kind {
        TimerKind::Time { timestamp_ms } => (keys::BOOKED_TIME_INDEX, *timestamp_ms),
        _ => (keys::BOOKED_HEIGHT_INDEX, timer.height),
    };
    let mut k = prefix.to_vec();
    k.extend_from_slice(&at.to_be_bytes());
    k.extend_from_slice(&timer.seq.to_be_bytes());
    k
}

/// The booking fee of `cycles` more lane cycles in a slot already holding
/// `booked`, under `share`, with `total` cycles booked over a horizon of
/// `horizon` blocks, at `cycle_basefee` (module docs). `None` on overflow.
pub fn price(
    share: Share,
    booked: u64,
    cycles: u64,
    total: u128,
    horizon: u64,
    cycle_basefee: u128,
) -> Option<u128> {
    const PPM: u128 = 1_000_000;
    let s = u128::from(share.cycles.max(1));
    let b0 = u128::from(booked);
    let b1 = b0.checked_add(u128::from(cycles))?;
    // ∫ (1 + 15 f²) df over [b0/S, b1/S], times S: c + 5 (b1³ − b0³) / S².
    let cube_diff = (b1 - b0).checked_mul(b1 * b1 + b1 * b0 + b0 * b0)?;
    let weighted = u128::from(cycles).checked_add(cube_diff.checked_mul(5)? / (s * s))?;
    let capacity = u128::from(horizon.max(1)).checked_mul(s)?;
    let occupancy_ppm = (total.checked_mul(PPM)? / capacity).min(PPM);
    cycle_basefee
        .checked_mul(weighted)?
        .checked_mul(PPM + occupancy_ppm)?
        .checked_div(PPM)
}

/// Why `place` cannot take a booking of `cycles` now (`Err`), or its fee.
#[allow(clippy::too_many_arguments)]
pub fn offer(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    current_height: u64,
    current_ms: u64,
    place: Place,
    cycles: u64,
) -> Result<std::result::Result<u128, String>> {
    let share = share(config, basefee);
    if share.fires == 0 || share.cycles == 0 {
        return Ok(Err(format!(
            "nothing is bookable on this chain (TimerConfig.bookable_lane_percent = {})",
            config.bookable_lane_percent
        )));
    }
    let horizon = config.max_booking_blocks.min(config.max_ttl_blocks);
    match place {
        Place::Height(h) if h > current_height.saturating_add(horizon) => {
            return Ok(Err(format!(
                "height {h} is more than {horizon} blocks ahead (max_booking_blocks)"
            )))
        }
        Place::Second(s) if s > (current_ms / 1_000).saturating_add(horizon) => {
            return Ok(Err(format!(
                "second {s} is more than {horizon} s ahead (max_booking_blocks, one second a block)"
            )))
        }
        _ => {}
    }
    let booked = slot(state, place)?;
    if booked.fires >= share.fires || booked.cycles.saturating_add(cycles) > share.cycles {
        return Ok(Err(format!(
            "the block's bookable share is taken: {} of {} fires and {} of {} cycles booked, {} more asked",
            booked.fires, share.fires, booked.cycles, share.cycles, cycles
        )));
    }
    let total = total_booked(state)?;
    Ok(
        match price(
            share,
            booked.cycles,
            cycles,
            total,
            horizon,
            basefee.cycle_basefee,
        ) {
            Some(fee) => Ok(fee),
            None => Err("the booking fee overflows".into()),
        },
    )
}

/// At scheduling `timer` (booked, its deposit computed): the booking fee,
/// or why the booking is refused — its trigger is not a height or a time,
/// its block is full or beyond the horizon, or its fee payer (and escrow)
/// cannot pay the deposit and the fee together.
pub fn quote_for(
    state: &Overlay<'_>,
    config: &TimerConfig,
    current_height: u64,
    current_ms: u64,
    timer: &Timer,
) -> Result<std::result::Result<u128, crate::error::TimerError>> {
    let call = match timer.kind {
        TimerKind::Time { .. } => "book_timer_at",
        _ => "book_timer",
    };
    let refuse = |reason: String| {
        Ok(Err(crate::error::TimerError::BookingRefused {
            call,
            reason,
        }))
    };
    if matches!(timer.kind, TimerKind::State(_)) {
        return refuse("only a height or a time can be booked, not a state watch".into());
    }
    let basefee: BasefeeConfig = state
        .get_decoded(&timerhost_types::keys::basefee_config())?
        .ok_or_else(|| corrupt("basefee config", b"g basefee", "missing (no genesis?)"))?;
    let fee = match offer(
        state,
        config,
        &basefee,
        current_height,
        current_ms,
        Place::of(timer),
        cycles_of(timer.gas_limit_per_fire),
    )? {
        Ok(fee) => fee,
        Err(reason) => return refuse(reason),
    };
    let needed = fee.saturating_add(timer.deposit);
    let balance = timerhost_state::accounts::load(state, &timer.fee_payer)?.balance;
    if balance < needed {
        return refuse(format!(
            "fee payer {} holds {balance}, less than the booking fee {fee} plus the deposit {}",
            timer.fee_payer, timer.deposit
        ));
    }
    if let Some(key) = &timer.escrow_key {
        let available = crate::escrow::available(state, &timer.actor_address, key)?;
        if available < needed {
            return refuse(format!(
                "its escrow holds {available}, less than the booking fee {fee} plus the deposit {}",
                timer.deposit
            ));
        }
    }
    Ok(Ok(fee))
}

/// Books `timer` (its `booked` set, its sequence taken, `fee` already taken
/// from its fee payer): burns `fee` and records the capacity. The caller
/// checked both with [`quote_for`].
pub fn book(state: &mut Overlay<'_>, timer: &Timer, fee: u128) -> Result<()> {
    let cycles = cycles_of(timer.gas_limit_per_fire);
    let place = Place::of(timer);
    let mut held = slot(state, place)?;
    held.cycles = held.cycles.saturating_add(cycles);
    held.fires += 1;
    set_slot(state, place, held);
    let total = total_booked(state)?.saturating_add(u128::from(cycles));
    set_total(state, total);
    state.put(index_key(timer), timer.timer_id.as_bytes().to_vec());
    let mut supply: SupplyMeta = state
        .get_decoded(&timerhost_types::keys::supply())?
        .unwrap_or_default();
    supply.burned = supply
        .burned
        .checked_add(fee)
        .ok_or_else(|| corrupt("supply", b"supply", "burned total overflows"))?;
    state.put_encoded(timerhost_types::keys::supply(), &supply);
    Ok(())
}

/// Frees what booked `timer` held (it fired, was cancelled or removed).
pub fn release(state: &mut Overlay<'_>, timer: &Timer) -> Result<()> {
    let cycles = cycles_of(timer.gas_limit_per_fire);
    let place = Place::of(timer);
    let mut held = slot(state, place)?;
    held.cycles = held.cycles.saturating_sub(cycles);
    held.fires = held.fires.saturating_sub(1);
    set_slot(state, place, held);
    let total = total_booked(state)?.saturating_sub(u128::from(cycles));
    set_total(state, total);
    state.delete(index_key(timer));
    Ok(())
}

/// The booked timers due by `height` and `timestamp_ms`, oldest due first
/// (height bookings, then time bookings), at most `limit`.
pub fn due(
    state: &(impl StateRead + ?Sized),
    height: u64,
    timestamp_ms: u64,
    limit: usize,
) -> Result<Vec<Hash>> {
    let mut out = Vec::new();
    for (prefix, through) in [
        (keys::BOOKED_HEIGHT_INDEX, height),
        (keys::BOOKED_TIME_INDEX, timestamp_ms),
    ] {
        let start = prefix.to_vec();
        let mut end = prefix.to_vec();
        end.extend_from_slice(&through.saturating_add(1).to_be_bytes());
        for (k, v) in state.scan(&start, Some(&end), limit - out.len())? {
            let id: [u8; 32] = v
                .as_slice()
                .try_into()
                .map_err(|_| corrupt("booked timer index", &k, "not a timer id"))?;
            out.push(Hash(id));
        }
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

/// The booked heights in `from..to` and what each holds (at most `limit`).
pub fn heights_between(
    state: &(impl StateRead + ?Sized),
    from: u64,
    to: u64,
    limit: usize,
) -> Result<Vec<(u64, Slot)>> {
    let start = Place::Height(from).key();
    let end = Place::Height(to).key();
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            let height = u64::from_be_bytes(
                k[keys::BOOKED_HEIGHT.len()..]
                    .try_into()
                    .map_err(|_| corrupt("booked slot", &k, "bad key"))?,
            );
            let slot = timerhost_types::decode::<Slot>(&v)
                .map_err(|e| corrupt("booked slot", &k, &e.to_string()))?;
            Ok((height, slot))
        })
        .collect()
}

/// Up to [`SUGGESTED_HEIGHTS`] heights from `from` on (within
/// [`SUGGESTION_WINDOW`] and the horizon) that still have room for a
/// booking of `cycles`.
pub fn free_heights(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    basefee: &BasefeeConfig,
    current_height: u64,
    from: u64,
    cycles: u64,
) -> Result<Vec<u64>> {
    let share = share(config, basefee);
    if share.fires == 0 || cycles > share.cycles {
        return Ok(Vec::new());
    }
    let last = current_height
        .saturating_add(config.max_booking_blocks.min(config.max_ttl_blocks))
        .min(from.saturating_add(SUGGESTION_WINDOW));
    let first = from.max(current_height + 1);
    // One range read of the booked heights; every height it skips is free.
    let booked: std::collections::BTreeMap<u64, Slot> = heights_between(
        state,
        first,
        last.saturating_add(1),
        SUGGESTION_WINDOW as usize + 1,
    )?
    .into_iter()
    .collect();
    Ok((first..=last)
        .filter(|h| {
            let held = booked.get(h).copied().unwrap_or_default();
            held.fires < share.fires && held.cycles.saturating_add(cycles) <= share.cycles
        })
        .take(SUGGESTED_HEIGHTS)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARE: Share = Share {
        cycles: 1_000_000,
        fires: 100,
    };

    #[test]
    fn a_block_booked_out_costs_six_times_its_cycles_and_splitting_saves_nothing() {
        let whole = price(SHARE, 0, 1_000_000, 0, 100, 1).unwrap();
        assert_eq!(whole, 6_000_000);
        let mut parts = 0;
        for i in 0..10 {
            parts += price(SHARE, i * 100_000, 100_000, 0, 100, 1).unwrap();
        }
        // Integer rounding may favour the splitter by a unit per piece, no more.
        assert!(parts + 10 >= whole, "{parts} vs {whole}");
        // The first cycles of an empty block cost their basefee.
        assert_eq!(price(SHARE, 0, 1_000, 0, 100, 1).unwrap(), 1_000);
    }

    #[test]
    fn a_busy_horizon_doubles_the_price_at_most() {
        let quiet = price(SHARE, 0, 10_000, 0, 100, 7).unwrap();
        let half = price(SHARE, 0, 10_000, 50 * 1_000_000, 100, 7).unwrap();
        let full = price(SHARE, 0, 10_000, u128::from(u64::MAX), 100, 7).unwrap();
        assert_eq!(half, quiet * 3 / 2);
        assert_eq!(full, quiet * 2);
    }

    #[test]
    fn the_share_is_bounded_by_cells_too() {
        let config = TimerConfig::default();
        let basefee = BasefeeConfig::default();
        let s = share(&config, &basefee);
        assert_eq!(s.cycles, config.lane_cycles_per_block / 5);
        assert!(s.fires <= basefee.max_block_cells / 5 / cells_per_fire(&config, &basefee));
        assert!(s.fires >= 1);
    }
}
