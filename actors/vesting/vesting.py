"""VestingWallet: ARC-20 tokens vesting to a beneficiary — a cliff, then a
linear release every interval, pushed by the wallet's own time timers.

Deploy with `(token, beneficiary, start, cliff, duration, interval)` — times
in unix seconds and seconds — and enough native value for the wallet to pay
its timers. The deployer is the owner. The owner funds the schedule with
`fund(total)` after approving the wallet for `total` tokens; from then on:

- vested(t) = 0 before `start + cliff`; `total` from `start + duration`;
  in between, `total × elapsed / duration`, with `elapsed` counted in whole
  intervals (so releases happen at interval boundaries);
- at every boundary a time timer releases what vested, and schedules the
  next boundary, until everything is released;
- the beneficiary may also `claim()` at any time (what vested so far);
- the owner may `revoke()`: what vested goes to the beneficiary, the rest
  back to the owner, and the pending timer is cancelled.

Strangers can do none of these: each raises `PermissionError` naming who may.
"""

import pvm_host


class VestingWallet:
    def deploy(self, token, beneficiary, start, cliff, duration, interval):
        if not (0 <= cliff <= duration and 0 < interval <= duration):
            raise ValueError("need 0 <= cliff <= duration and 0 < interval <= duration (seconds)")
        self.storage["token"] = token
        self.storage["beneficiary"] = beneficiary.lower()
        self.storage["owner"] = pvm_host.tx_sender()
        self.storage["start"] = start
        self.storage["cliff"] = cliff
        self.storage["duration"] = duration
        self.storage["interval"] = interval
        self.storage["total"] = 0
        self.storage["released"] = 0

    # -- views -----------------------------------------------------------

    def vested(self):
        return self._vested_at(pvm_host.block_timestamp())

    def released(self):
        return self.storage["released"]

    def releasable(self):
        return self.vested() - self.storage["released"]

    # -- owner -------------------------------------------------------------

    def fund(self, total):
        self._only("owner")
        if self.storage["total"]:
            raise ValueError("already funded")
        if not isinstance(total, int) or total <= 0:
            raise ValueError(f"total must be a positive int, got {total!r}")
        pvm_host.call(self.storage["token"], "transferFrom", self.storage["owner"], pvm_host.actor_address(), total)
        self.storage["total"] = total
        pvm_host.emit("Funded", {"total": total})
        self._arm()

    def revoke(self):
        self._only("owner")
        self._release()
        unvested = self.storage["total"] - self.storage["released"]
        if unvested:
            pvm_host.call(self.storage["token"], "transfer", self.storage["owner"], unvested)
        self.storage["total"] = self.storage["released"]
        timer = self.storage.get("timer")
        if timer is not None:
            pvm_host.cancel_timer(timer)
            self.storage["timer"] = None
        pvm_host.emit("Revoked", {"returned": unvested})

    # -- beneficiary -------------------------------------------------------

    def claim(self):
        self._only("beneficiary")
        return self._release()

    def handle_timer(self, payload):
        # A timer handler: only the wallet's own timers reach it.
        self.storage["timer"] = None
        self._release()
        self._arm()

    # -- internals -----------------------------------------------------------

    def _only(self, role):
        if pvm_host.caller() != self.storage[role]:
            raise PermissionError(f"only the {role} ({self.storage[role]}) may do this")

    def _vested_at(self, now):
        start, cliff, duration = self.storage["start"], self.storage["cliff"], self.storage["duration"]
        total = self.storage["total"]
        if now < start + cliff:
            return 0
        if now >= start + duration:
            return total
        interval = self.storage["interval"]
        elapsed = (now - start) // interval * interval
        return total * elapsed // duration

    def _release(self):
        amount = self.vested() - self.storage["released"]
        if amount > 0:
            self.storage["released"] = self.storage["released"] + amount
            pvm_host.call(self.storage["token"], "transfer", self.storage["beneficiary"], amount)
            pvm_host.emit("Released", {"amount": amount, "released": self.storage["released"]})
        return amount

    def _arm(self):
        """Schedules the next release boundary, if anything is left to vest."""
        if self.storage["released"] >= self.storage["total"]:
            return
        start, cliff, interval = self.storage["start"], self.storage["cliff"], self.storage["interval"]
        now = pvm_host.block_timestamp()
        first = start + cliff
        if now < first:
            at = first
        else:
            at = min(start + ((now - start) // interval + 1) * interval, start + self.storage["duration"])
        self.storage["timer"] = pvm_host.schedule_timer_at(at * 1000, b"", gas_limit=200000)
