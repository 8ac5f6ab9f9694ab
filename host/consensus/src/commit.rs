//! Checking a commit certificate against a validator set (#48,
//! `th_getCommit`): the precommits it carries are verified one by one with
//! the members' public keys, as the votes were signed
//! ([`crate::signing::vote_bytes`]), and their power must pass two thirds
//! of the set's. A header whose certificate checks is the chain's for
//! anyone who trusts that validator set.

use malachitebft_core_types::{ExtendedCommitCertificate, NilOrVal, VoteType};

use crate::context::TimerhostContext;
use crate::signing::{vote_bytes, ConsensusSigner};
use crate::validators::{ValidatorAddress, ValidatorSet};
use crate::vote::Vote;

/// What a certificate that checks carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitCheck {
    /// Power of the members whose precommit verified.
    pub signed_power: u64,
    /// Power of the whole set.
    pub total_power: u64,
    /// Those members.
    pub signers: Vec<ValidatorAddress>,
}

/// Verifies `certificate` (of chain `chain_id`) against `validators`, the
/// set of its height: every signature must be a member's precommit for the
/// certificate's block, and they must hold more than two thirds of the
/// power. The reason if not.
pub fn check_commit(
    chain_id: u64,
    certificate: &ExtendedCommitCertificate<TimerhostContext>,
    validators: &ValidatorSet,
) -> Result<CommitCheck, String> {
    let total_power: u64 = validators.validators().iter().map(|v| v.voting_power).sum();
    let mut signers = Vec::new();
    let mut signed_power = 0u64;
    for s in &certificate.commit_signatures {
        let Some(member) = validators
            .validators()
            .iter()
            .find(|v| v.address == s.address)
        else {
            return Err(format!(
                "{} signed it and is not in the set of height {}",
                s.address, certificate.height.0
            ));
        };
        if signers.contains(&s.address) {
            return Err(format!("{} signed it twice", s.address));
        }
        let vote = Vote {
            vote_type: VoteType::Precommit,
            height: certificate.height,
            round: certificate.round,
            value: NilOrVal::Val(certificate.value_id),
            validator: s.address,
            extension: None,
        };
        if !ConsensusSigner::verify_bytes(
            &vote_bytes(chain_id, &vote),
            &s.signature,
            &member.public_key,
        ) {
            return Err(format!("{}'s signature does not verify", s.address));
        }
        signers.push(s.address);
        signed_power = signed_power.saturating_add(member.voting_power);
    }
    if signed_power.saturating_mul(3) <= total_power.saturating_mul(2) {
        return Err(format!(
            "its signers hold {signed_power} of {total_power} power, not more than two thirds"
        ));
    }
    Ok(CommitCheck {
        signed_power,
        total_power,
        signers,
    })
}

#[cfg(test)]
mod tests {
    use malachitebft_core_types::{ExtendedCommitSignature, Round};
    use timerhost_types::Hash;

    use super::*;
    use crate::height::Height;
    use crate::signing::ConsensusKey;
    use crate::validators::Validator;

    const CHAIN: u64 = 7;

    fn precommit(
        key: &ConsensusSigner,
        value: Hash,
        round: u32,
    ) -> ExtendedCommitSignature<TimerhostContext> {
        let vote = Vote {
            vote_type: VoteType::Precommit,
            height: Height(5),
            round: Round::new(round),
            value: NilOrVal::Val(value),
            validator: key.address(),
            extension: None,
        };
        ExtendedCommitSignature {
            address: key.address(),
            signature: key.sign_bytes(&vote_bytes(CHAIN, &vote)),
            extension: None,
        }
    }

    #[test]
    fn a_certificate_checks_only_with_two_thirds_of_genuine_precommits() {
        let secrets: Vec<ConsensusKey> = (0..4).map(|_| ConsensusKey::generate()).collect();
        let set = ValidatorSet::new(
            secrets
                .iter()
                .map(|k| Validator::new(k.public_key(), 1))
                .collect(),
        )
        .unwrap();
        let keys: Vec<ConsensusSigner> = secrets
            .into_iter()
            .map(|k| ConsensusSigner::new(CHAIN, k))
            .collect();
        let block = Hash([9; 32]);
        let cert = |signatures| ExtendedCommitCertificate {
            height: Height(5),
            round: Round::new(0),
            value_id: block,
            commit_signatures: signatures,
        };
        let three: Vec<_> = keys[..3].iter().map(|k| precommit(k, block, 0)).collect();
        let ok = check_commit(CHAIN, &cert(three.clone()), &set).unwrap();
        assert_eq!((ok.signed_power, ok.total_power), (3, 4));
        // Two of four is not enough.
        assert!(check_commit(CHAIN, &cert(three[..2].to_vec()), &set)
            .unwrap_err()
            .contains("two thirds"));
        // A precommit for another block, another round, another chain.
        let mut other = three.clone();
        other[0] = precommit(&keys[0], Hash([8; 32]), 0);
        assert!(check_commit(CHAIN, &cert(other), &set)
            .unwrap_err()
            .contains("does not verify"));
        let mut round = three.clone();
        round[1] = precommit(&keys[1], block, 1);
        assert!(check_commit(CHAIN, &cert(round), &set).is_err());
        assert!(check_commit(CHAIN + 1, &cert(three.clone()), &set).is_err());
        // A stranger's signature, and one member counted twice.
        let stranger = ConsensusSigner::new(CHAIN, ConsensusKey::generate());
        let mut strangers = three.clone();
        strangers.push(precommit(&stranger, block, 0));
        assert!(check_commit(CHAIN, &cert(strangers), &set)
            .unwrap_err()
            .contains("not in the set"));
        let mut twice = three[..2].to_vec();
        twice.push(three[0].clone());
        assert!(check_commit(CHAIN, &cert(twice), &set)
            .unwrap_err()
            .contains("twice"));
    }
}
