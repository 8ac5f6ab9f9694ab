"""A toy lending market that liquidates under-collateralised positions by
itself: it watches the oracle's price key, so every block that changes the
price wakes it (a state trigger) — no keeper bot.

A position is `collateral` units of ETH against `debt` dollars; it is
liquidated when collateral × price < debt × ratio / 100."""

import pvm_host


class Lending:
    def deploy(self, oracle, ratio):
        self.storage["oracle"] = oracle
        self.storage["ratio"] = ratio
        self.storage["owner"] = pvm_host.tx_sender()
        self.storage["watch"] = pvm_host.watch(["price:ETH"], actor=oracle, handler="on_price", gas_limit=200_000)

    def borrow(self, collateral, debt):
        borrower = pvm_host.caller()
        self.storage["position:" + borrower] = {"collateral": collateral, "debt": debt}

    @pvm_host.timer_handler
    def on_price(self, payload):
        price = pvm_host.call(self.storage["oracle"], "price", "ETH")
        liquidated = []
        for key in self.storage.keys(prefix="position:"):
            position = self.storage[key]
            if position["collateral"] * price * 100 < position["debt"] * self.storage["ratio"]:
                del self.storage[key]
                liquidated.append(key[len("position:"):])
                pvm_host.emit("Liquidated", {"borrower": key[len("position:"):], "price": price})
        self.storage["last_price"] = price
