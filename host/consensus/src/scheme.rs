//! The validators' signature scheme: ed25519 (`ed25519-consensus`, the
//! ZIP-215 rules: every node accepts exactly the same signatures), with
//! keys and signatures that encode with borsh on the wire.

use borsh::{BorshDeserialize, BorshSerialize};
use ed25519_consensus::{SigningKey, VerificationKey};

/// The scheme the engine is generic over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ed25519;

/// An ed25519 signature.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, BorshSerialize, BorshDeserialize,
)]
pub struct Signature(pub [u8; 64]);

/// An ed25519 public key (a valid curve point).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PublicKey(VerificationKey);

/// An ed25519 private key.
#[derive(Clone)]
pub struct PrivateKey(SigningKey);

/// Why bytes are not a key or a signature.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DecodingError(String);

impl PublicKey {
    /// The key of these 32 bytes, if they are a curve point.
    pub fn from_bytes(bytes: [u8; 32]) -> Result<PublicKey, DecodingError> {
        VerificationKey::try_from(bytes)
            .map(PublicKey)
            .map_err(|e| DecodingError(format!("not an ed25519 public key: {e}")))
    }

    /// Its 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        self.0.as_bytes()
    }

    /// Does `signature` sign `message` under this key?
    pub fn verify(&self, message: &[u8], signature: &Signature) -> bool {
        self.0
            .verify(&ed25519_consensus::Signature::from(signature.0), message)
            .is_ok()
    }
}

impl BorshSerialize for PublicKey {
    fn serialize<W: borsh::io::Write>(&self, writer: &mut W) -> borsh::io::Result<()> {
        self.as_bytes().serialize(writer)
    }
}

impl BorshDeserialize for PublicKey {
    fn deserialize_reader<R: borsh::io::Read>(reader: &mut R) -> borsh::io::Result<Self> {
        let bytes = <[u8; 32]>::deserialize_reader(reader)?;
        PublicKey::from_bytes(bytes)
            .map_err(|e| borsh::io::Error::new(borsh::io::ErrorKind::InvalidData, e.0))
    }
}

impl PrivateKey {
    /// The key with these 32 secret bytes.
    pub fn from_bytes(secret: [u8; 32]) -> PrivateKey {
        PrivateKey(SigningKey::from(secret))
    }

    /// A fresh key from the operating system's randomness.
    pub fn generate() -> PrivateKey {
        PrivateKey(SigningKey::new(rand::rngs::OsRng))
    }

    /// The secret bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// Its public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.verification_key())
    }

    /// Signs `message`.
    pub fn sign(&self, message: &[u8]) -> Signature {
        Signature(self.0.sign(message).to_bytes())
    }
}

impl malachitebft_core_types::SigningScheme for Ed25519 {
    type DecodingError = DecodingError;
    type Signature = Signature;
    type PublicKey = PublicKey;
    type PrivateKey = PrivateKey;

    fn decode_signature(bytes: &[u8]) -> Result<Signature, DecodingError> {
        <[u8; 64]>::try_from(bytes)
            .map(Signature)
            .map_err(|_| DecodingError(format!("a signature has 64 bytes, not {}", bytes.len())))
    }

    fn encode_signature(signature: &Signature) -> Vec<u8> {
        signature.0.to_vec()
    }

    fn decode_public_key(bytes: &[u8]) -> Result<PublicKey, DecodingError> {
        let bytes = <[u8; 32]>::try_from(bytes).map_err(|_| {
            DecodingError(format!("a public key has 32 bytes, not {}", bytes.len()))
        })?;
        PublicKey::from_bytes(bytes)
    }

    fn encode_public_key(public_key: &PublicKey) -> Vec<u8> {
        public_key.as_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_signatures_round_trip_through_borsh_and_bad_points_are_refused() {
        let key = PrivateKey::from_bytes([3; 32]);
        let public = key.public_key();
        let signature = key.sign(b"hello");
        assert!(public.verify(b"hello", &signature));
        assert!(!public.verify(b"hellp", &signature));
        let encoded = borsh::to_vec(&(public, signature)).unwrap();
        let (p, s): (PublicKey, Signature) = borsh::from_slice(&encoded).unwrap();
        assert_eq!((p, s), (public, signature));
        let off_curve = (2u8..=255)
            .map(|y| {
                let mut b = [0u8; 32];
                b[0] = y;
                b
            })
            .find(|b| PublicKey::from_bytes(*b).is_err())
            .unwrap();
        assert!(borsh::from_slice::<PublicKey>(&off_curve).is_err());
    }
}
