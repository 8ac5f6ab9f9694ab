//! The hash slots of `tuple` and `bytes` (charged by their elements or
//! bytes, on every dict or set lookup: neither caches its hash) and of
//! `range` (a tuple of ints built and hashed).

use std::sync::OnceLock;

use rustpython_vm::common::hash::PyHash;
use rustpython_vm::{PyObject, PyResult, VirtualMachine};

use crate::meter::charge::charge_if_executing;
use crate::meter::sizes::{size_cycles, size_of};

pub(super) type HashSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyHash>;

macro_rules! metered_hash {
    ($name:ident, $original:ident) => {
        pub(super) static $original: OnceLock<HashSlot> = OnceLock::new();
        pub(super) fn $name(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
            // A tuple by its elements (nested tuples charge their own), bytes
            // by their length.
            charge_if_executing(size_cycles(size_of(obj)), vm)?;
            let original = $original.get().expect("wrapped slot has its original");
            original(obj, vm)
        }
    };
}

metered_hash!(tuple_hash, TUPLE_HASH);
metered_hash!(bytes_hash, BYTES_HASH);

/// Hashing a `range` builds the tuple `(len, start, step)` of ints and
/// hashes it (~150 ns): `{r: 1}` ran at 2.4–4.2× ordinary code per cycle
/// free (the metering fuzzer's sixth long run, #47).
const RANGE_HASH_CYCLES: u64 = 6;

pub(super) static RANGE_HASH: OnceLock<HashSlot> = OnceLock::new();

pub(super) fn range_hash(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    charge_if_executing(RANGE_HASH_CYCLES, vm)?;
    let original = RANGE_HASH.get().expect("wrapped slot has its original");
    original(obj, vm)
}
