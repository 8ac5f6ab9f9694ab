"""The actor-VM ``collections.abc``: the abstract collection types, as the
forms ``typing`` defines for them (usable in annotations, as ``typing``'s
generics and in ``isinstance`` checks).  Left out: registering classes
(``register``), ``__subclasshook__`` and the mixin methods of the ABCs
(subclass ``dict``, ``list`` or ``set`` instead); ``import collections.abc``
itself — write ``from collections.abc import Mapping``."""

from typing import (Callable, Collection, Container, Generator, Hashable,
                    Iterable, Iterator, Mapping, MutableMapping, MutableSequence,
                    MutableSet, Reversible, Sequence, Sized)
from typing import AbstractSet as Set
