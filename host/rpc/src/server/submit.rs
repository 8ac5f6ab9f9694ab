//! Submissions: `th_sendRawTransaction(raw)` and
//! `th_sendRawTransactions([raw, …], relayed?)` (#46).
//!
//! The plural takes up to [`MAX_BATCH_CALLS`] transactions in one call and
//! answers each in place — its hash, or the error that refused it — so a
//! client or a peer pays one JSON-RPC envelope per batch instead of one per
//! transaction. It is how a node's gossip reaches its peers: with
//! `relayed = true` the transactions came from a peer, and a network node
//! does not forward them again unless it is configured to relay
//! (`[consensus] tx_relay`). Every peer of a full mesh got them from the
//! node their client chose, so forwarding them again made each one cross
//! every link of the mesh twice more, each copy decoded and refused by
//! hash at the other end (on four validators, nine of every twelve
//! deliveries).
//!
//! Either way, a transaction already held is refused by its hash, computed
//! from the raw bytes before they are decoded or a signature is checked.

use serde_json::{json, Value as Json};
use timerhost_chain::validation::{decode_tx, TxError};
use timerhost_state::KvBackend;
use timerhost_types::{keccak256, Hash, MAX_TX_BYTES};

use super::{arg_str, RpcContext, MAX_BATCH_CALLS};
use crate::error::{Result, RpcError};
use crate::json::parse_hex;
use crate::mempool::validate;

/// Where a submitted transaction came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A client of this node.
    Client,
    /// A peer's gossip (`th_sendRawTransactions` with `relayed = true`).
    Peer,
}

impl<B: KvBackend> RpcContext<B> {
    pub(super) fn send_raw(&self, a: &[Json]) -> Result<Json> {
        let bytes = parse_hex("transaction", arg_str(a, 0, "raw transaction hex")?)?;
        Ok(json!(self.admit(&bytes, Origin::Client)?))
    }

    pub(super) fn send_raws(&self, a: &[Json]) -> Result<Json> {
        let raws = match a.first() {
            Some(Json::Array(raws)) => raws,
            other => {
                return Err(RpcError::InvalidParams(format!(
                    "parameter 0 (raw transactions) must be an array of hex strings, got {}",
                    other.map_or("nothing".to_string(), Json::to_string)
                )))
            }
        };
        if raws.len() > MAX_BATCH_CALLS as usize {
            return Err(RpcError::InvalidParams(format!(
                "{} transactions in one call; at most {MAX_BATCH_CALLS}",
                raws.len()
            )));
        }
        let origin = match a.get(1) {
            None | Some(Json::Null) | Some(Json::Bool(false)) => Origin::Client,
            Some(Json::Bool(true)) => Origin::Peer,
            Some(other) => {
                return Err(RpcError::InvalidParams(format!(
                    "parameter 1 (relayed by a peer) must be a boolean, got {other}"
                )))
            }
        };
        let answers = raws
            .iter()
            .enumerate()
            .map(|(i, raw)| {
                let admitted = match raw {
                    Json::String(hex) => parse_hex(&format!("transaction {i}"), hex)
                        .and_then(|bytes| self.admit(&bytes, origin)),
                    other => Err(RpcError::InvalidParams(format!(
                        "transaction {i} must be a hex string, got {other}"
                    ))),
                };
                match admitted {
                    Ok(hash) => json!(hash),
                    Err(e) => {
                        let e = jsonrpsee::types::ErrorObjectOwned::from(e);
                        json!({ "error": { "code": e.code(), "message": e.message(), "data": e.data() } })
                    }
                }
            })
            .collect();
        Ok(Json::Array(answers))
    }

    /// Admits one transaction's canonical bytes into the mempool; returns
    /// its hash.
    fn admit(&self, bytes: &[u8], origin: Origin) -> Result<Hash> {
        // The size first: hashing an oversized entry is work it never buys.
        if bytes.len() > MAX_TX_BYTES {
            return Err(RpcError::rejected(&TxError::TooLarge {
                size: bytes.len(),
                max: MAX_TX_BYTES,
            }));
        }
        // A transaction already held (a peer's gossip, a client's retry) is
        // refused by its hash before it is decoded or its signature
        // checked: the hash of a transaction's canonical bytes is its hash
        // (one sent in other bytes that decode to it is still caught by
        // `insert`, by the hash of what it decodes to).
        let held_as = keccak256(bytes);
        let gap = {
            let pool = self.mempool.lock();
            pool.refuse_held(&held_as)?;
            pool.config().max_nonce_gap
        };
        let tx = decode_tx(bytes).map_err(|e| RpcError::rejected(&e))?;
        let admission = validate(&self.chain, &tx, gap)?;
        let sender = admission.sender;
        let hash = self.mempool.lock().insert(tx, admission)?;
        tracing::debug!(%hash, %sender, ?origin, "transaction accepted into the mempool");
        self.control.transaction_accepted(bytes, origin);
        Ok(hash)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use parking_lot::Mutex;
    use serde_json::{json, Value as Json};
    use timerhost_chain::testing::{dev_builders, dev_chain};
    use timerhost_state::MemoryBackend;

    use super::Origin;
    use crate::error::{Result, RpcError};
    use crate::json::hex0x;
    use crate::mempool::{Mempool, MempoolConfig};
    use crate::server::tests::call;
    use crate::server::{methods, NodeControl, RpcContext, MAX_BATCH_CALLS};
    use crate::snapshots::NodeSnapshot;

    /// Records what the mempool accepted and from whom; produces nothing.
    #[derive(Default)]
    struct Recorder {
        accepted: Mutex<Vec<(Vec<u8>, Origin)>>,
    }

    impl NodeControl for Recorder {
        fn mine(&self, _: u64) -> Result<Vec<u64>> {
            Err(RpcError::Producer("no producer".into()))
        }
        fn set_next_timestamp(&self, _: u64) -> Result<()> {
            Err(RpcError::Producer("no producer".into()))
        }
        fn snapshot(&self) -> Result<NodeSnapshot> {
            Err(RpcError::Producer("no producer".into()))
        }
        fn revert(&self, _: &NodeSnapshot) -> Result<()> {
            Err(RpcError::Producer("no producer".into()))
        }
        fn describe(&self) -> Json {
            json!({ "mode": "none" })
        }
        fn transaction_accepted(&self, raw: &[u8], origin: Origin) {
            self.accepted.lock().push((raw.to_vec(), origin));
        }
    }

    /// An RPC served over a dev chain whose submissions `Recorder` sees.
    fn served() -> (
        jsonrpsee::RpcModule<RpcContext<MemoryBackend>>,
        Arc<Mutex<Mempool>>,
        Arc<Recorder>,
    ) {
        let pool = Arc::new(Mutex::new(Mempool::new(MempoolConfig::default())));
        let control = Arc::new(Recorder::default());
        let m = methods(RpcContext::new(
            Arc::new(dev_chain()),
            pool.clone(),
            control.clone(),
        ));
        (m, pool, control)
    }

    /// Each transaction of a batch is answered in place — its hash, or
    /// the error that refused it, naming which and why — and only those
    /// admitted reach the node, marked with where they came from.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_of_raw_transactions_is_answered_one_by_one() {
        let (m, pool, control) = served();
        let mut b = dev_builders();
        let to = b[9].address();
        let (t0, t1, t2) = (
            b[1].transfer(to, 1),
            b[1].transfer(to, 2),
            b[2].transfer(to, 3),
        );
        let mut forged = t2.to_bytes();
        let last = forged.len() - 2;
        forged[last] ^= 1; // inside the signature
        let answers = call(
            &m,
            "th_sendRawTransactions",
            json!([[
                hex0x(&t0.to_bytes()),
                "0x12",
                5,
                hex0x(&t0.to_bytes()),
                "not hex",
                hex0x(&forged),
                hex0x(&vec![1u8; timerhost_types::MAX_TX_BYTES + 1]),
                hex0x(&t1.to_bytes()),
            ]]),
        )
        .await
        .unwrap();
        let a = answers.as_array().unwrap();
        assert_eq!(a.len(), 8, "{answers}");
        assert_eq!(a[0], json!(t0.hash()));
        assert_eq!(a[7], json!(t1.hash()));
        let message = |i: usize| a[i]["error"]["message"].as_str().unwrap_or("").to_string();
        assert!(
            message(1).contains("malformed") || message(1).contains("Malformed"),
            "{}",
            a[1]
        );
        assert!(
            message(2).contains("transaction 2 must be a hex string"),
            "{}",
            a[2]
        );
        assert!(message(3).contains("already in the mempool"), "{}", a[3]);
        assert!(message(4).contains("transaction 4"), "{}", a[4]);
        assert!(
            a[5]["error"]["code"].is_i64(),
            "the forged signature is refused: {}",
            a[5]
        );
        assert_eq!(pool.lock().len(), 2);
        let accepted = control.accepted.lock().clone();
        assert_eq!(
            accepted,
            vec![
                (t0.to_bytes(), Origin::Client),
                (t1.to_bytes(), Origin::Client)
            ]
        );

        // Relayed by a peer: admitted the same, marked as a peer's.
        let relayed = call(
            &m,
            "th_sendRawTransactions",
            json!([[hex0x(&t2.to_bytes())], true]),
        )
        .await
        .unwrap();
        assert_eq!(relayed, json!([t2.hash()]));
        assert_eq!(control.accepted.lock()[2], (t2.to_bytes(), Origin::Peer));
        // The singular is a client's.
        let t3 = b[3].transfer(to, 4);
        call(&m, "th_sendRawTransaction", json!([hex0x(&t3.to_bytes())]))
            .await
            .unwrap();
        assert_eq!(control.accepted.lock()[3].1, Origin::Client);
    }

    /// A call is bounded like a JSON-RPC batch, and its parameters are
    /// checked before any transaction is looked at.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_batch_larger_than_the_bound_or_malformed_is_refused_whole() {
        let (m, pool, control) = served();
        let mut b = dev_builders();
        let to = b[9].address();
        let valid = hex0x(&b[1].transfer(to, 1).to_bytes());
        let mut many = vec![json!(valid)];
        many.resize(MAX_BATCH_CALLS as usize + 1, json!("0x00"));
        let e = call(&m, "th_sendRawTransactions", json!([many]))
            .await
            .unwrap_err();
        assert!(
            e.contains("1001 transactions") && e.contains("at most 1000"),
            "{e}"
        );
        let e = call(&m, "th_sendRawTransactions", json!([valid]))
            .await
            .unwrap_err();
        assert!(e.contains("must be an array"), "{e}");
        let e = call(&m, "th_sendRawTransactions", json!([[valid], "yes"]))
            .await
            .unwrap_err();
        assert!(e.contains("parameter 1") && e.contains("boolean"), "{e}");
        assert_eq!(pool.lock().len(), 0, "nothing admitted");
        assert!(control.accepted.lock().is_empty());
    }
}
