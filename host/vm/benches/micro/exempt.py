# exempt: the same loop as guarded with `t = a - 3` (a literal operand: no guard).
# bench: n = 20000


def work(n, a, b):
    t = 0
    for i in range(n):
        t = a - 3
        t = a - 3
        t = a - 3
        t = a - 3
    return t


@actor
class Actor:
    def run(self, n):
        return work(n, 7, 3)
