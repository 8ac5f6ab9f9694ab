//! Operations: what a program does to its inputs, drawn from the priced
//! surface — the builtins, the operators and their type slots, the methods
//! of the built-in types, the library modules, the syntax that builds or
//! unpacks values. `X` is the first input (the generator may hand it over
//! lazily, as a generator over `x`), `Y` an equal second one.
//!
//! The natives table's own workloads join them as seeds
//! ([`crate::search`]), so every rule of the allow-list is tried at sizes
//! far beyond the fairness benchmark's.

/// The operations (see the module docs).
pub const OPS: &[&str] = &[
    // hashing, comparison, formatting: the recursing slots
    "hash(X)",
    "X == Y",
    "X < Y",
    "X != Y",
    "repr(X)",
    "str(X)",
    "f'{X}'",
    "'%s' % (X,)",
    "format(X, '')",
    "len(repr(X))",
    "X in [Y]",
    "Y in X",
    "0 in X",
    "{X}",
    "{X: 1}",
    "{0: X}.get(Y)",
    // builtins that walk their input
    "sum(X)",
    "sum(X, [])",
    "sum(X, ())",
    "min(X)",
    "max(X)",
    "sorted(X)",
    "sorted(X, key=repr)",
    "sorted(X, reverse=True)",
    "list(X)",
    "tuple(X)",
    "set(X)",
    "frozenset(X)",
    "dict.fromkeys(X)",
    "dict(zip(X, X))",
    "dict(X)",
    "hasattr(X, 'missing')",
    "getattr(X, 'missing', 0)",
    "any(X)",
    "all(X)",
    "len(list(zip(X, X)))",
    "list(enumerate(X))",
    "list(reversed(list(X)))",
    "list(map(hash, X))",
    "list(filter(None, X))",
    "''.join(map(str, X))",
    "max(X, key=hash)",
    "isinstance(1, X)",
    "issubclass(int, X)",
    "isinstance(X, (list, tuple, dict, set, frozenset, str, bytes, int))",
    // argument building and displays
    "def f(*a):\n    return 0\nf(*X)",
    "def f(*a, **k):\n    return 0\nf(*X, *X)",
    "def f(**k):\n    return 0\nf(**{str(i): i for i in X})",
    "[*X, *X]",
    "(*X,)",
    "{*X}",
    "{**dict.fromkeys(X)}",
    "a, *b = X",
    "print(*X)",
    // operators
    "X + X",
    "X * 2",
    "X * 3",
    "X & Y",
    "X | Y",
    "X - Y",
    "X ^ Y",
    "X % 1000003",
    "X ** 2",
    "X // 7",
    "X << 64",
    "-X",
    // methods and subscripts
    "X.copy()",
    "X.count(0)",
    "X.index(Y)",
    "X.count(Y)",
    "X[::-1]",
    "X[1:]",
    "X[len(X) // 2]",
    "Y.update(X)",
    "Y.extend(X)",
    "X.union(Y)",
    "X.issubset(Y)",
    "X.isdisjoint(Y)",
    "X.split('b')",
    "X.replace('a', 'bb')",
    "X.encode()",
    "X.decode()",
    "X.hex()",
    "X.find('ba' * 50 + 'c')",
    "X.startswith(Y)",
    "X.items() == Y.items()",
    "X.keys() & Y.keys()",
    "list(X.values())",
    // library modules
    "import copy\ncopy.deepcopy(X)",
    "import copy\ncopy.copy(X)",
    "import json\njson.dumps(X)",
    "import json\njson.loads(json.dumps(X))",
    "import heapq\nheapq.nlargest(3, X)",
    "import bisect\nbisect.insort(Y, 5)",
    "import functools\nfunctools.reduce(lambda a, b: a, X)",
    "import itertools\nlist(itertools.chain(X, X))",
    "import itertools\nlist(itertools.islice(X, 10))",
    "import collections\ncollections.Counter(X)",
    "import collections\ncollections.OrderedDict(zip(X, X))",
    "import math\nmath.prod(X)",
    "import math\nmath.isqrt(X)",
    // class creation
    "type('C', (), X)",
    "type('C', (object,), dict.fromkeys(map(str, X)))",
    CLASS_BODY,
    // comprehensions and unpacking in syntax
    "[v for v in X]",
    "{v: v for v in X}",
    "[a for a in X for b in Y if b]",
    "del Y[:]",
    "Y[:] = X",
];

/// The operation whose text is a class statement binding `n` names (the
/// generator writes them out; class creation processes its namespace).
pub const CLASS_BODY: &str = "@class_body";

/// The text of operation `op` applied to `x` (and `y`), `lazy` feeding the
/// first input through a generator.
pub fn render(op: &str, lazy: bool, n: u64) -> String {
    if op == CLASS_BODY {
        let mut body = String::from("class C:\n");
        for i in 0..n.clamp(1, 10_000) {
            body.push_str(&format!("    a{i} = {i}\n"));
        }
        return body;
    }
    let first = if lazy { "(v for v in x)" } else { "x" };
    replace_word(&replace_word(op, 'X', first), 'Y', "y")
}

/// `text` with every standalone `letter` (not part of a longer word)
/// replaced by `by`.
fn replace_word(text: &str, letter: char, by: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let before = i > 0 && word(chars[i - 1]);
        let after = chars.get(i + 1).is_some_and(|&n| word(n));
        if c == letter && !before && !after {
            out.push_str(by);
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_substitutes_inputs_and_writes_class_bodies() {
        assert_eq!(render("X == Y", false, 1), "x == y");
        assert_eq!(render("sum(X, [])", true, 1), "sum((v for v in x), [])");
        // Words containing the letters are kept.
        assert_eq!(
            render("isinstance(X, (list, tuple))", false, 1),
            "isinstance(x, (list, tuple))"
        );
        assert_eq!(
            render("import heapq\nheapq.nlargest(3, X)", false, 1),
            "import heapq\nheapq.nlargest(3, x)"
        );
        let class = render(CLASS_BODY, false, 3);
        assert_eq!(class, "class C:\n    a0 = 0\n    a1 = 1\n    a2 = 2\n");
    }
}
