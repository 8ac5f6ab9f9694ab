"""Subscribers against a loaded node (#48): block production time with and
without N WebSocket subscribers (``th_subscribe ["newHeads"]``), and how
late the notifications arrive.

    python python/bench/subscribers.py [--subscribers 1000] [--rate 4000] [--duration 60] [--window 5] [--pin]

It starts ``timerhost dev --block-time 200ms`` (``TIMERHOST_BIN`` or the
release build), opens N WebSocket connections, then runs ``timerhost load
--rate R`` once while the N connections subscribe to ``newHeads`` for
``--window`` seconds, unsubscribe for as long, and so on; blocks produced in
subscribed windows are compared with blocks in unsubscribed ones (the node
slows as its store grows, so the two must interleave in one run). Block
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
        """(timestamp ms, elapsed_ms) of every block with transactions so far."""
        return [(e["timestamp"], e["elapsed_ms"]) for e in self._events() if e.get("event") == "block" and e["txs"] > 0]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def subscribers(url: str, n: int, latencies: list, ready: threading.Event, stop: threading.Event, active: threading.Event):
    """N connections, each subscribed to ``newHeads`` while ``active`` is set
    and unsubscribed (``th_unsubscribe``) while it is not."""

    async def one():
        async with websockets.connect(url.replace("http://", "ws://"), max_queue=None) as ws:
            sub, asked = None, False
            while not stop.is_set():
                if active.is_set() and not asked:
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "th_subscribe", "params": ["newHeads"]}))
                    asked = True
                elif not active.is_set() and asked and sub is not None:
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "th_unsubscribe", "params": [sub]}))
                    sub, asked = None, False
                try:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), 0.1))
                except asyncio.TimeoutError:
                    continue
                if msg.get("id") == 1:
                    sub = msg["result"]
                elif "params" in msg and sub is not None:
                    block = msg["params"]["result"]
                    now = time.time() * 1000
                    latencies.append((now, now - block["timestamp"]))

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
    parser.add_argument("--duration", type=int, default=60)
    parser.add_argument("--window", type=int, default=5, help="seconds subscribed, then as many unsubscribed, in turn")
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
    latencies, ready, stop, active = [], threading.Event(), threading.Event(), threading.Event()
    windows = []  # (start ms, end ms, subscribed, node CPU seconds used)
    try:
        clients = threading.Thread(target=subscribers, args=(node.url, args.subscribers, latencies, ready, stop, active), daemon=True)
        clients.start()
        ready.wait(120)
        time.sleep(2)
        result = {}
        loader = threading.Thread(target=lambda: result.update(load(node.url, args.rate, args.duration)))
        loader.start()
        time.sleep(2)  # the load tool's own start
        while loader.is_alive():
            on = not active.is_set()
            (active.set if on else active.clear)()
            start, cpu = time.time() * 1000, cpu_seconds(node.proc.pid)
            loader.join(args.window)
            windows.append((start, time.time() * 1000, on, cpu_seconds(node.proc.pid) - cpu))
        stop.set()
        clients.join(10)
        blocks = node.blocks
    finally:
        node.stop()
    # Windows of subscribed and unsubscribed blocks alternate in one load
    # run, so the node's slowing as its store grows is in both alike (a
    # phase alone, then a phase subscribed, counted the growth as the
    # subscribers' cost: +45 % with one subscriber). A window's first
    # second is left out: (un)subscribing 1,000 clients takes part of it.
    per = {True: [], False: []}
    stray = 0  # notifications that arrived in the measured part of an unsubscribed window
    busy = {True: [0.0, 0.0], False: [0.0, 0.0]}  # node CPU seconds, wall seconds
    for start, end, on, cpu in windows[:-1]:
        busy[on][0] += cpu
        busy[on][1] += (end - start) / 1000
        per[on].extend(ms for ts, ms in blocks if start + 1000 <= ts < end)
        if not on:
            stray += sum(1 for at, _ in latencies if start + 1000 <= at < end)
    delays = [d for _, d in latencies]
    on, off = statistics.median(per[True]), statistics.median(per[False])
    where = ", node pinned to CPU 0, clients to CPU 1" if args.pin else ""
    print(f"{args.rate} tx/s for {args.duration} s, dev node, 200 ms blocks{where}; {args.subscribers} connections, subscribed to newHeads {args.window} s in turn with {args.window} s unsubscribed")
    print()
    print("| | unsubscribed windows | subscribed windows |")
    print("|---|---|---|")
    print(f"| loaded blocks | {len(per[False])} | {len(per[True])} |")
    print(f"| block production, median ms | {off:.1f} | {on:.1f} |")
    print(f"| block production, mean ms | {statistics.mean(per[False]):.1f} | {statistics.mean(per[True]):.1f} |")
    print(f"| node CPU, cores busy | {busy[False][0] / busy[False][1]:.3f} | {busy[True][0] / busy[True][1]:.3f} |")
    print(f"| notifications received | {stray} | {len(latencies) - stray} |")
    print(f"| delivery latency (arrival − block timestamp) p50 / p99 ms | — | {pct(delays, 50):.0f} / {pct(delays, 99):.0f} |")
    print()
    print(f"committed {result.get('committed_tps')} tx/s, transaction latency p99 {result.get('latency_ms', {}).get('p99')} ms")
    print(f"block production with the subscribers: {on / off - 1:+.1%} (median)")
    # The node's extra CPU in subscribed windows over the notifications it
    # sent in them (those that arrived within a subscribed window's span).
    sent = sum(1 for at, _ in latencies if any(on and s <= at < e for s, e, on, _ in windows[:-1]))
    extra = busy[True][0] - busy[False][0] / busy[False][1] * busy[True][1]
    if sent:
        print(f"node CPU per notification: {extra / sent * 1e6:.1f} µs ({extra:.2f} s more CPU for {sent} notifications)")


if __name__ == "__main__":
    main()
