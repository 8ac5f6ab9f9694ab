"""The actor-VM subset of CPython's ``enum``.

Enum, IntEnum, StrEnum, Flag, IntFlag, auto and unique, with CPython's member
lookup, iteration order, aliases, reprs and error messages.  Members are
created once, when the class is made, and are immutable afterwards (CPython
lets you set new attributes on a member; here that raises AttributeError).
Flag combinations (``A | B``) are built on demand and not cached, so they
compare equal but are not identical.  Left out: the functional API
(``Enum('Color', 'RED GREEN')``), ``_missing_``/``_ignore_``/``_order_``,
custom ``__new__`` on enum classes, Flag boundaries (Flag rejects unknown bits,
IntFlag keeps them), ``member``/``nonmember``/``verify``/``global_enum``,
members named ``name`` or ``value``, and pickling support.
"""


def _is_dunder(name):
    return (len(name) > 4 and name[:2] == '__' and name[-2:] == '__'
            and name[2] != '_' and name[-3] != '_')


def _is_sunder(name):
    return (len(name) > 2 and name[0] == '_' and name[-1] == '_'
            and name[1] != '_' and name[-2] != '_')


def _is_private(class_name, name):
    prefix = '_' + class_name + '__'
    return (len(name) > len(prefix) and name.startswith(prefix)
            and name[len(prefix)] != '_' and not name.endswith('__'))


def _is_descriptor(obj):
    for klass in type(obj).__mro__:
        if '__get__' in klass.__dict__ or '__set__' in klass.__dict__ or '__delete__' in klass.__dict__:
            return True
    return False


def _is_single_bit(value):
    return value > 0 and value & (value - 1) == 0


class _AutoNull:
    pass


class auto:
    """Placeholder value: the enum class picks the next value."""

    def __init__(self, value=_AutoNull):
        self.value = value

    def __repr__(self):
        return f'auto({self.value!r})'


def _data_type(bases):
    """The mixed-in data type (int, str, …) the members are made from."""
    for chain in bases:
        candidate = None
        for base in chain.__mro__:
            if base is object:
                continue
            if isinstance(base, EnumType):
                if base._member_type_ is not object:
                    return base._member_type_
                break
            if '__new__' in base.__dict__:
                return candidate or base
            candidate = candidate or base
    return object


def _defined_by(enum_class, name, enums_only):
    """The first class of the MRO defining ``name`` (only enum classes if asked)."""
    for klass in enum_class.__mro__:
        if name in klass.__dict__ and (not enums_only or isinstance(klass, EnumType)):
            return klass
    return None


def _last_enum(bases):
    for base in reversed(bases):
        if isinstance(base, EnumType):
            return base
    return None


class EnumType(type):
    """Metaclass of enums: turns the public class attributes into members."""

    def __new__(metacls, name, bases, classdict, **kwargs):
        base_enum = _last_enum(bases)
        if base_enum is not None:
            for chain in bases:
                for base in chain.__mro__:
                    if isinstance(base, EnumType) and base._member_names_:
                        raise TypeError(f'<enum {name!r}> cannot extend {base!r}')
        member_type = _data_type(bases)
        names = []
        values = []
        body = {}
        for key in classdict:
            value = classdict[key]
            if (_is_dunder(key) or _is_sunder(key) or _is_private(name, key) or key.startswith('_pvm')
                    or _is_descriptor(value) or isinstance(value, type) or base_enum is None):
                body[key] = value
            else:
                names.append(key)
                values.append(value)
        body['_pvm_sealed'] = False
        body['_member_names_'] = []
        body['_member_map_'] = {}
        body['_value2member_map_'] = {}
        body['_member_type_'] = member_type
        enum_class = super().__new__(metacls, name, bases, body, **kwargs)
        if member_type is not object:
            # the data type's repr/str/format must not hide the enum's
            for attr in ('__repr__', '__str__', '__format__', '__reduce_ex__'):
                owner = _defined_by(enum_class, attr, False)
                if attr not in classdict and not isinstance(owner, EnumType):
                    enum_owner = _defined_by(enum_class, attr, True)
                    _pvm_set_class_attr(enum_class, attr, enum_owner.__dict__[attr])
        flag_mask = 0
        singles_mask = 0
        is_flag = enum_class._pvm_flag
        last_values = []
        index = 0
        while index < len(names):
            member_name = names[index]
            value = values[index]
            index += 1
            if isinstance(value, auto):
                if value.value is _AutoNull:
                    value.value = enum_class._generate_next_value_(
                        member_name, 1, len(last_values), last_values[:])
                value = value.value
            last_values.append(value)
            member = _make_member(enum_class, member_type, member_name, value)
            value = member._value_
            if is_flag:
                flag_mask |= value
                if _is_single_bit(value):
                    singles_mask |= value
            canonical = _lookup(enum_class, value)
            if canonical is None:
                if not is_flag or _is_single_bit(value):
                    enum_class._member_names_.append(member_name)
                try:
                    enum_class._value2member_map_.setdefault(value, member)
                except TypeError:
                    pass
            else:
                member = canonical
            enum_class._member_map_[member_name] = member
            _pvm_set_class_attr(enum_class, member_name, member)
        if is_flag:
            _pvm_set_class_attr(enum_class, '_flag_mask_', flag_mask)
            _pvm_set_class_attr(enum_class, '_singles_mask_', singles_mask)
            by_value = [m._value_ for m in enum_class]
            _pvm_set_class_attr(enum_class, '_pvm_by_definition', by_value != sorted(by_value))
        _pvm_set_class_attr(enum_class, '_pvm_sealed', True)
        return enum_class

    def __call__(cls, value):
        if isinstance(value, cls):
            return value
        member = _lookup(cls, value)
        if member is not None:
            return member
        if not cls._member_map_:
            raise TypeError(f'{cls!r} has no members defined')
        if cls._pvm_flag:
            member = _flag_missing(cls, value)
            if member is not None:
                return member
        raise ValueError(f'{value!r} is not a valid {cls.__qualname__}')

    def __bool__(cls):
        return True

    def __contains__(cls, value):
        if isinstance(value, cls):
            return True
        return _lookup(cls, value) is not None

    def __getitem__(cls, name):
        return cls._member_map_[name]

    def __iter__(cls):
        return iter([cls._member_map_[name] for name in cls._member_names_])

    def __reversed__(cls):
        return iter([cls._member_map_[name] for name in reversed(cls._member_names_)])

    def __len__(cls):
        return len(cls._member_names_)

    @property
    def __members__(cls):
        return dict(cls._member_map_)

    def __repr__(cls):
        if cls._pvm_flag:
            return f'<flag {cls.__name__!r}>'
        return f'<enum {cls.__name__!r}>'

    def __setattr__(cls, name, value):
        if name in cls._member_map_:
            raise AttributeError(f'cannot reassign member {name!r}')
        _pvm_set_class_attr(cls, name, value)

    def __delattr__(cls, name):
        if name in cls._member_map_:
            raise AttributeError(f'{cls.__name__!r} cannot delete member {name!r}.')
        _pvm_del_class_attr(cls, name)


EnumMeta = EnumType


def _lookup(cls, value):
    try:
        return cls._value2member_map_.get(value)
    except TypeError:
        for member in cls._member_map_.values():
            if member._value_ == value:
                return member
    return None


def _make_member(enum_class, member_type, name, value):
    args = value if isinstance(value, tuple) else (value,)
    new_owner = _defined_by(enum_class, '__new__', True)
    if member_type is object and new_owner is None:
        member = object.__new__(enum_class)
        _pvm_object_setattr(member, '_value_', value)
    else:
        if member_type is not object and issubclass(member_type, tuple):
            args = (args,)
        if new_owner is None:
            member = member_type.__new__(enum_class, *args)
        else:
            member = new_owner.__new__(enum_class, *args)
        try:
            object.__getattribute__(member, '_value_')
        except AttributeError:
            if member_type is object:
                _pvm_object_setattr(member, '_value_', value)
            else:
                _pvm_object_setattr(member, '_value_', member_type(*args))
    _pvm_object_setattr(member, '_name_', name)
    # __init__ of the enum classes (and mixins), never the data type's
    skip = member_type.__mro__
    for klass in enum_class.__mro__:
        if '__init__' in klass.__dict__ and not _is_in(skip, klass):
            klass.__dict__['__init__'](member, *args)
            break
    return member


def _is_in(items, item):
    for other in items:
        if other is item:
            return True
    return False


class Enum(metaclass=EnumType):
    """Base class of enumerations: ``class Color(Enum): RED = 1``."""

    _pvm_immutable = True
    _pvm_flag = False

    def __init__(self, *args, **kwargs):
        pass

    def __setattr__(self, name, value):
        if type(self)._pvm_sealed:
            raise AttributeError(f'cannot set attribute {name!r} of enum member {self!r}')
        _pvm_object_setattr(self, name, value)

    def __delattr__(self, name):
        raise AttributeError(f'cannot delete attribute {name!r} of enum member {self!r}')

    @staticmethod
    def _generate_next_value_(name, start, count, last_values):
        for value in reversed(last_values):
            if isinstance(value, int):
                return value + 1
        return start

    def __repr__(self):
        return f'<{type(self).__name__}.{self._name_}: {self._value_!r}>'

    def __str__(self):
        return f'{type(self).__name__}.{self._name_}'

    def __format__(self, format_spec):
        return str.__format__(str(self), format_spec)

    def __hash__(self):
        return self._name_.__hash__()

    def __reduce_ex__(self, proto):
        return type(self), (self._value_,)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    @property
    def name(self):
        """The name of the Enum member."""
        return self._name_

    @property
    def value(self):
        """The value of the Enum member."""
        return self._value_


class ReprEnum(Enum):
    """Only changes the repr(), leaving str() and format() to the mixed-in type."""


class IntEnum(int, ReprEnum):
    """Enum where members are also (and must be) ints."""

    __str__ = int.__repr__
    __format__ = int.__format__


class StrEnum(str, ReprEnum):
    """Enum where members are also (and must be) strings."""

    __str__ = str.__str__
    __format__ = str.__format__

    def __new__(cls, *values):
        if len(values) == 1 and not isinstance(values[0], str):
            raise TypeError(f'{values[0]!r} is not a string')
        value = str(*values)
        member = str.__new__(cls, value)
        _pvm_object_setattr(member, '_value_', value)
        return member

    @staticmethod
    def _generate_next_value_(name, start, count, last_values):
        return name.lower()


def _flag_missing(cls, value):
    """A combination of the canonical flags in ``value`` (built, not cached)."""
    if not isinstance(value, int):
        return None
    singles = cls._singles_mask_
    flag_mask = cls._flag_mask_
    all_bits = (1 << flag_mask.bit_length()) - 1
    keep = cls._member_type_ is not object
    if value < 0:
        if not keep and value < ~all_bits:
            return None
        value = all_bits + 1 + value
    if value & ~flag_mask and not keep:
        return None
    members = _flag_members(cls, value & singles)
    covered = 0
    for member in members:
        covered |= member._value_
    rest = value & ~singles
    if rest:
        for member in cls._member_map_.values():
            mv = member._value_
            if mv and mv & rest == mv and not _contains_member(members, member):
                members.append(member)
                covered |= mv
    if members:
        name = '|'.join([m._name_ for m in members])
        unknown = value & ~covered
        if unknown:
            name = name + '|' + repr(unknown)
    else:
        name = None
    if keep:
        pseudo = cls._member_type_.__new__(cls, value)
    else:
        pseudo = object.__new__(cls)
    _pvm_object_setattr(pseudo, '_value_', value)
    _pvm_object_setattr(pseudo, '_name_', name)
    return pseudo


def _contains_member(members, member):
    for other in members:
        if other is member:
            return True
    return False


def _flag_members(cls, value):
    """Canonical members whose bit is in ``value``, by value or definition order."""
    if cls._pvm_by_definition:
        return [m for m in cls if m._value_ & value]
    members = []
    bit = 1
    while bit <= value:
        if value & bit:
            members.append(cls._value2member_map_[bit])
        bit <<= 1
    return members


class Flag(Enum):
    """Support for bit flags: members combine with ``|``, ``&``, ``^`` and ``~``."""

    _pvm_flag = True
    _flag_mask_ = 0
    _singles_mask_ = 0
    _pvm_by_definition = False

    @staticmethod
    def _generate_next_value_(name, start, count, last_values):
        if not count:
            return start
        return 1 << max(last_values).bit_length()

    def __repr__(self):
        if self._name_ is None:
            return f'<{type(self).__name__}: {self._value_!r}>'
        return f'<{type(self).__name__}.{self._name_}: {self._value_!r}>'

    def __str__(self):
        if self._name_ is None:
            return f'{type(self).__name__}({self._value_!r})'
        return f'{type(self).__name__}.{self._name_}'

    def __eq__(self, other):
        if type(other) is type(self):
            return self._value_ == other._value_
        return NotImplemented

    def __hash__(self):
        return self._value_.__hash__()

    def __bool__(self):
        return bool(self._value_)

    def __contains__(self, other):
        if not isinstance(other, type(self)):
            raise TypeError(f"unsupported operand type(s) for 'in': "
                            f"{type(other).__qualname__!r} and {type(self).__qualname__!r}")
        return other._value_ & self._value_ == other._value_

    def __iter__(self):
        return iter(_flag_members(type(self), self._value_ & type(self)._singles_mask_))

    def __len__(self):
        return self._value_.bit_count()

    def _other_value(self, other):
        if isinstance(other, type(self)):
            return other._value_
        if self._member_type_ is not object and isinstance(other, self._member_type_):
            return other
        return None

    def __or__(self, other):
        value = self._other_value(other)
        if value is None:
            return NotImplemented
        return type(self)(self._value_ | value)

    def __and__(self, other):
        value = self._other_value(other)
        if value is None:
            return NotImplemented
        return type(self)(self._value_ & value)

    def __xor__(self, other):
        value = self._other_value(other)
        if value is None:
            return NotImplemented
        return type(self)(self._value_ ^ value)

    def __invert__(self):
        return type(self)(type(self)._singles_mask_ & ~self._value_)

    __ror__ = __or__
    __rand__ = __and__
    __rxor__ = __xor__


class IntFlag(int, ReprEnum, Flag):
    """Flags that are also ints; unknown bits are kept."""

    __str__ = int.__repr__
    __format__ = int.__format__
    __eq__ = int.__eq__
    __hash__ = int.__hash__
    __or__ = Flag.__or__
    __and__ = Flag.__and__
    __xor__ = Flag.__xor__
    __ror__ = Flag.__ror__
    __rand__ = Flag.__rand__
    __rxor__ = Flag.__rxor__
    __invert__ = Flag.__invert__


def unique(enumeration):
    """Class decorator: raise ValueError if any value has an alias."""
    duplicates = []
    for name in enumeration._member_map_:
        member = enumeration._member_map_[name]
        if name != member._name_:
            duplicates.append((name, member._name_))
    if duplicates:
        details = ', '.join([f'{alias} -> {name}' for alias, name in duplicates])
        raise ValueError(f'duplicate values found in {enumeration!r}: {details}')
    return enumeration
