"""Payroll: pays each employee their salary in ARC-20 tokens when the ARC-21
cron registry calls `pay()` from a job the employer scheduled — and only
then. The employer funds it with tokens and schedules `pay` from a wallet
(`chain.cron.schedule`, or `timerhost cron schedule`); no scheduling code
lives here. A job a stranger schedules against `pay` is refused: the
registry's `currentJob()` says whose job is running."""

import pvm_host

CRON = "0x0000000000000000000000000000000000000006"


class Payroll:
    def deploy(self, token):
        self.storage["token"] = token
        self.storage["employer"] = pvm_host.tx_sender()
        self.storage["staff"] = {}
        self.storage["runs"] = 0

    def hire(self, employee, salary):
        if pvm_host.caller() != self.storage["employer"]:
            raise PermissionError("only the employer hires")
        staff = self.storage["staff"]
        staff[employee.lower()] = salary
        self.storage["staff"] = staff

    def pay(self):
        if pvm_host.caller() != CRON:
            raise PermissionError(f"payday is run by the cron registry {CRON}, not {pvm_host.caller()}")
        job = pvm_host.call(CRON, "currentJob")
        if job is None or job["owner"] != self.storage["employer"]:
            owner = None if job is None else job["owner"]
            raise PermissionError(f"payday runs only from the employer's own cron jobs, not one of {owner}")
        for employee, salary in sorted(self.storage["staff"].items()):
            pvm_host.call(self.storage["token"], "transfer", employee, salary)
        self.storage["runs"] += 1
        pvm_host.emit("Paid", {"run": self.storage["runs"]})
