"""State watches (#17): ``pvm_host.watch(keys, ...)`` fires at the end of every
block whose committed executions wrote a watched key — once per block,
after the height timers, with writes made at end of block counting toward
the next block."""

import pytest

WATCHER = '''
import pvm_host

class Watcher:
    def watch(self, keys, actor=None, handler=None, expires_at=None):
        return pvm_host.watch(keys, b"w", actor=actor, handler=handler, expires_at=expires_at)

    def watch_billing(self, keys, payer):
        return pvm_host.watch(keys, fee_payer=payer)

    def write(self, *keys):
        for k in keys:
            self.storage[k] = self.storage.get(k, 0) + 1

    def write_then_fail(self, key):
        self.storage[key] = 1
        raise ValueError("reverted")

    def cancel(self, timer_id):
        pvm_host.cancel_timer(timer_id)

    def handle_timer(self, payload):
        why = pvm_host.trigger()
        log = self.storage.get("log", [])
        log.append([pvm_host.block_height(), why["fire_seq"], why["matched_keys"]])
        self.storage["log"] = log
        self.storage["why"] = why

    def on_price(self, payload):
        self.storage["prices_seen"] = self.storage.get("prices_seen", 0) + 1

    def echo(self, payload):
        # Writes the key it watches: it wakes itself once per block, never twice.
        self.handle_timer(payload)
        self.storage["echo"] = pvm_host.block_height()
'''

WRITER = '''
import pvm_host

class Writer:
    def set(self, key, value):
        self.storage[key] = value

    def later(self, height, key):
        return pvm_host.schedule_timer(height, key.encode())

    def handle_timer(self, payload):
        # Runs at end of block: its write counts toward the next block.
        self.storage[payload.decode()] = pvm_host.block_height()
'''


@pytest.fixture
def watcher(chain):
    return chain.deploy(WATCHER, value=10**18)


@pytest.fixture
def writer(chain):
    return chain.deploy(WRITER, value=10**18)


def log(chain, watcher):
    return chain.storage(watcher, "log") or []


def test_a_watch_fires_once_per_block_however_many_matched_keys_changed(chain, watcher):
    timer_id = chain.call(watcher, "watch", ["a", "b", "c"]).raise_for_status().return_value
    (timer,) = chain.timers(kind="state")
    assert timer.trigger == {"kind": "state", "actor": watcher.address, "keys": ["a", "b", "c"], "fires": 0}
    r = chain.call(watcher, "write", "c", "a", "b", "unwatched").raise_for_status()
    assert log(chain, watcher) == [[r.height, 1, ["a", "b", "c"]]]
    why = chain.storage(watcher, "why")
    assert why["kind"] == "state" and why["timer_id"] == timer_id
    r2 = chain.call(watcher, "write", "b").raise_for_status()
    assert log(chain, watcher)[-1] == [r2.height, 2, ["b"]], "fire_seq counts the fires"
    chain.mine(2)
    assert len(log(chain, watcher)) == 2, "no write, no fire"
    assert chain.timer(timer_id).trigger["fires"] == 2, "the watch stays"


def test_a_watch_fires_after_the_blocks_height_timers(chain, watcher, writer):
    chain.call(watcher, "watch", ["k"], writer.address).raise_for_status()
    h = chain.height + 2
    chain.call(writer, "later", h, "other").raise_for_status()
    with chain.block() as b:
        b.call(writer, "set", "k", 1)
    block = chain.get_block(h)
    fired = [r.event("TimerFired")["actor"] for r in block.fires]
    assert fired == [writer.address, watcher.address]


def test_writes_during_end_of_block_trigger_the_next_block(chain, watcher, writer):
    chain.call(watcher, "watch", ["x"], writer.address).raise_for_status()
    h = chain.height + 2
    chain.call(writer, "later", h, "x").raise_for_status()
    chain.mine_until(h)
    assert chain.storage(writer, "x") == h, "the height timer wrote x at the end of block h"
    assert log(chain, watcher) == []
    chain.mine(1)
    assert log(chain, watcher) == [[h + 1, 1, ["x"]]]


def test_a_watch_that_writes_its_own_key_fires_at_most_once_per_block(chain, watcher):
    chain.call(watcher, "watch", ["echo"], None, "echo").raise_for_status()
    start = chain.call(watcher, "write", "echo").raise_for_status().height
    chain.mine(3)
    heights = [entry[0] for entry in log(chain, watcher)]
    assert heights == [start, start + 1, start + 2, start + 3]


def test_prefix_entries_match_every_key_they_start(chain, watcher, writer):
    chain.call(watcher, "watch", ["price*"], writer.address, "on_price").raise_for_status()
    chain.call(writer, "set", "pric", 1).raise_for_status()
    chain.call(writer, "set", "volume", 1).raise_for_status()
    assert chain.storage(watcher, "prices_seen") is None
    chain.call(writer, "set", "price_eth", 3).raise_for_status()
    chain.call(writer, "set", "price", 2).raise_for_status()
    assert chain.storage(watcher, "prices_seen") == 2


def test_a_failed_transaction_wakes_no_watch(chain, watcher):
    chain.call(watcher, "watch", ["k"]).raise_for_status()
    assert not chain.call(watcher, "write_then_fail", "k").ok
    assert log(chain, watcher) == []


def test_max_watch_keys_is_enforced_and_governed(chain, watcher):
    limit = chain.timer_config["max_watch_keys"]
    assert limit == 16
    keys = [f"k{i}" for i in range(limit + 1)]
    r = chain.call(watcher, "watch", keys)
    assert not r.ok
    assert "watch: 17 keys listed, max_watch_keys is 16" in r.error.message
    chain.governance.update_timer_config(max_watch_keys=limit + 1).raise_for_status()
    chain.call(watcher, "watch", keys).raise_for_status()
    bad = chain.call(watcher, "watch", ["x" * 257])
    assert not bad.ok and "the maximum is 256" in bad.error.message
    assert "at least one key" in chain.call(watcher, "watch", []).error.message


def test_fan_out_is_bounded_and_the_rest_wait_in_order(chain, accounts, writer):
    chain.governance.update_timer_config(max_watch_matches_per_block=2).raise_for_status()
    watchers = [chain.deploy(WATCHER, value=10**18, sender=accounts[i]) for i in range(3)]
    for w in watchers:
        chain.call(w, "watch", ["hot"], writer.address).raise_for_status()
    r = chain.call(writer, "set", "hot", 1).raise_for_status()
    assert [len(log(chain, w)) for w in watchers] == [1, 1, 0]
    # The next block writes again: the waiting hit goes first and is not
    # doubled; the new hits queue behind it, in watch order.
    chain.call(writer, "set", "hot", 2).raise_for_status()
    assert [len(log(chain, w)) for w in watchers] == [2, 1, 1]
    assert log(chain, watchers[2]) == [[r.height + 1, 1, ["hot"]]]
    chain.mine(1)
    assert [len(log(chain, w)) for w in watchers] == [2, 2, 1]
    chain.mine(1)
    assert [len(log(chain, w)) for w in watchers] == [2, 2, 1]


def test_cancel_and_expiry_end_a_watch_and_return_its_deposit(chain, accounts, watcher):
    timer_id = chain.call(watcher, "watch", ["k"]).raise_for_status().return_value
    other = chain.deploy(WATCHER, value=10**18, sender=accounts[1])
    denied = chain.call(other, "cancel", timer_id)
    assert not denied.ok and "unauthorized" in denied.error.message
    deposit = chain.events(name="TimerScheduled", actor=watcher)[0]["deposit"]
    assert deposit > 0
    before = chain.balance(watcher)
    chain.call(watcher, "cancel", timer_id).raise_for_status()
    assert chain.balance(watcher) == before + deposit, "the signer paid the fee"
    assert chain.timer(timer_id) is None
    chain.call(watcher, "write", "k").raise_for_status()
    assert log(chain, watcher) == []
    # Expiry: gone at the end of the first block past its TTL, written or not.
    h = chain.height
    short = chain.call(watcher, "watch", ["k"], None, None, h + 3).raise_for_status().return_value
    chain.mine(3)
    (expired,) = chain.events(name="TimerExpired", actor=watcher)
    assert expired["timer_id"] == short and expired.height == h + 4
    assert chain.timer(short) is None


def test_a_watch_bills_only_a_consenting_payer_and_needs_a_real_actor(chain, accounts, watcher):
    stranger = accounts[4]
    r = chain.call(watcher, "watch_billing", ["k"], stranger.address, sender=accounts[1])
    assert not r.ok and "watch: fee_payer" in r.error.message
    nobody = chain.call(watcher, "watch", ["k"], accounts[2].address)
    assert not nobody.ok and "no actor at" in nobody.error.message


def test_pause_keeps_watch_hits_and_shutdown_removes_every_kind(chain, watcher):
    r = chain.call(watcher, "watch", ["k"]).raise_for_status()
    watch_id, deposit = r.return_value, r.event("TimerScheduled")["deposit"]
    clock = chain.deploy(
        "import pvm_host\n\nclass Later:\n    def at(self, t):\n        return pvm_host.schedule_timer_at(t, b'')\n\n    def handle_timer(self, payload):\n        pass\n",
        value=10**18,
    )
    chain.call(clock, "at", chain.timestamp + 3_600_000).raise_for_status()
    chain.governance.pause_timers().raise_for_status()
    chain.call(watcher, "write", "k").raise_for_status()
    chain.mine(2)
    assert log(chain, watcher) == [], "paused: nothing fires"
    chain.governance.resume_timers().raise_for_status()
    assert [entry[1] for entry in log(chain, watcher)] == [1], "the hit waited for the resume"
    assert {t.trigger["kind"] for t in chain.timers()} == {"time", "state"}
    held = chain.balance(watcher)
    chain.governance.shutdown_timers().raise_for_status()
    chain.mine(1)
    assert chain.timers() == [] and chain.timer_status == "shutdown"
    cancelled = [e["timer_id"] for e in chain.events(name="TimerCancelled")]
    assert len(cancelled) == 2 and watch_id in cancelled
    assert chain.balance(watcher) == held + deposit
