//! Storage errors. Unlike an actor's failure (a receipt outcome), these mean
//! the node itself cannot proceed safely.

/// Errors from the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database could not be opened (missing directory, permissions, or
    /// another process holds its lock).
    #[error("cannot open database at {path}: {reason}")]
    Open {
        /// Database path.
        path: String,
        /// Underlying reason.
        reason: String,
    },
    /// The backend failed to read or write (I/O error, disk full…).
    #[error("storage backend failure: {0}")]
    Backend(String),
    /// Stored bytes failed to decode: the database is corrupt or was written
    /// by an incompatible version.
    #[error("corrupt {what} at key {key}: {reason}")]
    Corrupt {
        /// What was being read.
        what: &'static str,
        /// Hex of the key.
        key: String,
        /// Decoding error.
        reason: String,
    },
    /// The Jellyfish Merkle Tree failed (missing node, internal error).
    #[error("state commitment failure: {0}")]
    Commitment(String),
    /// The database was written in another store layout (an older or newer
    /// timerhost); reading it would misinterpret its indexes.
    #[error("the database uses store format {found}, this timerhost reads format {expected}: start from a new node home")]
    Format {
        /// Format found in the database (`"none (before format markers)"` for
        /// databases that predate the marker).
        found: String,
        /// Format this build reads and writes.
        expected: u32,
    },
    /// The history asked for was pruned (`[storage] keep_blocks`): the node
    /// keeps the headers of every height, and blocks, receipts and events
    /// only from `floor` on.
    #[error("pruned: {}", pruned_reason(*height, *floor, *keep_blocks, *synced_at))]
    Pruned {
        /// The height asked for.
        height: u64,
        /// The lowest height whose history is kept.
        floor: u64,
        /// The node's `keep_blocks`.
        keep_blocks: u64,
        /// The height this node joined at by state sync, if it did.
        synced_at: Option<u64>,
    },
    /// The database was written in an older store format this timerhost can
    /// migrate (`timerhost migrate`, or a start of the node).
    #[error("the database uses store format {found}, this timerhost reads format {expected}: run `timerhost migrate` (a node migrates at start)")]
    NeedsMigration {
        /// Format found.
        found: u32,
        /// Format this build reads and writes.
        expected: u32,
    },
    /// A value the caller asked a proof of has none (#48): a derived key, a
    /// timer not pending, a bucket too large.
    #[error("no proof: {0}")]
    NotProvable(String),
    /// A state snapshot could not be taken, served or restored (#44).
    #[error("state snapshot: {0}")]
    Snapshot(String),
    /// A chunk of a state snapshot failed its check: the peer that served
    /// it is wrong about the state of that height.
    #[error("snapshot chunk {index} of height {height} is invalid: {reason}")]
    BadChunk {
        /// Snapshot height.
        height: u64,
        /// Chunk number.
        index: u32,
        /// What failed.
        reason: String,
    },
    /// A commit did not extend the current head by exactly one block.
    #[error("commit out of order: head is {head:?}, tried to commit height {height}")]
    OutOfOrder {
        /// Current head height (None before genesis).
        head: Option<u64>,
        /// Height being committed.
        height: u64,
    },
}

impl From<sled::Error> for StorageError {
    fn from(e: sled::Error) -> Self {
        StorageError::Backend(e.to_string())
    }
}

fn pruned_reason(height: u64, floor: u64, keep_blocks: u64, synced_at: Option<u64>) -> String {
    match synced_at {
        Some(at) if keep_blocks == 0 || floor <= at + 1 => format!(
            "this node joined by state sync at height {at} and has no block before {floor}; block {height} is not here (ask an archive node)"
        ),
        _ => format!(
            "this node keeps the last {keep_blocks} blocks; block {height} is below its oldest whole block, {floor} (ask an archive node)"
        ),
    }
}

/// Result alias for this crate.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// A [`StorageError::Corrupt`] for `what` under `key`.
pub(crate) fn corrupt(what: &'static str, key: &[u8], reason: impl ToString) -> StorageError {
    StorageError::Corrupt {
        what,
        key: hex_key(key),
        reason: reason.to_string(),
    }
}

/// The first 64 bytes of a key in hex, as errors name it.
pub(crate) fn hex_key(key: &[u8]) -> String {
    let shown = &key[..key.len().min(64)];
    let mut s = String::with_capacity(shown.len() * 2);
    for b in shown {
        s.push_str(&format!("{b:02x}"));
    }
    s
}
