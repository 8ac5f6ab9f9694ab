"""A price oracle: its owner posts prices at `price:<SYMBOL>`."""

import pvm_host


class Oracle:
    def deploy(self):
        self.storage["owner"] = pvm_host.tx_sender()

    def post(self, symbol, price):
        if pvm_host.caller() != self.storage["owner"]:
            raise PermissionError("only the oracle's owner posts prices")
        self.storage["price:" + symbol] = price

    def price(self, symbol):
        return self.storage.get("price:" + symbol)
