"""The dashboard's governance view (#48) on a live validator network, in a
real headless Chromium: ``timerhost testnet --validators 4`` runs four
validator processes under Malachite, the CLI submits, votes and executes
proposals against one of them, and the open page follows every step
without a reload, through its ``newHeads`` subscription: a new proposal
with what it would change, its tally against the 2/3 threshold as the
operators vote, its execution, the TimerConfig history with what each
proposal changed (the first against genesis), a change of the validator set
with its new power, and a closed proposal's tally as it was decided (against
the set of the block it closed in, not today's).

With ``TIMERHOST_DASHBOARD_SHOTS=DIR`` the test saves a screenshot of the
view there (``docs/dashboard/governance-live.png`` is the committed one)."""

import json
import random
import socket
import subprocess

import pytest

from timerhost.rpc import RpcChain

from test_dashboard import browser, by_testid, shoot, text_of, wait_for  # noqa: F401 (a fixture)
from test_examples import _binary

VALIDATORS = 4


def _free_run(count):
    """A base port with ``count`` consecutive free ports after it."""
    for _ in range(200):
        base = random.randint(20_000, 60_000)
        try:
            sockets = []
            for port in range(base, base + count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no run of free ports")


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    directory = tmp_path_factory.mktemp("govnet") / "net"
    rpc_port = _free_run(VALIDATORS)
    p2p_port = _free_run(VALIDATORS)
    proc = subprocess.Popen(
        [
            _binary(), "testnet", "--validators", str(VALIDATORS), "--dir", str(directory),
            "--rpc-port", str(rpc_port), "--p2p-port", str(p2p_port), "--block-time", "300ms", "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        created = json.loads(proc.stdout.readline())
        assert created["event"] == "created", created
        urls = [n["rpc"] for n in created["nodes"]]
        wait_for(lambda: RpcChain(urls[0]).height >= 3, within=90, what="the validators committing blocks")
        yield urls
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def cli(url, *args):
    """Runs ``timerhost gov …`` against ``url``; its JSON output."""
    out = subprocess.run(
        [_binary(), "gov", *args, "--rpc", url, "--json"],
        check=True, capture_output=True, text=True, timeout=120,
    )
    return out.stdout


def newest_proposal(rpc):
    return max(rpc.rpc("th_getProposals", {"from": 1, "limit": 200}), key=lambda p: p["proposal_id"])


def row(driver, pid):
    return text_of(driver, f"proposal-row-{pid}")


def test_governance_on_a_validator_network_follows_proposals_live(network, browser):
    url = network[0]
    rpc = RpcChain(url)
    browser.get(url + "/#/governance")
    wait_for(lambda: len(by_testid(browser, "validators").find_elements("css selector", "tbody tr")) == VALIDATORS,
             what="the four validators listed")
    assert "total power 4" in browser.page_source
    assert "no proposal yet" in text_of(browser, "proposals")
    in_force = rpc.rpc("th_getTimerConfig")["max_fires_per_block"]

    # A proposal appears on the open page, with what it would change.
    cli(url, "propose", "timer-config", "max_fires_per_block=5000", "--dev-account", "5")
    first = newest_proposal(rpc)["proposal_id"]
    wait_for(lambda: "voting" in row(browser, first), what="the new proposal, without a reload")
    text = row(browser, first)
    assert f"max_fires_per_block: {in_force} → 5000" in text, text
    assert "0 yes / 0 no of 4" in text and "(passes at 3)" in text, text

    # Its tally follows the operators' votes (a "no" counts too).
    cli(url, "vote", str(first), "--dev-account", "0")
    cli(url, "vote", str(first), "--dev-account", "3", "--no")
    wait_for(lambda: "1 yes / 1 no of 4" in row(browser, first), what="two votes tallied live")
    for operator in ("1", "2"):
        cli(url, "vote", str(first), "--dev-account", operator)
    wait_for(lambda: "3 yes / 1 no of 4" in row(browser, first), what="the passing tally")

    # Executed: the status and the config history say so.
    cli(url, "execute", str(first), "--dev-account", "5")
    wait_for(lambda: "executed" in row(browser, first), what="the executed status")
    wait_for(lambda: f"max_fires_per_block: {in_force} → 5000" in by_testid(browser, "timer-config-history").text,
             what="the config history's first change, against genesis")
    history = text_of(browser, "timer-config-history")
    assert f"proposal {first}" in history
    # Only what changed: amounts are strings in RPC and numbers in events.
    assert "deposit_per_byte" not in history, history

    # A second change of the same config shows what it changed from the first.
    cli(url, "propose", "timer-config", "max_fires_per_block=6000", "--dev-account", "5")
    second = newest_proposal(rpc)["proposal_id"]
    for operator in ("0", "1", "2"):
        cli(url, "vote", str(second), "--dev-account", operator)
    cli(url, "execute", str(second), "--dev-account", "5")
    wait_for(lambda: "max_fires_per_block: 5000 → 6000" in by_testid(browser, "timer-config-history").text,
             what="the history's second step, as a change from the first")
    assert rpc.rpc("th_getTimerConfig")["max_fires_per_block"] == 6000

    # A change of the validator set: listed with the block it takes effect
    # from, and the set's new power once it does, while blocks go on.
    validator = rpc.rpc("th_getValidators")["validators"][0]
    cli(url, "propose", "set-validator-power", validator["public_key"], "2", "--dev-account", "5")
    third = newest_proposal(rpc)["proposal_id"]
    for operator in ("0", "1", "2"):
        cli(url, "vote", str(third), "--dev-account", operator)
    cli(url, "execute", str(third), "--dev-account", "5")
    wait_for(lambda: "SetValidatorPower" in browser.page_source and "total power 5" in browser.page_source,
             within=60, what="the set's new power")
    height = rpc.height
    wait_for(lambda: rpc.height >= height + 3, within=60, what="blocks under the new set")
    # A closed proposal keeps the tally it was decided by, against the set
    # of its block, not today's (3 of 4 passed it; 4 of 5 is today's count).
    text = row(browser, first)
    assert "3 yes / 1 no of 4" in text and "at block" in text, text
    assert "executed" in row(browser, third)
    shoot(browser, "governance-live")
