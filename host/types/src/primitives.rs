//! Fixed-size primitives: 20-byte [`Address`]es and 32-byte [`Hash`]es, with
//! lowercase `0x…` hex as their only text form (JSON, TOML, CLI, logs).

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha3::{Digest, Keccak256};
use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// keccak256 of `data`.
pub fn keccak256(data: &[u8]) -> Hash {
    Hash(Keccak256::digest(data).into())
}

/// keccak256 over several byte slices, as if they were concatenated.
pub fn keccak256_concat(parts: &[&[u8]]) -> Hash {
    let mut hasher = Keccak256::new();
    for part in parts {
        hasher.update(part);
    }
    Hash(hasher.finalize().into())
}

fn parse_hex<const N: usize>(what: &'static str, s: &str) -> Result<[u8; N]> {
    let err = |reason: String| Error::Parse {
        what,
        input: s.chars().take(80).collect(),
        reason,
    };
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or_else(|| err("must start with 0x".into()))?;
    if digits.len() != N * 2 {
        return Err(err(format!(
            "expected {} hex digits, found {}",
            N * 2,
            digits.len()
        )));
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(digits, &mut out).map_err(|e| err(e.to_string()))?;
    Ok(out)
}

macro_rules! fixed_bytes {
    ($name:ident, $len:expr, $what:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(
            Clone,
            Copy,
            PartialEq,
            Eq,
            PartialOrd,
            Ord,
            Hash,
            Default,
            BorshSerialize,
            BorshDeserialize,
        )]
        pub struct $name(pub [u8; $len]);

        impl $name {
            /// Length in bytes.
            pub const LEN: usize = $len;
            /// The all-zero value.
            pub const ZERO: Self = Self([0u8; $len]);

            /// The raw bytes.
            pub fn as_bytes(&self) -> &[u8; $len] {
                &self.0
            }

            /// Builds a value from a slice, which must have exactly the right length.
            pub fn from_slice(bytes: &[u8]) -> Result<Self> {
                <[u8; $len]>::try_from(bytes)
                    .map(Self)
                    .map_err(|_| Error::Parse {
                        what: $what,
                        input: hex::encode(&bytes[..bytes.len().min(40)]),
                        reason: format!("expected {} bytes, found {}", $len, bytes.len()),
                    })
            }

            /// Lowercase `0x…` hex.
            pub fn to_hex(&self) -> String {
                // One allocation (a fire's event writes two addresses).
                let mut out = vec![0u8; 2 + 2 * $len];
                out[..2].copy_from_slice(b"0x");
                hex::encode_to_slice(self.0, &mut out[2..]).expect("sized for the hex");
                String::from_utf8(out).expect("hex is ASCII")
            }

            /// Is this the all-zero value?
            pub fn is_zero(&self) -> bool {
                self.0.iter().all(|b| *b == 0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_hex())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_hex())
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                parse_hex::<$len>($what, s.trim()).map(Self)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_hex())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                let s = <String as Deserialize>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }

        impl AsRef<[u8]> for $name {
            fn as_ref(&self) -> &[u8] {
                &self.0
            }
        }
    };
}

fixed_bytes!(
    Address,
    20,
    "address",
    "A 20-byte account address (Ethereum-style: last 20 bytes of keccak256 of the public key)."
);
fixed_bytes!(Hash, 32, "hash", "A 32-byte keccak256 digest.");

impl Address {
    /// Is this in the reserved system-actor band `0x00…01 ..= 0x00…0F` (CIP-5 §4.2)?
    pub fn is_system_reserved(&self) -> bool {
        self.0[..19].iter().all(|b| *b == 0) && (0x01..=0x0F).contains(&self.0[19])
    }

    /// Why a plain payment (a transfer, a released escrow) to this address
    /// is refused, or `None` when it may be paid: the zero address would
    /// burn the funds, and a system actor (the cron registry, the deposit
    /// escrow, governance) takes value only through its own handlers — a
    /// payment it did not ask for would break its books (the registry's
    /// balance is exactly the sum of its jobs' escrows). The one rule for
    /// `Transfer` transactions, `pvm_host.transfer` and `release_escrow`.
    pub fn payment_refusal(&self) -> Option<&'static str> {
        if self.is_zero() {
            Some("paying the zero address would burn the funds; use a real recipient")
        } else if self.is_system_reserved() {
            Some("system actors (0x…01 to 0x…0f) take value only through their own handlers, never as a plain payment")
        } else {
            None
        }
    }

    /// The system address whose last byte is `n` (all others zero).
    pub const fn system(n: u8) -> Self {
        let mut bytes = [0u8; 20];
        bytes[19] = n;
        Self(bytes)
    }
}

/// Serde helper: `u128` amounts as decimal strings in JSON/TOML (TOML integers
/// are 64-bit and JSON numbers lose precision above 2^53), while still
/// accepting plain integers on input.
pub mod u128_string {
    use serde::{de, Deserialize, Deserializer, Serializer};

    /// Serialize as a decimal string.
    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }

    /// Accept a decimal string (underscores allowed) or a non-negative integer.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Int(u64),
            Str(String),
        }
        match Repr::deserialize(d)? {
            Repr::Int(i) => Ok(i as u128),
            Repr::Str(s) => s
                .replace('_', "")
                .parse::<u128>()
                .map_err(|e| de::Error::custom(format!("invalid amount {s:?}: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_hex_round_trip() {
        let a = Address([0xab; 20]);
        let s = a.to_string();
        assert_eq!(s, format!("0x{}", "ab".repeat(20)));
        assert_eq!(s.parse::<Address>().unwrap(), a);
    }

    #[test]
    fn address_parse_errors_name_the_problem() {
        let e = "abcd".parse::<Address>().unwrap_err().to_string();
        assert!(e.contains("must start with 0x"), "{e}");
        let e = "0x1234".parse::<Address>().unwrap_err().to_string();
        assert!(e.contains("expected 40 hex digits, found 4"), "{e}");
        let e = format!("0x{}", "zz".repeat(20))
            .parse::<Address>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid address"), "{e}");
    }

    #[test]
    fn keccak_matches_known_vector() {
        // keccak256("") from the Ethereum yellow paper.
        assert_eq!(
            keccak256(b"").to_hex(),
            "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
        );
        assert_eq!(keccak256_concat(&[b"ab", b"c"]), keccak256(b"abc"));
    }

    #[test]
    fn system_band() {
        assert!(!Address::ZERO.is_system_reserved());
        assert!(Address::system(1).is_system_reserved());
        assert!(Address::system(0x0F).is_system_reserved());
        assert!(Address::ZERO.payment_refusal().unwrap().contains("burn"));
        assert!(Address::system(6)
            .payment_refusal()
            .unwrap()
            .contains("system actors"));
        assert_eq!(Address::system(0x10).payment_refusal(), None);
        assert!(!Address::system(0x10).is_system_reserved());
        let mut a = Address::system(1);
        a.0[0] = 1;
        assert!(!a.is_system_reserved());
    }
}
