//! Instructions of metered code that RustPython's adaptive interpreter may
//! never specialise.
//!
//! RustPython rewrites a hot instruction into a form specialised for the
//! operand types it saw (CPython 3.11's quickening): a `COMPARE_OP` between
//! two `str`s becomes an inline comparison that skips the `str` type's
//! comparison slot, where [`crate::meter::slots`] charges long comparisons. A
//! charge in that slot would then depend on how often the instruction ran
//! before on this node's interpreter (cold and warm nodes would disagree),
//! and a long comparison would run uncharged.
//!
//! So every code object compiled from metered source is made through
//! [`metered_code`]: it quickens the code itself (what RustPython does at a
//! code object's first `RESUME`) and gives each comparison an adaptive
//! counter that never reaches its trigger. The instruction stays generic and
//! always reaches the types' slots, on every execution and every node. A
//! generic comparison of two ints costs what the specialised one does
//! (measured in a plain interpreter: 112 against 113 ns for a loop of three
//! `t == a`), where the `_pvm_cmp` guard call this replaces cost ~80 ns.
//!
//! `CONTAINS_OP` needs no pin: its specialisations (`dict`, `set`) hash the
//! key through the same slots. `BINARY_OP` cannot be moved into the slots
//! this way: even RustPython's generic `BINARY_OP` computes `+ - * // %` of
//! two exact ints inline, at any size, so its operands keep going through
//! the `_pvm_binop` guard ([`crate::rules::guards::Guard::Binop`]) unless they are
//! bounded numbers.

// Writing an adaptive counter is `unsafe` in RustPython's API (an index out
// of bounds would be undefined behaviour); the index written is always the
// cache entry that follows an instruction with a cache, inside the code.
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;

use rustpython_compiler_core::bytecode::{adaptive_counter_bits, CodeObject, Instruction};
use rustpython_vm::builtins::PyCode;
use rustpython_vm::{PyObject, PyRef, VirtualMachine};

/// An adaptive counter that never triggers specialisation: backoff 15 is
/// RustPython's "unreachable" exponent. It triggers only below 15, which a
/// counter with backoff 15 never is (its value counts down to 0, giving
/// exactly 15, then wraps back to this value).
const NEVER_SPECIALISE: u16 = adaptive_counter_bits(4095, 15);

/// Does `instruction` stay generic in metered code?
fn pinned(instruction: Instruction) -> bool {
    matches!(instruction, Instruction::CompareOp { .. })
}

/// `bytecode` as a code object whose comparisons (and those of every code
/// object nested in it: functions, classes, comprehensions, lambdas) stay
/// generic.
pub(crate) fn metered_code(vm: &VirtualMachine, bytecode: CodeObject) -> PyRef<PyCode> {
    let code = PyCode::new_ref_from_bytecode(vm, bytecode);
    pin(&code);
    code
}

fn pin(code: &PyCode) {
    each_code(code, &mut |code| {
        // Quicken before the first RESUME would, which then leaves the
        // counters written here alone (it quickens only a code object not
        // yet quickened).
        if !code.quickened.swap(true, Ordering::Relaxed) {
            code.instructions.quicken();
        }
        for cache in pinned_caches(code) {
            // SAFETY: `cache` is the first cache entry of an instruction
            // that has one, inside the code.
            unsafe {
                code.instructions
                    .write_adaptive_counter(cache, NEVER_SPECIALISE)
            };
        }
    });
}

/// Calls `visit` on `code` and on every code object nested in it.
fn each_code(code: &PyCode, visit: &mut impl FnMut(&PyCode)) {
    visit(code);
    for constant in code.constants.iter() {
        let constant: &PyObject = std::borrow::Borrow::borrow(constant);
        if let Some(nested) = constant.downcast_ref::<PyCode>() {
            each_code(nested, visit);
        }
    }
}

/// The first cache entry of each of `code`'s own pinned instructions: where
/// its adaptive counter lives.
fn pinned_caches(code: &PyCode) -> impl Iterator<Item = usize> + '_ {
    let units = &code.instructions;
    let mut index = 0;
    std::iter::from_fn(move || {
        while index < units.len() {
            let instruction = units.read_op(index);
            let caches = instruction.cache_entries();
            let at = index;
            index += 1 + caches;
            if caches > 0 && pinned(instruction) {
                return Some(at + 1);
            }
        }
        None
    })
}

/// Is every comparison of `code` (nested code included) pinned? For tests.
#[cfg(test)]
pub(crate) fn all_pinned(code: &PyCode) -> bool {
    let mut all = true;
    each_code(code, &mut |code| {
        // Counting down keeps the backoff bits (see [`NEVER_SPECIALISE`]).
        all &= pinned_caches(code)
            .all(|cache| code.instructions.read_adaptive_counter(cache) & 0xf == 0xf);
    });
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_of_nested_code_are_pinned_and_stay_generic_when_hot() {
        let source = "def f(a, b):\n    return [x == b for x in a] + [(lambda y: y != a)(b)]\n\nclass C:\n    def m(self, s):\n        return s < 'x'\n\nfor _ in range(100):\n    f(['a' * 300] * 3, 'a' * 300)\n    C().m('y')\n";
        let interpreter = rustpython_vm::Interpreter::without_stdlib(Default::default());
        interpreter.enter(|vm| {
            let bytecode = rustpython_vm::compiler::compile(
                source,
                rustpython_vm::compiler::Mode::Exec,
                "<test>",
                Default::default(),
            )
            .expect("compiles");
            let code = metered_code(vm, bytecode);
            assert!(all_pinned(&code));
            let scope = vm.new_scope_with_builtins();
            vm.run_code_obj(code.clone(), scope).expect("runs");
            // After 100 hot runs, no comparison was specialised.
            assert!(all_pinned(&code));
            let mut specialised = false;
            each_code(&code, &mut |code| {
                let units = &code.instructions;
                specialised |= (0..units.len()).any(|i| {
                    matches!(
                        units.read_op(i),
                        Instruction::CompareOpStr | Instruction::CompareOpInt
                    )
                });
            });
            assert!(!specialised);
        });
    }
}
