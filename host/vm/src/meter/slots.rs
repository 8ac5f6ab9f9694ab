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
use rustpython_vm::types::{PyComparisonOp, PyTypeFlags};
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

/// Gives an actor's class that compares through the generic slot (a
/// subclass of a built-in container, or a class with its own `__eq__`)
/// the charging one: the method is looked up along the MRO and called on
/// every comparison (see [`SUBCLASS_COMPARE_CYCLES`]).
pub(crate) fn meter_subclass_comparison(class: &PyType) {
    let Some(current) = class.slots.richcompare.load() else {
        return;
    };
    let ours = [
        object_compare as CompareSlot as usize,
        subclass_compare as CompareSlot as usize,
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
        class.slots.richcompare.store(Some(subclass_compare));
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

/// Hashing a `range` builds the tuple `(len, start, step)` of ints and
/// hashes it (~150 ns): `{r: 1}` ran at 2.4–4.2× ordinary code per cycle
/// free (the metering fuzzer's sixth long run, #47).
const RANGE_HASH_CYCLES: u64 = 6;

static RANGE_HASH: OnceLock<HashSlot> = OnceLock::new();

fn range_hash(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    charge_if_executing(RANGE_HASH_CYCLES, vm)?;
    let original = RANGE_HASH.get().expect("wrapped slot has its original");
    original(obj, vm)
}

type ReprSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyRef<PyStr>>;

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
        static $original: OnceLock<ReprSlot> = OnceLock::new();
        fn $name(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
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

/// `repr` of a class (`<class 'int'>`, a module and qualified name looked
/// up and formatted): ~0.3 µs, free before the metering fuzzer found
/// `repr` of nested tuples of classes at ~80 ns per cycle (#47).
pub(crate) const CLASS_REPR_CYCLES: u64 = 20;

/// `repr` of a float (its `str` and `format(x, "")` come here too): the
/// shortest text that reads back as the same
/// float, then Python's layout rules: ~0.6–1.3 µs in RustPython (`f"{x}"`
/// of a float ran at ~97 ns per cycle free, the metering fuzzer, #47).
const FLOAT_TEXT_CYCLES: u64 = 40;

static FLOAT_REPR: OnceLock<ReprSlot> = OnceLock::new();
fn float_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
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

static EXCEPTION_REPR: OnceLock<ReprSlot> = OnceLock::new();
static EXCEPTION_STR: OnceLock<ReprSlot> = OnceLock::new();

fn exception_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    charge_if_executing(REPR_BASE_CYCLES, vm)?;
    let text = EXCEPTION_REPR.get().expect("wrapped slot has its original")(obj, vm)?;
    charge_if_executing(text.byte_len() as u64 / EXCEPTION_TEXT_BYTES_PER_CYCLE, vm)?;
    Ok(text)
}

fn exception_str(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    charge_if_executing(REPR_BASE_CYCLES, vm)?;
    let text = EXCEPTION_STR.get().expect("wrapped slot has its original")(obj, vm)?;
    charge_if_executing(text.byte_len() as u64 / EXCEPTION_TEXT_BYTES_PER_CYCLE, vm)?;
    Ok(text)
}

/// Gives every built-in exception type whose `repr`/`str` is
/// `BaseException`'s the charging wrappers (each type holds its own copy of
/// the slot; the ones with their own formatting keep theirs).
fn wrap_exception_text(vm: &VirtualMachine) {
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

static TYPE_REPR: OnceLock<ReprSlot> = OnceLock::new();
fn type_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
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

/// Wraps the slots of this thread's built-in types (each runtime thread has
/// its own type objects). The originals are the same functions on every
/// thread, so the first thread records them.
/// Gives a class an actor defines the charging slot wherever it inherited
/// the *original* native one of a built-in base: RustPython fills a new
/// class's slots from its bases' slot-wrapper descriptors, which hold the
/// natives as they were before [`install`] wrapped them (bpo-37619's
/// lookup). Every slot [`install`] wraps is checked. (A base whose method
/// is not a slot wrapper gives the generic slot instead:
/// [`meter_subclass_repr`].)
pub(crate) fn meter_inherited_slots(class: &PyType) {
    macro_rules! swap {
        ($slot:ident: $type:ty, $(($original:expr, $wrapper:expr)),+ $(,)?) => {$(
            if let (Some(current), Some(original)) = (class.slots.$slot.load(), $original.get()) {
                if current as usize == *original as usize {
                    class.slots.$slot.store(Some($wrapper as $type));
                }
            }
        )+};
    }
    swap!(repr: ReprSlot,
        (LIST_REPR, list_repr),
        (TUPLE_REPR, tuple_repr),
        (DICT_REPR, dict_repr),
        (SET_REPR, set_repr),
        (FROZENSET_REPR, frozenset_repr),
        (STR_REPR, str_repr),
        (BYTES_REPR, bytes_repr),
        (BYTEARRAY_REPR, bytearray_repr),
        (INT_REPR, int_repr),
        (TYPE_REPR, type_repr),
        (FLOAT_REPR, float_repr),
        (EXCEPTION_REPR, exception_repr),
    );
    swap!(str: ReprSlot, (INT_STR, int_str), (EXCEPTION_STR, exception_str));
    swap!(hash: HashSlot, (TUPLE_HASH, tuple_hash), (BYTES_HASH, bytes_hash));
    swap!(richcompare: CompareSlot,
        (LIST_COMPARE, container_compare_list),
        (TUPLE_COMPARE, container_compare_tuple),
        (DICT_COMPARE, container_compare_dict),
        (SET_COMPARE, container_compare_set),
        (FROZENSET_COMPARE, container_compare_frozenset),
        (BYTES_COMPARE, bytes_compare),
        (BYTEARRAY_COMPARE, bytearray_compare),
        (STR_COMPARE, str_compare),
        (DICT_KEYS_COMPARE, dict_keys_compare),
        (DICT_ITEMS_COMPARE, dict_items_compare),
    );
}

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
        types.dict_keys_type => (DICT_KEYS_COMPARE, dict_keys_compare),
        types.dict_items_type => (DICT_ITEMS_COMPARE, dict_items_compare),
    );
    wrap!(hash: HashSlot,
        types.tuple_type => (TUPLE_HASH, tuple_hash),
        types.range_type => (RANGE_HASH, range_hash),
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
        types.type_type => (TYPE_REPR, type_repr),
        types.float_type => (FLOAT_REPR, float_repr),
    );
    wrap!(str: ReprSlot,
        types.int_type => (INT_STR, int_str),
    );
    wrap_exception_text(vm);
}
