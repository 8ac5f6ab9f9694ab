//! Python arguments of the host natives, parsed as Python would bind them:
//! addresses, integers in range, timer ids, optional and keyword arguments.
//! Shared by `pvm_host` and `call_native`; imports neither.

use rustpython_vm::builtins::{PyBytes, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::{Address, Hash};

use crate::meter::sizes::{int_to_i128, int_value};

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

/// A timer id: its 32 bytes, or the `"0x…"` hex string JSON-RPC shows it
/// as (an id that came back through a client and is handed in again).
pub(crate) fn parse_timer_id(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Hash> {
    let bad = || vm.new_value_error("a timer id is 32 bytes (or its \"0x…\" hex string)");
    if let Some(b) = obj.downcast_ref::<PyBytes>() {
        return Hash::from_slice(b.as_bytes()).map_err(|_| bad());
    }
    let text = obj
        .downcast_ref::<rustpython_vm::builtins::PyStr>()
        .and_then(|s| s.to_str().map(str::to_owned))
        .ok_or_else(bad)?;
    if text.len() != 66 {
        return Err(bad());
    }
    text.parse::<Hash>().map_err(|_| bad())
}

/// An optional `handler=` of `call` (`watch`, `book_timer`): a str, or
/// `None` when not given.
pub(crate) fn optional_handler(
    obj: &Option<PyObjectRef>,
    call: &str,
    vm: &VirtualMachine,
) -> PyResult<Option<String>> {
    optional(obj.as_ref(), vm)
        .map(|h| {
            h.downcast_ref::<rustpython_vm::builtins::PyStr>()
                .and_then(|s| s.to_str().map(str::to_owned))
                .ok_or_else(|| vm.new_type_error(format!("{call} handler must be str")))
        })
        .transpose()
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

pub(crate) fn optional_u64(
    obj: &Option<PyObjectRef>,
    what: &str,
    vm: &VirtualMachine,
) -> PyResult<Option<u64>> {
    optional(obj.as_ref(), vm)
        .map(|v| parse_u64(&v, what, vm))
        .transpose()
}

pub(crate) fn optional_address(
    obj: &Option<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<Option<Address>> {
    optional(obj.as_ref(), vm)
        .map(|v| parse_address(&v, vm))
        .transpose()
}
