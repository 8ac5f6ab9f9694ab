//! Genesis: the initial state (funded accounts, the system actors, chain
//! params, basefee config, supply) and block 0.

use timerhost_state::{ChangeSet, EmptyState, Overlay};
use timerhost_types::keys::{self, Account, HeadMeta, SupplyMeta};
use timerhost_types::{BlockHeader, ChainParams, Genesis, Hash};

use crate::error::{ChainError, Result};

/// The state writes of genesis.
pub fn genesis_changes(genesis: &Genesis) -> Result<ChangeSet> {
    genesis
        .validate()
        .map_err(|e| ChainError::Genesis(e.to_string()))?;
    let empty = EmptyState;
    let mut overlay = Overlay::new(&empty);
    for account in &genesis.accounts {
        overlay.put_encoded(
            keys::account(&account.address),
            &Account {
                balance: account.balance,
                ..Default::default()
            },
        );
    }
    crate::system_actors::install(&mut overlay);
    overlay.put_encoded(
        keys::chain_params(),
        &ChainParams {
            chain_id: genesis.chain_id,
            system_deployers: genesis.system_deployers.clone(),
        },
    );
    overlay.put_encoded(keys::basefee_config(), &genesis.basefee);
    overlay.put_encoded(keys::timer_config(), &genesis.timers);
    overlay.put_encoded(keys::governance_config(), &genesis.governance);
    // A chain may start under upgrades this binary knows (#46); none: no key,
    // so a genesis without `upgrades` has the root it always had.
    if !genesis.upgrades.is_empty() {
        let plans =
            crate::upgrades::genesis_plans(&genesis.upgrades).map_err(ChainError::Genesis)?;
        overlay.put_encoded(keys::upgrade_plans(), &plans);
    }
    // #32: the validator set is state, consensus's from block 0 on.
    if let Some(set) = genesis
        .validator_set()
        .map_err(|e| ChainError::Genesis(e.to_string()))?
    {
        overlay.put_encoded(keys::validator_set_at(0), &set);
    }
    overlay.put_encoded(
        keys::supply(),
        &SupplyMeta {
            genesis_supply: genesis
                .total_supply()
                .map_err(|e| ChainError::Genesis(e.to_string()))?,
            burned: 0,
        },
    );
    overlay.put_encoded(
        keys::head(),
        &HeadMeta {
            height: 0,
            timestamp_ms: genesis.genesis_timestamp_ms(),
        },
    );
    Ok(overlay.into_changes())
}

/// The genesis header for a given state root.
pub fn genesis_header(genesis: &Genesis, state_root: Hash) -> BlockHeader {
    BlockHeader {
        chain_id: genesis.chain_id,
        height: 0,
        timestamp_ms: genesis.genesis_timestamp_ms(),
        proposer: timerhost_types::Address::ZERO,
        parent_hash: Hash::ZERO,
        tx_root: Hash::ZERO,
        state_root,
        receipts_root: Hash::ZERO,
        cycles_used: 0,
        cells_used: 0,
        lane_basefee: genesis.timers.min_lane_basefee,
    }
}
