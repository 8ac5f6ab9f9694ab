"""A payment retried with a doubling backoff, dead-lettered when every
retry fails, then re-run by its owner once the payee accepts. See
README.md."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _chain import connect, raw  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(chain, out=print):
    owner, payee = chain.accounts[0], chain.accounts[5]
    payments = chain.deploy(HERE / "payments.py", value=10**18, sender=owner)
    chain.call(payments, "block", payee.address, True, sender=owner).raise_for_status()
    due = chain.height + 2
    timer_id = raw(chain.call(payments, "pay", payee.address, 10**15, due, sender=owner).raise_for_status().return_value)

    # The first fire and three retries (2, 4, 8 blocks apart) all fail.
    chain.mine(due + 2 + 4 + 8 - chain.height)
    retried = [e for e in chain.events(name="TimerRetried", actor=payments) if raw(e["timer_id"]) == timer_id]
    for e in retried:
        out(f"attempt {e['attempt']} failed ({e['error']}); next at {e['next_due']}")
    (dead,) = [e for e in chain.events(name="TimerDeadLettered", actor=payments) if raw(e["timer_id"]) == timer_id]
    out(f"dead-lettered after {dead['attempts']} attempts, kept until height {dead['expires_at']}")
    (letter,) = chain.call(payments, "failed_payments", sender=owner).raise_for_status().return_value
    assert raw(letter["timer_id"]) == timer_id and letter["attempts"] == 4

    # The payee accepts again: the owner re-runs the payment.
    before = chain.balance(payee)
    chain.call(payments, "block", payee.address, False, sender=owner).raise_for_status()
    chain.call(payments, "retry", timer_id, sender=owner).raise_for_status()
    chain.mine(2)
    received = chain.balance(payee) - before
    out(f"re-run from the dead-letter queue: the payee received {received}")
    assert received == 10**15
    assert chain.dead_letters(payments) == []
    return received


if __name__ == "__main__":
    main(connect(__doc__))
