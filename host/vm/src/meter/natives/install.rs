//! Applies the allow-list to the interpreter's built-in types: every native
//! in a type's own namespace that a rule prices is replaced by a native that
//! charges its price and then calls the original; every native no rule
//! names is replaced by one that refuses (during an execution) with an error
//! naming it. [`Price::Free`] natives are left as they are, so the common
//! constant-time calls (`list.append`, `dict.get`) cost nothing extra.
//!
//! Type slots — what operators reach — are not in the namespaces and stay as
//! they are; the operator guards and [`crate::meter::slots`] charge those.
//! Outside an execution (the host converting values, the prelude) every
//! native runs unchanged.

use std::cell::Cell;
use std::collections::HashMap;

use rustpython_vm::builtins::descriptor::{PyClassMethodDescriptor, PyMethodDescriptor};
use rustpython_vm::builtins::{PyClassMethod, PyStaticMethod, PyType, PyTypeRef};
use rustpython_vm::function::{
    Callee, FuncArgs, HeapMethodDef, PyMethodDef, PyMethodFlags, PyNativeFn,
};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine};

use super::inventory::{builtin_types, entry_kind, EntryKind};
use super::price::{refusal, Price, UNPRICED};
use super::table::{BUILTIN_RULES, RULES};
use crate::meter::charge::is_executing;
use crate::meter::sizes::charge_size;

thread_local! {
    /// The built-in types are per thread and outlive an interpreter: the
    /// list is applied once per thread.
    static INSTALLED: Cell<bool> = const { Cell::new(false) };
}

/// How the replacement reaches the original native.
#[derive(Clone)]
enum Original {
    /// A native method: its function, called directly.
    Method(&'static rustpython_vm::function::PyMethodDef),
    /// Anything callable with the receiver (or class) first.
    Object(PyObjectRef),
}

impl Original {
    fn call(&self, args: FuncArgs, callee: Callee, vm: &VirtualMachine) -> PyResult {
        match self {
            Original::Method(def) => (def.func)(vm, args, callee),
            Original::Object(object) => object.call(args, vm),
        }
    }
}

/// The native that replaces `original`: charges `price` (or refuses) during
/// an execution, then calls it.
fn priced(
    qualified: &'static str,
    price: Option<Price>,
    mutates: bool,
    original: Original,
) -> impl Fn(&VirtualMachine, FuncArgs, Callee) -> PyResult + 'static {
    move |vm: &VirtualMachine, mut args: FuncArgs, callee: Callee| {
        if !is_executing() {
            return original.call(args, callee, vm);
        }
        let Some(price) = price else {
            return Err(refusal(qualified, UNPRICED, vm));
        };
        if mutates {
            if let Some(receiver) = args.args.first() {
                crate::meter::writes::before_write(receiver, vm)?;
            }
        }
        price.charge_before(qualified, &mut args, vm)?;
        let result = original.call(args, callee, vm)?;
        if price.charges_result() {
            charge_size(&result, vm)?;
        }
        Ok(result)
    }
}

/// A native method definition owned by the heap (the replacements live as
/// long as the thread's types).
pub(crate) fn heap_def(
    name: &'static str,
    func: impl PyNativeFn,
    flags: PyMethodFlags,
    vm: &VirtualMachine,
) -> PyRef<HeapMethodDef> {
    let def = PyMethodDef {
        name,
        func: Box::leak(Box::new(func)),
        flags,
        doc: None,
    };
    PyRef::new_ref(
        HeapMethodDef::new(def),
        vm.ctx.types.method_def.to_owned(),
        None,
    )
}

/// The builtin `name` as actors get it: `original` when its rule is
/// [`Price::Free`] (or it has a stand-in of its own), else a native that
/// charges the rule's price first. Panics for a name with no rule: the
/// runtime only installs builtins the allow-list names.
pub(crate) fn priced_builtin(
    name: &'static str,
    original: PyObjectRef,
    vm: &VirtualMachine,
) -> PyObjectRef {
    let price = BUILTIN_RULES
        .iter()
        .find(|rule| rule.names.contains(&name))
        .map(|rule| rule.price)
        .unwrap_or_else(|| panic!("builtin {name} has no rule in natives::table"));
    if matches!(price, Price::Free | Price::Stand(_)) {
        return original;
    }
    let qualified: &'static str = Box::leak(format!("builtins.{name}").into_boxed_str());
    heap_def(
        name,
        priced(qualified, Some(price), false, Original::Object(original)),
        PyMethodFlags::empty(),
        vm,
    )
    .build_function(vm, None)
    .into()
}

/// Applies the allow-list to every built-in type of this thread.
pub(crate) fn install(vm: &VirtualMachine) {
    if INSTALLED.with(|installed| installed.replace(true)) {
        renew_list_append(vm);
        return;
    }
    let prices: HashMap<(&str, &str), Price> = RULES
        .iter()
        .flat_map(|rule| {
            rule.types
                .iter()
                .flat_map(move |t| rule.names.iter().map(move |n| ((*t, *n), rule.price)))
        })
        .collect();
    for class in builtin_types(vm) {
        install_type(&class, &prices, vm);
    }
}

/// A new interpreter on a thread whose types already carry the allow-list
/// (one made after a panic retired the last) caches `list.append` as the
/// replacement installed before, and RustPython's `CALL_LIST_APPEND` then
/// appends directly for any callable that *is* the cached one — past the
/// replacement's write bookkeeping ([`crate::interpreter::constants`]). A fresh
/// replacement around the current one keeps the cached object and the
/// attribute apart, so appends always go through it.
fn renew_list_append(vm: &VirtualMachine) {
    let list = vm.ctx.types.list_type;
    let Some(current) = list.get_attr(vm.ctx.intern_str("append")) else {
        return;
    };
    let typ: &'static Py<PyType> = Box::leak(Box::new(list.to_owned()));
    let native = heap_def(
        "append",
        priced(
            "list.append",
            Some(Price::Free),
            true,
            Original::Object(current),
        ),
        PyMethodFlags::METHOD,
        vm,
    );
    list.set_attr(
        vm.ctx.intern_str("append"),
        native.build_method(typ, vm).into(),
    );
}

fn install_type(class: &PyTypeRef, prices: &HashMap<(&str, &str), Price>, vm: &VirtualMachine) {
    // Descriptors need the type for `'static`; the types live as long as the
    // thread.
    let typ: &'static Py<PyType> = Box::leak(Box::new(class.clone()));
    let type_name: &'static str = Box::leak(class.name().to_string().into_boxed_str());
    let entries = class.attributes.attributes(&vm.ctx);
    for (name, value) in entries {
        let kind = entry_kind(&value, vm);
        let is_native_function = kind == EntryKind::Data
            && value
                .class()
                .is(vm.ctx.types.builtin_function_or_method_type);
        if !matches!(
            kind,
            EntryKind::Method | EntryKind::ClassMethod | EntryKind::SlotWrapper
        ) && !is_native_function
        {
            continue;
        }
        let method_name: &'static str = name.as_str();
        let price = prices.get(&(type_name, method_name)).copied();
        let mutates = super::table::mutates(type_name, method_name);
        if price == Some(Price::Free) && !mutates {
            continue;
        }
        let qualified: &'static str =
            Box::leak(format!("{type_name}.{method_name}").into_boxed_str());
        let replacement: PyObjectRef = match kind {
            EntryKind::Method => {
                let descriptor = value
                    .downcast_ref::<PyMethodDescriptor>()
                    .expect("a method descriptor");
                let def = descriptor.method;
                let native = heap_def(
                    method_name,
                    priced(qualified, price, mutates, Original::Method(def)),
                    def.flags,
                    vm,
                );
                native.build_method(typ, vm).into()
            }
            EntryKind::SlotWrapper => {
                let native = heap_def(
                    method_name,
                    priced(qualified, price, mutates, Original::Object(value.clone())),
                    PyMethodFlags::METHOD,
                    vm,
                );
                native.build_method(typ, vm).into()
            }
            EntryKind::ClassMethod => {
                let descriptor = value
                    .downcast_ref::<PyClassMethodDescriptor>()
                    .expect("a class method descriptor");
                let def = descriptor.method;
                let native = heap_def(
                    method_name,
                    priced(qualified, price, mutates, Original::Method(def)),
                    PyMethodFlags::empty(),
                    vm,
                );
                let function = native.build_function(vm, None);
                PyClassMethod::from(PyObjectRef::from(function))
                    .into_ref(&vm.ctx)
                    .into()
            }
            _ => {
                // A built-in function in the namespace (`__new__`,
                // `str.maketrans`): called as it is, through a static method.
                let native = heap_def(
                    method_name,
                    priced(qualified, price, mutates, Original::Object(value.clone())),
                    PyMethodFlags::empty(),
                    vm,
                );
                let function = native.build_function(vm, None);
                if method_name == "__new__" {
                    // `__new__` is looked up as a plain function.
                    function.into()
                } else {
                    PyStaticMethod::new(function.into())
                        .into_ref(&vm.ctx)
                        .into()
                }
            }
        };
        class.set_attr(name, replacement);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(type, name)` of every native in a built-in type's own namespace.
    fn own_natives() -> std::collections::HashSet<(String, String)> {
        let interpreter = rustpython_vm::Interpreter::without_stdlib(Default::default());
        interpreter.enter(|vm| {
            let mut natives = std::collections::HashSet::new();
            for class in builtin_types(vm) {
                for (name, _) in class.attributes.attributes(&vm.ctx) {
                    natives.insert((class.name().to_string(), name.as_str().to_owned()));
                }
            }
            natives
        })
    }

    #[test]
    fn every_name_and_type_of_a_rule_prices_a_native() {
        let natives = own_natives();
        let exists = |t: &str, n: &str| natives.contains(&(t.to_owned(), n.to_owned()));
        let mut unused = Vec::new();
        for rule in RULES {
            for name in rule.names {
                if !rule.types.iter().any(|t| exists(t, name)) {
                    unused.push(format!("name {name} in {:?}", rule.types));
                }
            }
            for t in rule.types {
                if !rule.names.iter().any(|n| exists(t, n)) {
                    unused.push(format!("type {t} for {:?}", rule.names));
                }
            }
        }
        assert!(unused.is_empty(), "rules that price nothing: {unused:?}");
    }

    #[test]
    fn every_mutator_names_a_native() {
        let natives = own_natives();
        let missing: Vec<String> = super::super::table::MUTATORS
            .iter()
            .flat_map(|(t, names)| names.iter().map(move |n| (*t, *n)))
            .filter(|(t, n)| !natives.contains(&(t.to_string(), n.to_string())))
            .map(|(t, n)| format!("{t}.{n}"))
            .collect();
        assert!(
            missing.is_empty(),
            "mutators that name nothing: {missing:?}"
        );
    }

    #[test]
    fn no_native_is_priced_twice() {
        let natives = own_natives();
        let mut seen = std::collections::HashSet::new();
        let mut twice = Vec::new();
        for rule in RULES {
            for t in rule.types {
                for n in rule.names {
                    let pair = (t.to_string(), n.to_string());
                    if natives.contains(&pair) && !seen.insert(pair) {
                        twice.push(format!("{t}.{n}"));
                    }
                }
            }
        }
        assert!(twice.is_empty(), "natives in two rules: {twice:?}");
    }
}
