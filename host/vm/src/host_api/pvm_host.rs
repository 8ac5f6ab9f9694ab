//! The `pvm_host` module actors import: block and caller context,
//! balances and transfers, events, nested calls and the timer host calls.

use rustpython_vm::builtins::{PyBytes, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::{ErrorKind, Event, RequestedTrigger, TimerRequest};

use crate::host_api::args::{
    bind, optional, optional_address, optional_u64, parse_address, parse_timer_id, parse_u128,
    parse_u64,
};
use crate::host_api::convert::{py_to_value, value_to_py};
use crate::host_api::exec::{current_actor, host_error, host_result, with_exec, HOST};
use crate::meter::charge::charge;
use crate::meter::sizes::*;
use crate::rules::costs;

/// `watch(keys, ...)`'s `keys`: a str or a list/tuple of str.
fn watch_entries(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<String>> {
    let as_str = |o: &PyObjectRef| {
        o.downcast_ref::<PyStr>()
            .and_then(|s| s.to_str().map(str::to_owned))
            .ok_or_else(|| {
                vm.new_type_error("watch keys must be str (a key, or a prefix ending in '*')")
            })
    };
    if obj.downcast_ref::<PyStr>().is_some() {
        return Ok(vec![as_str(obj)?]);
    }
    let items: Vec<PyObjectRef> =
        if let Some(list) = obj.downcast_ref::<rustpython_vm::builtins::PyList>() {
            list.borrow_vec().to_vec()
        } else if let Some(tuple) = obj.downcast_ref::<rustpython_vm::builtins::PyTuple>() {
            tuple.as_slice().to_vec()
        } else {
            return Err(vm.new_type_error("watch keys must be a str or a list of str"));
        };
    // Bounded before conversion: the host refuses more than max_watch_keys.
    if items.len() > 1_024 {
        return Err(vm.new_value_error(format!(
            "watch() got {} keys; max_watch_keys is far smaller",
            items.len()
        )));
    }
    charge(costs::for_bytes(items.len() as u64), 0, vm)?;
    items.iter().map(as_str).collect()
}

pub(crate) fn host_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    let context_read = |vm: &VirtualMachine| charge(costs::host::CONTEXT_READ, 0, vm);
    vec![
        (
            "block_height",
            vm.new_function(
                "block_height",
                move |vm: &VirtualMachine| -> PyResult<u64> {
                    context_read(vm)?;
                    Ok(with_exec(|s| s.block.height))
                },
            )
            .into(),
        ),
        (
            // Whole seconds, as before block timestamps became milliseconds.
            "block_timestamp",
            vm.new_function(
                "block_timestamp",
                move |vm: &VirtualMachine| -> PyResult<u64> {
                    context_read(vm)?;
                    Ok(with_exec(|s| s.block.timestamp_ms / 1000))
                },
            )
            .into(),
        ),
        (
            // Why this execution runs: the fire's trigger, or None for a
            // transaction — and for an actor reached through
            // `pvm_host.call` (the fire called the first actor, not it).
            "trigger",
            vm.new_function(
                "trigger",
                move |vm: &VirtualMachine| -> PyResult<PyObjectRef> {
                    context_read(vm)?;
                    let fire = with_exec(|s| s.fire.clone().filter(|_| s.frames.len() == 1));
                    Ok(match fire {
                        Some(fire) => value_to_py(&fire.to_value(), vm),
                        None => vm.ctx.none(),
                    })
                },
            )
            .into(),
        ),
        (
            "block_timestamp_ms",
            vm.new_function(
                "block_timestamp_ms",
                move |vm: &VirtualMachine| -> PyResult<u64> {
                    context_read(vm)?;
                    Ok(with_exec(|s| s.block.timestamp_ms))
                },
            )
            .into(),
        ),
        (
            "actor_address",
            vm.new_function(
                "actor_address",
                move |vm: &VirtualMachine| -> PyResult<String> {
                    context_read(vm)?;
                    Ok(current_actor().to_hex())
                },
            )
            .into(),
        ),
        (
            "tx_sender",
            vm.new_function(
                "tx_sender",
                move |vm: &VirtualMachine| -> PyResult<String> {
                    context_read(vm)?;
                    Ok(with_exec(|s| s.tx_sender).to_hex())
                },
            )
            .into(),
        ),
        (
            "caller",
            vm.new_function("caller", move |vm: &VirtualMachine| -> PyResult<String> {
                context_read(vm)?;
                Ok(with_exec(|s| s.frames.last().expect("a frame").caller).to_hex())
            })
            .into(),
        ),
        (
            // What the transaction or the calling actor sent along with
            // this call (already in this actor's balance): ARC-21's
            // `msg.value`. 0 in a timer fire.
            "value",
            vm.new_function("value", move |vm: &VirtualMachine| -> PyResult {
                context_read(vm)?;
                let value = with_exec(|s| s.frames.last().expect("a frame").value);
                Ok(vm.ctx.new_int(value).into())
            })
            .into(),
        ),
        (
            // Cycles this execution has used so far, nested calls included:
            // the difference around a `pvm_host.call` is what it used.
            "cycles_used",
            vm.new_function(
                "cycles_used",
                move |vm: &VirtualMachine| -> PyResult<u64> {
                    context_read(vm)?;
                    Ok(crate::meter::charge::with_meter(|meter| meter.cycles_used))
                },
            )
            .into(),
        ),
        (
            "release_escrow",
            vm.new_function(
                "release_escrow",
                |to: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let to = parse_address(&to, vm)?;
                    let funded = with_exec(|s| {
                        s.frames.len() == 1
                            && s.fire.as_ref().is_some_and(|f| f.escrow_key.is_some())
                    });
                    if !funded {
                        return Err(host_error(
                            ErrorKind::InvalidInput,
                            "release_escrow: only the handler of a fire whose timer was scheduled with escrow= can release its escrow",
                            vm,
                        ));
                    }
                    let call = HOST.with(|slot| slot.host.release_escrow(&to));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "balance",
            vm.new_function(
                "balance",
                |account: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let account = parse_address(&account, vm)?;
                    let call = HOST.with(|slot| slot.host.balance(&account));
                    let balance = host_result(call, vm)?;
                    Ok(vm.ctx.new_int(balance).into())
                },
            )
            .into(),
        ),
        (
            "transfer",
            vm.new_function(
                "transfer",
                |to: PyObjectRef, amount: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let to = parse_address(&to, vm)?;
                    let amount = parse_u128(&amount, "amount", vm)?;
                    // #28: one rule for every plain payment (Transfer
                    // transactions, release_escrow): never to the zero
                    // address, never into a system actor's books.
                    if let Some(refusal) = to.payment_refusal() {
                        return Err(host_error(
                            ErrorKind::InvalidInput,
                            &format!("transfer to {to}: {refusal}"),
                            vm,
                        ));
                    }
                    let from = current_actor();
                    let call = HOST.with(|slot| slot.host.transfer(&from, &to, amount));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "emit",
            vm.new_function(
                "emit",
                |name: PyObjectRef, data: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let name = name
                        .downcast_ref::<PyStr>()
                        .and_then(|s| s.to_str().map(str::to_owned))
                        .ok_or_else(|| vm.new_type_error("event name must be str"))?;
                    if timerhost_types::is_protocol_event_name(&name) {
                        return Err(host_error(
                            ErrorKind::InvalidInput,
                            &format!(
                                "emit: the event name {name:?} is in the protocol's namespace (names beginning with {}); name your event differently",
                                timerhost_types::PROTOCOL_EVENT_PREFIXES
                                    .iter()
                                    .map(|p| format!("{p:?}"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                            vm,
                        ));
                    }
                    // Converting and encoding copy the data (see storage writes).
                    crate::meter::sizes::charge_size(&data, vm)?;
                    let data = py_to_value(&data, vm)?;
                    charge_conversion(&data, 1, vm)?;
                    let encoded = data.to_bytes();
                    precheck_result_bytes(encoded.len() as u128, vm)?;
                    let emitter = current_actor();
                    let call = HOST.with(|slot| slot.host.emit(&emitter, &name, &encoded));
                    host_result(call, vm)?;
                    with_exec(|s| {
                        s.events.push(Event {
                            emitter,
                            name,
                            data,
                        })
                    });
                    Ok(())
                },
            )
            .into(),
        ),
        ("call", vm.new_function("call", crate::host_api::call_native::call_native).into()),
        (
            "schedule_timer",
            vm.new_function(
                "schedule_timer",
                |height: PyObjectRef, payload: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let request = TimerRequest {
                        trigger: RequestedTrigger::Height(parse_u64(&height, "height", vm)?),
                        payload: payload_bytes(&payload, vm)?,
                        fee_payer: None,
                        gas_limit: None,
                        expires_at: None,
                        bid: None,
                        max_fee_per_cycle: None,
                        escrow_key: None,
                    };
                    schedule(request, vm)
                },
            )
            .into(),
        ),
        (
            "schedule_timer_ex",
            vm.new_function(
                "schedule_timer_ex",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                    schedule_one_shot(
                        args,
                        "schedule_timer_ex",
                        "height",
                        RequestedTrigger::Height,
                        vm,
                    )
                },
            )
            .into(),
        ),
        (
            "schedule_timer_at",
            vm.new_function(
                "schedule_timer_at",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                    schedule_one_shot(
                        args,
                        "schedule_timer_at",
                        "timestamp_ms",
                        RequestedTrigger::Time,
                        vm,
                    )
                },
            )
            .into(),
        ),
        (
            "watch",
            vm.new_function("watch", |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                let names = [
                    "keys",
                    "payload",
                    "actor",
                    "handler",
                    "fee_payer",
                    "gas_limit",
                    "expires_at",
                    "bid",
                    "max_fee_per_cycle",
                    "max_priority_fee_per_cycle",
                ];
                let [keys, payload, actor, handler, fee_payer, gas_limit, expires_at, bid, max_fee, max_priority] =
                    bind(args, "watch", names, 1, vm)?;
                let (bid, max_fee_per_cycle) = fee_caps(&bid, &max_fee, &max_priority, vm)?;
                let handler = optional(handler.as_ref(), vm)
                    .map(|h| {
                        h.downcast_ref::<PyStr>()
                            .and_then(|s| s.to_str().map(str::to_owned))
                            .ok_or_else(|| vm.new_type_error("watch handler must be str"))
                    })
                    .transpose()?;
                let payload = match optional(payload.as_ref(), vm) {
                    Some(p) => payload_bytes(&p, vm)?,
                    None => Vec::new(),
                };
                let request = TimerRequest {
                    trigger: RequestedTrigger::State {
                        actor: optional_address(&actor, vm)?,
                        keys: watch_entries(keys.as_ref().expect("required"), vm)?,
                        handler,
                    },
                    payload,
                    fee_payer: optional_address(&fee_payer, vm)?,
                    gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
                    expires_at: optional_u64(&expires_at, "expires_at", vm)?,
                    bid,
                    max_fee_per_cycle,
                    escrow_key: None,
                };
                schedule(request, vm)
            })
            .into(),
        ),
        (
            "extend_timer",
            vm.new_function(
                "extend_timer",
                |timer_id: PyObjectRef,
                 new_expires_at: PyObjectRef,
                 vm: &VirtualMachine|
                 -> PyResult<()> {
                    let timer_id = parse_timer_id(&timer_id, vm)?;
                    let new_expires_at = parse_u64(&new_expires_at, "new_expires_at", vm)?;
                    let actor = current_actor();
                    let call =
                        HOST.with(|slot| slot.host.extend_timer(&actor, &timer_id, new_expires_at));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "cancel_timer",
            vm.new_function(
                "cancel_timer",
                |timer_id: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let timer_id = parse_timer_id(&timer_id, vm)?;
                    let actor = current_actor();
                    let call = HOST.with(|slot| slot.host.cancel_timer(&actor, &timer_id));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "revoke_timer_payments",
            vm.new_function(
                "revoke_timer_payments",
                |vm: &VirtualMachine| -> PyResult<()> {
                    let actor = current_actor();
                    let call = HOST.with(|slot| slot.host.revoke_timer_payments(&actor));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "timer_quote",
            vm.new_function(
                "timer_quote",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult<PyObjectRef> {
                    let names = [
                        "height",
                        "timestamp_ms",
                        "gas_limit",
                        "bid",
                        "max_fee_per_cycle",
                        "max_priority_fee_per_cycle",
                    ];
                    let [height, timestamp_ms, gas_limit, bid, max_fee, max_priority] =
                        bind(args, "timer_quote", names, 0, vm)?;
                    let (bid, max_fee_per_cycle) = fee_caps(&bid, &max_fee, &max_priority, vm)?;
                    let request = timerhost_types::QuoteRequest {
                        height: optional_u64(&height, "height", vm)?,
                        timestamp_ms: optional_u64(&timestamp_ms, "timestamp_ms", vm)?,
                        gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
                        bid,
                        max_fee_per_cycle,
                    };
                    let call = HOST.with(|slot| slot.host.timer_quote(request));
                    let quote = host_result(call, vm)?;
                    // The VM's side: binding the keywords and building the
                    // quote's dict, ~1 µs (107 ns per cycle in the fairness
                    // benchmark at the host's 10 alone).
                    charge(crate::rules::costs::host::TIMER_QUOTE_VM, 0, vm)?;
                    Ok(value_to_py(&quote.to_value(), vm))
                },
            )
            .into(),
        ),
        (
            // `@pvm_host.timer_handler` marks a method only a timer fire may
            // invoke. The mark is read from the source at deploy
            // (`CompiledActor::timer_handlers`); at run time the decorator
            // returns the method unchanged.
            "timer_handler",
            vm.new_function("timer_handler", |method: PyObjectRef| -> PyObjectRef {
                method
            })
            .into(),
        ),
    ]
}

pub(crate) fn payload_bytes(payload: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    payload
        .downcast_ref::<PyBytes>()
        .map(|b| b.as_bytes().to_vec())
        .ok_or_else(|| vm.new_type_error("timer payload must be bytes"))
}

/// The fee keywords of a schedule or a quote (#31): `bid=` and
/// `max_priority_fee_per_cycle=` name the same priority fee (give one), and
/// `max_fee_per_cycle=` the lane fee cap. `(priority fee, fee cap)`.
fn fee_caps(
    bid: &Option<PyObjectRef>,
    max_fee: &Option<PyObjectRef>,
    max_priority: &Option<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<(Option<u64>, Option<u64>)> {
    let bid = optional_u64(bid, "bid", vm)?;
    let priority = optional_u64(max_priority, "max_priority_fee_per_cycle", vm)?;
    let priority = match (bid, priority) {
        (Some(_), Some(_)) => {
            return Err(vm.new_type_error(
                "bid= and max_priority_fee_per_cycle= name the same priority fee: give one",
            ))
        }
        (a, b) => a.or(b),
    };
    Ok((priority, optional_u64(max_fee, "max_fee_per_cycle", vm)?))
}

/// `schedule_timer_ex(height, payload, fee_payer=None, gas_limit=None,
/// expires_at=None, bid=None, escrow=None, max_fee_per_cycle=None,
/// max_priority_fee_per_cycle=None)` and `schedule_timer_at(timestamp_ms, …)` with
/// the same options: `due` names the first parameter, `trigger` makes it
/// the request's trigger.
fn schedule_one_shot(
    args: FuncArgs,
    function: &str,
    due: &'static str,
    trigger: fn(u64) -> RequestedTrigger,
    vm: &VirtualMachine,
) -> PyResult {
    let names = [
        due,
        "payload",
        "fee_payer",
        "gas_limit",
        "expires_at",
        "bid",
        "escrow",
        "max_fee_per_cycle",
        "max_priority_fee_per_cycle",
    ];
    let [at, payload, fee_payer, gas_limit, expires_at, bid, escrow, max_fee, max_priority] =
        bind(args, function, names, 2, vm)?;
    let (bid, max_fee_per_cycle) = fee_caps(&bid, &max_fee, &max_priority, vm)?;
    let at = parse_u64(at.as_ref().expect("required"), due, vm)?;
    let request = TimerRequest {
        trigger: trigger(at),
        payload: payload_bytes(payload.as_ref().expect("required"), vm)?,
        fee_payer: optional_address(&fee_payer, vm)?,
        gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
        expires_at: optional_u64(&expires_at, "expires_at", vm)?,
        bid,
        max_fee_per_cycle,
        escrow_key: optional(escrow.as_ref(), vm)
            .map(|key| crate::host_api::storage_natives::storage_key(&key, vm))
            .transpose()?,
    };
    schedule(request, vm)
}

pub(crate) fn schedule(request: TimerRequest, vm: &VirtualMachine) -> PyResult {
    let actor = current_actor();
    // The outermost frame is the actor the transaction (or fire) targets.
    let nested = with_exec(|s| s.frames.len() > 1);
    let call = HOST.with(|slot| slot.host.schedule_timer(&actor, nested, request));
    let timer_id = host_result(call, vm)?;
    Ok(vm.ctx.new_bytes(timer_id.as_bytes().to_vec()).into())
}
