//! Prices of the integer work RustPython's frame does inline.
//!
//! The instrumenter guards an operator only when its operands may be large
//! (`crate::deploy::instrument`: the number exemption lets `x + 1`,
//! `x % 7`, `x >> 1` run without a guard, and comparisons are never
//! guarded). That bounds what such an operation *makes* — one bit more than
//! its larger operand — but not what it *does*: with `x` a 56,000-bit int,
//! `x // 7` took ~4.8 µs for the loop's ~9 cycles (28× ordinary code per
//! cycle), `x % 7` 15×, `x >> 1` 6.6×, `x == y` of equal ints 3.7×, and a
//! chain `x + 1 + 1 + …` 6× (measured with the metering fuzzer's child,
//! #47). Exact ints never reach a type slot for `+ - *` or a comparison, so
//! no slot wrapper could see them: the vendored RustPython calls a hook
//! (`rustpython_vm::int_work`, `vendor/README.md`) before
//! any operator or comparison of two exact ints one of which does not fit a
//! machine word, and this module charges there exactly what the operator
//! guard charges the same operation ([`crate::meter::operators`]). Machine
//! words never reach the hook, so ordinary code pays nothing for it.
//!
//! `str()`'s fast path converts an exact int to decimal without its slot
//! (f-strings, `format(x)`, `print` go through it): the hook charges that
//! quadratic conversion too (`f"{x}"` of a 6,600-bit int ran at 5.5–6×
//! ordinary code per cycle, the metering fuzzer's seed-5353 run).
//!
//! Unary `-x` and `~x` are never guarded either; they reach the int type's
//! number slots, wrapped here to charge a wide int's copy at an addition's
//! rate (`-x` of a 56,000-bit int in a loop ran at 2.5× ordinary code).

use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::int_work::{set_int_work_hook, IntWork};
use std::sync::OnceLock;

use rustpython_vm::builtins::PyInt;
use rustpython_vm::protocol::{PyNumber, PyNumberUnaryFunc};
use rustpython_vm::{PyObject, PyResult, VirtualMachine};

use crate::meter::charge::{charge_if_executing, is_executing};
use crate::meter::operators::charge_operator;
use crate::meter::sizes::int_bits;
use crate::rules::costs;
use crate::rules::guards::OperatorCode;

/// The guard's operator for a `BINARY_OP` (`None`: not an arithmetic operator).
fn operator_code(op: BinaryOperator) -> Option<OperatorCode> {
    use BinaryOperator as B;
    Some(match op {
        B::Add | B::InplaceAdd => OperatorCode::Add,
        B::Subtract | B::InplaceSubtract => OperatorCode::Sub,
        B::Multiply | B::InplaceMultiply => OperatorCode::Mult,
        B::MatrixMultiply | B::InplaceMatrixMultiply => OperatorCode::MatMult,
        B::TrueDivide | B::InplaceTrueDivide => OperatorCode::Div,
        B::Remainder | B::InplaceRemainder => OperatorCode::Mod,
        B::Power | B::InplacePower => OperatorCode::Pow,
        B::Lshift | B::InplaceLshift => OperatorCode::LShift,
        B::Rshift | B::InplaceRshift => OperatorCode::RShift,
        B::Or | B::InplaceOr => OperatorCode::BitOr,
        B::Xor | B::InplaceXor => OperatorCode::BitXor,
        B::And | B::InplaceAnd => OperatorCode::BitAnd,
        B::FloorDivide | B::InplaceFloorDivide => OperatorCode::FloorDiv,
        B::Subscr => return None,
    })
}

/// A comparison of two ints walks their limbs from the top only when they
/// are as long as each other (the lengths decide otherwise): the shorter's
/// bytes at the rate of an addition's walk.
pub(crate) fn compare_cycles(a_bits: u64, b_bits: u64) -> u64 {
    if a_bits == b_bits {
        a_bits / 8 / costs::size::INT_BYTES_PER_CYCLE
    } else {
        0
    }
}

/// The hook the frame calls (see the module docs).
fn before_inline_int_work(
    work: IntWork,
    a: &PyObject,
    b: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if !is_executing() {
        return Ok(());
    }
    match work {
        // An unguarded product is either of operands the instrumenter
        // proved small or a `range` index's, which the loop's iterator has
        // charged already, as the guard would (`deploy::instrument`, "Loop
        // index products"; `iteration.rs`).
        IntWork::Binary(BinaryOperator::Multiply | BinaryOperator::InplaceMultiply) => Ok(()),
        IntWork::Binary(op) => match operator_code(op) {
            Some(code) => charge_operator(code, &a.to_owned(), &b.to_owned(), vm),
            None => Ok(()),
        },
        IntWork::Decimal => {
            let bits = a.downcast_ref::<PyInt>().map_or(0, |i| int_bits(i));
            charge_if_executing(crate::meter::sizes::int_decimal_cycles(bits), vm)
        }
        IntWork::Compare(_) => {
            let bits = |o: &PyObject| o.downcast_ref::<PyInt>().map(|i| int_bits(i)).unwrap_or(0);
            charge_if_executing(compare_cycles(bits(a), bits(b)), vm)
        }
    }
}

static INT_NEGATIVE: OnceLock<PyNumberUnaryFunc> = OnceLock::new();
static INT_INVERT: OnceLock<PyNumberUnaryFunc> = OnceLock::new();

/// What copying `number` costs when it is a wide int.
fn charge_int_copy(number: &PyNumber<'_>, vm: &VirtualMachine) -> PyResult<()> {
    let bits = number
        .obj
        .downcast_ref::<PyInt>()
        .map_or(0, |i| int_bits(i));
    if bits <= 64 {
        return Ok(());
    }
    charge_if_executing(bits / 8 / costs::size::INT_BYTES_PER_CYCLE, vm)
}

fn int_negative(number: PyNumber<'_>, vm: &VirtualMachine) -> PyResult {
    charge_int_copy(&number, vm)?;
    INT_NEGATIVE.get().expect("installed before it is stored")(number, vm)
}

fn int_invert(number: PyNumber<'_>, vm: &VirtualMachine) -> PyResult {
    charge_int_copy(&number, vm)?;
    INT_INVERT.get().expect("installed before it is stored")(number, vm)
}

/// Registers the hook (once per process) and wraps the int type's unary
/// slots (once per interpreter; a second install finds the wrappers).
pub(crate) fn install(vm: &VirtualMachine) {
    set_int_work_hook(before_inline_int_work);
    let slots = &vm.ctx.types.int_type.slots.as_number;
    for (slot, original, wrapper) in [
        (
            &slots.negative,
            &INT_NEGATIVE,
            int_negative as PyNumberUnaryFunc,
        ),
        (&slots.invert, &INT_INVERT, int_invert as PyNumberUnaryFunc),
    ] {
        let current = slot.load().expect("int has this slot");
        if current as usize != wrapper as usize {
            let _ = original.set(current);
            slot.store(Some(wrapper));
        }
    }
}
