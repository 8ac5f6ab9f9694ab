//! A deterministic bound on native recursion: how deep the interpreter may
//! nest one built-in operation inside another without a Python frame in
//! between.
//!
//! Hashing a tuple hashes its elements, comparing two lists compares their
//! elements, `repr` of a dict formats its values, `str` of an exception
//! formats its argument, and the `__next__` of a `zip` calls the `__next__`
//! of what it zips: each of these recurses natively on its input, so a
//! structure nested 200,000 deep (built in a loop for a few million cycles)
//! overflowed the native stack and aborted the node. RustPython guards some
//! of these paths against the *remaining stack*, which differs between
//! builds and machines and would split validators; others it does not guard
//! at all.
//!
//! Here every such path counts: the type slots that can recurse (`repr`,
//! `str`, `hash`, rich comparison, `__next__`, calls and descriptor
//! binding) of every built-in type are wrapped once per thread, and each
//! wrapper enters one level of a per-thread counter. Past
//! [`MAX_NATIVE_NESTING`] levels the operation raises `RecursionError` —
//! catchable, charged as everything before it was, at the same point on
//! every node and in every build. Python frames are bounded separately
//! ([`crate::interpreter::runtime::RECURSION_LIMIT`]), as CPython bounds its C
//! recursion apart from its Python recursion.
//!
//! Leaf slots — those that cannot reach another object's slot, such as the
//! hash of an `int`, the comparison of two `str`s or the `__next__` of a
//! list iterator — stay unwrapped: they are the hot ones, and counting them
//! would bound nothing. Whatever this module does not list as a leaf is
//! wrapped, so a type RustPython adds is counted by default.
//!
//! Slot functions are plain `fn` pointers, so a wrapper cannot capture the
//! original it calls: each slot kind has a pool of wrappers, one per
//! distinct original function (`fn wrapper<const I: usize>`), and the
//! original of wrapper `I` is recorded the first time a thread installs it.
//! The originals are the same functions on every thread.
//!
//! What this does not cover, and where it is covered: frames (Python
//! recursion, generators resumed by generators) by the interpreter's
//! recursion limit; `isinstance`/`issubclass` and `except` clauses walking
//! nested tuples of classes by [`check_class_info`]; freeing deep graphs by
//! [`crate::interpreter::release`]; the host's conversions and `json` by
//! `timerhost_types::value::MAX_DEPTH`.

use std::cell::Cell;
use std::sync::{Mutex, OnceLock};

use rustpython_vm::builtins::{PyStr, PyTuple, PyType, PyTypeRef};
use rustpython_vm::common::hash::PyHash;
use rustpython_vm::function::{Callee, Either, FuncArgs, PyComparisonValue, PyMethodFlags};
use rustpython_vm::protocol::PyIterReturn;
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{Py, PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine};

use crate::meter::natives::inventory::EntryKind;

/// Built-in operations nested inside one another, at most: the
/// thousand-and-first raises `RecursionError`. CPython 3.11 stops `repr` and
/// comparisons of nested containers at its recursion limit, 1,000, too.
pub const MAX_NATIVE_NESTING: u32 = 1000;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// One level of native nesting, left when dropped.
#[must_use = "the level is left when this is dropped"]
pub(crate) struct Level(());

impl Drop for Level {
    #[inline]
    fn drop(&mut self) {
        DEPTH.with(|depth| depth.set(depth.get() - 1));
    }
}

/// Enters one level of native nesting, or raises `RecursionError` naming
/// `what` if [`MAX_NATIVE_NESTING`] levels are already open.
#[inline]
pub(crate) fn enter(what: &str, vm: &VirtualMachine) -> PyResult<Level> {
    DEPTH.with(|depth| {
        let current = depth.get();
        if current >= MAX_NATIVE_NESTING {
            return Err(vm.new_recursion_error(format!(
                "maximum nesting depth ({MAX_NATIVE_NESTING}) exceeded {what}"
            )));
        }
        depth.set(current + 1);
        Ok(Level(()))
    })
}

/// [`enter`], charging `cycles` when the level is nested inside another: a
/// chain of iterators (`map(abs, map(abs, …))` 1,000 deep) steps through
/// every level natively on each `next`, even once exhausted, and a `for`
/// over it was charged as one step (the metering fuzzer, #47: ~270 ns per
/// cycle). The outermost level is the operation the code itself performed,
/// charged where it is written.
#[inline]
fn enter_charging_nested(what: &str, cycles: u64, vm: &VirtualMachine) -> PyResult<Level> {
    let level = enter(what, vm)?;
    if depth() > 1 {
        crate::meter::charge::charge_if_executing(cycles, vm)?;
    }
    Ok(level)
}

/// Cycles per nested step of a call or a binding made natively inside
/// another (see [`enter_charging_nested`]).
pub const NESTED_STEP_CYCLES: u64 = 1;

/// Cycles per nested step of an iterator chain: one level of an exhausted
/// chain of `zip`s costs ~45 ns, and draining 72–980-deep chains of them
/// ran at 3.1–3.7× ordinary code at [`NESTED_STEP_CYCLES`] (chains of
/// `map`s at 2.5–3.1×) on a machine where ordinary code runs at 12.7 ns per
/// cycle (the metering fuzzer's seed-5656 run, #47).
pub const NESTED_ITERATION_STEP_CYCLES: u64 = 2;

/// Levels open now (0 between executions).
pub(crate) fn depth() -> u32 {
    DEPTH.with(Cell::get)
}

/// Forgets every open level: a panic that unwound through wrappers without
/// dropping their levels leaves the count behind (the runtime is replaced
/// after a panic, the counter is the thread's).
pub(crate) fn reset() {
    DEPTH.with(|depth| depth.set(0));
}

/// The second argument of `isinstance`/`issubclass`, or the classes an
/// `except` clause accepts: a class or a tuple of them, nested — nests no
/// deeper than [`MAX_NATIVE_NESTING`], and is charged as it is walked
/// (RustPython walks such tuples recursively, guarded only by the remaining
/// stack, and checks every class it finds). Each tuple costs
/// [`CLASS_INFO_LEVEL_CYCLES`] beyond the outermost and each class in them
/// [`CLASS_INFO_ITEM_CYCLES`], past the first [`FREE_CLASS_INFO_ITEMS`]
/// classes (`isinstance(x, (int, float))` stays free). The charge is made
/// before each tuple's walk, so a nest that ends in `RecursionError` has
/// paid for every level it reached: a 50,000-deep nest caught in a loop
/// bought ~450 ns per cycle when only a walk that succeeded was charged.
pub(crate) fn check_class_info(class_info: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    struct Walk {
        weight: u64,
        charged: u64,
    }
    impl Walk {
        fn enter_tuple(
            &mut self,
            tuple: &PyTuple,
            outermost: bool,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            let level = if outermost {
                0
            } else {
                CLASS_INFO_LEVEL_CYCLES
            };
            let classes = tuple
                .as_slice()
                .iter()
                .filter(|item| item.downcast_ref::<PyTuple>().is_none())
                .count() as u64;
            self.weight += level + classes * CLASS_INFO_ITEM_CYCLES;
            let due = self
                .weight
                .saturating_sub(FREE_CLASS_INFO_ITEMS * CLASS_INFO_ITEM_CYCLES);
            if due > self.charged {
                crate::meter::charge::charge_if_executing(due - self.charged, vm)?;
                self.charged = due;
            }
            Ok(())
        }
        fn walk(&mut self, tuple: &PyTuple, outermost: bool, vm: &VirtualMachine) -> PyResult<()> {
            let _level = enter("in isinstance/issubclass", vm)?;
            self.enter_tuple(tuple, outermost, vm)?;
            for item in tuple.as_slice() {
                if let Some(inner) = item.downcast_ref::<PyTuple>() {
                    self.walk(inner, false, vm)?;
                }
            }
            Ok(())
        }
    }
    if let Some(tuple) = class_info.downcast_ref::<PyTuple>() {
        Walk {
            weight: 0,
            charged: 0,
        }
        .walk(tuple, true, vm)?;
    }
    Ok(())
}

/// Items of a tuple of classes checked for free (see [`check_class_info`]).
pub const FREE_CLASS_INFO_ITEMS: u64 = 8;

/// Cycles per class a tuple of classes holds: RustPython checks each one
/// through its `__subclasscheck__` lookup, ~150 ns (`issubclass(int, t)`
/// over 50,000 classes ran at ~165 ns per cycle at one cycle an item).
pub const CLASS_INFO_ITEM_CYCLES: u64 = 6;

/// Cycles per nested tuple of classes: a level of the native recursion
/// (~20 ns).
pub const CLASS_INFO_LEVEL_CYCLES: u64 = 1;

// --- The slot wrappers ----------------------------------------------------

type StringifySlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyRef<PyStr>>;
type HashSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyHash>;
type CompareSlot = fn(
    &PyObject,
    &PyObject,
    PyComparisonOp,
    &VirtualMachine,
) -> PyResult<Either<PyObjectRef, PyComparisonValue>>;
type IterNextSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyIterReturn>;
type CallSlot = fn(&PyObject, FuncArgs, &VirtualMachine) -> PyResult;
type DescrGetSlot =
    fn(&PyObject, Option<&PyObject>, Option<&PyObject>, &VirtualMachine) -> PyResult;

/// Wrappers per slot kind: distinct original functions it can hold.
const POOL: usize = 128;

/// One slot kind: its wrappers and the originals they call.
struct Pool<F: 'static> {
    /// Wrapper `i` calls `originals[i]`.
    originals: [OnceLock<F>; POOL],
    wrappers: [F; POOL],
    /// Addresses of the originals assigned so far, by wrapper index.
    assigned: Mutex<Vec<usize>>,
}

macro_rules! indices {
    ($callback:ident!($($args:tt)*)) => {
        $callback! { $($args)* [
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
            61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89
            90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113
            114 115 116 117 118 119 120 121 122 123 124 125 126 127
        ] }
    };
}

macro_rules! pool {
    ($name:ident: $slot:ty = $wrapper:ident [$($i:literal)*]) => {
        static $name: Pool<$slot> = Pool {
            originals: [const { OnceLock::new() }; POOL],
            wrappers: [$($wrapper::<$i>),*],
            assigned: Mutex::new(Vec::new()),
        };
    };
}

macro_rules! original {
    ($pool:ident, $i:ident) => {
        *$pool.originals[$i]
            .get()
            .expect("a wrapper is installed only after its original is recorded")
    };
}

fn repr_wrapper<const I: usize>(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    let _level = enter("while getting the repr of an object", vm)?;
    original!(REPR, I)(obj, vm)
}

fn str_wrapper<const I: usize>(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyRef<PyStr>> {
    let _level = enter("while getting the str of an object", vm)?;
    original!(STR, I)(obj, vm)
}

fn hash_wrapper<const I: usize>(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    let _level = enter("while hashing", vm)?;
    original!(HASH, I)(obj, vm)
}

fn compare_wrapper<const I: usize>(
    a: &PyObject,
    b: &PyObject,
    op: PyComparisonOp,
    vm: &VirtualMachine,
) -> PyResult<Either<PyObjectRef, PyComparisonValue>> {
    let _level = enter("in comparison", vm)?;
    original!(COMPARE, I)(a, b, op, vm)
}

fn iternext_wrapper<const I: usize>(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyIterReturn> {
    let _level = enter_charging_nested("while iterating", NESTED_ITERATION_STEP_CYCLES, vm)?;
    original!(ITERNEXT, I)(obj, vm)
}

fn call_wrapper<const I: usize>(obj: &PyObject, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let _level = enter_charging_nested("while calling an object", NESTED_STEP_CYCLES, vm)?;
    original!(CALL, I)(obj, args, vm)
}

fn descr_get_wrapper<const I: usize>(
    descriptor: &PyObject,
    instance: Option<&PyObject>,
    owner: Option<&PyObject>,
    vm: &VirtualMachine,
) -> PyResult {
    let _level = enter_charging_nested("while binding a descriptor", NESTED_STEP_CYCLES, vm)?;
    original!(DESCR_GET, I)(descriptor, instance, owner, vm)
}

indices!(pool!(REPR: StringifySlot = repr_wrapper));
indices!(pool!(STR: StringifySlot = str_wrapper));
indices!(pool!(HASH: HashSlot = hash_wrapper));
indices!(pool!(COMPARE: CompareSlot = compare_wrapper));
indices!(pool!(ITERNEXT: IterNextSlot = iternext_wrapper));
indices!(pool!(CALL: CallSlot = call_wrapper));
indices!(pool!(DESCR_GET: DescrGetSlot = descr_get_wrapper));

impl<F: Copy + 'static> Pool<F> {
    /// The wrapper that calls `original` (an address of a slot function),
    /// assigning one the first time; `None` if `original` is a wrapper of
    /// this pool already (a second install on the thread).
    fn wrapper_for(&'static self, original: F, address: usize) -> Option<F>
    where
        F: FnAddress,
    {
        if self.wrappers.iter().any(|w| w.address() == address) {
            return None;
        }
        let mut assigned = self.assigned.lock().expect("pool lock");
        let index = match assigned.iter().position(|&a| a == address) {
            Some(index) => index,
            None => {
                assert!(
                    assigned.len() < POOL,
                    "nesting: more than {POOL} distinct slot functions of one kind; enlarge POOL"
                );
                assigned.push(address);
                assigned.len() - 1
            }
        };
        let _ = self.originals[index].set(original);
        Some(self.wrappers[index])
    }
}

/// The address of a slot function (to compare them).
trait FnAddress {
    fn address(&self) -> usize;
}

macro_rules! fn_address {
    ($($slot:ty),*) => {$(
        impl FnAddress for $slot {
            fn address(&self) -> usize {
                *self as usize
            }
        }
    )*};
}
fn_address!(
    StringifySlot,
    HashSlot,
    CompareSlot,
    IterNextSlot,
    CallSlot,
    DescrGetSlot
);

/// The slot kinds wrapped here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotKind {
    Repr,
    Str,
    Hash,
    Compare,
    IterNext,
    Call,
    DescrGet,
}

/// Types whose slot of `kind` cannot reach another object's slot of any
/// kind: numbers, text, the iterators over built-in containers, functions
/// and descriptors (whose calls push a Python frame, bounded by the
/// recursion limit), types and modules. A slot a type shares with `object`
/// (identity hash and comparison, the default `repr`) is a leaf too; see
/// [`is_leaf`].
fn leaf_types(kind: SlotKind) -> &'static [&'static str] {
    match kind {
        SlotKind::Repr | SlotKind::Str => &[
            "int",
            "bool",
            "float",
            "complex",
            "str",
            "bytes",
            "bytearray",
            "NoneType",
            "ellipsis",
            "NotImplementedType",
            "range",
            "type",
            "function",
            "builtin_function_or_method",
            "method_descriptor",
            "classmethod_descriptor",
            "wrapper_descriptor",
            "member_descriptor",
            "getset_descriptor",
            "module",
            "code",
            "generator",
        ],
        // A frozenset's hash is computed from the hashes its table stores.
        SlotKind::Hash => &[
            "int",
            "bool",
            "float",
            "complex",
            "str",
            "bytes",
            "NoneType",
            "ellipsis",
            "NotImplementedType",
            "frozenset",
            "range",
            "type",
            "code",
        ],
        SlotKind::Compare => &[
            "int",
            "bool",
            "float",
            "complex",
            "str",
            "bytes",
            "bytearray",
            "NoneType",
            "range",
            "type",
            "code",
        ],
        // Iterators over built-in containers hand out what they hold; a
        // generator resumes a frame (counted by the recursion limit);
        // `metered_iterator` is the VM's own `for`-loop iterator, whose
        // inner iterator's slot counts.
        SlotKind::IterNext => &[
            "list_iterator",
            "list_reverseiterator",
            "tuple_iterator",
            "str_iterator",
            "bytes_iterator",
            "bytearray_iterator",
            "range_iterator",
            "longrange_iterator",
            "set_iterator",
            "dict_keyiterator",
            "dict_valueiterator",
            "dict_itemiterator",
            "dict_reversekeyiterator",
            "dict_reversevalueiterator",
            "dict_reverseitemiterator",
            "generator",
            "metered_iterator",
        ],
        // Calls that run a frame (functions, bound methods, class
        // instantiation) or a native directly.
        SlotKind::Call => &[
            "function",
            "method",
            "builtin_function_or_method",
            "method_descriptor",
            "classmethod_descriptor",
            "wrapper_descriptor",
            "method-wrapper",
            "type",
            // The VM's stand-ins for `int`, `list`, …: they construct the
            // real type (whose iteration of the argument counts).
            "builtin_type",
        ],
        SlotKind::DescrGet => &[
            "function",
            "method",
            "method_descriptor",
            "classmethod_descriptor",
            "wrapper_descriptor",
            "member_descriptor",
            "getset_descriptor",
            "super",
        ],
    }
}

/// Is `class`'s slot of `kind` (at `address`) a leaf?
fn is_leaf(class: &PyType, kind: SlotKind, address: usize, object_address: Option<usize>) -> bool {
    // `str` shares one generic function between `object` and the
    // exceptions, whose `__str__` formats their argument: decided by type.
    (kind != SlotKind::Str && object_address == Some(address))
        || leaf_types(kind).contains(&&*class.name())
}

/// Wraps the non-leaf slots of this thread's built-in types (idempotent).
/// Run after every other slot wrapper ([`crate::meter::slots`],
/// [`crate::meter::int_hash`]) so the count encloses their charges.
pub(crate) fn install(vm: &VirtualMachine) {
    let object = vm.ctx.types.object_type;
    for class in crate::meter::natives::inventory::builtin_types(vm) {
        wrap_type(&class, object, vm);
        wrap_str_method(&class, vm);
    }
}

/// `str(x)` calls the `__str__` its type's namespace holds, not the `str`
/// slot (RustPython 0.6): an exception's formats its argument with `str`
/// again. Each non-leaf type's own native `__str__` is replaced by one that
/// counts a level and calls it.
fn wrap_str_method(class: &PyTypeRef, vm: &VirtualMachine) {
    let name = vm.ctx.intern_str("__str__");
    if leaf_types(SlotKind::Str).contains(&&*class.name()) {
        return;
    }
    let Some(original) = class.attributes.get(name) else {
        return;
    };
    if !matches!(
        crate::meter::natives::inventory::entry_kind(&original, vm),
        EntryKind::Method | EntryKind::SlotWrapper
    ) {
        // Already ours (a second install), or not a native.
        return;
    }
    let typ: &'static Py<PyType> = Box::leak(Box::new(class.clone()));
    let native = crate::meter::natives::install::heap_def(
        "__str__",
        move |vm: &VirtualMachine, args: FuncArgs, _callee: Callee| -> PyResult {
            let _level = enter("while getting the str of an object", vm)?;
            original.call(args, vm)
        },
        PyMethodFlags::METHOD,
        vm,
    );
    class.set_attr(name, native.build_method(typ, vm).into());
}

/// Wraps `class`'s non-leaf slots: a built-in type, or a static type the VM
/// makes itself.
pub(crate) fn wrap_type(class: &PyType, object: &PyType, _vm: &VirtualMachine) {
    macro_rules! wrap {
        ($kind:expr, $slot:ident, $pool:ident) => {
            if let Some(current) = class.slots.$slot.load() {
                let address = current.address();
                let object_address = object.slots.$slot.load().map(|f| f.address());
                if !is_leaf(class, $kind, address, object_address) {
                    if let Some(wrapper) = $pool.wrapper_for(current, address) {
                        class.slots.$slot.store(Some(wrapper));
                    }
                }
            }
        };
    }
    wrap!(SlotKind::Repr, repr, REPR);
    wrap!(SlotKind::Str, str, STR);
    wrap!(SlotKind::Hash, hash, HASH);
    wrap!(SlotKind::Compare, richcompare, COMPARE);
    wrap!(SlotKind::IterNext, iternext, ITERNEXT);
    wrap!(SlotKind::Call, call, CALL);
    wrap!(SlotKind::DescrGet, descr_get, DESCR_GET);
}

/// Is `class`'s slot of `kind` counted (for tests and the docs)?
#[cfg(test)]
pub(crate) fn is_counted(class: &PyType, kind: SlotKind) -> bool {
    fn in_pool<F: FnAddress + 'static>(pool: &'static Pool<F>, f: Option<F>) -> bool {
        f.is_some_and(|f| pool.wrappers.iter().any(|w| w.address() == f.address()))
    }
    match kind {
        SlotKind::Repr => in_pool(&REPR, class.slots.repr.load()),
        SlotKind::Str => in_pool(&STR, class.slots.str.load()),
        SlotKind::Hash => in_pool(&HASH, class.slots.hash.load()),
        SlotKind::Compare => in_pool(&COMPARE, class.slots.richcompare.load()),
        SlotKind::IterNext => in_pool(&ITERNEXT, class.slots.iternext.load()),
        SlotKind::Call => in_pool(&CALL, class.slots.call.load()),
        SlotKind::DescrGet => in_pool(&DESCR_GET, class.slots.descr_get.load()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustpython_vm::AsObject;

    fn with_vm<R>(f: impl FnOnce(&VirtualMachine) -> R) -> R {
        let interpreter = rustpython_vm::Interpreter::without_stdlib(Default::default());
        interpreter.enter(|vm| {
            install(vm);
            f(vm)
        })
    }

    fn type_named(name: &str, vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        crate::meter::natives::inventory::builtin_types(vm)
            .into_iter()
            .find(|t| &*t.name() == name)
            .unwrap_or_else(|| panic!("type {name}"))
    }

    #[test]
    fn the_recursing_slots_are_counted_and_the_hot_leaves_are_not() {
        with_vm(|vm| {
            for (name, kind) in [
                ("tuple", SlotKind::Hash),
                ("tuple", SlotKind::Compare),
                ("tuple", SlotKind::Repr),
                ("list", SlotKind::Compare),
                ("list", SlotKind::Repr),
                ("dict", SlotKind::Repr),
                ("frozenset", SlotKind::Compare),
                ("frozenset", SlotKind::Repr),
                ("BaseException", SlotKind::Str),
                ("BaseException", SlotKind::Repr),
                ("ValueError", SlotKind::Str),
                ("KeyError", SlotKind::Str),
                ("zip", SlotKind::IterNext),
                ("map", SlotKind::IterNext),
                ("filter", SlotKind::IterNext),
                ("enumerate", SlotKind::IterNext),
                ("callable_iterator", SlotKind::IterNext),
                ("staticmethod", SlotKind::Call),
                ("classmethod", SlotKind::DescrGet),
                ("slice", SlotKind::Repr),
                ("dict_keys", SlotKind::Repr),
            ] {
                assert!(
                    is_counted(&type_named(name, vm), kind),
                    "{name} {kind:?} is not counted"
                );
            }
            for (name, kind) in [
                ("int", SlotKind::Hash),
                ("str", SlotKind::Hash),
                ("str", SlotKind::Compare),
                ("int", SlotKind::Compare),
                ("int", SlotKind::Repr),
                ("object", SlotKind::Hash),
                ("object", SlotKind::Compare),
                ("list_iterator", SlotKind::IterNext),
                ("range_iterator", SlotKind::IterNext),
                ("function", SlotKind::Call),
                ("frozenset", SlotKind::Hash),
            ] {
                assert!(
                    !is_counted(&type_named(name, vm), kind),
                    "{name} {kind:?} is counted"
                );
            }
        });
    }

    #[test]
    fn installing_twice_changes_nothing() {
        with_vm(|vm| {
            let tuple = type_named("tuple", vm);
            let before = tuple.slots.hash.load().map(|f| f.address());
            install(vm);
            assert_eq!(tuple.slots.hash.load().map(|f| f.address()), before);
        });
    }

    #[test]
    fn the_bound_raises_recursion_error_and_the_count_returns_to_zero() {
        with_vm(|vm| {
            let scope = vm.new_scope_with_builtins();
            let deep = vm
                .run_block_expr(
                    scope.clone(),
                    "(lambda: [x := (), [x := (x,) for _ in range(5000)], x][2])()",
                )
                .expect("builds");
            let error = deep.as_object().hash(vm).expect_err("too deep");
            assert!(error.class().is(vm.ctx.exceptions.recursion_error));
            assert_eq!(depth(), 0);
            let shallow = vm
                .run_block_expr(
                    scope,
                    "(lambda: [x := (), [x := (x,) for _ in range(990)], x][2])()",
                )
                .expect("builds");
            shallow.as_object().hash(vm).expect("within the bound");
            assert_eq!(depth(), 0);
        });
    }
}
