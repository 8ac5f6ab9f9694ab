"""A monthly subscription on an ARC-20 token, charged by the ARC-21 cron
registry — no keeper. See README.md."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _chain import ACTORS, connect, seconds  # noqa: E402

MONTH = 30 * 86_400
PRICE = 10


def main(chain, out=print):
    customer, merchant = chain.accounts[1], chain.accounts[2]
    token = chain.deploy(ACTORS / "arc20/arc20.py", args=("Dollar", "USD", 0, 1_000, customer.address))
    shop = chain.deploy(ACTORS / "arc21/subscriptions.py")
    out(f"token {token.address}, merchant contract {shop.address}")

    # The customer allows three charges, then subscribes; the call's value
    # funds the cron job that will charge them.
    chain.call(token, "approve", shop.address, 3 * PRICE, sender=customer).raise_for_status()
    r = chain.call(shop, "approveSubscription", token.address, merchant.address, PRICE, MONTH, 3, sender=customer, value=10**16)
    sub = r.raise_for_status().return_value
    (job,) = chain.cron.jobs_of(shop)
    out(f"subscription {sub}: cron job {job['id']} charges every {job['intervalSec']} s, escrow {job['gasEscrow']}")

    start = seconds(chain)
    paid = []
    for month in (1, 2, 3):
        chain.warp(start + month * MONTH + 1)
        paid.append(chain.storage(token, "balance:" + merchant.address))
        out(f"month {month}: merchant holds {paid[-1]} USD")
    assert paid == [PRICE, 2 * PRICE, 3 * PRICE], paid
    assert chain.cron.jobs_of(shop) == [], "all three charges made: the job ended, its escrow refunded"
    out("three charges, then the job ended and its leftover escrow went back to the customer")
    return paid


if __name__ == "__main__":
    main(connect(__doc__))
