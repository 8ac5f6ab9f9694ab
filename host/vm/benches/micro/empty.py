# empty: a `for` loop over a range with one assignment (an item drawn through `_pvm_iter`).
# bench: n = 20000


def work(n):
    t = 0
    for i in range(n):
        t = i
    return 1


@actor
class Actor:
    def run(self, n):
        return work(n)
