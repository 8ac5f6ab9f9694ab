"""ARC-21 cron registry: the system actor at
0x0000000000000000000000000000000000000006, present in every genesis.

Anyone schedules a future call — `target.method(*args)` at `nextRunAt` (unix
seconds), once (`intervalSec = 0`) or every `intervalSec ≥ 60` seconds — and
funds it with the call's value, the job's escrow. The registry arms a native
time timer per run; the run calls the target with `pvm_host.call`, so the
target sees the registry as `pvm_host.caller()`, within `gasLimit` cycles.

Money, exactly:
- each job's escrow is an int at `escrow:<id>` in this actor's storage, and
  each run's timer is scheduled with `escrow="escrow:<id>"`: the protocol
  takes the timer's deposit from it and gives it back, and subtracts each
  run's settled cost (its handler, the target call and this bookkeeping)
  once that cost is known. So after every block the registry's balance is
  the sum of its jobs' escrows;
- a run that reverts is charged all the same, and the job goes on;
- after a run, a job whose escrow could not pay for the next run even if
  this one used its whole gas limit is exhausted (`JobExhausted`), as is a
  job whose `maxRuns` are used up; it is removed and what is left of its
  escrow goes back to its owner once this run is settled. A one-shot job is
  removed after its run the same way;
- a run's maximum cost leaves its escrow when the run is admitted (the
  protocol holds it there, #28) and what the run did not use comes back once
  it is settled. So `cancel` (owner only) refunds at once what is free; if
  the job's run is already admitted in this block (another job's run
  cancelled it), that run still happens as a no-op and sends what it did not
  use to the owner once settled. `topUp` (anyone) adds the call's value to
  the escrow. The other methods refuse value.
- `currentJob()` tells a target which job is running it and whose it is
  (`{"id", "owner", "target", "method", "args"}`, or None outside a run):
  a target that trusts the registry checks the job is one its own
  user scheduled, so a stranger's job can make it do nothing.
- Refunds go to the owner, or to `refundTo` if `schedule` was given one (a
  timerhost extension: a contract scheduling for its user, like the
  subscriptions merchant, sends the leftover straight to that user).
- Fee caps (a timerhost extension, #31): `maxFeePerCycle` and
  `maxPriorityFeePerCycle` are passed to every run's timer, and the quote
  that checks the escrow prices them. Left out, each run's timer gets the
  protocol's defaults at the block that arms it. Under market ordering a
  run whose cap falls below the lane basefee waits (uncharged) until the
  basefee falls back; a cap below the lane basefee when the next run is
  armed ends the job like any other scheduling failure.

- Retries (a timerhost extension, #45): `retries` and `retryBackoff`
  (seconds, doubled per retry) make every run's timer retried by the
  protocol when the run's target call fails: the run then raises instead of
  moving on, so its bookkeeping is undone, the protocol arms the same run
  again (paid from the same escrow) and the job's cadence resumes after the
  run that succeeds. When the last retry fails the run goes to this actor's
  dead-letter queue (its deposit held out of the escrow); the owner re-runs
  it with `retryJob(id)` or gets everything back with `cancel(id)`.

Jobs due in the same block run in due order (time, then scheduling order);
when the block's timer lane or fire quota (both governed) is full, the rest
roll to the next block in the same order. A run that is late by more than
one interval skips the missed runs: the next run is the first slot of the
job's cadence after the block.
"""

import pvm_host

# Cycles a run's own bookkeeping may use on top of the job's gasLimit: the
# handler, the quote, the next timer and the job record — about 1,500
# (test_cron.py's test_a_runs_bookkeeping_fits_its_overhead keeps it under a
# quarter of this).
RUN_OVERHEAD_CYCLES = 20_000
MIN_INTERVAL_SEC = 60


def _address(value, what):
    if not isinstance(value, str):
        raise TypeError(f"{what} must be an address string, got {value!r}")
    address = value.lower()
    digits = address[2:]
    if not (address.startswith("0x") and len(digits) == 40 and all(c in "0123456789abcdef" for c in digits)):
        raise ValueError(f"{what} {value!r} is not a 0x-prefixed 20-byte address")
    return address


def _count(value, what):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be a non-negative int, got {value!r}")
    return value


def _no_value():
    if pvm_host.value():
        raise ValueError("this method takes no value: only schedule and topUp fund a job's escrow")


class CronRegistry:
    # -- scheduling ----------------------------------------------------------

    def schedule(
        self,
        target,
        method,
        args,
        nextRunAt,
        intervalSec,
        maxRuns,
        gasLimit,
        refundTo=None,
        maxFeePerCycle=None,
        maxPriorityFeePerCycle=None,
        retries=None,
        retryBackoff=None,
    ):
        owner = pvm_host.caller()
        refund_to = owner if refundTo is None else _address(refundTo, "refundTo")
        target = _address(target, "target")
        if not isinstance(method, str) or not method or method.startswith("_"):
            raise ValueError(f"method must be a public handler name, got {method!r}")
        if args is None:
            args = []
        if not isinstance(args, (list, tuple)):
            raise TypeError(f"args must be a list, got {args!r}")
        next_run = _count(nextRunAt, "nextRunAt")
        now = pvm_host.block_timestamp_ms()
        if next_run * 1000 <= now:
            raise ValueError(f"nextRunAt {next_run} is not in the future (this block's time is {now // 1000})")
        interval = _count(intervalSec, "intervalSec")
        if interval != 0 and interval < MIN_INTERVAL_SEC:
            raise ValueError(f"intervalSec must be 0 (one-shot) or at least {MIN_INTERVAL_SEC}, got {interval}")
        max_runs = _count(maxRuns, "maxRuns")
        gas = _count(gasLimit, "gasLimit")
        if gas == 0:
            raise ValueError("gasLimit must be at least 1 cycle")
        fees = {}
        if maxFeePerCycle is not None:
            fees["max_fee_per_cycle"] = _count(maxFeePerCycle, "maxFeePerCycle")
        if maxPriorityFeePerCycle is not None:
            fees["max_priority_fee_per_cycle"] = _count(maxPriorityFeePerCycle, "maxPriorityFeePerCycle")
        if retries is not None:
            # The protocol checks the policy (max_retries) when the run's
            # timer is armed below.
            fees["retries"] = _count(retries, "retries")
            fees["retry_backoff"] = _count(retryBackoff if retryBackoff is not None else 60, "retryBackoff")
        elif retryBackoff is not None:
            raise ValueError("retryBackoff needs retries (how many times a failed run is retried)")
        escrow = pvm_host.value()
        quoted = {k: v for k, v in fees.items() if not k.startswith("retr")}
        quote = pvm_host.timer_quote(timestamp_ms=next_run * 1000, gas_limit=gas + RUN_OVERHEAD_CYCLES, **quoted)
        if escrow < quote["max_cost"] + quote["deposit"]:
            raise ValueError(
                f"escrow {escrow} cannot pay for one run: send at least {quote['max_cost'] + quote['deposit']} "
                f"(a run's maximum cost {quote['max_cost']} at this block's base fee, plus the timer's deposit)"
            )

        job_id = str(self.storage.get("nextJobId", 0) + 1)
        self.storage["nextJobId"] = int(job_id)
        self.storage["escrow:" + job_id] = escrow
        timer = self._arm(job_id, next_run, gas, fees)
        if self.storage["escrow:" + job_id] < quote["max_cost"]:
            raise ValueError(
                f"escrow {escrow} cannot pay for one run: after the timer's deposit it holds "
                f"{self.storage['escrow:' + job_id]}, below a run's maximum cost {quote['max_cost']}"
            )
        self.storage["job:" + job_id] = {
            "id": job_id,
            "owner": owner,
            "target": target,
            "method": method,
            "args": list(args),
            "nextRunAt": next_run,
            "intervalSec": interval,
            "maxRuns": max_runs,
            "runsLeft": max_runs,
            "gasLimit": gas,
            "refundTo": refund_to,
            "fees": fees,
            "timer": timer,
        }
        self.storage["owner:" + owner + ":" + job_id] = True
        pvm_host.emit("JobScheduled", {"id": job_id, "owner": owner, "target": target, "nextRunAt": next_run})
        return job_id

    def cancel(self, id):
        _no_value()
        job = self._job(id)
        caller = pvm_host.caller()
        if caller != job["owner"]:
            raise PermissionError(f"only job {id}'s owner {job['owner']} may cancel it, not {caller}")
        if self.storage.get("running") == id:
            raise ValueError(f"job {id} is running; cancel it from outside its own run")
        try:
            pvm_host.cancel_timer(job["timer"])  # its deposit returns to the escrow
        except pvm_host.HostError:
            try:
                # A run whose retries ran out (#45): its dead letter's
                # deposit returns to the escrow.
                pvm_host.drop_dead_letter(job["timer"])
            except pvm_host.HostError:
                # Gone: removed by governance or as unfunded — or admitted
                # in this block and waiting to run (another job's run is
                # cancelling this one). Such a run still holds its maximum
                # cost out of the escrow; it will pay what it did not use to
                # refundTo.
                self._note_cancelled_in_flight(id, job["refundTo"])
        refunded = self.storage["escrow:" + id]
        self._remove(job)
        pvm_host.transfer(job["refundTo"], refunded)
        pvm_host.emit("JobCancelled", {"id": id, "owner": job["owner"], "refunded": refunded})
        return True

    def retryJob(self, id):
        """Runs again, in the next block, a run whose retries all failed
        (#45; owner only): its dead letter is re-scheduled with the job's
        retry policy, its deposit back in the escrow first."""
        _no_value()
        job = self._job(id)
        caller = pvm_host.caller()
        if caller != job["owner"]:
            raise PermissionError(f"only job {id}'s owner {job['owner']} may retry it, not {caller}")
        try:
            timer = pvm_host.retry_dead_letter(job["timer"], pvm_host.block_timestamp_ms() + 1)
        except pvm_host.HostError as e:
            raise ValueError(f"job {id}'s run is not waiting in the dead-letter queue: {e}")
        job["timer"] = timer
        self.storage["job:" + id] = job
        pvm_host.emit("JobRetried", {"id": id, "owner": job["owner"]})
        return True

    def topUp(self, id):
        job = self._job(id)
        amount = pvm_host.value()
        if amount <= 0:
            raise ValueError("topUp adds the call's value to the escrow: send a positive value")
        total = self.storage["escrow:" + job["id"]] + amount
        self.storage["escrow:" + job["id"]] = total
        pvm_host.emit("JobToppedUp", {"id": job["id"], "amount": amount, "totalEscrow": total})
        return True

    # -- views ---------------------------------------------------------------

    def getJob(self, id):
        _no_value()
        job = self.storage.get("job:" + str(id))
        if job is None:
            return None
        view = {k: v for k, v in job.items() if k not in ("timer", "refundTo", "fees")}
        view["gasEscrow"] = self.storage["escrow:" + job["id"]]
        return view

    def currentJob(self):
        """The job whose run is calling its target right now, or None: a
        target checks it before trusting a call from the registry."""
        _no_value()
        job_id = self.storage.get("running")
        if job_id is None:
            return None
        job = self.storage["job:" + job_id]
        return {k: job[k] for k in ("id", "owner", "target", "method", "args")}

    def jobsOf(self, owner):
        _no_value()
        prefix = "owner:" + _address(owner, "owner") + ":"
        return [key[len(prefix):] for key in self.storage.keys(prefix=prefix)]

    # -- runs ------------------------------------------------------------------

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        job_id = payload.decode()
        job = self.storage.get("job:" + job_id)
        if job is None:
            # Cancelled in this block after this run was admitted: nothing
            # runs, and what the run's held cost leaves goes to refundTo.
            refund_to = self._take_cancelled_in_flight(job_id)
            if refund_to is not None:
                pvm_host.release_escrow(refund_to)
            return
        self.storage["running"] = job_id
        before = pvm_host.cycles_used()
        try:
            pvm_host.call(job["target"], job["method"], *job["args"], gas_limit=job["gasLimit"])
            success = True
        except pvm_host.HostError as e:
            if "retries" in job.get("fees", {}):
                # The protocol retries this run (#45): undo its bookkeeping.
                raise RuntimeError(f"job {job_id}'s run failed: {e}")
            success = False
        used = pvm_host.cycles_used() - before
        del self.storage["running"]
        pvm_host.emit("JobExecuted", {"id": job_id, "success": success, "gasUsed": used})

        if job["maxRuns"]:
            job["runsLeft"] -= 1
        if job["intervalSec"] == 0:
            return self._finish(job, None)
        if job["maxRuns"] and job["runsLeft"] == 0:
            return self._finish(job, f"all {job['maxRuns']} runs done")

        interval = job["intervalSec"]
        now = pvm_host.block_timestamp_ms()
        next_run = job["nextRunAt"] + interval
        if next_run * 1000 <= now:
            next_run += ((now // 1000 - next_run) // interval + 1) * interval
        fees = job.get("fees", {})
        quoted = {k: v for k, v in fees.items() if not k.startswith("retr")}
        try:
            run = pvm_host.timer_quote(
                timestamp_ms=next_run * 1000, gas_limit=job["gasLimit"] + RUN_OVERHEAD_CYCLES, **quoted
            )
        except pvm_host.HostError as e:
            return self._finish(job, f"the next run cannot be scheduled: {e}")
        try:
            timer = self._arm(job_id, next_run, job["gasLimit"], fees)
        except pvm_host.HostError as e:
            return self._finish(job, f"the next run cannot be scheduled: {e}")
        # This run's maximum cost is already held out of the escrow (one
        # base fee prices both runs): what is left must pay for the next run
        # even if this one uses its whole limit.
        worst_left = self.storage["escrow:" + job_id]
        if worst_left < run["max_cost"]:
            pvm_host.cancel_timer(timer)
            return self._finish(
                job, f"escrow too small for the next run: {worst_left} left in the worst case, a run needs {run['max_cost']}"
            )
        job["nextRunAt"] = next_run
        job["timer"] = timer
        self.storage["job:" + job_id] = job

    # -- internals -------------------------------------------------------------

    def _arm(self, job_id, next_run, gas, fees):
        return pvm_host.schedule_timer_at(
            next_run * 1000,
            job_id.encode(),
            gas_limit=gas + RUN_OVERHEAD_CYCLES,
            escrow="escrow:" + job_id,
            **fees,
        )

    def _note_cancelled_in_flight(self, job_id, refund_to):
        """Remembers, for this block only, who gets what a cancelled job's
        admitted run leaves. One key, replaced by the next block's first
        such cancel, so a timer that was simply gone costs no storage."""
        height = pvm_host.block_height()
        noted = self.storage.get("cancelledInFlight")
        if noted is None or noted["height"] != height:
            noted = {"height": height, "jobs": {}}
        noted["jobs"][job_id] = refund_to
        self.storage["cancelledInFlight"] = noted

    def _take_cancelled_in_flight(self, job_id):
        noted = self.storage.get("cancelledInFlight")
        if noted is None or noted["height"] != pvm_host.block_height() or job_id not in noted["jobs"]:
            return None
        refund_to = noted["jobs"].pop(job_id)
        self.storage["cancelledInFlight"] = noted
        return refund_to

    def _job(self, id):
        if not isinstance(id, str):
            raise TypeError(f"job ids are strings, got {id!r}")
        job = self.storage.get("job:" + id)
        if job is None:
            raise KeyError(f"no job {id!r}: never scheduled, or already finished or cancelled")
        return job

    def _finish(self, job, reason):
        """Removes a job at the end of its run; its escrow goes to its
        owner (or `refundTo`) once the run is settled."""
        if reason is not None:
            pvm_host.emit("JobExhausted", {"id": job["id"], "reason": reason})
        self._remove(job, keep_escrow=True)
        pvm_host.release_escrow(job["refundTo"])

    def _remove(self, job, keep_escrow=False):
        del self.storage["job:" + job["id"]]
        del self.storage["owner:" + job["owner"] + ":" + job["id"]]
        if not keep_escrow:
            del self.storage["escrow:" + job["id"]]
