//! Storage natives: `self.storage` reads, writes, deletes and ordered key
//! scans, called from the trusted prelude (actor code cannot name them).

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::Value;

use crate::host_api::convert::{py_to_value, value_to_py};
use crate::host_api::exec::{current_actor, host_result, HOST};
use crate::meter::charge::charge;
use crate::meter::sizes::*;
use crate::rules::costs;

pub(crate) fn storage_key(key: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    let key = key
        .downcast_ref::<PyStr>()
        .filter(|_| key.class().is(vm.ctx.types.str_type))
        .ok_or_else(|| vm.new_type_error("storage keys must be str"))?;
    Ok(key
        .to_str()
        .ok_or_else(|| vm.new_value_error("storage keys must be valid UTF-8"))?
        .as_bytes()
        .to_vec())
}

pub(crate) fn storage_get_native(key: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let key = storage_key(&key, vm)?;
    let actor = current_actor();
    let call = HOST.with(|slot| slot.host.storage_get(&actor, &key));
    let found = host_result(call, vm)?;
    let (found, value) = match found {
        Some(bytes) => {
            // Decoding and building the objects is linear in the value's size;
            // a flat read cost would let a loop re-read a 16 MiB value cheaply.
            charge(costs::for_bytes(bytes.len() as u64), 0, vm)?;
            let value = Value::from_bytes(&bytes)
                .map_err(|e| vm.new_runtime_error(format!("corrupt storage value: {e}")))?;
            charge_conversion(&value, 1, vm)?;
            (true, value_to_py(&value, vm))
        }
        None => (false, vm.ctx.none()),
    };
    Ok(vm
        .ctx
        .new_tuple(vec![vm.ctx.new_bool(found).into(), value])
        .into())
}

pub(crate) fn storage_set_native(
    key: PyObjectRef,
    value: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let key = storage_key(&key, vm)?;
    // Converting and encoding copy the value: linear in its bytes (the
    // cells pay for the state, these cycles for the copying; 84 ns per
    // cycle for a 16 KB value without them).
    charge_size(&value, vm)?;
    let value = py_to_value(&value, vm)?;
    charge_conversion(&value, 1, vm)?;
    let encoded = value.to_bytes();
    precheck_result_bytes(encoded.len() as u128, vm)?;
    let actor = current_actor();
    let call = HOST.with(|slot| slot.host.storage_set(&actor, &key, &encoded));
    host_result(call, vm)
}

pub(crate) fn storage_delete_native(key: PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    let key = storage_key(&key, vm)?;
    let actor = current_actor();
    let existing = HOST.with(|slot| slot.host.storage_get(&actor, &key));
    if host_result(existing, vm)?.is_none() {
        return Ok(false);
    }
    let call = HOST.with(|slot| slot.host.storage_delete(&actor, &key));
    host_result(call, vm)?;
    Ok(true)
}

pub(crate) fn storage_next_native(
    prefix: PyObjectRef,
    after: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let prefix = storage_key(&prefix, vm)?;
    let after = if vm.is_none(&after) {
        None
    } else {
        Some(storage_key(&after, vm)?)
    };
    let actor = current_actor();
    let call = HOST.with(|slot| {
        slot.host
            .storage_next_key(&actor, &prefix, after.as_deref())
    });
    // The VM's side of each step (the prelude's generator, the key's
    // string): ~500 ns beyond the host's scan step, measured by the
    // fairness benchmark at 45–53 ns per cycle before this charge.
    charge(costs::host::STORAGE_KEY_STEP_VM, 0, vm)?;
    match host_result(call, vm)? {
        Some(key) => {
            let key = String::from_utf8(key)
                .map_err(|_| vm.new_runtime_error("storage key is not UTF-8"))?;
            Ok(vm.ctx.new_str(key).into())
        }
        None => Ok(vm.ctx.none()),
    }
}
