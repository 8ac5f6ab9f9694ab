//! The state of the execution in progress on this thread, and how natives
//! charge it and report failures.
//!
//! Per-execution data lives in two thread-locals: [`EXEC`] (meter, call
//! frames, events — plain data) and [`HOST`] (the borrowed [`Host`],
//! installed for exactly the duration of an execution through
//! `scoped-tls-hkt`, so no lifetime is ever erased). The exception types
//! natives raise (`pvm_host.HostError` and the uncatchable abort) are made
//! with the interpreter and registered here ([`install_error_types`]), so
//! natives raise them without knowing the interpreter set-up.
//!
//! Aborts (out of cycles / cells / memory) are *sticky*: once the meter has
//! tripped, every further charge raises again, and the outcome is decided by
//! the meter, not by what the actor did with the exception. So `except
//! BaseException: pass` cannot swallow an abort.

use std::cell::RefCell;
use std::sync::Arc;

use rustpython_vm::builtins::{PyBaseExceptionRef, PyStr, PyTypeRef};
use rustpython_vm::{AsObject, PyResult, VirtualMachine};
use scoped_tls_hkt::{scoped_thread_local, ReborrowMut};
use timerhost_types::{Address, ErrorKind, Event, Value};

use crate::code_cache::CodeCache;
use crate::compile::CompiledActor;
use crate::host::{BlockInfo, Host, HostCall};
use crate::meter::{Abort, Meter};

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

/// Everything one execution (with its nested calls) needs besides the host.
pub(crate) struct ExecState {
    pub(crate) meter: Meter,
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
/// interpreter set-up (`crate::runtime` provides it). The handler's result
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

/// Registers this thread's interpreter's exception types.
pub(crate) fn install_error_types(types: ErrorTypes) {
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

/// What an abort is called in messages.
pub(crate) fn abort_message(abort: Abort) -> &'static str {
    match abort {
        Abort::Cycles => "out of cycles",
        Abort::Cells => "out of cells",
        Abort::Memory => "out of memory",
    }
}

/// The exception an abort raises.
pub(crate) fn abort_exception(abort: Abort, vm: &VirtualMachine) -> PyBaseExceptionRef {
    vm.new_exception_msg(error_types().abort, abort_message(abort).into())
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

/// Charges the meter; on an abort returns the exception to raise.
#[inline]
pub(crate) fn charge(cycles: u64, cells: u64, vm: &VirtualMachine) -> PyResult<()> {
    let memory_exceeded = crate::alloc::MemoryBudget::exceeded();
    with_exec(|state| state.meter.charge(cycles, cells, memory_exceeded))
        .map_err(|abort| abort_exception(abort, vm))
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

/// Is an execution in progress on this thread (and not borrowed by the host)?
#[inline]
pub(crate) fn is_executing() -> bool {
    EXEC.with(|cell| {
        cell.try_borrow()
            .map(|state| state.is_some())
            .unwrap_or(false)
    })
}

/// [`charge`] for code that also runs outside executions (the metered type
/// slots, [`crate::slot_meter`]): outside one, or while the host itself holds
/// the execution state, nothing is charged.
#[inline]
pub(crate) fn charge_if_executing(cycles: u64, vm: &VirtualMachine) -> PyResult<()> {
    let charged = EXEC.with(|cell| {
        cell.try_borrow_mut().ok().and_then(|mut state| {
            state.as_mut().map(|state| {
                state
                    .meter
                    .charge(cycles, 0, crate::alloc::MemoryBudget::exceeded())
            })
        })
    });
    match charged {
        Some(Err(abort)) => Err(abort_exception(abort, vm)),
        _ => Ok(()),
    }
}

pub(crate) fn trip(abort: Abort, vm: &VirtualMachine) -> PyBaseExceptionRef {
    with_exec(|state| state.meter.trip(abort));
    abort_exception(abort, vm)
}

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
