//! `th_getDeadLetters {actor}` (#45): an actor's dead-letter queue — the
//! timers whose retries ran out, with their payload, last error and
//! traceback, attempts, expiry and deposit. Reading only: retrying or
//! dropping an entry is the actor's own call
//! (`pvm_host.retry_dead_letter`/`drop_dead_letter`), reached through a
//! transaction to one of its handlers.

use serde_json::{json, Value as Json};
use timerhost_state::KvBackend;
use timerhost_timers::dead_letters::{self, DeadLetter};

use super::{filter_obj, RpcContext};
use crate::error::{Result, RpcError};
use crate::json::{amount, hex0x, parse_address, timer_json};

/// One dead letter as RPC lists it (amounts as decimal strings).
pub fn dead_letter_json(d: &DeadLetter) -> Json {
    json!({
        "timer_id": d.timer.timer_id,
        "actor": d.timer.actor_address,
        "payload": hex0x(&d.timer.payload),
        "handler": d.timer.handler,
        "fee_payer": d.timer.fee_payer,
        "error": d.error,
        "traceback": d.traceback,
        "attempts": d.attempts,
        "dead_at": d.dead_at,
        "expires_at": d.expires_at,
        "deposit": amount(d.deposit),
        "timer": timer_json(&d.timer),
    })
}

impl<B: KvBackend + 'static> RpcContext<B> {
    /// `th_getDeadLetters [{actor}]`: every entry of `actor`'s queue (at
    /// most `max_dead_letters_per_actor`), in timer-id order.
    pub(super) fn dead_letters(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["actor"])?;
        let actor = f
            .and_then(|m| m.get("actor"))
            .and_then(Json::as_str)
            .ok_or_else(|| RpcError::InvalidParams("give {\"actor\": \"0x…\"}".into()))?;
        let actor = parse_address(actor)?;
        let state = self.chain.store().state();
        let entries = dead_letters::list(&state, &actor)?;
        Ok(Json::Array(entries.iter().map(dead_letter_json).collect()))
    }
}
