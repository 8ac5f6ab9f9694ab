//! #28's chaos test: a seeded generator drives a chain through blocks of
//! random operations by a dozen actors written to misbehave — height, time
//! and state timers scheduled, cancelled and extended; escrow-funded timers
//! whose handlers inflate their escrow, pay their balance away and release
//! to anyone; cron jobs that cancel each other and themselves; watches on
//! each other's keys; whole balances moved; governance pausing, resuming,
//! shutting down, cancelling and switching priority ordering in between.
//!
//! After every block: it was produced; its cells stayed within
//! `max_block_cells`; supply is conserved (balances + burned = genesis
//! supply); the cron registry's balance is the sum of its
//! escrows; the deposit escrow holds exactly the live timers' deposits; and
//! a second chain on the other backend (memory, the producer is on sled)
//! re-executes the block to the same header — roots included.
//!
//! Since #49 an actor also builds deep structures (frozensets, generators,
//! iterators and exceptions nested 1,000–30,000 deep) and hashes, formats,
//! drains or simply drops them: each ends in a result or `RecursionError`,
//! never a crash, the same on both chains.
//!
//! `TIMERHOST_CHAOS_SEED` and `TIMERHOST_CHAOS_BLOCKS` replay or lengthen a
//! run (the seed is printed); `chaos_long` (ignored) runs 10,000 blocks:
//! `cargo test -p timerhost-chain --release --test chaos -- --ignored`.

mod common;

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use timerhost_chain::testing::{dev_builders, TxBuilder};
use timerhost_chain::{Chain, NoHooks, VmRuntime};
use timerhost_state::{MemoryBackend, SledBackend};
use timerhost_timers::store;
use timerhost_types::{
    Address, Genesis, SignedTransaction, SystemInstruction, TimerConfig, TimerOrdering, Value,
};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const PROPOSER: Address = Address([0xee; 20]);
const ACTORS: usize = 12;
const DEFAULT_BLOCKS: u64 = 300;

/// Every misbehaviour an actor knows, driven by the generator's commands
/// (`act`) and by the payloads its timers carry (`handle_timer`, `on_hit`,
/// `run`: the same command language).
const CHAOS: &str = r#"
import pvm_host

CRON = "0x0000000000000000000000000000000000000006"


def _wrap(it):
    for v in it:
        yield v


def _deep(n):
    depth = 500 + (n * 37) % 30000
    kind = n % 6
    if kind == 0:
        x = frozenset()
        for _ in range(depth):
            x = frozenset([x])
        return hash(x)
    if kind == 1:
        x = iter([1])
        for _ in range(depth):
            x = _wrap(x)
        return 0
    if kind == 2:
        x = iter([1, 2])
        for _ in range(depth):
            x = zip(x)
        return len(list(x))
    if kind == 3:
        e = ValueError(1)
        for _ in range(depth):
            e = ValueError(e)
        return len(str(e))
    if kind == 4:
        t = ()
        for _ in range(depth):
            t = (t,)
        return len({t: 1})
    t = []
    for _ in range(depth):
        t = [t]
    return len(repr(t))


class Chaos:
    def act(self, cmd, n, other):
        return self._do(cmd, n, other)

    def run(self, cmd, n, other):
        return self._do(cmd, n, other)

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        cmd, n, other = payload.decode().split("|")
        self._do(cmd, int(n), other)

    def on_hit(self, payload):
        cmd, n, other = payload.decode().split("|")
        self._do(cmd, int(n), other)

    def _fund(self):
        fund = self.storage.get("fund", 0)
        self.storage["fund"] = (fund if isinstance(fund, int) else 0) + 10**15

    def _timers(self):
        return self.storage.get("timers", [])

    def _keep(self, timer):
        timers = self._timers()[-15:]
        timers.append(timer)
        self.storage["timers"] = timers

    def _pick(self, n):
        timers = self._timers()
        if not timers:
            return None
        return timers[n % len(timers)]

    def _do(self, cmd, n, other):
        height = pvm_host.block_height()
        payload = (["write", "drain", "inflate", "release", "cancel", "schedule", "blob", "noop", "deep"][n % 9] + "|" + str(n // 9) + "|" + other).encode()
        if cmd == "height":
            self._keep(pvm_host.schedule_timer_ex(height + 1 + n % 5, payload, gas_limit=120_000, expires_at=height + 8))
        elif cmd == "time":
            self._keep(pvm_host.schedule_timer_at(pvm_host.block_timestamp_ms() + 1 + (n % 4) * 1000, payload, gas_limit=120_000))
        elif cmd == "escrow":
            self._fund()
            if n % 2:
                self._keep(pvm_host.schedule_timer_at(pvm_host.block_timestamp_ms() + 1 + (n % 3) * 1000, payload, gas_limit=120_000, escrow="fund"))
            else:
                self._keep(pvm_host.schedule_timer_ex(height + 1 + n % 4, payload, gas_limit=120_000, escrow="fund"))
        elif cmd == "bigescrow":
            self._fund()
            self._keep(pvm_host.schedule_timer_at(pvm_host.block_timestamp_ms() + 1 + (n % 3) * 1000, ("noop|0|" + "x" * 60_000).encode(), gas_limit=1, escrow="fund"))
            if n % 2:
                self.storage["fund"] = "spoiled"
        elif cmd == "retry":
            # #45: a fire that fails on purpose, retried then dead-lettered;
            # some pay from an escrow, some succeed once "healed".
            fail = ("fail|" + str(n) + "|" + other).encode()
            if n % 3 == 0:
                self._fund()
                self._keep(pvm_host.schedule_timer_at(pvm_host.block_timestamp_ms() + 1 + (n % 3) * 1000, fail, gas_limit=60_000, escrow="fund", retries=1 + n % 3, retry_backoff=1))
            else:
                self._keep(pvm_host.schedule_timer_ex(height + 1 + n % 3, fail, gas_limit=60_000, expires_at=height + 20, retries=1 + n % 3, retry_backoff=1 + n % 2))
        elif cmd == "fail":
            if self.storage.get("healed", 0) != n % 4:
                raise ValueError("failing on purpose")
        elif cmd == "book":
            # #45: bookings, many refused (the share is small), some
            # cancelled, some with a retry policy.
            if n % 3 == 0:
                self._keep(pvm_host.book_timer_at(pvm_host.block_timestamp_ms() + 1 + (n % 3) * 1000, payload, gas_limit=60_000))
            else:
                self._keep(pvm_host.book_timer(height + 1 + n % 4, payload, gas_limit=60_000, handler="on_hit", retries=n % 2, retry_backoff=1))
        elif cmd == "heal":
            self.storage["healed"] = n % 4
        elif cmd == "letters":
            letters = pvm_host.dead_letters()
            if letters:
                entry = letters[n % len(letters)]
                if n % 2:
                    self._keep(pvm_host.retry_dead_letter(entry["timer_id"], height + 1 + n % 3))
                else:
                    pvm_host.drop_dead_letter(entry["timer_id"])
        elif cmd == "spoil":
            self.storage["fund"] = "spoiled"
        elif cmd == "watch":
            self._keep(pvm_host.watch(["k" + str(n % 3), "fund"], actor=other, handler="on_hit", payload=payload, gas_limit=120_000, expires_at=height + 6))
        elif cmd == "cancel":
            timer = self._pick(n)
            if timer is not None:
                pvm_host.cancel_timer(timer)
        elif cmd == "extend":
            timer = self._pick(n)
            if timer is not None:
                pvm_host.extend_timer(timer, height + 2 + n % 9)
        elif cmd == "write":
            self.storage["k" + str(n % 3)] = n
        elif cmd == "deep":
            self.storage["deep"] = _deep(n)
        elif cmd == "blob":
            self.storage["blob"] = b"x" * (100_000 * (1 + n % 4))
        elif cmd == "drain":
            pvm_host.transfer(other, pvm_host.balance(pvm_host.actor_address()))
        elif cmd == "inflate":
            self.storage["fund"] = 10**30
            pvm_host.release_escrow(other)
        elif cmd == "release":
            pvm_host.release_escrow(other if n % 3 else "0x0000000000000000000000000000000000000006")
        elif cmd == "schedule":
            self._keep(pvm_host.schedule_timer_ex(height + 2, b"noop|0|" + other.encode(), gas_limit=20_000))
        elif cmd == "cron":
            job = pvm_host.call(CRON, "schedule", other, "run", [["write", "drain", "cron_cancel", "cron_self", "noop"][n % 5], n, pvm_host.actor_address()], pvm_host.block_timestamp() + 1 + n % 3, 60 * (n % 2), 1 + n % 3, 60_000, value=10**16)
            jobs = self.storage.get("jobs", [])[-7:]
            jobs.append(job)
            self.storage["jobs"] = jobs
        elif cmd == "cron_cancel":
            jobs = pvm_host.call(other, "jobs")
            if jobs:
                pvm_host.call(other, "cancel_job", jobs[n % len(jobs)])
        elif cmd == "cron_self":
            running = pvm_host.call(CRON, "currentJob")
            if running is not None:
                pvm_host.call(CRON, "cancel", running["id"])
        return height

    def jobs(self):
        return self.storage.get("jobs", [])

    def cancel_job(self, job):
        try:
            pvm_host.call(CRON, "cancel", job)
        except pvm_host.HostError:
            pass
"#;

const COMMANDS: &[&str] = &[
    "height",
    "time",
    "escrow",
    "bigescrow",
    "spoil",
    "watch",
    "cancel",
    "extend",
    "write",
    "drain",
    "cron",
    "deep",
    "retry",
    "heal",
    "letters",
    "book",
];

struct Chaos {
    producer: Chain<SledBackend>,
    follower: Chain<MemoryBackend>,
    b: Vec<TxBuilder>,
    actors: Vec<Address>,
    rng: ChaCha20Rng,
    timestamp_ms: u64,
    tally: Tally,
    /// A node that joined by state sync a third of the way in (#44): it
    /// re-executes every later block to the producer's header.
    synced: Option<Chain<MemoryBackend>>,
    _dir: tempfile::TempDir,
}

/// What the run did, by outcome and event name: printed so a run shows
/// it exercised what it claims to.
#[derive(Default)]
struct Tally(std::collections::BTreeMap<String, u64>);

impl Tally {
    fn count(&mut self, what: String) {
        *self.0.entry(what).or_default() += 1;
    }
}

impl Chaos {
    fn new(seed: u64) -> Self {
        // The smallest block cells governance allows (2 × MAX_TX_BYTES):
        // four fires' cells limits fill it, so blocks with more due fires
        // walk in rounds and carry the rest over (#28 bug 4).
        let mut genesis = Genesis::dev();
        genesis.basefee.max_block_cells = 2 * timerhost_types::MAX_TX_BYTES as u64;
        // Deposits ten times the default: a 60 KB payload's deposit alone
        // then exceeds a small fire's maximum cost (the "bigescrow" case).
        genesis.timers.deposit_per_byte = 10_000;
        // Two fires' cells of each block are bookable (#45).
        genesis.timers.bookable_lane_percent = 60;
        let dir = tempfile::tempdir().unwrap();
        let runtime = || Arc::new(VmRuntime::new().unwrap());
        let producer = Chain::open(
            SledBackend::open(dir.path()).unwrap(),
            genesis.clone(),
            runtime(),
            Arc::new(NoHooks),
        )
        .unwrap();
        let follower =
            Chain::open(MemoryBackend::new(), genesis, runtime(), Arc::new(NoHooks)).unwrap();
        let mut b = dev_builders();
        for x in &mut b {
            x.cycles_limit = 3_000_000;
            x.cells_limit = 200_000;
        }
        let timestamp_ms = producer.head().unwrap().timestamp_ms;
        Chaos {
            producer,
            follower,
            b,
            actors: Vec::new(),
            rng: ChaCha20Rng::seed_from_u64(seed),
            timestamp_ms,
            tally: Tally::default(),
            synced: None,
            _dir: dir,
        }
    }

    /// Produces a block on the producer, re-executes it on the follower and
    /// checks every invariant; returns how many transactions failed.
    fn block(&mut self, txs: Vec<SignedTransaction>, seed: u64) -> usize {
        // Blocks 0.4–2.5 s apart, so time timers fall due unevenly.
        self.timestamp_ms += self.rng.gen_range(400..2_500);
        let height = self.producer.head().unwrap().height + 1;
        let proposed = self
            .producer
            .produce_block(&txs, self.timestamp_ms, PROPOSER)
            .unwrap_or_else(|e| panic!("seed {seed}: block {height} not produced: {e}"));
        let executed = self
            .follower
            .execute(&proposed.executed.block)
            .unwrap_or_else(|e| panic!("seed {seed}: block {height} not re-executed: {e}"));
        assert_eq!(
            executed.block.header, proposed.executed.block.header,
            "seed {seed}: the other backend disagrees at block {height}"
        );
        self.follower.commit(&executed).unwrap();
        if let Some(synced) = &self.synced {
            let again = synced
                .execute(&proposed.executed.block)
                .unwrap_or_else(|e| {
                    panic!("seed {seed}: the synced node fails block {height}: {e}")
                });
            assert_eq!(
                again.block.header, proposed.executed.block.header,
                "seed {seed}: the state-synced node disagrees at block {height}"
            );
            synced.commit(&again).unwrap();
        }
        common::assert_invariants(
            &self.producer.store().state(),
            &format!("seed {seed}, block {height}"),
        );
        let cells: u64 = proposed
            .executed
            .receipts
            .iter()
            .map(|r| r.cells_used)
            .sum();
        let max_block_cells = self.producer.basefee_config().unwrap().max_block_cells;
        assert!(
            cells <= max_block_cells,
            "seed {seed}: block {height} used {cells} cells, more than {max_block_cells}"
        );
        let stats = &proposed.executed.timer_stats;
        if stats.cells_full {
            self.tally
                .count("blocks whose cells held fires back".into());
        }
        if stats.lane_full || stats.fire_quota_full {
            self.tally
                .count("blocks whose lane or fire quota held fires back".into());
        }
        for (_, _, e) in &proposed.rejected {
            self.tally.count(format!("refused: {e}"));
        }
        for r in &proposed.executed.receipts {
            let fire = r.events.iter().any(|e| e.name == "TimerFired");
            let what = match (&r.error, fire) {
                (None, true) => "fire ok".to_string(),
                (None, false) => "ok".to_string(),
                (Some(e), fire) => {
                    // The rule, not the ids: cut at the first address or id.
                    let head: String = e
                        .message
                        .split(" 0x")
                        .next()
                        .unwrap_or("")
                        .chars()
                        .take(70)
                        .collect();
                    let phase = if fire { "fire failed" } else { "failed" };
                    format!("{phase}: {:?}: {head}", e.kind)
                }
            };
            self.tally.count(what);
            for e in &r.events {
                if e.name.to_lowercase().starts_with("timer")
                    || e.name.starts_with("Job")
                    || e.name.starts_with("DeadLetter")
                {
                    self.tally.count(e.name.clone());
                }
            }
        }
        proposed.rejected.len()
            + proposed
                .executed
                .receipts
                .iter()
                .filter(|r| !r.is_success())
                .count()
    }

    /// A new node joins from a snapshot of the producer's state, served by
    /// three peers of which two lie (a tree value changed; a timer record
    /// flipped): both are caught and blamed, and the node it opens is
    /// followed for the rest of the run.
    fn state_sync(&mut self, seed: u64) {
        let manifest = self.producer.store().take_snapshot(1).unwrap();
        let header = self
            .producer
            .store()
            .header(manifest.height)
            .unwrap()
            .unwrap();
        let mut peers = common::LocalPeers {
            peers: vec![
                (self.producer.store(), common::Lie::TreeValue),
                (self.producer.store(), common::Lie::DerivedRecord),
                (self.producer.store(), common::Lie::Never),
            ],
            height: manifest.height,
            blamed: Vec::new(),
        };
        let store = timerhost_state::ChainStore::new(MemoryBackend::new());
        let genesis = self.producer.genesis().clone();
        let report = timerhost_chain::state_sync::restore_snapshot(
            &store,
            &genesis,
            &manifest,
            &header.header,
            header.tx_count,
            &mut peers,
            |_, _| {},
        )
        .unwrap_or_else(|e| panic!("seed {seed}: state sync failed: {e}"));
        let blamed: Vec<usize> = peers.blamed.iter().map(|(p, _)| *p).collect();
        assert!(
            blamed.contains(&0),
            "seed {seed}: the tree liar went unnoticed: {:?}",
            peers.blamed
        );
        assert!(
            blamed.contains(&1),
            "seed {seed}: the record liar went unnoticed: {:?}",
            peers.blamed
        );
        assert!(
            !blamed.contains(&2),
            "seed {seed}: the honest peer was blamed: {:?}",
            peers.blamed
        );
        println!(
            "chaos: state sync at height {}: {} chunks, {report:?}, blamed {:?}",
            manifest.height,
            manifest.chunks(),
            peers.blamed
        );
        let synced = Chain::open(
            store.into_backend(),
            genesis,
            Arc::new(VmRuntime::new().unwrap()),
            Arc::new(NoHooks),
        )
        .unwrap();
        assert_eq!(synced.head().unwrap(), self.producer.head().unwrap());
        self.synced = Some(synced);
    }

    fn governance(&mut self, block: u64, blocks: u64) -> Option<SignedTransaction> {
        // Every run shuts timers down once, midway, whatever the dice say.
        if block == blocks / 2 {
            return Some(self.b[0].system(SystemInstruction::ShutdownTimers));
        }
        // Rare stops, frequent resumes: timers are mostly running.
        let instruction = match self.rng.gen_range(0..200) {
            0..=3 => SystemInstruction::PauseTimers,
            4 => SystemInstruction::ShutdownTimers,
            5..=24 => SystemInstruction::ResumeTimers,
            25..=30 => {
                let ordering = if self.rng.gen_bool(0.5) {
                    TimerOrdering::Priority
                } else {
                    TimerOrdering::Fifo
                };
                let cfg = TimerConfig {
                    ordering,
                    max_fires_per_block: self.rng.gen_range(3..40),
                    max_fires_per_target: self.rng.gen_range(1..10),
                    // Shrinks and grows the bookable share under bookings
                    // already made (#45: they keep their capacity).
                    bookable_lane_percent: self.rng.gen_range(0..=90),
                    ..TimerConfig::default()
                };
                SystemInstruction::UpdateTimerConfig(cfg)
            }
            31..=36 => {
                let listed = store::by_fee_payer(
                    &self.producer.store().state(),
                    &self.actors[self.rng.gen_range(0..ACTORS)],
                    8,
                )
                .unwrap();
                let timer = listed.first()?;
                SystemInstruction::CancelTimer {
                    timer_id: timer.timer_id,
                }
            }
            _ => return None,
        };
        Some(self.b[0].system(instruction))
    }

    fn run(seed: u64, blocks: u64) {
        println!("chaos: seed {seed}, {blocks} blocks (TIMERHOST_CHAOS_SEED={seed} replays it)");
        let mut c = Chaos::new(seed);
        let mut deploys = Vec::new();
        for i in 0..ACTORS {
            let b = &mut c.b[1 + i % 8];
            c.actors
                .push(timerhost_types::actor_address(&b.address(), b.nonce));
            deploys.push(b.deploy(CHAOS, vec![], 10u128.pow(18)));
        }
        assert_eq!(c.block(deploys, seed), 0, "seed {seed}: the actors deploy");
        let mut failed = 0;
        for block in 0..blocks {
            let mut txs = Vec::new();
            for _ in 0..c.rng.gen_range(0..6) {
                let who = 1 + c.rng.gen_range(0..8);
                let actor = c.actors[c.rng.gen_range(0..ACTORS)];
                let other = c.actors[c.rng.gen_range(0..ACTORS)];
                let cmd = COMMANDS[c.rng.gen_range(0..COMMANDS.len())];
                let n = c.rng.gen_range(0..1_000u64);
                txs.push(c.b[who].call(
                    actor,
                    "act",
                    vec![Value::str(cmd), Value::int(n), Value::str(other.to_hex())],
                    0,
                ));
            }
            // Money keeps coming in: actors drain each other to zero.
            if c.rng.gen_bool(0.5) {
                let to = c.actors[c.rng.gen_range(0..ACTORS)];
                txs.push(c.b[9].transfer(to, 10u128.pow(17)));
            }
            if let Some(tx) = c.governance(block, blocks) {
                txs.push(tx);
            }
            failed += c.block(txs, seed);
            if block == blocks / 3 {
                c.state_sync(seed);
            }
        }
        let head = c.producer.head().unwrap();
        println!(
            "chaos: seed {seed}: {} blocks, {failed} failed executions or refusals, root {}",
            head.height, head.state_root
        );
        for (what, n) in &c.tally.0 {
            println!("chaos:   {n:>6}  {what}");
        }
    }
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.parse()
            .unwrap_or_else(|_| panic!("{name} must be an integer, got {v:?}"))
    })
}

#[test]
fn chaos_blocks_keep_every_invariant() {
    let seed = env_u64("TIMERHOST_CHAOS_SEED").unwrap_or(0x28);
    let blocks = env_u64("TIMERHOST_CHAOS_BLOCKS").unwrap_or(DEFAULT_BLOCKS);
    // On the stack a node executes with, as a node would.
    timerhost_vm::runtime::on_execution_thread("chaos", move || Chaos::run(seed, blocks));
}

#[test]
#[ignore = "a long run: 10,000 blocks (docs/PERFORMANCE.md)"]
fn chaos_long() {
    let seed = env_u64("TIMERHOST_CHAOS_SEED").unwrap_or(0x2828);
    timerhost_vm::runtime::on_execution_thread("chaos", move || Chaos::run(seed, 10_000));
}
