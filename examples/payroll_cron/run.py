"""Payroll by cron: an employer schedules `Payroll.pay()` every 30 days
from a wallet with the ARC-21 registry. See README.md."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _chain import ACTORS, connect, seconds  # noqa: E402

HERE = Path(__file__).resolve().parent
MONTH = 30 * 86_400


def main(chain, out=print):
    employer, alice, bob = chain.accounts[3], chain.accounts[4], chain.accounts[5]
    token = chain.deploy(ACTORS / "arc20/arc20.py", args=("Salary", "SAL", 0, 100_000, employer.address), sender=employer)
    payroll = chain.deploy(HERE / "payroll.py", args=(token.address,), sender=employer)
    chain.call(token, "transfer", payroll.address, 10_000, sender=employer).raise_for_status()
    chain.call(payroll, "hire", alice.address, 3_000, sender=employer).raise_for_status()
    chain.call(payroll, "hire", bob.address, 2_000, sender=employer).raise_for_status()

    # Twelve paydays, the first in a month; the escrow pays each run's gas.
    first = seconds(chain) + MONTH
    job = chain.cron.schedule(payroll, "pay", [], next_run_at=first, interval_sec=MONTH, max_runs=12, gas_limit=50_000, escrow=10**16, sender=employer)
    out(f"payroll job {job}: {chain.cron.job(job)}")

    # A stranger cannot run payday early — neither directly nor with a cron
    # job of their own aimed at `pay` (its runs revert, paid by its escrow).
    assert not chain.call(payroll, "pay", sender=alice).ok
    stranger = chain.accounts[6]
    rogue = chain.cron.schedule(payroll, "pay", [], next_run_at=first - 60, interval_sec=MONTH, max_runs=2, gas_limit=50_000, escrow=10**16, sender=stranger)

    for month in (1, 2):
        chain.warp(first + (month - 1) * MONTH + 1)
        balances = [chain.storage(token, "balance:" + a.address) for a in (alice, bob)]
        out(f"payday {month}: alice {balances[0]}, bob {balances[1]}, escrow left {chain.cron.job(job)['gasEscrow']}")
    assert balances == [6_000, 4_000], balances
    rogue_runs = [e.data for e in chain.events(name="JobExecuted") if e["id"] == rogue]
    out(f"the stranger's job {rogue} ran {len(rogue_runs)} times and paid nobody")
    assert rogue_runs and not any(r["success"] for r in rogue_runs), rogue_runs

    # The employer stops payroll; the rest of the escrow comes back.
    r = chain.cron.cancel(job, sender=employer)
    out(f"cancelled: {r.event('JobCancelled').data}")
    return balances


if __name__ == "__main__":
    main(connect(__doc__))
