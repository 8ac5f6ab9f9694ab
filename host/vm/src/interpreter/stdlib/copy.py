"""The actor-VM subset of CPython's ``copy``: ``copy``, ``deepcopy`` and ``Error``.

The rules are CPython 3.11's.  Immutable builtins (None, ints, bools,
strings, bytes, ranges, functions, classes; for ``copy`` also tuples and
frozensets) are returned as they are; lists, dicts, sets and bytearrays
are copied by their own ``copy()``, or element by element by ``deepcopy``.
Instances: a class's ``__copy__``/``__deepcopy__(memo)`` first, then its
own ``__reduce_ex__(4)`` or ``__reduce__()`` (the reduce tuple is rebuilt as
``copy`` rebuilds it), else what ``object.__reduce_ex__(4)`` would give: a
new instance from ``cls.__new__(cls, *args)`` (``args`` from the class's
``__getnewargs_ex__``/``__getnewargs__``, or the value of an int, str,
bytes or tuple base), its state from the class's ``__getstate__`` or its
``__dict__`` and ``__slots__`` values, restored by the class's
``__setstate__`` or into its ``__dict__`` and slots, and the items of a list
or dict base appended or set.  Subclasses of set and frozenset, bytearray
and exceptions are rebuilt by calling their class with their items, bytes or
``args``, as their CPython ``__reduce__`` does.  Dataclass instances, named
tuples, enum members (returned as they are) and the collections types are
copied like that.  ``deepcopy`` keeps shared references and cycles through
``memo`` like CPython.

Differences: the VM has no ``id()``, so ``memo`` is a dict holding one
entry of the VM's own (an identity table under a private key), not
``{id(original): copy}``: pass it along to nested ``deepcopy`` calls from a
``__deepcopy__``, but do not read or write it (so a ``__deepcopy__`` cannot
enter its result before copying its contents, as CPython's recipe does with
``memo[id(self)]``: a cycle back to such an object is copied again, until
RecursionError).  An object already copied is found by comparing it
(``is``) with the objects copied before it that have the same type, size
and first item or attribute value (when that is an int, str, bytes, bool or
None): copying n objects alike in all of those costs up to n*n/2
comparisons.  The hooks (``__copy__``, ``__deepcopy__``, the reduce,
getstate/setstate and getnewargs methods) are looked up on the class
(CPython's ``deepcopy`` also finds ``__deepcopy__`` on the instance and
through ``__getattr__``).  Slot values are read with
``object.__getattribute__`` and written with ``object.__setattr__``
(CPython calls ``getattr``/``setattr``, so a class's own ``__getattr__``
or ``__setattr__`` would run).  Instances of the other library modules'
immutable classes without a reduce method (``functools.partial``, typing
objects, ``dataclasses.Field``…) are returned as they are, and so are type
aliases (``list[int]``, ``int | None``).  Builtin objects of other types
(generators, iterators, modules) raise TypeError ``cannot pickle '…'
object`` (CPython copies a few of those through their ``__reduce__``).
Left out: ``copyreg.dispatch_table``, protocol-5 reduce tuples (a sixth
``state_setter`` item), ``__all__``.
"""

_HEAPTYPE = 1 << 9

# Exact builtin types whose instances are their own copies.
_ATOMIC = frozenset((
    'NoneType', 'int', 'bool', 'float', 'complex', 'str', 'bytes', 'range', 'property',
    'function', 'builtin_function_or_method', 'ellipsis', 'NotImplementedType', 'type',
    'weakref', 'ReferenceType', 'GenericAlias', 'UnionType', 'Union', 'builtin_type',
))
_ATOMIC_COPY = _ATOMIC | frozenset(('tuple', 'frozenset', 'slice'))
_ATOMIC_DEEP = _ATOMIC | frozenset(('code',))

# The key of the VM's identity table in a deepcopy memo.
_MEMO = ' pvm copies'


class Error(Exception):
    pass


error = Error


class _Nil:
    pass


# ---- class lookups ------------------------------------------------------------

def _lookup(cls, name):
    """``name`` as a class in ``cls``'s MRO defines it, when that class is
    not a builtin type (the builtins' own ``__reduce__``, ``__getstate__``…
    are emulated below; the VM refuses to call them)."""
    for klass in cls.__mro__:
        namespace = klass.__dict__
        if name in namespace:
            if klass.__flags__ & _HEAPTYPE:
                return namespace[name]
            return None
    return None


def _solid_base(cls):
    for klass in cls.__mro__:
        if not klass.__flags__ & _HEAPTYPE:
            return klass
    return object


def _slot_names(cls):
    """copyreg._slotnames: the ``__slots__`` of ``cls`` and its bases, mangled."""
    names = []
    for klass in cls.__mro__:
        namespace = klass.__dict__
        if '__slots__' not in namespace:
            continue
        slots = namespace['__slots__']
        if isinstance(slots, str):
            slots = (slots,)
        for name in slots:
            if name == '__dict__' or name == '__weakref__':
                continue
            if name.startswith('__') and not name.endswith('__'):
                stripped = klass.__name__.lstrip('_')
                if stripped:
                    names.append('_' + stripped + name)
                else:
                    names.append(name)
            else:
                names.append(name)
    return names


def _instance_dict(x):
    try:
        return object.__getattribute__(x, '__dict__')
    except AttributeError:
        return None


def _library_immutable(cls, x):
    return (_lookup(cls, '_pvm_immutable') is True and not isinstance(x, tuple)
            and _lookup(cls, '__dataclass_fields__') is None)


# ---- reduce tuples ---------------------------------------------------------

def _newobj(cls, *args):
    return cls.__new__(cls, *args)


def _newobj_ex(cls, args, kwargs):
    return cls.__new__(cls, *args, **kwargs)


def _getstate(x, cls):
    """``object.__getstate__``: the instance dict (None when empty) and the
    slot values, or the class's own ``__getstate__()``."""
    if _lookup(cls, '__getstate__') is not None:
        return x.__getstate__()
    state = None
    d = _instance_dict(x)
    if d:
        state = d
    names = _slot_names(cls)
    if names:
        slots = {}
        for name in names:
            try:
                slots[name] = object.__getattribute__(x, name)
            except AttributeError:
                pass
        if slots:
            state = (state, slots)
    return state


def _reduce(x, cls):
    """The class's own ``__reduce_ex__(4)`` or ``__reduce__()`` (None: neither)."""
    if _lookup(cls, '__reduce_ex__') is not None:
        return x.__reduce_ex__(4)
    if _lookup(cls, '__reduce__') is not None:
        return x.__reduce__()
    return None


def _default_reduce(x, cls):
    """What CPython's builtin ``__reduce_ex__(4)`` gives for ``x``."""
    if isinstance(x, (set, frozenset)):
        return cls, (list(x),), _getstate(x, cls)
    if isinstance(x, bytearray):
        if len(x):
            return cls, (bytes(x),), _getstate(x, cls)
        return cls, (), _getstate(x, cls)
    if isinstance(x, BaseException):
        d = _instance_dict(x)
        if d is not None:
            return cls, x.args, d
        return cls, x.args
    heap = cls.__flags__ & _HEAPTYPE
    if not heap:
        if cls.__name__ == 'slice':
            return cls, (x.start, x.stop, x.step)
        raise TypeError(f"cannot pickle '{cls.__name__}' object")
    kwargs = None
    if _lookup(cls, '__getnewargs_ex__') is not None:
        args, kwargs = x.__getnewargs_ex__()
    elif _lookup(cls, '__getnewargs__') is not None:
        args = x.__getnewargs__()
    elif isinstance(x, tuple):
        args = (tuple.__getitem__(x, slice(None)),)
    elif isinstance(x, int):
        args = (int.__index__(x),)
    elif isinstance(x, str):
        args = (str.__str__(x),)
    elif isinstance(x, bytes):
        args = (bytes.__bytes__(x),)
    else:
        args = None
    is_list = isinstance(x, list)
    is_dict = isinstance(x, dict)
    if args is None:
        if not is_list and not is_dict and _solid_base(cls) is not object:
            raise TypeError(f"cannot pickle '{cls.__name__}' object")
        args = ()
    state = _getstate(x, cls)
    listitems = iter(x) if is_list else None
    dictitems = iter(x.items()) if is_dict else None
    if kwargs:
        return _newobj_ex, (cls, tuple(args), dict(kwargs)), state, listitems, dictitems
    return _newobj, (cls,) + tuple(args), state, listitems, dictitems


def _reconstruct(x, memo, func, args, state=None, listiter=None, dictiter=None, *, key=None):
    deep = memo is not None
    if deep and args:
        args = [deepcopy(arg, memo) for arg in args]
    y = func(*args)
    if deep:
        _remember(memo[_MEMO], key, x, y)
    if state is not None:
        if deep:
            state = deepcopy(state, memo)
        if _lookup(type(y), '__setstate__') is not None:
            y.__setstate__(state)
        else:
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            else:
                slotstate = None
            if state is not None:
                object.__getattribute__(y, '__dict__').update(state)
            if slotstate is not None:
                for name, value in slotstate.items():
                    _pvm_object_setattr(y, name, value)
    if listiter is not None:
        if deep:
            for item in listiter:
                item = deepcopy(item, memo)
                y.append(item)
        else:
            for item in listiter:
                y.append(item)
    if dictiter is not None:
        if deep:
            for k, value in dictiter:
                k = deepcopy(k, memo)
                value = deepcopy(value, memo)
                y[k] = value
        elif type(y).__setitem__ is dict.__setitem__:
            # One native merge (priced per entry) instead of a metered loop.
            dict.update(y, dictiter)
        else:
            for k, value in dictiter:
                y[k] = value
    return y


# ---- copy -------------------------------------------------------------------

def copy(x):
    """A shallow copy of ``x``."""
    cls = type(x)
    if not cls.__flags__ & _HEAPTYPE:
        name = cls.__name__
        if name in _ATOMIC_COPY:
            return x
        if name == 'list' or name == 'dict' or name == 'set' or name == 'bytearray':
            return x.copy()
        if name == 'method':
            return cls(x.__func__, x.__self__)
        if isinstance(x, type):
            return x
        return _reconstruct(x, None, *_default_reduce(x, cls))
    if isinstance(x, type):
        return x
    if _lookup(cls, '__copy__') is not None:
        return cls.__copy__(x)
    rv = _reduce(x, cls)
    if rv is None:
        if _library_immutable(cls, x):
            return x
        rv = _default_reduce(x, cls)
    if isinstance(rv, str):
        return x
    return _reconstruct(x, None, *rv)


# ---- deepcopy ---------------------------------------------------------------

def _probe(value):
    """``value`` when it can tell objects apart cheaply: an exact int, str,
    bytes or bool, or None."""
    kind = type(value)
    if kind is int or kind is str or kind is bytes or kind is bool:
        return value
    return None


def _key(x, cls, name):
    """The identity table's bucket for ``x``: its type's name, and for the
    builtin containers their size and first item (values for a dict), for
    instances their first attribute value, when those are plain values."""
    if name == 'list' or name == 'tuple':
        if x:
            return (name, len(x), _probe(x[0]))
        return (name, 0, None)
    if name == 'dict':
        for value in x.values():
            return (name, len(x), _probe(value))
        return (name, 0, None)
    if name == 'set' or name == 'frozenset':
        for value in x:
            return (name, len(x), _probe(value))
        return (name, 0, None)
    if name == 'bytearray':
        return (name, len(x), None)
    d = _instance_dict(x)
    if d:
        for value in d.values():
            return (name, -1, _probe(value))
    return (name, -1, None)


def _recall(table, x, key):
    bucket = table.get(key)
    if bucket is not None:
        originals = bucket[0]
        index = 0
        size = len(originals)
        while index < size:
            if originals[index] is x:
                return bucket[1][index]
            index += 1
    return _Nil


def _remember(table, key, x, y):
    bucket = table.get(key)
    if bucket is None:
        table[key] = ([x], [y])
    else:
        bucket[0].append(x)
        bucket[1].append(y)


def _deepcopy_list(x, memo, table, key):
    y = []
    _remember(table, key, x, y)
    for a in x:
        y.append(deepcopy(a, memo))
    return y


def _deepcopy_dict(x, memo, table, key):
    y = {}
    _remember(table, key, x, y)
    for k, value in x.items():
        y[deepcopy(k, memo)] = deepcopy(value, memo)
    return y


def _deepcopy_tuple(x, memo, table, key):
    y = [deepcopy(a, memo) for a in x]
    # a cycle through the tuple may have copied it meanwhile
    found = _recall(table, x, key)
    if found is not _Nil:
        return found
    index = 0
    for a in x:
        if a is not y[index]:
            y = tuple(y)
            _remember(table, key, x, y)
            return y
        index += 1
    return x


def deepcopy(x, memo=None):
    """A deep copy of ``x``; ``memo`` carries what one copy has copied."""
    cls = type(x)
    builtin = not cls.__flags__ & _HEAPTYPE
    name = cls.__name__
    if builtin:
        if name in _ATOMIC_DEEP:
            return x
    elif isinstance(x, type):
        return x
    if memo is None:
        memo = {}
    table = memo.get(_MEMO)
    if table is None:
        table = {}
        memo[_MEMO] = table
    key = _key(x, cls, name if builtin else '.' + name)
    y = _recall(table, x, key)
    if y is not _Nil:
        return y
    if builtin:
        if name == 'list':
            return _deepcopy_list(x, memo, table, key)
        if name == 'dict':
            return _deepcopy_dict(x, memo, table, key)
        if name == 'tuple':
            return _deepcopy_tuple(x, memo, table, key)
        if name == 'method':
            y = cls(x.__func__, deepcopy(x.__self__, memo))
        elif isinstance(x, type):
            return x
        else:
            return _reconstruct(x, memo, *_default_reduce(x, cls), key=key)
    elif _lookup(cls, '__deepcopy__') is not None:
        y = x.__deepcopy__(memo)
    else:
        rv = _reduce(x, cls)
        if rv is None:
            if _library_immutable(cls, x):
                return x
            rv = _default_reduce(x, cls)
        if isinstance(rv, str):
            return x
        return _reconstruct(x, memo, *rv, key=key)
    if y is not x:
        _remember(table, key, x, y)
    return y
