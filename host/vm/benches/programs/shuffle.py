# shuffle: a Fisher-Yates shuffle driven by an LCG, then slicing into chunks (tests/realprog.rs runs it too).
# bench: n = 20000


@actor
class Actor:
    def run(self, n):
        xs = list(range(n))
        seed = 12345
        for i in range(n - 1, 0, -1):
            seed = (seed * 1103515245 + 12345) % 2147483648
            j = seed % (i + 1)
            xs[i], xs[j] = xs[j], xs[i]
        chunks = [xs[k:k + 10] for k in range(0, n, 10)]
        return sum(max(c) - min(c) for c in chunks) + len(" ".join(str(x) for x in xs[:100]))
