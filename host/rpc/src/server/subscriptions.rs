//! Pushed events over WebSocket (#48): `th_subscribe` / `th_unsubscribe`,
//! notifications as `th_subscription` (docs/RPC.md, "Subscriptions").
//!
//! - `["newHeads", {"from_height"?}]`: one notification per block — its
//!   header fields and its timer summary.
//! - `["events", {name?, actor?, from_height?}]`: per block with matching
//!   events, `{height, events}` (filtered as `th_getEvents` filters).
//! - `["timer", "0x<id>"]`: every event of one timer, per block, until it
//!   is no longer pending; then the subscription ends.
//!
//! Each subscription is a task that follows the committed head (read in
//! process every [`POLL`]) from its cursor, so delivery is in block order
//! with every notification naming its `height`; a client that reconnects
//! with `from_height` = the last height it saw + 1 gets no gap and no
//! duplicate (BFT finality: a committed block never changes, so there is
//! no reorganisation to report; a dev chain's `dev_revert` ends the
//! subscription with an error naming the height to resume from). A resume below the node's history floor
//! (pruned, or before a state sync) is refused by name. A slow client is
//! dropped, never waited for by the node: each notification waits at most
//! [`SEND_TIMEOUT`] for room in the connection's buffer (the server's,
//! [`MESSAGE_BUFFER`] messages), then the subscription ends with an error
//! naming the height to resume from.

use std::sync::Arc;
use std::time::Duration;

use jsonrpsee::core::server::{PendingSubscriptionSink, SubscriptionMessage};
use jsonrpsee::core::StringError;
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde_json::{json, Value as Json};
use timerhost_state::{EventFilter, KvBackend};
use timerhost_types::Hash;

use super::RpcContext;
use crate::error::RpcError;
use crate::json::{event_record_json, header_json, parse_address, parse_hash};

/// How often a subscription looks for a new head.
pub const POLL: Duration = Duration::from_millis(25);
/// How long one notification may wait for room before the client is
/// dropped as too slow.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(5);
/// Messages the server buffers per connection (the bound on what a slow
/// client holds up; jsonrpsee's `message_buffer_capacity`).
pub const MESSAGE_BUFFER: u32 = 1024;
/// Blocks whose hashes a subscription remembers to find where a dev
/// chain's revert forked.
pub const REMEMBERED: usize = 256;
/// Blocks one subscription may ask to replay from its `from_height`.
pub const MAX_REPLAY_BLOCKS: u64 = 100_000;

/// What a subscription follows.
#[derive(Clone, Debug)]
enum Topic {
    NewHeads,
    Events(EventFilter),
    Timer(Hash),
}

fn invalid(why: String) -> ErrorObjectOwned {
    RpcError::InvalidParams(why).into()
}

/// Parses `th_subscribe`'s parameters: the topic and where to start.
fn parse(params: &Params<'_>) -> Result<(Topic, Option<u64>), ErrorObjectOwned> {
    let list: Vec<Json> = params.parse().map_err(|_| {
        invalid("th_subscribe takes [\"newHeads\" | \"events\" | \"timer\", options]".into())
    })?;
    let kind = list.first().and_then(Json::as_str).unwrap_or_default();
    let options = list.get(1).cloned().unwrap_or(Json::Null);
    let from = |o: &Json| -> Result<Option<u64>, ErrorObjectOwned> {
        match o.get("from_height") {
            None | Some(Json::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| invalid(format!("from_height must be a height, got {v}"))),
        }
    };
    match kind {
        "newHeads" => Ok((Topic::NewHeads, from(&options)?)),
        "events" => {
            let mut filter = EventFilter::default();
            if let Some(name) = options.get("name").filter(|v| !v.is_null()) {
                filter.name = Some(
                    name.as_str()
                        .ok_or_else(|| invalid(format!("name must be a string, got {name}")))?
                        .to_string(),
                );
            }
            if let Some(actor) = options.get("actor").filter(|v| !v.is_null()) {
                filter.emitter = Some(
                    parse_address(actor.as_str().unwrap_or_default())
                        .map_err(ErrorObjectOwned::from)?,
                );
            }
            Ok((Topic::Events(filter), from(&options)?))
        }
        "timer" => {
            let id = options
                .as_str()
                .ok_or_else(|| invalid("[\"timer\", \"0x<timer id>\"]".into()))?;
            Ok((
                Topic::Timer(parse_hash("timer id", id).map_err(ErrorObjectOwned::from)?),
                None,
            ))
        }
        other => Err(invalid(format!(
            "unknown subscription {other:?}: \"newHeads\", \"events\" or \"timer\""
        ))),
    }
}

/// What every subscription of one server shares (#48): a single poller of
/// the head, which wakes the subscriptions when it moves (1,000 of them each
/// polling the store every 25 ms was 80,000 reads a second), and each recent
/// block's `newHeads` message, built and serialised once for every
/// subscriber (each used to decode the block and hash its transactions
/// itself).
#[derive(Default)]
pub(crate) struct Shared {
    head: parking_lot::Mutex<Option<tokio::sync::watch::Receiver<u64>>>,
    heads: parking_lot::Mutex<std::collections::VecDeque<(u64, SubscriptionMessage)>>,
}

/// `newHeads` messages kept for subscribers a few blocks behind.
const SHARED_HEADS: usize = 64;

impl<B: KvBackend + 'static> RpcContext<B> {
    /// A receiver of the head height, from the server's one poller
    /// (started by the first subscription).
    fn head_receiver(self: &Arc<Self>) -> tokio::sync::watch::Receiver<u64> {
        let mut slot = self.subscriptions.head.lock();
        if let Some(rx) = slot.as_ref() {
            return rx.clone();
        }
        let head = |ctx: &Self| ctx.chain.store().head_height().ok().flatten().unwrap_or(0);
        let (tx, rx) = tokio::sync::watch::channel(head(self));
        let ctx = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(POLL).await;
                let now = head(&ctx);
                tx.send_if_modified(|h| {
                    let moved = *h != now;
                    *h = now;
                    moved
                });
            }
        });
        *slot = Some(rx.clone());
        rx
    }

    /// Block `height`'s `newHeads` message, built once for every subscriber.
    fn head_message(&self, height: u64) -> Result<Option<SubscriptionMessage>, RpcError> {
        let mut heads = self.subscriptions.heads.lock();
        if let Some((_, m)) = heads.iter().find(|(h, _)| *h == height) {
            return Ok(Some(m.clone()));
        }
        let (notes, _) = self.notifications(&Topic::NewHeads, height, &mut 0)?;
        let Some(note) = notes.into_iter().next() else {
            return Ok(None);
        };
        let message = SubscriptionMessage::from_json(&note).expect("a JSON value serialises");
        heads.push_back((height, message.clone()));
        if heads.len() > SHARED_HEADS {
            heads.pop_front();
        }
        Ok(Some(message))
    }

    /// The notifications of block `height` for `topic` (none for a block
    /// with nothing to say), and whether the subscription is over.
    fn notifications(
        &self,
        topic: &Topic,
        height: u64,
        delivered: &mut usize,
    ) -> Result<(Vec<Json>, bool), RpcError> {
        let store = self.chain.store();
        match topic {
            Topic::NewHeads => {
                // The header and its transaction count, as Ethereum's
                // newHeads: a block's transaction hashes made each message
                // ~45 KB at 600 transactions a block (th_getBlock has them).
                let Some(stored) = store.header(height)? else {
                    return Ok((Vec::new(), false));
                };
                let mut head = header_json(&stored.header);
                head["tx_count"] = json!(stored.tx_count);
                head["timers"] = match self.chain.block_summary(height)? {
                    Some(s) => super::views::summary_json(height, &s),
                    None => Json::Null,
                };
                Ok((vec![head], false))
            }
            Topic::Events(filter) => {
                let events = store.events(&EventFilter {
                    from_height: Some(height),
                    to_height: Some(height),
                    limit: 0,
                    ..filter.clone()
                })?;
                if events.is_empty() {
                    return Ok((Vec::new(), false));
                }
                let events: Vec<Json> = events.iter().map(event_record_json).collect();
                Ok((vec![json!({ "height": height, "events": events })], false))
            }
            Topic::Timer(id) => {
                let pending = timerhost_timers::record::queued(&store.state(), id)?.is_some();
                let life = store.timer_events(id, pending, super::views::LIFE_EVENTS)?;
                let new: Vec<Json> = life
                    .iter()
                    .filter(|e| e.height <= height)
                    .skip(*delivered)
                    .map(event_record_json)
                    .collect();
                *delivered += new.len();
                // Over once it is gone at the head and every event of its
                // life up to there is out (the head may be ahead of this
                // block: its end is sent with the block that holds it).
                let ended = !pending && *delivered == life.len();
                if new.is_empty() && !ended {
                    return Ok((Vec::new(), false));
                }
                Ok((
                    vec![
                        json!({ "height": height, "timer_id": id.to_string(), "events": new, "ended": ended }),
                    ],
                    ended,
                ))
            }
        }
    }
}

/// Registers `th_subscribe` / `th_unsubscribe` on `module`.
pub fn register<B: KvBackend + 'static>(module: &mut jsonrpsee::RpcModule<RpcContext<B>>) {
    module
        .register_subscription(
            "th_subscribe",
            "th_subscription",
            "th_unsubscribe",
            |params, pending: PendingSubscriptionSink, ctx: Arc<RpcContext<B>>, _| async move {
                let (topic, from) = match parse(&params) {
                    Ok(parsed) => parsed,
                    Err(e) => {
                        pending.reject(e).await;
                        return Ok(());
                    }
                };
                let store = ctx.chain.store();
                let head = store.head_height().ok().flatten().unwrap_or(0);
                let floor = store.history_floor().unwrap_or(1);
                let mut cursor = from.unwrap_or(head + 1);
                if cursor > 0 && cursor < floor {
                    pending
                        .reject(invalid(format!(
                            "pruned: this node has whole blocks from {floor} on; resume from {floor} or ask an archive node"
                        )))
                        .await;
                    return Ok(());
                }
                if head.saturating_sub(cursor) > MAX_REPLAY_BLOCKS {
                    pending
                        .reject(invalid(format!(
                            "from_height {cursor} is more than {MAX_REPLAY_BLOCKS} blocks behind the head {head}: read the history with th_getEvents/th_getBlock first"
                        )))
                        .await;
                    return Ok(());
                }
                if let Topic::Timer(id) = &topic {
                    let known = timerhost_timers::record::queued(&store.state(), id)
                        .map(|q| q.is_some())
                        .unwrap_or(false)
                        || !store.timer_events(id, false, 1).unwrap_or_default().is_empty();
                    if !known {
                        pending
                            .reject(invalid(format!("no timer {id} is pending or was ever scheduled here")))
                            .await;
                        return Ok(());
                    }
                    // A timer's life is sent from its first event.
                    cursor = cursor.min(head);
                }
                let sink = pending.accept().await.map_err(|e| StringError::from(e.to_string()))?;
                let mut heads = ctx.head_receiver();
                let mut delivered = 0usize;
                // The last blocks sent through, to notice a dev chain moved
                // back under them (`dev_revert`; a validator network never
                // does) and say from where to resume.
                let mut last: std::collections::VecDeque<(u64, Hash)> = Default::default();
                loop {
                    let store = ctx.chain.store();
                    let hash_at = |h: u64| store.header(h).ok().flatten().map(|s| s.header.hash());
                    if let Some(&(h, hash)) = last.back() {
                        if hash_at(h) != Some(hash) {
                            let fork = last
                                .iter()
                                .rev()
                                .find(|(h, hash)| hash_at(*h) == Some(*hash))
                                .map(|(h, _)| *h);
                            let resume = match fork {
                                Some(f) => f + 1,
                                None => last.front().map_or(h, |(h, _)| *h),
                            };
                            return Err(StringError::from(format!(
                                "reverted: the dev chain replaced the blocks from height {resume} on (dev_revert); resubscribe with from_height {resume}"
                            )));
                        }
                    }
                    let head = *heads.borrow_and_update();
                    while cursor <= head {
                        let (messages, ended) = if matches!(topic, Topic::NewHeads) {
                            let message = ctx
                                .head_message(cursor)
                                .map_err(|e| StringError::from(e.to_string()))?;
                            (message.into_iter().collect::<Vec<_>>(), false)
                        } else {
                            let (notes, ended) = ctx
                                .notifications(&topic, cursor, &mut delivered)
                                .map_err(|e| StringError::from(e.to_string()))?;
                            let messages = notes
                                .iter()
                                .map(SubscriptionMessage::from_json)
                                .collect::<Result<Vec<_>, _>>()
                                .map_err(|e| StringError::from(e.to_string()))?;
                            (messages, ended)
                        };
                        for msg in messages {
                            match tokio::time::timeout(SEND_TIMEOUT, sink.send(msg)).await {
                                Ok(Ok(())) => {}
                                Ok(Err(_)) => return Ok(()), // the client left
                                Err(_) => {
                                    return Err(StringError::from(format!(
                                        "dropped: the client fell {MESSAGE_BUFFER} notifications behind for {}s; resubscribe with from_height {cursor}",
                                        SEND_TIMEOUT.as_secs()
                                    )))
                                }
                            }
                        }
                        if ended {
                            return Ok(());
                        }
                        if let Some(hash) = hash_at(cursor) {
                            last.push_back((cursor, hash));
                            if last.len() > REMEMBERED {
                                last.pop_front();
                            }
                        }
                        cursor += 1;
                    }
                    tokio::select! {
                        _ = sink.closed() => return Ok(()),
                        changed = heads.changed() => {
                            if changed.is_err() {
                                return Ok(()); // the server is stopping
                            }
                        }
                    }
                }
            },
        )
        .expect("subscription names are unique");
}
