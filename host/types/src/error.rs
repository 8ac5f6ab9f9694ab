//! The crate's error type: everything that can go wrong while decoding,
//! parsing or verifying the data defined here.

/// Errors produced by this crate. Each variant names what was wrong.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// Bytes could not be decoded as the expected type.
    #[error("malformed {what}: {reason}")]
    Malformed {
        /// The type being decoded.
        what: &'static str,
        /// Why decoding failed.
        reason: String,
    },
    /// The encoding carries a version this build does not understand.
    #[error("unsupported {what} encoding version {found} (this node understands {expected})")]
    UnsupportedVersion {
        /// The type being decoded.
        what: &'static str,
        /// Version byte found.
        found: u8,
        /// Version byte supported.
        expected: u8,
    },
    /// A hex string or address could not be parsed.
    #[error("invalid {what} {input:?}: {reason}")]
    Parse {
        /// What was being parsed ("address", "hash", ...).
        what: &'static str,
        /// The offending input (truncated).
        input: String,
        /// Why it failed.
        reason: String,
    },
    /// A signature could not be verified or its signer recovered.
    #[error("bad signature: {0}")]
    BadSignature(String),
    /// A private key was not a valid secp256k1 scalar.
    #[error("invalid private key: {0}")]
    BadPrivateKey(String),
    /// A genesis file is inconsistent.
    #[error("invalid genesis: {0}")]
    Genesis(String),
    /// A config value is out of its allowed range.
    #[error("invalid config field `{field}`: {reason}")]
    Config {
        /// The offending field.
        field: &'static str,
        /// Why it was rejected.
        reason: String,
    },
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
