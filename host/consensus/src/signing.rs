//! ed25519 signatures for consensus: a validator's [`ConsensusKey`], the
//! exact bytes each message signs, and [`ConsensusSigner`], the signer and
//! verifier the engine calls.
//!
//! Every signed byte string starts with a domain tag and the chain id, so a
//! signature can be replayed neither as another kind of message nor on
//! another chain.

use crate::scheme::{PrivateKey, PublicKey, Signature};
use async_trait::async_trait;
use malachitebft_core_types::{
    NilOrVal, Round, SignedMessage, ValidatorProof, VoteExtensionScope, VoteType,
};
use malachitebft_signing::{Error as SigningError, Signer, VerificationResult, Verifier};
use timerhost_types::Hash;

use crate::context::TimerhostContext;
use crate::error::{ConsensusError, Result};
use crate::proposal::Proposal;
use crate::validators::ValidatorAddress;
use crate::vote::Vote;

const VOTE_TAG: &[u8] = b"timerhost/consensus/vote/v1";
const PROPOSAL_TAG: &[u8] = b"timerhost/consensus/proposal/v1";
const BLOCK_TAG: &[u8] = b"timerhost/consensus/block/v1";
const EXTENSION_TAG: &[u8] = b"timerhost/consensus/extension/v1";

/// A validator's consensus key (ed25519), kept apart from account keys.
#[derive(Clone)]
pub struct ConsensusKey(PrivateKey);

impl ConsensusKey {
    /// The key with these 32 secret bytes.
    pub fn from_bytes(secret: [u8; 32]) -> ConsensusKey {
        ConsensusKey(PrivateKey::from_bytes(secret))
    }

    /// A key from `0x` + 64 hex digits (the key file format).
    pub fn from_hex(text: &str) -> Result<ConsensusKey> {
        Ok(ConsensusKey::from_bytes(key_bytes(text)?))
    }

    /// A fresh key from the operating system's randomness.
    pub fn generate() -> ConsensusKey {
        ConsensusKey(PrivateKey::generate())
    }

    /// The secret as `0x` + 64 hex digits.
    pub fn to_hex(&self) -> String {
        Hash(self.0.to_bytes()).to_hex()
    }

    /// The public key.
    pub fn public_key(&self) -> PublicKey {
        self.0.public_key()
    }

    /// The validator address of this key.
    pub fn address(&self) -> ValidatorAddress {
        ValidatorAddress::of(&self.public_key())
    }

    /// The private key, for the engine.
    pub fn private_key(&self) -> &PrivateKey {
        &self.0
    }
}

impl std::fmt::Debug for ConsensusKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ConsensusKey({})", self.address())
    }
}

/// A public key from `0x` + 64 hex digits (genesis's validator list).
pub fn public_key_from_hex(text: &str) -> Result<PublicKey> {
    PublicKey::from_bytes(key_bytes(text)?).map_err(|e| ConsensusError::BadKey(e.to_string()))
}

/// A public key as `0x` + 64 hex digits.
pub fn public_key_to_hex(key: &PublicKey) -> String {
    Hash(*key.as_bytes()).to_hex()
}

/// The 32 bytes of `0x` + 64 hex digits (the `0x` may be left out),
/// parsed as the chain parses every 32-byte value.
fn key_bytes(text: &str) -> Result<[u8; 32]> {
    let text = text.trim();
    let digits = text.strip_prefix("0x").unwrap_or(text);
    format!("0x{digits}")
        .parse::<Hash>()
        .map(|h| h.0)
        .map_err(|e| ConsensusError::BadKey(format!("expected 0x and 64 hex digits: {e}")))
}

fn round_bytes(round: Round) -> [u8; 8] {
    round.as_u32().map_or(u64::MAX, u64::from).to_be_bytes()
}

/// The bytes a vote signs.
pub fn vote_bytes(chain_id: u64, vote: &Vote) -> Vec<u8> {
    let mut b = Vec::with_capacity(VOTE_TAG.len() + 8 + 1 + 16 + 33 + 20);
    b.extend_from_slice(VOTE_TAG);
    b.extend_from_slice(&chain_id.to_be_bytes());
    b.push(match vote.vote_type {
        VoteType::Prevote => 0,
        VoteType::Precommit => 1,
    });
    b.extend_from_slice(&vote.height.0.to_be_bytes());
    b.extend_from_slice(&round_bytes(vote.round));
    match &vote.value {
        NilOrVal::Nil => b.push(0),
        NilOrVal::Val(hash) => {
            b.push(1);
            b.extend_from_slice(hash.as_bytes());
        }
    }
    b.extend_from_slice(vote.validator.0.as_bytes());
    b
}

/// The bytes a proposal signs.
pub fn proposal_bytes(chain_id: u64, proposal: &Proposal) -> Vec<u8> {
    let mut b = Vec::with_capacity(PROPOSAL_TAG.len() + 8 + 8 + 8 + 32 + 8 + 20);
    b.extend_from_slice(PROPOSAL_TAG);
    b.extend_from_slice(&chain_id.to_be_bytes());
    b.extend_from_slice(&proposal.height.0.to_be_bytes());
    b.extend_from_slice(&round_bytes(proposal.round));
    b.extend_from_slice(proposal.value.0.as_bytes());
    b.extend_from_slice(&round_bytes(proposal.pol_round));
    b.extend_from_slice(proposal.proposer.0.as_bytes());
    b
}

/// The bytes a streamed block's `Fin` part signs: the proposer binds the
/// height, round and block hash it streamed.
pub fn streamed_block_bytes(
    chain_id: u64,
    height: u64,
    round: Round,
    block_hash: &Hash,
) -> Vec<u8> {
    let mut b = Vec::with_capacity(BLOCK_TAG.len() + 8 + 8 + 8 + 32);
    b.extend_from_slice(BLOCK_TAG);
    b.extend_from_slice(&chain_id.to_be_bytes());
    b.extend_from_slice(&height.to_be_bytes());
    b.extend_from_slice(&round_bytes(round));
    b.extend_from_slice(block_hash.as_bytes());
    b
}

fn extension_bytes(chain_id: u64, scope: &VoteExtensionScope<TimerhostContext>) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(EXTENSION_TAG);
    b.extend_from_slice(&chain_id.to_be_bytes());
    b.extend_from_slice(&scope.height.0.to_be_bytes());
    b.extend_from_slice(&round_bytes(scope.round));
    b.extend_from_slice(scope.value_id.as_bytes());
    b.extend_from_slice(scope.validator_address.0.as_bytes());
    b
}

/// Signs for one validator and verifies anyone's signatures, on one chain.
#[derive(Clone)]
pub struct ConsensusSigner {
    chain_id: u64,
    key: ConsensusKey,
}

impl ConsensusSigner {
    /// The signer of `key` on chain `chain_id`.
    pub fn new(chain_id: u64, key: ConsensusKey) -> ConsensusSigner {
        ConsensusSigner { chain_id, key }
    }

    /// Signs arbitrary consensus bytes (e.g. [`streamed_block_bytes`]).
    pub fn sign_bytes(&self, bytes: &[u8]) -> Signature {
        self.key.0.sign(bytes)
    }

    /// The secret key bytes; the network key of a validator is derived
    /// from them, so its peer id is stable across restarts.
    pub fn secret_bytes(&self) -> [u8; 32] {
        self.key.0.to_bytes()
    }

    /// The public key's 32 bytes (what the validator proof names).
    pub fn public_key_bytes(&self) -> Vec<u8> {
        self.key.public_key().as_bytes().to_vec()
    }

    /// This signer's validator address.
    pub fn address(&self) -> ValidatorAddress {
        self.key.address()
    }

    /// Does `signature` by `public_key` sign `bytes`?
    pub fn verify_bytes(bytes: &[u8], signature: &Signature, public_key: &PublicKey) -> bool {
        public_key.verify(bytes, signature)
    }
}

#[async_trait]
impl Signer<TimerhostContext> for ConsensusSigner {
    async fn sign_vote(
        &self,
        vote: Vote,
    ) -> std::result::Result<SignedMessage<TimerhostContext, Vote>, SigningError> {
        let signature = self.sign_bytes(&vote_bytes(self.chain_id, &vote));
        Ok(SignedMessage::new(vote, signature))
    }

    async fn sign_proposal(
        &self,
        proposal: Proposal,
    ) -> std::result::Result<SignedMessage<TimerhostContext, Proposal>, SigningError> {
        let signature = self.sign_bytes(&proposal_bytes(self.chain_id, &proposal));
        Ok(SignedMessage::new(proposal, signature))
    }

    async fn sign_vote_extension(
        &self,
        scope: VoteExtensionScope<TimerhostContext>,
        extension: (),
    ) -> std::result::Result<SignedMessage<TimerhostContext, ()>, SigningError> {
        let signature = self.sign_bytes(&extension_bytes(self.chain_id, &scope));
        Ok(SignedMessage::new(extension, signature))
    }

    async fn sign_validator_proof(
        &self,
        public_key: Vec<u8>,
        peer_id: Vec<u8>,
    ) -> std::result::Result<ValidatorProof<TimerhostContext>, SigningError> {
        let signature = self.sign_bytes(&ValidatorProof::<TimerhostContext>::signing_bytes(
            &public_key,
            &peer_id,
        ));
        Ok(ValidatorProof::new(public_key, peer_id, signature))
    }
}

#[async_trait]
impl Verifier<TimerhostContext> for ConsensusSigner {
    async fn verify_signed_vote(
        &self,
        vote: &Vote,
        signature: &Signature,
        public_key: &PublicKey,
    ) -> std::result::Result<VerificationResult, SigningError> {
        Ok(VerificationResult::from_bool(Self::verify_bytes(
            &vote_bytes(self.chain_id, vote),
            signature,
            public_key,
        )))
    }

    async fn verify_signed_proposal(
        &self,
        proposal: &Proposal,
        signature: &Signature,
        public_key: &PublicKey,
    ) -> std::result::Result<VerificationResult, SigningError> {
        Ok(VerificationResult::from_bool(Self::verify_bytes(
            &proposal_bytes(self.chain_id, proposal),
            signature,
            public_key,
        )))
    }

    async fn verify_signed_vote_extension(
        &self,
        scope: &VoteExtensionScope<TimerhostContext>,
        _extension: &(),
        signature: &Signature,
        public_key: &PublicKey,
    ) -> std::result::Result<VerificationResult, SigningError> {
        Ok(VerificationResult::from_bool(Self::verify_bytes(
            &extension_bytes(self.chain_id, scope),
            signature,
            public_key,
        )))
    }

    async fn verify_validator_proof(
        &self,
        proof: &ValidatorProof<TimerhostContext>,
    ) -> std::result::Result<VerificationResult, SigningError> {
        let Ok(bytes) = <[u8; 32]>::try_from(proof.public_key.as_slice()) else {
            return Ok(VerificationResult::Invalid);
        };
        let Ok(public_key) = PublicKey::from_bytes(bytes) else {
            return Ok(VerificationResult::Invalid);
        };
        Ok(VerificationResult::from_bool(Self::verify_bytes(
            &proof.preimage(),
            &proof.signature,
            &public_key,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::height::Height;
    use malachitebft_core_types::Context;

    fn vote_for(signer: &ConsensusSigner, value: NilOrVal<Hash>) -> Vote {
        TimerhostContext.new_precommit(Height(3), Round::new(1), value, signer.key.address())
    }

    #[tokio::test]
    async fn votes_and_proposals_verify_only_as_signed_on_their_chain() {
        let signer = ConsensusSigner::new(7, ConsensusKey::from_bytes([1; 32]));
        let public_key = signer.key.public_key();
        let vote = vote_for(&signer, NilOrVal::Val(Hash([9; 32])));
        let signed = signer.sign_vote(vote.clone()).await.unwrap();
        assert!(signer
            .verify_signed_vote(&vote, &signed.signature, &public_key)
            .await
            .unwrap()
            .is_valid());
        // Another value, another vote type, another chain: refused.
        let nil = vote_for(&signer, NilOrVal::Nil);
        assert!(signer
            .verify_signed_vote(&nil, &signed.signature, &public_key)
            .await
            .unwrap()
            .is_invalid());
        let prevote = Vote {
            vote_type: VoteType::Prevote,
            ..vote.clone()
        };
        assert!(signer
            .verify_signed_vote(&prevote, &signed.signature, &public_key)
            .await
            .unwrap()
            .is_invalid());
        let elsewhere = ConsensusSigner::new(8, ConsensusKey::from_bytes([1; 32]));
        assert!(elsewhere
            .verify_signed_vote(&vote, &signed.signature, &public_key)
            .await
            .unwrap()
            .is_invalid());
        // A stranger's key does not verify it either.
        let stranger = ConsensusKey::from_bytes([2; 32]).public_key();
        assert!(signer
            .verify_signed_vote(&vote, &signed.signature, &stranger)
            .await
            .unwrap()
            .is_invalid());

        let proposal = TimerhostContext.new_proposal(
            Height(3),
            Round::ZERO,
            crate::BlockValue(Hash([4; 32])),
            Round::Nil,
            signer.key.address(),
        );
        let signed = signer.sign_proposal(proposal.clone()).await.unwrap();
        assert!(signer
            .verify_signed_proposal(&proposal, &signed.signature, &public_key)
            .await
            .unwrap()
            .is_valid());
        // A proposal's signature is no vote's.
        assert!(!ConsensusSigner::verify_bytes(
            &vote_bytes(7, &vote),
            &signed.signature,
            &public_key
        ));
    }

    #[test]
    fn keys_round_trip_through_hex_and_bad_text_is_named() {
        let key = ConsensusKey::generate();
        let back = ConsensusKey::from_hex(&key.to_hex()).unwrap();
        assert_eq!(back.address(), key.address());
        let public = public_key_to_hex(&key.public_key());
        assert_eq!(public_key_from_hex(&public).unwrap(), key.public_key());
        let e = ConsensusKey::from_hex("0x1234").unwrap_err();
        assert!(e.to_string().contains("64 hex digits"), "{e}");
    }
}
