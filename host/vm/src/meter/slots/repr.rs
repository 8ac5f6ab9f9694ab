//! The `repr` and `str` slots: the containers, `str`, `bytes` and
//! `bytearray` (`str(xs)` and `f"{xs}"` format every element, through
//! their own slots), ints past a machine word (decimal conversion),
//! floats, classes, exceptions, and an actor's subclass of a built-in that
//! formats through the generic slot.

use std::sync::OnceLock;

use rustpython_vm::builtins::{PyStr, PyType};
use rustpython_vm::{PyObject, PyRef, PyResult, VirtualMachine};

use crate::meter::charge::charge_if_executing;
use crate::meter::sizes::{size_cycles, size_of};

pub(super) type ReprSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyRef<PyStr>>;

/// Cycles per element (or per 16 bytes) of one level of `repr`: formatting
/// an element costs ~50 ns in RustPython, about four ordinary cycles
/// (measured: `str(list_of_100_ints)` and `f"{xs}"` ran at 38–144 ns per
/// cycle when only the result's bytes were charged).
const REPR_CYCLES_PER_UNIT: u64 = 4;

/// Bytes of a nested `repr`'s text each level pays a cycle for (a copy:
/// at 16 bytes a cycle, nested reprs ran at 4–7 ns per cycle).
const REPR_COPY_BYTES_PER_CYCLE: u64 = 64;

/// Every `repr` of a container or text, whatever its size: the recursion
/// guard entered, the result allocated (`format` of frozensets nested 529
/// deep ran at ~4× ordinary code on the per-element charge alone, the
/// metering fuzzer, #47).
const REPR_BASE_CYCLES: u64 = 4;

macro_rules! metered_repr {
    ($name:ident, $original:ident) => {
        pub(super) static $original: OnceLock<ReprSlot> = OnceLock::new();
        pub(super) fn $name(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
            // `str(x)` and `f"{x}"` of a container format every element
            // (nested ones through their own slot); a string or bytes
            // inside one escapes every character.
            charge_if_executing(
                REPR_BASE_CYCLES + REPR_CYCLES_PER_UNIT * size_cycles(size_of(obj)),
                vm,
            )?;
            let original = $original.get().expect("wrapped slot has its original");
            let text = original(obj, vm)?;
            // A nested container's text is built level by level, each
            // level copying what the levels inside it made: quadratic in
            // the depth, so each level pays for the text it returns.
            charge_if_executing(text.byte_len() as u64 / REPR_COPY_BYTES_PER_CYCLE, vm)?;
            Ok(text)
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
        pub(super) static $original: OnceLock<ReprSlot> = OnceLock::new();
        pub(super) fn $name(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
            charge_decimal_conversion(obj, vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(obj, vm)
        }
    };
}

metered_int_text!(int_repr, INT_REPR);
metered_int_text!(int_str, INT_STR);

/// `repr` of a class (`<class 'int'>`, a module and qualified name looked
/// up and formatted): ~0.3 µs, free before the metering fuzzer found
/// `repr` of nested tuples of classes at ~80 ns per cycle (#47).
pub(crate) const CLASS_REPR_CYCLES: u64 = 20;

/// `repr` of a float (its `str` and `format(x, "")` come here too): the
/// shortest text that reads back as the same
/// float, then Python's layout rules: ~0.6–1.3 µs in RustPython (`f"{x}"`
/// of a float ran at ~97 ns per cycle free, the metering fuzzer, #47).
const FLOAT_TEXT_CYCLES: u64 = 40;

pub(super) static FLOAT_REPR: OnceLock<ReprSlot> = OnceLock::new();
pub(super) fn float_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    charge_if_executing(FLOAT_TEXT_CYCLES, vm)?;
    let original = FLOAT_REPR.get().expect("wrapped slot has its original");
    original(obj, vm)
}

/// `repr`/`str` of an exception formats its arguments (`ValueError(x)`),
/// nested ones level by level, each copying the text of the levels inside
/// it: exceptions nested 900 deep took ~4 ms a `repr` for ~20 cycles, and
/// the metering fuzzer's loop of them ran past a minute (#47). Each level
/// pays a base and the text it returns, like the containers' reprs.
///
/// A level copies its text about twice (its arguments' tuple text, then
/// its own): at the containers' 64 bytes a cycle, 900 levels ran at
/// 2.0–2.6× ordinary code per cycle in the fuzzer's short run, too near its
/// 3× bar; at 32 bytes, ~1.2×.
const EXCEPTION_TEXT_BYTES_PER_CYCLE: u64 = 32;

pub(super) static EXCEPTION_REPR: OnceLock<ReprSlot> = OnceLock::new();
pub(super) static EXCEPTION_STR: OnceLock<ReprSlot> = OnceLock::new();

pub(super) fn exception_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    charge_if_executing(REPR_BASE_CYCLES, vm)?;
    let text = EXCEPTION_REPR.get().expect("wrapped slot has its original")(obj, vm)?;
    charge_if_executing(text.byte_len() as u64 / EXCEPTION_TEXT_BYTES_PER_CYCLE, vm)?;
    Ok(text)
}

pub(super) fn exception_str(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    charge_if_executing(REPR_BASE_CYCLES, vm)?;
    let text = EXCEPTION_STR.get().expect("wrapped slot has its original")(obj, vm)?;
    charge_if_executing(text.byte_len() as u64 / EXCEPTION_TEXT_BYTES_PER_CYCLE, vm)?;
    Ok(text)
}

/// Gives every built-in exception type whose `repr`/`str` is
/// `BaseException`'s the charging wrappers (each type holds its own copy of
/// the slot; the ones with their own formatting keep theirs).
pub(super) fn wrap_exception_text(vm: &VirtualMachine) {
    let base = vm.ctx.exceptions.base_exception_type;
    let (Some(repr), Some(str)) = (base.slots.repr.load(), base.slots.str.load()) else {
        return;
    };
    let repr = if repr as usize == exception_repr as ReprSlot as usize {
        *EXCEPTION_REPR.get().expect("recorded when first wrapped")
    } else {
        *EXCEPTION_REPR.get_or_init(|| repr)
    };
    let str = if str as usize == exception_str as ReprSlot as usize {
        *EXCEPTION_STR.get().expect("recorded when first wrapped")
    } else {
        *EXCEPTION_STR.get_or_init(|| str)
    };
    for class in crate::meter::natives::inventory::builtin_types(vm) {
        if !class.fast_issubclass(base) {
            continue;
        }
        if class.slots.repr.load().map(|f| f as usize) == Some(repr as usize) {
            class.slots.repr.store(Some(exception_repr));
        }
        if class.slots.str.load().map(|f| f as usize) == Some(str as usize) {
            class.slots.str.store(Some(exception_str));
        }
    }
}

pub(super) static TYPE_REPR: OnceLock<ReprSlot> = OnceLock::new();
pub(super) fn type_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    charge_if_executing(CLASS_REPR_CYCLES, vm)?;
    let original = TYPE_REPR.get().expect("wrapped slot has its original");
    original(obj, vm)
}

metered_repr!(list_repr, LIST_REPR);
metered_repr!(tuple_repr, TUPLE_REPR);
metered_repr!(dict_repr, DICT_REPR);
metered_repr!(set_repr, SET_REPR);
metered_repr!(frozenset_repr, FROZENSET_REPR);
metered_repr!(str_repr, STR_REPR);
metered_repr!(bytes_repr, BYTES_REPR);
metered_repr!(bytearray_repr, BYTEARRAY_REPR);

/// A subclass of a built-in container, text or number formats through the
/// generic slot (RustPython's `repr_wrapper`): it looks `__repr__` up along
/// the MRO and calls the built-in's method, whose native is the unmetered
/// original — so `f"{x}"` of a one-item list subclass ran at 3.07× ordinary
/// code (the metering fuzzer, #47; `format(x)` at 4×). Charged like the
/// built-in's own `repr` plus the lookup and call.
const SUBCLASS_REPR_CYCLES: u64 = 24;

/// The generic `repr` slot, recorded from the first such subclass seen.
static GENERIC_REPR: OnceLock<ReprSlot> = OnceLock::new();

fn subclass_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    charge_if_executing(
        SUBCLASS_REPR_CYCLES + REPR_CYCLES_PER_UNIT * size_cycles(size_of(obj)),
        vm,
    )?;
    let original = GENERIC_REPR.get().expect("wrapped slot has its original");
    let text = original(obj, vm)?;
    charge_if_executing(text.byte_len() as u64 / REPR_COPY_BYTES_PER_CYCLE, vm)?;
    Ok(text)
}

/// Gives an actor's subclass of a built-in whose `repr` [`install`] meters
/// the charging generic slot (see [`SUBCLASS_REPR_CYCLES`]). A class whose
/// own `__repr__` is Python code pays this on top of running it, the price
/// of telling the two apart by the slot alone.
pub(crate) fn meter_subclass_repr(class: &PyType) {
    let Some(current) = class.slots.repr.load() else {
        return;
    };
    let ours = [
        subclass_repr as ReprSlot as usize,
        list_repr as ReprSlot as usize,
        tuple_repr as ReprSlot as usize,
        dict_repr as ReprSlot as usize,
        set_repr as ReprSlot as usize,
        frozenset_repr as ReprSlot as usize,
        str_repr as ReprSlot as usize,
        bytes_repr as ReprSlot as usize,
        bytearray_repr as ReprSlot as usize,
        int_repr as ReprSlot as usize,
        float_repr as ReprSlot as usize,
        type_repr as ReprSlot as usize,
        exception_repr as ReprSlot as usize,
    ];
    if ours.contains(&(current as usize)) {
        return;
    }
    let generic = *GENERIC_REPR.get_or_init(|| current);
    if current as usize == generic as usize {
        class.slots.repr.store(Some(subclass_repr));
    }
}
