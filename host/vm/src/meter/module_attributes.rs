//! The price of a module attribute that is not there
//! ([`costs::code::MODULE_ATTRIBUTE_MISS`]): RustPython's module `getattro`
//! does several lookups and a standard-library name check before it makes
//! the `AttributeError`, more than any other object's miss. The wrapper
//! charges it as the lookup fails; a hit costs nothing extra.

use std::sync::OnceLock;

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, Py, PyObject, PyResult, VirtualMachine};

use crate::meter::charge::charge_if_executing;
use crate::rules::costs;

type GetattroSlot = fn(&PyObject, &Py<PyStr>, &VirtualMachine) -> PyResult;

static MODULE_GETATTRO: OnceLock<GetattroSlot> = OnceLock::new();

fn module_getattro(obj: &PyObject, name: &Py<PyStr>, vm: &VirtualMachine) -> PyResult {
    let original = MODULE_GETATTRO
        .get()
        .expect("wrapped slot has its original");
    let found = original(obj, name, vm);
    if let Err(error) = &found {
        if error.fast_isinstance(vm.ctx.exceptions.attribute_error) {
            charge_if_executing(costs::code::MODULE_ATTRIBUTE_MISS, vm)?;
        }
    }
    found
}

/// Wraps the module type's `getattro` (idempotent; once per interpreter).
pub(crate) fn install(vm: &VirtualMachine) {
    let class = vm.ctx.types.module_type;
    let wrapper: GetattroSlot = module_getattro;
    let current = class
        .slots
        .getattro
        .load()
        .expect("the module type has getattro");
    if current as usize != wrapper as usize {
        let _ = MODULE_GETATTRO.set(current);
        class.slots.getattro.store(Some(wrapper));
    }
}
