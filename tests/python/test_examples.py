"""Every walkthrough in examples/ runs, in-process and against a running
`timerhost dev` over JSON-RPC (`--rpc`), and its own assertions hold.

The RPC half needs the `timerhost` binary: `scripts/test` builds it (cargo
test) and names it in TIMERHOST_BIN; a bare `pytest` without the variable
looks in the cargo target directory and skips the RPC half if there is none."""

import importlib.util
import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest

import timerhost
from timerhost.rpc import RpcChain

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/run.py"))


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "examples" / name / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_walkthroughs_are_there():
    assert EXAMPLES == [
        "booked_auction",
        "heartbeat_renewal",
        "liquidation_watcher",
        "monthly_subscription",
        "payroll_cron",
        "retried_payment",
        "vesting",
    ]
    for name in EXAMPLES:
        assert (ROOT / "examples" / name / "README.md").is_file(), name


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_in_process(name):
    load(name).main(timerhost.Chain(), out=lambda *a: None)


def _binary():
    named = os.environ.get("TIMERHOST_BIN")
    if named:
        assert Path(named).is_file(), f"TIMERHOST_BIN={named} does not exist"
        return named
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/timerhost/target"))
    found = target / "debug" / "timerhost"
    if not found.is_file():
        pytest.skip(f"no timerhost binary at {found} (scripts/test builds it and sets TIMERHOST_BIN)")
    return str(found)


@contextlib.contextmanager
def manual_dev_node(home):
    """`timerhost dev --manual --no-examples` on `home`, on a free port:
    yields its RPC URL, stops it after."""
    proc = subprocess.Popen(
        [_binary(), "dev", "--manual", "--no-examples", "--rpc", "127.0.0.1:0", "--home", str(home), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event.get("event") == "started":
                yield event["rpc"]
                return
        raise AssertionError("timerhost dev did not start")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def devnode(tmp_path_factory):
    home = tmp_path_factory.mktemp("dev") / "home"
    node = subprocess.Popen(
        [_binary(), "dev", "--manual", "--rpc", "127.0.0.1:0", "--home", str(home), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = None
        for line in node.stdout:
            event = json.loads(line)
            if event.get("event") == "started":
                url = event["rpc"]
                break
        assert url, "timerhost dev did not start"
        yield url
    finally:
        node.terminate()
        node.wait(timeout=30)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_over_rpc(name, devnode):
    load(name).main(RpcChain(devnode), out=lambda *a: None)
