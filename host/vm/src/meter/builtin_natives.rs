//! Guarded builtins: the builtins whose work grows with their arguments
//! (`sorted`, `sum`, `pow`, and the constructors of [`crate::interpreter::builtin_types`])
//! charge that work and then call the original; the reflective builtins
//! (`getattr`, `setattr`, `format`, `iter`, …) check the names and specs
//! they are given at run time the way the deploy validator checks written
//! ones.

use rustpython_vm::builtins::{PyStr, PyType};
use rustpython_vm::function::{FuncArgs, OptionalArg};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::meter::charge::charge;
use crate::meter::operators::charge_operator;
use crate::meter::sizes::*;
use crate::meter::swallowed::charge_swallowed;
use crate::rules::costs;
use crate::rules::guards::OperatorCode;

/// Bounds the nesting of `isinstance`/`issubclass`'s second argument and
/// charges its walk ([`crate::meter::nesting::check_class_info`]).
fn charge_class_info(class_info: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    crate::meter::nesting::check_class_info(class_info, vm)
}

/// What every consuming builtin (`list`, `set`, `sum`, `sorted`, …) costs
/// beyond its walk.
const CONSUMING_CALL_CYCLES: u64 = 8;

/// How a consuming builtin walks its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// One iterable argument (`list(it)`, `any(it)`), or several values
    /// compared (`max(a, b)`).
    First,
    /// `sorted(it)`: the walk plus n·log2(n) comparisons.
    Sort,
    /// `sum(it, start)`: the iterable is walked whatever follows it.
    Sum,
}

/// A builtin that walks its first argument (`list`, `sorted`, `sum`, …):
/// charges the walk (drawing a lazy iterator here, one charged item at a
/// time), calls `call` and charges the result's size.
pub(crate) fn consuming_builtin(
    walk: Walk,
    mut args: FuncArgs,
    vm: &VirtualMachine,
    call: impl FnOnce(FuncArgs) -> PyResult,
) -> PyResult {
    // The wrapper's own work (the arguments rebuilt, the walk set up):
    // `set(d)` of a one-key dict ran at ~3× ordinary code without it (the
    // metering fuzzer, #47).
    charge(CONSUMING_CALL_CYCLES, 0, vm)?;
    let sort = walk == Walk::Sort;
    // `sum(range(n), 0)` walks its first argument as `sum(range(n))` does;
    // `max(a, b, c)` compares its arguments.
    if args.args.len() == 1 || (walk == Walk::Sum && !args.args.is_empty()) {
        let first = args.args.remove(0);
        let materialized = materialize(first, vm)?;
        if sort {
            let (elements, _) = size_of(&materialized);
            let elements = elements.max(materialized.length(vm).unwrap_or(0) as u64);
            let log = 64 - elements.leading_zeros() as u64;
            charge(elements * log * costs::size::SORT_LOG_FACTOR, 0, vm)?;
        }
        if walk == Walk::Sum {
            charge_sum_copies(&materialized, &args, vm)?;
        }
        if args.kwargs.contains_key("key") {
            let elements = size_of(&materialized)
                .0
                .max(materialized.length(vm).unwrap_or(0) as u64);
            charge(key_calls(elements, &args), 0, vm)?;
            if sort {
                // `min`/`max` hold one key at a time; a sort holds them all.
                meter_key(&mut args, vm);
            }
        }
        args.args.insert(0, materialized);
    } else {
        for arg in &args.args {
            charge_size(arg, vm)?;
        }
    }
    let result = call(args)?;
    charge_size(&result, vm)?;
    Ok(result)
}

/// `sum(items, start)` adds item by item, and adding two lists or tuples
/// copies both: summing n one-item lists onto `[]` copies n²/2 elements
/// inside one native call (60,000 of them ran at ~20,600 ns per cycle when
/// only the walk was charged). Charged before the call: every element the
/// running total copies (the total so far plus the item, per item, one
/// cycle per [`SUM_COPIES_PER_CYCLE`]) while the items are lists or tuples,
/// and the limbs of every int added; a quadratic sum runs out of cycles
/// before it starts.
fn charge_sum_copies(items: &PyObjectRef, args: &FuncArgs, vm: &VirtualMachine) -> PyResult<()> {
    let start = args
        .args
        .first()
        .cloned()
        .or_else(|| args.kwargs.get("start").cloned());
    // Reading lengths and int sizes runs no Python code: the list's lock
    // can be held for the walk.
    if let Some(list) = items.downcast_ref::<rustpython_vm::builtins::PyList>() {
        let cycles = sum_copy_cycles(start.as_ref(), &list.borrow_vec());
        return charge(cycles, 0, vm);
    }
    if let Some(tuple) = items.downcast_ref::<rustpython_vm::builtins::PyTuple>() {
        return charge(sum_copy_cycles(start.as_ref(), tuple.as_slice()), 0, vm);
    }
    Ok(())
}

/// The cycles [`charge_sum_copies`] charges for adding `items` onto `start`.
fn sum_copy_cycles(start: Option<&PyObjectRef>, items: &[PyObjectRef]) -> u64 {
    let sequence_len = |obj: &PyObjectRef| -> Option<u64> {
        if let Some(list) = obj.downcast_ref::<rustpython_vm::builtins::PyList>() {
            return Some(list.borrow_vec().len() as u64);
        }
        obj.downcast_ref::<rustpython_vm::builtins::PyTuple>()
            .map(|tuple| tuple.len() as u64)
    };
    let mut total = start.and_then(sequence_len);
    let mut copies: u64 = 0;
    let mut int_cycles: u64 = 0;
    for item in items {
        match (total, sequence_len(item)) {
            (Some(so_far), Some(length)) => {
                let after = so_far.saturating_add(length);
                copies = copies.saturating_add(after);
                total = Some(after);
            }
            (None, None) if int_value(item).is_some() => {
                // Every addition dispatches through the generic `+` (a sum
                // of 109,056 small ints ran at 2.6–3.0× ordinary code per
                // cycle on the walk alone, seed 5555); beyond a machine
                // word it also allocates its result (~60 ns: 200,000 ints
                // of 183 bits ran at ~3.3×).
                let big = int_value(item).is_some_and(|int| int_bits(int) > 63);
                int_cycles = int_cycles
                    .saturating_add(size_charge(item))
                    .saturating_add(1 + u64::from(big));
            }
            // Anything else adds through `__add__` slots that charge for
            // themselves, or fails at this item.
            _ => break,
        }
    }
    (copies / SUM_COPIES_PER_CYCLE).saturating_add(int_cycles)
}

/// Elements a sum of lists or tuples copies per cycle (a copy is a pointer
/// and a reference count: ~2 ns each, measured with the fuzzer's
/// `sum_of_one_item_lists` at sizes the budget allows).
const SUM_COPIES_PER_CYCLE: u64 = 8;

/// `int(text, base)`: the digits' bits against the int cap, before parsing
/// (power-of-two bases are not bound by `int_max_str_digits`, 4,300 digits,
/// so `int("f" * 20_000, 16)` made an 80,000-bit int); returns what parsing
/// them costs.
fn check_parsed_int_bits(
    text: &PyObjectRef,
    base: Option<&PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<u64> {
    let Some(digits) = items_of_text(text) else {
        return Ok(0);
    };
    // Base 0 reads a prefix (`0x…`); assume the widest digits, 36.
    let base = base.and_then(int_value).map_or(10, int_to_i64);
    let base = if base == 0 { 36 } else { base.clamp(2, 36) } as u128;
    // Bits per digit, rounded up: ceil(log2(base)).
    let bits_per_digit = u128::from(128 - (base - 1).leading_zeros());
    check_int_bits(u128::from(digits) * bits_per_digit, vm)?;
    // Parsing is quadratic in the digits (cheaper for power-of-two bases;
    // charged alike).
    Ok(decimal_cycles(digits))
}

/// A conversion (`str`, `int`, `bytes`, `pow`, …) charged by the sizes of
/// its arguments and result; `original` names which builtin it is.
pub(crate) fn converting_builtin(
    original: &PyObjectRef,
    mut args: FuncArgs,
    vm: &VirtualMachine,
    call: impl FnOnce(FuncArgs) -> PyResult,
) -> PyResult {
    let is_bytes_ctor = original.is(vm.ctx.types.bytes_type.as_object())
        || original.is(vm.ctx.types.bytearray_type.as_object());
    // A conversion's own overhead (~1 µs through the type stand-in), then
    // what its arguments ask for, charged at once below, just before the
    // call: nothing runs between these charges, so one charge of their sum
    // ends every execution they end, at the same point.
    let mut cycles = CONVERSION_CYCLES;
    if let Some(first) = args.args.first().cloned() {
        if original.is(vm.ctx.types.int_type.as_object()) {
            cycles += check_parsed_int_bits(&first, args.args.get(1), vm)?;
        }
        // `str(n)` of an int: its quadratic decimal conversion is charged
        // where it happens — the frame's hook for an exact int
        // (`meter::inline_ints`), the `str` slot for a subclass.
        if is_bytes_ctor {
            if let Some(length) = int_value(&first) {
                let length = int_to_i64(length).max(0) as u128;
                precheck_result_bytes(length, vm)?;
            } else if !is_sized(&first) {
                args.args[0] = materialize(first.clone(), vm)?;
            }
        }
        // (A type is never `pow`: the lookup, a str made and hashed, is
        // skipped for `str(x)` and `int(x)`.)
        if args.args.len() >= 2
            && original.downcast_ref::<PyType>().is_none()
            && original.is(vm.builtins.dict().get_item("pow", vm)?.as_object())
        {
            let second = args.args[1].clone();
            if args.args.len() == 2 {
                charge_operator(OperatorCode::Pow, &first, &second, vm)?;
            } else {
                // One modular squaring (and at most one multiplication) per
                // exponent bit, each quadratic in the modulus' limbs: a
                // charge linear in the limbs bought 65 ms for 586k cycles
                // with 6,000-bit operands.
                let modulus_bits = args.args.get(2).and_then(int_value).map_or(64, int_bits);
                let exponent_bits = int_value(&second).map_or(64, int_bits);
                let limbs = modulus_bits / 64 + 1;
                // (+3 per bit: even one-limb steps allocate a big int each.)
                charge(
                    exponent_bits.saturating_mul(limbs * (limbs / 8 + 1) + 3),
                    0,
                    vm,
                )?;
            }
        }
    }
    let cycles = args
        .args
        .iter()
        .fold(cycles, |sum, arg| sum.saturating_add(size_charge(arg)));
    charge(cycles, 0, vm)?;
    let result = call(args)?;
    charge_size(&result, vm)?;
    Ok(result)
}

/// What any conversion (`int(x)`, `str(x)`, `bytes(x)`, …) costs beyond its
/// sizes: ~1 µs through the stand-in (30 ns per cycle without it).
const CONVERSION_CYCLES: u64 = 20;

/// The attribute name a reflective builtin was given, if actors may reach it.
fn reachable_attribute(name: &PyObjectRef, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
    // The name is hashed, compared along the MRO and copied into an error
    // message: a 1 MB name bought 5.2 ms per cycle before this charge.
    let (_, name_bytes) = size_of(name);
    charge(4 * costs::for_bytes(name_bytes), 0, vm)?;
    let text = name
        .downcast_ref::<PyStr>()
        .and_then(|s| s.to_str().map(str::to_owned))
        .ok_or_else(|| vm.new_type_error("attribute name must be a string"))?;
    if let Some(reason) = crate::rules::names::refuse_attribute(&text) {
        return Err(vm.new_attribute_error(format!("attribute '{text}': {reason}")));
    }
    if crate::rules::names::FORMAT_METHODS.contains(&text.as_str()) {
        return Err(vm.new_attribute_error(format!(
            "attribute '{text}': call it in place (\"…\".{text}(…)) so the VM can check the template"
        )));
    }
    Ok(name.clone())
}

/// `getattr`, `hasattr`, `setattr`, `delattr` on the names actors may write
/// ([`crate::rules::names::refuse_attribute`]), `format(value, spec)` with a
/// checked spec, and one-argument `iter`.
pub(crate) fn reflective_builtins(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
        (
            "isinstance",
            vm.new_function(
                "isinstance",
                |obj: PyObjectRef, class_info: PyObjectRef, vm: &VirtualMachine| -> PyResult<bool> {
                    charge_class_info(&class_info, vm)?;
                    obj.is_instance(&class_info, vm)
                },
            )
            .into(),
        ),
        (
            "issubclass",
            vm.new_function(
                "issubclass",
                |class: PyObjectRef, class_info: PyObjectRef, vm: &VirtualMachine| -> PyResult<bool> {
                    charge_class_info(&class_info, vm)?;
                    class.is_subclass(&class_info, vm)
                },
            )
            .into(),
        ),
        (
            "getattr",
            vm.new_function(
                "getattr",
                |obj: PyObjectRef, name: PyObjectRef, default: OptionalArg<PyObjectRef>, vm: &VirtualMachine| -> PyResult {
                    let name = reachable_attribute(&name, vm)?;
                    let name = name.downcast::<PyStr>().expect("checked");
                    match (obj.get_attr(&name, vm), default) {
                        (Ok(value), _) => Ok(value),
                        (Err(error), OptionalArg::Present(default))
                            if error.fast_isinstance(vm.ctx.exceptions.attribute_error) =>
                        {
                            charge_swallowed(vm)?;
                            Ok(default)
                        }
                        (Err(error), _) => Err(error),
                    }
                },
            )
            .into(),
        ),
        (
            "hasattr",
            vm.new_function(
                "hasattr",
                |obj: PyObjectRef, name: PyObjectRef, vm: &VirtualMachine| -> PyResult<bool> {
                    let name = reachable_attribute(&name, vm)?;
                    let name = name.downcast::<PyStr>().expect("checked");
                    match obj.get_attr(&name, vm) {
                        Ok(_) => Ok(true),
                        Err(error) if error.fast_isinstance(vm.ctx.exceptions.attribute_error) => {
                            charge_swallowed(vm)?;
                            Ok(false)
                        }
                        Err(error) => Err(error),
                    }
                },
            )
            .into(),
        ),
        (
            "setattr",
            vm.new_function(
                "setattr",
                |obj: PyObjectRef, name: PyObjectRef, value: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let name = reachable_attribute(&name, vm)?;
                    let name = name.downcast::<PyStr>().expect("checked");
                    obj.set_attr(&name, value, vm)
                },
            )
            .into(),
        ),
        (
            "delattr",
            vm.new_function(
                "delattr",
                |obj: PyObjectRef, name: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let name = reachable_attribute(&name, vm)?;
                    let name = name.downcast::<PyStr>().expect("checked");
                    obj.del_attr(&name, vm)
                },
            )
            .into(),
        ),
        (
            "format",
            vm.new_function(
                "format",
                |value: PyObjectRef, spec: OptionalArg<PyObjectRef>, vm: &VirtualMachine| -> PyResult {
                    let spec = match spec {
                        OptionalArg::Present(spec) => spec
                            .downcast::<PyStr>()
                            .map_err(|_| vm.new_type_error("format spec must be a str"))?,
                        OptionalArg::Missing => vm.ctx.new_str(""),
                    };
                    crate::rules::formatting::check_format_spec(spec.to_str().unwrap_or(""))
                        .map_err(|reason| vm.new_value_error(reason))?;
                    charge_size(&value, vm)?;
                    // Anything but a str or number formats through its
                    // type's `__format__` and then `str`, two conversions
                    // (~0.4 µs): `format(range(512), '')` ran at 2.8–4.7×
                    // ordinary code per cycle, 2.5–3.0× at one `FORMAT`
                    // (the metering fuzzer, seed 5555).
                    if int_value(&value).is_none()
                        && value.downcast_ref::<PyStr>().is_none()
                        && value.downcast_ref::<rustpython_vm::builtins::PyFloat>().is_none()
                    {
                        charge(2 * costs::code::FORMAT, 0, vm)?;
                    }
                    // An int wider than a word is converted to text natively
                    // (quadratic in decimal), not through its charging `str`
                    // slot: `format(x, '')` of a 3,680-bit int ran at
                    // 3.3–3.9× ordinary code per cycle (the metering fuzzer,
                    // #47). Charged as a decimal conversion whatever the spec.
                    // (An exact int with an empty spec is converted by
                    // `str`, where the frame's hook charges it.)
                    let by_str = spec.to_str().is_some_and(str::is_empty)
                        && value.class().is(vm.ctx.types.int_type);
                    if let Some(int) = int_value(&value).filter(|i| int_bits(i) > 64 && !by_str) {
                        charge(int_decimal_cycles(int_bits(int)), 0, vm)?;
                    }
                    let result = vm.format(&value, spec)?;
                    let result: PyObjectRef = result.into();
                    charge_size(&result, vm)?;
                    Ok(result)
                },
            )
            .into(),
        ),
        (
            "iter",
            vm.new_function(
                "iter",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                    if args.args.len() != 1 || !args.kwargs.is_empty() {
                        return Err(vm.new_type_error(
                            "iter() takes one argument in an actor; for iter(callable, sentinel) write a while loop",
                        ));
                    }
                    Ok(args.args[0].get_iter(vm)?.into())
                },
            )
            .into(),
        ),
    ]
}
