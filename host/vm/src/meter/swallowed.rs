//! Exceptions a native makes and swallows itself, and what they cost
//! ([`costs::code::EXCEPTION_SWALLOWED`]): a miss in `hasattr` or in
//! `getattr` with a default, and the `keys` probe RustPython's dict makes on
//! the argument of `dict(pairs)`, `dict.update(pairs)` and `d |= pairs`,
//! and the unhashable `set` key a set's lookup (`in`, `discard`,
//! `remove`) retries as a frozenset copy of itself.
//! Making the `AttributeError` (its message formatted, its traceback begun)
//! is the same work an `except` clause pays for; no Python code sees it.
//!
//! The `keys` probe is also where a dict's merge takes its slow path: an
//! argument with `keys` that is not an exact dict (a dict subclass, a
//! mapping class) is merged by calling `keys()` and looking every key up
//! through the generic item protocol, ~3× the native copy of a dict
//! ([`MAPPING_MERGE_ENTRY_CYCLES`]).

use rustpython_vm::builtins::{PyDict, PySet};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyResult, VirtualMachine};

use crate::meter::charge::charge;
use crate::meter::sizes::{size_cycles, size_of};
use crate::rules::costs;

/// Charges one swallowed exception.
pub(crate) fn charge_swallowed(vm: &VirtualMachine) -> PyResult<()> {
    charge(costs::code::EXCEPTION_SWALLOWED, 0, vm)
}

/// Per entry of a mapping merged through `keys()` and item lookups rather
/// than copied natively (on top of the walk's 4 per entry): `dict(x)` of a
/// one-class dict subclass of 1,641 entries ran at 3.7–4.1× ordinary code
/// per cycle without it, `copy.copy(x)` at 3.2–3.4× (the metering fuzzer,
/// #47).
pub(crate) const MAPPING_MERGE_ENTRY_CYCLES: u64 = 8;

/// Charges the `keys` probe a dict makes on `argument` when merging it,
/// if the probe will miss (the class lookup here makes no exception), or
/// the generic merge it leads to when it hits anything but an exact dict.
pub(crate) fn charge_keys_probe(argument: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    if argument
        .class()
        .has_attr(rustpython_vm::identifier!(vm, keys))
    {
        if argument.class().is(vm.ctx.types.dict_type) {
            return Ok(());
        }
        let entries = size_of(argument).0;
        return charge(entries.saturating_mul(MAPPING_MERGE_ENTRY_CYCLES), 0, vm);
    }
    charge_swallowed(vm)
}

/// [`charge_keys_probe`] when `receiver` is a dict (the natives table's
/// `dict.__init__`/`update`/`__ior__`; the same price kinds serve other
/// types, which make no probe).
pub(crate) fn charge_keys_probe_into(
    receiver: &PyObjectRef,
    argument: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if receiver.downcast_ref::<PyDict>().is_none() {
        return Ok(());
    }
    charge_keys_probe(argument, vm)
}

/// A set's lookup of `key` (`key in s`, `s.discard(key)`, `s.remove(key)`):
/// a `set` key is unhashable, and RustPython swallows the `TypeError`, copies
/// the key into a frozenset and hashes that (every element) — charged by
/// the key's size and the swallowed error before the lookup. Found by the
/// metering fuzzer (#47): `t in s` with `t` a set of 478 items ran at
/// ~17× ordinary code per cycle.
pub(crate) fn charge_set_key(key: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    if key.downcast_ref::<PySet>().is_none() {
        return Ok(());
    }
    charge_swallowed(vm)?;
    charge(size_cycles(size_of(key)), 0, vm)
}
