"""A noisy neighbour: fills a block's timer lane with its own timers."""

import pvm_host


class Crowd:
    def flood(self, height, n):
        for i in range(n):
            pvm_host.schedule_timer_ex(height, b"", gas_limit=550_000)

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        pass
