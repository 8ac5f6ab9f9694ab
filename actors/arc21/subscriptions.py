"""ARC-21 subscriptions: a merchant contract that charges ARC-20 tokens on a
schedule, through the cron registry at 0x…06 — no keeper.

A customer approves this contract on the token for what they authorise
(`token.approve(subscriptions, amount × maxCharges)`), then calls
`approveSubscription(token, merchant, amount, intervalSec, maxCharges)` with
a value that funds the cron job's escrow. The registry calls
`chargeSubscription(id)` every `intervalSec` seconds (the first charge one
interval from now); each charge moves `amount` tokens from the customer to
the merchant with `transferFrom`.

- `maxCharges` 0 means until cancelled (or until the job's escrow runs out).
- A charge that fails (allowance or balance too small) emits
  `SubscriptionFailed` and the subscription continues: top up the allowance
  and the next charge goes through.
- `cancelSubscription(id)` (the customer only) deletes the subscription and
  cancels its cron job; what is left of the escrow goes back to the
  customer. (ARC-21's reference leaves the job running as a no-op until
  someone cancels it; here the contract owns the job, so it does it.)
- Only the subscription's own cron job may charge it: `chargeSubscription`
  checks that the registry is calling (`pvm_host.caller()`) *and* that the
  job it is running (`currentJob()`) is the one `approveSubscription`
  created. A job anyone else schedules against this contract charges
  nothing — ARC-21's reference checks only the caller, so a stranger could
  take every remaining charge at once (#28). On top, at most one charge
  happens per interval of the customer's schedule, whatever calls it.
- The job refunds its leftover escrow to the customer (`refundTo`) however
  it ends.
"""

import pvm_host

CRON = "0x0000000000000000000000000000000000000006"
CHARGE_GAS = 60_000  # cycles per charge: the token's transferFrom and this bookkeeping
MIN_INTERVAL_SEC = 60  # the cron registry's shortest interval


class Subscriptions:
    def approveSubscription(self, token, merchant, amount, intervalSec, maxCharges):
        customer = pvm_host.caller()
        if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
            raise ValueError(f"amount must be a positive int, got {amount!r}")
        if not isinstance(maxCharges, int) or isinstance(maxCharges, bool) or maxCharges < 0:
            raise ValueError(f"maxCharges must be a non-negative int, got {maxCharges!r}")
        if not isinstance(intervalSec, int) or isinstance(intervalSec, bool) or intervalSec < MIN_INTERVAL_SEC:
            raise ValueError(f"intervalSec must be an int of at least {MIN_INTERVAL_SEC} seconds, got {intervalSec!r}")
        sub_id = str(self.storage.get("nextSubId", 0) + 1)
        self.storage["nextSubId"] = int(sub_id)
        first = pvm_host.block_timestamp() + intervalSec
        job = pvm_host.call(
            CRON,
            "schedule",
            pvm_host.actor_address(),
            "chargeSubscription",
            [sub_id],
            first,
            intervalSec,
            maxCharges,
            CHARGE_GAS,
            customer,
            value=pvm_host.value(),
        )
        self.storage["sub:" + sub_id] = {
            "customer": customer,
            "merchant": merchant.lower(),
            "token": token.lower(),
            "amount": amount,
            "intervalSec": intervalSec,
            "maxCharges": maxCharges,
            "chargesLeft": maxCharges,
            "lastChargeAt": 0,
            "firstChargeAt": first,
            "lastPeriod": -1,
            "job": job,
        }
        pvm_host.emit("SubscriptionApproved", {"id": sub_id, "customer": customer, "merchant": merchant.lower()})
        return sub_id

    def chargeSubscription(self, id):
        caller = pvm_host.caller()
        if caller != CRON:
            raise PermissionError(f"only the cron registry {CRON} may charge a subscription, not {caller}")
        sub = self.storage.get("sub:" + id)
        if sub is None:
            return False  # cancelled
        run = pvm_host.call(CRON, "currentJob")
        if run is None or run["id"] != sub["job"] or run["owner"] != pvm_host.actor_address():
            job = None if run is None else run["id"]
            raise PermissionError(
                f"subscription {id} is charged only by its own cron job {sub['job']}, not by job {job}"
            )
        now = pvm_host.block_timestamp()
        period = (now - sub["firstChargeAt"]) // sub["intervalSec"]
        if now < sub["firstChargeAt"] or period <= sub["lastPeriod"]:
            raise PermissionError(
                f"subscription {id} was already charged in this interval (period {sub['lastPeriod']}); "
                f"the next charge is due at {sub['firstChargeAt'] + (sub['lastPeriod'] + 1) * sub['intervalSec']}"
            )
        if sub["maxCharges"] and sub["chargesLeft"] == 0:
            return False
        try:
            pvm_host.call(sub["token"], "transferFrom", sub["customer"], sub["merchant"], sub["amount"])
        except pvm_host.HostError as e:
            pvm_host.emit("SubscriptionFailed", {"id": id, "reason": str(e)})
            return False
        if sub["maxCharges"]:
            sub["chargesLeft"] -= 1
        sub["lastChargeAt"] = now
        sub["lastPeriod"] = period
        self.storage["sub:" + id] = sub
        pvm_host.emit("SubscriptionCharged", {"id": id, "amount": sub["amount"], "chargesLeft": sub["chargesLeft"]})
        return True

    def cancelSubscription(self, id):
        sub = self.storage.get("sub:" + id)
        if sub is None:
            raise KeyError(f"no subscription {id!r}")
        caller = pvm_host.caller()
        if caller != sub["customer"]:
            raise PermissionError(f"only subscription {id}'s customer {sub['customer']} may cancel it, not {caller}")
        del self.storage["sub:" + id]
        try:
            pvm_host.call(CRON, "cancel", sub["job"])  # the escrow goes back to the customer
        except pvm_host.HostError:
            pass  # the job already ended (all charges made, or its escrow ran out)
        pvm_host.emit("SubscriptionCancelled", {"id": id})
        return True

    def getSubscription(self, id):
        return self.storage.get("sub:" + id)
