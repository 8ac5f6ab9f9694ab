//! Conversion between Python objects and canonical [`Value`]s at the VM
//! boundary (handler arguments and results, storage values, event data,
//! cross-actor call arguments). Only the exact builtin types of the value model
//! convert; subclasses, user objects and floats are refused, so nothing that
//! could carry behaviour or non-canonical data crosses into state.

use malachite_bigint::BigInt as PyBigInt;
use num_bigint::BigInt;
use rustpython_vm::builtins::{PyBytes, PyDict, PyInt, PyList, PyStr, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::value::MAX_DEPTH;

// Pure helpers the meter needs too, defined with it.
pub use crate::meter::sizes::{from_py_bigint, nested_items};
use timerhost_types::Value;

/// Converts an actor's object into a [`Value`], raising `TypeError` for
/// anything outside the value model.
pub fn py_to_value(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Value> {
    converted(obj, vm, false)
}

/// [`py_to_value`] with dicts left in insertion order instead of the
/// canonical key order: for `json.dumps` without `sort_keys`, which writes
/// members in the order the dict has them, as CPython does. Such a value is
/// only encoded, never stored or compared.
pub fn py_to_value_in_order(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Value> {
    converted(obj, vm, true)
}

/// Converts `obj`; a conversion that fails part-way (a value nested too
/// deep, an object that cannot be stored, found after a million ints) is
/// charged for the items it converted before it stopped — a successful
/// one is charged by its caller, by the value it returns. `json.dumps` of
/// a dict nested past the limit was free to attempt in a loop (~3× ordinary
/// code, the metering fuzzer, #47).
fn converted(obj: &PyObjectRef, vm: &VirtualMachine, in_order: bool) -> PyResult<Value> {
    let mut visited = 0u64;
    let result = to_value(obj, vm, 0, in_order, &mut visited);
    if result.is_err() {
        crate::meter::charge::charge_if_executing(
            visited.saturating_mul(crate::rules::costs::size::PER_CONVERTED_ITEM),
            vm,
        )?;
    }
    result
}

/// Counts `items` more visited. What a conversion builds is allocated as it
/// goes: every 1,024 items the budget's flag is looked at, so a value that
/// cannot fit stops within that many items of it (`json.dumps` of a
/// self-referencing dict of 28,000 entries grew the process by 300 MB
/// before failing at the depth bound, the metering fuzzer, #47).
fn visit(visited: &mut u64, items: u64, vm: &VirtualMachine) -> PyResult<()> {
    let before = *visited;
    *visited = visited.saturating_add(items);
    if before / 1024 != *visited / 1024 {
        crate::meter::charge::charge_if_executing(0, vm)?;
    }
    Ok(())
}

fn to_value(
    obj: &PyObjectRef,
    vm: &VirtualMachine,
    depth: usize,
    in_order: bool,
    visited: &mut u64,
) -> PyResult<Value> {
    visit(visited, 1, vm)?;
    if depth > MAX_DEPTH {
        return Err(vm.new_value_error(format!("value nested deeper than {MAX_DEPTH}")));
    }
    let class = obj.class();
    let types = &vm.ctx.types;
    if vm.is_none(obj) {
        return Ok(Value::None);
    }
    if class.is(types.bool_type) {
        return Ok(Value::Bool(obj.clone().try_to_bool(vm)?));
    }
    if class.is(types.int_type) {
        let int = obj.downcast_ref::<PyInt>().expect("exact int");
        return Ok(Value::Int(from_py_bigint(int.as_bigint())));
    }
    if class.is(types.str_type) {
        let text = obj.downcast_ref::<PyStr>().expect("exact str");
        // Text and bytes are copied: counted as an item per 64 bytes, so a
        // conversion that fails after a large copy pays for it
        // (`json.dumps` of 350 KB of bytes ran at ~3.9× ordinary code, #47).
        visit(visited, text.byte_len() as u64 / 64, vm)?;
        let text = text
            .to_str()
            .ok_or_else(|| vm.new_value_error("str with lone surrogates cannot be stored"))?;
        return Ok(Value::Str(text.to_owned()));
    }
    if class.is(types.bytes_type) {
        let bytes = obj.downcast_ref::<PyBytes>().expect("exact bytes");
        visit(visited, bytes.as_bytes().len() as u64 / 64, vm)?;
        return Ok(Value::Bytes(bytes.as_bytes().to_vec()));
    }
    if class.is(types.list_type) {
        let list = obj.downcast_ref::<PyList>().expect("exact list");
        // One item at a time: copying the whole list first made a conversion
        // failing at its first item cost the list's length, unpaid
        // (`json.dumps` of 3,127 floats ran at ~17× ordinary code, #47).
        // No Python code runs here, so the list cannot change meanwhile.
        let mut items = Vec::with_capacity(list.borrow_vec().len());
        let mut index = 0;
        while let Some(item) = list.borrow_vec().get(index).cloned() {
            items.push(to_value(&item, vm, depth + 1, in_order, visited)?);
            index += 1;
        }
        return Ok(Value::List(items));
    }
    if class.is(types.tuple_type) {
        let tuple = obj.downcast_ref::<PyTuple>().expect("exact tuple");
        return Ok(Value::Tuple(
            tuple
                .iter()
                .map(|i| to_value(i, vm, depth + 1, in_order, visited))
                .collect::<PyResult<_>>()?,
        ));
    }
    if class.is(types.dict_type) {
        let dict = obj.downcast_ref::<PyDict>().expect("exact dict");
        let mut entries = Vec::new();
        // The entries are copied out first (~6 ns each): a cycle each, paid
        // before the copy whether the conversion succeeds or stops at the
        // first entry.
        crate::meter::charge::charge_if_executing(dict.__len__() as u64, vm)?;
        for (key, value) in dict.items_vec() {
            entries.push((
                to_value(&key, vm, depth + 1, in_order, visited)?,
                to_value(&value, vm, depth + 1, in_order, visited)?,
            ));
        }
        if in_order {
            return Ok(Value::Dict(entries));
        }
        return Value::dict_from(entries)
            .ok_or_else(|| vm.new_type_error("dict keys must be hashable values"));
    }
    Err(vm.new_type_error(format!(
        "values of type '{}' cannot leave the actor (allowed: None, bool, int, str, bytes, list, tuple, dict)",
        class.name()
    )))
}

/// Builds the Python object for a [`Value`].
pub fn value_to_py(value: &Value, vm: &VirtualMachine) -> PyObjectRef {
    match value {
        Value::None => vm.ctx.none(),
        Value::Bool(b) => vm.ctx.new_bool(*b).into(),
        Value::Int(i) => vm.ctx.new_bigint(&to_py_bigint(i)).into(),
        Value::Str(s) => vm.ctx.new_str(s.as_str()).into(),
        Value::Bytes(b) => vm.ctx.new_bytes(b.clone()).into(),
        Value::List(items) => vm
            .ctx
            .new_list(items.iter().map(|i| value_to_py(i, vm)).collect())
            .into(),
        Value::Tuple(items) => vm
            .ctx
            .new_tuple(items.iter().map(|i| value_to_py(i, vm)).collect())
            .into(),
        Value::Dict(entries) => {
            let dict = vm.ctx.new_dict();
            for (key, value) in entries {
                // Keys are hashable values by construction; their hashes are deterministic.
                let _ = dict.set_item(&*value_to_py(key, vm), value_to_py(value, vm), vm);
            }
            dict.into()
        }
    }
}

/// The workspace's integer type to RustPython's.
pub fn to_py_bigint(value: &BigInt) -> PyBigInt {
    PyBigInt::from_signed_bytes_le(&value.to_signed_bytes_le())
}
