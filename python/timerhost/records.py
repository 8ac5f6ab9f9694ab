"""What the chain returns, as plain values: accounts and actors,
:class:`Receipt` (with :class:`Event` and :class:`ExecError`),
:class:`Block` and :class:`Timer`, the package's transaction defaults, and
the exceptions that carry a failed receipt (:class:`ExecutionFailed`,
:class:`DeployError`, :class:`Reverted`; import them from
:mod:`timerhost` or :mod:`timerhost.errors`).

Nothing here talks to a chain: :mod:`timerhost.chain` (in process) and
:mod:`timerhost.rpc` (over JSON-RPC) build these values from what a node
answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from timerhost import _native
from timerhost._native import TimerhostError

__all__ = [
    "CRON_REGISTRY",
    "DEFAULT_CELLS_LIMIT",
    "DEFAULT_CYCLES_LIMIT",
    "Account",
    "Actor",
    "AddressLike",
    "Block",
    "DeployError",
    "Event",
    "ExecError",
    "ExecutionFailed",
    "Receipt",
    "Reverted",
    "Timer",
]

#: Default cycles limit of a transaction built by this package.
DEFAULT_CYCLES_LIMIT = 10_000_000
#: Default cells limit of a transaction built by this package.
DEFAULT_CELLS_LIMIT = 2_000_000

AddressLike = Union[str, "Account", "Actor"]


def _address(value: AddressLike, what: str = "address") -> str:
    """The ``0x…`` address of an account, actor or string."""
    if isinstance(value, (Account, Actor)):
        return value.address
    if isinstance(value, str):
        return value.lower()
    raise TypeError(f"{what}: expected an address string, Account or Actor, got {type(value).__name__}")


def _opt_address(value: Optional[AddressLike], what: str) -> Optional[str]:
    """A filter's address, or ``None`` when the filter is not given."""
    return _address(value, what) if value is not None else None


def _arg(value: Any) -> Any:
    """Accounts and actors passed as arguments become their address strings."""
    if isinstance(value, (Account, Actor)):
        return value.address
    if isinstance(value, (list, tuple)):
        return type(value)(_arg(v) for v in value)
    if isinstance(value, dict):
        return {_arg(k): _arg(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Account:
    """A funded externally-owned account: its address and signing key."""

    address: str
    private_key: str = field(repr=False)

    def __str__(self) -> str:
        return self.address


@dataclass(frozen=True)
class Actor:
    """A deployed actor. ``name`` is its class name (used in gas reports)."""

    address: str
    name: str = "actor"
    deploy_receipt: Optional["Receipt"] = field(default=None, repr=False, compare=False)

    def __str__(self) -> str:
        return self.address


@dataclass(frozen=True)
class ExecError:
    """Why an execution failed."""

    kind: str
    """Stable snake_case kind: ``revert``, ``out_of_cycles``, ``out_of_cells``,
    ``out_of_memory``, ``forbidden``, ``invalid_input``, ``unauthorized``,
    ``not_found``, ``insufficient_funds``, ``call_depth_exceeded``."""
    message: str
    traceback: Optional[str]

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


@dataclass(frozen=True)
class Event:
    """An event: emitted by an actor, or by the protocol (``TimerFired``, …)."""

    name: str
    data: Any
    height: int
    actor: str
    tx_hash: str

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


@dataclass(frozen=True)
class Receipt:
    """The outcome of one executed transaction (user or deferred)."""

    tx_hash: str
    sender: str
    source: str
    """``"user"``, ``"deferred"`` (a timer fire), ``"start_of_block"`` or
    ``"end_of_block"`` (timer removals of those phases)."""
    status: str
    """``"success"`` or ``"failed"``."""
    error: Optional[ExecError]
    cycles_used: int
    cells_used: int
    fee: int
    """Total fee debited (burned + tip)."""
    burned: int
    tip: int
    events: List[Event]
    return_value: Any
    created_actor: Optional[str]
    height: int
    origin_tx_hash: Optional[str] = None
    fee_payer: Optional[str] = None
    deliver_seq: Optional[int] = None
    """For a timer fire: its global delivery number (monotonic, never reused)."""
    fire_seq: Optional[int] = None
    """For a timer fire: the timer's how-manieth fire (a watch counts them)."""
    deliver_id: Optional[str] = None
    """For a timer fire: ``keccak256(height ‖ parent_state_root ‖ timer_id ‖ fire_seq)``."""
    label: str = field(default="", compare=False, repr=False)
    """What the transaction was (``call Counter.bump``), for error messages."""

    @property
    def ok(self) -> bool:
        """Did the execution succeed (effects kept)?"""
        return self.status == "success"

    def raise_for_status(self) -> "Receipt":
        """Raises :class:`~timerhost.Reverted` (with the actor's traceback) if
        the execution failed; returns the receipt otherwise."""
        __tracebackhide__ = True
        if not self.ok:
            raise Reverted(self.label or f"transaction {self.tx_hash}", self)
        return self

    def event(self, name: str) -> Event:
        """The first event called ``name``; ``KeyError`` if there is none."""
        for ev in self.events:
            if ev.name == name:
                return ev
        raise KeyError(f"no {name!r} event in receipt {self.tx_hash} (events: {[e.name for e in self.events]})")

    @classmethod
    def _from(cls, d: Dict[str, Any]) -> "Receipt":
        err = d["error"]
        return cls(
            tx_hash=d["tx_hash"],
            sender=d["sender"],
            source=d["source"],
            status=d["status"],
            error=ExecError(**err) if err is not None else None,
            cycles_used=d["cycles_used"],
            cells_used=d["cells_used"],
            fee=d["fee_paid"],
            burned=d["burned"],
            tip=d["tip"],
            events=[Event(**e) for e in d["events"]],
            return_value=d["return_value"],
            created_actor=d["created_actor"],
            height=d["height"],
            origin_tx_hash=d["origin_tx_hash"],
            fee_payer=d["fee_payer"],
            deliver_seq=d["deliver_seq"],
            fire_seq=d["fire_seq"],
            deliver_id=d["deliver_id"],
        )


@dataclass(frozen=True)
class Block:
    """A committed block and every receipt it produced, in execution order:
    the start of block (due time timers: removals, then fires), user
    transactions, then end-of-block work, then deferred transactions (the
    fires of height timers and state watches)."""

    height: int
    timestamp: int
    """Unix milliseconds."""
    hash: str
    parent_hash: str
    state_root: str
    proposer: str
    tx_count: int
    receipts: List[Receipt]
    lane_basefee: int = 0
    """The timer lane's basefee in force for this block (#31): burned per
    handler cycle of every fire under ``"market"`` ordering, at its floor
    (and charged to nobody) under the others."""

    @property
    def fires(self) -> List[Receipt]:
        """Receipts of the timer fires of this block: time timers at its
        start, height timers and state watches at its end."""
        return [r for r in self.receipts if r.source == "deferred"]

    @property
    def events(self) -> List[Event]:
        """Every event of the block, in order."""
        return [e for r in self.receipts for e in r.events]

    @classmethod
    def _from(cls, d: Dict[str, Any]) -> "Block":
        return cls(
            height=d["height"],
            timestamp=d["timestamp"],
            hash=d["hash"],
            parent_hash=d["parent_hash"],
            state_root=d["state_root"],
            proposer=d["proposer"],
            tx_count=d["tx_count"],
            receipts=[Receipt._from(r) for r in d["receipts"]],
            lane_basefee=d["lane_basefee"],
        )


@dataclass(frozen=True)
class Timer:
    """A pending timer, with the fields of CIP-5 §3.1."""

    timer_id: bytes
    actor_address: str
    height: int
    payload: bytes
    handler: str
    fee_payer: str
    gas_limit_per_fire: int
    expires_at: int
    seq: int
    """Global insertion sequence: FIFO order within a height."""
    deposit: int
    """State-memory deposit the fee payer lent at scheduling; refunded to it
    in full whenever the timer leaves state."""
    bid: int = 0
    """Priority fee per handler cycle (its ``max_priority_fee_per_cycle``),
    paid to the proposer on the cycles a fire uses. Under ``"fifo"`` and
    ``"priority"`` ordering it is pre-charged on ``gas_limit_per_fire``;
    under ``"market"`` it is clamped to ``max_fee_per_cycle − lane
    basefee``."""
    max_fee_per_cycle: int = 0
    """The most a fire pays per handler cycle for the timer lane (lane
    basefee + priority fee) under ``"market"`` ordering, pre-charged on
    ``gas_limit_per_fire``. While the lane basefee is above it the timer
    waits, uncharged (``TimerDeferred``)."""
    escrow_key: Optional[str] = None
    """The storage key of the actor's escrow that funds it (``escrow=`` at
    scheduling), or ``None``."""
    trigger: Dict[str, Any] = field(default_factory=dict)
    """What makes it due: ``{"kind": "height", "height": h}``, ``{"kind":
    "time", "timestamp_ms": t}`` or ``{"kind": "state", "actor": a, "keys":
    [...], "fires": n}``. (``height`` is a height timer's firing height and
    the scheduling height of the other kinds.)"""
    booked: bool = False
    """Was it booked (#45, ``pvm_host.book_timer``)? A booked timer fires at
    the start of the block it is due in, before every other fire."""
    retry: Optional[Dict[str, int]] = None
    """Its retry policy (#45): ``{"retries", "backoff", "failures"}`` —
    ``failures`` fires of it have failed so far — or ``None``."""

    @property
    def max_priority_fee_per_cycle(self) -> int:
        """The priority fee per handler cycle: :attr:`bid` by its CIP-1 v3 name."""
        return self.bid


CRON_REGISTRY: str = _native.CRON_REGISTRY_ADDRESS
"""ARC-21's cron registry, installed by every genesis (``actors/system/cron.py``)."""


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
