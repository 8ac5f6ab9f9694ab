"""A payment that is retried with backoff, then dead-lettered (#45).

`pay(to, amount, at_height)` schedules the payment as a timer with a retry
policy: if the handler fails (here: the payee is blocked), the protocol
re-arms it 2, then 4, then 8 blocks later, paid by this actor each time.
When the last retry fails too, the payment waits in this actor's
dead-letter queue — payload, error and traceback kept — until the owner
re-runs it (`retry`) or gives up (`drop`, its deposit refunded).
"""

import pvm_host


class Payments:
    def deploy(self):
        self.storage["blocked"] = {}
        self.storage["paid"] = []

    def pay(self, to, amount, at_height):
        self._owner_only()
        payload = (to + ":" + str(amount)).encode()
        return pvm_host.schedule_timer_ex(
            at_height, payload, gas_limit=60_000, retries=3, retry_backoff=2
        )

    def block(self, address, blocked):
        """The payee's side of the story: a blocked address refuses money."""
        self._owner_only()
        blocked_now = self.storage["blocked"]
        blocked_now[address] = blocked
        self.storage["blocked"] = blocked_now

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        to, amount = payload.decode().split(":")
        if self.storage["blocked"].get(to):
            raise PermissionError(f"payee {to} refuses payments")
        pvm_host.transfer(to, int(amount))
        self.storage["paid"] = self.storage["paid"] + [[to, int(amount)]]

    def failed_payments(self):
        return [
            {"timer_id": e["timer_id"], "payload": e["payload"], "error": e["error"], "attempts": e["attempts"]}
            for e in pvm_host.dead_letters()
        ]

    def retry(self, timer_id):
        self._owner_only()
        return pvm_host.retry_dead_letter(timer_id)

    def drop(self, timer_id):
        self._owner_only()
        pvm_host.drop_dead_letter(timer_id)

    def _owner_only(self):
        if pvm_host.caller() != self.deployer:
            raise PermissionError("only the deployer manages payments")
