"""Bids and deliveries (#18, first step): a timer may bid a priority fee per
cycle, paid to the proposer on the handler's cycles actually used; every fire
carries ``deliver_seq``, ``fire_seq`` and ``deliver_id``."""

import pytest

import timerhost

BIDDER = '''
import pvm_host

class Bidder:
    def at_height(self, height, bid):
        return pvm_host.schedule_timer_ex(height, b"", gas_limit=100000, bid=bid)

    def at_time(self, timestamp_ms, bid):
        return pvm_host.schedule_timer_at(timestamp_ms, b"", gas_limit=100000, bid=bid)

    def many(self, height, n):
        for _ in range(n):
            pvm_host.schedule_timer(height, b"")

    def handle_timer(self, payload):
        total = 0
        for i in range(200):
            total += i
        self.storage["total"] = total
'''


@pytest.fixture
def bidder(chain):
    return chain.deploy(BIDDER, value=10**18)


def test_a_bid_is_a_tip_on_the_cycles_used_and_the_rest_is_refunded(chain, bidder):
    h = chain.height + 3
    r = chain.call(bidder, "at_height", h, 7).raise_for_status()
    (timer,) = chain.timers(actor=bidder)
    assert timer.bid == 7 and r.event("TimerScheduled")["bid"] == 7
    chain.mine_until(h - 1)
    # max_cost at the firing block's basefees, without the bid.
    fees = chain.basefee_config
    base = (100_000 + 3_000) * fees["cycle_basefee"] + chain.timer_config["max_cells_per_fire"] * fees["cell_basefee"]
    block = chain.mine(1)[0]
    (fire,) = block.fires
    fired = fire.event("TimerFired")
    handler_cycles = fire.cycles_used - 3_000
    assert 0 < handler_cycles < 100_000
    assert fire.tip == fired["tip"] == handler_cycles * 7
    # The pre-charge was max_cost plus gas_limit × bid; what was not used came back.
    assert fired["cost"] + fired["refund"] == base + 100_000 * 7
    assert fired["cost"] == fire.burned + fire.tip


def test_the_proposer_receives_the_bids(chain, bidder):
    h = chain.height + 3
    chain.call(bidder, "at_height", h, 1_000).raise_for_status()
    chain.mine_until(h - 1)
    proposer = chain.get_block(chain.height).proposer
    held = chain.balance(proposer)
    block = chain.mine(1)[0]
    assert block.proposer == proposer
    (fire,) = block.fires
    assert fire.tip > 0 and chain.balance(proposer) == held + fire.tip


def test_a_bid_above_max_bid_is_refused_and_governance_can_raise_it(chain, bidder):
    limit = chain.timer_config["max_bid"]
    r = chain.call(bidder, "at_height", chain.height + 5, limit + 1)
    assert not r.ok and f"schedule_timer: bid {limit + 1} per cycle exceeds max_bid {limit}" in r.error.message
    t = chain.call(bidder, "at_time", chain.timestamp + 60_000, limit + 1)
    assert not t.ok and "schedule_timer_at: bid" in t.error.message
    chain.governance.update_timer_config(max_bid=limit + 1).raise_for_status()
    chain.call(bidder, "at_height", chain.height + 5, limit + 1).raise_for_status()


def test_a_time_timer_bids_too(chain, bidder):
    due = chain.timestamp + 20_000
    chain.call(bidder, "at_time", due, 3).raise_for_status()
    block = chain.warp(timestamp_ms=due)
    (fire,) = block.fires
    assert fire.tip == (fire.cycles_used - 3_000) * 3


def test_deliver_seq_is_monotonic_across_blocks_and_restarts(tmp_path):
    path = tmp_path / "db"
    seqs = []
    with timerhost.Chain(path=path) as chain:
        actor = chain.deploy(BIDDER, value=10**18)
        h = chain.height + 3
        chain.call(actor, "many", h, 3).raise_for_status()
        chain.call(actor, "many", h + 1, 2).raise_for_status()
        for block in chain.mine(3):
            seqs += [f.deliver_seq for f in block.fires]
            for f in block.fires:
                assert f.fire_seq == 1
                assert f.deliver_id.startswith("0x") and len(f.deliver_id) == 66
                assert f.event("TimerFired")["deliver_seq"] == f.deliver_seq
    with timerhost.Chain(path=path) as chain:
        chain.call(actor, "many", chain.height + 2, 2).raise_for_status()
        for block in chain.mine(2):
            seqs += [f.deliver_seq for f in block.fires]
    assert seqs == list(range(7))
    ids = set()
    with timerhost.Chain(path=path) as chain:
        for h in range(1, chain.height + 1):
            ids.update(f.deliver_id for f in chain.get_block(h).fires)
    assert len(ids) == 7, "deliver_id never repeats"
