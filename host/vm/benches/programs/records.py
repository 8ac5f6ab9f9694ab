# records: dataclass orders with an enum kind, sorted and searched with bisect (tests/realprog.rs runs it too).
# bench: n = 2000
from dataclasses import dataclass
from enum import Enum
import bisect


class Kind(Enum):
    BUY = 1
    SELL = 2


@dataclass
class Order:
    id: int
    kind: Kind
    price: int
    qty: int


@actor
class Actor:
    def run(self, n):
        orders = [Order(i, Kind.BUY if i % 3 else Kind.SELL, (i * 7919) % 1000, 1 + i % 9) for i in range(n)]
        buys = sorted((o for o in orders if o.kind == Kind.BUY), key=lambda o: (o.price, o.id))
        prices = [o.price for o in buys]
        total = 0
        for o in orders:
            if o.kind == Kind.SELL:
                total += bisect.bisect_left(prices, o.price) * o.qty
        return total
