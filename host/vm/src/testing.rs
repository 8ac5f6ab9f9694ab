//! [`MockHost`]: an in-memory [`Host`] for tests of actors and of the VM.
//!
//! It keeps accounts, actor code and storage in ordered maps, snapshots the
//! whole state on every checkpoint (fine for tests, not for a chain), charges
//! the reference costs of [`crate::rules::costs`], and records timer side effects so
//! tests can assert that they exist only when the execution committed. Timer
//! validation is limited to what the VM needs to exercise its error path
//! (future height, ownership); the full CIP-5 §4.2 rules belong to the
//! `timers` crate.

use std::collections::BTreeMap;

use timerhost_types::timer::{
    CANCEL_TIMER_CYCLES, EXTEND_TIMER_CYCLES, REVOKE_TIMER_PAYMENTS_CYCLES, SET_TIMER_BASE_CYCLES,
};
use timerhost_types::{keccak256, keys, Address, ErrorKind, Hash, TimerQuote, TimerRequest};

use crate::host_api::host::{
    ActorRecord, BlockInfo, CheckpointId, Cost, Host, HostCall, HostFailure,
};
use crate::rules::costs::{self, cells};

/// The fire tests run handlers as (`Invocation::TimerFire(TEST_FIRE)`): a
/// height timer due at height 1, its first fire.
pub const TEST_FIRE: timerhost_types::FireInfo = timerhost_types::FireInfo {
    timer_id: Hash([7; 32]),
    fire_seq: 1,
    due: timerhost_types::FireDue::Height(1),
    escrow_key: None,
};

/// A timer the mock accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MockTimer {
    /// Timer id returned to the actor.
    pub id: Hash,
    /// Scheduling actor.
    pub actor: Address,
    /// The request as made.
    pub request: TimerRequest,
    /// Current expiry (after extensions), if set.
    pub expires_at: Option<u64>,
}

#[derive(Clone, Debug, Default)]
struct MockState {
    balances: BTreeMap<Address, u128>,
    actors: BTreeMap<Address, ActorRecord>,
    /// By consensus key (`keys::storage`), so scans use the chain's ranges.
    storage: BTreeMap<Vec<u8>, Vec<u8>>,
    timers: BTreeMap<Hash, MockTimer>,
    cancelled_timers: Vec<Hash>,
    revoked_payers: Vec<Address>,
    schedule_nonce: u64,
}

/// In-memory host. Construct with [`MockHost::new`], add actors with
/// [`MockHost::install_actor`], then hand `&mut mock` to the [`crate::Vm`].
#[derive(Clone, Debug, Default)]
pub struct MockHost {
    state: MockState,
    code: BTreeMap<Hash, String>,
    checkpoints: Vec<(CheckpointId, MockState)>,
    next_checkpoint: u64,
    /// The block executions run in.
    pub block: BlockInfo,
    /// The transaction signer.
    pub tx_sender: Address,
    /// What the transaction sent to the actor it calls.
    pub call_value: u128,
    /// The last `release_escrow` request, if any.
    pub escrow_release: Option<Address>,
}

impl MockHost {
    /// An empty host at height 1, timestamp 1_700_000_000 s (in ms), sender `0x…01`.
    pub fn new() -> MockHost {
        let mut sender = [0u8; 20];
        sender[19] = 1;
        MockHost {
            block: BlockInfo {
                height: 1,
                timestamp_ms: 1_700_000_000_123,
            },
            tx_sender: Address(sender),
            ..MockHost::default()
        }
    }

    /// Registers `source` as the code of `actor`, deployed by the current sender.
    pub fn install_actor(&mut self, actor: Address, source: &str) -> Hash {
        let code_hash = keccak256(source.as_bytes());
        self.code.insert(code_hash, source.to_owned());
        self.state.actors.insert(
            actor,
            ActorRecord {
                code_hash,
                deployer: self.tx_sender,
            },
        );
        code_hash
    }

    /// Sets a balance.
    pub fn set_balance(&mut self, account: Address, amount: u128) {
        self.state.balances.insert(account, amount);
    }

    /// A balance (0 if unknown).
    pub fn balance_of(&self, account: &Address) -> u128 {
        self.state.balances.get(account).copied().unwrap_or(0)
    }

    /// The raw canonical bytes stored under `key` for `actor`.
    pub fn storage_bytes(&self, actor: &Address, key: &str) -> Option<Vec<u8>> {
        self.state
            .storage
            .get(&keys::storage(actor, key.as_bytes()))
            .cloned()
    }

    /// The decoded value stored under `key` for `actor`.
    pub fn storage_value(&self, actor: &Address, key: &str) -> Option<timerhost_types::Value> {
        self.storage_bytes(actor, key)
            .map(|b| timerhost_types::Value::from_bytes(&b).expect("canonical value"))
    }

    /// Live timers.
    pub fn timers(&self) -> Vec<MockTimer> {
        self.state.timers.values().cloned().collect()
    }

    /// Timers cancelled by actors.
    pub fn cancelled_timers(&self) -> &[Hash] {
        &self.state.cancelled_timers
    }

    /// Actors that called `revoke_timer_payments`, in order.
    pub fn revoked_payers(&self) -> &[Address] {
        &self.state.revoked_payers
    }

    /// Open checkpoints (0 between executions, if the VM balanced them).
    pub fn open_checkpoints(&self) -> usize {
        self.checkpoints.len()
    }

    /// A digest of the whole mock state, for determinism tests.
    pub fn state_digest(&self) -> Hash {
        keccak256(format!("{:?}", self.state).as_bytes())
    }

    fn storage_cells(key: &[u8], value: &[u8]) -> u64 {
        cells::STORAGE_WRITE_OVERHEAD + key.len() as u64 + value.len() as u64
    }
}

fn unauthorized<T>(message: &str, cycles: u64) -> HostCall<T> {
    HostCall::rejected(
        HostFailure::new(ErrorKind::Unauthorized, message),
        Cost::cycles(cycles),
    )
}

impl Host for MockHost {
    fn block(&self) -> BlockInfo {
        self.block
    }

    fn tx_sender(&self) -> Address {
        self.tx_sender
    }

    fn call_value(&self) -> u128 {
        self.call_value
    }

    fn release_escrow(&mut self, to: &Address) -> HostCall<()> {
        self.escrow_release = Some(*to);
        HostCall::ok((), Cost::default())
    }

    fn actor_record(&mut self, actor: &Address) -> HostCall<Option<ActorRecord>> {
        HostCall::ok(
            self.state.actors.get(actor).cloned(),
            Cost::cycles(costs::host::ACTOR_LOOKUP),
        )
    }

    fn load_code(&mut self, code_hash: &Hash) -> Option<String> {
        self.code.get(code_hash).cloned()
    }

    fn storage_get(&mut self, actor: &Address, key: &[u8]) -> HostCall<Option<Vec<u8>>> {
        HostCall::ok(
            self.state.storage.get(&keys::storage(actor, key)).cloned(),
            Cost::cycles(costs::host::STORAGE_READ),
        )
    }

    fn storage_set(&mut self, actor: &Address, key: &[u8], value: &[u8]) -> HostCall<()> {
        let cost = Cost::new(costs::host::STORAGE_WRITE, Self::storage_cells(key, value));
        self.state
            .storage
            .insert(keys::storage(actor, key), value.to_vec());
        HostCall::ok((), cost)
    }

    fn storage_delete(&mut self, actor: &Address, key: &[u8]) -> HostCall<()> {
        self.state.storage.remove(&keys::storage(actor, key));
        HostCall::ok((), Cost::cycles(costs::host::STORAGE_WRITE))
    }

    fn storage_next_key(
        &mut self,
        actor: &Address,
        prefix: &[u8],
        after: Option<&[u8]>,
    ) -> HostCall<Option<Vec<u8>>> {
        let (start, end) = keys::storage_scan_range(actor, prefix, after);
        let base = keys::storage_prefix(actor).len();
        let found = self
            .state
            .storage
            .range(start..end)
            .next()
            .map(|(key, _)| key[base..].to_vec());
        HostCall::ok(found, Cost::cycles(costs::host::STORAGE_NEXT_KEY))
    }

    fn balance(&mut self, account: &Address) -> HostCall<u128> {
        HostCall::ok(self.balance_of(account), Cost::cycles(costs::host::BALANCE))
    }

    fn transfer(&mut self, from: &Address, to: &Address, amount: u128) -> HostCall<()> {
        let cost = Cost::new(costs::host::TRANSFER, 0);
        let available = self.balance_of(from);
        if available < amount {
            return HostCall::rejected(
                HostFailure::new(
                    ErrorKind::InsufficientFunds,
                    format!("balance {available} < {amount}"),
                ),
                cost,
            );
        }
        self.state.balances.insert(*from, available - amount);
        *self.state.balances.entry(*to).or_insert(0) += amount;
        HostCall::ok((), cost)
    }

    fn emit(&mut self, _emitter: &Address, name: &str, encoded_data: &[u8]) -> HostCall<()> {
        let cells = cells::EVENT_OVERHEAD + name.len() as u64 + encoded_data.len() as u64;
        HostCall::ok((), Cost::new(costs::host::EMIT, cells))
    }

    fn checkpoint(&mut self) -> CheckpointId {
        self.next_checkpoint += 1;
        let id = CheckpointId(self.next_checkpoint);
        self.checkpoints.push((id, self.state.clone()));
        id
    }

    fn commit(&mut self, checkpoint: CheckpointId) {
        let (id, _) = self.checkpoints.pop().expect("commit without checkpoint");
        assert_eq!(id, checkpoint, "checkpoints must be closed innermost first");
    }

    fn revert(&mut self, checkpoint: CheckpointId) {
        let (id, saved) = self.checkpoints.pop().expect("revert without checkpoint");
        assert_eq!(id, checkpoint, "checkpoints must be closed innermost first");
        self.state = saved;
    }

    fn schedule_timer(
        &mut self,
        actor: &Address,
        nested: bool,
        request: TimerRequest,
    ) -> HostCall<Hash> {
        let cost = Cost::new(SET_TIMER_BASE_CYCLES, request.payload.len() as u64);
        if nested && request.fee_payer.is_some_and(|p| p != *actor) {
            return HostCall::rejected(
                HostFailure::new(
                    ErrorKind::InvalidInput,
                    "an actor reached through pvm_host.call may name only itself as fee payer",
                ),
                cost,
            );
        }
        let at = match &request.trigger {
            timerhost_types::RequestedTrigger::Height(h) => *h,
            timerhost_types::RequestedTrigger::Time(t) => *t,
            timerhost_types::RequestedTrigger::State { .. } => self.block.height + 1,
        };
        if matches!(
            request.trigger,
            timerhost_types::RequestedTrigger::Height(_)
        ) && at <= self.block.height
        {
            return HostCall::rejected(
                HostFailure::new(
                    ErrorKind::InvalidInput,
                    format!("height {at} is not in the future"),
                ),
                cost,
            );
        }
        self.state.schedule_nonce += 1;
        let id = timerhost_types::primitives::keccak256_concat(&[
            actor.as_bytes(),
            &at.to_be_bytes(),
            &request.payload,
            &self.state.schedule_nonce.to_be_bytes(),
        ]);
        let expires_at = request.expires_at;
        self.state.timers.insert(
            id,
            MockTimer {
                id,
                actor: *actor,
                request,
                expires_at,
            },
        );
        HostCall::ok(id, cost)
    }

    fn extend_timer(
        &mut self,
        actor: &Address,
        timer_id: &Hash,
        new_expires_at: u64,
    ) -> HostCall<()> {
        let cycles = EXTEND_TIMER_CYCLES;
        match self.state.timers.get_mut(timer_id) {
            Some(timer) if timer.actor == *actor => {
                timer.expires_at = Some(new_expires_at);
                HostCall::ok((), Cost::cycles(cycles))
            }
            Some(_) => unauthorized("timer belongs to another actor", cycles),
            None => HostCall::rejected(
                HostFailure::new(ErrorKind::NotFound, "no such timer"),
                Cost::cycles(cycles),
            ),
        }
    }

    fn cancel_timer(&mut self, actor: &Address, timer_id: &Hash) -> HostCall<()> {
        let cycles = CANCEL_TIMER_CYCLES;
        match self.state.timers.get(timer_id) {
            Some(timer) if timer.actor == *actor => {
                self.state.timers.remove(timer_id);
                self.state.cancelled_timers.push(*timer_id);
                HostCall::ok((), Cost::cycles(cycles))
            }
            Some(_) => unauthorized("timer belongs to another actor", cycles),
            None => HostCall::rejected(
                HostFailure::new(ErrorKind::NotFound, "no such timer"),
                Cost::cycles(cycles),
            ),
        }
    }

    fn revoke_timer_payments(&mut self, actor: &Address) -> HostCall<()> {
        self.state.revoked_payers.push(*actor);
        HostCall::ok((), Cost::cycles(REVOKE_TIMER_PAYMENTS_CYCLES))
    }

    /// The mock never fires a timer, so no queue holds a dead letter.
    fn dead_letters_size(&mut self, _actor: &Address) -> HostCall<u64> {
        HostCall::ok(0, Cost::cycles(timerhost_types::timer::TIMER_QUOTE_CYCLES))
    }

    fn dead_letters(&mut self, _actor: &Address) -> HostCall<Vec<timerhost_types::Value>> {
        HostCall::ok(Vec::new(), Cost::default())
    }

    fn retry_dead_letter(
        &mut self,
        _actor: &Address,
        _nested: bool,
        _timer_id: &Hash,
        _due: Option<u64>,
    ) -> HostCall<Hash> {
        HostCall::rejected(
            HostFailure::new(ErrorKind::NotFound, "no such dead letter"),
            Cost::cycles(SET_TIMER_BASE_CYCLES),
        )
    }

    fn drop_dead_letter(&mut self, _actor: &Address, _timer_id: &Hash) -> HostCall<()> {
        HostCall::rejected(
            HostFailure::new(ErrorKind::NotFound, "no such dead letter"),
            Cost::cycles(CANCEL_TIMER_CYCLES),
        )
    }

    /// The mock has no due queue: it quotes an empty block at the default
    /// config's lane, `max_cost` at one unit per cycle.
    fn timer_quote(&mut self, request: timerhost_types::QuoteRequest) -> HostCall<TimerQuote> {
        let config = timerhost_types::TimerConfig::default();
        let gas_limit = request.gas_limit.unwrap_or(config.max_cycles_per_fire);
        let quote = TimerQuote {
            height: request.height.unwrap_or(self.block.height + 1),
            timestamp_ms: request.timestamp_ms,
            gas_limit,
            max_cost: u128::from(gas_limit + timerhost_types::timer::TIMER_FIRE_BASE_CYCLES),
            deposit: 0,
            lane_budget: config.lane_cycles_per_block,
            reserved: 0,
            queued: 0,
            fits: true,
            max_attempts: u64::from(request.retries.unwrap_or(0)) + 1,
            worst_case_cost: u128::from(gas_limit + timerhost_types::timer::TIMER_FIRE_BASE_CYCLES)
                * u128::from(u64::from(request.retries.unwrap_or(0)) + 1),
            booking: None,
            lane_basefee: config.min_lane_basefee,
            max_fee_per_cycle: request.max_fee_per_cycle.unwrap_or(0),
            max_priority_fee_per_cycle: request.bid.unwrap_or(0),
            suggested_fees: timerhost_types::SuggestedFees::at(
                &timerhost_types::LaneMarket::at_floor(&config),
            ),
        };
        HostCall::ok(
            quote,
            Cost::cycles(timerhost_types::timer::TIMER_QUOTE_CYCLES),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_key_walks_one_actor_prefix_in_order() {
        let mut host = MockHost::new();
        let (a, b) = (Address([1; 20]), Address([2; 20]));
        for key in ["x:2", "x:1", "y", "x:3"] {
            let _ = host.storage_set(&a, key.as_bytes(), b"v");
        }
        let _ = host.storage_set(&b, b"x:0", b"v");
        let mut seen = Vec::new();
        let mut after: Option<Vec<u8>> = None;
        while let Some(key) = host
            .storage_next_key(&a, b"x:", after.as_deref())
            .result
            .unwrap()
        {
            seen.push(String::from_utf8(key.clone()).unwrap());
            after = Some(key);
        }
        assert_eq!(seen, ["x:1", "x:2", "x:3"]);
    }

    #[test]
    fn checkpoints_nest_and_revert() {
        let mut host = MockHost::new();
        let a = Address([1; 20]);
        let outer = host.checkpoint();
        let _ = host.storage_set(&a, b"k", b"1");
        let inner = host.checkpoint();
        let _ = host.storage_set(&a, b"k", b"2");
        host.revert(inner);
        assert_eq!(host.storage_bytes(&a, "k"), Some(b"1".to_vec()));
        host.commit(outer);
        assert_eq!(host.open_checkpoints(), 0);
        let request = TimerRequest {
            trigger: timerhost_types::RequestedTrigger::Height(1),
            payload: vec![],
            fee_payer: None,
            gas_limit: None,
            expires_at: None,
            bid: None,
            max_fee_per_cycle: None,
            escrow_key: None,
            retries: None,
            retry_backoff: None,
            book: false,
            handler: None,
        };
        let call = host.schedule_timer(&a, false, request);
        assert_eq!(call.result.unwrap_err().kind, ErrorKind::InvalidInput);
        assert_eq!(call.cost.cycles, SET_TIMER_BASE_CYCLES);
    }
}
