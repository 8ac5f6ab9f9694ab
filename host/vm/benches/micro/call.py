# call: four calls of a one-line function per iteration (a block meter at each entry).
# bench: n = 20000


class O:
    def __init__(self):
        self.v = 1

    def m(self):
        return 1


def f(x):
    return x


def work(n):
    xs = [1, 2, 3]
    d = {}
    o = O()
    ss = ["a", "b", "c"]
    s = "a;b;c"
    s2 = "123"
    t = 0
    for i in range(n):
        t = f(i)
        t = f(i)
        t = f(i)
        t = f(i)
    return 1


@actor
class Actor:
    def run(self, n):
        return work(n)
