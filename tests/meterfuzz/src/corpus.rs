//! Programs the search always runs first: every program found underpriced
//! so far (by hand in issues #47 and #49, or by the fuzzer), each with a
//! name. They are the regression corpus: a change that makes one of them
//! cheap per cycle again fails the short run. (Each also has a named test
//! of its charge in `host/vm/tests/hostile.rs`.)

use crate::program::Program;

fn named(name: &str, setup: &str, op: &str, n: u64) -> Program {
    Program {
        name: format!("finding:{name}"),
        setup: setup.into(),
        op: op.into(),
        n,
        genes: None,
    }
}

/// The named findings (see the module docs).
pub fn findings() -> Vec<Program> {
    vec![
        // #47: quadratic copying inside one `sum` call, charged per item.
        named(
            "sum_of_one_item_lists",
            "x = [[i] for i in range(n)]",
            "sum(x, [])",
            60_000,
        ),
        named(
            "sum_of_one_item_tuples",
            "x = [(i,) for i in range(n)]",
            "sum(x, ())",
            60_000,
        ),
        // #47: the native walk of a nest of class tuples.
        named(
            "isinstance_nested_tuples",
            "t = int\nfor _ in range(n):\n    t = (t,)",
            "isinstance(1, t)",
            50_000,
        ),
        named(
            "issubclass_wide_tuple",
            "t = tuple([str] * n + [int])",
            "issubclass(int, t)",
            50_000,
        ),
        // #47: class creation processes the namespace.
        named("class_body_3000_names", "", crate::ops::CLASS_BODY, 3_000),
        named(
            "type_with_3000_names",
            "ns = {'a' + str(i): i for i in range(n)}",
            "type('C', (), ns)",
            3_000,
        ),
        // #47: big ints hashed and probed as small ones.
        named(
            "set_of_colliding_big_ints",
            "x = [i * (2 ** 61 - 1) for i in range(n)]",
            "set(x)",
            20_000,
        ),
        named(
            "dict_of_colliding_big_ints",
            "x = [i * (2 ** 61 - 1) ** 2 for i in range(n)]",
            "dict.fromkeys(x)",
            20_000,
        ),
        // #47: a lazy iterable unpacked into arguments grows past the budget.
        named(
            "unpack_range_into_arguments",
            "def f(*a):\n    return 0",
            "f(*range(n))",
            12_000_000,
        ),
        named(
            "unpack_generator_into_arguments",
            "def f(*a):\n    return 0",
            "f(*(i for i in range(n)))",
            12_000_000,
        ),
        named(
            "list_display_of_ranges",
            "",
            "[*range(n), *range(n)]",
            12_000_000,
        ),
        named(
            "dict_display_of_a_big_dict",
            "d = dict.fromkeys(range(n))",
            "e = {**d, **d}",
            1_000_000,
        ),
        // #49: native recursion through a deep structure.
        named(
            "hash_nested_frozenset",
            "x = frozenset()\nfor _ in range(n):\n    x = frozenset([x])",
            "hash(x)",
            200_000,
        ),
        named(
            "free_a_generator_chain",
            "def wrap(it):\n    for v in it:\n        yield v\nx = iter([1])\nfor _ in range(n):\n    x = wrap(x)",
            "x = None",
            20_000,
        ),
        named(
            "str_of_nested_exceptions",
            "e = ValueError(0)\nfor _ in range(n):\n    e = ValueError(e)",
            "str(e)",
            200_000,
        ),
        // Found by the fuzzer's own first runs (#47).
        named("class_statement", "", "class C:\n    a = 1", 1),
        named("function_definition", "", "def f():\n    pass", 1),
        named("generator_expression", "x = [1]", "g = (v for v in x)", 1),
        named("caught_type_error", "x = list(range(n))", "{x: 1}", 147),
        named("native_key_function", "x = dict.fromkeys(range(n))", "max(x, key=hash)", 98),
        named(
            "dict_items_equality",
            "x = {'k' * 200 + str(i): i for i in range(n)}\ny = dict(x)",
            "x.items() == y.items()",
            10_000,
        ),
        named("float_text", "x = [i / 7 for i in range(n)]", "f'{x}'", 2),
        named(
            "repr_of_nested_class_tuples",
            "x = int\nfor _ in range(n):\n    x = (x, str)",
            "repr(x)",
            720,
        ),
        named(
            "repr_of_an_iterator_chain",
            "x = iter([1])\nfor _ in range(n):\n    x = map(abs, x)",
            "f'{x}'",
            1,
        ),
        named(
            "format_nested_frozensets",
            "x = frozenset()\nfor _ in range(n):\n    x = frozenset([x, 1])",
            "format(x, '')",
            529,
        ),
        named(
            "exhausted_iterator_chain",
            "x = iter([1])\nfor _ in range(n):\n    x = map(abs, x)",
            "def f(*a, **k):\n    return 0\nf(*(v for v in x), *(v for v in x))",
            141,
        ),
        named(
            "exhausted_zip_chain",
            "x = iter([1])\nfor _ in range(n):\n    x = zip(x)\nlist(x)",
            "sorted(x, reverse=True)",
            577,
        ),
        named(
            "nested_lists_compared",
            "x = []\nfor _ in range(n):\n    x = [x]\ny = []\nfor _ in range(n):\n    y = [y]",
            "x == y",
            806,
        ),
        named(
            "comprehension_past_the_budget",
            "class E:\n    def __eq__(self, other):\n        return True\nx = [E() for _ in range(n)]\ny = [E() for _ in range(n)]",
            "[a for a in x for b in y if b]",
            49_264,
        ),
        named(
            "dict_of_a_long_zip",
            "x = range(n)",
            "dict(zip(x, x))",
            190_866,
        ),
        named(
            "generator_chain_unwound",
            "def wrap(it):\n    for v in it:\n        yield v\nx = iter([1])\nfor _ in range(n):\n    x = wrap(x)",
            "sum(x)",
            23_620,
        ),
        named(
            "isqrt_of_a_list",
            "import math\nx = [7 ** 60 + i for i in range(n)]",
            "math.isqrt(x)",
            288,
        ),
        named("set_of_a_big_int", "x = 7 ** n", "{x}", 1_446),
        named("square_of_a_big_int", "x = 7 ** n", "x ** 2", 10_601),
        named("set_of_a_one_key_dict", "x = {0: {}}", "set(x)", 1),
        named(
            "dict_subclass_equality",
            "class D(dict):\n    pass\nx = D({0: 0})\ny = D({0: 0})",
            "x == y",
            1,
        ),
        named(
            "json_of_a_self_referencing_dict",
            "x = {i: i for i in range(n)}\nx['me'] = x",
            "import json\njson.dumps(x)",
            28_111,
        ),
        named(
            "repr_of_nested_exceptions",
            "x = ValueError(0)\nfor _ in range(n):\n    x = ValueError(x)",
            "repr(x)",
            900,
        ),
        named(
            "set_display_of_an_iterator",
            "x = iter([1])\nfor _ in range(n):\n    x = map(abs, x)",
            "{x}",
            64,
        ),
        named(
            "unpack_a_list_subclass",
            "class L(list):\n    pass\nx = L(range(n))",
            "[*x, *x]",
            1,
        ),
        named(
            "json_of_a_dict_nested_too_deep",
            "x = {}\nfor _ in range(n):\n    x = {0: x}",
            "import json\njson.dumps(x)",
            127,
        ),
        named(
            "self_referencing_lists_left_behind",
            "x = list(range(n))\nx.append(x)\ny = list(range(n))\ny.append(y)",
            "{x: 1}",
            75_376,
        ),
        named(
            "maketrans_of_a_big_dict",
            "d = {i: 'x' for i in range(n)}",
            "str.maketrans(d)",
            512_000,
        ),
        // #47, the fuzzer's short run: a native that makes and swallows an
        // `AttributeError` (the dict's `keys` probe of a list of pairs).
        named(
            "dict_of_a_few_pairs",
            "x = [1, 2]",
            "dict(zip(x, x))",
            12,
        ),
        named("hasattr_missing", "x = []", "hasattr(x, 'missing')", 1),
        // #47, the first long run.
        named(
            "set_key_in_a_set",
            "x = set(range(n))\ny = set(range(n))",
            "y in x",
            478,
        ),
        named(
            "equal_bytes_substring",
            "x = b'ab' * n\ny = b'ab' * n",
            "y in x",
            18_449,
        ),
        named("repeat_a_short_str", "x = 'a'", "x * 2", 1),
        // #47, the second long run.
        named(
            "json_of_floats_refused_at_the_first",
            "x = [i / 7 for i in range(n)]",
            "import json\njson.dumps(x)",
            3_127,
        ),
        named(
            "fstring_of_a_list_subclass",
            "class L(list):\n    pass\nx = L(range(n))",
            "f'{x}'",
            1,
        ),
        named("reversed_slice_of_short_bytes", "x = b'ab' * n", "x[::-1]", 1),
        // #47, the fifth long run: a set display's splat hashes every item.
        named(
            "set_display_of_strings",
            "x = [str(i) * 7 for i in range(n)]",
            "{*x}",
            20_000,
        ),
        // #47, the fourth long run: the generic `repr` slot of subclasses.
        named(
            "format_of_a_list_subclass",
            "class L(list):\n    pass\nx = L(range(n))",
            "format(x)",
            1,
        ),
        // #47, the third long run.
        named("percent_of_a_big_int", "x = 7 ** n", "'%s' % (x,)", 2_340),
        named(
            "long_keyed_dict_in_a_list",
            "x = {'k' * 200 + str(i): i for i in range(n)}\ny = {'k' * 200 + str(i): i for i in range(n)}",
            "x in [y]",
            20_000,
        ),
        named("big_int_in_a_list", "x = 7 ** n\ny = 7 ** n", "x in [y]", 20_000),
        named(
            "json_of_bytes",
            "x = b'ab' * n",
            "import json\njson.dumps(x)",
            173_961,
        ),
        named(
            "missing_module_attribute",
            "import math\nx = [1]",
            "math.prod(x)",
            9,
        ),
        // #47, the fifth long run (seed 5151) and what it led to: the
        // integer work RustPython's frame does inline, never guarded.
        named("big_int_floor_divided_inline", "x = 7 ** n", "x // 7", 20_000),
        named("big_int_remainder_inline", "x = 7 ** n", "x % 1000003", 20_000),
        named("big_int_shifted_inline", "x = 7 ** n", "x >> 1", 20_000),
        named("big_ints_compared_inline", "x = 7 ** n\ny = 7 ** n", "x == y", 20_000),
        named(
            "big_int_added_inline_chain",
            "x = 7 ** n",
            "x + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1",
            20_000,
        ),
        named("big_int_negated", "x = 7 ** n", "-x", 20_000),
        named("small_int_shifted_past_a_word", "x = 7", "x << 64", 1),
        named("format_of_a_big_int", "x = 7 ** n", "format(x, '')", 1_311),
        named(
            "dict_comprehension_of_strings",
            "x = {'a' + str(i): i for i in range(n)}",
            "{v: v for v in x}",
            50_000,
        ),
        named("set_comprehension_of_floats", "x = [i / 7 for i in range(n)]", "{v for v in x}", 6_000),
        named(
            "dict_of_a_dict_subclass",
            "class D(dict):\n    pass\nx = D((i, i) for i in range(n))",
            "dict(x)",
            1_641,
        ),
        named(
            "copy_of_a_dict_subclass",
            "import copy\nclass D(dict):\n    pass\nx = D((i, i) for i in range(n))",
            "copy.copy(x)",
            1_562,
        ),
        named("hash_mapped_over_floats", "x = [i / 7 for i in range(n)]", "list(map(hash, x))", 200_000),
        named("slice_of_floats_deleted", "y = [i / 7 for i in range(n)]", "del y[:]", 200_000),
        named("short_bytes_concatenated", "x = b'ab'", "x + x", 1),
        // #47, the eighth long run (seed 5454): key strings past the budget (a native key).
        named("bytes_sorted_by_repr", "x = b'ab' * n", "sorted(x, key=repr)", 725_038),
        named("small_int_shifted_within_a_word", "x = 7", "x << 3", 1),
        // #47, the ninth long run (seed 5555).
        named("wide_int_times_a_small_one", "x = 7 ** n", "x * 3", 302),
        named("range_formatted", "x = range(n)", "format(x, '')", 512),
        named(
            "one_item_list_subclass_slice_stored",
            "class L(list):\n    pass\nx = L(range(n))\ny = L(range(n))",
            "y[:] = x",
            1,
        ),
        named("small_ints_summed", "x = list(range(n))", "sum(x)", 109_056),
        // #47, the seventh long run (seed 5353).
        named("f_string_of_a_big_int", "x = 7 ** n", "f'{x}'", 2_358),
        // #47, the sixth long run (seed 5252).
        named(
            "slice_of_a_list_subclass_deleted",
            "class L(list):\n    pass\ny = L(range(n))",
            "del y[:]",
            3_224,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_named_uniquely() {
        let mut names: Vec<String> = findings().into_iter().map(|p| p.name).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
    }
}
