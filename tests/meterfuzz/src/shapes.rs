//! Input shapes: ordinary code that builds a value of size `n` in a
//! variable, chosen to stress natives the ways their prices could miss —
//! long, nested `n` deep, colliding in hash tables, big, subclassed,
//! user-defined dunders, self-referencing. Each template writes `V` for the
//! variable; the generator binds two equal values (`x` and `y`) so that
//! comparisons do not stop at identity.

/// One shape of input.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Its name in reports.
    pub name: &'static str,
    /// Statements binding `V` from `n`.
    pub template: &'static str,
    /// Largest `n` the generator uses for it (a nest `n` deep is built in
    /// a loop of `n` steps; a flat list of `n` items likewise).
    pub max_n: u64,
}

const fn s(name: &'static str, template: &'static str, max_n: u64) -> Shape {
    Shape {
        name,
        template,
        max_n,
    }
}

/// Every shape (see the module docs).
pub const SHAPES: &[Shape] = &[
    // long
    s("ints", "V = list(range(n))", 200_000),
    s("one_item_lists", "V = [[i] for i in range(n)]", 100_000),
    s("str", "V = 'ab' * n", 1_000_000),
    s("bytes", "V = b'ab' * n", 1_000_000),
    s("tuple", "V = tuple(range(n))", 200_000),
    s("dict", "V = {i: i for i in range(n)}", 100_000),
    s("set", "V = set(range(n))", 100_000),
    s("strs", "V = [str(i) * 4 for i in range(n)]", 100_000),
    s("range", "V = range(n)", 10_000_000),
    s("floats", "V = [i / 7 for i in range(n)]", 100_000),
    // big and colliding
    s("big_int", "V = 7 ** n", 20_000),
    s("big_ints", "V = [7 ** 60 + i for i in range(n)]", 50_000),
    s(
        "colliding_ints",
        "V = [i * (2 ** 61 - 1) for i in range(n)]",
        50_000,
    ),
    s(
        "colliding_big_ints",
        "V = [i * (2 ** 61 - 1) ** 3 for i in range(n)]",
        50_000,
    ),
    s(
        "colliding_mixed",
        "V = [i for i in range(n)] + [float(i) for i in range(n)]",
        50_000,
    ),
    s(
        "colliding_tuples",
        "V = [(i * (2 ** 61 - 1), -i * (2 ** 61 - 1)) for i in range(n)]",
        50_000,
    ),
    s("long_keys", "V = {'k' * 200 + str(i): i for i in range(n)}", 20_000),
    // nested n deep
    s(
        "nested_list",
        "V = []\nfor _ in range(n):\n    V = [V]",
        200_000,
    ),
    s(
        "nested_tuple",
        "V = ()\nfor _ in range(n):\n    V = (V,)",
        200_000,
    ),
    s(
        "nested_dict",
        "V = {}\nfor _ in range(n):\n    V = {0: V}",
        200_000,
    ),
    s(
        "nested_frozenset",
        "V = frozenset()\nfor _ in range(n):\n    V = frozenset([V, 1])",
        2_000,
    ),
    s(
        "nested_class_tuple",
        "V = int\nfor _ in range(n):\n    V = (V, str)",
        200_000,
    ),
    s(
        "nested_exception",
        "V = ValueError(0)\nfor _ in range(n):\n    V = ValueError(V)",
        200_000,
    ),
    s(
        "nested_zip",
        "V = iter([1])\nfor _ in range(n):\n    V = zip(V)",
        200_000,
    ),
    s(
        "nested_map",
        "V = iter([1])\nfor _ in range(n):\n    V = map(abs, V)",
        200_000,
    ),
    s(
        "nested_generators",
        "def wrap(it):\n    for v in it:\n        yield v\nV = iter([1])\nfor _ in range(n):\n    V = wrap(V)",
        50_000,
    ),
    s(
        "nested_slices",
        "V = list(range(8))\nfor _ in range(n):\n    V = [V, V[:1]]",
        200_000,
    ),
    // subclassed and user-defined
    s(
        "list_subclass",
        "class L(list):\n    pass\nV = L(range(n))",
        100_000,
    ),
    s(
        "dict_subclass",
        "class D(dict):\n    pass\nV = D((i, i) for i in range(n))",
        100_000,
    ),
    s(
        "same_hash_objects",
        "class K:\n    def __hash__(self):\n        return 1\n    def __eq__(self, other):\n        return False\nV = [K() for _ in range(n)]",
        5_000,
    ),
    s(
        "eq_objects",
        "class E:\n    def __eq__(self, other):\n        return True\n    def __lt__(self, other):\n        return False\nV = [E() for _ in range(n)]",
        20_000,
    ),
    // self-referencing
    s(
        "self_list",
        "V = list(range(n))\nV.append(V)",
        100_000,
    ),
    s(
        "self_dict",
        "V = {i: i for i in range(n)}\nV['me'] = V",
        100_000,
    ),
    // a class namespace
    s(
        "names_dict",
        "V = {'a' + str(i): i for i in range(n)}",
        20_000,
    ),
];

/// The statements binding `var` to `shape` built at size `n`.
pub fn render(shape: &Shape, var: &str) -> String {
    // `V` is only ever a whole word in the templates.
    let mut out = String::new();
    let mut chars = shape.template.chars().peekable();
    let mut previous: Option<char> = None;
    while let Some(c) = chars.next() {
        let word_before = previous.is_some_and(|p| p.is_alphanumeric() || p == '_');
        let word_after = chars
            .peek()
            .is_some_and(|n| n.is_alphanumeric() || *n == '_');
        if c == 'V' && !word_before && !word_after {
            out.push_str(var);
        } else {
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_replaces_only_the_variable() {
        let nested = SHAPES.iter().find(|s| s.name == "nested_tuple").unwrap();
        assert_eq!(
            render(nested, "x"),
            "x = ()\nfor _ in range(n):\n    x = (x,)"
        );
        let errors = SHAPES
            .iter()
            .find(|s| s.name == "nested_exception")
            .unwrap();
        assert!(render(errors, "y").contains("y = ValueError(y)"));
        assert!(render(errors, "y").contains("ValueError(0)"));
    }

    #[test]
    fn shape_names_are_unique() {
        let mut names: Vec<_> = SHAPES.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SHAPES.len());
    }
}
