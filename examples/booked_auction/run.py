"""An auction close booked for its exact height, in a block whose timer lane
a neighbour floods: the close runs first, on time; the flood carries over.
See README.md."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _chain import connect  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(chain, out=print):
    seller, bidder, neighbour = chain.accounts[0], chain.accounts[1], chain.accounts[2]
    end = chain.height + 6
    quote = chain.quote_timer(end, 80_000, book=True)
    out(f"booking height {end}: bookable={quote['bookable']}, fee {quote['booking_fee']}")
    assert quote["bookable"]
    # First a neighbour queues more timers at `end` than its lane holds
    # (100,000,000 cycles at 553,000 each: 180). An unbooked close
    # scheduled after them would wait behind all 200 and carry over.
    crowd = chain.deploy(HERE / "crowd.py", value=10**20, sender=neighbour)
    chain.call(crowd, "flood", end, 200, sender=neighbour).raise_for_status()
    auction = chain.deploy(HERE / "auction.py", args=(end,), value=10**18, sender=seller)
    chain.call(auction, "bid", 10, sender=bidder).raise_for_status()
    chain.mine(end - chain.height)
    closed_at = chain.storage(auction, "closed_at")
    left = len(chain.timers(actor=crowd))
    out(f"closed at height {closed_at} (booked for {end}); {left} of the flood's 200 fires carried over")
    assert closed_at == end and left > 0
    late = chain.call(auction, "bid", 20, sender=bidder)
    assert not late.ok and "closed" in late.error.message
    chain.mine(2)
    return closed_at


if __name__ == "__main__":
    main(connect(__doc__))
