//! Shared by the integration tests (`mod common;`): the chain's invariants
//! checked after a block ([`assert_invariants`]), and a chain on the real
//! VM ([`Net`]) that checks them after every block it mines.

// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use std::sync::Arc;

use timerhost_chain::testing::{dev_builders, total_balances, TxBuilder};
use timerhost_chain::{Chain, NoHooks, VmRuntime};
use timerhost_state::{MemoryBackend, StateRead};
use timerhost_timers::store;
use timerhost_types::{
    Address, Genesis, Receipt, SignedTransaction, Value, CRON_REGISTRY_ADDRESS,
    TIMER_DEPOSIT_ESCROW,
};

/// Receives the tips of every block mined here.
pub const PROPOSER: Address = Address([0xee; 20]);

/// A dev chain on the real VM and a transaction builder per dev account.
pub struct Net {
    pub chain: Chain<MemoryBackend>,
    pub b: Vec<TxBuilder>,
}

impl Net {
    pub fn new() -> Self {
        Self::with_genesis(Genesis::dev())
    }

    /// A dev chain whose timers run under `timers`.
    pub fn with_timers(timers: timerhost_types::TimerConfig) -> Self {
        let mut genesis = Genesis::dev();
        genesis.timers = timers;
        Self::with_genesis(genesis)
    }

    pub fn with_genesis(genesis: Genesis) -> Self {
        let chain = Chain::open(
            MemoryBackend::new(),
            genesis,
            Arc::new(VmRuntime::new().unwrap()),
            Arc::new(NoHooks),
        )
        .unwrap();
        let mut b = dev_builders();
        for x in &mut b {
            x.cycles_limit = 5_000_000;
            x.cells_limit = 1_000_000;
        }
        Net { chain, b }
    }

    pub fn height(&self) -> u64 {
        self.chain.head().unwrap().height
    }

    pub fn now(&self) -> u64 {
        self.chain.head().unwrap().timestamp_ms
    }

    /// Mines a block at `timestamp_ms` with `txs` (all must be included),
    /// then checks conservation and the registry's books.
    pub fn block_at(&self, txs: Vec<SignedTransaction>, timestamp_ms: u64) -> Vec<Receipt> {
        let p = self
            .chain
            .produce_block(&txs, timestamp_ms, PROPOSER)
            .expect("the block is produced whatever its actors do");
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        let height = p.executed.block.header.height;
        assert_invariants(&self.chain.store().state(), &format!("block {height}"));
        p.executed.receipts
    }

    /// Mines the next block, 1 ms after the head.
    pub fn block(&self, txs: Vec<SignedTransaction>) -> Vec<Receipt> {
        self.block_at(txs, self.now() + 1)
    }

    pub fn deploy(&mut self, who: usize, code: &str, args: Vec<Value>, value: u128) -> Address {
        let tx = self.b[who].deploy(code, args, value);
        let r = self.block(vec![tx]).remove(0);
        assert!(r.is_success(), "deploy failed: {:?}", r.error);
        r.created_actor.unwrap()
    }

    /// Calls `handler` in a block of its own; the receipt, failed or not.
    pub fn call(&mut self, who: usize, actor: Address, handler: &str, args: Vec<Value>) -> Receipt {
        self.call_value(who, actor, handler, args, 0)
    }

    /// Calls `handler` sending `value`; the receipt, failed or not.
    pub fn call_value(
        &mut self,
        who: usize,
        actor: Address,
        handler: &str,
        args: Vec<Value>,
        value: u128,
    ) -> Receipt {
        let tx = self.b[who].call(actor, handler, args, value);
        self.block(vec![tx]).remove(0)
    }

    /// Like [`Net::call_value`], asserting the call succeeded.
    pub fn call_ok(
        &mut self,
        who: usize,
        actor: Address,
        handler: &str,
        args: Vec<Value>,
        value: u128,
    ) -> Receipt {
        let r = self.call_value(who, actor, handler, args, value);
        assert!(r.is_success(), "{handler} failed: {:?}", r.error);
        r
    }

    pub fn balance(&self, a: &Address) -> u128 {
        self.chain.account(a).unwrap().balance
    }

    /// An actor's storage value at `key`.
    pub fn storage(&self, actor: &Address, key: &str) -> Option<Value> {
        let state = self.chain.store().state();
        state
            .get(&timerhost_types::keys::storage(actor, key.as_bytes()))
            .unwrap()
            .map(|b| Value::from_bytes(&b).unwrap())
    }
}

/// The chain's invariants after a block (docs/ARCHITECTURE.md,
/// "Invariants"): balances + burned = genesis supply; the cron registry's
/// balance is the sum of its escrows; the deposit escrow holds exactly the
/// live timers' deposits; the proposal escrow holds exactly the open
/// proposals' deposits (#32). `context` names the block in a failure.
pub fn assert_invariants(state: &dyn StateRead, context: &str) {
    if let Err(why) = timerhost_timers::audit::bookings(state).unwrap() {
        panic!("{context}: the bookings' books: {why}");
    }
    let supply = timerhost_chain::accounts::supply(state).unwrap();
    assert_eq!(
        total_balances(state).unwrap(),
        supply.genesis_supply - supply.burned,
        "{context}: supply not conserved"
    );
    let balance = |a: &Address| timerhost_state::accounts::load(state, a).unwrap().balance;
    assert_eq!(
        balance(&CRON_REGISTRY_ADDRESS),
        cron_escrows_in(state).iter().sum::<u128>(),
        "{context}: the registry's balance is not the sum of its escrows"
    );
    assert_eq!(
        balance(&TIMER_DEPOSIT_ESCROW),
        store::deposits_held(state, usize::MAX).unwrap(),
        "{context}: the deposit escrow does not hold exactly the live timers' and dead letters' deposits"
    );
    assert_eq!(
        store::pending_count(state).unwrap(),
        store::all(state, usize::MAX).unwrap().len() as u64,
        "{context}: the pending-timer counter does not count the pending timers"
    );
    if let Err(finding) = timerhost_timers::audit::audit(state).unwrap() {
        panic!(
            "{context}: the derived timer state disagrees with the committed state at {}: {}",
            hex::encode(&finding.key),
            finding.reason
        );
    }
    let open: u128 = timerhost_chain::governance::proposals(state, 1, usize::MAX)
        .unwrap()
        .iter()
        .filter(|p| p.status.is_open())
        .map(|p| p.deposit)
        .sum();
    assert_eq!(
        balance(&timerhost_types::PROPOSAL_DEPOSIT_ESCROW),
        open,
        "{context}: the proposal escrow does not hold exactly the open proposals' deposits"
    );
}

/// The cron registry's escrow integers (`escrow:<id>` in its storage).
pub fn cron_escrows(chain: &Chain<MemoryBackend>) -> Vec<u128> {
    cron_escrows_in(&chain.store().state())
}

fn cron_escrows_in(state: &dyn StateRead) -> Vec<u128> {
    let (start, end) =
        timerhost_types::keys::storage_scan_range(&CRON_REGISTRY_ADDRESS, b"escrow:", None);
    state
        .scan(&start, Some(&end), usize::MAX)
        .unwrap()
        .into_iter()
        .map(|(_, v)| Value::from_bytes(&v).unwrap().as_u128().unwrap())
        .collect()
}

/// Peers serving snapshot chunks from stores in this process (#44): each
/// may lie about derived chunks (`lies`: a record's byte flipped in its
/// first derived chunk) or tree chunks; blamed peers are skipped.
pub struct LocalPeers<'a, B: timerhost_state::KvBackend> {
    pub peers: Vec<(&'a timerhost_state::ChainStore<B>, Lie)>,
    pub height: u64,
    pub blamed: Vec<(usize, String)>,
}

/// How a test peer lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lie {
    /// It does not.
    Never,
    /// A value in every tree chunk it serves is changed.
    TreeValue,
    /// A byte of a timer's or watch's record in every derived chunk it
    /// serves is flipped.
    DerivedRecord,
}

impl<B: timerhost_state::KvBackend> timerhost_chain::state_sync::ChunkSource for LocalPeers<'_, B> {
    fn fetch(
        &mut self,
        index: u32,
    ) -> timerhost_chain::Result<(timerhost_state::SnapshotChunk, usize)> {
        use timerhost_state::SnapshotChunk;
        // The first peer not blamed serves: liars listed first are asked.
        for peer in 0..self.peers.len() {
            if self.blamed.iter().any(|(p, _)| *p == peer) {
                continue;
            }
            let (store, lie) = self.peers[peer];
            let mut chunk = store.snapshot_chunk(self.height, index)?.expect("served");
            match (&mut chunk, lie) {
                (SnapshotChunk::Tree { entries, .. }, Lie::TreeValue) => {
                    entries[0].1.push(0);
                }
                (SnapshotChunk::Derived { entries }, Lie::DerivedRecord) => {
                    // A timer or watch record (`u r`, `u t`, `u w`): its
                    // actor's first byte, which the root covers.
                    let record =
                        |k: &[u8]| [&b"ur"[..], b"ut", b"uw"].iter().any(|p| k.starts_with(p));
                    if let Some((_, v)) = entries.iter_mut().find(|(k, _)| record(k)) {
                        v[0] ^= 1;
                    }
                }
                _ => {}
            }
            return Ok((chunk, peer));
        }
        Err(timerhost_chain::ChainError::StateSync(
            "every peer was blamed".into(),
        ))
    }

    fn blame(&mut self, peer: usize, reason: &str) {
        self.blamed.push((peer, reason.to_string()));
    }
}
