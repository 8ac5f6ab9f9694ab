//! Lending and returning a timer's state-memory deposits: at scheduling
//! ([`crate::host`]), when the protocol itself puts something into state
//! on a fee payer's behalf (#45: a retry armed after a failed fire, a dead
//! letter — the fee payer consented to both when it accepted the timer's
//! retry policy), and whenever either leaves ([`crate::store`],
//! [`crate::dead_letters`]). The deposit moves from the fee payer's balance
//! into [`TIMER_DEPOSIT_ESCROW`] and, for an escrow-funded timer, out of its
//! escrow integer too; it comes back the same way.

use timerhost_state::accounts::{self, Debit};
use timerhost_state::Overlay;
use timerhost_types::{Timer, TIMER_DEPOSIT_ESCROW};

use crate::error::Result;
use crate::escrow;

/// Why a deposit could not be lent (nothing moved).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// The timer's escrow integer holds less.
    Escrow {
        /// What it holds.
        available: u128,
    },
    /// The fee payer's balance holds less.
    FeePayer {
        /// What it holds.
        available: u128,
    },
}

impl Shortfall {
    /// `"its escrow holds 5, less than the retry's deposit 9"`.
    pub fn describe(&self, what: &str, amount: u128) -> String {
        match self {
            Shortfall::Escrow { available } => {
                format!("its escrow holds {available}, less than the {what}'s deposit {amount}")
            }
            Shortfall::FeePayer { available } => {
                format!("its fee payer holds {available}, less than the {what}'s deposit {amount}")
            }
        }
    }
}

/// Lends `amount` from `timer`'s fee payer (and escrow). `Ok(Err(_))` when
/// it cannot, nothing moved.
pub fn lend(
    state: &mut Overlay<'_>,
    timer: &Timer,
    amount: u128,
) -> Result<std::result::Result<(), Shortfall>> {
    if let Some(key) = &timer.escrow_key {
        let available = escrow::available(state, &timer.actor_address, key)?;
        if available < amount {
            return Ok(Err(Shortfall::Escrow { available }));
        }
    }
    if let Debit::Insufficient { available } =
        accounts::transfer(state, &timer.fee_payer, &TIMER_DEPOSIT_ESCROW, amount)?
    {
        return Ok(Err(Shortfall::FeePayer { available }));
    }
    if let Some(key) = &timer.escrow_key {
        escrow::debit(state, &timer.actor_address, key, amount)?;
    }
    Ok(Ok(()))
}

/// Returns `amount` lent for `timer` to its fee payer (and escrow). The
/// deposit escrow holding less is broken bookkeeping, never an actor's
/// doing.
pub fn give_back(state: &mut Overlay<'_>, timer: &Timer, amount: u128) -> Result<()> {
    if let Debit::Insufficient { available } =
        accounts::transfer(state, &TIMER_DEPOSIT_ESCROW, &timer.fee_payer, amount)?
    {
        return Err(crate::keys::corrupt(
            "timer deposit escrow",
            timer.timer_id.as_bytes(),
            &format!("holds {available}, less than the deposit {amount} it lent"),
        ));
    }
    if let Some(key) = &timer.escrow_key {
        escrow::credit(state, &timer.actor_address, key, amount)?;
    }
    Ok(())
}
