"""``chain.cron``: ARC-21's cron registry (``actors/system/cron.py``, at
``0x…06`` in every genesis) from a wallet, without writing an actor.

::

    job = chain.cron.schedule(token, "transfer", [bob, 10], next_run_at=t,
                              interval_sec=30 * 86_400, max_runs=12,
                              gas_limit=50_000, escrow=10**16, sender=alice)
    chain.cron.job(job)["gasEscrow"]     # read from state: no block mined
    chain.cron.top_up(job, 10**15, sender=anyone)
    chain.cron.cancel(job, sender=alice)  # the rest of the escrow comes back

``schedule``, ``top_up`` and ``cancel`` are transactions (each mines a block
and raises :class:`~timerhost.Reverted` if the registry refuses);
``job``, ``jobs_of`` and ``escrow_total`` read committed state.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence

from timerhost.records import CRON_REGISTRY, AddressLike, Receipt, _address


class Wallet(Protocol):
    """What the registry needs of a chain: calls and storage reads
    (:class:`~timerhost.Chain` and :class:`~timerhost.rpc.RpcChain`)."""

    def call(self, actor: AddressLike, handler: str, *args: Any, **opts: Any) -> Receipt: ...

    def storage(self, actor: AddressLike, key: str) -> Any: ...

    def storage_keys(self, actor: AddressLike, prefix: str = "", *, limit: int = ...) -> List[str]: ...


class Cron:
    """The cron registry seen from a wallet (``chain.cron``)."""

    address: str = CRON_REGISTRY

    def __init__(self, chain: Wallet) -> None:
        self._chain = chain

    def schedule(
        self,
        target: AddressLike,
        method: str,
        args: Sequence[Any] = (),
        *,
        next_run_at: int,
        gas_limit: int,
        escrow: int,
        interval_sec: int = 0,
        max_runs: int = 0,
        sender: Optional[AddressLike] = None,
        max_fee_per_cycle: Optional[int] = None,
        max_priority_fee_per_cycle: Optional[int] = None,
        retries: Optional[int] = None,
        retry_backoff: Optional[int] = None,
    ) -> str:
        """Schedules ``target.method(*args)`` at ``next_run_at`` (unix
        seconds), once or every ``interval_sec`` (≥ 60) seconds, at most
        ``max_runs`` times (0: until the escrow runs out); ``escrow`` funds
        it. ``max_fee_per_cycle`` and ``max_priority_fee_per_cycle`` are
        every run's timer fee caps (#31; left out, each run gets the
        protocol's defaults). ``retries`` and ``retry_backoff`` (seconds,
        doubled per retry) retry a run whose target call fails (#45; the
        registry's ``retries``/``retryBackoff``). Returns the job id."""
        receipt = self._chain.call(
            CRON_REGISTRY,
            "schedule",
            _address(target, "target"),
            method,
            list(args),
            next_run_at,
            interval_sec,
            max_runs,
            gas_limit,
            None,
            max_fee_per_cycle,
            max_priority_fee_per_cycle,
            retries,
            retry_backoff,
            sender=sender,
            value=escrow,
        ).raise_for_status()
        return receipt.return_value

    def retry(self, job_id: str, *, sender: Optional[AddressLike] = None) -> Receipt:
        """Runs again a job's run whose retries all failed (its owner only)."""
        return self._chain.call(CRON_REGISTRY, "retryJob", job_id, sender=sender).raise_for_status()

    def cancel(self, job_id: str, *, sender: Optional[AddressLike] = None) -> Receipt:
        """Cancels a job (its owner only); the rest of its escrow is refunded."""
        return self._chain.call(CRON_REGISTRY, "cancel", job_id, sender=sender).raise_for_status()

    def top_up(self, job_id: str, amount: int, *, sender: Optional[AddressLike] = None) -> Receipt:
        """Adds ``amount`` to a job's escrow (anyone may)."""
        return self._chain.call(CRON_REGISTRY, "topUp", job_id, sender=sender, value=amount).raise_for_status()

    def job(self, job_id: str) -> Optional[Dict[str, Any]]:
        """The job as ``getJob`` returns it (ARC-21's fields), or ``None``."""
        record = self._chain.storage(CRON_REGISTRY, "job:" + job_id)
        if record is None:
            return None
        view = {k: v for k, v in record.items() if k not in ("timer", "refundTo", "fees")}
        view["gasEscrow"] = self._chain.storage(CRON_REGISTRY, "escrow:" + job_id)
        return view

    def jobs_of(self, owner: AddressLike) -> List[Dict[str, Any]]:
        """Every live job of ``owner``, oldest first (an index scan)."""
        prefix = "owner:" + _address(owner, "owner") + ":"
        ids = [key[len(prefix):] for key in self._chain.storage_keys(CRON_REGISTRY, prefix)]
        jobs = [self.job(i) for i in sorted(ids, key=int)]
        return [j for j in jobs if j is not None]

    def escrow_total(self) -> int:
        """The sum of every live job's escrow: what the registry's balance
        must equal after every block."""
        return sum(self._chain.storage(CRON_REGISTRY, key) or 0 for key in self._chain.storage_keys(CRON_REGISTRY, "escrow:", limit=1_000_000))


__all__ = ["Cron", "CRON_REGISTRY"]
