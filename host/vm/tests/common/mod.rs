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
