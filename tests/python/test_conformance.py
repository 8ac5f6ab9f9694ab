"""Language conformance: small programs run as an actor handler must return
what CPython returns for the same code (issue #15).

Each program defines ``run()`` at module level; the test executes it once in
this CPython and once inside the actor VM (as ``Probe.go``) and compares the
results. Programs for constructs the VM still refuses are listed in
``REFUSED`` as strict expected failures: fixing one makes its test pass
unexpectedly, which fails the suite until the program moves to ``PROGRAMS``.
Add a program for every construct that gains support.

``conformance_real.REAL_PROGRAMS`` holds everyday programs for issue #30;
those the VM still refuses (its ``PENDING`` and ``FOUND`` lists) run as
non-strict expected failures, so nothing is skipped and each passes as soon as
the VM accepts it.
"""

import textwrap

import pytest
from conformance_more import MORE_PROGRAMS
from conformance_real import FOUND, PENDING, REAL_PROGRAMS

#: Constructs the actor VM runs today, each the way an actor would use it.
PROGRAMS = {
    "int_arithmetic": """
        def run():
            a, b = 17, 5
            return [a + b, a - b, a * b, a // b, a % b, -a // b, a ** 3, 2 ** 100, abs(-a)]
    """,
    "bit_operations": """
        def run():
            x = 0b1011_0110
            return [x & 0x0F, x | 1, x ^ 0xFF, x << 9, x >> 3, ~x, (255).bit_length()]
    """,
    "divmod_and_min_max": """
        def run():
            return [divmod(47, 6), divmod(-47, 6), min(3, 1, 2), max([4, 9, 2]), sum(range(101))]
    """,
    "comparisons_and_chains": """
        def run():
            a, b, c = 1, 2, 3
            return [a < b < c, a < b > c, a == 1, b != 2, [1, 2] < [1, 3], (1, "a") < (1, "b")]
    """,
    "boolean_logic": """
        def run():
            return [True and 3, 0 or "x", not [], all([1, 2]), any([0, ""]), bool(None)]
    """,
    "str_methods": """
        def run():
            s = "  Hello, Actor World  "
            t = s.strip()
            return [t.lower(), t.upper(), t.split(", "), t.replace("o", "0"), t.startswith("He"),
                    t.find("Actor"), "-".join(["a", "b", "c"]), t.title(), t.count("o")]
    """,
    "str_slicing_and_indexing": """
        def run():
            s = "abcdefghij"
            return [s[2], s[-1], s[2:5], s[::-1], s[1:8:3], len(s), "e" in s]
    """,
    "fstring_plain": """
        def run():
            name, n = "beat", 7
            return f"{name} #{n}: {n * 2} {[n]}"
    """,
    "list_operations": """
        def run():
            xs = [5, 3, 8, 1]
            xs.append(9)
            xs.extend([2, 2])
            xs.insert(0, 7)
            xs.remove(8)
            last = xs.pop()
            return [xs, last, xs.index(9), xs.count(2), sorted(xs), sorted(xs, reverse=True)]
    """,
    "list_comprehensions": """
        def run():
            return [[i * i for i in range(6)], [i for i in range(20) if i % 3 == 0],
                    [(i, j) for i in range(3) for j in range(2)]]
    """,
    "dict_operations": """
        def run():
            d = {"b": 2, "a": 1}
            d["c"] = 3
            d.update({"a": 10})
            removed = d.pop("b")
            return [sorted(d.items()), removed, d.get("zz", 0), "a" in d, len(d),
                    {k: v * 2 for k, v in d.items()}]
    """,
    "dict_insertion_order": """
        def run():
            d = {}
            for k in ["z", "a", "m"]:
                d[k] = len(d)
            return [list(d), list(d.values())]
    """,
    "set_operations": """
        def run():
            a, b = {1, 2, 3, 4}, {3, 4, 5}
            return [sorted(a | b), sorted(a & b), sorted(a - b), sorted(a ^ b), 2 in a]
    """,
    "tuples_and_unpacking": """
        def run():
            t = (1, "two", 3)
            x, y, z = t
            (p, q), r = (1, 2), 3
            return [x, y, z, p + q + r, t.count(1), t[1:]]
    """,
    "while_and_break": """
        def run():
            n, steps = 27, 0
            while n != 1:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
                if steps > 1000:
                    break
            return steps
    """,
    "for_else_continue": """
        def run():
            found = []
            for n in range(2, 30):
                for d in range(2, n):
                    if n % d == 0:
                        break
                else:
                    found.append(n)
                    continue
            return found
    """,
    "nested_functions_and_defaults": """
        def helper(x, scale=3):
            return x * scale

        def run():
            return [helper(2), helper(2, 5), helper(scale=2, x=7)]
    """,
    "recursion": """
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        def run():
            return [fib(i) for i in range(15)]
    """,
    "lambdas_and_sorting_keys": """
        def run():
            people = [("ann", 31), ("bob", 25), ("cy", 31)]
            return [sorted(people, key=lambda p: (-p[1], p[0])), max(people, key=lambda p: p[1])]
    """,
    "exceptions_builtin": """
        def run():
            out = []
            for value in ["12", "x", None]:
                try:
                    out.append(int(value))
                except ValueError:
                    out.append("bad")
                except TypeError:
                    out.append("none")
                finally:
                    out.append("!")
            return out
    """,
    "raise_and_catch_message": """
        def run():
            try:
                raise KeyError("missing")
            except KeyError as error:
                return str(error)
    """,
    "enumerate_zip_reversed": """
        def run():
            xs = ["a", "b", "c"]
            return [list(enumerate(xs)), list(zip(xs, range(3))), list(reversed(xs)),
                    list(enumerate(xs, 1))]
    """,
    "map_filter": """
        def run():
            return [list(map(lambda x: x + 1, [1, 2])), list(filter(None, [0, 1, 2, "", "a"]))]
    """,
    "bytes_basics": """
        def run():
            b = b"abc" + bytes([100, 101])
            return [b, b[1], b[1:3], len(b), b.upper(), list(b"hi")]
    """,
    "big_ints": """
        def run():
            x = 3 ** 80
            return [x, x % 1_000_000_007, x // 7 ** 20, len(str(x))]
    """,
    "json_canonical_roundtrip": """
        import json

        def run():
            data = {"b": [1, 2, {"c": None}], "a": True}
            return json.loads(json.dumps(data)) == data
    """,
    "math_integer_helpers": """
        import math

        def run():
            return [math.gcd(84, 36), math.isqrt(10 ** 12 + 7)]
    """,
    "int_and_str_conversions": """
        def run():
            return [str(42), int("-17"), int("ff", 16), hex(255), bin(5), oct(8), str([1, "a"])]
    """,
    "custom_exception_with_actor_marker": """
        class NotOwner(Exception):
            pass

        def run():
            try:
                raise NotOwner("no")
            except NotOwner as e:
                return str(e)
    """,
    "math_factorial_and_comb": """
        import math

        def run():
            return [math.gcd(84, 36), math.isqrt(10 ** 12 + 7), math.factorial(12), math.comb(10, 3)]
    """,
    "class_with_plain_methods": """
        class Ledger:
            def total(self, xs):
                return sum(xs)

        def run():
            return Ledger().total([1, 2, 3])
    """,
    "ternary_and_walrus": """
        def run():
            out = []
            for x in range(6):
                if (y := x * x) > 9:
                    out.append(y)
            return [out, "even" if len(out) % 2 == 0 else "odd"]
    """,
    "repr_builtin": """
        def run():
            return [str(42), int("-17"), int("ff", 16), hex(255), bin(5), oct(8), repr("q"), str([1, "a"])]
    """,
    "isinstance_builtin_type": """
        def run():
            return isinstance(3, int)
    """,
    "str_format_method": """
        def run():
            return "{} {}".format("a", 1)
    """,
    "fstring_conversion_and_spec": """
        def run():
            x = 5
            return f"{x!r} {x:04d}"
    """,
    "starred_assignment": """
        def run():
            a, *rest = [1, 2, 3]
            return [a, rest]
    """,
    "match_case": """
        def run():
            match 3:
                case 3:
                    return "three"
                case _:
                    return "other"
    """,
    "bytes_fromhex": """
        def run():
            return bytes.fromhex("ff00")
    """,
    "getattr_hasattr_type": """
        class Box:
            def size(self):
                return 1

        def run():
            b = Box()
            return [hasattr(b, "size"), getattr(b, "nope", 0), type(3) == int]
    """,
    "init_and_dunders": """
        class Book:
            def __init__(self, n):
                self.n = n

        def run():
            return Book(4).n
    """,
    "user_decorator": """
        def twice(f):
            def inner(x):
                return f(f(x))
            return inner

        @twice
        def inc(x):
            return x + 1

        def run():
            return inc(1)
    """,
    "percent_formatting": """
        def run():
            return "%d items" % 3
    """,
    "typing_and_dataclasses": """
        from dataclasses import dataclass
        from typing import Optional

        @dataclass
        class Point:
            x: int
            y: Optional[int] = None

        def run():
            return Point(1).x
    """,
    "library_modules_together": """
        from dataclasses import dataclass, field
        from typing import Optional, List
        from enum import Enum, auto
        from collections import deque, defaultdict, namedtuple, Counter
        import functools, itertools, bisect, operator, string

        class State(Enum):
            OPEN = auto()
            CLOSED = auto()

        P = namedtuple("P", "x y")

        @dataclass(order=True)
        class Point:
            x: int
            y: Optional[int] = None
            tags: List[str] = field(default_factory=list)

        @functools.lru_cache(maxsize=None)
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        def run():
            d = deque([1, 2, 3], maxlen=3)
            d.append(4)
            d.rotate(1)
            dd = defaultdict(list)
            dd["a"].append(1)
            xs = [1, 3, 5]
            bisect.insort(xs, 4)
            return [repr(Point(1)), sorted([Point(3), Point(1, 2)])[0].x, State.OPEN.name,
                    State(2).name, [s.name for s in State], repr(State.CLOSED), list(d), dict(dd),
                    Counter("abracadabra").most_common(2), xs, fib(30),
                    list(itertools.islice(itertools.count(5), 3)),
                    functools.reduce(operator.add, range(10)), string.ascii_lowercase[:5],
                    P(1, 2).x, repr(P(1, 2)), list(itertools.permutations([1, 2, 3], 2))[:3],
                    sorted([("b", 2), ("a", 1)], key=operator.itemgetter(1))]
    """,
    "json_dumps_sort_keys": """
        import json

        def run():
            data = {"b": [1, 2, {"c": None}], "a": True}
            text = json.dumps(data, sort_keys=True)
            return [text, json.loads(text) == data]
    """,
    "match_class_patterns_and_percent_assign": """
        from dataclasses import dataclass

        @dataclass
        class Move:
            x: int
            y: int

        def kind(v):
            match v:
                case bool():
                    return "bool"
                case int(n) if n < 0:
                    return "neg"
                case int(n):
                    return f"int {n}"
                case str() as s:
                    return "str " + s
                case [int(a), *rest]:
                    return ["list", a, rest]
                case {"k": str(val)}:
                    return "map " + val
                case Move(x=0, y=yy):
                    return ["vertical", yy]
                case Move(xx, yy):
                    return ["move", xx, yy]
                case _:
                    return "other"

        def run():
            s = "%d-%s"
            s %= (3, "x")
            return [kind(True), kind(-2), kind(5), kind("q"), kind([1, 2, 3]), kind({"k": "v"}),
                    kind(Move(0, 4)), kind(Move(1, 2)), kind(b"z"), s]
    """,
    "json_dumps_options": """
        import json

        def run():
            data = {"b": [1, 2, {"c": None}], "a": True, "é": "ü\b"}
            return [json.dumps(data, sort_keys=True), json.dumps(data, separators=(",", ":"), sort_keys=True),
                    json.dumps(data, ensure_ascii=False, sort_keys=True), json.dumps([1, "x"], sort_keys=False),
                    json.loads(json.dumps(data, sort_keys=True)) == data]
    """,
}

#: Everyday Python the VM still refuses (issue #15's table). Each must fail
#: today; a fix turns it into an unexpected pass.
REFUSED = {
    # `re` is left out on purpose: RustPython's matcher runs a whole match in
    # one native call, so catastrophic backtracking could not be metered.
    "re_module": """
        import re

        def run():
            return re.findall(r"[a-z]+", "ab1cd2")
    """,
}


# The widened dialect's constructs and the combinations actors use.
assert not set(MORE_PROGRAMS) & set(PROGRAMS), "duplicate program names"
PROGRAMS.update(MORE_PROGRAMS)
# Everyday programs with issue #30's constructs.
assert not set(REAL_PROGRAMS) & set(PROGRAMS), "duplicate program names"
PROGRAMS.update(REAL_PROGRAMS)


def program_param(name):
    """A program name, marked as an expected failure while the VM refuses it."""
    if name in PENDING:
        return pytest.param(name, marks=pytest.mark.xfail(strict=False, reason="issue #30 in progress"))
    if name in FOUND:
        return pytest.param(
            name, marks=pytest.mark.xfail(strict=False, reason="refused by the VM today, beyond issue #30's list")
        )
    return name


def cpython_result(source):
    namespace = {}
    exec(textwrap.dedent(source), namespace)  # noqa: S102  (the program is ours)
    return namespace["run"]()


def actor_source(source):
    # `@actor` marks the probe when the program defines classes of its own.
    return textwrap.dedent(source) + "\n\n@actor\nclass Probe:\n    def go(self):\n        return run()\n"


def actor_result(chain, source):
    """The program's result inside the VM; raises if the VM refuses it."""
    actor = chain.deploy(actor_source(source))
    receipt = chain.call(actor, "go").raise_for_status()
    return receipt.return_value


def normalise(value):
    """Tuples cross the host boundary as tuples, sets are not actor values:
    compare through the same lens on both sides."""
    if isinstance(value, (list, tuple)):
        return type(value)(normalise(v) for v in value)
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("name", [program_param(n) for n in sorted(PROGRAMS)])
def test_actor_matches_cpython(chain, name):
    source = PROGRAMS[name]
    assert normalise(actor_result(chain, source)) == normalise(cpython_result(source))


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="refused by the VM today (#15)")) for n in sorted(REFUSED)],
)
def test_refused_construct_still_differs_from_cpython(chain, name):
    source = REFUSED[name]
    assert normalise(actor_result(chain, source)) == normalise(cpython_result(source))
