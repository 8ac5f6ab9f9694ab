//! Market ordering's fairness weight (#31; CIP-1 v3 Part III):
//! `W = clip(2 − recent_fires / reference, 1, 2)`, so an address that fired
//! little lately weighs up to twice as much as a busy one.
//!
//! **O(1) per fire, integers only.** CIP-1 v3 counts fires over a window
//! of `fairness_window_blocks` and compares with the *median* address;
//! a median needs every address's count. Here each address keeps a
//! sliding-window counter ([`Recent`]: fires in the current window-long
//! epoch and in the one before, the older one weighed by how much of it
//! the window still covers), and the reference is the chain-wide *mean*
//! fires per address that fired in the window — the same counters kept
//! for every address's fires together and for the addresses that fired.
//! Recording a fire or weighing a timer reads and writes a fixed number of
//! leaves. The mean is pulled up by a few very busy addresses, which makes
//! moderately busy ones look quieter than a median would (recorded in
//! docs/ARCHITECTURE.md).
//!
//! **Splitting.** A timer's weight is the smaller of its actor's and its
//! fee payer's, and a fire counts for both: spreading work over many
//! actors that one account pays for does not make it quiet. Spreading it
//! over many funded fee payers still does (the spec's known weakness).
//!
//! Only market ordering records fires or reads weights; a chain that never
//! switches to it writes none of this state.

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::encoding::Canonical;
use timerhost_types::lane::WEIGHT_ONE;
use timerhost_types::{Address, TimerConfig};

use crate::error::Result;
use crate::keys;

/// Fires in a sliding window: those of the current epoch (`epoch ×
/// window` to the next) and of the epoch before.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Recent {
    /// The epoch `this` counts.
    pub epoch: u64,
    /// Fires in that epoch.
    pub this: u64,
    /// Fires in the epoch before it.
    pub prev: u64,
}

impl Canonical for Recent {
    const NAME: &'static str = "recent fires";
}

impl Recent {
    /// The counter as of `epoch` (later epochs shift it; two later, it is
    /// empty).
    fn rolled(self, epoch: u64) -> Recent {
        match epoch.checked_sub(self.epoch) {
            Some(0) => self,
            Some(1) => Recent {
                epoch,
                this: 0,
                prev: self.this,
            },
            _ => Recent {
                epoch,
                this: 0,
                prev: 0,
            },
        }
    }

    /// Fires in the `window` blocks up to `height`: this epoch's, plus the
    /// part of the previous epoch's the window still covers (assumed
    /// spread evenly over it).
    pub fn count(&self, height: u64, window: u64) -> u64 {
        let window = window.max(1);
        let now = self.rolled(height / window);
        let covered = window - height % window;
        let older = u128::from(now.prev) * u128::from(covered) / u128::from(window);
        now.this.saturating_add(older as u64)
    }
}

/// The chain-wide counters: every recorded fire, and every address that
/// fired (once per epoch).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct ChainRecent {
    /// Fires, summed over addresses.
    pub fires: Recent,
    /// Addresses with at least one fire, per epoch.
    pub active: Recent,
}

impl Canonical for ChainRecent {
    const NAME: &'static str = "chain recent fires";
}

fn load_recent(state: &(impl StateRead + ?Sized), address: &Address) -> Result<Recent> {
    Ok(state
        .get_decoded::<Recent>(&keys::recent_fires_key(address))?
        .unwrap_or_default())
}

fn load_chain(state: &(impl StateRead + ?Sized)) -> Result<ChainRecent> {
    Ok(state
        .get_decoded::<ChainRecent>(&keys::chain_recent_fires_key())?
        .unwrap_or_default())
}

/// The weight of one address in thousandths (`WEIGHT_ONE` ..= `2 ×
/// WEIGHT_ONE`), given the chain's fires and active addresses.
fn address_weight(recent: u64, total: u64, active: u64) -> u64 {
    if total == 0 || active == 0 {
        return 2 * WEIGHT_ONE;
    }
    // recent / mean = recent × active / total, in thousandths.
    let ratio =
        u128::from(recent) * u128::from(active) * u128::from(WEIGHT_ONE) / u128::from(total);
    let ratio = ratio.min(u128::from(WEIGHT_ONE)) as u64;
    2 * WEIGHT_ONE - ratio
}

/// The fairness weight, in thousandths, of a timer of `actor` paid by
/// `fee_payer` at `height`: the smaller of the two addresses' weights.
pub fn weight(
    state: &(impl StateRead + ?Sized),
    config: &TimerConfig,
    height: u64,
    actor: &Address,
    fee_payer: &Address,
) -> Result<u64> {
    let window = config.fairness_window_blocks;
    let chain = load_chain(state)?;
    let total = chain.fires.count(height, window);
    let active = chain.active.count(height, window);
    let mut w = address_weight(
        load_recent(state, actor)?.count(height, window),
        total,
        active,
    );
    if fee_payer != actor {
        let payer = load_recent(state, fee_payer)?.count(height, window);
        w = w.min(address_weight(payer, total, active));
    }
    Ok(w)
}

/// Counts a fire of `actor`'s timer paid by `fee_payer` at `height`, for
/// both addresses (once if they are the same).
pub fn record_fire(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    height: u64,
    actor: &Address,
    fee_payer: &Address,
) -> Result<()> {
    let epoch = height / config.fairness_window_blocks.max(1);
    let mut chain = load_chain(state)?;
    chain.fires = chain.fires.rolled(epoch);
    chain.active = chain.active.rolled(epoch);
    let payer = (fee_payer != actor).then_some(fee_payer);
    for address in std::iter::once(actor).chain(payer) {
        let mut recent = load_recent(state, address)?.rolled(epoch);
        if recent.this == 0 {
            chain.active.this += 1;
        }
        recent.this += 1;
        chain.fires.this += 1;
        state.put_encoded(keys::recent_fires_key(address), &recent);
    }
    state.put_encoded(keys::chain_recent_fires_key(), &chain);
    Ok(())
}

/// Counters one block's sweep looks at.
pub const SWEEP_PER_BLOCK: usize = 64;

/// Removes the counters of addresses that fired in neither the current nor
/// the previous epoch (they count nothing any more), looking at
/// [`SWEEP_PER_BLOCK`] of them per block in key order and wrapping around
/// (#50: an address that fired once kept its counter for ever). A sweep
/// over `n` counters takes `n / SWEEP_PER_BLOCK` blocks; a counter is
/// stale at least a window after its last fire, so nothing the weights
/// read is removed.
pub fn sweep(state: &mut Overlay<'_>, config: &TimerConfig, height: u64) -> Result<()> {
    let epoch = height / config.fairness_window_blocks.max(1);
    let prefix = keys::RECENT_FIRES.to_vec();
    let end = timerhost_types::keys::prefix_end(&prefix).expect("a non-0xff prefix");
    let stored = state.get(&keys::recent_fires_sweep_key())?;
    let cursor = stored.clone().unwrap_or_else(|| prefix.clone());
    let found = state.scan(&cursor, Some(&end), SWEEP_PER_BLOCK)?;
    for (key, value) in &found {
        let recent: Recent =
            timerhost_types::decode(value).map_err(|e| timerhost_state::StorageError::Corrupt {
                what: Recent::NAME,
                key: key.iter().map(|b| format!("{b:02x}")).collect(),
                reason: e.to_string(),
            })?;
        let now = recent.rolled(epoch);
        if now.this == 0 && now.prev == 0 {
            state.delete(key.clone());
        }
    }
    let next = match found.last() {
        Some((key, _)) if found.len() == SWEEP_PER_BLOCK => [key.as_slice(), &[0]].concat(),
        // The end of the range: the next sweep starts over.
        _ => prefix.clone(),
    };
    // Written only when it moves: a chain without counters writes nothing.
    if stored.as_ref() != Some(&next) && !(stored.is_none() && next == prefix) {
        state.put(keys::recent_fires_sweep_key(), next);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::EmptyState;

    const BUSY: Address = Address([1; 20]);
    const QUIET: Address = Address([2; 20]);
    const PAYER: Address = Address([3; 20]);

    fn config() -> TimerConfig {
        TimerConfig {
            fairness_window_blocks: 100,
            ..TimerConfig::default()
        }
    }

    #[test]
    fn a_quiet_actor_weighs_twice_a_busy_one() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let c = config();
        assert_eq!(weight(&state, &c, 10, &QUIET, &QUIET).unwrap(), 2_000);
        for _ in 0..9 {
            record_fire(&mut state, &c, 10, &BUSY, &BUSY).unwrap();
        }
        record_fire(&mut state, &c, 10, &PAYER, &PAYER).unwrap();
        // Mean 5 fires per active address: the busy one (9) is clipped to 1,
        // the one with one fire weighs 2 − 1/5 = 1.8, the silent one 2.
        assert_eq!(weight(&state, &c, 11, &BUSY, &BUSY).unwrap(), 1_000);
        assert_eq!(weight(&state, &c, 11, &PAYER, &PAYER).unwrap(), 1_800);
        assert_eq!(weight(&state, &c, 11, &QUIET, &QUIET).unwrap(), 2_000);
    }

    #[test]
    fn the_fee_payer_counts_too_so_splitting_actors_does_not_help() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let c = config();
        // Ten fresh actors, all paid by one account.
        for i in 0..10u8 {
            record_fire(&mut state, &c, 10, &Address([100 + i; 20]), &PAYER).unwrap();
        }
        record_fire(&mut state, &c, 10, &QUIET, &QUIET).unwrap();
        let fresh = Address([200; 20]);
        assert_eq!(weight(&state, &c, 11, &fresh, &fresh).unwrap(), 2_000);
        assert_eq!(
            weight(&state, &c, 11, &fresh, &PAYER).unwrap(),
            1_000,
            "a new actor billing the busy payer weighs as the payer"
        );
    }

    #[test]
    fn fires_leave_the_window() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let c = config();
        for _ in 0..4 {
            record_fire(&mut state, &c, 150, &BUSY, &BUSY).unwrap();
        }
        record_fire(&mut state, &c, 150, &QUIET, &QUIET).unwrap();
        let r = load_recent(&state, &BUSY).unwrap();
        assert_eq!(r.count(150, 100), 4);
        // Next epoch, a quarter in: three quarters of the old epoch count.
        assert_eq!(r.count(225, 100), 3);
        assert_eq!(r.count(299, 100), 0);
        assert_eq!(r.count(300, 100), 0, "two epochs later nothing is left");
        assert_eq!(weight(&state, &c, 400, &BUSY, &BUSY).unwrap(), 2_000);
    }

    /// #50 defect 8: a counter was kept for ever for every address that
    /// ever fired. The sweep removes the ones that count nothing any more,
    /// a bounded number per block, and keeps the live ones.
    #[test]
    fn defect8_stale_fairness_counters_are_swept_a_bounded_number_per_block() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let c = config();
        for i in 0..200u32 {
            let mut a = [0u8; 20];
            a[..4].copy_from_slice(&i.to_be_bytes());
            record_fire(&mut state, &c, 150, &Address(a), &Address(a)).unwrap();
        }
        record_fire(&mut state, &c, 450, &BUSY, &BUSY).unwrap();
        let counters = |state: &Overlay<'_>| {
            let prefix = keys::RECENT_FIRES.to_vec();
            let end = timerhost_types::keys::prefix_end(&prefix).unwrap();
            state.scan(&prefix, Some(&end), 10_000).unwrap().len()
        };
        assert_eq!(counters(&state), 201);
        // At height 450 (epoch 4) the counters of epoch 1 are stale.
        sweep(&mut state, &c, 450).unwrap();
        assert_eq!(counters(&state), 201 - SWEEP_PER_BLOCK);
        for _ in 0..4 {
            sweep(&mut state, &c, 450).unwrap();
        }
        assert_eq!(counters(&state), 1, "only the live counter is left");
        assert_eq!(load_recent(&state, &BUSY).unwrap().count(450, 100), 1);
    }
}
