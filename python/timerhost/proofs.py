"""Checking what a node says against a block header (#48).

::

    block = rpc.block(h)                       # or the raw th_getBlock(h) dict
    proof = rpc.proof("account", address=alice)  # th_getProof's answer
    account = timerhost.verify_proof(block, proof)

:func:`verify_proof` checks the proof against the header's ``state_root``
(never against the root the node put in its answer) and for the state key of
what was asked, and returns the proven value — an account as a dict, an
actor's storage value as Python, ``None`` for a proven absence, a pending
timer (``kind="timer"``) as its record's dict — or raises
:class:`ProofError`. Whether the header itself is the chain's is the
caller's to establish: on a validator network, by the block's commit
certificate or by its hash from a source you trust.
"""

from __future__ import annotations

from typing import Any, Mapping

from timerhost import _native
from timerhost._native import ProofError

__all__ = ["ProofError", "verify_proof"]


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _bytes(hex_text: Any, what: str) -> bytes | None:
    if hex_text is None:
        return None
    if not isinstance(hex_text, str) or not hex_text.startswith("0x"):
        raise ProofError(f"the proof's {what} is not 0x-prefixed hex: {hex_text!r}")
    try:
        return bytes.fromhex(hex_text[2:])
    except ValueError as e:
        raise ProofError(f"the proof's {what} is not hex: {e}") from None


def verify_proof(header: Any, proof: Mapping[str, Any]) -> Any:
    """The value ``proof`` (a ``th_getProof`` answer) proves at ``header``
    (a block as ``th_getBlock`` returns it, or its header fields); raises
    :class:`ProofError` if the proof does not hold."""
    height = _field(header, "height")
    root = _field(header, "state_root")
    if height is None or root is None:
        raise ProofError("the header needs its height and state_root")
    if proof.get("height") != height:
        raise ProofError(
            f"the proof is of block {proof.get('height')}, the header of block {height}"
        )
    kind = proof.get("kind")
    if kind == "timer":
        timer_id = proof.get("timer_id")
        if not isinstance(timer_id, str):
            raise ProofError("a timer proof names its timer_id")
        return _native.verify_timer_proof(str(root), timer_id, _bytes(proof.get("proof"), "proof") or b"")
    if kind == "account":
        subject, storage_key = proof.get("address"), None
    elif kind == "storage":
        subject, storage_key = proof.get("actor"), proof.get("storage_key")
        if not isinstance(storage_key, str):
            raise ProofError("a storage proof names its key (storage_key)")
    else:
        raise ProofError(f"unknown proof kind {kind!r}")
    if not isinstance(subject, str):
        raise ProofError("the proof does not name what it is of (address or actor)")
    return _native.verify_state_proof(
        str(root),
        kind,
        subject,
        storage_key,
        _bytes(proof.get("value"), "value"),
        _bytes(proof.get("proof"), "proof") or b"",
    )
