# guarded: four `t = a - b` per iteration, `a` and `b` ints from the caller (each goes through the operator guard).
# bench: n = 20000


def work(n, a, b):
    t = 0
    for i in range(n):
        t = a - b
        t = a - b
        t = a - b
        t = a - b
    return t


@actor
class Actor:
    def run(self, n):
        return work(n, 7, 3)
