"""The actor-VM subset of CPython's ``itertools``, in plain Python.

Each tool follows the pure-Python equivalent in the CPython documentation;
arguments are checked and iterators taken when the tool is called, as in
CPython, and values come out lazily.  Every step is metered like actor code.
Left out: ``tee`` objects' ``__copy__``, ``count``/``repeat`` reprs and
``__length_hint__``, pickling.  ``batched`` (3.12) is included.
"""


def count(start=0, step=1):
    return _count(start, step)


def _count(n, step):
    while True:
        yield n
        n += step


def cycle(iterable):
    return _cycle(iter(iterable))


def _cycle(it):
    saved = []
    for element in it:
        yield element
        saved.append(element)
    while saved:
        for element in saved:
            yield element


def repeat(obj, times=None):
    if times is None:
        return _repeat_forever(obj)
    return _repeat(obj, times)


def _repeat_forever(obj):
    while True:
        yield obj


def _repeat(obj, times):
    for _ in range(times):
        yield obj


def _chain(sources):
    for source in sources:
        for element in source:
            yield element


class chain:
    """``chain(*iterables)`` and ``chain.from_iterable(iterables)``."""

    def __init__(self, *iterables):
        self._it = _chain(iterables)

    @classmethod
    def from_iterable(cls, iterables):
        result = cls()
        result._it = _chain(iter(iterables))
        return result

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)


def _as_index(value):
    if isinstance(value, int):
        return value
    index = getattr(type(value), '__index__', None)
    if index is None:
        return None
    return index(value)


_STOP_MESSAGE = 'Stop argument for islice() must be None or an integer: 0 <= x <= sys.maxsize.'
_INDEX_MESSAGE = 'Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.'
_STEP_MESSAGE = 'Step for islice() must be a positive integer or None.'


def islice(iterable, *args):
    if not args:
        raise TypeError('islice expected at least 2 arguments, got 1')
    if len(args) > 3:
        raise TypeError(f'islice expected at most 4 arguments, got {len(args) + 1}')
    if len(args) == 1:
        start, stop, step = None, args[0], None
    else:
        start, stop = args[0], args[1]
        step = args[2] if len(args) == 3 else None
    if stop is not None:
        stop = _as_index(stop)
        if stop is None or stop == -1:
            raise ValueError(_STOP_MESSAGE)
        if stop < 0:
            raise ValueError(_INDEX_MESSAGE)
    if start is None:
        start = 0
    else:
        start = _as_index(start)
        if start is None or start < 0:
            raise ValueError(_INDEX_MESSAGE)
    if step is None:
        step = 1
    else:
        step = _as_index(step)
        if step is None or step < 1:
            raise ValueError(_STEP_MESSAGE)
    return _islice(iter(iterable), start, stop, step)


def _islice(it, nxt, stop, step):
    # mirrors CPython's islice_next: consumes up to ``stop`` at the end
    cnt = 0
    while True:
        while cnt < nxt:
            try:
                next(it)
            except StopIteration:
                return
            cnt += 1
        if stop is not None and cnt >= stop:
            return
        try:
            item = next(it)
        except StopIteration:
            return
        cnt += 1
        nxt += step
        if stop is not None and nxt > stop:
            nxt = stop
        yield item


def accumulate(iterable, func=None, *, initial=None):
    return _accumulate(iter(iterable), func, initial)


def _accumulate(it, func, total):
    if total is None:
        try:
            total = next(it)
        except StopIteration:
            return
    yield total
    for element in it:
        if func is None:
            total = total + element
        else:
            total = func(total, element)
        yield total


def product(*iterables, repeat=1):
    if repeat < 0:
        raise ValueError('repeat argument cannot be negative')
    pools = tuple([tuple(pool) for pool in iterables]) * repeat
    return _product(pools)


def _product(pools):
    n = len(pools)
    for pool in pools:
        if not pool:
            return
    indices = [0] * n
    yield tuple([pool[0] for pool in pools])
    while True:
        i = n - 1
        while i >= 0:
            indices[i] += 1
            if indices[i] < len(pools[i]):
                break
            indices[i] = 0
            i -= 1
        if i < 0:
            return
        yield tuple([pools[j][indices[j]] for j in range(n)])


def permutations(iterable, r=None):
    pool = tuple(iterable)
    n = len(pool)
    if r is None:
        r = n
    elif r < 0:
        raise ValueError('r must be non-negative')
    return _permutations(pool, n, r)


def _permutations(pool, n, r):
    if r > n:
        return
    indices = list(range(n))
    cycles = list(range(n, n - r, -1))
    yield tuple([pool[i] for i in indices[:r]])
    while n:
        for i in reversed(range(r)):
            cycles[i] -= 1
            if cycles[i] == 0:
                indices[i:] = indices[i + 1:] + indices[i:i + 1]
                cycles[i] = n - i
            else:
                j = cycles[i]
                indices[i], indices[-j] = indices[-j], indices[i]
                yield tuple([pool[k] for k in indices[:r]])
                break
        else:
            return


def combinations(iterable, r):
    if r < 0:
        raise ValueError('r must be non-negative')
    return _combinations(tuple(iterable), r)


def _combinations(pool, r):
    n = len(pool)
    if r > n:
        return
    indices = list(range(r))
    yield tuple([pool[i] for i in indices])
    while True:
        for i in reversed(range(r)):
            if indices[i] != i + n - r:
                break
        else:
            return
        indices[i] += 1
        for j in range(i + 1, r):
            indices[j] = indices[j - 1] + 1
        yield tuple([pool[k] for k in indices])


def combinations_with_replacement(iterable, r):
    if r < 0:
        raise ValueError('r must be non-negative')
    return _combinations_with_replacement(tuple(iterable), r)


def _combinations_with_replacement(pool, r):
    n = len(pool)
    if not n and r:
        return
    indices = [0] * r
    yield tuple([pool[i] for i in indices])
    while True:
        for i in reversed(range(r)):
            if indices[i] != n - 1:
                break
        else:
            return
        indices[i:] = [indices[i] + 1] * (r - i)
        yield tuple([pool[k] for k in indices])


class groupby:
    """``groupby(iterable, key=None)``: (key, group iterator) for each run."""

    def __init__(self, iterable, key=None):
        self._keyfunc = key
        self._it = iter(iterable)
        self._has_key = False
        self._has_target = False
        self._has_value = False
        self._tgtkey = None
        self._currkey = None
        self._currvalue = None
        self._generation = 0

    def __iter__(self):
        return self

    def _step(self):
        value = next(self._it)
        key = value if self._keyfunc is None else self._keyfunc(value)
        self._currvalue = value
        self._has_value = True
        self._currkey = key
        self._has_key = True

    def __next__(self):
        # mirrors CPython's groupby_next: skip the rest of the current group
        self._generation += 1
        while True:
            if not self._has_key:
                pass
            elif not self._has_target:
                break
            elif not (self._tgtkey == self._currkey):
                break
            self._step()
        self._tgtkey = self._currkey
        self._has_target = True
        return (self._currkey, self._grouper(self._tgtkey, self._generation))

    def _grouper(self, tgtkey, generation):
        while self._generation == generation:
            if not self._has_value:
                try:
                    self._step()
                except StopIteration:
                    return
            if not (tgtkey == self._currkey):
                return
            value = self._currvalue
            self._currvalue = None
            self._has_value = False
            yield value


def zip_longest(*iterables, fillvalue=None):
    return _zip_longest([iter(it) for it in iterables], fillvalue)


def _zip_longest(iterators, fillvalue):
    active = len(iterators)
    if not active:
        return
    while True:
        values = []
        for i in range(len(iterators)):
            it = iterators[i]
            if it is None:
                values.append(fillvalue)
                continue
            try:
                value = next(it)
            except StopIteration:
                active -= 1
                if not active:
                    return
                iterators[i] = None
                value = fillvalue
            values.append(value)
        yield tuple(values)


def takewhile(predicate, iterable):
    return _takewhile(predicate, iter(iterable))


def _takewhile(predicate, it):
    for x in it:
        if predicate(x):
            yield x
        else:
            return


def dropwhile(predicate, iterable):
    return _dropwhile(predicate, iter(iterable))


def _dropwhile(predicate, it):
    for x in it:
        if not predicate(x):
            yield x
            break
    for x in it:
        yield x


def starmap(function, iterable):
    return _starmap(function, iter(iterable))


def _starmap(function, it):
    for args in it:
        yield function(*args)


def compress(data, selectors):
    return _compress(iter(data), iter(selectors))


def _compress(data, selectors):
    for d, s in zip(data, selectors):
        if s:
            yield d


def filterfalse(predicate, iterable):
    return _filterfalse(predicate, iter(iterable))


def _filterfalse(predicate, it):
    for x in it:
        if predicate is None:
            if not x:
                yield x
        elif not predicate(x):
            yield x


def pairwise(iterable):
    return _pairwise(iter(iterable))


def _pairwise(it):
    try:
        a = next(it)
    except StopIteration:
        return
    for b in it:
        yield a, b
        a = b


def batched(iterable, n):
    if n < 1:
        raise ValueError('n must be at least one')
    return _batched(iter(iterable), n)


def _batched(it, n):
    while True:
        batch = []
        for x in it:
            batch.append(x)
            if len(batch) == n:
                break
        if not batch:
            return
        yield tuple(batch)
        if len(batch) < n:
            return


def tee(iterable, n=2):
    if n < 0:
        raise ValueError('n must be >= 0')
    it = iter(iterable)
    link = [None, None]
    return tuple([_tee(it, link) for _ in range(n)])


def _tee(it, link):
    # ``link`` is [value, next link]; the last link is [None, None] until filled
    while True:
        if link[1] is None:
            try:
                link[0] = next(it)
            except StopIteration:
                return
            link[1] = [None, None]
        value, link = link
        yield value
