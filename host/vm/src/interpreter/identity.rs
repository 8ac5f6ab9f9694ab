//! Address-free identity: default `repr`s, hashes and classes that do not
//! depend on where objects live in memory, so set order and printed values
//! are the same on every node.

use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// Default `repr`/`str` of objects, functions, methods, generators and
/// modules embed memory addresses (`<X object at 0x7f…>`), and their default
/// hash is address-based, so set order would vary between runs. Type slots
/// live in the process-wide RustPython context and actor classes inherit
/// from `object`, so overriding the slots once makes every such repr
/// address-free and makes those objects unhashable (as dict keys or set
/// members their order would otherwise depend on addresses). `None` gets a
/// constant hash, as in CPython 3.12.
fn address_free_repr(
    obj: &rustpython_vm::PyObject,
    vm: &VirtualMachine,
) -> PyResult<rustpython_vm::builtins::PyStrRef> {
    // The name is looked up and formatted into a new string, through the
    // `repr` machinery (~0.5 µs; `"%s" % ([E()],)` and `f"{map(…)}"` ran at
    // ~3× ordinary code uncharged, the metering fuzzer, #47).
    crate::meter::charge::charge_if_executing(ADDRESS_FREE_REPR_CYCLES, vm)?;
    Ok(vm.ctx.new_str(format!("<{} object>", obj.class().name())))
}

/// What [`address_free_repr`] charges.
const ADDRESS_FREE_REPR_CYCLES: u64 = 12;

fn unhashable(
    obj: &rustpython_vm::PyObject,
    vm: &VirtualMachine,
) -> PyResult<rustpython_vm::common::hash::PyHash> {
    Err(vm.new_type_error(format!(
        "unhashable type: '{}' (its hash would depend on its memory address)",
        obj.class().name()
    )))
}

/// `__build_class__` for actors: a builtin type named as a base
/// (`class Money(int)`) is the real type behind its
/// [`crate::interpreter::builtin_types::MeteredType`]; and classes whose `repr` or hash
/// would come from `object` (where they depend on the memory address) get
/// the address-free repr and no hash. A `__repr__`/`__hash__` the class or a
/// base defines — the actor's own, or a builtin base's, all deterministic —
/// stays.
pub(crate) fn build_class_native(
    real: &PyObjectRef,
    mut args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    for arg in args.args.iter_mut().skip(2) {
        *arg = crate::interpreter::builtin_types::real_type_of(arg);
    }
    // The new class's MRO is at most itself plus its bases' MROs; building
    // it (and inheriting slots along it) is native work that grows with it.
    let mro_entries: u64 = 1 + args
        .args
        .iter()
        .skip(2)
        .map(|base| {
            base.downcast_ref::<rustpython_vm::builtins::PyType>()
                .map_or(1, |base| base.mro.read().len() as u64 + 1)
        })
        .sum::<u64>();
    crate::meter::charge::charge_if_executing(
        crate::rules::costs::code::CLASS_CREATION
            + crate::rules::costs::code::CLASS_PER_MRO_ENTRY * mro_entries,
        vm,
    )?;
    let class = real.call(args, vm)?;
    charge_namespace(&class, vm)?;
    finish_class(&class, vm);
    Ok(class)
}

/// Charges what making a class did with its namespace, by its size: every
/// name was copied into the type's attributes and looked up for
/// `__set_name__` and special methods (a class binding 3,000 names, made in
/// a loop, ran at ~330 ns per cycle when one class was charged as one
/// call). Charged after the type is made, which is the first moment the
/// namespace's size is known; the body that bound the names paid at least
/// a cycle a name before, so the work done before this charge is bounded by
/// what was already paid.
fn charge_namespace(class: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    let names: u64 = class
        .downcast_ref::<rustpython_vm::builtins::PyType>()
        .map_or(0, |class| match class.attributes.as_dict() {
            Some(dict) => dict.__len__() as u64,
            None => class.attributes.entries().len() as u64,
        });
    crate::meter::charge::charge_if_executing(
        names.saturating_mul(crate::rules::costs::code::CLASS_PER_NAME),
        vm,
    )
}

/// `_pvm_make_class(name, bases, namespace)`: for the library
/// (`dataclass(slots=True)` remakes its class with `__slots__`): the class
/// `type(name, bases, namespace)` makes, charged and given the address-free
/// identity of every class ([`build_class_native`]).
pub(crate) fn make_class_native(
    name: PyObjectRef,
    bases: PyObjectRef,
    namespace: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let mro_entries = bases
        .downcast_ref::<rustpython_vm::builtins::PyTuple>()
        .map_or(1, |bases| {
            1 + bases
                .iter()
                .map(|base| {
                    base.downcast_ref::<rustpython_vm::builtins::PyType>()
                        .map_or(1, |base| base.mro.read().len() as u64 + 1)
                })
                .sum::<u64>()
        });
    crate::meter::charge::charge_if_executing(
        crate::rules::costs::code::CLASS_CREATION
            + crate::rules::costs::code::CLASS_PER_MRO_ENTRY * mro_entries,
        vm,
    )?;
    let class = vm
        .ctx
        .types
        .type_type
        .as_object()
        .call((name, bases, namespace), vm)?;
    charge_namespace(&class, vm)?;
    finish_class(&class, vm);
    Ok(class)
}

/// Whether a class's comparisons are Python code of its own or of an
/// ancestor's (one of the six comparison methods is a Python function where
/// the MRO finds it): RustPython then gives the class its generic
/// comparison slot, which calls the method.
fn compares_in_python(
    defined_by: &dyn Fn(&str) -> Option<rustpython_vm::PyRef<rustpython_vm::builtins::PyType>>,
    vm: &VirtualMachine,
) -> bool {
    ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]
        .iter()
        .any(|name| {
            defined_by(name)
                .and_then(|owner| owner.get_direct_attr(vm.ctx.intern_str(*name)))
                .is_some_and(|method| {
                    method
                        .downcast_ref::<rustpython_vm::builtins::PyFunction>()
                        .is_some()
                })
        })
}

/// Address-free `repr` and hash for a new class whose own would come from
/// `object`, and its metered identity comparison.
fn finish_class(class: &PyObjectRef, vm: &VirtualMachine) {
    if let Some(class) = class.downcast_ref::<rustpython_vm::builtins::PyType>() {
        let object = vm.ctx.types.object_type;
        let defined_by_object = |name: &str| {
            let name = vm.ctx.intern_str(name);
            std::iter::once(class.to_owned())
                .chain(class.mro_collect())
                .find(|ancestor| ancestor.get_direct_attr(name).is_some())
                .is_none_or(|ancestor| ancestor.is(object))
        };
        if defined_by_object("__repr__") {
            class.slots.repr.store(Some(address_free_repr));
        }
        if defined_by_object("__hash__") {
            class
                .slots
                .hash
                .store(Some(crate::interpreter::identity_hash::identity_hash));
        }
        crate::meter::slots::meter_identity_comparison(class);
        crate::meter::slots::meter_inherited_slots(class);
        let defined_by = |name: &str| {
            let name = vm.ctx.intern_str(name);
            std::iter::once(class.to_owned())
                .chain(class.mro_collect())
                .find(|ancestor| ancestor.get_direct_attr(name).is_some())
        };
        crate::meter::subscripts::meter_subclass_subscripts(class, vm, &defined_by);
        let types = &vm.ctx.types;
        let containers = [
            types.dict_type,
            types.list_type,
            types.tuple_type,
            types.set_type,
            types.frozenset_type,
        ];
        if containers.iter().any(|t| class.fast_issubclass(*t)) {
            crate::meter::slots::meter_subclass_comparison(class);
        } else if compares_in_python(&defined_by, vm) {
            crate::meter::slots::meter_method_comparison(class);
        }
        let formatted = [
            types.str_type,
            types.bytes_type,
            types.bytearray_type,
            types.int_type,
            types.float_type,
        ];
        if containers
            .iter()
            .chain(&formatted)
            .any(|t| class.fast_issubclass(*t))
        {
            crate::meter::slots::meter_subclass_repr(class);
        }
    }
}

type AllocSlot = fn(rustpython_vm::builtins::PyTypeRef, usize, &VirtualMachine) -> PyResult;

/// `object`'s own `alloc` slot (see [`charging_alloc`]).
static OBJECT_ALLOC: std::sync::OnceLock<AllocSlot> = std::sync::OnceLock::new();

/// `object`'s `alloc` slot, charging a class call. RustPython uses the slot
/// only where it specialises a warm `C(…)` (`CALL_ALLOC_AND_ENTER_INIT`:
/// allocate, then enter `__init__` directly, past the `type` call slot that
/// charges every other class call); classes inherit it, and the
/// specialisation requires a class's slot to be `object`'s, so both ways of
/// calling a class cost the same — on a cold node and a warm one.
fn charging_alloc(
    class: rustpython_vm::builtins::PyTypeRef,
    items: usize,
    vm: &VirtualMachine,
) -> PyResult {
    crate::meter::charge::charge_if_executing(
        crate::interpreter::builtin_types::CLASS_CALL_CYCLES,
        vm,
    )?;
    let alloc = OBJECT_ALLOC.get().expect("object's alloc is kept");
    alloc(class, items, vm)
}

/// Installs [`charging_alloc`] as `object`'s `alloc` slot (idempotent).
fn charge_specialised_class_calls(vm: &VirtualMachine) {
    let slots = &vm.ctx.types.object_type.slots;
    if let Some(current) = slots.alloc.load() {
        if current as usize != charging_alloc as AllocSlot as usize {
            let _ = OBJECT_ALLOC.set(current);
        }
    }
    if OBJECT_ALLOC.get().is_some() {
        slots.alloc.store(Some(charging_alloc));
    }
}

/// Overrides the identity slots of the interpreter's builtin types (see
/// [`address_free_repr`]) and moves `%` formatting behind its guard.
pub(crate) fn make_identity_deterministic(vm: &VirtualMachine) {
    use rustpython_vm::common::hash::PyHash;
    use rustpython_vm::PyObject;

    fn none_hash(_: &PyObject, _: &VirtualMachine) -> PyResult<PyHash> {
        Ok(0xFCA86420)
    }
    let types = &vm.ctx.types;
    // Every built-in type still hashing by address (iterators, views,
    // `object()` itself) hashes by its name instead ([`identity_hash`]).
    if let Some(by_address) = types.object_type.slots.hash.load() {
        for class in crate::meter::natives::inventory::builtin_types(vm) {
            if class
                .slots
                .hash
                .load()
                .is_some_and(|hash| hash as usize == by_address as usize)
            {
                class
                    .slots
                    .hash
                    .store(Some(crate::interpreter::identity_hash::identity_hash));
            }
        }
    }
    // The same for `repr`: a built-in type without a `repr` of its own
    // (`map`, `zip`, `filter`, the iterators and views, …) inherited
    // `object`'s, which prints the memory address — `f"{map(abs, [])}"`
    // returned `<map object at 0x39183d0db60>`, a value that differs from
    // node to node (found with the metering fuzzer, #47). Each gets the
    // address-free one.
    if let Some(by_address) = types.object_type.slots.repr.load() {
        for class in crate::meter::natives::inventory::builtin_types(vm) {
            if class
                .slots
                .repr
                .load()
                .is_some_and(|repr| repr as usize == by_address as usize)
            {
                class.slots.repr.store(Some(address_free_repr));
            }
        }
    }
    for class in [
        types.object_type,
        types.function_type,
        types.builtin_function_or_method_type,
        types.bound_method_type,
        types.method_descriptor_type,
        types.generator_type,
        types.module_type,
        types.cell_type,
    ] {
        class.slots.repr.store(Some(address_free_repr));
    }
    for class in [
        types.bound_method_type,
        types.method_descriptor_type,
        types.generator_type,
        types.module_type,
        types.cell_type,
    ] {
        class.slots.hash.store(Some(unhashable));
    }
    types
        .object_type
        .slots
        .hash
        .store(Some(crate::interpreter::identity_hash::identity_hash));
    for class in [types.function_type, types.builtin_function_or_method_type] {
        class
            .slots
            .hash
            .store(Some(crate::interpreter::identity_hash::function_hash));
    }
    types
        .type_type
        .slots
        .hash
        .store(Some(crate::interpreter::identity_hash::type_hash));
    // printf-style formatting (`"%999999999d" % 1`) allocates whatever width
    // the format asks for, inside one instruction: it only runs in the
    // operator guard, after the template is checked.
    crate::meter::guard_natives::take_printf_slots(vm);
    crate::meter::guard_natives::use_cpython_division_messages(vm);
    charge_specialised_class_calls(vm);
    types.none_type.slots.hash.store(Some(none_hash));
}
