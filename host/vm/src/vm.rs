//! [`Vm`]: the entry points the chain calls — compile at deploy, run
//! `deploy(self, *args)` once, run handlers — and their [`Outcome`]s.

use std::sync::Arc;

use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::VirtualMachine;
use timerhost_types::{Address, ErrorKind, Event, ExecError, Invocation, Value};

use crate::deploy::code_cache::CodeCache;
use crate::deploy::compile::{refuse_name, refuse_timer_handler, CompiledActor};
use crate::deploy::sandbox::DeployRejection;
use crate::error::{Result, VmError};
use crate::host_api::exec::{
    exception_message, host_error_kind, ExecState, Frame, HostSlot, EXEC, HOST,
};
use crate::host_api::host::Host;
use crate::interpreter::runtime::runtime;
use crate::meter::Meter;

/// Resource limits of one execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecLimits {
    /// Cycles available (the transaction's `cycles_limit`).
    pub cycles: u64,
    /// Cells available (the transaction's `cells_limit`).
    pub cells: u64,
    /// Net bytes the execution may allocate.
    pub memory_bytes: u64,
}

impl ExecLimits {
    /// Memory budget used by [`ExecLimits::new`]: generous for real actors,
    /// small enough that a validator runs many executions side by side.
    pub const DEFAULT_MEMORY_BYTES: u64 = 64 * 1024 * 1024;

    /// Limits with the default memory budget.
    pub fn new(cycles: u64, cells: u64) -> ExecLimits {
        ExecLimits {
            cycles,
            cells,
            memory_bytes: Self::DEFAULT_MEMORY_BYTES,
        }
    }
}

/// What an execution produced. Resources are reported whatever happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The handler's return value, or why the execution failed.
    pub result: std::result::Result<Value, ExecError>,
    /// Events emitted (empty on failure: they were discarded with the rest).
    pub events: Vec<Event>,
    /// Cycles consumed (equal to the limit when it ran out).
    pub cycles_used: u64,
    /// Cells consumed.
    pub cells_used: u64,
}

impl Outcome {
    /// Did the execution succeed?
    pub fn is_success(&self) -> bool {
        self.result.is_ok()
    }

    /// The failure kind, if it failed.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.result.as_ref().err().map(|e| e.kind)
    }

    fn failed(
        kind: ErrorKind,
        message: impl Into<String>,
        cycles_used: u64,
        cells_used: u64,
    ) -> Outcome {
        Outcome {
            result: Err(ExecError {
                kind,
                message: message.into(),
                traceback: None,
            }),
            events: Vec::new(),
            cycles_used,
            cells_used,
        }
    }
}

/// The actor VM. Cheap to share: clone the `Arc` or keep one per node.
pub struct Vm {
    cache: Arc<CodeCache>,
}

impl Vm {
    /// A VM with an empty code cache. Fails unless [`crate::MeteredAllocator`]
    /// is the process's global allocator (memory budgets depend on it).
    pub fn new() -> Result<Vm> {
        if !crate::meter::alloc::is_installed() {
            return Err(VmError::AllocatorNotInstalled);
        }
        crate::meter::alloc::keep_freed_memory_between_blocks();
        Ok(Vm {
            cache: Arc::new(CodeCache::default()),
        })
    }

    /// Validates and compiles `source` (cached by code hash). Call it before
    /// storing code; the rejection names the line and construct.
    pub fn validate_and_compile(
        &self,
        source: &str,
    ) -> std::result::Result<Arc<CompiledActor>, DeployRejection> {
        self.cache.compile(source)
    }

    /// Runs `deploy(self, *args)` of freshly deployed `code` at `actor`
    /// (`self.deployer` is the host's `tx_sender`). The chain stores the code
    /// and the [`ActorRecord`](crate::ActorRecord) itself, before or after, in
    /// the same state checkpoint. A class without `deploy` accepts no args.
    pub fn deploy(
        &self,
        host: &mut dyn Host,
        actor: &Address,
        code: &str,
        args: &[Value],
        limits: ExecLimits,
    ) -> Outcome {
        let payload_cells = code.len() as u64 + Value::List(args.to_vec()).to_bytes().len() as u64;
        let compiled = match self.cache.compile(code) {
            Ok(compiled) => compiled,
            Err(rejection) => {
                let kind = if rejection.construct == "syntax" {
                    ErrorKind::InvalidInput
                } else {
                    ErrorKind::Forbidden
                };
                return Outcome::failed(
                    kind,
                    rejection.to_string(),
                    0,
                    payload_cells.min(limits.cells),
                );
            }
        };
        let deployer = host.tx_sender();
        self.execute(
            host,
            actor,
            &deployer,
            &compiled,
            "deploy",
            args,
            limits,
            payload_cells,
            0,
            None,
        )
    }

    /// Runs public `handler` of the actor at `actor` with `args`, as
    /// `invocation` allows: a transaction pays its arguments in cells and
    /// cannot reach timer handlers; a timer fire may, and its payload was
    /// paid for when the timer was scheduled (it costs no cells here).
    pub fn call(
        &self,
        host: &mut dyn Host,
        actor: &Address,
        handler: &str,
        args: &[Value],
        limits: ExecLimits,
        invocation: Invocation,
    ) -> Outcome {
        let payload_cells = match invocation {
            Invocation::Transaction => {
                handler.len() as u64 + Value::List(args.to_vec()).to_bytes().len() as u64
            }
            Invocation::TimerFire(_) => 0,
        };
        if let Some((kind, message)) = refuse_name(handler) {
            return Outcome::failed(kind, message, 0, payload_cells.min(limits.cells));
        }
        let lookup = host.actor_record(actor);
        let lookup_cycles = lookup.cost.cycles;
        let record = match lookup.result {
            Ok(Some(record)) => record,
            Ok(None) => {
                return Outcome::failed(
                    ErrorKind::NotFound,
                    format!("no actor at {actor}"),
                    lookup_cycles.min(limits.cycles),
                    payload_cells.min(limits.cells),
                )
            }
            Err(failure) => {
                return Outcome::failed(
                    failure.kind,
                    failure.message,
                    lookup_cycles.min(limits.cycles),
                    payload_cells.min(limits.cells),
                )
            }
        };
        let Some(compiled) = self
            .cache
            .get_or_compile(&record.code_hash, |hash| host.load_code(hash))
        else {
            return Outcome::failed(
                ErrorKind::NotFound,
                format!(
                    "code {} of {actor} is unavailable or invalid",
                    record.code_hash
                ),
                lookup_cycles.min(limits.cycles),
                payload_cells.min(limits.cells),
            );
        };
        if let Some((kind, message)) = refuse_timer_handler(&compiled, handler, &invocation) {
            return Outcome::failed(
                kind,
                message,
                lookup_cycles.min(limits.cycles),
                payload_cells.min(limits.cells),
            );
        }
        self.execute(
            host,
            actor,
            &record.deployer,
            &compiled,
            handler,
            args,
            limits,
            payload_cells,
            lookup_cycles,
            match invocation {
                Invocation::TimerFire(fire) => Some(fire),
                Invocation::Transaction => None,
            },
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn execute(
        &self,
        host: &mut dyn Host,
        actor: &Address,
        deployer: &Address,
        compiled: &CompiledActor,
        handler: &str,
        args: &[Value],
        limits: ExecLimits,
        payload_cells: u64,
        pre_charged_cycles: u64,
        fire: Option<timerhost_types::FireInfo>,
    ) -> Outcome {
        if EXEC.with(|cell| cell.borrow().is_some()) {
            return Outcome::failed(
                ErrorKind::InvalidInput,
                VmError::Reentrant.to_string(),
                0,
                0,
            );
        }
        let runtime = runtime();
        // Load the actor's class (first use in this interpreter only) and
        // settle the interpreter before the memory budget starts, so neither
        // a cold cache nor what ran before costs or credits any budget.
        runtime.interpreter.enter(|vm| {
            let _ = runtime.actor_class(compiled, vm);
            runtime.settle(vm);
        });
        // Identity numbers restart with every execution (outside its budget:
        // dropping an earlier table must not credit this one).
        crate::interpreter::identity_hash::reset_execution();
        let _memory = crate::meter::alloc::MemoryBudget::start(limits.memory_bytes);
        let tx_sender = host.tx_sender();
        let mut meter = Meter {
            cycles_limit: limits.cycles,
            cells_limit: limits.cells,
            ..Meter::default()
        };
        let admitted = meter
            .charge(
                pre_charged_cycles,
                payload_cells,
                crate::meter::alloc::MemoryBudget::exceeded(),
            )
            .is_ok();
        crate::host_api::exec::begin_epoch();
        crate::meter::charge::replace(Some(meter));
        EXEC.with(|cell| {
            *cell.borrow_mut() = Some(ExecState {
                frames: vec![Frame {
                    actor: *actor,
                    caller: tx_sender,
                    value: host.call_value(),
                }],
                events: Vec::new(),
                code_cache: self.cache.clone(),
                block: host.block(),
                tx_sender,
                fire,
                invoke: crate::interpreter::runtime::invoke_handler,
            })
        });

        let checkpoint = host.checkpoint();
        let result = if admitted {
            // Defence in depth: a panic inside RustPython on hostile input must
            // not take the node down. The interpreter that panicked is retired.
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                HOST.set(HostSlot { host: &mut *host }, || {
                    runtime.interpreter.enter(|vm| {
                        let invoked = runtime.invoke(compiled, actor, deployer, handler, args, vm);
                        let finished = finish_invocation(invoked, handler, args, vm);
                        crate::interpreter::constants::reset_all(vm);
                        crate::interpreter::identity_hash::reset_execution();
                        finished
                    })
                })
            }));
            run.unwrap_or_else(|panic| {
                crate::interpreter::runtime::discard_runtime();
                let detail = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("unknown");
                Err(ExecError {
                    kind: ErrorKind::Forbidden,
                    message: format!("the actor triggered an internal VM error: {detail}"),
                    traceback: None,
                })
            })
        } else {
            Err(ExecError {
                kind: ErrorKind::OutOfCells,
                message: "payload exceeds the cells limit".into(),
                traceback: None,
            })
        };
        let state = EXEC
            .with(|cell| cell.borrow_mut().take())
            .expect("execution state present");
        let meter = crate::meter::charge::replace(None).expect("the execution's meter present");
        debug_assert_eq!(
            crate::meter::nesting::depth(),
            0,
            "a nesting level left open"
        );
        debug_assert_eq!(
            crate::interpreter::release::deferred_count(),
            0,
            "a finalizer left deferred"
        );
        let result = match meter.abort {
            // The meter decides, whatever the actor did with the abort exception.
            Some(abort) => Err(ExecError {
                kind: abort.kind(),
                message: abort_message(abort.kind(), &meter, limits.memory_bytes),
                traceback: result.err().and_then(|e| e.traceback),
            }),
            None => result,
        };
        match &result {
            Ok(_) => host.commit(checkpoint),
            Err(_) => host.revert(checkpoint),
        }
        Outcome {
            events: if result.is_ok() {
                state.events
            } else {
                Vec::new()
            },
            result,
            cycles_used: meter.cycles_used,
            cells_used: meter.cells_used,
        }
    }

    /// Number of compiled actors held in the cache.
    pub fn cached_code_count(&self) -> usize {
        self.cache.lock().len()
    }
}

fn abort_message(kind: ErrorKind, meter: &Meter, memory_bytes: u64) -> String {
    match kind {
        ErrorKind::OutOfCycles => format!("out of cycles (limit {})", meter.cycles_limit),
        ErrorKind::OutOfCells => format!("out of cells (limit {})", meter.cells_limit),
        _ => format!("out of memory (budget {memory_bytes} bytes)"),
    }
}

fn finish_invocation(
    invoked: rustpython_vm::PyResult<Option<Value>>,
    handler: &str,
    args: &[Value],
    vm: &VirtualMachine,
) -> std::result::Result<Value, ExecError> {
    let value = match invoked {
        Ok(Some(value)) => value,
        Ok(None) if handler == "deploy" && args.is_empty() => Value::None,
        Ok(None) => {
            return Err(ExecError {
                kind: ErrorKind::NotFound,
                message: format!("the actor has no handler '{handler}'"),
                traceback: None,
            })
        }
        Err(exc) => return Err(exec_error(&exc, vm)),
    };
    let cells = value.to_bytes().len() as u64;
    crate::meter::charge::charge(0, cells, vm).map_err(|exc| exec_error(&exc, vm))?;
    Ok(value)
}

/// The receipt form of an actor exception: kind, message and a short
/// traceback of actor frames only (VM internals are not the author's concern).
fn exec_error(exc: &PyBaseExceptionRef, vm: &VirtualMachine) -> ExecError {
    const MAX_TRACEBACK_FRAMES: usize = 8;
    let mut lines = Vec::new();
    if let Some(traceback) = exc.__traceback__() {
        for entry in traceback.iter() {
            let code = entry.frame.f_code();
            let path = code.source_path().as_str();
            if let Some(hash) = path.strip_prefix("actor:") {
                let short: String = hash.chars().take(12).collect();
                lines.push(format!(
                    "  actor {short}…, line {}, in {}",
                    entry.lineno.get(),
                    code.obj_name.as_str()
                ));
            }
        }
    }
    if lines.len() > MAX_TRACEBACK_FRAMES {
        let skipped = lines.len() - MAX_TRACEBACK_FRAMES;
        lines.drain(..skipped);
        lines.insert(0, format!("  … {skipped} earlier frames"));
    }
    let message = exception_message(exc, vm);
    let traceback = if lines.is_empty() {
        None
    } else {
        Some(format!(
            "Traceback (most recent call last):\n{}\n{message}",
            lines.join("\n")
        ))
    };
    // An uncaught host rejection keeps its kind (insufficient_funds, …).
    let kind = host_error_kind(exc, vm).unwrap_or(ErrorKind::Revert);
    ExecError {
        kind,
        message,
        traceback,
    }
}
