"""timerhost: an in-process timerhost chain for testing Python actors.

::

    import timerhost
    chain = timerhost.Chain()
    alice, bob = chain.accounts[:2]
    actor = chain.deploy(source, sender=alice)
    r = chain.call(actor, "bump", 5, sender=alice)
    assert r.ok and r.return_value == 5

The chain underneath is the node's own consensus code (the ``chain`` crate
with the real actor VM and CIP-5 timers), running in this process: no node,
no RPC. See ``docs/PYTHON.md`` for the whole API and ``docs/WRITING_ACTORS.md``
for writing actors.
"""

from timerhost.chain import BlockBuilder, Chain, Governance
from timerhost.records import (
    CRON_REGISTRY,
    DEFAULT_CELLS_LIMIT,
    DEFAULT_CYCLES_LIMIT,
    Account,
    Actor,
    Block,
    Event,
    ExecError,
    Receipt,
    Timer,
)
from timerhost.proofs import ProofError, verify_proof
from timerhost.errors import (
    ChainError,
    DeployError,
    ExecutionFailed,
    Reverted,
    TimerhostError,
    TransactionRejected,
)

__all__ = [
    "CRON_REGISTRY",
    "Account",
    "Actor",
    "Block",
    "BlockBuilder",
    "Chain",
    "ChainError",
    "DEFAULT_CELLS_LIMIT",
    "DEFAULT_CYCLES_LIMIT",
    "DeployError",
    "Event",
    "ExecError",
    "ExecutionFailed",
    "Governance",
    "ProofError",
    "Receipt",
    "Reverted",
    "Timer",
    "TimerhostError",
    "TransactionRejected",
    "verify_proof",
]
