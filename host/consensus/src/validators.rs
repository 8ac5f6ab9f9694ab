//! Validators: an address derived from the consensus public key, the
//! voting power genesis gives it, and the set with its proposer rotation.

use std::fmt;

use borsh::{BorshDeserialize, BorshSerialize};

use crate::scheme::PublicKey;
use malachitebft_core_types::VotingPower;
use timerhost_types::Address;

use crate::context::TimerhostContext;
use crate::error::{ConsensusError, Result};

/// A validator's address: the last 20 bytes of keccak256 of its ed25519
/// public key (so it is never confused with an account's secp256k1 key).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, BorshSerialize, BorshDeserialize,
)]
pub struct ValidatorAddress(pub Address);

impl ValidatorAddress {
    /// The address of `public_key`.
    pub fn of(public_key: &PublicKey) -> ValidatorAddress {
        // One derivation for the engine and the chain's state (#32).
        ValidatorAddress(timerhost_types::governance::validator_address(
            public_key.as_bytes(),
        ))
    }
}

impl fmt::Display for ValidatorAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl malachitebft_core_types::Address for ValidatorAddress {}

/// One validator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validator {
    /// Its address ([`ValidatorAddress::of`] its key).
    pub address: ValidatorAddress,
    /// Its consensus public key.
    pub public_key: PublicKey,
    /// Its voting power.
    pub voting_power: VotingPower,
}

impl Validator {
    /// A validator with `public_key` and `voting_power`.
    pub fn new(public_key: PublicKey, voting_power: VotingPower) -> Validator {
        Validator {
            address: ValidatorAddress::of(&public_key),
            public_key,
            voting_power,
        }
    }
}

impl malachitebft_core_types::Validator<TimerhostContext> for Validator {
    fn address(&self) -> &ValidatorAddress {
        &self.address
    }

    fn public_key(&self) -> &PublicKey {
        &self.public_key
    }

    fn voting_power(&self) -> VotingPower {
        self.voting_power
    }
}

/// The validator set, sorted by address (every node orders it the same
/// way, whatever order genesis lists it in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidatorSet {
    validators: Vec<Validator>,
    total_voting_power: VotingPower,
}

impl ValidatorSet {
    /// A set of `validators`: at least one, each with power, no key twice.
    pub fn new(mut validators: Vec<Validator>) -> Result<ValidatorSet> {
        if validators.is_empty() {
            return Err(ConsensusError::EmptyValidatorSet);
        }
        validators.sort_by_key(|v| v.address);
        let mut total: VotingPower = 0;
        for (i, v) in validators.iter().enumerate() {
            if v.voting_power == 0 {
                return Err(ConsensusError::ZeroVotingPower(v.address.to_string()));
            }
            if i > 0 && validators[i - 1].address == v.address {
                return Err(ConsensusError::DuplicateValidator(v.address.to_string()));
            }
            total = total
                .checked_add(v.voting_power)
                .ok_or(ConsensusError::PowerOverflow)?;
        }
        Ok(ValidatorSet {
            validators,
            total_voting_power: total,
        })
    }

    /// The set state keeps for a height (#32: the set changes by proposal,
    /// and every node reads the same one from the same state).
    pub fn from_record(record: &timerhost_types::ValidatorSetRecord) -> Result<ValidatorSet> {
        let members = record
            .validators
            .iter()
            .map(|v| {
                let key = PublicKey::from_bytes(v.public_key)
                    .map_err(|e| ConsensusError::BadKey(format!("{}: {e}", v.public_key_hex())))?;
                Ok(Validator::new(key, v.power))
            })
            .collect::<Result<Vec<_>>>()?;
        ValidatorSet::new(members)
    }

    /// Is `address` a validator of this set?
    pub fn contains(&self, address: &ValidatorAddress) -> bool {
        self.validators
            .binary_search_by(|v| v.address.cmp(address))
            .is_ok()
    }

    /// The validators, in address order.
    pub fn validators(&self) -> &[Validator] {
        &self.validators
    }

    /// The proposer of `height` and `round`: weighted round robin. Slot
    /// `(height + round) mod total power` is owned by the validator whose
    /// cumulative power (in address order) first exceeds it, so over
    /// `total` consecutive slots each validator proposes in proportion to
    /// its power, and a round that fails passes the turn on.
    pub fn proposer(&self, height: u64, round: u32) -> &Validator {
        let slot = height.wrapping_add(u64::from(round)) % self.total_voting_power;
        let mut cumulative = 0;
        for v in &self.validators {
            cumulative += v.voting_power;
            if slot < cumulative {
                return v;
            }
        }
        unreachable!("the slot is below the total power")
    }
}

impl malachitebft_core_types::ValidatorSet<TimerhostContext> for ValidatorSet {
    fn count(&self) -> usize {
        self.validators.len()
    }

    fn total_voting_power(&self) -> VotingPower {
        self.total_voting_power
    }

    fn get_by_address(&self, address: &ValidatorAddress) -> Option<&Validator> {
        self.validators
            .binary_search_by(|v| v.address.cmp(address))
            .ok()
            .map(|i| &self.validators[i])
    }

    fn get_by_index(&self, index: usize) -> Option<&Validator> {
        self.validators.get(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::ConsensusKey;
    use malachitebft_core_types::ValidatorSet as _;

    fn key(seed: u8) -> PublicKey {
        ConsensusKey::from_bytes([seed; 32]).public_key()
    }

    #[test]
    fn a_set_is_ordered_by_address_and_refuses_bad_members() {
        let set =
            ValidatorSet::new(vec![Validator::new(key(1), 1), Validator::new(key(2), 1)]).unwrap();
        let other =
            ValidatorSet::new(vec![Validator::new(key(2), 1), Validator::new(key(1), 1)]).unwrap();
        assert_eq!(set, other, "genesis order does not matter");
        let a = set.validators()[0].address;
        assert_eq!(set.get_by_address(&a).unwrap().address, a);
        assert_eq!(set.total_voting_power(), 2);

        assert_eq!(
            ValidatorSet::new(vec![]),
            Err(ConsensusError::EmptyValidatorSet)
        );
        assert!(matches!(
            ValidatorSet::new(vec![Validator::new(key(1), 1), Validator::new(key(1), 3)]),
            Err(ConsensusError::DuplicateValidator(_))
        ));
        assert!(matches!(
            ValidatorSet::new(vec![Validator::new(key(1), 0)]),
            Err(ConsensusError::ZeroVotingPower(_))
        ));
        assert_eq!(
            ValidatorSet::new(vec![
                Validator::new(key(1), u64::MAX),
                Validator::new(key(2), 1)
            ]),
            Err(ConsensusError::PowerOverflow)
        );
    }

    #[test]
    fn the_set_in_state_decodes_its_keys() {
        use timerhost_types::{ValidatorInfo, ValidatorSetRecord};
        let record = ValidatorSetRecord::new(vec![
            ValidatorInfo {
                public_key: *key(1).as_bytes(),
                power: 3,
                operator: timerhost_types::Address([1; 20]),
            },
            ValidatorInfo {
                public_key: *key(2).as_bytes(),
                power: 1,
                operator: timerhost_types::Address([2; 20]),
            },
        ])
        .unwrap();
        let set = ValidatorSet::from_record(&record).unwrap();
        assert_eq!(set.total_voting_power(), 4);
        assert!(set.get_by_address(&ValidatorAddress::of(&key(1))).is_some());
        // The chain and the engine derive the same address from a key.
        for v in &record.validators {
            let key = PublicKey::from_bytes(v.public_key).unwrap();
            assert_eq!(ValidatorAddress::of(&key).0, v.address());
        }
    }

    #[test]
    fn proposers_rotate_in_proportion_to_power_and_a_failed_round_passes_the_turn() {
        let set = ValidatorSet::new(vec![
            Validator::new(key(1), 1),
            Validator::new(key(2), 2),
            Validator::new(key(3), 1),
        ])
        .unwrap();
        let mut turns = std::collections::BTreeMap::new();
        for height in 1..=400 {
            *turns.entry(set.proposer(height, 0).address).or_insert(0) += 1;
        }
        let counts: Vec<u32> = set.validators().iter().map(|v| turns[&v.address]).collect();
        let expected: Vec<u32> = set
            .validators()
            .iter()
            .map(|v| 100 * v.voting_power as u32)
            .collect();
        assert_eq!(counts, expected);
        // A failed round hands the turn to the next slot's owner, so every
        // validator gets the turn within `total power` rounds.
        assert_eq!(set.proposer(10, 1).address, set.proposer(11, 0).address);
        let in_rounds: std::collections::BTreeSet<_> =
            (0..4).map(|r| set.proposer(10, r).address).collect();
        assert_eq!(in_rounds.len(), 3);
    }
}
