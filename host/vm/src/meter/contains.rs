//! Charges inside the membership slots: what `x in c` costs is decided by
//! `c`'s type, so it is charged where RustPython dispatches on it — the
//! type's `contains` slot, which the `CONTAINS_OP` instruction always reaches
//! (its only specialisations, for an exact `dict` or `set`, are hash lookups
//! that hash through the charging slots of [`crate::meter::slots`]):
//!
//! - `list`, `tuple`, `str`, `bytes`, `bytearray` scan: charged by the
//!   container's size before the scan (elements, or bytes for a substring
//!   search);
//! - `range` is constant for an exact int and a walk for anything else
//!   (`"x" in range(10**18)` never returned): charged by its length then;
//! - everything iterable that has no membership slot of its own — iterators,
//!   generators, `map`/`zip`/`filter`/…, `dict.values()`, and every class an
//!   actor defines without `__contains__` (classes inherit `object`'s slot)
//!   — gets the slot CPython's fallback is: it walks the iterator one item
//!   at a time, charging each before it is compared, and stops at the
//!   first equal item (an infinite iterator runs out of cycles);
//! - `dict`, `set`, `frozenset`, the keys and items views are hash lookups;
//!   a `set` needle in a set or frozenset is retried as a frozenset copy of
//!   itself after a swallowed `TypeError`, charged by its size then.
//!
//! So the instrumenter inserts nothing for `in` (until #30's fourth step a
//! `_pvm_contains[c]` guard, ~40 ns in RustPython, walked a lazy iterator
//! whole before the test). Outside an execution nothing is charged.

use std::sync::OnceLock;

use rustpython_vm::builtins::PyRange;
use rustpython_vm::protocol::{PyIterReturn, PySequence};
use rustpython_vm::{AsObject, PyObject, PyResult, VirtualMachine};

use crate::meter::charge::charge_if_executing;
use crate::meter::sizes::{size_cycles, size_of, LAZY_ITEM_CYCLES};

type ContainsSlot = fn(PySequence<'_>, &PyObject, &VirtualMachine) -> PyResult<bool>;

/// A type's membership slot behind `$charge(container, needle, vm)`, run
/// before the original slot does its work.
macro_rules! charged_contains {
    ($name:ident, $original:ident, $charge:path) => {
        static $original: OnceLock<ContainsSlot> = OnceLock::new();

        fn $name(
            sequence: PySequence<'_>,
            needle: &PyObject,
            vm: &VirtualMachine,
        ) -> PyResult<bool> {
            $charge(sequence.obj, needle, vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(sequence, needle, vm)
        }
    };
}

/// A scan of a list or tuple: its size, and the needle's, compared at least
/// once whole (`x in [y]` of two equal 20,000-entry dicts or 7 KB ints ran
/// at 3.2–5.5× ordinary code charged by the list alone, #47).
fn charge_scan(container: &PyObject, needle: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    charge_if_executing(
        size_cycles(size_of(container)).saturating_add(size_cycles(size_of(needle))),
        vm,
    )
}

/// Cycles per 16 bytes of the haystack a substring search pays: ~3.5 ns a
/// byte when the needle nearly matches everywhere (`y in x` of two equal
/// 37 KB bytes ran at ~3× ordinary code per cycle at 1; the metering
/// fuzzer, #47).
const SUBSTRING_CYCLES_PER_16_BYTES: u64 = 2;

/// A substring search: the haystack (twice) and the needle.
fn charge_substring(haystack: &PyObject, needle: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    charge_if_executing(
        size_cycles(size_of(haystack))
            .saturating_mul(SUBSTRING_CYCLES_PER_16_BYTES)
            .saturating_add(size_cycles(size_of(needle))),
        vm,
    )
}

/// A set's or frozenset's lookup: a `set` key is retried as a frozenset
/// copy (`crate::meter::swallowed::charge_set_key`).
fn charge_set_lookup(_set: &PyObject, needle: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    if crate::meter::charge::is_executing() {
        crate::meter::swallowed::charge_set_key(needle, vm)?;
    }
    Ok(())
}

charged_contains!(list_contains, LIST_CONTAINS, charge_scan);
charged_contains!(tuple_contains, TUPLE_CONTAINS, charge_scan);
charged_contains!(str_contains, STR_CONTAINS, charge_substring);
charged_contains!(bytes_contains, BYTES_CONTAINS, charge_substring);
charged_contains!(bytearray_contains, BYTEARRAY_CONTAINS, charge_substring);
charged_contains!(set_contains, SET_CONTAINS, charge_set_lookup);
charged_contains!(frozenset_contains, FROZENSET_CONTAINS, charge_set_lookup);

static RANGE_CONTAINS: OnceLock<ContainsSlot> = OnceLock::new();

fn range_contains(
    sequence: PySequence<'_>,
    needle: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<bool> {
    let class = needle.class();
    // RustPython answers in constant time for an exact int only (not a bool).
    let constant = class.is(vm.ctx.types.int_type);
    if crate::meter::charge::is_executing()
        && !constant
        && sequence.obj.downcast_ref::<PyRange>().is_some()
    {
        // A range longer than a machine word cannot even be measured.
        let length = sequence.obj.length(vm).map_or(u64::MAX, |l| l as u64);
        charge_if_executing(
            length.saturating_mul(crate::meter::natives::price::RANGE_SEARCH_CYCLES),
            vm,
        )?;
    }
    let original = RANGE_CONTAINS.get().expect("wrapped slot has its original");
    original(sequence, needle, vm)
}

/// The membership test of an iterable without a slot of its own:
/// RustPython's fallback (`PySequence::contains`), with each item charged
/// before it is compared. Its error for a non-iterable is RustPython's too.
fn iterated_contains(
    sequence: PySequence<'_>,
    needle: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<bool> {
    let iterator = sequence.obj.to_owned().get_iter(vm).map_err(|error| {
        if error.fast_isinstance(vm.ctx.exceptions.type_error) {
            vm.new_type_error(format!(
                "argument of type '{}' is not a container or iterable",
                sequence.obj.class().slot_name()
            ))
        } else {
            error
        }
    })?;
    loop {
        charge_if_executing(LAZY_ITEM_CYCLES, vm)?;
        match iterator.next(vm)? {
            PyIterReturn::Return(item) => {
                if vm.bool_eq(&item, needle)? {
                    return Ok(true);
                }
            }
            PyIterReturn::StopIteration(_) => return Ok(false),
        }
    }
}

/// Wraps this thread's built-in types' membership slots and gives the
/// iterable ones without a slot (and `object`, for the classes actors
/// define) the charged walk. Idempotent, like [`crate::meter::slots::install`];
/// call it after every static type of the runtime exists.
pub(crate) fn install(vm: &VirtualMachine) {
    let types = &vm.ctx.types;
    for (class, original, wrapper) in [
        (
            types.list_type,
            &LIST_CONTAINS,
            list_contains as ContainsSlot,
        ),
        (types.tuple_type, &TUPLE_CONTAINS, tuple_contains),
        (types.str_type, &STR_CONTAINS, str_contains),
        (types.bytes_type, &BYTES_CONTAINS, bytes_contains),
        (
            types.bytearray_type,
            &BYTEARRAY_CONTAINS,
            bytearray_contains,
        ),
        (types.range_type, &RANGE_CONTAINS, range_contains),
        (types.set_type, &SET_CONTAINS, set_contains),
        (
            types.frozenset_type,
            &FROZENSET_CONTAINS,
            frozenset_contains,
        ),
    ] {
        let slot = &class.slots.as_sequence.contains;
        let current = slot.load().expect("a scanning type has a membership slot");
        if current as usize != wrapper as usize {
            let _ = original.set(current);
            slot.store(Some(wrapper));
        }
    }
    let walked = iterated_contains as ContainsSlot;
    for class in crate::meter::natives::inventory::builtin_types(vm) {
        let slot = &class.slots.as_sequence.contains;
        if slot.load().is_none() && class.slots.iter.load().is_some() {
            slot.store(Some(walked));
        }
    }
    let object = &types.object_type.slots.as_sequence.contains;
    if object.load().is_none() {
        object.store(Some(walked));
    }
}
