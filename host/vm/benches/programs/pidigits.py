# pidigits: big-int arithmetic, Gibbons' streaming spigot for the digits of pi and math.isqrt for those of sqrt(2).
# bench: n = 600
import math


def pi_digits(count):
    digits = []
    q, r, t, k, m, x = 1, 0, 1, 1, 3, 3
    while len(digits) < count:
        if 4 * q + r - t < m * t:
            digits.append(m)
            q, r, m = 10 * q, 10 * (r - m * t), (10 * (3 * q + r)) // t - 10 * m
        else:
            q, r, t, k, m, x = q * k, (2 * q + r) * x, t * x, k + 1, (q * (7 * k + 2) + r * x) // (t * x), x + 2
    return digits


def sqrt2_digits(count):
    root = math.isqrt(2 * 10 ** (2 * count))
    return str(root)


@actor
class Actor:
    def run(self, n):
        digits = pi_digits(n)
        text = "".join(str(d) for d in digits)
        root = sqrt2_digits(4 * n)
        return [text[:20] + "..." + text[-20:], sum(digits), root[-20:], sum(int(c) for c in root)]
