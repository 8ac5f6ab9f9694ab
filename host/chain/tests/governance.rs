//! Governance by the validators (#32), block by block on the mock runtime:
//! each rule of proposals — quorum, weighting by power, who may vote, vote
//! replacement, expiry, re-execution, when an executed change applies — and
//! the emergency instructions that stay direct.

mod common;

use std::sync::Arc;

use timerhost_chain::testing::{dev_builders, MockRuntime, TxBuilder};
use timerhost_chain::{Chain, NoHooks};
use timerhost_state::MemoryBackend;
use timerhost_types::{
    dev_validator_genesis, dev_validator_public_key, Address, Event, Genesis, ProposalAction,
    ProposalStatus, Receipt, SystemInstruction, TimerConfig, Value, PROPOSAL_DEPOSIT_ESCROW,
    VALIDATOR_SET_DELAY,
};

const T: u64 = 1_767_225_600_000;
const PROPOSER: Address = Address([0xee; 20]);

struct Gov {
    chain: Chain<MemoryBackend>,
    b: Vec<TxBuilder>,
}

/// Four validators operated by dev accounts 0–3 with `powers`.
fn gov(powers: [u64; 4]) -> Gov {
    let mut genesis: Genesis = dev_validator_genesis(4);
    for (v, p) in genesis.validators.iter_mut().zip(powers) {
        v.power = p;
    }
    genesis.governance.voting_period_blocks = 10;
    let chain = Chain::open(
        MemoryBackend::new(),
        genesis,
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    Gov {
        chain,
        b: dev_builders(),
    }
}

impl Gov {
    fn height(&self) -> u64 {
        self.chain.head().unwrap().height
    }

    fn block(&self, txs: Vec<timerhost_types::SignedTransaction>) -> Vec<Receipt> {
        let height = self.height() + 1;
        let p = self
            .chain
            .produce_block(&txs, T + height * 1_000, PROPOSER)
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        common::assert_invariants(&self.chain.store().state(), &format!("block {height}"));
        p.executed.receipts
    }

    fn send(&mut self, who: usize, instruction: SystemInstruction) -> Receipt {
        let tx = self.b[who].system(instruction);
        self.block(vec![tx]).remove(0)
    }

    /// How many of `who`'s `instruction` the next block refused outright
    /// (0 or 1): refused before any fee, unlike a failed receipt.
    fn refused(&mut self, who: usize, instruction: SystemInstruction) -> usize {
        let tx = self.b[who].system(instruction);
        let height = self.height() + 1;
        self.chain
            .produce_block(&[tx], T + height * 1_000, PROPOSER)
            .unwrap()
            .rejected
            .len()
    }

    /// Proposal `action` by dev account `who`; its id.
    fn propose(&mut self, who: usize, action: ProposalAction) -> u64 {
        let r = self.send(who, SystemInstruction::SubmitProposal(action));
        assert!(r.is_success(), "{:?}", r.error);
        let e = event(&r, "ProposalSubmitted");
        e.data.get("proposal_id").unwrap().as_u128().unwrap() as u64
    }

    fn vote(&mut self, who: usize, id: u64, approve: bool) -> Receipt {
        self.send(
            who,
            SystemInstruction::CastVote {
                proposal_id: id,
                approve,
            },
        )
    }

    fn execute(&mut self, who: usize, id: u64) -> Receipt {
        self.send(who, SystemInstruction::ExecuteProposal { proposal_id: id })
    }

    fn status(&self, id: u64) -> ProposalStatus {
        self.chain.proposals(id, 1).unwrap()[0].status
    }

    fn balance(&self, a: &Address) -> u128 {
        self.chain.account(a).unwrap().balance
    }
}

fn event<'r>(r: &'r Receipt, name: &str) -> &'r Event {
    r.events
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", r.events))
}

fn deployers(list: &[Address]) -> ProposalAction {
    ProposalAction::SetSystemDeployers(list.to_vec())
}

#[test]
fn quorum_just_below_two_thirds_does_not_pass() {
    // Powers 2, 1, 1, 2 (total 6): 4 of 6 is exactly 2/3.
    let mut g = gov([2, 1, 1, 2]);
    let id = g.propose(5, deployers(&[Address([5; 20])]));
    assert!(g.vote(0, id, true).is_success());
    assert!(g.vote(1, id, true).is_success());
    assert!(g.vote(2, id, true).is_success());
    assert_eq!(
        g.status(id),
        ProposalStatus::Voting,
        "4 of 6: not more than 2/3"
    );
    let r = g.execute(5, id);
    assert!(r.error.unwrap().message.contains("needs more than 2/3"));
}

#[test]
fn quorum_just_above_two_thirds_passes() {
    // Powers 3, 1, 1, 2 (total 7): 5 of 7 is more than 2/3.
    let mut g = gov([3, 1, 1, 2]);
    let id = g.propose(5, deployers(&[Address([5; 20])]));
    g.vote(0, id, true);
    let r = g.vote(1, id, true);
    assert!(
        r.events.iter().all(|e| e.name != "ProposalPassed"),
        "4 of 7"
    );
    let r = g.vote(2, id, true);
    let passed = event(&r, "ProposalPassed");
    assert_eq!(passed.data.get("yes_power"), Some(&Value::int(5u64)));
    assert_eq!(g.status(id), ProposalStatus::Passed);
}

#[test]
fn votes_are_weighted_by_power() {
    // One operator with 7 of 10 decides alone.
    let mut g = gov([7, 1, 1, 1]);
    let id = g.propose(5, deployers(&[Address([5; 20])]));
    let r = g.vote(0, id, true);
    event(&r, "ProposalPassed");
    // Three of the small ones together (3 of 10) cannot.
    let id = g.propose(5, deployers(&[Address([6; 20])]));
    for who in 1..=3 {
        g.vote(who, id, true);
    }
    assert_eq!(g.status(id), ProposalStatus::Voting);
}

#[test]
fn a_vote_by_a_non_operator_is_refused() {
    let mut g = gov([1, 1, 1, 1]);
    let id = g.propose(5, deployers(&[]));
    let r = g.vote(5, id, true);
    let e = r.error.expect("refused").message;
    assert!(e.contains("only validator operators vote"), "{e}");
    assert!(g.chain.proposals(id, 1).unwrap()[0].votes.is_empty());
}

#[test]
fn a_second_vote_replaces_the_first_not_doubles_it() {
    let mut g = gov([1, 1, 1, 1]);
    let id = g.propose(5, deployers(&[]));
    g.vote(0, id, true);
    let r = g.vote(0, id, true);
    assert_eq!(
        event(&r, "VoteCast").data.get("yes_power"),
        Some(&Value::int(1u64))
    );
    let r = g.vote(0, id, false);
    let cast = event(&r, "VoteCast");
    assert_eq!(cast.data.get("yes_power"), Some(&Value::int(0u64)));
    assert_eq!(cast.data.get("no_power"), Some(&Value::int(1u64)));
    assert_eq!(g.chain.proposals(id, 1).unwrap()[0].votes.len(), 1);
}

#[test]
fn an_expired_proposal_cannot_be_executed_and_its_deposit_comes_back() {
    let mut g = gov([1, 1, 1, 1]);
    let proposer = g.b[5].address();
    let before = g.balance(&proposer);
    let id = g.propose(5, deployers(&[]));
    let deposit = g.chain.proposals(id, 1).unwrap()[0].deposit;
    assert!(deposit > 0);
    assert_eq!(g.balance(&PROPOSAL_DEPOSIT_ESCROW), deposit);
    let ends = g.chain.proposals(id, 1).unwrap()[0].voting_ends_at;
    let mut expired = Vec::new();
    while g.height() <= ends {
        expired.extend(g.block(vec![]).into_iter().flat_map(|r| r.events));
    }
    assert!(
        expired.iter().any(|e| e.name == "ProposalExpired"),
        "{expired:?}"
    );
    assert_eq!(g.status(id), ProposalStatus::Expired);
    assert_eq!(g.balance(&PROPOSAL_DEPOSIT_ESCROW), 0);
    let spent = before - g.balance(&proposer);
    assert!(spent < deposit, "only the transaction fee is spent");
    let r = g.vote(0, id, true);
    assert!(r.error.unwrap().message.contains("is expired"));
    let r = g.execute(5, id);
    assert!(r.error.unwrap().message.contains("is expired"));
}

#[test]
fn an_executed_proposal_cannot_be_executed_again() {
    let mut g = gov([1, 1, 1, 1]);
    let id = g.propose(5, deployers(&[Address([5; 20])]));
    for who in 0..3 {
        g.vote(who, id, true);
    }
    let r = g.execute(6, id);
    assert!(
        r.is_success(),
        "anyone executes a passed proposal: {:?}",
        r.error
    );
    event(&r, "ProposalExecuted");
    let r = g.execute(6, id);
    assert!(r.error.unwrap().message.contains("is executed"));
}

#[test]
fn a_config_proposal_applies_from_the_next_block() {
    let mut g = gov([1, 1, 1, 1]);
    let cfg = TimerConfig {
        max_ttl_blocks: 777,
        ..TimerConfig::default()
    };
    let id = g.propose(5, ProposalAction::UpdateTimerConfig(cfg.clone()));
    for who in 0..3 {
        g.vote(who, id, true);
    }
    let r = g.execute(5, id);
    assert_eq!(
        event(&r, "ProposalExecuted").data.get("effective_height"),
        Some(&Value::int(g.height() + 1))
    );
    let state = g.chain.store().state();
    assert_eq!(
        timerhost_chain::accounts::timer_config(&state).unwrap(),
        cfg,
        "in state for the next block"
    );
}

#[test]
fn the_emergency_path_stays_direct_and_config_updates_need_a_proposal() {
    let mut g = gov([1, 1, 1, 1]);
    // Dev account 0 is a system deployer: it still pauses and resumes…
    assert!(g.send(0, SystemInstruction::PauseTimers).is_success());
    assert!(g.send(0, SystemInstruction::ResumeTimers).is_success());
    // …but cannot update a config directly on a proposals chain.
    let r = g.send(
        0,
        SystemInstruction::UpdateTimerConfig(TimerConfig::default()),
    );
    let e = r.error.expect("refused").message;
    assert!(e.contains("go through proposals"), "{e}");
    // A stranger cannot pause timers.
    assert_eq!(
        g.refused(6, SystemInstruction::PauseTimers),
        1,
        "not a system deployer"
    );
}

#[test]
fn a_rejected_proposal_burns_its_deposit() {
    let mut g = gov([1, 1, 1, 1]);
    let id = g.propose(5, deployers(&[]));
    let deposit = g.chain.proposals(id, 1).unwrap()[0].deposit;
    let burned_before = timerhost_chain::accounts::supply(&g.chain.store().state())
        .unwrap()
        .burned;
    let r = g.vote(0, id, false);
    assert!(
        r.events.iter().all(|e| e.name != "ProposalRejected"),
        "1 of 4 no"
    );
    let r = g.vote(1, id, false);
    event(&r, "ProposalRejected");
    assert_eq!(g.status(id), ProposalStatus::Rejected);
    let burned = timerhost_chain::accounts::supply(&g.chain.store().state())
        .unwrap()
        .burned;
    assert!(burned - burned_before >= deposit);
    assert_eq!(g.balance(&PROPOSAL_DEPOSIT_ESCROW), 0);
}

#[test]
fn a_validator_set_change_takes_effect_a_fixed_number_of_blocks_later() {
    let mut g = gov([1, 1, 1, 1]);
    let new_key = dev_validator_public_key(4);
    let operator = g.b[4].address();
    let id = g.propose(
        5,
        ProposalAction::AddValidator {
            public_key: new_key,
            power: 2,
            operator,
        },
    );
    for who in 0..3 {
        g.vote(who, id, true);
    }
    let r = g.execute(5, id);
    let executed_at = g.height();
    let effective = executed_at + VALIDATOR_SET_DELAY;
    assert_eq!(
        event(&r, "ProposalExecuted").data.get("effective_height"),
        Some(&Value::int(effective))
    );
    let before = g.chain.validators_at(effective - 1).unwrap().unwrap();
    let after = g.chain.validators_at(effective).unwrap().unwrap();
    assert_eq!((before.validators.len(), after.validators.len()), (4, 5));
    assert_eq!(after.total_power(), 6);
    // The new operator votes from the activation height on, not before.
    let id = g.propose(5, deployers(&[]));
    if g.height() + 1 < effective {
        let r = g.vote(4, id, true);
        assert!(r.error.is_some());
    }
    while g.height() + 1 < effective {
        g.block(vec![]);
    }
    assert!(g.vote(4, id, true).is_success());
    // Removing one: the set shrinks from its own activation height.
    let first = after.validators[0].public_key;
    let id = g.propose(5, ProposalAction::RemoveValidator { public_key: first });
    for who in 0..5 {
        if g.status(id) != ProposalStatus::Passed {
            g.vote(who, id, true);
        }
    }
    assert!(g.execute(5, id).is_success());
    let later = g
        .chain
        .validators_at(g.height() + VALIDATOR_SET_DELAY)
        .unwrap()
        .unwrap();
    assert_eq!(later.validators.len(), 4);
    assert!(later.find(&first).is_none());
}

#[test]
fn set_system_deployers_replaces_who_may_send_emergency_instructions() {
    let mut g = gov([1, 1, 1, 1]);
    let new = g.b[7].address();
    let id = g.propose(5, deployers(&[new]));
    for who in 0..3 {
        g.vote(who, id, true);
    }
    assert!(g.execute(5, id).is_success());
    assert!(g.send(7, SystemInstruction::PauseTimers).is_success());
    assert_eq!(
        g.refused(0, SystemInstruction::ResumeTimers),
        1,
        "the old deployer is no longer one"
    );
}

#[test]
fn a_malformed_action_is_refused_before_any_deposit_and_a_stale_one_fails_at_execution() {
    let mut g = gov([1, 1, 1, 1]);
    let bad = ProposalAction::SetValidatorPower {
        public_key: dev_validator_public_key(0),
        power: 0,
    };
    assert_eq!(
        g.refused(5, SystemInstruction::SubmitProposal(bad)),
        1,
        "malformed: refused before any deposit"
    );
    g.b[5].nonce -= 1;
    // Removing a validator that is not in the set fails at execution.
    let id = g.propose(
        5,
        ProposalAction::RemoveValidator {
            public_key: dev_validator_public_key(9),
        },
    );
    for who in 0..3 {
        g.vote(who, id, true);
    }
    let r = g.execute(5, id);
    assert!(r
        .error
        .unwrap()
        .message
        .contains("no validator has public key"));
}

#[test]
fn a_proposer_who_cannot_lend_the_deposit_is_refused() {
    let mut genesis = dev_validator_genesis(4);
    genesis.governance.proposal_deposit = 2 * timerhost_types::genesis::DEV_ACCOUNT_BALANCE;
    let chain = Chain::open(
        MemoryBackend::new(),
        genesis,
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut b = dev_builders();
    let tx = b[5].system(SystemInstruction::SubmitProposal(deployers(&[])));
    let p = chain.produce_block(&[tx], T + 1_000, PROPOSER).unwrap();
    let e = p.executed.receipts[0]
        .error
        .clone()
        .expect("refused")
        .message;
    assert!(e.contains("the proposal deposit is"), "{e}");
    assert!(chain.proposals(1, 10).unwrap().is_empty());
}

#[test]
fn a_chain_without_validators_keeps_direct_governance() {
    let chain = Chain::open(
        MemoryBackend::new(),
        Genesis::dev(),
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    assert!(chain.validators_at(1).unwrap().is_none());
    let mut b = dev_builders();
    let tx = b[0].update_timer_config(TimerConfig::default());
    let p = chain.produce_block(&[tx], T + 1_000, PROPOSER).unwrap();
    assert!(p.executed.receipts[0].is_success());
}
