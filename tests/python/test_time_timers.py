"""Time timers (#17): ``pvm_host.schedule_timer_at(timestamp_ms, ...)`` fires
at the start of the first block whose timestamp reaches it, before that
block's transactions, sharing one lane with the height timers."""

import pytest

CLOCK = '''
import base64
import json

import pvm_host

class Clock:
    def at(self, timestamp_ms, payload):
        return pvm_host.schedule_timer_at(timestamp_ms, payload)

    def at_many(self, times_and_payloads):
        return [pvm_host.schedule_timer_at(t, p) for t, p in times_and_payloads]

    def at_now(self):
        return pvm_host.schedule_timer_at(pvm_host.block_timestamp_ms(), b"now")

    def at_gas(self, timestamp_ms, gas_limit):
        return pvm_host.schedule_timer_at(timestamp_ms, b"", gas_limit=gas_limit)

    def at_billing(self, timestamp_ms, payer):
        return pvm_host.schedule_timer_at(timestamp_ms, b"", fee_payer=payer)

    def at_tick(self, timestamp_ms):
        # The custom-handler convention: the payload names the handler.
        payload = json.dumps({"_handler": "tick", "_payload": base64.b64encode(b"hi").decode()})
        return pvm_host.schedule_timer_at(timestamp_ms, payload.encode())

    @pvm_host.timer_handler
    def tick(self, payload):
        self.storage["ticked"] = payload.decode()

    def height(self, height, payload):
        return pvm_host.schedule_timer(height, payload)

    def handle_timer(self, payload):
        log = self.storage.get("log", [])
        log.append([payload.decode(), pvm_host.block_height(), pvm_host.block_timestamp_ms()])
        self.storage["log"] = log
        self.storage["why"] = pvm_host.trigger()

    def observe(self):
        # A user transaction: what had fired when it ran.
        self.storage["seen"] = len(self.storage.get("log", []))
'''


@pytest.fixture
def clock(chain):
    return chain.deploy(CLOCK, value=10**18)


def fired(chain, clock):
    return [entry[0] for entry in chain.storage(clock, "log") or []]


def test_a_time_timer_fires_in_the_first_block_whose_timestamp_reaches_it(chain, clock):
    # 2.5 s after the block that schedules it.
    due = chain.timestamp + chain.interval_ms + 2_500
    timer_id = chain.call(clock, "at", due, b"tick").raise_for_status().return_value
    (timer,) = chain.timers(kind="time")
    assert timer.timer_id == timer_id
    assert timer.trigger == {"kind": "time", "timestamp_ms": due}
    assert chain.timers(kind="height") == [] and chain.timers(kind="state") == []
    blocks = chain.mine(3, interval_ms=1_000)
    assert [b.timestamp >= due for b in blocks] == [False, False, True]
    assert [len(b.fires) for b in blocks] == [0, 0, 1]
    assert chain.storage(clock, "log") == [["tick", blocks[2].height, blocks[2].timestamp]]
    assert chain.timer(timer_id) is None
    why = chain.storage(clock, "why")
    assert why == {"kind": "time", "timer_id": timer_id, "fire_seq": 1, "due_timestamp_ms": due}


def test_a_block_that_jumps_past_several_due_times_fires_them_in_time_order(chain, clock):
    t = chain.timestamp + 10_000
    # Scheduled out of order, in one transaction.
    chain.call(clock, "at_many", [[t + 300, b"c"], [t + 100, b"a"], [t + 200, b"b"], [t + 100, b"a2"]]).raise_for_status()
    block = chain.warp(timestamp_ms=t + 5_000)
    assert fired(chain, clock) == ["a", "a2", "b", "c"], "by time, then scheduling order"
    assert len(block.fires) == 4


def test_time_timers_run_before_the_blocks_user_transactions(chain, clock):
    due = chain.timestamp + 5_000
    chain.call(clock, "at", due, b"early").raise_for_status()
    with chain.block(timestamp_ms=due) as b:
        b.call(clock, "observe")
    assert chain.storage(clock, "seen") == 1, "the fire ran before the transaction"
    block = chain.get_block(chain.height)
    assert [r.source for r in block.receipts] == ["deferred", "user"]


def test_no_time_timer_fires_in_the_block_that_schedules_it(chain, clock):
    r = chain.call(clock, "at_now")
    assert not r.ok
    assert "schedule_timer_at: timestamp_ms" in r.error.message
    assert "is not after the current block's timestamp" in r.error.message
    # Due 1 ms after its own block: the next block fires it, this one cannot.
    with chain.block() as b:
        b.call(clock, "at", chain.timestamp + chain.interval_ms + 1, b"next")
    assert fired(chain, clock) == []
    chain.mine(1)
    assert fired(chain, clock) == ["next"]


def test_carry_over_keeps_time_timers_first_then_height_timers_in_order(chain, clock):
    chain.governance.update_timer_config(max_fires_per_block=1).raise_for_status()
    t = chain.timestamp + 60_000
    h = chain.height + 4
    chain.call(clock, "height", h, b"h1").raise_for_status()
    chain.call(clock, "at_many", [[t, b"t1"], [t + 1, b"t2"]]).raise_for_status()
    chain.mine_until(h - 1)
    assert fired(chain, clock) == []
    # Block h: both time timers and the height timer are due; one fires.
    with chain.block(timestamp_ms=t + 10):
        pass
    per_block = [fired(chain, clock)]
    for _ in range(2):
        chain.mine(1)
        per_block.append(fired(chain, clock))
    assert per_block == [["t1"], ["t1", "t2"], ["t1", "t2", "h1"]]
    # The time timers fired at their blocks' starts, the height timer at an end.
    log = chain.storage(clock, "log")
    assert [entry[1] for entry in log] == [h, h + 1, h + 2]


def test_the_quote_for_a_time_matches_what_the_fire_pre_charges(chain, clock):
    due = chain.timestamp + 4_000
    q = chain.quote_timer(timestamp_ms=due, gas_limit=20_000)
    assert q["timestamp_ms"] == due and q["queued"] == 0 and q["fits"]
    r = chain.call(clock, "at_gas", due, 20_000).raise_for_status()
    assert r.event("TimerScheduled")["deposit"] == q["deposit"]
    # Quoted for the block that fires it: at that block's basefees.
    q = chain.quote_timer(timestamp_ms=due, gas_limit=20_000)
    assert (q["queued"], q["reserved"]) == (1, 20_000 + 3_000)
    chain.warp(timestamp_ms=due)
    (fire,) = chain.events(name="TimerFired", actor=clock)
    assert fire["cost"] + fire["refund"] == q["max_cost"]
    with pytest.raises(ValueError, match="not after the current block's timestamp"):
        chain.quote_timer(timestamp_ms=chain.timestamp)
    with pytest.raises(ValueError, match="not both"):
        chain.quote_timer(chain.height + 2, timestamp_ms=chain.timestamp + 1)


def test_a_time_timer_bills_only_a_consenting_payer(chain, accounts, clock):
    stranger = accounts[3]
    r = chain.call(clock, "at_billing", chain.timestamp + 5_000, stranger.address, sender=accounts[1])
    assert not r.ok
    assert "schedule_timer_at: fee_payer" in r.error.message
    ok = chain.call(clock, "at_billing", chain.timestamp + 5_000, accounts[1].address, sender=accounts[1])
    assert ok.raise_for_status().event("TimerScheduled")["fee_payer"] == accounts[1].address


def test_a_time_timer_expires_at_its_ttl_even_long_before_its_time(chain, clock):
    src = CLOCK.replace(
        "def observe(self):",
        "def short(self, t):\n        return pvm_host.schedule_timer_at(t, b'', expires_at=pvm_host.block_height() + 1)\n\n    def observe(self):",
    )
    short = chain.deploy(src, value=10**18)
    r = chain.call(short, "short", chain.timestamp + 3_600_000).raise_for_status()
    timer_id = r.return_value
    deposit = r.event("TimerScheduled")["deposit"]
    before = chain.balance(short)
    blocks = chain.mine(2)
    (expired,) = [e for b in blocks for e in b.events if e.name == "TimerExpired"]
    assert expired["timer_id"] == timer_id and blocks[1].height == r.height + 2
    assert chain.timer(timer_id) is None
    assert chain.balance(short) == before + deposit


def test_a_due_time_timer_whose_payer_revoked_is_removed_at_the_block_start(chain, accounts, clock):
    payer = accounts[1]
    due = chain.timestamp + 30_000
    chain.call(clock, "at_billing", due, payer.address, sender=payer).raise_for_status()
    chain.revoke_timer_payments(sender=payer).raise_for_status()
    block = chain.warp(timestamp_ms=due)
    assert block.receipts[0].source == "start_of_block"
    assert block.receipts[0].event("TimerCancelledPaymentRevoked")["fee_payer"] == payer.address
    assert block.fires == [] and fired(chain, clock) == []


def test_a_time_timer_may_name_its_handler_in_its_payload(chain, clock):
    due = chain.timestamp + 10_000
    chain.call(clock, "at_tick", due).raise_for_status()
    (timer,) = chain.timers(kind="time")
    assert timer.handler == "tick"
    chain.warp(timestamp_ms=due)
    assert chain.storage(clock, "ticked") == "hi"


def test_the_pytest_clock_fires_time_timers_block_by_block(chain, clock):
    start = chain.timestamp + chain.interval_ms  # the scheduling block's
    chain.call(clock, "at_many", [[start + 1_500, b"x"], [start + 3_600, b"y"]]).raise_for_status()
    chain.mine(5, interval_ms=500)  # through start + 2,500
    assert fired(chain, clock) == ["x"]
    chain.mine(1, interval=1)  # start + 3,500
    assert fired(chain, clock) == ["x"]
    chain.mine(1, interval_ms=100)
    assert fired(chain, clock) == ["x", "y"]

