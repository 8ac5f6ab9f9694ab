"""Subscriptions over WebSocket (#48) against ``timerhost dev --manual``:
new heads in block order, a resume from a height with no gap and no
duplicate, events filtered like ``th_getEvents``, a timer's life until it
fires and the subscription ends, and bad requests refused by name."""

import json

import pytest

from timerhost.rpc import RpcChain

from test_examples import manual_dev_node

ws_client = pytest.importorskip("websockets.sync.client")

ACTOR = '''
import pvm_host

class Bell:
    def ring(self, n):
        pvm_host.emit("Rung", {"n": n})

    def arm(self, blocks):
        return pvm_host.schedule_timer_ex(pvm_host.block_height() + blocks, b"", gas_limit=50000)

    def handle_timer(self, payload):
        pvm_host.emit("Rung", {"n": -1})
'''


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    with manual_dev_node(tmp_path_factory.mktemp("subs") / "home") as url:
        yield url


class Sub:
    """One subscription on its own connection."""

    def __init__(self, url, params):
        self.ws = ws_client.connect(url.replace("http://", "ws://")).__enter__()
        self.ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "th_subscribe", "params": params}))
        self.reply = json.loads(self.ws.recv(timeout=10))

    def next(self, timeout=10):
        msg = json.loads(self.ws.recv(timeout=timeout))
        assert msg["method"] == "th_subscription", msg
        return msg["params"]

    def close(self):
        self.ws.close()


def test_new_heads_arrive_in_order_and_a_resume_has_no_gap_or_duplicate(node):
    rpc = RpcChain(node)
    start = rpc.height
    sub = Sub(node, ["newHeads", {"from_height": start + 1}])
    assert "result" in sub.reply, sub.reply
    rpc.mine(3)
    heights = [sub.next()["result"]["height"] for _ in range(3)]
    assert heights == [start + 1, start + 2, start + 3]
    sub.close()
    again = Sub(node, ["newHeads", {"from_height": start + 2}])
    got = [again.next()["result"] for _ in range(2)]
    assert [g["height"] for g in got] == [start + 2, start + 3]
    assert got[0]["hash"] == rpc.rpc("th_getBlock", start + 2)["hash"]
    assert "timers" in got[0]
    again.close()


def test_events_are_filtered_and_a_timers_life_ends_its_subscription(node):
    rpc = RpcChain(node)
    alice = rpc.accounts[0]
    bell = rpc.deploy(ACTOR, sender=alice, value=10**18)
    events = Sub(node, ["events", {"name": "Rung", "actor": str(bell)}])
    assert "result" in events.reply, events.reply
    rpc.call(bell, "ring", 5, sender=alice).raise_for_status()
    note = events.next()["result"]
    assert [e["data"]["n"] for e in note["events"]] == [5], note
    assert note["height"] == rpc.height

    r = rpc.call(bell, "arm", 2, sender=alice)
    r.raise_for_status()
    # Over RPC, bytes come back as {"$bytes": "0x…"}.
    timer_id = r.return_value["$bytes"]
    life = Sub(node, ["timer", timer_id])
    assert "result" in life.reply, life.reply
    first = life.next()["result"]
    assert [e["name"] for e in first["events"]] == ["TimerScheduled"], first
    rpc.mine(3)
    seen = first["events"]
    ended = first["ended"]
    while not ended:
        note = life.next()["result"]
        seen += note["events"]
        ended = note["ended"]
    assert "TimerFired" in [e["name"] for e in seen], seen
    # The fire's own event reached the events subscription too.
    fired = events.next()["result"]
    assert [e["data"]["n"] for e in fired["events"]] == [-1], fired
    events.close()
    life.close()


def test_bad_subscriptions_are_refused_by_name(node):
    for params, words in [
        (["blocks"], "unknown subscription"),
        (["timer", "0x" + "00" * 32], "no timer"),
        (["newHeads", {"from_height": "soon"}], "from_height"),
    ]:
        sub = Sub(node, params)
        assert words in sub.reply["error"]["message"], sub.reply
        sub.close()


def test_rpcchain_subscribe_sync_and_async(node):
    import asyncio
    import threading

    rpc = RpcChain(node)
    start = rpc.height
    miner = threading.Timer(0.3, lambda: rpc.mine(2))
    miner.start()
    heights = []
    for note in rpc.subscribe("newHeads", from_height=start + 1):
        heights.append(note["height"])
        if len(heights) == 2:
            break
    miner.join()
    assert heights == [start + 1, start + 2]

    async def two():
        got = []
        async for note in rpc.asubscribe("newHeads", from_height=start + 1):
            got.append(note["height"])
            if len(got) == 2:
                return got

    assert asyncio.run(two()) == [start + 1, start + 2]


def test_a_dev_revert_ends_a_subscription_and_a_new_one_sees_the_new_blocks(node):
    """The subscriptions share each recent block's message; a ``dev_revert``
    must neither leave a subscriber on the replaced blocks nor serve a new
    one the message of a block that is gone."""
    rpc = RpcChain(node)
    base = rpc.height
    snapshot = rpc.rpc("dev_snapshot")
    live = Sub(node, ["newHeads", {"from_height": base + 1}])
    rpc.mine(2)
    old = [live.next()["result"] for _ in range(2)]
    assert [b["height"] for b in old] == [base + 1, base + 2]
    assert rpc.rpc("dev_revert", snapshot) is True
    rpc.mine(2)
    new_hash = rpc.rpc("th_getBlock", base + 1)["hash"]
    assert new_hash != old[0]["hash"], "the re-mined block should differ (a later timestamp)"
    ended = live.next()
    assert "error" in ended, ended
    assert f"resubscribe with from_height {base + 1}" in json.dumps(ended["error"]), ended
    live.close()
    fresh = Sub(node, ["newHeads", {"from_height": base + 1}])
    assert fresh.next()["result"]["hash"] == new_hash
    fresh.close()
