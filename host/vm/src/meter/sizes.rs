//! What values cost by their size: the size of a Python object in elements
//! and bytes, the charges for producing and converting values, the bounds
//! on integers and results, and materialising lazy iterables before a
//! builtin walks them.

use malachite_bigint::BigInt as PyBigInt;
use num_bigint::BigInt;
use rustpython_vm::builtins::{
    PyByteArray, PyBytes, PyDict, PyFrozenSet, PyInt, PyList, PyRange, PySet, PyStr, PyTuple,
};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::Value;

use crate::meter::charge::{charge, trip};
use crate::meter::Abort;
use crate::rules::costs;

/// Largest integer (in bits) a guarded operation may produce. Bounding ints
/// keeps every unguarded integer operation (`x + 1`, `x % 7`) cheap, which is
/// what lets the instrumenter skip guards on them.
pub const MAX_INT_BITS: u128 = 65_536;

pub(crate) fn check_int_bits(bits: u128, vm: &VirtualMachine) -> PyResult<()> {
    if bits > MAX_INT_BITS {
        return Err(vm.new_overflow_error(format!(
            "integer results are limited to {MAX_INT_BITS} bits in actors"
        )));
    }
    Ok(())
}

/// Fails with `out_of_memory` before an operation that would produce more
/// than the per-operation cap or what is left of the memory budget.
pub(crate) fn precheck_result_bytes(bytes: u128, vm: &VirtualMachine) -> PyResult<()> {
    let cap = u128::from(
        costs::size::MAX_RESULT_BYTES.min(crate::meter::alloc::MemoryBudget::remaining()),
    );
    if bytes > cap {
        return Err(trip(Abort::Memory, vm));
    }
    Ok(())
}

/// `(elements, bytes)` an operation over `obj` touches.
pub(crate) fn size_of(obj: &rustpython_vm::PyObject) -> (u64, u64) {
    if let Some(s) = obj.downcast_ref::<PyStr>() {
        return (0, s.byte_len() as u64);
    }
    if let Some(b) = obj.downcast_ref::<PyBytes>() {
        return (0, b.as_bytes().len() as u64);
    }
    if let Some(b) = obj.downcast_ref::<PyByteArray>() {
        return (0, b.borrow_buf().len() as u64);
    }
    if let Some(i) = obj.downcast_ref::<PyInt>() {
        return (0, i.as_bigint().bits() / 8);
    }
    if let Some(l) = obj.downcast_ref::<PyList>() {
        return (l.borrow_vec().len() as u64, 0);
    }
    if let Some(t) = obj.downcast_ref::<PyTuple>() {
        return (t.len() as u64, 0);
    }
    if let Some(d) = obj.downcast_ref::<PyDict>() {
        return (d.__len__() as u64, 0);
    }
    if obj.downcast_ref::<PySet>().is_some() || obj.downcast_ref::<PyFrozenSet>().is_some() {
        // Exact builtin sets (actors cannot define __len__): no user code runs.
        return (set_len(obj), 0);
    }
    // A dict view walks its dict.
    rustpython_vm::vm::thread::with_current_vm(|vm| {
        let class = obj.class();
        let types = &vm.ctx.types;
        if class.is(types.dict_keys_type)
            || class.is(types.dict_values_type)
            || class.is(types.dict_items_type)
        {
            (obj.length(vm).map_or(0, |l| l as u64), 0)
        } else {
            (0, 0)
        }
    })
}

/// Cycles for converting an int of `digits` decimal digits to or from text
/// beyond what its bytes are charged: the conversions are quadratic
/// (measured, release: 40 µs to parse 4,299 digits, 78 µs to write them,
/// 846 µs to write 19,568; `digits/2 + digits²/4096` keeps them at 5–14 ns
/// per cycle, docs/METERING.md). Used by `json`, `str(int)`/`repr(int)`,
/// `format(int, spec)` and `int(text)`.
pub fn decimal_cycles(digits: u64) -> u64 {
    digits / 2 + digits.saturating_mul(digits) / 4096
}

/// [`decimal_cycles`] of an int of `bits` bits (log10(2) ≈ 1233/4096).
pub(crate) fn int_decimal_cycles(bits: u64) -> u64 {
    decimal_cycles(bits * 1233 / 4096 + 1)
}

pub(crate) fn size_cycles((elements, bytes): (u64, u64)) -> u64 {
    elements * costs::size::PER_ELEMENT + costs::for_bytes(bytes)
}

/// Charges what making `obj` cost by its size; an int at the rate of
/// linear int work ([`costs::size::INT_BYTES_PER_CYCLE`]: writing limbs,
/// where the text rate charged a 20,000-bit product ~150 cycles for ~0.3 µs).
pub(crate) fn charge_size(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    charge(size_charge(obj), 0, vm)
}

/// The cycles [`charge_size`] charges for `obj`.
pub(crate) fn size_charge(obj: &PyObjectRef) -> u64 {
    if let Some(int) = obj.downcast_ref::<PyInt>() {
        return int_bits(int) / 8 / costs::size::INT_BYTES_PER_CYCLE;
    }
    size_cycles(size_of(obj))
}

/// Charges converting `value` between objects and the canonical encoding
/// `ways` times: per nested item (charged by encoded bytes alone, `json`
/// round trips of a 20,000-element list ran at 235–402 ns per cycle).
pub(crate) fn charge_conversion(value: &Value, ways: u64, vm: &VirtualMachine) -> PyResult<()> {
    let items = nested_items(value);
    charge(items * ways * costs::size::PER_CONVERTED_ITEM, 0, vm)
}

/// Characters of a `str`, bytes of a `bytes`/`bytearray`: the items walking
/// it produces.
pub(crate) fn items_of_text(obj: &PyObjectRef) -> Option<u64> {
    if let Some(s) = obj.downcast_ref::<PyStr>() {
        return Some(s.char_len() as u64);
    }
    if let Some(b) = obj.downcast_ref::<PyBytes>() {
        return Some(b.as_bytes().len() as u64);
    }
    obj.downcast_ref::<PyByteArray>()
        .map(|b| b.borrow_buf().len() as u64)
}

pub(crate) fn is_sized(obj: &PyObjectRef) -> bool {
    obj.downcast_ref::<PyStr>().is_some()
        || obj.downcast_ref::<PyBytes>().is_some()
        || obj.downcast_ref::<PyByteArray>().is_some()
        || obj.downcast_ref::<PyList>().is_some()
        || obj.downcast_ref::<PyTuple>().is_some()
        || obj.downcast_ref::<PyDict>().is_some()
        || obj.downcast_ref::<PySet>().is_some()
        || obj.downcast_ref::<PyFrozenSet>().is_some()
}

/// Cycles for the `key` function a native calls once per element
/// (`sorted`, `min`, `max`, `list.sort`): a native key (`key=hash`,
/// `key=len`) is called from Rust with nothing charged inside it — ~150 ns
/// a call (`max(d, key=hash)` ran at ~140 ns per cycle when only the walk
/// was charged, the metering fuzzer, #47); a Python key pays its frame on
/// top.
pub(crate) fn key_calls(elements: u64, args: &FuncArgs) -> u64 {
    match args.kwargs.get("key") {
        Some(key) if !rustpython_vm::vm::thread::with_current_vm(|vm| vm.is_none(key)) => {
            elements.saturating_mul(costs::size::KEY_CALL)
        }
        _ => 0,
    }
}

/// Replaces a `key=` argument with a wrapper that checks the memory budget
/// after every call: the keys a native sort computes accumulate inside it,
/// out of reach of any charge until it returns. `sorted(b, key=repr)` of
/// 1.45 million bytes built 194 MB of key strings under a 64 MiB budget
/// before the budget was looked at (the metering fuzzer, #47); now it stops
/// at the first key past the budget. The calls are priced by [`key_calls`].
pub(crate) fn meter_key(args: &mut FuncArgs, vm: &VirtualMachine) {
    let Some(key) = args.kwargs.get("key").cloned() else {
        return;
    };
    // A Python key checks the budget itself, at every charge of its frame;
    // wrapping it would only add a native call per element (sorting with a
    // lambda key ran ~45% slower wrapped).
    if vm.is_none(&key)
        || key
            .downcast_ref::<rustpython_vm::builtins::PyFunction>()
            .is_some()
    {
        return;
    }
    let metered = vm.new_function(
        "key",
        move |item: PyObjectRef, vm: &VirtualMachine| -> PyResult {
            let result = key.call((item,), vm)?;
            charge(0, 0, vm)?;
            Ok(result)
        },
    );
    args.kwargs.insert("key".into(), metered.into());
}

/// Cycles per item drawn from a lazy iterator by a native (a generator's
/// resumption is ~100 ns; its own code is metered too).
pub(crate) const LAZY_ITEM_CYCLES: u64 = 4;

/// And per item of a `map`: the call of its function (see [`materialize`]).
pub(crate) const MAP_CALL_CYCLES: u64 = 2;

/// And per item of a `zip`: the tuple it builds of one item from each
/// iterator it zips (`dict(zip(x, x))` of two 190,866-item ranges ran at
/// 3.0× ordinary code per cycle on the drain's charge alone, the metering
/// fuzzer's seed-5757 run, #47).
pub(crate) const ZIP_TUPLE_CYCLES: u64 = 2;

/// Cycles per item of a `range` a native walks (see [`materialize`]).
pub(crate) const RANGE_ITEM_CYCLES: u64 = 3;

/// Charges for walking `obj` and returns something safe to hand to a Rust
/// loop: sized containers as they are, ranges by length, anything else (a
/// lazy iterator, which would otherwise run unmetered inside Rust) drained
/// here into a list, one charged item at a time.
pub(crate) fn materialize(obj: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    if let Some(items) = items_of_text(&obj) {
        // Walking a str or bytes makes an object per character or byte
        // (`set(s)` of 1 MB took 13 ms for 62,500 cycles at bytes / 16).
        charge(items * costs::size::PER_ELEMENT, 0, vm)?;
        return Ok(obj);
    }
    if is_sized(&obj) {
        charge_size(&obj, vm)?;
        return Ok(obj);
    }
    if obj.downcast_ref::<PyRange>().is_some() {
        // Each item becomes an int object inside the native that walks it:
        // ~40 ns an item (`[].extend(range(n))`, `sum(range(n))` ran at
        // 34–55 ns per cycle at one cycle an item).
        let length = obj.length(vm)? as u64;
        charge(length * RANGE_ITEM_CYCLES, 0, vm)?;
        return Ok(obj);
    }
    // Each item of a `map` is a call of its function made from native
    // code, which no call site's static cost pays for (`list(map(hash, x))`
    // of floats ran at 3.1–3.2× ordinary code per cycle, #47); each item of
    // a `zip` a tuple built.
    let class = obj.class();
    let per_item = if class.is(vm.ctx.types.map_type) {
        LAZY_ITEM_CYCLES + MAP_CALL_CYCLES
    } else if class.is(vm.ctx.types.zip_type) {
        LAZY_ITEM_CYCLES + ZIP_TUPLE_CYCLES
    } else {
        LAZY_ITEM_CYCLES
    };
    let iterator = obj.get_iter(vm)?;
    let mut items = Vec::new();
    loop {
        charge(per_item, 0, vm)?;
        match iterator.next(vm)? {
            rustpython_vm::protocol::PyIterReturn::Return(item) => items.push(item),
            rustpython_vm::protocol::PyIterReturn::StopIteration(_) => break,
        }
    }
    Ok(vm.ctx.new_list(items).into())
}

/// [`materialize`] for a value whose items are all kept (`f(*x)`,
/// `[*x]`, `{**x}`, `a, *b = x`): the container the items go into, and for
/// a `range` the int made of every item, are checked against what is left
/// of the memory budget first. `f(*range(12_000_000))` grew the process to
/// 1.2 GB under a 64 MiB budget before the call could fail; now it fails
/// at once, out of memory. (Lazy iterators are drained one charged item at
/// a time, and every charge sees the budget's flag.)
pub(crate) fn materialize_kept(obj: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    precheck_items_kept(&obj, KEPT_INT_BYTES, POINTER_BYTES, vm)?;
    // The unpacking itself: an iterator made and drained into the new
    // container, through `__iter__` for a subclass (`[*x, *x]` of a list
    // subclass ran at ~3.9× ordinary code on its one element's charge, the
    // metering fuzzer, #47).
    charge(KEPT_UNPACK_CYCLES, 0, vm)?;
    materialize(obj, vm)
}

/// What [`materialize_kept`] charges for the unpacking itself.
const KEPT_UNPACK_CYCLES: u64 = 8;

/// `*x` in a set display (`{*x}`, `{a, *x}`): [`materialize_kept`], the
/// new table checked against the budget, and [`SET_DISPLAY_ITEM_CYCLES`]
/// per item for hashing it in. The display's path inserts item by item
/// through the generic set protocol: `{*x}` of 20,000 strings ran at 67 ns
/// per cycle where `set(x)` runs at 20 (the metering fuzzer, #47).
pub(crate) fn materialize_set_items(obj: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    precheck_built_entries(&obj, vm)?;
    let items = materialize_kept(obj, vm)?;
    let count = size_of(&items).0;
    charge(count.saturating_mul(SET_DISPLAY_ITEM_CYCLES), 0, vm)?;
    Ok(items)
}

/// See [`materialize_set_items`].
const SET_DISPLAY_ITEM_CYCLES: u64 = 4;

/// Before a native builds a set or dict from `source`: the entries (and
/// for a `range`, the int made of every item) must fit in what is left of
/// the memory budget. `dict.fromkeys(range(3_000_000))` grew the process by
/// 140 MiB under a 64 MiB budget, the table's last resize on top of the
/// ints, before the budget's flag could be seen.
pub(crate) fn precheck_built_entries(source: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    precheck_items_kept(
        source,
        KEPT_INT_BYTES + TABLE_ENTRY_BYTES,
        TABLE_ENTRY_BYTES,
        vm,
    )
}

/// Fails out of memory before the items of `source` are kept in a new
/// container if they cannot fit what is left of the budget: a `range`'s
/// items at `range_item_bytes` each (an int is made of each), any other
/// container's elements at `element_bytes`. The one check behind
/// [`materialize_kept`] and [`precheck_built_entries`].
fn precheck_items_kept(
    source: &PyObjectRef,
    range_item_bytes: u128,
    element_bytes: u128,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let bytes = if source.downcast_ref::<PyRange>().is_some() {
        (source.length(vm)? as u128).saturating_mul(range_item_bytes)
    } else {
        u128::from(size_of(source).0).saturating_mul(element_bytes)
    };
    precheck_result_bytes(bytes, vm)
}

/// Bytes of one entry of a dict or set table (a hash, a key, a value and
/// its index slot: 32, and the table's room to grow; `str.maketrans` of a
/// 512,000-key dict grew the process by 180 MiB at 16).
const TABLE_ENTRY_BYTES: u128 = 48;

/// Bytes a kept int of a range takes at least: its object and the slot
/// pointing at it (RustPython's int objects are larger; the estimate only
/// has to refuse what cannot fit).
const KEPT_INT_BYTES: u128 = 48;

/// Bytes of a container's slot for one item.
const POINTER_BYTES: u128 = 8;

/// Charges one argument of in-place growth onto `receiver` (`xs += ys`,
/// `xs.extend(ys)`, `d |= pairs`, `s.update(items)`) and returns what the
/// native may take: the receiver is not walked, only the argument — bytes
/// onto a bytearray are copied (per 16 bytes), anything else is walked
/// ([`materialize`], a lazy one drained here item by item), and each item
/// going into a set or dict is hashed and inserted too.
pub(crate) fn grow_in_place(
    receiver: &PyObjectRef,
    argument: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let (elements, bytes) = size_of(&argument);
    if elements == 0 && bytes > 0 && receiver.downcast_ref::<PyByteArray>().is_some() {
        charge(costs::for_bytes(bytes), 0, vm)?;
        return Ok(argument);
    }
    let walked = materialize(argument, vm)?;
    if receiver.downcast_ref::<PySet>().is_some() || receiver.downcast_ref::<PyDict>().is_some() {
        // The walk paid one cycle an item: the rest of the build rate.
        let length = walked.length(vm).map_or(0, |l| l as u64);
        charge(
            length.saturating_mul(costs::size::PER_ELEMENT_BUILT - costs::size::PER_ELEMENT),
            0,
            vm,
        )?;
    }
    Ok(walked)
}

pub(crate) fn int_value(obj: &PyObjectRef) -> Option<&PyInt> {
    obj.downcast_ref::<PyInt>().map(|int| &**int)
}

/// Saturating conversion (huge values become `i64::MAX`/`MIN`): used for
/// counts and exponents, where saturation makes the pre-check fail as it should.
pub(crate) fn int_to_i64(int: &PyInt) -> i64 {
    match int_to_i128(int) {
        Some(value) => value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        None if int.as_bigint().sign() == malachite_bigint::Sign::Minus => i64::MIN,
        None => i64::MAX,
    }
}

pub(crate) fn int_to_i128(int: &PyInt) -> Option<i128> {
    let value = int.as_bigint();
    if value.bits() > 120 {
        return None;
    }
    num_traits::ToPrimitive::to_i128(&from_py_bigint(value))
}

pub(crate) fn set_len(obj: &rustpython_vm::PyObject) -> u64 {
    rustpython_vm::vm::thread::with_current_vm(|vm| obj.length(vm).unwrap_or(0) as u64)
}

pub(crate) fn int_bits(int: &PyInt) -> u64 {
    int.as_bigint().bits()
}

/// Operands at most this many limbs long are multiplied by schoolbook
/// (`malachite`'s Karatsuba threshold is of this order).
const SCHOOLBOOK_LIMBS: u64 = 128;

/// Limb products of multiplying two `limbs`-long ints the way `malachite`
/// does: schoolbook up to [`SCHOOLBOOK_LIMBS`], then Karatsuba's three
/// half-size products (`K(n) = 3·K(⌈n/2⌉)`), in integers so every node
/// computes the same number.
fn karatsuba_products(limbs: u64) -> u64 {
    if limbs <= SCHOOLBOOK_LIMBS {
        return limbs * limbs;
    }
    3 * karatsuba_products(limbs.div_ceil(2))
}

/// Limb products per cycle of an int product ([`int_product_cycles`]): a
/// multiply-add of limbs is ~1 ns.
const LIMB_PRODUCTS_PER_CYCLE: u64 = 16;

/// Cycles for multiplying ints of these sizes (also the base of division's
/// price): limb products / 16, schoolbook for small operands and Karatsuba's
/// count for large ones, a long operand counted as that many blocks of the
/// short one (zero for two machine words). Schoolbook at every size and
/// four products a cycle made 4,500-bit products run at 1.9 ns per cycle
/// against ~20 for ordinary code (the fairness benchmark, 16n), and a
/// big-int program (the real-program bench's pidigits) at 3.
pub(crate) fn int_product_cycles(a_bits: u64, b_bits: u64) -> u64 {
    let (a, b) = (a_bits / 64 + 1, b_bits / 64 + 1);
    let (short, long) = (a.min(b), a.max(b));
    let blocks = long.div_ceil(short);
    blocks.saturating_mul(karatsuba_products(short)) / LIMB_PRODUCTS_PER_CYCLE
}

/// Values nested inside `value`'s containers (0 for a scalar): what
/// converting it walks or builds beyond the value itself.
pub fn nested_items(value: &Value) -> u64 {
    match value {
        Value::List(items) | Value::Tuple(items) => items.iter().map(|i| 1 + nested_items(i)).sum(),
        Value::Dict(entries) => entries
            .iter()
            .map(|(k, v)| 2 + nested_items(k) + nested_items(v))
            .sum(),
        _ => 0,
    }
}

/// RustPython's integer type (malachite) to the workspace's (num-bigint).
pub fn from_py_bigint(value: &PyBigInt) -> BigInt {
    BigInt::from_signed_bytes_le(&value.to_signed_bytes_le())
}
