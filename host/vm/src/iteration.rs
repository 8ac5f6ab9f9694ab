//! Metered iteration: the native iterator behind `_pvm_iter(iterable, n)`,
//! which the instrumenter wraps around the iterable of every `for` loop and
//! comprehension generator ([`crate::instrument`]).
//!
//! Why an iterator and not a meter call in the loop body: the interpreter
//! already calls the iterator's `__next__` slot once per iteration, natively
//! and without building an argument list, so charging there adds a slot
//! dispatch (tens of nanoseconds) where a `_pvm_meter(n)` statement added a
//! full Python-level call of a native function (argument vector, binding,
//! integer conversion) — most of the metering overhead of a tight loop.
//!
//! The charge happens when the wrapped iterator has produced an item and
//! before the loop body (or the comprehension's conditions and element) runs,
//! so an execution that runs out stops before that iteration's work, at the
//! same point on every run; an exhausted iterator charges nothing.

use rustpython_vm::protocol::{PyIter, PyIterReturn};
use rustpython_vm::types::{IterNext, Iterable, SelfIter};
use rustpython_vm::{pyclass, Py, PyObjectRef, PyPayload, PyResult, Traverse, VirtualMachine};

use crate::runtime::charge;

/// `for x in _pvm_iter(xs, n)`: yields what `iter(xs)` yields, charging `n`
/// cycles per item.
#[pyclass(module = false, name = "metered_iterator", traverse)]
#[derive(Debug, PyPayload)]
pub(crate) struct MeteredIterator {
    inner: PyIter,
    #[pytraverse(skip)]
    cycles_per_item: u64,
}

#[pyclass(with(IterNext, Iterable))]
impl MeteredIterator {}

impl SelfIter for MeteredIterator {}

impl IterNext for MeteredIterator {
    fn next(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyIterReturn> {
        match zelf.inner.next(vm)? {
            PyIterReturn::Return(item) => {
                charge(zelf.cycles_per_item, 0, vm)?;
                Ok(PyIterReturn::Return(item))
            }
            exhausted => Ok(exhausted),
        }
    }
}

/// Creates the iterator type for this thread's interpreter (RustPython keeps
/// static types per thread in this build); call once before the first
/// `_pvm_iter`.
pub(crate) fn init_type() {
    use rustpython_vm::class::PyClassImpl;
    let _ = MeteredIterator::make_static_type();
}

/// The `_pvm_iter` native.
pub(crate) fn iter_native(
    iterable: PyObjectRef,
    cycles_per_item: u64,
    vm: &VirtualMachine,
) -> PyResult {
    let inner = iterable.get_iter(vm)?;
    Ok(MeteredIterator {
        inner,
        cycles_per_item,
    }
    .into_pyobject(vm))
}
