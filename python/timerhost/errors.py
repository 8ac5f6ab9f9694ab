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

from timerhost._native import ChainError, TimerhostError, TransactionRejected
from timerhost.records import DeployError, ExecutionFailed, Reverted, describe_failure

__all__ = [
    "TimerhostError",
    "TransactionRejected",
    "ChainError",
    "ExecutionFailed",
    "DeployError",
    "Reverted",
]
