//! The `pvm_host` module actors import: block and caller context,
//! balances and transfers, events and nested calls; the timer host calls
//! are in [`crate::host_api::timer_natives`].

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::{ErrorKind, Event};

use crate::host_api::args::{parse_address, parse_u128};
use crate::host_api::convert::{py_to_value, value_to_py};
use crate::host_api::exec::{current_actor, host_error, host_result, with_exec, HOST};
use crate::meter::charge::charge;
use crate::meter::sizes::*;
use crate::rules::costs;

pub(crate) fn host_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    let context_read = |vm: &VirtualMachine| charge(costs::host::CONTEXT_READ, 0, vm);
    let mut functions = vec![
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
    ];
    functions.extend(crate::host_api::timer_natives::timer_functions(vm));
    functions
}
