//! The natives the instrumenter inserts ([`crate::guards`] names them):
//! the block meter, guarded operators and comparisons, `in`, method calls,
//! produced results, materialisation and `**` splats — each charging the
//! work its operation does before (or as) it runs.

use rustpython_vm::builtins::{PyDict, PyFrozenSet, PyList, PyRange, PySet, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::costs;
use crate::exec::charge;
use crate::guards::{CompareCode, OperatorCode};
use crate::operator_costs::charge_operator;
use crate::sizes::*;

pub(crate) fn meter_native(amount: u64, vm: &VirtualMachine) -> PyResult<bool> {
    charge(amount, 0, vm)?;
    Ok(true)
}

/// The operator behind a guard's code; anything else is a VM bug.
pub(crate) fn operator(code: u8, vm: &VirtualMachine) -> PyResult<OperatorCode> {
    OperatorCode::from_code(code)
        .ok_or_else(|| vm.new_runtime_error(format!("unknown operator code {code}")))
}

pub(crate) fn apply_operator(
    op: OperatorCode,
    left: &PyObjectRef,
    right: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    match op {
        OperatorCode::Add => vm._add(left, right),
        OperatorCode::Sub => vm._sub(left, right),
        OperatorCode::Mult => vm._mul(left, right),
        OperatorCode::MatMult => vm._matmul(left, right),
        OperatorCode::Div => vm._truediv(left, right),
        OperatorCode::Mod => match printf_slot(left, vm) {
            Some(format) => format(left, right, vm),
            None => vm._mod(left, right),
        },
        OperatorCode::Pow => vm._pow(left, right, vm.ctx.none.as_object()),
        OperatorCode::LShift => vm._lshift(left, right),
        OperatorCode::RShift => vm._rshift(left, right),
        OperatorCode::BitOr => vm._or(left, right),
        OperatorCode::BitXor => vm._xor(left, right),
        OperatorCode::BitAnd => vm._and(left, right),
        OperatorCode::FloorDiv => vm._floordiv(left, right),
    }
}

type PrintfSlot = rustpython_vm::protocol::PyNumberBinaryFunc;

/// The `%` slots of `str` and `bytes`, taken off the types so that `%`
/// formatting only runs here, after its template was checked
/// ([`take_printf_slots`]).
static PRINTF_SLOTS: std::sync::OnceLock<(PrintfSlot, PrintfSlot)> = std::sync::OnceLock::new();

/// Removes `%` from `str`, `bytes` and `bytearray` (so an unchecked
/// `"%999999999d" % 1` is a plain `TypeError` everywhere) and keeps the
/// originals for the operator guard. Idempotent per thread.
pub(crate) fn take_printf_slots(vm: &VirtualMachine) {
    let types = &vm.ctx.types;
    if let (Some(str_format), Some(bytes_format)) = (
        types.str_type.slots.as_number.remainder.load(),
        types.bytes_type.slots.as_number.remainder.load(),
    ) {
        let _ = PRINTF_SLOTS.set((str_format, bytes_format));
    }
    for class in [types.str_type, types.bytes_type, types.bytearray_type] {
        class.slots.as_number.remainder.store(None);
        class.slots.as_number.right_remainder.store(None);
        class.slots.as_number.inplace_remainder.store(None);
    }
}

fn printf_slot(left: &PyObjectRef, vm: &VirtualMachine) -> Option<PrintfSlot> {
    let (str_format, bytes_format) = *PRINTF_SLOTS.get()?;
    if left.class().is(vm.ctx.types.str_type) {
        Some(str_format)
    } else if left.class().is(vm.ctx.types.bytes_type) {
        Some(bytes_format)
    } else {
        None
    }
}

/// Is `method` a bound Python function (a method the actor wrote)?
fn is_python_method(method: &PyObjectRef) -> bool {
    use rustpython_vm::builtins::{PyBoundMethod, PyFunction};
    // Builtin methods are `builtin_function_or_method`s; a bound method is
    // a Python function bound to an instance.
    method.downcast_ref::<PyBoundMethod>().is_some()
        || method.downcast_ref::<PyFunction>().is_some()
}

pub(crate) fn binop_native(
    code: u8,
    left: PyObjectRef,
    right: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let op = operator(code, vm)?;
    charge_operator(op, &left, &right, vm)?;
    let result = apply_operator(op, &left, &right, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

/// `a == b` (`code` 0) or `a != b` (1) through the types' comparison slots,
/// which charge by size ([`crate::slot_meter`]); RustPython may otherwise
/// compare two `str`s inline, uncharged, once the instruction is hot.
pub(crate) fn compare_native(
    code: u8,
    left: PyObjectRef,
    right: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    use rustpython_vm::types::PyComparisonOp;
    let op = match CompareCode::from_code(code) {
        Some(CompareCode::Eq) => PyComparisonOp::Eq,
        Some(CompareCode::NotEq) => PyComparisonOp::Ne,
        None => return Err(vm.new_runtime_error(format!("unknown comparison code {code}"))),
    };
    left.rich_compare(right, op, vm)
}

/// `x op= y`: pre-checks like `_pvm_binop` and returns `y` for the in-place op.
pub(crate) fn augop_native(
    code: u8,
    current: PyObjectRef,
    value: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let op = operator(code, vm)?;
    charge_operator(op, &current, &value, vm)?;
    // `list += iterator` would drain the iterator inside Rust.
    if op == OperatorCode::Add && current.downcast_ref::<PyList>().is_some() {
        return materialize(value, vm);
    }
    Ok(value)
}

pub(crate) fn contains_native(container: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let hashed = container.downcast_ref::<PyDict>().is_some()
        || container.downcast_ref::<PySet>().is_some()
        || container.downcast_ref::<PyFrozenSet>().is_some()
        || container.downcast_ref::<PyRange>().is_some();
    if hashed {
        return Ok(container);
    }
    if is_sized(&container) {
        charge_size(&container, vm)?;
        return Ok(container);
    }
    // Objects with their own `__contains__` (the storage view: it charges a
    // host read) are left alone; only `in` over a lazy iterator, which would
    // be drained inside Rust, is materialised with per-item charges.
    if container
        .class()
        .has_attr(vm.ctx.intern_str("__contains__"))
    {
        return Ok(container);
    }
    materialize(container, vm)
}

pub(crate) fn result_native(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    charge_size(&value, vm)?;
    Ok(value)
}

pub(crate) fn materialize_native(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    materialize(value, vm)
}

/// `f(**mapping)`: besides walking the mapping, RustPython copies every key
/// into a Rust string and hashes it again for the callee's keyword
/// arguments, on every call — a 1 MB key cost ~0.8 ms per call for ~20
/// cycles before this charge. Keys are charged by their bytes.
pub(crate) fn kwargs_native(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let value = materialize(value, vm)?;
    if let Some(dict) = value.downcast_ref::<PyDict>() {
        let key_bytes: u64 = dict.into_iter().map(|(key, _)| size_of(&key).1).sum();
        charge(costs::for_bytes(key_bytes), 0, vm)?;
    }
    Ok(value)
}

/// `obj.name(*args, **kwargs)` for methods whose cost depends on sizes.
pub(crate) fn method_native(mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    if args.args.len() < 2 {
        return Err(vm.new_type_error("_pvm_method needs a receiver and a name"));
    }
    // `str.lower(s)`, `bytes.fromhex(h)`: the real type's method.
    let receiver = crate::builtin_types::real_type_of(&args.args.remove(0));
    let name_obj = args.args.remove(0);
    let name = name_obj
        .downcast_ref::<PyStr>()
        .and_then(|s| s.to_str().map(str::to_owned))
        .ok_or_else(|| vm.new_type_error("method name must be str"))?;
    let method = receiver.get_attr(&vm.ctx.new_str(name.as_str()), vm)?;
    if is_python_method(&method) {
        // A method of the actor's own (`def update(self, key, value)`): its
        // body is metered code; the builtin size rules below do not apply.
        return method.call(args, vm);
    }
    if crate::names::FORMAT_METHODS.contains(&name.as_str()) {
        let template = if receiver.downcast_ref::<PyStr>().is_some() {
            Some(receiver.clone())
        } else {
            args.args.first().cloned()
        };
        let template = template
            .as_ref()
            .and_then(|t| t.downcast_ref::<PyStr>())
            .and_then(|t| t.to_str().map(str::to_owned))
            .unwrap_or_default();
        let fields = crate::formatting::check_format_template(&template)
            .map_err(|reason| vm.new_value_error(reason))?;
        // RustPython parses the template on every call: ~2.3 µs for three
        // fields where the size charges alone came to ~6 cycles.
        charge(
            costs::code::FORMAT + fields * costs::code::FORMAT_FIELD,
            0,
            vm,
        )?;
    }
    let (elements, bytes) = size_of(&receiver);
    let receiver_chars = bytes;
    let int_arg =
        |index: usize| -> Option<i64> { args.args.get(index).and_then(int_value).map(int_to_i64) };
    match name.as_str() {
        "ljust" | "rjust" | "center" | "zfill" => {
            let width = int_arg(0).unwrap_or(0).max(0) as u128;
            precheck_result_bytes(width * 4, vm)?;
            charge(costs::for_bytes(width as u64), 0, vm)?;
        }
        "expandtabs" => {
            let tab = int_arg(0).unwrap_or(8).max(1) as u128;
            precheck_result_bytes(tab * u128::from(receiver_chars), vm)?;
        }
        "from_bytes" => {
            let (_, input_bytes) = args.args.first().map_or((0, 0), |a| size_of(a));
            check_int_bits(u128::from(input_bytes) * 8, vm)?;
        }
        "to_bytes" => {
            let length = int_arg(0).unwrap_or(1).max(0) as u128;
            precheck_result_bytes(length, vm)?;
        }
        "replace" if args.args.len() >= 2 => {
            let (_, old_bytes) = size_of(&args.args[0]);
            let (_, new_bytes) = size_of(&args.args[1]);
            // An empty `old` matches between every two characters.
            let occurrences = receiver_chars
                .checked_div(old_bytes)
                .unwrap_or(receiver_chars + 1);
            let occurrences = match int_arg(2) {
                Some(count) if count >= 0 => occurrences.min(count as u64),
                _ => occurrences,
            };
            precheck_result_bytes(
                u128::from(receiver_chars) + u128::from(occurrences) * u128::from(new_bytes),
                vm,
            )?;
            // Slow per byte in RustPython (see `count` below).
            charge(2 * costs::for_bytes(bytes), 0, vm)?;
        }
        "join"
        | "extend"
        | "update"
        | "union"
        | "intersection"
        | "difference"
        | "symmetric_difference"
        | "issubset"
        | "issuperset"
        | "isdisjoint"
        | "__init__" => {
            if let Some(first) = args.args.first().cloned() {
                args.args[0] = materialize(first.clone(), vm)?;
            }
        }
        "sort" => {
            let log = 64 - elements.leading_zeros() as u64;
            charge(elements * log * costs::size::SORT_LOG_FACTOR, 0, vm)?;
        }
        // RustPython does several times the reference work per byte in these
        // (measured, docs/METERING.md "Size surcharges"): `translate` looks
        // every character up in the table, `count` (and `replace`, above)
        // scan slowly.
        "translate" => {
            let items = items_of_text(&receiver).unwrap_or(0);
            charge(items * costs::size::PER_ELEMENT, 0, vm)?;
        }
        "count" => charge(3 * costs::for_bytes(bytes), 0, vm)?,
        _ => {}
    }
    let argument_cycles: u64 = args.args.iter().map(|a| size_cycles(size_of(a))).sum();
    charge(size_cycles((elements, bytes)) + argument_cycles, 0, vm)?;
    let result = method.call(args, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

/// Methods the real types define as class methods: called on the type, not
/// on an instance passed first.
const CLASS_METHODS: &[&str] = &["fromhex", "from_bytes", "maketrans", "fromkeys"];

/// A native per size-dependent method of builtin type `real` (for
/// [`crate::builtin_types`]'s stand-ins), routed through the method
/// guard: `str.lower(s)` is charged like `s.lower()`.
pub(crate) fn metered_methods(
    real: &rustpython_vm::builtins::PyTypeRef,
    vm: &VirtualMachine,
) -> Vec<(&'static str, PyObjectRef)> {
    let mut methods = Vec::new();
    for &name in crate::instrument::SIZED_METHODS {
        if real.as_object().get_attr(name, vm).is_err() {
            continue;
        }
        let real_object: PyObjectRef = real.clone().into();
        let is_class_method = CLASS_METHODS.contains(&name);
        let native = vm.new_function(name, move |mut args: FuncArgs, vm: &VirtualMachine| {
            let receiver = if is_class_method || args.args.is_empty() {
                real_object.clone()
            } else {
                args.args.remove(0)
            };
            args.args.insert(0, vm.ctx.new_str(name).into());
            args.args.insert(0, receiver);
            method_native(args, vm)
        });
        methods.push((name, native.into()));
    }
    methods
}
