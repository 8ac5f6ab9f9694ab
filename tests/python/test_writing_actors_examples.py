"""The example actors of docs/WRITING_ACTORS.md ("Timers" → "Examples") run as
documented: each ``<!-- example: NAME -->`` block is deployed and driven here,
so the guide cannot drift from what the chain does."""

import pathlib
import re

import pytest

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "WRITING_ACTORS.md"
DAY_MS = 86_400_000


def example(name):
    text = GUIDE.read_text()
    match = re.search(rf"<!-- example: {re.escape(name)} -->\n```python\n(.*?)```", text, re.S)
    assert match, f"no example {name!r} in {GUIDE}"
    return match.group(1)


def test_the_midnight_job_runs_at_each_midnight_and_rearms(chain):
    nightly = chain.deploy(example("nightly"), value=10**18)
    first = chain.storage(nightly, "next_run")
    assert first % DAY_MS == 0 and first > chain.timestamp
    chain.warp(timestamp_ms=first - 1)
    assert chain.storage(nightly, "runs") is None
    chain.warp(timestamp_ms=first + 5)
    assert chain.storage(nightly, "runs") == 1
    assert chain.storage(nightly, "next_run") == first + DAY_MS
    (timer,) = chain.timers(actor=nightly, kind="time")
    assert timer.trigger["timestamp_ms"] == first + DAY_MS
    # Nobody else can make it schedule: the arming method is private.
    assert not chain.call(nightly, "_arm").ok


def test_the_price_watch_alerts_when_the_oracle_crosses_the_threshold(chain, accounts):
    owner = accounts[1]
    oracle = chain.deploy(example("oracle"), sender=owner)
    alert = chain.deploy(example("price-watch"), args=[oracle.address, 2_000], value=10**18)
    chain.call(oracle, "set_price", "ETH", 1_900, sender=owner).raise_for_status()
    assert chain.events(name="PriceAlert") == []
    r = chain.call(oracle, "set_price", "ETH", 2_100, sender=owner).raise_for_status()
    (event,) = chain.events(name="PriceAlert", actor=alert)
    assert dict(event.data) == {"symbol": "ETH", "price": 2_100} and event.height == r.height
    assert not chain.call(oracle, "set_price", "ETH", 9, sender=accounts[2]).ok


def test_the_reminder_quotes_then_schedules_on_the_signers_account(chain, accounts):
    user = accounts[2]
    reminders = chain.deploy(example("quote-then-schedule"))
    at = chain.timestamp + 60_000
    r = chain.call(reminders, "remind_at", at, "stand up", sender=user).raise_for_status()
    timer_id, slot, max_cost = r.return_value
    assert slot == at and max_cost > 0
    assert chain.timer(timer_id).fee_payer == user.address
    chain.warp(timestamp_ms=at)
    (event,) = chain.events(name="Reminder", actor=reminders)
    assert event["note"] == "stand up"


def test_the_reminder_moves_to_the_next_slot_when_one_is_full(chain, accounts):
    # A lane of two fires: the first slot holds two reminders, the third goes on.
    per_fire = 50_000 + 3_000
    chain.governance.update_timer_config(
        lane_cycles_per_block=2 * per_fire, max_cycles_per_fire=50_000
    ).raise_for_status()
    reminders = chain.deploy(example("quote-then-schedule"))
    at = chain.timestamp + 60_000
    slots = [
        chain.call(reminders, "remind_at", at, f"n{i}", sender=accounts[i]).raise_for_status().return_value[1]
        for i in range(3)
    ]
    assert slots == [at, at, at + 1_000]
