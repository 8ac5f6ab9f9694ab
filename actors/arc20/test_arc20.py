"""The ARC-20 token (`actors/arc20/arc20.py`): ERC-20 semantics, clear
failures, and a caller that is always the immediate caller."""

import pytest

SUPPLY = 1_000_000 * 10**6


@pytest.fixture
def token(deploy):
    return deploy("arc20/arc20.py", "Test Dollar", "TUSD", 6, SUPPLY)


def balances(chain, token, *accounts):
    return [chain.call(token, "balanceOf", a.address).return_value for a in accounts]


def test_metadata_and_the_initial_supply(chain, accounts, token):
    alice = accounts[0]  # the deployer
    assert [chain.call(token, m).return_value for m in ("name", "symbol", "decimals", "totalSupply")] == [
        "Test Dollar",
        "TUSD",
        6,
        SUPPLY,
    ]
    assert balances(chain, token, alice) == [SUPPLY]
    (minted,) = chain.events(name="Transfer", actor=token)
    assert dict(minted.data) == {"from": "0x" + "0" * 40, "to": alice.address, "value": SUPPLY}


def test_transfer_moves_tokens_and_emits_transfer(chain, accounts, token):
    alice, bob = accounts[0], accounts[1]
    r = chain.call(token, "transfer", bob.address, 250, sender=alice).raise_for_status()
    assert r.return_value is True
    assert dict(r.event("Transfer").data) == {"from": alice.address, "to": bob.address, "value": 250}
    assert balances(chain, token, alice, bob) == [SUPPLY - 250, 250]
    assert chain.call(token, "totalSupply").return_value == SUPPLY


def test_a_transfer_beyond_the_balance_fails_and_changes_nothing(chain, accounts, token):
    bob, carol = accounts[1], accounts[2]
    r = chain.call(token, "transfer", carol.address, 1, sender=bob)
    assert not r.ok and f"balance of {bob.address} is 0, below 1" in r.error.message
    assert balances(chain, token, bob, carol) == [0, 0]
    bad = chain.call(token, "transfer", "0x" + "0" * 40, 1)
    assert not bad.ok and "zero address" in bad.error.message
    assert "not a 0x-prefixed 20-byte address" in chain.call(token, "transfer", "bob", 1).error.message
    assert "non-negative int" in chain.call(token, "transfer", carol.address, -5).error.message


def test_approve_then_transfer_from_spends_and_decreases_the_allowance(chain, accounts, token):
    alice, bob, carol = accounts[0], accounts[1], accounts[2]
    r = chain.call(token, "approve", bob.address, 100, sender=alice).raise_for_status()
    assert dict(r.event("Approval").data) == {"owner": alice.address, "spender": bob.address, "value": 100}
    assert chain.call(token, "allowance", alice.address, bob.address).return_value == 100
    chain.call(token, "transferFrom", alice.address, carol.address, 60, sender=bob).raise_for_status()
    assert chain.call(token, "allowance", alice.address, bob.address).return_value == 40
    assert balances(chain, token, alice, bob, carol) == [SUPPLY - 60, 0, 60]
    over = chain.call(token, "transferFrom", alice.address, carol.address, 41, sender=bob)
    assert not over.ok and "is 40, below 41" in over.error.message


def test_a_stranger_cannot_move_anyone_elses_tokens(chain, accounts, token):
    alice, mallory = accounts[0], accounts[5]
    r = chain.call(token, "transferFrom", alice.address, mallory.address, 1, sender=mallory)
    assert not r.ok and "allowance of" in r.error.message
    # Approving yourself over someone else's tokens approves only your own.
    chain.call(token, "approve", mallory.address, 10**9, sender=mallory).raise_for_status()
    assert chain.call(token, "allowance", alice.address, mallory.address).return_value == 0
    assert balances(chain, token, alice, mallory) == [SUPPLY, 0]


SPENDER = '''
import pvm_host

class Spender:
    def pull(self, token, owner, to, value):
        return pvm_host.call(token, "transferFrom", owner, to, value)

    def pay(self, token, to, value):
        return pvm_host.call(token, "transfer", to, value)
'''


def test_a_contract_spends_as_itself_through_pvm_host_call(chain, accounts, token):
    """The caller is the immediate caller: an actor that calls the token moves
    its own tokens, and spends an allowance granted to it — not its user's."""
    spender = chain.deploy(SPENDER)
    alice, bob = accounts[0], accounts[1]
    assert not chain.call(spender, "pull", token.address, alice.address, bob.address, 5, sender=alice).ok
    chain.call(token, "approve", spender.address, 5, sender=alice).raise_for_status()
    chain.call(spender, "pull", token.address, alice.address, spender.address, 5, sender=bob).raise_for_status()
    assert chain.call(token, "balanceOf", spender.address).return_value == 5
    chain.call(spender, "pay", token.address, bob.address, 5, sender=bob).raise_for_status()
    assert balances(chain, token, bob) == [5]
