"""The actor-VM subset of CPython's ``operator``.

The operator functions, their in-place forms, ``itemgetter``, ``attrgetter``
and ``methodcaller``.  ``attrgetter`` and ``methodcaller`` refuse any name
(or dotted part) starting with ``_`` with AttributeError, when they are made,
so that actors cannot reach private or dunder attributes through them.
Left out: the ``__add__``-style dunder aliases.
"""

_abs = abs


def lt(a, b):
    return a < b


def le(a, b):
    return a <= b


def eq(a, b):
    return a == b


def ne(a, b):
    return a != b


def ge(a, b):
    return a >= b


def gt(a, b):
    return a > b


def not_(a):
    return not a


def truth(a):
    return True if a else False


def is_(a, b):
    return a is b


def is_not(a, b):
    return a is not b


def abs(a):
    return _abs(a)


def add(a, b):
    return a + b


def and_(a, b):
    return a & b


def floordiv(a, b):
    return a // b


def index(a):
    method = getattr(type(a), '__index__', None)
    if method is None:
        raise TypeError(f"'{type(a).__name__}' object cannot be interpreted as an integer")
    return method(a)


def inv(a):
    return ~a


invert = inv


def lshift(a, b):
    return a << b


def mod(a, b):
    return a % b


def mul(a, b):
    return a * b


def matmul(a, b):
    return a @ b


def neg(a):
    return -a


def or_(a, b):
    return a | b


def pos(a):
    return +a


def pow(a, b):
    return a ** b


def rshift(a, b):
    return a >> b


def sub(a, b):
    return a - b


def truediv(a, b):
    return a / b


def xor(a, b):
    return a ^ b


def concat(a, b):
    if not hasattr(a, '__getitem__'):
        raise TypeError(f"'{type(a).__name__}' object can't be concatenated")
    return a + b


def contains(a, b):
    return b in a


def countOf(a, b):
    count = 0
    for item in a:
        if item is b or item == b:
            count += 1
    return count


def delitem(a, b):
    del a[b]


def getitem(a, b):
    return a[b]


def indexOf(a, b):
    position = 0
    for item in a:
        if item is b or item == b:
            return position
        position += 1
    raise ValueError('sequence.index(x): x not in sequence')


def setitem(a, b, c):
    a[b] = c


def length_hint(obj, default=0):
    if not isinstance(default, int):
        raise TypeError(f"'{type(default).__name__}' object cannot be interpreted as an integer")
    try:
        return len(obj)
    except TypeError:
        pass
    try:
        hint = type(obj).__length_hint__
    except AttributeError:
        return default
    value = hint(obj)
    if value is NotImplemented:
        return default
    if not isinstance(value, int):
        raise TypeError(f'__length_hint__ must be integer, not {type(value).__name__}')
    if value < 0:
        raise ValueError('__length_hint__() should return >= 0')
    return value


def call(obj, /, *args, **kwargs):
    return obj(*args, **kwargs)


def iadd(a, b):
    a += b
    return a


def iand(a, b):
    a &= b
    return a


def iconcat(a, b):
    if not hasattr(a, '__getitem__'):
        raise TypeError(f"'{type(a).__name__}' object can't be concatenated")
    a += b
    return a


def ifloordiv(a, b):
    a //= b
    return a


def ilshift(a, b):
    a <<= b
    return a


def imod(a, b):
    a %= b
    return a


def imul(a, b):
    a *= b
    return a


def imatmul(a, b):
    a @= b
    return a


def ior(a, b):
    a |= b
    return a


def ipow(a, b):
    a **= b
    return a


def irshift(a, b):
    a >>= b
    return a


def isub(a, b):
    a -= b
    return a


def itruediv(a, b):
    a /= b
    return a


def ixor(a, b):
    a ^= b
    return a


def _public(name, what):
    if not isinstance(name, str):
        raise TypeError(f'{what} name must be a string')
    for part in name.split('.'):
        if part.startswith('_'):
            raise AttributeError(f'{what} cannot reach {part!r}: names starting with '
                                 "'_' are private in the actor VM")


class _Frozen:
    _pvm_immutable = True

    def __setattr__(self, name, value):
        raise AttributeError(f"'{type(self).__name__}' object is read-only")

    def __delattr__(self, name):
        raise AttributeError(f"'{type(self).__name__}' object is read-only")


class attrgetter(_Frozen):
    """``attrgetter('a', 'b.c')(obj)`` is ``(obj.a, obj.b.c)``."""

    def __init__(self, attr, *attrs):
        names = (attr,) + attrs
        for name in names:
            _public(name, 'attribute')
        _pvm_object_setattr(self, '_names', names)
        _pvm_object_setattr(self, '_paths', tuple([tuple(name.split('.')) for name in names]))

    def __call__(self, obj):
        if len(self._paths) == 1:
            return _resolve(obj, self._paths[0])
        return tuple([_resolve(obj, path) for path in self._paths])

    def __repr__(self):
        return 'operator.attrgetter(' + ', '.join([repr(n) for n in self._names]) + ')'

    def __reduce__(self):
        return type(self), self._names


def _resolve(obj, path):
    for part in path:
        obj = getattr(obj, part)
    return obj


class itemgetter(_Frozen):
    """``itemgetter(1, 'k')(obj)`` is ``(obj[1], obj['k'])``."""

    def __init__(self, item, *items):
        _pvm_object_setattr(self, '_items', (item,) + items)

    def __call__(self, obj):
        items = self._items
        if len(items) == 1:
            return obj[items[0]]
        return tuple([obj[item] for item in items])

    def __repr__(self):
        return 'operator.itemgetter(' + ', '.join([repr(i) for i in self._items]) + ')'

    def __reduce__(self):
        return type(self), self._items


class methodcaller(_Frozen):
    """``methodcaller('m', 1, k=2)(obj)`` is ``obj.m(1, k=2)``."""

    def __init__(self, name, /, *args, **kwargs):
        _public(name, 'method')
        _pvm_object_setattr(self, '_name', name)
        _pvm_object_setattr(self, '_args', args)
        _pvm_object_setattr(self, '_kwargs', tuple(kwargs.items()))

    def __call__(self, obj):
        return getattr(obj, self._name)(*self._args, **dict(self._kwargs))

    def __repr__(self):
        parts = [repr(self._name)]
        parts.extend([repr(arg) for arg in self._args])
        parts.extend([f'{key}={value!r}' for key, value in self._kwargs])
        return 'operator.methodcaller(' + ', '.join(parts) + ')'
