//! Values made at load — module- and class-level lists, dicts, sets,
//! bytearrays and instances of plain classes — and how every invocation
//! sees them as the load left them.
//!
//! A module is loaded once per node and shared by every call (see
//! [`crate::interpreter::load`]), so a mutable value it made would carry one call's
//! writes into the next: a warm node and a cold one would disagree. The
//! rule is **reset**: whatever an invocation of an actor writes into such a
//! value is undone when the invocation returns (or fails), so every
//! invocation starts from the load-time contents. A memoising decorator's
//! cache therefore works within a call and starts empty in the next one.
//!
//! How:
//!
//! - At load, the freeze walk hands every mutable value it reached to
//!   [`register`], which records a copy of its contents (taken with the
//!   types' own natives, so keys are never hashed or compared again) and
//!   immediately writes that copy back, so a freshly loaded value and a
//!   restored one have the same layout (the same allocations ahead of the
//!   next write on a cold node and a warm one).
//! - Every path that changes one of these values calls [`before_write`]
//!   first: the mutating natives of `list`, `dict`, `set` and `bytearray`
//!   (`natives::install`), the subscript stores the instrumenter guards
//!   (`_pvm_mut`, because RustPython's specialised store instructions write
//!   into exact lists and dicts without any slot), augmented assignment
//!   (`_pvm_augop`), and attribute writes on instances (their class's
//!   `setattro` slot, wrapped here when a class first has a shared
//!   instance). The first write in an invocation charges what restoring the
//!   value will cost, then marks it.
//! - When an invocation ends, its module's marked values are restored. A
//!   nested call into the *same* module ([`enter`]) sets the caller's
//!   marked values aside and restores them when it returns, so the callee
//!   sees load-time values too and the caller gets its own back.
//!
//! Restoring runs no Python: lists and bytearrays are replaced wholesale,
//! dicts and sets are refilled from their copies with the stored hashes,
//! and the keys of a registered dict or set must compare natively (the
//! freeze walk refuses keys whose class defines `__eq__` in Python, which
//! a hash collision would call).

use std::cell::{Cell, RefCell};

use rustc_hash::{FxHashMap, FxHashSet};
use rustpython_vm::builtins::{PyByteArray, PyDict, PyDictRef, PyList, PySet, PyType};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyResult, VirtualMachine};

use crate::rules::costs;

/// Which loaded module a value belongs to (assigned per load).
pub(crate) type ModuleId = u32;

/// The contents of a registered value, as the load left them.
enum Contents {
    List(Vec<PyObjectRef>),
    /// A copy of the dict (hashes kept).
    Dict(PyDictRef),
    /// A copy of the set (hashes kept).
    Set(PyObjectRef),
    ByteArray(Vec<u8>),
    /// An instance's attributes: a copy of its `__dict__` and the values of
    /// its `__slots__` (descriptor, value or unset).
    Attributes {
        dict: Option<PyDictRef>,
        slots: Vec<(PyObjectRef, Option<PyObjectRef>)>,
    },
    /// A class's own attributes (`Order.next_id += 1` in a call).
    Class(Vec<(PyObjectRef, PyObjectRef)>),
}

impl Contents {
    /// Elements a restore copies (the charge's measure).
    fn elements(&self) -> u64 {
        match self {
            Contents::List(items) => items.len() as u64,
            Contents::Dict(dict) => dict.__len__() as u64,
            Contents::Set(set) => set
                .downcast_ref::<PySet>()
                .map_or(0, |set| set.elements().len() as u64),
            Contents::ByteArray(bytes) => bytes.len() as u64 / costs::size::BYTES_PER_CYCLE,
            Contents::Attributes { dict, slots } => {
                dict.as_ref().map_or(0, |dict| dict.__len__() as u64) + slots.len() as u64
            }
            Contents::Class(attributes) => attributes.len() as u64,
        }
    }

    /// Cycles a restore of these contents is charged (plus the same again
    /// for setting aside what an outer invocation wrote, see [`enter`]).
    fn restore_cycles(&self) -> u64 {
        let per_element = match self {
            Contents::List(_) | Contents::ByteArray(_) => costs::size::PER_ELEMENT,
            _ => costs::size::PER_ELEMENT_BUILT,
        };
        costs::size::RESTORE_BASE + self.elements() * per_element
    }
}

/// A registered value.
struct Shared {
    object: PyObjectRef,
    module: ModuleId,
    /// One entry per facet (a dict subclass instance has items and
    /// attributes).
    load_time: Vec<Contents>,
}

impl Shared {
    /// Cycles restoring this value costs ([`Contents::restore_cycles`] of
    /// every facet).
    fn restore_cycles(&self) -> u64 {
        self.load_time.iter().map(Contents::restore_cycles).sum()
    }
}

/// Values an invocation level set aside (see [`enter`]).
struct SetAside {
    module: ModuleId,
    values: Vec<(usize, Vec<Contents>)>,
}

thread_local! {
    /// Every registered value of this thread's interpreter, by address
    /// (they live as long as the interpreter: nothing is unloaded).
    static SHARED: RefCell<FxHashMap<usize, Shared>> = RefCell::new(FxHashMap::default());
    /// How many values are registered: the hot paths test this first.
    static ANY_SHARED: Cell<bool> = const { Cell::new(false) };
    /// Values written in the invocations in progress, by address.
    static MARKED: RefCell<FxHashSet<usize>> = RefCell::new(FxHashSet::default());
    /// What outer invocations of a module wrote, set aside while a nested
    /// invocation of the same module runs.
    static SET_ASIDE: RefCell<Vec<SetAside>> = const { RefCell::new(Vec::new()) };
    /// The original `setattro` slot of each class whose instances are
    /// registered (by class address).
    static SETATTRO: RefCell<FxHashMap<usize, SetAttro>> = RefCell::new(FxHashMap::default());
    static NEXT_MODULE: Cell<ModuleId> = const { Cell::new(0) };
}

fn address(obj: &PyObject) -> usize {
    obj as *const PyObject as usize
}

/// A fresh module id for a load.
pub(crate) fn new_module() -> ModuleId {
    NEXT_MODULE.with(|next| {
        let id = next.get();
        next.set(id.wrapping_add(1));
        id
    })
}

/// Is `obj` a registered value (a class an actor module made, whose
/// attributes a call may then set)?
pub(crate) fn is_registered(obj: &PyObject) -> bool {
    ANY_SHARED.get() && SHARED.with(|shared| shared.borrow().contains_key(&address(obj)))
}

/// Can `obj` be registered (a value whose writes [`before_write`] sees)?
/// Lists, dicts, sets and bytearrays (and their subclasses), and instances
/// with a `__dict__` or `__slots__`.
pub(crate) fn is_resettable(obj: &PyObject, vm: &VirtualMachine) -> bool {
    obj.downcast_ref::<PyList>().is_some()
        || obj.downcast_ref::<PyDict>().is_some()
        || obj.downcast_ref::<PySet>().is_some()
        || obj.downcast_ref::<PyByteArray>().is_some()
        || instance_facet(obj, vm)
}

/// Does `obj` carry attributes of its own (a heap class's instance)?
fn instance_facet(obj: &PyObject, vm: &VirtualMachine) -> bool {
    let class = obj.class();
    if !class
        .slots
        .flags
        .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
    {
        return false;
    }
    obj.dict().is_some() || !slot_descriptors(class, vm).is_empty()
}

/// The member descriptors of every `__slots__` entry in `class`'s MRO.
fn slot_descriptors(class: &rustpython_vm::Py<PyType>, vm: &VirtualMachine) -> Vec<PyObjectRef> {
    let mut found = Vec::new();
    for base in class.mro.read().iter() {
        let Some(slots) = base.get_direct_attr(vm.ctx.intern_str("__slots__")) else {
            continue;
        };
        let names: Vec<PyObjectRef> = if slots
            .downcast_ref::<rustpython_vm::builtins::PyStr>()
            .is_some()
        {
            vec![slots]
        } else {
            slots
                .try_to_value::<Vec<PyObjectRef>>(vm)
                .unwrap_or_default()
        };
        for name in names {
            let Some(name) = name
                .downcast_ref::<rustpython_vm::builtins::PyStr>()
                .and_then(|name| name.to_str())
                .map(str::to_owned)
            else {
                continue;
            };
            if name == "__dict__" || name == "__weakref__" {
                continue;
            }
            if let Some(descriptor) = base.get_direct_attr(vm.ctx.intern_str(name.as_str())) {
                if descriptor.class().is(vm.ctx.types.member_descriptor_type) {
                    found.push(descriptor);
                }
            }
        }
    }
    found
}

/// The contents of `obj`, one per facet. Runs outside any execution (the
/// types' natives are called unmetered).
fn snapshot(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<Contents>> {
    let mut facets = Vec::new();
    if let Some(class) = obj.downcast_ref::<PyType>() {
        facets.push(Contents::Class(class_attributes(class)));
        return Ok(facets);
    }
    if let Some(list) = obj.downcast_ref::<PyList>() {
        facets.push(Contents::List(list.borrow_vec().to_vec()));
    } else if let Some(dict) = obj.downcast_ref::<PyDict>() {
        facets.push(Contents::Dict(copy_dict(dict, vm)));
    } else if obj.downcast_ref::<PySet>().is_some() {
        let copy = vm
            .ctx
            .types
            .set_type
            .as_object()
            .get_attr("copy", vm)?
            .call((obj.clone(),), vm)?;
        facets.push(Contents::Set(copy));
    } else if let Some(bytes) = obj.downcast_ref::<PyByteArray>() {
        facets.push(Contents::ByteArray(bytes.borrow_buf().to_vec()));
    }
    if instance_facet(obj, vm) {
        let dict = obj.dict().map(|dict| copy_dict(&dict, vm));
        let mut slots = Vec::new();
        for descriptor in slot_descriptors(obj.class(), vm) {
            let value = vm
                .call_method(
                    &descriptor,
                    "__get__",
                    (obj.clone(), obj.class().to_owned()),
                )
                .ok();
            slots.push((descriptor, value));
        }
        facets.push(Contents::Attributes { dict, slots });
    }
    Ok(facets)
}

fn copy_dict(dict: &PyDict, vm: &VirtualMachine) -> PyDictRef {
    rustpython_vm::PyRef::new_ref(dict.copy(), vm.ctx.types.dict_type.to_owned(), None)
}

/// Writes `contents` back into `obj`. Runs outside any execution.
fn write_back(obj: &PyObjectRef, contents: &[Contents], vm: &VirtualMachine) -> PyResult<()> {
    for facet in contents {
        match facet {
            Contents::List(items) => {
                if let Some(list) = obj.downcast_ref::<PyList>() {
                    let old = std::mem::replace(&mut *list.borrow_vec_mut(), items.clone());
                    drop(old);
                }
            }
            Contents::Dict(copy) => {
                if let Some(dict) = obj.downcast_ref::<PyDict>() {
                    refill_dict(dict, copy, vm)?;
                }
            }
            Contents::Set(copy) => {
                let set_type = vm.ctx.types.set_type.as_object();
                set_type.get_attr("clear", vm)?.call((obj.clone(),), vm)?;
                set_type
                    .get_attr("update", vm)?
                    .call((obj.clone(), copy.clone()), vm)?;
            }
            Contents::ByteArray(bytes) => {
                if let Some(array) = obj.downcast_ref::<PyByteArray>() {
                    let old = std::mem::replace(&mut *array.borrow_buf_mut(), bytes.clone());
                    drop(old);
                }
            }
            Contents::Class(attributes) => restore_class(obj, attributes, vm)?,
            Contents::Attributes { dict, slots } => {
                if let (Some(copy), Some(own)) = (dict, obj.dict()) {
                    refill_dict(&own, copy, vm)?;
                }
                for (descriptor, value) in slots {
                    match value {
                        Some(value) => {
                            vm.call_method(descriptor, "__set__", (obj.clone(), value.clone()))?;
                        }
                        None => {
                            let _ = vm.call_method(descriptor, "__delete__", (obj.clone(),));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// A class's own attributes, names as `str` objects.
fn class_attributes(class: &PyType) -> Vec<(PyObjectRef, PyObjectRef)> {
    class
        .attributes
        .as_dict()
        .map(|dict| dict.items_vec())
        .unwrap_or_default()
}

/// Puts a class's attributes back: names added since are deleted, changed
/// ones set back, through `type`'s attribute slot (which keeps the
/// interpreter's attribute caches right).
fn restore_class(
    class: &PyObjectRef,
    attributes: &[(PyObjectRef, PyObjectRef)],
    vm: &VirtualMachine,
) -> PyResult<()> {
    let Some(typ) = class.downcast_ref::<PyType>() else {
        return Ok(());
    };
    let current = class_attributes(typ);
    for (name, _) in &current {
        if !attributes.iter().any(|(known, _)| known.is(name)) {
            let name = name
                .clone()
                .try_into_value::<rustpython_vm::builtins::PyStrRef>(vm)?;
            class.del_attr(&name, vm)?;
        }
    }
    for (name, value) in attributes {
        let unchanged = current
            .iter()
            .any(|(known, now)| known.is(name) && now.is(value));
        if !unchanged {
            let name = name
                .clone()
                .try_into_value::<rustpython_vm::builtins::PyStrRef>(vm)?;
            class.set_attr(&name, value.clone(), vm)?;
        }
    }
    Ok(())
}

/// Empties `dict` and inserts `copy`'s entries with their stored hashes.
fn refill_dict(dict: &PyDict, copy: &PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
    dict.clear();
    dict.merge_object(copy.clone().into(), vm)
}

/// Runs `f` with no execution in progress and no memory budget counting:
/// snapshots and restores are the VM's bookkeeping, charged by
/// [`before_write`] and [`enter`] before they happen.
fn unmetered<R>(f: impl FnOnce() -> R) -> R {
    let suspended_exec = crate::host_api::exec::EXEC.with(|cell| cell.borrow_mut().take());
    let budget = crate::meter::alloc::SuspendedBudget::start();
    let result = f();
    drop(budget);
    crate::host_api::exec::EXEC.with(|cell| *cell.borrow_mut() = suspended_exec);
    result
}

/// Registers the mutable values a module load made (called at the end of
/// the load): records their contents and writes them back at once (see the
/// module docs). Wraps the `setattro` slot of the classes of instances.
pub(crate) fn register(
    module: ModuleId,
    objects: Vec<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let mut entries = Vec::with_capacity(objects.len());
    unmetered(|| -> PyResult<()> {
        for object in objects {
            let load_time = snapshot(&object, vm)?;
            write_back(&object, &load_time, vm)?;
            if load_time
                .iter()
                .any(|facet| matches!(facet, Contents::Attributes { .. }))
            {
                watch_attribute_writes(object.class());
            }
            entries.push(Shared {
                object,
                module,
                load_time,
            });
        }
        if entries.is_empty() {
            return Ok(());
        }
        SHARED.with(|shared| {
            let mut shared = shared.borrow_mut();
            for entry in entries.drain(..) {
                shared.insert(address(&entry.object), entry);
            }
        });
        ANY_SHARED.set(true);
        Ok(())
    })
}

/// Before `obj` changes: if it is a registered value not yet written in the
/// invocations in progress, charge its restore and mark it.
#[inline]
pub(crate) fn before_write(obj: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    if !ANY_SHARED.get() {
        return Ok(());
    }
    mark(obj, vm)
}

#[cold]
fn mark(obj: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    let key = address(obj);
    let Some(cycles) = SHARED.with(|shared| shared.borrow().get(&key).map(Shared::restore_cycles))
    else {
        return Ok(());
    };
    if !crate::meter::charge::is_executing() || MARKED.with(|marked| marked.borrow().contains(&key))
    {
        return Ok(());
    }
    crate::meter::charge::charge(cycles, 0, vm)?;
    MARKED.with(|marked| marked.borrow_mut().insert(key));
    Ok(())
}

/// The marked values of `module`, in a fixed order (restores run no Python,
/// but keep them independent of hash-set iteration all the same).
fn marked_of(module: ModuleId) -> Vec<usize> {
    let mut mine: Vec<usize> = MARKED.with(|marked| {
        SHARED.with(|shared| {
            let shared = shared.borrow();
            marked
                .borrow()
                .iter()
                .copied()
                .filter(|key| shared.get(key).is_some_and(|entry| entry.module == module))
                .collect()
        })
    });
    mine.sort_unstable();
    mine
}

fn unmark(keys: &[usize]) {
    MARKED.with(|marked| {
        let mut marked = marked.borrow_mut();
        for key in keys {
            marked.remove(key);
        }
    });
}

/// Runs `f` on the registered value of each `(key, item)` with its item,
/// outside any execution ([`unmetered`]).
fn for_each_registered<T>(
    items: impl IntoIterator<Item = (usize, T)>,
    mut f: impl FnMut(&Shared, T) -> PyResult<()>,
) -> PyResult<()> {
    SHARED.with(|shared| {
        let shared = shared.borrow();
        unmetered(|| {
            for (key, item) in items {
                if let Some(entry) = shared.get(&key) {
                    f(entry, item)?;
                }
            }
            Ok(())
        })
    })
}

/// Restores each value in `keys` to its load-time contents.
fn restore(keys: &[usize], vm: &VirtualMachine) -> PyResult<()> {
    for_each_registered(keys.iter().map(|key| (*key, ())), |entry, ()| {
        write_back(&entry.object, &entry.load_time, vm)
    })
}

/// An invocation of `module` begins. If outer invocations of the same
/// module wrote its values, their contents are set aside (charged first)
/// and the values restored, so this invocation sees them as loaded.
pub(crate) fn enter(module: ModuleId, vm: &VirtualMachine) -> PyResult<()> {
    let mut values = Vec::new();
    if ANY_SHARED.get() {
        let keys = marked_of(module);
        if !keys.is_empty() {
            let cycles: u64 = SHARED.with(|shared| {
                let shared = shared.borrow();
                keys.iter()
                    .filter_map(|key| shared.get(key))
                    .map(Shared::restore_cycles)
                    .sum()
            });
            crate::meter::charge::charge(cycles, 0, vm)?;
            unmark(&keys);
            for_each_registered(keys.iter().map(|key| (*key, *key)), |entry, key| {
                values.push((key, snapshot(&entry.object, vm)?));
                Ok(())
            })?;
            restore(&keys, vm)?;
        }
    }
    SET_ASIDE.with(|stack| stack.borrow_mut().push(SetAside { module, values }));
    Ok(())
}

/// The invocation [`enter`] began has returned or failed: what it wrote is
/// restored to load-time contents, and what the outer invocations had
/// written is put back.
pub(crate) fn leave(vm: &VirtualMachine) -> PyResult<()> {
    let Some(level) = SET_ASIDE.with(|stack| stack.borrow_mut().pop()) else {
        return Ok(());
    };
    if !ANY_SHARED.get() {
        return Ok(());
    }
    let written = marked_of(level.module);
    unmark(&written);
    restore(&written, vm)?;
    if level.values.is_empty() {
        return Ok(());
    }
    for_each_registered(
        level.values.iter().map(|(key, contents)| (*key, contents)),
        |entry, contents| write_back(&entry.object, contents, vm),
    )?;
    MARKED.with(|marked| {
        marked
            .borrow_mut()
            .extend(level.values.iter().map(|(key, _)| *key))
    });
    Ok(())
}

/// At the end of an execution: every value still marked is restored and
/// every set-aside level dropped (normally [`leave`] has done it all; this
/// is the backstop for an execution that stopped between the two).
///
/// The bookkeeping collections are dropped, not just emptied: what one
/// execution grew them to must not spare the next one an allocation (peak
/// memory is part of the outcome).
pub(crate) fn reset_all(vm: &VirtualMachine) {
    drop(SET_ASIDE.with(|stack| std::mem::take(&mut *stack.borrow_mut())));
    let marked = MARKED.with(|marked| std::mem::take(&mut *marked.borrow_mut()));
    if marked.is_empty() {
        return;
    }
    let mut keys: Vec<usize> = marked.into_iter().collect();
    keys.sort_unstable();
    let _ = restore(&keys, vm);
}

type SetAttro = fn(
    &PyObject,
    &rustpython_vm::Py<rustpython_vm::builtins::PyStr>,
    rustpython_vm::function::PySetterValue,
    &VirtualMachine,
) -> PyResult<()>;

/// Routes attribute writes on `class`'s instances through [`before_write`]:
/// its `setattro` slot is wrapped (once), and specialised attribute stores
/// compiled against the class are invalidated so none skips the slot.
fn watch_attribute_writes(class: &rustpython_vm::Py<PyType>) {
    let key = address(class.as_object());
    let Some(current) = class.slots.setattro.load() else {
        return;
    };
    if current as usize == watched_setattro as SetAttro as usize {
        return;
    }
    SETATTRO.with(|originals| originals.borrow_mut().insert(key, current));
    class.slots.setattro.store(Some(watched_setattro));
    class.modified();
}

fn watched_setattro(
    obj: &PyObject,
    name: &rustpython_vm::Py<rustpython_vm::builtins::PyStr>,
    value: rustpython_vm::function::PySetterValue,
    vm: &VirtualMachine,
) -> PyResult<()> {
    before_write(obj, vm)?;
    // The original of the nearest watched class in the MRO (a subclass
    // made later inherits the wrapper).
    let original = SETATTRO.with(|originals| {
        let originals = originals.borrow();
        obj.class()
            .mro
            .read()
            .iter()
            .find_map(|class| originals.get(&address(class.as_object())).copied())
    });
    match original {
        Some(original) => original(obj, name, value, vm),
        None => Err(vm.new_runtime_error("attribute write on an unwatched class")),
    }
}
