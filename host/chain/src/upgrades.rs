//! Upgrades this binary knows, and the plans a chain scheduled (#44).
//!
//! A plan (`ScheduleUpgrade {name, height, info}`, voted by the validators)
//! names an upgrade and the first height executed under it. Before any block
//! is executed, [`check_known`] refuses a height at or past a plan whose
//! name this binary does not know: every such node stops there, before the
//! block, with [`ChainError::UnknownUpgrade`] naming the upgrade. A binary
//! that knows it applies its rules from exactly that height ([`active`]),
//! so a node replaying from genesis crosses the upgrade as the network did.
//!
//! | upgrade | rule change from its height |
//! |---------|-----------------------------|
//! | `zero-value-transfer-guard` | a transfer of 0 fails ("refused by upgrade zero-value-transfer-guard"): it moved nothing and only spent block space |
//! | `located-fire-hashes` | a deferred transaction's hash (a fire, a hook's call) names its block and receipt index in its first 12 bytes ([`timerhost_types::located`]), so its receipt is found without a transaction-index entry (#46) |
//!
//! A new chain can start under upgrades: the genesis file's `upgrades`
//! lists names this binary knows, each planned at height 0
//! ([`genesis_plans`]).

use std::sync::Mutex;

use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::keys;
use timerhost_types::upgrade::{MAX_UPGRADE_PLANS, MIN_UPGRADE_DELAY_BLOCKS};
use timerhost_types::{UpgradePlan, UpgradePlans};

use crate::error::{ChainError, Result};

/// An upgrade this binary can apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnownUpgrade {
    /// Its name, as plans spell it.
    pub name: &'static str,
    /// What it changes, for people.
    pub changes: &'static str,
}

/// Transfers of 0 fail from this upgrade's height.
pub const ZERO_VALUE_TRANSFER_GUARD: &str = "zero-value-transfer-guard";

/// Deferred transactions' hashes name their receipt's place from this
/// upgrade's height (#46).
pub const LOCATED_FIRE_HASHES: &str = timerhost_types::genesis::LOCATED_FIRE_HASHES;

/// Every upgrade this binary knows.
pub const KNOWN_UPGRADES: &[KnownUpgrade] = &[
    KnownUpgrade {
        name: ZERO_VALUE_TRANSFER_GUARD,
        changes: "a transfer of 0 fails: it moves nothing and only spends block space",
    },
    KnownUpgrade {
        name: LOCATED_FIRE_HASHES,
        changes: "a fire's or hook call's transaction hash names its block and receipt index, \
                  so no transaction-index entry is written per fire",
    },
];

/// The plans of a chain that starts under `names` (the genesis file's
/// `upgrades`): each at height 0. Refuses a name this binary does not know,
/// one named twice, or more than [`MAX_UPGRADE_PLANS`].
pub fn genesis_plans(names: &[String]) -> std::result::Result<UpgradePlans, String> {
    if names.len() > MAX_UPGRADE_PLANS {
        return Err(format!(
            "genesis names {} upgrades; a chain holds at most {MAX_UPGRADE_PLANS}",
            names.len()
        ));
    }
    let mut plans = UpgradePlans::default();
    for name in names {
        if !knows(name) {
            let known: Vec<&str> = KNOWN_UPGRADES.iter().map(|u| u.name).collect();
            return Err(format!(
                "genesis names upgrade {name:?}, which this binary does not know (it knows: {})",
                known.join(", ")
            ));
        }
        if plans.0.iter().any(|p| &p.name == name) {
            return Err(format!("genesis names upgrade {name:?} twice"));
        }
        plans.0.push(UpgradePlan {
            name: name.clone(),
            height: 0,
            info: "active from genesis".into(),
            proposal_id: 0,
        });
    }
    Ok(plans)
}

/// Names this process pretends not to know (`timerhost node
/// --forget-upgrade NAME`): how the end-to-end test runs "the previous
/// release" of a validator without building one.
static FORGOTTEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Makes this process behave as a binary that does not know `name`.
pub fn forget(name: &str) {
    FORGOTTEN
        .lock()
        .expect("the forgotten list is never poisoned")
        .push(name.to_string());
}

/// Does this binary know upgrade `name`?
pub fn knows(name: &str) -> bool {
    KNOWN_UPGRADES.iter().any(|u| u.name == name)
        && !FORGOTTEN
            .lock()
            .expect("the forgotten list is never poisoned")
            .iter()
            .any(|f| f == name)
}

/// Every plan the chain scheduled, oldest first.
pub fn plans(state: &(impl StateRead + ?Sized)) -> Result<UpgradePlans> {
    Ok(state
        .get_decoded::<UpgradePlans>(&keys::upgrade_plans())?
        .unwrap_or_default())
}

/// Does upgrade `name` apply to block `height`?
pub fn active(state: &(impl StateRead + ?Sized), name: &str, height: u64) -> Result<bool> {
    Ok(is_active(&plans(state)?, name, height))
}

/// [`active`] over plans already read (a block reads them once).
pub fn is_active(plans: &UpgradePlans, name: &str, height: u64) -> bool {
    plans.0.iter().any(|p| p.name == name && p.height <= height)
}

/// Refuses to execute block `height` when a plan at or before it names an
/// upgrade this binary does not know.
pub fn check_known(state: &(impl StateRead + ?Sized), height: u64) -> Result<()> {
    check_plans_known(&plans(state)?, height)
}

/// [`check_known`] over plans already read.
pub fn check_plans_known(plans: &UpgradePlans, height: u64) -> Result<()> {
    match plans
        .0
        .iter()
        .find(|plan| plan.height <= height && !knows(&plan.name))
    {
        Some(plan) => Err(ChainError::UnknownUpgrade {
            name: plan.name.clone(),
            height: plan.height,
            info: plan.info.clone(),
        }),
        None => Ok(()),
    }
}

/// Schedules `plan` (the execution of its proposal in block `now`): its
/// height must leave [`MIN_UPGRADE_DELAY_BLOCKS`], its name must be new and
/// the chain must hold fewer than [`MAX_UPGRADE_PLANS`]. The reason it is
/// refused otherwise. (A name this binary does not know is accepted: the
/// network may run ahead of this node, which then stops at the height.)
pub fn schedule(
    state: &mut Overlay<'_>,
    plan: UpgradePlan,
    now: u64,
) -> Result<std::result::Result<(), String>> {
    let earliest = now.saturating_add(MIN_UPGRADE_DELAY_BLOCKS);
    if plan.height < earliest {
        return Ok(Err(format!(
            "upgrade {} at height {} is too soon: executed at {now}, it can apply from {earliest} on",
            plan.name, plan.height
        )));
    }
    let mut all = plans(state)?;
    if all.0.iter().any(|p| p.name == plan.name) {
        return Ok(Err(format!("upgrade {} is already scheduled", plan.name)));
    }
    if all.0.len() >= MAX_UPGRADE_PLANS {
        return Ok(Err(format!(
            "this chain holds {MAX_UPGRADE_PLANS} upgrade plans, the most it may"
        )));
    }
    all.0.push(plan);
    state.put_encoded(keys::upgrade_plans(), &all);
    Ok(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::EmptyState;

    fn plan(name: &str, height: u64) -> UpgradePlan {
        UpgradePlan {
            name: name.into(),
            height,
            info: "install it".into(),
            proposal_id: 1,
        }
    }

    #[test]
    fn a_genesis_can_start_under_known_upgrades_only() {
        let plans = genesis_plans(&[LOCATED_FIRE_HASHES.to_string()]).unwrap();
        assert!(is_active(&plans, LOCATED_FIRE_HASHES, 0));
        assert!(is_active(&plans, LOCATED_FIRE_HASHES, 1));
        assert!(!is_active(&plans, ZERO_VALUE_TRANSFER_GUARD, 1));
        let unknown = genesis_plans(&["teleport".to_string()]).unwrap_err();
        assert!(
            unknown.contains("\"teleport\"") && unknown.contains(LOCATED_FIRE_HASHES),
            "{unknown}"
        );
        let twice = genesis_plans(&[LOCATED_FIRE_HASHES.into(), LOCATED_FIRE_HASHES.into()]);
        assert!(twice.unwrap_err().contains("twice"));
        let many: Vec<String> = (0..=MAX_UPGRADE_PLANS).map(|i| format!("u{i}")).collect();
        assert!(genesis_plans(&many).unwrap_err().contains("at most"));
    }

    #[test]
    fn plans_are_checked_scheduled_and_applied_from_their_height() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        // Too soon, then scheduled, then not twice.
        let soon = schedule(&mut state, plan(ZERO_VALUE_TRANSFER_GUARD, 11), 10).unwrap();
        assert!(soon.unwrap_err().contains("too soon"));
        schedule(&mut state, plan(ZERO_VALUE_TRANSFER_GUARD, 12), 10)
            .unwrap()
            .unwrap();
        let twice = schedule(&mut state, plan(ZERO_VALUE_TRANSFER_GUARD, 20), 10).unwrap();
        assert!(twice.unwrap_err().contains("already scheduled"));
        // Its rule applies from exactly its height.
        assert!(!active(&state, ZERO_VALUE_TRANSFER_GUARD, 11).unwrap());
        assert!(active(&state, ZERO_VALUE_TRANSFER_GUARD, 12).unwrap());
        check_known(&state, 12).unwrap();
        // An upgrade this binary does not know stops it at its height, and
        // not before.
        schedule(&mut state, plan("from-the-future", 15), 10)
            .unwrap()
            .unwrap();
        check_known(&state, 14).unwrap();
        let stop = check_known(&state, 15).unwrap_err().to_string();
        assert!(
            stop.starts_with("upgrade from-the-future applies from height 15")
                && stop.contains("install it"),
            "{stop}"
        );
        assert!(check_known(&state, 99).is_err());
    }

    #[test]
    fn a_chain_holds_at_most_its_cap_of_plans_whatever_governance_votes() {
        // Every block reads the plans: a governance that votes plan after
        // plan cannot make that read grow past the cap.
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        for i in 0..MAX_UPGRADE_PLANS {
            schedule(&mut state, plan(&format!("u{i}"), 1_000 + i as u64), 10)
                .unwrap()
                .unwrap();
        }
        let refused = schedule(&mut state, plan("one-more", 5_000), 10).unwrap();
        assert!(refused.unwrap_err().contains("the most it may"));
        assert_eq!(plans(&state).unwrap().0.len(), MAX_UPGRADE_PLANS);
    }
}
