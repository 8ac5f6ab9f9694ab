# intstr: four `int("123")` per iteration (the `int` stand-in).
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
        t = int(s2)
        t = int(s2)
        t = int(s2)
        t = int(s2)
    return 1


@actor
class Actor:
    def run(self, n):
        return work(n)
