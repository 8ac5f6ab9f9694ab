//! # timerhost-consensus
//!
//! timerhost under Malachite, an existing Tendermint-family BFT engine
//! (`arc-malachitebft-*` 0.8.2, docs/ARCHITECTURE.md, "Validators"). The
//! engine decides *which* block comes next; the block pipeline
//! (`timerhost-chain`) stays the pure `(state, block) → (state', root)` step
//! it drives.
//!
//! This crate holds what the engine is generic over — its `Context`:
//!
//! | module | what |
//! |---|---|
//! | [`height`] | block heights |
//! | [`validators`] | validator addresses, validators and the set, weighted round-robin proposers |
//! | [`value`] | the value agreed on: a block, by hash |
//! | [`proposal`] | proposals and the parts a block is streamed in |
//! | [`vote`] | prevotes and precommits |
//! | [`scheme`] | ed25519 keys and signatures (ZIP-215), borsh-encoded on the wire |
//! | [`signing`] | ed25519 signatures over domain-separated bytes, the engine's signer and verifier |
//! | [`streaming`] | a proposed block cut into parts and put back together, trusted only when its proposer's signature covers it |
//! | [`context`], [`context_impl`] | [`TimerhostContext`], and how it ties them together |
//! | [`codec`] | borsh on the wire and in the write-ahead log, for every engine message |
//!
//! and what runs it:
//!
//! | module | what |
//! |---|---|
//! | [`settings`] | listen address, peers, timeouts, block time → the engine's configuration |
//! | [`engine`] | starting Malachite with this node's identity; engine events into metrics |
//! | [`app`] | answering the engine with the block pipeline: propose, verify by executing, commit, sync |
//! | [`reassembly`] | gossiped stream messages put back in order, bounded in streams and bytes |
//! | [`store`] | commit certificates and undecided proposals beside the chain |
//! | [`metrics`] | height, round, peers, proposals, equivocations, votes, commit latency |
//! | [`byzantine`] | a test hook: a proposer of corrupted blocks |

pub mod app;
pub mod byzantine;
pub mod codec;
pub mod commit;
pub mod context;
pub mod context_impl;
pub mod engine;
pub mod error;
pub mod height;
pub mod metrics;
pub mod proposal;
pub mod reassembly;
pub mod scheme;
pub mod settings;
pub mod signing;
pub mod store;
pub mod streaming;
pub mod validators;
pub mod value;
pub mod vote;

pub use app::{App, AppHooks, AppSettings};
pub use byzantine::ByzantineMode;
pub use context::TimerhostContext;
pub use error::{ConsensusError, Result};
pub use height::Height;
pub use metrics::ConsensusMetrics;
pub use proposal::{Proposal, ProposalPart};
pub use settings::NetworkSettings;
pub use signing::{ConsensusKey, ConsensusSigner};
pub use store::DecidedStore;
pub use validators::{Validator, ValidatorAddress, ValidatorSet};
pub use value::BlockValue;
pub use vote::Vote;

pub use malachitebft_core_types as core_types;
pub use scheme::{Ed25519, PrivateKey, PublicKey, Signature};
