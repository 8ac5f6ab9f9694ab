//! Settling RustPython's per-thread free lists between executions, so that
//! what an execution is charged for memory does not depend on what ran
//! before it (see `Runtime::settle` in [`crate::interpreter::runtime`] and
//! docs/METERING.md, "Memory").

use rustpython_vm::builtins::PyRange;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

/// Free-list capacities of RustPython 0.6.0 (`MAX_FREELIST`; the version is
/// pinned in the workspace). `memory_peak_does_not_depend_on_earlier_executions`
/// fails if a change of these leaves settling incomplete.
const DICT_FREELIST: usize = 80;
const INT_FREELIST: usize = 100;
const RANGE_FREELIST: usize = 6;
const SLICE_FREELIST: usize = 1;
const LIST_FREELIST: usize = 80;
const TUPLE_FREELIST: usize = 2000;
const FLOAT_FREELIST: usize = 100;
const COMPLEX_FREELIST: usize = 100;
const FRAME_FREELIST: usize = 200;

/// Takes every entry off RustPython's free lists and puts back fresh,
/// minimal objects (see [`Runtime::settle`]); `all` includes the lists whose
/// entries keep no payload (tuples, floats, complex numbers, frames).
pub(crate) fn refill_free_lists(vm: &VirtualMachine, frame_maker: &PyObjectRef, all: bool) {
    use rustpython_vm::builtins::PySlice;
    use rustpython_vm::PyPayload;

    // Slices and ranges first: dropping what their dead entries hold may put
    // ints and lists on their free lists, which are refilled after.
    let mut fresh: Vec<PyObjectRef> = Vec::new();
    fresh.extend((0..SLICE_FREELIST).map(|_| {
        PySlice {
            start: None,
            stop: vm.ctx.none(),
            step: None,
        }
        .into_ref(&vm.ctx)
        .into()
    }));
    fresh.extend((0..RANGE_FREELIST).map(|_| {
        PyRange {
            start: vm.ctx.new_int(0),
            stop: vm.ctx.new_int(0),
            step: vm.ctx.new_int(1),
        }
        .into_ref(&vm.ctx)
        .into()
    }));
    fresh.extend((0..DICT_FREELIST).map(|_| vm.ctx.new_dict().into()));
    // Beyond the small-int cache, so each is a new object.
    fresh.extend((0..INT_FREELIST).map(|i| vm.ctx.new_int(1_000_000 + i).into()));
    fresh.extend((0..LIST_FREELIST).map(|_| vm.ctx.new_list(Vec::new()).into()));
    if all {
        fresh.extend((0..TUPLE_FREELIST).map(|_| vm.ctx.new_tuple(vec![vm.ctx.none()]).into()));
        // Complex numbers before floats: making one from two floats uses floats.
        let complex_type = vm.ctx.types.complex_type.to_owned();
        fresh.extend((0..COMPLEX_FREELIST).map(|_| {
            complex_type
                .as_object()
                .call((0.5f64, 0.5f64), vm)
                .expect("complex(0.5, 0.5)")
        }));
        fresh.extend((0..FLOAT_FREELIST).map(|_| vm.ctx.new_float(0.5).into()));
        // Each call of the generator function makes a generator with a frame.
        fresh.extend((0..FRAME_FREELIST).map(|_| {
            frame_maker
                .call((), vm)
                .expect("a generator function call makes a generator")
        }));
    }
    // Dropped together: back onto the free lists, each full of identical
    // minimal entries.
    drop(fresh);
}
