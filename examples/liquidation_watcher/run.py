"""A keeper-free liquidation watcher: a lending market watches its oracle's
price key and liquidates in the block after a price drop. See README.md."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _chain import connect  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(chain, out=print):
    owner, safe, risky = chain.accounts[0], chain.accounts[8], chain.accounts[9]
    oracle = chain.deploy(HERE / "oracle.py", sender=owner)
    chain.call(oracle, "post", "ETH", 3_000, sender=owner).raise_for_status()
    # Positions must stay above 150 % collateral.
    market = chain.deploy(HERE / "lending.py", args=(oracle.address, 150), value=10**17, sender=owner)
    chain.call(market, "borrow", 10, 10_000, sender=safe).raise_for_status()   # 30,000 against 10,000
    chain.call(market, "borrow", 10, 18_000, sender=risky).raise_for_status()  # 30,000 against 18,000

    for price in (2_900, 2_500):
        chain.call(oracle, "post", "ETH", price, sender=owner).raise_for_status()
        chain.mine(1)  # the watch fired at the end of the posting block
        out(f"ETH at {price}: market saw {chain.storage(market, 'last_price')}, positions {chain.storage_keys(market, 'position:')}")
    liquidated = [e.data["borrower"] for e in chain.events(name="Liquidated", actor=market)]
    assert liquidated == [risky.address], liquidated
    assert chain.storage_keys(market, "position:") == ["position:" + safe.address]
    out(f"liquidated {liquidated} when 10 ETH × 2,500 fell below 150 % of 18,000")
    return liquidated


if __name__ == "__main__":
    main(connect(__doc__))
