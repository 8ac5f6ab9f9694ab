//! A generated workload for every rule of the allow-list (natives of the
//! built-in types, builtins, native modules) and for storage, for the fairness benchmark (`cargo bench -p timerhost-vm --bench
//! fairness`): each measures what a cycle buys when the native runs on
//! inputs of size `n`, `4n` and `16n`. A unit test requires every rule that
//! does not refuse to have one.

/// One workload: `setup` builds inputs of size `n` (ordinary code), `op` is
/// the statement measured, repeated `k` times in a loop.
#[derive(Clone, Copy, Debug)]
pub struct Workload {
    /// `type.name` of the native (`module.name`, `storage.*`).
    pub native: &'static str,
    /// Statements that build the inputs from `n` (indented by the runner).
    pub setup: &'static str,
    /// The statement under measurement.
    pub op: &'static str,
    /// The smallest size measured.
    pub n: u64,
}

const fn w(native: &'static str, setup: &'static str, op: &'static str, n: u64) -> Workload {
    Workload {
        native,
        setup,
        op,
        n,
    }
}

/// The workloads (see the module docs).
pub const WORKLOADS: &[Workload] = &[
    // object and classes
    w("object.__init__", "class C:\n    pass", "C()", 1),
    w("object.__lt__", "o = object()", "o.__hash__()", 1),
    w(
        "object.__eq__",
        "class C:\n    pass\na = C()\nb = C()",
        "a == b",
        1,
    ),
    w("object.__format__", "o = 'x' * n", "format(o, '')", 1000),
    w(
        "type.__call__",
        "class C:\n    pass",
        "isinstance(C(), C)",
        1,
    ),
    w(
        "mappingproxy.get",
        "import enum\nclass E(enum.Enum):\n    A = 1",
        "E.A",
        1,
    ),
    w("function.__call__", "def f(x):\n    return x", "f(n)", 1),
    w("GenericAlias.__or__", "A = list[int]", "A | None", 1),
    w("list.__class_getitem__", "", "dict[str, int]", 1),
    w(
        "int.__eq__",
        "a = 7 ** n\nb = 7 ** n + 1",
        "a.__eq__(b)",
        100,
    ),
    w("ellipsis.__repr__", "", "repr(...)", 1),
    w(
        "BaseException.__init__",
        "s = 'x' * n",
        "ValueError(s)",
        1000,
    ),
    // numbers
    w("int.__new__", "s = '7' * n", "int(s)", 100),
    w("int.__abs__", "a = -(7 ** n)", "a.__abs__()", 100),
    w("int.__add__", "a = 7 ** n", "a.__add__(a)", 100),
    w("int.__sub__", "a = 7 ** n", "a.__sub__(1)", 100),
    w("int.__rsub__", "a = 7 ** n", "a.__rsub__(1)", 100),
    w("int.__mul__", "a = 7 ** n", "a.__mul__(a)", 100),
    w("int.__rmul__", "a = 7 ** n", "a.__rmul__(a)", 100),
    w(
        "int.__truediv__",
        "class I(int):\n    pass\na = I(7 ** n)",
        "a / a",
        10,
    ),
    w(
        "int.__rtruediv__",
        "class I(int):\n    pass\na = I(7 ** n)",
        "7 / a",
        10,
    ),
    w(
        "int.__floordiv__",
        "a = 7 ** (2 * n)\nb = 3 ** n",
        "a.__floordiv__(b)",
        100,
    ),
    w(
        "int.__rfloordiv__",
        "class I(int):\n    pass\na = 7 ** (2 * n)\nb = I(3 ** n)",
        "a // b",
        100,
    ),
    w(
        "int.__mod__",
        "a = 7 ** (2 * n)\nb = 3 ** n",
        "a.__mod__(b)",
        100,
    ),
    w(
        "int.__rmod__",
        "class I(int):\n    pass\na = 7 ** (2 * n)\nb = I(3 ** n)",
        "a % b",
        100,
    ),
    w(
        "int.__pow__",
        "class I(int):\n    pass\na = I(7)",
        "a ** n",
        100,
    ),
    w(
        "int.__rpow__",
        "class I(int):\n    pass\nm = I(n)",
        "7 ** m",
        100,
    ),
    w(
        "int.__lshift__",
        "class I(int):\n    pass\na = I(7 ** n)",
        "a << n",
        100,
    ),
    w(
        "int.__rlshift__",
        "class I(int):\n    pass\nm = I(n)",
        "(7 ** n) << m",
        100,
    ),
    w(
        "int.__rshift__",
        "class I(int):\n    pass\na = I(7 ** n)",
        "a >> 3",
        100,
    ),
    w("int.__and__", "a = 7 ** n", "a.__and__(a)", 100),
    w("int.__round__", "a = 7 ** n", "round(a, -n)", 100),
    w("int.__format__", "a = 7 ** n", "a.__format__('>20')", 100),
    w("int.to_bytes", "a = 7 ** n", "a.to_bytes(n, 'big')", 100),
    w(
        "int.from_bytes",
        "b = b'\\x07' * n",
        "int.from_bytes(b, 'big')",
        100,
    ),
    // text
    w("str.__len__", "s = 'x' * n", "len(s)", 1000),
    w("bytes.__hash__", "b = b'x' * n", "b.__hash__()", 1000),
    w("str.__repr__", "s = 'x' * n", "s.__repr__()", 1000),
    w(
        "str.__eq__",
        "s = 'x' * n\nt = 'x' * n",
        "s.__eq__(t)",
        1000,
    ),
    w(
        "str.__getitem__",
        "s = 'x' * n",
        "s.__getitem__(slice(0, n))",
        1000,
    ),
    w(
        "bytearray.__setitem__",
        "b = bytearray(n)",
        "b.__setitem__(slice(0, 1), b'xy')",
        1000,
    ),
    w(
        "str.__contains__",
        "s = 'x' * n",
        "s.__contains__('y')",
        1000,
    ),
    w("str.__add__", "s = 'x' * n", "s.__add__(s)", 1000),
    w("str.__mul__", "s = 'x' * n", "s.__mul__(3)", 1000),
    w("str.__rmul__", "s = 'x'", "s.__rmul__(n)", 1000),
    w("str.upper", "s = 'x' * n", "s.upper()", 1000),
    w("str.isalnum", "s = 'x' * n", "s.isalnum()", 1000),
    w("str.ljust", "s = 'x'", "s.ljust(n)", 1000),
    w("str.expandtabs", "s = 'a\\tb' * n", "s.expandtabs(8)", 1000),
    w("str.replace", "s = 'ab' * n", "s.replace('a', 'cc')", 1000),
    w("str.count", "s = 'ab' * n", "s.count('a')", 1000),
    w("str.strip", "s = 'ab' * n", "s.strip('cd' * 10)", 1000),
    w(
        "str.translate",
        "s = 'ab' * n\nt = {97: 'c'}",
        "s.translate(t)",
        1000,
    ),
    w(
        "bytes.translate",
        "b = b'ab' * n",
        "b.translate(None, b'cd' * 10)",
        1000,
    ),
    w(
        "str.maketrans",
        "d = {i: 'x' for i in range(n)}",
        "str.maketrans(d)",
        1000,
    ),
    w("str.join", "parts = ['ab'] * n", "'-'.join(parts)", 1000),
    w("str.format", "s = 'x' * n", "'{} {}'.format(s, s)", 1000),
    w("str.__format__", "s = 'x' * n", "s.__format__('>10')", 1000),
    w("bytearray.append", "b = bytearray(n)", "b.copy()", 1000),
    w(
        "bytearray.extend",
        "b = bytearray()\nm = b'x' * n",
        "b.extend(m)",
        1000,
    ),
    // containers
    w("list.__len__", "xs = [0] * n", "len(xs)", 1000),
    w("list.__repr__", "xs = [0] * n", "xs.__repr__()", 1000),
    w("tuple.__hash__", "t = (0,) * n", "t.__hash__()", 1000),
    w(
        "list.__eq__",
        "xs = [0] * n\nys = [0] * n",
        "xs.__eq__(ys)",
        1000,
    ),
    w(
        "list.__getitem__",
        "xs = [0] * n",
        "xs.__getitem__(slice(0, n))",
        1000,
    ),
    w(
        "dict.__getitem__",
        "d = {i: i for i in range(n)}",
        "d.get(3)",
        1000,
    ),
    w("list.insert", "xs = [0] * n", "xs.insert(0, 1)", 1000),
    w("list.append", "xs = []", "xs.append(1)", 1),
    w("tuple.index", "t = (0,) * n + (1,)", "t.index(1)", 1000),
    w(
        "list.__contains__",
        "xs = [0] * n",
        "xs.__contains__(1)",
        1000,
    ),
    w("list.__add__", "xs = [0] * n", "xs.__add__(xs)", 1000),
    w("list.__mul__", "xs = [0] * n", "xs.__mul__(3)", 1000),
    w("list.__rmul__", "xs = [0] * n", "xs.__rmul__(3)", 1000),
    w("tuple.__add__", "t = (0,) * n", "t.__add__(t)", 1000),
    w("list.extend", "m = range(n)", "[].extend(m)", 1000),
    w(
        "list.sort",
        "xs = list(range(n, 0, -1))",
        "sorted(xs)",
        1000,
    ),
    w(
        "dict.update",
        "m = {i: i for i in range(n)}",
        "{}.update(m)",
        1000,
    ),
    w(
        "dict.copy",
        "m = {i: i for i in range(n)}",
        "m.copy()",
        1000,
    ),
    w("set.add", "s = set()", "s.add(5)", 1),
    w(
        "set.discard",
        "s = set(range(n))\nt = set(range(n))",
        "s.discard(t)",
        1000,
    ),
    w("set.copy", "s = set(range(n))", "s.copy()", 1000),
    w("set.union", "s = set(range(n))", "s.union(range(n))", 1000),
    w("range.__new__", "", "range(n)", 1000),
    w(
        "range.__contains__",
        "r = range(n)",
        "r.__contains__('x')",
        1000,
    ),
    w("slice.__new__", "", "slice(1, n)", 1),
    w(
        "dict_keys.__len__",
        "d = {i: i for i in range(n)}",
        "len(d.keys())",
        1000,
    ),
    w(
        "dict_keys.__repr__",
        "d = {i: i for i in range(n)}",
        "d.keys().__repr__()",
        1000,
    ),
    w(
        "dict_keys.__and__",
        "d = {i: i for i in range(n)}",
        "d.keys() & d.keys()",
        1000,
    ),
    w(
        "list_iterator.__next__",
        "xs = [0] * n",
        "next(iter(xs))",
        1000,
    ),
    w(
        "generator.send",
        "def g():\n    while True:\n        yield 1\nit = g()\nnext(it)",
        "it.send(1)",
        1,
    ),
    // builtins
    w("builtins.abs", "a = -(7 ** n)", "abs(a)", 100),
    w(
        "builtins.isinstance",
        "t = (str,) * n",
        "isinstance(1, t)",
        1000,
    ),
    w("builtins.range", "", "enumerate(range(n))", 1000),
    w("builtins.repr", "xs = [0] * n", "repr(xs)", 1000),
    w("builtins.ascii", "s = chr(233) * n", "ascii(s)", 1000),
    w("builtins.hash", "t = tuple(range(n))", "hash(t)", 1000),
    w("builtins.round", "a = 7 ** n", "round(a, -3)", 100),
    w(
        "builtins.divmod",
        "a = 7 ** (2 * n)\nb = 3 ** n",
        "divmod(a, b)",
        100,
    ),
    w("builtins.sum", "r = range(n)", "sum(r)", 1000),
    w("builtins.int", "s = '7' * n", "int(s, 16)", 100),
    w(
        "builtins.getattr",
        "name = 'a' * n",
        "getattr(self, name, None)",
        1000,
    ),
    // host calls (MockHost: the VM's side of each)
    w(
        "storage.read",
        "self.storage['k'] = 'x' * n",
        "self.storage['k']",
        1000,
    ),
    w(
        "storage.write",
        "v = 'x' * n",
        "self.storage.__setitem__('k', v)",
        1000,
    ),
    w(
        "storage.keys",
        "for i in range(n):\n    self.storage[str(i)] = 1",
        "list(self.storage.keys())",
        100,
    ),
    w(
        "pvm_host.emit",
        "import pvm_host\nv = 'x' * n",
        "pvm_host.emit('E', v)",
        100,
    ),
    w(
        "pvm_host.balance",
        "import pvm_host",
        "pvm_host.balance(self.address)",
        1,
    ),
    w(
        "json.dumps",
        "import json\nv = list(range(n))",
        "json.dumps(v)",
        100,
    ),
    w(
        "json.loads",
        "import json\nv = json.dumps(list(range(n)))",
        "json.loads(v)",
        100,
    ),
    w("builtins.str", "a = 7 ** n", "str(a)", 100),
    w("builtins.sorted", "xs = list(range(n))", "sorted(xs)", 1000),
    w("builtins.list", "r = range(n)", "list(r)", 1000),
    w("set.__init__", "r = list(range(n))", "set(r)", 1000),
    w(
        "list.__init__",
        "xs = []\nr = [0] * n",
        "xs.__init__(r)",
        1000,
    ),
    w(
        "list.__setitem__",
        "xs = [0] * n",
        "xs[0:n] = (i for i in range(n))",
        1000,
    ),
    w(
        "bytearray.__init__",
        "b = bytearray()\nm = b'x' * n",
        "b.__init__(m)",
        1000,
    ),
    w("list.__iadd__", "xs = []\nm = [0] * n", "xs += m", 1000),
    w(
        "dict.__init__",
        "m = {i: i for i in range(n)}",
        "dict(m)",
        1000,
    ),
    w(
        "set.update",
        "s = set()\nm = list(range(n))",
        "s.update(m)",
        1000,
    ),
    w(
        "hashing.keccak256",
        "import hashing\nv = b'x' * n",
        "hashing.keccak256(v)",
        1000,
    ),
    w(
        "pvm_host.block_height",
        "import pvm_host",
        "pvm_host.block_height()",
        1,
    ),
    w(
        "pvm_host.timer_quote",
        "import pvm_host",
        "pvm_host.timer_quote()",
        1,
    ),
    w(
        "pvm_host.dead_letters",
        "import pvm_host",
        "pvm_host.dead_letters()",
        1,
    ),
    w(
        "base64.b64encode",
        "import base64\nv = b'x' * n",
        "base64.b64encode(v)",
        1000,
    ),
    w(
        "math.gcd",
        "import math\na = 7 ** n\nb = 3 ** n",
        "math.gcd(a, b)",
        100,
    ),
    w(
        "dict.fromkeys",
        "r = list(range(n))",
        "dict.fromkeys(r, 0)",
        1000,
    ),
];

/// The ordinary-code reference: a plain loop body (arithmetic, a list
/// append, a dict read — no guarded operator).
pub const ORDINARY: Workload = w(
    "ordinary",
    "total = 0\nxs = []\nd = {1: 2}",
    "total = (total + d[1]) % 1000; xs.append(total)",
    1,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::natives::price::Price;
    use crate::meter::natives::table::{BUILTIN_RULES, MODULE_RULES, RULES};

    #[test]
    fn every_rule_that_runs_has_a_workload() {
        let mut missing = Vec::new();
        for rule in RULES.iter().chain(BUILTIN_RULES).chain(MODULE_RULES) {
            if matches!(rule.price, Price::Refused(_)) {
                continue;
            }
            let covered = WORKLOADS.iter().any(|w| {
                let (t, n) = w.native.split_once('.').expect("type.name");
                rule.types.contains(&t) && rule.names.contains(&n)
            });
            if !covered {
                missing.push(format!("{}.{}", rule.types[0], rule.names[0]));
            }
        }
        assert!(missing.is_empty(), "rules without a workload: {missing:?}");
    }
}
