//! The builtin types actors see: `int`, `str`, `bytes`, `bytearray`, `list`,
//! `tuple`, `set`, `frozenset`, `dict` and `type`.
//!
//! Constructing one of these does work that grows with the argument
//! (`list(big)` copies, `tuple(range(10**12))` would never return), so the
//! construction must be charged. RustPython's adaptive interpreter, though,
//! turns a hot call of the exact `tuple` or `str` type into an inline
//! conversion that no type slot sees, and calls `list` through its own
//! constructor fast path. So the names in the actor's builtins are not the
//! types themselves but [`MeteredType`]s: one native object per type that
//!
//! - charges a call the way the guarded conversions always have
//!   ([`crate::meter::builtin_natives`]) and then constructs the real type;
//! - answers `isinstance(x, int)` and `issubclass(C, dict)` for the real type
//!   (`__instancecheck__`/`__subclasscheck__`), compares equal only to
//!   itself, is what `type(3)` returns, and forwards attributes
//!   (`int.from_bytes`, `bytes.fromhex`, `str.lower`), which charge their
//!   own work ([`crate::meter::natives`]), so `sorted(xs, key=str.lower)` pays for
//!   every call;
//! - stands in for the real type as a class base (`class Money(int)`), as a
//!   generic (`list[int]`) and in unions (`int | None`).
//!
//! Classes actors derive from these types are real heap types: their
//! construction is charged by the wrapped `type` call slots
//! ([`install_construction_meter`]) unless the class defines its own
//! `__init__`/`__new__` (whose bodies are metered code).

use std::sync::OnceLock;

use rustpython_vm::builtins::{PyStr, PyType, PyTypeRef};
use rustpython_vm::common::hash::PyHash;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::protocol::{PyMappingMethods, PyNumberMethods};
use rustpython_vm::types::{AsMapping, AsNumber, Callable, GetAttr, Hashable, Representable};
use rustpython_vm::{
    atomic_func, pyclass, AsObject, Py, PyObject, PyObjectRef, PyPayload, PyResult, Traverse,
    VirtualMachine,
};

use crate::meter::builtin_natives::{consuming_builtin, converting_builtin, Walk};
use crate::meter::charge::is_executing;
use crate::meter::swallowed::charge_keys_probe;

/// How constructing a type is charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Construction {
    /// `list`, `tuple`, `set`, `frozenset`, `dict`: walk their argument.
    Consuming,
    /// `int`, `str`, `bytes`, `bytearray`: charged by argument and result size.
    Converting,
    /// `type`: `type(x)` (one argument) only.
    TypeOf,
}

/// Types whose construction is charged, by actor-visible name.
pub(crate) const METERED_TYPES: &[(&str, Construction)] = &[
    ("int", Construction::Converting),
    ("str", Construction::Converting),
    ("bytes", Construction::Converting),
    ("bytearray", Construction::Converting),
    ("list", Construction::Consuming),
    ("tuple", Construction::Consuming),
    ("set", Construction::Consuming),
    ("frozenset", Construction::Consuming),
    ("dict", Construction::Consuming),
    ("type", Construction::TypeOf),
];

/// An actor-visible builtin type (see the module docs).
#[pyclass(module = false, name = "builtin_type", traverse)]
#[derive(Debug, PyPayload)]
pub(crate) struct MeteredType {
    #[pytraverse(skip)]
    real: PyTypeRef,
    #[pytraverse(skip)]
    construction: Construction,
}

#[pyclass(with(Callable, GetAttr, Representable, Hashable, AsMapping, AsNumber))]
impl MeteredType {
    #[pymethod]
    fn __instancecheck__(zelf: &Py<Self>, obj: PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
        if zelf.construction == Construction::TypeOf && obj.downcast_ref::<MeteredType>().is_some()
        {
            return Ok(true);
        }
        obj.is_instance(zelf.real.as_object(), vm)
    }

    #[pymethod]
    fn __subclasscheck__(zelf: &Py<Self>, sub: PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
        real_type_of(&sub).is_subclass(zelf.real.as_object(), vm)
    }
}

/// What `set(x)`/`frozenset(x)` cost beyond the walk every consuming
/// builtin pays: a hash table set up (~0.5 µs more than `list(x)`); `set(d)`
/// of a one-key dict ran at 2–3.2× ordinary code per cycle without it (the
/// metering fuzzer, #47).
const SET_CONSTRUCTION_CYCLES: u64 = 16;

impl Callable for MeteredType {
    type Args = FuncArgs;

    fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        let real = zelf.real.as_object();
        match zelf.construction {
            Construction::Consuming => consuming_builtin(Walk::First, args, vm, |args| {
                if real.is(vm.ctx.types.set_type) || real.is(vm.ctx.types.frozenset_type) {
                    crate::meter::charge::charge(SET_CONSTRUCTION_CYCLES, 0, vm)?;
                }
                if real.is(vm.ctx.types.dict_type) {
                    if let Some(first) = args.args.first() {
                        charge_keys_probe(first, vm)?;
                    }
                }
                construct(real, args, vm)
            }),
            Construction::Converting => {
                let real_ref: PyObjectRef = zelf.real.clone().into();
                converting_builtin(&real_ref, args, vm, |args| construct(real, args, vm))
            }
            Construction::TypeOf => {
                if args.args.len() == 1 && args.kwargs.is_empty() {
                    Ok(visible_class_of(&args.args[0], vm))
                } else {
                    Err(vm.new_type_error(
                        "type() takes one argument in an actor (type(x) is x's class); \
                         create classes with a class statement",
                    ))
                }
            }
        }
    }
}

impl GetAttr for MeteredType {
    fn getattro(zelf: &Py<Self>, name: &Py<PyStr>, vm: &VirtualMachine) -> PyResult {
        // The real type's natives charge their own work (`crate::meter::natives`).
        zelf.real.as_object().get_attr(name, vm)
    }
}

impl Representable for MeteredType {
    fn repr_str(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<String> {
        crate::meter::charge::charge_if_executing(crate::meter::slots::CLASS_REPR_CYCLES, vm)?;
        Ok(format!("<class '{}'>", zelf.real.name()))
    }
}

/// What hashing a stand-in type costs (see its `hash`; found with the
/// metering fuzzer, #47: `Counter` over nested tuples of classes).
const STAND_IN_HASH_CYCLES: u64 = 5;

impl Hashable for MeteredType {
    fn hash(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<PyHash> {
        // By name, not address: set and dict order stay the same everywhere.
        // A str is made and hashed each time (~0.1 µs).
        crate::meter::charge::charge_if_executing(STAND_IN_HASH_CYCLES, vm)?;
        vm.ctx
            .new_str(zelf.real.name().to_string())
            .as_object()
            .hash(vm)
    }
}

impl AsMapping for MeteredType {
    fn as_mapping() -> &'static PyMappingMethods {
        static AS_MAPPING: PyMappingMethods = PyMappingMethods {
            // `list[int]`, `dict[str, int]` in annotations.
            subscript: atomic_func!(|mapping, needle, vm| {
                let zelf = MeteredType::mapping_downcast(mapping);
                vm.call_method(
                    zelf.real.as_object(),
                    "__class_getitem__",
                    (needle.to_owned(),),
                )
            }),
            ..PyMappingMethods::NOT_IMPLEMENTED
        };
        &AS_MAPPING
    }
}

impl AsNumber for MeteredType {
    fn as_number() -> &'static PyNumberMethods {
        static AS_NUMBER: PyNumberMethods = PyNumberMethods {
            // `int | None` in annotations.
            or: Some(|a, b, vm| vm._or(&real_type_of(a), &real_type_of(b))),
            ..PyNumberMethods::NOT_IMPLEMENTED
        };
        &AS_NUMBER
    }
}

/// Constructs `real` through the `type` call slot as RustPython had it
/// (charging is the caller's job). Exact `str` and `int` do all their work
/// in `__new__`, and their `__init__` is `object`'s, which ignores the
/// arguments of a type that overrides `__new__`: for them the type call is
/// `__new__` plus a no-op, so `__new__` is called alone (the type call also
/// copies the arguments and looks `__init__` up: about a third of a
/// metered `str(i)`).
fn construct(real: &PyObject, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    if real.is(vm.ctx.types.str_type.as_object()) || real.is(vm.ctx.types.int_type.as_object()) {
        if let Some(class) = real.downcast_ref::<PyType>() {
            if let Some(new) = class.slots.new.load() {
                return new(class.to_owned(), args, vm);
            }
        }
    }
    let call = ORIGINAL_TYPE_CALL
        .get()
        .expect("install_construction_meter ran");
    call(real, args, vm)
}

/// The real type behind `obj` if it is a [`MeteredType`], else `obj`.
pub(crate) fn real_type_of(obj: &PyObject) -> PyObjectRef {
    match obj.downcast_ref::<MeteredType>() {
        Some(metered) => metered.real.clone().into(),
        None => obj.to_owned(),
    }
}

thread_local! {
    /// This interpreter's metered types (each runtime thread has its own
    /// type objects), for `type(x)`.
    static VISIBLE: std::cell::RefCell<Vec<(PyTypeRef, PyObjectRef)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `type(obj)` as actors see it: the [`MeteredType`] for the builtin types
/// above (and for `type` itself), else the real class.
pub(crate) fn visible_class_of(obj: &PyObject, vm: &VirtualMachine) -> PyObjectRef {
    let class = obj.class();
    let _ = vm;
    VISIBLE.with(|visible| {
        visible
            .borrow()
            .iter()
            .find(|(real, _)| real.is(class))
            .map(|(_, metered)| metered.clone())
            .unwrap_or_else(|| class.to_owned().into())
    })
}

/// Makes the actor-visible builtin types of this interpreter, by name, and
/// puts the real types behind them under the hidden names of
/// [`crate::rules::guards::REAL_TYPES`].
pub(crate) fn make_types(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    use rustpython_vm::class::PyClassImpl;
    let _ = MeteredType::make_static_type();
    let real = vm.builtins.dict();
    let mut made = Vec::new();
    for &(name, construction) in METERED_TYPES {
        let real_type: PyTypeRef = real
            .get_item(name, vm)
            .ok()
            .and_then(|t| t.downcast::<PyType>().ok())
            .unwrap_or_else(|| panic!("builtin type {name} exists"));
        let metered: PyObjectRef = MeteredType {
            real: real_type.clone(),
            construction,
        }
        .into_ref(&vm.ctx)
        .into();
        VISIBLE.with(|visible| {
            visible
                .borrow_mut()
                .push((real_type.clone(), metered.clone()))
        });
        made.push((name, metered));
        if let Some(hidden) = crate::rules::guards::real_type_name(name) {
            made.push((hidden, real_type.into()));
        }
    }
    made
}

type VectorCall =
    fn(&PyObject, Vec<PyObjectRef>, usize, Option<&[PyObjectRef]>, &VirtualMachine) -> PyResult;
type GenericCall = fn(&PyObject, FuncArgs, &VirtualMachine) -> PyResult;

static ORIGINAL_TYPE_CALL: OnceLock<GenericCall> = OnceLock::new();
static ORIGINAL_TYPE_VECTORCALL: OnceLock<VectorCall> = OnceLock::new();

/// How constructing `class` must be charged, if at all: the builtin types
/// above and classes derived from them that inherit their constructor.
fn construction_of(class: &Py<PyType>, vm: &VirtualMachine) -> Option<Construction> {
    let types = &vm.ctx.types;
    let bases: [(&Py<PyType>, Construction); 9] = [
        (types.int_type, Construction::Converting),
        (types.str_type, Construction::Converting),
        (types.bytes_type, Construction::Converting),
        (types.bytearray_type, Construction::Converting),
        (types.list_type, Construction::Consuming),
        (types.tuple_type, Construction::Consuming),
        (types.set_type, Construction::Consuming),
        (types.frozenset_type, Construction::Consuming),
        (types.dict_type, Construction::Consuming),
    ];
    // A class constructs like the builtin base whose constructor slots it
    // inherited unchanged: a Python `__init__`/`__new__` anywhere on the way
    // replaces them (and is metered code itself). Comparing the slots costs
    // the same whatever the depth of the hierarchy.
    let new = class.slots.new.load().map(|f| f as usize);
    let init = class.slots.init.load().map(|f| f as usize);
    bases
        .into_iter()
        .find(|(base, _)| {
            class.is(*base)
                || (new == base.slots.new.load().map(|f| f as usize)
                    && init == base.slots.init.load().map(|f| f as usize))
        })
        .map(|(_, construction)| construction)
}

fn metered_construction(
    class: &PyObject,
    construction: Construction,
    args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    match construction {
        Construction::Consuming => {
            consuming_builtin(Walk::First, args, vm, |args| construct(class, args, vm))
        }
        _ => {
            let real = class
                .downcast_ref::<PyType>()
                .and_then(|c| {
                    [vm.ctx.types.bytes_type, vm.ctx.types.bytearray_type]
                        .into_iter()
                        .find(|b| c.fast_issubclass(b.as_object()))
                })
                .map_or_else(|| class.to_owned(), |b| b.to_owned().into());
            converting_builtin(&real, args, vm, |args| construct(class, args, vm))
        }
    }
}

/// What calling a class costs beyond the call itself: allocating the
/// instance and running the native `__new__`/`__init__` (~370 ns for a plain
/// class; `C()` ran at 23 ns per cycle without it).
pub(crate) const CLASS_CALL_CYCLES: u64 = 10;

/// What making an exception costs on top (~3 µs: its arguments and traceback
/// slots; `ValueError(s)` ran at 26–31 ns per cycle when charged 25 or 80).
const EXCEPTION_CONSTRUCTION_CYCLES: u64 = 200;

/// Charges a class call: every class, and exceptions more. `super()` is
/// not charged here: RustPython skips making the `super` object once the
/// `super().attr` instruction is warm, so a charge here would fall on cold
/// calls only (the call itself is charged statically like any call).
fn charge_class_call(class: &PyObject, vm: &VirtualMachine) -> PyResult<()> {
    if class.is(vm.ctx.types.super_type) {
        return Ok(());
    }
    let is_exception = class
        .downcast_ref::<PyType>()
        .is_some_and(|c| c.fast_issubclass(vm.ctx.exceptions.base_exception_type));
    let cycles = if is_exception {
        CLASS_CALL_CYCLES + EXCEPTION_CONSTRUCTION_CYCLES
    } else {
        CLASS_CALL_CYCLES
    };
    crate::meter::charge::charge(cycles, 0, vm)
}

fn metered_type_call(class: &PyObject, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    if is_executing() {
        charge_class_call(class, vm)?;
        if let Some(construction) = class
            .downcast_ref::<PyType>()
            .and_then(|c| construction_of(c, vm))
        {
            return metered_construction(class, construction, args, vm);
        }
    }
    construct(class, args, vm)
}

fn metered_type_vectorcall(
    class: &PyObject,
    args: Vec<PyObjectRef>,
    nargs: usize,
    kwnames: Option<&[PyObjectRef]>,
    vm: &VirtualMachine,
) -> PyResult {
    if is_executing() {
        charge_class_call(class, vm)?;
        if let Some(construction) = class
            .downcast_ref::<PyType>()
            .and_then(|c| construction_of(c, vm))
        {
            let args = FuncArgs::from_vectorcall_owned(args, nargs, kwnames);
            return metered_construction(class, construction, args, vm);
        }
    }
    let original = ORIGINAL_TYPE_VECTORCALL
        .get()
        .expect("install_construction_meter ran");
    original(class, args, nargs, kwnames, vm)
}

/// Charges every construction of the builtin types and their subclasses
/// that reaches the `type` call slots during an execution, and takes away
/// the constructor fast path of `list` (and `float`) that bypasses them.
/// Idempotent per thread.
pub(crate) fn install_construction_meter(vm: &VirtualMachine) {
    let type_type = vm.ctx.types.type_type;
    let call = type_type.slots.call.load().expect("type is callable");
    if call as usize != metered_type_call as GenericCall as usize {
        let _ = ORIGINAL_TYPE_CALL.set(call);
        type_type.slots.call.store(Some(metered_type_call));
    }
    let vectorcall = type_type
        .slots
        .vectorcall
        .load()
        .expect("type has a vectorcall slot");
    if vectorcall as usize != metered_type_vectorcall as VectorCall as usize {
        let _ = ORIGINAL_TYPE_VECTORCALL.set(vectorcall);
        type_type
            .slots
            .vectorcall
            .store(Some(metered_type_vectorcall));
    }
    vm.ctx.types.list_type.slots.vectorcall.store(None);
    vm.ctx.types.float_type.slots.vectorcall.store(None);
}
