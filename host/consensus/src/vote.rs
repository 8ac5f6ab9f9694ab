//! Prevotes and precommits.

use borsh::{BorshDeserialize, BorshSerialize};
use malachitebft_core_types::{NilOrVal, Round, SignedExtension, VoteType};
use timerhost_types::Hash;

use crate::context::TimerhostContext;
use crate::height::Height;
use crate::validators::ValidatorAddress;

/// A vote for a block (by hash) or for nil.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Vote {
    /// Prevote or precommit.
    pub vote_type: VoteType,
    /// The height.
    pub height: Height,
    /// The round.
    pub round: Round,
    /// The block voted for, or nil.
    pub value: NilOrVal<Hash>,
    /// The voter.
    pub validator: ValidatorAddress,
    /// Vote extensions are not used (`Extension = ()`); kept for the trait.
    pub extension: Option<SignedExtension<TimerhostContext>>,
}

impl malachitebft_core_types::Vote<TimerhostContext> for Vote {
    fn height(&self) -> Height {
        self.height
    }

    fn round(&self) -> Round {
        self.round
    }

    fn value(&self) -> &NilOrVal<Hash> {
        &self.value
    }

    fn take_value(self) -> NilOrVal<Hash> {
        self.value
    }

    fn vote_type(&self) -> VoteType {
        self.vote_type
    }

    fn validator_address(&self) -> &ValidatorAddress {
        &self.validator
    }

    fn extension(&self) -> Option<&SignedExtension<TimerhostContext>> {
        self.extension.as_ref()
    }

    fn take_extension(&mut self) -> Option<SignedExtension<TimerhostContext>> {
        self.extension.take()
    }

    fn extend(self, extension: SignedExtension<TimerhostContext>) -> Self {
        Vote {
            extension: Some(extension),
            ..self
        }
    }
}
