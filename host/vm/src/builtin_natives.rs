//! Guarded builtins: the builtins whose work grows with their arguments
//! (`sorted`, `sum`, `str`, `int`, `pow`, …) are replaced by natives that
//! charge that work and then call the original.

use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::costs;
use crate::exec::charge;
use crate::guard_natives::charge_operator;
use crate::guards::OperatorCode;
use crate::sizes::*;

pub(crate) fn consuming_builtin(
    original: &PyObjectRef,
    sort: bool,
    mut args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    if args.args.len() == 1 {
        let first = args.args.remove(0);
        let materialized = materialize(first, vm)?;
        if sort {
            let (elements, _) = size_of(&materialized);
            let elements = elements.max(materialized.length(vm).unwrap_or(0) as u64);
            let log = 64 - elements.leading_zeros() as u64;
            charge(elements * log * costs::size::SORT_LOG_FACTOR, 0, vm)?;
        }
        args.args.insert(0, materialized);
    } else {
        for arg in &args.args {
            charge_size(arg, vm)?;
        }
    }
    let result = original.call(args, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

pub(crate) fn converting_builtin(
    original: &PyObjectRef,
    mut args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    let is_bytes_ctor = original.is(vm.ctx.types.bytes_type.as_object())
        || original.is(vm.ctx.types.bytearray_type.as_object());
    if let Some(first) = args.args.first().cloned() {
        if is_bytes_ctor {
            if let Some(length) = int_value(&first) {
                let length = int_to_i64(length).max(0) as u128;
                precheck_result_bytes(length, vm)?;
            } else if !is_sized(&first) {
                args.args[0] = materialize(first.clone(), vm)?;
            }
        }
        if original.is(vm.builtins.dict().get_item("pow", vm)?.as_object()) && args.args.len() >= 2
        {
            let second = args.args[1].clone();
            if args.args.len() == 2 {
                charge_operator(OperatorCode::Pow, &first, &second, vm)?;
            } else {
                // One modular squaring (and at most one multiplication) per
                // exponent bit, each quadratic in the modulus' limbs: a
                // charge linear in the limbs bought 65 ms for 586k cycles
                // with 6,000-bit operands.
                let modulus_bits = args.args.get(2).and_then(int_value).map_or(64, int_bits);
                let exponent_bits = int_value(&second).map_or(64, int_bits);
                let limbs = modulus_bits / 64 + 1;
                // (+3 per bit: even one-limb steps allocate a big int each.)
                charge(
                    exponent_bits.saturating_mul(limbs * (limbs / 8 + 1) + 3),
                    0,
                    vm,
                )?;
            }
        }
    }
    for arg in &args.args {
        charge_size(arg, vm)?;
    }
    let result = original.call(args, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}
