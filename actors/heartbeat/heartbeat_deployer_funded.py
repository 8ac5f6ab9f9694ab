"""Deployer-funded heartbeat (CIP-5 Appendix B variant).

The deployer pays every beat. `deploy` runs inside the deployer's own
transaction, so tx_sender == deployer and the §4.2 fee_payer rule accepts
`fee_payer=self.deployer`. A timer handler, however, runs as the actor
itself: it cannot name the deployer as payer again (that is CIP-5's
security boundary). So the deployer pre-schedules a series of beats — at
deployment, and later with `renew`, both in its own transactions — each
with a tight gas budget and a short expiry.
"""

import pvm_host


def plan_beats(actor, count):
    """Schedule `count` more beats after the last planned one, paid by the deployer."""
    last = actor.storage.get("last_planned", pvm_host.block_height())
    interval = actor.storage["interval"]
    for _ in range(count):
        last = last + interval
        pvm_host.schedule_timer_ex(
            last,
            b"",
            fee_payer=actor.deployer,  # == tx_sender: accepted
            gas_limit=actor.storage["gas_limit"],  # tighter than the 550k default
            expires_at=last + interval,  # a beat that cannot run on time is dropped
        )
    actor.storage["last_planned"] = last


class DeployerFundedHeartbeat:
    def deploy(self, interval=10, beats=10, gas_limit=200_000):
        self.storage["interval"] = interval
        self.storage["gas_limit"] = gas_limit
        self.storage["beats"] = 0
        plan_beats(self, beats)

    def handle_timer(self, payload):
        beats = self.storage["beats"] + 1
        self.storage["beats"] = beats
        self.storage["last_beat"] = pvm_host.block_height()
        pvm_host.emit("Heartbeat", {"beat": beats, "height": pvm_host.block_height()})

    def renew(self, beats):
        """Called by the deployer: plan more beats at the deployer's expense.

        `caller()`, not `tx_sender()`: an actor the deployer's transaction
        passes through must not be able to renew in its name (and only the
        transaction's own target may name the signer as fee payer anyway).
        """
        if pvm_host.caller() != self.deployer:
            raise PermissionError("only the deployer funds this heartbeat")
        plan_beats(self, beats)
