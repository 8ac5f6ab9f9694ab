//! `pvm_host.call`: one actor calling another's handler, inside a host
//! checkpoint, with an optional value and an optional cycle cap of its own.

use rustpython_vm::builtins::PyStr;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyResult, VirtualMachine};
use timerhost_types::{ErrorKind, Invocation, Value};

use crate::host_api::args::{optional, parse_address, parse_u128, parse_u64, take_kwarg};
use crate::host_api::convert::{py_to_value, value_to_py};
use crate::host_api::exec::{
    current_actor, host_error, host_error_kind, host_result, with_exec, Frame, HOST,
};
use crate::meter::charge::with_meter;
use crate::meter::charge::{abort_exception, charge};
use crate::meter::sizes::*;
use crate::meter::{Abort, Meter};
use crate::rules::costs;

/// Deepest chain of nested `pvm_host.call`s (the outermost handler is depth 1).
pub const MAX_CALL_DEPTH: usize = 32;

/// A call's `gas_limit`: while the callee runs, the meter's cycle limit is
/// lowered to what the caller had used plus the cap (never raised), so the
/// callee's abort stops at the cap and the caller goes on.
struct GasCap {
    /// The limit to restore; `None` when no cap is in force.
    outer_limit: Option<u64>,
    /// The cap asked for.
    gas_limit: u64,
}

impl GasCap {
    fn install(meter: &mut Meter, gas_limit: Option<u64>) -> GasCap {
        let Some(gas_limit) = gas_limit else {
            return GasCap {
                outer_limit: None,
                gas_limit: 0,
            };
        };
        let capped = meter.cycles_used.saturating_add(gas_limit);
        if capped >= meter.cycles_limit {
            // The execution's own limit is the tighter one: nothing to cap.
            return GasCap {
                outer_limit: None,
                gas_limit,
            };
        }
        let outer_limit = meter.cycles_limit;
        meter.cycles_limit = capped;
        GasCap {
            outer_limit: Some(outer_limit),
            gas_limit,
        }
    }

    /// Restores the limit; `Some(gas_limit)` when the callee ran out of its
    /// cap (the abort is then cleared: it was the callee's alone).
    fn remove(self, meter: &mut Meter) -> Option<u64> {
        let outer_limit = self.outer_limit?;
        meter.cycles_limit = outer_limit;
        if meter.abort == Some(Abort::Cycles) {
            meter.abort = None;
            return Some(self.gas_limit);
        }
        None
    }
}

/// `pvm_host.call(actor, handler, *args, value=0, gas_limit=None)`: runs
/// another actor's handler synchronously inside a host checkpoint. Its
/// failure reverts its effects and raises `HostError` in the caller; an
/// abort (out of cycles, cells or memory) is shared by the whole execution
/// and re-raised, except running out of the call's own `gas_limit`, which
/// is the callee's failure alone (`HostError` of kind `OutOfCycles`).
pub(crate) fn call_native(mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let value = take_kwarg(&mut args, "value");
    let gas_limit = take_kwarg(&mut args, "gas_limit");
    if let Some((name, _)) = args.kwargs.iter().next() {
        return Err(vm.new_type_error(format!(
            "call() got an unexpected keyword argument '{name}'"
        )));
    }
    if args.args.len() < 2 {
        return Err(vm.new_type_error("call(actor, handler, *args, value=0, gas_limit=None)"));
    }
    let gas_limit = optional(gas_limit.as_ref(), vm)
        .map(|g| parse_u64(&g, "gas_limit", vm))
        .transpose()?;
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
    if let Some((kind, message)) = crate::deploy::compile::refuse_name(&handler) {
        return Err(host_error(kind, &message, vm));
    }
    let record = host_result(HOST.with(|slot| slot.host.actor_record(&target)), vm)?
        .ok_or_else(|| host_error(ErrorKind::NotFound, &format!("no actor at {target}"), vm))?;
    let code_cache = with_exec(|s| s.code_cache.clone());
    let compiled = HOST
        .with(|slot| code_cache.get_or_compile(&record.code_hash, |hash| slot.host.load_code(hash)))
        .ok_or_else(|| {
            host_error(
                ErrorKind::NotFound,
                &format!("code of {target} is unavailable"),
                vm,
            )
        })?;

    if let Some((kind, message)) =
        crate::deploy::compile::refuse_timer_handler(&compiled, &handler, &Invocation::Transaction)
    {
        return Err(host_error(kind, &message, vm));
    }

    let checkpoint = HOST.with(|slot| slot.host.checkpoint());
    let events_before = with_exec(|s| s.events.len());
    let cap = with_meter(|meter| GasCap::install(meter, gas_limit));
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
                value: amount,
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
        let value = outcome?.ok_or_else(|| {
            host_error(
                ErrorKind::NotFound,
                &format!("actor {target} has no handler '{handler}'"),
                vm,
            )
        })?;
        // Values cross actor boundaries by copy, never by reference; the
        // copy is paid by size like any other conversion.
        charge(costs::for_bytes(value.to_bytes().len() as u64), 0, vm)?;
        charge_conversion(&value, 2, vm)?;
        Ok(value_to_py(&value, vm))
    })();
    let ran_out_of_cap = with_meter(|meter| cap.remove(meter));
    match result {
        Ok(value) => {
            HOST.with(|slot| slot.host.commit(checkpoint));
            Ok(value)
        }
        Err(exc) => {
            HOST.with(|slot| slot.host.revert(checkpoint));
            with_exec(|s| s.events.truncate(events_before));
            if let Some(abort) = with_meter(|meter| meter.abort) {
                return Err(abort_exception(abort, vm));
            }
            if let Some(gas_limit) = ran_out_of_cap {
                return Err(host_error(
                    ErrorKind::OutOfCycles,
                    &format!(
                        "call to {target}.{handler} ran out of its gas_limit of {gas_limit} cycles"
                    ),
                    vm,
                ));
            }
            // A HostError escaping the callee (a host rejection or a deeper
            // call's failure) already names the root cause and its kind:
            // pass it up unchanged instead of nesting messages 32 deep.
            if host_error_kind(&exc, vm).is_some() {
                return Err(exc);
            }
            let message = crate::host_api::exec::exception_message(&exc, vm);
            Err(host_error(
                ErrorKind::Revert,
                &format!("call to {target}.{handler} failed: {message}"),
                vm,
            ))
        }
    }
}
