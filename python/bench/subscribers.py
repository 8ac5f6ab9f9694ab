"""Subscribers against a loaded node (#48): block production time with and
without N WebSocket subscribers (``th_subscribe ["newHeads"]``), and how
late the notifications arrive.

    python python/bench/subscribers.py [--subscribers 1000] [--rate 4000] [--duration 20] [--pin]

It starts ``timerhost dev --block-time 200ms`` (``TIMERHOST_BIN`` or the
release build), then twice runs ``timerhost load --rate R``: first alone,
then with N subscribers connected, each on its own connection. Block
production time is the node's own ``elapsed_ms`` per block (``--json``);
delivery latency is a notification's arrival minus its block's timestamp.
``--pin`` keeps the node on CPU 0 and everything else (the load tool, the
subscribers) on CPU 1 (``taskset``), so the clients' own work cannot take the
node's time: what the node spends on subscriptions is then what changes.
Needs ``websockets``.
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path

import websockets


def binary() -> str:
    named = os.environ.get("TIMERHOST_BIN")
    if named:
        return named
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/timerhost/target"))
    return str(target / "release" / "timerhost")


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s))) - 1))] if s else float("nan")


class Node:
    """`timerhost dev` with its `--json` events in a file (read when asked,
    so nothing here can slow the node by not draining a pipe)."""

    def __init__(self, home: Path, cpus=None):
        home.mkdir(parents=True, exist_ok=True)
        self.log_path = home.parent / (home.name + ".events.jsonl")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            pinned(cpus) + [binary(), "dev", "--block-time", "200ms", "--no-examples", "--rpc", "127.0.0.1:0", "--home", str(home), "--json"],
            stdout=self.log,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 60
        self.url = None
        while self.url is None:
            if time.time() > deadline:
                raise SystemExit("timerhost dev did not start")
            time.sleep(0.1)
            for event in self._events():
                if event.get("event") == "started":
                    self.url = event["rpc"]

    def _events(self):
        with open(self.log_path) as f:
            for line in f:
                try:
                    yield json.loads(line)
                except ValueError:
                    continue

    @property
    def blocks(self):
        """(height, elapsed_ms, txs) of every block so far."""
        return [(e["height"], e["elapsed_ms"], e["txs"]) for e in self._events() if e.get("event") == "block"]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def pinned(cpus):
    """``taskset -c CPUS`` when given."""
    return ["taskset", "-c", cpus] if cpus else []


CLIENT_CPUS = None


def load(url: str, rate: int, duration: int) -> dict:
    out = subprocess.run(
        pinned(CLIENT_CPUS) + [binary(), "--json", "load", "--rpc", url, "--rate", str(rate), "--duration", str(duration), "--accounts", "200"],
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        raise SystemExit(f"timerhost load failed ({out.returncode}): {out.stderr.strip()[-600:]} {out.stdout.strip()[-600:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def loaded_blocks(node: Node, since: int):
    return [ms for (h, ms, txs) in node.blocks if h > since and txs > 0]


def subscribers(url: str, n: int, latencies: list, ready: threading.Event, stop: threading.Event):
    async def one():
        async with websockets.connect(url.replace("http://", "ws://"), max_queue=None) as ws:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "th_subscribe", "params": ["newHeads"]}))
            await ws.recv()
            while not stop.is_set():
                try:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 1))
                except asyncio.TimeoutError:
                    continue
                block = msg["params"]["result"]
                latencies.append(time.time() * 1000 - block["timestamp"])

    async def all_of_them():
        tasks = []
        for _ in range(n):
            tasks.append(asyncio.create_task(one()))
            await asyncio.sleep(0.002)
        ready.set()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(all_of_them())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=4000)
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--home", default="/tmp/timerhost-subscribers-bench")
    parser.add_argument("--pin", action="store_true", help="node on CPU 0, clients on CPU 1")
    args = parser.parse_args()
    global CLIENT_CPUS
    if args.pin:
        CLIENT_CPUS = "1"
        os.sched_setaffinity(0, {1})
    home = Path(args.home)
    subprocess.run(["rm", "-rf", str(home)], check=True)
    node = Node(home, "0" if args.pin else None)
    try:
        time.sleep(1)
        start = node.blocks[-1][0] if node.blocks else 0
        alone = load(node.url, args.rate, args.duration)
        base = loaded_blocks(node, start)

        latencies, ready, stop = [], threading.Event(), threading.Event()
        thread = threading.Thread(target=subscribers, args=(node.url, args.subscribers, latencies, ready, stop), daemon=True)
        thread.start()
        ready.wait(120)
        time.sleep(2)
        start = node.blocks[-1][0]
        latencies.clear()
        with_subs = load(node.url, args.rate, args.duration)
        loaded = loaded_blocks(node, start)
        stop.set()
        thread.join(10)
    finally:
        node.stop()
    where = ", node pinned to CPU 0, clients to CPU 1" if args.pin else ""
    print(f"| {args.rate} tx/s for {args.duration} s, dev node, 200 ms blocks{where} | alone | {args.subscribers} newHeads subscribers |")
    print("|---|---|---|")
    print(f"| committed tx/s | {alone['committed_tps']} | {with_subs['committed_tps']} |")
    print(f"| block production, median ms (loaded blocks) | {statistics.median(base):.1f} | {statistics.median(loaded):.1f} |")
    print(f"| block production, mean ms | {statistics.mean(base):.1f} | {statistics.mean(loaded):.1f} |")
    print(f"| transaction latency p99, ms | {alone['latency_ms']['p99']} | {with_subs['latency_ms']['p99']} |")
    print(f"| notifications received | — | {len(latencies)} |")
    print(f"| delivery latency (arrival − block timestamp) p50 / p99 ms | — | {pct(latencies, 50):.0f} / {pct(latencies, 99):.0f} |")


if __name__ == "__main__":
    main()
