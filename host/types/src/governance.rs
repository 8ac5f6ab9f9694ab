//! Governance by the validators (#32): the validator set as consensus state
//! ([`ValidatorInfo`], [`ValidatorSetRecord`]), which path config updates
//! take ([`GovernanceConfig`]), and proposals ([`ProposalAction`],
//! [`Proposal`]) voted by the validators' operators, weighted by power.
//! Pure data and rules; the chain crate executes them.

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::config::BasefeeConfig;
use crate::encoding::Canonical;
use crate::error::{Error, Result};
use crate::primitives::{keccak256, u128_string, Address, Hash};
use crate::timer_config::TimerConfig;

/// A validator-set change executed in block `h` is the set of consensus
/// from block `h + VALIDATOR_SET_DELAY` on: every node switches at the same
/// height, and the set of the next height is known before it starts.
pub const VALIDATOR_SET_DELAY: u64 = 2;

/// Most validators a set may hold: every vote and certificate is checked
/// against the whole set, and a proposal's votes are kept per operator.
pub const MAX_VALIDATORS: usize = 256;

/// Holds the deposits of open proposals (a system address of CIP-5's
/// reserved band: it can never sign or be paid by a transaction). Its
/// balance is the sum of the deposits of proposals still voting or passed.
pub const PROPOSAL_DEPOSIT_ESCROW: Address = Address::system(0x0c);

/// How config updates reach the chain.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    BorshSerialize,
    BorshDeserialize,
    Serialize,
    Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum GovernanceMode {
    /// `system_deployers` send `UpdateTimerConfig` / `UpdateBasefeeConfig`
    /// themselves (the dev chain's way).
    #[default]
    Direct,
    /// Config updates go through proposals voted by the validators; the
    /// emergency instructions (cancel, extend, pause, resume, shutdown) stay
    /// with `system_deployers` (CIP-5 §5.4).
    Proposals,
}

impl GovernanceMode {
    /// `"direct"` or `"proposals"`.
    pub fn as_str(self) -> &'static str {
        match self {
            GovernanceMode::Direct => "direct",
            GovernanceMode::Proposals => "proposals",
        }
    }
}

/// Governance parameters, in genesis (`[governance]`) and in state.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GovernanceConfig {
    /// Which path config updates take.
    #[serde(default)]
    pub mode: GovernanceMode,
    /// Blocks a proposal may collect votes and be executed in, from the
    /// block that submits it.
    #[serde(default = "defaults::voting_period_blocks")]
    pub voting_period_blocks: u64,
    /// Taken from the proposer at submission; returned when the proposal is
    /// executed or expires, burned when the validators reject it.
    #[serde(default = "defaults::proposal_deposit", with = "u128_string")]
    pub proposal_deposit: u128,
}

mod defaults {
    pub fn voting_period_blocks() -> u64 {
        100
    }
    pub fn proposal_deposit() -> u128 {
        10u128.pow(18)
    }
}

impl Default for GovernanceConfig {
    fn default() -> Self {
        GovernanceConfig {
            mode: GovernanceMode::Direct,
            voting_period_blocks: defaults::voting_period_blocks(),
            proposal_deposit: defaults::proposal_deposit(),
        }
    }
}

impl Canonical for GovernanceConfig {
    const NAME: &'static str = "governance config";
}

impl GovernanceConfig {
    /// Rejects a voting period of 0 or above ~a year of blocks.
    pub fn validate(&self) -> Result<()> {
        if !(1..=31_536_000).contains(&self.voting_period_blocks) {
            return Err(Error::Config {
                field: "voting_period_blocks",
                reason: format!("{} is not in 1..=31,536,000", self.voting_period_blocks),
            });
        }
        if self.proposal_deposit > 1 << 120 {
            return Err(Error::Config {
                field: "proposal_deposit",
                reason: "must be at most 2^120".into(),
            });
        }
        Ok(())
    }
}

/// One validator as state keeps it.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct ValidatorInfo {
    /// Its ed25519 consensus public key.
    pub public_key: [u8; 32],
    /// Its voting power, at least 1.
    pub power: u64,
    /// The secp256k1 account that signs its governance transactions.
    pub operator: Address,
}

impl ValidatorInfo {
    /// The validator's address: the last 20 bytes of keccak256 of its
    /// public key (the consensus engine's address of it).
    pub fn address(&self) -> Address {
        validator_address(&self.public_key)
    }

    /// `0x` + 64 hex digits.
    pub fn public_key_hex(&self) -> String {
        Hash(self.public_key).to_hex()
    }
}

/// The address of a validator with `public_key`.
pub fn validator_address(public_key: &[u8; 32]) -> Address {
    let digest = keccak256(public_key);
    Address::from_slice(&digest.as_bytes()[12..]).expect("20 of 32 digest bytes")
}

/// Parses `0x` + 64 hex digits as an ed25519 public key, refusing bytes
/// that are not a point of the curve (a set holding one could not verify
/// any of its votes).
pub fn parse_validator_key(text: &str) -> std::result::Result<[u8; 32], String> {
    let text = text.trim();
    let digits = text.strip_prefix("0x").unwrap_or(text);
    let hash: Hash = format!("0x{digits}")
        .parse()
        .map_err(|e| format!("public key {text}: {e}"))?;
    check_validator_key(&hash.0)?;
    Ok(hash.0)
}

/// Is `key` a validator key: the canonical encoding of an ed25519 point of
/// prime order (ZIP-215 verification, the engine's, accepts more)?
pub fn check_validator_key(key: &[u8; 32]) -> std::result::Result<(), String> {
    let hex = Hash(*key).to_hex();
    ed25519_consensus::VerificationKey::try_from(*key)
        .map_err(|_| format!("public key {hex} is not an ed25519 point"))?;
    let point = curve25519_dalek::edwards::CompressedEdwardsY(*key)
        .decompress()
        .ok_or_else(|| format!("public key {hex} is not an ed25519 point"))?;
    // #50: ZIP-215 verification accepts non-canonical encodings and
    // small-order points. Under a small-order key (the identity, an order-8
    // point) it accepts signatures nobody made; a second encoding of a
    // member's point would enter the set as another validator. Keys made
    // by `timerhost keys new --consensus` are canonical and of prime order.
    if point.compress().0 != *key {
        return Err(format!(
            "public key {hex} is not the canonical encoding of its point (it is {})",
            Hash(point.compress().0).to_hex()
        ));
    }
    if point.is_small_order() {
        return Err(format!(
            "public key {hex} is a point of small order, under which anyone can sign"
        ));
    }
    if !point.is_torsion_free() {
        return Err(format!(
            "public key {hex} has a small-order component; a validator key is a point of prime order"
        ));
    }
    Ok(())
}

/// A validator set: sorted by address, at least one member, no key twice.
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct ValidatorSetRecord {
    /// The members, by address.
    pub validators: Vec<ValidatorInfo>,
}

impl Canonical for ValidatorSetRecord {
    const NAME: &'static str = "validator set";
}

impl ValidatorSetRecord {
    /// A set of `validators`, sorted and checked ([`Self::check`]).
    pub fn new(mut validators: Vec<ValidatorInfo>) -> std::result::Result<Self, String> {
        validators.sort_by_key(ValidatorInfo::address);
        let set = ValidatorSetRecord { validators };
        set.check()?;
        Ok(set)
    }

    /// Why the set could not run consensus, if it could not: empty, too
    /// large, a power of 0, a key twice or not a point, or a total power
    /// above 2^62 (vote arithmetic stays far inside u64).
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.validators.is_empty() {
            return Err("the validator set would be empty".into());
        }
        if self.validators.len() > MAX_VALIDATORS {
            return Err(format!("a set holds at most {MAX_VALIDATORS} validators"));
        }
        let mut total = 0u64;
        for (i, v) in self.validators.iter().enumerate() {
            if v.power == 0 {
                return Err(format!("validator {} has power 0", v.public_key_hex()));
            }
            if i > 0 && self.validators[i - 1].address() == v.address() {
                return Err(format!("validator {} is listed twice", v.public_key_hex()));
            }
            check_validator_key(&v.public_key)?;
            total = total
                .checked_add(v.power)
                .filter(|t| *t <= 1 << 62)
                .ok_or_else(|| "the total power would pass 2^62".to_string())?;
        }
        Ok(())
    }

    /// The sum of the members' powers.
    pub fn total_power(&self) -> u64 {
        self.validators.iter().map(|v| v.power).sum()
    }

    /// The power `operator` votes with: the sum over the validators it
    /// operates (0 if none).
    pub fn operator_power(&self, operator: &Address) -> u64 {
        self.validators
            .iter()
            .filter(|v| &v.operator == operator)
            .map(|v| v.power)
            .sum()
    }

    /// The member with `public_key`.
    pub fn find(&self, public_key: &[u8; 32]) -> Option<&ValidatorInfo> {
        self.validators.iter().find(|v| &v.public_key == public_key)
    }

    /// This set with `action` applied, or why it cannot be; `None` for an
    /// action that does not touch the set.
    pub fn apply(&self, action: &ProposalAction) -> Option<std::result::Result<Self, String>> {
        let mut members = self.validators.clone();
        let missing =
            |key: &[u8; 32]| format!("no validator has public key {}", Hash(*key).to_hex());
        let result = match action {
            ProposalAction::AddValidator {
                public_key,
                power,
                operator,
            } => {
                if self.find(public_key).is_some() {
                    Err(format!(
                        "validator {} is already in the set",
                        Hash(*public_key).to_hex()
                    ))
                } else {
                    members.push(ValidatorInfo {
                        public_key: *public_key,
                        power: *power,
                        operator: *operator,
                    });
                    ValidatorSetRecord::new(members)
                }
            }
            ProposalAction::RemoveValidator { public_key } => {
                match members.iter().position(|v| &v.public_key == public_key) {
                    None => Err(missing(public_key)),
                    Some(i) => {
                        members.remove(i);
                        ValidatorSetRecord::new(members)
                    }
                }
            }
            ProposalAction::SetValidatorPower { public_key, power } => {
                match members.iter_mut().find(|v| &v.public_key == public_key) {
                    None => Err(missing(public_key)),
                    Some(v) => {
                        v.power = *power;
                        ValidatorSetRecord::new(members)
                    }
                }
            }
            _ => return None,
        };
        Some(result)
    }
}

/// Blocks a closed proposal's record stays in state (for `th_getProposals`
/// and the dashboard) before it is removed; its events stay in history
/// (#50: records were never removed, and expiry refunds the deposit, so
/// submissions grew state for free).
pub const PROPOSAL_RETENTION_BLOCKS: u64 = 100_000;

/// What a proposal does once executed.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum ProposalAction {
    /// Replace the timer config (from the next block).
    UpdateTimerConfig(TimerConfig),
    /// Replace the basefee config (from the next block).
    UpdateBasefeeConfig(BasefeeConfig),
    /// Add a validator (from [`VALIDATOR_SET_DELAY`] blocks on).
    AddValidator {
        /// Its ed25519 key.
        public_key: [u8; 32],
        /// Its power, at least 1.
        power: u64,
        /// The account that signs its governance transactions.
        operator: Address,
    },
    /// Remove a validator (from [`VALIDATOR_SET_DELAY`] blocks on).
    RemoveValidator {
        /// Its ed25519 key.
        public_key: [u8; 32],
    },
    /// Change a validator's power (from [`VALIDATOR_SET_DELAY`] blocks on).
    SetValidatorPower {
        /// Its ed25519 key.
        public_key: [u8; 32],
        /// The new power, at least 1.
        power: u64,
    },
    /// Replace the `system_deployers` (from the next block).
    SetSystemDeployers(Vec<Address>),
    /// Schedule upgrade `name` from block `height` on (#44; at least
    /// [`crate::upgrade::MIN_UPGRADE_DELAY_BLOCKS`] after the execution): a
    /// binary that knows the name applies its rules from that height, one
    /// that does not stops before executing it.
    ScheduleUpgrade {
        /// The upgrade's name (`timerhost_chain::upgrades`).
        name: String,
        /// The first height under it.
        height: u64,
        /// Free text for operators (what to install).
        info: String,
    },
}

impl ProposalAction {
    /// The action's name, as events and the CLI spell it.
    pub fn name(&self) -> &'static str {
        match self {
            ProposalAction::UpdateTimerConfig(_) => "UpdateTimerConfig",
            ProposalAction::UpdateBasefeeConfig(_) => "UpdateBasefeeConfig",
            ProposalAction::AddValidator { .. } => "AddValidator",
            ProposalAction::RemoveValidator { .. } => "RemoveValidator",
            ProposalAction::SetValidatorPower { .. } => "SetValidatorPower",
            ProposalAction::SetSystemDeployers(_) => "SetSystemDeployers",
            ProposalAction::ScheduleUpgrade { .. } => "ScheduleUpgrade",
        }
    }

    /// Why the action is malformed on its own, if it is (checked at
    /// submission; what depends on the set is checked again at execution).
    pub fn check(&self) -> std::result::Result<(), String> {
        match self {
            ProposalAction::UpdateTimerConfig(c) => c.validate().map_err(|e| e.to_string()),
            ProposalAction::UpdateBasefeeConfig(c) => c.validate().map_err(|e| e.to_string()),
            ProposalAction::AddValidator {
                public_key, power, ..
            } => {
                if *power == 0 {
                    return Err("a validator's power is at least 1".into());
                }
                check_validator_key(public_key)
            }
            ProposalAction::SetValidatorPower { power, .. } if *power == 0 => {
                Err("a validator's power is at least 1 (remove it instead)".into())
            }
            ProposalAction::SetSystemDeployers(list) if list.len() > 64 => {
                Err("at most 64 system deployers".into())
            }
            ProposalAction::ScheduleUpgrade { name, height, info } => {
                crate::upgrade::check_upgrade(name, *height, info)
            }
            _ => Ok(()),
        }
    }
}

/// Where a proposal stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum ProposalStatus {
    /// Collecting votes.
    Voting,
    /// More than 2/3 of the power voted yes; anyone may execute it until
    /// the voting period ends.
    Passed,
    /// At least 1/3 of the power voted no: it can no longer pass; its
    /// deposit was burned.
    Rejected,
    /// Executed; its deposit returned.
    Executed,
    /// Its voting period ended before it was executed; its deposit returned.
    Expired,
}

impl ProposalStatus {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::Voting => "voting",
            ProposalStatus::Passed => "passed",
            ProposalStatus::Rejected => "rejected",
            ProposalStatus::Executed => "executed",
            ProposalStatus::Expired => "expired",
        }
    }

    /// Can it still be voted on or executed?
    pub fn is_open(self) -> bool {
        matches!(self, ProposalStatus::Voting | ProposalStatus::Passed)
    }
}

/// A proposal in state.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Proposal {
    /// Its number, from 1.
    pub id: u64,
    /// Who submitted it (and gets its deposit back).
    pub proposer: Address,
    /// What it does.
    pub action: ProposalAction,
    /// The deposit taken at submission.
    pub deposit: u128,
    /// The block that submitted it.
    pub submitted_at: u64,
    /// The last block in which it may be voted on or executed.
    pub voting_ends_at: u64,
    /// The operators' votes, sorted by operator (a second vote replaces the
    /// first).
    pub votes: Vec<(Address, bool)>,
    /// Where it stands.
    pub status: ProposalStatus,
}

impl Canonical for Proposal {
    const NAME: &'static str = "proposal";
}

/// Tally of a proposal's votes against a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// Power of the operators voting yes.
    pub yes: u64,
    /// Power of the operators voting no.
    pub no: u64,
    /// The set's total power.
    pub total: u64,
}

impl Tally {
    /// More than 2/3 of the total power said yes.
    pub fn passes(&self) -> bool {
        u128::from(self.yes) * 3 > u128::from(self.total) * 2
    }

    /// At least 1/3 said no: more than 2/3 yes is out of reach.
    pub fn rejects(&self) -> bool {
        u128::from(self.no) * 3 >= u128::from(self.total)
    }
}

impl Proposal {
    /// Its votes weighed by `set` (an operator no longer in it counts 0).
    pub fn tally(&self, set: &ValidatorSetRecord) -> Tally {
        let mut tally = Tally {
            yes: 0,
            no: 0,
            total: set.total_power(),
        };
        for (operator, approve) in &self.votes {
            let power = set.operator_power(operator);
            if *approve {
                tally.yes += power;
            } else {
                tally.no += power;
            }
        }
        tally
    }

    /// Records `operator`'s vote, replacing an earlier one.
    pub fn vote(&mut self, operator: Address, approve: bool) {
        match self.votes.binary_search_by_key(&operator, |(o, _)| *o) {
            Ok(i) => self.votes[i].1 = approve,
            Err(i) => self.votes.insert(i, (operator, approve)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid ed25519 point: the base point's encoding.
    pub const POINT: [u8; 32] = [
        0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
        0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
        0x66, 0x66,
    ];

    fn set(powers: &[u64]) -> ValidatorSetRecord {
        // Distinct points: small multiples of the base point are awkward to
        // write down, so vary a key the curve check accepts (any y with a
        // valid x; ZIP-215 accepts non-canonical encodings too).
        let members = powers
            .iter()
            .enumerate()
            .map(|(i, p)| ValidatorInfo {
                public_key: key(i as u8),
                power: *p,
                operator: Address([i as u8 + 1; 20]),
            })
            .collect();
        ValidatorSetRecord::new(members).unwrap()
    }

    fn key(i: u8) -> [u8; 32] {
        for x in 0..=255u8 {
            let mut k = POINT;
            k[0] = i;
            k[1] = x;
            if check_validator_key(&k).is_ok() {
                return k;
            }
        }
        panic!("no point")
    }

    /// A proposal open for votes, with none yet.
    fn voting() -> Proposal {
        Proposal {
            id: 1,
            proposer: Address([9; 20]),
            action: ProposalAction::SetSystemDeployers(vec![]),
            deposit: 0,
            submitted_at: 1,
            voting_ends_at: 10,
            votes: vec![],
            status: ProposalStatus::Voting,
        }
    }

    #[test]
    fn quorum_is_more_than_two_thirds_of_the_power() {
        let s = set(&[1, 1, 1]);
        let mut p = voting();
        p.vote(Address([1; 20]), true);
        p.vote(Address([2; 20]), true);
        assert!(!p.tally(&s).passes(), "exactly 2/3 is not more than 2/3");
        p.vote(Address([3; 20]), true);
        assert!(p.tally(&s).passes());
        p.vote(Address([3; 20]), false);
        assert_eq!(p.votes.len(), 3, "a second vote replaces the first");
        assert!(p.tally(&s).rejects());
    }

    #[test]
    fn votes_weigh_by_power() {
        let s = set(&[7, 1, 1, 1]);
        let mut p = voting();
        p.vote(Address([1; 20]), true);
        assert!(p.tally(&s).passes(), "7 of 10 is more than 2/3");
        p.vote(Address([5; 20]), true);
        assert_eq!(p.tally(&s).yes, 7, "a non-operator weighs nothing");
    }

    #[test]
    fn set_changes_are_checked() {
        let s = set(&[1, 1]);
        let first = s.validators[0].public_key;
        let add = ProposalAction::AddValidator {
            public_key: key(9),
            power: 3,
            operator: Address([7; 20]),
        };
        let grown = s.apply(&add).unwrap().unwrap();
        assert_eq!(grown.total_power(), 5);
        assert!(grown.apply(&add).unwrap().unwrap_err().contains("already"));
        let one = set(&[1]);
        let only = one.validators[0].public_key;
        let remove = ProposalAction::RemoveValidator { public_key: only };
        assert!(one.apply(&remove).unwrap().unwrap_err().contains("empty"));
        let power = ProposalAction::SetValidatorPower {
            public_key: first,
            power: 4,
        };
        assert_eq!(s.apply(&power).unwrap().unwrap().total_power(), 5);
        let mut bad = POINT;
        bad[31] = 0xff;
        bad[0] = 0x02;
        let not_point = (0..=255u8).find_map(|x| {
            let mut k = bad;
            k[1] = x;
            check_validator_key(&k).is_err().then_some(k)
        });
        if let Some(k) = not_point {
            let add = ProposalAction::AddValidator {
                public_key: k,
                power: 1,
                operator: Address([7; 20]),
            };
            assert!(add.check().unwrap_err().contains("not an ed25519 point"));
        }
        assert!(ProposalAction::UpdateTimerConfig(TimerConfig::default())
            .check()
            .is_ok());
    }

    /// #50 defect 7: `AddValidator` took small-order points (under which
    /// ZIP-215 verification accepts signatures nobody made) and compared
    /// keys as bytes, so one point under two encodings entered twice.
    #[test]
    fn defect7_small_order_torsioned_and_non_canonical_keys_are_refused() {
        use curve25519_dalek::constants::{ED25519_BASEPOINT_POINT, EIGHT_TORSION};
        use curve25519_dalek::scalar::Scalar;
        let honest = (ED25519_BASEPOINT_POINT * Scalar::from(12_345u64))
            .compress()
            .0;
        check_validator_key(&honest).expect("a prime-order point");
        // Every small-order point, the identity among them.
        for t in EIGHT_TORSION {
            let e = check_validator_key(&t.compress().0).unwrap_err();
            assert!(e.contains("small order"), "{e}");
        }
        // A member's point plus a torsion point: a second key for it.
        let mixed = (ED25519_BASEPOINT_POINT * Scalar::from(12_345u64) + EIGHT_TORSION[1])
            .compress()
            .0;
        let e = check_validator_key(&mixed).unwrap_err();
        assert!(e.contains("small-order component"), "{e}");
        // The identity (y = 1) encoded as y = 1 + p, and with the sign bit.
        let p_plus_one = {
            let mut k = [0xffu8; 32];
            k[0] = 0xee;
            k[31] = 0x7f;
            k
        };
        let mut signed_identity = [0u8; 32];
        signed_identity[0] = 1;
        signed_identity[31] = 0x80;
        for key in [p_plus_one, signed_identity] {
            assert!(check_validator_key(&key).is_err(), "{}", Hash(key).to_hex());
        }
        // A set refuses them, so no key enters under a second encoding.
        let member = ValidatorInfo {
            public_key: honest,
            power: 1,
            operator: Address([1; 20]),
        };
        let set = ValidatorSetRecord::new(vec![member]).unwrap();
        for key in [mixed, EIGHT_TORSION[0].compress().0] {
            let add = ProposalAction::AddValidator {
                public_key: key,
                power: 1,
                operator: Address([2; 20]),
            };
            assert!(set.apply(&add).expect("touches the set").is_err());
        }
    }
}
