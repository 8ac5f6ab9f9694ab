//! `th_getProof` (#48): a value of the state — an account, an actor's
//! storage key, a pending timer — or its absence, with the proof that ties
//! it to the state root of the block it names (docs/RPC.md, "Proofs";
//! `timerhost_state::proofs`): at the head, or at any of the node's last
//! `[storage] proof_blocks` heights (`timerhost_state::recent`); an older
//! height is refused by name.

use serde_json::{json, Value as Json};
use timerhost_state::{KvBackend, StateProof};
use timerhost_types::{keys, Value};

use super::RpcContext;
use crate::error::{Result, RpcError};
use crate::json::{amount, hex0x, parse_address, parse_hash, value_to_json};

fn field<'a>(request: &'a Json, name: &str) -> Result<&'a str> {
    request[name]
        .as_str()
        .ok_or_else(|| RpcError::InvalidParams(format!("th_getProof needs \"{name}\" (a string)")))
}

/// The request's `height`, if given (`None`: the head).
fn requested_height(request: &Json) -> Result<Option<u64>> {
    match request.get("height").filter(|h| !h.is_null()) {
        Some(asked) => Ok(Some(super::u64_of(asked, "height")?)),
        None => Ok(None),
    }
}

/// A value with no proof is the caller's question, not the node's failure.
fn not_provable(e: timerhost_state::StorageError) -> RpcError {
    match e {
        timerhost_state::StorageError::NotProvable(why) => RpcError::InvalidParams(why),
        other => other.into(),
    }
}

impl<B: KvBackend + 'static> RpcContext<B> {
    /// `th_getProof({"kind": "timer", "timer_id"})`: a pending timer's
    /// proof of presence (`timerhost_timers::proof`).
    fn timer_proof(&self, request: &Json) -> Result<Json> {
        let id = parse_hash("timer id", field(request, "timer_id")?)?;
        let (height, proof) =
            timerhost_timers::proof::prove_at(self.chain.store(), &id, requested_height(request)?)
                .map_err(not_provable)?;
        let root = self
            .chain
            .store()
            .header(height)?
            .map(|h| h.header.state_root.to_string());
        Ok(json!({
            "kind": "timer",
            "height": height,
            "state_root": root,
            "timer_id": id.to_string(),
            "decoded": crate::json::timer_json(&proof.timer),
            "bucket_timers": proof.bucket.len(),
            "proof": hex0x(&borsh::to_vec(&proof).expect("writing to a Vec cannot fail")),
        }))
    }

    /// `th_getProof({kind, …, height?})`.
    pub(super) fn get_proof(&self, a: &[Json]) -> Result<Json> {
        let request = a
            .first()
            .filter(|r| r.is_object())
            .ok_or_else(|| RpcError::InvalidParams(
                "th_getProof takes one object: {\"kind\": \"account\", \"address\": …} or {\"kind\": \"storage\", \"actor\": …, \"key\": …}".into(),
            ))?;
        let kind = field(request, "kind")?;
        let key = match kind {
            "account" => keys::account(&parse_address(field(request, "address")?)?),
            "storage" => keys::storage(
                &parse_address(field(request, "actor")?)?,
                field(request, "key")?.as_bytes(),
            ),
            "timer" => return self.timer_proof(request),
            other => {
                return Err(RpcError::InvalidParams(format!(
                    "unknown proof kind {other:?}: \"account\", \"storage\" or \"timer\""
                )))
            }
        };
        let store = self.chain.store();
        let proof = match requested_height(request)? {
            Some(height) => store.prove_at(&key, height),
            None => store.prove(&key),
        }
        .map_err(not_provable)?;
        let mut answer = proof_json(kind, &proof);
        for name in ["address", "actor"] {
            if let Some(v) = request.get(name) {
                answer[name] = v.clone();
            }
        }
        if kind == "storage" {
            answer["storage_key"] = request["key"].clone();
        }
        Ok(answer)
    }
}

/// A proof as `th_getProof` answers it.
fn proof_json(kind: &str, p: &StateProof) -> Json {
    let decoded = match (kind, &p.value) {
        (_, None) => Json::Null,
        ("account", Some(bytes)) => match timerhost_types::decode::<keys::Account>(bytes) {
            Ok(acct) => json!({
                "balance": amount(acct.balance),
                "nonce": acct.nonce,
                "is_actor": acct.is_actor,
                "schedule_nonce": acct.schedule_nonce,
                "live_timers": acct.live_timers,
            }),
            Err(_) => Json::Null,
        },
        (_, Some(bytes)) => Value::from_bytes(bytes)
            .map(|v| value_to_json(&v))
            .unwrap_or(Json::Null),
    };
    json!({
        "kind": kind,
        "height": p.height,
        "state_root": p.state_root.to_string(),
        "key": hex0x(&p.key),
        "value": p.value.as_deref().map(hex0x),
        "decoded": decoded,
        "proof": hex0x(&p.proof),
    })
}
