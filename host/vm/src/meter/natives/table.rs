//! The allow-list: every native of a built-in type that actor code may
//! call, with its price. A native no rule names is refused when called
//! during an execution, with an error that names it
//! ([`super::price::UNPRICED`]).
//!
//! Read it as documentation: each [`Rule`] says which types and names it
//! covers, how they are charged ([`Price`]) and why. `docs/METERING.md`
//! ("Natives") is generated from it (`natives::tests::metering_md_lists_the_allow_list`).
//!
//! A rule names groups of types and of natives; it prices the pairs that
//! exist (`natives::install::tests` checks that every name and every type
//! of a rule is used, and that no native is in two rules).
//!
//! Rules cover a type's *own* namespace; subclasses reach the same entries
//! through their MRO (`bool` uses `int`'s, `KeyError` uses
//! `BaseException`'s), so a rule names the type that defines the native.
//!
//! Imports nothing but the price and operator codes.

use super::price::Price;
use crate::rules::guards::OperatorCode;

/// One line of the allow-list.
pub(crate) struct Rule {
    /// The types whose own namespace holds these natives.
    pub(crate) types: &'static [&'static str],
    /// The natives' names.
    pub(crate) names: &'static [&'static str],
    /// How a call is charged.
    pub(crate) price: Price,
    /// Why that price is right (read by the generated docs).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) why: &'static str,
}

const TEXT: &[&str] = &["str", "bytes", "bytearray"];
const CONTAINERS: &[&str] = &["list", "tuple", "dict", "set", "frozenset"];
const SETS: &[&str] = &["set", "frozenset"];
const NUMBERS: &[&str] = &["int", "float"];
const VIEWS: &[&str] = &["dict_keys", "dict_items", "dict_values"];
const ITERATORS: &[&str] = &[
    "list_iterator",
    "list_reverseiterator",
    "tuple_iterator",
    "str_iterator",
    "bytes_iterator",
    "bytearray_iterator",
    "range_iterator",
    "longrange_iterator",
    "set_iterator",
    "dict_keyiterator",
    "dict_valueiterator",
    "dict_itemiterator",
    "dict_reversekeyiterator",
    "dict_reversevalueiterator",
    "dict_reverseitemiterator",
    "enumerate",
    "zip",
    "map",
    "filter",
    "reversed",
    "generator",
    "iterator",
    "callable_iterator",
];
/// Types whose `==`/`<`/… compare at most a constant amount.
const SMALL_COMPARABLE: &[&str] = &[
    "int",
    "float",
    "bool",
    "NoneType",
    "range",
    "slice",
    "type",
    "method",
    "builtin_function_or_method",
    "GenericAlias",
    "Union",
    "function",
    "staticmethod",
    "classmethod",
    "super",
];

macro_rules! op {
    ($op:ident) => {
        Price::Operator {
            op: OperatorCode::$op,
            reflected: false,
        }
    };
    (reflected $op:ident) => {
        Price::Operator {
            op: OperatorCode::$op,
            reflected: true,
        }
    };
}

/// The allow-list (see the module docs).
pub(crate) const RULES: &[Rule] = &[
    // ---- object and the machinery every class uses ----
    Rule {
        types: &["object"],
        names: &["__init__", "__new__", "__init_subclass__", "__subclasshook__", "__str__", "__getattribute__", "__setattr__", "__delattr__"],
        price: Price::Free,
        why: "construction, class creation, attribute access (one dict operation; actors cannot name the attribute dunders, the VM's own Python can)",
    },
    Rule {
        types: &["object"],
        names: &["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__"],
        price: Price::Free,
        why: "identity-based defaults (the repr is address-free; unhashable objects refuse `__hash__`); a class's `==` by identity is charged a cycle in its slot (`meter::slots`), so probing colliding keys pays per probe",
    },
    Rule {
        types: &["object"],
        names: &["__format__"],
        price: Price::FormatSpec,
        why: "an empty spec formats str(x); any other is refused by the type",
    },
    Rule {
        types: &["type"],
        names: &["__call__", "__new__", "__init__", "__getattribute__", "__prepare__", "__instancecheck__", "__subclasscheck__", "__or__", "__ror__", "mro"],
        price: Price::Free,
        why: "class creation and isinstance; construction itself is charged by the type stand-ins and the call slots",
    },
    Rule {
        types: &["mappingproxy"],
        names: &["get", "__getitem__", "__contains__", "__iter__", "__len__", "keys", "values", "items"],
        price: Price::Free,
        why: "a class's namespace, read by the VM's library modules (actors cannot reach `__dict__`): one lookup, or lazy",
    },
    Rule {
        types: &["function", "method", "builtin_function_or_method", "staticmethod", "classmethod", "property", "super"],
        names: &["__call__", "__get__", "__set__", "__delete__", "__init__", "__new__", "__set_name__", "getter", "setter", "deleter"],
        price: Price::Free,
        why: "calling and binding; the callee charges its own work",
    },
    Rule {
        types: &["GenericAlias", "Union"],
        names: &["__call__", "__getitem__", "__iter__", "__or__", "__ror__", "__instancecheck__", "__subclasscheck__", "__mro_entries__", "__class_getitem__"],
        price: Price::Constant(400),
        why: "annotations (`list[int]`, `int | None`): a handful of types each, but ~5 µs to build (measured at 400–540 ns per cycle uncharged)",
    },
    Rule {
        types: &["list", "tuple", "dict", "set", "frozenset", "enumerate", "generator"],
        names: &["__class_getitem__"],
        price: Price::Constant(400),
        why: "`list[int]` in annotations: builds a generic alias (~5 µs)",
    },
    Rule {
        types: SMALL_COMPARABLE,
        names: &["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__repr__", "__bool__"],
        price: Price::Free,
        why: "fixed-size values (ints are capped at 65,536 bits)",
    },
    Rule {
        types: &["NotImplementedType", "ellipsis"],
        names: &["__repr__", "__bool__"],
        price: Price::Free,
        why: "singletons",
    },
    // ---- exceptions ----
    Rule {
        types: &["BaseException", "StopIteration", "KeyError", "OSError", "SyntaxError", "ImportError", "AttributeError", "NameError", "UnicodeDecodeError", "UnicodeEncodeError", "UnicodeTranslateError", "SystemExit"],
        names: &["__new__", "__init__", "__str__", "__repr__", "with_traceback", "add_note"],
        price: Price::Constant(25),
        why: "an exception holds its arguments (formatting them is charged by their repr slots); making one costs ~1 µs (`ValueError(x)` is charged the same through the type call)",
    },
    // ---- numbers ----
    Rule {
        types: NUMBERS,
        names: &["__new__"],
        price: Price::Free,
        why: "`int(x)` is charged by the `int` stand-in before it reaches here",
    },
    Rule {
        types: NUMBERS,
        names: &["__abs__", "__neg__", "__pos__", "__invert__", "__index__", "__int__", "__float__", "__trunc__", "__floor__", "__ceil__", "bit_length", "bit_count", "conjugate", "is_integer", "as_integer_ratio", "hex", "fromhex", "from_number"],
        price: Price::Constant(8),
        why: "linear in an int of at most 65,536 bits (1,024 limbs): cheap at the cap",
    },
    Rule { types: NUMBERS, names: &["__add__", "__radd__"], price: op!(Add), why: "as `+`" },
    Rule { types: &["int", "float"], names: &["__sub__"], price: op!(Sub), why: "as `-`" },
    Rule { types: &["int", "float"], names: &["__rsub__"], price: op!(reflected Sub), why: "as `-`" },
    Rule { types: &["int", "float"], names: &["__mul__"], price: op!(Mult), why: "as `*`: limb products, the int cap" },
    Rule { types: &["int", "float"], names: &["__rmul__"], price: op!(reflected Mult), why: "as `*`" },
    Rule { types: &["int", "float"], names: &["__truediv__"], price: op!(Div), why: "as `/`" },
    Rule { types: &["int", "float"], names: &["__rtruediv__"], price: op!(reflected Div), why: "as `/`" },
    Rule { types: &["int", "float"], names: &["__floordiv__", "__divmod__"], price: op!(FloorDiv), why: "as `//`: quotient limbs × divisor limbs" },
    Rule { types: &["int", "float"], names: &["__rfloordiv__", "__rdivmod__"], price: op!(reflected FloorDiv), why: "as `//`" },
    Rule { types: &["int", "float"], names: &["__mod__"], price: op!(Mod), why: "as `%` on numbers" },
    Rule { types: &["int", "float"], names: &["__rmod__"], price: op!(reflected Mod), why: "as `%` on numbers" },
    Rule { types: &["int", "float"], names: &["__pow__"], price: op!(Pow), why: "as `**`: the result's limbs × the exponent's bits, the int cap (three-argument pow: call `pow(a, e, m)`)" },
    Rule { types: &["int", "float"], names: &["__rpow__"], price: op!(reflected Pow), why: "as `**`" },
    Rule { types: &["int"], names: &["__lshift__"], price: op!(LShift), why: "as `<<`: the result's size, the int cap" },
    Rule { types: &["int"], names: &["__rlshift__"], price: op!(reflected LShift), why: "as `<<`" },
    Rule { types: &["int"], names: &["__rshift__", "__rrshift__"], price: Price::Constant(20), why: "the result is no larger than the int; reached directly or by a derived class's slot (~100 ns)" },
    Rule { types: &["int", "bool"], names: &["__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__"], price: Price::Constant(8), why: "linear in ints under the cap; reached directly or by a derived class's slot (~100 ns)" },
    Rule { types: NUMBERS, names: &["__round__"], price: Price::Round, why: "`round(x, -n)` computes 10**n: n is bounded like any int" },
    Rule { types: &["int", "float", "bool"], names: &["__format__"], price: Price::FormatSpec, why: "the spec's width is checked (`>16000000` would allocate 16 MB)" },
    Rule { types: &["int"], names: &["to_bytes"], price: Price::ToBytes, why: "the requested length is allocated" },
    Rule { types: &["int"], names: &["from_bytes"], price: Price::FromBytes, why: "the result's bits are capped" },
    // ---- text ----
    Rule {
        types: TEXT,
        names: &["__new__", "__len__", "__iter__", "__str__", "__bytes__"],
        price: Price::Free,
        why: "constant time (construction is charged by the stand-ins)",
    },
    Rule {
        types: TEXT,
        names: &["__hash__"],
        price: Price::Repr,
        why: "a bytes hash walks the bytes (a str caches it; charged the same)",
    },
    Rule { types: TEXT, names: &["__repr__"], price: Price::Repr, why: "escapes every character" },
    Rule { types: TEXT, names: &["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"], price: Price::Compare, why: "compares up to the shorter operand" },
    Rule { types: TEXT, names: &["__getitem__"], price: Price::Sized, why: "a slice copies what it selects" },
    Rule { types: &["bytearray"], names: &["__setitem__", "__delitem__"], price: Price::StoreItem, why: "slice assignment and deletion move the tail; the value may be any iterable" },
    Rule { types: &["bytearray"], names: &["__init__"], price: Price::Consuming, why: "walks its argument" },
    Rule { types: TEXT, names: &["__contains__"], price: Price::Sized, why: "a substring search" },
    Rule { types: TEXT, names: &["__add__"], price: op!(Add), why: "as `+`: the result's size" },
    Rule { types: TEXT, names: &["__mul__", "__imul__"], price: op!(Mult), why: "as `*`: the repeated size is checked before allocating" },
    Rule { types: TEXT, names: &["__rmul__"], price: op!(reflected Mult), why: "as `*`" },
    Rule {
        types: TEXT,
        names: &["__mod__", "__rmod__"],
        price: Price::Refused("use the `%` operator, which checks the template before formatting"),
        why: "printf-style formatting reads widths from the template",
    },
    Rule {
        types: TEXT,
        names: &["capitalize", "casefold", "lower", "upper", "swapcase", "title", "encode", "decode", "hex", "fromhex", "split", "rsplit", "splitlines", "partition", "rpartition", "removeprefix", "removesuffix", "startswith", "endswith", "find", "rfind", "index", "rindex"],
        price: Price::Sized,
        why: "linear in the receiver, the arguments and the result",
    },
    Rule {
        types: TEXT,
        names: &["isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper"],
        price: Price::Receiver,
        why: "a test of every character",
    },
    Rule { types: TEXT, names: &["ljust", "rjust", "center", "zfill"], price: Price::Pad, why: "the width is allocated" },
    Rule { types: TEXT, names: &["expandtabs"], price: Price::ExpandTabs, why: "every tab may become `tabsize` spaces" },
    Rule { types: TEXT, names: &["replace"], price: Price::Replace, why: "every occurrence may grow; RustPython scans at ~3 cycles per 16 bytes" },
    Rule { types: TEXT, names: &["count"], price: Price::Count, why: "RustPython scans at ~4 cycles per 16 bytes" },
    Rule { types: TEXT, names: &["strip", "lstrip", "rstrip"], price: Price::CharacterSet, why: "each stripped character is looked up in the set of characters" },
    Rule { types: &["str"], names: &["translate"], price: Price::Translate, why: "a table lookup per character" },
    Rule { types: &["bytes", "bytearray"], names: &["translate"], price: Price::Translate, why: "a table lookup per byte; `delete` is searched per byte" },
    Rule { types: TEXT, names: &["maketrans"], price: Price::Build, why: "walks its arguments (a dict or two strings) into a new dict" },
    Rule { types: TEXT, names: &["join"], price: Price::Join, why: "walks every part; the result is checked before it is allocated" },
    Rule { types: &["str"], names: &["format", "format_map"], price: Price::Format, why: "the template is parsed on every call, fields and widths checked" },
    Rule { types: &["str"], names: &["__format__"], price: Price::FormatSpec, why: "the spec's width is checked" },
    Rule { types: &["bytearray"], names: &["append", "pop", "clear", "copy", "reverse", "remove", "insert"], price: Price::Sized, why: "at most a walk of the buffer" },
    Rule { types: &["bytearray"], names: &["extend", "__iadd__"], price: Price::Extend, why: "walks its argument onto the end (bytes are copied)" },
    // ---- containers ----
    Rule {
        types: CONTAINERS,
        names: &["__new__", "__len__", "__iter__", "__reversed__", "__bool__"],
        price: Price::Free,
        why: "constant time (construction is charged by the stand-ins)",
    },
    Rule { types: CONTAINERS, names: &["__repr__"], price: Price::Repr, why: "formats every element (nested ones charge their own)" },
    Rule { types: &["tuple", "frozenset"], names: &["__hash__"], price: Price::Repr, why: "hashes every element" },
    Rule { types: CONTAINERS, names: &["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"], price: Price::Compare, why: "compares up to the shorter operand (nested ones charge their own)" },
    Rule { types: &["list", "tuple"], names: &["__getitem__"], price: Price::Sized, why: "a slice copies what it selects" },
    Rule { types: &["dict"], names: &["__getitem__", "get", "setdefault", "pop", "popitem", "keys", "values", "items", "__setitem__", "__delitem__"], price: Price::Free, why: "one hash lookup (tuple and bytes keys charge their hash)" },
    Rule { types: &["list"], names: &["__setitem__", "__delitem__"], price: Price::StoreItem, why: "a shift of the list; a slice assignment takes any iterable" },
    Rule { types: &["list"], names: &["insert", "remove", "pop", "index", "count", "reverse", "copy", "clear"], price: Price::Sized, why: "at most a walk or a shift of the list" },
    Rule { types: &["list"], names: &["append"], price: Price::Free, why: "amortised constant" },
    Rule { types: &["tuple"], names: &["index", "count"], price: Price::Sized, why: "a walk" },
    Rule { types: &["list", "tuple", "dict", "set", "frozenset"], names: &["__contains__"], price: Price::Sized, why: "a walk of a list or tuple; a hash lookup otherwise (the same charge, per element of a list)" },
    Rule { types: &["list"], names: &["__add__"], price: Price::Consuming, why: "walks the other operand" },
    Rule { types: &["list"], names: &["__iadd__"], price: Price::Extend, why: "`+=` walks any iterable onto the end" },
    Rule { types: &["list"], names: &["__mul__", "__imul__"], price: op!(Mult), why: "as `*`: the repeated size is checked before allocating" },
    Rule { types: &["list"], names: &["__rmul__"], price: op!(reflected Mult), why: "as `*`" },
    Rule { types: &["tuple"], names: &["__add__", "__mul__", "__rmul__"], price: op!(Mult), why: "as `*`: the repeated size is checked" },
    Rule { types: &["list"], names: &["extend"], price: Price::Extend, why: "walks its argument onto the end" },
    Rule { types: &["list"], names: &["__init__"], price: Price::Consuming, why: "clears the list and walks its argument" },
    Rule { types: &["list"], names: &["sort"], price: Price::Sort, why: "n·log2 n comparisons" },
    Rule { types: &["dict"], names: &["update", "__ior__"], price: Price::Extend, why: "walks its argument and inserts every entry" },
    Rule { types: &["dict"], names: &["__init__", "__or__", "__ror__"], price: Price::Build, why: "walks its argument into a new dict" },
    Rule { types: &["dict"], names: &["fromkeys"], price: Price::FromKeys, why: "walks its keys into a new dict (the value is not walked)" },
    Rule { types: &["dict"], names: &["copy", "clear"], price: Price::Sized, why: "a walk" },
    Rule { types: &["set"], names: &["add", "pop"], price: Price::Free, why: "one hash lookup" },
    Rule { types: &["set"], names: &["discard", "remove"], price: Price::SetKey, why: "one hash lookup; a set key is retried as a frozenset copy of it after a swallowed TypeError (#47: `s.discard(t)` of a 478-item set `t` ran at ~5.6× ordinary code)" },
    Rule { types: SETS, names: &["copy", "clear"], price: Price::Sized, why: "a walk" },
    Rule {
        types: &["set"],
        names: &["update", "difference_update", "__ior__", "__isub__"],
        price: Price::Extend,
        why: "walks every argument, hashing every element, and changes the set in place",
    },
    Rule {
        types: SETS,
        names: &["union", "intersection", "difference", "symmetric_difference", "intersection_update", "symmetric_difference_update", "issubset", "issuperset", "isdisjoint", "__init__", "__and__", "__or__", "__xor__", "__sub__", "__rand__", "__ror__", "__rxor__", "__rsub__", "__iand__", "__ixor__"],
        price: Price::Build,
        why: "walks every argument and hashes every element",
    },
    // ---- ranges, slices, views and iterators ----
    Rule { types: &["range"], names: &["__new__", "__len__", "__iter__", "__reversed__", "__getitem__"], price: Price::Free, why: "lazy: whoever walks it pays per item" },
    Rule { types: &["range"], names: &["__contains__", "index", "count"], price: Price::RangeSearch, why: "constant for an int; any other value is compared with every element (`\"x\" in range(10**18)` never returned)" },
    Rule { types: &["slice"], names: &["__new__", "indices"], price: Price::Free, why: "three ints" },
    Rule { types: VIEWS, names: &["__len__", "__iter__", "__reversed__", "__contains__"], price: Price::Free, why: "a view of the dict: lazy, or one lookup" },
    Rule { types: VIEWS, names: &["__repr__"], price: Price::Repr, why: "formats every element" },
    Rule {
        types: &["dict_keys", "dict_items"],
        names: &["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__", "__xor__", "__sub__", "__rand__", "__ror__", "__rxor__", "__rsub__", "isdisjoint"],
        price: Price::Build,
        why: "set operations walk both operands into a new set",
    },
    Rule { types: ITERATORS, names: &["__new__", "__iter__", "__next__", "__length_hint__", "__repr__"], price: Price::Free, why: "one item at a time (a native that drains one charges each item)" },
    Rule { types: &["generator"], names: &["send", "throw", "close"], price: Price::Free, why: "resumes metered code" },
    // ---- explicit refusals ----
    Rule {
        types: &["object", "int", "str", "bytes", "bytearray", "list", "dict", "set", "frozenset"],
        names: &["__sizeof__", "__alloc__"],
        price: Price::Refused("memory layout differs between builds and nodes"),
        why: "not deterministic",
    },
    Rule {
        types: &["object", "int", "float", "str", "bytes", "bytearray", "set", "frozenset", "range", "slice", "tuple", "BaseException"],
        names: &["__reduce__", "__reduce_ex__", "__getnewargs__", "__getstate__", "__setstate__"],
        price: Price::Refused("pickling is not available"),
        why: "no pickle",
    },
];

/// The builtins in an actor's namespace (`runtime.rs` builds it from these
/// rules: a name without a rule is not a builtin). [`Price::Stand`] marks
/// builtins replaced by a charging stand-in of their own.
pub(crate) const BUILTIN_RULES: &[Rule] = &[
    Rule {
        types: &["builtins"],
        names: &["abs", "chr", "ord", "len", "callable", "next", "bool", "object", "super", "staticmethod", "classmethod", "property", "slice", "NotImplemented", "Ellipsis"],
        price: Price::Free,
        why: "constant time (ints are capped at 65,536 bits)",
    },
    Rule {
        types: &["builtins"],
        names: &["range", "enumerate", "zip", "map", "filter", "reversed"],
        price: Price::Free,
        why: "lazy: whoever walks them pays per item",
    },
    Rule {
        types: &["builtins"],
        names: &["repr"],
        price: Price::Free,
        why: "the repr slots charge per element (`meter::slots`)",
    },
    Rule {
        types: &["builtins"],
        names: &["hash"],
        price: Price::Sized,
        why: "hashes every byte of a str or bytes and every item of a tuple (a `__hash__` of your own runs metered); identity hashes are deterministic (`identity_hash`)",
    },
    Rule {
        types: &["builtins"],
        names: &["ascii"],
        price: Price::Translate,
        why: "the repr slots charge the walk; escaping looks at every character and writes up to ten per character (at `Sized` it ran at 46 ns per cycle, 6× the median)",
    },
    Rule {
        types: &["builtins"],
        names: &["round"],
        price: Price::Free,
        why: "reaches `__round__`, priced above",
    },
    Rule {
        types: &["builtins"],
        names: &["divmod"],
        price: op!(FloorDiv),
        why: "as `//`: quotient limbs × divisor limbs (two 65,536-bit ints divide in ~1M limb steps)",
    },
    Rule {
        types: &["builtins"],
        names: &["sum", "min", "max", "any", "all", "sorted", "list", "tuple", "set", "frozenset", "dict"],
        price: Price::Stand("walks its iterable (lazy ones drained, per item; `sorted` + n·log2 n) + result (`builtin_natives::consuming_builtin`)"),
        why: "their work is the walk",
    },
    Rule {
        types: &["builtins"],
        names: &["int", "str", "bytes", "bytearray", "bin", "hex", "oct", "pow"],
        price: Price::Stand("arguments + result; lengths, int bits and `pow`'s modular squarings checked or charged first (`builtin_natives::converting_builtin`)"),
        why: "conversions grow with their input and output",
    },
    Rule {
        types: &["builtins"],
        names: &["getattr", "hasattr", "setattr", "delattr", "format", "iter", "type"],
        price: Price::Stand("names checked like written ones and charged 4 per 16 bytes; `format` specs checked (`builtin_natives::reflective_builtins`)"),
        why: "names and specs computed at run time",
    },
    Rule {
        types: &["builtins"],
        names: &["isinstance", "issubclass"],
        price: Price::Stand("a tuple of classes: nesting bounded (`nesting::check_class_info`), charged as it is walked: 6 cycles per class past the first 8, 1 per nested tuple (`builtin_natives::reflective_builtins`)"),
        why: "RustPython walks a nested tuple of classes recursively",
    },
];

/// The functions of the modules the VM implements natively (`pvm_host` and
/// the helper modules). Each charges in its own implementation, before its
/// work, what the text says; a test keeps the modules and these rules in
/// step, so a function added to a module without a rule fails it.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) const MODULE_RULES: &[Rule] = &[
    Rule {
        types: &["pvm_host"],
        names: &["block_height", "block_timestamp", "block_timestamp_ms", "trigger", "actor_address", "tx_sender", "caller", "value", "cycles_used"],
        price: Price::Stand("2 cycles (a context read)"),
        why: "constant per execution",
    },
    Rule {
        types: &["pvm_host"],
        names: &["balance", "transfer", "emit", "call", "release_escrow"],
        price: Price::Stand("the host's cost (METERING.md \"Host calls\"); `emit` and `call` also pay their data's bytes and nested values, before converting them"),
        why: "account reads and writes, events, nested calls",
    },
    Rule {
        types: &["pvm_host"],
        names: &["schedule_timer", "schedule_timer_ex", "schedule_timer_at", "watch", "extend_timer", "cancel_timer", "revoke_timer_payments", "timer_quote", "timer_handler"],
        price: Price::Stand("the host's cost (METERING.md \"Timers\"): 200 cycles plus the bytes a timer adds or its record's bytes; `timer_handler` is a decorator"),
        why: "CIP-5 §6.1",
    },
    Rule {
        types: &["pvm_host"],
        names: &["book_timer", "book_timer_at", "dead_letters", "retry_dead_letter", "drop_dead_letter"],
        price: Price::Stand("the host's cost (METERING.md \"Timers\"): a booking as a schedule (plus its burned booking fee); `dead_letters` 10 cycles plus the queue's bytes, priced before it is read; retry as a schedule, drop 200"),
        why: "#45: scheduling, and reads whose size is known before they happen",
    },
    Rule {
        types: &["hashing"],
        names: &["keccak256", "sha256"],
        price: Price::Stand("30 + 2 per 16 bytes (keccak) or 1 per 16 bytes (sha256)"),
        why: "linear in the input",
    },
    Rule {
        types: &["base64"],
        names: &["b64encode", "b64decode", "urlsafe_b64encode", "urlsafe_b64decode"],
        price: Price::Stand("1 + 2 per 16 bytes"),
        why: "linear codecs",
    },
    Rule {
        types: &["json"],
        names: &["dumps", "loads"],
        price: Price::Stand("1 + 1 per 16 bytes + 8 per nested value; ints beyond 64 bits by their quadratic decimal conversion"),
        why: "a linear codec (`serde_json`), big ints excepted",
    },
    Rule {
        types: &["math"],
        names: &["gcd", "isqrt", "factorial", "comb", "perm"],
        price: Price::Stand("by limbs: gcd 4·limbs² + 2·bits, isqrt limbs², factorial, comb and perm per multiplication step"),
        why: "quadratic big-int arithmetic",
    },
];

/// The natives that change their receiver, by type: each calls
/// [`crate::meter::writes::before_write`] first, so a value made at load is
/// restored after the call that wrote it (even the ones the allow-list
/// leaves free, `list.append`, `dict.__setitem__`).
pub(crate) const MUTATORS: &[(&str, &[&str])] = &[
    (
        "list",
        &[
            "append",
            "extend",
            "insert",
            "remove",
            "pop",
            "clear",
            "sort",
            "reverse",
            "__setitem__",
            "__delitem__",
            "__iadd__",
            "__imul__",
            "__init__",
        ],
    ),
    (
        "dict",
        &[
            "__setitem__",
            "__delitem__",
            "setdefault",
            "pop",
            "popitem",
            "clear",
            "update",
            "__ior__",
            "__init__",
        ],
    ),
    (
        "set",
        &[
            "add",
            "discard",
            "remove",
            "pop",
            "clear",
            "update",
            "intersection_update",
            "difference_update",
            "symmetric_difference_update",
            "__ior__",
            "__iand__",
            "__isub__",
            "__ixor__",
            "__init__",
        ],
    ),
    (
        "bytearray",
        &[
            "append",
            "extend",
            "insert",
            "pop",
            "remove",
            "clear",
            "reverse",
            "__setitem__",
            "__delitem__",
            "__iadd__",
            "__imul__",
            "__init__",
        ],
    ),
];

/// Does `type_name.name` change its receiver ([`MUTATORS`])?
pub(crate) fn mutates(type_name: &str, name: &str) -> bool {
    MUTATORS
        .iter()
        .any(|(t, names)| *t == type_name && names.contains(&name))
}
