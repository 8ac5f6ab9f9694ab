//! Starting Malachite for one node: its network identity (a libp2p key
//! derived from the validator's consensus key, with a signed proof that the
//! peer id belongs to that validator), the write-ahead log, sync and
//! consensus actors, and the watcher that turns engine events into metrics.

use std::sync::Arc;
use std::time::Duration;

use malachitebft_app_channel::app::engine::util::events::Event;
use malachitebft_app_channel::{
    Channels, ConsensusContext, EngineBuilder, EngineHandle, NetworkContext, NetworkIdentity,
    NetworkRequest, RequestContext, SyncContext, WalContext,
};
use malachitebft_codec::Codec;
use malachitebft_core_consensus::SignedConsensusMsg;
use malachitebft_network::Keypair;
use malachitebft_signing::Signer;

use crate::codec::BorshCodec;
use crate::context::TimerhostContext;
use crate::error::{ConsensusError, Result};
use crate::metrics::ConsensusMetrics;
use crate::settings::NetworkSettings;
use crate::signing::ConsensusSigner;

fn engine_err(what: &str, e: impl std::fmt::Display) -> ConsensusError {
    ConsensusError::Engine(format!("{what}: {e}"))
}

/// Starts the engine with this node's `signer`. A `validator` (its key in
/// the set) votes and proposes; otherwise the node follows: it verifies,
/// syncs and votes nothing.
pub async fn start(
    settings: &NetworkSettings,
    signer: ConsensusSigner,
    validator: bool,
) -> Result<(Channels<TimerhostContext>, EngineHandle)> {
    std::fs::create_dir_all(&settings.dir)
        .map_err(|e| engine_err("creating the consensus directory", e))?;
    let address = signer.address();
    let (identity, consensus) = match validator {
        true => {
            let keypair = Keypair::ed25519_from_bytes(signer.secret_bytes())
                .map_err(|e| engine_err("deriving the network key", e))?;
            let peer_id = keypair.public().to_peer_id();
            let proof = signer
                .sign_validator_proof(signer.public_key_bytes(), peer_id.to_bytes())
                .await
                .map_err(|e| engine_err("signing the validator proof", e))?;
            let proof_bytes = BorshCodec
                .encode(&proof)
                .map_err(|e| engine_err("encoding the validator proof", e))?;
            let identity = NetworkIdentity::new_validator(
                settings.moniker.clone(),
                keypair,
                address.to_string(),
                proof_bytes,
            );
            let consensus = ConsensusContext::new_validator(
                address,
                Box::new(signer.clone()),
                Box::new(signer),
            );
            (identity, consensus)
        }
        false => {
            let identity =
                NetworkIdentity::new(settings.moniker.clone(), Keypair::generate_ed25519(), None);
            let consensus = ConsensusContext::new_full_node(address, Box::new(signer));
            (identity, consensus)
        }
    };
    EngineBuilder::new(TimerhostContext, settings.engine_config())
        .with_default_wal(WalContext::new(settings.wal_dir(), BorshCodec))
        .with_default_network(NetworkContext::new(identity, BorshCodec))
        .with_default_sync(SyncContext::new(BorshCodec))
        .with_default_consensus(consensus)
        .with_default_request(RequestContext::new(100))
        .build()
        .await
        .map_err(|e| engine_err("starting the engine", e))
}

/// Counts votes and proposals from the engine's events, and polls the peer
/// count, into `metrics` (until the engine stops).
pub fn watch(channels: &Channels<TimerhostContext>, metrics: Arc<ConsensusMetrics>) {
    let mut events = channels.events.subscribe();
    let m = metrics.clone();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            match event {
                Event::Published(SignedConsensusMsg::Vote(_)) => {
                    ConsensusMetrics::inc(&m.votes_published)
                }
                Event::Received(SignedConsensusMsg::Vote(_)) => {
                    ConsensusMetrics::inc(&m.votes_received)
                }
                _ => {}
            }
        }
    });
    let requests = channels.net_requests.clone();
    tokio::spawn(async move {
        loop {
            match NetworkRequest::dump_state(&requests).await {
                Ok(Some(dump)) => ConsensusMetrics::set(&metrics.peers, dump.peers.len() as u64),
                Ok(None) => {}
                Err(malachitebft_app_channel::ConsensusRequestError::Closed) => break,
                Err(_) => {}
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    });
}
