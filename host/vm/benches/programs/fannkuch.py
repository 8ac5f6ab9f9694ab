# fannkuch: the benchmarks-game fannkuch-redux kernel, permutations flipped by slice reversal.
# bench: n = 7


def fannkuch(n):
    max_flips = 0
    sign = True
    checksum = 0
    perm1 = list(range(n))
    count = perm1[:]
    rxrange = range(2, n - 1)
    nm = n - 1
    while True:
        k = perm1[0]
        if k:
            perm = perm1[:]
            flips = 1
            kk = perm[k]
            while kk:
                perm[:k + 1] = perm[k::-1]
                flips += 1
                k = kk
                kk = perm[kk]
            if max_flips < flips:
                max_flips = flips
            checksum += flips if sign else -flips
        if sign:
            perm1[0], perm1[1] = perm1[1], perm1[0]
            sign = False
        else:
            perm1[1], perm1[2] = perm1[2], perm1[1]
            sign = True
            for r in rxrange:
                if count[r]:
                    break
                count[r] = r
                perm0 = perm1[0]
                perm1[:r + 1] = perm1[1:r + 2]
                perm1[r + 1] = perm0
            else:
                r = nm
                if not count[r]:
                    return checksum, max_flips
            count[r] -= 1


@actor
class Actor:
    def run(self, n):
        return list(fannkuch(n))
