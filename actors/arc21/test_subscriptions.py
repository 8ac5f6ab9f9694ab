"""ARC-21 subscriptions (`actors/arc21/subscriptions.py`) on an ARC-20 token,
charged by the cron registry; the registry's books are checked after every
block."""

import pytest

import timerhost
from timerhost import CRON_REGISTRY

MONTH = 30 * 86_400
PRICE = 10
ESCROW = 10**16


@pytest.fixture(autouse=True)
def _exact(exact_cron_escrow):
    pass


@pytest.fixture
def shop(chain, deploy, accounts):
    customer, merchant = accounts[1], accounts[2]
    token = deploy("arc20/arc20.py", "Dollar", "USD", 0, 1_000, customer.address)
    subs = deploy("arc21/subscriptions.py")
    return token, subs, customer, merchant


def tokens(chain, token, account):
    return chain.storage(token, "balance:" + account.address) or 0


def subscribe(chain, token, subs, customer, merchant, max_charges=3, allowance=None):
    allowance = PRICE * max_charges if allowance is None else allowance
    chain.call(token, "approve", subs.address, allowance, sender=customer).raise_for_status()
    r = chain.call(subs, "approveSubscription", token.address, merchant.address, PRICE, MONTH, max_charges, sender=customer, value=ESCROW)
    return r.raise_for_status(), r.return_value


def events(chain, subs, name):
    return [e.data for e in chain.events(name=name, actor=subs)]


def test_charges_happen_on_schedule(chain, shop):
    token, subs, customer, merchant = shop
    r, sub = subscribe(chain, token, subs, customer, merchant)
    assert r.event("SubscriptionApproved").data == {"id": sub, "customer": customer.address, "merchant": merchant.address}
    start = chain.timestamp // 1000
    chain.warp(start + MONTH - 5)
    assert tokens(chain, token, merchant) == 0, "not before the first interval"
    for month in (1, 2, 3):
        chain.warp(start + month * MONTH + 1)
        assert tokens(chain, token, merchant) == month * PRICE
    assert [e["chargesLeft"] for e in events(chain, subs, "SubscriptionCharged")] == [2, 1, 0]
    # All charges made: the cron job ended and its leftover escrow went to the customer.
    assert chain.storage_keys(CRON_REGISTRY, "job:") == []
    (exhausted,) = [e.data for e in chain.events(name="JobExhausted", actor=CRON_REGISTRY)]
    assert "3 runs" in exhausted["reason"]


def test_a_failed_charge_keeps_the_subscription(chain, shop):
    token, subs, customer, merchant = shop
    _, sub = subscribe(chain, token, subs, customer, merchant, max_charges=0, allowance=PRICE - 1)
    start = chain.timestamp // 1000
    chain.warp(start + MONTH + 1)
    (failed,) = events(chain, subs, "SubscriptionFailed")
    assert failed["id"] == sub and "allowance" in failed["reason"]
    assert tokens(chain, token, merchant) == 0
    # The customer raises the allowance; the next charge goes through.
    chain.call(token, "approve", subs.address, 5 * PRICE, sender=customer).raise_for_status()
    chain.warp(start + 2 * MONTH + 1)
    assert tokens(chain, token, merchant) == PRICE
    assert chain.call(subs, "getSubscription", sub).return_value["chargesLeft"] == 0  # unlimited: stays 0


def test_cancel_stops_the_charges_and_returns_the_escrow(chain, shop):
    token, subs, customer, merchant = shop
    _, sub = subscribe(chain, token, subs, customer, merchant, max_charges=0, allowance=100 * PRICE)
    start = chain.timestamp // 1000
    chain.warp(start + MONTH + 1)
    assert tokens(chain, token, merchant) == PRICE
    with pytest.raises(timerhost.Reverted, match="only subscription 1's customer"):
        chain.call(subs, "cancelSubscription", sub, sender=merchant).raise_for_status()
    (job,) = chain.cron.jobs_of(subs)
    before = chain.balance(customer)
    r = chain.call(subs, "cancelSubscription", sub, sender=customer).raise_for_status()
    assert r.event("SubscriptionCancelled").data == {"id": sub}
    refunded = [e.data for e in chain.events(name="JobCancelled", actor=CRON_REGISTRY)][0]["refunded"]
    assert refunded >= job["gasEscrow"]
    assert chain.balance(customer) == before + refunded - r.fee
    chain.warp(start + 5 * MONTH)
    assert tokens(chain, token, merchant) == PRICE, "no charge after cancelling"


def test_only_the_registry_can_charge(chain, shop):
    token, subs, customer, merchant = shop
    _, sub = subscribe(chain, token, subs, customer, merchant)
    for who in (customer, merchant):
        r = chain.call(subs, "chargeSubscription", sub, sender=who)
        assert not r.ok and "only the cron registry" in r.error.message
    assert tokens(chain, token, merchant) == 0


def test_a_strangers_cron_job_charges_nothing(chain, shop, accounts):
    """#28 bug 3: the registry calls whatever a scheduler names, so a stranger
    can aim a job at `chargeSubscription`. Only the subscription's own job
    charges: the stranger's runs revert (and pay for themselves)."""
    token, subs, customer, merchant = shop
    stranger = accounts[6]
    _, sub = subscribe(chain, token, subs, customer, merchant, max_charges=0, allowance=100 * PRICE)
    start = chain.timestamp // 1000
    # Every minute from now, long before the customer's first interval ends.
    job = chain.cron.schedule(subs, "chargeSubscription", [sub], next_run_at=start + 60, interval_sec=60, max_runs=5, gas_limit=100_000, escrow=ESCROW, sender=stranger)
    for minute in range(1, 6):
        chain.warp(start + minute * 60 + 1)
    runs = [e.data for e in chain.events(name="JobExecuted", actor=CRON_REGISTRY) if e["id"] == job]
    assert len(runs) == 5 and not any(r["success"] for r in runs), runs
    assert tokens(chain, token, merchant) == 0, "the stranger's job charged nothing"
    # The customer's own job still charges, once per interval.
    chain.warp(start + MONTH + 1)
    assert tokens(chain, token, merchant) == PRICE


def test_current_job_names_the_running_job_and_its_owner(chain, shop):
    token, subs, customer, merchant = shop
    _, sub = subscribe(chain, token, subs, customer, merchant)
    (job,) = chain.cron.jobs_of(subs)
    assert chain.call(CRON_REGISTRY, "currentJob").raise_for_status().return_value is None
    start = chain.timestamp // 1000
    chain.warp(start + MONTH + 1)
    (charged,) = events(chain, subs, "SubscriptionCharged")
    assert charged["id"] == sub
    assert chain.call(subs, "getSubscription", sub).return_value["lastPeriod"] == 0


def test_an_interval_below_the_registrys_minimum_is_refused(chain, shop):
    token, subs, customer, merchant = shop
    r = chain.call(subs, "approveSubscription", token.address, merchant.address, PRICE, 0, 3, sender=customer, value=ESCROW)
    assert not r.ok and "intervalSec must be an int of at least 60" in r.error.message
