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

use rustpython_vm::builtins::{PyInt, PyRange, PyTupleRef};
use rustpython_vm::function::OptionalArg;
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

/// The `_pvm_iter` native. `index_multipliers`, when the instrumenter passes
/// them, are the literals `c` of the loop body's unguarded `i * c` products
/// (`crate::instrument`, "exempt index products"): the iterable must then be
/// a `range`, and each item is also charged what `_pvm_binop` would have
/// charged for those products (an upper bound from the range's bounds) —
/// nothing while they fit in a machine word.
pub(crate) fn iter_native(
    iterable: PyObjectRef,
    cycles_per_item: u64,
    index_multipliers: OptionalArg<PyTupleRef>,
    vm: &VirtualMachine,
) -> PyResult {
    let mut cycles_per_item = cycles_per_item;
    if let OptionalArg::Present(multipliers) = index_multipliers {
        let Some(range) = iterable.downcast_ref_if_exact::<PyRange>(vm) else {
            // Only reachable if the instrumenter's analysis missed a binding
            // of `range`: refuse rather than run the products unguarded.
            return Err(vm.new_runtime_error(
                "internal: an exempt loop index must come from range()".to_owned(),
            ));
        };
        let index_bits = range
            .start
            .as_bigint()
            .bits()
            .max(range.stop.as_bigint().bits());
        for multiplier in multipliers.iter() {
            let multiplier_bits = multiplier
                .downcast_ref::<PyInt>()
                .map_or(64, |c| c.as_bigint().bits());
            // What `_pvm_binop` charges: the product, then the result's size
            // (at most the sum of the operands' bits).
            cycles_per_item += crate::runtime::int_product_cycles(index_bits, multiplier_bits)
                + crate::costs::for_bytes((index_bits + multiplier_bits) / 8);
        }
    }
    let inner = iterable.get_iter(vm)?;
    Ok(MeteredIterator {
        inner,
        cycles_per_item,
    }
    .into_pyobject(vm))
}
