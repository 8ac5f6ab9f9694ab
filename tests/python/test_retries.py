"""Retries and the dead-letter queue (#45) through the Python package: a
failed fire is retried with a doubling backoff by the same fee payer, then
dead-lettered; the actor lists, retries and drops its own entries; the
quote states a policy's worst case; the cron registry retries a failing
run (``retries``/``retryBackoff``)."""

import pytest

PAYMENTS = '''
import pvm_host

class Payments:
    def deploy(self):
        self.storage["bank_up"] = False
        self.storage["paid"] = 0

    def pay_later(self, height, retries, backoff):
        return pvm_host.schedule_timer_ex(height, b"invoice-7", gas_limit=50_000,
                                          retries=retries, retry_backoff=backoff)

    def bank(self, up):
        self.storage["bank_up"] = up

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        if not self.storage["bank_up"]:
            raise RuntimeError("bank unreachable")
        self.storage["paid"] = self.storage["paid"] + 1

    def letters(self):
        return pvm_host.dead_letters()

    def retry(self, timer_id):
        if pvm_host.caller() != self.deployer:
            raise PermissionError("only the deployer retries payments")
        return pvm_host.retry_dead_letter(timer_id)

    def drop(self, timer_id):
        if pvm_host.caller() != self.deployer:
            raise PermissionError("only the deployer drops payments")
        pvm_host.drop_dead_letter(timer_id)

    def quote(self, retries):
        return pvm_host.timer_quote(gas_limit=50_000, retries=retries)
'''

FLAKY_TARGET = '''
class Target:
    def deploy(self):
        self.storage["up"] = False
        self.storage["runs"] = 0

    def up(self, on):
        self.storage["up"] = on

    def ping(self):
        if not self.storage["up"]:
            raise RuntimeError("target down")
        self.storage["runs"] = self.storage["runs"] + 1
'''


@pytest.fixture
def payments(chain):
    return chain.deploy(PAYMENTS, value=10**21)


def _names(chain, name):
    return chain.events(name=name)


def test_a_failed_fire_is_retried_with_backoff_then_dead_lettered(chain, payments):
    due = chain.height + 2
    timer_id = chain.call(payments, "pay_later", due, 2, 2).raise_for_status().return_value
    chain.mine_until(due)
    (first,) = _names(chain, "TimerRetried")
    assert first["attempt"] == 1 and first["next_due"] == {"height": due + 2}
    assert "bank unreachable" in first["error"]
    chain.mine_until(due + 2 + 4)
    retried = _names(chain, "TimerRetried")
    assert [e["attempt"] for e in retried] == [1, 2]
    (dead,) = _names(chain, "TimerDeadLettered")
    assert dead["attempts"] == 3 and dead["kept"] is True and dead.height == due + 6
    # Every attempt billed the same payer: the actor.
    fires = _names(chain, "TimerFired")
    assert len(fires) == 3 and {f["fee_payer"] for f in fires} == {payments.address}

    (entry,) = chain.dead_letters(payments)
    assert entry["timer_id"] == timer_id and entry["payload"] == b"invoice-7"
    assert entry["attempts"] == 3 and "bank unreachable" in entry["error"]
    assert "handle_timer" in entry["traceback"]
    assert chain.call(payments, "letters").raise_for_status().return_value == [entry]


def test_the_actor_retries_or_drops_its_dead_letters_and_a_stranger_cannot(chain, payments, accounts):
    due = chain.height + 2
    timer_id = chain.call(payments, "pay_later", due, 1, 1).raise_for_status().return_value
    chain.mine(5)
    assert len(chain.dead_letters(payments)) == 1
    stranger = accounts[3]
    r = chain.call(payments, "retry", timer_id, sender=stranger)
    assert not r.ok and "PermissionError" in r.error.message
    chain.call(payments, "bank", True).raise_for_status()
    new_id = chain.call(payments, "retry", timer_id).raise_for_status().return_value
    assert chain.dead_letters(payments) == []
    chain.mine(2)
    assert chain.storage(payments, "paid") == 1
    assert chain.timer(new_id) is None, "the retried payment fired"

    # Drop: the deposit comes back.
    chain.call(payments, "bank", False).raise_for_status()
    timer_id = chain.call(payments, "pay_later", chain.height + 2, 1, 1).raise_for_status().return_value
    chain.mine(5)
    (entry,) = chain.dead_letters(payments)
    r = chain.call(payments, "drop", timer_id).raise_for_status()
    removed = [e for e in r.events if e.name == "DeadLetterRemoved"]
    assert removed and removed[0]["refund"] == entry["deposit"] > 0
    assert chain.dead_letters(payments) == []


def test_a_policy_above_max_retries_is_refused_and_the_quote_states_the_worst_case(chain, payments):
    cap = chain.timer_config["max_retries"]
    r = chain.call(payments, "pay_later", chain.height + 5, cap + 1, 1)
    assert not r.ok and "max_retries" in r.error.message
    q = chain.quote_timer(gas_limit=50_000, retries=3)
    assert q["max_attempts"] == 4 and q["worst_case_cost"] == 4 * q["max_cost"]
    inside = chain.call(payments, "quote", 3).raise_for_status().return_value
    assert inside["worst_case_cost"] == 4 * inside["max_cost"]


def test_the_timer_shows_its_policy(chain, payments):
    timer_id = chain.call(payments, "pay_later", chain.height + 9, 2, 3).raise_for_status().return_value
    assert chain.timer(timer_id).retry == {"retries": 2, "backoff": 3, "failures": 0}


def test_the_cron_registry_retries_a_failing_run(chain, accounts):
    target = chain.deploy(FLAKY_TARGET)
    t = chain.timestamp // 1000 + 120
    job = chain.cron.schedule(target, "ping", next_run_at=t, gas_limit=20_000, escrow=10**18,
                              retries=2, retry_backoff=5)
    chain.mine(1, interval=130)
    assert _names(chain, "TimerRetried"), "the failed run is retried by the protocol"
    assert chain.cron.job(job) is not None, "the job waits for its retried run"
    chain.call(target, "up", True).raise_for_status()
    chain.mine(3, interval=5)
    assert chain.storage(target, "runs") == 1
    assert chain.cron.job(job) is None, "the one-shot job finished after its retried run"


AUCTION = '''
import pvm_host

class Auction:
    def deploy(self):
        self.storage["closed_at"] = None

    def book_close(self, height):
        return pvm_host.book_timer(height, b"close", gas_limit=50_000, handler="close")

    def crowd(self, height, n):
        for i in range(n):
            pvm_host.schedule_timer_ex(height, b"", gas_limit=90_000)

    @pvm_host.timer_handler
    def close(self, payload):
        self.storage["closed_at"] = pvm_host.block_height()

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        pass
'''


def test_a_booked_close_fires_at_its_exact_height_in_a_crowded_lane():
    import timerhost

    chain = timerhost.Chain()
    chain.governance.update_timer_config(lane_cycles_per_block=300_000, max_cycles_per_fire=100_000,
                              max_fires_per_block=10, bookable_lane_percent=50).raise_for_status()
    auction = chain.deploy(AUCTION, value=10**21)
    h = chain.height + 4
    chain.call(auction, "crowd", h, 10).raise_for_status()
    q = chain.quote_timer(h, 50_000, book=True)
    assert q["bookable"] is True and q["booking_fee"] > 0
    r = chain.call(auction, "book_close", h).raise_for_status()
    (booked,) = [e for e in r.events if e.name == "TimerBooked"]
    assert booked["height"] == h
    timer = chain.timer(r.return_value)
    assert timer.booked is True
    chain.mine_until(h)
    assert chain.storage(auction, "closed_at") == h
    # The unbooked crowd carried over, still pending.
    assert len(chain.timers(actor=auction)) > 0


def test_a_full_block_is_refused_with_the_nearest_free_heights():
    import timerhost

    chain = timerhost.Chain()
    chain.governance.update_timer_config(lane_cycles_per_block=300_000, max_cycles_per_fire=100_000,
                              max_fires_per_block=10, bookable_lane_percent=50).raise_for_status()
    auction = chain.deploy(AUCTION, value=10**21)
    h = chain.height + 10
    chain.call(auction, "book_close", h).raise_for_status()
    chain.call(auction, "book_close", h).raise_for_status()
    r = chain.call(auction, "book_close", h)
    assert not r.ok and "book_timer: cannot book" in r.error.message
    q = chain.quote_timer(h, 50_000, book=True)
    assert q["bookable"] is False and q["booking_fee"] is None
    assert q["booking"]["free_heights"][0] == h + 1


def _crowded_chain(**extra):
    import timerhost

    chain = timerhost.Chain()
    chain.governance.update_timer_config(lane_cycles_per_block=300_000, max_cycles_per_fire=100_000,
                                         max_fires_per_block=10, bookable_lane_percent=50,
                                         **extra).raise_for_status()
    return chain


CANCELLER = AUCTION.replace("class Auction:", "class Auction:\n    def cancel(self, timer_id):\n        pvm_host.cancel_timer(timer_id)\n")


def test_cancelling_a_booking_frees_its_capacity_but_keeps_its_fee():
    chain = _crowded_chain()
    auction = chain.deploy(CANCELLER, value=10**21)
    h = chain.height + 10
    r = chain.call(auction, "book_close", h).raise_for_status()
    (booked,) = [e for e in r.events if e.name == "TimerBooked"]
    assert chain.quote_timer(h, 50_000, book=True)["booking"]["booked_fires"] == 1
    before = chain.balance(auction)
    r = chain.call(auction, "cancel", r.return_value).raise_for_status()
    assert chain.quote_timer(h, 50_000, book=True)["booking"]["booked_fires"] == 0
    # The deposit came back; the booking fee did not.
    refunded = chain.balance(auction) - before + r.fee
    assert 0 < refunded < booked["booking_fee"]


def test_a_shrunk_share_keeps_the_bookings_already_made():
    chain = _crowded_chain()
    auction = chain.deploy(AUCTION, value=10**21)
    h = chain.height + 8
    chain.call(auction, "book_close", h).raise_for_status()
    chain.call(auction, "book_close", h).raise_for_status()
    chain.governance.update_timer_config(lane_cycles_per_block=300_000, max_cycles_per_fire=100_000,
                                         max_fires_per_block=10, bookable_lane_percent=10).raise_for_status()
    assert not chain.call(auction, "book_close", h).ok
    chain.mine_until(h)
    fired = [e for e in chain.events(name="TimerFired") if e.height == h and e["handler"] == "close"]
    assert len(fired) == 2


def test_the_dead_letter_queue_is_bounded_and_expires():
    import timerhost

    chain = timerhost.Chain()
    chain.governance.update_timer_config(max_dead_letters_per_actor=1, dead_letter_ttl_blocks=4).raise_for_status()
    payments = chain.deploy(PAYMENTS, value=10**21)
    h = chain.height + 2
    chain.call(payments, "pay_later", h, 1, 1).raise_for_status()
    chain.call(payments, "pay_later", h + 1, 1, 1).raise_for_status()
    chain.mine(4)
    kept = [e["kept"] for e in chain.events(name="TimerDeadLettered")]
    assert kept == [True, False]
    (dropped,) = [e for e in chain.events(name="TimerDeadLettered") if not e["kept"]]
    assert "full" in dropped["reason"]
    chain.mine(6)
    (removed,) = chain.events(name="DeadLetterRemoved")
    assert removed["reason"] == "expired" and removed["refund"] > 0
    assert chain.dead_letters(payments) == []


def test_dead_letters_over_rpc_and_the_cli(tmp_path_factory):
    import json
    import subprocess

    from test_examples import _binary, manual_dev_node
    from timerhost.rpc import RpcChain

    with manual_dev_node(tmp_path_factory.mktemp("dlq") / "home") as url:
        rpc = RpcChain(url)
        payments = rpc.deploy(PAYMENTS, value=10**21)
        rpc.call(payments, "pay_later", rpc.height + 2, 1, 1).raise_for_status()
        rpc.mine(4)
        (entry,) = rpc.dead_letters(payments)
        assert entry["payload"] == b"invoice-7" and entry["attempts"] == 2
        assert [entry] == rpc.dead_letters(str(payments))
        out = subprocess.run(
            [_binary(), "dead-letters", str(payments), "--rpc", url, "--json"],
            capture_output=True, text=True, check=True,
        ).stdout
        (shown,) = json.loads(out)
        assert shown["attempts"] == 2 and "bank unreachable" in shown["error"]
        q = rpc.quote_timer(rpc.height + 5, 50_000, retries=2, book=True)
        assert q["max_attempts"] == 3 and q["bookable"] is True and q["booking_fee"] > 0
