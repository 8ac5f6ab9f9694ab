//! What a binary operator costs before it runs: sequence repetition by the
//! result's size, integer products, powers and shifts by the result's bits,
//! `%` formatting by its checked template, everything else by the operands'
//! sizes. Used by the operator guards ([`crate::meter::guard_natives`]) and by
//! `pow()` ([`crate::meter::builtin_natives`]).

use rustpython_vm::builtins::{PyBytes, PyStr};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::meter::charge::charge;
use crate::meter::sizes::*;
use crate::rules::costs;
use crate::rules::guards::OperatorCode;

/// Building a union of types (`int | None`): ~5 µs in RustPython.
const UNION_CYCLES: u64 = 400;

/// Is `obj` a type, a generic alias (`list[int]`) or a union?
fn is_annotation_type(obj: &PyObjectRef, vm: &VirtualMachine) -> bool {
    let class = obj.class();
    obj.downcast_ref::<rustpython_vm::builtins::PyType>().is_some()
        // The actor-visible `int`, `list`, … (`crate::interpreter::builtin_types`, named
        // here by its class name: that module prices through this one).
        || &*class.name() == "builtin_type"
        || class.is(vm.ctx.types.generic_alias_type)
        || class.is(vm.ctx.types.union_type)
}

/// An int left shift costs ~0.2 µs beyond its loop whatever its size (the
/// guard's checks and RustPython's shift, which builds its result as a big
/// int): `7 << 64` in a loop ran at 3.2–3.4× ordinary code per cycle, and
/// `7 << 3`, charged nothing while its result fit a word, at 2.7–2.8× (the
/// metering fuzzer, #47; `>>`, `&`, `|`, `^` of small ints run at ~1.1×).
const INT_LEFT_SHIFT_CYCLES: u64 = 4;

/// What a product with an int wider than a word costs beyond its limb
/// products (~0.3 µs: the big-int path's conversion and allocation): `x * 3`
/// of an 850-bit int ran at 3–4.3× ordinary code per cycle when only its
/// limb products (none, at that size) were charged (the metering fuzzer,
/// seed 5555).
const WIDE_PRODUCT_CYCLES: u64 = 12;

/// What `_pvm_binop` charges for the product of two ints of these sizes
/// (the loop of an exempt range index charges the same, `iteration.rs`).
pub(crate) fn int_product_charge(a_bits: u64, b_bits: u64) -> u64 {
    let wide = if a_bits.max(b_bits) > 64 {
        WIDE_PRODUCT_CYCLES
    } else {
        0
    };
    int_product_cycles(a_bits, b_bits) + wide
}

/// Copies of a str or bytes repetition per cycle (see `charge_operator`).
const TEXT_COPIES_PER_CYCLE: u128 = 4;

/// What any sequence repetition costs beyond its result: the new sequence
/// made and the count converted (~0.4 µs): `'a' * 2` ran at ~3× ordinary
/// code per cycle, a tuple nested 7 deep `* 2` at 3.04× (the metering
/// fuzzer, #47).
const SEQUENCE_REPEAT_BASE_CYCLES: u64 = 8;

/// The values a `%` template formats: a tuple's items, else the value.
fn percent_arguments(right: &PyObjectRef) -> Vec<PyObjectRef> {
    match right.downcast_ref::<rustpython_vm::builtins::PyTuple>() {
        Some(tuple) => tuple.as_slice().to_vec(),
        None => vec![right.clone()],
    }
}

/// Pre-checks and charges `left op right` by operand sizes.
pub(crate) fn charge_operator(
    op: OperatorCode,
    left: &PyObjectRef,
    right: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let left_size = size_of(left);
    let right_size = size_of(right);
    match op {
        // Sequence repetition: the result is len × count.
        OperatorCode::Mult => {
            let repetition = match (int_value(left), int_value(right)) {
                (Some(_), Some(_)) => None,
                (Some(count), None) => Some((count, right_size)),
                (None, Some(count)) => Some((count, left_size)),
                (None, None) => None,
            };
            if let Some((count, (elements, bytes))) = repetition {
                let count = int_to_i64(count).max(0) as u128;
                let result_bytes = (u128::from(elements) * 8 + u128::from(bytes)) * count;
                precheck_result_bytes(result_bytes, vm)?;
                let elements_out = u128::from(elements) * count;
                // RustPython repeats text one copy at a time: `'x' * 16000`
                // took ~2 ns a copy (26 ns per cycle at the bytes alone).
                let copies = if bytes > 0 {
                    (count / TEXT_COPIES_PER_CYCLE) as u64
                } else {
                    0
                };
                return charge(
                    SEQUENCE_REPEAT_BASE_CYCLES
                        + (elements_out as u64) * costs::size::PER_ELEMENT
                        + costs::for_bytes(u128::from(bytes) as u64 * count as u64)
                        + copies,
                    0,
                    vm,
                );
            }
            if let (Some(a), Some(b)) = (int_value(left), int_value(right)) {
                let (a_bits, b_bits) = (int_bits(a), int_bits(b));
                check_int_bits(u128::from(a_bits) + u128::from(b_bits), vm)?;
                return charge(int_product_charge(a_bits, b_bits), 0, vm);
            }
        }
        // Integer power: the result has about bits(a) × b bits, made by
        // squaring and multiplying ([`power_products`]).
        OperatorCode::Pow => {
            if let (Some(base), Some(exponent)) = (int_value(left), int_value(right)) {
                let exponent = int_to_i64(exponent);
                let base_bits = int_bits(base);
                if exponent > 0 && base_bits > 1 {
                    let result_bits = u128::from(base_bits) * exponent as u128;
                    precheck_result_bytes(result_bits / 8, vm)?;
                    check_int_bits(result_bits, vm)?;
                    let result_limbs = (result_bits / 64) as u64 + 1;
                    let squarings = 64 - (exponent as u64).leading_zeros() as u64;
                    return charge(
                        (result_limbs * squarings).max(power_products(base_bits, exponent as u64)),
                        0,
                        vm,
                    );
                }
                return charge(1, 0, vm);
            }
        }
        // Integer division and remainder: schoolbook, quotient limbs ×
        // divisor limbs (a charge linear in the operands bought 20–42 ns
        // per cycle, growing with size, in the fairness benchmark).
        OperatorCode::FloorDiv => {
            if let (Some(a), Some(b)) = (int_value(left), int_value(right)) {
                return charge(division_cycles(a, b), 0, vm);
            }
        }
        // True division of ints is exact (a correctly rounded float from
        // the whole quotient), without the sub-quadratic multiplication `//`
        // benefits from, and an int subclass reaches it through the generic
        // slot: charged as before #30's re-pricing, schoolbook at four limb
        // products a cycle plus the operands' bytes (a cheaper charge grew
        // 1.5× in ns per cycle from n to 16n in the fairness benchmark).
        OperatorCode::Div => {
            if let (Some(a), Some(b)) = (int_value(left), int_value(right)) {
                let quotient_limbs = int_bits(a).saturating_sub(int_bits(b)) / 64 + 2;
                let divisor_limbs = int_bits(b) / 64 + 1;
                return charge(
                    2 * quotient_limbs.saturating_mul(divisor_limbs) / 4
                        + size_cycles(left_size)
                        + size_cycles(right_size),
                    0,
                    vm,
                );
            }
        }
        // Left shift: bits(a) + n.
        OperatorCode::LShift => {
            if let (Some(value), Some(shift)) = (int_value(left), int_value(right)) {
                let shift = int_to_i64(shift).max(0) as u128;
                let result_bits = u128::from(int_bits(value)) + shift;
                precheck_result_bytes(result_bits / 8, vm)?;
                if int_bits(value) > 0 {
                    check_int_bits(result_bits, vm)?;
                }
                return charge((result_bits / 64) as u64 / 4 + INT_LEFT_SHIFT_CYCLES, 0, vm);
            }
        }
        // printf-style formatting can request unbounded widths ("%999999999d").
        OperatorCode::Mod => {
            if let (Some(a), Some(b)) = (int_value(left), int_value(right)) {
                return charge(division_cycles(a, b), 0, vm);
            }
            let template = if let Some(text) = left.downcast_ref::<PyStr>() {
                Some(text.as_bytes().to_vec())
            } else {
                left.downcast_ref::<PyBytes>()
                    .map(|b| b.as_bytes().to_vec())
            };
            if let Some(template) = template {
                let conversions = crate::rules::formatting::check_percent_template(&template)
                    .map_err(|reason| vm.new_value_error(reason))?;
                // The template is copied and parsed, the arguments tuple
                // walked and the result built on every use: ~0.6 µs for one
                // conversion, which ran at ~48 ns per cycle at 4 (the
                // metering fuzzer, #47).
                charge(
                    costs::code::FORMAT + conversions * costs::code::FORMAT_FIELD,
                    0,
                    vm,
                )?;
                // Every argument may be formatted (by `repr`, through the
                // charging slots); the result is charged by the caller. An
                // int beyond a word is converted to decimal natively, not
                // through its slot: its quadratic conversion is charged here
                // (`'%s' % (7 ** 2340,)` ran at 4.3× ordinary code, #47).
                let decimal: u64 = percent_arguments(right)
                    .iter()
                    .filter_map(|a| int_value(a).map(int_bits))
                    .filter(|bits| *bits > 64)
                    .map(crate::meter::sizes::int_decimal_cycles)
                    .fold(0, u64::saturating_add);
                return charge(
                    (size_cycles(left_size) + size_cycles(right_size)).saturating_add(decimal),
                    0,
                    vm,
                );
            }
        }
        // `int | None`, `list[int] | None`: builds a union type (~5 µs).
        OperatorCode::BitOr if is_annotation_type(left, vm) || is_annotation_type(right, vm) => {
            return charge(UNION_CYCLES, 0, vm);
        }
        // Set algebra (`a & b`, `keys | other`) builds a new set: each
        // element hashed and inserted (50 ns per cycle at one an element).
        OperatorCode::BitAnd | OperatorCode::BitOr | OperatorCode::BitXor | OperatorCode::Sub
            if int_value(left).is_none() && int_value(right).is_none() =>
        {
            let elements = left_size.0.saturating_add(right_size.0);
            return charge(
                elements.saturating_mul(costs::size::PER_ELEMENT_BUILT)
                    + costs::for_bytes(left_size.1)
                    + costs::for_bytes(right_size.1),
                0,
                vm,
            );
        }
        _ => {}
    }
    // Addition and subtraction walk limbs, ~1 ns per 16 bytes: at the text
    // rate they ran at 1.9 ns per cycle for 4,500-bit ints against ~20 for
    // ordinary code (the fairness benchmark). Bitwise operators and shifts
    // (two's complement conversions) keep the text rate: at this one `&`
    // grew 1.7× in ns per cycle from n to 16n.
    if let (Some(a), Some(b), OperatorCode::Add | OperatorCode::Sub) =
        (int_value(left), int_value(right), op)
    {
        return charge(int_linear_cycles(a, b), 0, vm);
    }
    // A concatenation (`b + b`, `s + t`, `xs + ys`) makes a new sequence
    // whatever the sizes.
    let is_sequence = |o: &PyObjectRef| {
        o.downcast_ref::<PyStr>().is_some()
            || o.downcast_ref::<PyBytes>().is_some()
            || o.downcast_ref::<rustpython_vm::builtins::PyByteArray>()
                .is_some()
            || o.downcast_ref::<rustpython_vm::builtins::PyList>()
                .is_some()
            || o.downcast_ref::<rustpython_vm::builtins::PyTuple>()
                .is_some()
    };
    let concatenation = if op == OperatorCode::Add && is_sequence(left) {
        SEQUENCE_CONCAT_BASE_CYCLES
    } else {
        0
    };
    charge(
        size_cycles(left_size) + size_cycles(right_size) + concatenation,
        0,
        vm,
    )
}

/// See the end of [`charge_operator`]: ~0.2 µs beyond the guard's call
/// (`b'ab' + b'ab'` ran at 3.1× at none, at 2.4–4.5× at 2, #47).
const SEQUENCE_CONCAT_BASE_CYCLES: u64 = 6;

/// Linear work over two ints' limbs ([`costs::size::INT_BYTES_PER_CYCLE`]).
fn int_linear_cycles(
    a: &rustpython_vm::builtins::PyInt,
    b: &rustpython_vm::builtins::PyInt,
) -> u64 {
    (int_bits(a) + int_bits(b)) / 8 / costs::size::INT_BYTES_PER_CYCLE
}

/// `a // b`, `a % b`, `a / b` of ints: quotient limbs × divisor limbs (as
/// [`int_product_cycles`]), plus a walk of the operands.
fn division_cycles(a: &rustpython_vm::builtins::PyInt, b: &rustpython_vm::builtins::PyInt) -> u64 {
    let quotient_bits = int_bits(a).saturating_sub(int_bits(b)) + 64;
    2 * int_product_cycles(quotient_bits, int_bits(b)) + int_linear_cycles(a, b)
}

/// Cycles of `base ** exponent` by square-and-multiply: each step squares
/// the power so far and, for a set bit, multiplies it by the base, priced
/// like any product ([`int_product_cycles`]). A charge linear in the
/// result's limbs let `(7 ** 10601) ** 2` run at ~6× ordinary code (the
/// metering fuzzer, #47): its one squaring is a Karatsuba product.
fn power_products(base_bits: u64, exponent: u64) -> u64 {
    let mut bits = base_bits;
    let mut cycles = 0u64;
    let top = 63 - exponent.leading_zeros();
    for bit in (0..top).rev() {
        cycles = cycles.saturating_add(int_product_cycles(bits, bits));
        bits = bits.saturating_mul(2);
        if exponent & (1 << bit) != 0 {
            cycles = cycles.saturating_add(int_product_cycles(bits, base_bits));
            bits = bits.saturating_add(base_bits);
        }
    }
    cycles.saturating_mul(POWER_PRODUCT_WEIGHT)
}

/// A power's products cost more than a plain product's at the same sizes
/// (RustPython raises through a generic path: `(7 ** 10601) ** 2` took
/// ~430 µs for 123,000 limb products, ~2.7× ordinary code at one product's
/// rate).
const POWER_PRODUCT_WEIGHT: u64 = 3;

#[cfg(test)]
mod tests {
    use rustpython_vm::builtins::PyInt;

    use super::*;

    /// The operator guards compute two machine-word ints without pricing
    /// them (`guard_natives::machine_int_operation`) because the pricing
    /// below charges them nothing: this pins that.
    #[test]
    fn machine_ints_are_charged_nothing() {
        let extremes = [
            i64::MIN,
            i64::MIN + 1,
            -(1 << 32),
            -1,
            0,
            1,
            1 << 40,
            i64::MAX,
        ];
        for a in extremes {
            for b in extremes {
                let (a, b) = (PyInt::from(a), PyInt::from(b));
                assert_eq!(int_linear_cycles(&a, &b), 0);
                assert_eq!(int_product_cycles(int_bits(&a), int_bits(&b)), 0);
                assert_eq!(division_cycles(&a, &b), 0);
            }
        }
        // A machine-word result (what `charge_size` charges an int).
        assert_eq!(64 / 8 / costs::size::INT_BYTES_PER_CYCLE, 0);
    }
}
