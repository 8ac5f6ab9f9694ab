"""ARC-21's cron registry (`actors/system/cron.py`, at 0x…06 in every
genesis): the eight compliance tests of ARC-21, each named for its rule, and
the rest of what the registry promises. Every test checks, after every block
it mines, that the registry's balance is exactly the sum of its jobs'
escrows (the `exact_escrow` fixture)."""

import pytest

import timerhost
from timerhost import CRON_REGISTRY

ESCROW = 10**16  # plenty for one run at the dev base fee
GAS = 50_000
OVERHEAD = 20_000  # RUN_OVERHEAD_CYCLES in cron.py
TIMER_FIRE_BASE_CYCLES = 3_000

TARGET = '''
import pvm_host

class Target:
    def ping(self, tag):
        self.storage["calls"] = self.storage.get("calls", []) + [[tag, pvm_host.caller(), pvm_host.block_timestamp()]]
        return tag

    def boom(self):
        self.storage["dirty"] = True
        raise ValueError("the target reverts")

    def spin(self):
        while True:
            pass

    def cancel_own(self, job):
        pvm_host.call("0x0000000000000000000000000000000000000006", "cancel", job)

    def own_job(self, at):
        return pvm_host.call("0x0000000000000000000000000000000000000006", "schedule", pvm_host.actor_address(), "ping", ["own"], at, 0, 0, 50_000, value=pvm_host.value())

    def who_runs_me(self):
        job = pvm_host.call("0x0000000000000000000000000000000000000006", "currentJob")
        self.storage["running"] = job
'''


@pytest.fixture(autouse=True)
def _exact(exact_cron_escrow):
    """Every test here checks the registry's books after every block."""


@pytest.fixture
def target(deploy):
    return deploy(TARGET)


def now(chain):
    return chain.timestamp // 1000


def schedule(chain, target, method="ping", args=("a",), at=None, interval=0, max_runs=0, gas=GAS, escrow=ESCROW, sender=None):
    at = now(chain) + 10 if at is None else at
    return chain.cron.schedule(target, method, list(args), next_run_at=at, interval_sec=interval, max_runs=max_runs, gas_limit=gas, escrow=escrow, sender=sender)


def cron_events(chain, name):
    return [e.data for e in chain.events(name=name, actor=CRON_REGISTRY)]


def run_fees(chain, job_id):
    """What each run of `job_id` cost: the fee of its fire's receipt."""
    fees = []
    for height in range(1, chain.height + 1):
        for r in chain.get_block(height).fires:
            if r.sender == CRON_REGISTRY and any(e.name == "JobExecuted" and e["id"] == job_id for e in r.events):
                fees.append(r.fee)
    return fees


# -- ARC-21's eight compliance tests -------------------------------------------


def test_1_schedule_with_next_run_at_in_the_past_throws(chain, target):
    with pytest.raises(timerhost.Reverted, match="nextRunAt .* is not in the future"):
        schedule(chain, target, at=now(chain))
    with pytest.raises(timerhost.Reverted, match="not in the future"):
        schedule(chain, target, at=now(chain) - 3600)
    assert chain.balance(CRON_REGISTRY) == 0


def test_2_schedule_with_too_little_value_throws(chain, target):
    with pytest.raises(timerhost.Reverted, match="cannot pay for one run: send at least"):
        schedule(chain, target, escrow=1000)
    with pytest.raises(timerhost.Reverted, match="cannot pay for one run"):
        schedule(chain, target, escrow=0)
    assert chain.storage(CRON_REGISTRY, "job:1") is None


def test_3_a_one_shot_job_fires_exactly_once_then_leaves_no_due_entry(chain, target, accounts):
    owner = accounts[1]
    before = chain.balance(owner)
    job = schedule(chain, target, at=now(chain) + 5, sender=owner)
    (timer,) = chain.timers(actor=CRON_REGISTRY)
    assert timer.trigger["kind"] == "time" and timer.fee_payer == CRON_REGISTRY
    chain.mine(20)
    assert [e["id"] for e in cron_events(chain, "JobExecuted")] == [job]
    assert len(chain.storage(target, "calls")) == 1
    assert chain.timers(actor=CRON_REGISTRY) == [], "no due entry left"
    assert chain.cron.job(job) is None
    # The owner paid exactly the run and its own transaction: the rest came back.
    (fee,) = run_fees(chain, job)
    assert fee > 0 and chain.balance(CRON_REGISTRY) == 0
    assert before - chain.balance(owner) < ESCROW // 10


def test_4_a_job_with_max_runs_3_fires_three_times_then_emits_job_exhausted(chain, target):
    job = schedule(chain, target, interval=60, max_runs=3)
    chain.interval = 60
    chain.mine(6)
    assert [e["id"] for e in cron_events(chain, "JobExecuted")] == [job] * 3
    (exhausted,) = cron_events(chain, "JobExhausted")
    assert exhausted["id"] == job and "3 runs" in exhausted["reason"]
    assert chain.cron.job(job) is None and chain.timers(actor=CRON_REGISTRY) == []


def test_5_a_job_with_max_runs_0_runs_every_interval_until_its_escrow_is_gone(chain, target, accounts):
    owner = accounts[2]
    # Hold the base fee still, so that a run's maximum cost does not fall
    # block after block (quiet blocks lower it) and the count is predictable.
    chain.governance.update_basefee_config(
        cycle_basefee=1000, min_cycle_basefee=1000, max_cycle_basefee=1000,
        cell_basefee=1000, min_cell_basefee=1000, max_cell_basefee=1000,
    ).raise_for_status()
    quote = chain.quote_timer(timestamp_ms=(now(chain) + 100) * 1000, gas_limit=GAS + OVERHEAD)
    # A run costs far less than its maximum; the registry keeps running a
    # job while, after this run at its worst, the next is still covered:
    # two maximum costs and the deposit, plus a few real runs' worth.
    escrow = 2 * quote["max_cost"] + 1000 * chain.timer_config["deposit_per_byte"] + 15_000_000  # ~4 runs
    job = schedule(chain, target, interval=60, max_runs=0, escrow=escrow, sender=owner)
    chain.interval = 60
    before = chain.balance(owner)
    chain.mine(30)
    runs = cron_events(chain, "JobExecuted")
    assert 2 <= len(runs) <= 6
    (exhausted,) = cron_events(chain, "JobExhausted")
    assert "escrow too small for the next run" in exhausted["reason"]
    fees = run_fees(chain, job)
    assert len(fees) == len(runs)
    # Whatever the runs did not cost came back to the owner, to the unit.
    assert chain.balance(owner) - before == escrow - sum(fees)


def test_6_cancel_by_the_owner_refunds_the_remaining_escrow_and_removes_the_job(chain, target, accounts):
    owner = accounts[3]
    job = schedule(chain, target, interval=120, sender=owner)
    chain.warp(now(chain) + 20)  # one run
    # The pending run's timer deposit is held by the protocol, outside the
    # escrow; cancelling gives it back, so the refund is both.
    escrow = chain.cron.job(job)["gasEscrow"]
    (timer,) = chain.timers(actor=CRON_REGISTRY)
    before = chain.balance(owner)
    receipt = chain.cron.cancel(job, sender=owner)
    assert receipt.event("JobCancelled").data == {"id": job, "owner": owner.address, "refunded": escrow + timer.deposit}
    assert chain.balance(owner) == before + escrow + timer.deposit - receipt.fee
    assert chain.cron.job(job) is None and chain.timers(actor=CRON_REGISTRY) == []
    assert chain.storage_keys(CRON_REGISTRY, "owner:") == []


def test_7_cancel_by_anyone_other_than_the_owner_throws(chain, target, accounts):
    job = schedule(chain, target, interval=120, sender=accounts[1])
    with pytest.raises(timerhost.Reverted, match="only job 1's owner .* may cancel it"):
        chain.cron.cancel(job, sender=accounts[2])
    assert chain.cron.job(job) is not None


def test_8_budget_exhaustion_rolls_the_remaining_jobs_to_the_next_block_in_due_order(chain, target, accounts):
    chain.governance.update_timer_config(max_fires_per_block=2).raise_for_status()
    at = now(chain) + 30
    # Scheduled out of due order: two later jobs first, then three at `at`.
    late = [schedule(chain, target, args=(f"late{i}",), at=at + 1) for i in range(2)]
    early = [schedule(chain, target, args=(f"early{i}",), at=at) for i in range(3)]
    chain.warp(at + 5)
    chain.mine(3)
    by_block = {}
    for height in range(1, chain.height + 1):
        ids = [e["id"] for r in chain.get_block(height).fires for e in r.events if e.name == "JobExecuted"]
        if ids:
            by_block[height] = ids
    assert list(by_block.values()) == [early[:2], [early[2], late[0]], [late[1]]]


# -- the rest of the registry ------------------------------------------------------


def test_each_run_charges_the_escrow_exactly_what_it_cost(chain, target):
    job = schedule(chain, target, interval=60)
    escrows = [chain.cron.job(job)["gasEscrow"]]
    for _ in range(3):
        chain.warp(chain.cron.job(job)["nextRunAt"])
        escrows.append(chain.cron.job(job)["gasEscrow"])
    fees = run_fees(chain, job)
    assert len(fees) == 3
    assert [a - b for a, b in zip(escrows, escrows[1:])] == fees


def test_the_target_sees_the_registry_as_caller_and_runs_on_schedule(chain, target):
    at = now(chain) + 100
    schedule(chain, target, args=("x",), at=at, interval=60, max_runs=2)
    chain.interval = 30
    chain.mine(8)
    calls = chain.storage(target, "calls")
    assert [c[1] for c in calls] == [CRON_REGISTRY, CRON_REGISTRY]
    # Each run in the first block at or after its time (blocks are 30 s
    # apart); the cadence follows nextRunAt, not the blocks.
    assert at <= calls[0][2] < at + 30 and at + 60 <= calls[1][2] < at + 90


def test_a_run_that_reverts_is_charged_and_the_job_continues(chain, target):
    job = schedule(chain, target, method="boom", args=(), interval=60, max_runs=2)
    chain.interval = 60
    chain.mine(4)
    runs = cron_events(chain, "JobExecuted")
    assert [r["success"] for r in runs] == [False, False]
    assert all(fee > 0 for fee in run_fees(chain, job))
    assert chain.storage(target, "dirty") is None, "the target's writes were undone"


def test_a_target_that_never_returns_is_stopped_at_its_gas_limit(chain, target):
    job = schedule(chain, target, method="spin", args=(), interval=60, max_runs=2)
    chain.interval = 60
    chain.mine(4)
    runs = cron_events(chain, "JobExecuted")
    assert [r["success"] for r in runs] == [False, False]
    assert all(GAS <= r["gasUsed"] <= GAS + 5_000 for r in runs)
    assert chain.cron.job(job) is None, "both runs happened: the job is done"


def test_top_up_by_anyone_adds_to_the_escrow(chain, target, accounts):
    job = schedule(chain, target, interval=600, sender=accounts[1])
    before = chain.cron.job(job)["gasEscrow"]
    receipt = chain.cron.top_up(job, 12345, sender=accounts[4])
    assert receipt.event("JobToppedUp").data == {"id": job, "amount": 12345, "totalEscrow": before + 12345}
    with pytest.raises(timerhost.Reverted, match="send a positive value"):
        chain.cron.top_up(job, 0, sender=accounts[4])
    with pytest.raises(timerhost.Reverted, match="no job '9'"):
        chain.cron.top_up("9", 1, sender=accounts[4])


def test_get_job_has_arc21_fields_and_jobs_of_lists_an_owners_jobs(chain, target, accounts):
    alice, bob = accounts[1], accounts[2]
    a1 = schedule(chain, target, interval=600, sender=alice)
    schedule(chain, target, interval=600, sender=bob)
    a2 = schedule(chain, target, interval=0, sender=alice)
    job = chain.call(CRON_REGISTRY, "getJob", a1).raise_for_status().return_value
    assert set(job) == {"id", "owner", "target", "method", "args", "nextRunAt", "intervalSec", "maxRuns", "runsLeft", "gasLimit", "gasEscrow"}
    assert job == chain.cron.job(a1)
    assert chain.call(CRON_REGISTRY, "jobsOf", alice.address).return_value == [a1, a2]
    assert [j["id"] for j in chain.cron.jobs_of(alice)] == [a1, a2]
    assert chain.call(CRON_REGISTRY, "getJob", "77").return_value is None


def test_interval_below_60_seconds_and_bad_arguments_are_refused(chain, target):
    with pytest.raises(timerhost.Reverted, match="intervalSec must be 0 .* or at least 60"):
        schedule(chain, target, interval=59)
    with pytest.raises(timerhost.Reverted, match="not a 0x-prefixed 20-byte address"):
        schedule(chain, "0x1234", interval=60)
    with pytest.raises(timerhost.Reverted, match="public handler name"):
        schedule(chain, target, method="_private")


def test_views_refuse_value_so_nothing_unaccounted_reaches_the_registry(chain, target, accounts):
    job = schedule(chain, target, interval=600, sender=accounts[1])
    with pytest.raises(timerhost.Reverted, match="takes no value"):
        chain.call(CRON_REGISTRY, "cancel", job, sender=accounts[1], value=5).raise_for_status()
    with pytest.raises(timerhost.Reverted, match="takes no value"):
        chain.call(CRON_REGISTRY, "getJob", job, value=5).raise_for_status()


def test_a_job_cannot_be_cancelled_from_inside_its_own_run(chain, target, deploy):
    # The job's owner is the target itself, which tries to cancel mid-run.
    owner_actor = deploy(TARGET)
    chain.transfer(owner_actor, ESCROW * 2).raise_for_status()
    # Schedule through the target so that it owns the job.
    code = '''
import pvm_host

class Scheduler:
    def go(self, target, at):
        return pvm_host.call("0x0000000000000000000000000000000000000006", "schedule", target, "cancel_own", ["1"], at, 0, 0, 60000, value=pvm_host.value())
'''
    scheduler = deploy(code)
    job = chain.call(scheduler, "go", scheduler.address, now(chain) + 10, value=ESCROW).raise_for_status().return_value
    assert job == "1"
    chain.warp(now(chain) + 20)
    (run,) = cron_events(chain, "JobExecuted")
    assert run["success"] is False, "cancel from inside the run was refused"
    assert chain.cron.job(job) is None, "the one-shot still finished normally"


def test_a_runs_bookkeeping_fits_its_overhead(chain, target):
    job = schedule(chain, target, method="spin", args=(), interval=60, max_runs=3)
    chain.interval = 60
    chain.mine(2)
    for height in range(1, chain.height + 1):
        for r in chain.get_block(height).fires:
            (run,) = [e for e in r.events if e.name == "JobExecuted"]
            bookkeeping = r.cycles_used - TIMER_FIRE_BASE_CYCLES - run["gasUsed"]
            assert 0 < bookkeeping < OVERHEAD // 4
    assert chain.cron.job(job)["runsLeft"] == 1


def test_nobody_can_run_a_job_but_its_timer(chain, target):
    schedule(chain, target, interval=600)
    r = chain.call(CRON_REGISTRY, "handle_timer", b"1")
    assert not r.ok and "timer" in r.error.message
    assert chain.storage(target, "calls") is None


def test_the_registry_is_in_genesis(chain):
    assert chain.is_actor(CRON_REGISTRY)
    assert CRON_REGISTRY == "0x0000000000000000000000000000000000000006"


def test_a_run_cancelling_a_job_admitted_in_the_same_block_pays_from_no_other_escrow(chain, target, accounts):
    """#28 bug 2: job 1's run cancels job 2 (owned by job 1's target) after
    both were admitted in one block. Job 2's run holds its maximum cost out
    of its escrow, so the cancel refunds only the rest; the run then does
    nothing and sends its leftover to job 2's owner. The books balance
    (the autouse fixture) and the bystander's escrow is untouched."""
    at = now(chain) + 30
    schedule(chain, target, method="cancel_own", args=("2",), at=at, sender=accounts[2])
    chain.call(target, "own_job", at, value=ESCROW).raise_for_status()
    bystander = schedule(chain, target, at=at + 3600, sender=accounts[3])
    kept = chain.cron.job(bystander)["gasEscrow"]
    owner_before = chain.balance(target)
    block = chain.warp(timestamp_ms=at * 1000)
    assert len(block.fires) == 2 and all(f.ok for f in block.fires)
    run_2 = block.fires[1]
    assert chain.storage(target, "calls") is None, "job 2 never called its target"
    assert chain.balance(target) - owner_before == ESCROW - run_2.fee
    assert chain.cron.job("2") is None
    assert chain.cron.job(bystander)["gasEscrow"] == kept


def test_current_job_tells_a_target_whose_job_runs_it(chain, target, accounts):
    assert chain.call(CRON_REGISTRY, "currentJob").raise_for_status().return_value is None
    job = schedule(chain, target, method="who_runs_me", args=(), sender=accounts[4])
    chain.warp(now(chain) + 11)
    assert chain.storage(target, "running") == {"id": job, "owner": accounts[4].address, "target": target.address, "method": "who_runs_me", "args": []}


def test_fee_caps_pass_through_to_every_runs_timer(chain, target):
    """#31: a job's ``maxFeePerCycle``/``maxPriorityFeePerCycle`` are each
    run's timer caps, and the escrow check prices them."""
    job = chain.cron.schedule(
        target, "ping", ["capped"], next_run_at=now(chain) + 10, interval_sec=60,
        gas_limit=GAS, escrow=ESCROW, max_fee_per_cycle=5_000, max_priority_fee_per_cycle=7,
    )
    (timer,) = chain.timers(actor=CRON_REGISTRY)
    assert (timer.max_fee_per_cycle, timer.bid) == (5_000, 7)
    chain.warp(chain.cron.job(job)["nextRunAt"])
    assert [e["id"] for e in cron_events(chain, "JobExecuted")] == [job]
    (fire,) = chain.events(name="TimerFired", actor=CRON_REGISTRY)
    assert fire.data["priority_fee"] == 7
    (rearmed,) = chain.timers(actor=CRON_REGISTRY)
    assert (rearmed.max_fee_per_cycle, rearmed.bid) == (5_000, 7), "the next run keeps the caps"
    # Under FIFO the escrow check prices the tip, as the pre-charge does.
    q = chain.quote_timer(gas_limit=GAS + OVERHEAD, bid=7, max_fee_per_cycle=5_000)
    with pytest.raises(timerhost.Reverted, match="cannot pay for one run"):
        chain.cron.schedule(
            target, "ping", [], next_run_at=now(chain) + 10, gas_limit=GAS,
            escrow=q["max_cost"] - 1, max_fee_per_cycle=5_000, max_priority_fee_per_cycle=7,
        )
