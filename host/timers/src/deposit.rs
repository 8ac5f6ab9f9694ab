//! Lending and returning the state-memory deposits of what the protocol
//! itself puts into state on a fee payer's behalf (#45): a retry armed after
//! a failed fire, a dead letter. The fee payer consented to both when it
//! accepted the timer's retry policy; the deposit moves from its balance
//! into [`TIMER_DEPOSIT_ESCROW`] — and, for an escrow-funded timer, out of
//! its escrow integer too — exactly as at scheduling ([`crate::host`]).

use timerhost_state::accounts::{self, Debit};
use timerhost_state::Overlay;
use timerhost_types::{Timer, TIMER_DEPOSIT_ESCROW};

use crate::error::Result;
use crate::escrow;

/// Lends `amount` from `timer`'s fee payer (and escrow). `Ok(Err(why))`
/// when it cannot, nothing moved.
pub fn lend(
    state: &mut Overlay<'_>,
    timer: &Timer,
    amount: u128,
    what: &str,
) -> Result<std::result::Result<(), String>> {
    if let Some(key) = &timer.escrow_key {
        let available = escrow::available(state, &timer.actor_address, key)?;
        if available < amount {
            return Ok(Err(format!(
                "its escrow holds {available}, less than the {what}'s deposit {amount}"
            )));
        }
    }
    if let Debit::Insufficient { available } =
        accounts::transfer(state, &timer.fee_payer, &TIMER_DEPOSIT_ESCROW, amount)?
    {
        return Ok(Err(format!(
            "its fee payer holds {available}, less than the {what}'s deposit {amount}"
        )));
    }
    if let Some(key) = &timer.escrow_key {
        escrow::debit(state, &timer.actor_address, key, amount)?;
    }
    Ok(Ok(()))
}

/// Returns `amount` lent for `timer` to its fee payer (and escrow).
pub fn give_back(state: &mut Overlay<'_>, timer: &Timer, amount: u128) -> Result<()> {
    if let Debit::Insufficient { available } =
        accounts::transfer(state, &TIMER_DEPOSIT_ESCROW, &timer.fee_payer, amount)?
    {
        return Err(crate::keys::corrupt(
            "timer deposit escrow",
            timer.timer_id.as_bytes(),
            &format!("holds {available}, less than the {amount} it lent"),
        ));
    }
    if let Some(key) = &timer.escrow_key {
        escrow::credit(state, &timer.actor_address, key, amount)?;
    }
    Ok(())
}
