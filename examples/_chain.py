"""What every example shares: the chain it runs on — in-process by default,
or a running `timerhost dev` with `--rpc URL` — and the repository root the
actor sources are read from."""

import argparse
from pathlib import Path

import timerhost
from timerhost.rpc import RpcChain

ROOT = Path(__file__).resolve().parent.parent
ACTORS = ROOT / "actors"


def connect(description):
    """The chain named on the command line: `--rpc URL` for a node, else an
    in-process chain."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rpc", metavar="URL", help="run against this node (e.g. `timerhost dev`'s http://127.0.0.1:8645)")
    args = parser.parse_args()
    return RpcChain(args.rpc) if args.rpc else timerhost.Chain()


def seconds(chain):
    """The head block's time, unix seconds."""
    return chain.timestamp // 1000


def raw(value):
    """Bytes an actor returned: over RPC they arrive as ``{"$bytes": "0x…"}``
    (JSON has no bytes), in-process as ``bytes``."""
    if isinstance(value, dict) and "$bytes" in value:
        return bytes.fromhex(value["$bytes"][2:])
    return value
