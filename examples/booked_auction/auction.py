"""An auction whose close is booked for its exact height (#45).

`deploy(end_height)` books the close with `pvm_host.book_timer`: the block at
`end_height` holds capacity for it, and the close runs at that block's start,
before every other fire — however many other timers crowd the lane, and
whatever the lane basefee. Bids arriving after the close are refused.
"""

import pvm_host


class Auction:
    def deploy(self, end_height):
        self.storage["end"] = end_height
        self.storage["best"] = None
        self.storage["closed_at"] = None
        self.storage["close"] = pvm_host.book_timer(end_height, b"", gas_limit=80_000, handler="close")

    def bid(self, amount):
        if self.storage["closed_at"] is not None:
            raise ValueError(f"the auction closed at height {self.storage['closed_at']}")
        best = self.storage["best"]
        if best is not None and amount <= best[1]:
            raise ValueError(f"bid {amount} does not beat {best[1]}")
        self.storage["best"] = [pvm_host.caller(), amount]

    @pvm_host.timer_handler
    def close(self, payload):
        self.storage["closed_at"] = pvm_host.block_height()
        pvm_host.emit("AuctionClosed", {"height": pvm_host.block_height(), "best": self.storage["best"]})
