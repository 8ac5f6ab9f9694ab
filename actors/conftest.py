"""Fixtures shared by the standard actors' tests."""

import pytest

from timerhost import CRON_REGISTRY


@pytest.fixture
def exact_cron_escrow(chain):
    """After every block the test mines: the cron registry's balance is
    exactly the sum of its jobs' escrows, and no escrow outlives its job."""

    def check(chain, block):
        jobs = {k.split(":")[1] for k in chain.storage_keys(CRON_REGISTRY, "job:")}
        escrows = {k.split(":")[1] for k in chain.storage_keys(CRON_REGISTRY, "escrow:")}
        assert escrows == jobs, f"block {block.height}: escrows {escrows} for jobs {jobs}"
        assert chain.balance(CRON_REGISTRY) == chain.cron.escrow_total(), f"block {block.height}"

    chain.on_block(check)
