//! Proposals, and the parts a proposed block is streamed in: `Init` (who
//! proposes what height and round, and how many bytes the block has), the
//! block's bytes in `Data` chunks, and
//! `Fin` carrying the block's hash and the proposer's signature over (chain
//! id, height, round, block hash) — the chunks are bound through the hash —
//! so a receiver trusts the block only once it has all of it.

use borsh::{BorshDeserialize, BorshSerialize};
use malachitebft_core_types::Round;
use timerhost_types::Hash;

use crate::context::TimerhostContext;
use crate::height::Height;
use crate::validators::ValidatorAddress;
use crate::value::BlockValue;

/// Largest `Data` chunk of a streamed block.
pub const PROPOSAL_CHUNK_BYTES: usize = 128 * 1024;

/// A proposal: this block at this height and round.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Proposal {
    /// The height.
    pub height: Height,
    /// The round.
    pub round: Round,
    /// The block, by hash.
    pub value: BlockValue,
    /// The round of the proof of lock (Tendermint), `Round::Nil` if none.
    pub pol_round: Round,
    /// The proposer.
    pub proposer: ValidatorAddress,
}

impl malachitebft_core_types::Proposal<TimerhostContext> for Proposal {
    fn height(&self) -> Height {
        self.height
    }

    fn round(&self) -> Round {
        self.round
    }

    fn value(&self) -> &BlockValue {
        &self.value
    }

    fn take_value(self) -> BlockValue {
        self.value
    }

    fn pol_round(&self) -> Round {
        self.pol_round
    }

    fn validator_address(&self) -> &ValidatorAddress {
        &self.proposer
    }
}

/// One part of a streamed proposal.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum ProposalPart {
    /// The first part: who proposes what.
    Init {
        /// The height.
        height: Height,
        /// The round.
        round: Round,
        /// The proposer.
        proposer: ValidatorAddress,
        /// The proof-of-lock round, `Round::Nil` if none.
        pol_round: Round,
        /// Length of the block's encoding: what the `Data` parts add up to.
        /// It lets a receiver drop a stream as soon as it carries more, long
        /// before the signature can be checked. It is not signed; a relay
        /// that alters it only gets the stream dropped or refused, since the
        /// bytes must still hash to the signed block.
        block_bytes: u64,
    },
    /// A chunk of the block's encoding, in order.
    Data(Vec<u8>),
    /// The last part: the proposer's signature over (chain id, height,
    /// round, block hash) (`signing::streamed_block_bytes`); the `Data`
    /// chunks must decode to the block of that hash. `Init`'s `pol_round`
    /// and `block_bytes` are not signed.
    Fin {
        /// The block's hash (what the value will be).
        block_hash: Hash,
        /// ed25519 signature bytes.
        signature: Vec<u8>,
    },
}

impl ProposalPart {
    /// Splits an encoded block into `Data` parts of at most
    /// [`PROPOSAL_CHUNK_BYTES`].
    pub fn data_parts(block: &[u8]) -> impl Iterator<Item = ProposalPart> + '_ {
        block
            .chunks(PROPOSAL_CHUNK_BYTES)
            .map(|c| ProposalPart::Data(c.to_vec()))
    }
}

impl malachitebft_core_types::ProposalPart<TimerhostContext> for ProposalPart {
    fn is_first(&self) -> bool {
        matches!(self, ProposalPart::Init { .. })
    }

    fn is_last(&self) -> bool {
        matches!(self, ProposalPart::Fin { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_streams_in_bounded_chunks_that_rebuild_it() {
        let block: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        let parts: Vec<_> = ProposalPart::data_parts(&block).collect();
        assert_eq!(parts.len(), 3);
        let rebuilt: Vec<u8> = parts
            .iter()
            .flat_map(|p| match p {
                ProposalPart::Data(d) => d.clone(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(rebuilt, block);
    }
}
