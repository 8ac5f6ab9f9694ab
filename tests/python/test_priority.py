"""Priority ordering and the Globalbox (#18): under ``ordering = "priority"``
every due timer is queued by ``w_age × age + w_bid × bid`` and materialised
at the end of the block under the block and per-target quotas."""

import pytest

QUEUER = '''
import pvm_host

class Queuer:
    def at(self, height, bid, label):
        return pvm_host.schedule_timer_ex(height, label.encode(), gas_limit=20000, bid=bid)

    def many(self, height, bid, labels):
        return [pvm_host.schedule_timer_ex(height, l.encode(), gas_limit=20000, bid=bid) for l in labels]

    def at_time(self, timestamp_ms, bid, label):
        return pvm_host.schedule_timer_at(timestamp_ms, label.encode(), gas_limit=20000, bid=bid)

    def cancel(self, timer_id):
        pvm_host.cancel_timer(timer_id)

    def extend(self, timer_id, expires_at):
        pvm_host.extend_timer(timer_id, expires_at)

    def handle_timer(self, payload):
        pvm_host.emit("Fired", payload.decode())
'''


@pytest.fixture
def queuer(chain):
    return chain.deploy(QUEUER, value=10**19)


def priority(chain, **fields):
    chain.governance.update_timer_config(ordering="priority", **fields).raise_for_status()
    assert chain.timer_config["ordering"] == "priority"


def fired_log(chain, actor):
    """(label, height) of every fire of `actor`, in order."""
    return [(e.data, e.height) for e in chain.events(name="Fired", actor=actor)]


def fired(chain, actor):
    return [label for label, _ in fired_log(chain, actor)]


def test_higher_bid_first_among_timers_due_together(chain, queuer):
    priority(chain, max_fires_per_block=1)
    h = chain.height + 5
    chain.call(queuer, "at", h, 5, "low").raise_for_status()
    chain.call(queuer, "at", h, 50, "high").raise_for_status()
    chain.call(queuer, "at", h, 20, "mid").raise_for_status()
    chain.mine_until(h)
    assert fired(chain, queuer) == ["high"]
    queued = chain.globalbox()
    assert [e["bid"] for e in queued] == [20, 5] and [e["position"] for e in queued] == [0, 1]
    assert all(e["kind"] == "height" and e["due_height"] == h for e in queued)
    chain.mine(2)
    assert fired(chain, queuer) == ["high", "mid", "low"]
    assert chain.globalbox() == []


def test_aging_lets_old_low_bids_through_a_sustained_high_bid_flood(chain, queuer):
    """200 blocks in which the high bids alone fill every block: each
    low-bid timer still fires, once w_age × its age exceeds the bid gap."""
    priority(chain, max_fires_per_block=3, w_age=1, w_bid=1)
    low_due = {}
    for i in range(200):
        with chain.block() as b:
            h = chain.height + 2
            b.call(queuer, "many", h, 50, ["flood"] * 3)
            if i % 10 == 0 and i < 120:
                b.call(queuer, "at", h, 0, f"low{i}")
                low_due[f"low{i}"] = h
    log = fired_log(chain, queuer)
    fired_at = {label: height for label, height in log if label.startswith("low")}
    assert set(fired_at) == set(low_due), "every low-bid timer fired during the flood"
    for label, due in low_due.items():
        waited = fired_at[label] - due
        assert 50 <= waited <= 70, f"{label} waited {waited} blocks (bid gap 50 × w_bid / w_age)"
    assert sum(1 for label, _ in log if label == "flood") > 550, "the flood filled the blocks"


def test_max_fires_per_target_caps_one_actors_share(chain, accounts, queuer):
    other = chain.deploy(QUEUER, value=10**19, sender=accounts[1])
    priority(chain, max_fires_per_target=1)
    h = chain.height + 3
    chain.call(queuer, "many", h, 90, ["a1", "a2", "a3"]).raise_for_status()
    chain.call(other, "many", h, 1, ["b1", "b2"]).raise_for_status()
    chain.mine_until(h)
    # queuer's bids are higher, but it gets one fire per block: other's run too.
    assert (fired(chain, queuer), fired(chain, other)) == (["a1"], ["b1"])
    chain.mine(1)
    assert (fired(chain, queuer), fired(chain, other)) == (["a1", "a2"], ["b1", "b2"])
    chain.mine(1)
    assert fired(chain, queuer) == ["a1", "a2", "a3"]


def test_order_is_frozen_once_enqueued(chain, queuer):
    priority(chain, max_fires_per_block=1)
    h = chain.height + 3
    chain.call(queuer, "many", h, 10, ["x", "y", "z"]).raise_for_status()
    chain.mine_until(h)
    before = chain.globalbox()
    # New weights apply to entries enqueued afterwards; queued ones keep
    # their place and their score.
    chain.governance.update_timer_config(w_bid=1000, w_age=0).raise_for_status()
    chain.call(queuer, "at", chain.height + 2, 11, "late").raise_for_status()
    chain.mine(1)
    after = chain.globalbox()
    kept = [(e["timer_id"], e["score"]) for e in after if e["bid"] == 10]
    assert kept == [(e["timer_id"], e["score"]) for e in before][len(before) - len(kept):]
    # "late" bid more under the new weights, yet old entries precede it only
    # if their frozen priority says so: w_bid × bid − w_age × due_height.
    assert fired(chain, queuer)[:2] == ["x", "y"]


def test_switching_fifo_to_priority_to_fifo_mid_chain(chain, queuer):
    h = chain.height + 4
    chain.call(queuer, "many", h, 1, ["f1", "f2"]).raise_for_status()
    chain.call(queuer, "many", h, 9, ["p1", "p2"]).raise_for_status()
    priority(chain, max_fires_per_block=2)
    chain.mine_until(h)
    # Priority: the higher bids first, two per block.
    assert fired(chain, queuer) == ["p1", "p2"]
    assert [e["bid"] for e in chain.globalbox()] == [1, 1]
    later = chain.call(queuer, "at", chain.height + 2, 100, "fifo-later").raise_for_status()
    chain.governance.update_timer_config(ordering="fifo").raise_for_status()
    chain.mine(3)
    # Back to FIFO: the Globalbox drains in its order before FIFO resumes.
    assert fired(chain, queuer) == ["p1", "p2", "f1", "f2", "fifo-later"]
    assert chain.globalbox() == []
    assert later.ok


def test_cancel_before_materialisation_removes_the_entry_and_extend_is_refused(chain, queuer):
    priority(chain, max_fires_per_block=1)
    h = chain.height + 3
    ids = chain.call(queuer, "many", h, 10, ["a", "b", "c", "d"]).raise_for_status().return_value
    chain.mine_until(h)
    assert [e["timer_id"] for e in chain.globalbox()] == list(ids[1:])
    refused = chain.call(queuer, "extend", ids[3], h + 100)  # block h + 1 fires "b"
    assert not refused.ok and "already due and queued in the Globalbox" in refused.error.message
    deposit = chain.timer(ids[3]).deposit
    held = chain.balance(queuer)
    chain.call(queuer, "cancel", ids[3]).raise_for_status()  # block h + 2 fires "c"
    assert chain.globalbox() == [] and chain.timer(ids[3]) is None
    fires = chain.get_block(chain.height).fires
    # d's deposit came back with the cancel, c's with its fire (same size).
    assert chain.balance(queuer) == held + 2 * deposit - sum(f.fee for f in fires)
    chain.mine(2)
    assert fired(chain, queuer) == ["a", "b", "c"]


def test_time_timers_go_through_the_globalbox_at_the_end_of_the_block(chain, queuer):
    priority(chain)
    due = chain.timestamp + 10_000
    chain.call(queuer, "at_time", due, 3, "t").raise_for_status()
    block = chain.warp(timestamp_ms=due)
    (fire,) = block.fires
    assert block.receipts.index(fire) == len(block.receipts) - 1
    assert fire.event("TimerFired")["tip"] == (fire.cycles_used - 3_000) * 3
    assert fired(chain, queuer) == ["t"]


def test_expiry_and_funds_are_judged_at_materialisation(chain, queuer):
    src = QUEUER.replace(
        "    def cancel(self, timer_id):",
        "    def short(self, height, bid, label):\n"
        "        return pvm_host.schedule_timer_ex(height, label.encode(), gas_limit=20000, bid=bid, expires_at=height)\n\n"
        "    def cancel(self, timer_id):",
    )
    short = chain.deploy(src, value=10**19)
    priority(chain, max_fires_per_block=1)
    h = chain.height + 3
    chain.call(short, "at", h, 9, "first").raise_for_status()
    expiring = chain.call(short, "short", h, 1, "late").raise_for_status().return_value
    chain.mine_until(h)
    assert fired(chain, short) == ["first"]
    (queued,) = chain.globalbox()
    assert queued["timer_id"] == expiring
    block = chain.mine(1)[0]
    # Its turn came at h + 1, past its expires_at: removed, not run.
    (expired,) = [e for e in block.events if e.name == "TimerExpired"]
    assert expired["timer_id"] == expiring and block.fires == []
    assert chain.globalbox() == [] and fired(chain, short) == ["first"]


def test_shutdown_empties_the_globalbox_and_refunds_its_deposits(chain, queuer):
    priority(chain, max_fires_per_block=1)
    h = chain.height + 3
    chain.call(queuer, "many", h, 10, ["a", "b", "c"]).raise_for_status()
    chain.mine_until(h)
    queued = chain.globalbox()
    assert len(queued) == 2
    deposits = sum(chain.timer(e["timer_id"]).deposit for e in queued)
    held = chain.balance(queuer)
    chain.governance.shutdown_timers().raise_for_status()  # its block still fires "b"
    fee = sum(f.fee for f in chain.get_block(chain.height).fires)
    chain.mine(1)
    assert chain.globalbox() == [] and chain.timers() == []
    assert chain.timer_status == "shutdown"
    assert chain.balance(queuer) == held + deposits - fee
