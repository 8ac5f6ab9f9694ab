//! The JSON-RPC 2.0 server: method table ([`methods`]) and HTTP listener
//! ([`start`]). Every method and an example of it is in `docs/RPC.md`.
//!
//! Reads go straight to the committed store (the chain is only ever written
//! by the node's block producer); transactions go to the [`Mempool`]; the
//! dev-only methods ask the producer through [`NodeControl`] and are refused
//! on non-dev chains. Dev snapshots are held here, in memory
//! ([`DevSnapshots`]); taking and restoring them is the producer's job, so
//! that neither happens while a block is being built or committed.

use std::net::SocketAddr;
use std::sync::Arc;

use jsonrpsee::server::{RpcModule, Server, ServerHandle};
use jsonrpsee::types::{ErrorObjectOwned, Params};
use parking_lot::Mutex;
use serde_json::{json, Value as Json};
use timerhost_chain::accounts::timer_config;
use timerhost_chain::Chain;
use timerhost_state::{EventFilter, KvBackend, StateRead, StateReadExt};
use timerhost_types::keys::{self, ActorMeta};
use timerhost_types::{Value, DEV_CHAIN_ID};

use crate::error::{Result, RpcError};
use crate::json::{
    amount, block_json, event_record_json, header_json, parse_address, parse_hash, quote_json,
    receipt_json, timer_json, value_to_json,
};
use crate::mempool::Mempool;
use crate::snapshots::{format_id, DevSnapshots, NodeSnapshot};

mod dead_letters;
mod governance;
mod limits;
mod proofs;
mod submit;
mod subscriptions;
mod sync;
mod views;

use limits::ExpensiveSlots;
pub use limits::{RpcLimits, DEFAULT_MAX_CONNECTIONS, EXPENSIVE_METHODS, MAX_BATCH_CALLS};
pub use submit::Origin;
pub use subscriptions::{MESSAGE_BUFFER, SEND_TIMEOUT};
pub use sync::MAX_RAW_HEADERS;

/// Most timers or events one call returns (a request may ask for fewer).
pub const MAX_LIST: usize = 10_000;

/// What the RPC server asks of the block producer.
pub trait NodeControl: Send + Sync {
    /// Produces `blocks` blocks now (dev); returns the heights produced.
    /// Blocks the calling thread until they are committed.
    fn mine(&self, blocks: u64) -> Result<Vec<u64>>;
    /// Sets the timestamp of the next block (dev; unix ms); must exceed the head's.
    fn set_next_timestamp(&self, timestamp: u64) -> Result<()>;
    /// Captures the store and the producer's dev state between two blocks
    /// (dev). Blocks the calling thread until it is taken.
    fn snapshot(&self) -> Result<NodeSnapshot>;
    /// Restores `snapshot` between two blocks: the store, the pending
    /// next-block timestamp, and a mempool purged of what admission now
    /// refuses (dev). Blocks the calling thread until it is done.
    fn revert(&self, snapshot: &NodeSnapshot) -> Result<()>;
    /// How blocks are produced, for `th_status` (e.g. `{"mode": "interval", "block_time_ms": 1000}`).
    fn describe(&self) -> Json;
    /// A transaction sent to this node entered its mempool (first time
    /// seen), from a client or relayed by a peer: a node of a validator
    /// network forwards a client's to its peers (and a peer's only if it
    /// is told to relay them).
    fn transaction_accepted(&self, _raw: &[u8], _origin: Origin) {}
    /// `th_getCommit(height)`: the certificate that decided block `height`
    /// (`null` if this node has none) — a validator network's nodes only.
    fn commit(&self, _height: u64) -> Result<Json> {
        Err(RpcError::InvalidParams(
            "th_getCommit answers on a validator network: this chain's blocks are produced by one node, with no commit certificates".into(),
        ))
    }
}

/// Everything the methods read or write.
pub struct RpcContext<B: KvBackend> {
    /// The chain (read-only here).
    pub chain: Arc<Chain<B>>,
    /// The mempool shared with the producer.
    pub mempool: Arc<Mutex<Mempool>>,
    /// The block producer.
    pub control: Arc<dyn NodeControl>,
    /// Dev snapshots taken with `dev_snapshot`, by id (memory only: lost
    /// when the node stops). Locked only briefly, so `th_status` can list
    /// them while a snapshot is being taken.
    snapshots: Mutex<DevSnapshots>,
    /// Held for a whole `dev_snapshot` or `dev_revert` (which wait for the
    /// producer), so concurrent calls cannot interleave ids and states.
    dev_op: Mutex<()>,
    /// What one request may read and how many expensive ones run at once
    /// (docs/RPC.md, "Bounds"; [`RpcContext::with_limits`]).
    limits: RpcLimits,
    /// Slots of the expensive queries running now.
    expensive: ExpensiveSlots,
    /// What the subscriptions share: one head poller, built `newHeads`.
    subscriptions: Arc<subscriptions::Shared>,
}

impl<B: KvBackend> RpcContext<B> {
    /// A context with no dev snapshots yet.
    pub fn new(
        chain: Arc<Chain<B>>,
        mempool: Arc<Mutex<Mempool>>,
        control: Arc<dyn NodeControl>,
    ) -> Self {
        Self {
            chain,
            mempool,
            control,
            snapshots: Mutex::new(DevSnapshots::default()),
            dev_op: Mutex::new(()),
            limits: RpcLimits::default(),
            expensive: ExpensiveSlots::new(&RpcLimits::default()),
            subscriptions: Arc::default(),
        }
    }

    /// This context with other limits.
    pub fn with_limits(mut self, limits: RpcLimits) -> Self {
        self.expensive = ExpensiveSlots::new(&limits);
        self.limits = limits;
        self
    }
}

type MethodResult = std::result::Result<Json, ErrorObjectOwned>;

/// Positional arguments: a JSON array, or a single object/value, or none.
fn args(params: &Params<'_>) -> Result<Vec<Json>> {
    match params.as_str() {
        None => Ok(Vec::new()),
        Some(s) => match serde_json::from_str::<Json>(s)
            .map_err(|e| RpcError::InvalidParams(format!("params are not valid JSON: {e}")))?
        {
            Json::Array(a) => Ok(a),
            Json::Null => Ok(Vec::new()),
            other => Ok(vec![other]),
        },
    }
}

fn arg_str<'a>(a: &'a [Json], i: usize, what: &str) -> Result<&'a str> {
    match a.get(i) {
        Some(Json::String(s)) => Ok(s),
        Some(other) => Err(RpcError::InvalidParams(format!(
            "parameter {i} ({what}) must be a string, got {other}"
        ))),
        None => Err(RpcError::InvalidParams(format!(
            "missing parameter {i} ({what})"
        ))),
    }
}

fn u64_of(v: &Json, what: &str) -> Result<u64> {
    match v {
        Json::Number(n) => n.as_u64(),
        Json::String(s) => {
            let s = s.trim();
            match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => s.parse().ok(),
            }
        }
        _ => None,
    }
    .ok_or_else(|| {
        RpcError::InvalidParams(format!("{what} must be a non-negative integer, got {v}"))
    })
}

fn opt_u64(obj: &Json, key: &str) -> Result<Option<u64>> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => u64_of(v, key).map(Some),
    }
}

fn filter_obj<'a>(
    a: &'a [Json],
    known: &[&str],
) -> Result<Option<&'a serde_json::Map<String, Json>>> {
    match a.first() {
        None | Some(Json::Null) => Ok(None),
        Some(Json::Object(m)) => {
            if let Some(k) = m.keys().find(|k| !known.contains(&k.as_str())) {
                return Err(RpcError::InvalidParams(format!(
                    "unknown filter field {k:?} (known: {})",
                    known.join(", ")
                )));
            }
            Ok(Some(m))
        }
        Some(other) => Err(RpcError::InvalidParams(format!(
            "the filter must be an object, got {other}"
        ))),
    }
}

/// An event position `{height, receipt_index, event_index}` (an event
/// record from an earlier answer works as is: other fields are ignored).
fn position_of(v: &Json) -> Result<(u64, u32, u32)> {
    let Json::Object(m) = v else {
        return Err(RpcError::InvalidParams(format!(
            "after must be an object {{height, receipt_index, event_index}} (e.g. the last event of the previous page), got {v}"
        )));
    };
    let field = |k: &str| -> Result<u64> {
        match m.get(k) {
            None | Some(Json::Null) => Err(RpcError::InvalidParams(format!(
                "after is missing {k:?} (it needs height, receipt_index and event_index)"
            ))),
            Some(v) => u64_of(v, &format!("after.{k}")),
        }
    };
    let index = |k: &str| -> Result<u32> {
        u32::try_from(field(k)?)
            .map_err(|_| RpcError::InvalidParams(format!("after.{k} does not fit 32 bits")))
    };
    Ok((
        field("height")?,
        index("receipt_index")?,
        index("event_index")?,
    ))
}

fn limit_of(obj: Option<&serde_json::Map<String, Json>>) -> Result<usize> {
    let l = match obj.and_then(|m| m.get("limit")) {
        None | Some(Json::Null) => MAX_LIST as u64,
        Some(v) => u64_of(v, "limit")?,
    };
    Ok((l as usize).clamp(1, MAX_LIST))
}

impl<B: KvBackend + 'static> RpcContext<B> {
    fn is_dev(&self) -> bool {
        self.chain.genesis().chain_id == DEV_CHAIN_ID
    }

    fn dev_only(&self, method: &str) -> Result<()> {
        if self.is_dev() {
            Ok(())
        } else {
            Err(RpcError::DevOnly {
                method: method.into(),
                chain_id: self.chain.genesis().chain_id,
                dev_chain_id: DEV_CHAIN_ID,
            })
        }
    }

    fn status(&self) -> Result<Json> {
        let head = self.chain.head()?;
        let snapshots: Vec<Json> = self
            .snapshots
            .lock()
            .list()
            .into_iter()
            .map(|(id, height)| json!({ "id": format_id(id), "height": height }))
            .collect();
        let pool = self.mempool.lock();
        let mut status = json!({
            "chain_id": self.chain.genesis().chain_id,
            "dev": self.is_dev(),
            "version": env!("CARGO_PKG_VERSION"),
            "height": head.height,
            "head_hash": head.hash(),
            "timestamp": head.timestamp_ms,
            "state_root": head.state_root,
            "mempool": { "size": pool.len(), "capacity": pool.config().max_txs },
            "producer": self.control.describe(),
            "timers": self.timers_status()?,
            // Blocks, receipts and events are kept from this height on
            // (1: the whole history; `[storage] keep_blocks`).
            "history_floor": self.chain.store().history_floor()?,
        });
        if self.is_dev() {
            status["snapshots"] = json!(snapshots);
        }
        Ok(status)
    }

    fn get_block(&self, a: &[Json]) -> Result<Json> {
        let height = match a.first() {
            None | Some(Json::Null) => self.chain.head()?.height,
            Some(Json::String(s)) if s == "latest" => self.chain.head()?.height,
            Some(v) => u64_of(v, "block height (or \"latest\")")?,
        };
        let full = match a.get(1) {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(o) => {
                return Err(RpcError::InvalidParams(format!(
                    "parameter 1 (full transactions) must be a boolean, got {o}"
                )))
            }
        };
        Ok(match self.chain.store().block(height)? {
            None => Json::Null,
            Some(b) => {
                let mut j = block_json(&b, full);
                let receipts = self.chain.store().receipts(height)?;
                j["receipt_count"] = json!(receipts.len());
                j
            }
        })
    }

    fn get_receipt(&self, a: &[Json]) -> Result<Json> {
        let hash = parse_hash("transaction hash", arg_str(a, 0, "transaction hash")?)?;
        Ok(match self.chain.store().receipt(&hash)? {
            None => {
                let pool = self.mempool.lock();
                if pool.contains(&hash) {
                    json!({ "tx_hash": hash, "pending": true })
                } else if let Some(reason) = pool.dropped_reason(&hash) {
                    json!({ "tx_hash": hash, "pending": false, "dropped": reason })
                } else {
                    Json::Null
                }
            }
            Some((loc, r)) => {
                let mut j = receipt_json(&r);
                j["height"] = json!(loc.height);
                j["index"] = json!(loc.index);
                j
            }
        })
    }

    fn get_account(&self, a: &[Json]) -> Result<Json> {
        let addr = parse_address(arg_str(a, 0, "address")?)?;
        let acct = self.chain.account(&addr)?;
        let pending = self.mempool.lock().pending_nonce(&addr, acct.nonce);
        Ok(json!({
            "address": addr,
            "balance": amount(acct.balance),
            "nonce": acct.nonce,
            "pending_nonce": pending,
            "is_actor": acct.is_actor,
        }))
    }

    fn get_commit(&self, a: &[Json]) -> Result<Json> {
        let height = u64_of(
            a.first()
                .ok_or_else(|| RpcError::InvalidParams("missing parameter 0 (height)".into()))?,
            "height",
        )?;
        self.control.commit(height)
    }

    fn get_nonce(&self, a: &[Json]) -> Result<Json> {
        let addr = parse_address(arg_str(a, 0, "address")?)?;
        let acct = self.chain.account(&addr)?;
        match a.get(1).and_then(Json::as_str).unwrap_or("latest") {
            "latest" => Ok(json!(acct.nonce)),
            "pending" => Ok(json!(self.mempool.lock().pending_nonce(&addr, acct.nonce))),
            other => Err(RpcError::InvalidParams(format!(
                "parameter 1 must be \"latest\" or \"pending\", got {other:?}"
            ))),
        }
    }

    fn get_code(&self, a: &[Json]) -> Result<Json> {
        let addr = parse_address(arg_str(a, 0, "actor address")?)?;
        let state = self.chain.store().state();
        let Some(meta) = state.get_decoded::<ActorMeta>(&keys::code(&addr))? else {
            return Ok(Json::Null);
        };
        let source = state
            .get(&keys::code_source(&meta.code_hash))?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        Ok(json!({
            "address": addr,
            "code_hash": meta.code_hash,
            "deployer": meta.deployer,
            "source": source,
        }))
    }

    fn get_storage(&self, a: &[Json]) -> Result<Json> {
        let addr = parse_address(arg_str(a, 0, "actor address")?)?;
        let key = arg_str(a, 1, "storage key")?;
        let raw = match a.get(2) {
            None | Some(Json::Null) => false,
            Some(Json::String(e)) if e == "raw" => true,
            Some(other) => {
                return Err(RpcError::InvalidParams(format!(
                    "parameter 2 (encoding) must be \"raw\" or absent, got {other}"
                )))
            }
        };
        let state = self.chain.store().state();
        Ok(match state.get(&keys::storage(&addr, key.as_bytes()))? {
            None => Json::Null,
            Some(bytes) if raw => Json::String(crate::json::hex0x(&bytes)),
            Some(bytes) => {
                let v = Value::from_bytes(&bytes).map_err(|e| {
                    RpcError::Storage(timerhost_state::StorageError::Corrupt {
                        what: "actor storage value",
                        key: key.to_string(),
                        reason: e.to_string(),
                    })
                })?;
                value_to_json(&v)
            }
        })
    }

    /// `th_getStorageKeys(actor, prefix, limit?)`: the keys of an actor's
    /// storage starting with `prefix`, in key order (at most `limit`, ≤
    /// [`MAX_LIST`]). How a wallet lists its cron jobs (`owner:<addr>:`).
    fn get_storage_keys(&self, a: &[Json]) -> Result<Json> {
        let addr = parse_address(arg_str(a, 0, "actor address")?)?;
        let prefix = arg_str(a, 1, "key prefix")?;
        let limit = match a.get(2) {
            None | Some(Json::Null) => MAX_LIST,
            Some(v) => (u64_of(v, "limit")? as usize).clamp(1, MAX_LIST),
        };
        let state = self.chain.store().state();
        let base = keys::storage_prefix(&addr).len();
        let (start, end) = keys::storage_scan_range(&addr, prefix.as_bytes(), None);
        let found = state.scan(&start, Some(&end), limit)?;
        Ok(Json::Array(
            found
                .into_iter()
                .map(|(k, _)| Json::String(String::from_utf8_lossy(&k[base..]).into_owned()))
                .collect(),
        ))
    }

    fn get_timer(&self, a: &[Json]) -> Result<Json> {
        let id = parse_hash("timer id", arg_str(a, 0, "timer id")?)?;
        let state = self.chain.store().state();
        Ok(timerhost_timers::store::get(&state, &id)?
            .map(|t| timer_json(&t))
            .unwrap_or(Json::Null))
    }

    fn get_timers(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["actor", "height", "fee_payer", "limit"])?;
        let limit = limit_of(f)?;
        let state = self.chain.store().state();
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let timers = match (get("actor"), get("height"), get("fee_payer")) {
            (Some(actor), None, None) => {
                let actor = parse_address(actor.as_str().unwrap_or_default())?;
                timerhost_timers::store::by_actor(&state, &actor, limit)?
            }
            (None, Some(h), None) => {
                timerhost_timers::store::by_height(&state, u64_of(h, "height")?, limit)?
            }
            (None, None, Some(p)) => {
                let payer = parse_address(p.as_str().unwrap_or_default())?;
                timerhost_timers::store::by_fee_payer(&state, &payer, limit)?
            }
            _ => {
                return Err(RpcError::InvalidParams(
                    "give exactly one of \"actor\", \"height\" or \"fee_payer\"".into(),
                ))
            }
        };
        Ok(Json::Array(timers.iter().map(timer_json).collect()))
    }

    /// A page the read bound cut short is an error carrying what was found
    /// and where to resume: an empty or short array would say "there is
    /// nothing more".
    fn read_limit(
        &self,
        found: &[timerhost_state::EventRecord],
        resume_from: Option<u64>,
    ) -> Result<()> {
        match resume_from {
            None => Ok(()),
            Some(resume_from) => Err(RpcError::ReadLimit {
                method: "th_getEvents",
                max_reads: self.limits.max_event_reads,
                found: found.iter().map(event_record_json).collect(),
                resume_from,
            }),
        }
    }

    fn get_events(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["name", "actor", "from", "to", "limit", "after"])?;
        let limit = limit_of(f)?;
        let mut filter = EventFilter {
            limit,
            ..EventFilter::default()
        };
        let mut after = None;
        if let Some(m) = f {
            filter.name = match m.get("name") {
                None | Some(Json::Null) => None,
                Some(Json::String(s)) => Some(s.clone()),
                Some(o) => {
                    return Err(RpcError::InvalidParams(format!(
                        "name must be a string, got {o}"
                    )))
                }
            };
            filter.emitter = match m.get("actor") {
                None | Some(Json::Null) => None,
                Some(v) => Some(parse_address(v.as_str().unwrap_or_default())?),
            };
            let obj = Json::Object(m.clone());
            filter.from_height = opt_u64(&obj, "from")?;
            filter.to_height = opt_u64(&obj, "to")?;
            after = match m.get("after") {
                None | Some(Json::Null) => None,
                Some(v) => Some(position_of(v)?),
            };
        }
        let store = self.chain.store();
        let events = match after {
            // A cursor before `from` changes nothing.
            Some((h, ri, ei)) if h >= filter.from_height.unwrap_or(0) => {
                // The rest of the cursor's own block first. The store pages
                // by height only, so that block's matches are read whole
                // (bounded by one block) and those up to the cursor skipped;
                // this is what lets a client page through a block holding
                // more than `limit` events without skipping any.
                let mut out = Vec::new();
                if filter.to_height.is_none_or(|to| h <= to) {
                    let same = store.events(&EventFilter {
                        from_height: Some(h),
                        to_height: Some(h),
                        limit: 0,
                        ..filter.clone()
                    })?;
                    out.extend(
                        same.into_iter()
                            .filter(|e| (e.receipt_index, e.event_index) > (ri, ei))
                            .take(limit),
                    );
                }
                if out.len() < limit {
                    filter.from_height = Some(h.saturating_add(1));
                    filter.limit = limit - out.len();
                    let page = store.events_within(&filter, self.limits.max_event_reads)?;
                    out.extend(page.events);
                    self.read_limit(&out, page.resume_from)?;
                }
                out
            }
            _ => {
                let page = store.events_within(&filter, self.limits.max_event_reads)?;
                self.read_limit(&page.events, page.resume_from)?;
                page.events
            }
        };
        Ok(Json::Array(events.iter().map(event_record_json).collect()))
    }

    /// Governance status of timers and the deposits their escrow holds.
    fn timers_status(&self) -> Result<Json> {
        let state = self.chain.store().state();
        let status = timerhost_timers::control::status(&state)?;
        let escrow =
            timerhost_state::accounts::load(&state, &timerhost_types::TIMER_DEPOSIT_ESCROW)?;
        let config = timer_config(&state)?;
        let lane = timerhost_timers::lane::market(&state, &config)?;
        Ok(json!({
            "status": status.as_str(),
            "pending": timerhost_timers::store::pending_count(&state)?,
            "fired_total": timerhost_timers::store::deliveries_total(&state)?,
            "deposits_held": crate::json::amount(escrow.balance),
            "ordering": config.ordering.as_str(),
            "lane_basefee": lane.basefee,
            "lane_median_tip": lane.median_tip,
        }))
    }

    /// `th_quoteTimer [{height?, timestamp_ms?, gas_limit?, bid? |
    /// max_priority_fee_per_cycle?, max_fee_per_cycle?}]`: the quote a
    /// transaction in the next block would get from `pvm_host.timer_quote`
    /// (a time must be after the head's timestamp).
    fn quote_timer(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(
            a,
            &[
                "height",
                "timestamp_ms",
                "gas_limit",
                "bid",
                "max_priority_fee_per_cycle",
                "max_fee_per_cycle",
                "retries",
                "book",
            ],
        )?;
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let number = |k: &'static str| get(k).map(|v| u64_of(v, k)).transpose();
        let bid = match (number("bid")?, number("max_priority_fee_per_cycle")?) {
            (Some(_), Some(_)) => {
                return Err(RpcError::InvalidParams(
                    "bid and max_priority_fee_per_cycle name the same priority fee: give one"
                        .into(),
                ))
            }
            (a, b) => a.or(b),
        };
        let request = timerhost_types::QuoteRequest {
            height: number("height")?,
            timestamp_ms: number("timestamp_ms")?,
            gas_limit: number("gas_limit")?,
            bid,
            max_fee_per_cycle: number("max_fee_per_cycle")?,
            retries: number("retries")?
                .map(|n| {
                    u32::try_from(n).map_err(|_| {
                        RpcError::InvalidParams(format!(
                            "retries {n} is far more than any chain allows"
                        ))
                    })
                })
                .transpose()?,
            book: match get("book") {
                None => false,
                Some(v) => v
                    .as_bool()
                    .ok_or_else(|| RpcError::InvalidParams("book must be true or false".into()))?,
            },
        };
        match self.chain.quote_timer(request)? {
            Ok(quote) => Ok(quote_json(&quote)),
            Err(e) => Err(RpcError::InvalidParams(e.to_string())),
        }
    }

    /// `th_getGlobalbox [{limit?}]`: the Globalbox's entries in order (at
    /// most `limit`, default and cap `MAX_LIST`), with their score at the
    /// enqueue and at the head.
    fn globalbox(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["limit"])?;
        let limit = f
            .and_then(|m| m.get("limit"))
            .filter(|v| !v.is_null())
            .map(|v| u64_of(v, "limit"))
            .transpose()?
            .map_or(MAX_LIST, |l| (l as usize).min(MAX_LIST));
        let state = self.chain.store().state();
        let config = timer_config(&state)?;
        let head = self.chain.head()?.height;
        let listed = timerhost_timers::globalbox::listing(&state, &config, head, limit)?;
        Ok(Json::Array(
            listed.iter().map(crate::json::globalbox_json).collect(),
        ))
    }

    fn mine(&self, a: &[Json]) -> Result<Json> {
        self.dev_only("dev_mine")?;
        let n = match a.first() {
            None | Some(Json::Null) => 1,
            Some(v) => u64_of(v, "block count")?,
        };
        if n == 0 || n > 10_000 {
            return Err(RpcError::InvalidParams(format!(
                "block count must be between 1 and 10000, got {n}"
            )));
        }
        let heights = self.control.mine(n)?;
        let head = self.chain.head()?;
        Ok(json!({
            "mined": heights.len(),
            "from": heights.first(),
            "to": heights.last(),
            "head": header_json(&head),
        }))
    }

    fn set_next_timestamp(&self, a: &[Json]) -> Result<Json> {
        self.dev_only("dev_setNextBlockTimestamp")?;
        let ts = u64_of(
            a.first()
                .ok_or_else(|| RpcError::InvalidParams("missing parameter 0 (timestamp)".into()))?,
            "timestamp",
        )?;
        self.control.set_next_timestamp(ts)?;
        Ok(json!(ts))
    }

    fn snapshot(&self) -> Result<Json> {
        self.dev_only("dev_snapshot")?;
        let _op = self.dev_op.lock();
        let snapshot = self.control.snapshot()?;
        let height = snapshot.height;
        let id = self.snapshots.lock().insert(snapshot);
        tracing::info!(id = %format_id(id), height, "dev snapshot taken");
        Ok(json!(format_id(id)))
    }

    fn revert(&self, a: &[Json]) -> Result<Json> {
        self.dev_only("dev_revert")?;
        let id = u64_of(
            a.first().ok_or_else(|| {
                RpcError::InvalidParams("missing parameter 0 (snapshot id, e.g. \"0x1\")".into())
            })?,
            "snapshot id",
        )?;
        let _op = self.dev_op.lock();
        // Unknown (or already invalidated) ids answer false, as anvil's
        // evm_revert does, so a script can tell without parsing an error.
        let Some(snapshot) = self.snapshots.lock().get(id).cloned() else {
            return Ok(json!(false));
        };
        // What the subscriptions read before or during the revert may be of
        // blocks it replaces (they look for a fork only when this moves).
        self.subscriptions.reverting();
        let reverted = self.control.revert(&snapshot);
        self.subscriptions.reverting();
        reverted?;
        self.snapshots.lock().invalidate_from(id);
        tracing::info!(id = %format_id(id), height = snapshot.height, "reverted to dev snapshot");
        Ok(json!(true))
    }
}

/// Names of every method, in documentation order.
pub const METHODS: &[&str] = &[
    "th_status",
    "th_sendRawTransaction",
    "th_sendRawTransactions",
    "th_getBlock",
    "th_getReceipt",
    "th_getBalance",
    "th_getNonce",
    "th_getAccount",
    "th_getCode",
    "th_getStorage",
    "th_getStorageKeys",
    "th_getTimer",
    "th_getTimers",
    "th_quoteTimer",
    "th_getGlobalbox",
    "th_getDeadLetters",
    "th_getEvents",
    "th_getTimerConfig",
    "th_getBasefeeConfig",
    "th_getValidators",
    "th_getProposals",
    "th_getBlockStats",
    "th_getAhead",
    "th_getTimersPage",
    "th_getTimerLife",
    "th_getWatches",
    "th_getCronJobs",
    "th_getProof",
    "th_getCommit",
    "th_subscribe",
    "th_unsubscribe",
    "th_getSnapshots",
    "th_getSnapshotChunk",
    "th_getRawHeaders",
    "dev_mine",
    "dev_setNextBlockTimestamp",
    "dev_snapshot",
    "dev_revert",
];

/// Builds the method table over `ctx`.
pub fn methods<B: KvBackend + 'static>(ctx: RpcContext<B>) -> RpcModule<RpcContext<B>> {
    let mut m = RpcModule::new(ctx);
    // Cheap methods (a few keys each) run on the server's workers; the
    // expensive ones wait for a slot (without a thread), then run on the
    // blocking pool; the dev methods, which wait for the producer, run on
    // the blocking pool.
    macro_rules! method {
        ($name:literal, |$c:ident, $a:ident| $body:expr) => {
            if EXPENSIVE_METHODS.contains(&$name) {
                m.register_async_method($name, |params, ctx, _| async move {
                    let _slot = ctx.expensive.acquire($name, &ctx.limits).await?;
                    let params = params.into_owned();
                    let ctx = ctx.clone();
                    tokio::task::spawn_blocking(move || -> MethodResult {
                        let $c = &*ctx;
                        let $a = args(&params)?;
                        let _ = &$a;
                        $body.map_err(ErrorObjectOwned::from)
                    })
                    .await
                    .map_err(|e| {
                        ErrorObjectOwned::from(RpcError::Producer(format!("{} failed: {e}", $name)))
                    })?
                })
                .expect("method names are unique");
            } else if $name.starts_with("dev_") {
                m.register_blocking_method($name, |params, ctx, _| -> MethodResult {
                    let $c = &*ctx;
                    let $a = args(&params)?;
                    let _ = &$a;
                    $body.map_err(ErrorObjectOwned::from)
                })
                .expect("method names are unique");
            } else {
                m.register_method($name, |params, ctx, _| -> MethodResult {
                    let $c = &*ctx;
                    let $a = args(&params)?;
                    let _ = &$a;
                    $body.map_err(ErrorObjectOwned::from)
                })
                .expect("method names are unique");
            }
        };
    }
    method!("th_status", |c, a| c.status());
    method!("th_sendRawTransaction", |c, a| c.send_raw(&a));
    method!("th_sendRawTransactions", |c, a| c.send_raws(&a));
    method!("th_getBlock", |c, a| c.get_block(&a));
    method!("th_getReceipt", |c, a| c.get_receipt(&a));
    method!("th_getBalance", |c, a| c
        .get_account(&a)
        .map(|j| j["balance"].clone()));
    method!("th_getNonce", |c, a| c.get_nonce(&a));
    method!("th_getAccount", |c, a| c.get_account(&a));
    method!("th_getCode", |c, a| c.get_code(&a));
    method!("th_getStorage", |c, a| c.get_storage(&a));
    method!("th_getStorageKeys", |c, a| c.get_storage_keys(&a));
    method!("th_getTimer", |c, a| c.get_timer(&a));
    method!("th_getTimers", |c, a| c.get_timers(&a));
    method!("th_quoteTimer", |c, a| c.quote_timer(&a));
    method!("th_getGlobalbox", |c, a| c.globalbox(&a));
    method!("th_getDeadLetters", |c, a| c.dead_letters(&a));
    method!("th_getEvents", |c, a| c.get_events(&a));
    method!("th_getTimerConfig", |c, a| c.timer_config(&a));
    method!("th_getBasefeeConfig", |c, a| c.basefee_config(&a));
    method!("th_getValidators", |c, a| c.validators(&a));
    method!("th_getProposals", |c, a| c.proposals(&a));
    method!("th_getBlockStats", |c, a| c.block_stats(&a));
    method!("th_getAhead", |c, a| c.ahead(&a));
    method!("th_getTimersPage", |c, a| c.timers_page(&a));
    method!("th_getTimerLife", |c, a| c.timer_life(&a));
    method!("th_getWatches", |c, a| c.watches(&a));
    method!("th_getCronJobs", |c, a| c.cron_jobs(&a));
    method!("th_getProof", |c, a| c.get_proof(&a));
    method!("th_getCommit", |c, a| c.get_commit(&a));
    method!("th_getSnapshots", |c, a| c.snapshots());
    method!("th_getSnapshotChunk", |c, a| c.snapshot_chunk(&a));
    method!("th_getRawHeaders", |c, a| c.raw_headers(&a));
    method!("dev_mine", |c, a| c.mine(&a));
    method!("dev_setNextBlockTimestamp", |c, a| c.set_next_timestamp(&a));
    method!("dev_snapshot", |c, a| c.snapshot());
    method!("dev_revert", |c, a| c.revert(&a));
    subscriptions::register(&mut m);
    m
}

/// Starts the HTTP server on `addr` (on the current tokio runtime). Returns
/// the bound address (useful with port 0) and a handle that stops it.
pub async fn start<B: KvBackend + 'static>(
    addr: SocketAddr,
    ctx: RpcContext<B>,
) -> Result<(SocketAddr, ServerHandle)> {
    let err = |e: &dyn std::fmt::Display| RpcError::Server {
        addr: addr.to_string(),
        reason: e.to_string(),
    };
    let server = Server::builder()
        .max_connections(ctx.limits.max_connections)
        .max_request_body_size(8 * 1024 * 1024)
        .set_message_buffer_capacity(subscriptions::MESSAGE_BUFFER)
        .set_batch_request_config(jsonrpsee::server::BatchRequestConfig::Limit(
            MAX_BATCH_CALLS,
        ))
        .set_http_middleware(tower::ServiceBuilder::new().layer(crate::dashboard::DashboardLayer))
        .build(addr)
        .await
        .map_err(|e| err(&e))?;
    let bound = server.local_addr().map_err(|e| err(&e))?;
    let handle = server.start(methods(ctx));
    Ok((bound, handle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mempool::MempoolConfig;
    use timerhost_chain::testing::{dev_builders, dev_chain};
    use timerhost_state::MemoryBackend;
    use timerhost_types::{Address, SignedTransaction};

    /// Mines by proposing the mempool's candidates directly.
    struct DirectMiner {
        chain: Arc<Chain<MemoryBackend>>,
        pool: Arc<Mutex<Mempool>>,
    }

    impl NodeControl for DirectMiner {
        fn mine(&self, blocks: u64) -> Result<Vec<u64>> {
            let mut out = Vec::new();
            for _ in 0..blocks {
                let c = &self.chain;
                let txs = self
                    .pool
                    .lock()
                    .candidates(|a| Ok(c.account(a)?.nonce), 100)?;
                let ts = c.head()?.timestamp_ms + 1;
                let p = c.produce_block(&txs, ts, Address::ZERO)?;
                self.pool.lock().remove_stale(|a| Ok(c.account(a)?.nonce))?;
                out.push(p.executed.block.header.height);
            }
            Ok(out)
        }
        fn set_next_timestamp(&self, _: u64) -> Result<()> {
            Err(RpcError::Producer(
                "not supported by this test miner".into(),
            ))
        }
        fn snapshot(&self) -> Result<NodeSnapshot> {
            crate::snapshots::take(&self.chain, None)
        }
        fn revert(&self, snapshot: &NodeSnapshot) -> Result<()> {
            crate::snapshots::restore(&self.chain, &self.pool, snapshot)?;
            Ok(())
        }
        fn describe(&self) -> Json {
            json!({ "mode": "manual" })
        }
    }

    /// Calls `method` on `m` with the JSON array `p` as its parameters
    /// (the RPC's tests, `submit`'s too).
    pub(super) async fn call(
        m: &RpcModule<RpcContext<MemoryBackend>>,
        method: &str,
        p: Json,
    ) -> std::result::Result<Json, String> {
        let params = match p {
            Json::Array(items) => {
                let mut b = jsonrpsee::core::params::ArrayParams::new();
                for i in items {
                    b.insert(i).unwrap();
                }
                b
            }
            _ => unreachable!("tests pass arrays"),
        };
        m.call::<_, Json>(method, params)
            .await
            .map_err(|e| e.to_string())
    }

    /// #48: the configs of genesis and of a recent height are read as they
    /// were; a height outside the kept window is refused with what is kept.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn configs_are_read_at_genesis_and_at_recent_heights() {
        let chain = Arc::new(dev_chain());
        chain.store().set_proof_blocks(4);
        let pool = Arc::new(Mutex::new(Mempool::new(MempoolConfig::default())));
        let control = Arc::new(DirectMiner {
            chain: chain.clone(),
            pool: pool.clone(),
        });
        control.mine(8).unwrap();
        let m = methods(RpcContext::new(chain.clone(), pool, control));
        let head = chain.head().unwrap().height;
        let now = call(&m, "th_getTimerConfig", json!([])).await.unwrap();
        assert_eq!(
            call(&m, "th_getTimerConfig", json!([0])).await.unwrap(),
            crate::json::timer_config_json(&chain.genesis().timers)
        );
        assert_eq!(
            call(&m, "th_getTimerConfig", json!([head - 2]))
                .await
                .unwrap(),
            now
        );
        assert_eq!(
            call(&m, "th_getBasefeeConfig", json!([0])).await.unwrap(),
            crate::json::basefee_config_json(&chain.genesis().basefee)
        );
        assert!(call(&m, "th_getBasefeeConfig", json!([head - 1]))
            .await
            .unwrap()["cycle_basefee"]
            .is_string());
        let refused = call(&m, "th_getTimerConfig", json!([head - 7]))
            .await
            .unwrap_err();
        assert!(refused.contains("genesis's is at height 0"), "{refused}");
        let beyond = call(&m, "th_getTimerConfig", json!([head + 1]))
            .await
            .unwrap_err();
        assert!(beyond.contains("beyond"), "{beyond}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn submit_mine_and_query_in_process() {
        let chain = Arc::new(dev_chain());
        let pool = Arc::new(Mutex::new(Mempool::new(MempoolConfig::default())));
        let control = Arc::new(DirectMiner {
            chain: chain.clone(),
            pool: pool.clone(),
        });
        let m = methods(RpcContext::new(chain.clone(), pool, control));
        let mut b = dev_builders();
        let to = b[9].address();
        let from = b[1].address();
        let t0 = b[1].transfer(to, 7);
        let t1 = b[1].transfer(to, 8);
        for t in [&t1, &t0] {
            let h = call(
                &m,
                "th_sendRawTransaction",
                json!([crate::json::hex0x(&t.to_bytes())]),
            )
            .await
            .unwrap();
            assert_eq!(h, json!(t.hash()));
        }
        assert_eq!(
            call(&m, "th_getNonce", json!([from, "pending"]))
                .await
                .unwrap(),
            json!(2)
        );
        let dup = call(
            &m,
            "th_sendRawTransaction",
            json!([crate::json::hex0x(&t0.to_bytes())]),
        )
        .await
        .unwrap_err();
        assert!(dup.contains("already in the mempool"), "{dup}");
        assert_eq!(
            call(&m, "th_status", json!([])).await.unwrap()["mempool"]["size"],
            2
        );
        let mined = call(&m, "dev_mine", json!([1])).await.unwrap();
        assert_eq!(mined["to"], 1);
        let block = call(&m, "th_getBlock", json!(["latest", true]))
            .await
            .unwrap();
        assert_eq!(block["txs"][0]["hash"], json!(t0.hash()));
        assert_eq!(block["txs"][1]["kind"]["amount"], "8");
        let r = call(&m, "th_getReceipt", json!([t1.hash()])).await.unwrap();
        assert_eq!(
            (r["status"].clone(), r["height"].clone(), r["index"].clone()),
            (json!("success"), json!(1), json!(1))
        );
        assert_eq!(
            call(&m, "th_getNonce", json!([from])).await.unwrap(),
            json!(2)
        );
        let bal = call(&m, "th_getBalance", json!([to])).await.unwrap();
        assert!(bal.as_str().unwrap().ends_with("015"), "{bal}");
        assert_eq!(
            call(&m, "th_getBlock", json!([99])).await.unwrap(),
            Json::Null
        );
        let e = call(&m, "th_getNonce", json!([from, "soon"]))
            .await
            .unwrap_err();
        assert!(e.contains("must be") && e.contains("soon"), "{e}");
        let e = call(&m, "dev_mine", json!([0])).await.unwrap_err();
        assert!(e.contains("between 1 and 10000"), "{e}");
        let e = call(&m, "th_getTimers", json!([{}])).await.unwrap_err();
        assert!(e.contains("exactly one of"), "{e}");
        assert_eq!(
            call(&m, "th_getGlobalbox", json!([{}])).await.unwrap(),
            json!([]),
            "FIFO: nothing queued"
        );
        let e = call(&m, "th_getGlobalbox", json!([{ "lmit": 3 }]))
            .await
            .unwrap_err();
        assert!(e.contains("lmit"), "{e}");
        assert_eq!(
            call(&m, "th_getTimers", json!([{ "height": 5 }]))
                .await
                .unwrap(),
            json!([])
        );
        assert!(call(&m, "th_getTimerConfig", json!([])).await.unwrap()["max_ttl_blocks"].is_u64());
        let head = chain.head().unwrap().height;
        let q = call(
            &m,
            "th_quoteTimer",
            json!([{ "height": head + 5, "gas_limit": 1000 }]),
        )
        .await
        .unwrap();
        assert_eq!(
            (&q["height"], &q["gas_limit"], &q["queued"], &q["fits"]),
            (&json!(head + 5), &json!(1000), &json!(0), &json!(true))
        );
        assert!(q["max_cost"].is_string() && q["deposit"].is_string(), "{q}");
        let e = call(&m, "th_quoteTimer", json!([{ "height": head + 1 }]))
            .await
            .unwrap_err();
        assert!(
            e.contains("timer_quote: height") && e.contains("not in the future"),
            "{e}"
        );
        let e = call(&m, "th_quoteTimer", json!([{ "hieght": 9 }]))
            .await
            .unwrap_err();
        assert!(e.contains("hieght"), "an unknown field is named: {e}");
    }

    fn module() -> (
        RpcModule<RpcContext<MemoryBackend>>,
        Arc<Chain<MemoryBackend>>,
    ) {
        let chain = Arc::new(dev_chain());
        let pool = Arc::new(Mutex::new(Mempool::new(MempoolConfig::default())));
        let control = Arc::new(DirectMiner {
            chain: chain.clone(),
            pool: pool.clone(),
        });
        (
            methods(RpcContext::new(chain.clone(), pool, control)),
            chain,
        )
    }

    async fn send(m: &RpcModule<RpcContext<MemoryBackend>>, tx: &SignedTransaction) -> Json {
        call(
            m,
            "th_sendRawTransaction",
            json!([crate::json::hex0x(&tx.to_bytes())]),
        )
        .await
        .unwrap()
    }

    /// A refusal's `data.reason`, read from the raw JSON-RPC answer.
    async fn refusal_reason(
        m: &RpcModule<RpcContext<MemoryBackend>>,
        tx: &SignedTransaction,
    ) -> Json {
        let body = json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "th_sendRawTransaction",
            "params": [crate::json::hex0x(&tx.to_bytes())],
        });
        let (answer, _) = m.raw_json_request(&body.to_string(), 1).await.unwrap();
        let answer: Json = serde_json::from_str(&answer).unwrap();
        answer["error"]["data"]["reason"].clone()
    }

    /// Every refusal names its reason for programs (`timerhost load` counts
    /// them): a duplicate is found by hash, a nonce past the window and a
    /// stranger's bad signature each by their own name.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn refusals_carry_a_machine_readable_reason() {
        let (m, _chain) = module();
        let mut b = dev_builders();
        let to = b[9].address();
        let first = b[1].transfer(to, 1);
        send(&m, &first).await;
        assert_eq!(refusal_reason(&m, &first).await, "already_pending");
        let mut far = b[1].clone();
        far.nonce = 10_000;
        assert_eq!(
            refusal_reason(&m, &far.transfer(to, 1)).await,
            "nonce_too_far_ahead"
        );
        let mut forged = b[2].transfer(to, 1);
        forged.signature[64] = 9;
        assert_eq!(refusal_reason(&m, &forged).await, "bad_signature");
        let mut poor = timerhost_chain::testing::TxBuilder::new(
            timerhost_types::PrivateKey::from_bytes(&[7; 32]).unwrap(),
            timerhost_types::DEV_CHAIN_ID,
        );
        assert_eq!(
            refusal_reason(&m, &poor.transfer(to, 1)).await,
            "insufficient_balance"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dev_snapshot_and_revert_restore_the_chain_and_invalidate_later_snapshots() {
        let (m, chain) = module();
        let mut b = dev_builders();
        let to = b[9].address();
        send(&m, &b[1].transfer(to, 7)).await;
        call(&m, "dev_mine", json!([2])).await.unwrap();
        let before = chain.head().unwrap();
        let balance = call(&m, "th_getBalance", json!([to])).await.unwrap();

        let first = call(&m, "dev_snapshot", json!([])).await.unwrap();
        assert_eq!(first, json!("0x1"));
        let later = b[1].transfer(to, 8);
        send(&m, &later).await;
        call(&m, "dev_mine", json!([3])).await.unwrap();
        assert_eq!(chain.head().unwrap().height, before.height + 3);
        assert_eq!(
            call(&m, "dev_snapshot", json!([])).await.unwrap(),
            json!("0x2")
        );
        assert_eq!(
            call(&m, "th_status", json!([])).await.unwrap()["snapshots"],
            json!([
                { "id": "0x1", "height": before.height },
                { "id": "0x2", "height": before.height + 3 }
            ])
        );
        // A transaction sent after the second snapshot, still pending.
        let pending = b[1].transfer(to, 9);
        send(&m, &pending).await;

        assert_eq!(
            call(&m, "dev_revert", json!(["0x1"])).await.unwrap(),
            json!(true)
        );
        assert_eq!(chain.head().unwrap(), before);
        assert_eq!(
            call(&m, "th_getBalance", json!([to])).await.unwrap(),
            balance
        );
        assert_eq!(
            call(&m, "th_getReceipt", json!([later.hash()]))
                .await
                .unwrap(),
            Json::Null
        );
        assert_eq!(
            call(&m, "th_getNonce", json!([b[1].address()]))
                .await
                .unwrap(),
            json!(1)
        );
        // The pending nonce-2 transaction is 1 ahead of the rewound nonce:
        // still admissible, so it stays (waiting for a new nonce 1).
        let r = call(&m, "th_getReceipt", json!([pending.hash()]))
            .await
            .unwrap();
        assert_eq!(r["pending"], true, "{r}");

        // Reverting invalidates that snapshot and every later one; ids are
        // not reused.
        for id in [json!("0x1"), json!("0x2"), json!(2)] {
            assert_eq!(
                call(&m, "dev_revert", json!([id])).await.unwrap(),
                json!(false)
            );
        }
        assert_eq!(
            call(&m, "th_status", json!([])).await.unwrap()["snapshots"],
            json!([])
        );
        assert_eq!(
            call(&m, "dev_snapshot", json!([])).await.unwrap(),
            json!("0x3")
        );
        // The chain goes on from the restored head.
        call(&m, "dev_mine", json!([1])).await.unwrap();
        assert_eq!(chain.head().unwrap().height, before.height + 1);
        assert_eq!(chain.head().unwrap().parent_hash, before.hash());
        let e = call(&m, "dev_revert", json!([])).await.unwrap_err();
        assert!(e.contains("missing parameter 0 (snapshot id"), "{e}");
        let e = call(&m, "dev_revert", json!(["one"])).await.unwrap_err();
        assert!(e.contains("snapshot id must be"), "{e}");
        assert_eq!(
            call(&m, "dev_revert", json!([3])).await.unwrap(),
            json!(true)
        );
        assert_eq!(chain.head().unwrap(), before);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_page_with_an_after_cursor_inside_and_across_blocks() {
        let (m, _chain) = module();
        let mut b = dev_builders();
        let deploy = b[1].deploy("mock", vec![], 0);
        let actor = timerhost_types::actor_address(&b[1].address(), 0);
        send(&m, &deploy).await;
        call(&m, "dev_mine", json!([1])).await.unwrap();
        // Five events in block 2, two in block 3.
        for blocks in [5, 2] {
            for i in 0..blocks {
                let tx = b[1].call(
                    actor,
                    "emit",
                    vec![Value::Str("Tick".into()), Value::int(i)],
                    0,
                );
                send(&m, &tx).await;
            }
            call(&m, "dev_mine", json!([1])).await.unwrap();
        }
        let all = call(&m, "th_getEvents", json!([{ "name": "Tick" }]))
            .await
            .unwrap();
        let all = all.as_array().unwrap().clone();
        assert_eq!(all.len(), 7);
        // Pages of two, each after the last event of the previous page.
        let mut paged = Vec::new();
        let mut after = Json::Null;
        loop {
            let page = call(
                &m,
                "th_getEvents",
                json!([{ "name": "Tick", "limit": 2, "after": after }]),
            )
            .await
            .unwrap();
            let page = page.as_array().unwrap().clone();
            if page.is_empty() {
                break;
            }
            after = page.last().unwrap().clone();
            paged.extend(page);
        }
        assert_eq!(paged, all);
        // `from` beyond the cursor wins; `to` bounds the cursor's block too.
        let p = call(&m, "th_getEvents", json!([{ "from": 3, "after": all[0] }]))
            .await
            .unwrap();
        assert_eq!(p.as_array().unwrap().len(), 2, "{p}");
        let p = call(
            &m,
            "th_getEvents",
            json!([{ "name": "Tick", "to": 2, "after": all[3] }]),
        )
        .await
        .unwrap();
        assert_eq!(p, json!([all[4]]));
        let e = call(&m, "th_getEvents", json!([{ "after": { "height": 1 } }]))
            .await
            .unwrap_err();
        assert!(
            e.contains("after is missing") && e.contains("receipt_index"),
            "{e}"
        );
    }

    /// The dashboard's queries (#33) answer within their bounds whatever a
    /// caller asks: pages hold at most 100, the timeline 240 blocks, "ahead"
    /// 2,000 leaves; a bad kind or cursor is refused naming it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dashboard_queries_stay_within_their_bounds() {
        let (m, _chain) = module();
        let mut b = dev_builders();
        let actor = timerhost_types::actor_address(&b[1].address(), 0);
        send(&m, &b[1].deploy("mock", vec![], 10u128.pow(22))).await;
        call(&m, "dev_mine", json!([1])).await.unwrap();
        let many = b[1].call(
            actor,
            "schedule_many",
            vec![Value::int(150u64), Value::int(50u64), Value::int(1_000u64)],
            0,
        );
        send(&m, &many).await;
        call(&m, "dev_mine", json!([1])).await.unwrap();

        let first = call(
            &m,
            "th_getTimersPage",
            json!([{ "limit": 1_000_000_000u64 }]),
        )
        .await
        .unwrap();
        assert_eq!(first["timers"].as_array().unwrap().len(), 100);
        assert_eq!(first["pending"], 150);
        let rest = call(&m, "th_getTimersPage", json!([{ "cursor": first["next"] }]))
            .await
            .unwrap();
        assert_eq!(rest["timers"].as_array().unwrap().len(), 25);
        let e = call(&m, "th_getTimersPage", json!([{ "kind": "nope" }]))
            .await
            .unwrap_err();
        assert!(e.contains("nope") && e.contains("is not one of"), "{e}");
        let e = call(&m, "th_getTimersPage", json!([{ "cursor": "zz" }]))
            .await
            .unwrap_err();
        assert!(e.contains("cursor"), "{e}");

        let stats = call(&m, "th_getBlockStats", json!([{ "count": u64::MAX }]))
            .await
            .unwrap();
        assert_eq!(
            stats["blocks"].as_array().unwrap().len(),
            2,
            "every block there is"
        );
        let ahead = call(
            &m,
            "th_getAhead",
            json!([{ "blocks": u64::MAX, "seconds": u64::MAX }]),
        )
        .await
        .unwrap();
        assert_eq!(ahead["by_height"][0]["height"], 50);
        assert_eq!(ahead["by_height"][0]["queued"], 150);

        let id = first["timers"][0]["timer_id"].clone();
        let life = call(&m, "th_getTimerLife", json!([id])).await.unwrap();
        assert_eq!(life["pending"], true);
        assert!(
            life["why"].as_str().unwrap().contains("not due yet"),
            "{life}"
        );
        assert_eq!(life["events"][0]["name"], "TimerScheduled");

        // Once it has fired, its life is still found by its id alone.
        call(&m, "dev_mine", json!([50])).await.unwrap();
        let life = call(&m, "th_getTimerLife", json!([id])).await.unwrap();
        assert_eq!(life["pending"], false);
        let names: Vec<&str> = life["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["TimerScheduled", "TimerFired"], "{life}");
        assert!(life["why"].as_str().unwrap().contains("fired"), "{life}");
        let never = call(
            &m,
            "th_getTimerLife",
            json!([format!("0x{}", "ab".repeat(32))]),
        )
        .await
        .unwrap();
        assert_eq!(never["why"], "no timer with this id was ever scheduled");
    }

    /// #50 defect 3: `th_getEvents` with a name and an actor that never
    /// meet read every block of the chain. Now it reads at most
    /// `limits.max_event_reads` entries and says where to resume, and
    /// resuming from there reaches the end of the range.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn defect3_get_events_stops_at_its_read_bound_and_says_where_to_resume() {
        let chain = Arc::new(dev_chain());
        let pool = Arc::new(Mutex::new(Mempool::new(MempoolConfig::default())));
        let control = Arc::new(DirectMiner {
            chain: chain.clone(),
            pool: pool.clone(),
        });
        let ctx = RpcContext::new(chain.clone(), pool, control).with_limits(RpcLimits {
            max_event_reads: 10,
            ..RpcLimits::default()
        });
        let m = methods(ctx);
        let mut b = dev_builders();
        let actor = timerhost_types::actor_address(&b[1].address(), 0);
        send(&m, &b[1].deploy("mock", vec![], 0)).await;
        call(&m, "dev_mine", json!([1])).await.unwrap();
        for i in 0..30 {
            send(
                &m,
                &b[2].call(actor, "emit", vec![Value::str("Ping"), Value::int(i)], 0),
            )
            .await;
            call(&m, "dev_mine", json!([1])).await.unwrap();
        }
        // Every Ping is the actor's; none is the other account's.
        let filter = |from: u64| json!([{ "name": "Ping", "actor": b[3].address(), "from": from }]);
        let mut from = 0;
        let mut stops = 0;
        loop {
            match call(&m, "th_getEvents", filter(from)).await {
                Ok(events) => {
                    assert_eq!(events, json!([]));
                    break;
                }
                Err(e) => {
                    assert!(e.contains("read its bound of 10 entries"), "{e}");
                    let resume: u64 = e
                        .split("\"resume_from\":")
                        .nth(1)
                        .map(|t| {
                            t.chars()
                                .take_while(char::is_ascii_digit)
                                .collect::<String>()
                        })
                        .and_then(|n| n.parse().ok())
                        .unwrap_or_else(|| panic!("no resume height in {e}"));
                    assert!(resume > from, "{e}");
                    from = resume;
                    stops += 1;
                }
            }
        }
        assert!(stops >= 2, "{stops} stops for 30 blocks of Pings");
        // A query that fills its page within the bound is answered as before.
        let pings = call(&m, "th_getEvents", json!([{ "name": "Ping", "limit": 5 }]))
            .await
            .unwrap();
        assert_eq!(pings.as_array().unwrap().len(), 5);
    }

    /// #50 defect 3: `th_getBlockStats` decoded whole blocks (40 blocks of
    /// 12 MB: 195 ms a call) to read header fields. It reads the header
    /// records now: with the blocks themselves gone, it still answers.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn defect3_block_stats_read_header_records_not_blocks() {
        let (m, chain) = module();
        let mut b = dev_builders();
        let to = b[9].address();
        for _ in 0..3 {
            send(&m, &b[1].transfer(to, 1)).await;
            call(&m, "dev_mine", json!([1])).await.unwrap();
        }
        let head = chain.head().unwrap().height;
        let mut batch = timerhost_state::WriteBatch::new();
        for h in 0..=head {
            let mut key = vec![b'B'];
            key.extend_from_slice(&h.to_be_bytes());
            batch.delete(key);
        }
        chain.store().backend().write(batch).unwrap();
        assert!(chain.store().block(head).unwrap().is_none());
        let stats = call(&m, "th_getBlockStats", json!([{ "count": 3 }]))
            .await
            .unwrap();
        let blocks = stats["blocks"].as_array().unwrap();
        assert_eq!(blocks.len(), 3, "{stats}");
        assert!(blocks.iter().all(|b| b["txs"] == json!(1)), "{stats}");
        assert_eq!(
            call(&m, "th_status", json!([])).await.unwrap()["height"],
            json!(head)
        );
    }
}
