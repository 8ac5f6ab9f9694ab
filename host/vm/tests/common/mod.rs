//! Shared helpers for the VM integration tests.
#![allow(dead_code)]

use timerhost_types::{Address, Invocation, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Outcome, Vm};

/// A test address ending in `n`.
pub fn addr(n: u8) -> Address {
    let mut bytes = [0u8; 20];
    bytes[0] = 0xaa;
    bytes[19] = n;
    Address(bytes)
}

/// Generous limits for functional tests.
pub fn limits() -> ExecLimits {
    ExecLimits::new(5_000_000, 1_000_000)
}

/// A VM, a mock host and the address of `source` deployed with `args`.
pub fn deployed(source: &str, args: &[Value]) -> (Vm, MockHost, Address) {
    let vm = Vm::new().expect("allocator installed");
    let mut host = MockHost::new();
    let actor = addr(1);
    deploy_at(&vm, &mut host, actor, source, args, limits());
    (vm, host, actor)
}

/// Installs `source` at `actor` on `host` and deploys it, asserting success.
pub fn deploy_at(
    vm: &Vm,
    host: &mut MockHost,
    actor: Address,
    source: &str,
    args: &[Value],
    limits: ExecLimits,
) {
    host.install_actor(actor, source);
    let outcome = vm.deploy(host, &actor, source, args, limits);
    assert!(outcome.is_success(), "deploy failed: {:?}", outcome.result);
}

/// Calls `handler` and returns the outcome.
pub fn call(
    vm: &Vm,
    host: &mut MockHost,
    actor: &Address,
    handler: &str,
    args: &[Value],
) -> Outcome {
    vm.call(
        host,
        actor,
        handler,
        args,
        limits(),
        Invocation::Transaction,
    )
}

/// Invokes `handler` as a timer fire would (timer handlers allowed, payload free).
pub fn fire(
    vm: &Vm,
    host: &mut MockHost,
    actor: &Address,
    handler: &str,
    args: &[Value],
) -> Outcome {
    let fire = Invocation::TimerFire(timerhost_vm::testing::TEST_FIRE);
    vm.call(host, actor, handler, args, limits(), fire)
}

/// Unwraps a successful outcome's value.
pub fn ok(outcome: &Outcome) -> Value {
    match &outcome.result {
        Ok(value) => value.clone(),
        Err(error) => panic!("expected success, got {error:?}"),
    }
}

/// Documents of about 900 KB for `json.loads` (`run(shape, parse)`): one long
/// string, many short strings, an object of many members, long ints; shape 0
/// is `[]`. `run(shape, 0)` builds the text and returns its length,
/// `run(shape, 1)` returns the length of what `json.loads` made of it. Shape 5
/// is 45 ints of 65,000 bits for `json.dumps` instead (`run(5, 0)` returns
/// 45, `run(5, 1)` the length of the text).
pub const JSON_DOCUMENTS: &str = r#"import json
class Documents:
    def run(self, shape, parse):
        if shape == 0:
            text = "[]"
        elif shape == 1:
            text = '"' + "x" * 900000 + '"'
        elif shape == 2:
            text = "[" + ",".join(['"ab"'] * 180000) + "]"
        elif shape == 3:
            text = "{" + ",".join([f'"{i:06d}":1' for i in range(81800)]) + "}"
        elif shape == 4:
            text = "[" + ",".join(["9" * 4299] * 209) + "]"
        else:
            value = [(1 << 65000) - 1] * 45
            if parse:
                return len(json.dumps(value))
            return len(value)
        if parse:
            return len(json.loads(text))
        return len(text)
"#;
