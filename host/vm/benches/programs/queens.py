# queens: all n-queens solutions counted through a recursive generator (tests/realprog.rs runs it too).
# bench: n = 8


def solve(n, row, cols, d1, d2):
    if row == n:
        yield 1
        return
    for c in range(n):
        if c in cols or (row - c) in d1 or (row + c) in d2:
            continue
        cols.add(c)
        d1.add(row - c)
        d2.add(row + c)
        yield from solve(n, row + 1, cols, d1, d2)
        cols.remove(c)
        d1.remove(row - c)
        d2.remove(row + c)


@actor
class Actor:
    def run(self, n):
        return sum(solve(n, 0, set(), set(), set()))
