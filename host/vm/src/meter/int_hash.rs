//! Hashes of numbers that an attacker cannot make collide.
//!
//! Python hashes an int by its value modulo the prime 2⁶¹ − 1, so every
//! multiple of that prime hashes to 0: a set of 20,000 such ints probed every
//! earlier entry on every insert (1.5 s for 101k cycles, measured). Dicts and
//! sets stay near O(1) only if distinct keys rarely share a full hash.
//!
//! So ints of magnitude at least 2⁶⁰ (and floats with such an integral
//! value, which must hash like the equal int) are hashed with SipHash over
//! their two's-complement bytes, keyed by the interpreter's fixed seed — the
//! same keyed hash `str` and `bytes` use, deterministic on every node and
//! infeasible to collide in full. Smaller ints keep Python's hash (their own
//! value: distinct ints never collide), so ordinary code, `hash(x) == x` for
//! small ints and dict order over small keys are unchanged.
//!
//! Actors cannot call `hash()`; only the placement of keys in tables (never
//! their iteration order, which is insertion order) depends on it.
//!
//! Tuples and frozensets of colliding elements still collide, but each probe
//! of them compares through a charged slot ([`crate::meter::slots`]), as do
//! instances of actor classes (whose default comparison is charged there).

use std::sync::OnceLock;

use malachite_bigint::BigInt;
use rustpython_vm::builtins::{PyFloat, PyInt};
use rustpython_vm::common::hash::{HashSecret, PyHash};
use rustpython_vm::function::{Callee, FuncArgs, PyMethodFlags};
use rustpython_vm::{PyObject, PyResult, VirtualMachine};

type HashSlot = fn(&PyObject, &VirtualMachine) -> PyResult<PyHash>;

/// Ints below this magnitude (in bits) keep Python's hash, their value.
const SMALL_INT_BITS: u64 = 60;

static INT_HASH: OnceLock<HashSlot> = OnceLock::new();
static FLOAT_HASH: OnceLock<HashSlot> = OnceLock::new();

/// The keyed hash of a large int's value (seed 0, like `str`'s).
fn large_int_hash(value: &BigInt) -> PyHash {
    static SECRET: OnceLock<HashSecret> = OnceLock::new();
    let secret = SECRET.get_or_init(|| HashSecret::new(0));
    secret.hash_bytes(&value.to_signed_bytes_le())
}

/// What hashing a large int costs: its bytes are written out and run
/// through SipHash (~0.1 µs for a few limbs; a set of 20,000 multiples of
/// 2⁶¹ − 1 ran at ~190 ns per cycle when a large int's hash was free like a
/// small one's).
fn large_int_hash_cycles(bits: u64) -> u64 {
    LARGE_INT_HASH_CYCLES + bits / 64
}

/// The base of [`large_int_hash_cycles`].
const LARGE_INT_HASH_CYCLES: u64 = 5;

fn int_hash(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    if let Some(int) = obj.downcast_ref::<PyInt>() {
        let value = int.as_bigint();
        if value.bits() > SMALL_INT_BITS {
            crate::meter::charge::charge_if_executing(large_int_hash_cycles(value.bits()), vm)?;
            return Ok(large_int_hash(value));
        }
    }
    let original = INT_HASH.get().expect("wrapped slot has its original");
    original(obj, vm)
}

fn float_hash(obj: &PyObject, vm: &VirtualMachine) -> PyResult<PyHash> {
    if let Some(float) = obj.downcast_ref::<PyFloat>() {
        let value = float.to_f64();
        // Integral and at least 2^60 in magnitude: hash like the equal int.
        if value.is_finite()
            && value.fract() == 0.0
            && value.abs() >= (1u64 << SMALL_INT_BITS) as f64
        {
            if let Some(int) = <BigInt as num_traits::FromPrimitive>::from_f64(value) {
                crate::meter::charge::charge_if_executing(large_int_hash_cycles(int.bits()), vm)?;
                return Ok(large_int_hash(&int));
            }
        }
    }
    let original = FLOAT_HASH.get().expect("wrapped slot has its original");
    original(obj, vm)
}

/// Replaces the hash slots of `int` and `float` on this thread's types
/// (idempotent; `bool` keeps its own, whose values are 0 and 1), and their
/// `__hash__` entries: `x.__hash__()` and the classes actors derive from
/// them (whose slots RustPython takes from those entries) hash alike.
pub(crate) fn install(vm: &VirtualMachine) {
    let types = &vm.ctx.types;
    for (class, original, wrapper) in [
        (types.int_type, &INT_HASH, int_hash as HashSlot),
        (types.float_type, &FLOAT_HASH, float_hash as HashSlot),
    ] {
        let current = class.slots.hash.load().expect("numbers are hashable");
        if current as usize == wrapper as usize {
            continue;
        }
        let _ = original.set(current);
        class.slots.hash.store(Some(wrapper));
        let entry = crate::meter::natives::install::heap_def(
            "__hash__",
            move |vm: &VirtualMachine, args: FuncArgs, _callee: Callee| -> PyResult {
                let receiver = args
                    .args
                    .first()
                    .ok_or_else(|| vm.new_type_error("__hash__ needs its receiver"))?;
                Ok(vm.ctx.new_int(wrapper(receiver, vm)?).into())
            },
            PyMethodFlags::METHOD,
            vm,
        );
        class.set_attr(
            vm.ctx.intern_str("__hash__"),
            entry.build_method(class, vm).into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustpython_vm::AsObject;

    fn hash_of(source: &str) -> PyHash {
        let interpreter = rustpython_vm::Interpreter::without_stdlib(Default::default());
        interpreter.enter(|vm| {
            install(vm);
            let value = vm
                .run_block_expr(vm.new_scope_with_builtins(), source)
                .expect("evaluates");
            value.as_object().hash(vm).expect("hashable")
        })
    }

    #[test]
    fn multiples_of_the_modulus_no_longer_collide() {
        let interpreter = rustpython_vm::Interpreter::without_stdlib(Default::default());
        interpreter.enter(|vm| {
            install(vm);
            let mut hashes = std::collections::HashSet::new();
            for k in 1..2_000u64 {
                let value = BigInt::from(k) * ((BigInt::from(1) << 61u32) - 1);
                let int = vm.ctx.new_bigint(&value);
                assert!(hashes.insert(int.as_object().hash(vm).unwrap()), "{k}");
            }
        });
    }

    #[test]
    fn equal_numbers_hash_alike_and_small_ints_hash_to_themselves() {
        assert_eq!(hash_of("12345"), 12345);
        assert_eq!(hash_of("-1"), -2);
        assert_eq!(hash_of("2**70 * 3"), hash_of("float(2**70 * 3)"));
        assert_eq!(hash_of("2**59"), hash_of("float(2**59)"));
        assert_eq!(hash_of("-(2**64)"), hash_of("-float(2**64)"));
        assert_ne!(hash_of("2**61 - 1"), 0);
        assert_eq!(hash_of("(2**70).__hash__()"), hash_of("2**70"));
    }
}
