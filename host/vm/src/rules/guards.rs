//! The contract between the instrumenter ([`crate::deploy::instrument`]) and the
//! runtime: which guard natives rewritten actor code calls. One definition
//! both sides use — the instrumenter emits [`Guard::name`]s and the
//! operators' [`OperatorCode::binop_guard`]/[`OperatorCode::augop_guard`]
//! names from here, the runtime registers a native for every one of them —
//! so neither side can name a guard the other does not know.
//!
//! Imports nothing from the rest of the crate.

use ruff_python_ast as ast;

/// Every guard name starts with this; actor code may not use it
/// (`crate::deploy::sandbox`), so a call to such a name is always a guard.
pub const GUARD_PREFIX: &str = "_pvm_";

/// The builtin types whose real type object the instrumenter may pass to
/// `isinstance` in place of the actor-visible stand-in
/// (`crate::interpreter::builtin_types`): `isinstance(x, int)` becomes
/// `isinstance(x, _pvm_type_int)`, the same answer without the stand-in's
/// `__instancecheck__` (a method lookup, a bound method and a call: ~150 ns
/// in RustPython). Not `type`, whose stand-in also counts the stand-ins as
/// types.
pub const REAL_TYPES: [(&str, &str); 9] = [
    ("int", "_pvm_type_int"),
    ("str", "_pvm_type_str"),
    ("bytes", "_pvm_type_bytes"),
    ("bytearray", "_pvm_type_bytearray"),
    ("list", "_pvm_type_list"),
    ("tuple", "_pvm_type_tuple"),
    ("set", "_pvm_type_set"),
    ("frozenset", "_pvm_type_frozenset"),
    ("dict", "_pvm_type_dict"),
];

/// The hidden name of the real type behind the builtin name `name`, if
/// [`REAL_TYPES`] has it.
pub fn real_type_name(name: &str) -> Option<&'static str> {
    REAL_TYPES
        .iter()
        .find(|(visible, _)| *visible == name)
        .map(|(_, hidden)| *hidden)
}

/// A guard native the instrumenter may insert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Guard {
    /// `_pvm_meter[n]`: charge `n` cycles (a basic block's static weight).
    Meter,
    /// `_pvm_iter(it, n[, (c, …)])`: an iterator charging `n` per item.
    Iter,
    /// `_pvm_binop_<op>(a, b)`: a binary operator charged by size, one
    /// native per operator ([`OperatorCode::binop_guard`]).
    Binop,
    /// `_pvm_augop_<op>(current, value[, container])`: `x op= y`, charged
    /// and pre-checked, performed in place; returns the result to store. One
    /// native per operator ([`OperatorCode::augop_guard`]).
    Augop,
    /// `_pvm_result[value]`: charge a produced value by size.
    Result,
    /// `_pvm_materialize[value]`: turn a lazy iterable into a charged list.
    Materialize,
    /// `_pvm_kwargs[mapping]`: a `**` splat charged by its keys.
    Kwargs,
    /// `_pvm_mut[container]`: the container of a subscript store, about to
    /// change (values made at load are restored after the call).
    Mutate,
    /// `_pvm_format(value, spec, conversion)`: an f-string field whose
    /// spec is computed, checked and charged at run time.
    Format,
    /// `_pvm_unpack(value, shape)`: like `_pvm_materialize[value]`, and the
    /// items a nested starred target unpacks too.
    Unpack,
    /// `_pvm_set_unpack[value]`: `*value` in a set display, whose every
    /// item is hashed into a new table inside one instruction.
    SetUnpack,
}

impl Guard {
    /// Every guard, in one order.
    pub const ALL: [Guard; 11] = [
        Guard::Meter,
        Guard::Iter,
        Guard::Binop,
        Guard::Augop,
        Guard::Result,
        Guard::Materialize,
        Guard::Kwargs,
        Guard::Mutate,
        Guard::Format,
        Guard::Unpack,
        Guard::SetUnpack,
    ];

    /// The builtin name the rewritten code calls.
    pub const fn name(self) -> &'static str {
        match self {
            Guard::Meter => "_pvm_meter",
            Guard::Iter => "_pvm_iter",
            Guard::Binop => "_pvm_binop",
            Guard::Augop => "_pvm_augop",
            Guard::Result => "_pvm_result",
            Guard::Materialize => "_pvm_materialize",
            Guard::Kwargs => "_pvm_kwargs",
            Guard::Mutate => "_pvm_mut",
            Guard::Format => "_pvm_format",
            Guard::Unpack => "_pvm_unpack",
            Guard::SetUnpack => "_pvm_set_unpack",
        }
    }

    /// Is the guard a subscript of a native object (`_pvm_meter[n]`)
    /// rather than a call? The one-argument guards are: RustPython reaches a
    /// type's mapping slot without building an argument list.
    pub const fn is_subscripted(self) -> bool {
        matches!(
            self,
            Guard::Meter
                | Guard::Result
                | Guard::Mutate
                | Guard::Materialize
                | Guard::Kwargs
                | Guard::SetUnpack
        )
    }

    /// The guard called `name`, if any.
    pub fn from_name(name: &str) -> Option<Guard> {
        Guard::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// A binary operator, and the guard natives that perform it
/// ([`OperatorCode::binop_guard`], [`OperatorCode::augop_guard`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum OperatorCode {
    /// `+`
    Add = 0,
    /// `-`
    Sub = 1,
    /// `*`
    Mult = 2,
    /// `@`
    MatMult = 3,
    /// `/`
    Div = 4,
    /// `%`
    Mod = 5,
    /// `**`
    Pow = 6,
    /// `<<`
    LShift = 7,
    /// `>>`
    RShift = 8,
    /// `|`
    BitOr = 9,
    /// `^`
    BitXor = 10,
    /// `&`
    BitAnd = 11,
    /// `//`
    FloorDiv = 12,
}

impl OperatorCode {
    /// Every code, in code order.
    pub const ALL: [OperatorCode; 13] = [
        OperatorCode::Add,
        OperatorCode::Sub,
        OperatorCode::Mult,
        OperatorCode::MatMult,
        OperatorCode::Div,
        OperatorCode::Mod,
        OperatorCode::Pow,
        OperatorCode::LShift,
        OperatorCode::RShift,
        OperatorCode::BitOr,
        OperatorCode::BitXor,
        OperatorCode::BitAnd,
        OperatorCode::FloorDiv,
    ];

    /// The code of a Python operator.
    pub fn of(op: ast::Operator) -> OperatorCode {
        use ast::Operator as O;
        match op {
            O::Add => OperatorCode::Add,
            O::Sub => OperatorCode::Sub,
            O::Mult => OperatorCode::Mult,
            O::MatMult => OperatorCode::MatMult,
            O::Div => OperatorCode::Div,
            O::Mod => OperatorCode::Mod,
            O::Pow => OperatorCode::Pow,
            O::LShift => OperatorCode::LShift,
            O::RShift => OperatorCode::RShift,
            O::BitOr => OperatorCode::BitOr,
            O::BitXor => OperatorCode::BitXor,
            O::BitAnd => OperatorCode::BitAnd,
            O::FloorDiv => OperatorCode::FloorDiv,
        }
    }

    /// The guard native that performs and charges this operator,
    /// `_pvm_binop_<op>(a, b)`. One per operator rather than one taking the
    /// operator's code: a two-argument call costs ~20 ns less than a
    /// three-argument one (127 against 148 ns per guarded statement, release
    /// build), on every guarded operator.
    pub const fn binop_guard(self) -> &'static str {
        self.guard_names().0
    }

    /// The guard native that performs and charges `x op= y` in place,
    /// `_pvm_augop_<op>(x, y[, container])` (one per operator, as
    /// [`OperatorCode::binop_guard`]).
    pub const fn augop_guard(self) -> &'static str {
        self.guard_names().1
    }

    /// The operator's `_pvm_binop_` and `_pvm_augop_` names, from one stem.
    const fn guard_names(self) -> (&'static str, &'static str) {
        macro_rules! names {
            ($stem:literal) => {
                (concat!("_pvm_binop_", $stem), concat!("_pvm_augop_", $stem))
            };
        }
        match self {
            OperatorCode::Add => names!("add"),
            OperatorCode::Sub => names!("sub"),
            OperatorCode::Mult => names!("mul"),
            OperatorCode::MatMult => names!("matmul"),
            OperatorCode::Div => names!("truediv"),
            OperatorCode::Mod => names!("mod"),
            OperatorCode::Pow => names!("pow"),
            OperatorCode::LShift => names!("lshift"),
            OperatorCode::RShift => names!("rshift"),
            OperatorCode::BitOr => names!("or"),
            OperatorCode::BitXor => names!("xor"),
            OperatorCode::BitAnd => names!("and"),
            OperatorCode::FloorDiv => names!("floordiv"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_are_listed_once_with_the_prefix() {
        for (i, g) in Guard::ALL.iter().enumerate() {
            assert!(g.name().starts_with(GUARD_PREFIX), "{g:?}");
            assert_eq!(Guard::from_name(g.name()), Some(*g));
            assert!(!Guard::ALL[i + 1..].contains(g), "{g:?} listed twice");
        }
        assert_eq!(Guard::from_name("_pvm_frame"), None);
    }

    #[test]
    fn every_operator_has_its_own_guards_in_their_families() {
        for (i, op) in OperatorCode::ALL.iter().enumerate() {
            assert!(op.binop_guard().starts_with(Guard::Binop.name()));
            assert!(op.augop_guard().starts_with(Guard::Augop.name()));
            assert!(!OperatorCode::ALL[i + 1..]
                .iter()
                .any(|other| other.augop_guard() == op.augop_guard()));
            assert!(!OperatorCode::ALL[i + 1..]
                .iter()
                .any(|other| other.binop_guard() == op.binop_guard()));
        }
    }
}
