//! The value validators agree on: a block, named by its hash. The block's
//! bytes travel as proposal parts ([`crate::proposal::ProposalPart`]); every
//! validator executes them before voting, so a vote for a hash is a vote
//! for the state root inside that block's header.

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_types::Hash;

/// A proposed block, by hash.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, BorshSerialize, BorshDeserialize,
)]
pub struct BlockValue(pub Hash);

impl malachitebft_core_types::Value for BlockValue {
    type Id = Hash;

    fn id(&self) -> Hash {
        self.0
    }
}
