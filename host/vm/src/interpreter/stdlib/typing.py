"""The actor-VM subset of CPython's ``typing``.

Annotations are inert here: every name exists so that annotated code runs,
subscripting (``Optional[int]``, ``Dict[str, List[int]]``, ``Callable[[int],
str]``) returns an immutable alias object, and nothing checks types at runtime.
``class P(NamedTuple)`` builds a tuple subclass with named fields and
``class M(TypedDict)`` makes calls that return plain dicts.  This module
imports nothing.  Left out: ParamSpec, TypeVarTuple, Concatenate, Unpack,
get_type_hints, the functional TypedDict syntax, runtime protocol checks.
"""

TYPE_CHECKING = False


def _type_repr(obj):
    if obj is None:
        return 'None'
    if obj is ...:
        return '...'
    if isinstance(obj, (list, tuple)):
        return '[' + ', '.join([_type_repr(a) for a in obj]) + ']'
    if isinstance(obj, type):
        qualname = obj.__qualname__
        module = obj.__module__
        if module == 'builtins' or module is None:
            return qualname
        return module + '.' + qualname
    return repr(obj)


def _real(cls):
    """The class itself; for the VM's metered stand-ins of builtin types
    (``list``…), the real type, which class bases must be."""
    try:
        return cls.__mro__[0]
    except AttributeError:
        return cls


def _contains(items, item):
    for other in items:
        if other is item or other == item:
            return True
    return False


def _is_none_type(obj):
    return obj is None or obj is type(None)


def _as_tuple(params):
    if isinstance(params, tuple):
        return params
    return (params,)


def _type_args(params):
    """Type arguments as CPython stores them: ``None`` becomes ``NoneType``."""
    return tuple([type(None) if p is None else p for p in params])


def _collect_parameters(args):
    found = []
    for arg in args:
        if isinstance(arg, TypeVar):
            params = (arg,)
        elif isinstance(arg, (list, tuple)):
            params = _collect_parameters(arg)
        else:
            try:
                params = arg.__parameters__
            except AttributeError:
                params = ()
            if not isinstance(params, tuple):
                params = ()
        for param in params:
            if not _contains(found, param):
                found.append(param)
    return tuple(found)


class _Immutable:
    """Instances are fixed once built (the VM shares them between calls)."""

    _pvm_immutable = True

    def __setattr__(self, name, value):
        raise AttributeError(f'{type(self).__name__} objects are immutable')

    def __delattr__(self, name):
        raise AttributeError(f'{type(self).__name__} objects are immutable')


class _Alias(_Immutable):
    """What subscripting a typing object returns (``List[int]``)."""

    def __init__(self, origin, args, name=None, metadata=(), shown=None):
        _pvm_object_setattr(self, '__origin__', origin)
        _pvm_object_setattr(self, '__args__', args)
        _pvm_object_setattr(self, '__metadata__', metadata)
        _pvm_object_setattr(self, '__parameters__', _collect_parameters(args))
        _pvm_object_setattr(self, '_name', name)
        _pvm_object_setattr(self, '_shown', args if shown is None else shown)

    def __repr__(self):
        name = self._name
        args = self.__args__
        if name == 'Union':
            if len(args) == 2 and _is_none_type(args[1]):
                return f'typing.Optional[{_type_repr(args[0])}]'
            if len(args) == 2 and _is_none_type(args[0]):
                return f'typing.Optional[{_type_repr(args[1])}]'
        if name == 'Annotated':
            metadata = ', '.join([repr(m) for m in self.__metadata__])
            return f'typing.Annotated[{_type_repr(self.__origin__)}, {metadata}]'
        prefix = 'typing.' + name if name else _type_repr(self.__origin__)
        shown = self._shown
        if not shown:
            return prefix + '[()]'
        return prefix + '[' + ', '.join([_type_repr(a) for a in shown]) + ']'

    def __eq__(self, other):
        if not isinstance(other, _Alias):
            return NotImplemented
        if self._name != other._name or not (self.__origin__ == other.__origin__):
            return False
        if self._name == 'Union':
            return (len(self.__args__) == len(other.__args__)
                    and all([_contains(other.__args__, a) for a in self.__args__]))
        return self.__args__ == other.__args__ and self.__metadata__ == other.__metadata__

    def __hash__(self):
        return (self._name or _type_repr(self.__origin__)).__hash__()

    def __getitem__(self, params):
        params = _as_tuple(params)
        tvars = self.__parameters__
        if not tvars:
            raise TypeError(f'{self!r} is not a generic class')
        params = _type_args(params)
        if len(params) != len(tvars):
            many = 'many' if len(params) > len(tvars) else 'few'
            raise TypeError(f'Too {many} arguments for {self!r}; '
                            f'actual {len(params)}, expected {len(tvars)}')
        args = tuple([_substitute(a, tvars, params) for a in self.__args__])
        shown = tuple([_substitute(a, tvars, params) for a in self._shown])
        if self._name == 'Union':
            return Union[args]
        return _Alias(self.__origin__, args, self._name, self.__metadata__, shown)

    def __call__(self, *args, **kwargs):
        if self._name and self._name != 'Annotated':
            raise TypeError(f'Type {self._name} cannot be instantiated; '
                            f'use {_type_repr(self.__origin__)}() instead')
        return self.__origin__(*args, **kwargs)

    def __mro_entries__(self, bases):
        origin = self.__origin__
        if isinstance(origin, _SpecialForm) or self._name in ('Union', 'Annotated'):
            raise TypeError(f'Cannot subclass {self!r}')
        seen_self = False
        generic_later = False
        for base in bases:
            if base is self:
                seen_self = True
            elif seen_self and (isinstance(base, (_Alias, _GenericForm))
                                or (isinstance(base, type) and issubclass(base, Generic))):
                generic_later = True
        if origin is Generic:
            if generic_later or _contains(bases, Protocol):
                return ()
            return (Generic,)
        if isinstance(origin, type):
            origin = _real(origin)
            if issubclass(origin, Generic):
                return (origin,)
        entries = []
        if isinstance(origin, type) and not _contains(bases, origin):
            entries.append(origin)
        if not generic_later:
            entries.append(Generic)
        return tuple(entries)

    def __instancecheck__(self, obj):
        if self._name == 'Union':
            return any([isinstance(obj, _check_type(a)) for a in self.__args__])
        raise TypeError('Subscripted generics cannot be used with class and instance checks')

    def __subclasscheck__(self, cls):
        if self._name == 'Union':
            return any([issubclass(cls, _check_type(a)) for a in self.__args__])
        raise TypeError('Subscripted generics cannot be used with class and instance checks')

    def __or__(self, other):
        return Union[self, other]

    def __ror__(self, other):
        return Union[other, self]


def _check_type(arg):
    if isinstance(arg, _Alias) and arg._name != 'Union':
        raise TypeError('Subscripted generics cannot be used with class and instance checks')
    return arg


def _substitute(arg, tvars, params):
    if isinstance(arg, TypeVar):
        index = 0
        while index < len(tvars):
            if tvars[index] is arg:
                return params[index]
            index += 1
        return arg
    if isinstance(arg, tuple):
        return tuple([_substitute(a, tvars, params) for a in arg])
    if isinstance(arg, _Alias) and arg.__parameters__:
        return arg[tuple([_substitute(t, tvars, params) for t in arg.__parameters__])]
    return arg


class _SpecialForm(_Immutable):
    """``Union``, ``Optional``, ``Literal``…: ``_getitem(self, params)`` subscripts."""

    def __init__(self, name, getitem=None):
        _pvm_object_setattr(self, '_name', name)
        _pvm_object_setattr(self, '_getitem', getitem)

    def __repr__(self):
        return 'typing.' + self._name

    def __hash__(self):
        return self._name.__hash__()

    def __getitem__(self, params):
        if self._getitem is None:
            raise TypeError(f'{self!r} is not subscriptable')
        return self._getitem(self, params)

    def __call__(self, *args, **kwargs):
        if self._name == 'Any':
            raise TypeError('Any cannot be instantiated')
        raise TypeError(f'Cannot instantiate {self!r}')

    def __mro_entries__(self, bases):
        raise TypeError(f'Cannot subclass {self!r}')

    def __instancecheck__(self, obj):
        raise TypeError(f'{self!r} cannot be used with isinstance()')

    def __subclasscheck__(self, cls):
        raise TypeError(f'{self!r} cannot be used with issubclass()')

    def __or__(self, other):
        return Union[self, other]

    def __ror__(self, other):
        return Union[other, self]


class _GenericForm(_Immutable):
    """``List``, ``Dict``, ``Iterable``…: ``origin`` is the concrete class, if any."""

    def __init__(self, name, origin, nparams, check, getitem=None):
        _pvm_object_setattr(self, '_name', name)
        _pvm_object_setattr(self, '__origin__', origin)
        _pvm_object_setattr(self, '_nparams', nparams)
        _pvm_object_setattr(self, '_check', check)
        _pvm_object_setattr(self, '_getitem', getitem)

    def __repr__(self):
        return 'typing.' + self._name

    def __hash__(self):
        return self._name.__hash__()

    def __getitem__(self, params):
        if self._getitem is not None:
            return self._getitem(self, params)
        params = _as_tuple(params)
        if self._nparams >= 0 and len(params) != self._nparams:
            many = 'many' if len(params) > self._nparams else 'few'
            raise TypeError(f'Too {many} arguments for {self!r}; '
                            f'actual {len(params)}, expected {self._nparams}')
        origin = self if self.__origin__ is None else self.__origin__
        return _Alias(origin, _type_args(params), self._name)

    def __call__(self, *args, **kwargs):
        if self.__origin__ is None:
            raise TypeError(f'Cannot instantiate {self!r}')
        raise TypeError(f'Type {self._name} cannot be instantiated; '
                        f'use {_type_repr(self.__origin__)}() instead')

    def __mro_entries__(self, bases):
        if self.__origin__ is None:
            return (Generic,)
        return (_real(self.__origin__),)

    def __instancecheck__(self, obj):
        if self.__origin__ is not None:
            return isinstance(obj, self.__origin__)
        return self._check(_real(type(obj)))

    def __subclasscheck__(self, cls):
        if self.__origin__ is not None:
            return issubclass(cls, self.__origin__)
        return self._check(_real(cls))

    def __or__(self, other):
        return Union[self, other]

    def __ror__(self, other):
        return Union[other, self]


def _has(*names):
    """A check like collections.abc's: each name defined (not None) along the MRO."""
    def check(cls):
        for name in names:
            found = False
            for klass in cls.__mro__:
                if name in klass.__dict__:
                    if klass.__dict__[name] is None:
                        return False
                    found = True
                    break
            if not found:
                return False
        return True
    return check


def _one_of(*classes):
    def check(cls):
        return issubclass(cls, classes)
    return check


def _union(self, params):
    params = _as_tuple(params)
    if not params:
        raise TypeError('Cannot take a Union of no types.')
    flat = []
    for param in params:
        if param is None:
            param = type(None)
        if isinstance(param, _Alias) and param._name == 'Union':
            items = param.__args__
        else:
            items = (param,)
        for item in items:
            if not _contains(flat, item):
                flat.append(item)
    if len(flat) == 1:
        return flat[0]
    return _Alias(self, tuple(flat), 'Union')


def _optional(self, param):
    if isinstance(param, tuple):
        raise TypeError(f'typing.Optional requires a single type. Got {param!r}.')
    return Union[param, None]


def _literal(self, params):
    return _Alias(self, _as_tuple(params), self._name)


def _single(self, param):
    if isinstance(param, tuple):
        raise TypeError(f'{self!r} accepts only a single type.')
    return _Alias(self, _type_args((param,)), self._name)


def _annotated(self, params):
    if not isinstance(params, tuple) or len(params) < 2:
        raise TypeError('Annotated[...] should be used with at least two arguments '
                        '(a type and an annotation).')
    return _Alias(params[0], (params[0],), 'Annotated', tuple(params[1:]))


def _callable(self, params):
    if not isinstance(params, tuple) or len(params) != 2:
        raise TypeError('Callable must be used as Callable[[arg, ...], result].')
    args, result = params
    result = _type_args((result,))[0]
    if args is ...:
        return _Alias(self, (..., result), 'Callable', (), (..., result))
    if not isinstance(args, (list, tuple)):
        raise TypeError(f'Callable[args, result]: args must be a list. Got {_type_repr(args)}')
    args = _type_args(args)
    return _Alias(self, args + (result,), 'Callable', (), (args, result))


Any = _SpecialForm('Any')
NoReturn = _SpecialForm('NoReturn')
Never = _SpecialForm('Never')
Self = _SpecialForm('Self')
LiteralString = _SpecialForm('LiteralString')
TypeAlias = _SpecialForm('TypeAlias')
Union = _SpecialForm('Union', _union)
Optional = _SpecialForm('Optional', _optional)
Literal = _SpecialForm('Literal', _literal)
Final = _SpecialForm('Final', _single)
ClassVar = _SpecialForm('ClassVar', _single)
Required = _SpecialForm('Required', _single)
NotRequired = _SpecialForm('NotRequired', _single)
TypeGuard = _SpecialForm('TypeGuard', _single)
Annotated = _SpecialForm('Annotated', _annotated)

List = _GenericForm('List', list, 1, None)
Dict = _GenericForm('Dict', dict, 2, None)
Set = _GenericForm('Set', set, 1, None)
FrozenSet = _GenericForm('FrozenSet', frozenset, 1, None)
Tuple = _GenericForm('Tuple', tuple, -1, None)
Callable = _GenericForm('Callable', None, -1, _has('__call__'), _callable)
Type = _GenericForm('Type', type, 1, None)
Iterable = _GenericForm('Iterable', None, 1, _has('__iter__'))
Iterator = _GenericForm('Iterator', None, 1, _has('__iter__', '__next__'))
Reversible = _GenericForm('Reversible', None, 1, _has('__iter__', '__reversed__'))
Generator = _GenericForm('Generator', None, 3, _has('__iter__', '__next__', 'send', 'throw'))
Container = _GenericForm('Container', None, 1, _has('__contains__'))
Collection = _GenericForm('Collection', None, 1, _has('__len__', '__iter__', '__contains__'))
Sized = _GenericForm('Sized', None, 0, _has('__len__'))
Hashable = _GenericForm('Hashable', None, 0, _has('__hash__'))
_RANGE = type(range(0))
Sequence = _GenericForm('Sequence', None, 1, _one_of(list, tuple, str, bytes, bytearray, _RANGE))
MutableSequence = _GenericForm('MutableSequence', None, 1, _one_of(list, bytearray))
Mapping = _GenericForm('Mapping', None, 2, _one_of(dict))
MutableMapping = _GenericForm('MutableMapping', None, 2, _one_of(dict))
AbstractSet = _GenericForm('AbstractSet', None, 1, _one_of(set, frozenset))
MutableSet = _GenericForm('MutableSet', None, 1, _one_of(set))
DefaultDict = _GenericForm('DefaultDict', None, 2, _one_of(dict))
OrderedDict = _GenericForm('OrderedDict', None, 2, _one_of(dict))
Counter = _GenericForm('Counter', None, 1, _one_of(dict))
Deque = _GenericForm('Deque', None, 1, _has('appendleft', 'popleft'))
Text = str


class TypeVar(_Immutable):
    """``T = TypeVar('T')``: a placeholder in generic annotations."""

    def __init__(self, name, *constraints, bound=None, covariant=False,
                 contravariant=False, infer_variance=False):
        if covariant and contravariant:
            raise ValueError('Bivariant types are not supported.')
        if len(constraints) == 1:
            raise TypeError('A single constraint is not allowed')
        if constraints and bound is not None:
            raise TypeError('Constraints cannot be combined with bound=...')
        _pvm_object_setattr(self, '__name__', name)
        _pvm_object_setattr(self, '__bound__', bound)
        _pvm_object_setattr(self, '__constraints__', tuple(constraints))
        _pvm_object_setattr(self, '__covariant__', bool(covariant))
        _pvm_object_setattr(self, '__contravariant__', bool(contravariant))
        _pvm_object_setattr(self, '__infer_variance__', bool(infer_variance))

    def __repr__(self):
        if self.__infer_variance__:
            return self.__name__
        if self.__covariant__:
            return '+' + self.__name__
        if self.__contravariant__:
            return '-' + self.__name__
        return '~' + self.__name__

    def __hash__(self):
        return self.__name__.__hash__()

    def __mro_entries__(self, bases):
        raise TypeError('Cannot subclass an instance of TypeVar')

    def __or__(self, other):
        return Union[self, other]

    def __ror__(self, other):
        return Union[other, self]


AnyStr = TypeVar('AnyStr', bytes, str)


class Generic:
    """Base of user generic classes: ``class Box(Generic[T])``."""

    def __class_getitem__(cls, params):
        params = _type_args(_as_tuple(params))
        if cls is Generic or cls is Protocol:
            if not params:
                raise TypeError(f'Parameter list to {cls.__qualname__}[...] cannot be empty')
            for param in params:
                if not isinstance(param, TypeVar):
                    raise TypeError(f'Parameters to {cls.__name__}[...] must all be type variables '
                                    'or parameter specification variables.')
        return _Alias(cls, params)


class Protocol(Generic):
    """Structural base class; isinstance() checks inheritance only."""


def runtime_checkable(cls):
    return cls


class NewType(_Immutable):
    """``UserId = NewType('UserId', int)``: calling it returns its argument."""

    def __init__(self, name, tp):
        _pvm_object_setattr(self, '__name__', name)
        _pvm_object_setattr(self, '__qualname__', name)
        _pvm_object_setattr(self, '__supertype__', tp)

    def __repr__(self):
        return self.__name__

    def __hash__(self):
        return self.__name__.__hash__()

    def __call__(self, value):
        return value

    def __mro_entries__(self, bases):
        raise TypeError('Cannot subclass an instance of NewType. Perhaps you were looking for: '
                        f'`{self.__name__}Sub = NewType({self.__name__ + "Sub"!r}, {self.__name__})`')

    def __or__(self, other):
        return Union[self, other]

    def __ror__(self, other):
        return Union[other, self]


def cast(typ, val):
    return val


def assert_type(val, typ):
    return val


def assert_never(arg):
    value = repr(arg)
    if len(value) > 100:
        value = value[:100] + '...'
    raise AssertionError(f'Expected code to be unreachable, but got: {value}')


def _overload_dummy(*args, **kwargs):
    raise NotImplementedError(
        'You should not call an overloaded function. '
        'A series of @overload-decorated functions '
        'outside a stub module should always be followed '
        'by an implementation that is not @overload-ed.')


def overload(func):
    return _overload_dummy


def final(f):
    return f


def no_type_check(arg):
    return arg


def no_type_check_decorator(decorator):
    return decorator


def dataclass_transform(**kwargs):
    def decorator(cls_or_fn):
        return cls_or_fn
    return decorator


def get_origin(tp):
    if isinstance(tp, _Alias):
        if tp._name == 'Annotated':
            return Annotated
        return tp.__origin__
    if tp is Generic:
        return Generic
    return None


def get_args(tp):
    if isinstance(tp, _Alias):
        if tp._name == 'Annotated':
            return (tp.__origin__,) + tp.__metadata__
        if tp._name == 'Callable' and tp.__args__[0] is not ...:
            return (list(tp.__args__[:-1]), tp.__args__[-1])
        return tp.__args__
    return ()


# ---- NamedTuple ---------------------------------------------------------

def _names_list(names):
    quoted = [repr(n) for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return quoted[0] + ' and ' + quoted[1]
    return ', '.join(quoted[:-1]) + ', and ' + quoted[-1]


def _bind(qualname, names, ndefaults, args, kwargs):
    """Positional-or-keyword parameters ``names`` (the last ``ndefaults`` optional),
    bound like CPython; unset optional parameters are left as ``_Unset``."""
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


class _Unset:
    pass


class _ClassDict(_Immutable):
    """A class attribute reading as a fresh dict (``_field_defaults``)."""

    def __init__(self, items):
        _pvm_object_setattr(self, '_items', items)

    def __get__(self, instance, owner=None):
        return dict(self._items)


def _field_property(index):
    def get(self):
        return self[index]
    return property(get, doc=f'Alias for field number {index}')


def _make_nmtuple(typename, names, defaults, module):
    names = tuple(names)
    defaults = tuple(defaults)
    count = len(names)
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
                raise AttributeError("can't set attribute")
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

        def __delattr__(self, name):
            if name in names:
                raise AttributeError("can't delete attribute")
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


def _ns_annotations(ns):
    """The annotations of a class body namespace (eager or PEP 649 lazy)."""
    annotations = ns.get('__annotations__')
    if annotations is not None:
        return dict(annotations)
    annotate = ns.get('__annotate__')
    if annotate is None:
        annotate = ns.get('__annotate_func__')
    if annotate is None:
        return {}
    return dict(annotate(1))


_NOT_COPIED = frozenset((
    '__module__', '__name__', '__qualname__', '__annotations__', '__annotate__',
    '__annotate_func__', '__classcell__', '__static_attributes__', '__firstlineno__',
    '__classdict__', '__conditional_annotations__', '__orig_bases__', '__type_params__',
    '__dict__', '__weakref__', '__classdictcell__',
))

_PROHIBITED = frozenset((
    '__new__', '__init__', '__slots__', '__getnewargs__', '_fields', '_field_defaults',
    '_make', '_replace', '_asdict', '_source',
))


class _NamedTupleMeta(type):
    def __new__(mcls, typename, bases, ns):
        if ns.get('_pvm_root'):
            return super().__new__(mcls, typename, bases, ns)
        types = _ns_annotations(ns)
        names = list(types)
        defaults = []
        default_names = []
        for name in names:
            if name in ns:
                defaults.append(ns[name])
                default_names.append(name)
            elif defaults:
                plural = 's' if len(default_names) > 1 else ''
                raise TypeError(f'Non-default namedtuple field {name} cannot follow '
                                f'default field{plural} {", ".join(default_names)}')
        _check_field_names(typename, names)
        result = _make_nmtuple(typename, names, defaults, ns.get('__module__'))
        result.__annotations__ = types
        if '__qualname__' in ns:
            result.__qualname__ = ns['__qualname__']
        for key in ns:
            if key in _PROHIBITED:
                raise AttributeError('Cannot overwrite NamedTuple attribute ' + key)
            if key not in _NOT_COPIED and key not in types:
                _pvm_set_class_attr(result, key, ns[key])
        return result

    def __call__(cls, typename, fields=None, **kwargs):
        if fields is None:
            fields = list(kwargs.items())
        elif kwargs:
            raise TypeError('Either list of fields or keywords can be provided to NamedTuple, not both')
        names = [name for name, tp in fields]
        _check_field_names(typename, names)
        result = _make_nmtuple(typename, names, (), None)
        result.__annotations__ = dict(fields)
        return result


def _check_field_names(typename, names):
    seen = []
    for name in names:
        if name.startswith('_'):
            raise ValueError(f'Field names cannot start with an underscore: {name!r}')
        if name in seen:
            raise ValueError(f'Encountered duplicate field name: {name!r}')
        seen.append(name)


class NamedTuple(metaclass=_NamedTupleMeta):
    """``class P(NamedTuple): x: int; y: int = 0`` makes a tuple subclass."""

    _pvm_root = True


# ---- TypedDict ----------------------------------------------------------

class _TypedDictMeta(type):
    def __new__(mcls, name, bases, ns, total=True):
        cls = super().__new__(mcls, name, bases, ns)
        if ns.get('_pvm_root'):
            return cls
        annotations = {}
        required = []
        optional = []
        for base in bases:
            if base is not TypedDict and isinstance(base, _TypedDictMeta):
                annotations.update(base.__annotations__)
                required.extend(base.__required_keys__)
                optional.extend(base.__optional_keys__)
        own = _ns_annotations(ns)
        annotations.update(own)
        for key in own:
            tp = own[key]
            name = tp._name if isinstance(tp, _Alias) else None
            if name == 'Required' or (total and name != 'NotRequired'):
                required.append(key)
            else:
                optional.append(key)
        # Through the VM's class-attribute native: a metaclass's own
        # `__setattr__` would reach `type.__setattr__`, which actors may not.
        _pvm_set_class_attr(cls, '__annotations__', annotations)
        _pvm_set_class_attr(cls, '__required_keys__', frozenset(required))
        _pvm_set_class_attr(cls, '__optional_keys__', frozenset(optional))
        _pvm_set_class_attr(cls, '__total__', bool(total))
        return cls

    def __init__(cls, name, bases, ns, total=True):
        super().__init__(name, bases, ns)

    def __call__(cls, *args, **kwargs):
        if cls is TypedDict:
            raise TypeError('TypedDict functional syntax is not supported; use class syntax')
        return dict(*args, **kwargs)

    def __instancecheck__(cls, obj):
        raise TypeError('TypedDict does not support instance and class checks')

    def __subclasscheck__(cls, other):
        raise TypeError('TypedDict does not support instance and class checks')


class TypedDict(dict, metaclass=_TypedDictMeta):
    """``class Movie(TypedDict): name: str``: ``Movie(name='x')`` is a plain dict."""

    _pvm_root = True
