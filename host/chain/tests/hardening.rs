//! #28: nothing an actor controls may make block production fail or touch
//! an account that did not consent. Each test is named for the bug it
//! pins (`bugN_…`, the issue's numbering) and failed before its fix; all of
//! them run real actors on the real VM, and every block they mine is checked
//! for supply conservation and for the cron registry's books.

mod common;

use common::{cron_escrows, Net, PROPOSER};
use timerhost_types::{Address, ErrorKind, Receipt, TxSource, Value, CRON_REGISTRY_ADDRESS};

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

const FUNDS: u128 = 10u128.pow(18);

fn fires(receipts: &[Receipt]) -> Vec<&Receipt> {
    receipts
        .iter()
        .filter(|r| {
            matches!(r.source, TxSource::Deferred { .. })
                && r.events.iter().any(|e| e.name == "TimerFired")
        })
        .collect()
}

fn addr(a: &Address) -> Value {
    Value::str(a.to_hex())
}

/// An actor with an escrow-funded time timer whose handler does what
/// `mode` says before asking for its escrow to be released.
const ESCROWED: &str = r#"
import pvm_host

class Escrowed:
    def arm(self, at_ms, amount, mode, to):
        self.storage["fund"] = amount
        self.storage["mode"] = mode
        self.storage["to"] = to
        pvm_host.schedule_timer_at(at_ms, b"", escrow="fund", gas_limit=50_000)

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["ran"] = True
        mode = self.storage["mode"]
        if mode == "inflate":
            self.storage["fund"] = 10**30
        elif mode == "drain":
            pvm_host.transfer(self.storage["to"], pvm_host.balance(pvm_host.actor_address()))
        elif mode == "refused":
            errors = []
            for to in ("0x0000000000000000000000000000000000000000", "0x0000000000000000000000000000000000000006"):
                try:
                    pvm_host.release_escrow(to)
                except pvm_host.HostError as e:
                    errors.append(str(e))
            self.storage["errors"] = errors
            return
        pvm_host.release_escrow(self.storage["to"])
"#;

fn arm(n: &mut Net, mode: &str) -> (Address, Address, u64) {
    let actor = n.deploy(1, ESCROWED, vec![], FUNDS);
    let to = n.b[5].address();
    let at = n.now() + 5_000;
    n.call_ok(
        1,
        actor,
        "arm",
        vec![
            Value::int(at),
            Value::int(10u128.pow(16)),
            Value::str(mode),
            addr(&to),
        ],
        0,
    );
    (actor, to, at)
}

/// Bug 1: an escrow int above the actor's balance at release — written by
/// the handler, or left there after the handler paid the balance away —
/// fails that fire (its writes reverted, its fee charged), never the block;
/// the chain goes on and governance can still get in.
#[test]
fn bug1_release_escrow_beyond_the_balance_fails_the_fire_not_the_block() {
    for mode in ["inflate", "drain"] {
        let mut n = Net::new();
        let (actor, to, at) = arm(&mut n, mode);
        let before = n.balance(&to);
        let receipts = n.block_at(vec![], at);
        let fired = fires(&receipts);
        assert_eq!(fired.len(), 1, "{mode}");
        let error = fired[0].error.as_ref().expect("the fire failed");
        assert_eq!(error.kind, ErrorKind::InsufficientFunds, "{mode}");
        assert!(
            error.message.contains("more than the actor's balance"),
            "{mode}: {}",
            error.message
        );
        assert!(fired[0].fee_paid > 0, "{mode}: the fee is charged as usual");
        assert_eq!(n.storage(&actor, "ran"), None, "{mode}: writes reverted");
        assert_eq!(n.balance(&to), before, "{mode}: nothing was paid out");
        // The escrow paid the fire and nothing else.
        assert_eq!(
            n.storage(&actor, "fund").unwrap().as_u128().unwrap(),
            10u128.pow(16) - fired[0].fee_paid,
            "{mode}"
        );
        // Later blocks, with transactions, are produced.
        let pause = n.b[0].system(timerhost_types::SystemInstruction::PauseTimers);
        assert!(n.block(vec![pause])[0].is_success(), "{mode}");
        n.block(vec![]);
    }
}

/// Bug 5: `release_escrow` refuses the zero address and system actors, as
/// `pvm_host.transfer` does (one rule: `Address::payment_refusal`).
#[test]
fn bug5_release_escrow_to_the_zero_address_or_a_system_actor_is_refused() {
    let mut n = Net::new();
    let (actor, _, at) = arm(&mut n, "refused");
    let registry_before = n.balance(&CRON_REGISTRY_ADDRESS);
    let receipts = n.block_at(vec![], at);
    let fired = fires(&receipts);
    assert!(fired[0].is_success(), "{:?}", fired[0].error);
    let Some(Value::List(errors)) = n.storage(&actor, "errors") else {
        panic!("the handler recorded its refusals");
    };
    let text: Vec<String> = errors.iter().map(|e| format!("{e:?}")).collect();
    assert_eq!(text.len(), 2);
    assert!(text[0].contains("zero address"), "{}", text[0]);
    assert!(text[1].contains("system actors"), "{}", text[1]);
    assert_eq!(n.balance(&CRON_REGISTRY_ADDRESS), registry_before);
    assert_eq!(n.balance(&Address::ZERO), 0);
    // The escrow stays where it was: nothing was released.
    assert_eq!(
        n.storage(&actor, "fund").unwrap().as_u128().unwrap(),
        10u128.pow(16) - fired[0].fee_paid
    );
    // A plain transfer to a system actor is refused the same way.
    let tx = n.b[2].transfer(CRON_REGISTRY_ADDRESS, 5);
    let p = n.chain.produce_block(&[tx], n.now() + 1, PROPOSER).unwrap();
    assert_eq!(p.rejected.len(), 1);
    assert!(
        p.rejected[0].2.to_string().contains("system actors"),
        "{}",
        p.rejected[0].2
    );
}

/// A target that owns cron jobs of its own and can cancel them.
const OWNER_TARGET: &str = r#"
import pvm_host

CRON = "0x0000000000000000000000000000000000000006"

class OwnerTarget:
    def own_job(self, at):
        return pvm_host.call(CRON, "schedule", pvm_host.actor_address(), "ping", [], at, 0, 0, 20_000, value=pvm_host.value())

    def ping(self):
        self.storage["pings"] = self.storage.get("pings", 0) + 1

    def cancel_job(self, job):
        pvm_host.call(CRON, "cancel", job)
"#;

/// Bug 2: job A's run cancels job B (owned by A's target) after both were
/// admitted in one block. B's escrow refunds only what B's run cannot use,
/// B's run pays for itself and sends its leftover to B's owner: the
/// registry's balance is the sum of its escrows after the block, and no
/// other job paid for B.
#[test]
fn bug2_a_run_cancelling_an_admitted_job_pays_nothing_from_other_escrows() {
    let mut n = Net::new();
    let target = n.deploy(1, OWNER_TARGET, vec![], 0);
    let at_s = n.now() / 1000 + 30;
    let escrow = 10u128.pow(16);
    // Job 1 (a wallet's): cancels job 2 when it runs.
    n.call_ok(
        2,
        CRON_REGISTRY_ADDRESS,
        "schedule",
        vec![
            addr(&target),
            Value::str("cancel_job"),
            Value::List(vec![Value::str("2")]),
            Value::int(at_s),
            Value::int(0),
            Value::int(0),
            Value::int(50_000),
        ],
        escrow,
    );
    // Job 2: the target's own, due at the same time, admitted right after.
    n.call_ok(1, target, "own_job", vec![Value::int(at_s)], escrow);
    let owner_before = n.balance(&target);
    let bystander = n.deploy(3, OWNER_TARGET, vec![], 0);
    n.call_ok(
        3,
        bystander,
        "own_job",
        vec![Value::int(at_s + 3_600)],
        escrow,
    );
    let bystander_escrow = cron_escrows(&n.chain);
    assert_eq!(bystander_escrow.len(), 3);

    let receipts = n.block_at(vec![], at_s * 1000);
    let fired = fires(&receipts);
    assert_eq!(fired.len(), 2, "both runs were admitted");
    assert!(fired.iter().all(|r| r.is_success()));
    let b_fee = fired[1].fee_paid;
    // Job 2 never pinged, its owner got all of its escrow but its run's fee.
    assert_eq!(n.storage(&target, "pings"), None);
    assert_eq!(n.balance(&target) - owner_before, escrow - b_fee);
    // Only the bystander's job is left, its escrow untouched.
    let left = cron_escrows(&n.chain);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0], bystander_escrow[2]);
    assert_eq!(n.balance(&CRON_REGISTRY_ADDRESS), left[0]);
}

/// An actor whose escrow-funded height timer goes unfunded, with a watch
/// on its own escrow key.
const WATCHED_ESCROW: &str = r#"
import pvm_host

class WatchedEscrow:
    def arm(self, height):
        self.storage["fund"] = 10**16
        pvm_host.schedule_timer_ex(height, b"", escrow="fund", gas_limit=50_000)
        pvm_host.watch(["fund"], handler="on_fund", gas_limit=50_000)

    def starve(self):
        self.storage["fund"] = 1

    def on_fund(self, payload):
        self.storage["seen"] = self.storage.get("seen", 0) + 1
"#;

/// Bug 6: the protocol's own write to actor storage at the end of a block
/// (an unfunded timer's deposit coming back to its escrow) wakes the
/// watches on that key in the next block, like any end-of-block write.
#[test]
fn bug6_protocol_escrow_credits_wake_watches() {
    let mut n = Net::new();
    let actor = n.deploy(1, WATCHED_ESCROW, vec![], FUNDS);
    let due = n.chain.head().unwrap().height + 4;
    n.call_ok(1, actor, "arm", vec![Value::int(due)], 0);
    n.call_ok(1, actor, "starve", vec![], 0);
    while n.chain.head().unwrap().height < due - 1 {
        n.block(vec![]);
    }
    let seen = |n: &Net| n.storage(&actor, "seen").and_then(|v| v.as_u128());
    let before = seen(&n);
    // Block `due`: the timer is removed unfunded, its deposit back in "fund".
    let receipts = n.block(vec![]);
    assert!(receipts
        .iter()
        .flat_map(|r| &r.events)
        .any(|e| e.name == "TimerCancelledInsufficientFunds"));
    assert!(
        n.storage(&actor, "fund").unwrap().as_u128().unwrap() > 1,
        "the deposit came back to the escrow"
    );
    assert_eq!(seen(&n), before, "no write in this block's transactions");
    n.block(vec![]);
    assert_eq!(
        seen(&n),
        Some(before.unwrap_or(0) + 1),
        "the credit woke the watch"
    );
}

/// Time timers that each write `size` bytes when they fire.
const BLOBS: &str = r#"
import pvm_host

class Blobs:
    def arm(self, count, at_ms, size):
        self.storage["size"] = size
        for i in range(count):
            pvm_host.schedule_timer_at(at_ms, str(i).encode(), gas_limit=500_000)

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["blob" + payload.decode()] = b"x" * self.storage["size"]
        self.storage["order"] = self.storage.get("order", []) + [int(payload.decode())]
"#;

/// Bug 4: fires count against the block's cells like transactions do. 60
/// fires of 540 KB each (32 MB) are spread over blocks of at most
/// `max_block_cells` (16 MB), carried over in order; 100 small fires still
/// fire in one block (a fire holds its cells limit only until it has run).
#[test]
fn bug4_fires_never_exceed_the_blocks_cells() {
    let mut n = Net::new();
    let max_block_cells = n.chain.basefee_config().unwrap().max_block_cells;
    let actor = n.deploy(1, BLOBS, vec![], FUNDS);
    let at = n.now() + 5_000;
    n.call_ok(
        1,
        actor,
        "arm",
        vec![Value::int(60), Value::int(at), Value::int(540_000)],
        0,
    );
    let mut fired = 0;
    let mut blocks = 0;
    let mut ts = at;
    while fired < 60 {
        let receipts = n.block_at(vec![], ts);
        let cells: u64 = receipts.iter().map(|r| r.cells_used).sum();
        assert!(
            cells <= max_block_cells,
            "block of {cells} cells > {max_block_cells}"
        );
        let this = fires(&receipts);
        assert!(this.iter().all(|r| r.is_success()));
        assert!(!this.is_empty(), "every block fires what fits");
        fired += this.len();
        blocks += 1;
        ts += 1_000;
    }
    assert!(blocks >= 2, "32 MB of fires cannot fit one 16 MB block");
    let Some(Value::List(order)) = n.storage(&actor, "order") else {
        panic!("no fire recorded its order");
    };
    let order: Vec<u128> = order.iter().map(|v| v.as_u128().unwrap()).collect();
    assert_eq!(
        order,
        (0..60).collect::<Vec<u128>>(),
        "carried over in order"
    );

    // Small fires: held cells come back after each round, so all fire at once.
    let small = n.deploy(2, BLOBS, vec![], FUNDS);
    let at = n.now() + 5_000;
    n.call_ok(
        2,
        small,
        "arm",
        vec![Value::int(100), Value::int(at), Value::int(10)],
        0,
    );
    let receipts = n.block_at(vec![], at);
    assert_eq!(fires(&receipts).len(), 100);
}

/// An escrow-funded timer whose deposit alone exceeds a fire's maximum
/// cost, and whose escrow key the actor then fills with something else.
const NOT_AN_INT: &str = r#"
import pvm_host

class NotAnInt:
    def arm(self, at_ms):
        self.storage["fund"] = 10**16
        pvm_host.schedule_timer_at(at_ms, b"x" * 600_000, escrow="fund", gas_limit=1)

    def spoil(self):
        self.storage["fund"] = "not money"

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["ran"] = True
"#;

/// An escrow that holds no int pays for nothing — not even with the
/// deposit it gets back — so its timer leaves unfunded and unrun, and the
/// block is produced (the pre-charge is never held out of a non-int).
#[test]
fn an_escrow_key_holding_no_int_leaves_its_timer_unfunded_not_the_block_failed() {
    let mut n = Net::new();
    let actor = n.deploy(1, NOT_AN_INT, vec![], FUNDS);
    let at = n.now() + 5_000;
    n.call_ok(1, actor, "arm", vec![Value::int(at)], 0);
    n.call_ok(1, actor, "spoil", vec![], 0);
    let receipts = n.block_at(vec![], at);
    assert!(fires(&receipts).is_empty());
    assert!(receipts
        .iter()
        .flat_map(|r| &r.events)
        .any(|e| e.name == "TimerCancelledInsufficientFunds"));
    assert_eq!(n.storage(&actor, "ran"), None);
    assert_eq!(n.storage(&actor, "fund"), Some(Value::str("not money")));
    n.block(vec![]);
}
