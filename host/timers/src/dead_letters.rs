//! The dead-letter queue (#45): where a timer goes when its last retry
//! fails, so that the work it carried is not lost.
//!
//! Each actor has its own queue of at most `max_dead_letters_per_actor`
//! entries. An entry keeps the timer as it last fired (payload, handler,
//! fee payer, limits, retry policy), its last error and traceback, and a
//! **deposit** its fee payer lends for the bytes it holds — taken like a
//! timer's (from the escrow too for an escrow-funded timer) and refunded
//! whenever it leaves: re-scheduled by its actor
//! (`pvm_host.retry_dead_letter`), dropped (`pvm_host.drop_dead_letter`),
//! or expired `dead_letter_ttl_blocks` after it arrived. A timer that fails
//! for good while its actor's queue is full, or whose fee payer cannot lend
//! the deposit, is dropped and `TimerDeadLettered {kept: false}` says why.
//!
//! Every key is a leaf of the state tree (`t L`, `t M`, `t N`,
//! [`crate::keys`]). Expiry removes at most [`EXPIRIES_PER_BLOCK`] entries a
//! block, oldest first; the rest wait for the next block.

use borsh::{BorshDeserialize, BorshSerialize};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::encoding::Canonical;
use timerhost_types::{Address, Event, Hash, Timer, TimerConfig, Value};

use crate::error::Result;
use crate::keys::{self, corrupt};
use crate::{deposit, events};

/// Most dead letters one block expires; the rest wait, oldest first.
pub const EXPIRIES_PER_BLOCK: usize = 256;

/// Longest traceback an entry keeps (bytes); a longer one keeps its end,
/// where the failing line is.
pub const MAX_TRACEBACK_BYTES: usize = 4_096;

/// A timer whose retries ran out, waiting in its actor's queue.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct DeadLetter {
    /// The timer as it last fired (its retry policy counts the failures).
    pub timer: Timer,
    /// Fires that failed: the first and every retry.
    pub attempts: u32,
    /// The last error, `"Kind: message"`.
    pub error: String,
    /// The last fire's Python traceback (its last [`MAX_TRACEBACK_BYTES`]).
    pub traceback: String,
    /// The height at which it arrived.
    pub dead_at: u64,
    /// The height at which it expires.
    pub expires_at: u64,
    /// What its fee payer lent for it.
    pub deposit: u128,
}

impl Canonical for DeadLetter {
    const NAME: &'static str = "dead letter";
}

impl DeadLetter {
    /// `{"timer_id", "payload", "handler", "fee_payer", "error",
    /// "traceback", "attempts", "dead_at", "expires_at", "deposit",
    /// "trigger"}`: what `pvm_host.dead_letters()` and RPC report.
    pub fn to_value(&self) -> Value {
        let t = &self.timer;
        Value::dict_from([
            (
                Value::str("timer_id"),
                Value::Bytes(t.timer_id.as_bytes().to_vec()),
            ),
            (Value::str("payload"), Value::Bytes(t.payload.clone())),
            (Value::str("handler"), Value::str(&t.handler)),
            (Value::str("fee_payer"), Value::str(t.fee_payer.to_hex())),
            (Value::str("gas_limit"), Value::int(t.gas_limit_per_fire)),
            (Value::str("error"), Value::str(&self.error)),
            (Value::str("traceback"), Value::str(&self.traceback)),
            (Value::str("attempts"), Value::int(self.attempts)),
            (Value::str("dead_at"), Value::int(self.dead_at)),
            (Value::str("expires_at"), Value::int(self.expires_at)),
            (Value::str("deposit"), Value::int(self.deposit)),
            (Value::str("trigger"), t.trigger_value()),
        ])
        .expect("str keys are hashable")
    }
}

fn entry_key(actor: &Address, timer_id: &Hash) -> Vec<u8> {
    let mut k = keys::DEAD_LETTER.to_vec();
    k.extend_from_slice(actor.as_bytes());
    k.extend_from_slice(timer_id.as_bytes());
    k
}

fn expiry_key(expires_at: u64, actor: &Address, timer_id: &Hash) -> Vec<u8> {
    let mut k = keys::DEAD_LETTER_EXPIRY.to_vec();
    k.extend_from_slice(&expires_at.to_be_bytes());
    k.extend_from_slice(actor.as_bytes());
    k.extend_from_slice(timer_id.as_bytes());
    k
}

fn count_key(actor: &Address) -> Vec<u8> {
    let mut k = keys::DEAD_LETTER_COUNT.to_vec();
    k.extend_from_slice(actor.as_bytes());
    k
}

/// What one actor's queue holds: its entries and their encoded bytes
/// (what listing them reads, so it is priced before it is read).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Held {
    /// Entries.
    pub count: u32,
    /// Bytes of their encoded entries.
    pub bytes: u64,
}

impl Canonical for Held {
    const NAME: &'static str = "dead-letter count";
}

/// What `actor`'s queue holds.
pub fn held(state: &(impl StateRead + ?Sized), actor: &Address) -> Result<Held> {
    Ok(state.get_decoded(&count_key(actor))?.unwrap_or_default())
}

fn set_held(state: &mut Overlay<'_>, actor: &Address, held: Held) {
    if held.count == 0 {
        state.delete(count_key(actor));
    } else {
        state.put_encoded(count_key(actor), &held);
    }
}

fn encoded_len(entry: &DeadLetter) -> u64 {
    1 + borsh::object_length(entry).expect("an in-memory entry always encodes") as u64
}

/// The state bytes an entry holds (its key, value and expiry entry): what
/// its deposit pays for, at `deposit_per_byte`.
pub fn entry_bytes(entry: &DeadLetter) -> u64 {
    let key = entry_key(&entry.timer.actor_address, &entry.timer.timer_id).len() as u64;
    let expiry = expiry_key(0, &entry.timer.actor_address, &entry.timer.timer_id).len() as u64;
    key + encoded_len(entry) + expiry
}

/// The end of `text` within `max` bytes, cut at a character boundary.
fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &text[start..])
}

/// Puts `timer`, whose `attempts`-th fire failed with `error`, into its
/// actor's queue at `height`, its deposit lent by its fee payer. Returns
/// `TimerDeadLettered` — `kept: false` with the reason when the queue is
/// full or the deposit cannot be lent (the timer is then gone).
pub fn add(
    state: &mut Overlay<'_>,
    config: &TimerConfig,
    timer: &Timer,
    attempts: u32,
    error: &str,
    traceback: Option<&str>,
    height: u64,
) -> Result<Event> {
    let actor = timer.actor_address;
    let mut held = held(state, &actor)?;
    if held.count >= config.max_dead_letters_per_actor {
        let why = format!(
            "the actor's dead-letter queue is full ({} entries, max_dead_letters_per_actor)",
            held.count
        );
        return Ok(events::timer_dead_lettered(
            timer,
            attempts,
            error,
            Err(why),
        ));
    }
    let mut entry = DeadLetter {
        timer: timer.clone(),
        attempts,
        error: error.to_string(),
        traceback: tail(traceback.unwrap_or(""), MAX_TRACEBACK_BYTES),
        dead_at: height,
        expires_at: height.saturating_add(config.dead_letter_ttl_blocks),
        deposit: 0,
    };
    // Fits: deposit_per_byte ≤ 2^96 and an entry is far below 2^32 bytes.
    entry.deposit = config.deposit_per_byte * u128::from(entry_bytes(&entry));
    if let Err(short) = deposit::lend(state, timer, entry.deposit)? {
        let why = short.describe("dead letter", entry.deposit);
        return Ok(events::timer_dead_lettered(
            timer,
            attempts,
            error,
            Err(why),
        ));
    }
    state.put_encoded(entry_key(&actor, &timer.timer_id), &entry);
    state.put(
        expiry_key(entry.expires_at, &actor, &timer.timer_id),
        Vec::new(),
    );
    held.count += 1;
    held.bytes = held.bytes.saturating_add(encoded_len(&entry));
    set_held(state, &actor, held);
    Ok(events::timer_dead_lettered(
        timer,
        attempts,
        error,
        Ok((entry.expires_at, entry.deposit)),
    ))
}

/// The dead letter `timer_id` of `actor`.
pub fn get(
    state: &(impl StateRead + ?Sized),
    actor: &Address,
    timer_id: &Hash,
) -> Result<Option<DeadLetter>> {
    state.get_decoded(&entry_key(actor, timer_id))
}

/// Every dead letter of `actor` (its queue is bounded), in timer-id order.
pub fn list(state: &(impl StateRead + ?Sized), actor: &Address) -> Result<Vec<DeadLetter>> {
    let limit = held(state, actor)?.count as usize;
    let mut start = keys::DEAD_LETTER.to_vec();
    start.extend_from_slice(actor.as_bytes());
    let mut end = start.clone();
    end.extend_from_slice(&[0xff; 33]);
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            timerhost_types::decode::<DeadLetter>(&v)
                .map_err(|e| corrupt("dead letter", &k, &e.to_string()))
        })
        .collect()
}

/// Removes dead letter `timer_id` of `actor` and refunds its deposit to its
/// fee payer (and escrow); `reason` (`"retried"`, `"dropped"`, `"expired"`)
/// goes into `DeadLetterRemoved`. `None` if there is no such entry.
pub fn remove(
    state: &mut Overlay<'_>,
    actor: &Address,
    timer_id: &Hash,
    reason: &str,
) -> Result<Option<(DeadLetter, Event)>> {
    let Some(entry) = get(state, actor, timer_id)? else {
        return Ok(None);
    };
    deposit::give_back(state, &entry.timer, entry.deposit)?;
    state.delete(entry_key(actor, timer_id));
    state.delete(expiry_key(entry.expires_at, actor, timer_id));
    let mut now = held(state, actor)?;
    now.count = now.count.saturating_sub(1);
    now.bytes = now.bytes.saturating_sub(encoded_len(&entry));
    set_held(state, actor, now);
    let event = events::dead_letter_removed(actor, timer_id, reason, entry.deposit);
    Ok(Some((entry, event)))
}

/// Removes the dead letters whose TTL ended at or before `height` (at most
/// [`EXPIRIES_PER_BLOCK`], oldest first), refunding their deposits.
pub fn expire(state: &mut Overlay<'_>, height: u64) -> Result<Vec<Event>> {
    let start = keys::DEAD_LETTER_EXPIRY.to_vec();
    let mut end = start.clone();
    end.extend_from_slice(&height.saturating_add(1).to_be_bytes());
    let due = state.scan(&start, Some(&end), EXPIRIES_PER_BLOCK)?;
    let mut out = Vec::with_capacity(due.len());
    for (key, _) in due {
        let rest = &key[keys::DEAD_LETTER_EXPIRY.len() + 8..];
        if rest.len() != 20 + 32 {
            return Err(corrupt("dead-letter expiry", &key, "bad length"));
        }
        let actor = Address(rest[..20].try_into().expect("20 bytes"));
        let timer_id = Hash(rest[20..].try_into().expect("32 bytes"));
        match remove(state, &actor, &timer_id, "expired")? {
            Some((_, event)) => out.push(event),
            None => return Err(corrupt("dead-letter expiry", &key, "names no entry")),
        }
    }
    Ok(out)
}

/// The sum of every dead letter's deposit (reads them all: for tests and
/// audits, with [`crate::store::deposits_held`]).
pub fn deposits_held(state: &(impl StateRead + ?Sized)) -> Result<u128> {
    let start = keys::DEAD_LETTER.to_vec();
    let end = vec![keys::DEAD_LETTER[0], keys::DEAD_LETTER[1] + 1];
    let mut total = 0u128;
    for (k, v) in state.scan(&start, Some(&end), usize::MAX)? {
        let entry = timerhost_types::decode::<DeadLetter>(&v)
            .map_err(|e| corrupt("dead letter", &k, &e.to_string()))?;
        total += entry.deposit;
    }
    Ok(total)
}
