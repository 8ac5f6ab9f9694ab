//! The aggregate queries the dashboard's views need (#33), as JSON-RPC
//! methods like any other (docs/RPC.md): per-block timer statistics, what
//! is queued ahead, a page of timers, a timer's life and why it has not
//! fired, state watches and cron jobs. Each reads what it shows — a page,
//! a range of blocks, bucket leaves — never a walk of every pending timer,
//! so a chain with a million pending timers answers as fast as an empty one.

use serde_json::{json, Value as Json};
use timerhost_state::{KvBackend, StateRead};
use timerhost_timers::store::{self, PageCursor};
use timerhost_timers::{bucket, control, globalbox, keys as tkeys, queue};
use timerhost_types::{TimerKind, TimerOrdering, Value, CRON_REGISTRY_ADDRESS};

use super::{filter_obj, u64_of, RpcContext};
use crate::error::{Result, RpcError};
use crate::json::{amount, parse_address, parse_hash, timer_json, value_to_json};

/// Most blocks one `th_getBlockStats` reads.
pub const MAX_STATS_BLOCKS: u64 = 240;
/// Most timers, watches or jobs one page holds.
pub const MAX_PAGE: usize = 100;
/// Most due timers counted as carried over, and Globalbox entries counted
/// (the count says "at least" past it): #50, 20,000 entries were decoded
/// per `th_getAhead` to return three numbers.
pub const CARRIED_COUNT_LIMIT: usize = 1_000;
/// Most events of one timer's life listed (a timer has a handful: a cron
/// job's lives are separate timers).
pub const LIFE_EVENTS: usize = 1_000;
/// Most bucket leaves one `th_getAhead` reads per queue.
pub const MAX_AHEAD_LEAVES: usize = 2_000;

fn text<'v>(e: &'v Value, key: &str) -> Option<&'v str> {
    match e.get(key) {
        Some(Value::Str(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// A block's timer summary as `th_getBlockStats` lists it.
pub(super) fn summary_json(height: u64, s: &timerhost_chain::summary::BlockSummary) -> Json {
    json!({
        "height": height,
        "fired": { "height": s.fired[0], "time": s.fired[1], "state": s.fired[2] },
        "carried_over_fired": s.fired_late,
        "carried_over": s.carried_over,
        "expired": s.expired,
        "unfunded": s.unfunded,
        "revoked": s.revoked,
        "cancelled": s.cancelled,
        "deferred": s.deferred,
        "lane_cycles_used": s.lane_used,
        "lane_cycles_reserved": s.lane_reserved,
        "burned": amount(s.burned),
        "tipped": amount(s.tipped),
        "deliveries": s.deliveries,
    })
}

/// A page's `limit` parameter: 25 when absent, within 1..=[`MAX_PAGE`].
fn page_limit(given: Option<&Json>) -> Result<usize> {
    Ok(given
        .map(|v| u64_of(v, "limit"))
        .transpose()?
        .map_or(25, |l| (l as usize).clamp(1, MAX_PAGE)))
}

impl<B: KvBackend + 'static> RpcContext<B> {
    /// `th_getBlockStats [{to?, count?}]`: per block of the `count` (default
    /// 60, at most 240) ending at `to` (default: the head), what timers did.
    pub(super) fn block_stats(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["to", "count"])?;
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let head = self.chain.head()?.height;
        let to = get("to")
            .map(|v| u64_of(v, "to"))
            .transpose()?
            .unwrap_or(head)
            .min(head);
        let count = get("count")
            .map(|v| u64_of(v, "count"))
            .transpose()?
            .unwrap_or(60)
            .clamp(1, MAX_STATS_BLOCKS);
        let from = to.saturating_sub(count - 1).max(1);
        let store = self.chain.store();
        let state = store.state();
        let config = timerhost_chain::accounts::timer_config(&state)?;
        let mut blocks = Vec::new();
        for height in from..=to {
            // The header record, not the block (#50: 40 blocks of 12 MB
            // were decoded per call for these few fields).
            let Some(stored) = store.header(height)? else {
                break;
            };
            let Some(summary) = self.chain.block_summary(height)? else {
                break;
            };
            let mut stats = summary_json(height, &summary);
            let h = &stored.header;
            stats["timestamp"] = json!(h.timestamp_ms);
            stats["txs"] = json!(stored.tx_count);
            stats["cycles_used"] = json!(h.cycles_used);
            stats["lane_basefee"] = json!(h.lane_basefee);
            blocks.push(stats);
        }
        Ok(json!({ "lane_budget": config.lane_cycles_per_block, "blocks": blocks }))
    }

    /// `th_getAhead [{blocks?, seconds?}]`: timers queued for each of the
    /// next `blocks` heights (default 30, at most 2,000) and for each of the
    /// next `seconds` (default 60, at most 3,600) with the lane cycles they
    /// reserve — the bucket leaves `timer_quote` reads — plus what is due and
    /// still waiting, and the Globalbox.
    pub(super) fn ahead(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["blocks", "seconds"])?;
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let blocks = get("blocks")
            .map(|v| u64_of(v, "blocks"))
            .transpose()?
            .unwrap_or(30)
            .clamp(1, MAX_AHEAD_LEAVES as u64);
        let seconds = get("seconds")
            .map(|v| u64_of(v, "seconds"))
            .transpose()?
            .unwrap_or(60)
            .clamp(1, 3_600);
        let head = self.chain.head()?;
        let state = self.chain.store().state();
        let config = timerhost_chain::accounts::timer_config(&state)?;
        // #45: what each block has booked, beside what is queued for it.
        let basefee = timerhost_chain::accounts::basefee_config(&state)?;
        let share = timerhost_timers::bookings::share(&config, &basefee);
        let booked: std::collections::BTreeMap<u64, timerhost_timers::bookings::Slot> =
            timerhost_timers::bookings::heights_between(
                &state,
                head.height + 1,
                head.height + 1 + blocks,
                MAX_AHEAD_LEAVES,
            )?
            .into_iter()
            .collect();
        let by_height: Vec<Json> = bucket::leaves_between(
            &state,
            tkeys::DueQueue::Height,
            head.height + 1,
            head.height + 1 + blocks,
            MAX_AHEAD_LEAVES,
        )?
        .into_iter()
        .map(|(h, l)| {
            let b = booked.get(&h).copied().unwrap_or_default();
            json!({
                "height": h,
                "queued": l.live,
                "reserved": l.reserved,
                "booked_fires": b.fires,
                "booked_cycles": b.cycles,
            })
        })
        .collect();
        let start_ms = head.timestamp_ms + 1;
        let leaves = bucket::leaves_between(
            &state,
            tkeys::DueQueue::Time,
            start_ms,
            start_ms + seconds * 1_000,
            MAX_AHEAD_LEAVES,
        )?;
        let truncated = leaves.len() == MAX_AHEAD_LEAVES;
        let mut per_second: Vec<(u64, u64, u64)> = Vec::new();
        for (ms, leaf) in leaves {
            let second = (ms - start_ms) / 1_000;
            match per_second.last_mut() {
                Some((s, q, r)) if *s == second => {
                    *q += leaf.live;
                    *r += leaf.reserved;
                }
                _ => per_second.push((second, leaf.live, leaf.reserved)),
            }
        }
        let (carried, backlog) =
            queue::due_count(&state, head.height, head.timestamp_ms, CARRIED_COUNT_LIMIT)?;
        let globalbox = globalbox::entries_from(&state, None, CARRIED_COUNT_LIMIT)?.len();
        let waiting = globalbox::waiting(&state, CARRIED_COUNT_LIMIT)?.len();
        Ok(json!({
            "head": head.height,
            "head_timestamp": head.timestamp_ms,
            "lane_budget": config.lane_cycles_per_block,
            "max_fires_per_block": config.max_fires_per_block,
            "bookable": { "cycles": share.cycles, "fires": share.fires },
            "by_height": by_height,
            "by_second": per_second
                .iter()
                .map(|(s, q, r)| json!({ "from_ms": start_ms + s * 1_000, "queued": q, "reserved": r }))
                .collect::<Vec<_>>(),
            "by_second_truncated": truncated,
            "carried_over": carried,
            "gc_backlog": backlog,
            "counts_capped_at": CARRIED_COUNT_LIMIT,
            "ordering": config.ordering.as_str(),
            "globalbox": globalbox,
            "globalbox_waiting": waiting,
        }))
    }

    /// `th_getTimersPage [{actor?, fee_payer?, kind?, handler?, cursor?,
    /// limit?}]`: one page (at most 100) of pending timers, of an actor or
    /// fee payer (their listings) or of all, filtered by trigger kind and
    /// handler; `next` resumes it.
    pub(super) fn timers_page(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(
            a,
            &["actor", "fee_payer", "kind", "handler", "cursor", "limit"],
        )?;
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let addr = |k: &str| {
            get(k)
                .map(|v| parse_address(v.as_str().unwrap_or_default()))
                .transpose()
        };
        let actor = addr("actor")?;
        let fee_payer = addr("fee_payer")?;
        let kind = get("kind").and_then(Json::as_str).filter(|s| !s.is_empty());
        if let Some(k) = kind {
            if !TimerKind::NAMES.contains(&k) {
                return Err(RpcError::InvalidParams(format!(
                    "kind {k:?} is not one of {:?}",
                    TimerKind::NAMES
                )));
            }
        }
        let handler = get("handler")
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty());
        let limit = page_limit(get("limit"))?;
        let cursor = match get("cursor").and_then(Json::as_str) {
            None | Some("") => None,
            Some(c) => Some(match c.strip_prefix("slot:") {
                Some(n) => PageCursor::Slot(
                    n.parse()
                        .map_err(|_| RpcError::InvalidParams(format!("bad cursor {c:?}")))?,
                ),
                None => PageCursor::Key(crate::json::parse_hex("cursor", c)?),
            }),
        };
        let state = self.chain.store().state();
        // A filtered page reads at most 10 pages of records to fill itself.
        let mut out = Vec::new();
        let mut next = cursor;
        let mut read = 0;
        loop {
            let (page, after) = store::page(
                &state,
                actor.as_ref(),
                fee_payer.as_ref(),
                next.clone(),
                limit,
            )?;
            read += page.len();
            for t in page {
                let keep = kind.is_none_or(|k| t.kind.name() == k)
                    && handler.is_none_or(|h| t.handler == h);
                if keep && out.len() < limit {
                    out.push(timer_json(&t));
                }
            }
            next = after;
            if out.len() >= limit || next.is_none() || read >= 10 * limit {
                break;
            }
        }
        let next = next.map(|c| match c {
            PageCursor::Slot(s) => format!("slot:{s}"),
            PageCursor::Key(k) => format!("0x{}", hex::encode(k)),
        });
        Ok(json!({
            "timers": out,
            "next": next,
            "pending": store::pending_count(&state)?,
        }))
    }

    /// `th_getTimerLife [timer_id]`: the timer if pending, where it waits,
    /// in plain words why it has not fired yet, and the events of its life
    /// (read through the store's index of events by timer id, so a gone
    /// timer's life is found as readily as a pending one's).
    pub(super) fn timer_life(&self, a: &[Json]) -> Result<Json> {
        let id = parse_hash("timer id", super::arg_str(a, 0, "timer id")?)?;
        let head = self.chain.head()?;
        let state = self.chain.store().state();
        let record = timerhost_timers::record::get_record(&state, &id)?;
        let events = self.life_events(&id, record.is_some())?;
        let (timer, queued, why) = match &record {
            None => (Json::Null, Json::Null, json!(ended_why(&events))),
            Some(r) => {
                let queued = timerhost_timers::record::queued(&state, &id)?;
                let why = why_not_fired(&state, &r.timer, queued, &head)?;
                let at = match queued {
                    Some(timerhost_timers::record::Queued::Backlog) => "gc_backlog",
                    Some(timerhost_timers::record::Queued::Globalbox) => "globalbox",
                    _ => "queue",
                };
                (timer_json(&r.timer), json!(at), json!(why))
            }
        };
        Ok(json!({
            "timer_id": id,
            "pending": record.is_some(),
            "timer": timer,
            "queued": queued,
            "why": why,
            "events": events,
            "head": head.height,
        }))
    }

    /// The events of timer `id` (its own index: nothing else its actor
    /// emitted is read), in chain order, the first [`LIFE_EVENTS`].
    fn life_events(&self, id: &timerhost_types::Hash, pending: bool) -> Result<Vec<Json>> {
        let records = self.chain.store().timer_events(id, pending, LIFE_EVENTS)?;
        Ok(records
            .iter()
            .map(|r| {
                json!({
                    "name": r.event.name,
                    "height": r.height,
                    "tx_hash": r.tx_hash,
                    "data": value_to_json(&r.event.data),
                })
            })
            .collect())
    }

    /// `th_getWatches [{cursor?, limit?}]`: state watches, a page at a time.
    pub(super) fn watches(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["cursor", "limit"])?;
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let limit = page_limit(get("limit"))?;
        let start = match get("cursor").and_then(Json::as_str) {
            Some(c) if !c.is_empty() => crate::json::parse_hex("cursor", c)?,
            _ => tkeys::WATCH_RECORD.to_vec(),
        };
        let state = self.chain.store().state();
        let end = tkeys::end_of(tkeys::WATCH_RECORD);
        let page = state.scan(&start, Some(&end), limit + 1)?;
        let next = page
            .get(limit)
            .map(|(k, _)| format!("0x{}", hex::encode(k)));
        let watches = page
            .iter()
            .take(limit)
            .map(|(k, v)| {
                Ok(timer_json(
                    &timerhost_timers::record::decode_record(k, v)?.timer,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(json!({ "watches": watches, "next": next }))
    }

    /// `th_getCronJobs [{cursor?, limit?}]`: ARC-21 jobs of the cron
    /// registry (`0x…06`), a page at a time: `getJob`'s fields plus the
    /// escrow and the pending timer of the next run.
    pub(super) fn cron_jobs(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["cursor", "limit"])?;
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let limit = page_limit(get("limit"))?;
        let after = get("cursor")
            .and_then(Json::as_str)
            .map(|c| c.as_bytes().to_vec());
        let state = self.chain.store().state();
        let (start, end) = timerhost_types::keys::storage_scan_range(
            &CRON_REGISTRY_ADDRESS,
            b"job:",
            after.as_deref(),
        );
        let page = state.scan(&start, Some(&end), limit + 1)?;
        let base = timerhost_types::keys::storage(&CRON_REGISTRY_ADDRESS, b"").len();
        let mut jobs = Vec::new();
        for (k, v) in page.iter().take(limit) {
            let job = Value::from_bytes(v).map_err(|e| timerhost_state::StorageError::Corrupt {
                what: "cron job",
                key: hex::encode(k),
                reason: e.to_string(),
            })?;
            let id = text(&job, "id").unwrap_or_default().to_string();
            let escrow = state
                .get(&timerhost_types::keys::storage(
                    &CRON_REGISTRY_ADDRESS,
                    format!("escrow:{id}").as_bytes(),
                ))?
                .and_then(|b| Value::from_bytes(&b).ok())
                .and_then(|v| v.as_u128())
                .unwrap_or(0);
            let mut j = value_to_json(&job);
            j["escrow"] = json!(amount(escrow));
            j["key"] = json!(String::from_utf8_lossy(&k[base..]));
            jobs.push(j);
        }
        let next = page
            .get(limit)
            .map(|(k, _)| String::from_utf8_lossy(&k[base..]).into_owned());
        Ok(json!({ "jobs": jobs, "next": next }))
    }
}

/// How a timer that is no longer pending ended, from its last event.
fn ended_why(events: &[Json]) -> String {
    match events.last().and_then(|e| e["name"].as_str()) {
        Some("TimerFired") => "it fired and left (see its fire below)".into(),
        Some("TimerExpired") => "it expired before it could fire; its deposit was refunded".into(),
        Some("TimerCancelledInsufficientFunds") => {
            "its fee payer could not cover a fire; it was removed and its deposit refunded".into()
        }
        Some("TimerCancelledPaymentRevoked") => {
            "its fee payer revoked it; it was removed without running".into()
        }
        Some("TimerCancelled") => "it was cancelled".into(),
        Some(_) => "it is no longer pending".into(),
        None => "no timer with this id was ever scheduled".into(),
    }
}

/// In plain words, why a pending timer has not fired yet.
fn why_not_fired(
    state: &(impl StateRead + ?Sized),
    t: &timerhost_types::Timer,
    queued: Option<timerhost_timers::record::Queued>,
    head: &timerhost_types::BlockHeader,
) -> Result<String> {
    use timerhost_timers::record::Queued;
    let status = control::status(state)?;
    if status != timerhost_types::TimerStatus::Active {
        return Ok(format!(
            "timers are {} by governance: nothing fires until they resume",
            status.as_str().replace('_', " ")
        ));
    }
    if t.seq < control::revoked_before(state, &t.fee_payer)? {
        return Ok(format!(
            "its fee payer {} revoked it: it will be removed, without running, when it comes due",
            t.fee_payer
        ));
    }
    if queued == Some(Queued::Backlog) {
        return Ok("it was classified expired or unfunded and waits in the GC backlog to be removed (deposit refunded)".into());
    }
    let config = timerhost_chain::accounts::timer_config(state)?;
    if queued == Some(Queued::Globalbox) {
        let lookup = state.get(&tkeys::globalbox_lookup_key(t.seq))?;
        if lookup
            .as_ref()
            .is_some_and(|k| k.starts_with(&tkeys::GLOBALBOX_WAITING))
        {
            let lane = timerhost_timers::lane::market(state, &config)?;
            return Ok(format!(
                "it is due but below the lane basefee: its max_fee_per_cycle is {}, the lane basefee {}; it waits, uncharged, until the basefee falls back (or it expires at block {})",
                t.max_fee_per_cycle, lane.basefee, t.expires_at
            ));
        }
        let ahead = globalbox::entries_from(state, None, CARRIED_COUNT_LIMIT)?
            .iter()
            .take_while(|(_, e)| e.seq != t.seq)
            .count();
        return Ok(format!(
            "it is due and waits in the Globalbox ({} ordering) behind {ahead} entr{} for the lane",
            config.ordering.as_str(),
            if ahead == 1 { "y" } else { "ies" }
        ));
    }
    let basefee = timerhost_chain::accounts::basefee_config(state)?;
    let max_cost = timerhost_timers::delivery::max_cost(
        t.gas_limit_per_fire,
        timerhost_timers::lane::fee_cap(t, &config),
        &config,
        &basefee,
    )
    .unwrap_or(u128::MAX);
    let balance = timerhost_state::accounts::load(state, &t.fee_payer)?.balance;
    let funds = if balance.saturating_add(t.deposit) < max_cost {
        format!(
            " Its fee payer holds {balance} (+ the deposit {}), below one fire's pre-charge {max_cost}: unless it is topped up, the timer will be removed when due.",
            t.deposit
        )
    } else {
        String::new()
    };
    let reason = match &t.kind {
        TimerKind::Height if t.height > head.height => format!(
            "not due yet: it fires at the end of block {}, {} block(s) from the head",
            t.height,
            t.height - head.height
        ),
        TimerKind::Time { timestamp_ms } if *timestamp_ms > head.timestamp_ms => format!(
            "not due yet: it fires at the start of the first block stamped at or after {timestamp_ms} ms, {} ms after the head",
            timestamp_ms - head.timestamp_ms
        ),
        TimerKind::State(w) => format!(
            "a state watch: it fires at the end of a block that writes one of its {} key(s) of {}; it has fired {} time(s)",
            w.keys.len(),
            w.actor,
            w.fires
        ),
        _ if config.ordering != TimerOrdering::Fifo => {
            "it is due and will join the Globalbox at the end of the next block".into()
        }
        _ => {
            let (carried, _) =
                queue::due_count(state, head.height, head.timestamp_ms, CARRIED_COUNT_LIMIT)?;
            format!(
                "it is due and was carried over: the timer lane ({} cycles) or the fire quota ({} per block) was full; {carried} due timer(s) are queued, served in order",
                config.lane_cycles_per_block, config.max_fires_per_block
            )
        }
    };
    Ok(format!("{reason}.{funds}"))
}
