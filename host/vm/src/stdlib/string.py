"""The actor-VM subset of CPython's ``string``: the constants and ``capwords``.

Left out: ``Template`` and ``Formatter`` (they need ``re`` and attribute
lookups from templates).
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
