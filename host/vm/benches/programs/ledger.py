# ledger: balances in a dict, transfers that raise and catch ValueError (tests/realprog.rs runs it too).
# bench: n = 5000


class Ledger:
    def __init__(self):
        self.balances = {}
        self.history = []

    def mint(self, who, amount):
        self.balances[who] = self.balances.get(who, 0) + amount

    def transfer(self, src, dst, amount):
        if self.balances.get(src, 0) < amount:
            raise ValueError("insufficient funds: " + src)
        self.balances[src] -= amount
        self.balances[dst] = self.balances.get(dst, 0) + amount
        self.history.append((src, dst, amount))


@actor
class Actor:
    def run(self, n):
        led = Ledger()
        names = ["acct" + str(i) for i in range(50)]
        for name in names:
            led.mint(name, 1000)
        failed = 0
        for i in range(n):
            try:
                led.transfer(names[i % 50], names[(i * 7) % 50], (i * 13) % 300)
            except ValueError:
                failed += 1
        return failed + len(led.history) + sum(led.balances.values())
