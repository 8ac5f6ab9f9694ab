"""The heartbeat actors, tested the way actor authors test: with the
timerhost pytest plugin (fixtures `chain`, `accounts`, `deploy`).

Run: `pytest actors/heartbeat` (after installing the package, see README).
"""

import pytest

import timerhost

FUNDING = 10**18


def blocks(chain, n):
    """Mines `n` blocks one at a time, so state can be read after each."""
    for _ in range(n):
        yield chain.mine(1)[0]


def fires_in(block, actor):
    return [e for e in block.events if e.name == "TimerFired" and e["actor"] == actor.address]


def test_heartbeat_beats_every_interval_and_pays_each_fire_exactly(chain, deploy):
    actor = deploy("heartbeat/heartbeat.py", 5, value=FUNDING)
    assert actor.name == "HeartbeatActor"
    start = chain.height
    beats = 0
    for block in blocks(chain, 100):
        fired = fires_in(block, actor)
        due = (block.height - start) % 5 == 0
        assert len(fired) == (1 if due else 0), f"block {block.height}"
        if fired:
            beats += 1
            event = fired[0]
            assert event["success"] is True and event["error"] is None
            # The fire receipt is the deferred transaction itself.
            receipt = next(r for r in block.fires if r.sender == actor.address)
            assert receipt.fee == event["cost"]
            assert event["cycles_used"] == receipt.cycles_used
            heartbeat = receipt.event("Heartbeat")
            assert heartbeat.data == {"beat": beats, "height": block.height}
    assert chain.storage(actor, "beats") == beats == 20


def test_heartbeat_balance_falls_by_exactly_the_cost_of_each_fire(chain, deploy):
    actor = deploy("heartbeat/heartbeat.py", 3, value=FUNDING)
    balance = chain.balance(actor)
    for block in blocks(chain, 30):
        costs = sum(e["cost"] for e in fires_in(block, actor))
        refunds = [e["refund"] for e in fires_in(block, actor)]
        assert all(r > 0 for r in refunds)  # max_cost is an upper bound, the rest comes back
        assert chain.balance(actor) == balance - costs
        balance = chain.balance(actor)


def test_stop_cancels_the_pending_beat(chain, deploy):
    actor = deploy("heartbeat/heartbeat.py", 4, value=FUNDING)
    chain.mine(8)
    pending = chain.timers(actor=actor)
    assert len(pending) == 1
    r = chain.call(actor, "stop").raise_for_status()
    assert r.event("TimerCancelled")
    assert chain.timers(actor=actor) == []
    beats = chain.storage(actor, "beats")
    chain.mine(10)
    assert chain.storage(actor, "beats") == beats


def test_a_stranger_cannot_stop_the_heartbeat_or_add_a_loop(chain, accounts, deploy):
    actor = deploy("heartbeat/heartbeat.py", 5, value=FUNDING)  # deployed by accounts[0]
    stranger = accounts[3]
    refused = chain.call(actor, "stop", sender=stranger)
    assert refused.error.kind == "revert" and "only the deployer" in refused.error.message
    forged = chain.call(actor, "handle_timer", b"", sender=stranger)
    assert forged.error.kind == "unauthorized"
    assert "only a timer fire can invoke it" in forged.error.message
    assert chain.storage(actor, "beats") == 0
    assert len(chain.timers(actor=actor)) == 1  # still one loop
    # The stranger paid for its failed calls only; the actor paid nothing.
    assert chain.balance(actor) == FUNDING - chain.timers(actor=actor)[0].deposit


def test_a_heartbeat_that_cannot_lend_its_deposit_is_not_deployed(chain, deploy):
    with pytest.raises(timerhost.DeployError, match="cannot cover the timer's deposit"):
        deploy("heartbeat/heartbeat.py", 2, value=0)


def test_unfunded_heartbeat_self_destructs(chain, deploy):
    # Enough to lend its timer's deposit, not to pay a single fire.
    actor = deploy("heartbeat/heartbeat.py", 2, value=10**6)
    blocks = chain.mine(2)
    assert fires_in(blocks[-1], actor) == []
    unfunded = chain.events(name="TimerCancelledInsufficientFunds")
    assert len(unfunded) == 1 and unfunded[0]["fee_payer"] == actor.address
    assert chain.timers(actor=actor) == []


def test_deployer_funded_heartbeat_charges_the_deployer(chain, accounts, deploy):
    alice, bob = accounts[:2]
    actor = deploy("heartbeat/heartbeat_deployer_funded.py", 3, 4, 200_000, sender=alice)
    assert [t.fee_payer for t in chain.timers(actor=actor)] == [alice.address] * 4
    assert all(t.gas_limit_per_fire == 200_000 for t in chain.timers(actor=actor))
    deposits = {t.timer_id: t.deposit for t in chain.timers(actor=actor)}
    balance = chain.balance(alice)
    for block in blocks(chain, 12):
        fired = fires_in(block, actor)
        # Each fire costs alice its actual cost and returns the deposit she lent.
        assert chain.balance(alice) == balance - sum(e["cost"] - deposits[e["timer_id"]] for e in fired)
        balance = chain.balance(alice)
    assert chain.storage(actor, "beats") == 4
    assert chain.balance(actor) == 0  # the actor never paid anything

    # Only the deployer may plan (and pay for) more beats.
    refused = chain.call(actor, "renew", 2, sender=bob)
    assert refused.error.kind == "revert" and "only the deployer" in refused.error.message
    with pytest.raises(timerhost.Reverted, match="only the deployer"):
        refused.raise_for_status()
    chain.call(actor, "renew", 2, sender=alice).raise_for_status()
    assert len(chain.timers(fee_payer=alice)) == 2
