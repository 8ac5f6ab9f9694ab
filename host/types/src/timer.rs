//! CIP-5 timer data shared by the VM, the timers crate and the chain: the
//! [`Timer`] record (§3.1), the governed [`TimerConfig`] (§6.4, plus the lane
//! budget, the fire quota and the deposit rate), the [`TimerRequest`] a
//! schedule carries from the VM to the timers crate, every timer cost and
//! limit, and the one rule for handler names ([`check_handler_name`]).

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::encoding::Canonical;
use crate::error::{Error, Result};
use crate::primitives::{keccak256_concat, Address, Hash};

/// The default timer handler.
pub const DEFAULT_TIMER_HANDLER: &str = "handle_timer";

/// Largest timer payload (CIP-5 §4.2): 1 MiB.
pub const MAX_TIMER_PAYLOAD: usize = 1_048_576;

/// `SET_TIMER_BASE_CYCLES` (CIP-5 §6.1): base cost of `schedule_timer` /
/// `schedule_timer_ex`, before the cells of the state the timer adds.
pub const SET_TIMER_BASE_CYCLES: u64 = 200;
/// Cost of `extend_timer` (CIP-5 §6.1).
pub const EXTEND_TIMER_CYCLES: u64 = 200;
/// `CANCEL_TIMER_CYCLES` (CIP-5 §6.1).
pub const CANCEL_TIMER_CYCLES: u64 = 200;
/// Cost of `pvm_host.revoke_timer_payments()`.
pub const REVOKE_TIMER_PAYMENTS_CYCLES: u64 = 200;
/// Cost of `pvm_host.timer_quote()`: O(1) reads (the configs and one due
/// bucket), charged like a storage read.
pub const TIMER_QUOTE_CYCLES: u64 = 10;

/// Fixed cycles every timer fire pays on top of what its handler uses: the
/// protocol's own work per fire (classification, record and index removal,
/// pre-charge and refund, the receipt and `TimerFired`), measured at about
/// 45 µs per trivial fire, i.e. ~3,000 cycles at the VM's ordinary rate of
/// ~15 ns per cycle (docs/METERING.md). Reserved from the lane with the
/// timer's `gas_limit_per_fire` and pre-charged to its fee payer, so a block
/// of near-free fires (`gas_limit = 1`) still pays for, and is bounded by,
/// the work it causes.
pub const TIMER_FIRE_BASE_CYCLES: u64 = 3_000;

/// State bytes one timer adds to each of the two timer listing indexes
/// (actor, fee payer): its `(slot, timer_id)` entry.
pub const TIMER_INDEX_ENTRY_BYTES: u64 = 8 + 32;

/// Cells charged for rewriting one account record (key and value), as a
/// storage write of its size: `STORAGE_WRITE_OVERHEAD` (32) + key (21) +
/// [`Account`](crate::keys::Account) (33).
pub const ACCOUNT_WRITE_CELLS: u64 = 32 + 21 + 33;

/// Most entries one state watch may list is `TimerConfig.max_watch_keys`;
/// each entry (a key, or a prefix ending in `*`) is at most this many bytes.
pub const MAX_WATCH_KEY_BYTES: usize = 256;

/// Longest storage key an `escrow=` may name ([`Timer::escrow_key`]).
pub const MAX_ESCROW_KEY_BYTES: usize = 256;

/// Most matched keys `pvm_host.trigger()["matched_keys"]` reports for one
/// watch fire (the first ones in key order): a prefix watch can match every
/// key a block wrote.
pub const MAX_REPORTED_MATCHED_KEYS: usize = 32;

/// One entry of a state watch: a storage key of the watched actor, or a
/// prefix of its keys (written `"price*"`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, BorshSerialize, BorshDeserialize)]
pub struct WatchKey {
    /// The key, or the prefix without its `*`.
    pub key: Vec<u8>,
    /// Does it match every key starting with `key`?
    pub prefix: bool,
}

impl WatchKey {
    /// Parses an entry as an actor writes it: a trailing `*` makes it a
    /// prefix (so a key that itself ends in `*` can be watched only through
    /// a prefix).
    pub fn parse(entry: &str) -> WatchKey {
        match entry.strip_suffix('*') {
            Some(prefix) => WatchKey {
                key: prefix.as_bytes().to_vec(),
                prefix: true,
            },
            None => WatchKey {
                key: entry.as_bytes().to_vec(),
                prefix: false,
            },
        }
    }

    /// Does this entry match storage key `key`?
    pub fn matches(&self, key: &[u8]) -> bool {
        if self.prefix {
            key.starts_with(&self.key)
        } else {
            key == self.key.as_slice()
        }
    }

    /// The entry as the actor wrote it (`"price*"` for a prefix).
    pub fn display(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.key).into_owned();
        if self.prefix {
            s.push('*');
        }
        s
    }
}

/// A persistent watch over storage keys of one actor (#17's state trigger).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Watch {
    /// The actor whose storage is watched (any actor's may be).
    pub actor: Address,
    /// The keys and prefixes, sorted and without duplicates.
    pub keys: Vec<WatchKey>,
    /// How many times the watch has fired.
    pub fires: u64,
}

/// What makes a timer due — one scheduler, three trigger kinds (#17).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum TimerKind {
    /// CIP-5: due at the end of block [`Timer::height`].
    Height,
    /// Due at the start of the first block whose timestamp is at least
    /// `timestamp_ms` (unix ms), before that block's user transactions.
    Time {
        /// Unix milliseconds.
        timestamp_ms: u64,
    },
    /// Due at the end of every block whose committed executions wrote a
    /// watched key; stays until cancelled, expired or unfunded.
    State(Watch),
}

impl TimerKind {
    /// Every kind's name, as `chain.timers(kind=…)` accepts it.
    pub const NAMES: &'static [&'static str] = &["height", "time", "state"];

    /// `"height"`, `"time"` or `"state"`.
    pub fn name(&self) -> &'static str {
        match self {
            TimerKind::Height => "height",
            TimerKind::Time { .. } => "time",
            TimerKind::State(_) => "state",
        }
    }
}

/// A scheduled timer (CIP-5 §3.1), plus its FIFO sequence number and the
/// state-memory deposit its fee payer lent while it exists.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Timer {
    /// The actor that owns the timer and whose handler runs.
    pub actor_address: Address,
    /// A height timer's firing height; the height a time timer or a state
    /// watch was scheduled at.
    pub height: u64,
    /// Opaque bytes as scheduled (≤ 1 MiB).
    pub payload: Vec<u8>,
    /// Unique id (see [`timer_id`]).
    pub timer_id: Hash,
    /// Handler to invoke (`handle_timer` unless the payload names another).
    pub handler: String,
    /// Who pays each fire.
    pub fee_payer: Address,
    /// Most cycles one fire may use.
    pub gas_limit_per_fire: u64,
    /// Last height at which the timer may still fire.
    pub expires_at: u64,
    /// Global insertion sequence: orders the GC backlog. (FIFO within a
    /// height is the height index's slot order, which follows it.)
    pub seq: u64,
    /// Deposit taken from `fee_payer` at scheduling (`deposit_per_byte` ×
    /// the bytes the timer adds to state), refunded in full to `fee_payer`
    /// whenever the timer leaves state, however it leaves.
    pub deposit: u128,
    /// Priority fee per cycle its fee payer offers (#18) — its
    /// `max_priority_fee_per_cycle` (#31): paid to the block's proposer on
    /// the handler's cycles actually used. Under FIFO and priority ordering
    /// it is pre-charged on `gas_limit_per_fire` at each fire; under market
    /// ordering the pre-charge is `max_fee_per_cycle`'s and the tip is
    /// clamped to what that cap leaves above the lane basefee.
    pub bid: u64,
    /// The most its fee payer pays per handler cycle for the timer lane
    /// (lane basefee + priority fee) under market ordering (#31, CIP-1 v3
    /// Part III). While the lane basefee is above it, the timer waits,
    /// uncharged.
    pub max_fee_per_cycle: u64,
    /// What makes it due.
    pub kind: TimerKind,
    /// The key of an integer in the actor's own storage that funds this
    /// timer (`escrow=` at scheduling, #19): its deposit is taken from that
    /// integer and returned to it, each fire must be covered by it and its
    /// settled cost is subtracted from it. The coins stay in the actor's
    /// balance; the integer says whose they are. `None`: the fee payer's
    /// balance alone funds the timer (CIP-5).
    pub escrow_key: Option<Vec<u8>>,
}

/// What a schedule request asks to be due on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestedTrigger {
    /// `schedule_timer(height, …)`: a future height.
    Height(u64),
    /// `schedule_timer_at(timestamp_ms, …)`: a time after the current
    /// block's timestamp.
    Time(u64),
    /// `watch(keys, …)`: keys (or `"prefix*"`) of `actor` (default: the
    /// watching actor), with an explicit handler (default `handle_timer`).
    State {
        /// The watched actor.
        actor: Option<Address>,
        /// The entries as the actor wrote them.
        keys: Vec<String>,
        /// The handler to call.
        handler: Option<String>,
    },
}

impl Default for RequestedTrigger {
    fn default() -> Self {
        RequestedTrigger::Height(0)
    }
}

/// A schedule request as a host call carries it (CIP-5 §4.1):
/// `schedule_timer(height, payload)` is the request with every optional
/// field `None` (protocol defaults apply).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimerRequest {
    /// When it is due.
    pub trigger: RequestedTrigger,
    /// Opaque payload handed to the handler.
    pub payload: Vec<u8>,
    /// Who pays each fire and the deposit; `None` means the actor itself.
    pub fee_payer: Option<Address>,
    /// Cycles per fire; `None` means `TimerConfig.max_cycles_per_fire`.
    pub gas_limit: Option<u64>,
    /// Last height at which the timer may fire; `None` means the protocol TTL.
    pub expires_at: Option<u64>,
    /// Priority fee per cycle (`bid=` or `max_priority_fee_per_cycle=`,
    /// ≤ `TimerConfig.max_bid`); `None` means 0, or under market ordering
    /// the previous block's median tip ([`crate::lane::default_caps`]).
    pub bid: Option<u64>,
    /// The lane fee cap per cycle (#31); `None` means
    /// `2 × lane basefee + priority fee` ([`crate::lane::default_caps`]).
    pub max_fee_per_cycle: Option<u64>,
    /// A key of the actor's own storage holding the integer that funds the
    /// timer ([`Timer::escrow_key`]); only with the actor as fee payer.
    pub escrow_key: Option<Vec<u8>>,
}

/// What `timer_quote` is asked about: a height (default: the next block)
/// or a time, and a gas limit per fire (default: `max_cycles_per_fire`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuoteRequest {
    /// The height of a height timer.
    pub height: Option<u64>,
    /// The time (unix ms) of a time timer.
    pub timestamp_ms: Option<u64>,
    /// Cycles per fire.
    pub gas_limit: Option<u64>,
    /// The priority fee per cycle the timer would offer (`bid=` /
    /// `max_priority_fee_per_cycle=`), as scheduling defaults it.
    pub bid: Option<u64>,
    /// Its lane fee cap per cycle, as scheduling defaults it.
    pub max_fee_per_cycle: Option<u64>,
}

/// What a timer would cost and whether it would fire on time: the answer to
/// `pvm_host.timer_quote`, RPC `th_quoteTimer`, `timerhost quote` and the
/// Python package's `chain.quote_timer` (#17, after Hedera's
/// `hasScheduleCapacity` and Massa's quote).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerQuote {
    /// The height quoted (for a time quote: the next block's).
    pub height: u64,
    /// The time slot quoted (unix ms), for a time timer's quote.
    #[serde(default)]
    pub timestamp_ms: Option<u64>,
    /// The gas limit per fire quoted.
    pub gas_limit: u64,
    /// What one fire would pre-charge its fee payer at today's basefees
    /// (`(gas_limit + TIMER_FIRE_BASE_CYCLES) × cycle_basefee +
    /// max_cells_per_fire × cell_basefee`, plus `gas_limit ×` the bid —
    /// under market ordering, `gas_limit × max_fee_per_cycle`).
    pub max_cost: u128,
    /// The lane basefee of the current block (#31).
    pub lane_basefee: u64,
    /// The fee caps the quote priced (given or defaulted).
    pub max_fee_per_cycle: u64,
    /// The priority fee per cycle the quote priced (given or defaulted).
    pub max_priority_fee_per_cycle: u64,
    /// Fee caps by urgency, from the lane basefee and the previous block's
    /// median tip (CIP-1 v3 Part III's hints).
    pub suggested_fees: crate::lane::SuggestedFees,
    /// The deposit of a timer with an empty payload and the default handler
    /// (each payload or handler byte adds `deposit_per_byte`).
    pub deposit: u128,
    /// `TimerConfig.lane_cycles_per_block`.
    pub lane_budget: u64,
    /// Lane cycles already reserved by timers queued for that height or
    /// time slot (their `gas_limit_per_fire + TIMER_FIRE_BASE_CYCLES`);
    /// timers carried over from earlier blocks are not counted.
    pub reserved: u64,
    /// Timers queued for that height or time slot.
    pub queued: u64,
    /// Would one more such timer fire at that height without carry-over
    /// (lane and `max_fires_per_block`), counting the timers queued there?
    pub fits: bool,
}

impl Timer {
    /// `{"kind": "height", "height": h}`, `{"kind": "time", "timestamp_ms":
    /// t}` or `{"kind": "state", "actor": a, "keys": [...], "fires": n}`: the
    /// `trigger` of `TimerScheduled`, RPC timers and the Python `Timer`.
    pub fn trigger_value(&self) -> crate::Value {
        use crate::Value;
        let kind = (Value::str("kind"), Value::str(self.kind.name()));
        let entries = match &self.kind {
            TimerKind::Height => vec![kind, (Value::str("height"), Value::int(self.height))],
            TimerKind::Time { timestamp_ms } => {
                vec![
                    kind,
                    (Value::str("timestamp_ms"), Value::int(*timestamp_ms)),
                ]
            }
            TimerKind::State(watch) => vec![
                kind,
                (Value::str("actor"), Value::str(watch.actor.to_hex())),
                (
                    Value::str("keys"),
                    Value::List(watch.keys.iter().map(|k| Value::str(k.display())).collect()),
                ),
                (Value::str("fires"), Value::int(watch.fires)),
            ],
        };
        Value::dict_from(entries).expect("str keys are hashable")
    }
}

impl TimerQuote {
    /// The quote as the dict `pvm_host.timer_quote` and the Python package
    /// return (`height`, `gas_limit`, `max_cost`, `deposit`, `lane_budget`,
    /// `reserved`, `queued`, `fits`).
    pub fn to_value(&self) -> crate::Value {
        use crate::Value;
        Value::dict_from([
            (Value::str("height"), Value::int(self.height)),
            (
                Value::str("timestamp_ms"),
                self.timestamp_ms.map_or(Value::None, Value::int),
            ),
            (Value::str("gas_limit"), Value::int(self.gas_limit)),
            (Value::str("max_cost"), Value::int(self.max_cost)),
            (Value::str("deposit"), Value::int(self.deposit)),
            (Value::str("lane_budget"), Value::int(self.lane_budget)),
            (Value::str("reserved"), Value::int(self.reserved)),
            (Value::str("queued"), Value::int(self.queued)),
            (Value::str("fits"), Value::Bool(self.fits)),
            (Value::str("lane_basefee"), Value::int(self.lane_basefee)),
            (
                Value::str("max_fee_per_cycle"),
                Value::int(self.max_fee_per_cycle),
            ),
            (
                Value::str("max_priority_fee_per_cycle"),
                Value::int(self.max_priority_fee_per_cycle),
            ),
            (Value::str("suggested_fees"), self.suggested_fees.to_value()),
        ])
        .expect("str keys are hashable")
    }
}

/// Which delivery a timer fire is (CIP state-triggered timers §9): carried
/// by its receipt and its `TimerFired` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Delivery {
    /// Global delivery number: monotonic across blocks and restarts, never
    /// reused.
    pub deliver_seq: u64,
    /// The timer's how-manieth fire (from 1).
    pub fire_seq: u64,
    /// `keccak256(height BE ‖ parent_state_root ‖ timer_id ‖ fire_seq BE)`:
    /// what a handler can key idempotence on.
    pub deliver_id: Hash,
}

impl Delivery {
    /// The `deliver_id` of fire `fire_seq` of `timer_id` in block `height`
    /// whose parent's state root is `parent_state_root`.
    pub fn id(height: u64, parent_state_root: &Hash, timer_id: &Hash, fire_seq: u64) -> Hash {
        keccak256_concat(&[
            &height.to_be_bytes(),
            parent_state_root.as_bytes(),
            timer_id.as_bytes(),
            &fire_seq.to_be_bytes(),
        ])
    }
}

/// Why a fire runs: what `pvm_host.trigger()` reports beside its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FireDue {
    /// A height timer due at this height.
    Height(u64),
    /// A time timer due at this time (unix ms).
    Time(u64),
    /// A state watch: the watched keys the block wrote (at most
    /// [`MAX_REPORTED_MATCHED_KEYS`], in key order).
    State(Vec<Vec<u8>>),
}

/// Which fire is running, for `pvm_host.trigger()` (#17).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FireInfo {
    /// The timer firing.
    pub timer_id: Hash,
    /// Its how-manieth fire, from 1 (a height or time timer fires once; a
    /// state watch counts its fires).
    pub fire_seq: u64,
    /// What made it due.
    pub due: FireDue,
    /// The firing timer's [`Timer::escrow_key`]: a fire funded by one may
    /// ask for what is left in it to be paid out once its cost is settled
    /// (`pvm_host.release_escrow`).
    pub escrow_key: Option<Vec<u8>>,
}

impl FireInfo {
    /// `{"kind", "timer_id", "fire_seq", "due_height" | "due_timestamp_ms" |
    /// "matched_keys"}`: what `pvm_host.trigger()` returns inside a fire.
    pub fn to_value(&self) -> crate::Value {
        use crate::Value;
        let (kind, due) = match &self.due {
            FireDue::Height(h) => ("height", (Value::str("due_height"), Value::int(*h))),
            FireDue::Time(t) => ("time", (Value::str("due_timestamp_ms"), Value::int(*t))),
            FireDue::State(keys) => (
                "state",
                (
                    Value::str("matched_keys"),
                    Value::List(
                        keys.iter()
                            .map(|k| Value::str(String::from_utf8_lossy(k).into_owned()))
                            .collect(),
                    ),
                ),
            ),
        };
        Value::dict_from([
            (Value::str("kind"), Value::str(kind)),
            (
                Value::str("timer_id"),
                Value::Bytes(self.timer_id.as_bytes().to_vec()),
            ),
            (Value::str("fire_seq"), Value::int(self.fire_seq)),
            due,
        ])
        .expect("str keys are hashable")
    }
}

/// How an actor's handler is being invoked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// By a user transaction (or `pvm_host.call` from another actor): only
    /// public handlers that are not timer handlers.
    Transaction,
    /// By a timer fire: any public handler, timer handlers included. Its
    /// payload was paid for at scheduling, so delivering it costs no cells.
    TimerFire(FireInfo),
}

/// Names an actor can never expose as a handler: `deploy` runs once, and
/// the others are attributes the VM sets on every actor instance.
pub const RESERVED_HANDLER_NAMES: &[&str] = &["deploy", "storage", "address", "deployer"];

/// Why a name cannot be a handler, or `Ok` for a valid public handler name:
/// an ASCII identifier of 1..=[`MAX_HANDLER_BYTES`](crate::MAX_HANDLER_BYTES)
/// bytes that does not start with `_` and is not reserved. The one rule for
/// transactions, `pvm_host.call` and timers.
pub fn check_handler_name(name: &str) -> std::result::Result<(), String> {
    if name.len() > crate::MAX_HANDLER_BYTES {
        return Err(format!(
            "handler names are at most {} bytes, this one has {}",
            crate::MAX_HANDLER_BYTES,
            name.len()
        ));
    }
    let mut chars = name.chars();
    let identifier = match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => chars.all(|c| c.is_ascii_alphanumeric() || c == '_'),
        Some('_') => return Err("names starting with '_' are private, not handlers".into()),
        _ => false,
    };
    if !identifier {
        return Err("a handler is an ASCII identifier (letters, digits, '_')".into());
    }
    if RESERVED_HANDLER_NAMES.contains(&name) {
        return Err(format!(
            "'{name}' is reserved ({} are not handlers)",
            RESERVED_HANDLER_NAMES.join(", ")
        ));
    }
    Ok(())
}

impl Canonical for Timer {
    const NAME: &'static str = "timer";
}

/// `timer_id = keccak256(actor ‖ height BE ‖ payload ‖ schedule_nonce BE)`
/// (CIP-5 §3.3 with DESIGN.md's deviation: the actor's own schedule counter,
/// not the transaction nonce, so one transaction or handler can schedule two
/// identical timers).
pub fn timer_id(actor: &Address, height: u64, payload: &[u8], schedule_nonce: u64) -> Hash {
    keccak256_concat(&[
        actor.as_bytes(),
        &height.to_be_bytes(),
        payload,
        &schedule_nonce.to_be_bytes(),
    ])
}

/// Governed timer parameters (CIP-5 §6.4 + the lane budget, the per-block
/// fire quota and the deposit rate).
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimerConfig {
    /// Longest a timer may live past its scheduling height.
    pub max_ttl_blocks: u64,
    /// Largest `gas_limit_per_fire`, and the default.
    pub max_cycles_per_fire: u64,
    /// Cells every fire may use (flat cap, refunded when unused).
    pub max_cells_per_fire: u64,
    /// Most live timers one actor may hold.
    pub max_timers_per_actor: u32,
    /// GC budget per block for removing expired and unfunded timers.
    pub gc_cycles_per_block: u64,
    /// Cycles fired handlers may reserve per block (`LANE_TIMER_CYCLES`),
    /// [`TIMER_FIRE_BASE_CYCLES`] per fire included.
    pub lane_cycles_per_block: u64,
    /// Most timers one block fires (CIP-5 §8); the rest carry over in order.
    pub max_fires_per_block: u64,
    /// State-memory deposit per byte a timer adds to state, taken from its
    /// fee payer at scheduling and refunded when the timer leaves.
    #[serde(with = "crate::primitives::u128_string")]
    pub deposit_per_byte: u128,
    /// Most entries (keys or prefixes) one state watch may list.
    pub max_watch_keys: u32,
    /// Most watch hits one block evaluates (fires or removes); the rest
    /// wait, in order, for the next block.
    pub max_watch_matches_per_block: u64,
    /// Largest bid (priority fee per cycle) a timer may offer.
    pub max_bid: u64,
    /// How due timers are ordered: CIP-5's FIFO or the Globalbox's priority.
    pub ordering: TimerOrdering,
    /// Priority weight of a block of age (`score = w_age × age + w_bid × bid`).
    pub w_age: u64,
    /// Priority weight of a unit of bid.
    pub w_bid: u64,
    /// Most fires one target actor gets per block under priority and
    /// market ordering.
    pub max_fires_per_target: u64,
    /// Market ordering (#31): the share of `lane_cycles_per_block` the lane
    /// basefee steers toward (CIP-1 v3: 50).
    #[serde(default = "defaults::lane_target_percent")]
    pub lane_target_percent: u64,
    /// Market ordering: the lane basefee moves by at most `1 /` this per
    /// block (CIP-1 v3: 8, i.e. ±12.5 %).
    #[serde(default = "defaults::lane_basefee_change_denominator")]
    pub lane_basefee_change_denominator: u64,
    /// The lane basefee's floor, and its value under FIFO and priority
    /// ordering (where it is charged to nobody).
    #[serde(default = "defaults::min_lane_basefee")]
    pub min_lane_basefee: u64,
    /// Market ordering: the window (blocks) over which an actor's recent
    /// fires set its fairness weight (CIP-1 v3: 1,000).
    #[serde(default = "defaults::fairness_window_blocks")]
    pub fairness_window_blocks: u64,
    /// Market ordering (#50): the share, in percent, of a fire's *unused*
    /// reserved handler cycles that pays the lane basefee (the used ones
    /// always do). The basefee moves by what fires reserve, so reserving
    /// must cost what it moves: at 100, a timer reserving 550,000 cycles
    /// whose handler returns at once pays the lane basefee on all of them.
    #[serde(default = "defaults::lane_reservation_percent")]
    pub lane_reservation_percent: u64,
}

/// Defaults of the fields added after genesis files were first written, so
/// that a file without them still reads.
mod defaults {
    pub fn lane_target_percent() -> u64 {
        50
    }
    pub fn lane_basefee_change_denominator() -> u64 {
        8
    }
    pub fn min_lane_basefee() -> u64 {
        100
    }
    pub fn fairness_window_blocks() -> u64 {
        1_000
    }
    pub fn lane_reservation_percent() -> u64 {
        100
    }
}

/// How due timers are ordered (#18).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    BorshSerialize,
    BorshDeserialize,
    Serialize,
    Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TimerOrdering {
    /// CIP-5: each trigger kind in its own queue, FIFO, at its own place in
    /// the block (time timers at the start, the rest at the end).
    #[default]
    Fifo,
    /// The Globalbox: every due timer, of every kind, queued by score
    /// (`w_age × age + w_bid × bid`) and materialised at the end of the
    /// block under the block and per-target quotas.
    Priority,
    /// CIP-1 v3 Part III's fee market (#31): the Globalbox ordered by
    /// effective priority × fairness weight (plus `w_age × age`), under a
    /// lane basefee that moves toward `lane_target_percent` of the lane.
    Market,
}

impl TimerOrdering {
    /// `"fifo"`, `"priority"` or `"market"`.
    pub fn as_str(self) -> &'static str {
        match self {
            TimerOrdering::Fifo => "fifo",
            TimerOrdering::Priority => "priority",
            TimerOrdering::Market => "market",
        }
    }

    /// Do due timers wait in the Globalbox (priority and market)?
    pub fn uses_globalbox(self) -> bool {
        self != TimerOrdering::Fifo
    }
}

impl Canonical for TimerConfig {
    const NAME: &'static str = "timer config";
}

impl Default for TimerConfig {
    fn default() -> Self {
        Self {
            max_ttl_blocks: 2_592_000,
            max_cycles_per_fire: 550_000,
            max_cells_per_fire: 550_000,
            max_timers_per_actor: 1_024,
            gc_cycles_per_block: 5_000_000,
            lane_cycles_per_block: 100_000_000,
            max_fires_per_block: 10_000,
            deposit_per_byte: 1_000,
            max_watch_keys: 16,
            max_watch_matches_per_block: 1_000,
            max_bid: 1_000_000_000,
            ordering: TimerOrdering::Fifo,
            w_age: 1,
            w_bid: 1,
            max_fires_per_target: 10_000,
            lane_target_percent: defaults::lane_target_percent(),
            lane_basefee_change_denominator: defaults::lane_basefee_change_denominator(),
            min_lane_basefee: defaults::min_lane_basefee(),
            fairness_window_blocks: defaults::fairness_window_blocks(),
            lane_reservation_percent: defaults::lane_reservation_percent(),
        }
    }
}

/// Where timers stand under governance (AIP-125's pause and shutdown),
/// stored at [`keys::timer_status`](crate::keys::timer_status).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub enum TimerStatus {
    /// Timers are scheduled and fire as usual.
    #[default]
    Active,
    /// `PauseTimers`: nothing fires or is classified, due timers wait in
    /// order, scheduling is refused.
    Paused,
    /// `ShutdownTimers`: every pending timer is being removed, under the GC
    /// budget, with its deposit refunded; scheduling is refused.
    ShuttingDown,
    /// The shutdown finished: no timer is left; scheduling stays refused
    /// until `ResumeTimers`.
    Shutdown,
}

impl Canonical for TimerStatus {
    const NAME: &'static str = "timer status";
}

impl TimerStatus {
    /// The lowercase name used in events, RPC, the CLI and Python.
    pub fn as_str(self) -> &'static str {
        match self {
            TimerStatus::Active => "active",
            TimerStatus::Paused => "paused",
            TimerStatus::ShuttingDown => "shutting_down",
            TimerStatus::Shutdown => "shutdown",
        }
    }

    /// Can new timers be scheduled?
    pub fn accepts_schedules(self) -> bool {
        self == TimerStatus::Active
    }
}

/// The account that holds timer deposits while their timers exist (a system
/// address of CIP-5's reserved band, so it can never sign, deploy or be named
/// as a fee payer). Its balance is the sum of the live timers' deposits.
pub const TIMER_DEPOSIT_ESCROW: Address = Address::system(0x0b);

/// Most due timers and watch hits one block moves into the Globalbox under
/// priority ordering (#18). Far above any block's fire quota, so everything
/// due normally competes at once; it only bounds a block's work when a
/// million timers fall due together. Those enqueued later lose nothing:
/// their priority counts from their due height.
pub const GLOBALBOX_ENQUEUE_PER_BLOCK: u64 = 50_000;

/// Bytes of timer records the Globalbox's enqueue may move in one block
/// (#29): besides [`GLOBALBOX_ENQUEUE_PER_BLOCK`] records, since a record
/// may hold a 1 MiB payload, and each one enqueued is read, hashed and
/// rewritten. At least one record is always enqueued.
pub const GLOBALBOX_ENQUEUE_BYTES_PER_BLOCK: u64 = 32 << 20;

/// Bytes of timer records the GC may remove or move to its backlog in one
/// block (#29), besides its cycles: each is read and hashed (a move also
/// rewrites it). At least one record is always handled.
pub const GC_RECORD_BYTES_PER_BLOCK: u64 = 32 << 20;

/// Cycles the GC budget is charged for removing one expired or unfunded timer.
pub const GC_CYCLES_PER_REMOVAL: u64 = 1_000;

/// Cost of classifying a dead timer that cannot be removed this block and
/// moving it to the GC backlog. A block moves at most
/// `gc_cycles_per_block / GC_CYCLES_PER_DEFERRAL` timers: ten times more than
/// it removes, so live timers queued behind a storm of dead ones keep firing
/// while the backlog drains, and the work per block stays bounded.
pub const GC_CYCLES_PER_DEFERRAL: u64 = 100;

impl TimerConfig {
    /// Rejects zero or absurd values, naming the field.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &'static str, reason: String| Err(Error::Config { field, reason });
        let positive: [(&'static str, u64); 13] = [
            ("max_ttl_blocks", self.max_ttl_blocks),
            ("max_cycles_per_fire", self.max_cycles_per_fire),
            ("max_cells_per_fire", self.max_cells_per_fire),
            ("max_timers_per_actor", self.max_timers_per_actor as u64),
            ("gc_cycles_per_block", self.gc_cycles_per_block),
            ("lane_cycles_per_block", self.lane_cycles_per_block),
            ("max_fires_per_block", self.max_fires_per_block),
            ("max_watch_keys", self.max_watch_keys as u64),
            (
                "max_watch_matches_per_block",
                self.max_watch_matches_per_block,
            ),
            ("max_fires_per_target", self.max_fires_per_target),
            ("min_lane_basefee", self.min_lane_basefee),
            (
                "lane_basefee_change_denominator",
                self.lane_basefee_change_denominator,
            ),
            ("fairness_window_blocks", self.fairness_window_blocks),
        ];
        for (field, value) in positive {
            if value == 0 {
                return bad(field, "must be greater than 0".into());
            }
        }
        // ~100 years of one-second blocks.
        if self.max_ttl_blocks > 3_153_600_000 {
            return bad(
                "max_ttl_blocks",
                format!("{} is absurd (at most 3,153,600,000)", self.max_ttl_blocks),
            );
        }
        // Checked (#50): 2^64 − 2999 once wrapped to a small sum and passed.
        let fits = self
            .max_cycles_per_fire
            .checked_add(TIMER_FIRE_BASE_CYCLES)
            .is_some_and(|reserve| reserve <= self.lane_cycles_per_block);
        if !fits {
            return bad(
                "max_cycles_per_fire",
                format!(
                    "{} plus the fire base charge {TIMER_FIRE_BASE_CYCLES} exceeds lane_cycles_per_block {}: such a timer could never be admitted",
                    self.max_cycles_per_fire, self.lane_cycles_per_block
                ),
            );
        }
        // Scores stay far inside i128: w ≤ 2^40, bid ≤ 2^40, height < 2^64.
        for (field, w) in [("w_age", self.w_age), ("w_bid", self.w_bid)] {
            if w > 1 << 40 {
                return bad(field, "must be at most 2^40".into());
            }
        }
        // A bid of 2^40 per cycle on 2^40 lane cycles still fits in u128.
        if self.max_bid > 1 << 40 {
            return bad("max_bid", "must be at most 2^40".into());
        }
        if self.max_watch_keys > 1_024 {
            return bad("max_watch_keys", "must be at most 1,024".into());
        }
        if self.max_watch_matches_per_block > 1_000_000 {
            return bad(
                "max_watch_matches_per_block",
                "must be at most 1,000,000".into(),
            );
        }
        if self.max_fires_per_block > 1_000_000 {
            return bad("max_fires_per_block", "must be at most 1,000,000".into());
        }
        // A deposit of 2^96 per byte over a 1 MiB timer still fits in u128.
        if self.deposit_per_byte > 1 << 96 {
            return bad("deposit_per_byte", "must be at most 2^96".into());
        }
        if self.lane_cycles_per_block > 1 << 40 {
            return bad("lane_cycles_per_block", "must be at most 2^40".into());
        }
        if self.max_cells_per_fire > 1 << 32 {
            return bad("max_cells_per_fire", "must be at most 2^32".into());
        }
        if self.max_timers_per_actor > 1_000_000 {
            return bad("max_timers_per_actor", "must be at most 1,000,000".into());
        }
        if self.gc_cycles_per_block < GC_CYCLES_PER_REMOVAL {
            return bad(
                "gc_cycles_per_block",
                format!("must be at least {GC_CYCLES_PER_REMOVAL} (one removal)"),
            );
        }
        if self.gc_cycles_per_block > 1 << 40 {
            return bad("gc_cycles_per_block", "must be at most 2^40".into());
        }
        if !(1..=100).contains(&self.lane_target_percent) {
            return bad(
                "lane_target_percent",
                format!(
                    "{} is not a percentage in 1..=100",
                    self.lane_target_percent
                ),
            );
        }
        if self.lane_basefee_change_denominator > 1_000 {
            return bad(
                "lane_basefee_change_denominator",
                "must be at most 1,000".into(),
            );
        }
        if self.min_lane_basefee > crate::lane::MAX_LANE_BASEFEE {
            return bad(
                "min_lane_basefee",
                format!("must be at most {}", crate::lane::MAX_LANE_BASEFEE),
            );
        }
        if self.fairness_window_blocks > 100_000_000 {
            return bad(
                "fairness_window_blocks",
                "must be at most 100,000,000".into(),
            );
        }
        if self.lane_reservation_percent > 100 {
            return bad(
                "lane_reservation_percent",
                format!(
                    "{} is not a percentage in 0..=100",
                    self.lane_reservation_percent
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_cip5_and_validate() {
        let c = TimerConfig::default();
        assert_eq!(c.max_ttl_blocks, 2_592_000);
        assert_eq!(c.max_cycles_per_fire, 550_000);
        assert_eq!(c.max_cells_per_fire, 550_000);
        assert_eq!(c.max_timers_per_actor, 1_024);
        assert_eq!(c.gc_cycles_per_block, 5_000_000);
        assert_eq!(c.max_fires_per_block, 10_000);
        c.validate().unwrap();
    }

    #[test]
    fn zero_and_absurd_values_are_named() {
        let c = TimerConfig {
            max_ttl_blocks: 0,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("max_ttl_blocks"));
        let c = TimerConfig {
            max_cycles_per_fire: 200_000_000,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("never be admitted"));
        let c = TimerConfig {
            gc_cycles_per_block: 10,
            ..Default::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .to_string()
            .contains("gc_cycles_per_block"));
    }

    #[test]
    fn handler_names_follow_one_rule() {
        for ok in ["tick", "handle_timer", "a1", "On_Fire"] {
            check_handler_name(ok).unwrap();
        }
        for bad in [
            "", "_private", "__init__", "1x", "a-b", "deploy", "storage", "address", "deployer",
            "é",
        ] {
            assert!(check_handler_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_handler_name(&"a".repeat(crate::MAX_HANDLER_BYTES)).is_ok());
        assert!(
            check_handler_name(&"a".repeat(crate::MAX_HANDLER_BYTES + 1))
                .unwrap_err()
                .contains("at most")
        );
    }

    #[test]
    fn timer_ids_differ_by_every_input() {
        let a = Address([1; 20]);
        let base = timer_id(&a, 10, b"p", 0);
        assert_ne!(base, timer_id(&Address([2; 20]), 10, b"p", 0));
        assert_ne!(base, timer_id(&a, 11, b"p", 0));
        assert_ne!(base, timer_id(&a, 10, b"q", 0));
        assert_ne!(base, timer_id(&a, 10, b"p", 1));
    }
}
