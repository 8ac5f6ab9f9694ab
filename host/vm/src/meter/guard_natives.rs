//! The natives the instrumenter inserts ([`crate::rules::guards`] names them):
//! the block meter, guarded operators, `in`, produced
//! results, materialisation and `**` splats — each charging the
//! work its operation does before (or as) it runs.

use rustpython_vm::builtins::{PyByteArray, PyDict, PyList, PySet};
use rustpython_vm::function::OptionalArg;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::meter::charge::charge;
use crate::meter::operators::charge_operator;
use crate::meter::sizes::*;
use crate::rules::costs;
use crate::rules::guards::OperatorCode;

/// A type's mapping subscript slot (what `x[key]` reaches).
type SubscriptSlot = fn(
    rustpython_vm::protocol::PyMapping<'_>,
    &rustpython_vm::PyObject,
    &VirtualMachine,
) -> PyResult;

/// A native object whose subscript runs `slot`: how a one-argument guard is
/// reached without a call ([`crate::rules::guards::Guard::is_subscripted`]).
fn subscript_guard(name: &str, slot: SubscriptSlot, vm: &VirtualMachine) -> PyObjectRef {
    let class = vm.ctx.new_class(
        None,
        name,
        vm.ctx.types.object_type.to_owned(),
        Default::default(),
    );
    class.slots.as_mapping.subscript.store(Some(slot));
    rustpython_vm::PyRef::new_ref(rustpython_vm::builtins::PyBaseObject, class, None).into()
}

/// The object of a subscripted guard.
pub(crate) fn guard_object(guard: crate::rules::guards::Guard, vm: &VirtualMachine) -> PyObjectRef {
    use crate::rules::guards::Guard;
    /// A mapping slot running a one-argument guard native.
    macro_rules! slot {
        ($native:expr) => {{
            fn slot(
                _: rustpython_vm::protocol::PyMapping<'_>,
                x: &rustpython_vm::PyObject,
                vm: &VirtualMachine,
            ) -> PyResult {
                $native(x.to_owned(), vm)
            }
            slot as SubscriptSlot
        }};
    }
    let slot: SubscriptSlot = match guard {
        Guard::Meter => meter_subscript,
        Guard::Result => slot!(result_native),
        Guard::Mutate => slot!(mutate_native),
        Guard::Materialize => slot!(materialize_kept),
        Guard::SetUnpack => slot!(crate::meter::sizes::materialize_set_items),
        Guard::Kwargs => slot!(kwargs_native),
        other => panic!("{} is called, not subscripted", other.name()),
    };
    subscript_guard(guard.name(), slot, vm)
}

/// `_pvm_meter[n]`: charge `n` cycles (a block's static weight) and be
/// true (a lambda's body is `_pvm_meter[n] and body`). A subscript of a
/// native object, not a call: RustPython reaches a type's mapping slot
/// directly, where a call to a native function builds and binds an
/// argument list — ~35 ns against ~75 ns on every block entered, most of
/// the metering overhead of call-heavy code.
fn meter_subscript(
    _meter: rustpython_vm::protocol::PyMapping<'_>,
    amount: &rustpython_vm::PyObject,
    vm: &VirtualMachine,
) -> PyResult {
    let amount = amount
        .downcast_ref::<rustpython_vm::builtins::PyInt>()
        .and_then(|int| u64::try_from(int.as_bigint()).ok())
        .ok_or_else(|| vm.new_runtime_error("the meter takes a cycle count"))?;
    charge(amount, 0, vm)?;
    Ok(vm.ctx.true_value.clone().into())
}

/// CPython's messages for an int divided by zero (RustPython's differ):
/// the text an actor's `except ZeroDivisionError as e: str(e)` sees.
fn int_division_by_zero(
    op: OperatorCode,
    left: &rustpython_vm::PyObject,
    right: &rustpython_vm::PyObject,
    vm: &VirtualMachine,
) -> Option<rustpython_vm::builtins::PyBaseExceptionRef> {
    let message = match op {
        OperatorCode::FloorDiv => "integer division or modulo by zero",
        OperatorCode::Mod => "integer modulo by zero",
        _ => return None,
    };
    let zero = right
        .downcast_ref::<rustpython_vm::builtins::PyInt>()
        .is_some_and(|int| num_traits::Zero::is_zero(int.as_bigint()));
    (zero
        && left
            .downcast_ref::<rustpython_vm::builtins::PyInt>()
            .is_some())
    .then(|| vm.new_zero_division_error(message))
}

type NumberSlot = rustpython_vm::protocol::PyNumberBinaryFunc;

/// `int`'s own `//`, `%` and `divmod` slots, wrapped by
/// [`use_cpython_division_messages`].
static INT_DIVISION_SLOTS: std::sync::OnceLock<(NumberSlot, NumberSlot, NumberSlot)> =
    std::sync::OnceLock::new();

/// `int`'s slot `$index` of [`INT_DIVISION_SLOTS`], after the zero check.
macro_rules! int_division_slot {
    ($name:ident, $op:expr, $index:tt) => {
        fn $name(
            a: &rustpython_vm::PyObject,
            b: &rustpython_vm::PyObject,
            vm: &VirtualMachine,
        ) -> PyResult {
            if let Some(error) = int_division_by_zero($op, a, b, vm) {
                return Err(error);
            }
            (INT_DIVISION_SLOTS.get().expect("installed").$index)(a, b, vm)
        }
    };
}

int_division_slot!(int_floor_divide, OperatorCode::FloorDiv, 0);
int_division_slot!(int_remainder, OperatorCode::Mod, 1);
int_division_slot!(int_divmod, OperatorCode::FloorDiv, 2);

/// Gives `int`'s `//`, `%` and `divmod` CPython's messages for a zero
/// divisor, on every path (an operator with a literal operand runs without
/// the guard), for `int` and `bool` (a built-in type, which copied `int`'s
/// slots when the interpreter was made). Idempotent per thread; before any
/// class derives from `int`.
pub(crate) fn use_cpython_division_messages(vm: &VirtualMachine) {
    let int_number = &vm.ctx.types.int_type.slots.as_number;
    if let (Some(floor_divide), Some(remainder), Some(divmod)) = (
        int_number.floor_divide.load(),
        int_number.remainder.load(),
        int_number.divmod.load(),
    ) {
        if floor_divide as usize != int_floor_divide as NumberSlot as usize {
            let _ = INT_DIVISION_SLOTS.set((floor_divide, remainder, divmod));
        }
    }
    let Some(&(floor_divide, remainder, divmod)) = INT_DIVISION_SLOTS.get() else {
        return;
    };
    for class in [vm.ctx.types.int_type, vm.ctx.types.bool_type] {
        let number = &class.slots.as_number;
        for (slot, original, wrapper) in [
            (
                &number.floor_divide,
                floor_divide,
                int_floor_divide as NumberSlot,
            ),
            (&number.remainder, remainder, int_remainder as NumberSlot),
            (&number.divmod, divmod, int_divmod as NumberSlot),
        ] {
            if slot
                .load()
                .is_some_and(|current| current as usize == original as usize)
            {
                slot.store(Some(wrapper));
            }
        }
    }
}

pub(crate) fn apply_operator(
    op: OperatorCode,
    left: &PyObjectRef,
    right: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    // The slots of `int` and `bool` give CPython's messages themselves; a
    // subclass (`IntEnum`, `class Big(int)`) reaches `int`'s operator through
    // its namespace, whose descriptor kept the original slot.
    if let Some(error) = int_division_by_zero(op, left, right, vm) {
        return Err(error);
    }
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

/// `_pvm_binop_<op>(a, b)`: pre-checks and charges `a op b` by size,
/// performs it and charges its result.
fn binop(op: OperatorCode, left: PyObjectRef, right: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    if let Some(result) = machine_int_operation(op, &left, &right, vm) {
        return Ok(result);
    }
    charge_operator(op, &left, &right, vm)?;
    let result = apply_operator(op, &left, &right, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

/// `left op right` for two exact ints that fit a machine word, when the
/// result does too: what [`charge_operator`] and the result's charge
/// would charge for them is zero cycles (a sum or difference walks at most
/// two limbs, a product or quotient multiplies at most a few — below one
/// cycle at [`costs::size::INT_BYTES_PER_CYCLE`] and
/// [`int_product_cycles`]; the unit test `machine_ints_are_charged_nothing`
/// pins it), so the guard computes them without the size checks and the
/// interpreter's generic dispatch: most guarded operators of ordinary code
/// meet two such ints (`row - c`, `total * 31 % m`). `None` for everything
/// else, which the general path prices. The memory budget's flag is still
/// observed here, as the general path's charge would.
fn machine_int_operation(
    op: OperatorCode,
    left: &PyObjectRef,
    right: &PyObjectRef,
    vm: &VirtualMachine,
) -> Option<PyObjectRef> {
    use num_traits::ToPrimitive;
    use rustpython_vm::builtins::PyInt;
    if !matches!(
        op,
        OperatorCode::Add
            | OperatorCode::Sub
            | OperatorCode::Mult
            | OperatorCode::FloorDiv
            | OperatorCode::Mod
    ) || crate::meter::alloc::MemoryBudget::exceeded()
    {
        return None;
    }
    let a = left
        .downcast_ref_if_exact::<PyInt>(vm)?
        .as_bigint()
        .to_i64()?;
    let b = right
        .downcast_ref_if_exact::<PyInt>(vm)?
        .as_bigint()
        .to_i64()?;
    let result = match op {
        OperatorCode::Add => a.checked_add(b)?,
        OperatorCode::Sub => a.checked_sub(b)?,
        OperatorCode::Mult => a.checked_mul(b)?,
        // Python rounds a quotient toward negative infinity and gives a
        // remainder the divisor's sign; a zero divisor (CPython's message)
        // and `i64::MIN // -1` take the general path.
        OperatorCode::FloorDiv => {
            let quotient = a.checked_div(b)?;
            if a % b != 0 && ((a < 0) != (b < 0)) {
                quotient - 1
            } else {
                quotient
            }
        }
        OperatorCode::Mod => {
            let remainder = a.checked_rem(b)?;
            if remainder != 0 && ((remainder < 0) != (b < 0)) {
                remainder + b
            } else {
                remainder
            }
        }
        _ => return None,
    };
    Some(vm.ctx.new_int(result).into())
}

/// The `_pvm_binop_<op>` and `_pvm_augop_<op>` natives of every operator
/// ([`OperatorCode::binop_guard`], [`OperatorCode::augop_guard`]).
pub(crate) fn operator_natives(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    macro_rules! natives {
        ($($op:ident),* $(,)?) => {
            [$({
                fn binop_native(
                    left: PyObjectRef,
                    right: PyObjectRef,
                    vm: &VirtualMachine,
                ) -> PyResult {
                    binop(OperatorCode::$op, left, right, vm)
                }
                fn augop_native(
                    current: PyObjectRef,
                    value: PyObjectRef,
                    container: OptionalArg<PyObjectRef>,
                    vm: &VirtualMachine,
                ) -> PyResult {
                    augop(OperatorCode::$op, current, value, container, vm)
                }
                let (binop_name, augop_name) =
                    (OperatorCode::$op.binop_guard(), OperatorCode::$op.augop_guard());
                [
                    (binop_name, vm.new_function(binop_name, binop_native).into()),
                    (augop_name, vm.new_function(augop_name, augop_native).into()),
                ]
            }),*]
        };
    }
    let natives: Vec<_> = natives![
        Add, Sub, Mult, MatMult, Div, Mod, Pow, LShift, RShift, BitOr, BitXor, BitAnd, FloorDiv,
    ]
    .into_iter()
    .flatten()
    .collect();
    debug_assert_eq!(natives.len(), 2 * OperatorCode::ALL.len());
    natives
}

/// `x op= y`: pre-checks like `_pvm_binop`, then performs the in-place
/// operation and returns its result (which the rewritten statement stores).
/// `container`: the list or dict a subscript target writes into, about to
/// change ([`crate::meter::writes::before_write`]).
fn augop(
    op: OperatorCode,
    current: PyObjectRef,
    value: PyObjectRef,
    container: OptionalArg<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult {
    if let OptionalArg::Present(container) = &container {
        crate::meter::writes::before_write(container, vm)?;
    }
    // An int changes by rebinding, never in place.
    if let Some(result) = machine_int_operation(op, &current, &value, vm) {
        return Ok(result);
    }
    // In-place growth walks only the right side ([`grow_in_place`]): `xs +=
    // ys` extends `xs` (charging `xs` too made a loop of `xs += [x]`
    // quadratic), `d |= pairs`, `s |= items` insert each item, and a lazy
    // right side (a dict's `|=` takes any iterable of pairs) is drained one
    // charged item at a time instead of inside Rust.
    let extends = op == OperatorCode::Add
        && (current.downcast_ref::<PyList>().is_some()
            || current.downcast_ref::<PyByteArray>().is_some());
    let merges = op == OperatorCode::BitOr
        && (current.downcast_ref::<PyDict>().is_some()
            || current.downcast_ref::<PySet>().is_some());
    if merges {
        crate::meter::swallowed::charge_keys_probe_into(&current, &value, vm)?;
    }
    let value = if extends || merges {
        grow_in_place(&current, value, vm)?
    } else {
        charge_operator(op, &current, &value, vm)?;
        value
    };
    // A mutable left side changes in place.
    crate::meter::writes::before_write(&current, vm)?;
    apply_in_place(op, &current, &value, vm)
}

fn apply_in_place(
    op: OperatorCode,
    left: &PyObjectRef,
    right: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    // As in [`apply_operator`].
    if let Some(error) = int_division_by_zero(op, left, right, vm) {
        return Err(error);
    }
    match op {
        OperatorCode::Add => vm._iadd(left, right),
        OperatorCode::Sub => vm._isub(left, right),
        OperatorCode::Mult => vm._imul(left, right),
        OperatorCode::MatMult => vm._imatmul(left, right),
        OperatorCode::Div => vm._itruediv(left, right),
        // `%=` is rewritten to `_pvm_binop_mod` (formatting is checked there).
        OperatorCode::Mod => apply_operator(op, left, right, vm),
        OperatorCode::Pow => vm._ipow(left, right, vm.ctx.none.as_object()),
        OperatorCode::LShift => vm._ilshift(left, right),
        OperatorCode::RShift => vm._irshift(left, right),
        OperatorCode::BitOr => vm._ior(left, right),
        OperatorCode::BitXor => vm._ixor(left, right),
        OperatorCode::BitAnd => vm._iand(left, right),
        OperatorCode::FloorDiv => vm._ifloordiv(left, right),
    }
}

/// `_pvm_format(value, spec, conversion)`: an f-string field with a
/// computed spec (`f"{name:<{width}}"`): the conversion (0 none, 1 `!s`,
/// 2 `!r`, 3 `!a`) is applied, then the spec is checked and charged
/// exactly as `format(value, spec)` is ([`crate::meter::natives::price::Price::FormatSpec`]).
pub(crate) fn format_native(
    value: PyObjectRef,
    spec: rustpython_vm::builtins::PyStrRef,
    conversion: u8,
    vm: &VirtualMachine,
) -> PyResult {
    let value: PyObjectRef = match conversion {
        0 => value,
        1 => value.str(vm)?.into(),
        2 => value.repr(vm)?.into(),
        3 => vm.builtins.get_attr("ascii", vm)?.call((value,), vm)?,
        other => return Err(vm.new_runtime_error(format!("unknown conversion code {other}"))),
    };
    let mut args = rustpython_vm::function::FuncArgs::from(vec![value, spec.clone().into()]);
    crate::meter::natives::price::Price::FormatSpec.charge_before("format", &mut args, vm)?;
    let value = args.args[0].clone();
    let formatted: PyObjectRef = vm.format(&value, spec)?.into();
    charge_size(&formatted, vm)?;
    Ok(formatted)
}

/// `_pvm_mut(container)`: `container` is about to change.
pub(crate) fn mutate_native(container: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    crate::meter::writes::before_write(&container, vm)?;
    Ok(container)
}

pub(crate) fn result_native(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    charge_size(&value, vm)?;
    Ok(value)
}

/// `_pvm_unpack(value, shape)`: `value` drawn through a charged list, and so
/// are the items a nested starred target unpacks (`shape`: see
/// `instrument::nested_star_shape`).
pub(crate) fn unpack_native(
    value: PyObjectRef,
    shape: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let value = materialize_kept(value, vm)?;
    materialize_shape(value, &shape, vm)
}

fn materialize_shape(value: PyObjectRef, shape: &PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let Some(shape) = shape.downcast_ref::<rustpython_vm::builtins::PyTuple>() else {
        return Ok(value);
    };
    let mut items: Vec<PyObjectRef> = value.try_to_value(vm)?;
    let star = shape.iter().position(|entry| {
        entry
            .downcast_ref::<rustpython_vm::builtins::PyTuple>()
            .is_none()
            && entry.try_to_value::<i64>(vm).ok() == Some(1)
    });
    for (position, entry) in shape.iter().enumerate() {
        if entry
            .downcast_ref::<rustpython_vm::builtins::PyTuple>()
            .is_none()
        {
            continue;
        }
        // Positions after the star count from the end.
        let index = match star {
            Some(star) if position > star => (items.len() + position).checked_sub(shape.len()),
            _ => Some(position),
        };
        if let Some(item) = index.and_then(|index| items.get_mut(index)) {
            let inner = materialize(item.clone(), vm)?;
            *item = materialize_shape(inner, entry, vm)?;
        }
    }
    Ok(vm.ctx.new_list(items).into())
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
