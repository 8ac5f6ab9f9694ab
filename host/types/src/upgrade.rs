//! Governed upgrades (#44): a plan the validators vote on — a name, the
//! height from which it applies, and free text for operators — and the
//! rules a plan must follow. What an upgrade changes lives in the binaries
//! that know its name (`timerhost_chain::upgrades`); a binary that does not
//! know a plan's name stops before executing the plan's height.

use borsh::{BorshDeserialize, BorshSerialize};

use crate::encoding::Canonical;

/// Longest upgrade name.
pub const MAX_UPGRADE_NAME_BYTES: usize = 64;

/// Longest operator text of a plan (what to install, where).
pub const MAX_UPGRADE_INFO_BYTES: usize = 1_024;

/// Fewest blocks between a plan's execution and its height: operators need
/// time to install the release that knows it.
pub const MIN_UPGRADE_DELAY_BLOCKS: u64 = 2;

/// Most plans a chain keeps (every plan ever executed: the rules of each
/// stay in force from its height, and replay needs them).
pub const MAX_UPGRADE_PLANS: usize = 256;

/// A scheduled (or applied) upgrade.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct UpgradePlan {
    /// Its name, as binaries know it.
    pub name: String,
    /// The first height executed under it.
    pub height: u64,
    /// Free text for operators.
    pub info: String,
    /// The proposal that scheduled it.
    pub proposal_id: u64,
}

impl Canonical for UpgradePlan {
    const NAME: &'static str = "upgrade plan";
}

/// Every plan of a chain, in the order they were scheduled.
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct UpgradePlans(pub Vec<UpgradePlan>);

impl Canonical for UpgradePlans {
    const NAME: &'static str = "upgrade plans";
}

/// Why an upgrade's name, height or text is malformed, if it is.
pub fn check_upgrade(name: &str, height: u64, info: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_UPGRADE_NAME_BYTES {
        return Err(format!(
            "an upgrade's name has 1 to {MAX_UPGRADE_NAME_BYTES} bytes, got {}",
            name.len()
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
    {
        return Err(format!(
            "an upgrade's name is lowercase letters, digits, '-', '_' and '.', got {name:?}"
        ));
    }
    if height == 0 {
        return Err("an upgrade's height is at least 1".into());
    }
    if info.len() > MAX_UPGRADE_INFO_BYTES {
        return Err(format!(
            "an upgrade's info has at most {MAX_UPGRADE_INFO_BYTES} bytes, got {}",
            info.len()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_heights_and_text_are_checked() {
        assert!(check_upgrade("zero-value-transfer-guard", 10, "").is_ok());
        assert!(check_upgrade("", 10, "").unwrap_err().contains("1 to 64"));
        assert!(check_upgrade("Big Name", 10, "")
            .unwrap_err()
            .contains("lowercase"));
        assert!(check_upgrade("a", 0, "")
            .unwrap_err()
            .contains("at least 1"));
        assert!(check_upgrade("a", 1, &"x".repeat(1_025))
            .unwrap_err()
            .contains("1024"));
    }
}
