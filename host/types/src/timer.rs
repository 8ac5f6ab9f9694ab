//! CIP-5 timer data shared by the VM, the timers crate and the chain: the
//! [`Timer`] record (§3.1), the [`TimerRequest`] a schedule carries from
//! the VM to the timers crate, every timer cost and limit, and the one rule
//! for handler names ([`check_handler_name`]). The governed parameters are
//! in [`crate::timer_config`], a quote in [`crate::quote`].

use borsh::{BorshDeserialize, BorshSerialize};

use crate::encoding::Canonical;
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
/// What a quote with `book=True` adds (#45): the slot, the horizon total and
/// up to 256 heights looked through for free ones, a read each.
pub const BOOKING_QUOTE_CYCLES: u64 = 10 * (256 + 2);

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
///
/// Its borsh encoding is hand-written ([`crate::timer_encoding`]): the
/// fields #45 added ([`Timer::retry`], [`Timer::booked`]) are encoded only
/// when set, so a timer without them keeps the bytes — and the record hash
/// in its bucket — it always had.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// Its retry policy (#45): a failed fire is re-armed until the policy
    /// runs out, then dead-lettered. `None`: a failed fire is final.
    pub retry: Option<crate::retry::RetryPolicy>,
    /// Was it booked (#45, `pvm_host.book_timer`)? A booked timer holds
    /// capacity in the block it is due in and fires at that block's start,
    /// before every other fire and transaction.
    pub booked: bool,
}

impl Timer {
    /// The sequence number its fee payer's consent is judged by
    /// (`revoke_timer_payments` revokes every timer scheduled before a
    /// mark): a retry keeps the consent of the schedule it retries.
    pub fn consent_seq(&self) -> u64 {
        self.retry.as_ref().map_or(self.seq, |r| r.consent_seq)
    }
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
    /// `retries=`: how many times a failed fire is re-armed (#45); `None`
    /// or 0: never.
    pub retries: Option<u32>,
    /// `retry_backoff=`: the delay before the first retry — blocks for a
    /// height timer or a watch, seconds for a time timer — doubled for each
    /// retry after it. Required with `retries`.
    pub retry_backoff: Option<u64>,
    /// Book the timer's capacity in the block it is due in (#45,
    /// `book_timer` / `book_timer_at`): a height or time trigger only.
    pub book: bool,
    /// `handler=` of a booking: the handler its fire invokes (default
    /// `handle_timer`, or the one its payload names as for any timer).
    pub handler: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

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
