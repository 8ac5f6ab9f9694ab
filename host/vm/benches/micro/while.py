# while: a counting `while` loop (a block meter per iteration).
# bench: n = 80000


def work(n):
    k = 0
    t = 0
    while k < n:
        k += 1
        t = k
    return t


@actor
class Actor:
    def run(self, n):
        return work(n)
