"""The actor-VM subset of CPython's ``dataclasses``.

``@dataclass`` reads the class annotations and adds ``__init__``,
``__repr__``, ``__eq__``, ordering, hashing and frozen-ness like CPython, but
the methods are closures looping over the field list (no ``exec``).  Left
out: ``weakref_slot``, ``InitVar``, ``make_dataclass``,
string ``"ClassVar[...]"`` annotations, the recursive-repr guard, deep copies
in ``asdict``/``astuple`` (non-container values are shared, not copied) and
the generated ``__doc__`` signature.
"""

import typing


class FrozenInstanceError(AttributeError):
    pass


class _Sentinel:
    _pvm_immutable = True

    def __init__(self, name):
        _pvm_object_setattr(self, '_name', name)

    def __setattr__(self, name, value):
        raise AttributeError(f'{self._name} is immutable')

    def __repr__(self):
        return self._name


class _MISSING_TYPE(_Sentinel):
    pass


class _KW_ONLY_TYPE(_Sentinel):
    pass


MISSING = _MISSING_TYPE('MISSING')
KW_ONLY = _KW_ONLY_TYPE('KW_ONLY')
_FIELD = _Sentinel('_FIELD')
_FIELD_CLASSVAR = _Sentinel('_FIELD_CLASSVAR')
_UNSET = _Sentinel('_UNSET')
_HAS_FACTORY = _Sentinel('_HAS_FACTORY')


class Field:
    """One field; built by ``field()`` and immutable once its class is made."""

    _pvm_immutable = True

    def __init__(self, default, default_factory, init, repr, hash, compare, metadata, kw_only):
        items = () if metadata is None else tuple(dict(metadata).items())
        for name, value in (('name', None), ('type', None), ('default', default),
                            ('default_factory', default_factory), ('init', init),
                            ('repr', repr), ('hash', hash), ('compare', compare),
                            ('_metadata', items), ('kw_only', kw_only), ('_field_type', None)):
            _pvm_object_setattr(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError('dataclass fields are read-only')

    def __delattr__(self, name):
        raise AttributeError('dataclass fields are read-only')

    @property
    def metadata(self):
        return dict(self._metadata)

    def __repr__(self):
        return ('Field('
                f'name={self.name!r},'
                f'type={self.type!r},'
                f'default={self.default!r},'
                f'default_factory={self.default_factory!r},'
                f'init={self.init!r},'
                f'repr={self.repr!r},'
                f'hash={self.hash!r},'
                f'compare={self.compare!r},'
                f'metadata={self.metadata!r},'
                f'kw_only={self.kw_only!r},'
                f'_field_type={self._field_type}'
                ')')


class _DataclassParams:
    _pvm_immutable = True

    def __init__(self, init, repr, eq, order, unsafe_hash, frozen):
        for name, value in (('init', init), ('repr', repr), ('eq', eq), ('order', order),
                            ('unsafe_hash', unsafe_hash), ('frozen', frozen)):
            _pvm_object_setattr(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError('dataclass parameters are read-only')


def field(*, default=MISSING, default_factory=MISSING, init=True, repr=True,
          hash=None, compare=True, metadata=None, kw_only=MISSING):
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError('cannot specify both default and default_factory')
    return Field(default, default_factory, init, repr, hash, compare, metadata, kw_only)


def _set(obj, name, value):
    _pvm_object_setattr(obj, name, value)


def _own(cls, name):
    return name in cls.__dict__


def _is_classvar(annotation):
    return annotation is typing.ClassVar or (
        isinstance(annotation, typing._Alias) and annotation.__origin__ is typing.ClassVar)


def _class_value(cls, name, default):
    """``getattr(cls, name, default)`` for plain class attributes, read from the
    MRO's dicts (the VM's getattr refuses some names)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return default


def _get_field(cls, name, annotation, default_kw_only):
    default = _class_value(cls, name, MISSING)
    if isinstance(default, Field):
        f = default
    else:
        f = field(default=default)
    _set(f, 'name', name)
    _set(f, 'type', annotation)
    if _is_classvar(annotation):
        _set(f, '_field_type', _FIELD_CLASSVAR)
        if f.default_factory is not MISSING:
            raise TypeError(f'field {name} cannot have a default factory')
        if f.kw_only is not MISSING:
            raise TypeError(f'field {name} is a ClassVar but specifies kw_only')
        return f
    _set(f, '_field_type', _FIELD)
    if f.kw_only is MISSING:
        _set(f, 'kw_only', default_kw_only)
    if f.default is not MISSING and type(f.default).__hash__ is None:
        raise ValueError(f'mutable default {type(f.default)} for field '
                         f'{name} is not allowed: use default_factory')
    return f


def _make_init(cls, flds, frozen, post_init):
    """``__init__`` generated as source and compiled (``_pvm_def``), as
    CPython's ``dataclasses`` does with ``exec``: a real signature, so binding
    and its errors are the interpreter's own, and no generic loop per call."""
    init_fields = [f for f in flds if f.init]
    ordered = [f for f in init_fields if not f.kw_only] + [f for f in init_fields if f.kw_only]
    default_found = False
    for f in ordered:
        if f.kw_only:
            continue
        if f.default is not MISSING or f.default_factory is not MISSING:
            default_found = True
        elif default_found:
            raise TypeError(f'non-default argument {f.name!r} follows default argument')
    namespace = {'_HAS_FACTORY': _HAS_FACTORY, '_pvm_object_setattr': _pvm_object_setattr}
    params = ['self']
    kw_marked = False
    for f in ordered:
        if f.kw_only and not kw_marked:
            params.append('*')
            kw_marked = True
        if f.default_factory is not MISSING:
            params.append(f'{f.name}=_HAS_FACTORY')
        elif f.default is not MISSING:
            namespace[f'_dflt_{f.name}'] = f.default
            params.append(f'{f.name}=_dflt_{f.name}')
        else:
            params.append(f.name)
    lines = []
    for f in flds:
        if f.default_factory is not MISSING:
            namespace[f'_factory_{f.name}'] = f.default_factory
        if f.init:
            if f.default_factory is not MISSING:
                value = f'_factory_{f.name}() if {f.name} is _HAS_FACTORY else {f.name}'
            else:
                value = f.name
        elif f.default_factory is not MISSING:
            value = f'_factory_{f.name}()'
        else:
            continue
        if frozen:
            lines.append(f'    _pvm_object_setattr(self, {f.name!r}, {value})')
        else:
            lines.append(f'    self.{f.name} = {value}')
    if post_init:
        lines.append('    self.__post_init__()')
    if not lines:
        lines.append('    pass')
    source = 'def __init__(' + ', '.join(params) + '):\n' + '\n'.join(lines) + '\n'
    function = _pvm_def(source, namespace)
    function.__qualname__ = cls.__qualname__ + '.__init__'
    return function


def _make_repr(names):
    fields = ', '.join([f"{name}={{self.{name}!r}}" for name in names])
    return _pvm_def('def __repr__(self):\n'
                    f'    return f"{{type(self).__qualname__}}({fields})"\n', {})


def _tuple_of(prefix, names):
    if not names:
        return '()'
    return '(' + ', '.join([f'{prefix}.{name}' for name in names]) + ',)'


def _make_eq(names):
    return _pvm_def('def __eq__(self, other):\n'
                    '    if type(other) is type(self):\n'
                    f'        return {_tuple_of("self", names)} == {_tuple_of("other", names)}\n'
                    '    return NotImplemented\n', {})


def _make_order(names):
    methods = []
    for name, op in (('__lt__', '<'), ('__le__', '<='), ('__gt__', '>'), ('__ge__', '>=')):
        methods.append((name, _pvm_def(
            f'def {name}(self, other):\n'
            '    if type(other) is type(self):\n'
            f'        return {_tuple_of("self", names)} {op} {_tuple_of("other", names)}\n'
            '    return NotImplemented\n', {})))
    return tuple(methods)


def _make_hash(names):
    return _pvm_def('def __hash__(self):\n'
                    f'    return {_tuple_of("self", names)}.__hash__()\n', {})


def _make_frozen():
    # CPython lets instances of a plain subclass set non-field attributes; here
    # every instance refuses, since the class is marked immutable for the VM.
    def __setattr__(self, name, value):
        raise FrozenInstanceError(f'cannot assign to field {name!r}')

    def __delattr__(self, name):
        raise FrozenInstanceError(f'cannot delete field {name!r}')
    return __setattr__, __delattr__


def _add(cls, name, value):
    """Sets a generated method unless the class defines it; True if it did."""
    if _own(cls, name):
        return True
    if callable(value):
        value.__qualname__ = f'{cls.__qualname__}.{name}'
    _pvm_set_class_attr(cls, name, value)
    return False


def _process_class(cls, init, repr, eq, order, unsafe_hash, frozen, match_args, kw_only):
    fields = {}
    any_frozen_base = False
    has_dataclass_bases = False
    mro = cls.__mro__
    index = len(mro) - 1
    while index > 0:
        base_fields = mro[index].__dict__.get('__dataclass_fields__')
        if base_fields is not None:
            has_dataclass_bases = True
            for f in base_fields.values():
                fields[f.name] = f
            if mro[index].__dataclass_params__.frozen:
                any_frozen_base = True
        index -= 1

    annotations = cls.__annotations__
    own_fields = []
    kw_only_seen = False
    for name in annotations:
        annotation = annotations[name]
        if annotation is KW_ONLY:
            if kw_only_seen:
                raise TypeError(f'{name!r} is KW_ONLY, but KW_ONLY has already been specified')
            kw_only_seen = True
            kw_only = True
            continue
        own_fields.append(_get_field(cls, name, annotation, kw_only))
    for f in own_fields:
        fields[f.name] = f
        if isinstance(_class_value(cls, f.name, None), Field):
            if f.default is MISSING:
                _pvm_del_class_attr(cls, f.name)
            else:
                _pvm_set_class_attr(cls, f.name, f.default)
    for name in cls.__dict__:
        if isinstance(cls.__dict__[name], Field) and name not in annotations:
            raise TypeError(f'{name!r} is a field but has no type annotation')

    if has_dataclass_bases:
        if any_frozen_base and not frozen:
            raise TypeError('cannot inherit non-frozen dataclass from a frozen one')
        if not any_frozen_base and frozen:
            raise TypeError('cannot inherit frozen dataclass from a non-frozen one')

    class_hash = cls.__dict__.get('__hash__', MISSING)
    has_explicit_hash = not (class_hash is MISSING or (class_hash is None and _own(cls, '__eq__')))

    cls.__dataclass_fields__ = fields
    cls.__dataclass_params__ = _DataclassParams(init, repr, eq, order, unsafe_hash, frozen)
    all_fields = [f for f in fields.values() if f._field_type is _FIELD]

    if init:
        _add(cls, '__init__', _make_init(cls, all_fields, frozen, _has_post_init(cls)))
    if repr:
        _add(cls, '__repr__', _make_repr(tuple([f.name for f in all_fields if f.repr])))
    compare_names = tuple([f.name for f in all_fields if f.compare])
    if eq:
        _add(cls, '__eq__', _make_eq(compare_names))
    if order:
        for name, method in _make_order(compare_names):
            if _add(cls, name, method):
                raise TypeError(f'Cannot overwrite attribute {name} in class {cls.__name__}. '
                                'Consider using functools.total_ordering')
    if frozen:
        setter, deleter = _make_frozen()
        for name, method in (('__setattr__', setter), ('__delattr__', deleter)):
            if _add(cls, name, method):
                raise TypeError(f'Cannot overwrite attribute {name} in class {cls.__name__}')
        cls._pvm_immutable = True

    hash_names = tuple([f.name for f in all_fields
                        if (f.compare if f.hash is None else f.hash)])
    if unsafe_hash:
        if has_explicit_hash:
            raise TypeError(f'Cannot overwrite attribute __hash__ in class {cls.__name__}')
        cls.__hash__ = _make_hash(hash_names)
    elif eq and frozen:
        if not has_explicit_hash:
            cls.__hash__ = _make_hash(hash_names)
    elif eq:
        if not has_explicit_hash:
            cls.__hash__ = None

    if match_args and not _own(cls, '__match_args__'):
        cls.__match_args__ = tuple([f.name for f in all_fields if f.init and not f.kw_only])
    return cls


def dataclass(cls=None, /, *, init=True, repr=True, eq=True, order=False,
              unsafe_hash=False, frozen=False, match_args=True, kw_only=False,
              slots=False, weakref_slot=False):
    if order and not eq:
        raise ValueError('eq must be true if order is true')
    if weakref_slot:
        raise TypeError('dataclass(weakref_slot=True) is not supported in the actor VM')

    def wrap(cls):
        cls = _process_class(cls, init, repr, eq, order, unsafe_hash, frozen,
                             match_args, kw_only)
        if slots:
            cls = _add_slots(cls)
        return cls
    if cls is None:
        return wrap
    return wrap(cls)


def _add_slots(cls):
    """The class remade with ``__slots__`` for its fields (as CPython does:
    a new class; zero-argument ``super()`` in its methods still names the
    old one)."""
    field_names = tuple([f.name for f in cls.__dataclass_fields__.values()
                         if f._field_type is _FIELD])
    inherited = set()
    for base in cls.__mro__[1:-1]:
        for name in base.__dict__.get('__slots__', ()):
            inherited.add(name)
    namespace = {name: value for name, value in cls.__dict__.items()}
    if '__slots__' in namespace:
        raise TypeError(f'{cls.__name__} already specifies __slots__')
    namespace['__slots__'] = tuple([name for name in field_names if name not in inherited])
    for name in field_names:
        namespace.pop(name, None)
    namespace.pop('__dict__', None)
    namespace.pop('__weakref__', None)
    qualname = namespace.get('__qualname__')
    new_cls = _pvm_make_class(cls.__name__, cls.__bases__, namespace)
    if qualname is not None:
        new_cls.__qualname__ = qualname
    return new_cls


def fields(class_or_instance):
    try:
        fields = class_or_instance.__dataclass_fields__
    except AttributeError:
        raise TypeError('must be called with a dataclass type or instance') from None
    return tuple([f for f in fields.values() if f._field_type is _FIELD])


def _has_post_init(cls):
    try:
        cls.__post_init__
    except AttributeError:
        return False
    return True


def _has_fields(cls):
    try:
        cls.__dataclass_fields__
    except AttributeError:
        return False
    return True


def is_dataclass(obj):
    return _has_fields(obj if isinstance(obj, type) else type(obj))


def _is_dataclass_instance(obj):
    return _has_fields(type(obj))


def asdict(obj, *, dict_factory=dict):
    if not _is_dataclass_instance(obj):
        raise TypeError('asdict() should be called on dataclass instances')
    return _asdict_inner(obj, dict_factory)


def _asdict_inner(obj, dict_factory):
    if _is_dataclass_instance(obj):
        return dict_factory([(f.name, _asdict_inner(getattr(obj, f.name), dict_factory))
                             for f in fields(obj)])
    if isinstance(obj, tuple) and hasattr(obj, '_fields'):
        return type(obj)(*[_asdict_inner(v, dict_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)([_asdict_inner(v, dict_factory) for v in obj])
    if isinstance(obj, dict):
        items = [(_asdict_inner(k, dict_factory), _asdict_inner(v, dict_factory))
                 for k, v in obj.items()]
        if hasattr(obj, 'default_factory'):
            result = type(obj)(obj.default_factory)
            result.update(items)
            return result
        return type(obj)(items)
    return obj


def astuple(obj, *, tuple_factory=tuple):
    if not _is_dataclass_instance(obj):
        raise TypeError('astuple() should be called on dataclass instances')
    return _astuple_inner(obj, tuple_factory)


def _astuple_inner(obj, tuple_factory):
    if _is_dataclass_instance(obj):
        return tuple_factory([_astuple_inner(getattr(obj, f.name), tuple_factory)
                              for f in fields(obj)])
    if isinstance(obj, tuple) and hasattr(obj, '_fields'):
        return type(obj)(*[_astuple_inner(v, tuple_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)([_astuple_inner(v, tuple_factory) for v in obj])
    if isinstance(obj, dict):
        items = [(_astuple_inner(k, tuple_factory), _astuple_inner(v, tuple_factory))
                 for k, v in obj.items()]
        if hasattr(obj, 'default_factory'):
            result = type(obj)(obj.default_factory)
            result.update(items)
            return result
        return type(obj)(items)
    return obj


def replace(obj, /, **changes):
    if not _is_dataclass_instance(obj):
        raise TypeError('replace() should be called on dataclass instances')
    for f in type(obj).__dataclass_fields__.values():
        if f._field_type is not _FIELD:
            continue
        if not f.init:
            if f.name in changes:
                raise ValueError(f'field {f.name} is declared with init=False, '
                                 'it cannot be specified with replace()')
            continue
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)
