//! The state of the execution in progress on this thread besides its
//! meter ([`crate::meter::charge`]): its call frames, events, block and
//! code cache, and the borrowed host; and how host calls report failures.
//!
//! Per-execution data lives in two thread-locals: [`EXEC`] (call frames,
//! events — plain data) and [`HOST`] (the borrowed [`Host`], installed for
//! exactly the duration of an execution through `scoped-tls-hkt`, so no
//! lifetime is ever erased). The exception types natives raise
//! (`pvm_host.HostError` and the uncatchable abort) are made with the
//! interpreter and registered here ([`install_error_types`]), so natives
//! raise them without knowing the interpreter set-up.

use std::cell::RefCell;
use std::sync::Arc;

use rustpython_vm::builtins::{PyBaseExceptionRef, PyStr, PyTypeRef};
use rustpython_vm::{AsObject, PyResult, VirtualMachine};
use scoped_tls_hkt::{scoped_thread_local, ReborrowMut};
use timerhost_types::{Address, ErrorKind, Event, Value};

use crate::deploy::code_cache::CodeCache;
use crate::deploy::compile::CompiledActor;
use crate::host_api::host::{BlockInfo, Host, HostCall};
pub(crate) use crate::meter::charge::charge;

/// Every error kind (to read a `HostError`'s `kind` back).
const ALL_ERROR_KINDS: &[ErrorKind] = &[
    ErrorKind::Revert,
    ErrorKind::OutOfCycles,
    ErrorKind::OutOfCells,
    ErrorKind::OutOfMemory,
    ErrorKind::Forbidden,
    ErrorKind::InvalidInput,
    ErrorKind::Unauthorized,
    ErrorKind::NotFound,
    ErrorKind::InsufficientFunds,
    ErrorKind::CallDepthExceeded,
];

/// Holds the borrowed host for the duration of one execution.
pub(crate) struct HostSlot<'a> {
    pub(crate) host: &'a mut (dyn Host + 'a),
}

impl<'a, 'b> ReborrowMut<'a> for HostSlot<'b> {
    type Result = HostSlot<'a>;
    fn reborrow_mut(&'a mut self) -> HostSlot<'a> {
        HostSlot {
            host: &mut *self.host,
        }
    }
}

scoped_thread_local!(pub(crate) static mut HOST: for<'a> HostSlot<'a>);

/// One actor on the call stack.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub(crate) actor: Address,
    pub(crate) caller: Address,
    /// What the caller sent along (`pvm_host.value()`).
    pub(crate) value: u128,
}

/// Everything one execution (with its nested calls) needs besides the host
/// and its meter.
pub(crate) struct ExecState {
    pub(crate) frames: Vec<Frame>,
    pub(crate) events: Vec<Event>,
    pub(crate) code_cache: Arc<CodeCache>,
    pub(crate) block: BlockInfo,
    pub(crate) tx_sender: Address,
    /// The fire this execution is, if it is one (`pvm_host.trigger()`).
    pub(crate) fire: Option<timerhost_types::FireInfo>,
    /// How `pvm_host.call` runs another actor's handler.
    pub(crate) invoke: Invoke,
}

thread_local! {
    pub(crate) static EXEC: RefCell<Option<ExecState>> = const { RefCell::new(None) };
}

#[inline]
pub(crate) fn with_exec<R>(f: impl FnOnce(&mut ExecState) -> R) -> R {
    EXEC.with(|cell| f(cell.borrow_mut().as_mut().expect("inside an execution")))
}

/// Runs a handler of compiled actor code on this thread's interpreter: how
/// `pvm_host.call` enters another actor without depending on the
/// interpreter set-up (`crate::interpreter::runtime` provides it). The handler's result
/// comes back converted to a [`Value`] (`None`: no such handler), taken
/// before the module's values made at load are restored.
pub(crate) type Invoke = fn(
    &CompiledActor,
    &Address,
    &Address,
    &str,
    &[Value],
    &VirtualMachine,
) -> PyResult<Option<Value>>;

/// The exception types natives raise, made with the interpreter.
#[derive(Clone)]
pub(crate) struct ErrorTypes {
    /// The uncatchable abort (out of cycles, cells or memory).
    pub(crate) abort: PyTypeRef,
    /// `pvm_host.HostError`.
    pub(crate) host_error: PyTypeRef,
}

thread_local! {
    static ERROR_TYPES: RefCell<Option<ErrorTypes>> = const { RefCell::new(None) };
}

/// Registers this thread's interpreter's exception types (the abort's
/// with the meter, which raises it).
pub(crate) fn install_error_types(types: ErrorTypes) {
    crate::meter::charge::install_abort_type(types.abort.clone());
    ERROR_TYPES.with(|slot| *slot.borrow_mut() = Some(types));
}

fn error_types() -> ErrorTypes {
    ERROR_TYPES.with(|slot| {
        slot.borrow()
            .clone()
            .expect("the interpreter registered its error types")
    })
}

/// The `kind` of a `pvm_host.HostError`, or `None` for other exceptions.
pub(crate) fn host_error_kind(exc: &PyBaseExceptionRef, vm: &VirtualMachine) -> Option<ErrorKind> {
    if !exc.class().fast_issubclass(&error_types().host_error) {
        return None;
    }
    let kind = exc.as_object().get_attr("kind", vm).ok()?;
    let kind = kind.downcast_ref::<PyStr>()?.to_str()?.to_owned();
    ALL_ERROR_KINDS.iter().copied().find(|k| k.as_str() == kind)
}

/// A `pvm_host.HostError` of `kind`.
pub(crate) fn host_error(
    kind: ErrorKind,
    message: &str,
    vm: &VirtualMachine,
) -> PyBaseExceptionRef {
    let exc = vm.new_exception_msg(
        error_types().host_error,
        format!("{}: {message}", kind.as_str()).into(),
    );
    let _ = exc
        .as_object()
        .set_attr("kind", vm.ctx.new_str(kind.as_str()), vm);
    exc
}

thread_local! {
    static EPOCH: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Starts a new epoch: every execution and every load runs in its own.
pub(crate) fn begin_epoch() {
    EPOCH.with(|epoch| epoch.set(epoch.get().wrapping_add(1)));
}

/// The epoch of the execution (or load) in progress: library caches
/// (`functools.cache`) keep their contents only within one epoch, so what
/// one execution cached never makes another one cheaper. Only equality of
/// epochs is observable, never their values.
pub(crate) fn current_epoch() -> u64 {
    EPOCH.with(std::cell::Cell::get)
}

/// Charges a host call's cost.
pub(crate) fn charge_host<T>(call: &HostCall<T>, vm: &VirtualMachine) -> PyResult<()> {
    charge(call.cost.cycles, call.cost.cells, vm)
}

/// The actor running now (the innermost frame).
pub(crate) fn current_actor() -> Address {
    with_exec(|state| state.frames.last().expect("a frame").actor)
}

/// A host call's result, its cost charged, a rejection as `HostError`.
pub(crate) fn host_result<T>(call: HostCall<T>, vm: &VirtualMachine) -> PyResult<T> {
    charge_host(&call, vm)?;
    call.result
        .map_err(|failure| host_error(failure.kind, &failure.message, vm))
}

/// `TypeName: message` of a Python exception.
pub(crate) fn exception_message(exc: &PyBaseExceptionRef, vm: &VirtualMachine) -> String {
    let name = exc.class().name().to_string();
    let text = exc
        .as_object()
        .str(vm)
        .ok()
        .and_then(|s| s.to_str().map(str::to_owned))
        .unwrap_or_default();
    let text: String = text.chars().take(512).collect();
    if text.is_empty() {
        name
    } else {
        format!("{name}: {text}")
    }
}
