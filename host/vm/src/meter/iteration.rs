//! Metered iteration: the native iterator behind `_pvm_iter(iterable, n)`,
//! which the instrumenter wraps around the iterable of every `for` loop and
//! comprehension generator ([`crate::deploy::instrument`]).
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

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use rustpython_vm::builtins::{PyInt, PyRange, PyTupleRef};
use rustpython_vm::function::OptionalArg;
use rustpython_vm::protocol::{PyIter, PyIterReturn};
use rustpython_vm::types::{IterNext, Iterable, SelfIter};
use rustpython_vm::{pyclass, Py, PyObjectRef, PyPayload, PyResult, Traverse, VirtualMachine};

use crate::meter::charge::charge;

/// `for x in _pvm_iter(xs, n)`: yields what `iter(xs)` yields, charging `n`
/// cycles per item.
///
/// A `range` whose bounds fit in 64 bits is walked here directly instead of
/// through its own iterator: RustPython's `for` has a fast path for bare
/// range iterators that wrapping one loses, and producing the ints here gets
/// back part of it (one indirect `__next__` call per item).
#[pyclass(module = false, name = "metered_iterator", traverse)]
#[derive(Debug, PyPayload)]
pub(crate) struct MeteredIterator {
    /// The wrapped iterator; `None` for a range walked in place.
    inner: Option<PyIter>,
    #[pytraverse(skip)]
    range: RangeWalk,
    #[pytraverse(skip)]
    cycles_per_item: u64,
}

/// The state of a range walked in place: the next value and how many are left.
#[derive(Debug, Default)]
struct RangeWalk {
    next: AtomicI64,
    left: AtomicU64,
    step: i64,
}

impl RangeWalk {
    /// The walk of `range`, if its start, stop and step fit in an `i64`.
    fn of(range: &PyRange) -> Option<RangeWalk> {
        let bound = |int: &PyInt| i64::try_from(int.as_bigint()).ok();
        Self::from_bounds(
            bound(&range.start)?,
            bound(&range.stop)?,
            bound(&range.step)?,
        )
    }

    /// The walk of `range(start, stop, step)` (`step` ≠ 0, as `range` ensures).
    fn from_bounds(start: i64, stop: i64, step: i64) -> Option<RangeWalk> {
        let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
        let length = match step {
            s if s > 0 && start < stop => (stop - start - 1) / s + 1,
            s if s < 0 && start > stop => (start - stop - 1) / -s + 1,
            _ => 0,
        };
        Some(RangeWalk {
            next: AtomicI64::new(start as i64),
            left: AtomicU64::new(u64::try_from(length).ok()?),
            step: step as i64,
        })
    }

    /// The next value, or `None` when the range is exhausted.
    fn next(&self) -> Option<i64> {
        let left = self.left.load(Ordering::Relaxed);
        if left == 0 {
            return None;
        }
        self.left.store(left - 1, Ordering::Relaxed);
        let value = self.next.load(Ordering::Relaxed);
        // Past the last item this may leave the i64 range; it is never read.
        self.next
            .store(value.wrapping_add(self.step), Ordering::Relaxed);
        Some(value)
    }
}

#[pyclass(with(IterNext, Iterable))]
impl MeteredIterator {}

impl SelfIter for MeteredIterator {}

impl IterNext for MeteredIterator {
    fn next(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyIterReturn> {
        let produced = match &zelf.inner {
            Some(inner) => inner.next(vm)?,
            None => match zelf.range.next() {
                Some(value) => PyIterReturn::Return(vm.ctx.new_int(value).into()),
                None => PyIterReturn::StopIteration(None),
            },
        };
        match produced {
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
/// (`crate::deploy::instrument`, "exempt index products"): the iterable must then be
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
    let range = iterable.downcast_ref_if_exact::<PyRange>(vm);
    if let OptionalArg::Present(multipliers) = index_multipliers {
        let Some(range) = range else {
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
            cycles_per_item +=
                crate::meter::operators::int_product_charge(index_bits, multiplier_bits)
                    + (index_bits + multiplier_bits)
                        / 8
                        / crate::rules::costs::size::INT_BYTES_PER_CYCLE;
        }
    }
    let walk = range.and_then(|range| RangeWalk::of(range));
    let (inner, range) = match walk {
        Some(walk) => (None, walk),
        None => (Some(iterable.get_iter(vm)?), RangeWalk::default()),
    };
    Ok(MeteredIterator {
        inner,
        range,
        cycles_per_item,
    }
    .into_pyobject(vm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn walked(start: i64, stop: i64, step: i64) -> Vec<i64> {
        let walk = RangeWalk::from_bounds(start, stop, step).expect("fits");
        std::iter::from_fn(|| walk.next()).collect()
    }

    #[test]
    fn walks_like_python_range_at_the_edges() {
        assert_eq!(walked(0, 5, 1), [0, 1, 2, 3, 4]);
        assert_eq!(walked(5, 0, -2), [5, 3, 1]);
        assert_eq!(walked(0, 0, 1), Vec::<i64>::new());
        assert_eq!(walked(3, 0, 1), Vec::<i64>::new());
        assert_eq!(
            walked(i64::MAX - 2, i64::MAX, 1),
            [i64::MAX - 2, i64::MAX - 1]
        );
        assert_eq!(walked(i64::MIN + 1, i64::MIN, -1), [i64::MIN + 1]);
        assert_eq!(
            walked(i64::MIN, i64::MAX, i64::MAX),
            [i64::MIN, -1, i64::MAX - 1]
        );
    }

    proptest! {
        /// Same values as stepping a counter the way CPython's range does.
        #[test]
        fn walks_like_python_range(start in -50i64..50, stop in -50i64..50, step in prop_oneof![-7i64..0, 1i64..8]) {
            let mut expected = Vec::new();
            let mut value = start;
            while (step > 0 && value < stop) || (step < 0 && value > stop) {
                expected.push(value);
                value += step;
            }
            prop_assert_eq!(walked(start, stop, step), expected);
        }
    }
}
