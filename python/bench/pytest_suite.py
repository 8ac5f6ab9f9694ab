"""Benchmark: a generated pytest suite of N tests x B blocks on the plugin's
`chain` fixture (issue #6 target: 200 tests x 10 blocks in under a minute).

Each test deploys a self-rescheduling actor (a timer fires every other block),
calls it, and mines until it has produced B blocks, asserting on the result —
the shape of a real actor test. The suite runs in a fresh `python -m pytest`
process, so the figure includes interpreter start, plugin loading, the
session chain and every per-test snapshot/revert.

    python python/bench/pytest_suite.py [--tests 200] [--blocks 10]
"""

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ACTOR = '''
class Ticker:
    def deploy(self):
        self.storage["ticks"] = 0
        pvm_host.schedule_timer(pvm_host.block_height() + 2, b"")

    def handle_timer(self, payload):
        self.storage["ticks"] = self.storage["ticks"] + 1
        pvm_host.schedule_timer(pvm_host.block_height() + 2, b"")

    def poke(self, n):
        self.storage["poked"] = n
        return n
'''

TEST = '''
import pytest

@pytest.mark.parametrize("i", range({tests}))
def test_ticker(chain, deploy, i):
    start = chain.height
    actor = deploy("ticker.py", value=10**18)            # block 1
    assert chain.call(actor, "poke", i).return_value == i  # block 2
    chain.mine({blocks} - 2)
    assert chain.height == start + {blocks}
    assert chain.storage(actor, "ticks") == ({blocks} - 1) // 2
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "actors").mkdir()
        (root / "actors" / "ticker.py").write_text(ACTOR)
        (root / "test_generated.py").write_text(textwrap.dedent(TEST.format(tests=args.tests, blocks=args.blocks)))
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(root)],
            cwd=root,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr
    if proc.returncode != 0:
        print(proc.stdout[-4000:], proc.stderr[-4000:], sep="\n")
        raise SystemExit(f"the generated suite failed: {tail}")
    blocks = args.tests * args.blocks
    print(f"{args.tests} tests x {args.blocks} blocks = {blocks} blocks: {elapsed:.2f} s wall "
          f"({elapsed / args.tests * 1000:.1f} ms/test, {blocks / elapsed:.0f} blocks/s) — pytest: {tail}")


if __name__ == "__main__":
    main()
