"""Checks the actor-VM library modules in this directory against CPython.

Each module is loaded from its file under a private name (``pvm_typing``…),
with ``sys.modules`` patched only while loading so that a sibling import
(``import typing`` in dataclasses.py) resolves to the sibling file.  Every
scenario runs once with the VM module and once with CPython's and the
outcomes (values, reprs, exception types and messages) must agree; the few
deliberate differences are tested on their own, against their documented
behaviour.  Also checked: the code rules the VM needs (imports, banned
builtins, no getattr/hasattr/setattr/delattr with a name the VM's reflective
builtins refuse, module-level statements, no global/nonlocal, no float
literals) and that what an actor can leave at module level passes an
emulation of the VM's load-time immutability walk (host/vm/src/load.rs).

Run: python -m pytest tests/python/test_stdlib_cpython.py -q
"""

import os
import sys

# The library's files are named like CPython's modules: their directory must
# never be on sys.path (it is not, unless someone runs pytest from there).
_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'host', 'vm', 'src', 'stdlib')
_HERE = os.path.abspath(_HERE)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import ast  # noqa: E402
import bisect as c_bisect
import collections as c_collections
import contextlib as c_contextlib
import copy as c_copy
import dataclasses as c_dataclasses
import enum as c_enum
import functools as c_functools
import heapq as c_heapq
import importlib.util
import itertools as c_itertools
import operator as c_operator
import pathlib
import random
import re
import string as c_string
import typing as c_typing

import pytest

HERE = pathlib.Path(_HERE)
# dependency order: dataclasses imports typing, contextlib collections and functools
NAMES = ('typing', 'string', 'bisect', 'operator', 'itertools', 'functools',
         'collections', 'enum', 'dataclasses', 'heapq', 'copy', 'contextlib')


def _load():
    modules = {}
    saved = {name: sys.modules.get(name) for name in NAMES}
    try:
        for name in NAMES:
            spec = importlib.util.spec_from_file_location('pvm_' + name, HERE / f'{name}.py')
            module = importlib.util.module_from_spec(spec)
            if name == 'functools':
                module._pvm_epoch = lambda: 0
            # The VM's natives for class attributes, as CPython spells them.
            module._pvm_set_class_attr = type.__setattr__
            module._pvm_del_class_attr = type.__delattr__
            module._pvm_object_setattr = object.__setattr__
            module._pvm_make_class = type
            sys.modules[name] = module
            spec.loader.exec_module(module)
            modules[name] = module
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    return modules


PVM = _load()
CPY = {'typing': c_typing, 'string': c_string, 'bisect': c_bisect, 'operator': c_operator,
       'itertools': c_itertools, 'functools': c_functools, 'collections': c_collections,
       'enum': c_enum, 'dataclasses': c_dataclasses, 'heapq': c_heapq, 'copy': c_copy,
       'contextlib': c_contextlib}


def test_cpython_modules_are_cpythons():
    for name, module in CPY.items():
        path = getattr(module, '__file__', None)
        assert path is None or os.path.dirname(os.path.abspath(path)) != _HERE, name
        assert PVM[name] is not module


def outcome(fn, *args, **kwargs):
    """A comparable record of calling fn: its value, or its exception."""
    try:
        return ('ok', fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - comparing every failure
        return ('raise', type(exc).__name__, str(exc))


def same(scenario, module):
    """Runs ``scenario(m)`` with the VM module and CPython's; they must agree."""
    mine = outcome(scenario, PVM[module])
    theirs = outcome(scenario, CPY[module])
    assert theirs[0] == 'ok', theirs       # scenarios catch the failures they test
    if mine[0] == theirs[0] == 'ok' and isinstance(mine[1], list) and isinstance(theirs[1], list):
        diffs = [(i, a, b) for i, (a, b) in enumerate(zip(mine[1], theirs[1])) if a != b]
        assert not diffs, 'index, VM, CPython:\n' + '\n'.join([repr(d) for d in diffs])
        assert len(mine[1]) == len(theirs[1])
    assert mine == theirs


def tries(*thunks):
    return [outcome(t) for t in thunks]


def raises_type(thunk):
    """Only the exception type (CPython's C types name themselves 'collections.deque')."""
    try:
        thunk()
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__
    return 'no exception'


# ---- the code rules -------------------------------------------------------

FORBIDDEN = {'exec', 'eval', 'compile', 'globals', 'locals', 'vars', 'id', 'hash', 'print',
             'open', 'float', 'complex', 'dir', 'input', 'breakpoint', 'memoryview'}
MODULE_STATEMENTS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign,
                     ast.AnnAssign, ast.Expr, ast.Pass)
CLASS_STATEMENTS = (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.Expr, ast.Pass)
MUTABLE_DISPLAYS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
                    ast.GeneratorExp)


REFLECTIVE = {'getattr', 'hasattr', 'setattr', 'delattr'}


def _protocol_dunders():
    """PROTOCOL_DUNDERS of host/vm/src/names.rs: the dunders the VM's getattr allows."""
    try:
        text = (HERE.parent / 'names.rs').read_text()
        block = text[text.index('pub const PROTOCOL_DUNDERS'):]
        block = block[:block.index('];')]
    except (OSError, ValueError):
        return {'__index__', '__getitem__', '__post_init__'}
    return set(re.findall(r'"(__\w+__)"', block))


def _vm_refuses(name):
    """host/vm/src/names.rs refuse_attribute, for the names a module writes."""
    if name.startswith('__') and name.endswith('__') and len(name) > 4:
        return name not in _protocol_dunders()
    if name.startswith('_pvm'):
        return True
    return len(name) > 2 and name.startswith('_') and name.endswith('_')


def _parse(name):
    return ast.parse((HERE / f'{name}.py').read_text(), filename=f'{name}.py')


def _static_value_problems(value, where):
    problems = []
    for node in ast.walk(value):
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, MUTABLE_DISPLAYS):
            problems.append(f'{where}: mutable display at line {node.lineno}')
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ('list', 'dict', 'set', 'bytearray')):
            problems.append(f'{where}: {node.func.id}() at line {node.lineno}')
    return problems


@pytest.mark.parametrize('name', NAMES)
def test_code_rules(name):
    tree = _parse(name)
    problems = []
    assert isinstance(tree.body[0], ast.Expr) and isinstance(tree.body[0].value, ast.Constant), \
        'a module docstring comes first'
    for stmt in tree.body:
        if not isinstance(stmt, MODULE_STATEMENTS):
            problems.append(f'module level {type(stmt).__name__} at line {stmt.lineno}')
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            problems += _static_value_problems(stmt.value, 'module level')
        if isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if not isinstance(item, CLASS_STATEMENTS):
                    problems.append(f'class {stmt.name}: {type(item).__name__} at line {item.lineno}')
                if isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None:
                    problems += _static_value_problems(item.value, f'class {stmt.name}')
                if isinstance(item, ast.FunctionDef) and item.name == '__del__':
                    problems.append(f'__del__ at line {item.lineno}')
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name not in NAMES or alias.asname:
                    problems.append(f'import {alias.name} at line {stmt.lineno}')
        if isinstance(stmt, ast.ImportFrom) and (stmt.module not in NAMES or stmt.level):
            problems.append(f'from {stmt.module} import at line {stmt.lineno}')
    if name == 'typing':
        problems += [f'typing imports at line {s.lineno}' for s in tree.body
                     if isinstance(s, (ast.Import, ast.ImportFrom))]
    function_lines = set()
    parameters = set()      # a parameter named like a builtin (field(hash=...)) is fine
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            names = {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
            for inner in ast.walk(node):
                if hasattr(inner, 'lineno'):
                    function_lines.add(id(inner))
                if isinstance(inner, ast.Name) and inner.id in names:
                    parameters.add(id(inner))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            problems.append(f'{type(node).__name__.lower()} at line {node.lineno}')
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in tree.body:
            problems.append(f'nested import at line {node.lineno}')
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in REFLECTIVE and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant) and _vm_refuses(node.args[1].value)):
            problems.append(f'{node.func.id}(…, {node.args[1].value!r}) at line {node.lineno}: '
                            "the VM's reflective builtins refuse that name; use attribute syntax")
        if isinstance(node, ast.Name) and node.id in FORBIDDEN and id(node) not in parameters:
            problems.append(f'name {node.id} at line {node.lineno}')
        if isinstance(node, ast.Constant) and isinstance(node.value, (float, complex)):
            problems.append(f'float literal at line {node.lineno}')
        if isinstance(node, (ast.Try, ast.With)) and node in tree.body:
            problems.append(f'module-level {type(node).__name__} at line {node.lineno}')
        if isinstance(node, ast.AugAssign):
            target = node.target
            simple = (isinstance(target, ast.Name)
                      or (isinstance(target, (ast.Attribute, ast.Subscript))
                          and isinstance(target.value, ast.Name)
                          and (isinstance(target, ast.Attribute)
                               or isinstance(target.slice, (ast.Name, ast.Constant)))))
            if not simple:
                problems.append(f'complex augmented assignment at line {node.lineno}')
        if isinstance(node, ast.Name) and node.id == '_pvm_epoch' and id(node) not in function_lines:
            problems.append(f'_pvm_epoch outside a function at line {node.lineno}')
        if isinstance(node, ast.Attribute) and node.attr == '__slots__':
            problems.append(f'__slots__ attribute at line {node.lineno}')
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == '__slots__'
                                                 for t in node.targets)
                and not (isinstance(node.value, ast.Tuple) and not node.value.elts)):
            problems.append(f'non-empty __slots__ at line {node.lineno}')
    assert problems == []


# ---- an emulation of the VM's load-time immutability walk ------------------

HEAPTYPE = 1 << 9


def frozen_walk(globals_dict):
    """Mirrors host/vm/src/load.rs ``freeze``: returns the first mutable path."""
    seen = set()

    def visit(obj, path):
        if obj is None or isinstance(obj, (int, str, bytes, float)) or obj is ... \
                or obj is NotImplemented:
            return None
        if id(obj) in seen:
            return None
        seen.add(id(obj))
        if type(obj) is tuple:
            for index, item in enumerate(obj):
                bad = visit(item, f'{path}[{index}]')
                if bad:
                    return bad
            return None
        if type(obj) is frozenset:
            for item in obj:
                bad = visit(item, f'an item of {path}')
                if bad:
                    return bad
            return None
        if isinstance(obj, type(sys)) or type(obj).__name__ == 'builtin_function_or_method':
            return None
        if type(obj).__name__ == 'function':
            for index, cell in enumerate(obj.__closure__ or ()):
                bad = visit(cell.cell_contents, f'{path} captured {obj.__code__.co_freevars[index]}')
                if bad:
                    return bad
            for value in (obj.__defaults__, obj.__kwdefaults__):
                if isinstance(value, dict):
                    for key, item in value.items():
                        bad = visit(item, f'{path}.{key}')
                        if bad:
                            return bad
                elif value is not None:
                    bad = visit(value, f'{path} defaults')
                    if bad:
                        return bad
            for key, item in obj.__dict__.items():
                bad = visit(item, f'{path}.{key}')
                if bad:
                    return bad
            return None
        if isinstance(obj, type):
            if not obj.__flags__ & HEAPTYPE:
                return None
            for name, value in list(obj.__dict__.items()):
                private = name.startswith('_pvm') or (
                    name.startswith('_') and name.endswith('_') and not name.startswith('__'))
                dunder = name.startswith('__') and name.endswith('__')
                if private:
                    continue
                if dunder and not isinstance(value, (staticmethod, classmethod, property,
                                                     type(visit))):
                    continue
                bad = visit(value, f'{path}.{name}')
                if bad:
                    return bad
            return None
        if isinstance(obj, (staticmethod, classmethod)):
            return visit(obj.__func__, path)
        if isinstance(obj, property):
            for accessor in ('fget', 'fset', 'fdel'):
                bad = visit(getattr(obj, accessor), f'{path}.{accessor}')
                if bad:
                    return bad
            return None
        if getattr(type(obj), '_pvm_immutable', None) is True:
            return None
        return f'{path} is a {type(obj).__name__}'

    for name, value in globals_dict.items():
        # `_pvm_…` globals are the VM's natives (builtin functions there).
        if not name.startswith('__') and not name.startswith('_pvm_'):
            bad = visit(value, name)
            if bad:
                return bad
    return None


def test_library_modules_pass_the_load_walk():
    for name in NAMES:
        assert frozen_walk(vars(PVM[name])) is None, name


def test_actor_module_values_pass_the_load_walk():
    t, dc, en, ft, co, op = (PVM['typing'], PVM['dataclasses'], PVM['enum'], PVM['functools'],
                             PVM['collections'], PVM['operator'])
    T = t.TypeVar('T')

    @dc.dataclass(frozen=True)
    class Config:
        limit: int = 3
        tags: tuple = ()

    @dc.dataclass
    class Mutable:
        items: list = dc.field(default_factory=list)

    class Color(en.Enum):
        RED = 1
        GREEN = 2

        @property
        def lower(self):
            return self.name.lower()

    class Perm(en.IntFlag):
        R = 4
        W = 2

    class Point(t.NamedTuple):
        x: int
        y: int = 0

    class Box(t.Generic[T]):
        def __init__(self, item):
            self.item = item

    class Movie(t.TypedDict):
        name: str

    @ft.lru_cache(maxsize=8)
    def square(n):
        return n * n

    @ft.cache
    def cube(n):
        return n * n * n

    class Cached:
        @ft.cached_property
        def value(self):
            return 1

        @ft.lru_cache
        def method(self, n):
            return n

    @ft.total_ordering
    class Ordered:
        def __init__(self, n):
            self.n = n

        def __lt__(self, other):
            return self.n < other.n

        def __eq__(self, other):
            return self.n == other.n

    def decorator(fn):
        @ft.wraps(fn)
        def wrapper(*args):
            return fn(*args)
        return wrapper

    @decorator
    def decorated(x):
        return x

    actor_globals = {
        'T': T, 'Optional': t.Optional, 'IntList': t.List[int], 'Handler': t.Callable[[int], str],
        'Maybe': t.Optional[t.Dict[str, int]], 'UserId': t.NewType('UserId', int), 'Any': t.Any,
        'Config': Config, 'DEFAULT': Config(), 'Mutable': Mutable, 'MISSING': dc.MISSING,
        'Color': Color, 'FAVOURITE': Color.RED, 'RW': Perm.R | Perm.W, 'Perm': Perm,
        'Point': Point, 'ORIGIN': Point(0, 0), 'Box': Box, 'BoxOfInt': Box[int], 'Movie': Movie,
        'Pair': co.namedtuple('Pair', 'a b', defaults=(0,)), 'square': square, 'cube': cube,
        'Cached': Cached, 'Ordered': Ordered, 'decorated': decorated,
        'add_one': ft.partial(c_operator.add, 1), 'get_x': op.attrgetter('x'),
        'first': op.itemgetter(0), 'upper': op.methodcaller('upper'),
        'key': ft.cmp_to_key(lambda a, b: a - b), 'auto': en.auto, 'field': dc.field,
    }
    assert frozen_walk(actor_globals) is None
    # and the walk does refuse what must be refused
    assert frozen_walk({'m': Mutable()}) == 'm is a Mutable'
    assert frozen_walk({'d': co.deque()}) == 'd is a deque'
    assert frozen_walk({'c': co.Counter()}) == 'c is a Counter'


# ---- typing -------------------------------------------------------------

def test_typing_reprs():
    def scenario(t):
        T = t.TypeVar('T')
        K = t.TypeVar('K', covariant=True)
        return [repr(x) for x in (
            t.Optional[int], t.Union[int, str], t.Union[int, None, str], t.Union[int],
            t.Union[int, t.Union[str, bytes]], t.Union[int, int],
            t.List[int], t.Dict[str, t.List[int]], t.Tuple[int, ...], t.Tuple[()], t.Tuple[int, str],
            t.Set[str], t.FrozenSet[int], t.Type[int], t.Iterable[int], t.Iterator[str],
            t.Sequence[int], t.Mapping[str, int], t.MutableMapping[str, int],
            t.Generator[int, None, None], t.Callable[[int], str], t.Callable[..., int],
            t.Callable[[], None], t.Callable[[int, str], t.List[int]],
            t.Literal['a'], t.Literal['a', 1, None], t.Annotated[int, 'meta'],
            t.Final[int], t.ClassVar[t.List[int]], t.Any, t.List, t.Dict, t.Optional, t.Union,
            T, K, t.List[T], t.Dict[str, T][int], t.Optional[T][str],
        )]
    same(scenario, 'typing')


def test_typing_behaviour():
    def scenario(t):
        T = t.TypeVar('T')

        class Box(t.Generic[T]):
            def __init__(self, item=None):
                self.item = item

            def get(self):
                return self.item

        class IntBox(Box[int]):
            pass

        class Proto(t.Protocol):
            def meth(self):
                ...

        UserId = t.NewType('UserId', int)

        @t.overload
        def f(x: int) -> int:
            ...

        def f(x):
            return x

        results = [
            Box(3).get(), Box[int](4).get(), IntBox(5).get(), issubclass(IntBox, Box),
            UserId(5), UserId.__supertype__ is int, t.cast(int, 'x'), f(2), t.TYPE_CHECKING,
            t.Optional[int] == t.Union[int, None], t.Union[int, str] == t.Union[str, int],
            t.List[int] == t.List[int], t.List[int] == t.List[str],
            isinstance(3, t.Union[int, str]), isinstance(None, t.Optional[int]),
            isinstance([], t.List), isinstance({}, t.Dict), isinstance((), t.Tuple),
            isinstance(len, t.Callable), isinstance(3, t.Callable), isinstance([], t.Iterable),
            isinstance(3, t.Iterable), isinstance({}, t.Mapping), isinstance(int, t.Type),
            isinstance(range(3), t.Sequence), isinstance('a', t.Sequence), isinstance({}, t.Sequence),
            issubclass(list, t.Iterable), issubclass(int, t.Hashable), issubclass(list, t.Hashable),
            isinstance(iter([]), t.Iterator), isinstance([], t.Iterator), isinstance((x for x in ()), t.Generator),
            t.get_origin(t.List[int]) is list, t.get_args(t.Dict[str, int]) == (str, int),
            t.get_args(t.Callable[[int], str]) == ([int], str), t.get_origin(t.Union[int, str]) is t.Union,
            t.get_args(t.Annotated[int, 'm']) == (int, 'm'), t.get_origin(int), t.get_args(int),
            t.final(len) is len, t.runtime_checkable(Proto) is Proto,
            T.__name__, t.Literal['a'] == t.Literal['a'],
            {t.List[int]: 1}[t.List[int]], {t.Optional: 1}[t.Optional],
            t.Text is str, repr(t.AnyStr),
        ]
        results += tries(
            lambda: isinstance(3, t.List[int]), lambda: isinstance(3, t.Any),
            lambda: t.Optional[int, str], lambda: t.List[int, str], lambda: t.Dict[int],
            lambda: t.Callable[int], lambda: t.Union[()], lambda: t.TypeVar('X', int),
            lambda: t.List(), lambda: t.Annotated[int], lambda: t.Any(), lambda: f(1, 2),
            lambda: t.Generic[int], lambda: t.assert_never(3),
        )
        return [repr(r) if isinstance(r, type) else r for r in results]
    same(scenario, 'typing')


def test_typing_subclassing_errors():
    def scenario(t):
        def sub(base):
            class X(base):
                pass
            return X
        return tries(lambda: sub(t.Union[int, str]), lambda: sub(t.Optional),
                     lambda: sub(t.TypeVar('T')))
    mine = outcome(scenario, PVM['typing'])
    theirs = outcome(scenario, CPY['typing'])
    assert [r[:2] for r in mine[1]] == [r[:2] for r in theirs[1]]


def test_namedtuple_class_syntax():
    def scenario(t):
        class Point(t.NamedTuple):
            """A point."""
            x: int
            y: int = 0

            def norm1(self):
                return abs(self.x) + abs(self.y)

            @property
            def doubled(self):
                return Point(2 * self.x, 2 * self.y)

        p = Point(3, -4)
        q = Point(x=1)
        results = [
            repr(p), repr(q), p.x, p.y, p[0], tuple(p), p == (3, -4), isinstance(p, tuple),
            p.norm1(), repr(p.doubled), Point._fields, Point._field_defaults, p._asdict(),
            repr(p._replace(y=9)), repr(Point._make([5, 6])), len(p), Point.__match_args__,
            Point.__name__, Point.__doc__, Point.__annotations__ == {'x': int, 'y': int},
            hash(p) == hash((3, -4)), p < Point(4), sorted([Point(2), Point(1, 5)]),
        ]
        results += tries(
            lambda: Point(), lambda: Point(1, 2, 3), lambda: Point(1, x=2), lambda: Point(z=1),
            lambda: p._replace(z=1), lambda: Point._make([1]), lambda: setattr(p, 'z', 1),
        )

        def bad_order():
            class Bad(t.NamedTuple):
                a: int = 1
                b: int
            return Bad

        def underscore():
            class Bad(t.NamedTuple):
                _a: int
            return Bad

        def functional():
            P2 = t.NamedTuple('P2', [('a', int), ('b', str)])
            return repr(P2(1, 'x')), P2._fields
        results += tries(bad_order, underscore, functional)
        return results
    same(scenario, 'typing')


def test_lazy_class_annotations():
    """RustPython 0.6 compiles class annotations lazily (PEP 649): the class
    namespace holds ``__annotate_func__`` instead of ``__annotations__``."""
    t = PVM['typing']
    ns = {'__module__': 'm', '__qualname__': 'P', 'y': 5,
          '__annotate_func__': lambda format: {'x': int, 'y': int}}
    Point = t._NamedTupleMeta('P', (t.NamedTuple,), ns)
    assert repr(Point(1)) == 'P(x=1, y=5)' and Point.__annotations__ == {'x': int, 'y': int}
    ns = {'__module__': 'm', '__qualname__': 'M', '__annotate__': lambda format: {'a': str}}
    Movie = t._TypedDictMeta('M', (t.TypedDict,), ns)
    assert Movie.__required_keys__ == frozenset({'a'}) and Movie(a='x') == {'a': 'x'}


def test_typing_objects_are_immutable():
    t = PVM['typing']
    for obj in (t.Optional, t.List, t.List[int], t.TypeVar('T'), t.NewType('N', int), t.Any):
        with pytest.raises(AttributeError):
            obj.extra = 1
        assert type(obj)._pvm_immutable is True


def test_typeddict():
    def scenario(t):
        class Movie(t.TypedDict):
            name: str
            year: int

        class Partial(t.TypedDict, total=False):
            rating: int

        class Sequel(Movie):
            prequel: str

        m = Movie(name='Blade Runner', year=1982)
        results = [m, type(m) is dict, Movie(), Sequel(name='x', year=1, prequel='y'),
                   sorted(Movie.__required_keys__), sorted(Partial.__optional_keys__),
                   sorted(Sequel.__required_keys__), Partial.__total__]
        results += tries(lambda: isinstance({}, Movie))
        return results
    same(scenario, 'typing')


# ---- dataclasses --------------------------------------------------------

def test_dataclass_basics():
    def scenario(dc):
        @dc.dataclass
        class Point:
            x: int
            y: int = 0
            tags: list = dc.field(default_factory=list, repr=False)

        p = Point(1)
        q = Point(1, 0)
        results = [repr(p), p == q, p != Point(2), p == (1, 0), Point.__hash__ is None,
                   Point.__match_args__, [f.name for f in dc.fields(Point)],
                   dc.asdict(Point(1, 2, [Point(3)])), dc.astuple(Point(1, 2, [3])),
                   repr(dc.replace(p, y=5)), dc.is_dataclass(Point), dc.is_dataclass(p),
                   dc.is_dataclass(3), Point.y, hasattr(Point, 'tags'), p.tags is not q.tags]
        results += tries(
            lambda: Point(), lambda: Point(1, 2, [], 4), lambda: Point(1, x=2),
            lambda: Point(1, z=3), lambda: Point(y=1), lambda: dc.replace(3),
            lambda: dc.fields(3), lambda: dc.asdict(Point), lambda: p < q,
        )
        return results
    same(scenario, 'dataclasses')


def test_dataclass_options():
    def scenario(dc):
        @dc.dataclass(frozen=True)
        class Frozen:
            a: int
            b: str = 'x'

        @dc.dataclass(order=True)
        class Version:
            major: int
            minor: int = 0
            note: str = dc.field(default='', compare=False)

        @dc.dataclass(unsafe_hash=True)
        class Hashed:
            a: int
            b: int = dc.field(default=0, hash=False)

        @dc.dataclass(eq=False)
        class NoEq:
            a: int

        @dc.dataclass(repr=False, init=False)
        class Bare:
            a: int = 1

        @dc.dataclass(kw_only=True)
        class Keywords:
            a: int
            b: int = 2

        @dc.dataclass
        class Mixed:
            a: int
            b: int = dc.field(kw_only=True)
            c: int = 3

        @dc.dataclass
        class Sentinel:
            a: int
            _: dc.KW_ONLY
            b: int = 0
            c: int

        f = Frozen(1)
        results = [repr(f), hash(f) == hash((1, 'x')), f == Frozen(1, 'x'),
                   sorted([Version(2), Version(1, 5), Version(1)]), Version(1) < Version(1, 1),
                   Version(1, note='a') == Version(1, note='b'), Version(1) <= Version(1),
                   hash(Hashed(1, 5)) == hash((1,)), NoEq(1) == NoEq(1), repr(NoEq(1))[-1],
                   Bare().a, repr(Keywords(a=1)), Keywords.__match_args__, repr(Mixed(1, b=2)),
                   Mixed.__match_args__, repr(Sentinel(1, c=2)), Sentinel.__match_args__,
                   [f.kw_only for f in dc.fields(Sentinel)]]
        results += tries(
            lambda: setattr(f, 'a', 2), lambda: delattr(f, 'a'), lambda: Keywords(1),
            lambda: Keywords(), lambda: Mixed(1, 2, b=3), lambda: Mixed(1), lambda: Version(1) < 3,
            lambda: Sentinel(1, 2), lambda: dc.replace(f, a=5),
        )
        return [repr(r) for r in results]
    same(scenario, 'dataclasses')


def test_dataclass_inheritance_and_hooks():
    def scenario(dc):
        log = []

        @dc.dataclass
        class Base:
            x: int
            y: int = 0

            def __post_init__(self):
                log.append(('post', self.x, self.y))

        @dc.dataclass
        class Child(Base):
            z: int = 5
            x: int = 1

        @dc.dataclass
        class WithInitFalse:
            a: int
            b: list = dc.field(default_factory=list, init=False)
            c: int = dc.field(default=7, init=False)
            total: int = dc.field(init=False)

            def __post_init__(self):
                self.total = self.a + self.c

        @dc.dataclass
        class Custom:
            a: int

            def __repr__(self):
                return 'custom'

            def __eq__(self, other):
                return True

        @dc.dataclass
        class WithClassVar:
            a: int
            count: dc_typing(dc).ClassVar[int] = 0

        c = Child(2, 3)
        w = WithInitFalse(1)
        results = [repr(c), [f.name for f in dc.fields(Child)], log, repr(w), w.b, w.total,
                   repr(Custom(1)), Custom(1) == Custom(2), Custom.__hash__,
                   [f.name for f in dc.fields(WithClassVar)], WithClassVar.count,
                   repr(WithClassVar(1)), dc.replace(w, a=2).total,
                   dc.fields(Child)[0].default, dc.fields(Base)[1].default,
                   type(dc.fields(Base)[0].default).__name__]

        def mutable_default():
            @dc.dataclass
            class Bad:
                items: list = []
            return Bad

        def non_default_after_default():
            @dc.dataclass
            class Bad:
                a: int = 0
                b: int
            return Bad

        def frozen_from_plain():
            @dc.dataclass(frozen=True)
            class Bad(Base):
                q: int = 0
            return Bad

        def plain_from_frozen():
            @dc.dataclass(frozen=True)
            class F:
                a: int

            @dc.dataclass
            class Bad(F):
                b: int = 0
            return Bad

        def both_defaults():
            return dc.field(default=1, default_factory=list)

        def order_without_eq():
            @dc.dataclass(order=True, eq=False)
            class Bad:
                a: int
            return Bad

        def order_overwrite():
            @dc.dataclass(order=True)
            class Bad:
                a: int

                def __lt__(self, other):
                    return True
            return Bad

        def unsafe_hash_explicit():
            @dc.dataclass(unsafe_hash=True)
            class Bad:
                a: int

                def __hash__(self):
                    return 1
            return Bad

        def field_without_annotation():
            @dc.dataclass
            class Bad:
                a = dc.field(default=1)
            return Bad

        def replace_init_false():
            return dc.replace(w, b=[])

        def classvar_factory():
            @dc.dataclass
            class Bad:
                a: dc_typing(dc).ClassVar[list] = dc.field(default_factory=list)
            return Bad

        results += tries(mutable_default, non_default_after_default, frozen_from_plain,
                         plain_from_frozen, both_defaults, order_without_eq, order_overwrite,
                         unsafe_hash_explicit, field_without_annotation, replace_init_false,
                         classvar_factory)
        return results
    same(scenario, 'dataclasses')


def dc_typing(dc):
    """The typing module a dataclasses module recognises ClassVar from."""
    return PVM['typing'] if dc is PVM['dataclasses'] else c_typing


def test_dataclass_hash_table():
    def scenario(dc):
        results = []
        for unsafe_hash in (False, True):
            for eq in (False, True):
                for frozen in (False, True):
                    @dc.dataclass(unsafe_hash=unsafe_hash, eq=eq, frozen=frozen)
                    class C:
                        a: int = 1

                    if C.__hash__ is None:
                        results.append('none')
                    elif C.__hash__ is object.__hash__:
                        results.append('object')
                    else:
                        results.append(hash(C()) == hash((1,)))
        return results
    same(scenario, 'dataclasses')


def test_dataclass_documented_differences():
    dc = PVM['dataclasses']

    @dc.dataclass(frozen=True)
    class F:
        a: int

    class Sub(F):
        pass

    with pytest.raises(dc.FrozenInstanceError):
        Sub(1).extra = 2                  # CPython allows non-field attributes here
    field = dc.fields(F)[0]
    with pytest.raises(AttributeError):
        field.name = 'b'                  # Field objects are read-only in the VM
    with pytest.raises(TypeError):
        dc.dataclass(weakref_slot=True)(F)  # slots=True works (#30); weakref slots do not
    assert F._pvm_immutable is True


# ---- enum ---------------------------------------------------------------

def test_enum_basics():
    def scenario(en):
        class Color(en.Enum):
            RED = 1
            GREEN = 2
            BLUE = 3
            CRIMSON = 1

            def describe(self):
                return f'{self.name}={self.value}'

            @property
            def is_red(self):
                return self is Color.RED

            @classmethod
            def default(cls):
                return cls.GREEN

        results = [
            repr(Color.RED), str(Color.RED), f'{Color.RED}', format(Color.RED, '>12'),
            Color.RED.name, Color.RED.value, Color(1) is Color.RED, Color['GREEN'] is Color.GREEN,
            Color(Color.BLUE) is Color.BLUE, [m.name for m in Color], len(Color),
            [m.name for m in reversed(Color)], Color.CRIMSON is Color.RED,
            list(Color.__members__), Color.RED in Color, Color.RED.describe(), Color.RED.is_red,
            Color.default() is Color.GREEN, repr(Color), Color.RED == Color.RED,
            Color.RED != Color.GREEN, Color.RED == 1, hash(Color.RED) == hash('RED'),
            {Color.RED: 'r'}[Color.CRIMSON], isinstance(Color.RED, Color), type(Color.RED) is Color,
            isinstance(Color, en.EnumMeta), bool(Color.RED), Color.RED.__class__.__name__,
        ]
        results += tries(
            lambda: Color(4), lambda: Color('RED'), lambda: Color['PURPLE'],
            lambda: setattr(Color, 'RED', 5), lambda: delattr(Color, 'RED'),
            lambda: Color.RED < Color.GREEN, lambda: Color([1]),
        )

        def extend():
            class More(Color):
                PURPLE = 4
            return More
        results += tries(extend)
        return results
    same(scenario, 'enum')


def test_enum_auto_unique_and_mixins():
    def scenario(en):
        class Auto(en.Enum):
            A = en.auto()
            B = en.auto()
            C = 10
            D = en.auto()

        class Planet(en.Enum):
            MERCURY = (3, 24)
            EARTH = (6, 64)

            def __init__(self, mass, radius):
                self.mass = mass
                self.radius = radius

            @property
            def gravity(self):
                return self.mass * 1000 // (self.radius * self.radius)

        class Num(en.IntEnum):
            ONE = 1
            TWO = 2

        class Shade(str, en.Enum):
            DARK = 'dark'
            LIGHT = 'light'

        class Level(int, en.Enum):
            LOW = 1
            HIGH = 2

        class Mode(en.StrEnum):
            READ = en.auto()
            WRITE = 'w'

        class Base(en.Enum):
            def shout(self):
                return self.name.upper() + '!'

        class Animal(Base):
            cat = 1
            dog = 2

        results = [
            [(m.name, m.value) for m in Auto], Planet.EARTH.mass, Planet.EARTH.value,
            Planet.MERCURY.gravity, repr(Planet.EARTH),
            repr(Num.ONE), str(Num.ONE), f'{Num.TWO}', format(Num.TWO, '03d'), Num.ONE + 1,
            Num.TWO * 3, Num.ONE == 1, Num(2) is Num.TWO, Num.ONE < Num.TWO, sorted([Num.TWO, Num.ONE]),
            isinstance(Num.ONE, int), hash(Num.ONE) == hash(1), {1: 'x'}[Num.ONE], int(Num.TWO),
            repr(Shade.DARK), str(Shade.DARK), Shade.DARK == 'dark', Shade('light') is Shade.LIGHT,
            Shade.DARK.upper(), f'{Shade.DARK}', repr(Level.LOW), str(Level.LOW), f'{Level.HIGH}',
            Level.LOW + 1, repr(Mode.READ), str(Mode.READ), Mode.WRITE == 'w', f'{Mode.READ}',
            Animal.cat.shout(), repr(Animal(2)), [m.name for m in Animal],
        ]
        results += tries(lambda: Num(3), lambda: Base(1), lambda: Num('1'))

        def not_unique():
            @en.unique
            class Dup(en.Enum):
                A = 1
                B = 2
                C = 1
                D = 2
            return Dup

        def unique_ok():
            @en.unique
            class Fine(en.Enum):
                A = 1
                B = 2
            return repr(Fine.B)

        def strenum_int():
            class Bad(en.StrEnum):
                A = 1
            return Bad
        results += tries(not_unique, unique_ok, strenum_int)
        return results
    same(scenario, 'enum')


def test_flags():
    def scenario(en):
        class Perm(en.Flag):
            R = 4
            W = 2
            X = 1
            RWX = 7
            NONE = 0

        class Color(en.Flag):
            RED = en.auto()
            GREEN = en.auto()
            BLUE = en.auto()

        class IPerm(en.IntFlag):
            R = 4
            W = 2
            X = 1

        rw = Perm.R | Perm.W
        results = [
            repr(rw), str(rw), rw.value, rw.name, Perm.R in rw, Perm.X in rw, repr(rw & Perm.W),
            repr(rw ^ Perm.R), repr(~Perm.R), repr(Perm.R | Perm.W | Perm.X), repr(Perm(0)),
            str(Perm(0)), repr(Perm(6)), rw == Perm(6), bool(Perm(0)), [m.name for m in Perm],
            len(Perm), [m.name for m in rw], len(rw), repr(Perm.NONE), repr(Perm.RWX),
            [(m.name, m.value) for m in Color], repr(Color.RED | Color.BLUE), repr(~Color.GREEN),
            repr(IPerm.R | IPerm.W), str(IPerm.R | IPerm.W), IPerm.R | 1, repr(IPerm.R | 1),
            repr(1 | IPerm.R), IPerm.R + 1, isinstance(IPerm.R | IPerm.W, IPerm), repr(~IPerm.R),
            repr(IPerm(6)), IPerm(6) == 6, repr(IPerm(9)), repr(IPerm(-1)), repr(IPerm(8)), repr(~IPerm(0)), repr(IPerm.R & IPerm.W), hash(rw) == hash(Perm(6)),
        ]
        results += tries(lambda: Perm.R | 1, lambda: 1 in rw, lambda: Perm('x'))
        return results
    same(scenario, 'enum')


def test_flag_definition_order():
    def scenario(en):
        class Odd(en.Flag):
            B = 2
            A = 1
            C = 4
        return [repr(Odd.A | Odd.B | Odd.C), [m.name for m in Odd(7)], [m.name for m in Odd]]
    same(scenario, 'enum')


def test_enum_documented_differences():
    en = PVM['enum']

    class Color(en.Enum):
        RED = 1

        def __init__(self, value):
            self.label = 'red'               # allowed while the class is being made

    with pytest.raises(AttributeError):
        Color.RED.extra = 1                  # CPython allows new attributes on members
    with pytest.raises(AttributeError):
        del Color.RED.label
    assert Color.RED.label == 'red'
    # 3.12 containment: values of members are "in" the enum
    assert 1 in Color and 2 not in Color and [1] not in Color

    class Perm(en.Flag):
        R = 4
        W = 2
    with pytest.raises(ValueError, match='is not a valid'):
        Perm(8)                              # CPython's STRICT message lists the bits
    assert (Perm.R | Perm.W) == (Perm.R | Perm.W)
    assert (Perm.R | Perm.W) is not (Perm.R | Perm.W)   # combinations are not cached
    assert Color._pvm_immutable is True

    class Num(en.IntEnum):
        ONE = 1
    for target in (Num.ONE, Perm.R | Perm.W, Color.RED):
        with pytest.raises(AttributeError):
            target.extra = 1
        with pytest.raises(AttributeError):
            target.name = 'other'


# ---- collections --------------------------------------------------------

def test_deque():
    def scenario(co):
        d = co.deque([1, 2, 3])
        d.append(4)
        d.appendleft(0)
        results = [repr(d), len(d), d[0], d[-1], list(d), d.pop(), d.popleft(), repr(d)]
        d.extend([7, 8])
        d.extendleft([9, 10])
        results += [repr(d), 7 in d, 99 in d, d.count(7), d.index(7), list(reversed(d))]
        d.rotate(2)
        results.append(repr(d))
        d.rotate(-3)
        results.append(repr(d))
        d[1] = 'x'
        del d[0]
        d.remove(8)
        d.insert(1, 'ins')
        d.reverse()
        results += [repr(d), d == co.deque(list(d)), d != co.deque(), d == list(d),
                    co.deque([1, 2]) < co.deque([1, 3]), repr(d.copy()), bool(co.deque())]
        bounded = co.deque(range(5), maxlen=3)
        results.append(repr(bounded))
        bounded.append(9)
        bounded.appendleft(-1)
        results += [repr(bounded), bounded.maxlen, repr(co.deque(maxlen=0)),
                    repr(co.deque('ab') + co.deque('cd')), repr(co.deque('ab') * 3),
                    repr(co.deque('abc', maxlen=4) * 2)]
        zero = co.deque(maxlen=0)
        zero.append(1)
        results.append(repr(zero))
        d2 = co.deque([1, 2])
        d2 += [3]
        d2 *= 2
        results.append(repr(d2))
        d2.extend(d2)
        results.append(repr(d2))
        d2.clear()
        results.append(repr(d2))
        results += tries(
            lambda: co.deque().pop(), lambda: co.deque().popleft(), lambda: co.deque([1])[5],
            lambda: co.deque([1])[1:], lambda: co.deque([1]).remove(2),
            lambda: co.deque([1]).index(2), lambda: co.deque(maxlen=-1),
            lambda: co.deque([1], maxlen=1).insert(0, 2), lambda: co.deque([1]) + [2],
        )
        results.append(raises_type(lambda: hash(co.deque())))

        def mutate_while_iterating():
            d3 = co.deque([1, 2, 3])
            for x in d3:
                d3.append(x)
        results += tries(mutate_while_iterating)
        return results
    same(scenario, 'collections')


def test_deque_queue_workload_matches_list():
    co = PVM['collections']
    d = co.deque()
    model = []
    step = 0
    while step < 5000:
        op = (step * 7919) % 11
        if op < 4:
            d.append(step)
            model.append(step)
        elif op < 6:
            d.appendleft(step)
            model.insert(0, step)
        elif op < 9 and model:
            assert d.popleft() == model.pop(0)
        elif model:
            assert d.pop() == model.pop()
        step += 1
        if step % 97 == 0:
            assert list(d) == model and len(d) == len(model)
    # popleft never keeps more dead slots than the bound promises
    for i in range(10000):
        d.append(i)
    while len(d) > 5:
        d.popleft()
        assert d._head <= 2 * len(d) + 33


def test_defaultdict_ordereddict():
    def scenario(co):
        dd = co.defaultdict(list)
        dd['a'].append(1)
        dd['b']
        counts = co.defaultdict(int, {'x': 1})
        counts['x'] += 1
        counts['y'] += 1
        none = co.defaultdict()
        results = [repr(dd), dict(dd), repr(counts), dd.default_factory is list, 'c' in dd,
                   dd.get('c'), repr(dd.copy()), repr(dd | {'z': [0]}), repr({'z': [0]} | dd),
                   isinstance(dd, dict), repr(none)]
        results += tries(lambda: none['missing'], lambda: co.defaultdict(3))
        od = co.OrderedDict([('a', 1), ('b', 2), ('c', 3)])
        od.move_to_end('a')
        results.append(list(od))
        od.move_to_end('c', last=False)
        results.append(list(od.items()))
        results += [od.popitem(), od.popitem(last=False), list(od)]
        o1 = co.OrderedDict([('a', 1), ('b', 2)])
        o2 = co.OrderedDict([('b', 2), ('a', 1)])
        results += [o1 == o2, o1 == dict(o2), dict(o1) == o2, o1 != o2, list(reversed(o1)),
                    type(o1.copy()).__name__, list(o1 | {'c': 3}), list(co.OrderedDict.fromkeys('xy'))]
        results += tries(lambda: co.OrderedDict().popitem(), lambda: o1.move_to_end('zz'))
        results.append(raises_type(lambda: hash(o1)))
        return results
    same(scenario, 'collections')


def test_ordereddict_repr_is_312():
    co = PVM['collections']
    assert repr(co.OrderedDict()) == 'OrderedDict()'
    assert repr(co.OrderedDict([('a', 1), ('b', 2)])) == "OrderedDict({'a': 1, 'b': 2})"


def test_counter():
    def scenario(co):
        c = co.Counter('abracadabra')
        results = [repr(c), c['a'], c['z'], c.most_common(2), c.most_common(), c.most_common(0),
                   sorted(c.elements()), c.total(), repr(co.Counter()), 'z' in c]
        c.update('aaz')
        c.update({'b': 5})
        c.subtract({'a': 100})
        c.subtract('r')
        results += [repr(c), repr(+c), repr(-c)]
        x = co.Counter(a=3, b=1)
        y = co.Counter(a=1, b=2, c=1)
        results += [repr(x + y), repr(x - y), repr(x | y), repr(x & y), x == co.Counter(a=3, b=1),
                    co.Counter(a=1) == co.Counter(a=1, b=0), x != y, co.Counter(a=1) <= x,
                    x < x, x >= co.Counter(a=1), x > co.Counter(a=3, b=1)]
        del x['zzz']
        del x['b']
        results.append(repr(x))
        z = co.Counter(a=2, b=-1)
        z += co.Counter(b=3)
        results.append(repr(z))
        z -= co.Counter(a=5)
        results.append(repr(z))
        w = co.Counter(a=1, b=4)
        w |= co.Counter(a=3)
        w &= co.Counter(a=2, b=9)
        results += [repr(w), repr(co.Counter({'x': 2, 'y': 3}))]
        results += tries(lambda: co.Counter.fromkeys('ab'), lambda: x + 1)
        return results
    same(scenario, 'collections')


def test_namedtuple():
    def scenario(co):
        Point = co.namedtuple('Point', 'x, y')
        P3 = co.namedtuple('P3', ['x', 'y', 'z'], defaults=(0, 1))
        p = Point(1, y=2)
        q = P3(5)
        results = [repr(p), p.x, p[1], tuple(p), p == (1, 2), Point._fields, repr(q), q.z,
                   P3._field_defaults, p._asdict(), repr(p._replace(x=9)), repr(Point._make([3, 4])),
                   Point.__name__, Point.__match_args__, hash(p) == hash((1, 2)), isinstance(p, tuple),
                   p + (3,), Point.x.__doc__,
                   co.namedtuple('R', 'abc def _x abc', rename=True)._fields]
        results += tries(
            lambda: Point(1), lambda: Point(1, 2, 3), lambda: Point(1, x=1), lambda: Point(1, 2, z=3),
            lambda: Point(), lambda: P3(), lambda: P3(1, 2, 3, 4), lambda: p._replace(w=1),
            lambda: Point._make([1]), lambda: setattr(p, 'x', 5), lambda: setattr(p, 'w', 5),
            lambda: co.namedtuple('Bad', 'x x'), lambda: co.namedtuple('Bad', 'def'),
            lambda: co.namedtuple('Bad', '_x'), lambda: co.namedtuple('Bad', '1x'),
            lambda: co.namedtuple('2Bad', 'x'), lambda: co.namedtuple('Bad', 'x', defaults=(1, 2)),
        )
        return results
    same(scenario, 'collections')


# ---- functools ------------------------------------------------------------

def test_functools_basics():
    def scenario(ft):
        def add(a, b, c=0):
            return a + b + c

        p = ft.partial(add, 1, c=10)
        pp = ft.partial(p, 2)
        results = [ft.reduce(lambda a, b: a * b, [1, 2, 3, 4]), ft.reduce(add, [], 5),
                   ft.reduce(add, [1], 5), p(2), pp(), pp.args, pp.keywords, pp.func is add,
                   p(2, c=0), repr(ft.partial(len, [1]))]
        results += tries(lambda: ft.reduce(add, []), lambda: ft.partial(3),
                         lambda: setattr(p, 'func', len))

        def deco(fn):
            @ft.wraps(fn)
            def wrapper(*args, **kwargs):
                return fn(*args, **kwargs)
            return wrapper

        @deco
        def documented(x):
            """Doc string."""
            return x + 1

        results += [documented.__name__, documented.__doc__, documented(1),
                    documented.__wrapped__.__name__, documented.__qualname__.split('.')[-1]]

        @ft.total_ordering
        class Version:
            def __init__(self, n):
                self.n = n

            def __eq__(self, other):
                return self.n == other.n

            def __lt__(self, other):
                if not isinstance(other, Version):
                    return NotImplemented
                return self.n < other.n

        @ft.total_ordering
        class Ge:
            def __init__(self, n):
                self.n = n

            def __ge__(self, other):
                return self.n >= other.n

        v1, v2 = Version(1), Version(2)
        results += [v1 < v2, v1 <= v2, v1 > v2, v1 >= v2, v2 >= v2, Ge(1) < Ge(2), Ge(2) <= Ge(2),
                    Ge(3) > Ge(2)]
        results += tries(lambda: v1 > 3, lambda: ft.total_ordering(type('X', (), {})))
        key = ft.cmp_to_key(lambda a, b: (a % 10) - (b % 10))
        results += [sorted([13, 21, 9, 2], key=key), key(3) < key(14), key(3) == key(13)]
        return results
    same(scenario, 'functools')


def test_lru_cache():
    def scenario(ft):
        calls = []

        @ft.lru_cache(maxsize=2)
        def square(n):
            calls.append(n)
            return n * n

        results = [square(2), square(2), square(3), square(4), square(2), list(calls),
                   tuple(square.cache_info()), repr(square.cache_info()), square.cache_info().hits,
                   square.__name__, square.cache_parameters()]
        square.cache_clear()
        results.append(tuple(square.cache_info()))

        @ft.lru_cache
        def fib(n):
            return n if n < 2 else fib(n - 1) + fib(n - 2)

        @ft.cache
        def kw(a, b=1):
            calls.append((a, b))
            return a + b

        @ft.lru_cache(maxsize=0)
        def nothing(n):
            return n

        @ft.lru_cache(maxsize=None, typed=True)
        def typed(n):
            calls.append(('typed', n))
            return n

        results += [fib(60), tuple(fib.cache_info()), kw(1), kw(1), kw(1, b=1), kw(a=1), kw(2, 3),
                    nothing(1), nothing(1), tuple(nothing.cache_info()), typed(1), typed(True),
                    typed(1), list(calls)[-6:], tuple(kw.cache_info())]
        results += tries(lambda: ft.lru_cache('x'), lambda: square([1]))

        class Thing:
            def __init__(self):
                self.runs = 0

            @ft.cached_property
            def value(self):
                self.runs += 1
                return 42

        t = Thing()
        results += [t.value, t.value, t.runs]
        t.value = 7
        results += [t.value]
        del t.value
        results += [t.value, t.runs, Thing.value.__class__.__name__]
        return results
    same(scenario, 'functools')


def test_caches_are_dropped_when_the_epoch_changes(monkeypatch):
    ft = PVM['functools']
    epoch = [1]
    monkeypatch.setattr(ft, '_pvm_epoch', lambda: epoch[0])
    calls = []

    @ft.lru_cache(maxsize=None)
    def f(n):
        calls.append(n)
        return n

    class Thing:
        @ft.cached_property
        def value(self):
            calls.append('prop')
            return len(calls)

    thing = Thing()
    f(1)
    f(1)
    thing.value
    thing.value
    assert calls == [1, 'prop']
    assert tuple(f.cache_info()) == (1, 1, None, 1)
    epoch[0] = 2                      # a new top-level execution
    assert tuple(f.cache_info()) == (0, 0, None, 0)
    f(1)
    thing.value
    assert calls == [1, 'prop', 1, 'prop']
    thing.value = 'set'               # an assignment is not a cache: it stays
    epoch[0] = 3
    assert thing.value == 'set'


# ---- itertools ----------------------------------------------------------

def test_itertools():
    def scenario(it):
        take = lambda n, xs: list(it.islice(xs, n))  # noqa: E731
        results = [
            take(5, it.count()), take(4, it.count(10, -3)), take(7, it.cycle('abc')),
            list(it.repeat('x', 3)), list(it.repeat('x', -1)), take(2, it.repeat(0)),
            list(it.chain('ab', [1, 2], ())), list(it.chain.from_iterable(['ab', 'cd'])),
            list(it.chain()),
            list(it.islice('abcdefg', 2)), list(it.islice('abcdefg', 2, 4)),
            list(it.islice('abcdefg', 2, None)), list(it.islice('abcdefg', 0, None, 2)),
            list(it.islice('abcdefg', 1, 6, 3)), list(it.islice('ab', 5, 9)),
            list(it.accumulate([1, 2, 3, 4])), list(it.accumulate([1, 2, 3], initial=100)),
            list(it.accumulate([3, 1, 4, 1, 5], max)), list(it.accumulate([])),
            list(it.accumulate([], initial=1)),
            list(it.product('ab', range(2))), list(it.product(range(2), repeat=3)),
            list(it.product()), list(it.product('ab', [])),
            list(it.permutations('abc')), list(it.permutations(range(4), 2)),
            list(it.permutations('ab', 3)), list(it.permutations([], 0)),
            list(it.combinations('abcd', 2)), list(it.combinations(range(4), 0)),
            list(it.combinations('ab', 3)), list(it.combinations_with_replacement('abc', 2)),
            list(it.combinations_with_replacement('', 2)), list(it.combinations_with_replacement('', 0)),
            [(k, list(g)) for k, g in it.groupby('AAAABBBCCDAABBB')],
            [(k, list(g)) for k, g in it.groupby([1, 3, 2, 4, 5], key=lambda x: x % 2)],
            [k for k, g in it.groupby('aabbc')], list(it.groupby([])),
            list(it.zip_longest('abc', [1])), list(it.zip_longest('ab', 'xyz', fillvalue='-')),
            list(it.zip_longest()), list(it.takewhile(lambda x: x < 3, [1, 2, 3, 1])),
            list(it.dropwhile(lambda x: x < 3, [1, 2, 3, 1])),
            list(it.starmap(pow, [(2, 3), (3, 2)])), list(it.compress('abcdef', [1, 0, 1, 0, 1, 1])),
            list(it.compress('abc', [1])), list(it.filterfalse(lambda x: x % 2, range(6))),
            list(it.filterfalse(None, [0, 1, '', 'a'])), list(it.pairwise('abcd')),
            list(it.pairwise('a')),
        ]
        a, b = it.tee(iter([1, 2, 3]))
        results += [next(a), list(b), list(a), [list(t) for t in it.tee('xy', 3)], it.tee('x', 0)]
        groups = it.groupby('aaabbbcc')
        k1, g1 = next(groups)
        first = next(g1)
        k2, g2 = next(groups)
        results += [k1, first, list(g1), k2, list(g2), [k for k, _ in groups]]
        source = iter(range(10))
        results += [list(it.islice(source, 0, 6, 4)), next(source)]
        source = iter(range(10))
        results += [list(it.islice(source, 3)), next(source)]
        source = iter(range(10))
        results += [list(it.islice(source, 2, 1)), next(source)]
        results += tries(
            lambda: it.islice('a', -1), lambda: it.islice('a', 'x'), lambda: it.islice('a', -2, 3),
            lambda: it.islice('a', 0, 3, 0), lambda: it.islice('a'), lambda: it.product('a', repeat=-1),
            lambda: it.permutations('a', -1), lambda: it.combinations('a', -1), lambda: it.tee('a', -1),
            lambda: it.zip_longest(1), lambda: it.pairwise(1), lambda: it.cycle(1),
        )
        return results
    same(scenario, 'itertools')


def test_islice_and_combinatorics_exhaustively():
    mine, theirs = PVM['itertools'], c_itertools
    for start in (None, 0, 1, 3, 7):
        for stop in (None, 0, 2, 5, 9):
            for step in (None, 1, 2, 3):
                results = []
                for it in (mine, theirs):
                    source = iter(range(8))
                    taken = list(it.islice(source, start, stop, step))
                    results.append((taken, list(source)))
                assert results[0] == results[1], (start, stop, step)
    for n in range(5):
        pool = 'abcde'[:n]
        for r in range(n + 2):
            for name in ('permutations', 'combinations', 'combinations_with_replacement'):
                assert list(getattr(mine, name)(pool, r)) == list(getattr(theirs, name)(pool, r))
            assert list(mine.product(pool, repeat=r)) == list(theirs.product(pool, repeat=r))
        assert list(mine.permutations(pool)) == list(theirs.permutations(pool))
        keyed = [x // 2 for x in range(n * 3)]
        assert ([(k, list(g)) for k, g in mine.groupby(keyed)]
                == [(k, list(g)) for k, g in theirs.groupby(keyed)])


def test_bisect_exhaustively():
    mine = PVM['bisect']
    data = [0, 1, 1, 3, 3, 3, 6]
    for x in range(-1, 8):
        for lo in range(0, len(data) + 1):
            for hi in [None] + list(range(lo, len(data) + 1)):
                for name in ('bisect_left', 'bisect_right'):
                    assert (getattr(mine, name)(data, x, lo, hi)
                            == getattr(c_bisect, name)(data, x, lo, hi))
                    assert (getattr(mine, name)(data, 2 * x, lo, hi, key=lambda v: 2 * v)
                            == getattr(c_bisect, name)(data, 2 * x, lo, hi, key=lambda v: 2 * v))


def test_batched():
    it = PVM['itertools']
    assert list(it.batched('abcdefg', 3)) == [('a', 'b', 'c'), ('d', 'e', 'f'), ('g',)]
    assert list(it.batched('abcdef', 3)) == [('a', 'b', 'c'), ('d', 'e', 'f')]
    assert list(it.batched('', 2)) == []
    with pytest.raises(ValueError, match='n must be at least one'):
        it.batched('a', 0)


# ---- bisect, operator, string --------------------------------------------

def test_bisect():
    def scenario(bi):
        data = [1, 2, 2, 2, 5, 8]
        results = [bi.bisect_left(data, 2), bi.bisect_right(data, 2), bi.bisect(data, 2),
                   bi.bisect_left(data, 0), bi.bisect_right(data, 9), bi.bisect_left(data, 2, 2),
                   bi.bisect_right(data, 2, 0, 2), bi.bisect_left([], 1),
                   bi.bisect_left(data, 5, key=lambda x: x), ]
        records = [('a', 1), ('b', 3), ('c', 3), ('d', 7)]
        results += [bi.bisect_left(records, 3, key=lambda r: r[1]),
                    bi.bisect_right(records, 3, key=lambda r: r[1])]
        lst = []
        for x in [5, 1, 4, 1, 3]:
            bi.insort(lst, x)
        bi.insort_left(lst, 4)
        bi.insort_right(lst, 4)
        results.append(lst)
        keyed = []
        for r in [('x', 3), ('y', 1), ('z', 3)]:
            bi.insort(keyed, r, key=lambda r: r[1])
        bi.insort_left(keyed, ('w', 3), key=lambda r: r[1])
        results.append(keyed)
        results += tries(lambda: bi.bisect_left(data, 1, -1), lambda: bi.insort([], 1, -1))
        return results
    same(scenario, 'bisect')


def test_operator():
    def scenario(op):
        class Obj:
            def __init__(self):
                self.a = 1
                self.b = self

            def m(self, x, k=0):
                return x + k

        o = Obj()
        lst = [1, 2, 3]
        op.setitem(lst, 0, 9)
        op.delitem(lst, 1)
        results = [
            op.add(1, 2), op.sub(5, 3), op.mul(3, 4), op.floordiv(7, 2), op.mod(7, 3), op.pow(2, 10),
            op.neg(3), op.pos(-3), op.abs(-4), op.and_(6, 3), op.or_(6, 3), op.xor(6, 3),
            op.invert(5), op.inv(5), op.lshift(1, 4), op.rshift(16, 2), op.not_(0), op.truth([]),
            op.eq(1, 1), op.ne(1, 2), op.lt(1, 2), op.le(2, 2), op.gt(1, 2), op.ge(3, 2),
            op.is_(None, None), op.is_not(1, None), op.contains([1, 2], 2), op.getitem('abc', 1),
            lst, op.concat([1], [2]), op.countOf([1, 2, 1], 1), op.indexOf('abc', 'c'),
            op.index(7), op.truediv(7, 2) == 7 / 2, op.length_hint([1, 2]), op.length_hint(iter([1, 2])),
            op.length_hint(3, 9), op.call(len, 'abc'), op.iadd([1], [2]), op.iadd(1, 2),
            op.isub(5, 1), op.imul('a', 3), op.ior(1, 2), op.iconcat([1], (2,)),
            op.itemgetter(1)('abc'), op.itemgetter(0, 2)('abc'), op.itemgetter('k')({'k': 5}),
            repr(op.itemgetter(1, 'a')), op.attrgetter('a')(o), op.attrgetter('b.b.a', 'a')(o),
            repr(op.attrgetter('a', 'b.c')), op.methodcaller('m', 1, k=2)(o),
            op.methodcaller('upper')('abc'), repr(op.methodcaller('m', 1, k=2)),
            sorted([(1, 'b'), (0, 'c'), (1, 'a')], key=op.itemgetter(0)),
        ]
        results += tries(
            lambda: op.concat(1, 2), lambda: op.indexOf([1], 2), lambda: op.index(1.5),
            lambda: op.attrgetter('zz')(o), lambda: op.attrgetter(1), lambda: op.methodcaller(1),
            lambda: op.itemgetter(5)('a'),
        )
        return results
    same(scenario, 'operator')


def test_operator_refuses_private_names():
    op = PVM['operator']
    for name in ('_x', '__class__', 'a._b', 'a.__dict__'):
        with pytest.raises(AttributeError):
            op.attrgetter(name)
        with pytest.raises(AttributeError):
            op.attrgetter('ok', name)
    for name in ('_x', '__init__', '__class__'):
        with pytest.raises(AttributeError):
            op.methodcaller(name)
    getter = op.attrgetter('a')
    with pytest.raises(AttributeError):
        getter.x = 1


def test_string():
    for name in ('ascii_letters', 'ascii_lowercase', 'ascii_uppercase', 'digits', 'hexdigits',
                 'octdigits', 'punctuation', 'whitespace', 'printable'):
        assert getattr(PVM['string'], name) == getattr(c_string, name), name
    for args in (('hello  world',), (' a b ',), ('a-b-c', '-'), ('', None), ('x,y', ',')):
        assert PVM['string'].capwords(*args) == c_string.capwords(*args)


# ---- string.Template ---------------------------------------------------------

def test_template():
    def scenario(st):
        t = st.Template('$who likes ${what} for $$5; $who again')
        results = [t.template, t.substitute(who='tim', what='ham'),
                   t.substitute({'who': 'ann', 'what': 'eggs'}),
                   t.substitute({'who': 'ann', 'what': 'eggs'}, what='kw wins'),
                   t.safe_substitute(who='bob'), t.safe_substitute(), t.get_identifiers(),
                   t.is_valid(), st.Template('$a_1b$c.$_x ${y}z').substitute(a_1b=1, c=2, _x=3, y=4),
                   st.Template('').substitute(), st.Template('$$').substitute(),
                   st.Template('no placeholders').get_identifiers(),
                   st.Template('$a $b $a ${b} $c').get_identifiers(),
                   st.Template('$ bad ${}').safe_substitute(), st.Template('x${a').safe_substitute(a=1),
                   st.Template('${a b}').is_valid(), st.Template('$é $1').safe_substitute(),
                   st.Template.delimiter, st.Template.idpattern, st.Template.braceidpattern]

        class Percent(st.Template):
            delimiter = '%'

        class Lower(st.Template):
            flags = 0

        results += [Percent('%x $x %%').substitute(x=1), Percent('%{y}').get_identifiers(),
                    Lower('$Ab $ab').safe_substitute(ab=1, Ab=2), st.Template('$Ab').substitute(Ab=2)]
        results += tries(
            lambda: t.substitute(who='x'), lambda: st.Template('$').substitute(),
            lambda: st.Template('ok\n  $ 2').substitute(), lambda: st.Template('a\r\nb$1').substitute(),
            lambda: st.Template('${a').substitute(a=1), lambda: st.Template(5).substitute(),
            lambda: st.Template(b'$a').substitute(a=1), lambda: st.Template('$a').substitute({}, b=1),
            lambda: st.Template('$a').substitute([]),
        )
        return results
    same(scenario, 'string')


def test_template_against_cpython_on_random_strings():
    mine, theirs = PVM['string'].Template, c_string.Template
    rnd = random.Random(5)
    alphabet = ['$', '$', '{', '}', 'a', 'B', 'x', '_', '1', ' ', '\n', '\r\n', 'é', '%', 'A', '\u2028', '.']

    def kinds(base):
        return [base, type('P', (base,), {'delimiter': '%'}), type('W', (base,), {'delimiter': 'Ab'}),
                type('L', (base,), {'flags': 0}), type('D', (base,), {'delimiter': '$$'})]

    class Missing(dict):
        def __missing__(self, key):
            if key.startswith('x'):
                raise KeyError('custom ' + key)
            return '<' + key + '>'

    for _ in range(1500):
        text = ''.join([rnd.choice(alphabet) for _ in range(rnd.randrange(20))])
        mapping = {k: rnd.randrange(9) for k in ('a', 'B', 'x', '_', 'A', 'a1', 'x1') if rnd.random() < 0.5}
        kws = {k: 'k' + k for k in ('a', 'x', 'B') if rnd.random() < 0.3}
        for m_cls, c_cls in zip(kinds(mine), kinds(theirs)):
            m, c = m_cls(text), c_cls(text)
            assert outcome(m.get_identifiers) == outcome(c.get_identifiers), text
            assert outcome(m.is_valid) == outcome(c.is_valid), text
            for method in ('substitute', 'safe_substitute'):
                for args, kw in (((mapping,), {}), ((), mapping), ((mapping,), kws),
                                 ((Missing(mapping),), kws)):
                    assert (outcome(getattr(m, method), *args, **kw)
                            == outcome(getattr(c, method), *args, **kw)), (text, method, args, kw)


def test_template_documented_differences():
    st = PVM['string']
    for attrs in ({'idpattern': r'[a-z]+'}, {'braceidpattern': r'[a-z]+'}, {'pattern': 'x'}):
        custom = type('Custom', (st.Template,), attrs)
        with pytest.raises(NotImplementedError):
            custom('$a').substitute(a=1)
    with pytest.raises(ValueError, match='non-empty'):
        type('Empty', (st.Template,), {'delimiter': ''})('$a').substitute(a=1)
    assert not hasattr(st.Template, 'pattern')


# ---- collections.ChainMap ------------------------------------------------------

def test_chainmap():
    def scenario(co):
        defaults = {'port': 80, 'host': 'localhost', 'debug': False}
        env = {'port': 8080}
        cm = co.ChainMap({'debug': True}, env, defaults)
        results = [repr(cm), cm['port'], cm['debug'], cm.get('host'), cm.get('nope', 'd'),
                   'host' in cm, 'nope' in cm, len(cm), list(cm), list(cm.keys()), list(cm.items()),
                   list(cm.values()), repr(cm.keys()), repr(cm.items()), repr(cm.values()),
                   dict(cm), bool(cm), bool(co.ChainMap()), bool(co.ChainMap({}, {})),
                   repr(co.ChainMap()), cm == dict(cm), cm != dict(cm), cm == co.ChainMap(dict(cm)),
                   cm == 3, repr(cm.parents), repr(cm.new_child()), repr(cm.new_child({'a': 1}, b=2)),
                   repr(cm.new_child(x=1)), repr(co.ChainMap.fromkeys('ab', 0)),
                   repr(cm | {'port': 1}), repr({'port': 1, 'z': 0} | cm), 'port' in cm.keys(),
                   ('port', 8080) in cm.items(), ('port', 80) in cm.items(), 8080 in cm.values(),
                   sorted(cm.keys() & {'port', 'zz'}), sorted(cm.keys() | {'zz'}), sorted(cm.keys() - {'port'}),
                   sorted({'port', 'zz'} - cm.keys()), sorted(cm.keys() ^ {'port', 'zz'}),
                   cm.keys() == set(cm), cm.keys() <= set(cm) | {'zz'}, cm.keys() < set(cm),
                   cm.keys() == dict(cm).keys(), cm.items() == set(dict(cm).items()),
                   cm.keys().isdisjoint(['zz'])]
        cm['port'] = 1
        cm['new'] = 2
        results += [repr(cm), cm.maps[0], env, cm.pop('new'), cm.pop('gone', 'dflt'), cm.setdefault('s', 5),
                    cm.setdefault('host', 'x')]
        cm.update({'u': 1}, v=2)
        cm.update([('w', 3)])
        cm |= {'i': 4}
        results += [repr(cm), cm.popitem(), repr(cm.copy()), cm.copy().maps[1] is env]
        c2 = cm.copy()
        c2['copied'] = 1
        results += ['copied' in cm, repr(c2)]
        cm.clear()
        results += [repr(cm), dict(cm)]
        counts = co.ChainMap(co.defaultdict(int), {'a': 1})
        results += [counts['a'], counts['b'], repr(counts)]
        results += tries(
            lambda: cm['missing'], lambda: cm.__delitem__('host'), lambda: cm.pop('host'),
            lambda: co.ChainMap().popitem(), lambda: cm | 3, lambda: hash(cm), lambda: reversed(cm),
            lambda: hash(cm.keys()), lambda: cm.keys() < 3,
        )
        return results
    same(scenario, 'collections')


def test_chainmap_subclass_missing():
    def scenario(co):
        class Defaulting(co.ChainMap):
            def __missing__(self, key):
                return 'default ' + key

        d = Defaulting({'a': 1})
        return [d['a'], d['b'], d.get('b'), 'b' in d, repr(d.new_child()), type(d.parents).__name__]
    same(scenario, 'collections')


# ---- heapq ------------------------------------------------------------------

def test_heapq():
    def scenario(hq):
        heap = []
        for x in [5, 1, 8, 3, 9, 2, 7]:
            hq.heappush(heap, x)
        results = [list(heap), hq.heappop(heap), hq.heappop(heap), list(heap),
                   hq.heapreplace(heap, 0), list(heap), hq.heappushpop(heap, -1), hq.heappushpop(heap, 6),
                   list(heap)]
        data = [9, 4, 7, 1, 8, 2, 2, 6]
        hq.heapify(data)
        results.append(data)
        results += [hq.nsmallest(3, [5, 1, 4, 1, 9]), hq.nlargest(2, [5, 1, 4, 1, 9]),
                    hq.nsmallest(2, iter([3, 1, 2]), key=lambda v: -v), hq.nlargest(10, 'hello'),
                    hq.nsmallest(1, []), hq.nlargest(1, iter('zab')), hq.nsmallest(0, [1]),
                    hq.nlargest(-1, [1]), hq.nsmallest(2, [(1, 'b'), (1, 'a'), (0, 'c')], key=lambda r: r[0]),
                    list(hq.merge([1, 3, 5], [2, 4, 6], [0, 7])), list(hq.merge()),
                    list(hq.merge([5, 3], [4, 1], reverse=True)),
                    list(hq.merge(['dog', 'horse'], ['cat', 'fish', 'kangaroo'], key=len)),
                    list(hq.merge([(1, 'a'), (2, 'a')], [(1, 'b')], key=lambda r: r[0])),
                    list(hq.merge(iter([]), [1])), list(hq.merge([3, 1], [2], key=lambda v: -v, reverse=True))]
        tasks = []
        for priority, name in [(2, 'write'), (1, 'read'), (3, 'sync'), (1, 'again')]:
            hq.heappush(tasks, (priority, name))
        results.append([hq.heappop(tasks) for _ in range(len(tasks))])
        results += tries(
            lambda: hq.heappop([]), lambda: hq.heapreplace([], 1), lambda: hq.heappush((), 1),
            lambda: hq.heappop(None), lambda: hq.heapify('ab'), lambda: hq.heappushpop({}, 1),
            lambda: hq.heappush([1], 'a'), lambda: hq.nsmallest(2, [1, 'a', 2]),
        )
        return results
    same(scenario, 'heapq')


class _Compared:
    """Records the pairs a heap compares, in order."""

    def __init__(self, value, log):
        self.value = value
        self.log = log

    def __lt__(self, other):
        self.log.append((self.value, other.value))
        return self.value < other.value


def test_heapq_compares_what_cpython_compares():
    mine = PVM['heapq']
    rnd = random.Random(11)
    for trial in range(400):
        data = [rnd.randrange(-9, 9) for _ in range(rnd.randrange(30))]
        ops = [(rnd.randrange(5), rnd.randrange(-9, 9)) for _ in range(25)]
        runs = []
        for module in (mine, c_heapq):
            log = []
            heap = [_Compared(v, log) for v in data]
            module.heapify(heap)
            seen = []
            for op, value in ops:
                item = _Compared(value, log)
                if op == 0:
                    module.heappush(heap, item)
                elif op == 1:
                    seen.append(outcome(lambda: module.heappop(heap).value))
                elif op == 2:
                    seen.append(outcome(lambda: module.heapreplace(heap, item).value))
                elif op == 3:
                    seen.append(module.heappushpop(heap, item).value)
                else:
                    seen.append([x.value for x in heap])
            runs.append((log, seen, [x.value for x in heap]))
        assert runs[0] == runs[1], (data, ops)
        for n in (-1, 0, 1, 2, 5, len(data), len(data) + 3):
            for key in (None, lambda v: -v, lambda v: v % 4):
                for wrap in (list, iter):
                    assert (outcome(mine.nsmallest, n, wrap(data), key=key)
                            == outcome(c_heapq.nsmallest, n, wrap(data), key=key))
                    assert (outcome(mine.nlargest, n, wrap(data), key=key)
                            == outcome(c_heapq.nlargest, n, wrap(data), key=key))
        streams = [sorted([(rnd.randrange(6), j, i) for i in range(rnd.randrange(6))])
                   for j in range(rnd.randrange(5))]
        for reverse in (False, True):
            inputs = [sorted(s, reverse=reverse) for s in streams]
            assert (list(mine.merge(*inputs, reverse=reverse))
                    == list(c_heapq.merge(*inputs, reverse=reverse)))
            assert (list(mine.merge(*[iter(s) for s in inputs], key=lambda r: r[0], reverse=reverse))
                    == list(c_heapq.merge(*[iter(s) for s in inputs], key=lambda r: r[0], reverse=reverse)))


# ---- copy -------------------------------------------------------------------

def _shape(obj, originals):
    """An object graph as comparable data: types, values, which nodes are
    shared (``('ref', n)``) and which are the originals themselves."""
    seen = {}
    atoms = (type(None), bool, int, str, bytes, range, slice)

    def walk(o):
        if type(o) in atoms:
            return ('atom', repr(o))
        if isinstance(o, type) or type(o).__name__ in ('function', 'builtin_function_or_method'):
            return ('atom', o.__name__)
        if id(o) in seen:
            return ('ref', seen[id(o)])
        seen[id(o)] = len(seen)
        head = (type(o).__name__, originals.index(o) if any(o is x for x in originals) else -1)
        if isinstance(o, (list, tuple)) or type(o).__name__ == 'deque':
            items = [walk(x) for x in o]
        elif isinstance(o, dict):
            items = [(walk(k), walk(v)) for k, v in o.items()]
        elif isinstance(o, (set, frozenset)):
            items = sorted([repr(x) for x in o])
        elif isinstance(o, (bytearray, int, str)):
            items = repr(o)
        elif isinstance(o, BaseException):
            items = [walk(x) for x in o.args]
        elif type(o).__name__ == 'method':
            items = [o.__func__.__name__, walk(o.__self__)]
        else:
            items = []
        attrs = []
        if hasattr(o, '__dict__'):
            attrs = [(k, walk(v)) for k, v in sorted(vars(o).items())]
        for klass in type(o).__mro__:
            slots = klass.__dict__.get('__slots__', ())
            for name in ((slots,) if isinstance(slots, str) else slots):
                real = '_' + klass.__name__.lstrip('_') + name if name.startswith('__') else name
                if hasattr(o, real):
                    attrs.append((real, walk(getattr(o, real))))
        return head + (items, attrs)
    return walk(obj)


def _copy_objects(cp, dc):
    """Objects of every kind copy handles, sharing and cycles included (built
    afresh for each module: some classes call it back)."""
    class Plain:
        def __init__(self, a=None, b=None):
            self.a = a
            self.b = b

        def method(self):
            return self.a

    class Slotted:
        __slots__ = ('x', '__hidden', 'unset')

        def __init__(self, x=None):
            self.x = x
            self.__hidden = [x]

    class Both(Slotted):
        def __init__(self, x=None):
            super().__init__(x)
            self.extra = {'x': x}

    class Hooks:
        def __init__(self, v):
            self.v = v

        def __copy__(self):
            return Hooks(('shallow', self.v))

        def __deepcopy__(self, memo):
            return Hooks(('deep', cp.deepcopy(self.v, memo)))

    class State:
        def __init__(self, v):
            self.v = v
            self.cache = 'dropped'

        def __getstate__(self):
            return {'v': self.v}

        def __setstate__(self, state):
            self.__dict__.update(state)
            self.restored = True

    class Reduced:
        def __init__(self, v):
            self.v = v

        def __reduce__(self):
            return (Reduced, (self.v,), {'extra': [self.v]})

    class NewArgs:
        def __new__(cls, v):
            self = object.__new__(cls)
            self.v = v
            return self

        def __getnewargs__(self):
            return (self.v,)

    class MyList(list):
        pass

    class MyDict(dict):
        pass

    class MySet(set):
        pass

    class MyTuple(tuple):
        pass

    class MyError(ValueError):
        pass

    @dc.dataclass
    class Point:
        x: int
        tags: list

    @dc.dataclass(frozen=True)
    class Frozen:
        items: tuple

    shared = [1, [2]]
    cyclic = [0]
    cyclic.append(cyclic)
    d = {}
    through_tuple = (d, shared)
    d['t'] = through_tuple
    node = Plain()
    node.a = [node, shared]
    my_list = MyList([shared, 3])
    my_list.attr = shared
    my_dict = MyDict(k=shared)
    my_dict.attr = 'x'
    my_set = MySet({1, 2})
    my_set.attr = shared
    my_tuple = MyTuple((shared, 1))
    my_tuple.attr = 2
    error = MyError('bad', shared)
    error.note = shared
    return [
        None, 7, 'text', b'bytes', (1, 2), (1, [2]), (), frozenset({1, (2, 3)}), range(3), slice(1, 2),
        len, Plain, [shared, shared, (shared,)], {'a': shared, (1, 2): [shared]}, {1, 2}, bytearray(b'ab'),
        bytearray(), cyclic, through_tuple, node, Plain(shared, shared), Slotted(shared), Both(shared),
        Hooks(shared), State(shared), Reduced(shared), NewArgs(shared), my_list, my_dict, my_set, my_tuple,
        error, ValueError('v', shared), KeyError('k'), Point(1, shared), Frozen((shared,)),
        Plain(shared).method, [Plain(1).method, shared],
    ]


def test_copy():
    def scenario(cp):
        objects = _copy_objects(cp, c_dataclasses)
        results = []
        for x in objects:
            for fn in (cp.copy, cp.deepcopy):
                got = outcome(fn, x)
                results.append(('ok', _shape(got[1], objects)) if got[0] == 'ok' else got)
        memo = {}
        first = cp.deepcopy(objects[12], memo)        # [shared, shared, (shared,)]
        second = cp.deepcopy(objects[13], memo)       # shares `shared` with the first
        results.append(_shape([first, second], objects))
        results += tries(lambda: cp.copy(x for x in ()), lambda: cp.deepcopy(x for x in ()))
        results += [isinstance(cp.Error(), Exception), cp.error is cp.Error]
        return results
    same(scenario, 'copy')


def test_copy_of_library_objects():
    """The VM's own dataclasses, named tuples, enums and collections, copied
    by the VM's copy and by CPython's."""
    dc, co, en, t = PVM['dataclasses'], PVM['collections'], PVM['enum'], PVM['typing']

    @dc.dataclass
    class Record:
        name: str
        tags: list = dc.field(default_factory=list)

    @dc.dataclass(frozen=True)
    class Key:
        parts: tuple

    class Color(en.Enum):
        RED = 1

    class Level(en.IntEnum):
        LOW = 1

    Pair = co.namedtuple('Pair', 'a b')

    class Point(t.NamedTuple):
        x: list
        y: int = 0

    shared = ['s']
    objects = [Record('r', shared), Key((shared,)), Color.RED, Level.LOW, Pair(shared, shared),
               Point(shared), co.deque([shared, 1], maxlen=4), co.Counter('abca'),
               co.OrderedDict(a=shared), co.defaultdict(list, {'k': shared}),
               co.ChainMap({'a': shared}, {'b': 1}), [Color.RED, Color.RED]]
    for x in objects:
        for mine, theirs in ((PVM['copy'].copy, c_copy.copy), (PVM['copy'].deepcopy, c_copy.deepcopy)):
            a, b = mine(x), theirs(x)
            assert _shape(a, objects) == _shape(b, objects), (x, mine)
            assert repr(a) == repr(b) and type(a) is type(b)


def test_copy_random_graphs():
    """deepcopy keeps the sharing and cycles of random object graphs as CPython does."""
    mine = PVM['copy']
    rnd = random.Random(3)

    class Box:
        def __init__(self, *items):
            self.items = list(items)

    for _ in range(300):
        pool = []

        def build(depth):
            if pool and rnd.random() < 0.25:
                return rnd.choice(pool)
            if depth > 3 or rnd.random() < 0.25:
                return rnd.choice([1, 'a', None, (), (1, 2)])
            kind = rnd.randrange(5)
            if kind == 0:
                made = []
                pool.append(made)
                made.extend([build(depth + 1) for _ in range(rnd.randrange(3))])
            elif kind == 1:
                made = {}
                pool.append(made)
                for key in ('a', 'b')[:rnd.randrange(3)]:
                    made[key] = build(depth + 1)
            elif kind == 2:
                made = tuple([build(depth + 1) for _ in range(rnd.randrange(3))])
                pool.append(made)
            elif kind == 3:
                made = Box()
                pool.append(made)
                made.items.append(build(depth + 1))
            else:
                made = [rnd.randrange(3)]
                pool.append(made)
            return made

        x = build(0)
        originals = list(pool)
        assert _shape(mine.deepcopy(x), originals) == _shape(c_copy.deepcopy(x), originals)
        assert _shape(mine.copy(x), originals) == _shape(c_copy.copy(x), originals)


def test_copy_documented_differences():
    cp, ft, op = PVM['copy'], PVM['functools'], PVM['operator']
    memo = {}
    cp.deepcopy([[1]], memo)
    assert list(memo) == [' pvm copies']                # the VM's identity table, not ids
    partial = ft.partial(len, [1])
    assert cp.copy(partial) is partial and cp.deepcopy(partial) is partial
    getter = op.itemgetter(1)
    assert type(cp.copy(getter)) is type(getter)         # operator's __reduce__ rebuilds it
    assert cp.deepcopy(list[int]) == list[int]


# ---- contextlib -------------------------------------------------------------

def _run_logged(fn):
    """fn(log)'s value or exception (with its __context__ chain) and its log."""
    log = []
    try:
        return ('ok', fn(log), log)
    except Exception as exc:  # noqa: BLE001
        chain = []
        while exc is not None and len(chain) < 8:
            chain.append((type(exc).__name__, str(exc),
                          type(exc.__cause__).__name__ if exc.__cause__ is not None else None))
            exc = exc.__context__
        return ('raise', chain, log)


def test_contextmanager():
    def scenario(cl):
        @cl.contextmanager
        def tag(log, name):
            """Wraps in a tag."""
            log.append('<' + name + '>')
            try:
                yield name.upper()
            except KeyError as exc:
                log.append('caught ' + repr(exc))
            finally:
                log.append('</' + name + '>')

        @cl.contextmanager
        def convert(log):
            try:
                yield
            except ValueError:
                raise TypeError('converted')

        @cl.contextmanager
        def no_yield(log):
            if log is None:
                yield

        @cl.contextmanager
        def two_yields(log):
            yield 1
            log.append('second')
            yield 2

        @cl.contextmanager
        def swallow_then_yield(log):
            try:
                yield
            except Exception:
                log.append('swallowed')
                yield

        @cl.contextmanager
        def plain(log):
            yield 'p'

        def nested(log):
            with tag(log, 'a') as a:
                with tag(log, 'b') as b:
                    log.append(a + b)
            return tag.__name__, tag.__doc__, tag(log, 'z').__doc__

        def caught(log):
            with tag(log, 'c'):
                raise KeyError('k')
            return 'after'

        def propagated(log):
            with tag(log, 'd'):
                raise ValueError('v')

        def converted(log):
            with convert(log):
                raise ValueError('v')

        def stop_in_body(log):
            with plain(log):
                raise StopIteration('stop')

        def stop_through_finally(log):
            with tag(log, 'e'):
                raise StopIteration('stop')

        def decorator(log):
            @tag(log, 'deco')
            def double(x):
                log.append(x)
                return 2 * x
            return double(1), double(2), double.__name__

        def reuse(log):
            manager = plain(log)
            with manager:
                pass
            with manager:
                pass

        def did_not_yield(log):
            with no_yield(log):
                log.append('unreached')

        def did_not_stop(log):
            with two_yields(log) as v:
                log.append(v)

        def did_not_stop_after_throw(log):
            with swallow_then_yield(log):
                raise ValueError('x')

        return [_run_logged(f) for f in (
            nested, caught, propagated, converted, did_not_yield, did_not_stop,
            did_not_stop_after_throw, stop_in_body, stop_through_finally, decorator, reuse,
        )]
    same(scenario, 'contextlib')


def test_suppress_nullcontext_closing():
    def scenario(cl):
        def suppressing(log):
            with cl.suppress(KeyError, IndexError):
                raise IndexError('i')
            with cl.suppress():
                pass
            with cl.suppress(Exception):
                raise ValueError('v')
            log.append('suppressed')
            with cl.suppress(KeyError):
                raise ValueError('not suppressed')

        def null_and_closing(log):
            with cl.nullcontext(5) as five:
                log.append(five)
            with cl.nullcontext() as nothing:
                log.append(nothing)

            class Resource:
                def close(self):
                    log.append('closed')

            with cl.closing(Resource()) as resource:
                log.append(type(resource).__name__)
            with cl.closing(Resource()):
                raise KeyError('x')

        def decorator_class(log):
            class Traced(cl.ContextDecorator):
                def __enter__(self):
                    log.append('in')
                    return self

                def __exit__(self, *exc):
                    log.append(('out', exc[0].__name__ if exc[0] else None))
                    return False

            @Traced()
            def work(fail):
                if fail:
                    raise ValueError('work')
                return 'done'
            log.append(work(False))
            work(True)

        def abstract(log):
            class Manager(cl.AbstractContextManager):
                def __exit__(self, *exc):
                    log.append('exit')
            with Manager() as manager:
                log.append(type(manager).__name__)

        return [_run_logged(f) for f in (suppressing, null_and_closing, decorator_class, abstract)]
    same(scenario, 'contextlib')


def test_exitstack():
    def scenario(cl):
        def manager(log, name, suppress=False, fail=None):
            class Manager:
                def __enter__(self):
                    log.append('enter ' + name)
                    return name

                def __exit__(self, typ, value, tb):
                    log.append(('exit', name, typ.__name__ if typ else None, str(value) if value else None))
                    if fail is not None:
                        raise fail
                    return suppress
            return Manager()

        def mixed(log):
            with cl.ExitStack() as stack:
                log.append(stack.enter_context(manager(log, 'a')))
                log.append(stack.enter_context(manager(log, 'b', suppress=True)))
                stack.callback(log.append, 'callback')
                stack.callback(lambda *a, **k: log.append(('cb', a, k)), 1, 2, k=3)

                def exit_fn(typ, value, tb):
                    log.append(('exit_fn', typ.__name__ if typ else None))
                    return False
                log.append(stack.push(exit_fn) is exit_fn)
                stack.push(manager(log, 'pushed'))
                raise ValueError('boom')
            log.append('suppressed by b')

        def failing_exits(log):
            with cl.ExitStack() as stack:
                stack.enter_context(manager(log, 'x', fail=KeyError('kx')))
                stack.enter_context(manager(log, 'y', fail=IndexError('iy')))
                stack.enter_context(manager(log, 'w'))
                raise ValueError('original')

        def failing_without_exception(log):
            def raiser(exc):
                def raise_it(*args):
                    raise exc
                return raise_it
            with cl.ExitStack() as stack:
                stack.push(raiser(KeyError('first')))
                stack.push(raiser(IndexError('second')))
                stack.push(lambda typ, value, tb: log.append(('saw', typ)))

        def pop_all_and_close(log):
            with cl.ExitStack() as stack:
                stack.callback(log.append, 1)
                stack.callback(log.append, 2)
                moved = stack.pop_all()
            log.append('not yet')
            moved.close()
            moved.close()
            try:
                cl.ExitStack().enter_context(object())
            except TypeError as exc:
                log.append(str(exc))
            with cl.ExitStack() as stack:
                stack.callback(log.append, 'last')
                stack.push(lambda typ, value, tb: True)
                raise KeyError('suppressed by push')
            closing = cl.ExitStack()
            closing.callback(log.append, 'closed')
            closing.close()
            return 'done'

        return [_run_logged(f) for f in (mixed, failing_exits, failing_without_exception, pop_all_and_close)]
    same(scenario, 'contextlib')
