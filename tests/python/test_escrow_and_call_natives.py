"""The host natives ARC-21's registry is built on, for any actor (#19):
`pvm_host.value()`, `pvm_host.cycles_used()`, `pvm_host.call(...,
gas_limit=)`, and escrow-funded timers (`escrow=`, `release_escrow`)."""

import pytest

ACTOR = '''
import pvm_host

class Holder:
    def value(self):
        return pvm_host.value()

    def forward(self, other):
        return pvm_host.call(other, "value", value=7)

    def spin(self):
        while True:
            pass

    def capped(self, other, gas):
        before = pvm_host.cycles_used()
        try:
            pvm_host.call(other, "spin", gas_limit=gas)
            outcome = "returned"
        except pvm_host.HostError as e:
            outcome = str(e)
        self.storage["after"] = True
        return [outcome, pvm_host.cycles_used() - before]

    def uncapped(self, other):
        pvm_host.call(other, "spin")

    def arm(self, at_ms, key, amount, fee_payer=None):
        self.storage[key] = amount
        self.storage["timer"] = pvm_host.schedule_timer_at(at_ms, b"", escrow=key, gas_limit=10_000, fee_payer=fee_payer)

    def release(self, to):
        pvm_host.release_escrow(to)

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["seen_escrow"] = self.storage["fund"]
        if self.storage.get("release_to"):
            pvm_host.release_escrow(self.storage["release_to"])

    def put(self, key, value):
        self.storage[key] = value

    def set_release(self, to):
        self.storage["release_to"] = to
'''


@pytest.fixture
def holder(deploy):
    return deploy(ACTOR, value=10**18)


def test_value_is_what_the_call_sent(chain, holder, deploy):
    assert chain.call(holder, "value", value=123).raise_for_status().return_value == 123
    assert chain.call(holder, "value").return_value == 0
    other = deploy(ACTOR)
    assert chain.call(holder, "forward", other.address).raise_for_status().return_value == 7


def test_a_call_gas_limit_stops_the_callee_and_the_caller_goes_on(chain, holder, deploy):
    other = deploy(ACTOR)
    r = chain.call(holder, "capped", other.address, 5_000).raise_for_status()
    outcome, used = r.return_value
    assert "ran out of its gas_limit of 5000 cycles" in outcome
    assert 5_000 <= used < 5_500
    assert chain.storage(holder, "after") is True
    # Without a cap, running out is the whole execution's.
    r = chain.call(holder, "uncapped", other.address, cycles_limit=200_000)
    assert not r.ok and r.error.kind == "out_of_cycles"


def test_a_cap_above_what_is_left_leaves_the_execution_limit_in_charge(chain, holder, deploy):
    other = deploy(ACTOR)
    r = chain.call(holder, "capped", other.address, 10**9, cycles_limit=100_000)
    assert not r.ok and r.error.kind == "out_of_cycles", "the abort is shared, not caught"


def test_an_escrow_funded_timer_is_paid_from_its_escrow_exactly(chain, holder):
    at = chain.timestamp + 5_000
    chain.call(holder, "arm", at, "fund", 10**15).raise_for_status()
    (timer,) = chain.timers(actor=holder)
    assert chain.storage(holder, "fund") == 10**15 - timer.deposit
    block = chain.warp(timestamp_ms=at)
    (fire,) = block.fires
    fired = fire.event("TimerFired").data
    # The handler saw the escrow with the deposit back and its own maximum
    # cost held out of it (#28: what a fire may still use is never free to
    # spend); once settled, only the fee came off.
    assert chain.storage(holder, "seen_escrow") == 10**15 - (fired["cost"] + fired["refund"])
    assert fired["cost"] == fire.fee
    assert chain.storage(holder, "fund") == 10**15 - fire.fee


def test_release_after_the_fire_pays_out_what_is_left(chain, holder, accounts):
    to = accounts[5]
    chain.call(holder, "set_release", to.address).raise_for_status()
    at = chain.timestamp + 5_000
    chain.call(holder, "arm", at, "fund", 10**15).raise_for_status()
    before = chain.balance(to)
    block = chain.warp(timestamp_ms=at)
    (fire,) = block.fires
    assert chain.balance(to) - before == 10**15 - fire.fee
    assert chain.storage(holder, "fund") is None


def test_escrow_refusals_name_the_rule(chain, holder, accounts):
    at = chain.timestamp + 5_000
    r = chain.call(holder, "arm", at, "fund", 1)
    assert not r.ok and "escrow at storage key \"fund\" holds 1, less than the timer's deposit" in r.error.message
    r = chain.call(holder, "arm", at, "fund", 10**15, accounts[0].address, sender=accounts[0])
    assert not r.ok and "fee_payer must be the actor itself" in r.error.message
    r = chain.call(holder, "release", accounts[1].address)
    assert not r.ok and "only the handler of a fire whose timer was scheduled with escrow=" in r.error.message


def test_an_escrow_that_no_longer_covers_a_fire_removes_the_timer_unrun(chain, holder):
    at = chain.timestamp + 5_000
    chain.call(holder, "arm", at, "fund", 10**15).raise_for_status()
    (timer,) = chain.timers(actor=holder)
    # The actor itself lowers its escrow below a fire's maximum cost.
    chain.call(holder, "put", "fund", 1).raise_for_status()
    block = chain.warp(timestamp_ms=at)
    assert block.fires == [] and chain.timers(actor=holder) == []
    assert chain.storage(holder, "seen_escrow") is None, "the handler did not run"
    assert chain.storage(holder, "fund") == 1 + timer.deposit, "the deposit came back to the escrow"
