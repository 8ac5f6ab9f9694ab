"""Exceptions raised by the timerhost package.

Every error derives from :class:`TimerhostError`:

- :class:`TransactionRejected` — the chain refused a transaction before
  inclusion (bad nonce, unfunded sender, wrong signer, limits). Nothing was
  mined.
- :class:`DeployError` — a deployment was mined but failed (the source was
  rejected by the sandbox, ``deploy()`` raised, ran out of cycles, …).
- :class:`Reverted` — raised by :meth:`Receipt.raise_for_status` (and by the
  governance helpers) for a failed execution; its message carries the
  actor's Python traceback.
- :class:`ChainError` — the chain itself failed (storage, bad parameters).

An actor's exception is never raised by :meth:`Chain.call`: it is a receipt
with ``ok == False``, exactly as on the real chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from timerhost._native import ChainError, TimerhostError, TransactionRejected

if TYPE_CHECKING:
    from timerhost.chain import Receipt

__all__ = [
    "TimerhostError",
    "TransactionRejected",
    "ChainError",
    "ExecutionFailed",
    "DeployError",
    "Reverted",
]


def describe_failure(what: str, receipt: "Receipt") -> str:
    """A readable account of a failed execution: kind, message, traceback, resources."""
    err = receipt.error
    lines = [f"{what} failed"]
    if err is not None:
        lines[0] += f" ({err.kind}): {err.message}"
        if err.traceback:
            lines.append("actor traceback:")
            lines.extend("  " + line for line in err.traceback.rstrip().splitlines())
    lines.append(
        f"cycles used: {receipt.cycles_used}, cells used: {receipt.cells_used}, "
        f"fee paid: {receipt.fee}, block {receipt.height}, tx {receipt.tx_hash}"
    )
    return "\n".join(lines)


class ExecutionFailed(TimerhostError):
    """A mined execution failed. ``receipt`` holds everything the chain recorded."""

    def __init__(self, what: str, receipt: "Receipt") -> None:
        super().__init__(describe_failure(what, receipt))
        self.receipt = receipt

    @property
    def kind(self) -> Optional[str]:
        """The error kind (``"revert"``, ``"out_of_cycles"``, …)."""
        return self.receipt.error.kind if self.receipt.error else None

    @property
    def traceback(self) -> Optional[str]:
        """The actor's Python traceback, if the failure came from actor code."""
        return self.receipt.error.traceback if self.receipt.error else None


class DeployError(ExecutionFailed):
    """A deployment was mined but failed; the actor does not exist."""


class Reverted(ExecutionFailed):
    """An execution failed and its effects were discarded (fees were still charged)."""
