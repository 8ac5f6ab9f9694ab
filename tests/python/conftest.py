"""Shared actor sources for the package's own tests (kept tiny on purpose)."""

import pytest

COUNTER = '''
class Counter:
    def deploy(self, start=0):
        self.storage["n"] = start

    def bump(self, by=1):
        n = self.storage.get("n", 0) + by
        self.storage["n"] = n
        pvm_host.emit("Bumped", {"n": n, "by": by})
        return n

    def fail(self, message):
        self.storage["n"] = -1
        raise ValueError(message)

    def spin(self):
        while True:
            pass

    def schedule(self, delay, payload):
        return pvm_host.schedule_timer(pvm_host.block_height() + delay, payload)

    def handle_timer(self, payload):
        self.storage["fired"] = self.storage.get("fired", 0) + 1
        pvm_host.emit("Fired", {"payload": payload, "height": pvm_host.block_height()})
'''


@pytest.fixture
def counter_source():
    return COUNTER


@pytest.fixture
def counter(chain, accounts):
    # Funded: its timers lend a deposit (and it pays their fires).
    return chain.deploy(COUNTER, sender=accounts[0], args=(0,), value=10**18)
