//! The canonical, versioned binary encoding.
//!
//! Every value that is hashed, signed or stored is encoded with borsh (a
//! deterministic binary format designed for consensus: fixed-width little-endian
//! integers, length-prefixed sequences, no maps with unordered iteration)
//! behind a one-byte version tag. The same value always encodes to the same
//! bytes on every machine, and decoding rejects trailing bytes, so the encoding
//! is a bijection on valid values. Decoding arbitrary bytes never panics and
//! never pre-allocates more than the input could justify (borsh caps
//! speculative allocation), so hostile input costs at most its own size.

use borsh::{BorshDeserialize, BorshSerialize};

use crate::error::{Error, Result};

/// A type with a canonical, versioned encoding.
pub trait Canonical: BorshSerialize + BorshDeserialize {
    /// Human name used in error messages ("transaction", "block header", ...).
    const NAME: &'static str;
    /// Current encoding version; bumped whenever the layout changes.
    const VERSION: u8 = 1;
}

/// Encodes `value` as `VERSION ‖ borsh(value)`.
pub fn encode<T: Canonical>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(T::VERSION);
    value
        .serialize(&mut out)
        .expect("writing to a Vec<u8> cannot fail");
    out
}

/// Decodes bytes produced by [`encode`]; rejects unknown versions, malformed
/// content and trailing bytes with an error naming the type.
pub fn decode<T: Canonical>(bytes: &[u8]) -> Result<T> {
    let (&version, body) = bytes.split_first().ok_or(Error::Malformed {
        what: T::NAME,
        reason: "empty input".into(),
    })?;
    if version != T::VERSION {
        return Err(Error::UnsupportedVersion {
            what: T::NAME,
            found: version,
            expected: T::VERSION,
        });
    }
    borsh::from_slice(body).map_err(|e| Error::Malformed {
        what: T::NAME,
        reason: e.to_string(),
    })
}

/// Encodes an unversioned value with borsh (for small internal records whose
/// version is carried by their container).
pub fn encode_raw<T: BorshSerialize>(value: &T) -> Vec<u8> {
    borsh::to_vec(value).expect("writing to a Vec<u8> cannot fail")
}

/// Decodes an unversioned borsh value, rejecting trailing bytes.
pub fn decode_raw<T: BorshDeserialize>(what: &'static str, bytes: &[u8]) -> Result<T> {
    borsh::from_slice(bytes).map_err(|e| Error::Malformed {
        what,
        reason: e.to_string(),
    })
}
