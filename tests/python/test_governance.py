"""Governance by the validators (#32) from Python: ``Chain(validators=N)``
builds a genesis with N validators operated by dev accounts 0..N−1 whose
config updates go through proposals; ``chain.governance.propose / vote /
execute / proposals`` drive them. (Every rule is also tested block by block
in ``host/chain/tests/governance.rs``.)"""

import pytest

from timerhost import Chain, Reverted, TransactionRejected


@pytest.fixture
def net():
    with Chain(validators=4) as chain:
        yield chain


def voters(chain, n):
    """The operators of the first ``n`` validators (dev accounts 0..n−1)."""
    return chain.accounts[:n]


def status(chain, pid):
    return next(p for p in chain.governance.proposals() if p["proposal_id"] == pid)["status"]


def test_a_genesis_of_n_validators_operated_by_dev_accounts(net):
    validators = net.validators
    assert len(validators) == 4
    assert {v["operator"] for v in validators} == {a.address for a in net.accounts[:4]}
    assert all(v["power"] == 1 and v["public_key"].startswith("0x") for v in validators)
    assert Chain().validators == [], "the plain dev chain has none"


def test_quorum_just_below_two_thirds_does_not_pass(net):
    pid = net.governance.propose("SetSystemDeployers", system_deployers=[net.accounts[5].address], sender=net.accounts[5])
    for a in voters(net, 2):
        net.governance.vote(pid, sender=a)
    assert status(net, pid) == "voting", "2 of 4 is not more than 2/3"
    with pytest.raises(Reverted, match="needs more than 2/3"):
        net.governance.execute(pid)


def test_quorum_just_above_two_thirds_passes_and_anyone_executes(net):
    pid = net.governance.propose("SetSystemDeployers", system_deployers=[net.accounts[5].address])
    for a in voters(net, 3):
        net.governance.vote(pid, sender=a)
    assert status(net, pid) == "passed"
    receipt = net.governance.execute(pid, sender=net.accounts[7])
    assert any(e.name == "ProposalExecuted" for e in receipt.events)
    assert status(net, pid) == "executed"


def test_votes_are_weighted_by_power(net):
    # Governance gives validator 0 a power of 7 (of 10): it then decides alone.
    first = net.validators[0]
    pid = net.governance.propose("SetValidatorPower", public_key=first["public_key"], power=7)
    for a in voters(net, 3):
        net.governance.vote(pid, sender=a)
    net.governance.execute(pid)
    net.mine(2)
    assert sum(v["power"] for v in net.validators) == 10
    pid = net.governance.propose("SetSystemDeployers", system_deployers=[net.accounts[0].address])
    receipt = net.governance.vote(pid, sender=first["operator"])
    (passed,) = [e for e in receipt.events if e.name == "ProposalPassed"]
    assert (passed["yes_power"], passed["total_power"]) == (7, 10)


def test_a_vote_by_a_non_operator_is_refused(net):
    pid = net.governance.propose("SetSystemDeployers", system_deployers=[])
    with pytest.raises(Reverted, match="only validator operators vote"):
        net.governance.vote(pid, sender=net.accounts[6])


def test_a_second_vote_replaces_the_first(net):
    pid = net.governance.propose("SetSystemDeployers", system_deployers=[])

    def tally():
        (p,) = [p for p in net.governance.proposals() if p["proposal_id"] == pid]
        return p["yes_power"], p["no_power"], len(p["votes"])

    net.governance.vote(pid, sender=net.accounts[0])
    net.governance.vote(pid, True, sender=net.accounts[0])
    assert tally() == (1, 0, 1), "not doubled"
    net.governance.vote(pid, False, sender=net.accounts[0])
    assert tally() == (0, 1, 1), "replaced"


def test_an_expired_proposal_cannot_be_executed_and_returns_its_deposit(net):
    proposer = net.accounts[5]
    pid = net.governance.propose("SetSystemDeployers", system_deployers=[], sender=proposer)
    (p,) = [p for p in net.governance.proposals() if p["proposal_id"] == pid]
    before = net.balance(proposer)
    net.mine_until(p["voting_ends_at"] + 1)
    assert status(net, pid) == "expired"
    assert net.balance(proposer) == before + p["deposit"]
    assert any(e.name == "ProposalExpired" for e in net.events(name="ProposalExpired"))
    with pytest.raises(Reverted, match="is expired"):
        net.governance.execute(pid)


def test_an_executed_proposal_cannot_be_executed_again(net):
    pid = net.governance.propose("SetSystemDeployers", system_deployers=[net.accounts[0].address])
    for a in voters(net, 3):
        net.governance.vote(pid, sender=a)
    net.governance.execute(pid)
    with pytest.raises(Reverted, match="is executed"):
        net.governance.execute(pid)


def test_a_config_proposal_applies_from_the_next_block(net):
    pid = net.governance.propose("UpdateTimerConfig", ordering="market", max_ttl_blocks=4321)
    for a in voters(net, 3):
        net.governance.vote(pid, sender=a)
    before = net.timer_config["max_ttl_blocks"]
    receipt = net.governance.execute(pid)
    (executed,) = [e for e in receipt.events if e.name == "ProposalExecuted"]
    assert executed["effective_height"] == net.height + 1
    assert before != 4321
    assert net.timer_config["max_ttl_blocks"] == 4321 and net.timer_config["ordering"] == "market"


def test_the_emergency_path_stays_direct_but_config_updates_need_a_proposal(net):
    net.governance.pause_timers()
    assert net.timer_status == "paused"
    net.governance.resume_timers()
    with pytest.raises(Reverted, match="go through proposals"):
        net.governance.update_timer_config(max_ttl_blocks=10)


def test_validators_change_two_blocks_after_execution(net):
    key = net.validators[3]["public_key"]
    pid = net.governance.propose("RemoveValidator", public_key=key)
    for a in voters(net, 3):
        net.governance.vote(pid, sender=a)
    receipt = net.governance.execute(pid)
    (executed,) = [e for e in receipt.events if e.name == "ProposalExecuted"]
    at = executed["effective_height"]
    assert at == net.height + 2
    assert len(net.validators_at(at - 1)) == 4 and len(net.validators_at(at)) == 3
    assert key not in {v["public_key"] for v in net.validators_at(at)}


def test_a_malformed_proposal_names_what_is_wrong(net):
    with pytest.raises(ValueError, match="unknown proposal action"):
        net.governance.propose("MakeMeRich")
    with pytest.raises(TypeError, match="unknown TimerConfig field"):
        net.governance.propose("UpdateTimerConfig", nope=1)


def test_a_proposal_with_missing_or_unknown_fields_names_the_actions_fields(net):
    """#50: ``propose("SetValidatorPower", address=…)`` raised a bare
    ``KeyError: 'public_key'``; the error now names what the action takes."""
    with pytest.raises(TypeError, match=r"SetValidatorPower takes public_key, power: missing public_key, power; unknown address"):
        net.governance.propose("SetValidatorPower", address=net.accounts[1].address)
    with pytest.raises(TypeError, match=r"AddValidator takes public_key, operator, power=1: missing operator"):
        net.governance.propose("AddValidator", public_key=net.validators[0]["public_key"])
    with pytest.raises(TypeError, match=r"unknown TimerConfig field\(s\) \['max_cycle'\]"):
        net.governance.propose("UpdateTimerConfig", max_cycle=1)
    with pytest.raises(ValueError, match="unknown proposal action 'Nope'"):
        net.governance.propose("Nope")


def test_a_validator_key_of_small_order_is_refused_by_the_chain(net):
    """#50 defect 7 through the package: the identity point as a key."""
    identity = "0x01" + "00" * 31
    with pytest.raises(ValueError, match="small order"):
        net.governance.propose("AddValidator", public_key=identity, operator=net.accounts[6].address)


def test_a_scheduled_upgrade_applies_its_rule_from_its_height(net):
    """``ScheduleUpgrade`` (#44): the in-process chain knows
    ``zero-value-transfer-guard``, so from its height a transfer of 0 fails."""
    at = net.height + 12
    pid = net.governance.propose("ScheduleUpgrade", name="zero-value-transfer-guard", height=at, info="v2")
    for a in voters(net, 3):
        net.governance.vote(pid, sender=a)
    executed = net.governance.execute(pid)
    done = next(e for e in executed.events if e.name == "ProposalExecuted")
    assert done["effective_height"] == at
    assert done["action"]["name"] == "zero-value-transfer-guard"
    net.mine_until(at - 2)
    before = net.transfer(net.accounts[9].address, 0, sender=net.accounts[8])
    assert before.height < at and before.status == "success"
    net.mine_until(at)
    after = net.transfer(net.accounts[9].address, 0, sender=net.accounts[8])
    assert after.status == "failed", after
    assert "refused by upgrade zero-value-transfer-guard" in str(after.error), after


def test_an_upgrade_must_leave_time_and_be_well_named(net):
    with pytest.raises(TransactionRejected, match="lowercase"):
        net.governance.propose("ScheduleUpgrade", name="Bad Name", height=net.height + 50)
    with pytest.raises(TypeError, match="ScheduleUpgrade takes name, height"):
        net.governance.propose("ScheduleUpgrade", name="x")
    pid = net.governance.propose("ScheduleUpgrade", name="soon", height=net.height + 3)
    for a in voters(net, 3):
        net.governance.vote(pid, sender=a)
    net.mine_until(net.height + 3)
    with pytest.raises(Reverted, match="too soon"):
        net.governance.execute(pid)
