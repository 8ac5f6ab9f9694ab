//! Charges inside built-in type slots: comparisons, hashes and `repr`s whose
//! work grows with the operands.
//!
//! A comparison of two lists compares their elements, which may be lists
//! again, so one `==` can do work proportional to a whole nested structure;
//! `[big] * 1000 == [big_copy] * 1000` does 1000 full comparisons of `big`.
//! Hashing a tuple hashes its elements the same way, on every dict or set
//! lookup (tuples and bytes do not cache their hash). No rewrite of the
//! actor's code can see that nesting, so the charge is taken where the work
//! happens: the `richcompare` slot of `list`, `tuple`, `dict`, `set`,
//! `frozenset`, `bytes`, `bytearray` and `str`, and the `hash` slot of
//! `tuple` and `bytes`, are wrapped once per interpreter. Each wrapper
//! charges for its own level (the shorter operand's length, or its bytes)
//! and calls the original; nested comparisons and hashes go through the
//! slots again and charge for theirs. The `repr` slots of the containers,
//! `str`, `bytes` and `bytearray` are wrapped the same way: `str(xs)` and
//! `f"{xs}"` format every element, through their own slots.
//!
//! Determinism: a slot charge is only sound where the interpreter always
//! goes through the slot. RustPython's adaptive interpreter would replace a
//! hot `==`/`!=` between two exact `str`s by an inline comparison (it
//! specialises no other comparison of these types); metered code never lets
//! it ([`crate::interpreter::generic_ops`] keeps every comparison generic). The `str`
//! wrapper charges nothing for comparisons of at most
//! [`FREE_STR_COMPARE_BYTES`] bytes: most comparisons are of short strings,
//! and what they cost is in the comparison's static weight.
//!
//! Outside an execution (the host converting values, the prelude) nothing
//! is charged.

use std::sync::OnceLock;

use rustpython_vm::builtins::{PyStr, PyType};
use rustpython_vm::common::hash::PyHash;
use rustpython_vm::function::{Either, PyComparisonValue};
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{Py, PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine};

use crate::meter::charge::charge_if_executing;
use crate::meter::sizes::{size_cycles, size_of};
use crate::rules::costs;

/// `str` comparisons up to this many bytes (of the shorter operand) are
/// free in the comparison slots; longer ones cost by their bytes.
pub(crate) const FREE_STR_COMPARE_BYTES: u64 = 256;

type CompareSlot = fn(
    &PyObject,
    &PyObject,
    PyComparisonOp,
    &VirtualMachine,
) -> PyResult<Either<PyObjectRef, PyComparisonValue>>;
type HashSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyHash>;

/// Cycles one level of comparing `a` with `b` costs: the shorter of the two
/// by elements or bytes (a comparison stops at the end of the shorter).
fn compare_cycles(a: &PyObject, b: &PyObject) -> u64 {
    size_cycles(size_of(a)).min(size_cycles(size_of(b)))
}

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
        static $original: OnceLock<CompareSlot> = OnceLock::new();
        fn $name(
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
metered_compare!(container_compare_dict, DICT_COMPARE, compare_cycles);
metered_compare!(container_compare_set, SET_COMPARE, compare_cycles);
metered_compare!(
    container_compare_frozenset,
    FROZENSET_COMPARE,
    compare_cycles
);
metered_compare!(bytes_compare, BYTES_COMPARE, compare_cycles);
metered_compare!(bytearray_compare, BYTEARRAY_COMPARE, compare_cycles);
metered_compare!(str_compare, STR_COMPARE, str_compare_cycles);
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

macro_rules! metered_hash {
    ($name:ident, $original:ident) => {
        static $original: OnceLock<HashSlot> = OnceLock::new();
        fn $name(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
            // A tuple by its elements (nested tuples charge their own), bytes
            // by their length.
            charge_if_executing(size_cycles(size_of(obj)), vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(obj, vm)
        }
    };
}

metered_hash!(tuple_hash, TUPLE_HASH);
metered_hash!(bytes_hash, BYTES_HASH);

type ReprSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyRef<PyStr>>;

/// Cycles per element (or per 16 bytes) of one level of `repr`: formatting
/// an element costs ~50 ns in RustPython, about four ordinary cycles
/// (measured: `str(list_of_100_ints)` and `f"{xs}"` ran at 38–144 ns per
/// cycle when only the result's bytes were charged).
const REPR_CYCLES_PER_UNIT: u64 = 4;

macro_rules! metered_repr {
    ($name:ident, $original:ident) => {
        static $original: OnceLock<ReprSlot> = OnceLock::new();
        fn $name(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
            // `str(x)` and `f"{x}"` of a container format every element
            // (nested ones through their own slot); a string or bytes
            // inside one escapes every character.
            charge_if_executing(REPR_CYCLES_PER_UNIT * size_cycles(size_of(obj)), vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(obj, vm)
        }
    };
}

/// `repr(n)` and `str(n)` of an int beyond a machine word: decimal
/// conversion is quadratic in the digits (`str(7**n)` ran at 33–50 ns per
/// cycle, growing, before this).
fn charge_decimal_conversion(obj: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    if let Some(int) = obj.downcast_ref::<rustpython_vm::builtins::PyInt>() {
        let bits = int.as_bigint().bits();
        if bits > 64 {
            charge_if_executing(crate::meter::sizes::int_decimal_cycles(bits), vm)?;
        }
    }
    Ok(())
}

macro_rules! metered_int_text {
    ($name:ident, $original:ident) => {
        static $original: OnceLock<ReprSlot> = OnceLock::new();
        fn $name(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
            charge_decimal_conversion(obj, vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(obj, vm)
        }
    };
}

metered_int_text!(int_repr, INT_REPR);
metered_int_text!(int_str, INT_STR);

metered_repr!(list_repr, LIST_REPR);
metered_repr!(tuple_repr, TUPLE_REPR);
metered_repr!(dict_repr, DICT_REPR);
metered_repr!(set_repr, SET_REPR);
metered_repr!(frozenset_repr, FROZENSET_REPR);
metered_repr!(str_repr, STR_REPR);
metered_repr!(bytes_repr, BYTES_REPR);
metered_repr!(bytearray_repr, BYTEARRAY_REPR);

/// Wraps the slots of this thread's built-in types (each runtime thread has
/// its own type objects). The originals are the same functions on every
/// thread, so the first thread records them.
pub(crate) fn install(vm: &VirtualMachine) {
    /// Stores each wrapper in its type's `$slot`, recording the original the
    /// first time (a second install on the same thread finds the wrapper).
    macro_rules! wrap {
        ($slot:ident: $type:ty, $($class:expr => ($original:expr, $wrapper:expr)),+ $(,)?) => {$(
            let class: &Py<PyType> = $class;
            let wrapper: $type = $wrapper;
            let current = class.slots.$slot.load().expect("built-in types have this slot");
            if current as usize != wrapper as usize {
                let _ = $original.set(current);
                class.slots.$slot.store(Some(wrapper));
            }
        )+};
    }
    let types = &vm.ctx.types;
    wrap!(richcompare: CompareSlot,
        types.list_type => (LIST_COMPARE, container_compare_list),
        types.tuple_type => (TUPLE_COMPARE, container_compare_tuple),
        types.dict_type => (DICT_COMPARE, container_compare_dict),
        types.set_type => (SET_COMPARE, container_compare_set),
        types.frozenset_type => (FROZENSET_COMPARE, container_compare_frozenset),
        types.bytes_type => (BYTES_COMPARE, bytes_compare),
        types.bytearray_type => (BYTEARRAY_COMPARE, bytearray_compare),
        types.str_type => (STR_COMPARE, str_compare),
        types.object_type => (OBJECT_COMPARE, object_compare),
    );
    wrap!(hash: HashSlot,
        types.tuple_type => (TUPLE_HASH, tuple_hash),
        types.bytes_type => (BYTES_HASH, bytes_hash),
    );
    wrap!(repr: ReprSlot,
        types.list_type => (LIST_REPR, list_repr),
        types.tuple_type => (TUPLE_REPR, tuple_repr),
        types.dict_type => (DICT_REPR, dict_repr),
        types.set_type => (SET_REPR, set_repr),
        types.frozenset_type => (FROZENSET_REPR, frozenset_repr),
        types.str_type => (STR_REPR, str_repr),
        types.bytes_type => (BYTES_REPR, bytes_repr),
        types.bytearray_type => (BYTEARRAY_REPR, bytearray_repr),
        types.int_type => (INT_REPR, int_repr),
    );
    wrap!(str: ReprSlot,
        types.int_type => (INT_STR, int_str),
    );
}
