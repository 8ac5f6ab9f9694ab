//! The native surface of the interpreter: every built-in (static) type and
//! what its namespace holds, so the allow-list can be applied to all of it.

use rustpython_vm::builtins::{PyType, PyTypeRef};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

/// Every built-in type of the interpreter: `object` and its native
/// subclasses, found by walking the subclass lists (heap types, i.e. classes
/// written in Python, are not natives and are skipped, but their native
/// subclasses are not).
pub(crate) fn builtin_types(vm: &VirtualMachine) -> Vec<PyTypeRef> {
    let mut found: Vec<PyTypeRef> = Vec::new();
    let mut stack: Vec<PyTypeRef> = vec![vm.ctx.types.object_type.to_owned()];
    while let Some(class) = stack.pop() {
        if found.iter().any(|seen| seen.is(&class)) {
            continue;
        }
        let subclasses: Vec<PyTypeRef> = class
            .subclasses
            .read()
            .iter()
            .filter_map(|weak| weak.upgrade())
            .filter_map(|object| object.downcast::<PyType>().ok())
            .collect();
        stack.extend(subclasses);
        if !class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            found.push(class);
        }
    }
    found.sort_by(|a, b| a.name().cmp(&b.name()));
    found
}

/// What an entry of a type's namespace is, for the allow-list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A native method (`str.upper`).
    Method,
    /// A native class method (`bytes.fromhex`).
    ClassMethod,
    /// A static method (`str.maketrans`).
    StaticMethod,
    /// A slot wrapper (`int.__add__`).
    SlotWrapper,
    /// A computed attribute (`int.real`, `slice.start`).
    GetSet,
    /// A member (`__objclass__`).
    Member,
    /// Plain data (`__doc__`, `__hash__ = None`).
    Data,
}

pub(crate) fn entry_kind(value: &PyObjectRef, vm: &VirtualMachine) -> EntryKind {
    let types = &vm.ctx.types;
    let class = value.class();
    if class.is(types.method_descriptor_type) {
        EntryKind::Method
    } else if class.is(types.classmethod_descriptor_type) {
        EntryKind::ClassMethod
    } else if class.is(types.staticmethod_type) {
        EntryKind::StaticMethod
    } else if class.is(types.wrapper_descriptor_type) {
        EntryKind::SlotWrapper
    } else if class.is(types.getset_type) {
        EntryKind::GetSet
    } else if class.is(types.member_descriptor_type) {
        EntryKind::Member
    } else {
        EntryKind::Data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[ignore = "prints the native surface"]
    fn print_native_surface() {
        let interpreter = rustpython_vm::Interpreter::without_stdlib(Default::default());
        interpreter.enter(|vm| {
            for class in builtin_types(vm) {
                let entries: Vec<(String, PyObjectRef)> = class
                    .attributes
                    .attributes(&vm.ctx)
                    .iter()
                    .map(|(k, v)| (k.as_str().to_owned(), v.clone()))
                    .collect();
                let mut entries = entries;
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                for (name, value) in entries {
                    let kind = entry_kind(&value, vm);
                    let other = if kind == EntryKind::Data {
                        value.class().name().to_string()
                    } else {
                        String::new()
                    };
                    println!("{}\t{}\t{:?}\t{}", class.name(), name, kind, other);
                }
            }
        });
    }
}
