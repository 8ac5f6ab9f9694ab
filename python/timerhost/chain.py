"""The in-process chain: the node's own consensus code, driven from Python.

:class:`Chain` wraps the native core (``timerhost._native``), which runs the
same ``chain`` crate as ``timerhost node``: every transaction goes through
validation, the actor VM, fee settlement, end-of-block timer delivery and an
atomic commit under a state root. Nothing is simulated.

Blocks are mined on demand: :meth:`Chain.call`, :meth:`Chain.deploy` and
:meth:`Chain.transfer` each mine one block holding that transaction;
:meth:`Chain.block` collects several transactions into one block;
:meth:`Chain.mine` mines empty blocks (timers still fire). The clock is
logical: each block is ``interval`` seconds (``interval_ms``) after its
parent unless :meth:`Chain.warp` sets the next timestamp. Block timestamps
are unix milliseconds (``chain.timestamp``, ``Block.timestamp``). Nothing
reads the wall clock.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from timerhost import _native

from timerhost.errors import DeployError, Reverted
from timerhost.records import (
    CRON_REGISTRY,
    DEFAULT_CELLS_LIMIT,
    DEFAULT_CYCLES_LIMIT,
    Account,
    Actor,
    AddressLike,
    Block,
    Event,
    Receipt,
    Timer,
    _address,
    _arg,
    _opt_address,
)

if TYPE_CHECKING:
    from timerhost.cron import Cron

__all__ = ["BlockBuilder", "Chain", "Governance"]


def _actor_name(source: str, fallback: str) -> str:
    """The actor class of a module: the one marked ``@actor``, else the only class."""
    marked = re.search(r"^@actor\s*\n\s*class\s+(\w+)", source, re.M)
    if marked:
        return marked.group(1)
    classes = re.findall(r"^class\s+(\w+)", source, re.M)
    return classes[0] if len(classes) == 1 else fallback


def load_source(source: Union[str, "os.PathLike[str]"]) -> Tuple[str, str]:
    """``(code, name hint)`` from actor source text or a path to a ``.py`` file."""
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and source.endswith(".py")
    ):
        path = Path(source)
        try:
            return path.read_text(encoding="utf-8"), path.stem
        except OSError as e:
            raise FileNotFoundError(f"actor source {path}: {e.strerror}") from e
    if not isinstance(source, str):
        raise TypeError(f"actor source must be Python source text or a path, got {type(source).__name__}")
    return source, "actor"


#: Observers of every executed receipt: ``fn(chain, receipt, actor, handler)``
#: (used by the pytest plugin's ``--timerhost-gas`` table).
_observers: List[Callable[["Chain", Receipt, str, str], None]] = []

class BlockBuilder:
    """Collects transactions for one block (see :meth:`Chain.block`).

    The methods mirror :class:`Chain`'s but only queue the transaction; the
    block is mined when the ``with`` block ends without an exception.
    Afterwards ``receipts`` holds the user transactions' receipts in order
    and ``mined`` the :class:`Block`.
    """

    def __init__(self, chain: "Chain", timestamp: Optional[int]) -> None:
        self._chain = chain
        self._timestamp = timestamp
        self._specs: List[Dict[str, Any]] = []
        self._nonces: Dict[str, int] = {}
        self.receipts: List[Receipt] = []
        self.mined: Optional[Block] = None

    def _queue(self, spec: Dict[str, Any]) -> int:
        sender = spec["sender"]
        nonce = self._nonces.get(sender)
        if nonce is None:
            nonce = self._chain.nonce(sender)
        if spec.get("nonce") is None:
            spec["nonce"] = nonce
        self._nonces[sender] = spec["nonce"] + 1
        self._specs.append(spec)
        return len(self._specs) - 1

    def call(self, actor: AddressLike, handler: str, *args: Any, sender: Optional[AddressLike] = None, value: int = 0, **opts: Any) -> int:
        """Queues a call; returns its index in ``receipts``."""
        return self._queue(self._chain._call_spec(actor, handler, args, sender, value, opts))

    def transfer(self, to: AddressLike, amount: int, *, sender: Optional[AddressLike] = None, **opts: Any) -> int:
        """Queues a transfer; returns its index in ``receipts``."""
        return self._queue(self._chain._transfer_spec(to, amount, sender, opts))

    def deploy(self, source: Union[str, "os.PathLike[str]"], *, sender: Optional[AddressLike] = None, args: Sequence[Any] = (), value: int = 0, **opts: Any) -> Actor:
        """Queues a deployment; returns the :class:`Actor` it will create
        (its address is known in advance: deployer and nonce)."""
        spec = self._chain._deploy_spec(source, sender, args, value, opts)
        self._queue(spec)
        return self._chain._expect_actor(spec)

    def _mine(self) -> None:
        block = self._chain._mine(self._specs, self._timestamp)
        self.mined = block
        self.receipts = [r for r in block.receipts if r.source == "user"]


class Governance:
    """Signed system instructions, by the dev governance account by default
    (a member of ``system_deployers``). Each mines one block and returns its
    receipt, raising :class:`~timerhost.Reverted` if the instruction failed."""

    def __init__(self, chain: "Chain") -> None:
        self._chain = chain

    def _run(self, op: str, signer: Optional[AddressLike], **fields: Any) -> Receipt:
        __tracebackhide__ = True
        signer = signer if signer is not None else self._chain.governance_account
        receipt = self._chain._submit(self._chain._spec(op, signer, {}, **fields))
        if not receipt.ok:
            raise Reverted(f"governance {op}", receipt)
        return receipt

    def _update_config(
        self,
        op: str,
        name: str,
        config: Dict[str, int],
        fields: Dict[str, int],
        signer: Optional[AddressLike],
        to_json: Callable[[Dict[str, int]], Dict[str, Any]],
    ) -> Receipt:
        """Merges ``fields`` into the ``config`` in force and sends it whole."""
        __tracebackhide__ = True
        unknown = sorted(set(fields) - set(config))
        if unknown:
            raise TypeError(f"unknown {name} field(s) {unknown}; fields are {sorted(config)}")
        config.update(fields)
        return self._run(op, signer, config=json.dumps(to_json(config)))

    def update_timer_config(self, *, signer: Optional[AddressLike] = None, **fields: Any) -> Receipt:
        """Changes ``TimerConfig`` fields (the rest keep their current
        values); the new config applies from the next block (CIP-5 §7).
        ``ordering`` is ``"fifo"``, ``"priority"`` or ``"market"``; the other fields are ints."""
        __tracebackhide__ = True
        config = self._chain.timer_config
        del config["status"]  # governed by pause/resume/shutdown, not a config field
        return self._update_config(
            "update_timer_config", "TimerConfig", config, fields, signer, _timer_config_to_json
        )

    def update_basefee_config(self, *, signer: Optional[AddressLike] = None, **fields: int) -> Receipt:
        """Changes ``BasefeeConfig`` fields (the rest keep their current values)."""
        __tracebackhide__ = True
        return self._update_config(
            "update_basefee_config", "BasefeeConfig", self._chain.basefee_config, fields, signer, _basefee_to_json
        )

    def cancel_timer(self, timer_id: Union[bytes, str], *, signer: Optional[AddressLike] = None) -> Receipt:
        """Cancels a timer (idempotent: an unknown id succeeds and changes nothing)."""
        __tracebackhide__ = True
        return self._run("cancel_timer", signer, timer_id=timer_id)

    def extend_timer(self, timer_id: Union[bytes, str], new_expires_at: int, *, signer: Optional[AddressLike] = None) -> Receipt:
        """Moves a timer's ``expires_at`` (clamped to ``height + max_ttl_blocks``,
        never below its firing height)."""
        __tracebackhide__ = True
        return self._run("extend_timer", signer, timer_id=timer_id, new_expires_at=new_expires_at)

    def pause_timers(self, *, signer: Optional[AddressLike] = None) -> Receipt:
        """``PauseTimers`` (AIP-125): nothing fires or is classified, due
        timers wait in order, scheduling is refused until :meth:`resume_timers`."""
        __tracebackhide__ = True
        return self._run("pause_timers", signer)

    def resume_timers(self, *, signer: Optional[AddressLike] = None) -> Receipt:
        """``ResumeTimers``: timers schedule and fire again (after a pause or a shutdown)."""
        __tracebackhide__ = True
        return self._run("resume_timers", signer)

    def shutdown_timers(self, *, signer: Optional[AddressLike] = None) -> Receipt:
        """``ShutdownTimers`` (AIP-125): every pending timer is removed over
        the following blocks under the GC budget, its deposit refunded
        (``TimerCancelled {reason: "shutdown"}``), then ``TimersShutdown
        {complete: true}``; scheduling stays refused until :meth:`resume_timers`."""
        __tracebackhide__ = True
        return self._run("shutdown_timers", signer)

    # -- proposals (#32) -------------------------------------------------------

    def propose(self, action: str, *, sender: Optional[AddressLike] = None, **fields: Any) -> int:
        """Submits a proposal for the validators (``SubmitProposal``); returns
        its id. ``sender`` (default: ``accounts[0]``) lends the governed
        deposit, returned when the proposal is executed or expires, burned if
        the validators reject it. ``action`` and its fields:

        - ``"UpdateTimerConfig"`` / ``"UpdateBasefeeConfig"``: config fields
          to change (the rest as in force), e.g. ``ordering="market"``;
        - ``"AddValidator"``: ``public_key`` (``0x`` + 64 hex), ``power``,
          ``operator`` (the account that signs its votes);
        - ``"RemoveValidator"``: ``public_key``;
        - ``"SetValidatorPower"``: ``public_key``, ``power``;
        - ``"SetSystemDeployers"``: ``system_deployers`` (a list of addresses);
        - ``"ScheduleUpgrade"``: ``name``, ``height``, ``info=""`` — from
          ``height`` on, nodes whose release knows the upgrade ``name`` apply
          its rules and the others stop before ``height``.
        """
        __tracebackhide__ = True
        body: Dict[str, Any] = {"kind": action}
        # The fields each set change takes: (required, optional with default).
        set_changes = {
            "AddValidator": (("public_key", "operator"), {"power": 1}),
            "RemoveValidator": (("public_key",), {}),
            "SetValidatorPower": (("public_key", "power"), {}),
            "SetSystemDeployers": (("system_deployers",), {}),
            "ScheduleUpgrade": (("name", "height"), {"info": ""}),
        }
        if action == "UpdateTimerConfig":
            config = self._chain.timer_config
            del config["status"]
            body["config"] = _timer_config_to_json(self._merged(config, fields, "TimerConfig"))
        elif action == "UpdateBasefeeConfig":
            body["config"] = _basefee_to_json(self._merged(self._chain.basefee_config, fields, "BasefeeConfig"))
        elif action in set_changes:
            required, optional = set_changes[action]
            takes = ", ".join(list(required) + [f"{k}={v!r}" for k, v in optional.items()])
            missing = [k for k in required if k not in fields]
            unknown = sorted(set(fields) - set(required) - set(optional))
            if missing or unknown:
                problems = []
                if missing:
                    problems.append(f"missing {', '.join(missing)}")
                if unknown:
                    problems.append(f"unknown {', '.join(unknown)}")
                raise TypeError(f"{action} takes {takes}: {'; '.join(problems)}")
            values = {**optional, **fields}
            if action == "SetSystemDeployers":
                body["system_deployers"] = [_address(a, "system deployer") for a in values["system_deployers"]]
            elif action == "ScheduleUpgrade":
                body.update(name=values["name"], height=values["height"], info=values["info"])
            else:
                body["public_key"] = values["public_key"]
                if "power" in values:
                    body["power"] = values["power"]
                if "operator" in values:
                    body["operator"] = _address(values["operator"], "operator")
        else:
            raise ValueError(
                f"unknown proposal action {action!r} (UpdateTimerConfig, UpdateBasefeeConfig, "
                "AddValidator, RemoveValidator, SetValidatorPower, SetSystemDeployers, ScheduleUpgrade)"
            )
        receipt = self._run("submit_proposal", sender, action=json.dumps(body))
        submitted = next(e for e in receipt.events if e.name == "ProposalSubmitted")
        return submitted["proposal_id"]

    @staticmethod
    def _merged(config: Dict[str, Any], fields: Dict[str, Any], name: str) -> Dict[str, Any]:
        unknown = sorted(set(fields) - set(config))
        if unknown:
            raise TypeError(f"unknown {name} field(s) {unknown}; fields are {sorted(config)}")
        config.update(fields)
        return config

    def vote(self, proposal_id: int, approve: bool = True, *, sender: AddressLike) -> Receipt:
        """A validator operator's vote (``CastVote``): only the operator of a
        validator in the current set may vote, weighted by that validator's
        power; a second vote replaces the first. More than 2/3 of the power
        voting yes passes the proposal; 1/3 voting no rejects it."""
        __tracebackhide__ = True
        return self._run("cast_vote", sender, proposal_id=proposal_id, approve=approve)

    def execute(self, proposal_id: int, *, sender: Optional[AddressLike] = None) -> Receipt:
        """Executes a passed proposal (``ExecuteProposal``; anyone may): a
        config change applies from the next block, a validator-set change
        ``VALIDATOR_SET_DELAY`` (2) blocks later."""
        __tracebackhide__ = True
        return self._run("execute_proposal", sender, proposal_id=proposal_id)

    def proposals(self) -> List[Dict[str, Any]]:
        """Every proposal, oldest first: ``{"proposal_id", "proposer",
        "action", "deposit", "submitted_at", "voting_ends_at", "status",
        "votes" ([operator, approve] pairs), "yes_power", "no_power",
        "total_power"}``; ``status`` is ``voting``, ``passed``, ``rejected``,
        ``executed`` or ``expired``."""
        rows = json.loads(self._chain._native.proposals_json())
        for r in rows:
            r["deposit"] = int(r["deposit"])
            r["votes"] = [(o, a) for o, a in r["votes"]]
        return rows


#: BasefeeConfig fields that are u128 (strings in the node's JSON).
_BASEFEE_U128 = (
    "cycle_basefee",
    "cell_basefee",
    "min_cycle_basefee",
    "min_cell_basefee",
    "max_cycle_basefee",
    "max_cell_basefee",
)


def _basefee_to_json(config: Dict[str, int]) -> Dict[str, Any]:
    return {k: (str(v) if k in _BASEFEE_U128 else v) for k, v in config.items()}


#: TimerConfig fields that are u128 (strings in the node's JSON).
_TIMER_U128 = ("deposit_per_byte",)
#: Trigger kinds ``chain.timers(kind=…)`` accepts (one definition: the node's).
_TRIGGER_KINDS = tuple(_native.TRIGGER_KINDS)


def _timer_config_to_json(config: Dict[str, int]) -> Dict[str, Any]:
    return {k: (str(v) if k in _TIMER_U128 else v) for k, v in config.items()}



class _Wallet:
    """Signing keys and transaction specs, shared by :class:`Chain` (which
    mines them in-process) and :class:`~timerhost.rpc.RpcChain` (which sends
    them to a node)."""

    accounts: List[Account]
    cycles_limit: int
    cells_limit: int
    _keys: Dict[str, str]
    _names: Dict[str, str]

    def add_account(self, private_key: str) -> Account:
        """Registers a signing key (hex) so it can be used as ``sender=``;
        the account starts unfunded: transfer to it first."""
        address = _native.key_address(private_key)
        self._keys[address] = private_key
        return Account(address, private_key)

    def _key(self, sender: Optional[AddressLike]) -> Tuple[str, str]:
        if sender is None:
            sender = self.accounts[0]
        if isinstance(sender, Account):
            self._keys.setdefault(sender.address, sender.private_key)
            return sender.address, sender.private_key
        address = _address(sender, "sender")
        try:
            return address, self._keys[address]
        except KeyError:
            raise ValueError(
                f"sender {address} has no known signing key: use one of chain.accounts or chain.add_account(key)"
            ) from None

    def _spec(self, op: str, sender: Optional[AddressLike], opts: Dict[str, Any], **fields: Any) -> Dict[str, Any]:
        allowed = {"cycles_limit", "cells_limit", "tip", "max_fee_per_cycle", "max_fee_per_cell", "nonce"}
        unknown = sorted(set(opts) - allowed)
        if unknown:
            raise TypeError(f"unknown transaction option(s) {unknown}; options are {sorted(allowed)}")
        address, key = self._key(sender)
        spec: Dict[str, Any] = {
            "op": op,
            "key": key,
            "sender": address,
            "cycles_limit": opts.get("cycles_limit", self.cycles_limit),
            "cells_limit": opts.get("cells_limit", self.cells_limit),
            "tip": opts.get("tip", 0),
            "max_fee_per_cycle": opts.get("max_fee_per_cycle"),
            "max_fee_per_cell": opts.get("max_fee_per_cell"),
            "nonce": opts.get("nonce"),
        }
        spec.update(fields)
        return spec

    def _call_spec(self, actor: AddressLike, handler: str, args: Sequence[Any], sender: Optional[AddressLike], value: int, opts: Dict[str, Any]) -> Dict[str, Any]:
        return self._spec("call", sender, opts, actor=_address(actor, "actor"), handler=handler, args=[_arg(a) for a in args], value=value)

    def _transfer_spec(self, to: AddressLike, amount: int, sender: Optional[AddressLike], opts: Dict[str, Any]) -> Dict[str, Any]:
        return self._spec("transfer", sender, opts, to=_address(to, "to"), amount=amount)

    def _deploy_spec(self, source: Union[str, "os.PathLike[str]"], sender: Optional[AddressLike], args: Sequence[Any], value: int, opts: Dict[str, Any]) -> Dict[str, Any]:
        code, hint = load_source(source)
        spec = self._spec("deploy", sender, opts, code=code, args=[_arg(a) for a in args], value=value)
        spec["name"] = _actor_name(code, hint)
        return spec

    def _expect_actor(self, spec: Dict[str, Any]) -> Actor:
        """The actor a deploy spec (nonce fixed) will create, remembered by
        name for labels and gas reports."""
        address = _native.actor_address(spec["sender"], spec["nonce"])
        self._names[address] = spec["name"]
        return Actor(address, spec["name"])


    # -- transactions (each subclass submits them its own way) -------------

    def _submit(self, spec: Dict[str, Any]) -> Receipt:
        """Executes one transaction spec and returns its receipt."""
        raise NotImplementedError

    def _next_nonce(self, sender: str) -> int:
        """The nonce the sender's next transaction takes."""
        raise NotImplementedError

    def deploy(
        self,
        source: Union[str, "os.PathLike[str]"],
        *,
        sender: Optional[AddressLike] = None,
        args: Sequence[Any] = (),
        value: int = 0,
        **opts: Any,
    ) -> Actor:
        """Deploys an actor (source text, or a path to a ``.py`` file) in a
        new block and runs its ``deploy(*args)``. Raises
        :class:`~timerhost.DeployError` with the reason (and traceback) if
        the deployment failed."""
        __tracebackhide__ = True
        spec = self._deploy_spec(source, sender, args, value, opts)
        if spec["nonce"] is None:
            spec["nonce"] = self._next_nonce(spec["sender"])
        expected = self._expect_actor(spec)
        receipt = self._submit(spec)
        if not receipt.ok or receipt.created_actor is None:
            raise DeployError(f"deploy {expected.name}", receipt)
        return Actor(receipt.created_actor, expected.name, receipt)

    def call(
        self,
        actor: AddressLike,
        handler: str,
        *args: Any,
        sender: Optional[AddressLike] = None,
        value: int = 0,
        **opts: Any,
    ) -> Receipt:
        """Calls ``actor.handler(*args)`` in a new block; returns the receipt
        (a failed call is a receipt with ``ok == False``, not an exception)."""
        __tracebackhide__ = True
        return self._submit(self._call_spec(actor, handler, args, sender, value, opts))

    def transfer(self, to: AddressLike, amount: int, *, sender: Optional[AddressLike] = None, **opts: Any) -> Receipt:
        """Transfers ``amount`` (smallest unit) in a new block."""
        __tracebackhide__ = True
        return self._submit(self._transfer_spec(to, amount, sender, opts))

    @property
    def cron(self) -> "Cron":
        """ARC-21's cron registry at ``0x…06``, usable from a wallet:
        schedule a call, top it up, cancel it, read jobs."""
        from .cron import Cron

        return Cron(self)


class Chain(_Wallet):
    """An isolated, in-process timerhost dev chain (chain id 1337).

    ``Chain()`` keeps everything in memory; ``Chain(path=DIR)`` persists it
    in sled (reopening ``DIR`` continues that chain). Ten dev accounts are
    funded at genesis (``chain.accounts``); ``accounts[0]`` is also the
    governance signer. ``interval`` is the default number of seconds between
    blocks (or ``interval_ms``, milliseconds); ``cycles_limit``/``cells_limit`` the default per-transaction
    limits (each call can override them, as can ``tip``,
    ``max_fee_per_cycle``, ``max_fee_per_cell`` and ``nonce``).
    ``Chain(validators=N)`` (N ≤ 10) starts from a genesis with N validators
    of power 1 operated by dev accounts 0..N−1, whose config updates go
    through proposals (:meth:`Governance.propose`); the emergency
    instructions stay with ``accounts[0]``.
    """

    def __init__(
        self,
        path: Optional[Union[str, "os.PathLike[str]"]] = None,
        *,
        interval: int = 1,
        interval_ms: Optional[int] = None,
        cycles_limit: int = DEFAULT_CYCLES_LIMIT,
        cells_limit: int = DEFAULT_CELLS_LIMIT,
        validators: int = 0,
    ) -> None:
        self._native = _native.NativeChain(os.fspath(path) if path is not None else None, validators)
        if interval_ms is None:
            self.interval = interval
        else:
            self.interval_ms = interval_ms
        self.cycles_limit = cycles_limit
        self.cells_limit = cells_limit
        self.accounts: List[Account] = [Account(a, k) for a, k in self._native.dev_keys()]
        self._keys: Dict[str, str] = {a.address: a.private_key for a in self.accounts}
        self._names: Dict[str, str] = {CRON_REGISTRY: "CronRegistry"}
        self._block_hooks: List[Callable[["Chain", "Block"], None]] = []
        deployers = self._native.system_deployers()
        self.governance_account: Account = next(a for a in self.accounts if a.address in deployers)

    @property
    def validators(self) -> List[Dict[str, Any]]:
        """The validator set of the next block (#32): ``{"address",
        "public_key", "power", "operator"}`` each, by address; ``[]`` on a
        chain without validators. :meth:`validators_at` reads another height."""
        return self.validators_at(None)

    def validators_at(self, height: Optional[int]) -> List[Dict[str, Any]]:
        """The validator set of consensus at ``height`` (changes executed in
        block h apply from h + 2)."""
        raw = self._native.validators_json(height)
        return [] if raw is None else json.loads(raw)

    @property
    def governance(self) -> Governance:
        """Governance system instructions (signed by ``governance_account`` by default)."""
        return Governance(self)

    def close(self) -> None:
        """Releases the store (for ``path=`` chains: the database lock). The
        chain cannot be used afterwards. Also done by ``with Chain(...) as c:``."""
        self._native.close()

    def __enter__(self) -> "Chain":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<timerhost.Chain height={self.height} state_root={self.state_root[:10]}…>"

    # -- mining ------------------------------------------------------------

    @property
    def interval(self) -> int:
        """Default seconds between blocks (see ``interval_ms``)."""
        return self._interval_ms // 1000 if self._interval_ms % 1000 == 0 else self._interval_ms / 1000

    @interval.setter
    def interval(self, seconds: int) -> None:
        if seconds <= 0:
            raise ValueError(f"interval must be positive, got {seconds}")
        self.interval_ms = int(seconds * 1000)

    @property
    def interval_ms(self) -> int:
        """Default milliseconds between blocks."""
        return self._interval_ms

    @interval_ms.setter
    def interval_ms(self, ms: int) -> None:
        if ms < 1:
            raise ValueError(f"interval_ms must be at least 1 ms, got {ms}")
        self._interval_ms = int(ms)

    def _next_timestamp(self, timestamp_ms: Optional[int]) -> int:
        return timestamp_ms if timestamp_ms is not None else self.timestamp + self._interval_ms

    def _mine(self, specs: List[Dict[str, Any]], timestamp_ms: Optional[int] = None) -> Block:
        __tracebackhide__ = True
        block = Block._from(self._native.mine_block(specs, self._next_timestamp(timestamp_ms)))
        labels = iter([self._label(spec) for spec in specs])
        for i, r in enumerate(block.receipts):
            if r.source == "user":
                block.receipts[i] = dataclasses.replace(r, label=next(labels))
        if _observers:
            self._notify(block, specs)
        for hook in self._block_hooks:
            hook(self, block)
        return block

    def on_block(self, hook: Callable[["Chain", "Block"], None]) -> None:
        """Calls ``hook(chain, block)`` after every block this chain mines
        (an invariant checked after every block, a log). Hooks run in the
        order they were added; one that raises stops the caller."""
        self._block_hooks.append(hook)


    def _label(self, spec: Dict[str, Any]) -> str:
        op = spec["op"]
        if op == "call":
            return f"call {self._names.get(spec['actor'], spec['actor'])}.{spec['handler']}"
        if op == "deploy":
            return f"deploy {spec['name']}"
        if op == "transfer":
            return f"transfer to {spec['to']}"
        return f"governance {op}"

    def _notify(self, block: Block, specs: List[Dict[str, Any]]) -> None:
        users = iter(specs)
        for r in block.receipts:
            if r.source == "user":
                spec = next(users)
                if spec["op"] == "call":
                    actor, handler = spec["actor"], spec["handler"]
                elif spec["op"] == "deploy":
                    # A failed deployment creates no actor: report it under its class name.
                    actor, handler = r.created_actor or spec["name"], "deploy"
                else:
                    continue
            elif r.source == "deferred":
                fired = next((e for e in r.events if e.name == "TimerFired"), None)
                actor = r.sender
                handler = fired.data["handler"] if fired else "handle_timer"
                handler = f"{handler} (timer)"
            else:
                continue
            name = self._names.get(actor, actor)
            for observer in _observers:
                observer(self, r, name, handler)

    def _next_nonce(self, sender: str) -> int:
        return self.nonce(sender)

    def _submit(self, spec: Dict[str, Any]) -> Receipt:
        __tracebackhide__ = True
        block = self._mine([spec])
        return next(r for r in block.receipts if r.source == "user")

    @contextmanager
    def block(self, *, timestamp: Optional[int] = None, timestamp_ms: Optional[int] = None) -> Iterator[BlockBuilder]:
        """Puts several transactions into ONE block::

            with chain.block() as b:
                b.call(actor, "bump", 1, sender=alice)
                b.transfer(bob, 10, sender=alice)
            b.receipts   # user receipts, in order

        If the ``with`` body raises, nothing is mined. ``timestamp`` (unix
        seconds) or ``timestamp_ms`` sets the block's timestamp.
        """
        if timestamp is not None and timestamp_ms is not None:
            raise ValueError("give timestamp (seconds) or timestamp_ms, not both")
        builder = BlockBuilder(self, timestamp * 1000 if timestamp is not None else timestamp_ms)
        yield builder
        builder._mine()

    def mine(self, n: int = 1, *, interval: Optional[int] = None, interval_ms: Optional[int] = None) -> List[Block]:
        """Mines ``n`` empty blocks, ``interval`` seconds (or ``interval_ms``
        milliseconds) apart (default: the chain's interval). Every end of
        block runs, so due timers fire."""
        __tracebackhide__ = True
        if n < 0:
            raise ValueError(f"cannot mine a negative number of blocks ({n})")
        if interval is not None and interval_ms is not None:
            raise ValueError("give interval (seconds) or interval_ms, not both")
        if interval is not None:
            if interval <= 0:
                raise ValueError(f"interval must be positive, got {interval}")
            step = int(interval * 1000)
        else:
            step = self._interval_ms if interval_ms is None else interval_ms
        if step < 1:
            raise ValueError(f"interval_ms must be at least 1 ms, got {step}")
        return [self._mine([], self.timestamp + step) for _ in range(n)]

    def mine_until(self, height: int) -> List[Block]:
        """Mines empty blocks until the head is at ``height``."""
        if height < self.height:
            raise ValueError(f"height {height} is below the head ({self.height})")
        return self.mine(height - self.height)

    def warp(self, timestamp: Optional[int] = None, *, timestamp_ms: Optional[int] = None) -> Block:
        """Mines one empty block whose timestamp is exactly ``timestamp``
        (unix seconds) or ``timestamp_ms`` (unix ms); it must be later than
        the head's."""
        __tracebackhide__ = True
        if (timestamp is None) == (timestamp_ms is None):
            raise ValueError("give exactly one of timestamp (seconds) or timestamp_ms")
        target = timestamp * 1000 if timestamp is not None else timestamp_ms
        if target <= self.timestamp:
            raise ValueError(
                f"cannot warp to {target} ms: block timestamps must increase (head is at {self.timestamp} ms)"
            )
        return self._mine([], target)

    # -- head --------------------------------------------------------------

    @property
    def head(self) -> Dict[str, Any]:
        """The head block's header fields."""
        return self._native.head()

    @property
    def height(self) -> int:
        return self._native.head()["height"]

    @property
    def timestamp(self) -> int:
        """The head block's timestamp, unix milliseconds."""
        return self._native.head()["timestamp"]

    @property
    def state_root(self) -> str:
        return self._native.head()["state_root"]

    def get_block(self, height: int) -> Optional[Block]:
        """A committed block with its receipts, ``None`` above the head."""
        d = self._native.block(height)
        return Block._from(d) if d is not None else None

    def receipt(self, tx_hash: Union[str, bytes]) -> Optional[Receipt]:
        """A receipt by transaction hash, ``None`` if unknown."""
        d = self._native.receipt(tx_hash)
        return Receipt._from(d) if d is not None else None

    # -- state -------------------------------------------------------------

    def balance(self, address: AddressLike) -> int:
        return self._native.account(_address(address))[0]

    def nonce(self, address: AddressLike) -> int:
        return self._native.account(_address(address))[1]

    def storage_keys(self, actor: AddressLike, prefix: str = "", *, limit: int = 1000) -> List[str]:
        """Up to ``limit`` keys of ``actor``'s storage starting with
        ``prefix``, in key order, read from committed state (no block)."""
        return self._native.storage_keys(_address(actor, "actor"), prefix, limit)

    def storage(self, actor: AddressLike, key: str) -> Any:
        """An actor's storage value (``None`` if absent)."""
        return self._native.storage(_address(actor, "actor"), key)

    def is_actor(self, address: AddressLike) -> bool:
        return self._native.is_actor(_address(address))

    def timers(
        self,
        actor: Optional[AddressLike] = None,
        height: Optional[int] = None,
        fee_payer: Optional[AddressLike] = None,
        kind: Optional[str] = None,
    ) -> List[Timer]:
        """Pending timers, filtered (all given filters apply), ordered by
        ``height`` (a height timer's firing height, the scheduling height of
        the other kinds), then scheduling order. ``height`` lists the height
        timers due at that height;
        ``kind`` keeps one trigger kind: ``"height"``, ``"time"`` or
        ``"state"``."""
        if kind is not None and kind not in _TRIGGER_KINDS:
            raise ValueError(f"unknown trigger kind {kind!r}: expected one of {', '.join(_TRIGGER_KINDS)}")
        rows = self._native.timers(
            _opt_address(actor, "actor"),
            height,
            _opt_address(fee_payer, "fee_payer"),
        )
        timers = [Timer(**t) for t in rows]
        return [t for t in timers if kind is None or t.trigger.get("kind") == kind]

    def timer(self, timer_id: Union[bytes, str]) -> Optional[Timer]:
        """A pending timer by id, ``None`` once it fired, expired or was cancelled."""
        t = self._native.timer(timer_id)
        return Timer(**t) if t is not None else None

    def events(
        self,
        name: Optional[str] = None,
        actor: Optional[AddressLike] = None,
        from_height: Optional[int] = None,
        to_height: Optional[int] = None,
    ) -> List[Event]:
        """Events of committed blocks, oldest first, filtered by name, emitter
        and height range (inclusive)."""
        rows = self._native.events(
            name, _opt_address(actor, "actor"), from_height, to_height
        )
        return [Event(**e) for e in rows]

    @property
    def timer_config(self) -> Dict[str, Any]:
        """The ``TimerConfig`` in force (CIP-5 §6.4), plus ``status``: the
        governance status of timers (see :attr:`timer_status`)."""
        raw = json.loads(self._native.timer_config_json())
        config: Dict[str, Any] = {k: (int(v) if k in _TIMER_U128 else v) for k, v in raw.items()}
        config["status"] = self.timer_status
        return config

    def quote_timer(
        self,
        height: Optional[int] = None,
        gas_limit: Optional[int] = None,
        *,
        timestamp_ms: Optional[int] = None,
        bid: Optional[int] = None,
        max_priority_fee_per_cycle: Optional[int] = None,
        max_fee_per_cycle: Optional[int] = None,
        retries: Optional[int] = None,
        book: bool = False,
    ) -> dict:
        """What a timer at ``height`` (default: the first height a transaction
        in the next block may schedule) — or, with ``timestamp_ms``, a time
        timer due then — with ``gas_limit`` cycles per fire (default:
        ``max_cycles_per_fire``) and these fee caps (``bid`` and
        ``max_priority_fee_per_cycle`` are one fee: give one) would cost,
        before scheduling it: what ``pvm_host.timer_quote`` answers in the
        next block and RPC ``th_quoteTimer`` answers now: ``{"height",
        "timestamp_ms", "gas_limit", "max_cost", "deposit", "lane_budget",
        "reserved", "queued", "fits", "lane_basefee", "max_fee_per_cycle",
        "max_priority_fee_per_cycle", "suggested_fees"}``. ``max_cost`` is
        the pre-charge of one fire with those caps; ``suggested_fees`` maps
        ``economy``, ``standard``, ``fast`` and ``urgent`` to caps. Raises
        ``ValueError`` for a height or time not in the future, both at once,
        a gas limit out of range, or (under ``"market"`` ordering) a fee cap
        below the lane basefee. With ``retries`` (#45) it also states the
        policy's worst case: ``max_attempts`` fires, ``worst_case_cost`` =
        every attempt at ``max_cost``. With ``book=True`` it answers "can I
        book it, and at what price" (#45, ``pvm_host.book_timer``):
        ``bookable``, ``booking_fee`` (``None`` when not bookable) and
        ``booking`` (``reason``, ``booked_cycles``, ``booked_fires``,
        ``share_cycles``, ``share_fires`` and ``free_heights``, the nearest
        heights with room)."""
        if bid is not None and max_priority_fee_per_cycle is not None:
            raise TypeError("bid= and max_priority_fee_per_cycle= name the same priority fee: give one")
        priority = bid if bid is not None else max_priority_fee_per_cycle
        quote = json.loads(
            self._native.quote_timer_json(height, gas_limit, timestamp_ms, priority, max_fee_per_cycle, retries, book)
        )
        booking = quote.get("booking")
        quote["bookable"] = booking["bookable"] if booking else None
        quote["booking_fee"] = booking["booking_fee"] if booking else None
        return quote

    def dead_letters(self, actor: AddressLike) -> List[Dict[str, Any]]:
        """``actor``'s dead-letter queue (#45): the timers whose retries all
        failed, as ``pvm_host.dead_letters()`` returns them to the actor —
        dicts with ``timer_id``, ``payload``, ``handler``, ``fee_payer``,
        ``gas_limit``, ``error``, ``traceback``, ``attempts``, ``dead_at``,
        ``expires_at``, ``deposit`` and ``trigger``. Only the actor itself
        retries or drops an entry (``pvm_host.retry_dead_letter`` /
        ``drop_dead_letter``)."""
        return list(self._native.dead_letters(_address(actor, "actor")))

    @property
    def lane_basefee(self) -> int:
        """The timer lane's basefee of the next block (#31, CIP-1 v3 Part
        III): under ``"market"`` ordering every fire burns it per handler
        cycle, and a schedule whose ``max_fee_per_cycle`` is below it is
        refused. It moves ±12.5 % a block toward ``lane_target_percent`` of
        the lane; under ``"fifo"`` and ``"priority"`` it stays at
        ``min_lane_basefee`` and costs nothing."""
        return self._native.lane_market()[0]

    def globalbox(self) -> List[Dict[str, Any]]:
        """The Globalbox (``TimerConfig.ordering`` ``"priority"`` or
        ``"market"``, #18, #31): the due fires queued by score, head first,
        each ``{"position", "timer_id", "actor", "kind", "due_height", "bid",
        "max_fee_per_cycle", "weight", "waiting", "score", "score_now"}``
        (``score`` when it was enqueued, ``score_now`` at the head: ``w_age ×
        age + w_bid × rank``, the rank being the bid — under market ordering
        the effective priority × the fairness ``weight``, in thousandths);
        then the entries ``waiting`` for the lane basefee to fall to their
        ``max_fee_per_cycle``, highest cap first. ``timer_id`` is ``bytes``,
        as in :class:`Timer`, events and every other call. Empty under FIFO."""
        entries = json.loads(self._native.globalbox_json())
        for e in entries:
            e["timer_id"] = bytes.fromhex(e["timer_id"].removeprefix("0x"))
            e["score"] = int(e["score"])
            e["score_now"] = int(e["score_now"])
        return entries

    @property
    def timer_status(self) -> str:
        """``"active"``, ``"paused"``, ``"shutting_down"`` or ``"shutdown"``
        (governance's :meth:`Governance.pause_timers` and friends)."""
        return self._native.timer_status()

    def revoke_timer_payments(self, *, sender: Optional[AddressLike] = None, **opts: Any) -> Receipt:
        """``RevokeTimerPayments`` signed by ``sender``: every timer scheduled
        so far that names ``sender`` as fee payer is removed when it comes
        due, without running and without charging ``sender``; its deposit is
        refunded (``TimerCancelledPaymentRevoked``). Later timers are unaffected."""
        __tracebackhide__ = True
        return self._submit(self._spec("revoke_timer_payments", sender, opts))

    @property
    def basefee_config(self) -> Dict[str, int]:
        """The ``BasefeeConfig`` in force for the next block."""
        raw = json.loads(self._native.basefee_config_json())
        return {k: (int(v) if k in _BASEFEE_U128 else v) for k, v in raw.items()}

    # -- snapshots ---------------------------------------------------------

    def snapshot(self) -> int:
        """Captures the whole chain; returns an id for :meth:`revert`."""
        return self._native.snapshot()

    def revert(self, snapshot: int) -> None:
        """Returns the chain exactly to ``snapshot`` (height, timestamp,
        balances, storage, pending timers, blocks and events; the state root
        is equal). That snapshot and later ones are used up, as in anvil."""
        if not self._native.revert(snapshot):
            raise ValueError(
                f"unknown or already used snapshot {snapshot!r}: a revert uses up that snapshot and every later one"
            )
