"""The vesting wallet (`actors/vesting/vesting.py`) on an ARC-20 token: a
cliff, linear releases pushed by its own time timers, claims, revocation."""

import pytest

TOTAL = 1_200_000
DAY = 86_400


@pytest.fixture
def setup(chain, accounts, deploy):
    owner, beneficiary = accounts[0], accounts[1]
    token = deploy("arc20/arc20.py", "Vested", "VST", 0, 10 * TOTAL)
    start = chain.timestamp // 1000 + 10
    # A 30-day cliff, 120 days in all, released every 30 days.
    wallet = deploy(
        "vesting/vesting.py", token.address, beneficiary.address, start, 30 * DAY, 120 * DAY, 30 * DAY, value=10**18
    )
    chain.call(token, "approve", wallet.address, TOTAL, sender=owner).raise_for_status()
    chain.call(wallet, "fund", TOTAL, sender=owner).raise_for_status()
    return token, wallet, start, owner, beneficiary


def balance(chain, token, account):
    """Read from state: a call would mine a block, and move the clock."""
    return chain.storage(token, "balance:" + account.address) or 0


def test_nothing_vests_before_the_cliff(chain, setup):
    token, wallet, start, owner, beneficiary = setup
    with chain.block(timestamp=start + 30 * DAY - 1) as b:
        b.call(wallet, "claim", sender=beneficiary)
    (claim,) = b.receipts
    assert claim.raise_for_status().return_value == 0
    assert balance(chain, token, beneficiary) == 0
    # One second later the cliff passes: the wallet's own timer releases a quarter.
    chain.warp(start + 30 * DAY)
    assert balance(chain, token, beneficiary) == TOTAL // 4


def test_its_timers_release_each_interval_until_everything_vested(chain, setup):
    token, wallet, start, owner, beneficiary = setup
    seen = []
    for month in range(1, 5):
        chain.warp(start + month * 30 * DAY)
        seen.append(balance(chain, token, beneficiary))
    assert seen == [TOTAL // 4, TOTAL // 2, 3 * TOTAL // 4, TOTAL]
    assert chain.storage(wallet, "released") == TOTAL
    assert chain.timers(actor=wallet) == [], "no timer once fully released"


def test_the_beneficiary_claims_what_vested_so_far(chain, setup):
    token, wallet, start, owner, beneficiary = setup
    chain.warp(start + 45 * DAY)  # the 30-day timer fired; 45 days is mid-interval
    assert balance(chain, token, beneficiary) == TOTAL // 4
    assert chain.call(wallet, "claim", sender=beneficiary).raise_for_status().return_value == 0
    chain.warp(start + 61 * DAY)
    assert balance(chain, token, beneficiary) == TOTAL // 2


def test_revoke_returns_the_unvested_part_and_stops_the_timers(chain, setup):
    token, wallet, start, owner, beneficiary = setup
    before = balance(chain, token, owner)
    chain.warp(start + 31 * DAY)
    chain.call(wallet, "revoke", sender=owner).raise_for_status()
    assert balance(chain, token, beneficiary) == TOTAL // 4
    assert balance(chain, token, owner) == before + TOTAL - TOTAL // 4
    assert chain.timers(actor=wallet) == []
    chain.warp(start + 200 * DAY)
    assert balance(chain, token, beneficiary) == TOTAL // 4


def test_strangers_can_neither_claim_nor_revoke_nor_fund(chain, accounts, setup):
    token, wallet, start, owner, beneficiary = setup
    stranger = accounts[5]
    chain.warp(start + 40 * DAY)
    for method, args in [("claim", ()), ("revoke", ()), ("fund", (1,))]:
        r = chain.call(wallet, method, *args, sender=stranger)
        assert not r.ok and "PermissionError" in r.error.message and "may do this" in r.error.message
    assert not chain.call(wallet, "claim", sender=owner).ok, "the owner is not the beneficiary"
