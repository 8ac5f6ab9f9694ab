//! Every actor-facing API function, exercised through the real VM.

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use common::{addr, call, deployed, fire, limits, ok};
use timerhost_types::{ErrorKind, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::Vm;

const COUNTER: &str = r#"
import pvm_host

class Counter:
    def deploy(self, start=0):
        self.storage["n"] = start

    def bump(self, by=1):
        n = self.storage.get("n", 0) + by
        self.storage["n"] = n
        pvm_host.emit("Bumped", {"n": n, "by": by})
        return n

    def fail_after_write(self):
        self.storage["n"] = 999
        pvm_host.emit("Never", {})
        raise ValueError("nope")

    def handle_timer(self, payload: bytes):
        self.storage["last_payload"] = payload
"#;

#[test]
fn counter_deploy_bump_and_events() {
    let (vm, mut host, actor) = deployed(COUNTER, &[Value::int(5)]);
    assert_eq!(host.storage_value(&actor, "n"), Some(Value::int(5)));
    let outcome = call(&vm, &mut host, &actor, "bump", &[Value::int(2)]);
    assert_eq!(ok(&outcome), Value::int(7));
    assert_eq!(outcome.events.len(), 1);
    assert_eq!(outcome.events[0].name, "Bumped");
    assert_eq!(outcome.events[0].emitter, actor);
    assert_eq!(outcome.events[0].data.get("n"), Some(&Value::int(7)));
    assert!(outcome.cycles_used > 0 && outcome.cells_used > 0);
    assert_eq!(host.open_checkpoints(), 0);
}

#[test]
fn exception_reverts_writes_and_events_with_traceback() {
    let (vm, mut host, actor) = deployed(COUNTER, &[]);
    let outcome = call(&vm, &mut host, &actor, "fail_after_write", &[]);
    let error = outcome.result.clone().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Revert);
    assert_eq!(error.message, "ValueError: nope");
    let traceback = error.traceback.expect("traceback");
    assert!(
        traceback.contains("line 17, in fail_after_write"),
        "{traceback}"
    );
    assert!(outcome.events.is_empty());
    assert_eq!(host.storage_value(&actor, "n"), Some(Value::int(0)));
}

#[test]
fn timer_handler_receives_bytes() {
    let (vm, mut host, actor) = deployed(COUNTER, &[]);
    let outcome = fire(
        &vm,
        &mut host,
        &actor,
        "handle_timer",
        &[Value::Bytes(b"tick".to_vec())],
    );
    assert!(outcome.is_success(), "{:?}", outcome.result);
    assert_eq!(
        host.storage_value(&actor, "last_payload"),
        Some(Value::Bytes(b"tick".to_vec()))
    );
}

const GUARDED: &str = r#"
import pvm_host
from pvm_host import timer_handler

class Guarded:
    def handle_timer(self, payload):
        self.storage["default"] = payload

    @pvm_host.timer_handler
    def on_tick(self, payload):
        self.storage["ticks"] = self.storage.get("ticks", 0) + 1

    @timer_handler
    def on_tock(self, payload):
        self.storage["tocks"] = 1

    def public(self):
        return "anyone"

    def poke(self, other, handler):
        return pvm_host.call(other, handler, b"forged")
"#;

/// Bug 4: `handle_timer` and `@pvm_host.timer_handler` methods run only
/// from a timer fire; a transaction naming one is refused, says why, pays
/// only the failed call (the actor lookup and its argument cells) and
/// writes nothing.
#[test]
fn timer_handlers_are_refused_to_transactions_and_run_from_fires() {
    let (vm, mut host, actor) = deployed(GUARDED, &[]);
    let compiled = vm.validate_and_compile(GUARDED).unwrap();
    assert_eq!(
        compiled.timer_handlers,
        ["handle_timer", "on_tick", "on_tock"]
    );
    let payload = [Value::Bytes(b"x".to_vec())];
    for handler in ["handle_timer", "on_tick", "on_tock"] {
        let refused = call(&vm, &mut host, &actor, handler, &payload);
        let error = refused.result.clone().unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unauthorized, "{handler}");
        assert!(
            error.message.contains("only a timer fire can invoke it"),
            "{}",
            error.message
        );
        assert_eq!(
            refused.cycles_used,
            timerhost_vm::costs::host::ACTOR_LOOKUP,
            "{handler}: only the lookup is charged"
        );
        assert!(refused.cells_used > 0, "the arguments still cost cells");
        assert_eq!(host.open_checkpoints(), 0);
    }
    assert_eq!(host.storage_value(&actor, "default"), None);
    assert_eq!(host.storage_value(&actor, "ticks"), None);
    assert_eq!(
        ok(&call(&vm, &mut host, &actor, "public", &[])),
        Value::str("anyone")
    );

    for handler in ["handle_timer", "on_tick", "on_tock"] {
        let fired = fire(&vm, &mut host, &actor, handler, &payload);
        assert!(fired.is_success(), "{handler}: {:?}", fired.result);
    }
    assert_eq!(host.storage_value(&actor, "ticks"), Some(Value::int(1)));
    assert_eq!(host.storage_value(&actor, "tocks"), Some(Value::int(1)));
}

/// Bug 4 through `pvm_host.call`: an actor cannot forge a fire of another
/// actor's timer handler; the callee is never entered.
#[test]
fn pvm_host_call_cannot_reach_a_timer_handler() {
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let (attacker, victim) = (addr(1), addr(2));
    for a in [attacker, victim] {
        host.install_actor(a, GUARDED);
        assert!(vm
            .deploy(&mut host, &a, GUARDED, &[], limits())
            .is_success());
    }
    for handler in ["handle_timer", "on_tick"] {
        let outcome = call(
            &vm,
            &mut host,
            &attacker,
            "poke",
            &[Value::str(victim.to_hex()), Value::str(handler)],
        );
        let error = outcome.result.unwrap_err();
        assert_eq!(error.kind, ErrorKind::Unauthorized, "{handler}");
        assert!(error.message.contains("timer handler"), "{}", error.message);
    }
    assert_eq!(host.storage_value(&victim, "ticks"), None);
    assert_eq!(host.storage_value(&victim, "default"), None);
}

/// Bug 1 at the VM: a fire's payload was paid for at scheduling, so
/// delivering a 1,000,000-byte payload costs no cells and the handler sees
/// every byte.
#[test]
fn a_fire_delivers_a_megabyte_payload_without_charging_cells() {
    const BIG: &str = r#"
class Big:
    def handle_timer(self, payload):
        self.storage["len"] = len(payload)
        self.storage["last"] = payload[-1]
"#;
    let (vm, mut host, actor) = deployed(BIG, &[]);
    let mut payload = vec![7u8; 1_000_000];
    payload[999_999] = 42;
    let outcome = fire(
        &vm,
        &mut host,
        &actor,
        "handle_timer",
        &[Value::Bytes(payload)],
    );
    assert!(outcome.is_success(), "{:?}", outcome.result);
    assert_eq!(
        host.storage_value(&actor, "len"),
        Some(Value::int(1_000_000))
    );
    assert_eq!(host.storage_value(&actor, "last"), Some(Value::int(42)));
    assert!(
        outcome.cells_used < 1_000,
        "only the handler's own writes cost cells, not the payload: {}",
        outcome.cells_used
    );
}

#[test]
fn unknown_and_private_handlers_are_rejected() {
    let (vm, mut host, actor) = deployed(COUNTER, &[]);
    assert_eq!(
        call(&vm, &mut host, &actor, "nope", &[]).error_kind(),
        Some(ErrorKind::NotFound)
    );
    assert_eq!(
        call(&vm, &mut host, &actor, "_private", &[]).error_kind(),
        Some(ErrorKind::InvalidInput)
    );
    assert_eq!(
        call(&vm, &mut host, &actor, "deploy", &[]).error_kind(),
        Some(ErrorKind::InvalidInput)
    );
    assert_eq!(
        call(&vm, &mut host, &addr(99), "bump", &[]).error_kind(),
        Some(ErrorKind::NotFound)
    );
}

const STORAGE: &str = r#"
class Store:
    def fill(self):
        self.storage["b:2"] = [1, (2, 3), {"k": b"v"}]
        self.storage["a:1"] = None
        self.storage["b:1"] = True
        self.storage["c"] = -12345678901234567890
        return "c" in self.storage

    def listing(self, prefix):
        return [k for k in self.storage.keys(prefix=prefix)]

    def remove(self, key):
        del self.storage[key]
        return key in self.storage

    def missing(self):
        return self.storage["missing"]

    def bad_value(self):
        self.storage["x"] = 1.5
"#;

#[test]
fn storage_is_dict_like_and_ordered() {
    let (vm, mut host, actor) = deployed(STORAGE, &[]);
    assert_eq!(
        ok(&call(&vm, &mut host, &actor, "fill", &[])),
        Value::Bool(true)
    );
    let all = ok(&call(&vm, &mut host, &actor, "listing", &[Value::str("")]));
    assert_eq!(
        all,
        Value::List(
            ["a:1", "b:1", "b:2", "c"]
                .iter()
                .map(|k| Value::str(*k))
                .collect()
        )
    );
    let b = ok(&call(
        &vm,
        &mut host,
        &actor,
        "listing",
        &[Value::str("b:")],
    ));
    assert_eq!(b, Value::List(vec![Value::str("b:1"), Value::str("b:2")]));
    assert_eq!(
        host.storage_value(&actor, "b:2"),
        Some(Value::List(vec![
            Value::int(1),
            Value::Tuple(vec![Value::int(2), Value::int(3)]),
            Value::dict_from([(Value::str("k"), Value::Bytes(b"v".to_vec()))]).unwrap(),
        ]))
    );
    assert_eq!(
        ok(&call(&vm, &mut host, &actor, "remove", &[Value::str("c")])),
        Value::Bool(false)
    );
    let missing = call(&vm, &mut host, &actor, "missing", &[]);
    assert!(missing.result.unwrap_err().message.starts_with("KeyError"));
    let bad = call(&vm, &mut host, &actor, "bad_value", &[]);
    assert!(bad
        .result
        .unwrap_err()
        .message
        .contains("cannot leave the actor"));
}

const CONTEXT: &str = r#"
import pvm_host

class Context:
    def info(self):
        return {
            "height": pvm_host.block_height(),
            "timestamp": pvm_host.block_timestamp(),
            "timestamp_ms": pvm_host.block_timestamp_ms(),
            "address": self.address,
            "actor": pvm_host.actor_address(),
            "deployer": self.deployer,
            "sender": pvm_host.tx_sender(),
            "caller": pvm_host.caller(),
        }

    def pay(self, to, amount):
        pvm_host.transfer(to, amount)
        return pvm_host.balance(self.address)

    def overdraw(self, to):
        try:
            pvm_host.transfer(to, 10**30)
        except pvm_host.HostError as error:
            return error.kind
"#;

#[test]
fn context_balance_and_transfer() {
    let (vm, mut host, actor) = deployed(CONTEXT, &[]);
    let info = ok(&call(&vm, &mut host, &actor, "info", &[]));
    assert_eq!(info.get("height"), Some(&Value::int(1)));
    assert_eq!(info.get("timestamp"), Some(&Value::int(1_700_000_000)));
    assert_eq!(
        info.get("timestamp_ms"),
        Some(&Value::int(1_700_000_000_123u64))
    );
    assert_eq!(info.get("address"), Some(&Value::str(actor.to_hex())));
    assert_eq!(info.get("actor"), Some(&Value::str(actor.to_hex())));
    assert_eq!(
        info.get("deployer"),
        Some(&Value::str(host.tx_sender.to_hex()))
    );
    assert_eq!(
        info.get("sender"),
        Some(&Value::str(host.tx_sender.to_hex()))
    );
    assert_eq!(
        info.get("caller"),
        Some(&Value::str(host.tx_sender.to_hex()))
    );

    host.set_balance(actor, 1_000);
    let to = addr(7);
    let left = ok(&call(
        &vm,
        &mut host,
        &actor,
        "pay",
        &[Value::str(to.to_hex()), Value::int(300)],
    ));
    assert_eq!(left, Value::int(700));
    assert_eq!(host.balance_of(&to), 300);
    let kind = ok(&call(
        &vm,
        &mut host,
        &actor,
        "overdraw",
        &[Value::str(to.to_hex())],
    ));
    assert_eq!(kind, Value::str("insufficient_funds"));
}

const TIMERS: &str = r#"
import pvm_host

class Timers:
    def schedule(self, height):
        return pvm_host.schedule_timer(height, b"payload")

    def schedule_ex(self, height):
        return pvm_host.schedule_timer_ex(height, b"p", fee_payer=self.address, gas_limit=1000, expires_at=height + 5)

    def extend(self, timer_id, to):
        pvm_host.extend_timer(timer_id, to)

    def cancel(self, timer_id):
        pvm_host.cancel_timer(timer_id)

    def schedule_then_fail(self):
        pvm_host.schedule_timer(10, b"x")
        raise RuntimeError("undo")

    def past(self):
        try:
            pvm_host.schedule_timer(0, b"x")
        except pvm_host.HostError as error:
            return error.kind
"#;

#[test]
fn timer_calls_forward_to_host_and_revert_with_the_execution() {
    let (vm, mut host, actor) = deployed(TIMERS, &[]);
    let id = ok(&call(&vm, &mut host, &actor, "schedule", &[Value::int(5)]));
    let Value::Bytes(id) = id else {
        panic!("timer id is bytes")
    };
    assert_eq!(id.len(), 32);
    assert_eq!(host.timers().len(), 1);
    assert_eq!(host.timers()[0].request.payload, b"payload");

    let ex = ok(&call(
        &vm,
        &mut host,
        &actor,
        "schedule_ex",
        &[Value::int(6)],
    ));
    let timers = host.timers();
    let scheduled = timers
        .iter()
        .find(|t| Value::Bytes(t.id.as_bytes().to_vec()) == ex)
        .unwrap();
    assert_eq!(scheduled.request.fee_payer, Some(actor));
    assert_eq!(scheduled.request.gas_limit, Some(1000));
    assert_eq!(scheduled.request.expires_at, Some(11));

    assert!(call(
        &vm,
        &mut host,
        &actor,
        "extend",
        &[Value::Bytes(id.clone()), Value::int(50)]
    )
    .is_success());
    assert!(host.timers().iter().any(|t| t.expires_at == Some(50)));
    assert!(call(
        &vm,
        &mut host,
        &actor,
        "cancel",
        &[Value::Bytes(id.clone())]
    )
    .is_success());
    assert_eq!(host.cancelled_timers().len(), 1);

    let before = host.timers().len();
    let failed = call(&vm, &mut host, &actor, "schedule_then_fail", &[]);
    assert_eq!(failed.error_kind(), Some(ErrorKind::Revert));
    assert_eq!(
        host.timers().len(),
        before,
        "timer side effects are dropped on revert"
    );
    assert_eq!(
        ok(&call(&vm, &mut host, &actor, "past", &[])),
        Value::str("invalid_input")
    );
}

const CALLER: &str = r#"
import pvm_host

class Caller:
    def bump_other(self, other):
        self.storage["before"] = 1
        return pvm_host.call(other, "bump", 3)

    def bump_then_fail(self, other):
        pvm_host.call(other, "bump", 3)
        raise ValueError("caller fails after callee succeeded")

    def call_failing(self, other):
        return pvm_host.call(other, "fail_after_write")

    def call_failing_caught(self, other):
        try:
            pvm_host.call(other, "fail_after_write")
        except pvm_host.HostError as error:
            self.storage["caught"] = error.kind
            return str(error)

    def who(self, other):
        return pvm_host.call(other, "whoami")

    def recurse(self, me, depth):
        self.storage["depth"] = depth
        return pvm_host.call(me, "recurse", me, depth + 1)
"#;

const CALLEE: &str = r#"
import pvm_host

class Callee:
    def bump(self, by):
        n = self.storage.get("n", 0) + by
        self.storage["n"] = n
        pvm_host.emit("Bumped", n)
        return n

    def fail_after_write(self):
        self.storage["n"] = -1
        raise ValueError("callee fails")

    def whoami(self):
        return [pvm_host.caller(), pvm_host.tx_sender(), pvm_host.actor_address()]
"#;

fn two_actors() -> (
    Vm,
    MockHost,
    timerhost_types::Address,
    timerhost_types::Address,
) {
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let (caller, callee) = (addr(1), addr(2));
    host.install_actor(caller, CALLER);
    host.install_actor(callee, CALLEE);
    assert!(vm
        .deploy(&mut host, &caller, CALLER, &[], limits())
        .is_success());
    assert!(vm
        .deploy(&mut host, &callee, CALLEE, &[], limits())
        .is_success());
    (vm, host, caller, callee)
}

#[test]
fn cross_actor_call_commits_with_caller() {
    let (vm, mut host, caller, callee) = two_actors();
    let outcome = call(
        &vm,
        &mut host,
        &caller,
        "bump_other",
        &[Value::str(callee.to_hex())],
    );
    assert_eq!(ok(&outcome), Value::int(3));
    assert_eq!(host.storage_value(&callee, "n"), Some(Value::int(3)));
    assert_eq!(host.storage_value(&caller, "before"), Some(Value::int(1)));
    assert_eq!(outcome.events.len(), 1);
    assert_eq!(outcome.events[0].emitter, callee);

    let who = ok(&call(
        &vm,
        &mut host,
        &caller,
        "who",
        &[Value::str(callee.to_hex())],
    ));
    assert_eq!(
        who,
        Value::List(vec![
            Value::str(caller.to_hex()),
            Value::str(host.tx_sender.to_hex()),
            Value::str(callee.to_hex())
        ])
    );
}

#[test]
fn failing_caller_reverts_successful_callee() {
    let (vm, mut host, caller, callee) = two_actors();
    let outcome = call(
        &vm,
        &mut host,
        &caller,
        "bump_then_fail",
        &[Value::str(callee.to_hex())],
    );
    assert_eq!(outcome.error_kind(), Some(ErrorKind::Revert));
    assert_eq!(host.storage_value(&callee, "n"), None);
    assert!(outcome.events.is_empty());
}

#[test]
fn failing_callee_reverts_caller_unless_caught() {
    let (vm, mut host, caller, callee) = two_actors();
    let outcome = call(
        &vm,
        &mut host,
        &caller,
        "call_failing",
        &[Value::str(callee.to_hex())],
    );
    let error = outcome.result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Revert);
    assert!(error.message.contains("callee fails"), "{}", error.message);
    assert_eq!(host.storage_value(&callee, "n"), None);

    let caught = call(
        &vm,
        &mut host,
        &caller,
        "call_failing_caught",
        &[Value::str(callee.to_hex())],
    );
    assert!(caught.is_success(), "{:?}", caught.result);
    assert_eq!(
        host.storage_value(&caller, "caught"),
        Some(Value::str("revert"))
    );
    assert_eq!(
        host.storage_value(&callee, "n"),
        None,
        "the callee's own writes are reverted"
    );
    assert_eq!(host.open_checkpoints(), 0);
}

#[test]
fn call_depth_is_limited_to_32() {
    let (vm, mut host, caller, _) = two_actors();
    let outcome = call(
        &vm,
        &mut host,
        &caller,
        "recurse",
        &[Value::str(caller.to_hex()), Value::int(1)],
    );
    let error = outcome.result.unwrap_err();
    assert_eq!(
        error.kind,
        ErrorKind::CallDepthExceeded,
        "{}",
        error.message
    );
    assert_eq!(host.storage_value(&caller, "depth"), None);
}

const HELPERS: &str = r#"
import json
import base64
import hashing
import math
from pvm_host import emit

class Helpers:
    def run(self):
        encoded = json.dumps({"b": [1, 2], "a": "x"})
        return [
            encoded,
            json.loads(encoded)["b"],
            base64.b64encode(b"hi"),
            base64.b64decode(b"aGk="),
            hashing.keccak256(b""),
            hashing.sha256(b"abc")[:4],
            math.isqrt(10**20 + 1),
            math.gcd(12, 18),
            sorted([3, 1, 2]),
            sum(x * x for x in range(10)),
            f"{7:>5}",
        ]
"#;

#[test]
fn helper_modules() {
    let (vm, mut host, actor) = deployed(HELPERS, &[]);
    let Value::List(items) = ok(&call(&vm, &mut host, &actor, "run", &[])) else {
        panic!()
    };
    assert_eq!(items[0], Value::str(r#"{"a":"x","b":[1,2]}"#));
    assert_eq!(items[1], Value::List(vec![Value::int(1), Value::int(2)]));
    assert_eq!(items[2], Value::Bytes(b"aGk=".to_vec()));
    assert_eq!(items[3], Value::Bytes(b"hi".to_vec()));
    assert_eq!(
        items[4],
        Value::Bytes(
            hex::decode("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
                .unwrap()
        )
    );
    assert_eq!(items[5], Value::Bytes(vec![0xba, 0x78, 0x16, 0xbf]));
    assert_eq!(items[6], Value::int(10_000_000_000u64));
    assert_eq!(items[7], Value::int(6));
    assert_eq!(
        items[8],
        Value::List(vec![Value::int(1), Value::int(2), Value::int(3)])
    );
    assert_eq!(items[9], Value::int(285));
    assert_eq!(items[10], Value::str("    7"));
}

#[test]
fn deploy_rejections_name_line_and_construct() {
    let vm = Vm::new().unwrap();
    let rejection = vm
        .validate_and_compile("import os\nclass A:\n    pass\n")
        .unwrap_err();
    assert_eq!(rejection.line, 1);
    assert_eq!(rejection.construct, "import os");
    let rejection = vm
        .validate_and_compile("class A:\n    def f(self):\n        return self.__class__\n")
        .unwrap_err();
    assert_eq!(
        (rejection.line, rejection.construct.as_str()),
        (3, "attribute .__class__")
    );
    let rejection = vm
        .validate_and_compile("class A:\n    pass\nclass B:\n    pass\n")
        .unwrap_err();
    assert!(rejection.reason.contains("@actor"));
    let compiled = vm
        .validate_and_compile("from pvm_host import emit\nclass H:\n    pass\n@actor\nclass A(H):\n    def go(self):\n        pass\n")
        .unwrap();
    assert_eq!(compiled.class_name, "A");
    assert_eq!(compiled.handlers, vec!["go".to_string()]);

    let mut host = MockHost::new();
    let outcome = vm.deploy(
        &mut host,
        &addr(1),
        "import os\nclass A:\n    pass\n",
        &[],
        limits(),
    );
    assert_eq!(outcome.error_kind(), Some(ErrorKind::Forbidden));
    let outcome = vm.deploy(&mut host, &addr(1), "class A(:\n", &[], limits());
    assert_eq!(outcome.error_kind(), Some(ErrorKind::InvalidInput));
}

/// `for` loops and comprehensions over `range` go through the metered
/// iterator, which walks ranges with 64-bit bounds itself and wraps any other
/// range: both must yield exactly what `range` does.
#[test]
fn range_loops_yield_what_range_yields() {
    const RANGES: &str = r#"
class Ranges:
    def walk(self, start, stop, step):
        out = []
        for i in range(start, stop, step):
            out.append(i)
        assert out == [i for i in range(start, stop, step)]
        return out
"#;
    let (vm, mut host, actor) = deployed(RANGES, &[]);
    let big = 1i128 << 100;
    for (a, b, s) in [
        (0, 5, 1),
        (10, -3, -4),
        (3, 3, 1),
        (i64::MAX as i128 - 2, i64::MAX as i128 + 2, 1),
        (big, big + 3, 1),
        (-big, -big - 7, -3),
    ] {
        let args = [Value::int(a), Value::int(b), Value::int(s)];
        let outcome = call(&vm, &mut host, &actor, "walk", &args);
        let Value::List(items) = ok(&outcome) else {
            panic!("expected a list")
        };
        let mut expected = Vec::new();
        let mut v = a;
        while (s > 0 && v < b) || (s < 0 && v > b) {
            expected.push(Value::int(v));
            v += s;
        }
        assert_eq!(items, expected, "range({a}, {b}, {s})");
    }
}

/// Creating a VM keeps memory mimalloc frees mapped for 10 s rather than 1 s
/// (consecutive blocks reuse it instead of faulting it back in).
#[test]
fn a_vm_keeps_freed_memory_mapped_between_blocks() {
    let _vm = Vm::new().unwrap();
    assert_eq!(
        timerhost_vm::alloc::purge_delay_ms(),
        timerhost_vm::alloc::PURGE_DELAY_MS
    );
}
