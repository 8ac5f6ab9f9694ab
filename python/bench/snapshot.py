"""Micro-benchmark of the in-process chain's fixed costs: creating a chain,
and the snapshot/revert pair the pytest `chain` fixture runs around every test.

    python python/bench/snapshot.py [--rounds 1000]

The chain is the shape a test leaves behind: a heartbeat actor deployed and
ten blocks mined (a timer fires every other block).
"""

import argparse
import time
from pathlib import Path

import timerhost

HEARTBEAT = Path(__file__).resolve().parents[2] / "actors" / "heartbeat" / "heartbeat.py"


def per_round_us(rounds: int, step) -> float:
    start = time.perf_counter()
    for _ in range(rounds):
        step()
    return (time.perf_counter() - start) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1000)
    args = parser.parse_args()

    new_chain = per_round_us(max(args.rounds // 10, 1), timerhost.Chain)
    chain = timerhost.Chain()
    chain.deploy(HEARTBEAT, args=(2,), value=10**18)
    chain.mine(10)

    def snapshot_revert() -> None:
        chain.revert(chain.snapshot())

    def snapshot_block_revert() -> None:
        snap = chain.snapshot()
        chain.mine(1)
        chain.revert(snap)

    pair = per_round_us(args.rounds, snapshot_revert)
    with_block = per_round_us(args.rounds, snapshot_block_revert)
    print(f"Chain(): {new_chain / 1000:.2f} ms; at height {chain.height}: snapshot+revert {pair:.0f} µs, "
          f"snapshot+one block+revert {with_block:.0f} µs ({args.rounds} rounds)")


if __name__ == "__main__":
    main()
