//! Writes into values made at load: the one thing the meter's natives need
//! of the interpreter. A list, dict, set, bytearray or instance a module
//! made at load is restored after every call, and its first write in a call
//! is charged by its size ([`crate::interpreter::constants`]); the natives
//! that mutate (`list.append`, the subscript-store guard, …) report each
//! write here, and the interpreter registers what to do with it — so the
//! meter never imports the interpreter.

use std::sync::OnceLock;

use rustpython_vm::{PyObject, PyResult, VirtualMachine};

/// What the interpreter does before `value` is written to.
pub(crate) type WriteBarrier = fn(&PyObject, &VirtualMachine) -> PyResult<()>;

static BARRIER: OnceLock<WriteBarrier> = OnceLock::new();

/// Registers the interpreter's barrier (once per process; every
/// interpreter registers the same function).
pub(crate) fn register(barrier: WriteBarrier) {
    let _ = BARRIER.set(barrier);
}

/// Before `value` is written to: charges and records its first write in
/// this call if it was made at load (nothing before an interpreter exists).
#[inline]
pub(crate) fn before_write(value: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    match BARRIER.get() {
        Some(barrier) => barrier(value, vm),
        None => Ok(()),
    }
}
