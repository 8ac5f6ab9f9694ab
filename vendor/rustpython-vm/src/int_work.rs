//! timerhost patch: a hook that prices the integer work the frame computes
//! inline.
//!
//! `BINARY_OP` computes `+`, `-` and `*` of two exact ints, and `COMPARE_OP`
//! compares two exact ints, without going through the int type's slots, at
//! any size; its other operators reach the slots directly. `str()` of an
//! exact int converts it to decimal without its `__str__` slot as well. An embedder that
//! meters execution (timerhost's actor VM) prices what its own code calls,
//! not what the frame does between, so the frame calls this hook first
//! whenever it runs an operator on two exact ints and one of them does not
//! fit a machine word; the hook may charge for the work or refuse it with an
//! exception. Without a hook nothing changes.

use std::sync::OnceLock;

use crate::bytecode::BinaryOperator;
use crate::types::PyComparisonOp;
use crate::{PyObject, PyResult, VirtualMachine};

/// The operation about to run on two exact ints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntWork {
    /// A binary operator (`BINARY_OP`, any of them).
    Binary(BinaryOperator),
    /// A comparison (`COMPARE_OP`).
    Compare(PyComparisonOp),
    /// An exact int converted to decimal text by `str()`'s fast path (an
    /// f-string, `format(x)`, `print`): both operands are the int.
    Decimal,
}

/// Called before an operation on two exact ints, one of them wider than a
/// machine word.
pub type IntWorkHook = fn(IntWork, &PyObject, &PyObject, &VirtualMachine) -> PyResult<()>;

static HOOK: OnceLock<IntWorkHook> = OnceLock::new();

/// Installs the hook for the whole process; the first one installed stays.
pub fn set_int_work_hook(hook: IntWorkHook) {
    let _ = HOOK.set(hook);
}

/// Runs the hook, if one is installed.
#[inline]
pub(crate) fn before(work: IntWork, a: &PyObject, b: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    match HOOK.get() {
        Some(hook) => hook(work, a, b, vm),
        None => Ok(()),
    }
}
