"""KeepAlive: a reminder due far in the future, kept alive by a heartbeat.

A timer may wait at most `max_ttl_blocks` (governed) before it expires; one
due later must have its expiry renewed with `extend_timer` before it lapses.
Here the reminder is scheduled with a short TTL on purpose, and a heartbeat
every `every` blocks renews it to `ttl` blocks ahead. If the heartbeat stops
(`stop()`), the reminder expires instead of firing."""

import pvm_host


class KeepAlive:
    def deploy(self, reminder_at_ms, every, ttl):
        self.storage["owner"] = pvm_host.tx_sender()
        self.storage["every"] = every
        self.storage["ttl"] = ttl
        self.storage["renewals"] = 0
        height = pvm_host.block_height()
        self.storage["reminder"] = pvm_host.schedule_timer_at(reminder_at_ms, b"remind", expires_at=height + ttl)
        self._beat_at(height + every)

    def stop(self):
        if pvm_host.caller() != self.storage["owner"]:
            raise PermissionError("only the owner stops the heartbeat")
        pvm_host.cancel_timer(self.storage["beat"])
        self.storage["beat"] = None

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        if payload == b"remind":
            self.storage["reminded_at"] = pvm_host.block_timestamp()
            if self.storage["beat"] is not None:
                pvm_host.cancel_timer(self.storage["beat"])
                self.storage["beat"] = None
            return
        height = pvm_host.block_height()
        pvm_host.extend_timer(self.storage["reminder"], height + self.storage["ttl"])
        self.storage["renewals"] += 1
        self._beat_at(height + self.storage["every"])

    def _beat_at(self, height):
        self.storage["beat"] = pvm_host.schedule_timer(height, b"beat")
