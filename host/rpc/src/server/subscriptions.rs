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

use jsonrpsee::core::server::{PendingSubscriptionSink, SendTimeoutError, SubscriptionMessage};
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
/// polling the store every 25 ms was 80,000 reads a second), and the recent
/// blocks' hashes and `newHeads` messages, each read, built and serialised
/// once for every subscriber (each used to decode the block and hash its
/// transactions itself, then read and hash two headers a block to watch for
/// a `dev_revert`: 10,000 store reads a second at 1,000 subscribers, which
/// slowed the producer's own reads of the same store by a third).
#[derive(Default)]
pub(crate) struct Shared {
    /// The head height and the revert epoch, as the poller last saw them
    /// (a revert that ends back at the same height still wakes everyone).
    head: parking_lot::Mutex<Option<tokio::sync::watch::Receiver<(u64, u64)>>>,
    /// Bumped before and after every `dev_revert`: what was read under an
    /// older epoch may be of blocks the revert replaced.
    epoch: std::sync::atomic::AtomicU64,
    recent: parking_lot::Mutex<std::collections::VecDeque<Recent>>,
}

/// One recent block as the subscriptions share it.
struct Recent {
    height: u64,
    /// The [`Shared::epoch`] read before the block was.
    epoch: u64,
    hash: Hash,
    /// Its `newHeads` message, once a subscriber asked for it.
    head: Option<SubscriptionMessage>,
}

/// Recent blocks kept for subscribers a few blocks behind.
const SHARED_BLOCKS: usize = 64;

impl Shared {
    /// The current epoch (see [`Shared::epoch`]).
    fn epoch(&self) -> u64 {
        self.epoch.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Marks a `dev_revert` starting or done: nothing read before is
    /// trusted after (called on both sides of the revert, so what was read
    /// during it is not trusted either).
    pub(crate) fn reverting(&self) {
        self.epoch.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }
}

impl<B: KvBackend + 'static> RpcContext<B> {
    /// A receiver of the head height and the revert epoch, from the
    /// server's one poller (started by the first subscription).
    fn head_receiver(self: &Arc<Self>) -> tokio::sync::watch::Receiver<(u64, u64)> {
        let mut slot = self.subscriptions.head.lock();
        if let Some(rx) = slot.as_ref() {
            return rx.clone();
        }
        let head = |ctx: &Self| {
            let epoch = ctx.subscriptions.epoch();
            (
                ctx.chain.store().head_height().ok().flatten().unwrap_or(0),
                epoch,
            )
        };
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

    /// Block `height`'s hash and, when `with_head`, its `newHeads` message,
    /// read and built once for every subscriber (`None`: no such block).
    fn recent_block(
        &self,
        height: u64,
        with_head: bool,
    ) -> Result<Option<(Hash, Option<SubscriptionMessage>)>, RpcError> {
        let shared = &self.subscriptions;
        // Held while a missing block is read, so the subscribers woken by a
        // new head wait for one reader instead of each reading it.
        let mut recent = shared.recent.lock();
        let epoch = shared.epoch();
        let at = recent
            .iter()
            .position(|r| r.height == height && r.epoch == epoch);
        if let Some(r) = at.map(|i| &recent[i]) {
            if r.head.is_some() || !with_head {
                return Ok(Some((r.hash, r.head.clone())));
            }
        }
        let Some(stored) = self.chain.store().header(height)? else {
            return Ok(None);
        };
        let hash = stored.header.hash();
        let head = if with_head {
            // The header and its transaction count, as Ethereum's newHeads:
            // a block's transaction hashes made each message ~45 KB at 600
            // transactions a block (th_getBlock has them).
            let mut head = header_json(&stored.header);
            head["tx_count"] = json!(stored.tx_count);
            head["timers"] = match self.chain.block_summary(height)? {
                Some(s) => super::views::summary_json(height, &s),
                None => Json::Null,
            };
            Some(SubscriptionMessage::from_json(&head).expect("a JSON value serialises"))
        } else {
            None
        };
        recent.retain(|r| r.height != height);
        recent.push_back(Recent {
            height,
            epoch,
            hash,
            head: head.clone(),
        });
        if recent.len() > SHARED_BLOCKS {
            recent.pop_front();
        }
        Ok(Some((hash, head)))
    }

    /// The notifications of block `height` for `topic` (none for a block
    /// with nothing to say), and whether the subscription is over.
    fn notifications(
        &self,
        topic: &Topic,
        height: u64,
        delivered: &mut usize,
    ) -> Result<(Vec<SubscriptionMessage>, bool), RpcError> {
        let store = self.chain.store();
        let message =
            |note: Json| SubscriptionMessage::from_json(&note).expect("a JSON value serialises");
        match topic {
            Topic::NewHeads => {
                let message = self.recent_block(height, true)?.and_then(|(_, m)| m);
                Ok((message.into_iter().collect(), false))
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
                Ok((
                    vec![message(json!({ "height": height, "events": events }))],
                    false,
                ))
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
                    vec![message(
                        json!({ "height": height, "timer_id": id.to_string(), "events": new, "ended": ended }),
                    )],
                    ended,
                ))
            }
        }
    }

    /// The height a subscription that sent `last` (height, hash) must resume
    /// from because a `dev_revert` replaced its newest block (`None`: it
    /// was not replaced). Reads the store, not the shared blocks: called
    /// only after a revert.
    fn replaced_from(&self, last: &std::collections::VecDeque<(u64, Hash)>) -> Option<u64> {
        let store = self.chain.store();
        let hash_at = |h: u64| store.header(h).ok().flatten().map(|s| s.header.hash());
        let &(newest, hash) = last.back()?;
        if hash_at(newest) == Some(hash) {
            return None;
        }
        let fork = last
            .iter()
            .rev()
            .find(|(h, hash)| hash_at(*h) == Some(*hash))
            .map(|(h, _)| *h);
        Some(match fork {
            Some(f) => f + 1,
            None => last.front().map_or(newest, |(h, _)| *h),
        })
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
                // does) and say from where to resume. Checked against the
                // store only when a revert happened since the last look.
                let mut last: std::collections::VecDeque<(u64, Hash)> = Default::default();
                let mut seen_epoch = ctx.subscriptions.epoch();
                loop {
                    let epoch = ctx.subscriptions.epoch();
                    if epoch != seen_epoch {
                        if let Some(resume) = ctx.replaced_from(&last) {
                            return Err(StringError::from(format!(
                                "reverted: the dev chain replaced the blocks from height {resume} on (dev_revert); resubscribe with from_height {resume}"
                            )));
                        }
                        seen_epoch = epoch;
                    }
                    let (head, _) = *heads.borrow_and_update();
                    while cursor <= head {
                        let (messages, ended) = ctx
                            .notifications(&topic, cursor, &mut delivered)
                            .map_err(|e| StringError::from(e.to_string()))?;
                        for msg in messages {
                            match sink.send_timeout(msg, SEND_TIMEOUT).await {
                                Ok(()) => {}
                                Err(SendTimeoutError::Closed(_)) => return Ok(()), // the client left
                                Err(SendTimeoutError::Timeout(_)) => {
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
                        if let Ok(Some((hash, _))) = ctx.recent_block(cursor, false) {
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
