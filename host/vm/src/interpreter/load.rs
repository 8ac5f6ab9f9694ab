//! Loading an actor module: running its body once per interpreter, under a
//! budget of its own, and freezing what it defined.
//!
//! A module body defines classes and functions, and runs the decorators and
//! static expressions written at module and class level (`@only_owner`,
//! `@dataclass`, `T = TypeVar("T")`). The result is cached and shared by
//! every later call on the node, so loading must neither depend on nor leak
//! into any one execution:
//!
//! - it runs under its own meter of [`LOAD_CYCLES`] and memory budget of
//!   [`LOAD_MEMORY_BYTES`] (the execution that happens to load first — a cold node, a nested
//!   `pvm_host.call` — is charged nothing for it; a module that does not
//!   load within the budget fails the same way on every node, at deploy);
//! - it sees no chain: a [`LoadHost`] refuses every host call, and context
//!   reads see block 0 and the zero address;
//! - what it produced must be immutable ([`freeze`]): every value reachable
//!   from the module's globals is a constant, a tuple or frozenset of them,
//!   a function, a class, a module or an instance of a VM library class that
//!   forbids mutation (enum members). Everything reached is recorded, and
//!   while an execution runs, attribute assignment on those classes,
//!   functions and modules is refused ([`install_freeze`]) — so a call on a
//!   warm node sees exactly what a cold node loads.

use std::cell::RefCell;
use std::collections::HashSet;

use rustpython_vm::builtins::{
    PyBaseException, PyBytes, PyDict, PyFrozenSet, PyFunction, PyInt, PyList, PyModule, PySet,
    PyStr, PyTuple, PyType,
};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::{Address, ErrorKind, Hash, TimerQuote, TimerRequest};

use crate::host_api::exec::{ExecState, Frame, HostSlot, Invoke, EXEC, HOST};
use crate::host_api::host::{
    ActorRecord, BlockInfo, CheckpointId, Cost, Host, HostCall, HostFailure,
};
use crate::meter::{Abort, Meter};

/// Cycles a module body may spend while loading (decorators, dataclass and
/// enum set-up, static expressions).
pub const LOAD_CYCLES: u64 = 2_000_000;

/// Runs `load` (a module load, [`crate::interpreter::load`]) under an execution state
/// of its own: a meter of `cycles`, a memory budget of
/// [`LOAD_MEMORY_BYTES`] in place of the execution's, a
/// host that refuses everything. Whatever execution is in progress on the
/// thread is set aside and restored unchanged. Returns the load's result,
/// or the abort that stopped it.
pub(crate) fn run_load<R>(
    invoke: Invoke,
    cycles: u64,
    load: impl FnOnce() -> R,
) -> Result<R, Abort> {
    crate::host_api::exec::begin_epoch();
    let outer = EXEC.with(|cell| cell.borrow_mut().take());
    let code_cache = outer
        .as_ref()
        .map(|state| state.code_cache.clone())
        .unwrap_or_default();
    let outer_meter = crate::meter::charge::replace(Some(Meter {
        cycles_limit: cycles,
        cells_limit: 0,
        ..Meter::default()
    }));
    EXEC.with(|cell| {
        *cell.borrow_mut() = Some(ExecState {
            frames: vec![Frame {
                actor: Address::ZERO,
                caller: Address::ZERO,
                value: 0,
            }],
            events: Vec::new(),
            fire: None,
            code_cache,
            block: BlockInfo::default(),
            tx_sender: Address::ZERO,
            invoke,
        })
    });
    let suspended = crate::meter::alloc::SuspendedBudget::start();
    let budget = crate::meter::alloc::MemoryBudget::start(LOAD_MEMORY_BYTES);
    let mut host = LoadHost;
    let result = crate::interpreter::identity_hash::in_load_scope(|| {
        HOST.set(HostSlot { host: &mut host }, load)
    });
    drop(budget);
    drop(suspended);
    EXEC.with(|cell| std::mem::replace(&mut *cell.borrow_mut(), outer))
        .expect("the load state is in place");
    let meter = crate::meter::charge::replace(outer_meter).expect("the load's meter is in place");
    match meter.abort {
        Some(abort) => Err(abort),
        None => Ok(result),
    }
}

/// Bytes a module load may allocate (net).
pub const LOAD_MEMORY_BYTES: u64 = 16 * 1024 * 1024;

/// The host of a module load: no chain is reachable.
pub(crate) struct LoadHost;

fn refused<T>() -> HostCall<T> {
    HostCall::rejected(
        HostFailure::new(
            ErrorKind::Forbidden,
            "module-level code runs once per node, outside any call: the chain is not reachable from it",
        ),
        Cost::default(),
    )
}

impl Host for LoadHost {
    fn block(&self) -> BlockInfo {
        BlockInfo::default()
    }
    fn tx_sender(&self) -> Address {
        Address::ZERO
    }
    fn call_value(&self) -> u128 {
        0
    }
    fn release_escrow(&mut self, _: &Address) -> HostCall<()> {
        refused()
    }
    fn actor_record(&mut self, _: &Address) -> HostCall<Option<ActorRecord>> {
        refused()
    }
    fn load_code(&mut self, _: &Hash) -> Option<String> {
        None
    }
    fn storage_get(&mut self, _: &Address, _: &[u8]) -> HostCall<Option<Vec<u8>>> {
        refused()
    }
    fn storage_set(&mut self, _: &Address, _: &[u8], _: &[u8]) -> HostCall<()> {
        refused()
    }
    fn storage_delete(&mut self, _: &Address, _: &[u8]) -> HostCall<()> {
        refused()
    }
    fn storage_next_key(
        &mut self,
        _: &Address,
        _: &[u8],
        _: Option<&[u8]>,
    ) -> HostCall<Option<Vec<u8>>> {
        refused()
    }
    fn balance(&mut self, _: &Address) -> HostCall<u128> {
        refused()
    }
    fn transfer(&mut self, _: &Address, _: &Address, _: u128) -> HostCall<()> {
        refused()
    }
    fn emit(&mut self, _: &Address, _: &str, _: &[u8]) -> HostCall<()> {
        refused()
    }
    fn checkpoint(&mut self) -> CheckpointId {
        CheckpointId(0)
    }
    fn commit(&mut self, _: CheckpointId) {}
    fn revert(&mut self, _: CheckpointId) {}
    fn schedule_timer(&mut self, _: &Address, _: bool, _: TimerRequest) -> HostCall<Hash> {
        refused()
    }
    fn extend_timer(&mut self, _: &Address, _: &Hash, _: u64) -> HostCall<()> {
        refused()
    }
    fn cancel_timer(&mut self, _: &Address, _: &Hash) -> HostCall<()> {
        refused()
    }
    fn revoke_timer_payments(&mut self, _: &Address) -> HostCall<()> {
        refused()
    }

    fn timer_quote(&mut self, _: timerhost_types::QuoteRequest) -> HostCall<TimerQuote> {
        refused()
    }
    fn dead_letters_size(&mut self, _: &Address) -> HostCall<u64> {
        refused()
    }
    fn dead_letters(&mut self, _: &Address) -> HostCall<Vec<timerhost_types::Value>> {
        refused()
    }
    fn retry_dead_letter(
        &mut self,
        _: &Address,
        _: bool,
        _: &Hash,
        _: Option<u64>,
    ) -> HostCall<Hash> {
        refused()
    }
    fn drop_dead_letter(&mut self, _: &Address, _: &Hash) -> HostCall<()> {
        refused()
    }
}

thread_local! {
    /// Addresses of the classes, functions and modules loaded on this
    /// thread's interpreter (they live as long as it: nothing is unloaded,
    /// so an address is never reused).
    static FROZEN: RefCell<HashSet<usize>> = RefCell::new(HashSet::new());
}

fn address(obj: &PyObject) -> usize {
    obj as *const PyObject as usize
}

/// Is `obj` something a module load produced (and so shared by every call)?
pub(crate) fn is_frozen(obj: &PyObject) -> bool {
    FROZEN.with(|frozen| frozen.borrow().contains(&address(obj)))
}

/// Records objects the interpreter itself made (its modules) as frozen.
pub(crate) fn freeze_objects<'a>(objects: impl IntoIterator<Item = &'a PyObjectRef>) {
    FROZEN.with(|frozen| {
        frozen
            .borrow_mut()
            .extend(objects.into_iter().map(|obj| address(obj)))
    });
}

/// Why a loaded module is refused: the path to a mutable value.
#[derive(Debug)]
pub(crate) struct MutableValue {
    pub(crate) path: String,
    pub(crate) kind: String,
    pub(crate) nonlocal: bool,
    /// A reason of its own, said instead of the general rule.
    pub(crate) reason: Option<String>,
}

impl std::fmt::Display for MutableValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(reason) = &self.reason {
            write!(f, "{}: {reason}", self.path)
        } else if self.nonlocal {
            write!(
                f,
                "{} rebinds a variable of a closure made at module level (nonlocal): that variable would be shared by every call on a node; keep state in self.storage",
                self.path
            )
        } else {
            write!(
                f,
                "{} is a {}: a value made at module or class level is shared by every call on a node, so it must be a constant (int, str, bytes, tuple, frozenset), a function or class, or a list, dict, set or instance of your classes (each call sees those as the load left them); create it inside a method or keep it in self.storage",
                self.path, self.kind
            )
        }
    }
}

/// What a load may leave in its module: only immutable values (the VM's
/// library modules, shared by every actor), or also lists, dicts, sets,
/// bytearrays and instances, reset after every invocation of the actor
/// module that made them ([`crate::interpreter::constants`]).
pub(crate) enum Mutables {
    Refused,
    Reset(crate::interpreter::constants::ModuleId),
    /// Count the values the store guards protect, record nothing (the
    /// module may be loaded again, see `Runtime::actor_class`).
    Probe,
}

/// Walks everything reachable from `globals`, records it as frozen and
/// returns the first value that may not be shared; under
/// [`Mutables::Reset`] registers the mutable values it reached.
/// `nonlocal_names`: the variables some function of the module rebinds
/// with `nonlocal`.
pub(crate) fn freeze(
    globals: &PyDict,
    nonlocal_names: &[String],
    mutables: Mutables,
    vm: &VirtualMachine,
) -> Result<usize, MutableValue> {
    let mut walk = Walk {
        seen: HashSet::new(),
        nonlocal_names,
        resettable: (!matches!(mutables, Mutables::Refused)).then(Vec::new),
        vm,
    };
    for (name, value) in globals.items_vec() {
        let Some(name) = name.downcast_ref::<PyStr>().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with("__") || name.starts_with("_pvm") {
            continue;
        }
        walk.visit(&value, name)?;
    }
    // What the store guards protect: exact lists and dicts (RustPython's
    // specialised stores write into them directly) and bytearrays (their
    // store slot is not wrapped). Sets, subclasses and instances are reached
    // through their methods or slots.
    let found = walk.resettable.as_ref().map_or(0, |values| {
        values
            .iter()
            .filter(|value| {
                value.class().is(vm.ctx.types.list_type)
                    || value.class().is(vm.ctx.types.dict_type)
                    || value
                        .downcast_ref::<rustpython_vm::builtins::PyByteArray>()
                        .is_some()
            })
            .count()
    });
    if matches!(mutables, Mutables::Probe) {
        return Ok(found);
    }
    FROZEN.with(|frozen| frozen.borrow_mut().extend(walk.seen));
    if let (Mutables::Reset(module), Some(resettable)) = (mutables, walk.resettable) {
        crate::interpreter::constants::register(module, resettable, vm).map_err(|error| {
            MutableValue {
                path: "the module".into(),
                kind: crate::host_api::exec::exception_message(&error, vm),
                nonlocal: false,
                reason: None,
            }
        })?;
    }
    Ok(found)
}

struct Walk<'a> {
    seen: HashSet<usize>,
    nonlocal_names: &'a [String],
    /// Mutable values reached (`None`: they are refused).
    resettable: Option<Vec<PyObjectRef>>,
    vm: &'a VirtualMachine,
}

impl Walk<'_> {
    fn visit(&mut self, obj: &PyObjectRef, path: &str) -> Result<(), MutableValue> {
        let vm = self.vm;
        if vm.is_none(obj)
            || obj.downcast_ref::<PyInt>().is_some()
            || obj.downcast_ref::<PyStr>().is_some()
            || obj.downcast_ref::<PyBytes>().is_some()
            || obj.class().is(vm.ctx.types.float_type)
            || obj.is(&vm.ctx.ellipsis)
            || obj.is(&vm.ctx.not_implemented)
        {
            return Ok(());
        }
        // Already frozen: a library module's objects (checked when it loaded).
        if !self.seen.insert(address(obj)) || is_frozen(obj) {
            return Ok(());
        }
        // `object()` sentinels have no attributes to change.
        if obj.class().is(vm.ctx.types.object_type) {
            return Ok(());
        }
        if let Some(tuple) = obj.downcast_ref_if_exact::<PyTuple>(vm) {
            for (index, item) in tuple.iter().enumerate() {
                self.visit(item, &format!("{path}[{index}]"))?;
            }
            return Ok(());
        }
        if let Some(set) = obj.downcast_ref_if_exact::<PyFrozenSet>(vm) {
            for item in set.elements() {
                self.visit(&item, &format!("an item of {path}"))?;
            }
            return Ok(());
        }
        if obj.downcast_ref::<PyModule>().is_some()
            || obj
                .downcast_ref::<crate::interpreter::builtin_types::MeteredType>()
                .is_some()
            || obj.class().is(vm.ctx.types.builtin_function_or_method_type)
        {
            return Ok(());
        }
        if let Some(function) = obj.downcast_ref::<PyFunction>() {
            return self.visit_function(obj, function, path);
        }
        if let Some(class) = obj.downcast_ref::<PyType>() {
            // An actor module's classes: their attributes may be set in a
            // call (`Order.next_id += 1`) and are put back after it.
            if let Some(resettable) = self.resettable.as_mut() {
                if class
                    .slots
                    .flags
                    .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
                {
                    resettable.push(obj.clone());
                }
            }
            return self.visit_class(class, path);
        }
        let class = obj.class();
        if class.is(vm.ctx.types.staticmethod_type) || class.is(vm.ctx.types.classmethod_type) {
            if let Ok(function) = obj.get_attr("__func__", vm) {
                self.visit(&function, path)?;
            }
            return Ok(());
        }
        if class.is(vm.ctx.types.property_type) {
            for accessor in ["fget", "fset", "fdel"] {
                if let Ok(function) = obj.get_attr(accessor, vm) {
                    self.visit(&function, &format!("{path}.{accessor}"))?;
                }
            }
            return Ok(());
        }
        // Cells, and the descriptors `__slots__` makes (they hold no value).
        if obj.class().is(vm.ctx.types.cell_type)
            || obj.class().is(vm.ctx.types.member_descriptor_type)
        {
            return Ok(());
        }
        // Lists, dicts, sets, bytearrays and instances made by an actor
        // module (also frozen dataclasses and enum members: their library
        // `__init__` can be called again) are reset after every call.
        if self.resettable.is_some()
            && obj.downcast_ref::<PyBaseException>().is_none()
            && crate::interpreter::constants::is_resettable(obj, vm)
        {
            return self.visit_resettable(obj, path);
        }
        // Instances of classes that refuse mutation (the VM library's enum
        // members, frozen dataclasses and named tuples mark themselves).
        // Their contents are still walked: a named tuple or an enum member
        // holding a list would be shared state all the same. Entries named
        // `_pvm_…` are the library's per-execution bookkeeping.
        if class
            .get_attr(vm.ctx.intern_str("_pvm_immutable"))
            .is_some_and(|marker| marker.is(&vm.ctx.true_value))
        {
            if let Some(tuple) = obj.downcast_ref::<PyTuple>() {
                for (index, item) in tuple.iter().enumerate() {
                    self.visit(item, &format!("{path}[{index}]"))?;
                }
            }
            if let Some(dict) = obj.dict() {
                for (key, value) in dict.items_vec() {
                    let key = key.str(vm).map(|k| k.to_string()).unwrap_or_default();
                    if !key.starts_with("_pvm") {
                        self.visit(&value, &format!("{path}.{key}"))?;
                    }
                }
            }
            return Ok(());
        }
        if obj.downcast_ref::<PyBaseException>().is_some() {
            return Err(MutableValue {
                path: path.to_owned(),
                kind: "exception instance".into(),
                nonlocal: false,
                reason: None,
            });
        }
        Err(MutableValue {
            path: path.to_owned(),
            kind: class.name().to_string(),
            nonlocal: false,
            reason: None,
        })
    }

    /// A list, dict, set, bytearray or instance made at load: registered,
    /// and its contents walked (keys of dicts and sets must compare
    /// natively: restoring one may compare colliding keys).
    fn visit_resettable(&mut self, obj: &PyObjectRef, path: &str) -> Result<(), MutableValue> {
        let vm = self.vm;
        if let Some(resettable) = self.resettable.as_mut() {
            resettable.push(obj.clone());
        }
        if let Some(list) = obj.downcast_ref::<PyList>() {
            let items = list.borrow_vec().to_vec();
            for (index, item) in items.iter().enumerate() {
                self.visit(item, &format!("{path}[{index}]"))?;
            }
        } else if let Some(dict) = obj.downcast_ref::<PyDict>() {
            for (key, value) in dict.items_vec() {
                let label = key_label(&key, vm);
                self.check_key(&key, path, &label)?;
                self.visit(&key, &format!("a key of {path}"))?;
                self.visit(&value, &format!("{path}[{label}]"))?;
            }
        } else if let Some(set) = obj.downcast_ref::<PySet>() {
            for item in set.elements() {
                let label = key_label(&item, vm);
                self.check_key(&item, path, &label)?;
                self.visit(&item, &format!("an item of {path}"))?;
            }
        }
        if let Some(attributes) = obj.dict() {
            for (key, value) in attributes.items_vec() {
                let key = key.str(vm).map(|k| k.to_string()).unwrap_or_default();
                if !key.starts_with("_pvm") {
                    self.visit(&value, &format!("{path}.{key}"))?;
                }
            }
        }
        let class: PyObjectRef = obj.class().to_owned().into();
        self.visit(&class, &format!("type({path})"))
    }

    /// Refuses a key of a dict or set made at load whose equality is
    /// Python code: restoring the dict after a call may compare it.
    fn check_key(&self, key: &PyObjectRef, path: &str, label: &str) -> Result<(), MutableValue> {
        if compares_natively(key, self.vm, 0) {
            return Ok(());
        }
        Err(MutableValue {
            path: format!("{path} (key {label})"),
            kind: String::new(),
            nonlocal: false,
            reason: Some(format!(
                "a key of class {}, which defines __eq__ in Python, in a dict or set made at load: such keys must compare without running code (int, str, bytes, tuples of them, enum members, objects compared by identity), because the VM restores the dict after every call; use a tuple or str key",
                key.class().name()
            )),
        })
    }

    fn visit_function(
        &mut self,
        obj: &PyObjectRef,
        function: &PyFunction,
        path: &str,
    ) -> Result<(), MutableValue> {
        let vm = self.vm;
        let _ = function;
        let freevars: Vec<String> = obj
            .get_attr("__code__", vm)
            .and_then(|code| code.get_attr("co_freevars", vm))
            .ok()
            .and_then(|names| {
                names.downcast_ref::<PyTuple>().map(|names| {
                    names
                        .iter()
                        .filter_map(|n| {
                            n.downcast_ref::<PyStr>()
                                .and_then(|n| n.to_str())
                                .map(str::to_owned)
                        })
                        .collect()
                })
            })
            .unwrap_or_default();
        if let Some(closure) = obj
            .get_attr("__closure__", vm)
            .ok()
            .filter(|c| !vm.is_none(c))
        {
            for (index, cell) in closure
                .downcast_ref::<PyTuple>()
                .map(|t| t.as_slice().to_vec())
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                let name = freevars.get(index).cloned().unwrap_or_default();
                if self.nonlocal_names.contains(&name) {
                    return Err(MutableValue {
                        path: format!("{path} (variable {name})"),
                        kind: String::new(),
                        nonlocal: true,
                        reason: None,
                    });
                }
                // `__class__` (for `super()`) holds the class;
                // `__classdict__` is the namespace annotation functions read,
                // out of actors' reach.
                if name == "__classdict__" {
                    continue;
                }
                if let Ok(contents) = cell.get_attr("cell_contents", vm) {
                    self.visit(&contents, &format!("{path}'s captured {name}"))?;
                }
            }
        }
        for attribute in ["__defaults__", "__kwdefaults__", "__dict__"] {
            if let Ok(value) = obj.get_attr(attribute, vm) {
                if let Some(dict) = value.downcast_ref::<PyDict>() {
                    for (key, item) in dict.items_vec() {
                        let key = key.str(vm).map(|k| k.to_string()).unwrap_or_default();
                        self.visit(&item, &format!("{path}.{key}"))?;
                    }
                } else {
                    self.visit(&value, &format!("{path} defaults"))?;
                }
            }
        }
        Ok(())
    }

    fn visit_class(&mut self, class: &PyType, path: &str) -> Result<(), MutableValue> {
        if !class
            .slots
            .flags
            .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
        {
            return Ok(());
        }
        let entries: Vec<(String, PyObjectRef)> = class
            .attributes
            .as_dict()
            .map(|dict| dict.items_vec())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, value)| {
                let name = name.downcast_ref::<PyStr>()?.to_str()?.to_owned();
                Some((name, value))
            })
            .collect();
        for (name, value) in entries {
            // VM-private and sunder entries (`_pvm_…`, `_member_map_`) are
            // the library's own and out of actors' reach; of the dunders
            // only code is walked (`__dict__`, `__weakref__` are
            // descriptors, `__dataclass_fields__` is library bookkeeping).
            let private = name.starts_with("_pvm")
                || (name.starts_with('_') && name.ends_with('_') && !name.starts_with("__"));
            let dunder = name.starts_with("__") && name.ends_with("__");
            if private {
                continue;
            }
            if dunder {
                let code_like = value.downcast_ref::<PyFunction>().is_some()
                    || value.class().is(self.vm.ctx.types.staticmethod_type)
                    || value.class().is(self.vm.ctx.types.classmethod_type)
                    || value.class().is(self.vm.ctx.types.property_type);
                if !code_like {
                    continue;
                }
            }
            self.visit(&value, &format!("{path}.{name}"))?;
        }
        Ok(())
    }
}

/// A short label for a key in paths (`FEES['gold']`).
fn key_label(key: &PyObjectRef, vm: &VirtualMachine) -> String {
    if key.downcast_ref::<PyStr>().is_some() || key.downcast_ref::<PyInt>().is_some() {
        let text = key.repr(vm).map(|r| r.to_string()).unwrap_or_default();
        if text.len() <= 40 {
            return text;
        }
    }
    format!("<{}>", key.class().name())
}

/// Does comparing `key` for equality run no Python code? Builtin scalars,
/// tuples and frozensets of such keys, and instances whose `__eq__` is
/// `object`'s (identity: plain objects, enum members).
fn compares_natively(key: &PyObjectRef, vm: &VirtualMachine, depth: usize) -> bool {
    if depth > 32 {
        return false;
    }
    if vm.is_none(key)
        || key.downcast_ref::<PyInt>().is_some()
        || key.downcast_ref::<PyStr>().is_some()
        || key.downcast_ref::<PyBytes>().is_some()
        || key.class().is(vm.ctx.types.float_type)
    {
        let heap = key
            .class()
            .slots
            .flags
            .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE);
        return !heap || eq_is_identity_or_native(key, vm);
    }
    let items = key
        .downcast_ref::<PyTuple>()
        .map(|tuple| tuple.as_slice().to_vec())
        .or_else(|| key.downcast_ref::<PyFrozenSet>().map(|set| set.elements()));
    if let Some(items) = items {
        return eq_is_identity_or_native(key, vm)
            && items
                .iter()
                .all(|item| compares_natively(item, vm, depth + 1));
    }
    if key.downcast_ref::<PyType>().is_some() {
        return true;
    }
    eq_is_identity_or_native(key, vm)
}

/// Is `obj`'s `__eq__` a native (its class or a builtin base did not define
/// it in Python)?
fn eq_is_identity_or_native(obj: &PyObjectRef, vm: &VirtualMachine) -> bool {
    obj.class()
        .get_attr(vm.ctx.intern_str("__eq__"))
        .is_none_or(|eq| eq.downcast_ref::<PyFunction>().is_none())
}

type SetAttro = fn(
    &PyObject,
    &rustpython_vm::Py<PyStr>,
    rustpython_vm::function::PySetterValue,
    &VirtualMachine,
) -> PyResult<()>;

macro_rules! frozen_setattr {
    ($name:ident, $original:ident) => {
        static $original: std::sync::OnceLock<SetAttro> = std::sync::OnceLock::new();
        fn $name(
            obj: &PyObject,
            name: &rustpython_vm::Py<PyStr>,
            value: rustpython_vm::function::PySetterValue,
            vm: &VirtualMachine,
        ) -> PyResult<()> {
            if crate::meter::charge::is_executing() && is_frozen(obj) {
                // A class an actor module made: the write is undone after
                // the call ([`crate::interpreter::constants`]).
                if obj.downcast_ref::<PyType>().is_some() && crate::interpreter::constants::is_registered(obj) {
                    crate::interpreter::constants::before_write(obj, vm)?;
                    let original = $original.get().expect("wrapped slot has its original");
                    return original(obj, name, value, vm);
                }
                return Err(vm.new_attribute_error(format!(
                    "cannot set '{}' on {}: functions and modules defined at load, and the VM's library classes, are shared by every call; keep state in self.storage or on instances",
                    name.to_str().unwrap_or("?"),
                    obj.class().name()
                )));
            }
            let original = $original.get().expect("wrapped slot has its original");
            original(obj, name, value, vm)
        }
    };
}

frozen_setattr!(type_setattr, TYPE_SETATTR);

/// `_pvm_set_class_attr(cls, name, value)` (`value` absent: delete), for the
/// library modules' metaclasses and class decorators: `type.__setattr__`
/// with the frozen-class rule, without RustPython's check that the slot it
/// calls is the one `type` had when its descriptors were made (the freeze
/// wrapper replaced it).
pub(crate) fn set_class_attribute(
    class: PyObjectRef,
    name: rustpython_vm::builtins::PyStrRef,
    value: rustpython_vm::function::OptionalArg<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if class.downcast_ref::<PyType>().is_none() {
        return Err(vm.new_type_error("_pvm_set_class_attr needs a class"));
    }
    let value = match value {
        rustpython_vm::function::OptionalArg::Present(value) => {
            rustpython_vm::function::PySetterValue::Assign(value)
        }
        rustpython_vm::function::OptionalArg::Missing => {
            rustpython_vm::function::PySetterValue::Delete
        }
    };
    type_setattr(&class, &name, value, vm)
}
frozen_setattr!(function_setattr, FUNCTION_SETATTR);
frozen_setattr!(module_setattr, MODULE_SETATTR);

/// Refuses attribute assignment on loaded classes, functions and modules
/// while an execution runs. Idempotent per thread.
pub(crate) fn install_freeze(vm: &VirtualMachine) {
    macro_rules! wrap {
        ($class:expr, $original:ident, $wrapper:ident) => {
            let class = $class;
            if let Some(current) = class.slots.setattro.load() {
                if current as usize != $wrapper as SetAttro as usize {
                    let _ = $original.set(current);
                    class.slots.setattro.store(Some($wrapper));
                }
            }
        };
    }
    let types = &vm.ctx.types;
    wrap!(types.type_type, TYPE_SETATTR, type_setattr);
    wrap!(types.function_type, FUNCTION_SETATTR, function_setattr);
    wrap!(types.module_type, MODULE_SETATTR, module_setattr);
}
