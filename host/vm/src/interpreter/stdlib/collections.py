"""The actor-VM subset of CPython's ``collections``.

deque (a list plus a head index: appends and pops at both ends are
amortised O(1)), defaultdict, OrderedDict, Counter, ChainMap and namedtuple,
in plain Python with CPython's reprs and errors.  ChainMap's ``keys()``,
``items()`` and ``values()`` are views with ``collections.abc``'s reprs and
set operations (``KeysView(ChainMap({...}))``), and a mapping is anything
with ``keys``, ``items`` and ``__getitem__`` (CPython asks
``isinstance(x, collections.abc.Mapping)``).  Left out: UserDict,
UserList, UserString, the ``collections.abc`` module, namedtuple's
``module=`` guessing (the class's ``__module__`` is this module unless
``module=`` is given), recursive-repr guards and pickling support.
OrderedDict's ``move_to_end(last=False)`` and ``popitem(last=False)`` are
O(n) and O(1) amortised, and its repr is 3.12's ``OrderedDict({...})``.
"""


# ---- deque ----------------------------------------------------------------

class deque:
    """``deque(iterable=(), maxlen=None)``: a double-ended queue."""

    def __init__(self, iterable=(), maxlen=None):
        if maxlen is not None:
            if not isinstance(maxlen, int):
                raise TypeError('an integer is required')
            if maxlen < 0:
                raise ValueError('maxlen must be non-negative')
        self._data = []
        self._head = 0
        self._maxlen = maxlen
        self._state = 0
        self.extend(iterable)

    @property
    def maxlen(self):
        return self._maxlen

    def __len__(self):
        return len(self._data) - self._head

    def _full(self):
        return self._maxlen is not None and len(self) >= self._maxlen

    def append(self, x):
        self._state += 1
        if self._full():
            if self._maxlen == 0:
                return
            self._popleft()
        self._data.append(x)

    def appendleft(self, x):
        self._state += 1
        if self._full():
            if self._maxlen == 0:
                return
            self._pop()
        if self._head == 0:
            live = self._data
            pad = len(live) + 8
            self._data = [None] * pad + live
            self._head = pad
        self._head -= 1
        self._data[self._head] = x

    def _pop(self):
        data = self._data
        if len(data) == self._head:
            raise IndexError('pop from an empty deque')
        x = data.pop()
        if len(data) == self._head:
            self._data = []
            self._head = 0
        return x

    def _popleft(self):
        data = self._data
        head = self._head
        if len(data) == head:
            raise IndexError('pop from an empty deque')
        x = data[head]
        data[head] = None
        head += 1
        live = len(data) - head
        if live == 0:
            self._data = []
            self._head = 0
        elif head > 2 * live + 32:
            # dropping the dead front costs O(live) after >= live/3 operations
            del data[:head]
            self._head = 0
        else:
            self._head = head
        return x

    def pop(self):
        x = self._pop()
        self._state += 1
        return x

    def popleft(self):
        x = self._popleft()
        self._state += 1
        return x

    def extend(self, iterable):
        if iterable is self:
            iterable = list(iterable)
        for x in iterable:
            self.append(x)

    def extendleft(self, iterable):
        if iterable is self:
            iterable = list(iterable)
        for x in iterable:
            self.appendleft(x)

    def clear(self):
        self._data = []
        self._head = 0
        self._state += 1

    def _reset(self, items):
        self._data = items
        self._head = 0
        self._state += 1

    def rotate(self, n=1):
        size = len(self)
        if size <= 1:
            return
        n %= size
        if n:
            items = self._data[self._head:]
            self._reset(items[size - n:] + items[:size - n])

    def reverse(self):
        items = self._data[self._head:]
        items.reverse()
        self._reset(items)

    def _position(self, index):
        if isinstance(index, slice):
            raise TypeError("sequence index must be integer, not 'slice'")
        if not isinstance(index, int):
            method = getattr(type(index), '__index__', None)
            if method is None:
                raise TypeError(f"sequence index must be integer, not '{type(index).__name__}'")
            index = method(index)
        size = len(self)
        if index < 0:
            index += size
        if index < 0 or index >= size:
            raise IndexError('deque index out of range')
        return self._head + index

    def __getitem__(self, index):
        return self._data[self._position(index)]

    def __setitem__(self, index, value):
        self._data[self._position(index)] = value

    def __delitem__(self, index):
        position = self._position(index)
        del self._data[position]
        if len(self._data) == self._head:
            self._data = []
            self._head = 0
        self._state += 1

    def __iter__(self):
        state = self._state
        index = 0
        while index < len(self):
            if self._state != state:
                raise RuntimeError('deque mutated during iteration')
            yield self._data[self._head + index]
            index += 1
        if self._state != state:
            raise RuntimeError('deque mutated during iteration')

    def __reversed__(self):
        state = self._state
        index = len(self) - 1
        while index >= 0:
            if self._state != state:
                raise RuntimeError('deque mutated during iteration')
            yield self._data[self._head + index]
            index -= 1

    def __contains__(self, value):
        for x in self:
            if x is value or x == value:
                return True
        return False

    def count(self, value):
        n = 0
        for x in self:
            if x is value or x == value:
                n += 1
        return n

    def index(self, value, start=0, stop=None):
        size = len(self)
        if start < 0:
            start = max(start + size, 0)
        if stop is None:
            stop = size
        elif stop < 0:
            stop = max(stop + size, 0)
        state = self._state
        i = start
        while i < min(stop, size):
            x = self._data[self._head + i]
            if x is value or x == value:
                return i
            if self._state != state:
                raise RuntimeError('deque mutated during iteration')
            i += 1
        raise ValueError(f'{value!r} is not in deque')

    def insert(self, index, value):
        if self._full():
            raise IndexError('deque already at its maximum size')
        items = self._data[self._head:]
        items.insert(index, value)
        self._reset(items)

    def remove(self, value):
        i = 0
        for x in self:
            if x is value or x == value:
                del self[i]
                return
            i += 1
        raise ValueError(f'{value!r} is not in deque')

    def copy(self):
        if type(self) is deque:
            return deque(self, self._maxlen)
        if self._maxlen is None:
            return type(self)(self)
        return type(self)(self, self._maxlen)

    __copy__ = copy

    def __repr__(self):
        items = repr(list(self))
        if self._maxlen is None:
            return f'{type(self).__name__}({items})'
        return f'{type(self).__name__}({items}, maxlen={self._maxlen})'

    def _compare(self, other):
        if isinstance(other, deque):
            return list(other)
        return None

    def __eq__(self, other):
        items = self._compare(other)
        if items is None:
            return NotImplemented
        return list(self) == items

    def __ne__(self, other):
        items = self._compare(other)
        if items is None:
            return NotImplemented
        return list(self) != items

    def __lt__(self, other):
        items = self._compare(other)
        if items is None:
            return NotImplemented
        return list(self) < items

    def __le__(self, other):
        items = self._compare(other)
        if items is None:
            return NotImplemented
        return list(self) <= items

    def __gt__(self, other):
        items = self._compare(other)
        if items is None:
            return NotImplemented
        return list(self) > items

    def __ge__(self, other):
        items = self._compare(other)
        if items is None:
            return NotImplemented
        return list(self) >= items

    __hash__ = None

    def __add__(self, other):
        if not isinstance(other, deque):
            raise TypeError(f'can only concatenate deque (not "{type(other).__name__}") to deque')
        result = self.copy()
        result.extend(other)
        return result

    def __iadd__(self, other):
        self.extend(other)
        return self

    def __mul__(self, n):
        result = self.copy()
        result *= n
        return result

    __rmul__ = __mul__

    def __imul__(self, n):
        items = list(self)
        if n <= 0 or not items:
            self.clear()
            return self
        if self._maxlen is not None and len(items) * n > self._maxlen:
            # only the last maxlen items survive, as if appended one by one
            total = len(items) * n
            skip = total - self._maxlen
            result = []
            i = skip
            while i < total:
                result.append(items[i % len(items)])
                i += 1
            self._reset(result)
            return self
        self._reset(items * n)
        return self

    def __bool__(self):
        return len(self) > 0


# ---- dict subclasses ----------------------------------------------------

class defaultdict(dict):
    """``defaultdict(default_factory=None, ...)``: missing keys get ``default_factory()``."""

    def __init__(self, default_factory=None, /, *args, **kwargs):
        if default_factory is not None and not callable(default_factory):
            raise TypeError('first argument must be callable or None')
        dict.__init__(self, *args, **kwargs)
        self.default_factory = default_factory

    def __missing__(self, key):
        if self.default_factory is None:
            raise KeyError(key)
        value = self.default_factory()
        self[key] = value
        return value

    def __repr__(self):
        return f'{type(self).__name__}({self.default_factory!r}, {dict.__repr__(self)})'

    def copy(self):
        return type(self)(self.default_factory, self)

    __copy__ = copy

    def __or__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        result = self.copy()
        result.update(other)
        return result

    def __ror__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        result = type(self)(self.default_factory, other)
        result.update(self)
        return result


class OrderedDict(dict):
    """A dict that remembers insertion order and can reorder: ``move_to_end``."""

    def move_to_end(self, key, last=True):
        value = dict.pop(self, key)
        if last:
            dict.__setitem__(self, key, value)
            return
        rest = list(dict.items(self))
        dict.clear(self)
        dict.__setitem__(self, key, value)
        for k, v in rest:
            dict.__setitem__(self, k, v)

    def popitem(self, last=True):
        if not self:
            raise KeyError('dictionary is empty')
        if last:
            return dict.popitem(self)
        key = next(iter(self))
        return key, dict.pop(self, key)

    def __eq__(self, other):
        if isinstance(other, OrderedDict):
            return dict.__eq__(self, other) and list(self) == list(other)
        return dict.__eq__(self, other)

    def __ne__(self, other):
        result = self.__eq__(other)
        if result is NotImplemented:
            return result
        return not result

    __hash__ = None

    def __repr__(self):
        if not self:
            return f'{type(self).__name__}()'
        return f'{type(self).__name__}({dict.__repr__(self)})'

    def copy(self):
        return type(self)(self)

    __copy__ = copy

    def __or__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        result = type(self)(self)
        result.update(other)
        return result

    def __ror__(self, other):
        if not isinstance(other, dict):
            return NotImplemented
        result = type(self)(other)
        result.update(self)
        return result

    def __reversed__(self):
        return reversed(list(self))


def _is_mapping(obj):
    return isinstance(obj, dict) or (hasattr(obj, 'keys') and hasattr(obj, '__getitem__')
                                     and hasattr(obj, 'items'))


class Counter(dict):
    """Counts hashable items: ``Counter('abca')['a'] == 2``; missing keys count 0."""

    def __init__(self, iterable=None, /, **kwds):
        dict.__init__(self)
        self.update(iterable, **kwds)

    def __missing__(self, key):
        return 0

    def total(self):
        return sum(self.values())

    def most_common(self, n=None):
        items = sorted(self.items(), key=_count_of, reverse=True)
        if n is None:
            return items
        return items[:max(n, 0)]

    def elements(self):
        for elem, count in list(self.items()):
            for _ in range(count):
                yield elem

    @classmethod
    def fromkeys(cls, iterable, v=None):
        raise NotImplementedError(
            'Counter.fromkeys() is undefined.  Use Counter(iterable) instead.')

    def update(self, iterable=None, /, **kwds):
        if iterable is not None:
            if _is_mapping(iterable):
                if self:
                    for elem, count in iterable.items():
                        self[elem] = count + self.get(elem, 0)
                else:
                    dict.update(self, iterable)
            else:
                for elem in iterable:
                    self[elem] = self.get(elem, 0) + 1
        if kwds:
            self.update(kwds)

    def subtract(self, iterable=None, /, **kwds):
        if iterable is not None:
            if _is_mapping(iterable):
                for elem, count in iterable.items():
                    self[elem] = self.get(elem, 0) - count
            else:
                for elem in iterable:
                    self[elem] = self.get(elem, 0) - 1
        if kwds:
            self.subtract(kwds)

    def copy(self):
        return type(self)(self)

    __copy__ = copy

    def __delitem__(self, elem):
        if elem in self:
            dict.__delitem__(self, elem)

    def __repr__(self):
        if not self:
            return f'{type(self).__name__}()'
        try:
            d = dict(self.most_common())
        except TypeError:
            d = dict(self)
        return f'{type(self).__name__}({d!r})'

    def __eq__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        return self._all(other, _eq) and other._all(self, _eq)

    def __ne__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        return not self == other

    def _all(self, other, test):
        for elem in self:
            if not test(self[elem], other[elem]):
                return False
        return True

    def __le__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        return self._all(other, _le) and other._all(self, _le_rev)

    def __lt__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        return self <= other and self != other

    def __ge__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        return other <= self

    def __gt__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        return other < self

    __hash__ = None

    def __add__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        result = Counter()
        for elem, count in self.items():
            newcount = count + other[elem]
            if newcount > 0:
                result[elem] = newcount
        for elem, count in other.items():
            if elem not in self and count > 0:
                result[elem] = count
        return result

    def __sub__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        result = Counter()
        for elem, count in self.items():
            newcount = count - other[elem]
            if newcount > 0:
                result[elem] = newcount
        for elem, count in other.items():
            if elem not in self and count < 0:
                result[elem] = 0 - count
        return result

    def __or__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        result = Counter()
        for elem, count in self.items():
            other_count = other[elem]
            newcount = other_count if count < other_count else count
            if newcount > 0:
                result[elem] = newcount
        for elem, count in other.items():
            if elem not in self and count > 0:
                result[elem] = count
        return result

    def __and__(self, other):
        if not isinstance(other, Counter):
            return NotImplemented
        result = Counter()
        for elem, count in self.items():
            other_count = other[elem]
            newcount = count if count < other_count else other_count
            if newcount > 0:
                result[elem] = newcount
        return result

    def __pos__(self):
        result = Counter()
        for elem, count in self.items():
            if count > 0:
                result[elem] = count
        return result

    def __neg__(self):
        result = Counter()
        for elem, count in self.items():
            if count < 0:
                result[elem] = 0 - count
        return result

    def _keep_positive(self):
        for elem in [elem for elem, count in self.items() if not count > 0]:
            dict.__delitem__(self, elem)
        return self

    def __iadd__(self, other):
        for elem, count in other.items():
            self[elem] += count
        return self._keep_positive()

    def __isub__(self, other):
        for elem, count in other.items():
            self[elem] -= count
        return self._keep_positive()

    def __ior__(self, other):
        for elem, other_count in other.items():
            count = self[elem]
            if other_count > count:
                self[elem] = other_count
        return self._keep_positive()

    def __iand__(self, other):
        for elem, count in self.items():
            other_count = other[elem]
            if other_count < count:
                self[elem] = other_count
        return self._keep_positive()


def _count_of(item):
    return item[1]


def _eq(a, b):
    return a == b


def _le(a, b):
    return a <= b


def _le_rev(a, b):
    return b <= a


# ---- ChainMap -------------------------------------------------------------

def _is_set(obj):
    return (isinstance(obj, (set, frozenset, _SetView))
            or type(obj) is type({}.keys()) or type(obj) is type({}.items()))


class _MappingView:
    """What ``collections.abc``'s ``KeysView`` and friends give ChainMap."""

    def __init__(self, mapping):
        self._mapping = mapping

    def __len__(self):
        return len(self._mapping)

    def __repr__(self):
        return f'{type(self).__name__}({self._mapping!r})'


class _SetView(_MappingView):
    """The ``collections.abc.Set`` operations of keys and items views."""

    def __le__(self, other):
        if not _is_set(other):
            return NotImplemented
        if len(self) > len(other):
            return False
        for elem in self:
            if elem not in other:
                return False
        return True

    def __lt__(self, other):
        if not _is_set(other):
            return NotImplemented
        return len(self) < len(other) and self.__le__(other)

    def __ge__(self, other):
        if not _is_set(other):
            return NotImplemented
        if len(self) < len(other):
            return False
        for elem in other:
            if elem not in self:
                return False
        return True

    def __gt__(self, other):
        if not _is_set(other):
            return NotImplemented
        return len(self) > len(other) and self.__ge__(other)

    def __eq__(self, other):
        if not _is_set(other):
            return NotImplemented
        return len(self) == len(other) and self.__le__(other)

    __hash__ = None

    def __and__(self, other):
        if not hasattr(other, '__iter__'):
            return NotImplemented
        return set([value for value in other if value in self])

    __rand__ = __and__

    def isdisjoint(self, other):
        for value in other:
            if value in self:
                return False
        return True

    def __or__(self, other):
        if not hasattr(other, '__iter__'):
            return NotImplemented
        result = set(self)
        for value in other:
            result.add(value)
        return result

    __ror__ = __or__

    def __sub__(self, other):
        if not _is_set(other):
            if not hasattr(other, '__iter__'):
                return NotImplemented
            other = set(other)
        return set([value for value in self if value not in other])

    def __rsub__(self, other):
        if not _is_set(other):
            if not hasattr(other, '__iter__'):
                return NotImplemented
            other = set(other)
        return set([value for value in other if value not in self])

    def __xor__(self, other):
        if not _is_set(other):
            if not hasattr(other, '__iter__'):
                return NotImplemented
            other = set(other)
        return (self - other) | (other - self)

    __rxor__ = __xor__


def _make_views():
    # made in a function so that their names are collections.abc's
    class KeysView(_SetView):
        def __contains__(self, key):
            return key in self._mapping

        def __iter__(self):
            yield from self._mapping

    class ItemsView(_SetView):
        def __contains__(self, item):
            key, value = item
            try:
                v = self._mapping[key]
            except KeyError:
                return False
            return v is value or v == value

        def __iter__(self):
            for key in self._mapping:
                yield (key, self._mapping[key])

    class ValuesView(_MappingView):
        def __contains__(self, value):
            for key in self._mapping:
                v = self._mapping[key]
                if v is value or v == value:
                    return True
            return False

        def __iter__(self):
            for key in self._mapping:
                yield self._mapping[key]

    return KeysView, ItemsView, ValuesView


_KeysView, _ItemsView, _ValuesView = _make_views()


class ChainMap:
    """``ChainMap(*maps)``: one updateable view of several mappings.

    Lookups search ``maps`` in order; writes, updates and deletions change
    ``maps[0]`` only.
    """

    def __init__(self, *maps):
        self.maps = list(maps) or [{}]

    def __missing__(self, key):
        raise KeyError(key)

    def __getitem__(self, key):
        for mapping in self.maps:
            try:
                return mapping[key]         # not `key in mapping`: defaultdict
            except KeyError:
                pass
        return self.__missing__(key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __len__(self):
        return len(set().union(*self.maps))

    def __iter__(self):
        d = {}
        for mapping in reversed(self.maps):
            d.update(dict.fromkeys(mapping))
        return iter(d)

    def __contains__(self, key):
        for m in self.maps:
            if key in m:
                return True
        return False

    def __bool__(self):
        for m in self.maps:
            if m:
                return True
        return False

    def __repr__(self):
        return f'{type(self).__name__}({", ".join([repr(m) for m in self.maps])})'

    @classmethod
    def fromkeys(cls, iterable, *args):
        return cls(dict.fromkeys(iterable, *args))

    def copy(self):
        return type(self)(self.maps[0].copy(), *self.maps[1:])

    __copy__ = copy

    def new_child(self, m=None, **kwargs):
        if m is None:
            m = kwargs
        elif kwargs:
            m.update(kwargs)
        return type(self)(m, *self.maps)

    @property
    def parents(self):
        return type(self)(*self.maps[1:])

    def __setitem__(self, key, value):
        self.maps[0][key] = value

    def __delitem__(self, key):
        try:
            del self.maps[0][key]
        except KeyError:
            raise KeyError(f'Key not found in the first mapping: {key!r}')

    def popitem(self):
        try:
            return self.maps[0].popitem()
        except KeyError:
            raise KeyError('No keys found in the first mapping.')

    def pop(self, key, *args):
        try:
            return self.maps[0].pop(key, *args)
        except KeyError:
            raise KeyError(f'Key not found in the first mapping: {key!r}')

    def clear(self):
        self.maps[0].clear()

    def __ior__(self, other):
        self.maps[0].update(other)
        return self

    def __or__(self, other):
        if not _is_mapping(other):
            return NotImplemented
        m = self.copy()
        m.maps[0].update(other)
        return m

    def __ror__(self, other):
        if not _is_mapping(other):
            return NotImplemented
        m = dict(other)
        for child in reversed(self.maps):
            m.update(child)
        return type(self)(m)

    # the collections.abc.MutableMapping methods

    def keys(self):
        return _KeysView(self)

    def items(self):
        return _ItemsView(self)

    def values(self):
        return _ValuesView(self)

    def __eq__(self, other):
        if not _is_mapping(other):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    __hash__ = None
    __reversed__ = None

    def setdefault(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            self[key] = default
        return default

    def update(self, other=(), /, **kwds):
        if _is_mapping(other):
            for key in other:
                self[key] = other[key]
        elif hasattr(other, 'keys'):
            for key in other.keys():
                self[key] = other[key]
        else:
            for key, value in other:
                self[key] = value
        for key, value in kwds.items():
            self[key] = value


# ---- namedtuple -----------------------------------------------------------

_KEYWORDS = frozenset((
    'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break',
    'class', 'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for',
    'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or',
    'pass', 'raise', 'return', 'try', 'while', 'with', 'yield',
))


def _names_list(names):
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return quoted[0] + ' and ' + quoted[1]
    return ', '.join(quoted[:-1]) + ', and ' + quoted[-1]


class _Unset:
    pass


def _bind(qualname, names, ndefaults, args, kwargs):
    """Binds like CPython binds ``def __new__(_cls, *names)`` whose last
    ``ndefaults`` names have defaults; unset optional values are ``_Unset``."""
    count = len(names)
    values = [_Unset] * count
    for key in kwargs:
        index = 0
        while index < count and names[index] != key:
            index += 1
        if index == count:
            raise TypeError(f"{qualname}() got an unexpected keyword argument '{key}'")
        if index < len(args):
            raise TypeError(f"{qualname}() got multiple values for argument '{key}'")
        values[index] = kwargs[key]
    if len(args) > count:
        if ndefaults:
            sig = f'from {count + 1 - ndefaults} to {count + 1}'
        else:
            sig = str(count + 1)
        plural = 's' if ndefaults or count + 1 != 1 else ''
        raise TypeError(f'{qualname}() takes {sig} positional argument{plural} '
                        f'but {len(args) + 1} were given')
    index = 0
    for arg in args:
        values[index] = arg
        index += 1
    missing = [names[i] for i in range(count - ndefaults) if values[i] is _Unset]
    if missing:
        plural = 's' if len(missing) > 1 else ''
        raise TypeError(f'{qualname}() missing {len(missing)} required positional '
                        f'argument{plural}: {_names_list(missing)}')
    return values


class _ClassDict:
    """A class attribute reading as a fresh dict (``_field_defaults``)."""

    _pvm_immutable = True

    def __init__(self, items):
        _pvm_object_setattr(self, '_items', items)

    def __setattr__(self, name, value):
        raise AttributeError('read-only')

    def __get__(self, instance, owner=None):
        return dict(self._items)


def _field_property(index):
    def get(self):
        return self[index]
    return property(get, doc=f'Alias for field number {index}')


def namedtuple(typename, field_names, *, rename=False, defaults=None, module=None):
    """A tuple subclass with named fields: ``namedtuple('Point', 'x y')``."""
    if isinstance(field_names, str):
        field_names = field_names.replace(',', ' ').split()
    field_names = [str(name) for name in field_names]
    typename = str(typename)
    if rename:
        seen = []
        index = 0
        while index < len(field_names):
            name = field_names[index]
            if (not name.isidentifier() or name in _KEYWORDS
                    or name.startswith('_') or name in seen):
                field_names[index] = f'_{index}'
            seen.append(name)
            index += 1
    for name in [typename] + field_names:
        if not isinstance(name, str):
            raise TypeError('Type names and field names must be strings')
        if not name.isidentifier():
            raise ValueError(f'Type names and field names must be valid identifiers: {name!r}')
        if name in _KEYWORDS:
            raise ValueError(f'Type names and field names cannot be a keyword: {name!r}')
    seen = []
    for name in field_names:
        if name.startswith('_') and not rename:
            raise ValueError(f'Field names cannot start with an underscore: {name!r}')
        if name in seen:
            raise ValueError(f'Encountered duplicate field name: {name!r}')
        seen.append(name)
    names = tuple(field_names)
    count = len(names)
    if defaults is None:
        defaults = ()
    else:
        defaults = tuple(defaults)
        if len(defaults) > count:
            raise TypeError('Got more default values than field names')
    ndefaults = len(defaults)
    new_qualname = typename + '.__new__'

    class _NamedTuple(tuple):
        __slots__ = ()
        _pvm_immutable = True
        _fields = names
        _field_defaults = _ClassDict(tuple(zip(names[count - ndefaults:], defaults)))
        __match_args__ = names

        def __new__(cls, *args, **kwargs):
            values = _bind(new_qualname, names, ndefaults, args, kwargs)
            index = count - ndefaults
            while index < count:
                if values[index] is _Unset:
                    values[index] = defaults[index - count + ndefaults]
                index += 1
            return tuple.__new__(cls, values)

        @classmethod
        def _make(cls, iterable):
            result = tuple.__new__(cls, iterable)
            if len(result) != count:
                raise TypeError(f'Expected {count} arguments, got {len(result)}')
            return result

        def _replace(self, /, **kwargs):
            values = list(self)
            index = 0
            while index < count:
                if names[index] in kwargs:
                    values[index] = kwargs.pop(names[index])
                index += 1
            if kwargs:
                raise ValueError(f'Got unexpected field names: {list(kwargs)!r}')
            return self._make(values)

        def _asdict(self):
            return dict(zip(names, self))

        def __getnewargs__(self):
            return tuple(self)

        def __repr__(self):
            parts = [names[i] + '=' + repr(self[i]) for i in range(count)]
            return type(self).__name__ + '(' + ', '.join(parts) + ')'

        def __setattr__(self, name, value):
            if name in names:
                raise AttributeError(f"can't set attribute")
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

        def __delattr__(self, name):
            if name in names:
                raise AttributeError(f"can't delete attribute")
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    index = 0
    while index < count:
        setattr(_NamedTuple, names[index], _field_property(index))
        index += 1
    _NamedTuple.__name__ = typename
    _NamedTuple.__qualname__ = typename
    if module is not None:
        _NamedTuple.__module__ = module
    return _NamedTuple
