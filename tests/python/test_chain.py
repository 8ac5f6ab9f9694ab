"""The in-process chain API, line by line (issue #6's API list)."""

import re

import pytest

import timerhost

ADDRESS = re.compile(r"^0x[0-9a-f]{40}$")


def test_fresh_chain_has_ten_funded_lowercase_accounts():
    chain = timerhost.Chain()
    assert chain.height == 0
    assert len(chain.accounts) == 10
    for account in chain.accounts:
        assert ADDRESS.match(account.address)
        assert chain.balance(account) == 10**6 * 10**18
        assert chain.nonce(account) == 0
    # Two chains from the same genesis are identical.
    assert timerhost.Chain().state_root == chain.state_root


def test_chain_with_path_persists_and_reopens(tmp_path, counter_source):
    chain = timerhost.Chain(path=tmp_path / "db")
    actor = chain.deploy(counter_source, args=(7,))
    chain.call(actor, "bump", 1).raise_for_status()
    height, root = chain.height, chain.state_root
    with pytest.raises(timerhost.ChainError, match="locked"):
        timerhost.Chain(path=tmp_path / "db")  # one chain per database
    chain.close()
    with pytest.raises(timerhost.ChainError, match="closed"):
        chain.mine(1)
    with timerhost.Chain(path=tmp_path / "db") as reopened:
        assert (reopened.height, reopened.state_root) == (height, root)
        assert reopened.storage(actor, "n") == 8


def test_deploy_returns_an_actor_and_runs_deploy(chain, accounts, counter_source):
    alice = accounts[0]
    nonce = chain.nonce(alice)
    actor = chain.deploy(counter_source, sender=alice, args=(41,))
    assert ADDRESS.match(actor.address)
    assert actor.name == "Counter"
    assert chain.is_actor(actor)
    assert chain.storage(actor, "n") == 41
    assert chain.nonce(alice) == nonce + 1
    assert actor.deploy_receipt.created_actor == actor.address


def test_deploy_of_forbidden_source_raises_deploy_error_naming_the_line(chain):
    with pytest.raises(timerhost.DeployError) as info:
        chain.deploy("import os\nclass A:\n    pass\n")
    err = info.value
    assert err.kind == "forbidden"
    assert "line 1" in str(err)
    assert "os" in str(err)
    assert err.receipt.ok is False


def test_deploy_whose_deploy_raises_carries_the_traceback(chain):
    source = "class A:\n    def deploy(self):\n        raise RuntimeError('no way')\n"
    with pytest.raises(timerhost.DeployError) as info:
        chain.deploy(source)
    assert info.value.kind == "revert"
    assert "RuntimeError: no way" in str(info.value)
    assert "line 3" in info.value.traceback


def test_deploy_from_a_path(chain, tmp_path, counter_source):
    path = tmp_path / "counter_actor.py"
    path.write_text(counter_source)
    actor = chain.deploy(path, args=(2,))
    assert chain.storage(actor, "n") == 2
    assert actor.name == "Counter"


def test_call_mines_one_block_and_reports_everything(chain, accounts, counter):
    alice = accounts[0]
    height = chain.height
    before = chain.balance(alice)
    r = chain.call(counter, "bump", 5, sender=alice)
    assert chain.height == height + 1
    assert r.ok and r.status == "success" and r.error is None
    assert r.return_value == 5
    assert r.cycles_used > 0 and r.cells_used > 0
    assert r.fee == r.burned + r.tip > 0
    assert chain.balance(alice) == before - r.fee
    assert [(e.name, e.data) for e in r.events] == [("Bumped", {"n": 5, "by": 5})]
    assert r.events[0].actor == counter.address
    assert r.events[0].height == chain.height
    assert r.events[0].tx_hash == r.tx_hash
    assert r.event("Bumped")["n"] == 5
    assert r.raise_for_status() is r
    assert chain.receipt(r.tx_hash) == r


def test_call_value_and_transfer_move_funds(chain, accounts, counter):
    alice, bob = accounts[:2]
    funded = chain.balance(counter)  # the fixture funds it for its timers' deposits
    r = chain.call(counter, "bump", 1, sender=alice, value=1234)
    assert r.ok
    assert chain.balance(counter) == funded + 1234
    before = chain.balance(bob)
    t = chain.transfer(bob, 10**18, sender=alice)
    assert t.ok and t.return_value is None
    assert chain.balance(bob) == before + 10**18


def test_values_round_trip_exactly(chain):
    echo = chain.deploy("class Echo:\n    def echo(self, v):\n        return v\n")
    value = {
        "none": None,
        "bool": True,
        "big": -(10**40),
        "str": "héllo",
        "bytes": b"\x00\xff",
        "list": [1, [2, 3]],
        "tuple": (1, "a"),
        (1, 2): "tuple key",
    }
    assert chain.call(echo, "echo", value).return_value == value
    with pytest.raises(TypeError, match="float"):
        chain.call(echo, "echo", 1.5)


def test_failed_call_is_a_receipt_and_raise_for_status_shows_the_traceback(chain, counter):
    r = chain.call(counter, "fail", "bad amount")
    assert not r.ok and r.status == "failed"
    assert r.error.kind == "revert"
    assert r.error.message == "ValueError: bad amount"
    assert "in fail" in r.error.traceback
    assert r.fee > 0  # a reverting call still pays what it used
    assert chain.storage(counter, "n") == 0  # its write was discarded
    with pytest.raises(timerhost.Reverted) as info:
        r.raise_for_status()
    text = str(info.value)
    assert "ValueError: bad amount" in text and "in fail" in text and "cycles used" in text
    assert info.value.receipt is r


def test_out_of_cycles_is_an_outcome(chain, counter):
    r = chain.call(counter, "spin", cycles_limit=50_000)
    assert r.error.kind == "out_of_cycles"
    assert r.cycles_used == 50_000


def test_block_puts_several_transactions_in_one_block(chain, accounts, counter, counter_source):
    alice, bob = accounts[:2]
    height = chain.height
    with chain.block() as b:
        b.call(counter, "bump", 1, sender=alice)
        b.call(counter, "bump", 2, sender=alice)  # same sender: next nonce
        b.transfer(bob, 10, sender=alice)
        new = b.deploy(counter_source, sender=bob, args=(9,))
    assert chain.height == height + 1
    assert [r.ok for r in b.receipts] == [True, True, True, True]
    assert [r.return_value for r in b.receipts[:2]] == [1, 3]
    assert {r.height for r in b.receipts} == {chain.height}
    assert b.mined.tx_count == 4
    assert b.receipts[3].created_actor == new.address
    assert chain.storage(new, "n") == 9


def test_block_body_raising_mines_nothing(chain, accounts, counter):
    height = chain.height
    with pytest.raises(RuntimeError):
        with chain.block() as b:
            b.call(counter, "bump", 1)
            raise RuntimeError("changed my mind")
    assert chain.height == height


def test_mine_and_warp_drive_the_logical_clock(chain):
    start_height, start_time = chain.height, chain.timestamp
    blocks = chain.mine(5, interval=3)
    assert [b.height for b in blocks] == list(range(start_height + 1, start_height + 6))
    # Block timestamps are unix milliseconds; the seconds forms keep working.
    assert [b.timestamp for b in blocks] == [start_time + 3000 * i for i in range(1, 6)]
    assert chain.height == start_height + 5
    assert chain.state_root == blocks[-1].state_root
    assert chain.get_block(chain.height) == blocks[-1]
    assert chain.get_block(chain.height + 1) is None
    target = chain.timestamp + 1000
    block = chain.warp(timestamp_ms=target)
    assert block.timestamp == chain.timestamp == target
    with pytest.raises(ValueError, match="timestamps must increase"):
        chain.warp(timestamp_ms=target)
    seconds = chain.timestamp // 1000 + 10
    assert chain.warp(seconds).timestamp == seconds * 1000
    fast = chain.mine(3, interval_ms=200)
    assert [b.timestamp for b in fast] == [seconds * 1000 + 200 * i for i in range(1, 4)]
    assert chain.mine(0) == []


def test_rejected_transactions_raise_and_mine_nothing(chain, accounts):
    alice, bob = accounts[:2]
    height = chain.height
    with pytest.raises(timerhost.TransactionRejected, match="insufficient balance"):
        chain.transfer(bob, 10**30, sender=alice)
    with pytest.raises(ValueError, match='"amount"'):
        chain.transfer(bob, 2**128, sender=alice)  # not a u128
    with pytest.raises(timerhost.TransactionRejected, match="nonce"):
        chain.transfer(bob, 1, sender=alice, nonce=chain.nonce(alice) + 5)
    stranger = chain.add_account("0x" + "42" * 32)
    with pytest.raises(timerhost.TransactionRejected, match="insufficient balance"):
        chain.transfer(bob, 1, sender=stranger)
    with pytest.raises(ValueError, match="no known signing key"):
        chain.transfer(bob, 1, sender="0x" + "11" * 20)
    with pytest.raises(TypeError, match="unknown transaction option"):
        chain.transfer(bob, 1, sender=alice, gas=5)
    assert chain.height == height


def test_wrong_signer_for_governance_is_rejected(chain, accounts):
    height = chain.height
    with pytest.raises(timerhost.TransactionRejected, match="system_deployers|governance|system"):
        chain.governance.update_timer_config(max_ttl_blocks=10, signer=accounts[3])
    assert chain.height == height


def test_timers_and_timer_queries(chain, accounts, counter):
    alice = accounts[0]
    chain.transfer(counter, 10**18, sender=alice).raise_for_status()
    scheduled = chain.call(counter, "schedule", 3, b"a")
    first = scheduled.return_value
    second = chain.call(counter, "schedule", 5, b"b").return_value
    assert isinstance(first, bytes) and len(first) == 32
    timers = chain.timers(actor=counter)
    assert [t.timer_id for t in timers] == [first, second]
    t = chain.timer(first)
    assert t.actor_address == counter.address
    assert t.payload == b"a" and t.handler == "handle_timer"
    assert t.fee_payer == counter.address
    assert t.gas_limit_per_fire == chain.timer_config["max_cycles_per_fire"]
    # The default TTL counts from the scheduling block (CIP-5 §4.1).
    assert t.expires_at == scheduled.height + chain.timer_config["max_ttl_blocks"]
    assert chain.timers(height=t.height) == [t]
    assert chain.timers(fee_payer=counter) == timers
    assert chain.timers(actor=alice) == []
    assert chain.timers() == timers
    # It fires at its height, then no longer exists.
    chain.mine_until(t.height)
    assert chain.timer(first) is None
    assert chain.storage(counter, "fired") == 1
    fired = chain.events(name="TimerFired", actor=counter)
    assert len(fired) == 1 and fired[0]["timer_id"] == first
    assert fired[0].height == t.height


def test_events_filters(chain, counter):
    h1 = chain.call(counter, "bump", 1).height
    chain.mine(2)
    h2 = chain.call(counter, "bump", 2).height
    bumped = chain.events(name="Bumped")
    assert [(e.data["n"], e.height) for e in bumped] == [(1, h1), (3, h2)]
    assert chain.events(name="Bumped", from_height=h1 + 1) == bumped[1:]
    assert chain.events(name="Bumped", to_height=h2 - 1) == bumped[:1]
    assert chain.events(actor=counter, name="Bumped") == bumped
    assert chain.events(name="NoSuchEvent") == []


def test_configs_and_governance(chain, accounts, counter):
    cfg = chain.timer_config
    assert cfg["max_ttl_blocks"] > 0 and "lane_cycles_per_block" in cfg
    fee = chain.basefee_config
    assert isinstance(fee["cycle_basefee"], int) and fee["max_block_cycles"] > 0

    r = chain.governance.update_timer_config(max_ttl_blocks=100)
    assert r.event("timer_config.updated")["max_ttl_blocks"] == 100
    chain.mine(1)
    assert chain.timer_config == {**cfg, "max_ttl_blocks": 100}
    with pytest.raises(TypeError, match="unknown TimerConfig field"):
        chain.governance.update_timer_config(ttl=5)
    with pytest.raises(timerhost.TransactionRejected):
        chain.governance.update_timer_config(max_timers_per_actor=0)

    chain.governance.update_basefee_config(min_cycle_basefee=150)
    chain.mine(1)
    assert chain.basefee_config["min_cycle_basefee"] == 150

    chain.transfer(counter, 10**18).raise_for_status()
    timer_id = chain.call(counter, "schedule", 10, b"x").return_value
    t = chain.timer(timer_id)
    r = chain.governance.extend_timer(timer_id, t.expires_at + 10**9)
    assert r.event("timer.extended_by_governance")
    assert chain.timer(timer_id).expires_at == chain.height + 100  # clamped to max_ttl
    r = chain.governance.cancel_timer(timer_id)
    assert r.event("timer.cancelled_by_governance")
    assert chain.timer(timer_id) is None
    chain.governance.cancel_timer(timer_id)  # idempotent


def test_snapshot_and_revert_restore_everything_exactly(chain, accounts, counter):
    alice, bob = accounts[:2]
    chain.transfer(counter, 10**18).raise_for_status()
    pending = chain.call(counter, "schedule", 4, b"p").return_value
    snap = chain.snapshot()
    saved = (
        chain.height,
        chain.timestamp,
        chain.state_root,
        chain.balance(alice),
        chain.balance(bob),
        chain.nonce(alice),
        chain.storage(counter, "n"),
        chain.timers(),
        chain.events(),
    )
    chain.call(counter, "bump", 10, sender=alice)
    chain.transfer(bob, 5, sender=alice)
    chain.call(counter, "schedule", 2, b"q")
    chain.mine(6)  # the pending timer fires
    chain.warp(timestamp_ms=chain.timestamp + 100)
    assert chain.timer(pending) is None
    chain.revert(snap)
    assert saved == (
        chain.height,
        chain.timestamp,
        chain.state_root,
        chain.balance(alice),
        chain.balance(bob),
        chain.nonce(alice),
        chain.storage(counter, "n"),
        chain.timers(),
        chain.events(),
    )
    assert chain.timer(pending) is not None
    with pytest.raises(ValueError, match="already used"):
        chain.revert(snap)
    # The chain goes on from the snapshot as if nothing happened.
    assert chain.call(counter, "bump", 1).return_value == 1


def test_nested_snapshots_and_replays_are_deterministic(counter_source):
    def run(chain):
        actor = chain.deploy(counter_source)
        roots = []
        for i in range(5):
            chain.call(actor, "bump", i)
            roots.append(chain.state_root)
        return roots

    a, b = timerhost.Chain(), timerhost.Chain()
    assert run(a) == run(b)
    s1 = a.snapshot()
    first = run(a)
    a.revert(s1)
    assert run(a) == first  # same blocks from the same state: same roots


def test_hostile_actor_cannot_take_the_process_down(chain):
    bomb = chain.deploy(
        "class Bomb:\n"
        "    def grow(self):\n"
        "        x = [0]\n"
        "        while True:\n"
        "            x = x + x\n"
        "    def deep(self, n):\n"
        "        return self.deep(n + 1)\n"
    )
    r = chain.call(bomb, "grow", cycles_limit=50_000_000)
    assert r.error.kind in {"out_of_memory", "out_of_cycles"}
    r = chain.call(bomb, "deep", 0)
    assert not r.ok
    assert chain.call(bomb, "grow", cycles_limit=1_000).error.kind == "out_of_cycles"


def test_actors_read_the_block_timestamp_in_ms_and_in_whole_seconds(chain):
    clock = chain.deploy(
        '''
import pvm_host

class Clock:
    def now(self):
        return [pvm_host.block_timestamp_ms(), pvm_host.block_timestamp()]
'''
    )
    chain.interval_ms = 250
    r = chain.call(clock, "now").raise_for_status()
    ms, seconds = r.return_value
    assert ms == chain.timestamp == chain.get_block(r.height).timestamp
    assert seconds == ms // 1000
    chain.mine(3)
    assert chain.timestamp == ms + 3 * 250
