//! Charges inside built-in type slots: comparisons, hashes and `repr`s whose
//! work grows with the operands.
//!
//! A comparison of two lists compares their elements, which may be lists
//! again, so one `==` can do work proportional to a whole nested structure;
//! `[big] * 1000 == [big_copy] * 1000` does 1000 full comparisons of `big`.
//! Hashing a tuple hashes its elements the same way, on every dict or set
//! lookup (tuples and bytes do not cache their hash). No rewrite of the
//! actor's code can see that nesting, so the charge is taken where the work
//! happens: the `richcompare` slot of `list`, `tuple`, `dict`, `set`,
//! `frozenset`, `bytes`, `bytearray` and `str`, and the `hash` slot of
//! `tuple` and `bytes`, are wrapped once per interpreter. Each wrapper
//! charges for its own level (the shorter operand's length, or its bytes)
//! and calls the original; nested comparisons and hashes go through the
//! slots again and charge for theirs. The `repr` slots of the containers,
//! `str`, `bytes` and `bytearray` are wrapped the same way: `str(xs)` and
//! `f"{xs}"` format every element, through their own slots.
//!
//! Determinism: a slot charge is only sound where the interpreter always
//! goes through the slot. RustPython's adaptive interpreter would replace a
//! hot `==`/`!=` between two exact `str`s by an inline comparison (it
//! specialises no other comparison of these types); metered code never lets
//! it ([`crate::interpreter::generic_ops`] keeps every comparison generic). The `str`
//! wrapper charges nothing for comparisons of at most
//! [`compare::FREE_STR_COMPARE_BYTES`] bytes: most comparisons are of short strings,
//! and what they cost is in the comparison's static weight.
//!
//! Outside an execution (the host converting values, the prelude) nothing
//! is charged.
//!
//! One file per kind of slot: [`compare`], [`hash`], [`repr`]; this module
//! wires them into the built-in types ([`install`]) and into the classes
//! an actor defines ([`meter_inherited_slots`]).

mod compare;
mod hash;
mod repr;

use rustpython_vm::builtins::PyType;
use rustpython_vm::{Py, VirtualMachine};

use compare::*;
use hash::*;
use repr::*;

pub(crate) use compare::{
    meter_identity_comparison, meter_method_comparison, meter_subclass_comparison,
};
pub(crate) use repr::{meter_subclass_repr, CLASS_REPR_CYCLES};

/// Gives a class an actor defines the charging slot wherever it inherited
/// the *original* native one of a built-in base: RustPython fills a new
/// class's slots from its bases' slot-wrapper descriptors, which hold the
/// natives as they were before [`install`] wrapped them (bpo-37619's
/// lookup). Every slot [`install`] wraps is checked. (A base whose method
/// is not a slot wrapper gives the generic slot instead:
/// [`meter_subclass_repr`].)
pub(crate) fn meter_inherited_slots(class: &PyType) {
    macro_rules! swap {
        ($slot:ident: $type:ty, $(($original:expr, $wrapper:expr)),+ $(,)?) => {$(
            if let (Some(current), Some(original)) = (class.slots.$slot.load(), $original.get()) {
                if current as usize == *original as usize {
                    class.slots.$slot.store(Some($wrapper as $type));
                }
            }
        )+};
    }
    swap!(repr: ReprSlot,
        (LIST_REPR, list_repr),
        (TUPLE_REPR, tuple_repr),
        (DICT_REPR, dict_repr),
        (SET_REPR, set_repr),
        (FROZENSET_REPR, frozenset_repr),
        (STR_REPR, str_repr),
        (BYTES_REPR, bytes_repr),
        (BYTEARRAY_REPR, bytearray_repr),
        (INT_REPR, int_repr),
        (TYPE_REPR, type_repr),
        (FLOAT_REPR, float_repr),
        (EXCEPTION_REPR, exception_repr),
    );
    swap!(str: ReprSlot, (INT_STR, int_str), (EXCEPTION_STR, exception_str));
    swap!(hash: HashSlot, (TUPLE_HASH, tuple_hash), (BYTES_HASH, bytes_hash));
    swap!(richcompare: CompareSlot,
        (LIST_COMPARE, container_compare_list),
        (TUPLE_COMPARE, container_compare_tuple),
        (DICT_COMPARE, container_compare_dict),
        (SET_COMPARE, container_compare_set),
        (FROZENSET_COMPARE, container_compare_frozenset),
        (BYTES_COMPARE, bytes_compare),
        (BYTEARRAY_COMPARE, bytearray_compare),
        (STR_COMPARE, str_compare),
        (DICT_KEYS_COMPARE, dict_keys_compare),
        (DICT_ITEMS_COMPARE, dict_items_compare),
    );
}

/// Wraps the slots of this thread's built-in types (each runtime thread has
/// its own type objects). The originals are the same functions on every
/// thread, so the first thread records them.
pub(crate) fn install(vm: &VirtualMachine) {
    /// Stores each wrapper in its type's `$slot`, recording the original the
    /// first time (a second install on the same thread finds the wrapper).
    macro_rules! wrap {
        ($slot:ident: $type:ty, $($class:expr => ($original:expr, $wrapper:expr)),+ $(,)?) => {$(
            let class: &Py<PyType> = $class;
            let wrapper: $type = $wrapper;
            let current = class.slots.$slot.load().expect("built-in types have this slot");
            if current as usize != wrapper as usize {
                let _ = $original.set(current);
                class.slots.$slot.store(Some(wrapper));
            }
        )+};
    }
    let types = &vm.ctx.types;
    wrap!(richcompare: CompareSlot,
        types.list_type => (LIST_COMPARE, container_compare_list),
        types.tuple_type => (TUPLE_COMPARE, container_compare_tuple),
        types.dict_type => (DICT_COMPARE, container_compare_dict),
        types.set_type => (SET_COMPARE, container_compare_set),
        types.frozenset_type => (FROZENSET_COMPARE, container_compare_frozenset),
        types.bytes_type => (BYTES_COMPARE, bytes_compare),
        types.bytearray_type => (BYTEARRAY_COMPARE, bytearray_compare),
        types.str_type => (STR_COMPARE, str_compare),
        types.object_type => (OBJECT_COMPARE, object_compare),
        types.dict_keys_type => (DICT_KEYS_COMPARE, dict_keys_compare),
        types.dict_items_type => (DICT_ITEMS_COMPARE, dict_items_compare),
    );
    wrap!(hash: HashSlot,
        types.tuple_type => (TUPLE_HASH, tuple_hash),
        types.range_type => (RANGE_HASH, range_hash),
        types.bytes_type => (BYTES_HASH, bytes_hash),
    );
    wrap!(repr: ReprSlot,
        types.list_type => (LIST_REPR, list_repr),
        types.tuple_type => (TUPLE_REPR, tuple_repr),
        types.dict_type => (DICT_REPR, dict_repr),
        types.set_type => (SET_REPR, set_repr),
        types.frozenset_type => (FROZENSET_REPR, frozenset_repr),
        types.str_type => (STR_REPR, str_repr),
        types.bytes_type => (BYTES_REPR, bytes_repr),
        types.bytearray_type => (BYTEARRAY_REPR, bytearray_repr),
        types.int_type => (INT_REPR, int_repr),
        types.type_type => (TYPE_REPR, type_repr),
        types.float_type => (FLOAT_REPR, float_repr),
    );
    wrap!(str: ReprSlot,
        types.int_type => (INT_STR, int_str),
    );
    wrap_exception_text(vm);
}
