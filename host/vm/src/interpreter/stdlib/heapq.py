"""The actor-VM subset of CPython's ``heapq``: the whole public module, in Python.

heappush, heappop, heapify, heappushpop, heapreplace, nlargest, nsmallest
and merge follow the algorithms of CPython's ``Lib/heapq.py`` (and its C
accelerator, which makes the same comparisons in the same order), so heaps
hold their items in CPython's order and ``<`` is called on the same pairs.
The functions taking a heap check that it is a list and report an empty
one as CPython's C functions do (``IndexError: index out of range``).
Left out: the C functions' detection of a list changed by a comparison
(``RuntimeError: list changed size during iteration``), the argument-count
wording of CPython's C functions, and ``__all__``/``__about__``.
"""


def _check(heap, name, argument):
    if not isinstance(heap, list):
        given = 'None' if heap is None else type(heap).__name__
        raise TypeError(f'{name}() argument{argument} must be list, not {given}')


def heappush(heap, item):
    """Push ``item`` onto ``heap``, maintaining the heap invariant."""
    _check(heap, 'heappush', ' 1')
    heap.append(item)
    _siftdown(heap, 0, len(heap) - 1)


def heappop(heap):
    """Pop the smallest item off ``heap``, maintaining the heap invariant."""
    _check(heap, 'heappop', '')
    if not heap:
        raise IndexError('index out of range')
    lastelt = heap.pop()
    if heap:
        returnitem = heap[0]
        heap[0] = lastelt
        _siftup(heap, 0)
        return returnitem
    return lastelt


def heapreplace(heap, item):
    """Pop and return the smallest item, then push ``item`` (one sift)."""
    _check(heap, 'heapreplace', ' 1')
    if not heap:
        raise IndexError('index out of range')
    returnitem = heap[0]
    heap[0] = item
    _siftup(heap, 0)
    return returnitem


def heappushpop(heap, item):
    """Push ``item`` then pop the smallest item, faster than the two calls."""
    _check(heap, 'heappushpop', ' 1')
    if heap and heap[0] < item:
        returnitem = heap[0]
        heap[0] = item
        _siftup(heap, 0)
        return returnitem
    return item


def heapify(x):
    """Transform list ``x`` into a heap, in place, in O(len(x)) time."""
    _check(x, 'heapify', '')
    i = len(x) // 2 - 1
    while i >= 0:
        _siftup(x, i)
        i -= 1


def _heappop_max(heap):
    """Maxheap version of heappop."""
    _check(heap, '_heappop_max', '')
    if not heap:
        raise IndexError('index out of range')
    lastelt = heap.pop()
    if heap:
        returnitem = heap[0]
        heap[0] = lastelt
        _siftup_max(heap, 0)
        return returnitem
    return lastelt


def _heapreplace_max(heap, item):
    """Maxheap version of heapreplace."""
    _check(heap, '_heapreplace_max', ' 1')
    if not heap:
        raise IndexError('index out of range')
    returnitem = heap[0]
    heap[0] = item
    _siftup_max(heap, 0)
    return returnitem


def _heapify_max(x):
    """Transform list ``x`` into a maxheap, in place."""
    _check(x, '_heapify_max', '')
    i = len(x) // 2 - 1
    while i >= 0:
        _siftup_max(x, i)
        i -= 1


def _siftdown(heap, startpos, pos):
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if newitem < parent:
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def _siftup(heap, pos):
    endpos = len(heap)
    startpos = pos
    newitem = heap[pos]
    childpos = 2 * pos + 1
    while childpos < endpos:
        rightpos = childpos + 1
        if rightpos < endpos and not heap[childpos] < heap[rightpos]:
            childpos = rightpos
        heap[pos] = heap[childpos]
        pos = childpos
        childpos = 2 * pos + 1
    heap[pos] = newitem
    _siftdown(heap, startpos, pos)


def _siftdown_max(heap, startpos, pos):
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if parent < newitem:
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def _siftup_max(heap, pos):
    endpos = len(heap)
    startpos = pos
    newitem = heap[pos]
    childpos = 2 * pos + 1
    while childpos < endpos:
        rightpos = childpos + 1
        if rightpos < endpos and not heap[rightpos] < heap[childpos]:
            childpos = rightpos
        heap[pos] = heap[childpos]
        pos = childpos
        childpos = 2 * pos + 1
    heap[pos] = newitem
    _siftdown_max(heap, startpos, pos)


def merge(*iterables, key=None, reverse=False):
    """Merge sorted inputs into one sorted stream (a generator).

    Like ``sorted(itertools.chain(*iterables), key=key, reverse=reverse)``
    for inputs already sorted that way, without reading them all first;
    equal items come out in the order of their inputs.
    """
    # Each heap entry is [value or key, input number, iterator(, value)]:
    # the input numbers are distinct, so the iterators are never compared.
    h = []
    if reverse:
        heapify_ = _heapify_max
        heappop_ = _heappop_max
        heapreplace_ = _heapreplace_max
        direction = -1
    else:
        heapify_ = heapify
        heappop_ = heappop
        heapreplace_ = heapreplace
        direction = 1

    if key is None:
        order = 0
        for iterable in iterables:
            it = iter(iterable)
            try:
                h.append([next(it), order * direction, it])
            except StopIteration:
                pass
            order += 1
        heapify_(h)
        while len(h) > 1:
            try:
                while True:
                    s = h[0]
                    yield s[0]
                    s[0] = next(s[2])           # StopIteration when exhausted
                    heapreplace_(h, s)
            except StopIteration:
                heappop_(h)                     # drop the exhausted input
        if h:
            s = h[0]
            yield s[0]
            yield from s[2]
        return

    order = 0
    for iterable in iterables:
        it = iter(iterable)
        try:
            value = next(it)
            h.append([key(value), order * direction, it, value])
        except StopIteration:
            pass
        order += 1
    heapify_(h)
    while len(h) > 1:
        try:
            while True:
                s = h[0]
                yield s[3]
                value = next(s[2])
                s[0] = key(value)
                s[3] = value
                heapreplace_(h, s)
        except StopIteration:
            heappop_(h)
    if h:
        s = h[0]
        yield s[3]
        yield from s[2]


class _Missing:
    pass


def nsmallest(n, iterable, key=None):
    """The ``n`` smallest items: ``sorted(iterable, key=key)[:n]``."""
    if n == 1:
        result = min(iter(iterable), default=_Missing, key=key)
        return [] if result is _Missing else [result]
    try:
        size = len(iterable)
    except (TypeError, AttributeError):
        pass
    else:
        if n >= size:
            return sorted(iterable, key=key)[:n]

    it = iter(iterable)
    if key is None:
        result = [(elem, i) for i, elem in zip(range(n), it)]
        if not result:
            return result
        _heapify_max(result)
        top = result[0][0]
        order = n
        for elem in it:
            if elem < top:
                _heapreplace_max(result, (elem, order))
                top = result[0][0]
                order += 1
        result.sort()
        return [entry[0] for entry in result]

    result = [(key(elem), i, elem) for i, elem in zip(range(n), it)]
    if not result:
        return result
    _heapify_max(result)
    top = result[0][0]
    order = n
    for elem in it:
        k = key(elem)
        if k < top:
            _heapreplace_max(result, (k, order, elem))
            top = result[0][0]
            order += 1
    result.sort()
    return [entry[2] for entry in result]


def nlargest(n, iterable, key=None):
    """The ``n`` largest items: ``sorted(iterable, key=key, reverse=True)[:n]``."""
    if n == 1:
        result = max(iter(iterable), default=_Missing, key=key)
        return [] if result is _Missing else [result]
    try:
        size = len(iterable)
    except (TypeError, AttributeError):
        pass
    else:
        if n >= size:
            return sorted(iterable, key=key, reverse=True)[:n]

    it = iter(iterable)
    if key is None:
        result = [(elem, i) for i, elem in zip(range(0, -n, -1), it)]
        if not result:
            return result
        heapify(result)
        top = result[0][0]
        order = -n
        for elem in it:
            if top < elem:
                heapreplace(result, (elem, order))
                top = result[0][0]
                order -= 1
        result.sort(reverse=True)
        return [entry[0] for entry in result]

    result = [(key(elem), i, elem) for i, elem in zip(range(0, -n, -1), it)]
    if not result:
        return result
    heapify(result)
    top = result[0][0]
    order = -n
    for elem in it:
        k = key(elem)
        if top < k:
            heapreplace(result, (k, order, elem))
            top = result[0][0]
            order -= 1
    result.sort(reverse=True)
    return [entry[2] for entry in result]
