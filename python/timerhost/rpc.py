"""``RpcChain``: the same calls as :class:`~timerhost.Chain`, against a
running node (``timerhost dev``) over JSON-RPC instead of in-process.

::

    from timerhost.rpc import RpcChain
    chain = RpcChain("http://127.0.0.1:8645")
    token = chain.deploy("actors/arc20/arc20.py", args=("Dollar", "USD", 0, 1000))
    chain.call(token, "transfer", bob, 5, sender=alice).raise_for_status()
    chain.warp(chain.timestamp // 1000 + 3600)  # dev nodes only

It signs with the dev accounts (a dev chain) or keys added with
``add_account``, sends with ``th_sendRawTransaction`` and waits for the
receipt. On a node started with ``--manual`` it mines the block itself
(``dev_mine``). ``warp`` and ``mine`` need a dev node. Storage is read
exactly (``th_getStorage`` raw); event data and return values arrive as
JSON, where ints beyond 2^53 are decimal strings.

The examples in ``examples/`` take ``--rpc URL`` and run on this.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional

from timerhost import _native
from timerhost.chain import _Wallet
from timerhost.records import (
    CRON_REGISTRY,
    DEFAULT_CELLS_LIMIT,
    DEFAULT_CYCLES_LIMIT,
    Account,
    AddressLike,
    Block,
    Event,
    Receipt,
    Timer,
    _address,
    _opt_address,
)
from timerhost.errors import ChainError, TransactionRejected

_U128_FIELDS = ("fee_paid", "burned", "tip")


def _given(**fields: Any) -> Dict[str, Any]:
    """A filter object of the fields that were given (not ``None``)."""
    return {k: v for k, v in fields.items() if v is not None}


def _receipt(d: Dict[str, Any]) -> Receipt:
    """A receipt as ``th_getReceipt`` returns it, in the in-process shape."""
    source = d["source"]
    return Receipt._from(
        {
            **{k: d[k] for k in ("tx_hash", "sender", "status", "error", "cycles_used", "cells_used", "return_value", "created_actor", "height")},
            **{k: int(d[k]) for k in _U128_FIELDS},
            "source": source["type"],
            "events": [
                {"name": e["name"], "data": e["data"], "actor": e["emitter"], "height": d["height"], "tx_hash": d["tx_hash"]}
                for e in d["events"]
            ],
            "origin_tx_hash": source.get("origin_tx_hash"),
            "fee_payer": source.get("fee_payer"),
            "deliver_seq": source.get("deliver_seq"),
            "fire_seq": source.get("fire_seq"),
            "deliver_id": source.get("deliver_id"),
        }
    )


class RpcChain(_Wallet):
    """A node's chain seen through JSON-RPC (see the module docs)."""

    def __init__(
        self,
        url: str,
        *,
        cycles_limit: int = DEFAULT_CYCLES_LIMIT,
        cells_limit: int = DEFAULT_CELLS_LIMIT,
        timeout: float = 60.0,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.cycles_limit = cycles_limit
        self.cells_limit = cells_limit
        status = self.rpc("th_status")
        self.chain_id: int = status["chain_id"]
        self._manual = status.get("producer", {}).get("mode") == "manual"
        self.accounts: List[Account] = (
            [Account(a, k) for a, k in _native.dev_account_keys()] if status.get("dev") else []
        )
        self._keys: Dict[str, str] = {a.address: a.private_key for a in self.accounts}
        self._names: Dict[str, str] = {CRON_REGISTRY: "CronRegistry"}

    def __repr__(self) -> str:
        return f"<timerhost.RpcChain {self.url} height={self.height}>"

    # -- JSON-RPC ------------------------------------------------------------

    def rpc(self, method: str, *params: Any) -> Any:
        """Calls ``method`` with ``params``; raises ``ChainError`` with the
        node's message if it answers with an error."""
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer = json.loads(response.read())
        except urllib.error.URLError as e:
            raise ChainError(f"cannot reach the node at {self.url}: {e.reason}") from None
        if "error" in answer:
            raise ChainError(f"{method}: {answer['error'].get('message', answer['error'])}")
        return answer["result"]

    # -- transactions ----------------------------------------------------------

    def _submit(self, spec: Dict[str, Any]) -> Receipt:
        """Signs and sends one transaction spec, mines it on a manual node,
        and waits for its receipt."""
        if spec["nonce"] is None:
            spec["nonce"] = self._next_nonce(spec["sender"])
        basefee = self.rpc("th_getBasefeeConfig")
        raw = _native.sign_transaction(spec, self.chain_id, spec["nonce"], int(basefee["cycle_basefee"]), int(basefee["cell_basefee"]))
        try:
            tx_hash = self.rpc("th_sendRawTransaction", raw)
        except ChainError as e:
            raise TransactionRejected(str(e), 0, str(e)) from None
        if self._manual:
            self.rpc("dev_mine", 1)
        deadline = time.monotonic() + self.timeout
        while True:
            r = self.rpc("th_getReceipt", tx_hash)
            if r is not None and not r.get("pending"):
                return _receipt(r)
            if time.monotonic() > deadline:
                raise ChainError(f"transaction {tx_hash} was not included within {self.timeout} s")
            time.sleep(0.05)

    def _next_nonce(self, sender: str) -> int:
        return self.rpc("th_getNonce", sender, "pending")

    # -- blocks and time (dev nodes) ---------------------------------------------

    def mine(self, n: int = 1) -> List[Block]:
        """Mines ``n`` blocks now (``dev_mine``)."""
        mined = self.rpc("dev_mine", n)
        return [self.get_block(h) for h in range(mined["from"], mined["to"] + 1)]  # type: ignore[misc]

    def warp(self, timestamp: Optional[int] = None, *, timestamp_ms: Optional[int] = None) -> Block:
        """Mines one block at ``timestamp`` (unix seconds) or ``timestamp_ms``."""
        if (timestamp is None) == (timestamp_ms is None):
            raise TypeError("warp() takes timestamp (s) or timestamp_ms")
        ms = timestamp_ms if timestamp_ms is not None else timestamp * 1000  # type: ignore[operator]
        self.rpc("dev_setNextBlockTimestamp", ms)
        (block,) = self.mine(1)
        return block

    @property
    def height(self) -> int:
        return self.rpc("th_status")["height"]

    @property
    def timestamp(self) -> int:
        """The head block's timestamp, unix milliseconds."""
        return self.rpc("th_status")["timestamp"]

    def get_block(self, height: int) -> Optional[Block]:
        """A committed block's header. Its ``receipts`` are empty: the node
        serves receipts by transaction hash (``receipt``) and timer fires as
        events (``events``), not per block."""
        b = self.rpc("th_getBlock", height)
        if b is None:
            return None
        return Block(
            height=b["height"],
            timestamp=b["timestamp"],
            hash=b["hash"],
            parent_hash=b["parent_hash"],
            state_root=b["state_root"],
            proposer=b["proposer"],
            tx_count=len(b["txs"]),
            receipts=[],
            lane_basefee=b["lane_basefee"],
        )

    def receipt(self, tx_hash: str) -> Optional[Receipt]:
        r = self.rpc("th_getReceipt", tx_hash)
        return None if r is None or r.get("pending") else _receipt(r)

    # -- state ---------------------------------------------------------------------

    def balance(self, address: AddressLike) -> int:
        return int(self.rpc("th_getBalance", _address(address)))

    def nonce(self, address: AddressLike) -> int:
        return self.rpc("th_getNonce", _address(address))

    def storage(self, actor: AddressLike, key: str) -> Any:
        raw = self.rpc("th_getStorage", _address(actor, "actor"), key, "raw")
        return None if raw is None else _native.decode_value(bytes.fromhex(raw[2:]))

    def proof(
        self,
        kind: str,
        *,
        address: Optional[AddressLike] = None,
        actor: Optional[AddressLike] = None,
        key: Optional[str] = None,
        timer_id: Optional[str] = None,
        height: Optional[int] = None,
    ) -> Dict[str, Any]:
        """``th_getProof``: an account's (``kind="account"``, ``address=``),
        an actor's storage value's (``kind="storage"``, ``actor=``,
        ``key=``) or a pending timer's (``kind="timer"``, ``timer_id=``)
        proof at the head, or at ``height`` (any of the node's last
        ``[storage] proof_blocks`` blocks); check it with
        :func:`timerhost.verify_proof` against the block it names."""
        request: Dict[str, Any] = {"kind": kind}
        if height is not None:
            request["height"] = height
        if address is not None:
            request["address"] = _address(address)
        if actor is not None:
            request["actor"] = _address(actor, "actor")
        if key is not None:
            request["key"] = key
        if timer_id is not None:
            request["timer_id"] = timer_id
        return self.rpc("th_getProof", request)

    def storage_keys(self, actor: AddressLike, prefix: str = "", *, limit: int = 1000) -> List[str]:
        return self.rpc("th_getStorageKeys", _address(actor, "actor"), prefix, limit)

    def timers(self, actor: Optional[AddressLike] = None, fee_payer: Optional[AddressLike] = None) -> List[Timer]:
        """Pending timers of an actor or a fee payer."""
        rows = self.rpc("th_getTimers", _given(actor=_opt_address(actor, "actor"), fee_payer=_opt_address(fee_payer, "fee_payer")))
        return [
            Timer(
                timer_id=bytes.fromhex(t["timer_id"][2:]),
                actor_address=t["actor"],
                height=t["height"],
                payload=bytes.fromhex(t["payload"][2:]),
                handler=t["handler"],
                fee_payer=t["fee_payer"],
                gas_limit_per_fire=t["gas_limit_per_fire"],
                expires_at=t["expires_at"],
                seq=t["seq"],
                deposit=int(t["deposit"]),
                bid=t["bid"],
                max_fee_per_cycle=t["max_fee_per_cycle"],
                escrow_key=t.get("escrow_key"),
                trigger=t["trigger"],
                booked=t.get("booked", False),
                retry=t.get("retry"),
            )
            for t in rows
        ]

    def dead_letters(self, actor: AddressLike) -> List[Dict[str, Any]]:
        """``actor``'s dead-letter queue (``th_getDeadLetters``), in the
        in-process chain's shape (ids and payloads as bytes, amounts as
        ints)."""
        rows = self.rpc("th_getDeadLetters", {"actor": _address(actor, "actor")})
        return [
            {
                "timer_id": bytes.fromhex(d["timer_id"][2:]),
                "payload": bytes.fromhex(d["payload"][2:]),
                "handler": d["handler"],
                "fee_payer": d["fee_payer"],
                "gas_limit": d["timer"]["gas_limit_per_fire"],
                "error": d["error"],
                "traceback": d["traceback"],
                "attempts": d["attempts"],
                "dead_at": d["dead_at"],
                "expires_at": d["expires_at"],
                "deposit": int(d["deposit"]),
                "trigger": d["timer"]["trigger"],
            }
            for d in rows
        ]

    def events(self, name: Optional[str] = None, actor: Optional[AddressLike] = None, from_height: Optional[int] = None, to_height: Optional[int] = None) -> List[Event]:
        rows = self.rpc("th_getEvents", _given(name=name, actor=_opt_address(actor, "actor"), **{"from": from_height, "to": to_height}))
        return [Event(name=e["name"], data=e["data"], height=e["height"], actor=e["emitter"], tx_hash=e["tx_hash"]) for e in rows]

    # -- subscriptions (#48) ----------------------------------------------------

    def _ws_url(self) -> str:
        url = self.url if "://" in self.url else "http://" + self.url
        return "ws" + url[len("http"):] if url.startswith("http") else url

    def _subscribe_request(self, topic: str, options: Any, from_height: Optional[int]) -> str:
        params: List[Any] = [topic]
        if topic == "timer":
            params.append(options)
        else:
            opts = dict(options or {})
            if from_height is not None:
                opts["from_height"] = from_height
            if opts:
                params.append(opts)
        return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "th_subscribe", "params": params})

    def subscribe(self, topic: str, options: Any = None, *, from_height: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Yields the node's pushed notifications (``th_subscribe``):
        ``subscribe("newHeads")``, ``subscribe("events", {"name": "Rung"})``
        or ``subscribe("timer", "0x<id>")``. Each is a dict naming its
        ``height``, in block order. A dropped connection is resumed from the
        height after the last one seen, so nothing is missed or repeated; a
        timer's subscription ends with its ``ended`` notification. Needs
        the ``websockets`` package (``pip install timerhost[subscribe]``)."""
        try:
            from websockets.sync.client import connect
        except ImportError:  # pragma: no cover - depends on the environment
            raise ChainError("RpcChain.subscribe needs the websockets package: pip install websockets") from None
        next_height = from_height
        while True:
            try:
                with connect(self._ws_url()) as ws:
                    ws.send(self._subscribe_request(topic, options, next_height))
                    reply = json.loads(ws.recv(timeout=self.timeout))
                    if "error" in reply:
                        raise ChainError(f"th_subscribe: {reply['error'].get('message')}")
                    while True:
                        msg = json.loads(ws.recv())
                        if "error" in msg.get("params", {}):
                            # Dropped as too slow: resume where it said.
                            break
                        result = msg["params"]["result"]
                        next_height = result["height"] + 1
                        yield result
                        if result.get("ended"):
                            return
            except (OSError, EOFError) as e:  # the connection went away
                if topic == "timer":
                    raise ChainError(f"the timer subscription's connection closed: {e}") from None
                time.sleep(0.2)
            except Exception as e:
                if type(e).__name__.startswith("ConnectionClosed") and topic != "timer":
                    time.sleep(0.2)
                    continue
                raise

    async def asubscribe(self, topic: str, options: Any = None, *, from_height: Optional[int] = None) -> AsyncIterator[Dict[str, Any]]:
        """:meth:`subscribe` for asyncio: ``async for note in rpc.asubscribe(...)``."""
        try:
            from websockets.asyncio.client import connect
        except ImportError:  # pragma: no cover - depends on the environment
            raise ChainError("RpcChain.asubscribe needs the websockets package: pip install websockets") from None
        import asyncio

        next_height = from_height
        while True:
            try:
                async with connect(self._ws_url()) as ws:
                    await ws.send(self._subscribe_request(topic, options, next_height))
                    reply = json.loads(await asyncio.wait_for(ws.recv(), self.timeout))
                    if "error" in reply:
                        raise ChainError(f"th_subscribe: {reply['error'].get('message')}")
                    while True:
                        msg = json.loads(await ws.recv())
                        if "error" in msg.get("params", {}):
                            break
                        result = msg["params"]["result"]
                        next_height = result["height"] + 1
                        yield result
                        if result.get("ended"):
                            return
            except Exception as e:
                if type(e).__name__.startswith("ConnectionClosed") and topic != "timer":
                    await asyncio.sleep(0.2)
                    continue
                raise

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
        q = self.rpc(
            "th_quoteTimer",
            _given(
                height=height,
                gas_limit=gas_limit,
                timestamp_ms=timestamp_ms,
                bid=bid,
                max_priority_fee_per_cycle=max_priority_fee_per_cycle,
                max_fee_per_cycle=max_fee_per_cycle,
                retries=retries,
                book=book or None,
            ),
        )
        out = {k: (int(v) if k in ("max_cost", "deposit", "worst_case_cost") and v is not None else v) for k, v in q.items()}
        if out.get("booking_fee") is not None:
            out["booking_fee"] = int(out["booking_fee"])
        if out.get("booking") and out["booking"].get("booking_fee") is not None:
            out["booking"]["booking_fee"] = int(out["booking"]["booking_fee"])
        return out

    @property
    def lane_basefee(self) -> int:
        """The timer lane's basefee of the next block (``th_status``)."""
        return self.rpc("th_status")["timers"]["lane_basefee"]


__all__ = ["RpcChain"]
