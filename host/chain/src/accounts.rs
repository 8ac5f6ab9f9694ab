//! Typed access to accounts (re-exported from `timerhost_state::accounts`),
//! configs and chain metadata.

pub use timerhost_state::accounts::{credit, debit, load, store, transfer, Debit};
use timerhost_state::{StateRead, StateReadExt};
use timerhost_types::keys::{self, SupplyMeta};
use timerhost_types::{BasefeeConfig, ChainParams, TimerConfig};

use crate::error::{ChainError, Result};

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

/// Reads the timer config (the CIP-5 defaults apply when absent, §6.4).
pub fn timer_config(state: &(impl StateRead + ?Sized)) -> Result<TimerConfig> {
    Ok(state
        .get_decoded::<TimerConfig>(&keys::timer_config())?
        .unwrap_or_default())
}

/// Sum of every account's balance: with [`supply`], what conservation
/// checks compare (`balances = genesis supply − burned`). Reads every
/// account: for checks and `timerhost replay`, never a block's path.
pub fn total_balances(state: &(impl StateRead + ?Sized)) -> Result<u128> {
    let mut total = 0u128;
    let mut cursor = vec![keys::ACCOUNT];
    let end = vec![keys::ACCOUNT + 1];
    loop {
        let chunk = state.scan(&cursor, Some(&end), 512)?;
        for (_, bytes) in &chunk {
            let acct: keys::Account = timerhost_types::decode(bytes).map_err(|e| {
                crate::error::ChainError::Internal(format!("bad account record: {e}"))
            })?;
            total += acct.balance;
        }
        if chunk.len() < 512 {
            return Ok(total);
        }
        cursor = chunk.last().expect("non-empty").0.clone();
        cursor.push(0);
    }
}
