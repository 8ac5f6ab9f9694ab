//! The wire and write-ahead-log encoding of every message the engine sends
//! between validators or keeps across restarts: borsh, the encoding the
//! rest of the chain uses, through Malachite's own borsh support for its
//! generic messages. One codec type serves the network, sync and WAL.

use borsh::{BorshDeserialize, BorshSerialize};
use bytes::Bytes;
use malachitebft_codec::{Codec, HasEncodedLen};
use malachitebft_core_consensus::{LivenessMsg, ProposedValue, SignedConsensusMsg};
use malachitebft_core_types::{
    ExtendedCommitCertificate, ExtendedCommitSignature, PolkaCertificate, Round, SignedExtension,
    ValidatorProof,
};
use malachitebft_engine::util::streaming::StreamMessage;
use malachitebft_sync::{RawDecidedValue, Request, Response, Status, ValueResponse};
use timerhost_types::Hash;

use crate::context::TimerhostContext;
use crate::height::Height;
use crate::proposal::ProposalPart;
use crate::scheme::Signature;
use crate::validators::ValidatorAddress;

/// Largest message the codec decodes: a streamed block part is at most
/// 128 KiB, a sync response carries whole decided blocks.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Why bytes did not decode.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// Not the encoding of the expected message.
    #[error("malformed {what}: {reason}")]
    Malformed {
        /// Which message.
        what: &'static str,
        /// What borsh said.
        reason: String,
    },
    /// Larger than any message may be.
    #[error("{what} of {len} bytes exceeds {MAX_MESSAGE_BYTES}")]
    TooLarge {
        /// Which message.
        what: &'static str,
        /// Its length.
        len: usize,
    },
}

/// The borsh codec of [`TimerhostContext`]'s messages.
#[derive(Clone, Copy, Debug, Default)]
pub struct BorshCodec;

fn decode<T: borsh::BorshDeserialize>(what: &'static str, bytes: &[u8]) -> Result<T, CodecError> {
    if bytes.len() > MAX_MESSAGE_BYTES {
        return Err(CodecError::TooLarge {
            what,
            len: bytes.len(),
        });
    }
    borsh::from_slice(bytes).map_err(|e| CodecError::Malformed {
        what,
        reason: e.to_string(),
    })
}

fn encode<T: borsh::BorshSerialize>(msg: &T) -> Bytes {
    Bytes::from(borsh::to_vec(msg).expect("writing to a Vec cannot fail"))
}

macro_rules! borsh_codec {
    ($($ty:ty => $what:literal),* $(,)?) => {$(
        impl Codec<$ty> for BorshCodec {
            type Error = CodecError;

            fn decode(&self, bytes: Bytes) -> Result<$ty, CodecError> {
                decode($what, &bytes)
            }

            fn encode(&self, msg: &$ty) -> Result<Bytes, CodecError> {
                Ok(encode(msg))
            }
        }
    )*};
}

borsh_codec! {
    ProposalPart => "proposal part",
    SignedConsensusMsg<TimerhostContext> => "consensus message",
    LivenessMsg<TimerhostContext> => "liveness message",
    StreamMessage<ProposalPart> => "stream message",
    Status<TimerhostContext> => "sync status",
    Request<TimerhostContext> => "sync request",
    ProposedValue<TimerhostContext> => "proposed value",
    PolkaCertificate<TimerhostContext> => "polka certificate",
}

/// A sync response's wire form: Malachite 0.8.2 gives its commit
/// certificates no borsh encoding, so the response is mirrored field by
/// field (decided blocks with the precommit signatures that decided them).
#[derive(BorshSerialize, BorshDeserialize)]
struct WireResponse {
    start_height: Height,
    values: Vec<WireDecided>,
}

#[derive(BorshSerialize, BorshDeserialize)]
struct WireDecided {
    value_bytes: Vec<u8>,
    certificate: WireCertificate,
}

#[derive(BorshSerialize, BorshDeserialize)]
struct WireCertificate {
    height: Height,
    round: Round,
    value_id: Hash,
    signatures: Vec<WireCommitSignature>,
}

#[derive(BorshSerialize, BorshDeserialize)]
struct WireCommitSignature {
    address: ValidatorAddress,
    signature: Signature,
    extension: Option<SignedExtension<TimerhostContext>>,
}

impl From<&ExtendedCommitCertificate<TimerhostContext>> for WireCertificate {
    fn from(c: &ExtendedCommitCertificate<TimerhostContext>) -> Self {
        WireCertificate {
            height: c.height,
            round: c.round,
            value_id: c.value_id,
            signatures: c
                .commit_signatures
                .iter()
                .map(|s| WireCommitSignature {
                    address: s.address,
                    signature: s.signature,
                    extension: s.extension.clone(),
                })
                .collect(),
        }
    }
}

impl From<WireCertificate> for ExtendedCommitCertificate<TimerhostContext> {
    fn from(c: WireCertificate) -> Self {
        ExtendedCommitCertificate {
            height: c.height,
            round: c.round,
            value_id: c.value_id,
            commit_signatures: c
                .signatures
                .into_iter()
                .map(|s| ExtendedCommitSignature {
                    address: s.address,
                    signature: s.signature,
                    extension: s.extension,
                })
                .collect(),
        }
    }
}

fn to_wire(msg: &Response<TimerhostContext>) -> WireResponse {
    let Response::ValueResponse(r) = msg;
    WireResponse {
        start_height: r.start_height,
        values: r
            .values
            .iter()
            .map(|v| WireDecided {
                value_bytes: v.value_bytes.to_vec(),
                certificate: (&v.certificate).into(),
            })
            .collect(),
    }
}

fn from_wire(wire: WireResponse) -> Response<TimerhostContext> {
    let values = wire
        .values
        .into_iter()
        .map(|v| RawDecidedValue::new(Bytes::from(v.value_bytes), v.certificate.into()))
        .collect();
    Response::ValueResponse(ValueResponse::new(wire.start_height, values))
}

/// A commit certificate's bytes in the decided-block store (the same
/// encoding as in sync responses).
pub fn encode_certificate(certificate: &ExtendedCommitCertificate<TimerhostContext>) -> Vec<u8> {
    borsh::to_vec(&WireCertificate::from(certificate)).expect("writing to a Vec cannot fail")
}

/// Reads [`encode_certificate`]'s bytes.
pub fn decode_certificate(
    bytes: &[u8],
) -> Result<ExtendedCommitCertificate<TimerhostContext>, CodecError> {
    decode::<WireCertificate>("commit certificate", bytes).map(Into::into)
}

impl Codec<Response<TimerhostContext>> for BorshCodec {
    type Error = CodecError;

    fn decode(&self, bytes: Bytes) -> Result<Response<TimerhostContext>, CodecError> {
        decode::<WireResponse>("sync response", &bytes).map(from_wire)
    }

    fn encode(&self, msg: &Response<TimerhostContext>) -> Result<Bytes, CodecError> {
        Ok(encode(&to_wire(msg)))
    }
}

impl HasEncodedLen<Response<TimerhostContext>> for BorshCodec {
    fn encoded_len(&self, msg: &Response<TimerhostContext>) -> Result<usize, CodecError> {
        Ok(borsh::object_length(&to_wire(msg)).expect("measuring cannot fail"))
    }
}

/// `ValidatorProof` has no borsh form of its own: its three fields in order.
impl Codec<ValidatorProof<TimerhostContext>> for BorshCodec {
    type Error = CodecError;

    fn decode(&self, bytes: Bytes) -> Result<ValidatorProof<TimerhostContext>, CodecError> {
        let (public_key, peer_id, signature): (Vec<u8>, Vec<u8>, Signature) =
            decode("validator proof", &bytes)?;
        Ok(ValidatorProof::new(public_key, peer_id, signature))
    }

    fn encode(&self, msg: &ValidatorProof<TimerhostContext>) -> Result<Bytes, CodecError> {
        Ok(encode(&(&msg.public_key, &msg.peer_id, &msg.signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::ConsensusKey;
    use malachitebft_core_types::{Context, NilOrVal, SignedMessage};

    /// The engine's network, sync and WAL all accept this one codec.
    #[test]
    fn the_codec_serves_network_sync_and_wal() {
        use malachitebft_app_channel::app::types::codec::{ConsensusCodec, SyncCodec, WalCodec};
        fn serves<C>()
        where
            C: ConsensusCodec<TimerhostContext>
                + SyncCodec<TimerhostContext>
                + WalCodec<TimerhostContext>,
        {
        }
        serves::<BorshCodec>();
    }

    #[test]
    fn consensus_messages_round_trip_and_garbage_is_named() {
        let codec = BorshCodec;
        let key = ConsensusKey::from_bytes([5; 32]);
        let vote = TimerhostContext.new_prevote(
            Height(9),
            Round::new(2),
            NilOrVal::Val(Hash([1; 32])),
            key.address(),
        );
        let signature = key.private_key().sign(b"x");
        let msg = SignedConsensusMsg::Vote(SignedMessage::new(vote, signature));
        let bytes = Codec::<SignedConsensusMsg<TimerhostContext>>::encode(&codec, &msg).unwrap();
        let back: SignedConsensusMsg<TimerhostContext> = codec.decode(bytes).unwrap();
        assert_eq!(back, msg);

        let part = ProposalPart::Data(vec![1, 2, 3]);
        let bytes = Codec::<ProposalPart>::encode(&codec, &part).unwrap();
        assert_eq!(Codec::<ProposalPart>::decode(&codec, bytes).unwrap(), part);

        let proof = ValidatorProof::<TimerhostContext>::new(vec![1; 32], vec![2; 8], signature);
        let bytes = Codec::<ValidatorProof<TimerhostContext>>::encode(&codec, &proof).unwrap();
        assert_eq!(
            Codec::<ValidatorProof<TimerhostContext>>::decode(&codec, bytes).unwrap(),
            proof
        );

        let response = Response::ValueResponse(ValueResponse::new(
            Height(4),
            vec![RawDecidedValue::new(
                Bytes::from_static(b"block"),
                ExtendedCommitCertificate {
                    height: Height(4),
                    round: Round::ZERO,
                    value_id: Hash([3; 32]),
                    commit_signatures: vec![ExtendedCommitSignature {
                        address: key.address(),
                        signature,
                        extension: None,
                    }],
                },
            )],
        ));
        let bytes = Codec::<Response<TimerhostContext>>::encode(&codec, &response).unwrap();
        assert_eq!(codec.encoded_len(&response).unwrap(), bytes.len());
        assert_eq!(
            Codec::<Response<TimerhostContext>>::decode(&codec, bytes).unwrap(),
            response
        );

        let e = Codec::<SignedConsensusMsg<TimerhostContext>>::decode(
            &codec,
            Bytes::from_static(&[9, 9, 9]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("malformed consensus message"), "{e}");
    }
}
