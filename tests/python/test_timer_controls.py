"""Issue #14 from the Python package: deposits on timers, payer revocation,
governance pause/resume/shutdown, and handlers only a timer fire may run."""

import pytest

import timerhost

PAYER_FUNDED = '''
import pvm_host

class Sponsored:
    def arm(self, height):
        # The signer of this (directly targeted) transaction consents to pay.
        return pvm_host.schedule_timer_ex(height, b"", fee_payer=pvm_host.tx_sender())

    def arm_self(self, height):
        return pvm_host.schedule_timer(height, b"")

    @pvm_host.timer_handler
    def on_tick(self, payload):
        self.storage["ticks"] = self.storage.get("ticks", 0) + 1

    def handle_timer(self, payload):
        self.storage["fires"] = self.storage.get("fires", 0) + 1

    def revoke(self):
        pvm_host.revoke_timer_payments()
'''


@pytest.fixture
def sponsored(chain):
    return chain.deploy(PAYER_FUNDED, value=10**18)


def test_timers_carry_their_deposit_and_give_it_back(chain, accounts, sponsored):
    payer = accounts[2]
    before = chain.balance(payer)
    r = chain.call(sponsored, "arm", chain.height + 5, sender=payer).raise_for_status()
    (timer,) = chain.timers(fee_payer=payer)
    assert timer.deposit == r.event("TimerScheduled")["deposit"] > 0
    assert timer.deposit == chain.timer_config["deposit_per_byte"] * (timer.deposit // chain.timer_config["deposit_per_byte"])
    assert chain.balance(payer) == before - r.fee - timer.deposit
    (fire,) = [f for block in chain.mine(5) for f in block.fires]
    assert chain.balance(payer) == before - r.fee - fire.fee


def test_revoke_timer_payments_unbills_the_signer(chain, accounts, sponsored):
    payer, stranger = accounts[2], accounts[3]
    chain.call(sponsored, "arm", chain.height + 6, sender=payer).raise_for_status()
    chain.revoke_timer_payments(sender=stranger).raise_for_status()  # touches nothing of payer's
    r = chain.revoke_timer_payments(sender=payer).raise_for_status()
    assert r.event("TimerPaymentsRevoked")["fee_payer"] == payer.address
    before = chain.balance(payer)
    chain.mine(6)
    (gone,) = chain.events(name="TimerCancelledPaymentRevoked")
    assert gone["fee_payer"] == payer.address
    assert chain.events(name="TimerFired") == []
    assert chain.storage(sponsored, "fires") is None
    assert chain.balance(payer) > before  # the deposit came back, nothing was charged


def test_an_actor_revokes_its_own_timer_payments(chain, sponsored):
    chain.call(sponsored, "arm_self", chain.height + 4).raise_for_status()
    chain.call(sponsored, "revoke").raise_for_status()
    chain.mine(4)
    assert len(chain.events(name="TimerCancelledPaymentRevoked")) == 1
    assert chain.storage(sponsored, "fires") is None


def test_timer_handlers_run_only_from_fires(chain, accounts, sponsored):
    for handler in ("handle_timer", "on_tick"):
        r = chain.call(sponsored, handler, b"", sender=accounts[4])
        assert r.error.kind == "unauthorized", handler
        assert "only a timer fire can invoke it" in r.error.message


def test_governance_pauses_resumes_and_shuts_timers_down(chain, accounts, sponsored):
    assert chain.timer_status == "active" == chain.timer_config["status"]
    for call in (
        chain.governance.pause_timers,
        chain.governance.resume_timers,
        chain.governance.shutdown_timers,
    ):
        with pytest.raises(timerhost.TransactionRejected, match="system_deployers"):
            call(signer=accounts[5])
    chain.call(sponsored, "arm_self", chain.height + 3).raise_for_status()
    r = chain.governance.pause_timers()
    assert r.event("TimersPaused")
    assert chain.timer_config["status"] == "paused"
    refused = chain.call(sponsored, "arm_self", chain.height + 3)
    assert "paused by governance" in refused.error.message
    chain.mine(5)
    assert chain.events(name="TimerFired") == []
    chain.governance.resume_timers()
    assert chain.timer_status == "active"
    assert len(chain.events(name="TimerFired")) == 1

    chain.call(sponsored, "arm_self", chain.height + 50).raise_for_status()
    held = chain.balance(sponsored)
    chain.governance.shutdown_timers()
    chain.mine(1)
    assert chain.timer_status == "shutdown"
    (cancelled,) = chain.events(name="TimerCancelled")
    assert cancelled["reason"] == "shutdown"
    assert [e["complete"] for e in chain.events(name="TimersShutdown")] == [False, True]
    assert chain.balance(sponsored) > held  # its deposit came back
    # update_timer_config keeps working with the status shown beside the config.
    chain.governance.update_timer_config(max_fires_per_block=500)
    assert chain.timer_config["max_fires_per_block"] == 500
