//! Ranges drained inside natives stop when memory runs out.
//!
//! A `range` costs nothing to hold, so the walkers hand it to natives as it
//! is ([`crate::meter::sizes::materialize`] charges its length up front)
//! and the native draws every int from it in Rust: `f(*range(12_000_000))`
//! built a 12-million-item argument tuple, `[*range(n)]` a list and
//! `dict.fromkeys(range(n))` a dict, each past the 64 MiB budget to more
//! than a gigabyte before the next charge point could see the budget's
//! flag. The `__next__` slot of the range iterators is wrapped here to look
//! at the flag on every item: once an allocation has passed the budget, the
//! next item drawn raises the execution's `out of memory` abort, so the
//! native stops within one item's growth (a container's resize) of the
//! budget. The look is one thread-local read; nothing is charged.
//!
//! Deterministic like the flag itself: it is raised at an allocation and
//! observed at a fixed point of the executed code.

use std::sync::OnceLock;

use rustpython_vm::protocol::PyIterReturn;
use rustpython_vm::{PyObject, PyResult, VirtualMachine};

use crate::meter::alloc::MemoryBudget;

type IterNextSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyIterReturn>;

static RANGE_NEXT: OnceLock<IterNextSlot> = OnceLock::new();
static LONG_RANGE_NEXT: OnceLock<IterNextSlot> = OnceLock::new();

fn out_of_memory_if_exceeded(vm: &VirtualMachine) -> PyResult<()> {
    if MemoryBudget::exceeded() && crate::meter::charge::is_executing() {
        crate::meter::charge::charge(0, 0, vm)?;
    }
    Ok(())
}

fn range_next(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyIterReturn> {
    out_of_memory_if_exceeded(vm)?;
    RANGE_NEXT.get().expect("wrapped slot has its original")(obj, vm)
}

fn long_range_next(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyIterReturn> {
    out_of_memory_if_exceeded(vm)?;
    LONG_RANGE_NEXT
        .get()
        .expect("wrapped slot has its original")(obj, vm)
}

/// Wraps the range iterators' `__next__` slots on this thread's types
/// (idempotent).
pub(crate) fn install(vm: &VirtualMachine) {
    let types = &vm.ctx.types;
    for (class, original, wrapper) in [
        (
            types.range_iterator_type,
            &RANGE_NEXT,
            range_next as IterNextSlot,
        ),
        (
            types.long_range_iterator_type,
            &LONG_RANGE_NEXT,
            long_range_next as IterNextSlot,
        ),
    ] {
        let Some(current) = class.slots.iternext.load() else {
            continue;
        };
        if current as usize == wrapper as usize {
            continue;
        }
        let _ = original.set(current);
        class.slots.iternext.store(Some(wrapper));
    }
}
