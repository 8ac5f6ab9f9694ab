//! Typed access to accounts and chain metadata in the block overlay.

use timerhost_state::{Overlay, Result as StorageResult, StateRead, StateReadExt};
use timerhost_types::keys::{self, Account, SupplyMeta};
use timerhost_types::{Address, BasefeeConfig, ChainParams};

use crate::error::{ChainError, Result};

/// Reads one account (absent accounts read as empty).
pub fn load(state: &(impl StateRead + ?Sized), address: &Address) -> StorageResult<Account> {
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
    acct.balance = acct
        .balance
        .checked_add(amount)
        .ok_or_else(|| ChainError::Internal(format!("balance of {address} would exceed 2^128")))?;
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

/// Reads the chain params (must exist after genesis).
pub fn chain_params(state: &(impl StateRead + ?Sized)) -> Result<ChainParams> {
    state
        .get_decoded::<ChainParams>(&keys::chain_params())?
        .ok_or_else(|| ChainError::Internal("chain params missing from state (no genesis?)".into()))
}

/// Reads the basefee config (must exist after genesis).
pub fn basefee_config(state: &(impl StateRead + ?Sized)) -> Result<BasefeeConfig> {
    state
        .get_decoded::<BasefeeConfig>(&keys::basefee_config())?
        .ok_or_else(|| {
            ChainError::Internal("basefee config missing from state (no genesis?)".into())
        })
}

/// Reads the supply metadata.
pub fn supply(state: &(impl StateRead + ?Sized)) -> Result<SupplyMeta> {
    Ok(state
        .get_decoded::<SupplyMeta>(&keys::supply())?
        .unwrap_or_default())
}
