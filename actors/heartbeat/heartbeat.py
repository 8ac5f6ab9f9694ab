"""HeartbeatActor (CIP-5 Appendix B): a self-funded recurring timer.

Timers are one-shot; the actor re-schedules itself from its handler, so each
beat is a fresh pay-as-you-go tick. The actor pays for its own fires
(fee_payer defaults to the actor's address): top up its balance to keep it
beating. When the balance can no longer cover a fire's max_cost, that fire
self-destructs with TimerCancelledInsufficientFunds and the loop ends.
"""

import pvm_host


class HeartbeatActor:
    INTERVAL = 10  # fire every 10 blocks

    def deploy(self, interval=10):
        self.storage["interval"] = interval
        self.storage["beats"] = 0
        # fee_payer defaults to the actor itself; gas_limit and expires_at to
        # the TimerConfig defaults.
        self.storage["timer"] = pvm_host.schedule_timer(pvm_host.block_height() + interval, b"")

    def handle_timer(self, payload):
        # A timer handler: only a timer fire can invoke it, so nobody can
        # start a second loop or bump the count by calling it.
        beats = self.storage["beats"] + 1
        self.storage["beats"] = beats
        self.storage["last_beat"] = pvm_host.block_height()
        pvm_host.emit("Heartbeat", {"beat": beats, "height": pvm_host.block_height()})
        # Re-schedule. If the balance cannot cover the next fire's max_cost,
        # this still succeeds, but that fire will self-destruct.
        self.storage["timer"] = pvm_host.schedule_timer(
            pvm_host.block_height() + self.storage["interval"], b""
        )

    def stop(self):
        """Cancel the pending beat. Only the deployer may stop the heartbeat
        (and only the actor itself can cancel its own timers)."""
        if pvm_host.caller() != self.deployer:
            raise PermissionError("only the deployer can stop this heartbeat")
        pvm_host.cancel_timer(self.storage["timer"])
        self.storage["stopped"] = True
