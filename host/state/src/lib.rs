//! # timerhost-state
//!
//! Where consensus state and the chain's history live.
//!
//! - [`backend`]: the [`KvBackend`] trait — an ordered byte-key store with
//!   atomic, durable batch writes — and its two implementations,
//!   [`SledBackend`] (validators) and [`MemoryBackend`] (tests, the in-process
//!   Python chain, replay).
//! - [`accounts`]: typed account reads and balance moves over any state.
//! - [`overlay`]: [`StateRead`] and the [`Overlay`] that executes a block on
//!   top of committed state, with checkpoints so a failed transaction (or a
//!   failed nested call) leaves no trace.
//! - [`commitment`]: the state root, a Jellyfish Merkle Tree (`jmt`) over every
//!   consensus key, updated incrementally with each block's writes.
//! - [`store`]: [`ChainStore`], which commits a block — state writes, tree
//!   nodes, block, receipts, indexes and the new head — as **one** atomic
//!   batch, and answers queries over blocks, receipts and events;
//!   [`history`] lays out receipts, events and their indexes, and
//!   [`namespaces`] names every key prefix of the backend.
//! - [`snapshots`] takes state snapshots while blocks commit and serves
//!   them in chunks; [`restore`] checks and writes them into an empty store
//!   (state sync, #44); [`compaction`] gives pruned space back to the
//!   filesystem (`timerhost compact`); [`proofs`] proves a value of the
//!   state, or its absence, against the head's state root (#48).

pub mod accounts;
pub mod backend;
pub mod capture;
pub mod commitment;
pub mod compaction;
pub mod compressed;
pub mod error;
pub mod headers;
pub mod history;
pub mod indexer;
pub mod migrations;
pub mod namespaces;
pub mod overlay;
pub mod proofs;
pub mod pruning;
pub mod recent;
pub mod recent_records;
pub mod restore;
pub mod snapshots;
pub mod store;
#[cfg(test)]
mod test_support;
pub mod tx_index;

pub use backend::{KvBackend, MemoryBackend, SledBackend, WriteBatch};
pub use commitment::{NodeCache, StateCommitment};
pub use error::{Result, StorageError};
pub use migrations::{MigrationReport, OLDEST_MIGRATABLE_FORMAT};
pub use overlay::{ChangeSet, Checkpoint, EmptyState, NextKey, Overlay, StateRead, StateReadExt};
pub use proofs::{verify_proof, StateProof};
pub use pruning::PruneStep;
pub use recent::{StateAt, DEFAULT_PROOF_BLOCKS};
pub use restore::SnapshotRestore;
pub use snapshots::{SnapshotChunk, SnapshotManifest};
pub use store::{
    ChainStore, CommitRequest, EventFilter, EventRecord, EventsPage, StoreSnapshot, StoredHeader,
    TxLocation, STORE_FORMAT,
};
