//! Typed access to account records in any state view or overlay. Shared by
//! the chain (fees, transfers) and the timers (pre-charge, refunds).

use timerhost_types::keys::{self, Account};
use timerhost_types::Address;

use crate::error::{Result, StorageError};
use crate::overlay::{Overlay, StateRead, StateReadExt};

/// Reads one account (absent accounts read as empty).
pub fn load(state: &(impl StateRead + ?Sized), address: &Address) -> Result<Account> {
    Ok(state
        .get_decoded::<Account>(&keys::account(address))?
        .unwrap_or_default())
}

/// Writes one account.
pub fn store(overlay: &mut Overlay<'_>, address: &Address, account: &Account) {
    overlay.put_encoded(keys::account(address), account);
}

/// Adds `amount` to a balance.
pub fn credit(overlay: &mut Overlay<'_>, address: &Address, amount: u128) -> Result<()> {
    if amount == 0 {
        return Ok(());
    }
    let mut acct = load(overlay, address)?;
    // Balances never exceed the total supply, itself a u128; an overflow here
    // means the state is inconsistent.
    acct.balance = acct
        .balance
        .checked_add(amount)
        .ok_or_else(|| StorageError::Corrupt {
            what: "account",
            key: address.to_hex(),
            reason: "balance would exceed 2^128: the supply invariant is broken".into(),
        })?;
    store(overlay, address, &acct);
    Ok(())
}

/// Outcome of a debit attempt.
#[derive(Debug, PartialEq, Eq)]
pub enum Debit {
    /// Debited.
    Done,
    /// The balance was too small; nothing changed.
    Insufficient {
        /// Balance at the time.
        available: u128,
    },
}

/// Subtracts `amount` from a balance if it suffices.
pub fn debit(overlay: &mut Overlay<'_>, address: &Address, amount: u128) -> Result<Debit> {
    if amount == 0 {
        return Ok(Debit::Done);
    }
    let mut acct = load(overlay, address)?;
    if acct.balance < amount {
        return Ok(Debit::Insufficient {
            available: acct.balance,
        });
    }
    acct.balance -= amount;
    store(overlay, address, &acct);
    Ok(Debit::Done)
}

/// Moves `amount` between accounts if the sender's balance suffices.
pub fn transfer(
    overlay: &mut Overlay<'_>,
    from: &Address,
    to: &Address,
    amount: u128,
) -> Result<Debit> {
    match debit(overlay, from, amount)? {
        Debit::Done => {
            credit(overlay, to, amount)?;
            Ok(Debit::Done)
        }
        insufficient => Ok(insufficient),
    }
}
