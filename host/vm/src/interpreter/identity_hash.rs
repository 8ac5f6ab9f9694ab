//! Deterministic identity hashes: objects of plain classes (no `__eq__` or
//! `__hash__` of their own) as dict keys and set members, the same on every
//! node.
//!
//! CPython hashes such an object by its address, which differs between
//! nodes, so dict order would too. Here:
//!
//! - an instance of a class an actor module defined gets a number the first
//!   time it is hashed: the next of a counter that starts afresh with every
//!   execution and every module load, so the numbers follow the order in
//!   which the program first hashes its objects — the same everywhere. The
//!   number is kept while the object lives in that scope: an execution's
//!   numbers (and the references that keep their objects at one address)
//!   are dropped when it ends; a module load's are kept, because its objects
//!   live on (a set made at load must still find its members). Objects made
//!   at load and first hashed in a call get a number for that call only;
//!   every structure built with it in the call is either the call's own or
//!   restored after it ([`crate::interpreter::constants`]).
//! - objects shared by every module — classes, functions, instances of the
//!   VM library's classes, `object()` sentinels — hash by their (qualified)
//!   name: a number that depends on nothing a node did before. Equal names
//!   only collide, and equality stays identity.

use std::cell::{Cell, RefCell};
use std::thread::LocalKey;

use rustc_hash::FxHashMap;
use rustpython_vm::builtins::{PyStr, PyType};
use rustpython_vm::common::hash::PyHash;
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine};

/// Numbers by object address, with the reference that keeps each object at
/// its address.
type NumberTable = RefCell<FxHashMap<usize, (PyObjectRef, PyHash)>>;

thread_local! {
    /// Numbers given during module loads (kept: their objects live on).
    static LOADED: NumberTable = RefCell::new(FxHashMap::default());
    /// Numbers given during the execution in progress.
    static EXECUTION: NumberTable = RefCell::new(FxHashMap::default());
    /// Is a module load in progress (numbers go to [`LOADED`])?
    static IN_LOAD: Cell<bool> = const { Cell::new(false) };
    /// The counter of the scope in progress.
    static NEXT: Cell<u64> = const { Cell::new(0) };
}

/// An execution begins or ends: its numbers are dropped (a new table, so no
/// execution's allocations depend on an earlier one) and the counter
/// restarts.
pub(crate) fn reset_execution() {
    drop(EXECUTION.with(|table| std::mem::take(&mut *table.borrow_mut())));
    NEXT.set(0);
}

/// Runs `load` (a module load) in a scope of its own: its counter starts at
/// zero and its numbers are kept; whatever execution was in progress gets
/// its counter back afterwards.
pub(crate) fn in_load_scope<R>(load: impl FnOnce() -> R) -> R {
    let outer = (IN_LOAD.replace(true), NEXT.replace(0));
    let result = load();
    IN_LOAD.set(outer.0);
    NEXT.set(outer.1);
    result
}

fn address(obj: &PyObject) -> usize {
    obj as *const PyObject as usize
}

/// Spreads counter values over the hash space (splitmix64's finaliser);
/// never -1, which CPython reserves.
fn spread(counter: u64) -> PyHash {
    let mut z = counter.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    let hash = z as PyHash;
    if hash == -1 {
        -2
    } else {
        hash
    }
}

/// The hash of `name` as a `str` (keyed like every str hash).
fn name_hash(name: &str, vm: &VirtualMachine) -> PyResult<PyHash> {
    vm.ctx.new_str(name).as_object().hash(vm)
}

/// `class.__module__`, if it is a str.
fn module_of(class: &PyType, vm: &VirtualMachine) -> Option<PyRef<PyStr>> {
    class
        .get_attr(vm.ctx.intern_str("__module__"))
        .and_then(|module| module.downcast::<PyStr>().ok())
}

/// Was `class` defined by an actor module (its instances get numbers)?
fn defined_by_actor(class: &PyType, vm: &VirtualMachine) -> bool {
    module_of(class, vm).is_some_and(|module| module.to_str() == Some("actor"))
}

/// The number `table` holds for the object at `key`.
fn known(table: &'static LocalKey<NumberTable>, key: usize) -> Option<PyHash> {
    table.with(|table| table.borrow().get(&key).map(|(_, hash)| *hash))
}

/// The hash slot of classes whose hash would be `object`'s (set when the
/// class is made, [`crate::interpreter::identity`]).
/// What hashing a built-in object by its type's name costs.
const NAME_HASH_CYCLES: u64 = 6;

pub(crate) fn identity_hash(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    let class = obj.class();
    if !defined_by_actor(class, vm) {
        // The name is made into a str and hashed on every call (~0.2 µs:
        // `{map(…)}` ran at ~3.1× ordinary code free, the metering fuzzer,
        // #47).
        crate::meter::charge::charge_if_executing(NAME_HASH_CYCLES, vm)?;
        return name_hash(&class.name(), vm);
    }
    let key = address(obj);
    if let Some(hash) = known(&LOADED, key) {
        return Ok(hash);
    }
    let table = if IN_LOAD.get() {
        &LOADED
    } else if let Some(hash) = known(&EXECUTION, key) {
        return Ok(hash);
    } else {
        &EXECUTION
    };
    let counter = NEXT.get() + 1;
    NEXT.set(counter);
    let hash = spread(counter);
    table.with(|table| table.borrow_mut().insert(key, (obj.to_owned(), hash)));
    Ok(hash)
}

/// The hash of a class: its module and qualified name.
pub(crate) fn type_hash(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    let Some(class) = obj.downcast_ref::<PyType>() else {
        return name_hash("type", vm);
    };
    let module = module_of(class, vm);
    let module = module.as_ref().and_then(|m| m.to_str()).unwrap_or_default();
    name_hash(&format!("{module}.{}", class.name()), vm)
}

/// The hash of a function (Python or native): its qualified name.
pub(crate) fn function_hash(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    let name = obj
        .get_attr("__qualname__", vm)
        .ok()
        .and_then(|n| {
            n.downcast_ref::<PyStr>()
                .and_then(|n| n.to_str().map(str::to_owned))
        })
        .unwrap_or_else(|| obj.class().name().to_string());
    name_hash(&name, vm)
}
