"""The actor-VM subset of CPython's ``string``: the constants, ``capwords``
and ``Template``.

``Template`` is CPython 3.11's, with the placeholder syntax matched by a
scanner instead of ``re``: ``$$``, ``$identifier`` and ``${identifier}``
(identifiers are ASCII ``[_a-zA-Z][_a-zA-Z0-9]*``), ``substitute`` (KeyError
for a missing name, ``ValueError: Invalid placeholder in string: line N,
col M``), ``safe_substitute``, ``get_identifiers`` and ``is_valid``.
Subclasses may set ``delimiter`` (any non-empty string; with the
IGNORECASE bit of ``flags`` set, as by default, a delimiter with letters
matches them in either case, compared with ``str.lower()`` one character at
a time, where ``re`` also takes a few look-alikes such as ``ſ`` for ``s``)
and ``flags`` (0 or ``re.IGNORECASE``'s value 2: without it,
identifiers are lower-case ASCII only).  Left out: ``Formatter``;
``Template.pattern`` (there is no compiled pattern) and subclasses that set
``pattern``, ``idpattern`` or ``braceidpattern`` to anything but the
defaults (their methods raise NotImplementedError: the VM has no ``re``);
an empty ``delimiter`` (ValueError); a class's ``delimiter`` is read when a
method runs, not fixed when the class is made.
"""

whitespace = ' \t\n\r\x0b\x0c'
ascii_lowercase = 'abcdefghijklmnopqrstuvwxyz'
ascii_uppercase = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
ascii_letters = ascii_lowercase + ascii_uppercase
digits = '0123456789'
hexdigits = digits + 'abcdef' + 'ABCDEF'
octdigits = '01234567'
punctuation = r"""!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"""
printable = digits + ascii_letters + punctuation + whitespace


def capwords(s, sep=None):
    """Split ``s`` on ``sep``, capitalize each word, join with ``sep`` (or a space)."""
    return (sep or ' ').join([word.capitalize() for word in s.split(sep)])


# ---- Template ---------------------------------------------------------------

_IDPATTERN = r'(?a:[_a-z][_a-z0-9]*)'
_IGNORECASE = 2
_ID_START = frozenset('_' + ascii_letters)
_ID_CHARS = frozenset('_' + ascii_letters + digits)
_ID_START_LOWER = frozenset('_' + ascii_lowercase)
_ID_CHARS_LOWER = frozenset('_' + ascii_lowercase + digits)

# the kinds of placeholder
_ESCAPED = 0
_NAMED = 1
_INVALID = 2


class _NoMapping:
    pass


def _delimiter_at(text, delimiter, index, folded):
    if not folded:
        return text.startswith(delimiter, index)
    size = len(delimiter)
    if index + size > len(text):
        return False
    k = 0
    while k < size:
        if text[index + k].lower() != delimiter[k].lower():
            return False
        k += 1
    return True


def _find_delimiter(text, delimiter, start, folded):
    if not folded:
        return text.find(delimiter, start)
    last = len(text) - len(delimiter)
    index = start
    while index <= last:
        if _delimiter_at(text, delimiter, index, True):
            return index
        index += 1
    return -1


def _identifier_end(text, index, ignorecase):
    """The end of the identifier starting at ``index`` (``index``: none there)."""
    size = len(text)
    if index >= size:
        return index
    if ignorecase:
        first, rest = _ID_START, _ID_CHARS
    else:
        first, rest = _ID_START_LOWER, _ID_CHARS_LOWER
    if text[index] not in first:
        return index
    index += 1
    while index < size and text[index] in rest:
        index += 1
    return index


def _placeholders(cls, template):
    """Every placeholder of ``template``, left to right, as ``(start, end,
    kind, name or the invalid position)``: what ``cls.pattern.finditer``
    finds in CPython."""
    if not isinstance(template, str):
        if isinstance(template, (bytes, bytearray)):
            raise TypeError('cannot use a string pattern on a bytes-like object')
        raise TypeError(f"expected string or bytes-like object, got '{type(template).__name__}'")
    if (cls.idpattern != _IDPATTERN
            or (cls.braceidpattern is not None and cls.braceidpattern != _IDPATTERN)
            or getattr(cls, 'pattern', None) is not None):
        raise NotImplementedError(
            'Template subclasses may set delimiter and flags only: custom pattern, '
            'idpattern and braceidpattern need re, which the VM does not have')
    delimiter = cls.delimiter
    if not isinstance(delimiter, str) or not delimiter:
        raise ValueError('Template.delimiter must be a non-empty string')
    ignorecase = cls.flags & _IGNORECASE
    folded = ignorecase and delimiter.lower() != delimiter.upper()
    width = len(delimiter)
    size = len(template)
    found = []
    position = 0
    while True:
        start = _find_delimiter(template, delimiter, position, folded)
        if start < 0:
            return found
        after = start + width
        if _delimiter_at(template, delimiter, after, folded):
            position = after + width
            found.append((start, position, _ESCAPED, None))
            continue
        end = _identifier_end(template, after, ignorecase)
        if end > after:
            found.append((start, end, _NAMED, template[after:end]))
            position = end
            continue
        if after < size and template[after] == '{':
            end = _identifier_end(template, after + 1, ignorecase)
            if end > after + 1 and end < size and template[end] == '}':
                found.append((start, end + 1, _NAMED, template[after + 1:end]))
                position = end + 1
                continue
        found.append((start, after, _INVALID, after))
        position = after


def _lookup(mapping, kws, name):
    if kws is None:
        return mapping[name]
    # CPython looks in ChainMap(kws, mapping)
    try:
        return kws[name]
    except KeyError:
        pass
    try:
        return mapping[name]
    except KeyError:
        pass
    raise KeyError(name)


class Template:
    """A string class for supporting $-substitutions."""

    delimiter = '$'
    idpattern = _IDPATTERN
    braceidpattern = None
    flags = _IGNORECASE

    def __init__(self, template):
        self.template = template

    def _invalid(self, index):
        lines = self.template[:index].splitlines(keepends=True)
        if not lines:
            colno = 1
            lineno = 1
        else:
            colno = index - len(''.join(lines[:-1]))
            lineno = len(lines)
        raise ValueError(f'Invalid placeholder in string: line {lineno}, col {colno}')

    def substitute(self, mapping=_NoMapping, /, **kws):
        if mapping is _NoMapping:
            mapping = kws
            kws = None
        elif not kws:
            kws = None
        template = self.template
        pieces = []
        position = 0
        for start, end, kind, value in _placeholders(type(self), template):
            pieces.append(template[position:start])
            if kind == _NAMED:
                pieces.append(str(_lookup(mapping, kws, value)))
            elif kind == _ESCAPED:
                pieces.append(self.delimiter)
            else:
                self._invalid(value)
            position = end
        pieces.append(template[position:])
        return ''.join(pieces)

    def safe_substitute(self, mapping=_NoMapping, /, **kws):
        if mapping is _NoMapping:
            mapping = kws
            kws = None
        elif not kws:
            kws = None
        template = self.template
        pieces = []
        position = 0
        for start, end, kind, value in _placeholders(type(self), template):
            pieces.append(template[position:start])
            if kind == _NAMED:
                try:
                    pieces.append(str(_lookup(mapping, kws, value)))
                except KeyError:
                    pieces.append(template[start:end])
            elif kind == _ESCAPED:
                pieces.append(self.delimiter)
            else:
                pieces.append(template[start:end])
            position = end
        pieces.append(template[position:])
        return ''.join(pieces)

    def is_valid(self):
        for placeholder in _placeholders(type(self), self.template):
            if placeholder[2] == _INVALID:
                return False
        return True

    def get_identifiers(self):
        ids = []
        for placeholder in _placeholders(type(self), self.template):
            if placeholder[2] == _NAMED and placeholder[3] not in ids:
                ids.append(placeholder[3])
        return ids
