"""The timer-lane fee market (#31, CIP-1 v3 Part III) from Python: under
``ordering = "market"`` the lane has its own basefee, timers carry
``max_fee_per_cycle`` and ``max_priority_fee_per_cycle``, a cap below the
basefee is refused, and a timer priced out while it waits is not charged.
(The block-by-block rules are tested in ``host/chain/tests/market.rs``.)"""

import pytest

from timerhost import Reverted

GAS = 7_000
BASE = 3_000
LANE_FIRES = 4

BIDDER = '''
import pvm_host

class Bidder:
    def at(self, height, label, max_fee=None, tip=None):
        return pvm_host.schedule_timer_ex(
            height, label.encode(), gas_limit=7000,
            max_fee_per_cycle=max_fee, max_priority_fee_per_cycle=tip,
        )

    def with_bid(self, height, bid):
        return pvm_host.schedule_timer_ex(height, b"b", gas_limit=7000, bid=bid)

    def both(self, height):
        return pvm_host.schedule_timer_ex(height, b"x", bid=1, max_priority_fee_per_cycle=1)

    def many(self, height, n):
        return [pvm_host.schedule_timer_ex(height, b"f%d" % i, gas_limit=7000) for i in range(n)]

    def quote(self, height, max_fee=None, tip=None):
        return pvm_host.timer_quote(height=height, gas_limit=7000,
                                    max_fee_per_cycle=max_fee, max_priority_fee_per_cycle=tip)

    def watch_with_caps(self, max_fee):
        return pvm_host.watch(["k"], gas_limit=7000, max_fee_per_cycle=max_fee, bid=3)

    def handle_timer(self, payload):
        pvm_host.emit("Fired", payload.decode())
'''


@pytest.fixture
def bidder(chain):
    return chain.deploy(BIDDER, value=10**21)


def market(chain):
    chain.governance.update_timer_config(
        ordering="market",
        max_cycles_per_fire=GAS,
        lane_cycles_per_block=LANE_FIRES * (GAS + BASE),
        min_lane_basefee=1_000,
    ).raise_for_status()
    chain.mine(1)
    assert chain.timer_config["ordering"] == "market"


def fired(chain, actor):
    return [e.data for e in chain.events(name="Fired", actor=actor)]


def fill_lane(chain, bidder, blocks):
    """Keeps the lane full for ``blocks`` blocks (four default-cap timers each)."""
    for _ in range(blocks):
        chain.call(bidder, "many", chain.height + 2, LANE_FIRES).raise_for_status()


def test_lane_basefee_is_in_every_block_and_moves_with_the_lane(chain, bidder):
    market(chain)
    assert chain.lane_basefee == 1_000
    start = chain.height
    fill_lane(chain, bidder, 4)
    chain.mine(2)
    blocks = [chain.get_block(h) for h in range(start, chain.height + 1)]
    fires = [sum(1 for r in b.fires) for b in blocks]
    after = [b.lane_basefee for b in blocks[1:]] + [chain.lane_basefee]
    for block, n, next_fee in zip(blocks, fires, after):
        if n == LANE_FIRES:
            assert next_fee == block.lane_basefee + block.lane_basefee // 8, "+12.5 % after a full lane"
        elif n == 0:
            assert next_fee == max(1_000, block.lane_basefee - block.lane_basefee // 8)
    assert fires.count(LANE_FIRES) >= 3 and chain.lane_basefee > 1_000


def test_a_cap_below_the_lane_basefee_is_refused_with_the_value(chain, bidder):
    market(chain)
    fill_lane(chain, bidder, 3)
    basefee = chain.lane_basefee
    with pytest.raises(Reverted, match=f"below the lane basefee {basefee}"):
        chain.call(bidder, "at", chain.height + 3, "low", basefee - 1).raise_for_status()


def test_bid_and_max_priority_fee_are_one_fee(chain, bidder):
    with pytest.raises(Reverted, match="name the same priority fee"):
        chain.call(bidder, "both", chain.height + 3).raise_for_status()
    chain.call(bidder, "with_bid", chain.height + 3, 7).raise_for_status()
    (timer,) = chain.timers(actor=bidder)
    assert timer.bid == timer.max_priority_fee_per_cycle == 7
    assert timer.max_fee_per_cycle == 2 * chain.lane_basefee + 7, "the default cap"


def test_fees_and_weight_are_in_the_fire(chain, bidder):
    market(chain)
    chain.call(bidder, "at", chain.height + 2, "a", 3_000, 400).raise_for_status()
    chain.mine(2)
    (fire,) = chain.events(name="TimerFired", actor=bidder)
    assert fire.data["lane_basefee"] == 1_000
    assert fire.data["priority_fee"] == 400
    assert fire.data["priority_clamped"] is False
    assert fire.data["weight"] == 2_000


def test_the_quote_prices_the_caps_and_suggests_tiers(chain, bidder):
    market(chain)
    q = chain.quote_timer(chain.height + 3, GAS, max_fee_per_cycle=3_000, bid=400)
    plain = chain.quote_timer(chain.height + 3, GAS)
    assert q["lane_basefee"] == 1_000
    assert q["max_fee_per_cycle"] == 3_000 and q["max_priority_fee_per_cycle"] == 400
    assert q["max_cost"] - plain["max_cost"] == GAS * (3_000 - plain["max_fee_per_cycle"])
    tiers = q["suggested_fees"]
    assert list(tiers) == ["economy", "standard", "fast", "urgent"]
    assert tiers["standard"]["max_fee_per_cycle"] == 2_000
    assert all(t["max_fee_per_cycle"] >= q["lane_basefee"] for t in tiers.values())
    # pvm_host.timer_quote answers the same in the next block.
    inside = chain.call(bidder, "quote", chain.height + 4, 3_000, 400).raise_for_status().return_value
    assert inside["max_cost"] == q["max_cost"] and inside["lane_basefee"] == 1_000
    with pytest.raises(ValueError, match="below the lane basefee"):
        chain.quote_timer(chain.height + 3, GAS, max_fee_per_cycle=999)


def test_a_priced_out_timer_waits_uncharged_then_fires(chain, bidder):
    market(chain)
    h = chain.height
    chain.call(bidder, "at", h + 5, "patient", 1_100).raise_for_status()
    fill_lane(chain, bidder, 6)
    deferred = chain.events(name="TimerDeferred", actor=bidder)
    assert len(deferred) == 1 and deferred[0].data["reason"] == "below_basefee"
    assert "patient" not in fired(chain, bidder)
    assert chain.globalbox()[-1]["waiting"] is True
    chain.mine(12)
    assert "patient" in fired(chain, bidder), "fired once the basefee fell back to its cap"


def test_a_watch_carries_fee_caps(chain, bidder):
    chain.call(bidder, "watch_with_caps", 5_000).raise_for_status()
    (watch,) = chain.timers(actor=bidder)
    assert (watch.max_fee_per_cycle, watch.bid) == (5_000, 3)


def test_globalbox_timer_ids_are_bytes(chain, bidder):
    market(chain)
    chain.governance.update_timer_config(max_fires_per_block=1).raise_for_status()
    chain.call(bidder, "many", chain.height + 2, 3).raise_for_status()
    chain.mine(2)
    queued = chain.globalbox()
    assert queued and all(isinstance(e["timer_id"], bytes) and len(e["timer_id"]) == 32 for e in queued)
    assert {t.timer_id for t in chain.timers(actor=bidder)} >= {e["timer_id"] for e in queued}
