//! Which names and attributes actor code may reach: one policy the deploy
//! validator ([`crate::deploy::sandbox`]) applies to what is written and the
//! reflective builtins (`getattr`, `setattr`, …, [`crate::meter::builtin_natives`])
//! apply to names computed at run time.
//!
//! Imports nothing from the rest of the crate.

/// Non-underscore attributes that expose frames, code or the class
/// hierarchy, by prefix.
pub const FORBIDDEN_ATTRIBUTE_PREFIXES: &[&str] = &["gi_", "cr_", "ag_", "f_", "tb_", "co_"];

/// Non-underscore attributes that are refused: `mro` exposes the class
/// hierarchy. (`dict.fromkeys` was refused while a native could drain an
/// unbounded iterable uncharged; the allow-list now drains it item by item.)
pub const FORBIDDEN_ATTRIBUTES: &[&str] = &["mro"];

/// `str.format` and `format_map` may only be called in place
/// (`"{}".format(x)`), where the method guard checks the format string: a
/// field like `{0.__class__}` performs attribute access from a string.
pub const FORMAT_METHODS: &[&str] = &["format", "format_map"];

/// Dunder methods actor code may name as attributes (`super().__init__(…)`,
/// `self.__eq__(other)`): protocol methods whose bodies are ordinary
/// (metered) code or builtin operations. Introspection (`__class__`,
/// `__dict__`, `__globals__`, `__subclasses__`, …) stays out of reach.
pub const PROTOCOL_DUNDERS: &[&str] = &[
    "__init__",
    "__post_init__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__repr__",
    "__str__",
    "__format__",
    "__len__",
    "__iter__",
    "__next__",
    "__contains__",
    "__getitem__",
    "__setitem__",
    "__delitem__",
    "__missing__",
    "__enter__",
    "__exit__",
    "__bool__",
    "__call__",
    "__add__",
    "__radd__",
    "__sub__",
    "__rsub__",
    "__mul__",
    "__rmul__",
    "__floordiv__",
    "__mod__",
    "__neg__",
    "__abs__",
    "__index__",
    "__int__",
    "__and__",
    "__or__",
    "__xor__",
    // Names and links that describe code and exceptions without reaching
    // the interpreter: a function's or class's name, its docstring, what a
    // decorator wrapped, an exception's cause and context.
    "__name__",
    "__qualname__",
    "__doc__",
    "__module__",
    "__wrapped__",
    "__cause__",
    "__context__",
    "__suppress_context__",
    "__notes__",
    "__members__",
];

/// Dunder names a class body may assign.
pub const CLASS_DUNDER_ATTRIBUTES: &[&str] = &["__match_args__", "__slots__", "__hash__"];

/// Dunder methods refused in every class, with the reason.
pub const REFUSED_DUNDER_METHODS: &[(&str, &str)] = &[
    (
        "__del__",
        "finalizers run when the garbage collector gets to the object, not at a point every node agrees on",
    ),
    (
        "__init_subclass__",
        "it runs while classes are being created, which this VM keeps to class statements",
    ),
    (
        "__class_getitem__",
        "it runs while annotations are evaluated; use typing.Generic",
    ),
    (
        "__set_name__",
        "it runs while classes are being created, which this VM keeps to class statements",
    ),
];

/// Dunder methods refused on the actor class (and its bases): they would
/// intercept `self.storage`, `self.address` and `self.deployer`, which the
/// VM sets on every invocation.
pub const ACTOR_REFUSED_DUNDER_METHODS: &[&str] = &[
    "__getattribute__",
    "__getattr__",
    "__setattr__",
    "__delattr__",
];

/// Why actor code may not read or write attribute `name` of an object, if it
/// may not. Format methods are allowed here (they are checked where they are
/// called).
pub fn refuse_attribute(name: &str) -> Option<&'static str> {
    if name.starts_with("__") && name.ends_with("__") && name.len() > 4 {
        if PROTOCOL_DUNDERS.contains(&name) {
            return None;
        }
        return Some("introspection attributes are not available to actors");
    }
    if name.starts_with("_pvm") {
        return Some("_pvm names are reserved for the VM");
    }
    if name.len() > 2 && name.starts_with('_') && name.ends_with('_') {
        // `_member_map_`, `_value_`: the VM library's own bookkeeping.
        return Some("_sunder_ attributes are reserved for the VM's library classes");
    }
    if FORBIDDEN_ATTRIBUTES.contains(&name)
        || FORBIDDEN_ATTRIBUTE_PREFIXES
            .iter()
            .any(|prefix| name.starts_with(prefix))
    {
        return Some("introspection attributes are not available to actors");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_dunders_are_reachable_and_introspection_is_not() {
        assert_eq!(refuse_attribute("__init__"), None);
        assert_eq!(refuse_attribute("balance"), None);
        assert_eq!(refuse_attribute("format"), None);
        assert_eq!(refuse_attribute("_balance"), None);
        assert_eq!(refuse_attribute("__private"), None);
        for name in [
            "__class__",
            "__dict__",
            "__globals__",
            "__subclasses__",
            "_pvm_x",
            "_value_",
            "gi_frame",
            "mro",
        ] {
            assert!(refuse_attribute(name).is_some(), "{name}");
        }
    }
}
