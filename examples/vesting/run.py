"""A vesting wallet: a cliff, then a release every interval, pushed by the
wallet's own time timers. See README.md."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _chain import ACTORS, connect, seconds  # noqa: E402

DAY = 86_400
TOTAL = 1_200


def main(chain, out=print):
    owner, beneficiary = chain.accounts[6], chain.accounts[7]
    token = chain.deploy(ACTORS / "arc20/arc20.py", args=("Equity", "EQ", 0, 10 * TOTAL, owner.address), sender=owner)
    start = seconds(chain) + 10
    # A 30-day cliff, 120 days in all, a release every 30 days.
    wallet = chain.deploy(
        ACTORS / "vesting/vesting.py",
        args=(token.address, beneficiary.address, start, 30 * DAY, 120 * DAY, 30 * DAY),
        value=10**17,  # the wallet pays its own timers
        sender=owner,
    )
    chain.call(token, "approve", wallet.address, TOTAL, sender=owner).raise_for_status()
    chain.call(wallet, "fund", TOTAL, sender=owner).raise_for_status()

    released = []
    for month in (1, 2, 3, 4):
        chain.warp(start + month * 30 * DAY)
        released.append(chain.storage(token, "balance:" + beneficiary.address) or 0)
        out(f"day {month * 30}: the beneficiary holds {released[-1]} EQ")
    assert released == [300, 600, 900, 1_200], released
    assert chain.timers(actor=wallet) == [], "fully vested: no timer left"
    return released


if __name__ == "__main__":
    main(connect(__doc__))
