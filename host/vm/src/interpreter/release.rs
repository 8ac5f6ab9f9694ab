//! Freeing what actors build without native recursion past a bound.
//!
//! RustPython frees objects by reference counting: the last reference to an
//! object going away frees it, which drops its references, which may free
//! the objects they point to, recursively. Its "trashcan" (CPython's
//! `Py_TRASHCAN`) defers frees nested deeper than 50 garbage-collected
//! objects to a work list, so a list nested 200,000 deep is freed in
//! bounded native depth. Two paths escape it, and each let one transaction
//! abort every node:
//!
//! - **Generators.** A generator's finalizer (its `del` slot) closes it,
//!   and closing an unstarted generator drops its frame's locals inside the
//!   finalizer — before the trashcan is entered. A chain of 20,000
//!   generators each holding the next (`x = wrap(x)` in a loop, ~300,000
//!   cycles) was freed recursively through finalizers when the call
//!   returned. Here the generator's `del` slot is wrapped: finalizers
//!   nested deeper than [`MAX_NESTED_FINALIZERS`] are deferred to a
//!   per-thread work list, which the outermost finalizer drains — one at a
//!   time, in a fixed order, so whatever Python code a finalizer runs
//!   (`finally` blocks of a suspended generator) runs at the same point on
//!   every node.
//! - **Frozensets.** RustPython does not track frozensets for collection
//!   (its frozenset has no traversal), so the trashcan never sees them and
//!   a frozenset of a frozenset of … 60,000 deep overflowed an 8 MiB stack
//!   when freed. Frozensets are instead refused past
//!   [`crate::meter::nesting::MAX_NATIVE_NESTING`] levels when they are built:
//!   every way to put a frozenset into a new frozenset (the constructor,
//!   `|`, `^`, `union`, `symmetric_difference`) checks the result's depth,
//!   charging for the walk, and raises `RecursionError` past the bound.
//!   (`&`, `-`, `intersection`, `difference` and `copy` keep elements of
//!   their left operand, which was checked when it was built.)
//!
//! Everything else an actor can nest (lists, tuples, dicts, sets,
//! instances, closures, iterators, exceptions, slices, …) is tracked and
//! freed through the trashcan; `tests/nesting.rs` frees the deepest
//! structure of each kind the memory budget allows on a small stack.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::sync::OnceLock;

use rustpython_vm::builtins::{PyFrozenSet, PyType};
use rustpython_vm::function::{Callee, FuncArgs, PyMethodFlags};
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, PyResult, VirtualMachine};

/// Finalizers that may run nested inside one another before further ones
/// are deferred (CPython's trashcan nests 50 deallocations).
pub const MAX_NESTED_FINALIZERS: u32 = 50;

type DelSlot = fn(&PyObject, &VirtualMachine) -> PyResult<()>;

static GENERATOR_DEL: OnceLock<DelSlot> = OnceLock::new();

thread_local! {
    /// Finalizers running now, nested.
    static FINALIZING: Cell<u32> = const { Cell::new(0) };
    /// Objects whose finalizer was deferred, kept alive until it runs.
    static DEFERRED: RefCell<Vec<PyObjectRef>> = const { RefCell::new(Vec::new()) };
}

/// What a generator's life costs beyond the call that made it: the
/// generator and its frame allocated, then finalized and freed (~1 µs; the
/// call itself is charged as any call, and its body only when resumed). A
/// program building 94,000 generators in a loop ran at ~4× ordinary code
/// (the metering fuzzer, #47). Charged when the generator is finalized —
/// the one hook every generator passes — at the same point on every node:
/// a reference count reaching zero, or a collection between executions
/// (outside every budget, where nothing is charged).
pub const GENERATOR_LIFE_CYCLES: u64 = 40;

/// The generator finalizer with deferral (see the module docs).
fn generator_del(obj: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    // An abort here stays in the meter (sticky) and decides the outcome.
    let _ = crate::meter::charge::charge_if_executing(GENERATOR_LIFE_CYCLES, vm);
    let original = *GENERATOR_DEL.get().expect("wrapped slot has its original");
    let depth = FINALIZING.with(Cell::get);
    if depth >= MAX_NESTED_FINALIZERS {
        // A new reference resurrects the object: RustPython does not free
        // an object its finalizer resurrected, and will not finalize it
        // again. The drain below finalizes it and lets it go.
        DEFERRED.with(|deferred| deferred.borrow_mut().push(obj.to_owned()));
        return Ok(());
    }
    FINALIZING.with(|f| f.set(depth + 1));
    finalize(original, obj, vm);
    if depth == 0 {
        // The outermost finalizer drains what was deferred below it (and
        // what those finalizers defer in turn), last deferred first.
        while let Some(next) = DEFERRED.with(|deferred| deferred.borrow_mut().pop()) {
            finalize(original, &next, vm);
            // The last reference: freed now, without finalizing again.
            drop(next);
        }
    }
    FINALIZING.with(|f| f.set(depth));
    Ok(())
}

/// Runs a generator's finalizer. What it raises is ignored, as CPython
/// ignores it (the generator's own finalizer reports what closing raised
/// through the interpreter's `sys.unraisablehook`, which ignores it,
/// `crate::interpreter::runtime`); an abort raised inside stays sticky in the meter, so
/// it still decides the outcome.
fn finalize(original: DelSlot, obj: &PyObject, vm: &VirtualMachine) {
    let _ = original(obj, vm);
}

/// Objects waiting for their deferred finalizer (0 between executions).
pub(crate) fn deferred_count() -> usize {
    DEFERRED.with(|deferred| deferred.borrow().len())
}

// --- Frozensets --------------------------------------------------------------

/// Cycles for a frozenset visited by the depth walk (a set insert and a
/// level, ~50 ns: a nest built in a loop ran at ~55 ns per cycle at 1), and
/// per this many elements looked at (a type check each, ~1–2 ns).
const FROZENSET_VISIT_CYCLES: u64 = 3;
const ELEMENTS_PER_CYCLE: u64 = 16;

/// Checks that `result`, if it is a frozenset, nests frozensets no deeper
/// than the bound, charging for the walk.
pub(crate) fn check_frozenset(result: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    let Some(set) = result.downcast_ref::<PyFrozenSet>() else {
        return Ok(());
    };
    let mut visited = HashSet::new();
    let mut elements = 0u64;
    let walked = walk(set, vm, &mut visited, &mut elements);
    // Charged whether the walk passed or stopped at the bound: the levels
    // it reached were visited either way (#47 found the refused last level
    // of a nest built in a loop unpaid).
    crate::meter::charge::charge_if_executing(
        visited.len() as u64 * FROZENSET_VISIT_CYCLES + elements / ELEMENTS_PER_CYCLE,
        vm,
    )?;
    walked
}

/// Visits the frozensets nested in `set` (each once: a shared one is not
/// walked again), one nesting level each.
fn walk(
    set: &Py<PyFrozenSet>,
    vm: &VirtualMachine,
    visited: &mut HashSet<usize>,
    elements: &mut u64,
) -> PyResult<()> {
    // Identity is only used to avoid walking a shared frozenset twice:
    // what is charged depends on the object graph, not on addresses.
    if !visited.insert(set.as_object() as *const PyObject as usize) {
        return Ok(());
    }
    let _level = crate::meter::nesting::enter("while building a frozenset", vm)?;
    let items = set.elements();
    *elements += items.len() as u64;
    for item in &items {
        if let Some(inner) = item.downcast_ref::<PyFrozenSet>() {
            walk(inner, vm, visited, elements)?;
        }
    }
    Ok(())
}

type NewSlot = fn(rustpython_vm::builtins::PyTypeRef, FuncArgs, &VirtualMachine) -> PyResult;
type BinarySlot = fn(&PyObject, &PyObject, &VirtualMachine) -> PyResult;

static FROZENSET_NEW: OnceLock<NewSlot> = OnceLock::new();
static FROZENSET_OR: OnceLock<BinarySlot> = OnceLock::new();
static FROZENSET_XOR: OnceLock<BinarySlot> = OnceLock::new();

fn frozenset_new(
    class: rustpython_vm::builtins::PyTypeRef,
    args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    let original = *FROZENSET_NEW.get().expect("wrapped slot has its original");
    let made = original(class, args, vm)?;
    check_frozenset(&made, vm)?;
    Ok(made)
}

fn frozenset_or(a: &PyObject, b: &PyObject, vm: &VirtualMachine) -> PyResult {
    let original = *FROZENSET_OR.get().expect("wrapped slot has its original");
    let made = original(a, b, vm)?;
    check_frozenset(&made, vm)?;
    Ok(made)
}

fn frozenset_xor(a: &PyObject, b: &PyObject, vm: &VirtualMachine) -> PyResult {
    let original = *FROZENSET_XOR.get().expect("wrapped slot has its original");
    let made = original(a, b, vm)?;
    check_frozenset(&made, vm)?;
    Ok(made)
}

/// The frozenset methods that add elements of their arguments.
const ADDING_METHODS: &[&str] = &["union", "symmetric_difference"];

/// Wraps the generator's finalizer and every way to build a frozenset from
/// new elements, on this thread's types (idempotent).
pub(crate) fn install(vm: &VirtualMachine) {
    let types = &vm.ctx.types;
    let generator = types.generator_type;
    if let Some(current) = generator.slots.del.load() {
        if current as usize != generator_del as DelSlot as usize {
            let _ = GENERATOR_DEL.set(current);
            generator.slots.del.store(Some(generator_del));
        }
    }
    let frozenset = types.frozenset_type;
    if let Some(current) = frozenset.slots.new.load() {
        if current as usize != frozenset_new as NewSlot as usize {
            let _ = FROZENSET_NEW.set(current);
            frozenset.slots.new.store(Some(frozenset_new));
        }
    }
    let number = &frozenset.slots.as_number;
    for (slot, original, wrapper) in [
        (&number.or, &FROZENSET_OR, frozenset_or as BinarySlot),
        (&number.xor, &FROZENSET_XOR, frozenset_xor as BinarySlot),
    ] {
        if let Some(current) = slot.load() {
            if current as usize != wrapper as usize {
                let _ = original.set(current);
                slot.store(Some(wrapper));
            }
        }
    }
    if !METHODS_WRAPPED.with(|wrapped| wrapped.replace(true)) {
        for name in ADDING_METHODS {
            wrap_adding_method(frozenset, name, vm);
        }
    }
}

thread_local! {
    /// The frozenset methods are wrapped on this thread's type.
    static METHODS_WRAPPED: Cell<bool> = const { Cell::new(false) };
}

fn wrap_adding_method(class: &'static Py<PyType>, name: &'static str, vm: &VirtualMachine) {
    let interned = vm.ctx.intern_str(name);
    let Some(original) = class.attributes.get(interned) else {
        return;
    };
    let native = crate::meter::natives::install::heap_def(
        name,
        move |vm: &VirtualMachine, args: FuncArgs, _callee: Callee| -> PyResult {
            let made = original.call(args, vm)?;
            check_frozenset(&made, vm)?;
            Ok(made)
        },
        PyMethodFlags::METHOD,
        vm,
    );
    class.set_attr(interned, native.build_method(class, vm).into());
}
