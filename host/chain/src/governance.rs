//! Governance by the validators (#32): the validator set in state and its
//! history, and proposals — submitted by anyone with a deposit, voted by
//! the validators' operators weighted by power, executed by anyone once
//! more than 2/3 of the power said yes, expired at the end of their voting
//! period (docs/ARCHITECTURE.md, "Validators").
//!
//! Every step is O(validators) at most (a proposal's votes are one entry
//! per operator, ≤ `MAX_VALIDATORS`), and the end of a block expires at
//! most [`EXPIRIES_PER_BLOCK`] proposals, the rest in the next blocks.

use timerhost_state::accounts::{self as state_accounts, Debit};
use timerhost_state::{Overlay, StateRead, StateReadExt};
use timerhost_types::governance::{Tally, MAX_VALIDATORS};
use timerhost_types::keys;
use timerhost_types::{
    Address, Event, GovernanceConfig, GovernanceMode, Proposal, ProposalAction, ProposalStatus,
    ValidatorSetRecord, Value, GOVERNANCE_ADDRESS, PROPOSAL_DEPOSIT_ESCROW, VALIDATOR_SET_DELAY,
};

use crate::error::{ChainError, Result};

/// Most proposals one block's end expires, and most one block may submit
/// (#50: so expiry always keeps up); also the most closed records one
/// block prunes.
pub const EXPIRIES_PER_BLOCK: usize = 64;

/// The governance config (the genesis default when a chain predates it).
pub fn config(state: &(impl StateRead + ?Sized)) -> Result<GovernanceConfig> {
    Ok(state
        .get_decoded::<GovernanceConfig>(&keys::governance_config())?
        .unwrap_or_default())
}

/// The validator set of consensus at `height` (changes take effect
/// [`VALIDATOR_SET_DELAY`] blocks after the block that executes them), or
/// `None` on a chain without validators.
pub fn validators_at(
    state: &(impl StateRead + ?Sized),
    height: u64,
) -> Result<Option<ValidatorSetRecord>> {
    let end = keys::prefix_end(&keys::validator_sets()).expect("ends in '/'");
    let found = state.scan(&keys::validator_set_at(height), Some(&end), 1)?;
    found
        .first()
        .map(|(_, v)| {
            timerhost_types::decode::<ValidatorSetRecord>(v)
                .map_err(|e| ChainError::Internal(format!("validator set of block {height}: {e}")))
        })
        .transpose()
}

/// The newest set on record, scheduled or in force: what the next change
/// builds on.
fn latest_set(state: &(impl StateRead + ?Sized)) -> Result<Option<ValidatorSetRecord>> {
    validators_at(state, u64::MAX)
}

/// Every set change on record, newest first: `(from height, set)`.
pub fn set_history(
    state: &(impl StateRead + ?Sized),
    limit: usize,
) -> Result<Vec<(u64, ValidatorSetRecord)>> {
    let start = keys::validator_sets();
    let end = keys::prefix_end(&start).expect("ends in '/'");
    state
        .scan(&start, Some(&end), limit)?
        .into_iter()
        .map(|(k, v)| {
            let inverted: [u8; 8] = k[start.len()..]
                .try_into()
                .map_err(|_| ChainError::Internal("a validator set key is not 8 bytes".into()))?;
            let set = timerhost_types::decode::<ValidatorSetRecord>(&v)
                .map_err(|e| ChainError::Internal(format!("validator set: {e}")))?;
            Ok((!u64::from_be_bytes(inverted), set))
        })
        .collect()
}

/// Proposal `id`.
pub fn proposal(state: &(impl StateRead + ?Sized), id: u64) -> Result<Option<Proposal>> {
    Ok(state.get_decoded::<Proposal>(&keys::proposal(id))?)
}

/// Proposals from `from_id` on, oldest first, at most `limit`.
pub fn proposals(
    state: &(impl StateRead + ?Sized),
    from_id: u64,
    limit: usize,
) -> Result<Vec<Proposal>> {
    let end = keys::prefix_end(&keys::proposals()).expect("ends in '/'");
    state
        .scan(&keys::proposal(from_id), Some(&end), limit)?
        .into_iter()
        .map(|(_, v)| {
            timerhost_types::decode::<Proposal>(&v)
                .map_err(|e| ChainError::Internal(format!("proposal: {e}")))
        })
        .collect()
}

/// The block each kept closed proposal closed in (executed, expired or
/// rejected), by proposal id: a closed proposal's tally is the one it closed
/// with, against the set of that block (#48: `th_getProposals` counted it
/// against today's set, so a proposal that passed 3 of 4 read "4 yes of 5"
/// after a power change). The index holds the proposals closed within
/// [`timerhost_types::governance::PROPOSAL_RETENTION_BLOCKS`]; at most
/// `limit` of them, oldest first, are read.
pub fn closing_heights(
    state: &(impl StateRead + ?Sized),
    limit: usize,
) -> Result<std::collections::BTreeMap<u64, u64>> {
    let start = keys::proposals_closed();
    let end = keys::prefix_end(&start).expect("ends in '/'");
    let mut closed = std::collections::BTreeMap::new();
    for key in state.scan_keys(&start, Some(&end), limit)? {
        let rest = &key[start.len()..];
        let height = u64::from_be_bytes(rest[..8].try_into().expect("8 bytes of the key"));
        let id = u64::from_be_bytes(rest[8..16].try_into().expect("8 bytes of the key"));
        closed.insert(id, height);
    }
    Ok(closed)
}

/// What a governance instruction did: its events, or why it failed (the
/// transaction's failure, its writes reverted).
pub type Outcome = std::result::Result<Vec<Event>, String>;

/// What executing a proposal asks of the block: config updates apply from
/// the next block, like the direct instructions.
#[derive(Debug, Default)]
pub struct Applied {
    /// A new timer config.
    pub timer_config: Option<timerhost_types::TimerConfig>,
    /// A new basefee config.
    pub basefee_config: Option<timerhost_types::BasefeeConfig>,
    /// New system deployers.
    pub system_deployers: Option<Vec<Address>>,
}

fn event(name: &str, fields: Vec<(&str, Value)>) -> Event {
    Event {
        emitter: GOVERNANCE_ADDRESS,
        name: name.into(),
        data: Value::dict_from(fields.into_iter().map(|(k, v)| (Value::str(k), v)))
            .expect("str keys are hashable"),
    }
}

/// The action as events show it: `{"kind", …its fields}`.
pub fn action_value(action: &ProposalAction) -> Value {
    let key = |k: &[u8; 32]| Value::str(timerhost_types::Hash(*k).to_hex());
    let mut fields = vec![(Value::str("kind"), Value::str(action.name()))];
    match action {
        // Every field, as the direct updates' events show them.
        ProposalAction::UpdateTimerConfig(c) => fields.push((
            Value::str("config"),
            timerhost_timers::events::timer_config_updated(GOVERNANCE_ADDRESS, c).data,
        )),
        ProposalAction::UpdateBasefeeConfig(c) => {
            fields.push((Value::str("config"), basefee_config_value(c)))
        }
        ProposalAction::AddValidator {
            public_key,
            power,
            operator,
        } => fields.extend([
            (Value::str("public_key"), key(public_key)),
            (Value::str("power"), Value::int(*power)),
            (Value::str("operator"), Value::str(operator.to_hex())),
        ]),
        ProposalAction::RemoveValidator { public_key } => {
            fields.push((Value::str("public_key"), key(public_key)))
        }
        ProposalAction::SetValidatorPower { public_key, power } => fields.extend([
            (Value::str("public_key"), key(public_key)),
            (Value::str("power"), Value::int(*power)),
        ]),
        ProposalAction::SetSystemDeployers(list) => fields.push((
            Value::str("system_deployers"),
            Value::List(list.iter().map(|a| Value::str(a.to_hex())).collect()),
        )),
        ProposalAction::ScheduleUpgrade { name, height, info } => fields.extend([
            (Value::str("name"), Value::str(name.as_str())),
            (Value::str("height"), Value::int(*height)),
            (Value::str("info"), Value::str(info.as_str())),
        ]),
    }
    Value::dict_from(fields).expect("str keys are hashable")
}

/// Every field of a basefee config (`basefee_config.updated`'s data).
pub fn basefee_config_value(cfg: &timerhost_types::BasefeeConfig) -> Value {
    Value::dict_from([
        (Value::str("cycle_basefee"), Value::int(cfg.cycle_basefee)),
        (Value::str("cell_basefee"), Value::int(cfg.cell_basefee)),
        (
            Value::str("min_cycle_basefee"),
            Value::int(cfg.min_cycle_basefee),
        ),
        (
            Value::str("min_cell_basefee"),
            Value::int(cfg.min_cell_basefee),
        ),
        (
            Value::str("max_cycle_basefee"),
            Value::int(cfg.max_cycle_basefee),
        ),
        (
            Value::str("max_cell_basefee"),
            Value::int(cfg.max_cell_basefee),
        ),
        (
            Value::str("max_block_cycles"),
            Value::int(cfg.max_block_cycles),
        ),
        (
            Value::str("max_block_cells"),
            Value::int(cfg.max_block_cells),
        ),
    ])
    .expect("str keys are hashable")
}

fn tally_fields(t: &Tally) -> Vec<(&'static str, Value)> {
    vec![
        ("yes_power", Value::int(t.yes)),
        ("no_power", Value::int(t.no)),
        ("total_power", Value::int(t.total)),
    ]
}

/// Is this chain's config updated through proposals? A direct
/// `UpdateTimerConfig` / `UpdateBasefeeConfig` is then refused, naming the
/// path to take.
pub fn direct_config_refusal(state: &(impl StateRead + ?Sized)) -> Result<Option<String>> {
    Ok((config(state)?.mode == GovernanceMode::Proposals).then(|| {
        "config updates on this chain go through proposals voted by the validators: submit one (SubmitProposal, `timerhost gov propose`); system_deployers keep only the emergency instructions (cancel, extend, pause, resume, shutdown)".to_string()
    }))
}

/// `SubmitProposal {action}` by `proposer` in block `height`: checks the
/// action, takes the deposit.
pub fn submit(
    state: &mut Overlay<'_>,
    proposer: Address,
    action: ProposalAction,
    height: u64,
) -> Result<Outcome> {
    if let Err(why) = action.check() {
        return Ok(Err(format!("{}: {why}", action.name())));
    }
    let is_set_change = matches!(
        action,
        ProposalAction::AddValidator { .. }
            | ProposalAction::RemoveValidator { .. }
            | ProposalAction::SetValidatorPower { .. }
    );
    if is_set_change && latest_set(state)?.is_none() {
        return Ok(Err(
            "this chain has no validators (a single node produces its blocks): there is no set to change".into(),
        ));
    }
    let cfg = config(state)?;
    let voting_ends_at = height.saturating_add(cfg.voting_period_blocks);
    // Every proposal of this block ends at the same height: at most
    // EXPIRIES_PER_BLOCK of them, so the end of that block expires them all.
    let end_start = keys::proposal_end(voting_ends_at, 0);
    let end_end = keys::proposal_end(voting_ends_at, u64::MAX);
    if state
        .scan_keys(&end_start, Some(&end_end), EXPIRIES_PER_BLOCK)?
        .len()
        >= EXPIRIES_PER_BLOCK
    {
        return Ok(Err(format!(
            "this block already holds {EXPIRIES_PER_BLOCK} proposals, the most one block may submit; submit it in a later block"
        )));
    }
    if let Debit::Insufficient { available } = state_accounts::transfer(
        state,
        &proposer,
        &PROPOSAL_DEPOSIT_ESCROW,
        cfg.proposal_deposit,
    )? {
        return Ok(Err(format!(
            "the proposal deposit is {}, the proposer has {available}",
            cfg.proposal_deposit
        )));
    }
    let id =
        match state.get(&keys::next_proposal())? {
            Some(bytes) => u64::from_be_bytes(bytes.as_slice().try_into().map_err(|_| {
                ChainError::Internal("the next proposal number is not 8 bytes".into())
            })?),
            None => 1,
        };
    state.put(keys::next_proposal(), (id + 1).to_be_bytes().to_vec());
    let proposal = Proposal {
        id,
        proposer,
        deposit: cfg.proposal_deposit,
        submitted_at: height,
        voting_ends_at,
        votes: Vec::new(),
        status: ProposalStatus::Voting,
        action,
    };
    state.put(keys::proposal_end(proposal.voting_ends_at, id), Vec::new());
    let submitted = event(
        "ProposalSubmitted",
        vec![
            ("proposal_id", Value::int(id)),
            ("proposer", Value::str(proposer.to_hex())),
            ("action", action_value(&proposal.action)),
            ("deposit", Value::int(proposal.deposit)),
            ("voting_ends_at", Value::int(proposal.voting_ends_at)),
        ],
    );
    state.put_encoded(keys::proposal(id), &proposal);
    Ok(Ok(vec![submitted]))
}

/// An open proposal, or why it is not.
fn open_proposal(
    state: &Overlay<'_>,
    id: u64,
    height: u64,
) -> Result<std::result::Result<Proposal, String>> {
    let Some(p) = proposal(state, id)? else {
        return Ok(Err(format!("no proposal {id}")));
    };
    if !p.status.is_open() {
        return Ok(Err(format!("proposal {id} is {}", p.status.as_str())));
    }
    if height > p.voting_ends_at {
        return Ok(Err(format!(
            "proposal {id}'s voting period ended at block {}",
            p.voting_ends_at
        )));
    }
    Ok(Ok(p))
}

/// `CastVote {proposal_id, approve}` by `operator` in block `height`: only
/// an operator of a validator in the set of this height votes; a second
/// vote replaces the first. Crossing 2/3 yes passes the proposal; 1/3 no
/// rejects it (its deposit burned, returned in `burned`).
pub fn vote(
    state: &mut Overlay<'_>,
    operator: Address,
    id: u64,
    approve: bool,
    height: u64,
    burned: &mut u128,
) -> Result<Outcome> {
    let set = validators_at(state, height)?.unwrap_or_default();
    if set.operator_power(&operator) == 0 {
        return Ok(Err(format!(
            "{operator} operates no validator of the set at block {height}: only validator operators vote"
        )));
    }
    let mut p = match open_proposal(state, id, height)? {
        Ok(p) => p,
        Err(why) => return Ok(Err(why)),
    };
    p.vote(operator, approve);
    let tally = p.tally(&set);
    let mut fields = vec![
        ("proposal_id", Value::int(id)),
        ("operator", Value::str(operator.to_hex())),
        ("approve", Value::Bool(approve)),
    ];
    fields.extend(tally_fields(&tally));
    let mut events = vec![event("VoteCast", fields)];
    if p.status == ProposalStatus::Voting && tally.passes() {
        p.status = ProposalStatus::Passed;
        let mut fields = vec![("proposal_id", Value::int(id))];
        fields.extend(tally_fields(&tally));
        events.push(event("ProposalPassed", fields));
    } else if tally.rejects() {
        p.status = ProposalStatus::Rejected;
        take_deposit(state, &p)?;
        *burned += p.deposit;
        state.delete(keys::proposal_end(p.voting_ends_at, id));
        state.put(keys::proposal_closed(height, id), Vec::new());
        let mut fields = vec![
            ("proposal_id", Value::int(id)),
            ("burned", Value::int(p.deposit)),
        ];
        fields.extend(tally_fields(&tally));
        events.push(event("ProposalRejected", fields));
    }
    state.put_encoded(keys::proposal(id), &p);
    Ok(Ok(events))
}

/// Takes a closed proposal's deposit out of the escrow (to be burned).
fn take_deposit(state: &mut Overlay<'_>, p: &Proposal) -> Result<()> {
    match state_accounts::debit(state, &PROPOSAL_DEPOSIT_ESCROW, p.deposit)? {
        Debit::Done => Ok(()),
        Debit::Insufficient { available } => Err(ChainError::Internal(format!(
            "the proposal deposit escrow holds {available}, less than proposal {}'s deposit {}",
            p.id, p.deposit
        ))),
    }
}

/// Returns a closed proposal's deposit to its proposer.
fn return_deposit(state: &mut Overlay<'_>, p: &Proposal) -> Result<()> {
    match state_accounts::transfer(state, &PROPOSAL_DEPOSIT_ESCROW, &p.proposer, p.deposit)? {
        Debit::Done => Ok(()),
        Debit::Insufficient { available } => Err(ChainError::Internal(format!(
            "the proposal deposit escrow holds {available}, less than proposal {}'s deposit {}",
            p.id, p.deposit
        ))),
    }
}

/// `ExecuteProposal {proposal_id}` in block `height` (anyone may): the
/// proposal must still have more than 2/3 yes against the set of this
/// height. Config and deployer changes apply from the next block
/// (`applied`); a validator-set change from `height +
/// VALIDATOR_SET_DELAY`. Its deposit goes back to its proposer.
pub fn execute(
    state: &mut Overlay<'_>,
    id: u64,
    height: u64,
    applied: &mut Applied,
) -> Result<Outcome> {
    let mut p = match open_proposal(state, id, height)? {
        Ok(p) => p,
        Err(why) => return Ok(Err(why)),
    };
    let set = validators_at(state, height)?.unwrap_or_default();
    let tally = p.tally(&set);
    if !tally.passes() {
        return Ok(Err(format!(
            "proposal {id} has {} of {} power voting yes: it needs more than 2/3",
            tally.yes, tally.total
        )));
    }
    let mut effective = height + 1;
    match &p.action {
        ProposalAction::UpdateTimerConfig(c) => applied.timer_config = Some(c.clone()),
        ProposalAction::UpdateBasefeeConfig(c) => applied.basefee_config = Some(c.clone()),
        ProposalAction::SetSystemDeployers(list) => applied.system_deployers = Some(list.clone()),
        ProposalAction::ScheduleUpgrade {
            name,
            height: at,
            info,
        } => {
            let plan = timerhost_types::UpgradePlan {
                name: name.clone(),
                height: *at,
                info: info.clone(),
                proposal_id: id,
            };
            if let Err(why) = crate::upgrades::schedule(state, plan, height)? {
                return Ok(Err(why));
            }
            effective = *at;
        }
        change => {
            let Some(latest) = latest_set(state)? else {
                return Ok(Err("this chain has no validator set to change".into()));
            };
            let next = match latest.apply(change).expect("a set change") {
                Ok(next) => next,
                Err(why) => return Ok(Err(format!("{}: {why}", change.name()))),
            };
            debug_assert!(next.validators.len() <= MAX_VALIDATORS);
            effective = height + VALIDATOR_SET_DELAY;
            state.put_encoded(keys::validator_set_at(effective), &next);
        }
    }
    p.status = ProposalStatus::Executed;
    return_deposit(state, &p)?;
    state.delete(keys::proposal_end(p.voting_ends_at, id));
    state.put(keys::proposal_closed(height, id), Vec::new());
    state.put_encoded(keys::proposal(id), &p);
    Ok(Ok(vec![event(
        "ProposalExecuted",
        vec![
            ("proposal_id", Value::int(id)),
            ("action", action_value(&p.action)),
            ("effective_height", Value::int(effective)),
        ],
    )]))
}

/// The end of block `height`: proposals whose voting period ended before
/// it expire, their deposits returned (at most [`EXPIRIES_PER_BLOCK`]).
pub fn expire(state: &mut Overlay<'_>, height: u64) -> Result<Vec<Event>> {
    let start = keys::proposal_ends();
    let end = keys::proposal_end(height, 0);
    let due = state.scan_keys(&start, Some(&end), EXPIRIES_PER_BLOCK)?;
    let mut events = Vec::new();
    for key in due {
        let id_bytes: [u8; 8] = key[key.len() - 8..].try_into().expect("8 bytes of the key");
        let id = u64::from_be_bytes(id_bytes);
        state.delete(key);
        let Some(mut p) = proposal(state, id)? else {
            continue;
        };
        if !p.status.is_open() {
            continue;
        }
        p.status = ProposalStatus::Expired;
        return_deposit(state, &p)?;
        state.put_encoded(keys::proposal(id), &p);
        state.put(keys::proposal_closed(height, id), Vec::new());
        events.push(event(
            "ProposalExpired",
            vec![
                ("proposal_id", Value::int(id)),
                ("refunded", Value::int(p.deposit)),
            ],
        ));
    }
    Ok(events)
}

/// The end of block `height`: the records of proposals closed more than
/// [`timerhost_types::governance::PROPOSAL_RETENTION_BLOCKS`] blocks ago
/// are removed (at most [`EXPIRIES_PER_BLOCK`]; their events stay in
/// history).
pub fn prune(state: &mut Overlay<'_>, height: u64) -> Result<()> {
    let Some(before) = height.checked_sub(timerhost_types::governance::PROPOSAL_RETENTION_BLOCKS)
    else {
        return Ok(());
    };
    let start = keys::proposals_closed();
    let end = keys::proposal_closed(before, 0);
    for key in state.scan_keys(&start, Some(&end), EXPIRIES_PER_BLOCK)? {
        let id_bytes: [u8; 8] = key[key.len() - 8..].try_into().expect("8 bytes of the key");
        state.delete(keys::proposal(u64::from_be_bytes(id_bytes)));
        state.delete(key);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::EmptyState;

    fn funded(state: &mut Overlay<'_>, who: Address) {
        state_accounts::credit(state, &who, 10u128.pow(30)).unwrap();
    }

    fn action() -> ProposalAction {
        ProposalAction::UpdateTimerConfig(timerhost_types::TimerConfig::default())
    }

    /// #50 defect 8: expiry handles 64 proposals a block and expiry refunds
    /// the deposit, so submissions past that grew state for free. A block
    /// now submits at most 64; closed records are removed after the
    /// retention period.
    #[test]
    fn defect8_a_block_submits_at_most_64_proposals_and_closed_records_are_pruned() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let proposer = Address([5; 20]);
        funded(&mut state, proposer);
        for i in 0..EXPIRIES_PER_BLOCK {
            let outcome = submit(&mut state, proposer, action(), 10).unwrap();
            assert!(outcome.is_ok(), "{i}: {outcome:?}");
        }
        let refused = submit(&mut state, proposer, action(), 10)
            .unwrap()
            .unwrap_err();
        assert!(
            refused.contains("at most") || refused.contains("most one block"),
            "{refused}"
        );
        // The next block has its own 64.
        assert!(submit(&mut state, proposer, action(), 11).unwrap().is_ok());
        let ends = config(&state).unwrap().voting_period_blocks + 10;
        // They all expire at the end of one block, and are recorded closed.
        let expired = expire(&mut state, ends + 1).unwrap();
        assert_eq!(expired.len(), EXPIRIES_PER_BLOCK);
        assert!(proposal(&state, 1).unwrap().is_some());
        // Kept for the retention period, then removed 64 a block.
        let retention = timerhost_types::governance::PROPOSAL_RETENTION_BLOCKS;
        prune(&mut state, ends + retention).unwrap();
        assert!(
            proposal(&state, 1).unwrap().is_some(),
            "still within retention"
        );
        prune(&mut state, ends + 2 + retention).unwrap();
        assert!(proposal(&state, 1).unwrap().is_none());
        assert!(proposal(&state, 64).unwrap().is_none());
        assert!(
            proposal(&state, 65).unwrap().is_some(),
            "the later block's proposal is open"
        );
    }

    /// #48: a closed proposal's tally is read against the set of the block
    /// it closed in, which `closing_heights` names; open ones are absent,
    /// and pruned ones leave with their records.
    #[test]
    fn closing_heights_name_the_block_each_kept_proposal_closed_in() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let proposer = Address([5; 20]);
        funded(&mut state, proposer);
        submit(&mut state, proposer, action(), 10).unwrap().unwrap();
        submit(&mut state, proposer, action(), 11).unwrap().unwrap();
        let period = config(&state).unwrap().voting_period_blocks;
        assert!(closing_heights(&state, 100).unwrap().is_empty());
        // The first expires at the end of the block after its period; the
        // second is still open then.
        expire(&mut state, period + 11).unwrap();
        let closed = closing_heights(&state, 100).unwrap();
        assert_eq!(
            closed.into_iter().collect::<Vec<_>>(),
            vec![(1, period + 11)]
        );
        expire(&mut state, period + 12).unwrap();
        assert_eq!(closing_heights(&state, 100).unwrap().len(), 2);
        assert_eq!(closing_heights(&state, 1).unwrap().len(), 1, "bounded");
        let retention = timerhost_types::governance::PROPOSAL_RETENTION_BLOCKS;
        prune(&mut state, period + 13 + retention).unwrap();
        assert!(closing_heights(&state, 100).unwrap().is_empty());
    }
}
