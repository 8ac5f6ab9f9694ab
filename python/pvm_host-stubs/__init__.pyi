"""Editor stubs for ``pvm_host``, the host module of timerhost actors.

``pvm_host`` only exists inside the actor VM (it is pre-imported, and
``import pvm_host`` works). These stubs let editors and type checkers
complete actor code; they are installed with the ``timerhost`` package as a
PEP 561 stub package. Costs are in ``docs/METERING.md``; the timer rules in
CIP-5 §4 and ``docs/WRITING_ACTORS.md``.

The actor base API (what the VM gives every actor instance)::

    class Counter:
        storage: pvm_host.Storage   # self.storage
        address: str                # self.address, lowercase 0x…
        deployer: str               # self.deployer

        def deploy(self, start: int = 0) -> None: ...   # runs once, at deployment
        def bump(self, by: int = 1) -> int: ...         # every public method is a handler
        def handle_timer(self, payload: bytes) -> None: ...  # the default timer handler (fires only)

        @pvm_host.timer_handler                          # another handler only a timer fire may run
        def on_tick(self, payload: bytes) -> None: ...

Values crossing the host boundary (storage, arguments, return values, event
data) are ``None``, ``bool``, ``int``, ``str``, ``bytes``, ``list``,
``tuple`` and ``dict`` (see :data:`ActorValue`).
"""

from typing import Any, Dict, Iterator, List, Optional, Tuple, Type, TypeVar, Union

ActorValue = Union[None, bool, int, str, bytes, List[Any], Tuple[Any, ...], Dict[Any, Any]]
"""What storage, arguments, return values and event data may hold."""

_C = TypeVar("_C", bound=type)
_F = TypeVar("_F")

class HostError(Exception):
    """A host call refused its arguments (a CIP-5 rule, an unknown actor,
    insufficient balance, …); ``kind`` is the error kind
    (``"invalid_input"``, ``"unauthorized"``, ``"not_found"``, …). Uncaught,
    it reverts the execution."""

    kind: str

class Storage:
    """``self.storage``: the actor's persistent key-value store. Keys are
    ``str``; reads cost 10 cycles, writes 50 cycles plus cells for the bytes."""

    def __getitem__(self, key: str) -> ActorValue: ...
    def __setitem__(self, key: str, value: ActorValue) -> None: ...
    def __delitem__(self, key: str) -> None: ...
    def __contains__(self, key: str) -> bool: ...
    def get(self, key: str, default: ActorValue = None) -> ActorValue: ...
    def keys(self, prefix: str = "") -> Iterator[str]:
        """Keys starting with ``prefix``, in key (byte) order."""

def actor(cls: _C) -> _C:
    """Marks the actor class when a module defines several classes."""

def timer_handler(method: _F) -> _F:
    """Marks a method only a timer fire may invoke (like ``handle_timer``):
    a transaction or ``pvm_host.call`` naming it fails with kind
    ``unauthorized``. Name it in a timer with the custom-handler payload
    ``{"_handler": name, "_payload": base64}``."""

def block_height() -> int:
    """Height of the block being executed."""

def block_timestamp() -> int:
    """Timestamp of the block being executed, in whole unix seconds."""

def trigger() -> dict[str, object] | None:
    """Inside a timer fire, why it runs: ``{"kind", "timer_id": bytes,
    "fire_seq", ...}`` with ``"due_height": h`` (a height timer),
    ``"due_timestamp_ms": t`` (a time timer) or ``"matched_keys": [...]``
    (a state watch: the watched keys the block wrote, at most 32, and
    ``fire_seq`` counts the watch's fires from 1); ``None`` in a transaction
    and in an actor reached through ``call`` (the fire ran the first
    actor)."""

def block_timestamp_ms() -> int:
    """Timestamp of the block being executed, in unix milliseconds (block
    timestamps are set by the proposer and strictly increase)."""

def actor_address() -> str:
    """This actor's address (lowercase ``0x…``)."""

def tx_sender() -> str:
    """The transaction's signer (for a timer fire: the actor itself). Unchanged across nested calls."""

def caller() -> str:
    """Who invoked the running handler: the transaction's signer at the top
    level, the calling actor in a nested call, this actor itself for a timer
    fire. Use it for access checks (``tx_sender()`` stays the signer across
    nested calls, so any actor the signer's transaction passes through would
    look like the signer)."""

def balance(address: str) -> int:
    """Balance of any account, in the smallest unit."""

def transfer(to: str, amount: int) -> None:
    """Sends ``amount`` from this actor's balance; ``HostError`` if it is too small."""

def emit(name: str, data: ActorValue) -> None:
    """Emits an event (kept only if the execution succeeds); costs cells for its bytes."""

def call(actor: str, handler: str, *args: ActorValue, value: int = 0, gas_limit: Optional[int] = None) -> ActorValue:
    """Calls another actor synchronously (depth ≤ 32). The callee has its own
    storage; ``tx_sender()`` is unchanged and ``caller()`` is this actor. A
    failing callee reverts this execution unless the ``HostError`` is caught,
    in which case only the callee's effects are discarded. ``gas_limit`` caps
    the callee's cycles: running out of it raises ``HostError`` (kind
    ``out_of_cycles``) here, and this execution goes on."""

def value() -> int:
    """What the transaction or the calling actor sent with this call (already
    in this actor's balance); 0 in a timer fire."""

def cycles_used() -> int:
    """Cycles this execution has used so far, nested calls included."""

def release_escrow(to: str) -> None:
    """In the handler of a fire funded by ``escrow=``: once the fire's cost
    is settled against the escrow, pay what is left to ``to`` and delete the
    key. ``HostError`` anywhere else."""

def schedule_timer(height: int, payload: bytes) -> bytes:
    """Schedules ``handle_timer(payload)`` at a future ``height``, paid by this
    actor, with the ``TimerConfig`` defaults (CIP-5 §4.1). Returns the
    32-byte timer id. A payload ``{"_handler": name, "_payload": base64}``
    (JSON) selects another handler."""

def schedule_timer_ex(
    height: int,
    payload: bytes,
    fee_payer: Optional[str] = None,
    gas_limit: Optional[int] = None,
    expires_at: Optional[int] = None,
    bid: Optional[int] = None,
    escrow: Optional[str] = None,
) -> bytes:
    """``schedule_timer`` with every option: ``fee_payer`` (this actor, or
    ``tx_sender()`` — only when the transaction targets this actor directly,
    not through ``pvm_host.call``), ``gas_limit`` (≤ ``max_cycles_per_fire``),
    ``expires_at`` (≤ height + ``max_ttl_blocks``), ``bid`` (a priority fee
    per handler cycle ≤ ``max_bid``, paid to the proposer on the cycles used;
    ``max_cost`` grows by ``gas_limit × bid``). The fee payer lends a
    refundable deposit (``deposit_per_byte`` × the timer's bytes)."""

def schedule_timer_at(
    timestamp_ms: int,
    payload: bytes,
    fee_payer: Optional[str] = None,
    gas_limit: Optional[int] = None,
    expires_at: Optional[int] = None,
    bid: Optional[int] = None,
    escrow: Optional[str] = None,
) -> bytes:
    """A time timer: ``handle_timer(payload)`` runs at the *start* of the
    first block whose timestamp is ≥ ``timestamp_ms`` (unix ms), before that
    block's transactions; timers due together run by time, then in
    scheduling order. ``timestamp_ms`` must be later than this block's
    timestamp. ``expires_at`` is a height (default: this height +
    ``max_ttl_blocks``); a timer whose TTL runs out before its time leaves
    with its deposit refunded. The other options and the handler convention
    are ``schedule_timer_ex``'s.
    ``escrow`` (also on ``schedule_timer_ex``) names an int in this actor's
    storage that pays the timer: its deposit comes from it and goes back to
    it, a fire runs only if it covers the fire's maximum cost, and the settled
    cost is subtracted after the fire. This actor must be the fee payer."""

def watch(
    keys: str | list[str],
    payload: bytes = b"",
    actor: Optional[str] = None,
    handler: Optional[str] = None,
    fee_payer: Optional[str] = None,
    gas_limit: Optional[int] = None,
    expires_at: Optional[int] = None,
) -> bytes:
    """A persistent state watch over storage ``keys`` of ``actor`` (default:
    this actor; any actor's storage can be watched). Each entry is a key or a
    prefix (``"price*"``); at most ``max_watch_keys`` (16) entries of at most
    256 bytes. At the end of every block in which a committed execution
    wrote a matched key, ``handler`` (default ``handle_timer``) of *this*
    actor runs once with ``payload``, after the block's height timers,
    pre-charged and refunded like any fire. Writes made at the end of a
    block (by fires) count toward the next block, so a watch fires at most
    once per block. It stays until ``cancel_timer``, ``expires_at`` (a
    height) or its payer cannot pay. Returns its timer id."""

def extend_timer(timer_id: bytes, new_expires_at: int) -> None:
    """Moves the expiry of one of this actor's timers."""

def cancel_timer(timer_id: bytes) -> None:
    """Cancels one of this actor's pending timers (its deposit goes back to its fee payer)."""

def revoke_timer_payments() -> None:
    """Revokes every timer scheduled so far that names this actor as fee
    payer: each is removed when it comes due, without running and without
    charging this actor, and its deposit is refunded."""

def timer_quote(
    height: int | None = None,
    timestamp_ms: int | None = None,
    gas_limit: int | None = None,
) -> dict[str, int | bool | None]:
    """What a timer at ``height`` (default: the next block), or a time timer
    at ``timestamp_ms``, with ``gas_limit`` cycles per fire (default:
    ``max_cycles_per_fire``) would cost, before scheduling it:
    ``{"height", "timestamp_ms", "gas_limit", "max_cost", "deposit",
    "lane_budget", "reserved", "queued", "fits"}``. ``max_cost`` is what
    each fire pre-charges at this block's basefees, ``deposit`` the deposit
    of an empty payload with the default handler, ``reserved``/``queued``
    the lane cycles and timers already queued for that height or
    millisecond (carry-over
    from earlier blocks not counted), ``fits`` whether one more would fire
    there without carry-over. Reads only; 10 cycles. Raises like
    ``schedule_timer`` for a height or time not in the future, both at once,
    or a gas limit out of range."""
