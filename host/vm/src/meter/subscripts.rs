//! Charges inside the subscript slots of the built-in sequences, where the
//! work depends on the key as much as on the receiver (membership is
//! [`crate::meter::contains`]'s):
//!
//! - `x[s]` with a slice `s` (written `x[a:b]` or held in a variable)
//!   copies what it selects: the selected length is computed from the slice
//!   and the receiver's length, checked against the memory budget and
//!   charged *before* the copy;
//! - `x[s] = v` and `del x[s]` on a list or bytearray move the tail and copy
//!   `v`: the receiver's and the value's sizes; `del x[i]` with an int moves
//!   the tail: one cycle per 16 elements (a pointer move, measured at 1.15 ms
//!   per uncharged cycle for a 10⁶-element list before this charge).
//!
//! Int-indexed loads and stores are free here, so RustPython's specialised
//! instructions for them (which skip the slot once warm) change no charge;
//! every slice operation goes through the slot whether or not the
//! instruction is specialised (`BinaryOpSubscrListSlice` calls `get_item`).
//! Outside an execution nothing is charged.

use std::sync::OnceLock;

use rustpython_vm::builtins::{PyInt, PySlice};

use rustpython_vm::protocol::PyMapping;
use rustpython_vm::sliceable::SaturatedSlice;
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyResult, VirtualMachine};

use crate::meter::charge::charge_if_executing;
use crate::meter::sizes::{precheck_result_bytes, size_of};
use crate::rules::costs;

type SubscriptSlot = fn(PyMapping<'_>, &PyObject, &VirtualMachine) -> PyResult;
type AssSubscriptSlot =
    fn(PyMapping<'_>, &PyObject, Option<PyObjectRef>, &VirtualMachine) -> PyResult<()>;

/// Elements per cycle of a tail move (`del xs[i]`, a pointer `memmove`).
const ELEMENTS_PER_SHIFT_CYCLE: u64 = 16;

/// `(elements, bytes)` of the receiver, as one length and a per-unit size.
fn length_and_unit(receiver: &PyObject) -> (u64, u64) {
    let (elements, bytes) = size_of(receiver);
    if elements > 0 {
        (elements, 8)
    } else {
        (bytes, 1)
    }
}

/// Cycles of copying `units` of a receiver measured by [`length_and_unit`]:
/// elements at [`costs::size::PER_ELEMENT`], bytes at [`costs::for_bytes`].
fn copy_cycles(units: u64, unit: u64) -> u64 {
    if unit == 1 {
        costs::for_bytes(units)
    } else {
        units * costs::size::PER_ELEMENT
    }
}

/// How many items `slice` selects from a sequence of `length`.
fn selected(slice: &PyObject, length: u64, vm: &VirtualMachine) -> PyResult<u64> {
    let Some(slice) = slice.downcast_ref::<PySlice>() else {
        return Ok(0);
    };
    let saturated = SaturatedSlice::with_slice(slice, vm)?;
    let (_, _, count) = saturated.adjust_indices(length as usize);
    Ok(count as u64)
}

fn charge_slice_load(receiver: &PyObject, key: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    if key.downcast_ref::<PySlice>().is_none() || !crate::meter::charge::is_executing() {
        return Ok(());
    }
    let (length, unit) = length_and_unit(receiver);
    let count = selected(key, length, vm)?;
    precheck_result_bytes(u128::from(count) * u128::from(unit), vm)?;
    charge_if_executing(SLICE_LOAD_BASE_CYCLES + copy_cycles(count, unit), vm)
}

/// What any slice load costs beyond its copy: the slice's bounds resolved
/// against the length and a new sequence made (~0.5 µs): `b'ab'[::-1]` ran
/// at ~3.1× ordinary code per cycle (the metering fuzzer, #47).
const SLICE_LOAD_BASE_CYCLES: u64 = 6;

fn charge_store(
    receiver: &PyObject,
    key: &PyObject,
    value: Option<&PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if !crate::meter::charge::is_executing() {
        return Ok(());
    }
    let (length, unit) = length_and_unit(receiver);
    let is_slice = key.downcast_ref::<PySlice>().is_some();
    let cycles = match (is_slice, value) {
        // `del xs[i]`: the tail moves.
        (false, None) if key.downcast_ref::<PyInt>().is_some() => length / ELEMENTS_PER_SHIFT_CYCLE,
        (false, _) => 0,
        (true, value) => {
            let (value_length, _) = value.map_or((0, 1), |v| length_and_unit(v));
            if value.is_some() {
                precheck_result_bytes(
                    (u128::from(length) + u128::from(value_length)) * u128::from(unit),
                    vm,
                )?;
            }
            // A deletion also releases every item it removes (a float or a
            // str is freed, ~20–50 ns): `del y[:]` of 200,000 floats ran at
            // 3.0–3.2× ordinary code per cycle when only the walk was
            // charged (the metering fuzzer, #47).
            let released = if value.is_none() && unit != 1 {
                selected(key, length, vm)?
            } else {
                0
            };
            copy_cycles(length.saturating_add(value_length), unit)
                .saturating_add(released.saturating_mul(costs::size::PER_ELEMENT))
        }
    };
    charge_if_executing(cycles, vm)
}

macro_rules! metered_subscript {
    ($name:ident, $original:ident) => {
        static $original: OnceLock<SubscriptSlot> = OnceLock::new();
        fn $name(mapping: PyMapping<'_>, key: &PyObject, vm: &VirtualMachine) -> PyResult {
            charge_slice_load(mapping.obj, key, vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(mapping, key, vm)
        }
    };
}

/// What a slice store or deletion costs beyond its copies: the slice's
/// bounds computed and the list spliced (~0.2 µs); `y[:] = x` of one-item
/// list subclasses ran at 3.0–3.8× ordinary code per cycle (the metering
/// fuzzer, seed 5555).
const SLICE_STORE_BASE_CYCLES: u64 = 4;

/// And when the value stored is an instance of an actor's class (a list
/// subclass, say): the native cannot borrow its items as it does a plain
/// list's and collects them through the generic iteration protocol
/// (~0.4 µs for one item): `y[:] = x` of one-item list subclasses stayed at
/// 2.4× ordinary code quietly and 2.7–3.3× in single runs at the base price
/// alone, where ordinary code ran at 12.1 ns per cycle (the metering
/// fuzzer, seed 5858).
const SLICE_STORE_SUBCLASS_VALUE_CYCLES: u64 = 8;

/// What a slice store or deletion costs beyond its copies.
fn slice_store_cycles(value: Option<&PyObjectRef>) -> u64 {
    let subclass_value =
        value.is_some_and(|v| v.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE));
    if subclass_value {
        SLICE_STORE_BASE_CYCLES + SLICE_STORE_SUBCLASS_VALUE_CYCLES
    } else {
        SLICE_STORE_BASE_CYCLES
    }
}

macro_rules! metered_ass_subscript {
    ($name:ident, $original:ident) => {
        static $original: OnceLock<AssSubscriptSlot> = OnceLock::new();
        fn $name(
            mapping: PyMapping<'_>,
            key: &PyObject,
            value: Option<PyObjectRef>,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            // `xs[a:b] = generator` takes any iterable: drain a lazy one
            // here, one charged item at a time, not inside the native.
            let value = match value {
                Some(value)
                    if crate::meter::charge::is_executing()
                        && key.downcast_ref::<PySlice>().is_some()
                        && !crate::meter::sizes::is_sized(&value) =>
                {
                    Some(crate::meter::sizes::materialize(value, vm)?)
                }
                value => value,
            };
            charge_store(mapping.obj, key, value.as_ref(), vm)?;
            if key.downcast_ref::<PySlice>().is_some() {
                charge_if_executing(slice_store_cycles(value.as_ref()), vm)?;
            }
            let original = $original.get().expect("wrapped slot has its original");
            original(mapping, key, value, vm)
        }
    };
}

metered_subscript!(list_subscript, LIST_SUBSCRIPT);
metered_subscript!(tuple_subscript, TUPLE_SUBSCRIPT);
metered_subscript!(str_subscript, STR_SUBSCRIPT);
metered_subscript!(bytes_subscript, BYTES_SUBSCRIPT);
metered_subscript!(bytearray_subscript, BYTEARRAY_SUBSCRIPT);
/// Slicing a `range` makes a new range from the slice's bounds, computed
/// with Python ints (~0.4 µs, whatever the length): `r[::-1]` ran at
/// 2.6–4.4× ordinary code per cycle free (the metering fuzzer's sixth long
/// run, #47). Indexing one is a multiplication and an addition.
const RANGE_SLICE_CYCLES: u64 = 8;

static RANGE_SUBSCRIPT: OnceLock<SubscriptSlot> = OnceLock::new();

fn range_subscript(mapping: PyMapping<'_>, key: &PyObject, vm: &VirtualMachine) -> PyResult {
    if key.downcast_ref::<PySlice>().is_some() {
        charge_if_executing(RANGE_SLICE_CYCLES, vm)?;
    }
    let original = RANGE_SUBSCRIPT
        .get()
        .expect("wrapped slot has its original");
    original(mapping, key, vm)
}

metered_ass_subscript!(list_ass_subscript, LIST_ASS_SUBSCRIPT);
metered_ass_subscript!(bytearray_ass_subscript, BYTEARRAY_ASS_SUBSCRIPT);

/// Gives a new class deriving from a built-in sequence that keeps the
/// built-in's `__getitem__` (and `__setitem__` and `__delitem__`) the
/// built-in's *charging* slots. Without it a subclass's subscripts reached
/// the unmetered natives — through the original slot RustPython copies from
/// the base's descriptors, or the generic slot that looks the method up on
/// every use: `del y[:]` of a list subclass ran at 3.1–4.7× ordinary code
/// per cycle on its statement's charge alone, and a slice assignment's walk
/// went uncharged (the metering fuzzer's sixth long run, #47). A class that
/// defines its own keeps it: its method runs as metered Python.
/// `defined_by(name)` is the class along the MRO that defines `name`.
pub(crate) fn meter_subclass_subscripts(
    class: &rustpython_vm::Py<rustpython_vm::builtins::PyType>,
    vm: &VirtualMachine,
    defined_by: &dyn Fn(&str) -> Option<rustpython_vm::builtins::PyTypeRef>,
) {
    let types = &vm.ctx.types;
    let keeps = |name: &str, base: &rustpython_vm::Py<rustpython_vm::builtins::PyType>| {
        defined_by(name).is_some_and(|owner| owner.is(base))
    };
    let loads: [(
        &rustpython_vm::Py<rustpython_vm::builtins::PyType>,
        SubscriptSlot,
    ); 5] = [
        (types.list_type, list_subscript),
        (types.tuple_type, tuple_subscript),
        (types.str_type, str_subscript),
        (types.bytes_type, bytes_subscript),
        (types.bytearray_type, bytearray_subscript),
    ];
    for (base, wrapper) in loads {
        if class.fast_issubclass(base) && keeps("__getitem__", base) {
            class.slots.as_mapping.subscript.store(Some(wrapper));
        }
    }
    let stores: [(
        &rustpython_vm::Py<rustpython_vm::builtins::PyType>,
        AssSubscriptSlot,
    ); 2] = [
        (types.list_type, list_ass_subscript),
        (types.bytearray_type, bytearray_ass_subscript),
    ];
    for (base, wrapper) in stores {
        if class.fast_issubclass(base) && keeps("__setitem__", base) && keeps("__delitem__", base) {
            class.slots.as_mapping.ass_subscript.store(Some(wrapper));
        }
    }
    // A dict subclass that keeps dict's item methods gets dict's own slots
    // (they honour `__missing__` as CPython's do). Left to RustPython it
    // reached them through the generic slot, which looks the method up
    // along the MRO and calls it on every subscript: `y[k] = v` on a dict
    // subclass ran at 2.7× ordinary code per cycle (3.37× in a single run),
    // `y[k]` at 1.8×, for a dict's charge (the metering fuzzer, seed 5959).
    let dict = types.dict_type;
    if class.fast_issubclass(dict) {
        if keeps("__getitem__", dict) {
            let native = dict.slots.as_mapping.subscript.load();
            class.slots.as_mapping.subscript.store(native);
        }
        if keeps("__setitem__", dict) && keeps("__delitem__", dict) {
            let native = dict.slots.as_mapping.ass_subscript.load();
            class.slots.as_mapping.ass_subscript.store(native);
        }
    }
}

/// Wraps the slots of this thread's built-in types (see the module docs);
/// idempotent like [`crate::meter::slots::install`].
pub(crate) fn install(vm: &VirtualMachine) {
    macro_rules! wrap {
        ($($slot:ident . $field:ident : $type:ty, $class:expr => ($original:expr, $wrapper:expr)),+ $(,)?) => {$(
            let class: &rustpython_vm::Py<rustpython_vm::builtins::PyType> = $class;
            let wrapper: $type = $wrapper;
            let current = class.slots.$slot.$field.load().expect("built-in types have this slot");
            if current as usize != wrapper as usize {
                let _ = $original.set(current);
                class.slots.$slot.$field.store(Some(wrapper));
            }
        )+};
    }
    let types = &vm.ctx.types;
    wrap!(
        as_mapping.subscript: SubscriptSlot, types.list_type => (LIST_SUBSCRIPT, list_subscript),
        as_mapping.subscript: SubscriptSlot, types.tuple_type => (TUPLE_SUBSCRIPT, tuple_subscript),
        as_mapping.subscript: SubscriptSlot, types.str_type => (STR_SUBSCRIPT, str_subscript),
        as_mapping.subscript: SubscriptSlot, types.bytes_type => (BYTES_SUBSCRIPT, bytes_subscript),
        as_mapping.subscript: SubscriptSlot, types.bytearray_type => (BYTEARRAY_SUBSCRIPT, bytearray_subscript),
        as_mapping.subscript: SubscriptSlot, types.range_type => (RANGE_SUBSCRIPT, range_subscript),
        as_mapping.ass_subscript: AssSubscriptSlot, types.list_type => (LIST_ASS_SUBSCRIPT, list_ass_subscript),
        as_mapping.ass_subscript: AssSubscriptSlot, types.bytearray_type => (BYTEARRAY_ASS_SUBSCRIPT, bytearray_ass_subscript),
    );
}
