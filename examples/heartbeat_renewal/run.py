"""A heartbeat that renews a long-dated timer with `extend_timer`; without
it, the timer lapses. See README.md."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _chain import connect  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(chain, out=print):
    owner = chain.accounts[0]
    chain.mine(1)  # a fresh node's head is its genesis time: start from now
    # The reminder is 100 s away with a TTL of 30 blocks; the heartbeat
    # renews it every 10 blocks.
    due_ms = chain.timestamp + 100_000
    kept = chain.deploy(HERE / "keepalive.py", args=(due_ms, 10, 30), value=10**17, sender=owner)
    dropped = chain.deploy(HERE / "keepalive.py", args=(due_ms, 10, 30), value=10**17, sender=owner)
    chain.call(dropped, "stop", sender=owner).raise_for_status()

    # Sixty blocks pass (the stopped one's reminder lapses after 30), then
    # the clock reaches the reminder's time.
    chain.mine(60)
    chain.warp(timestamp_ms=max(due_ms, chain.timestamp + 1_000))
    renewals = chain.storage(kept, "renewals")
    out(f"kept alive: renewed {renewals} times, reminded at {chain.storage(kept, 'reminded_at')}")
    out(f"heartbeat stopped: reminded at {chain.storage(dropped, 'reminded_at')} (the reminder lapsed)")
    assert chain.storage(kept, "reminded_at") is not None and renewals >= 5
    assert chain.storage(dropped, "reminded_at") is None
    assert chain.timers(actor=kept) == [] and chain.timers(actor=dropped) == []
    return renewals


if __name__ == "__main__":
    main(connect(__doc__))
