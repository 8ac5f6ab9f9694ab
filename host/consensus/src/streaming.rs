//! A proposed block on the wire: the proposer cuts it into parts
//! ([`stream_block`]), each receiver puts one stream back together
//! ([`Assembler`]) and trusts the block only when the last part's
//! signature — by the proposer the first part names, a member of the
//! validator set — covers the height, round and hash of exactly the bytes
//! received. Executing it (does its state root match?) is the chain's job,
//! before the node votes.

use crate::scheme::Signature;
use malachitebft_core_types::Round;
use thiserror::Error;
use timerhost_types::{decode, encode, Block};

use crate::height::Height;
use crate::proposal::ProposalPart;
use crate::signing::{streamed_block_bytes, ConsensusSigner};
use crate::validators::{ValidatorAddress, ValidatorSet};

/// Largest encoded block a stream may carry (a block holds at most its
/// cycle and cell limits' worth of transactions, far below this).
pub const MAX_STREAMED_BLOCK_BYTES: usize = 64 * 1024 * 1024;

/// Why a stream was refused; the receiver drops it and does not vote for it.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum StreamError {
    /// Parts arrived before the `Init` part, or a second `Init`.
    #[error("the stream does not start with exactly one Init part")]
    NoInit,
    /// The named proposer is not a validator.
    #[error("proposer {0} is not in the validator set")]
    UnknownProposer(ValidatorAddress),
    /// More bytes than any block may have.
    #[error("the stream exceeds {MAX_STREAMED_BLOCK_BYTES} bytes")]
    TooLarge,
    /// The bytes are not a block.
    #[error("the streamed bytes are not a block: {0}")]
    NotABlock(String),
    /// The block is not the one the `Init` part announced or `Fin` signed.
    #[error("the block does not match its stream: {0}")]
    Mismatch(String),
    /// `Fin`'s signature is not the proposer's over this block.
    #[error("the proposer's signature does not cover this block")]
    BadSignature,
}

/// A block that arrived whole and signed by its proposer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamedBlock {
    /// The height.
    pub height: Height,
    /// The round it was proposed in.
    pub round: Round,
    /// Its proof-of-lock round.
    pub pol_round: Round,
    /// Its proposer.
    pub proposer: ValidatorAddress,
    /// The block.
    pub block: Block,
}

/// The parts of `block` proposed by `signer`'s validator at `round`.
pub fn stream_block(
    signer: &ConsensusSigner,
    proposer: ValidatorAddress,
    chain_id: u64,
    round: Round,
    pol_round: Round,
    block: &Block,
) -> Vec<ProposalPart> {
    let height = block.header.height;
    let block_hash = block.header.hash();
    let bytes = encode(block);
    let mut parts = vec![ProposalPart::Init {
        height: Height(height),
        round,
        proposer,
        pol_round,
        block_bytes: bytes.len() as u64,
    }];
    parts.extend(ProposalPart::data_parts(&bytes));
    let signature = signer.sign_bytes(&streamed_block_bytes(chain_id, height, round, &block_hash));
    parts.push(ProposalPart::Fin {
        block_hash,
        signature: signature.0.to_vec(),
    });
    parts
}

/// Puts one proposer's stream back together, part by part, in order.
#[derive(Debug, Default)]
pub struct Assembler {
    init: Option<Announced>,
    bytes: Vec<u8>,
}

/// What a stream's `Init` part announced.
#[derive(Clone, Copy, Debug)]
struct Announced {
    height: Height,
    round: Round,
    proposer: ValidatorAddress,
    pol_round: Round,
    block_bytes: usize,
}

impl Assembler {
    /// Takes the next part; `Some` once `Fin` arrived and the block checks
    /// out against `validators` on chain `chain_id`.
    pub fn push(
        &mut self,
        part: ProposalPart,
        chain_id: u64,
        validators: &ValidatorSet,
    ) -> Result<Option<StreamedBlock>, StreamError> {
        match part {
            ProposalPart::Init {
                height,
                round,
                proposer,
                pol_round,
                block_bytes,
            } => {
                if self.init.is_some() {
                    return Err(StreamError::NoInit);
                }
                let block_bytes = usize::try_from(block_bytes)
                    .ok()
                    .filter(|&n| n <= MAX_STREAMED_BLOCK_BYTES)
                    .ok_or(StreamError::TooLarge)?;
                self.init = Some(Announced {
                    height,
                    round,
                    proposer,
                    pol_round,
                    block_bytes,
                });
                Ok(None)
            }
            ProposalPart::Data(chunk) => {
                let announced = self.init.ok_or(StreamError::NoInit)?;
                if self.bytes.len() + chunk.len() > announced.block_bytes {
                    return Err(StreamError::Mismatch(format!(
                        "Init announced {} bytes, the parts carry more",
                        announced.block_bytes
                    )));
                }
                self.bytes.extend_from_slice(&chunk);
                Ok(None)
            }
            ProposalPart::Fin {
                block_hash,
                signature,
            } => {
                let Announced {
                    height,
                    round,
                    proposer,
                    pol_round,
                    block_bytes,
                } = self.init.ok_or(StreamError::NoInit)?;
                if self.bytes.len() != block_bytes {
                    return Err(StreamError::Mismatch(format!(
                        "Init announced {block_bytes} bytes, the parts carry {}",
                        self.bytes.len()
                    )));
                }
                let validator =
                    malachitebft_core_types::ValidatorSet::get_by_address(validators, &proposer)
                        .ok_or(StreamError::UnknownProposer(proposer))?;
                let block: Block =
                    decode(&self.bytes).map_err(|e| StreamError::NotABlock(e.to_string()))?;
                if block.header.hash() != block_hash {
                    return Err(StreamError::Mismatch(format!(
                        "Fin names block {block_hash}, the bytes are block {}",
                        block.header.hash()
                    )));
                }
                if block.header.height != height.0 {
                    return Err(StreamError::Mismatch(format!(
                        "Init announced height {height}, the block is at {}",
                        block.header.height
                    )));
                }
                let signature = <[u8; 64]>::try_from(signature.as_slice())
                    .map(Signature)
                    .map_err(|_| StreamError::BadSignature)?;
                let signed = streamed_block_bytes(chain_id, height.0, round, &block_hash);
                if !ConsensusSigner::verify_bytes(&signed, &signature, &validator.public_key) {
                    return Err(StreamError::BadSignature);
                }
                Ok(Some(StreamedBlock {
                    height,
                    round,
                    pol_round,
                    proposer,
                    block,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::ConsensusKey;
    use crate::validators::Validator;
    use timerhost_types::{Address, BlockHeader, Hash};

    const CHAIN: u64 = 42;

    fn setup() -> (ValidatorSet, Vec<ConsensusKey>) {
        let keys: Vec<_> = (1..=4).map(|i| ConsensusKey::from_bytes([i; 32])).collect();
        let set = ValidatorSet::new(
            keys.iter()
                .map(|k| Validator::new(k.public_key(), 1))
                .collect(),
        )
        .unwrap();
        (set, keys)
    }

    fn block(height: u64, filler: usize) -> Block {
        Block {
            header: BlockHeader {
                chain_id: CHAIN,
                height,
                timestamp_ms: 1_000 * height,
                proposer: Address([7; 20]),
                parent_hash: Hash([1; 32]),
                tx_root: Hash([2; 32]),
                state_root: Hash([filler as u8; 32]),
                receipts_root: Hash([4; 32]),
                cycles_used: filler as u64,
                cells_used: 0,
                lane_basefee: 0,
            },
            txs: Vec::new(),
        }
    }

    fn assemble(
        parts: Vec<ProposalPart>,
        set: &ValidatorSet,
    ) -> Result<Option<StreamedBlock>, StreamError> {
        let mut a = Assembler::default();
        let mut last = None;
        for p in parts {
            last = a.push(p, CHAIN, set)?;
        }
        Ok(last)
    }

    /// Rewrites the block size a stream's `Init` part announces.
    fn announce(parts: &mut [ProposalPart], bytes: u64) {
        match &mut parts[0] {
            ProposalPart::Init { block_bytes, .. } => *block_bytes = bytes,
            other => panic!("not an Init part: {other:?}"),
        }
    }

    #[test]
    fn a_stream_must_carry_exactly_the_bytes_its_init_announced() {
        let (set, keys) = setup();
        let signer = ConsensusSigner::new(CHAIN, keys[0].clone());
        let b = block(5, 9);
        let honest = stream_block(
            &signer,
            keys[0].address(),
            CHAIN,
            Round::ZERO,
            Round::Nil,
            &b,
        );
        let size = encode(&b).len() as u64;
        assert!(matches!(
            &honest[0],
            ProposalPart::Init { block_bytes, .. } if *block_bytes == size
        ));

        let mut understated = honest.clone();
        announce(&mut understated, size - 1);
        assert!(matches!(
            assemble(understated, &set),
            Err(StreamError::Mismatch(m)) if m.contains("carry more")
        ));
        let mut overstated = honest.clone();
        announce(&mut overstated, size + 1);
        assert!(matches!(
            assemble(overstated, &set),
            Err(StreamError::Mismatch(m)) if m.contains(&format!("the parts carry {size}"))
        ));
        let mut huge = honest;
        announce(&mut huge, MAX_STREAMED_BLOCK_BYTES as u64 + 1);
        assert_eq!(assemble(huge, &set), Err(StreamError::TooLarge));
    }

    #[test]
    fn an_honest_stream_rebuilds_the_signed_block() {
        let (set, keys) = setup();
        let signer = ConsensusSigner::new(CHAIN, keys[0].clone());
        let b = block(5, 9);
        let parts = stream_block(
            &signer,
            keys[0].address(),
            CHAIN,
            Round::new(2),
            Round::Nil,
            &b,
        );
        let got = assemble(parts, &set).unwrap().unwrap();
        assert_eq!(got.block, b);
        assert_eq!(
            (got.height, got.round, got.proposer),
            (Height(5), Round::new(2), keys[0].address())
        );
    }

    #[test]
    fn forged_tampered_or_foreign_streams_are_refused() {
        let (set, keys) = setup();
        let signer = ConsensusSigner::new(CHAIN, keys[0].clone());
        let b = block(5, 9);
        let honest = stream_block(
            &signer,
            keys[0].address(),
            CHAIN,
            Round::ZERO,
            Round::Nil,
            &b,
        );

        // A byzantine peer swaps the block's bytes under the signed Fin.
        let mut swapped = honest.clone();
        let other = encode(&block(5, 10));
        swapped.splice(1..swapped.len() - 1, ProposalPart::data_parts(&other));
        assert!(matches!(
            assemble(swapped, &set),
            Err(StreamError::Mismatch(_))
        ));

        // Another validator's signature under this proposer's name.
        let mallory = ConsensusSigner::new(CHAIN, keys[1].clone());
        let forged = stream_block(
            &mallory,
            keys[0].address(),
            CHAIN,
            Round::ZERO,
            Round::Nil,
            &b,
        );
        assert_eq!(assemble(forged, &set), Err(StreamError::BadSignature));

        // A stranger outside the set.
        let stranger = ConsensusKey::from_bytes([9; 32]);
        let foreign = stream_block(
            &ConsensusSigner::new(CHAIN, stranger.clone()),
            stranger.address(),
            CHAIN,
            Round::ZERO,
            Round::Nil,
            &b,
        );
        assert_eq!(
            assemble(foreign, &set),
            Err(StreamError::UnknownProposer(stranger.address()))
        );

        // Signed for another chain, or announced at another height.
        let elsewhere = stream_block(
            &ConsensusSigner::new(7, keys[0].clone()),
            keys[0].address(),
            7,
            Round::ZERO,
            Round::Nil,
            &b,
        );
        assert_eq!(assemble(elsewhere, &set), Err(StreamError::BadSignature));
        let mut wrong_height = honest.clone();
        wrong_height[0] = ProposalPart::Init {
            height: Height(6),
            round: Round::ZERO,
            proposer: keys[0].address(),
            pol_round: Round::Nil,
            block_bytes: encode(&b).len() as u64,
        };
        assert!(matches!(
            assemble(wrong_height, &set),
            Err(StreamError::Mismatch(_))
        ));

        // Out of order, or not a block at all.
        assert_eq!(
            assemble(honest[1..].to_vec(), &set),
            Err(StreamError::NoInit)
        );
        let mut garbage = honest;
        garbage.splice(1..garbage.len() - 1, [ProposalPart::Data(vec![1, 2, 3])]);
        announce(&mut garbage, 3);
        assert!(matches!(
            assemble(garbage, &set),
            Err(StreamError::NotABlock(_))
        ));
    }
}
