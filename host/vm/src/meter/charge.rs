//! The meter of the execution in progress on this thread, and how natives
//! charge it: the charging half of the execution's state, apart from its
//! call frames and events ([`crate::host_api::exec`]), so that everything
//! that charges a price needs nothing of the host API or the interpreter.
//!
//! Aborts (out of cycles / cells / memory) are *sticky*: once the meter has
//! tripped, every further charge raises again, and the outcome is decided by
//! the meter, not by what the actor did with the exception. So `except
//! BaseException: pass` cannot swallow an abort.

use std::cell::RefCell;

use rustpython_vm::builtins::{PyBaseExceptionRef, PyTypeRef};
use rustpython_vm::{PyResult, VirtualMachine};

use super::alloc::MemoryBudget;
use super::budget::{Abort, Meter};

thread_local! {
    /// The meter of the execution (or module load) in progress.
    static METER: RefCell<Option<Meter>> = const { RefCell::new(None) };
    /// The uncatchable abort's exception type, made with the interpreter.
    static ABORT_TYPE: RefCell<Option<PyTypeRef>> = const { RefCell::new(None) };
}

/// Registers this thread's interpreter's abort exception type.
pub(crate) fn install_abort_type(abort: PyTypeRef) {
    ABORT_TYPE.with(|slot| *slot.borrow_mut() = Some(abort));
}

/// Puts `meter` in place for an execution (or a load), returning the one
/// it replaces (a load sets the execution's aside and restores it).
pub(crate) fn replace(meter: Option<Meter>) -> Option<Meter> {
    METER.with(|cell| std::mem::replace(&mut *cell.borrow_mut(), meter))
}

/// `f` on the meter in place; panics outside an execution.
#[inline]
pub(crate) fn with_meter<R>(f: impl FnOnce(&mut Meter) -> R) -> R {
    METER.with(|cell| f(cell.borrow_mut().as_mut().expect("inside an execution")))
}

/// What an abort is called in messages.
pub(crate) fn abort_message(abort: Abort) -> &'static str {
    match abort {
        Abort::Cycles => "out of cycles",
        Abort::Cells => "out of cells",
        Abort::Memory => "out of memory",
    }
}

/// The exception an abort raises.
pub(crate) fn abort_exception(abort: Abort, vm: &VirtualMachine) -> PyBaseExceptionRef {
    let abort_type = ABORT_TYPE.with(|slot| {
        slot.borrow()
            .clone()
            .expect("the interpreter registered its abort type")
    });
    vm.new_exception_msg(abort_type, abort_message(abort).into())
}

/// Charges the meter; on an abort returns the exception to raise.
#[inline]
pub(crate) fn charge(cycles: u64, cells: u64, vm: &VirtualMachine) -> PyResult<()> {
    let memory_exceeded = MemoryBudget::exceeded();
    with_meter(|meter| meter.charge(cycles, cells, memory_exceeded))
        .map_err(|abort| abort_exception(abort, vm))
}

/// Is an execution in progress on this thread?
#[inline]
pub(crate) fn is_executing() -> bool {
    METER.with(|cell| {
        cell.try_borrow()
            .map(|meter| meter.is_some())
            .unwrap_or(false)
    })
}

/// [`charge`] for code that also runs outside executions (the metered type
/// slots, [`super::slots`]): outside one nothing is charged.
#[inline]
pub(crate) fn charge_if_executing(cycles: u64, vm: &VirtualMachine) -> PyResult<()> {
    let charged = METER.with(|cell| {
        cell.try_borrow_mut().ok().and_then(|mut meter| {
            meter
                .as_mut()
                .map(|meter| meter.charge(cycles, 0, MemoryBudget::exceeded()))
        })
    });
    match charged {
        Some(Err(abort)) => Err(abort_exception(abort, vm)),
        _ => Ok(()),
    }
}

/// Trips the meter and returns the exception to raise.
pub(crate) fn trip(abort: Abort, vm: &VirtualMachine) -> PyBaseExceptionRef {
    with_meter(|meter| meter.trip(abort));
    abort_exception(abort, vm)
}
