//! Resuming a generator is charged where it happens: in the generator
//! type's `__next__` slot.
//!
//! A generator's code is metered like any other, but only the statements
//! it runs: switching into its frame and back (~100 ns) was paid by
//! whoever drew the item — a `for` loop's iteration, a native's per-item
//! charge — and by nobody when a generator resumes another natively. A
//! chain of generators each drawing from the next (`def wrap(it): for v in
//! it: yield v`, nested 20,000 deep) resumed 1,000 frames before the
//! recursion limit stopped it, and unwound them again, for a handful of
//! cycles: ~80 ns per cycle (the metering fuzzer, #47). Each resumption now
//! costs [`GENERATOR_RESUME_CYCLES`], and an exception that leaves a
//! generator [`GENERATOR_UNWIND_CYCLES`] more.

use std::sync::OnceLock;

use rustpython_vm::protocol::PyIterReturn;
use rustpython_vm::{PyObject, PyResult, VirtualMachine};

/// What resuming a generator costs (see the module docs).
pub const GENERATOR_RESUME_CYCLES: u64 = 3;

type IterNextSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyIterReturn>;

static GENERATOR_NEXT: OnceLock<IterNextSlot> = OnceLock::new();

/// What an exception leaving a generator costs besides: its frame is
/// unwound, a traceback entry added and the generator closed (~0.5–1 µs:
/// at 40 a chain of 3,000 unwound at ~3.4× ordinary code).
/// The chain above resumed 1,000 frames and unwound them at ~645 ns a
/// level; an ordinary generator ends by returning, not raising.
pub const GENERATOR_UNWIND_CYCLES: u64 = 60;

fn generator_next(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyIterReturn> {
    crate::meter::charge::charge_if_executing(GENERATOR_RESUME_CYCLES, vm)?;
    let result = GENERATOR_NEXT.get().expect("wrapped slot has its original")(obj, vm);
    if result.is_err() {
        crate::meter::charge::charge_if_executing(GENERATOR_UNWIND_CYCLES, vm)?;
    }
    result
}

/// Wraps the generator type's `__next__` slot on this thread (idempotent).
pub(crate) fn install(vm: &VirtualMachine) {
    let class = vm.ctx.types.generator_type;
    let Some(current) = class.slots.iternext.load() else {
        return;
    };
    if current as usize == generator_next as IterNextSlot as usize {
        return;
    }
    let _ = GENERATOR_NEXT.set(current);
    class.slots.iternext.store(Some(generator_next));
}
