# closures: closures and decorators - composed pipelines of closures, decorators with arguments, nonlocal counters, functools.
# bench: n = 1500
import functools
import operator


def adder(k):
    return lambda x: x + k


def times(k):
    def multiply(x):
        return x * k
    return multiply


def compose(*fns):
    def composed(x):
        for fn in reversed(fns):
            x = fn(x)
        return x
    return composed


def clamp(lo, hi):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            value = fn(*args, **kwargs)
            if value < lo:
                return lo
            if value > hi:
                return hi
            return value
        return wrapper
    return decorate


def logged(fn):
    def wrapper(log, *args):
        log.append(len(args))
        return fn(*args)
    return wrapper


@clamp(0, 500000)
def poly(x):
    return (3 * x * x + 7 * x - 11) % 1000003


@logged
def mix(a, b, c=1):
    return (a * 31 + b) * c % 65521


def make_counter():
    count = 0

    def bump(step=1):
        nonlocal count
        count += step
        return count
    return bump


def memoize(fn):
    cache = {}

    def wrapper(k):
        if k not in cache:
            cache[k] = fn(k)
        return cache[k]
    return wrapper


@actor
class Actor:
    def run(self, n):
        pipeline = compose(poly, adder(3), times(7), adder(-1))
        bump = make_counter()
        log = []
        total = 0
        for i in range(n):
            total += pipeline(i)
            bump(i % 3)
            total += mix(log, i, total % 97)

        @memoize
        def steps(k):
            s = 0
            while k != 1:
                k = k // 2 if k % 2 == 0 else 3 * k + 1
                s += 1
            return s
        longest = max(range(1, n // 4), key=lambda k: (steps(k), k))
        again = sum(steps(k) for k in range(1, n // 4))
        scale = functools.partial(operator.mul, 3)
        folded = functools.reduce(operator.add, map(scale, range(n)), 0)
        keyed = sorted(range(200), key=lambda v: (v * 7919) % 211)[:5]
        return [total, bump(0), len(log), longest, again, folded, keyed]
