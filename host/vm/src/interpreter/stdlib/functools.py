"""The actor-VM subset of CPython's ``functools``.

Caches (``cache``, ``lru_cache``, ``cached_property``) never outlive one
execution: this module is loaded once per process and shared, so every cache
remembers the ``_pvm_epoch()`` it was filled in (a builtin the VM puts in
this module's globals, changing at every top-level execution) and starts
empty when it differs — a warm node pays what a cold one pays.  Cache keys
must be hashable in the VM (objects hashed by address are not).  Left out:
``singledispatch``, ``partialmethod``, ``typed=True`` keys distinguishing
types by anything but their name, and ``partial`` objects accepting new
attributes.
"""

WRAPPER_ASSIGNMENTS = ('__module__', '__name__', '__qualname__', '__doc__',
                       '__annotate__', '__type_params__')
WRAPPER_UPDATES = ('__dict__',)


def _read(obj, attr):
    # plain attribute syntax: the VM's getattr() refuses dunder names
    if attr == '__module__':
        return obj.__module__
    if attr == '__name__':
        return obj.__name__
    if attr == '__qualname__':
        return obj.__qualname__
    if attr == '__doc__':
        return obj.__doc__
    if attr == '__annotate__':
        return obj.__annotate__
    if attr == '__type_params__':
        return obj.__type_params__
    if attr == '__dict__':
        return obj.__dict__
    return getattr(obj, attr)


def _write(obj, attr, value):
    if attr == '__module__':
        obj.__module__ = value
    elif attr == '__name__':
        obj.__name__ = value
    elif attr == '__qualname__':
        obj.__qualname__ = value
    elif attr == '__doc__':
        obj.__doc__ = value
    elif attr == '__annotate__':
        obj.__annotate__ = value
    elif attr == '__type_params__':
        obj.__type_params__ = value
    else:
        setattr(obj, attr, value)


def update_wrapper(wrapper, wrapped, assigned=WRAPPER_ASSIGNMENTS, updated=WRAPPER_UPDATES):
    for attr in assigned:
        try:
            value = _read(wrapped, attr)
        except AttributeError:
            continue
        _write(wrapper, attr, value)
    for attr in updated:
        try:
            extra = _read(wrapped, attr)
        except AttributeError:
            extra = {}
        _read(wrapper, attr).update(extra)
    wrapper.__wrapped__ = wrapped
    return wrapper


def wraps(wrapped, assigned=WRAPPER_ASSIGNMENTS, updated=WRAPPER_UPDATES):
    return partial(update_wrapper, wrapped=wrapped, assigned=assigned, updated=updated)


def reduce(function, sequence, *initial):
    if len(initial) > 1:
        raise TypeError(f'reduce expected at most 3 arguments, got {len(initial) + 2}')
    it = iter(sequence)
    if initial:
        value = initial[0]
    else:
        try:
            value = next(it)
        except StopIteration:
            raise TypeError('reduce() of empty iterable with no initial value') from None
    for element in it:
        value = function(value, element)
    return value


class partial:
    """``partial(func, *args, **keywords)``: a call with some arguments fixed."""

    _pvm_immutable = True

    def __new__(cls, func, /, *args, **keywords):
        if not callable(func):
            raise TypeError('the first argument must be callable')
        if isinstance(func, partial):
            args = func.args + args
            keywords = {**func.keywords, **keywords}
            func = func.func
        self = super().__new__(cls)
        _pvm_object_setattr(self, '_func', func)
        _pvm_object_setattr(self, '_args', tuple(args))
        _pvm_object_setattr(self, '_keywords', tuple(keywords.items()))
        return self

    def __setattr__(self, name, value):
        raise AttributeError('readonly attribute')

    def __delattr__(self, name):
        raise AttributeError('readonly attribute')

    @property
    def func(self):
        return self._func

    @property
    def args(self):
        return self._args

    @property
    def keywords(self):
        return dict(self._keywords)

    def __call__(self, /, *args, **keywords):
        keywords = {**dict(self._keywords), **keywords}
        return self._func(*self._args, *args, **keywords)

    def __repr__(self):
        parts = [repr(self._func)]
        parts.extend([repr(arg) for arg in self._args])
        parts.extend([f'{key}={value!r}' for key, value in self._keywords])
        name = 'functools.partial' if type(self) is partial else type(self).__qualname__
        return name + '(' + ', '.join(parts) + ')'


def _gt_from_lt(self, other):
    result = type(self).__lt__(self, other)
    if result is NotImplemented:
        return result
    return not result and self != other


def _le_from_lt(self, other):
    result = type(self).__lt__(self, other)
    if result is NotImplemented:
        return result
    return result or self == other


def _ge_from_lt(self, other):
    result = type(self).__lt__(self, other)
    if result is NotImplemented:
        return result
    return not result


def _ge_from_le(self, other):
    result = type(self).__le__(self, other)
    if result is NotImplemented:
        return result
    return not result or self == other


def _lt_from_le(self, other):
    result = type(self).__le__(self, other)
    if result is NotImplemented:
        return result
    return result and self != other


def _gt_from_le(self, other):
    result = type(self).__le__(self, other)
    if result is NotImplemented:
        return result
    return not result


def _lt_from_gt(self, other):
    result = type(self).__gt__(self, other)
    if result is NotImplemented:
        return result
    return not result and self != other


def _ge_from_gt(self, other):
    result = type(self).__gt__(self, other)
    if result is NotImplemented:
        return result
    return result or self == other


def _le_from_gt(self, other):
    result = type(self).__gt__(self, other)
    if result is NotImplemented:
        return result
    return not result


def _le_from_ge(self, other):
    result = type(self).__ge__(self, other)
    if result is NotImplemented:
        return result
    return not result or self == other


def _gt_from_ge(self, other):
    result = type(self).__ge__(self, other)
    if result is NotImplemented:
        return result
    return result and self != other


def _lt_from_ge(self, other):
    result = type(self).__ge__(self, other)
    if result is NotImplemented:
        return result
    return not result


_CONVERT = (
    ('__lt__', (('__gt__', _gt_from_lt), ('__le__', _le_from_lt), ('__ge__', _ge_from_lt))),
    ('__le__', (('__ge__', _ge_from_le), ('__lt__', _lt_from_le), ('__gt__', _gt_from_le))),
    ('__gt__', (('__lt__', _lt_from_gt), ('__ge__', _ge_from_gt), ('__le__', _le_from_gt))),
    ('__ge__', (('__le__', _le_from_ge), ('__gt__', _gt_from_ge), ('__lt__', _lt_from_ge))),
)


def _defines(cls, name):
    for klass in cls.__mro__:
        if klass is not object and name in klass.__dict__:
            return klass.__dict__[name] is not None
    return False


def total_ordering(cls):
    """Class decorator filling in the missing ordering methods."""
    roots = [op for op, _ in _CONVERT if _defines(cls, op)]
    if not roots:
        raise ValueError('must define at least one ordering operation: < > <= >=')
    root = max(roots)       # prefer __lt__ to __le__ to __gt__ to __ge__
    for op, conversions in _CONVERT:
        if op == root:
            for name, method in conversions:
                if name not in roots:
                    _pvm_set_class_attr(cls, name, method)
    return cls


def cmp_to_key(mycmp):
    """Convert a cmp= function into a key= function."""
    class K:
        def __init__(self, obj):
            self.obj = obj

        def __lt__(self, other):
            return mycmp(self.obj, other.obj) < 0

        def __gt__(self, other):
            return mycmp(self.obj, other.obj) > 0

        def __eq__(self, other):
            return mycmp(self.obj, other.obj) == 0

        def __le__(self, other):
            return mycmp(self.obj, other.obj) <= 0

        def __ge__(self, other):
            return mycmp(self.obj, other.obj) >= 0

        __hash__ = None
    return K


class _CacheInfo(tuple):
    """``CacheInfo(hits, misses, maxsize, currsize)``."""

    __slots__ = ()
    _pvm_immutable = True

    def __new__(cls, hits, misses, maxsize, currsize):
        return tuple.__new__(cls, (hits, misses, maxsize, currsize))

    hits = property(lambda self: self[0])
    misses = property(lambda self: self[1])
    maxsize = property(lambda self: self[2])
    currsize = property(lambda self: self[3])

    def __repr__(self):
        return 'CacheInfo(hits=%r, misses=%r, maxsize=%r, currsize=%r)' % tuple(self)


class _CacheState:
    """A cache's contents, valid for one execution (epoch) only.

    Marked immutable for the VM's load check: what it holds is dropped as
    soon as another execution touches it, so nothing carries over."""

    _pvm_immutable = True

    def __init__(self):
        self._pvm_epoch = None
        self._pvm_data = {}
        self._pvm_hits = 0
        self._pvm_misses = 0

    def current(self):
        epoch = _pvm_epoch()
        if self._pvm_epoch != epoch:
            self._pvm_epoch = epoch
            self._pvm_data = {}
            self._pvm_hits = 0
            self._pvm_misses = 0
        return self._pvm_data


def _make_key(args, kwds, typed):
    if kwds:
        key = (1, args, tuple(kwds.items()))
    else:
        key = (0, args)
    if typed:
        key = key + (tuple([type(v).__qualname__ for v in args]),
                     tuple([type(v).__qualname__ for v in kwds.values()]))
    return key


def _lru_cache_wrapper(user_function, maxsize, typed):
    state = _CacheState()

    def wrapper(*args, **kwds):
        data = state.current()
        if maxsize == 0:
            state._pvm_misses += 1
            return user_function(*args, **kwds)
        key = _make_key(args, kwds, typed)
        if key in data:
            state._pvm_hits += 1
            result = data[key]
            if maxsize is not None:
                del data[key]
                data[key] = result
            return result
        state._pvm_misses += 1
        result = user_function(*args, **kwds)
        data = state.current()
        if key not in data:
            if maxsize is not None and len(data) >= maxsize:
                del data[next(iter(data))]
            data[key] = result
        return result

    def cache_info():
        data = state.current()
        return _CacheInfo(state._pvm_hits, state._pvm_misses, maxsize, len(data))

    def cache_clear():
        state.current()
        state._pvm_data = {}
        state._pvm_hits = 0
        state._pvm_misses = 0

    def cache_parameters():
        return {'maxsize': maxsize, 'typed': typed}

    wrapper.cache_info = cache_info
    wrapper.cache_clear = cache_clear
    wrapper.cache_parameters = cache_parameters
    return update_wrapper(wrapper, user_function)


def lru_cache(maxsize=128, typed=False):
    """Memoise a function for the current execution (least recently used first out)."""
    if isinstance(maxsize, int):
        if maxsize < 0:
            maxsize = 0
    elif callable(maxsize) and isinstance(typed, bool):
        return _lru_cache_wrapper(maxsize, 128, typed)
    elif maxsize is not None:
        raise TypeError('Expected first argument to be an integer, a callable, or None')

    def decorating_function(user_function):
        return _lru_cache_wrapper(user_function, maxsize, typed)
    return decorating_function


def cache(user_function):
    """Simple unbounded cache for the current execution."""
    return _lru_cache_wrapper(user_function, None, False)


class cached_property:
    """A property computed once per instance and execution.

    Unlike CPython's, it is a data descriptor: the value is kept beside the
    execution epoch under a private attribute, so an instance made at load
    (shared by every execution) recomputes it in each execution."""

    _pvm_immutable = True

    def __init__(self, func):
        _pvm_object_setattr(self, 'func', func)
        try:
            name = func.__name__
        except AttributeError:
            name = None
        try:
            doc = func.__doc__
        except AttributeError:
            doc = None
        _pvm_object_setattr(self, 'attrname', name)
        _pvm_object_setattr(self, '__doc__', doc)

    def __setattr__(self, name, value):
        raise AttributeError('cached_property objects are read-only')

    def _key(self):
        return '_pvm_cached_' + self.attrname

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        key = self._key()
        epoch = _pvm_epoch()
        try:
            entry = object.__getattribute__(instance, key)
        except AttributeError:
            entry = None
        if entry is not None and (entry[0] is None or entry[0] == epoch):
            return entry[1]
        value = self.func(instance)
        _pvm_object_setattr(instance, key, (epoch, value))
        return value

    def __set__(self, instance, value):
        _pvm_object_setattr(instance, self._key(), (None, value))

    def __delete__(self, instance):
        key = self._key()
        try:
            object.__getattribute__(instance, key)
        except AttributeError:
            raise AttributeError(self.attrname) from None
        object.__delattr__(instance, key)
