//! secp256k1 keys and recoverable signatures (via `k256`), Ethereum-style
//! addresses, and the deterministic dev accounts.
//!
//! Signatures are 65 bytes `r ‖ s ‖ v` with `v ∈ {0, 1}` the recovery id; `s`
//! must be in the lower half of the curve order so that a signature cannot be
//! malleated into a second valid one (which would give the same transaction
//! two hashes).

use k256::ecdsa::{RecoveryId, Signature, SigningKey, VerifyingKey};
use std::fmt;

use crate::error::{Error, Result};
use crate::primitives::{keccak256, keccak256_concat, Address, Hash};

/// Number of deterministic dev accounts.
pub const DEV_ACCOUNT_COUNT: usize = 10;

/// A secp256k1 private key.
#[derive(Clone)]
pub struct PrivateKey(SigningKey);

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material by accident.
        write!(f, "PrivateKey({})", self.address())
    }
}

impl PrivateKey {
    /// Builds a key from 32 big-endian bytes.
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<Self> {
        SigningKey::from_slice(bytes).map(Self).map_err(|_| {
            Error::BadPrivateKey("not a valid secp256k1 scalar (zero or ≥ curve order)".into())
        })
    }

    /// Parses `0x`-prefixed (or bare) 64-digit hex.
    pub fn from_hex(s: &str) -> Result<Self> {
        let digits = s.trim().trim_start_matches("0x");
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(digits, &mut bytes)
            .map_err(|e| Error::BadPrivateKey(format!("expected 64 hex digits: {e}")))?;
        Self::from_bytes(&bytes)
    }

    /// Generates a key from caller-provided randomness (callers pick the RNG so
    /// that this crate never reads the OS entropy itself).
    pub fn from_entropy(mut next_bytes: impl FnMut() -> [u8; 32]) -> Self {
        loop {
            if let Ok(key) = Self::from_bytes(&next_bytes()) {
                return key;
            }
        }
    }

    /// The 32 secret bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes().into()
    }

    /// Lowercase `0x…` hex of the secret.
    pub fn to_hex(&self) -> String {
        format!("0x{}", hex::encode(self.to_bytes()))
    }

    /// The address controlled by this key.
    pub fn address(&self) -> Address {
        address_of(self.0.verifying_key())
    }

    /// Signs a 32-byte digest, returning `r ‖ s ‖ v` with low `s`.
    pub fn sign_digest(&self, digest: &Hash) -> [u8; 65] {
        let (sig, recid) = self
            .0
            .sign_prehash_recoverable(digest.as_bytes())
            .expect("signing a 32-byte prehash cannot fail");
        // k256 already produces low-s signatures; normalise defensively and
        // flip the recovery parity if it ever does not.
        let (sig, recid) = match sig.normalize_s() {
            Some(normalized) => (
                normalized,
                RecoveryId::new(!recid.is_y_odd(), recid.is_x_reduced()),
            ),
            None => (sig, recid),
        };
        let mut out = [0u8; 65];
        out[..64].copy_from_slice(&sig.to_bytes());
        out[64] = recid.to_byte();
        out
    }
}

/// The Ethereum-style address of a public key.
pub fn address_of(key: &VerifyingKey) -> Address {
    let point = key.to_encoded_point(false);
    // Skip the 0x04 uncompressed-point tag.
    let digest = keccak256(&point.as_bytes()[1..]);
    Address::from_slice(&digest.as_bytes()[12..]).expect("20 bytes")
}

/// Recovers the signer address of `signature` over `digest`.
pub fn recover_signer(digest: &Hash, signature: &[u8; 65]) -> Result<Address> {
    let sig = Signature::from_slice(&signature[..64])
        .map_err(|_| Error::BadSignature("r or s is zero or not below the curve order".into()))?;
    if sig.normalize_s().is_some() {
        return Err(Error::BadSignature(
            "s is in the upper half of the curve order (malleable signature)".into(),
        ));
    }
    let recid = RecoveryId::from_byte(signature[64])
        .filter(|r| !r.is_x_reduced())
        .ok_or_else(|| {
            Error::BadSignature(format!(
                "recovery id must be 0 or 1, found {}",
                signature[64]
            ))
        })?;
    // The checks above are the consensus rules; the recovery itself runs in
    // libsecp256k1, which gives the same key for every signature they pass
    // (k256's recovery also re-verifies the key it found: twice the work).
    let no_key = || Error::BadSignature("no public key recovers from this signature".into());
    let recid =
        secp256k1::ecdsa::RecoveryId::try_from(i32::from(recid.to_byte())).map_err(|_| no_key())?;
    let sig = secp256k1::ecdsa::RecoverableSignature::from_compact(&signature[..64], recid)
        .map_err(|_| no_key())?;
    let message = secp256k1::Message::from_digest(digest.0);
    let key = verifier()
        .recover_ecdsa(&message, &sig)
        .map_err(|_| no_key())?;
    let point = key.serialize_uncompressed();
    // Skip the 0x04 uncompressed-point tag.
    let hashed = keccak256(&point[1..]);
    Ok(Address::from_slice(&hashed.as_bytes()[12..]).expect("20 bytes"))
}

/// libsecp256k1's context for recovery, made once.
fn verifier() -> &'static secp256k1::Secp256k1<secp256k1::VerifyOnly> {
    static CONTEXT: std::sync::OnceLock<secp256k1::Secp256k1<secp256k1::VerifyOnly>> =
        std::sync::OnceLock::new();
    CONTEXT.get_or_init(secp256k1::Secp256k1::verification_only)
}

/// The private key of dev account `index` (0-based).
///
/// Dev keys are derived as `keccak256("timerhost dev account " ‖ index as u32 BE)`
/// (retrying with a counter in the astronomically unlikely case the digest is
/// not a valid scalar). They are public knowledge: the chain only accepts
/// transactions they sign when its chain id is [`crate::DEV_CHAIN_ID`].
pub fn dev_account_key(index: u32) -> PrivateKey {
    let mut counter: u32 = 0;
    PrivateKey::from_entropy(|| {
        let digest = keccak256_concat(&[
            b"timerhost dev account ",
            &index.to_be_bytes(),
            &counter.to_be_bytes(),
        ]);
        counter += 1;
        digest.0
    })
}

/// The [`DEV_ACCOUNT_COUNT`] dev accounts, in index order.
pub fn dev_accounts() -> Vec<PrivateKey> {
    (0..DEV_ACCOUNT_COUNT as u32).map(dev_account_key).collect()
}

/// The ed25519 consensus public key of dev validator `index` (#32): the
/// in-process chain's `Chain(validators=N)` and the tests build sets from
/// these. Their private keys (seed `keccak256("timerhost dev validator " ‖
/// index BE)`) are public knowledge, like the dev accounts'.
pub fn dev_validator_public_key(index: u32) -> [u8; 32] {
    let seed = keccak256_concat(&[b"timerhost dev validator ", &index.to_be_bytes()]);
    ed25519_consensus::SigningKey::from(seed.0)
        .verification_key()
        .to_bytes()
}

/// A dev genesis whose validators are `n` dev validators of power 1, dev
/// account `i` operating validator `i`, config updates going through
/// proposals (#32).
pub fn dev_validator_genesis(n: u32) -> crate::Genesis {
    let mut genesis = crate::Genesis::dev();
    genesis.validators = (0..n)
        .map(|i| crate::GenesisValidator {
            public_key: crate::Hash(dev_validator_public_key(i)).to_hex(),
            power: 1,
            operator: dev_account_key(i).address(),
        })
        .collect();
    genesis.governance.mode = crate::GovernanceMode::Proposals;
    genesis
}

/// Is `address` one of the dev accounts?
pub fn is_dev_account(address: &Address) -> bool {
    dev_accounts().iter().any(|k| k.address() == *address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ethereum_vector() {
        // Private key 1 → the well-known address of the generator point.
        let mut one = [0u8; 32];
        one[31] = 1;
        let key = PrivateKey::from_bytes(&one).unwrap();
        assert_eq!(
            key.address().to_hex(),
            "0x7e5f4552091a69125d5dfcb7b8c2659029395bdf"
        );
    }

    #[test]
    fn sign_and_recover() {
        let key = dev_account_key(3);
        let digest = keccak256(b"hello");
        let sig = key.sign_digest(&digest);
        assert_eq!(recover_signer(&digest, &sig).unwrap(), key.address());
        // A different message recovers a different (or no) signer.
        let other = keccak256(b"hellp");
        assert_ne!(recover_signer(&other, &sig).ok(), Some(key.address()));
    }

    /// What k256 alone recovers (the recovery before #34), for comparison.
    fn k256_recover(digest: &Hash, signature: &[u8; 65]) -> Option<Address> {
        let sig = Signature::from_slice(&signature[..64]).ok()?;
        if sig.normalize_s().is_some() {
            return None;
        }
        let recid = RecoveryId::from_byte(signature[64]).filter(|r| !r.is_x_reduced())?;
        let key = VerifyingKey::recover_from_prehash(digest.as_bytes(), &sig, recid).ok()?;
        Some(address_of(&key))
    }

    proptest::proptest! {
        /// libsecp256k1 accepts exactly the signatures k256 accepted and
        /// recovers the same signer from each: real signatures, and
        /// arbitrary bytes (which mostly recover *some* key, or none).
        #[test]
        fn libsecp256k1_recovers_what_k256_recovered(
            secret in proptest::array::uniform32(1u8..),
            digest in proptest::array::uniform32(proptest::num::u8::ANY),
            noise in proptest::collection::vec(proptest::num::u8::ANY, 65),
            tamper in 0usize..66,
        ) {
            let digest = Hash(digest);
            if let Ok(key) = PrivateKey::from_bytes(&secret) {
                let mut sig = key.sign_digest(&digest);
                proptest::prop_assert_eq!(recover_signer(&digest, &sig).ok(), Some(key.address()));
                if tamper < 65 {
                    sig[tamper] ^= 0x5a;
                }
                proptest::prop_assert_eq!(recover_signer(&digest, &sig).ok(), k256_recover(&digest, &sig));
            }
            let mut arbitrary = [0u8; 65];
            arbitrary.copy_from_slice(&noise);
            arbitrary[64] &= 1;
            // Half the time in the lower half of the order, so some pass the s check.
            if tamper % 2 == 0 {
                arbitrary[32] &= 0x7f;
            }
            proptest::prop_assert_eq!(recover_signer(&digest, &arbitrary).ok(), k256_recover(&digest, &arbitrary));
        }
    }

    #[test]
    fn rejects_bad_recovery_id_and_zero_signature() {
        let key = dev_account_key(0);
        let digest = keccak256(b"x");
        let mut sig = key.sign_digest(&digest);
        sig[64] = 7;
        assert!(recover_signer(&digest, &sig)
            .unwrap_err()
            .to_string()
            .contains("recovery id"));
        assert!(recover_signer(&digest, &[0u8; 65])
            .unwrap_err()
            .to_string()
            .contains("bad signature"));
    }

    #[test]
    fn rejects_high_s() {
        use k256::elliptic_curve::ops::Neg;
        let key = dev_account_key(1);
        let digest = keccak256(b"m");
        let sig = key.sign_digest(&digest);
        let parsed = Signature::from_slice(&sig[..64]).unwrap();
        let (r, s) = parsed.split_scalars();
        let high = Signature::from_scalars(r, s.as_ref().neg()).unwrap();
        let mut bad = [0u8; 65];
        bad[..64].copy_from_slice(&high.to_bytes());
        bad[64] = sig[64] ^ 1;
        assert!(recover_signer(&digest, &bad)
            .unwrap_err()
            .to_string()
            .contains("upper half"));
    }

    #[test]
    fn dev_accounts_are_stable_and_distinct() {
        let accounts = dev_accounts();
        assert_eq!(accounts.len(), DEV_ACCOUNT_COUNT);
        let mut addrs: Vec<_> = accounts.iter().map(|k| k.address()).collect();
        addrs.sort();
        addrs.dedup();
        assert_eq!(addrs.len(), DEV_ACCOUNT_COUNT);
        assert_eq!(dev_account_key(0).to_hex(), accounts[0].to_hex());
        assert!(is_dev_account(&accounts[9].address()));
    }

    #[test]
    fn private_key_hex_round_trip_and_errors() {
        let key = dev_account_key(2);
        let again = PrivateKey::from_hex(&key.to_hex()).unwrap();
        assert_eq!(again.address(), key.address());
        assert!(PrivateKey::from_hex("0x00").is_err());
        assert!(PrivateKey::from_bytes(&[0u8; 32])
            .unwrap_err()
            .to_string()
            .contains("scalar"));
    }
}
