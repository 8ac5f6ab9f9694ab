//! The `pvm_host` module actors import: block and caller context,
//! balances and transfers, events, nested calls and the timer host calls.

use rustpython_vm::builtins::{PyBytes, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::{
    Address, ErrorKind, Event, Hash, Invocation, RequestedTrigger, TimerRequest, Value,
};

use crate::convert::{py_to_value, value_to_py};
use crate::costs;
use crate::exec::{
    abort_exception, charge, current_actor, host_error, host_error_kind, host_result, with_exec,
    Frame, HOST,
};
use crate::sizes::*;

/// Deepest chain of nested `pvm_host.call`s (the outermost handler is depth 1).
pub const MAX_CALL_DEPTH: usize = 32;

pub(crate) fn parse_address(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Address> {
    if let Some(text) = obj.downcast_ref::<PyStr>() {
        let text = text.to_str().unwrap_or_default();
        return text
            .parse::<Address>()
            .map_err(|e| vm.new_value_error(format!("bad address: {e}")));
    }
    if let Some(bytes) = obj.downcast_ref::<PyBytes>() {
        return Address::from_slice(bytes.as_bytes())
            .map_err(|e| vm.new_value_error(format!("bad address: {e}")));
    }
    Err(vm.new_type_error("an address is a '0x…' str or 20 bytes"))
}

pub(crate) fn parse_u64(obj: &PyObjectRef, what: &str, vm: &VirtualMachine) -> PyResult<u64> {
    int_value(obj)
        .and_then(|i| u64::try_from(int_to_i128(i)?).ok())
        .ok_or_else(|| vm.new_value_error(format!("{what} must be a non-negative int below 2**64")))
}

pub(crate) fn parse_u128(obj: &PyObjectRef, what: &str, vm: &VirtualMachine) -> PyResult<u128> {
    int_value(obj)
        .and_then(|i| u128::try_from(int_to_i128(i)?).ok())
        .ok_or_else(|| {
            vm.new_value_error(format!("{what} must be a non-negative int below 2**128"))
        })
}

pub(crate) fn parse_timer_id(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Hash> {
    obj.downcast_ref::<PyBytes>()
        .and_then(|b| Hash::from_slice(b.as_bytes()).ok())
        .ok_or_else(|| vm.new_value_error("a timer id is 32 bytes"))
}

pub(crate) fn optional(obj: Option<&PyObjectRef>, vm: &VirtualMachine) -> Option<PyObjectRef> {
    obj.filter(|o| !vm.is_none(o)).cloned()
}

pub(crate) fn take_kwarg(args: &mut FuncArgs, name: &str) -> Option<PyObjectRef> {
    args.kwargs.swap_remove(name)
}

/// Binds `args` to the parameters `names` of `function` as Python would:
/// positionally, then by keyword; `None` for an argument not given. Too
/// many arguments, an unknown keyword or one given twice is a `TypeError`
/// naming it; the first `required` parameters must be given.
pub(crate) fn bind<const N: usize>(
    mut args: FuncArgs,
    function: &str,
    names: [&str; N],
    required: usize,
    vm: &VirtualMachine,
) -> PyResult<[Option<PyObjectRef>; N]> {
    if args.args.len() > names.len() {
        return Err(vm.new_type_error(format!(
            "{function}() takes at most {} arguments ({}), {} given",
            names.len(),
            names.join(", "),
            args.args.len()
        )));
    }
    let mut bound: Vec<Option<PyObjectRef>> = std::mem::take(&mut args.args)
        .into_iter()
        .map(Some)
        .collect();
    bound.resize(names.len(), None);
    for (slot, name) in bound.iter_mut().zip(names) {
        if let Some(value) = take_kwarg(&mut args, name) {
            if slot.is_some() {
                return Err(vm.new_type_error(format!(
                    "{function}() got multiple values for argument '{name}'"
                )));
            }
            *slot = Some(value);
        }
    }
    if let Some((name, _)) = args.kwargs.iter().next() {
        return Err(vm.new_type_error(format!(
            "{function}() got an unexpected keyword argument '{name}'"
        )));
    }
    if let Some(missing) = bound[..required].iter().position(Option::is_none) {
        return Err(vm.new_type_error(format!(
            "{function}() missing required argument '{}'",
            names[missing]
        )));
    }
    Ok(bound.try_into().expect("one slot per name"))
}

fn optional_u64(
    obj: &Option<PyObjectRef>,
    what: &str,
    vm: &VirtualMachine,
) -> PyResult<Option<u64>> {
    optional(obj.as_ref(), vm)
        .map(|v| parse_u64(&v, what, vm))
        .transpose()
}

fn optional_address(obj: &Option<PyObjectRef>, vm: &VirtualMachine) -> PyResult<Option<Address>> {
    optional(obj.as_ref(), vm)
        .map(|v| parse_address(&v, vm))
        .transpose()
}

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
        ("call", vm.new_function("call", call_native).into()),
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
                ];
                let [keys, payload, actor, handler, fee_payer, gas_limit, expires_at] =
                    bind(args, "watch", names, 1, vm)?;
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
                    bid: None,
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
                    let names = ["height", "timestamp_ms", "gas_limit"];
                    let [height, timestamp_ms, gas_limit] =
                        bind(args, "timer_quote", names, 0, vm)?;
                    let request = timerhost_types::QuoteRequest {
                        height: optional_u64(&height, "height", vm)?,
                        timestamp_ms: optional_u64(&timestamp_ms, "timestamp_ms", vm)?,
                        gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
                    };
                    let call = HOST.with(|slot| slot.host.timer_quote(request));
                    let quote = host_result(call, vm)?;
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

/// `schedule_timer_ex(height, payload, fee_payer=None, gas_limit=None,
/// expires_at=None, bid=None)` and `schedule_timer_at(timestamp_ms, …)` with
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
    ];
    let [at, payload, fee_payer, gas_limit, expires_at, bid] = bind(args, function, names, 2, vm)?;
    let at = parse_u64(at.as_ref().expect("required"), due, vm)?;
    let request = TimerRequest {
        trigger: trigger(at),
        payload: payload_bytes(payload.as_ref().expect("required"), vm)?,
        fee_payer: optional_address(&fee_payer, vm)?,
        gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
        expires_at: optional_u64(&expires_at, "expires_at", vm)?,
        bid: optional_u64(&bid, "bid", vm)?,
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

/// `pvm_host.call(actor, handler, *args, value=0)`: runs another actor's
/// handler synchronously inside a host checkpoint. Its failure reverts its
/// effects and raises `HostError` in the caller (or re-raises an abort,
/// which the whole execution shares).
pub(crate) fn call_native(mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let value = take_kwarg(&mut args, "value");
    if let Some((name, _)) = args.kwargs.iter().next() {
        return Err(vm.new_type_error(format!(
            "call() got an unexpected keyword argument '{name}'"
        )));
    }
    if args.args.len() < 2 {
        return Err(vm.new_type_error("call(actor, handler, *args, value=0)"));
    }
    let target = parse_address(&args.args[0], vm)?;
    let handler = args.args[1]
        .downcast_ref::<PyStr>()
        .and_then(|s| s.to_str().map(str::to_owned))
        .ok_or_else(|| vm.new_type_error("handler must be str"))?;
    let call_args: Vec<Value> = args.args[2..]
        .iter()
        .map(|a| py_to_value(a, vm))
        .collect::<PyResult<_>>()?;
    // Converted here and rebuilt as objects in the callee.
    for arg in &call_args {
        charge_conversion(arg, 2, vm)?;
    }
    let amount = match &value {
        Some(v) => parse_u128(v, "value", vm)?,
        None => 0,
    };
    let payload_cells =
        Value::List(call_args.clone()).to_bytes().len() as u64 + handler.len() as u64;
    charge(costs::host::CALL, payload_cells, vm)?;

    let caller = current_actor();
    let depth = with_exec(|s| s.frames.len());
    if depth >= MAX_CALL_DEPTH {
        return Err(host_error(
            ErrorKind::CallDepthExceeded,
            &format!("nested calls are limited to depth {MAX_CALL_DEPTH}"),
            vm,
        ));
    }
    if let Some((kind, message)) = crate::compile::refuse_name(&handler) {
        return Err(host_error(kind, &message, vm));
    }
    let record = host_result(HOST.with(|slot| slot.host.actor_record(&target)), vm)?
        .ok_or_else(|| host_error(ErrorKind::NotFound, &format!("no actor at {target}"), vm))?;
    let code_cache = with_exec(|s| s.code_cache.clone());
    let compiled = HOST
        .with(|slot| code_cache.get_or_compile(&record.code_hash, &mut *slot.host))
        .ok_or_else(|| {
            host_error(
                ErrorKind::NotFound,
                &format!("code of {target} is unavailable"),
                vm,
            )
        })?;

    if let Some((kind, message)) =
        crate::compile::refuse_timer_handler(&compiled, &handler, &Invocation::Transaction)
    {
        return Err(host_error(kind, &message, vm));
    }

    let checkpoint = HOST.with(|slot| slot.host.checkpoint());
    let events_before = with_exec(|s| s.events.len());
    let result = (|| -> PyResult {
        if amount > 0 {
            host_result(
                HOST.with(|slot| slot.host.transfer(&caller, &target, amount)),
                vm,
            )?;
        }
        with_exec(|s| {
            s.frames.push(Frame {
                actor: target,
                caller,
            })
        });
        let invoke = with_exec(|s| s.invoke);
        let outcome = invoke(
            &compiled,
            &target,
            &record.deployer,
            &handler,
            &call_args,
            vm,
        );
        with_exec(|s| s.frames.pop());
        let returned = outcome?.ok_or_else(|| {
            host_error(
                ErrorKind::NotFound,
                &format!("actor {target} has no handler '{handler}'"),
                vm,
            )
        })?;
        // Values cross actor boundaries by copy, never by reference; the
        // copy is paid by size like any other conversion.
        let value = py_to_value(&returned, vm)?;
        charge(costs::for_bytes(value.to_bytes().len() as u64), 0, vm)?;
        charge_conversion(&value, 2, vm)?;
        Ok(value_to_py(&value, vm))
    })();
    match result {
        Ok(value) => {
            HOST.with(|slot| slot.host.commit(checkpoint));
            Ok(value)
        }
        Err(exc) => {
            HOST.with(|slot| slot.host.revert(checkpoint));
            with_exec(|s| s.events.truncate(events_before));
            if let Some(abort) = with_exec(|s| s.meter.abort) {
                return Err(abort_exception(abort, vm));
            }
            // A HostError escaping the callee (a host rejection or a deeper
            // call's failure) already names the root cause and its kind:
            // pass it up unchanged instead of nesting messages 32 deep.
            if host_error_kind(&exc, vm).is_some() {
                return Err(exc);
            }
            let message = crate::exec::exception_message(&exc, vm);
            Err(host_error(
                ErrorKind::Revert,
                &format!("call to {target}.{handler} failed: {message}"),
                vm,
            ))
        }
    }
}
