"""More conformance programs (issue #15): one per construct of the widened
actor dialect and the combinations real actors use. Same format as
``PROGRAMS`` in ``test_conformance.py``, which runs them."""

CLASSES = {
    "class_init_and_attributes": """
        class Account:
            def __init__(self, owner, balance=0):
                self.owner = owner
                self.balance = balance

            def deposit(self, amount):
                self.balance += amount
                return self.balance

        def run():
            a = Account("ann")
            a.deposit(5)
            return [a.owner, a.balance, a.deposit(7)]
    """,
    "several_helper_classes": """
        class Item:
            def __init__(self, name, price):
                self.name = name
                self.price = price

        class Cart:
            def __init__(self):
                self.items = []

            def add(self, item):
                self.items.append(item)

            def total(self):
                return sum(i.price for i in self.items)

        def run():
            cart = Cart()
            cart.add(Item("a", 3))
            cart.add(Item("b", 4))
            return [cart.total(), [i.name for i in cart.items]]
    """,
    "custom_exception_hierarchy": """
        class TokenError(Exception):
            pass

        class NotOwner(TokenError):
            def __init__(self, who):
                super().__init__(f"{who} is not the owner")
                self.who = who

        def check(who):
            if who != "ann":
                raise NotOwner(who)
            return "ok"

        def run():
            out = [check("ann")]
            try:
                check("bob")
            except TokenError as e:
                out += [str(e), e.who, isinstance(e, NotOwner), e.args[0]]
            return out
    """,
    "raise_from_and_chaining": """
        class AppError(Exception):
            pass

        def parse(text):
            try:
                return int(text)
            except ValueError as e:
                raise AppError("bad number: " + text) from e

        def run():
            try:
                parse("x1")
            except AppError as e:
                return [str(e), type(e) is AppError]
    """,
    "dunder_eq_and_hash_in_sets": """
        class Point:
            def __init__(self, x, y):
                self.x, self.y = x, y

            def __eq__(self, other):
                return (self.x, self.y) == (other.x, other.y)

            def __hash__(self):
                return (self.x, self.y).__hash__()

        def run():
            pts = {Point(1, 2), Point(1, 2), Point(2, 3)}
            d = {Point(0, 0): "origin"}
            return [len(pts), d[Point(0, 0)], Point(1, 2) == Point(1, 2), Point(1, 2) != Point(2, 1)]
    """,
    "dunder_lt_and_sorting": """
        class Version:
            def __init__(self, text):
                self.parts = tuple(int(p) for p in text.split("."))

            def __lt__(self, other):
                return self.parts < other.parts

            def __repr__(self):
                return "v" + ".".join(str(p) for p in self.parts)

        def run():
            vs = [Version("1.10"), Version("1.2"), Version("0.9.9")]
            return [repr(sorted(vs)), repr(max(vs)), repr(min(vs))]
    """,
    "dunder_repr_and_str": """
        class Money:
            def __init__(self, cents):
                self.cents = cents

            def __repr__(self):
                return f"Money({self.cents})"

            def __str__(self):
                return f"${self.cents // 100}.{self.cents % 100:02d}"

        def run():
            m = Money(1234)
            return [repr(m), str(m), f"{m}", f"{m!r}", repr([m])]
    """,
    "dunder_len_iter_contains_getitem": """
        class Bag:
            def __init__(self, *items):
                self.items = list(items)

            def __len__(self):
                return len(self.items)

            def __iter__(self):
                return iter(self.items)

            def __contains__(self, x):
                return x in self.items

            def __getitem__(self, i):
                return self.items[i]

        def run():
            b = Bag(3, 1, 2)
            return [len(b), list(b), 2 in b, 9 in b, b[0], sorted(b), bool(Bag())]
    """,
    "dunder_setitem_delitem": """
        class Registry:
            def __init__(self):
                self.data = {}

            def __setitem__(self, k, v):
                self.data[k.lower()] = v

            def __getitem__(self, k):
                return self.data[k.lower()]

            def __delitem__(self, k):
                del self.data[k.lower()]

        def run():
            r = Registry()
            r["Ann"] = 1
            r["BOB"] = 2
            del r["bob"]
            return [r["ANN"], sorted(r.data)]
    """,
    "dunder_next_iterator_protocol": """
        class Countdown:
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return self

            def __next__(self):
                if self.n <= 0:
                    raise StopIteration
                self.n -= 1
                return self.n + 1

        def run():
            return [list(Countdown(4)), sum(Countdown(10))]
    """,
    "dunder_enter_exit_with": """
        class Recorder:
            def __init__(self, log):
                self.log = log

            def __enter__(self):
                self.log.append("enter")
                return self

            def __exit__(self, kind, value, tb):
                self.log.append("exit " + ("ok" if kind is None else repr(value)))
                return kind is KeyError

        def run():
            log = []
            with Recorder(log) as r:
                log.append("body")
            with Recorder(log):
                raise KeyError("swallowed")
            try:
                with Recorder(log):
                    raise ValueError("kept")
            except ValueError:
                log.append("caught")
            return log
    """,
    "dunder_bool_add_radd_call": """
        class Vec:
            def __init__(self, *xs):
                self.xs = xs

            def __add__(self, other):
                return Vec(*[a + b for a, b in zip(self.xs, other.xs)])

            def __radd__(self, other):
                return self if other == 0 else NotImplemented

            def __bool__(self):
                return any(self.xs)

            def __call__(self, k):
                return [x * k for x in self.xs]

        def run():
            total = sum([Vec(1, 2), Vec(3, 4), Vec(5, 6)])
            return [total.xs, bool(Vec(0, 0)), bool(Vec(0, 1)), total(2)]
    """,
    "properties_getter_setter": """
        class Temperature:
            def __init__(self):
                self._celsius = 0

            @property
            def celsius(self):
                return self._celsius

            @celsius.setter
            def celsius(self, value):
                if value < -273:
                    raise ValueError("below absolute zero")
                self._celsius = value

            @property
            def kelvin(self):
                return self._celsius + 273

        def run():
            t = Temperature()
            t.celsius = 25
            try:
                t.celsius = -300
            except ValueError as e:
                err = str(e)
            return [t.celsius, t.kelvin, err]
    """,
    "classmethod_alternate_constructor": """
        class Pair:
            def __init__(self, a, b):
                self.a, self.b = a, b

            @classmethod
            def parse(cls, text):
                a, b = text.split(",")
                return cls(int(a), int(b))

            @staticmethod
            def zero():
                return Pair(0, 0)

        def run():
            p = Pair.parse("3,4")
            return [p.a + p.b, Pair.zero().a, type(p) is Pair]
    """,
    "inheritance_and_super": """
        class Animal:
            def __init__(self, name):
                self.name = name

            def speak(self):
                return "..."

            def intro(self):
                return f"{self.name} says {self.speak()}"

        class Dog(Animal):
            def speak(self):
                return "woof"

        class Puppy(Dog):
            def __init__(self, name):
                super().__init__(name + " jr")

            def speak(self):
                return super().speak() + "!"

        def run():
            return [Animal("a").intro(), Dog("rex").intro(), Puppy("rex").intro(),
                    isinstance(Puppy("x"), Animal), issubclass(Puppy, Dog), issubclass(Dog, Puppy)]
    """,
    "multiple_inheritance_mixins": """
        class JsonMixin:
            def fields(self):
                return sorted(k for k in ("a", "b") if hasattr(self, k))

        class Base:
            def __init__(self):
                self.a = 1

        class Both(Base, JsonMixin):
            def __init__(self):
                super().__init__()
                self.b = 2

        def run():
            return Both().fields()
    """,
    "isinstance_with_builtin_types": """
        def kind(x):
            if isinstance(x, bool):
                return "bool"
            if isinstance(x, int):
                return "int"
            if isinstance(x, (str, bytes)):
                return "text"
            if isinstance(x, (list, tuple)):
                return "seq"
            if isinstance(x, dict):
                return "map"
            return "other"

        def run():
            return [kind(v) for v in (True, 3, "s", b"b", [1], (1,), {}, None)]
    """,
    "type_of_values": """
        def run():
            return [type(3) == int, type("a") is str, type([]) is list, type({}) == dict,
                    type(3) is bool, type(True) is bool, type(b"") is bytes, type((1,)) is tuple]
    """,
    "getattr_setattr_hasattr": """
        class Config:
            retries = 3

        def run():
            c = Config()
            setattr(c, "timeout", 10)
            return [getattr(c, "retries"), getattr(c, "timeout"), getattr(c, "missing", "dflt"),
                    hasattr(c, "timeout"), hasattr(c, "nope")]
    """,
    "delattr_and_instance_state": """
        class Box:
            pass

        def run():
            b = Box()
            b.x = 1
            b.y = 2
            delattr(b, "x")
            return [hasattr(b, "x"), b.y]
    """,
    "class_attributes_constants": """
        class Limits:
            MAX = 10
            NAMES = ("a", "b")

            def over(self, n):
                return n > self.MAX

        def run():
            return [Limits.MAX, Limits().over(11), Limits.NAMES[1]]
    """,
    "private_name_mangling": """
        class Vault:
            def __init__(self):
                self.__secret = 42

            def reveal(self):
                return self.__secret

        def run():
            return Vault().reveal()
    """,
    "object_sentinel": """
        MISSING_NOTE = "sentinel compared by identity"

        def run():
            missing = object()
            d = {"a": 1}
            v = d.get("b", missing)
            return [v is missing, d.get("a", missing) is missing]
    """,
    "total_ordering_decorator": """
        import functools

        @functools.total_ordering
        class Grade:
            def __init__(self, v):
                self.v = v

            def __eq__(self, o):
                return self.v == o.v

            def __lt__(self, o):
                return self.v < o.v

        def run():
            return [Grade(1) <= Grade(2), Grade(3) >= Grade(2), Grade(2) > Grade(2)]
    """,
}

DECORATORS = {
    "decorator_plain": """
        def shout(f):
            def inner(x):
                return f(x).upper()
            return inner

        @shout
        def greet(name):
            return "hi " + name

        def run():
            return greet("ann")
    """,
    "decorator_with_arguments": """
        def repeat(times):
            def wrap(f):
                def inner(*args):
                    return [f(*args) for _ in range(times)]
                return inner
            return wrap

        @repeat(3)
        def one(x):
            return x + 1

        def run():
            return one(1)
    """,
    "decorators_stacked": """
        def add(n):
            def wrap(f):
                def inner(x):
                    return f(x) + n
                return inner
            return wrap

        @add(1)
        @add(10)
        def base(x):
            return x * 2

        def run():
            return base(5)
    """,
    "decorator_functools_wraps": """
        import functools

        def traced(f):
            @functools.wraps(f)
            def inner(*a, **k):
                return ("traced", f(*a, **k))
            return inner

        @traced
        def area(w, h=1):
            "Area of a rectangle."
            return w * h

        def run():
            return [area(3, h=4), area(2)]
    """,
    "only_owner_decorator": """
        class NotOwner(Exception):
            pass

        def only_owner(method):
            def guarded(self, caller, *args):
                if caller != self.owner:
                    raise NotOwner(caller)
                return method(self, caller, *args)
            return guarded

        class Vault:
            def __init__(self, owner):
                self.owner = owner
                self.value = 0

            @only_owner
            def set(self, caller, value):
                self.value = value
                return value

        def run():
            v = Vault("ann")
            out = [v.set("ann", 5)]
            try:
                v.set("bob", 6)
            except NotOwner as e:
                out.append("refused " + str(e))
            return out + [v.value]
    """,
    "closures_and_counters": """
        def make_counter():
            count = 0
            def bump(by=1):
                nonlocal count
                count += by
                return count
            return bump

        def run():
            c = make_counter()
            c()
            c(5)
            other = make_counter()
            return [c(), other()]
    """,
    "closures_late_binding": """
        def run():
            fs = [lambda x, i=i: x + i for i in range(3)]
            gs = [lambda x: x + i for i in range(3)]
            return [[f(10) for f in fs], [g(10) for g in gs]]
    """,
    "global_statement": """
        TOTAL = 0

        def add(n):
            global TOTAL
            TOTAL = TOTAL + n
            return TOTAL

        def run():
            add(3)
            return add(4)
    """,
}

SYNTAX = {
    "generators_and_yield_from": """
        def evens(n):
            for i in range(n):
                if i % 2 == 0:
                    yield i

        def chained():
            yield from evens(5)
            yield from "ab"

        def run():
            g = (x * x for x in evens(7))
            return [list(chained()), sum(g), next(evens(10)), list(zip(evens(6), "xyz"))]
    """,
    "generator_state_and_return": """
        def numbers():
            total = 0
            for i in range(3):
                total += i
                yield total
            return total

        def run():
            g = numbers()
            out = [next(g), next(g), next(g)]
            try:
                next(g)
            except StopIteration as stop:
                out.append(stop.value)
            return out
    """,
    "starred_assignment_forms": """
        def run():
            first, *rest = [1, 2, 3, 4]
            *init, last = "abcd"
            a, *mid, z = range(6)
            (p, *q), r = (1, 2, 3), 4
            return [first, rest, init, last, a, mid, z, p, q, r]
    """,
    "extended_unpacking_in_calls_and_literals": """
        def f(a, b, c=0, *rest, **kw):
            return [a, b, c, list(rest), sorted(kw.items())]

        def run():
            args = [1, 2]
            opts = {"x": 1}
            merged = {**opts, "y": 2, **{"x": 3}}
            return [f(*args), f(*args, 3, 4, 5, **opts), [*args, *"ab"], merged, {*args, 2}.__len__()]
    """,
    "match_literals_and_captures": """
        def describe(cmd):
            match cmd.split():
                case ["go", direction]:
                    return "going " + direction
                case ["pick", "up", item] | ["take", item]:
                    return "taking " + item
                case ["quit"]:
                    return "bye"
                case []:
                    return "empty"
                case _:
                    return "unknown"

        def run():
            return [describe(c) for c in ["go north", "pick up key", "take lamp", "quit", "", "dance"]]
    """,
    "match_mapping_and_guards": """
        def route(event):
            match event:
                case {"type": "transfer", "amount": int(n)} if n > 100:
                    return "large"
                case {"type": "transfer", **rest}:
                    return "transfer " + ",".join(sorted(rest))
                case {"type": str(t)}:
                    return "other " + t
                case _:
                    return "invalid"

        def run():
            return [route({"type": "transfer", "amount": 500}),
                    route({"type": "transfer", "amount": 5, "to": "x"}),
                    route({"type": "mint"}), route([1])]
    """,
    "match_class_patterns_dataclass": """
        from dataclasses import dataclass

        @dataclass
        class Deposit:
            amount: int

        @dataclass
        class Withdraw:
            amount: int
            fee: int = 0

        def apply(balance, op):
            match op:
                case Deposit(amount=a):
                    return balance + a
                case Withdraw(a, fee) if a + fee <= balance:
                    return balance - a - fee
                case Withdraw():
                    return balance
            return -1

        def run():
            b = 0
            for op in [Deposit(10), Withdraw(3, 1), Withdraw(100), Deposit(1)]:
                b = apply(b, op)
            return b
    """,
    "assert_with_message": """
        def withdraw(balance, amount):
            assert amount > 0, "amount must be positive"
            assert amount <= balance, f"insufficient: {balance} < {amount}"
            return balance - amount

        def run():
            out = [withdraw(10, 3)]
            for bad in (0, 20):
                try:
                    withdraw(10, bad)
                except AssertionError as e:
                    out.append(str(e))
            return out
    """,
    "try_except_else_finally": """
        def attempt(x):
            log = []
            try:
                v = 10 // x
            except ZeroDivisionError:
                log.append("zero")
            else:
                log.append(f"ok {v}")
            finally:
                log.append("done")
            return log

        def run():
            return [attempt(2), attempt(0)]
    """,
    "nested_exceptions_reraise": """
        def run():
            out = []
            try:
                try:
                    {}["k"]
                except KeyError as e:
                    out.append("inner " + repr(e))
                    raise
            except LookupError as e:
                out.append("outer " + str(type(e) is KeyError))
            return out
    """,
    "walrus_operator": """
        def run():
            data = [3, 8, 1, 9]
            if (n := len(data)) > 3:
                size = n
            big = [y for x in data if (y := x * 2) > 5]
            return [size, big]
    """,
    "chained_comparisons": """
        def run():
            x = 5
            return [1 < x < 10, 1 < x > 10, 0 <= x <= 5 < 6, "a" < "b" < "c"]
    """,
    "slicing_steps_negative": """
        def run():
            xs = list(range(10))
            s = "abcdefgh"
            return [xs[::2], xs[::-3], xs[-3:], xs[1:-1:4], s[::-1], s[-2:], s[:-5:-1]]
    """,
    "comprehensions_every_kind": """
        def run():
            pairs = [(i, j) for i in range(3) for j in range(i)]
            squares = {i: i * i for i in range(5) if i % 2}
            letters = sorted({c for c in "mississippi"})
            nested = [[j for j in range(i)] for i in range(4)]
            gen = sum(i for i in range(10) if i % 3 == 0)
            return [pairs, squares, letters, nested, gen]
    """,
    "lambda_sorting_multikey": """
        def run():
            people = [("ann", 30, "x"), ("bob", 25, "y"), ("cy", 30, "a")]
            return [sorted(people, key=lambda p: (-p[1], p[2])),
                    sorted(people, key=lambda p: p[0], reverse=True)[0][0]]
    """,
    "keyword_only_and_defaults": """
        def transfer(to, amount, *, memo="", fee=0):
            return [to, amount, memo, fee]

        def run():
            out = [transfer("a", 1), transfer("b", 2, memo="m", fee=1)]
            try:
                transfer("c", 3, "positional memo")
            except TypeError:
                out.append("refused")
            return out
    """,
    "recursion_and_memo_dict": """
        def ways(n, memo):
            if n <= 1:
                return 1
            if n not in memo:
                memo[n] = ways(n - 1, memo) + ways(n - 2, memo)
            return memo[n]

        def run():
            return [ways(i, {}) for i in range(0, 40, 8)]
    """,
    "while_else_and_continue": """
        def run():
            n, out = 0, []
            while n < 10:
                n += 1
                if n % 3:
                    continue
                out.append(n)
            else:
                out.append("done")
            return out
    """,
    "dict_views_and_ordering": """
        def run():
            d = {"z": 1, "a": 2}
            d["m"] = 3
            del d["z"]
            d["z"] = 4
            return [list(d), list(d.values()), list(d.items())[0], "a" in d.keys(),
                    sorted(d, key=d.get), d.setdefault("q", 9), d.pop("q")]
    """,
    "set_algebra": """
        def run():
            a, b = set("abcde"), set("cdefg")
            a2 = set(a)
            a2 |= {"z"}
            a2 -= {"a"}
            return [sorted(a & b), sorted(a - b), sorted(a ^ b), a <= a | b,
                    sorted(a2), frozenset("ab") == frozenset("ba")]
    """,
    "int_edge_cases": """
        def run():
            big = 2 ** 200
            return [big % 97, -7 // 2, -7 % 2, 7 // -2, pow(3, 200, 1000), pow(2, -1, 7),
                    divmod(-17, 5), abs(-big) == big, (1 << 100) >> 98, int("-0012")]
    """,
    "int_bytes_conversions": """
        def run():
            n = 258
            raw = n.to_bytes(4, "big")
            return [raw, int.from_bytes(raw, "big"), int.from_bytes(b"\\x01\\x02", "little"),
                    (1024).to_bytes(2, byteorder="little"), (-1).to_bytes(2, "big", signed=True),
                    n.bit_length(), n.bit_count()]
    """,
    "bytes_hex_and_bytearray": """
        def run():
            b = bytes.fromhex("de ad be ef")
            ba = bytearray(b"abc")
            ba[0] = 65
            ba.extend(b"de")
            return [b.hex(), b.hex(":"), bytes(ba), ba.decode(), bytes([1, 2, 3]),
                    b"x" * 3, b[1:3], list(b[:2])]
    """,
    "string_methods_more": """
        def run():
            s = "key=value=more"
            return [s.partition("="), s.rpartition("="), s.rsplit("=", 1), "7".zfill(3),
                    "ab".center(6, "*"), "ab".ljust(4, "."), "ab".rjust(4), "prefix_x".removeprefix("prefix_"),
                    "x.py".removesuffix(".py"), "Hello World".swapcase(), "a,b,,c".split(","),
                    " x ".strip(), "abc".isalpha(), "123".isdigit(), "tab\\tx".expandtabs(4)]
    """,
    "str_join_and_split_lines": """
        def run():
            text = "line one\\nline two\\n\\nline four"
            lines = text.splitlines()
            words = [w for line in lines for w in line.split()]
            return [len(lines), "|".join(words), " ".join(reversed(words[:2])), text.count("line")]
    """,
    "sorting_stability": """
        def run():
            rows = [("b", 1), ("a", 2), ("b", 0), ("a", 1)]
            by_letter = sorted(rows, key=lambda r: r[0])
            rows.sort(key=lambda r: r[1], reverse=True)
            return [by_letter, rows]
    """,
    "enumerate_zip_reversed_map_filter": """
        def run():
            xs = ["a", "b", "c"]
            return [list(enumerate(xs, 1)), list(zip(xs, range(5))), list(reversed(xs)),
                    list(map(str.upper, xs)), list(filter(None, [0, 1, "", "x"])),
                    dict(zip(xs, map(len, xs)))]
    """,
    "min_max_with_keys_and_defaults": """
        def run():
            words = ["pear", "fig", "banana"]
            return [min(words, key=len), max(words, key=len), max([], default="none"),
                    min(3, 1, 2), max("abc"), sorted(words, key=lambda w: (len(w), w))]
    """,
    "any_all_sum_with_generators": """
        def run():
            nums = [2, 4, 7]
            return [any(n % 2 for n in nums), all(n > 1 for n in nums), sum(n * n for n in nums),
                    sum([[1], [2]], []), all([])]
    """,
    "round_abs_divmod_pow": """
        def run():
            return [round(7, -1), round(15, -1), round(25, -1), abs(-3), divmod(7, 3), pow(2, 10)]
    """,
    "chr_ord_and_unicode": """
        def run():
            s = "héllo €"
            return [ord("A"), chr(8364), len(s), len(s.encode()), s.upper(), s.encode("utf-8")[:3]]
    """,
    "repr_of_builtins": """
        def run():
            return [repr("q'uote"), repr(b"\\x00b"), repr([1, "a", None]), repr({"k": (1,)}),
                    repr(True), str(b"x"), repr(range(3)), repr(-0)]
    """,
    "iter_and_next_with_default": """
        def run():
            it = iter([1, 2])
            return [next(it), next(it), next(it, "end"), list(iter("ab"))]
    """,
    "callable_and_builtin_checks": """
        def f():
            return 1

        class C:
            def __call__(self):
                return 2

        def run():
            return [callable(f), callable(C()), callable(3), callable(len)]
    """,
}

FORMATTING = {
    "str_format_positional_and_named": """
        def run():
            return ["{} + {} = {}".format(1, 2, 3), "{1}{0}".format("a", "b"),
                    "{name} is {age}".format(name="ann", age=30), "{0}{0}".format("x")]
    """,
    "str_format_specs": """
        def run():
            return ["{:>8}|".format("r"), "{:<6}|".format("l"), "{:^7}|".format("c"), "{:04d}".format(42),
                    "{:,}".format(1234567), "{:x}".format(255), "{:#b}".format(5), "{:+d}".format(3),
                    "{:08.3}".format("abcdef"), "{!r}".format("q")]
    """,
    "format_map_with_dict": """
        def run():
            data = {"who": "ann", "n": 3}
            return ["{who} has {n} items".format_map(data), "{n:03d}".format_map(data)]
    """,
    "percent_formatting_forms": """
        def run():
            return ["%d items" % 3, "%s and %s" % ("a", "b"), "%r" % "q", "%5d|" % 42, "%-5s|" % "ab",
                    "%x" % 255, "%05d" % 42, "100%%" % (), "%(k)s=%(v)d" % {"k": "a", "v": 1},
                    b"%d bytes" % 5]
    """,
    "fstring_conversions_and_specs": """
        def run():
            x, name, n = 42, "ann", 1234567
            return [f"{x!r}", f"{name!r}", f"{name!s}", f"{x:04d}", f"{x:>6}", f"{x:<6}|", f"{x:^6}|",
                    f"{n:,}", f"{x:x}", f"{x:#o}", f"{x:b}", f"{x=}", f"{name:.2}"]
    """,
    "format_builtin": """
        def run():
            return [format(42, "05d"), format("x", ">3"), format(255, "X"), format(12345, ","), format(7)]
    """,
    "nested_fstrings_and_expressions": """
        def run():
            items = {"a": 1, "b": 2}
            return [f"{len(items)} items: {', '.join(f'{k}={v}' for k, v in items.items())}",
                    f"{'yes' if items else 'no'}", f"{items['a'] + 1}"]
    """,
}

LIBRARY = {
    "typing_annotations_everywhere": """
        from typing import Dict, List, Optional, Tuple, Union, Callable, Any

        Ledger = Dict[str, int]

        def apply(ledger: Ledger, moves: List[Tuple[str, int]], fee: Optional[int] = None) -> Ledger:
            out: Dict[str, int] = dict(ledger)
            for who, delta in moves:
                out[who] = out.get(who, 0) + delta - (fee or 0)
            return out

        def pick(f: Callable[[int], int], x: Union[int, str]) -> Any:
            return f(int(x))

        def run():
            return [apply({"a": 1}, [("a", 5), ("b", 2)], 1), pick(lambda v: v * 2, "21")]
    """,
    "typing_generic_and_typevar": """
        from typing import Generic, TypeVar, List

        T = TypeVar("T")

        class Stack(Generic[T]):
            def __init__(self) -> None:
                self.items: List[T] = []

            def push(self, item: T) -> None:
                self.items.append(item)

            def pop(self) -> T:
                return self.items.pop()

        def run():
            s: Stack[int] = Stack()
            s.push(1)
            s.push(2)
            return [s.pop(), len(s.items)]
    """,
    "builtin_generics_and_unions": """
        def total(xs: list[int], extra: int | None = None) -> dict[str, int]:
            return {"sum": sum(xs) + (extra or 0)}

        def run():
            return [total([1, 2]), total([1], 5)]
    """,
    "typing_namedtuple_class": """
        from typing import NamedTuple

        class Order(NamedTuple):
            price: int
            qty: int = 1

        def run():
            o = Order(10)
            a, b = o
            return [o.price, o.qty, a + b, repr(o), o._replace(qty=5).qty, o == (10, 1)]
    """,
    "dataclass_defaults_and_factory": """
        from dataclasses import dataclass, field

        @dataclass
        class Wallet:
            owner: str
            balance: int = 0
            history: list = field(default_factory=list)

            def pay(self, amount):
                self.balance -= amount
                self.history.append(-amount)

        def run():
            w = Wallet("ann", 10)
            w.pay(3)
            other = Wallet("bob")
            return [repr(w), other.history, w == Wallet("ann", 7, [-3])]
    """,
    "dataclass_order_and_frozen": """
        from dataclasses import dataclass, FrozenInstanceError

        @dataclass(order=True, frozen=True)
        class Bid:
            price: int
            id: str

        def run():
            bids = sorted([Bid(5, "b"), Bid(3, "z"), Bid(5, "a")])
            try:
                bids[0].price = 1
                mutated = True
            except FrozenInstanceError:
                mutated = False
            return [[b.id for b in bids], mutated, Bid(1, "x") < Bid(2, "a"), len({Bid(1, "x"), Bid(1, "x")})]
    """,
    "dataclass_post_init_asdict_replace": """
        from dataclasses import dataclass, asdict, replace, field, fields

        @dataclass
        class Grant:
            total: int
            months: int
            monthly: int = field(init=False)

            def __post_init__(self):
                self.monthly = self.total // self.months

        def run():
            g = Grant(1200, 12)
            return [asdict(g), replace(g, total=2400).monthly, [f.name for f in fields(g)]]
    """,
    "dataclass_inheritance": """
        from dataclasses import dataclass

        @dataclass
        class Base:
            id: int

        @dataclass
        class Token(Base):
            symbol: str
            decimals: int = 18

        def run():
            t = Token(1, "TMR")
            return [repr(t), t.decimals, isinstance(t, Base)]
    """,
    "enum_basics": """
        from enum import Enum

        class Color(Enum):
            RED = 1
            GREEN = 2
            BLUE = 3

        def run():
            return [Color.RED.name, Color.RED.value, Color(2).name, Color["BLUE"].value,
                    [c.name for c in Color], len(Color), Color.RED is Color(1), repr(Color.GREEN), str(Color.BLUE)]
    """,
    "enum_auto_intenum_and_dicts": """
        from enum import Enum, IntEnum, auto

        class Level(IntEnum):
            LOW = auto()
            HIGH = auto()

        class Side(Enum):
            BUY = "buy"
            SELL = "sell"

        def run():
            counts = {Side.BUY: 2, Side.SELL: 1}
            return [Level.HIGH + 1, Level.LOW < Level.HIGH, int(Level.HIGH), counts[Side("buy")],
                    sorted(s.value for s in counts)]
    """,
    "enum_invalid_value": """
        from enum import Enum

        class Status(Enum):
            ON = 1

        def run():
            try:
                Status(5)
            except ValueError as e:
                return str(e)
    """,
    "enum_state_machine_escrow": """
        from enum import Enum

        class State(Enum):
            CREATED = "created"
            FUNDED = "funded"
            RELEASED = "released"
            REFUNDED = "refunded"

        TRANSITIONS = (
            (State.CREATED, "fund", State.FUNDED),
            (State.FUNDED, "release", State.RELEASED),
            (State.FUNDED, "refund", State.REFUNDED),
        )

        class InvalidTransition(Exception):
            pass

        class Escrow:
            def __init__(self):
                self.state = State.CREATED

            def act(self, action):
                for src, name, dst in TRANSITIONS:
                    if src is self.state and name == action:
                        self.state = dst
                        return dst.value
                raise InvalidTransition(f"{action} from {self.state.value}")

        def run():
            e = Escrow()
            out = [e.act("fund")]
            try:
                e.act("fund")
            except InvalidTransition as err:
                out.append(str(err))
            out.append(e.act("release"))
            return out
    """,
    "collections_deque": """
        from collections import deque

        def run():
            d = deque(maxlen=3)
            for i in range(5):
                d.append(i)
            d.appendleft(9)
            d.rotate(1)
            e = deque("abc")
            e.extendleft("xy")
            return [list(d), d.maxlen, list(e), e.popleft(), e.pop(), len(e), repr(deque([1, 2]))]
    """,
    "collections_defaultdict": """
        from collections import defaultdict

        def run():
            groups = defaultdict(list)
            for word in ["apple", "avocado", "banana", "blueberry", "cherry"]:
                groups[word[0]].append(word)
            counts = defaultdict(int)
            for c in "hello":
                counts[c] += 1
            return [dict(groups), dict(counts), groups["z"], len(groups)]
    """,
    "collections_namedtuple": """
        from collections import namedtuple

        Point = namedtuple("Point", ["x", "y"])
        Config = namedtuple("Config", "host port debug", defaults=(8080, False))

        def run():
            p = Point(1, y=2)
            c = Config("h")
            return [p.x + p.y, repr(p), p._asdict(), c.port, c.debug, Point._make([3, 4]).y, tuple(p)]
    """,
    "collections_ordereddict_counter": """
        from collections import OrderedDict, Counter

        def run():
            od = OrderedDict()
            od["a"] = 1
            od["b"] = 2
            od["c"] = 3
            od.move_to_end("a")
            last = od.popitem()
            c = Counter("mississippi")
            c.update("ss")
            return [list(od), last, c.most_common(2), c["z"], sorted(c.elements())[:3],
                    (Counter("aab") + Counter("b"))["b"]]
    """,
    "functools_reduce_partial": """
        import functools, operator

        def power(base, exp):
            return base ** exp

        def run():
            square = functools.partial(power, exp=2)
            return [functools.reduce(operator.mul, range(1, 6)), functools.reduce(lambda a, b: a + b, [], 0),
                    square(7), functools.partial(max, 3)(1, 2)]
    """,
    "functools_lru_cache": """
        import functools

        @functools.lru_cache(maxsize=None)
        def paths(r, c):
            if r == 0 or c == 0:
                return 1
            return paths(r - 1, c) + paths(r, c - 1)

        @functools.cache
        def fact(n):
            return 1 if n < 2 else n * fact(n - 1)

        def run():
            return [paths(10, 10), fact(20), paths.cache_info().hits > 0]
    """,
    "functools_cmp_to_key": """
        import functools

        def by_len_then_alpha(a, b):
            if len(a) != len(b):
                return len(a) - len(b)
            return -1 if a < b else (1 if a > b else 0)

        def run():
            return sorted(["ccc", "a", "bb", "aa"], key=functools.cmp_to_key(by_len_then_alpha))
    """,
    "itertools_infinite_with_islice": """
        import itertools

        def run():
            return [list(itertools.islice(itertools.count(10, 5), 4)),
                    list(itertools.islice(itertools.cycle("ab"), 5)), list(itertools.repeat("x", 3))]
    """,
    "itertools_combinatorics": """
        import itertools

        def run():
            return [list(itertools.product("ab", [1, 2])), list(itertools.permutations("abc", 2))[:4],
                    list(itertools.combinations(range(4), 2)), len(list(itertools.combinations_with_replacement("ab", 2)))]
    """,
    "itertools_accumulate_chain_groupby": """
        import itertools, operator

        def run():
            runs = [(k, len(list(g))) for k, g in itertools.groupby("aaabccdd")]
            return [list(itertools.accumulate([1, 2, 3, 4])), list(itertools.accumulate([3, 1, 4], operator.mul)),
                    list(itertools.chain([1], (2, 3), "x")), runs, list(itertools.chain.from_iterable([[1], [2, 3]]))]
    """,
    "itertools_filters_and_pairs": """
        import itertools

        def run():
            xs = [1, 4, 6, 2, 8]
            return [list(itertools.takewhile(lambda v: v < 5, xs)), list(itertools.dropwhile(lambda v: v < 5, xs)),
                    list(itertools.pairwise("abc")), list(itertools.starmap(pow, [(2, 3), (3, 2)])),
                    list(itertools.zip_longest("ab", "xyz", fillvalue="-")), list(itertools.compress("abcd", [1, 0, 1, 0]))]
    """,
    "bisect_functions": """
        import bisect

        def grade(score, cutoffs=(60, 70, 80, 90), letters="FDCBA"):
            return letters[bisect.bisect(cutoffs, score)]

        def run():
            xs = [1, 3, 3, 5]
            bisect.insort(xs, 4)
            bisect.insort_left(xs, 3)
            return [bisect.bisect_left(xs, 3), bisect.bisect_right(xs, 3), xs, [grade(s) for s in (33, 70, 99)]]
    """,
    "bisect_with_key": """
        import bisect

        def run():
            rows = [("a", 1), ("b", 5), ("c", 9)]
            i = bisect.bisect_left(rows, 5, key=lambda r: r[1])
            bisect.insort(rows, ("x", 7), key=lambda r: r[1])
            return [i, rows]
    """,
    "operator_getters_and_callers": """
        import operator

        class User:
            def __init__(self, name, age):
                self.name, self.age = name, age

        def run():
            users = [User("b", 30), User("a", 25)]
            rows = [("x", 3), ("y", 1)]
            return [[u.name for u in sorted(users, key=operator.attrgetter("age"))],
                    sorted(rows, key=operator.itemgetter(1)), operator.itemgetter(0, 1)("abc"),
                    list(map(operator.methodcaller("upper"), ["a", "b"])), operator.add(2, 3), operator.neg(4)]
    """,
    "string_constants_and_capwords": """
        import string

        def run():
            return [string.ascii_lowercase[:3], string.digits, string.hexdigits[-6:], string.capwords("hello  big world"),
                    all(c in string.ascii_letters for c in "Abc"), len(string.punctuation)]
    """,
    "math_gcd_isqrt_comb_factorial": """
        import math

        def run():
            return [math.gcd(84, 36), math.isqrt(99), math.comb(10, 3), math.factorial(10)]
    """,
    "base64_and_json_roundtrip": """
        import base64, json

        def run():
            raw = b"timer\\x00host"
            enc = base64.b64encode(raw)
            doc = json.dumps({"b": 2, "a": [1, None]}, sort_keys=True)
            return [enc, base64.b64decode(enc) == raw, doc, json.loads(doc)["a"]]
    """,
}

COMBINATIONS = {
    "erc20_token_with_dataclass_and_only_owner": """
        from dataclasses import dataclass, field
        from typing import Dict

        class TokenError(Exception):
            pass

        def only_owner(method):
            def guarded(self, caller, *args):
                if caller != self.state.owner:
                    raise TokenError("only the owner may do that")
                return method(self, caller, *args)
            return guarded

        @dataclass
        class State:
            owner: str
            supply: int = 0
            balances: Dict[str, int] = field(default_factory=dict)
            allowances: Dict[str, int] = field(default_factory=dict)

        class Token:
            def __init__(self, owner):
                self.state = State(owner)

            @only_owner
            def mint(self, caller, to, amount):
                self.state.balances[to] = self.state.balances.get(to, 0) + amount
                self.state.supply += amount

            def transfer(self, caller, to, amount):
                have = self.state.balances.get(caller, 0)
                if have < amount:
                    raise TokenError(f"{caller} has {have}, needs {amount}")
                self.state.balances[caller] = have - amount
                self.state.balances[to] = self.state.balances.get(to, 0) + amount

            def approve(self, caller, spender, amount):
                self.state.allowances[f"{caller}:{spender}"] = amount

            def transfer_from(self, caller, owner, to, amount):
                key = f"{owner}:{caller}"
                if self.state.allowances.get(key, 0) < amount:
                    raise TokenError("allowance too low")
                self.state.allowances[key] -= amount
                self.transfer(owner, to, amount)

        def run():
            t = Token("ann")
            t.mint("ann", "ann", 100)
            t.transfer("ann", "bob", 30)
            t.approve("bob", "cy", 10)
            t.transfer_from("cy", "bob", "dan", 7)
            errors = []
            for attempt in (lambda: t.mint("bob", "bob", 1), lambda: t.transfer("dan", "ann", 50),
                            lambda: t.transfer_from("cy", "bob", "dan", 7)):
                try:
                    attempt()
                except TokenError as e:
                    errors.append(str(e))
            return [dict(sorted(t.state.balances.items())), t.state.supply, errors]
    """,
    "actor_with_helper_class_and_custom_exception": """
        class Overdrawn(Exception):
            def __init__(self, need, have):
                super().__init__(f"need {need}, have {have}")
                self.need = need

        class Ledger:
            def __init__(self):
                self.entries = []

            def post(self, amount):
                if self.balance() + amount < 0:
                    raise Overdrawn(-amount, self.balance())
                self.entries.append(amount)

            def balance(self):
                return sum(self.entries)

        def run():
            ledger = Ledger()
            ledger.post(10)
            ledger.post(-4)
            try:
                ledger.post(-20)
            except Overdrawn as e:
                return [ledger.balance(), str(e), e.need]
    """,
    "typed_order_book_bisect_deque": """
        import bisect
        from collections import deque
        from dataclasses import dataclass
        from typing import Dict, List

        @dataclass
        class Order:
            id: int
            side: str
            price: int
            qty: int

        class Book:
            def __init__(self) -> None:
                self.prices: Dict[str, List[int]] = {"buy": [], "sell": []}
                self.levels: Dict[tuple, deque] = {}

            def add(self, order: Order) -> List[tuple]:
                fills = self.match(order)
                if order.qty > 0:
                    key = (order.side, order.price)
                    if key not in self.levels:
                        bisect.insort(self.prices[order.side], order.price)
                        self.levels[key] = deque()
                    self.levels[key].append(order)
                return fills

            def match(self, order: Order) -> List[tuple]:
                other = "sell" if order.side == "buy" else "buy"
                fills = []
                while order.qty > 0 and self.prices[other]:
                    best = self.prices[other][0] if other == "sell" else self.prices[other][-1]
                    crosses = best <= order.price if order.side == "buy" else best >= order.price
                    if not crosses:
                        break
                    queue = self.levels[(other, best)]
                    maker = queue[0]
                    qty = min(maker.qty, order.qty)
                    maker.qty -= qty
                    order.qty -= qty
                    fills.append((maker.id, order.id, best, qty))
                    if maker.qty == 0:
                        queue.popleft()
                    if not queue:
                        del self.levels[(other, best)]
                        self.prices[other].remove(best)
                return fills

        def run():
            book = Book()
            book.add(Order(1, "sell", 101, 5))
            book.add(Order(2, "sell", 100, 3))
            book.add(Order(3, "sell", 100, 2))
            fills = book.add(Order(4, "buy", 101, 9))
            return [fills, book.prices, [(k, [o.qty for o in q]) for k, q in book.levels.items()]]
    """,
    "vesting_schedule_with_dataclasses": """
        from dataclasses import dataclass

        @dataclass(frozen=True)
        class Schedule:
            total: int
            start: int
            cliff: int
            duration: int

            def vested(self, now: int) -> int:
                if now < self.start + self.cliff:
                    return 0
                if now >= self.start + self.duration:
                    return self.total
                return self.total * (now - self.start) // self.duration

        def run():
            s = Schedule(total=1200, start=100, cliff=30, duration=120)
            return [s.vested(t) for t in (99, 129, 130, 160, 220, 500)]
    """,
    "cron_like_registry_sorted_lists": """
        import bisect
        from dataclasses import dataclass, field

        @dataclass(order=True)
        class Job:
            due: int
            name: str = field(compare=False)
            every: int = field(default=0, compare=False)

        class Registry:
            def __init__(self):
                self.jobs = []

            def add(self, job):
                bisect.insort(self.jobs, job)

            def tick(self, now):
                fired = []
                while self.jobs and self.jobs[0].due <= now:
                    job = self.jobs.pop(0)
                    fired.append(f"{job.name}@{job.due}")
                    if job.every:
                        self.add(Job(job.due + job.every, job.name, job.every))
                return fired

        def run():
            r = Registry()
            r.add(Job(5, "hourly", 10))
            r.add(Job(7, "once"))
            return [r.tick(6), r.tick(30), [j.due for j in r.jobs]]
    """,
    "access_control_list_with_classmethods": """
        from enum import Enum

        class Role(Enum):
            ADMIN = 3
            WRITER = 2
            READER = 1

        class Acl:
            def __init__(self, grants):
                self.grants = dict(grants)

            @classmethod
            def with_admin(cls, who):
                return cls({who: Role.ADMIN})

            def grant(self, by, who, role):
                if self.grants.get(by, Role.READER).value < Role.ADMIN.value:
                    raise PermissionError(f"{by} cannot grant")
                self.grants[who] = role

            def can(self, who, needed):
                return self.grants.get(who, Role.READER).value >= needed.value

        def run():
            acl = Acl.with_admin("root")
            acl.grant("root", "ann", Role.WRITER)
            try:
                acl.grant("ann", "bob", Role.ADMIN)
            except PermissionError as e:
                refused = str(e)
            return [acl.can("ann", Role.WRITER), acl.can("bob", Role.WRITER), refused]
    """,
    "subscription_billing_with_enum_and_dataclass": """
        from dataclasses import dataclass
        from enum import Enum, auto

        class Plan(Enum):
            FREE = auto()
            PRO = auto()

        PRICES = ((Plan.FREE, 0), (Plan.PRO, 15))

        @dataclass
        class Subscription:
            user: str
            plan: Plan
            paid_until: int = 0

            def renew(self, now, balance):
                price = dict(PRICES)[self.plan]
                if balance < price:
                    return balance, False
                self.paid_until = max(self.paid_until, now) + 30
                return balance - price, True

        def run():
            s = Subscription("ann", Plan.PRO)
            balance, ok = s.renew(0, 40)
            balance, ok2 = s.renew(10, balance)
            balance, ok3 = s.renew(20, balance)
            return [balance, ok, ok2, ok3, s.paid_until, s.plan.name]
    """,
    "event_log_with_namedtuple_and_counter": """
        from collections import namedtuple, Counter

        Event = namedtuple("Event", "height kind actor")

        def run():
            events = [Event(1, "fire", "a"), Event(1, "schedule", "b"), Event(2, "fire", "a"), Event(3, "fire", "c")]
            by_kind = Counter(e.kind for e in events)
            per_height = {}
            for e in events:
                per_height.setdefault(e.height, []).append(e.actor)
            return [by_kind.most_common(), per_height, max(events, key=lambda e: e.height).actor]
    """,
    "checksum_fold_with_reduce": """
        import functools

        def combine(a, b):
            return (a * 31 + b) % 1000003

        def run():
            leaves = [i * i for i in range(50)]
            return [functools.reduce(combine, leaves), functools.reduce(combine, leaves, 7)]
    """,
    "auction_with_properties_and_sorted_bids": """
        class Auction:
            def __init__(self, reserve):
                self.reserve = reserve
                self.bids = {}

            def bid(self, who, amount):
                if amount <= self.highest:
                    raise ValueError(f"bid {amount} not above {self.highest}")
                self.bids[who] = amount

            @property
            def highest(self):
                return max(self.bids.values(), default=self.reserve)

            @property
            def winner(self):
                ranked = sorted(self.bids.items(), key=lambda kv: -kv[1])
                return ranked[0][0] if ranked else None

        def run():
            a = Auction(10)
            a.bid("ann", 12)
            a.bid("bob", 15)
            try:
                a.bid("cy", 14)
            except ValueError as e:
                err = str(e)
            return [a.winner, a.highest, err]
    """,
}

MORE_PROGRAMS = {**CLASSES, **DECORATORS, **SYNTAX, **FORMATTING, **LIBRARY, **COMBINATIONS}
