"""State proofs (#48) against ``timerhost dev``: an account, an actor's
storage value and an absence, each proven by ``th_getProof`` and checked by
``timerhost.verify_proof`` against the header ``th_getBlock`` returns; a
bent value, a proof of another key, another block's header and a bent proof
raise ``timerhost.ProofError``."""

import copy

import pytest

import timerhost
from timerhost.rpc import RpcChain

from test_examples import manual_dev_node

COUNTER = '''
import pvm_host

class Counter:
    def bump(self, n):
        self.storage["count"] = self.storage.get("count", 0) + n
        return self.storage["count"]

    def arm(self, n, blocks):
        for _ in range(n):
            pvm_host.schedule_timer_ex(pvm_host.block_height() + blocks, b"", gas_limit=50000)

    def handle_timer(self, payload):
        pass
'''


@pytest.fixture(scope="module")
def rpc(tmp_path_factory):
    with manual_dev_node(tmp_path_factory.mktemp("proofs") / "home") as url:
        yield RpcChain(url)


def _head_block(rpc, height):
    return rpc.rpc("th_getBlock", height)


def test_values_and_absences_are_proven_against_the_header(rpc):
    alice = rpc.accounts[0]
    actor = rpc.deploy(COUNTER, sender=alice)
    rpc.call(actor, "bump", 7, sender=alice).raise_for_status()

    p = rpc.proof("account", address=alice)
    block = _head_block(rpc, p["height"])
    account = timerhost.verify_proof(block, p)
    assert account["balance"] == rpc.balance(alice)
    assert account["nonce"] == rpc.nonce(alice)

    s = rpc.proof("storage", actor=actor, key="count")
    assert timerhost.verify_proof(_head_block(rpc, s["height"]), s) == 7

    nobody = "0x" + "ab" * 20
    a = rpc.proof("account", address=nobody)
    assert a["value"] is None
    assert timerhost.verify_proof(_head_block(rpc, a["height"]), a) is None
    missing = rpc.proof("storage", actor=actor, key="nothing here")
    assert timerhost.verify_proof(_head_block(rpc, missing["height"]), missing) is None


def test_a_lying_answer_raises_proof_error(rpc):
    alice = rpc.accounts[1]
    p = rpc.proof("account", address=alice)
    block = _head_block(rpc, p["height"])

    bent_value = copy.deepcopy(p)
    v = bytearray.fromhex(p["value"][2:])
    v[0] ^= 1
    bent_value["value"] = "0x" + v.hex()
    with pytest.raises(timerhost.ProofError):
        timerhost.verify_proof(block, bent_value)

    other_key = copy.deepcopy(p)
    other_key["address"] = rpc.accounts[2].address
    with pytest.raises(timerhost.ProofError):
        timerhost.verify_proof(block, other_key)

    absent_claim = copy.deepcopy(p)
    absent_claim["value"] = None
    with pytest.raises(timerhost.ProofError):
        timerhost.verify_proof(block, absent_claim)

    bent_proof = copy.deepcopy(p)
    raw = bytearray.fromhex(p["proof"][2:])
    raw[-1] ^= 1
    bent_proof["proof"] = "0x" + raw.hex()
    with pytest.raises(timerhost.ProofError):
        timerhost.verify_proof(block, bent_proof)

    rpc.mine(1)
    newer = _head_block(rpc, rpc.height)
    with pytest.raises(timerhost.ProofError, match="the proof is of block"):
        timerhost.verify_proof(newer, p)
    older_root = dict(block, height=newer["height"])
    older_root["state_root"] = newer["state_root"]
    moved = dict(p, height=newer["height"])
    with pytest.raises(timerhost.ProofError):
        timerhost.verify_proof(older_root, moved)


def test_a_pending_timer_is_proven_through_its_bucket(rpc):
    alice = rpc.accounts[3]
    actor = rpc.deploy(COUNTER, sender=alice, value=10**18)
    rpc.call(actor, "arm", 5, 50, sender=alice).raise_for_status()
    ids = [t.timer_id for t in rpc.timers(actor=actor)]
    assert len(ids) == 5
    timer_id = "0x" + ids[2].hex()
    p = rpc.proof("timer", timer_id=timer_id)
    assert p["bucket_timers"] == 5
    block = _head_block(rpc, p["height"])
    proven = timerhost.verify_proof(block, p)
    tid = proven["timer_id"]
    assert (tid if isinstance(tid, str) else "0x" + bytes(tid).hex()) == timer_id
    # Another timer's id, a bent proof, another block: refused.
    with pytest.raises(timerhost.ProofError, match="not"):
        timerhost.verify_proof(block, dict(p, timer_id="0x" + ids[3].hex()))
    raw = bytearray.fromhex(p["proof"][2:])
    raw[len(raw) // 3] ^= 1
    with pytest.raises(timerhost.ProofError):
        timerhost.verify_proof(block, dict(p, proof="0x" + raw.hex()))
    rpc.mine(1)
    newer = _head_block(rpc, rpc.height)
    with pytest.raises(timerhost.ProofError):
        timerhost.verify_proof(dict(newer, height=p["height"]), p)
    # A timer that is not pending has no proof: its absence cannot be proven.
    with pytest.raises(Exception, match="absence cannot be proven"):
        rpc.rpc("th_getProof", {"kind": "timer", "timer_id": "0x" + "00" * 32})


def test_recent_heights_are_proven_as_they_were(rpc):
    """``height`` names any of the node's last ``[storage] proof_blocks``
    blocks (128): the value then, checked against that block's header."""
    alice = rpc.accounts[4]
    actor = rpc.deploy(COUNTER, sender=alice, value=10**18)
    counts = {}
    total = 0
    for n in (1, 2, 3):
        rpc.call(actor, "bump", n, sender=alice).raise_for_status()
        total += n
        counts[rpc.height] = total
    for height, count in counts.items():
        s = rpc.proof("storage", actor=actor, key="count", height=height)
        assert s["height"] == height
        block = _head_block(rpc, height)
        assert s["state_root"] == block["state_root"]
        assert timerhost.verify_proof(block, s) == count
        # The same answer does not check against the head's header.
        if height != rpc.height:
            with pytest.raises(timerhost.ProofError):
                timerhost.verify_proof(dict(_head_block(rpc, rpc.height), height=height), s)
    # The account too, as it was before the last call paid its fee.
    first = min(counts)
    a = rpc.proof("account", address=alice, height=first)
    assert timerhost.verify_proof(_head_block(rpc, first), a)["nonce"] < rpc.nonce(alice)

    # A timer pending then, fired since: proven at the height it was pending.
    rpc.call(actor, "arm", 1, 2, sender=alice).raise_for_status()
    pending_at = rpc.height
    (timer,) = rpc.timers(actor=actor)
    timer_id = "0x" + timer.timer_id.hex()
    rpc.mine(3)
    with pytest.raises(Exception, match="no timer"):
        rpc.rpc("th_getProof", {"kind": "timer", "timer_id": timer_id})
    p = rpc.rpc("th_getProof", {"kind": "timer", "timer_id": timer_id, "height": pending_at})
    assert p["height"] == pending_at
    proven = timerhost.verify_proof(_head_block(rpc, pending_at), p)["timer_id"]
    assert bytes(proven) == timer.timer_id

    # Beyond the head, or older than the window: refused, naming what it proves.
    with pytest.raises(Exception, match="beyond"):
        rpc.rpc("th_getProof", {"kind": "account", "address": alice.address, "height": rpc.height + 5})
    rpc.mine(130)
    with pytest.raises(Exception, match="last 128 blocks"):
        rpc.proof("storage", actor=actor, key="count", height=first)
    oldest = rpc.height - 128
    assert timerhost.verify_proof(
        _head_block(rpc, oldest), rpc.proof("storage", actor=actor, key="count", height=oldest)
    ) == 6


def test_a_dev_chain_has_no_commit_certificates(rpc):
    with pytest.raises(Exception, match="validator network"):
        rpc.rpc("th_getCommit", 1)
