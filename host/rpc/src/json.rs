//! JSON forms of chain data, shared by the server, the CLI and the docs
//! (`docs/RPC.md`).
//!
//! Conventions: amounts (`u128`) are decimal strings; hashes, ids and raw
//! bytes are `0x`-prefixed lowercase hex; addresses are lowercase `0x` hex;
//! heights, nonces and cycle/cell counts are JSON numbers.
//!
//! Actor values ([`Value`]) map to JSON as follows:
//!
//! | Python | JSON out | JSON in |
//! |---|---|---|
//! | `None`, `bool`, `str` | `null`, `true`/`false`, string | same |
//! | `int` with \|n\| < 2^53 | number | integer number |
//! | larger `int` | decimal string | `{"$int": "123…"}` (or an integer number that fits 64 bits) |
//! | `bytes` | `{"$bytes": "0x…"}` | same |
//! | `list` | array | array |
//! | `tuple` | array | `{"$tuple": [...]}` |
//! | `dict` with only `str` keys | object | object |
//! | other `dict` | `{"$dict": [[key, value], …]}` | same |
//!
//! Floats are refused on input (actor values have no floats). Output is meant
//! for reading: a large int and a tuple lose their type; input is exact.

use num_bigint::BigInt;
use num_traits::ToPrimitive;
use serde_json::{json, Map, Value as Json};
use timerhost_state::EventRecord;
use timerhost_types::{
    Address, BasefeeConfig, Block, BlockHeader, Event, Hash, Receipt, SignedTransaction,
    SystemInstruction, Timer, TimerConfig, TxKind, TxSource, Value,
};

use crate::error::{Result, RpcError};

/// 2^53: the largest magnitude a JSON number carries exactly in JavaScript.
const SAFE_INT: i64 = 1 << 53;

/// `0x`-prefixed lowercase hex of `bytes`.
pub fn hex0x(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

/// Decodes `0x`-prefixed hex (the prefix is required).
pub fn parse_hex(what: &str, s: &str) -> Result<Vec<u8>> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or_else(|| RpcError::InvalidParams(format!("{what} must be 0x-prefixed hex")))?;
    hex::decode(digits).map_err(|e| RpcError::InvalidParams(format!("{what}: bad hex: {e}")))
}

/// Parses an address (`0x` + 40 hex digits).
pub fn parse_address(s: &str) -> Result<Address> {
    s.trim()
        .parse()
        .map_err(|e| RpcError::InvalidParams(format!("bad address {s:?}: {e}")))
}

/// Parses a hash or id (`0x` + 64 hex digits).
pub fn parse_hash(what: &str, s: &str) -> Result<Hash> {
    s.trim()
        .parse()
        .map_err(|e| RpcError::InvalidParams(format!("bad {what} {s:?}: {e}")))
}

/// An amount as a decimal string.
pub fn amount(v: u128) -> Json {
    Json::String(v.to_string())
}

/// Converts an actor value to JSON (see the module docs).
pub fn value_to_json(v: &Value) -> Json {
    match v {
        Value::None => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => match i.to_i64() {
            Some(n) if n.abs() < SAFE_INT => Json::from(n),
            _ => Json::String(i.to_string()),
        },
        Value::Str(s) => Json::String(s.clone()),
        Value::Bytes(b) => json!({ "$bytes": hex0x(b) }),
        Value::List(items) | Value::Tuple(items) => {
            Json::Array(items.iter().map(value_to_json).collect())
        }
        Value::Dict(entries) => {
            if entries.iter().all(|(k, _)| matches!(k, Value::Str(_))) {
                let mut m = Map::new();
                for (k, val) in entries {
                    if let Value::Str(k) = k {
                        m.insert(k.clone(), value_to_json(val));
                    }
                }
                Json::Object(m)
            } else {
                json!({ "$dict": entries
                    .iter()
                    .map(|(k, val)| json!([value_to_json(k), value_to_json(val)]))
                    .collect::<Vec<_>>() })
            }
        }
    }
}

/// Converts JSON to an actor value (see the module docs); errors name the
/// offending part.
pub fn value_from_json(j: &Json) -> Result<Value> {
    value_from_json_at(j, 0)
}

fn value_from_json_at(j: &Json, depth: usize) -> Result<Value> {
    let bad = |m: String| RpcError::InvalidParams(m);
    if depth > timerhost_types::value::MAX_DEPTH {
        return Err(bad(format!(
            "value nested deeper than {}",
            timerhost_types::value::MAX_DEPTH
        )));
    }
    Ok(match j {
        Json::Null => Value::None,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::int(i)
            } else if let Some(u) = n.as_u64() {
                Value::int(u)
            } else {
                return Err(bad(format!(
                    "{n} is not an integer (actor values have no floats; use {{\"$int\": \"…\"}} for big ints)"
                )));
            }
        }
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::List(
            items
                .iter()
                .map(|i| value_from_json_at(i, depth + 1))
                .collect::<Result<_>>()?,
        ),
        Json::Object(m) => {
            if m.len() == 1 {
                let (k, v) = m.iter().next().expect("one entry");
                match (k.as_str(), v) {
                    ("$bytes", Json::String(s)) => {
                        return Ok(Value::Bytes(parse_hex("$bytes", s)?))
                    }
                    ("$int", Json::String(s)) => {
                        let i: BigInt = s
                            .trim()
                            .parse()
                            .map_err(|_| bad(format!("$int: {s:?} is not a decimal integer")))?;
                        return Ok(Value::Int(i));
                    }
                    ("$tuple", Json::Array(items)) => {
                        return Ok(Value::Tuple(
                            items
                                .iter()
                                .map(|i| value_from_json_at(i, depth + 1))
                                .collect::<Result<_>>()?,
                        ))
                    }
                    ("$dict", Json::Array(pairs)) => {
                        let mut entries = Vec::with_capacity(pairs.len());
                        for p in pairs {
                            match p.as_array().map(Vec::as_slice) {
                                Some([k, v]) => entries.push((
                                    value_from_json_at(k, depth + 1)?,
                                    value_from_json_at(v, depth + 1)?,
                                )),
                                _ => {
                                    return Err(bad(
                                        "$dict entries must be [key, value] pairs".into()
                                    ))
                                }
                            }
                        }
                        return Value::dict_from(entries).ok_or_else(|| {
                            bad("$dict keys must be hashable (no list or dict)".into())
                        });
                    }
                    (k, _) if k.starts_with('$') => {
                        return Err(bad(format!(
                            "unknown tagged value {k:?} (known: $bytes, $int, $tuple, $dict)"
                        )))
                    }
                    _ => {}
                }
            }
            let mut entries = Vec::with_capacity(m.len());
            for (k, v) in m {
                entries.push((Value::Str(k.clone()), value_from_json_at(v, depth + 1)?));
            }
            Value::dict_from(entries).expect("str keys are hashable")
        }
    })
}

/// A block header.
pub fn header_json(h: &BlockHeader) -> Json {
    json!({
        "hash": h.hash(),
        "chain_id": h.chain_id,
        "height": h.height,
        "timestamp": h.timestamp_ms,
        "proposer": h.proposer,
        "parent_hash": h.parent_hash,
        "tx_root": h.tx_root,
        "state_root": h.state_root,
        "receipts_root": h.receipts_root,
        "cycles_used": h.cycles_used,
        "cells_used": h.cells_used,
        "lane_basefee": h.lane_basefee,
    })
}

/// A block: its header fields plus `txs` (hashes, or full transactions when
/// `full` is set).
pub fn block_json(b: &Block, full: bool) -> Json {
    let mut j = header_json(&b.header);
    let txs: Vec<Json> = b
        .txs
        .iter()
        .map(|t| if full { tx_json(t) } else { json!(t.hash()) })
        .collect();
    j["txs"] = Json::Array(txs);
    j
}

/// A signed transaction.
pub fn tx_json(t: &SignedTransaction) -> Json {
    let tx = &t.tx;
    json!({
        "hash": t.hash(),
        "sender": t.recover_sender().ok(),
        "chain_id": tx.chain_id,
        "nonce": tx.nonce,
        "cycles_limit": tx.cycles_limit,
        "cells_limit": tx.cells_limit,
        "max_fee_per_cycle": amount(tx.max_fee_per_cycle),
        "max_fee_per_cell": amount(tx.max_fee_per_cell),
        "priority_fee_per_cycle": amount(tx.priority_fee_per_cycle),
        "kind": kind_json(&tx.kind),
    })
}

fn kind_json(k: &TxKind) -> Json {
    match k {
        TxKind::Transfer { to, amount: a } => {
            json!({ "type": "transfer", "to": to, "amount": amount(*a) })
        }
        TxKind::DeployActor { code, args, value } => json!({
            "type": "deploy",
            "code_size": code.len(),
            "args": args.iter().map(value_to_json).collect::<Vec<_>>(),
            "value": amount(*value),
        }),
        TxKind::CallActor {
            actor,
            handler,
            args,
            value,
        } => json!({
            "type": "call",
            "actor": actor,
            "handler": handler,
            "args": args.iter().map(value_to_json).collect::<Vec<_>>(),
            "value": amount(*value),
        }),
        TxKind::System(s) => {
            let mut j = match s {
                SystemInstruction::UpdateBasefeeConfig(c) => {
                    json!({ "instruction": "update_basefee_config", "config": basefee_config_json(c) })
                }
                SystemInstruction::CancelTimer { timer_id } => {
                    json!({ "instruction": "cancel_timer", "timer_id": timer_id })
                }
                SystemInstruction::ExtendTimer {
                    timer_id,
                    new_expires_at,
                } => json!({
                    "instruction": "extend_timer",
                    "timer_id": timer_id,
                    "new_expires_at": new_expires_at,
                }),
                SystemInstruction::UpdateTimerConfig(c) => {
                    json!({ "instruction": "update_timer_config", "config": timer_config_json(c) })
                }
                SystemInstruction::PauseTimers => json!({ "instruction": "pause_timers" }),
                SystemInstruction::ResumeTimers => json!({ "instruction": "resume_timers" }),
                SystemInstruction::ShutdownTimers => json!({ "instruction": "shutdown_timers" }),
                SystemInstruction::SubmitProposal(action) => {
                    json!({ "instruction": "submit_proposal", "action": proposal_action_json(action) })
                }
                SystemInstruction::CastVote {
                    proposal_id,
                    approve,
                } => json!({
                    "instruction": "cast_vote",
                    "proposal_id": proposal_id,
                    "approve": approve,
                }),
                SystemInstruction::ExecuteProposal { proposal_id } => {
                    json!({ "instruction": "execute_proposal", "proposal_id": proposal_id })
                }
            };
            j["type"] = json!("system");
            j
        }
        TxKind::RevokeTimerPayments => json!({ "type": "revoke_timer_payments" }),
    }
}

/// A proposal's action: `{"kind", …its fields}` (configs as in
/// `th_getTimerConfig` / `th_getBasefeeConfig`, keys as `0x` hex).
pub fn proposal_action_json(action: &timerhost_types::ProposalAction) -> Json {
    use timerhost_types::ProposalAction as A;
    let key = |k: &[u8; 32]| json!(timerhost_types::Hash(*k));
    let mut j = match action {
        A::UpdateTimerConfig(c) => json!({ "config": timer_config_json(c) }),
        A::UpdateBasefeeConfig(c) => json!({ "config": basefee_config_json(c) }),
        A::AddValidator {
            public_key,
            power,
            operator,
        } => json!({ "public_key": key(public_key), "power": power, "operator": operator }),
        A::RemoveValidator { public_key } => json!({ "public_key": key(public_key) }),
        A::SetValidatorPower { public_key, power } => {
            json!({ "public_key": key(public_key), "power": power })
        }
        A::SetSystemDeployers(list) => json!({ "system_deployers": list }),
        A::ScheduleUpgrade { name, height, info } => {
            json!({ "name": name, "height": height, "info": info })
        }
    };
    j["kind"] = json!(action.name());
    j
}

/// A proposal, with its votes and their tally against `set` (the set of
/// the next block, which an execution would count).
pub fn proposal_json(
    p: &timerhost_types::Proposal,
    set: &timerhost_types::ValidatorSetRecord,
) -> Json {
    let tally = p.tally(set);
    json!({
        "proposal_id": p.id,
        "proposer": p.proposer,
        "action": proposal_action_json(&p.action),
        "deposit": amount(p.deposit),
        "submitted_at": p.submitted_at,
        "voting_ends_at": p.voting_ends_at,
        "status": p.status.as_str(),
        "votes": p.votes.iter().map(|(o, a)| json!({ "operator": o, "approve": a })).collect::<Vec<_>>(),
        "yes_power": tally.yes,
        "no_power": tally.no,
        "total_power": tally.total,
    })
}

/// A validator set: its members (address, public key, power, operator) and
/// total power.
pub fn validator_set_json(height: u64, set: &timerhost_types::ValidatorSetRecord) -> Json {
    json!({
        "height": height,
        "total_power": set.total_power(),
        "validators": set.validators.iter().map(|v| json!({
            "address": v.address(),
            "public_key": timerhost_types::Hash(v.public_key),
            "power": v.power,
            "operator": v.operator,
        })).collect::<Vec<_>>(),
    })
}

/// An event.
pub fn event_json(e: &Event) -> Json {
    json!({ "emitter": e.emitter, "name": e.name, "data": value_to_json(&e.data) })
}

/// An event with its position in the chain.
pub fn event_record_json(r: &EventRecord) -> Json {
    let mut j = event_json(&r.event);
    j["height"] = json!(r.height);
    j["receipt_index"] = json!(r.receipt_index);
    j["event_index"] = json!(r.event_index);
    j["tx_hash"] = json!(r.tx_hash);
    j
}

/// A Globalbox entry as `th_getGlobalbox` lists it (amounts as numbers:
/// scores fit JSON's integers only up to 2^53, so they are strings).
pub fn globalbox_json(l: &timerhost_timers::globalbox::Listed) -> Json {
    let e = &l.entry;
    json!({
        "position": l.position,
        "timer_id": e.timer_id,
        "actor": e.actor,
        "kind": l.kind,
        "due_height": e.due_height,
        "bid": e.bid,
        "max_fee_per_cycle": e.max_fee_per_cycle,
        "weight": e.weight,
        "waiting": l.waiting,
        "score": e.score.to_string(),
        "score_now": l.score_now.to_string(),
        "matched_keys": e.matched_keys.as_ref().map(|keys| {
            keys.iter().map(|k| String::from_utf8_lossy(k).into_owned()).collect::<Vec<_>>()
        }),
    })
}

/// A receipt.
pub fn receipt_json(r: &Receipt) -> Json {
    let source = match &r.source {
        TxSource::User => json!({ "type": "user" }),
        TxSource::Deferred {
            origin_tx_hash,
            fee_payer,
            delivery,
        } => {
            let mut source = json!({ "type": "deferred", "origin_tx_hash": origin_tx_hash, "fee_payer": fee_payer });
            if let Some(d) = delivery {
                source["deliver_seq"] = json!(d.deliver_seq);
                source["fire_seq"] = json!(d.fire_seq);
                source["deliver_id"] = json!(d.deliver_id);
            }
            source
        }
        TxSource::EndOfBlock => json!({ "type": "end_of_block" }),
        TxSource::StartOfBlock => json!({ "type": "start_of_block" }),
    };
    json!({
        "tx_hash": r.tx_hash,
        "sender": r.sender,
        "source": source,
        "status": r.status,
        "error": r.error,
        "cycles_used": r.cycles_used,
        "cells_used": r.cells_used,
        "fee_paid": amount(r.fee_paid),
        "burned": amount(r.burned),
        "tip": amount(r.tip),
        "events": r.events.iter().map(event_json).collect::<Vec<_>>(),
        "return_value": r.return_value.as_ref().map(value_to_json),
        "created_actor": r.created_actor,
    })
}

/// A pending timer.
pub fn timer_json(t: &Timer) -> Json {
    json!({
        "timer_id": t.timer_id,
        "actor": t.actor_address,
        "height": t.height,
        "payload": hex0x(&t.payload),
        "handler": t.handler,
        "fee_payer": t.fee_payer,
        "gas_limit_per_fire": t.gas_limit_per_fire,
        "expires_at": t.expires_at,
        "seq": t.seq,
        "deposit": amount(t.deposit),
        "bid": t.bid,
        "max_fee_per_cycle": t.max_fee_per_cycle,
        "max_priority_fee_per_cycle": t.bid,
        "escrow_key": t.escrow_key.as_deref().map(String::from_utf8_lossy),
        "trigger": value_to_json(&t.trigger_value()),
        "booked": t.booked,
        "retry": t.retry.as_ref().map(|r| json!({
            "retries": r.retries,
            "backoff": r.backoff,
            "failures": r.failures,
        })),
    })
}

/// The timer config (counts as JSON numbers, `deposit_per_byte` as a decimal string).
pub fn timer_config_json(c: &TimerConfig) -> Json {
    serde_json::to_value(c).expect("TimerConfig serialises")
}

/// A timer quote (amounts as decimal strings, cycles and counts as numbers).
pub fn quote_json(q: &timerhost_types::TimerQuote) -> Json {
    serde_json::json!({
        "height": q.height,
        "timestamp_ms": q.timestamp_ms,
        "gas_limit": q.gas_limit,
        "max_cost": amount(q.max_cost),
        "deposit": amount(q.deposit),
        "lane_budget": q.lane_budget,
        "reserved": q.reserved,
        "queued": q.queued,
        "fits": q.fits,
        "max_attempts": q.max_attempts,
        "worst_case_cost": amount(q.worst_case_cost),
        "bookable": q.booking.as_ref().map(|b| b.bookable),
        "booking_fee": q.booking.as_ref().and_then(|b| b.booking_fee).map(amount),
        "booking": q.booking.as_ref().map(|b| serde_json::json!({
            "bookable": b.bookable,
            "booking_fee": b.booking_fee.map(amount),
            "reason": b.reason,
            "booked_cycles": b.booked_cycles,
            "booked_fires": b.booked_fires,
            "share_cycles": b.share_cycles,
            "share_fires": b.share_fires,
            "free_heights": b.free_heights,
        })),
        "lane_basefee": q.lane_basefee,
        "max_fee_per_cycle": q.max_fee_per_cycle,
        "max_priority_fee_per_cycle": q.max_priority_fee_per_cycle,
        "suggested_fees": q.suggested_fees,
    })
}

/// The basefee config (fees as decimal strings, limits as numbers).
pub fn basefee_config_json(c: &BasefeeConfig) -> Json {
    serde_json::to_value(c).expect("BasefeeConfig serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(j: Json) -> Json {
        value_to_json(&value_from_json(&j).unwrap())
    }

    #[test]
    fn values_map_both_ways() {
        assert_eq!(roundtrip(json!(null)), json!(null));
        assert_eq!(
            roundtrip(json!([1, -2, "x", true])),
            json!([1, -2, "x", true])
        );
        assert_eq!(
            roundtrip(json!({"b": {"$bytes": "0x00ff"}, "a": 1})),
            json!({"a": 1, "b": {"$bytes": "0x00ff"}})
        );
        let big = value_from_json(&json!({"$int": "-1000000000000000000000"})).unwrap();
        assert_eq!(big, Value::int(-1_000_000_000_000_000_000_000i128));
        assert_eq!(value_to_json(&big), json!("-1000000000000000000000"));
        assert_eq!(
            value_to_json(&Value::int(SAFE_INT)),
            json!(SAFE_INT.to_string())
        );
        assert_eq!(
            value_to_json(&Value::int(SAFE_INT - 1)),
            json!(SAFE_INT - 1)
        );
        assert_eq!(
            value_from_json(&json!({"$tuple": [1, "a"]})).unwrap(),
            Value::Tuple(vec![Value::int(1), Value::str("a")])
        );
        let d = value_from_json(&json!({"$dict": [[1, "one"], [{"$tuple": [2]}, null]]})).unwrap();
        assert_eq!(
            value_to_json(&d),
            json!({"$dict": [[1, "one"], [[2], null]]})
        );
    }

    #[test]
    fn bad_values_are_named() {
        let e = value_from_json(&json!(1.5)).unwrap_err().to_string();
        assert!(e.contains("no floats"), "{e}");
        let e = value_from_json(&json!({"$nope": 1}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown tagged value"), "{e}");
        let e = value_from_json(&json!({"$bytes": "zz"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("0x"), "{e}");
        let e = value_from_json(&json!({"$dict": [[[1], 2]]}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("hashable"), "{e}");
    }
}
