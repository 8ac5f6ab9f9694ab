//! How [`TimerhostContext`] binds timerhost's types to Malachite's
//! `Context`: the types the engine runs on, and how it makes proposals and
//! votes and picks proposers.

use malachitebft_core_types::{LinearTimeouts, NilOrVal, Round, VoteType};
use timerhost_types::Hash;

use crate::context::TimerhostContext;
use crate::height::Height;
use crate::proposal::{Proposal, ProposalPart};
use crate::validators::{Validator, ValidatorAddress, ValidatorSet};
use crate::value::BlockValue;
use crate::vote::Vote;

impl malachitebft_core_types::Context for TimerhostContext {
    type Address = ValidatorAddress;
    type Height = Height;
    type ProposalPart = ProposalPart;
    type Proposal = Proposal;
    type Validator = Validator;
    type ValidatorSet = ValidatorSet;
    type Timeouts = LinearTimeouts;
    type Value = BlockValue;
    type Vote = Vote;
    type Extension = ();
    type SigningScheme = crate::scheme::Ed25519;

    fn select_proposer<'a>(
        &self,
        validator_set: &'a ValidatorSet,
        height: Height,
        round: Round,
    ) -> &'a Validator {
        validator_set.proposer(height.0, round.as_u32().unwrap_or(0))
    }

    fn new_proposal(
        &self,
        height: Height,
        round: Round,
        value: BlockValue,
        pol_round: Round,
        address: ValidatorAddress,
    ) -> Proposal {
        Proposal {
            height,
            round,
            value,
            pol_round,
            proposer: address,
        }
    }

    fn new_prevote(
        &self,
        height: Height,
        round: Round,
        value_id: NilOrVal<Hash>,
        address: ValidatorAddress,
    ) -> Vote {
        vote(VoteType::Prevote, height, round, value_id, address)
    }

    fn new_precommit(
        &self,
        height: Height,
        round: Round,
        value_id: NilOrVal<Hash>,
        address: ValidatorAddress,
    ) -> Vote {
        vote(VoteType::Precommit, height, round, value_id, address)
    }
}

fn vote(
    vote_type: VoteType,
    height: Height,
    round: Round,
    value: NilOrVal<Hash>,
    validator: ValidatorAddress,
) -> Vote {
    Vote {
        vote_type,
        height,
        round,
        value,
        validator,
        extension: None,
    }
}
