//! The comparison slots: `list`, `tuple`, `dict`, `set`, `frozenset`,
//! `bytes`, `bytearray` and `str` charge for their own level of a
//! comparison (the shorter operand's length, or its bytes); nested
//! comparisons go through the slots again and charge for theirs. An
//! actor's class that compares by identity, through a subclass of a
//! container, or through its own Python comparison methods is given a
//! charging slot at creation.

use std::sync::OnceLock;

use rustpython_vm::builtins::{PyStr, PyType};
use rustpython_vm::function::{Either, PyComparisonValue};
use rustpython_vm::types::{PyComparisonOp, PyTypeFlags};
use rustpython_vm::{PyObject, PyObjectRef, PyResult, VirtualMachine};

use crate::meter::charge::charge_if_executing;
use crate::meter::sizes::{size_cycles, size_of};
use crate::rules::costs;

/// `str` comparisons up to this many bytes (of the shorter operand) are
/// free in the comparison slots; longer ones cost by their bytes.
pub(super) const FREE_STR_COMPARE_BYTES: u64 = 256;

pub(super) type CompareSlot = fn(
    &PyObject,
    &PyObject,
    PyComparisonOp,
    &VirtualMachine,
) -> PyResult<Either<PyObjectRef, PyComparisonValue>>;

/// Cycles one level of comparing `a` with `b` costs: the shorter of the two
/// by elements or bytes (a comparison stops at the end of the shorter).
fn compare_cycles(a: &PyObject, b: &PyObject) -> u64 {
    let subclass = |o: &PyObject| o.class().slots.flags.has_feature(PyTypeFlags::HEAPTYPE);
    let dispatch = if subclass(a) || subclass(b) {
        SUBCLASS_COMPARE_CYCLES
    } else {
        0
    };
    CONTAINER_COMPARE_CYCLES + dispatch + size_cycles(size_of(a)).min(size_cycles(size_of(b)))
}

/// A dict equality looks every key of one up in the other (its hash, then
/// an equality of the keys, ~100 ns an entry with 200-byte keys): `x == y`
/// of two 15,000-entry dicts ran at 3.4× ordinary code at one cycle an
/// entry, and of two 40,000-entry dicts (keys and values out of cache) at
/// 3.0–3.3× at four, where ordinary code ran at 12.7 ns per cycle (the
/// metering fuzzer, #47).
const DICT_COMPARE_PER_ENTRY: u64 = 6;

fn dict_compare_cycles(a: &PyObject, b: &PyObject) -> u64 {
    let entries = size_of(a).0.min(size_of(b).0);
    compare_cycles(a, b).saturating_add(entries.saturating_mul(DICT_COMPARE_PER_ENTRY))
}

/// A comparison where an operand is an instance of an actor's subclass of
/// a container: the operator looks for the subclass's own `__eq__` through
/// its MRO first (~1 µs; `D(...) == D(...)` of a one-item dict subclass ran
/// at ~4.8× ordinary code, the metering fuzzer, #47).
const SUBCLASS_COMPARE_CYCLES: u64 = 12;

/// And per element when the subclass compares through its method: the
/// contents are compared on the generic path (~200 ns an element for a
/// dict subclass of 22 items, 3.3× ordinary code at the plain rate).
const SUBCLASS_COMPARE_PER_ELEMENT: u64 = 8;

/// Each container comparison's own step (types checked, a level of
/// nesting entered): comparing lists nested 7,000 deep ran at ~3× ordinary
/// code when a one-element level cost its one element, and at 2.8–3.0× (310–
/// 1,240 deep; nested frozensets intersected 2.9–3.0×) at one more where
/// ordinary code ran at 12.7 ns per cycle (the metering fuzzer, #47).
const CONTAINER_COMPARE_CYCLES: u64 = 2;

fn str_compare_cycles(a: &PyObject, b: &PyObject) -> u64 {
    match (a.downcast_ref::<PyStr>(), b.downcast_ref::<PyStr>()) {
        (Some(a), Some(b)) => {
            let shorter = a.byte_len().min(b.byte_len()) as u64;
            if shorter <= FREE_STR_COMPARE_BYTES {
                0
            } else {
                costs::for_bytes(shorter)
            }
        }
        // `"x" == 5`: no work beyond the type check.
        _ => 0,
    }
}

macro_rules! metered_compare {
    ($name:ident, $original:ident, $cycles:expr) => {
        pub(super) static $original: OnceLock<CompareSlot> = OnceLock::new();
        pub(super) fn $name(
            a: &PyObject,
            b: &PyObject,
            op: PyComparisonOp,
            vm: &VirtualMachine,
        ) -> PyResult<Either<PyObjectRef, PyComparisonValue>> {
            let cycles: fn(&PyObject, &PyObject) -> u64 = $cycles;
            charge_if_executing(cycles(a, b), vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(a, b, op, vm)
        }
    };
}

metered_compare!(container_compare_list, LIST_COMPARE, compare_cycles);
metered_compare!(container_compare_tuple, TUPLE_COMPARE, compare_cycles);
metered_compare!(container_compare_dict, DICT_COMPARE, dict_compare_cycles);
metered_compare!(container_compare_set, SET_COMPARE, compare_cycles);
metered_compare!(
    container_compare_frozenset,
    FROZENSET_COMPARE,
    compare_cycles
);
metered_compare!(bytes_compare, BYTES_COMPARE, compare_cycles);
metered_compare!(bytearray_compare, BYTEARRAY_COMPARE, compare_cycles);
metered_compare!(str_compare, STR_COMPARE, str_compare_cycles);
metered_compare!(dict_keys_compare, DICT_KEYS_COMPARE, view_compare_cycles);
metered_compare!(dict_items_compare, DICT_ITEMS_COMPARE, view_compare_cycles);

/// A comparison of `keys()` or `items()` views is a set comparison: every
/// element of the shorter is looked up in the other (an item made into a
/// tuple and compared by value too): ~75 ns an element, charged nothing
/// before the metering fuzzer found `x.items() == y.items()` at ~25 µs per
/// cycle (#47).
fn view_compare_cycles(a: &PyObject, b: &PyObject) -> u64 {
    VIEW_COMPARE_CYCLES_PER_ELEMENT * size_of(a).0.min(size_of(b).0)
}

/// See [`view_compare_cycles`].
const VIEW_COMPARE_CYCLES_PER_ELEMENT: u64 = 4;

// Instances of classes without `__eq__` compare by identity here, charged
// per call, so a dict probing colliding keys (a class whose `__hash__` returns a
// constant) pays per probe (`crate::meter::int_hash`). RustPython gives a new class
// the original slot (taken from `object.__eq__`), so every class statement
// swaps it for this one ([`meter_identity_comparison`]), keeping the native
// path (an enum member's `==` stays as fast as before).
metered_compare!(object_compare, OBJECT_COMPARE, |_, _| {
    IDENTITY_COMPARE_CYCLES
});

/// An identity comparison through the slots (both operands' slots are
/// tried before identity decides): ~100 ns, 26 ns per cycle at one cycle.
const IDENTITY_COMPARE_CYCLES: u64 = 4;

/// The interpreter's generic comparison slot of classes that define or
/// inherit `__eq__` through a Python-visible method (RustPython's
/// `richcompare_wrapper`): recorded from the first class seen with it.
static GENERIC_COMPARE: OnceLock<CompareSlot> = OnceLock::new();

fn subclass_compare(
    a: &PyObject,
    b: &PyObject,
    op: PyComparisonOp,
    vm: &VirtualMachine,
) -> PyResult<Either<PyObjectRef, PyComparisonValue>> {
    // The subclass's `__eq__` (a built-in's, reached through the method)
    // compares the contents with the unmetered original: charged here.
    let elements = size_of(a).0.min(size_of(b).0);
    charge_if_executing(
        compare_cycles(a, b) + SUBCLASS_COMPARE_PER_ELEMENT * elements,
        vm,
    )?;
    let original = GENERIC_COMPARE
        .get()
        .expect("wrapped slot has its original");
    original(a, b, op, vm)
}

/// A comparison dispatched to a class's own Python comparison methods
/// (`__eq__`, `__lt__`, …): the generic slot looks the operator's method up
/// along the MRO and calls it; when the class lacks it (`a > b` of a class
/// with only `__lt__`), the lookup finds `object`'s, which answers
/// `NotImplemented`, and the reflected method is dispatched the same way
/// (~100 ns for the failed half): `max(X)` of such objects ran at 2.7×
/// ordinary code quietly and 2.9–3.5× in single runs on the method's own
/// call alone, 1.6× when the class defines `__gt__` too, where ordinary
/// code ran at 12.1 ns per cycle (the metering fuzzer, seed 5858). Paid
/// per dispatch, so the reflected comparison pays twice.
const METHOD_COMPARE_DISPATCH_CYCLES: u64 = 4;

fn method_compare(
    a: &PyObject,
    b: &PyObject,
    op: PyComparisonOp,
    vm: &VirtualMachine,
) -> PyResult<Either<PyObjectRef, PyComparisonValue>> {
    charge_if_executing(METHOD_COMPARE_DISPATCH_CYCLES, vm)?;
    let original = GENERIC_COMPARE
        .get()
        .expect("wrapped slot has its original");
    original(a, b, op, vm)
}

/// Gives an actor's subclass of a built-in container that compares
/// through the generic slot (it defines `__eq__` or inherits it as a
/// Python-visible method) the charging one: the method is looked up along
/// the MRO and called on every comparison (see [`SUBCLASS_COMPARE_CYCLES`]).
pub(crate) fn meter_subclass_comparison(class: &PyType) {
    meter_generic_comparison(class, subclass_compare);
}

/// Gives an actor's class whose comparisons are its own Python methods the
/// charging generic slot (see [`METHOD_COMPARE_DISPATCH_CYCLES`]). Only for
/// a class that defines one of the six comparison methods in Python: its
/// slot is then the generic one, which is what [`GENERIC_COMPARE`] records.
pub(crate) fn meter_method_comparison(class: &PyType) {
    meter_generic_comparison(class, method_compare);
}

fn meter_generic_comparison(class: &PyType, charging: CompareSlot) {
    let Some(current) = class.slots.richcompare.load() else {
        return;
    };
    let ours = [
        object_compare as CompareSlot as usize,
        subclass_compare as CompareSlot as usize,
        method_compare as CompareSlot as usize,
        container_compare_list as CompareSlot as usize,
        container_compare_tuple as CompareSlot as usize,
        container_compare_dict as CompareSlot as usize,
        container_compare_set as CompareSlot as usize,
        container_compare_frozenset as CompareSlot as usize,
        bytes_compare as CompareSlot as usize,
        bytearray_compare as CompareSlot as usize,
        str_compare as CompareSlot as usize,
        dict_keys_compare as CompareSlot as usize,
        dict_items_compare as CompareSlot as usize,
    ];
    if ours.contains(&(current as usize)) {
        return;
    }
    let generic = *GENERIC_COMPARE.get_or_init(|| current);
    if current as usize == generic as usize {
        class.slots.richcompare.store(Some(charging));
    }
}

/// Gives `class` the charging identity comparison if it inherited the
/// original one from `object`.
pub(crate) fn meter_identity_comparison(class: &PyType) {
    let Some(original) = OBJECT_COMPARE.get() else {
        return;
    };
    if class.slots.richcompare.load().map(|f| f as usize) == Some(*original as usize) {
        class.slots.richcompare.store(Some(object_compare));
    }
}
