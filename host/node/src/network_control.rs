//! The RPC's view of a network node ([`NetworkControl`]): the dev methods
//! refused (blocks are decided by consensus), transactions forwarded to
//! peers, `th_status`'s producer section, and `th_getCommit`'s
//! certificates checked against their height's validator set (#48).

use std::sync::Arc;

use serde_json::{json, Value as Json};
use timerhost_chain::Chain;
use timerhost_consensus::{ConsensusMetrics, DecidedStore, ValidatorSet};
use timerhost_rpc::{NodeControl, NodeSnapshot, Origin, RpcError};
use timerhost_state::SledBackend;

/// The RPC's view of a network node: dev methods refused, transactions
/// forwarded to peers.
pub(crate) struct NetworkControl {
    pub(crate) describe: Json,
    pub(crate) gossip: crate::gossip::Gossip,
    /// This node's consensus key's address, if it has one.
    pub(crate) key: Option<String>,
    /// The engine's view: the set of the height being decided (#32).
    pub(crate) consensus: Arc<ConsensusMetrics>,
    /// The full-disk guard (`producer.disk` in `th_status`).
    pub(crate) disk: crate::disk::DiskGuard,
    /// The decided blocks' certificates (`th_getCommit`).
    pub(crate) decided: DecidedStore,
    /// The chain, for the validator set a certificate is checked against.
    pub(crate) chain: Arc<Chain<SledBackend>>,
}

fn not_on_network(what: &str) -> RpcError {
    RpcError::Producer(format!(
        "{what} is not available on a validator network: blocks are decided by consensus (use `timerhost dev` for a dev chain)"
    ))
}

impl NodeControl for NetworkControl {
    fn mine(&self, _blocks: u64) -> std::result::Result<Vec<u64>, RpcError> {
        Err(not_on_network("dev_mine"))
    }

    fn set_next_timestamp(&self, _timestamp: u64) -> std::result::Result<(), RpcError> {
        Err(not_on_network("dev_setNextBlockTimestamp"))
    }

    fn snapshot(&self) -> std::result::Result<NodeSnapshot, RpcError> {
        Err(not_on_network("dev_snapshot"))
    }

    fn revert(&self, _snapshot: &NodeSnapshot) -> std::result::Result<(), RpcError> {
        Err(not_on_network("dev_revert"))
    }

    /// The producer as `th_status` shows it, with the validator set of the
    /// height being decided (it changes by proposal, #32).
    fn describe(&self) -> Json {
        use std::sync::atomic::Ordering;
        let mut d = self.describe.clone();
        let size = self.consensus.validators.load(Ordering::Relaxed);
        if size > 0 {
            d["validators"] = json!(size);
            let voting = self.consensus.in_validator_set.load(Ordering::Relaxed) == 1;
            d["validator"] = json!(self.key.clone().filter(|_| voting));
        }
        d["disk"] = self.disk.describe();
        d
    }

    fn transaction_accepted(&self, raw: &[u8], origin: Origin) {
        self.gossip.accepted(raw, origin);
    }

    /// The certificate of `height`, checked here against the set of that
    /// height (`timerhost_consensus::commit`), with everything a client
    /// needs to check it again.
    fn commit(&self, height: u64) -> std::result::Result<Json, RpcError> {
        let internal = |e: String| RpcError::Producer(e);
        let Some(cert) = self
            .decided
            .certificate(height)
            .map_err(|e| internal(e.to_string()))?
        else {
            return Ok(Json::Null);
        };
        let record = self
            .chain
            .validators_at(height)?
            .ok_or_else(|| internal(format!("no validator set for height {height}")))?;
        let set = ValidatorSet::from_record(&record).map_err(|e| internal(e.to_string()))?;
        let chain_id = self.chain.genesis().chain_id;
        let checked = timerhost_consensus::commit::check_commit(chain_id, &cert, &set);
        let block_hash = self.chain.store().header(height)?.map(|h| h.header.hash());
        Ok(json!({
            "height": height,
            "chain_id": chain_id,
            "round": cert.round.as_i64(),
            "block_hash": cert.value_id.to_string(),
            "matches_stored_block": block_hash == Some(cert.value_id),
            "signatures": cert.commit_signatures.iter().map(|s| json!({
                "validator": s.address.to_string(),
                "signature": format!("0x{}", hex::encode(s.signature.0)),
            })).collect::<Vec<_>>(),
            "validators": set.validators().iter().map(|v| json!({
                "address": v.address.to_string(),
                "public_key": format!("0x{}", hex::encode(v.public_key.as_bytes())),
                "power": v.voting_power,
            })).collect::<Vec<_>>(),
            "quorum": checked.as_ref().is_ok(),
            "signed_power": checked.as_ref().map(|c| c.signed_power).ok(),
            "total_power": set.validators().iter().map(|v| v.voting_power).sum::<u64>(),
            "problem": checked.err(),
            "certificate": format!("0x{}", hex::encode(timerhost_consensus::codec::encode_certificate(&cert))),
        }))
    }
}
