"""The quote before scheduling (#17): ``pvm_host.timer_quote`` inside an
actor, ``chain.quote_timer`` outside, and what scheduling then really costs."""

import pytest

QUOTER = '''
import pvm_host

class Quoter:
    def quote(self, height, gas_limit):
        return pvm_host.timer_quote(height, gas_limit=gas_limit)

    def quote_default(self):
        return pvm_host.timer_quote()

    def quote_then_schedule(self, height, gas_limit):
        q = pvm_host.timer_quote(height, gas_limit=gas_limit)
        if not q["fits"]:
            raise ValueError("it would be carried over")
        pvm_host.schedule_timer_ex(height, b"", gas_limit=gas_limit)
        return q

    def handle_timer(self, payload):
        pass
'''


@pytest.fixture
def quoter(chain):
    return chain.deploy(QUOTER, value=10**18)


def test_quote_matches_the_deposit_and_the_pre_charge_of_the_timer_it_quotes(chain, quoter):
    h = chain.height + 4
    outside = chain.quote_timer(h, 5000)
    r = chain.call(quoter, "quote_then_schedule", h, 5000).raise_for_status()
    inside = r.return_value
    assert inside == outside, "the actor sees what the chain quoted for its block"
    assert inside["queued"] == 0 and inside["reserved"] == 0 and inside["fits"] is True
    (timer,) = chain.timers(height=h)
    assert timer.deposit == inside["deposit"] > 0
    after = chain.quote_timer(h, 5000)
    assert (after["queued"], after["reserved"]) == (1, 5000 + 3000)
    # The pre-charge is priced at the firing block's basefees: quote in the
    # block before it (the gas limit, not the height, sets max_cost).
    chain.mine(h - 1 - chain.height)
    last = chain.quote_timer(h + 1, 5000)
    chain.mine(1)
    fired = chain.events(name="TimerFired")[0]
    assert fired["cost"] + fired["refund"] == last["max_cost"], "the pre-charge is the quote"


def test_quote_defaults_to_the_next_schedulable_height_and_the_largest_gas_limit(chain, quoter):
    r = chain.call(quoter, "quote_default").raise_for_status()
    q = r.return_value
    assert q["height"] == r.height + 1
    assert q["gas_limit"] == chain.timer_config["max_cycles_per_fire"]
    assert q["lane_budget"] == chain.timer_config["lane_cycles_per_block"]


def test_quote_says_when_one_more_timer_would_be_carried_over(chain, quoter):
    chain.governance.update_timer_config(max_fires_per_block=2)
    chain.mine(1)
    h = chain.height + 5
    for _ in range(2):
        chain.call(quoter, "quote_then_schedule", h, 1000).raise_for_status()
    q = chain.quote_timer(h, 1000)
    assert q["queued"] == 2 and q["fits"] is False
    r = chain.call(quoter, "quote_then_schedule", h, 1000)
    assert not r.ok and "carried over" in r.error.message
    assert chain.quote_timer(h + 1, 1000)["fits"] is True


def test_quote_refuses_what_scheduling_refuses(chain, quoter):
    r = chain.call(quoter, "quote", chain.height + 1, 1000)
    assert not r.ok and "timer_quote: height" in r.error.message  # its own block is not in the future
    r = chain.call(quoter, "quote", chain.height + 5, 0)
    assert not r.ok and "gas_limit must be at least 1" in r.error.message
    too_high = chain.timer_config["max_cycles_per_fire"] + 1
    with pytest.raises(ValueError, match="max_cycles_per_fire|gas_limit"):
        chain.quote_timer(chain.height + 5, too_high)
    with pytest.raises(ValueError, match="future"):
        chain.quote_timer(chain.height + 1)


def test_timers_say_what_triggers_them_and_filter_by_kind(chain, quoter):
    h = chain.height + 6
    r = chain.call(quoter, "quote_then_schedule", h, 1000).raise_for_status()
    assert r.event("TimerScheduled")["trigger"] == {"kind": "height", "height": h}
    (timer,) = chain.timers(kind="height")
    assert timer.trigger == {"kind": "height", "height": h}
    assert chain.timers(kind="time") == [] and chain.timers(kind="state") == []
    with pytest.raises(ValueError, match="unknown trigger kind 'clock'"):
        chain.timers(kind="clock")


WHY = '''
import pvm_host

class Why:
    def arm(self, height):
        self.storage["id"] = pvm_host.schedule_timer(height, b"")

    def now(self):
        return pvm_host.trigger()

    def ask(self, other):
        return pvm_host.call(other, "now")

    def handle_timer(self, payload):
        self.storage["seen"] = pvm_host.trigger()
        self.storage["nested"] = pvm_host.call(self.storage["peer"], "now")

    def set_peer(self, peer):
        self.storage["peer"] = peer
'''


def test_a_handler_knows_which_fire_runs_it(chain):
    why = chain.deploy(WHY, value=10**18)
    peer = chain.deploy(WHY, value=10**18)
    chain.call(why, "set_peer", peer.address).raise_for_status()
    assert chain.call(why, "now").raise_for_status().return_value is None
    h = chain.height + 3
    chain.call(why, "arm", h).raise_for_status()
    chain.mine_until(h)
    seen = chain.storage(why, "seen")
    assert seen == {"kind": "height", "timer_id": chain.storage(why, "id"), "fire_seq": 1, "due_height": h}
    assert chain.storage(why, "nested") is None, "an actor the fire calls was not fired"
