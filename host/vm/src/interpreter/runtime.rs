//! The per-thread interpreter: its creation and deterministic set-up (the
//! builtins actors see, the guard and storage natives, the `pvm_host` and
//! helper modules, the import hook, address-free identity), settling it
//! between executions, loading actor classes and invoking their handlers.
//!
//! One interpreter per thread is created lazily and reused for every
//! execution on that thread (creating one costs milliseconds and leaks memory
//! on drop); native functions are created once with it, because
//! `vm.new_function` leaks its closure. The natives themselves live by
//! family — [`crate::meter::guard_natives`], [`crate::meter::builtin_natives`],
//! [`crate::interpreter::builtin_types`], [`crate::host_api::storage_natives`], [`crate::host_api::pvm_host`],
//! [`crate::host_api::helpers`], [`crate::interpreter::library`] — over the execution state of
//! [`crate::host_api::exec`]; address-free identity is [`crate::interpreter::identity`], free-list
//! settling [`crate::interpreter::free_lists`], module loading [`crate::interpreter::load`]. This
//! module wires them in.

use std::cell::RefCell;
use std::collections::HashMap;

use rustpython_vm::builtins::{PyDictRef, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::scope::Scope;
use rustpython_vm::{Interpreter, PyObjectRef, PyResult, Settings, VirtualMachine};
use timerhost_types::{Address, Hash, Value};

use crate::deploy::compile::CompiledActor;
use crate::host_api::convert::value_to_py;
use crate::host_api::exec::{install_error_types, ErrorTypes};
use crate::host_api::{pvm_host, storage_natives};
use crate::meter::{builtin_natives, guard_natives};
use crate::rules::guards::Guard;

pub use crate::host_api::call_native::MAX_CALL_DEPTH;

thread_local! {
    static RUNTIME: RefCell<Option<&'static Runtime>> = const { RefCell::new(None) };
}
/// Python frames allowed per execution (recursion bombs stop here,
/// catchably): CPython's default. The deepest frames measured need ~9 KB of
/// native stack each in a debug build (a `__lt__` that sorts again), so the
/// whole depth needs ~9 MB: threads that run executions get
/// [`EXECUTION_THREAD_STACK_BYTES`] (the node's runtimes, the benches).
/// On a smaller stack RustPython's own native-stack guard raises
/// `RecursionError` first, never a crash.
pub const RECURSION_LIMIT: usize = 1000;

/// The native stack of a thread that runs executions (see
/// [`RECURSION_LIMIT`] and [`crate::meter::nesting::MAX_NATIVE_NESTING`]): 64 MiB,
/// reserved, committed only where touched. Everything the bounds allow fits
/// in an eighth of it in a debug build (`tests/nesting.rs`), so no
/// native-stack guard ever decides an outcome in place of the bounds.
pub const EXECUTION_THREAD_STACK_BYTES: usize = 64 << 20;

/// Runs `f` on a new thread named `name` with [`EXECUTION_THREAD_STACK_BYTES`]
/// of stack and returns what it returns (a panic in it resumes here). For
/// callers whose own thread may be small — a process's main thread has
/// 8 MiB — and that run actor code: the node's commands, tests.
pub fn on_execution_thread<R: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    let thread = std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(EXECUTION_THREAD_STACK_BYTES)
        .spawn(f)
        .expect("spawning an execution thread");
    match thread.join() {
        Ok(result) => result,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// A long-lived thread with [`EXECUTION_THREAD_STACK_BYTES`] of stack that
/// runs the closures sent to it, one at a time: for callers that run actor
/// code from threads they do not own (the Python package is called on
/// Python's threads). Interpreters are per thread, so one lasting thread
/// keeps its interpreter warm where a thread per call would build one each
/// time.
pub struct ExecutionWorker {
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<Job>>,
}

thread_local! {
    static ON_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl ExecutionWorker {
    /// The process's worker, started on first use.
    pub fn get() -> &'static ExecutionWorker {
        static WORKER: std::sync::OnceLock<ExecutionWorker> = std::sync::OnceLock::new();
        WORKER.get_or_init(|| {
            let (jobs, queue) = std::sync::mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("timerhost-exec".into())
                .stack_size(EXECUTION_THREAD_STACK_BYTES)
                .spawn(move || {
                    ON_WORKER.with(|on| on.set(true));
                    for job in queue {
                        job();
                    }
                })
                .expect("spawning the execution worker");
            ExecutionWorker {
                jobs: std::sync::Mutex::new(jobs),
            }
        })
    }

    /// Runs `f` on the worker and returns what it returns (a panic in it
    /// resumes here); inline when called on the worker itself.
    pub fn run<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> R {
        if ON_WORKER.with(std::cell::Cell::get) {
            return f();
        }
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
            let _ = reply.send(result);
        });
        self.jobs
            .lock()
            .expect("worker queue")
            .send(job)
            .expect("the execution worker runs as long as the process");
        match answer.recv().expect("the worker answers every job") {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// Tracked objects created since the last collection after which
/// [`Runtime::settle`] collects cyclic garbage (RustPython's own default).
const GC_YOUNG_THRESHOLD: usize = 2000;
/// Net bytes executions may leave allocated since the last collection
/// before [`Runtime::settle`] collects every generation: a cycle of a few
/// tracked objects can hold a whole budget (a self-referencing list of
/// 75,000 ints is two tracked objects and 12 MB), so counting objects alone
/// let executions leave garbage behind without end (the metering fuzzer,
/// #47: 128 MB after eight calls).
const GC_AFTER_RETAINED_BYTES: u64 = 16 * 1024 * 1024;
/// Peak bytes of executions since the last settle after which the free lists
/// that keep payloads are refilled (see [`Runtime::settle`]).
const SETTLE_AFTER_PEAK_BYTES: u64 = 64 * 1024;
/// An actor module loaded on this interpreter.
struct LoadedActor {
    class: PyObjectRef,
    /// The module's globals and, for a module that rebinds them (`global`),
    /// what the load left in them (restored at every invocation).
    globals: PyDictRef,
    snapshot: Option<Vec<(PyObjectRef, PyObjectRef)>>,
    /// Its values made at load ([`crate::interpreter::constants`]).
    module: crate::interpreter::constants::ModuleId,
}

/// Objects created once per interpreter.
pub(crate) struct Runtime {
    pub(crate) interpreter: Interpreter,
    builtins: PyObjectRef,
    storage: PyObjectRef,
    actor_classes: RefCell<HashMap<Hash, LoadedActor>>,
    /// A prelude generator function: each call makes a frame (for settling
    /// the frame free list).
    frame_maker: PyObjectRef,
    /// Peak bytes of the executions since the free lists were last settled.
    unsettled_peak_bytes: std::cell::Cell<u64>,
    /// Net bytes executions left allocated since the last collection.
    retained_bytes: std::cell::Cell<u64>,
    /// Something outside any budget (class loading, a collection) took
    /// objects off or put them on the free lists: settle all of them.
    unsettled_all: std::cell::Cell<bool>,
}

/// [`Runtime::invoke`] on this thread's interpreter: the
/// [`crate::host_api::exec::Invoke`] every execution carries for `pvm_host.call`.
pub(crate) fn invoke_handler(
    compiled: &CompiledActor,
    actor: &Address,
    deployer: &Address,
    handler: &str,
    args: &[Value],
    vm: &VirtualMachine,
) -> PyResult<Option<Value>> {
    runtime().invoke(compiled, actor, deployer, handler, args, vm)
}

/// The interpreter of this thread, created on first use and kept for the
/// thread's lifetime (deliberately leaked: dropping an interpreter leaks
/// anyway and its objects must not outlive it).
/// Drops this thread's interpreter from use after a panic inside it; the
/// next execution gets a fresh one (the old one is leaked, never reused).
pub(crate) fn discard_runtime() {
    RUNTIME.with(|slot| *slot.borrow_mut() = None);
    crate::meter::nesting::reset();
}

pub(crate) fn runtime() -> &'static Runtime {
    RUNTIME.with(|slot| {
        if let Some(runtime) = *slot.borrow() {
            return runtime;
        }
        let runtime: &'static Runtime = Box::leak(Box::new(Runtime::new()));
        *slot.borrow_mut() = Some(runtime);
        runtime
    })
}

const PRELUDE: &str = r#"
class Storage:
    __slots__ = ()
    def __getitem__(self, key):
        found, value = _storage_get(key)
        if not found:
            raise KeyError(key)
        return value
    def get(self, key, default=None):
        found, value = _storage_get(key)
        return value if found else default
    def __setitem__(self, key, value):
        _storage_set(key, value)
    def __delitem__(self, key):
        if not _storage_delete(key):
            raise KeyError(key)
    def __contains__(self, key):
        return _storage_get(key)[0]
    def keys(self, prefix=""):
        after = None
        while True:
            key = _storage_next(prefix, after)
            if key is None:
                return
            yield key
            after = key
    def __repr__(self):
        return "<storage>"

def actor(cls):
    return cls

def _pvm_frame():
    yield

class _PvmWarmUp:
    def run(self, n):
        xs = [i * 3 for i in range(n)]
        d = {i: [i, (i, i / 2)] for i in xs}
        try:
            raise ValueError("warm")
        except ValueError as e:
            d[-1] = e
        return d[3][1][0] + xs[-1]
"#;

/// Builtins passed through unchanged: constant-time or lazy.
const PLAIN_BUILTINS: &[&str] = &[
    "abs",
    "bool",
    "chr",
    "ord",
    "divmod",
    "enumerate",
    "len",
    "range",
    "reversed",
    "zip",
    "map",
    "filter",
    "round",
    "staticmethod",
    "classmethod",
    "property",
    "super",
    "object",
    "callable",
    "next",
    "repr",
    "ascii",
    "hash",
    "slice",
    "NotImplemented",
    "Ellipsis",
];
/// Builtin functions that consume their first argument entirely in Rust
/// (the consuming types are [`crate::interpreter::builtin_types`]).
const CONSUMING_BUILTINS: &[&str] = &["sum", "min", "max", "any", "all", "sorted"];
/// Builtin functions whose work grows with their argument or result
/// (conversions; the converting types are [`crate::interpreter::builtin_types`]).
const CONVERTING_BUILTINS: &[&str] = &["bin", "hex", "oct", "pow"];
const EXCEPTIONS: &[&str] = &[
    // The VM's aborts are sticky: catching them with `except BaseException`
    // changes no outcome (docs/METERING.md, "Aborts").
    "BaseException",
    "Exception",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "IndexError",
    "KeyError",
    "LookupError",
    "NameError",
    "NotImplementedError",
    "OverflowError",
    // Access control in actors (`only the deployer …`).
    "PermissionError",
    "RuntimeError",
    "StopIteration",
    "TypeError",
    "ValueError",
    "ZeroDivisionError",
    "RecursionError",
    "UnicodeError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    // Raised and caught by ordinary programs (parsers, deadlines, generator
    // clean-up, warnings as values).
    "SyntaxError",
    "TimeoutError",
    "GeneratorExit",
    "ImportError",
    "ModuleNotFoundError",
    "EOFError",
    "UnboundLocalError",
    "FloatingPointError",
    "BufferError",
    "Warning",
    "UserWarning",
    "DeprecationWarning",
    "RuntimeWarning",
    "FutureWarning",
];

/// The interpreter `Settings` of every runtime (and of the program bench's
/// unmetered interpreter, which must match them).
pub fn interpreter_settings() -> Settings {
    let mut settings = Settings::default();
    // Fixed str/bytes hash seed: dict and set order must not vary per process.
    settings.hash_seed = Some(0);
    settings.int_max_str_digits = 4300;
    settings.import_site = false;
    settings.install_signal_handlers = false;
    settings
}

impl Runtime {
    fn new() -> Runtime {
        let interpreter = Interpreter::builder(interpreter_settings()).build();
        interpreter.enter(crate::interpreter::identity::make_identity_deterministic);
        let parts = interpreter.enter(|vm| {
            vm.recursion_limit.set(RECURSION_LIMIT);
            // RustPython collects cyclic garbage inline, when a count of
            // tracked allocations passes a threshold, so inside an execution
            // the collector would run at points set by what ran before it
            // (measured before this change: the same cycle-building loop
            // peaked at 5.3, 7.0 or 8.0 MB depending on the executions before
            // it on the thread), and its own bookkeeping would be charged to
            // the actor (a 3,000-cycle loop peaks at 2.32 MB with automatic
            // collection and 1.22 MB without). Automatic collection is off;
            // `settle` collects between executions, outside every budget.
            vm.state.gc.disable();
            crate::meter::iteration::init_type();
            // The meter's natives report writes to values made at load here.
            crate::meter::writes::register(crate::interpreter::constants::before_write);
            crate::meter::slots::install(vm);
            crate::meter::inline_ints::install(vm);
            crate::meter::module_attributes::install(vm);
            crate::meter::subscripts::install(vm);
            // Before the library's classes exist (they inherit `object`'s
            // membership slot), and again below for the static types the
            // runtime makes.
            crate::meter::contains::install(vm);
            crate::meter::int_hash::install(vm);
            crate::meter::range_drain::install(vm);
            crate::meter::resume::install(vm);
            crate::meter::natives::install(vm);
            crate::interpreter::builtin_types::install_construction_meter(vm);
            crate::interpreter::load::install_freeze(vm);
            let parts = Runtime::init_objects(vm);
            crate::meter::contains::install(vm);
            crate::interpreter::release::install(vm);
            // Last: the count encloses every other slot wrapper's charge.
            crate::meter::nesting::install(vm);
            // The interpreter's own objects live forever: keep them out of
            // every later collection's scan.
            vm.state.gc.freeze();
            let frame_maker = parts
                .2
                .get_item("_pvm_frame", vm)
                .expect("_pvm_frame defined");
            (parts, frame_maker)
        });
        let ((builtins, storage, prelude), frame_maker) = parts;
        let runtime = Runtime {
            interpreter,
            builtins,
            storage,
            actor_classes: RefCell::new(HashMap::new()),
            frame_maker,
            unsettled_peak_bytes: std::cell::Cell::new(0),
            retained_bytes: std::cell::Cell::new(0),
            unsettled_all: std::cell::Cell::new(true),
        };
        runtime
            .interpreter
            .enter(|vm| runtime.warm_up(&prelude, vm));
        runtime
    }

    /// Runs one invocation through the same steps as [`Runtime::invoke`]
    /// (instance, attributes, method call, comprehensions, an exception), so
    /// that what RustPython allocates once, on first use, is allocated here
    /// and not inside the first execution of a fresh interpreter: measured,
    /// that first execution otherwise paid ~310 bytes more than later ones.
    fn warm_up(&self, prelude: &PyDictRef, vm: &VirtualMachine) {
        let class = prelude
            .get_item("_PvmWarmUp", vm)
            .expect("_PvmWarmUp defined");
        let zero = Address::ZERO;
        self.call_handler(
            &class,
            &zero,
            &zero,
            "run",
            vec![vm.ctx.new_int(40).into()],
            vm,
        )
        .expect("warm-up runs");
    }

    #[allow(clippy::type_complexity)]
    fn init_objects(vm: &VirtualMachine) -> (PyObjectRef, PyObjectRef, PyDictRef) {
        let real = vm.builtins.dict();
        let get = |name: &str| {
            real.get_item(name, vm)
                .unwrap_or_else(|_| panic!("builtin {name} exists"))
        };
        let builtins = vm.ctx.new_dict();
        let set = |name: &str, value: PyObjectRef| {
            builtins.set_item(name, value, vm).expect("dict insert")
        };

        for name in PLAIN_BUILTINS {
            set(
                name,
                crate::meter::natives::install::priced_builtin(name, get(name), vm),
            );
        }
        for name in EXCEPTIONS {
            set(name, get(name));
        }
        for name in CONSUMING_BUILTINS {
            let original = get(name);
            let walk = match *name {
                "sorted" => builtin_natives::Walk::Sort,
                "sum" => builtin_natives::Walk::Sum,
                _ => builtin_natives::Walk::First,
            };
            let function = vm.new_function(name, move |args: FuncArgs, vm: &VirtualMachine| {
                builtin_natives::consuming_builtin(walk, args, vm, |args| original.call(args, vm))
            });
            set(name, function.into());
        }
        for name in CONVERTING_BUILTINS {
            let original = get(name);
            let function = vm.new_function(name, move |args: FuncArgs, vm: &VirtualMachine| {
                builtin_natives::converting_builtin(&original, args, vm, |args| {
                    original.call(args, vm)
                })
            });
            set(name, function.into());
        }
        for (name, metered_type) in crate::interpreter::builtin_types::make_types(vm) {
            set(name, metered_type);
        }
        // What class patterns name (`case int(x)`), see
        // `crate::deploy::instrument::PATTERN_TYPES`.
        for name in crate::deploy::instrument::PATTERN_TYPES {
            set(
                &crate::deploy::instrument::pattern_type_name(name),
                get(name),
            );
        }
        for (name, function) in builtin_natives::reflective_builtins(vm) {
            set(name, function);
        }
        let real_build_class = get("__build_class__");
        let build_class = vm.new_function(
            "__build_class__",
            move |args: FuncArgs, vm: &VirtualMachine| {
                crate::interpreter::identity::build_class_native(&real_build_class, args, vm)
            },
        );
        set("__build_class__", build_class.into());

        let abort_type = vm.ctx.new_exception_type(
            "pvm",
            "ExecutionAborted",
            Some(vec![vm.ctx.exceptions.base_exception_type.to_owned()]),
        );
        let host_error_type = vm.ctx.new_exception_type(
            "pvm_host",
            "HostError",
            Some(vec![vm.ctx.exceptions.exception_type.to_owned()]),
        );

        // One native per guard the instrumenter can emit (crate::rules::guards).
        for guard in Guard::ALL {
            let name = guard.name();
            let native: PyObjectRef = match guard {
                Guard::Meter
                | Guard::Result
                | Guard::Mutate
                | Guard::Materialize
                | Guard::SetUnpack
                | Guard::Kwargs => guard_natives::guard_object(guard, vm),
                Guard::Iter => vm
                    .new_function(name, crate::meter::iteration::iter_native)
                    .into(),
                // One native per operator, registered below.
                Guard::Binop | Guard::Augop => continue,
                Guard::Unpack => vm.new_function(name, guard_natives::unpack_native).into(),
                Guard::Format => vm.new_function(name, guard_natives::format_native).into(),
            };
            set(name, native);
        }
        for (name, native) in guard_natives::operator_natives(vm) {
            set(name, native);
        }

        // The prelude is trusted VM code: compiled without instrumentation and
        // run once; its globals hold the storage natives actors cannot name.
        let prelude_globals = vm.ctx.new_dict();
        prelude_globals
            .set_item("__builtins__", builtins.clone().into(), vm)
            .expect("dict insert");
        prelude_globals
            .set_item("__name__", vm.ctx.new_str("pvm").into(), vm)
            .expect("dict insert");
        for (name, function) in [
            (
                "_storage_get",
                vm.new_function("_storage_get", storage_natives::storage_get_native),
            ),
            (
                "_storage_set",
                vm.new_function("_storage_set", storage_natives::storage_set_native),
            ),
            (
                "_storage_delete",
                vm.new_function("_storage_delete", storage_natives::storage_delete_native),
            ),
            (
                "_storage_next",
                vm.new_function("_storage_next", storage_natives::storage_next_native),
            ),
        ] {
            prelude_globals
                .set_item(name, function.into(), vm)
                .expect("dict insert");
        }
        let prelude = vm
            .compile(
                PRELUDE,
                rustpython_vm::compiler::Mode::Exec,
                "<pvm prelude>",
            )
            .expect("prelude compiles");
        vm.run_code_obj(prelude, Scope::new(None, prelude_globals.clone()))
            .expect("prelude runs");
        let storage_class = prelude_globals
            .get_item("Storage", vm)
            .expect("Storage defined");
        let storage = storage_class.call((), vm).expect("Storage()");
        set(
            "actor",
            prelude_globals
                .get_item("actor", vm)
                .expect("actor defined"),
        );

        let mut modules = HashMap::new();
        let pvm_host = make_module(vm, "pvm_host", pvm_host::host_functions(vm));
        pvm_host
            .set_attr("HostError", host_error_type.clone(), vm)
            .expect("module attr");
        set("pvm_host", pvm_host.clone());
        modules.insert("pvm_host", pvm_host);
        modules.insert(
            "hashing",
            make_module(
                vm,
                "hashing",
                crate::host_api::helpers::hashing_functions(vm),
            ),
        );
        modules.insert(
            "base64",
            make_module(vm, "base64", crate::host_api::helpers::base64_functions(vm)),
        );
        modules.insert(
            "math",
            make_module(vm, "math", crate::host_api::helpers::math_functions(vm)),
        );
        modules.insert(
            "json",
            make_module(vm, "json", crate::host_api::helpers::json_functions(vm)),
        );
        // Not for actors (the sandbox refuses `import sys`): RustPython
        // imports `sys` to report an exception it must ignore — one raised
        // while a generator is closed as it is freed — and panicked when the
        // import failed. Ignored here too, as CPython ignores it (it prints
        // "Exception ignored in …"); an abort stays sticky in the meter.
        modules.insert(
            "sys",
            make_module(
                vm,
                "sys",
                vec![(
                    "unraisablehook",
                    vm.new_function("unraisablehook", |_args: FuncArgs| {})
                        .into(),
                )],
            ),
        );

        // `from __future__ import annotations` (the compiler reads the
        // feature; the statement still imports the module at run time).
        let future = vm.ctx.new_dict();
        for feature in crate::deploy::sandbox::FUTURE_FEATURES {
            future
                .set_item(*feature, vm.ctx.new_bool(true).into(), vm)
                .expect("dict insert");
        }
        modules.insert(
            "__future__",
            vm.new_module("__future__", future, None).into(),
        );
        crate::interpreter::load::freeze_objects(modules.values());
        let import_modules = modules;
        let library_builtins = builtins.clone();
        let import = vm.new_function(
            "__import__",
            move |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                let name = args
                    .args
                    .first()
                    .and_then(|n| {
                        n.downcast_ref::<PyStr>()
                            .and_then(|s| s.to_str().map(str::to_owned))
                    })
                    .unwrap_or_default();
                if let Some(module) = import_modules.get(name.as_str()) {
                    return Ok(module.clone());
                }
                if let Some(module) = crate::interpreter::library::import(
                    &name,
                    &library_builtins,
                    invoke_handler,
                    vm,
                ) {
                    return module;
                }
                Err(vm.new_import_error(format!("No module named '{name}'"), vm.ctx.new_str(name)))
            },
        );
        set("__import__", import.into());

        install_error_types(ErrorTypes {
            abort: abort_type,
            host_error: host_error_type,
        });
        (builtins.into(), storage, prelude_globals)
    }

    /// Brings the interpreter's history-dependent state back to the same
    /// point before an execution's memory budget starts, so that what the
    /// execution is charged for memory does not depend on what ran before it
    /// on this thread (earlier executions, dry runs, a restart):
    ///
    /// - cyclic garbage is collected here, outside every budget (automatic
    ///   collection is off, see [`Runtime::new`]);
    /// - RustPython keeps dead objects of some types on per-thread free
    ///   lists, some *with their payload*: a dead dict keeps its table (a
    ///   10,000-key dict left 656 KB behind), an int its digits, a slice its
    ///   `stop` object, a range its three ints. Reusing one frees that
    ///   payload inside whichever execution comes next, crediting it memory
    ///   it never allocated; and how many dead objects a list holds decides
    ///   how many allocations the next execution saves. Settling takes every
    ///   entry off the lists and puts back fresh, minimal objects, so every
    ///   list is full of identical entries.
    ///
    /// Refilling costs several trivial calls (the payload-keeping lists alone
    /// ~8 µs against ~2 µs for a trivial call), so it is done in two tiers: all
    /// lists at start-up and after anything outside a budget touched them
    /// (class loading, a collection); the lists that keep payloads (and the
    /// list list, whose count small executions change) once the executions
    /// since the last settle together peaked at [`SETTLE_AFTER_PEAK_BYTES`].
    /// What can stay unsettled is therefore bounded by that figure (see
    /// docs/METERING.md, "Memory").
    pub(crate) fn settle(&self, vm: &VirtualMachine) {
        let unsettled = self.unsettled_peak_bytes.get() + crate::meter::alloc::last_peak_bytes();
        let retained = self
            .retained_bytes
            .get()
            .saturating_add(u64::try_from(crate::meter::alloc::last_live_bytes()).unwrap_or(0));
        let (young, _, _) = rustpython_vm::gc_state::gc_state().get_count();
        if retained >= GC_AFTER_RETAINED_BYTES {
            vm.state.gc.collect_force(2);
            self.unsettled_all.set(true);
            self.retained_bytes.set(0);
        } else if young >= GC_YOUNG_THRESHOLD {
            vm.state.gc.collect_force(0);
            self.unsettled_all.set(true);
            self.retained_bytes.set(retained);
        } else {
            self.retained_bytes.set(retained);
        }
        let all = self.unsettled_all.replace(false);
        if !all && unsettled < SETTLE_AFTER_PEAK_BYTES {
            self.unsettled_peak_bytes.set(unsettled);
            return;
        }
        self.unsettled_peak_bytes.set(0);
        crate::interpreter::free_lists::refill_free_lists(vm, &self.frame_maker, all);
    }

    /// The actor class for compiled code, executing its module on first use in
    /// this interpreter. Module bodies only define things (the validator
    /// guarantees it), so the cached class carries no state between calls and
    /// the cache cannot change any result or cost.
    pub(crate) fn actor_class(
        &self,
        compiled: &CompiledActor,
        vm: &VirtualMachine,
    ) -> PyResult<(PyObjectRef, crate::interpreter::constants::ModuleId)> {
        if let Some(loaded) = self.actor_classes.borrow().get(&compiled.code_hash) {
            if let Some(snapshot) = &loaded.snapshot {
                loaded.globals.clear();
                for (name, value) in snapshot {
                    loaded.globals.set_item(&**name, value.clone(), vm)?;
                }
            }
            return Ok((loaded.class.clone(), loaded.module));
        }
        // Loading kept objects alive that came off the free lists.
        self.unsettled_all.set(true);
        // First the module without subscript-store guards: if its load
        // leaves no list, dict or bytearray (what those guards protect), its
        // other values (instances, sets, enum members) are watched through
        // their methods and slots and the guards would only cost time.
        // Otherwise it is loaded again, guarded. Either way its values are
        // registered to be reset after every call. Loads are deterministic,
        // so every node makes the same choice.
        let cannot_load = |mutable: crate::interpreter::load::MutableValue| {
            vm.new_type_error(format!("the actor module cannot be loaded: {mutable}"))
        };
        let globals = self.run_module(&compiled.unguarded, vm)?;
        let found = crate::interpreter::load::freeze(
            &globals,
            &compiled.nonlocal_names,
            crate::interpreter::load::Mutables::Probe,
            vm,
        )
        .map_err(cannot_load)?;
        let globals = if found == 0 {
            globals
        } else {
            drop(globals);
            self.run_module(&compiled.bytecode, vm)?
        };
        let module = crate::interpreter::constants::new_module();
        crate::interpreter::load::freeze(
            &globals,
            &compiled.nonlocal_names,
            crate::interpreter::load::Mutables::Reset(module),
            vm,
        )
        .map_err(cannot_load)?;
        let class = globals.get_item(compiled.class_name.as_str(), vm)?;
        let snapshot = compiled.rebinds_globals.then(|| globals.items_vec());
        self.actor_classes.borrow_mut().insert(
            compiled.code_hash,
            LoadedActor {
                class: class.clone(),
                globals,
                snapshot,
                module,
            },
        );
        Ok((class, module))
    }

    /// Runs a module body under the load budget, into fresh globals.
    fn run_module(
        &self,
        bytecode: &rustpython_compiler_core::bytecode::CodeObject,
        vm: &VirtualMachine,
    ) -> PyResult<PyDictRef> {
        let globals = vm.ctx.new_dict();
        globals.set_item("__builtins__", self.builtins.clone(), vm)?;
        globals.set_item("__name__", vm.ctx.new_str("actor").into(), vm)?;
        // Converting with the VM (not the bare context) is required for
        // constants such as frozensets that the compiler folds `in {…}` into.
        let code = crate::interpreter::generic_ops::metered_code(vm, bytecode.clone());
        let loaded = crate::interpreter::load::run_load(
            invoke_handler,
            crate::interpreter::load::LOAD_CYCLES,
            || vm.run_code_obj(code, Scope::new(None, globals.clone())),
        );
        match loaded {
            Ok(Ok(_)) => Ok(globals),
            Ok(Err(error)) => {
                let message = crate::host_api::exec::exception_message(&error, vm);
                Err(vm.new_runtime_error(format!("the actor module failed to load: {message}")))
            }
            Err(abort) => Err(vm.new_runtime_error(format!(
                "the actor module failed to load: {} ({} cycles are available to module-level code)",
                crate::meter::charge::abort_message(abort),
                crate::interpreter::load::LOAD_CYCLES
            ))),
        }
    }

    /// Instantiates the actor and invokes `handler` with `args` (`None`: no
    /// such handler).
    pub(crate) fn invoke(
        &self,
        compiled: &CompiledActor,
        actor: &Address,
        deployer: &Address,
        handler: &str,
        args: &[Value],
        vm: &VirtualMachine,
    ) -> PyResult<Option<Value>> {
        let (class, module) = self.actor_class(compiled, vm)?;
        if !compiled.handlers.iter().any(|h| h == handler) {
            return Ok(None);
        }
        let py_args: Vec<PyObjectRef> = args.iter().map(|a| value_to_py(a, vm)).collect();
        // The module's values made at load are as the load left them for
        // this invocation, whatever an outer invocation of it wrote.
        crate::interpreter::constants::enter(module, vm)?;
        // The result is converted before the restore: `WORDS.append(x);
        // return WORDS` returns what the call made.
        let result = self
            .call_handler(&class, actor, deployer, handler, py_args, vm)
            .and_then(|returned| crate::host_api::convert::py_to_value(&returned, vm));
        let restored = crate::interpreter::constants::leave(vm);
        let result = result?;
        restored?;
        Ok(Some(result))
    }

    /// Instantiates `class` as the actor at `actor` and calls `handler`: the
    /// steps of every invocation (and of the start-up warm-up).
    fn call_handler(
        &self,
        class: &PyObjectRef,
        actor: &Address,
        deployer: &Address,
        handler: &str,
        args: Vec<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult {
        let instance = class.call((), vm)?;
        instance.set_attr("storage", self.storage.clone(), vm)?;
        instance.set_attr("address", vm.ctx.new_str(actor.to_hex()), vm)?;
        instance.set_attr("deployer", vm.ctx.new_str(deployer.to_hex()), vm)?;
        let method = instance.get_attr(&vm.ctx.new_str(handler), vm)?;
        method.call(args, vm)
    }
}

fn make_module(
    vm: &VirtualMachine,
    name: &str,
    functions: Vec<(&'static str, PyObjectRef)>,
) -> PyObjectRef {
    let dict = vm.ctx.new_dict();
    for (function_name, function) in functions {
        dict.set_item(function_name, function, vm)
            .expect("dict insert");
    }
    vm.new_module(name, dict, None).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instrumenter names guards only through `crate::rules::guards`; every one
    /// of them must be a builtin of the interpreter actors run in, callable
    /// (the meter is subscripted instead).
    #[test]
    fn every_guard_the_instrumenter_can_emit_is_a_builtin() {
        let runtime = runtime();
        runtime.interpreter.enter(|vm| {
            for op in crate::rules::guards::OperatorCode::ALL {
                for name in [op.binop_guard(), op.augop_guard()] {
                    let native = runtime
                        .builtins
                        .get_item(name, vm)
                        .unwrap_or_else(|_| panic!("{name} is not a builtin"));
                    assert!(native.is_callable(), "{name}");
                }
            }
            for guard in Guard::ALL
                .into_iter()
                .filter(|g| ![Guard::Binop, Guard::Augop].contains(g))
            {
                let native = runtime
                    .builtins
                    .get_item(guard.name(), vm)
                    .unwrap_or_else(|_| panic!("{} is not a builtin", guard.name()));
                if guard.is_subscripted() {
                    assert!(
                        native.class().slots.as_mapping.subscript.load().is_some(),
                        "{} is subscripted",
                        guard.name()
                    );
                } else {
                    assert!(native.is_callable(), "{}", guard.name());
                }
            }
            // The real types `isinstance` receives in place of stand-ins.
            for (visible, hidden) in crate::rules::guards::REAL_TYPES {
                let real = runtime
                    .builtins
                    .get_item(hidden, vm)
                    .unwrap_or_else(|_| panic!("{hidden} is not a builtin"));
                let stand_in = runtime.builtins.get_item(visible, vm).expect("a builtin");
                let behind = crate::interpreter::builtin_types::real_type_of(&stand_in);
                assert!(rustpython_vm::AsObject::is(&real, &behind), "{hidden}");
                assert!(real
                    .downcast_ref::<rustpython_vm::builtins::PyType>()
                    .is_some());
            }
        });
    }

    #[test]
    fn every_builtin_of_an_actor_is_in_the_allow_list_and_back() {
        use crate::meter::natives::table::BUILTIN_RULES;
        let runtime = runtime();
        runtime.interpreter.enter(|vm| {
            let builtins = runtime
                .builtins
                .clone()
                .downcast::<rustpython_vm::builtins::PyDict>()
                .expect("a dict");
            let mut unlisted = Vec::new();
            for (key, _) in builtins {
                let name = key
                    .downcast_ref::<PyStr>()
                    .and_then(|s| s.to_str())
                    .unwrap_or_default()
                    .to_owned();
                let machinery = name.starts_with("_pvm")
                    || name.starts_with("__")
                    || EXCEPTIONS.contains(&name.as_str())
                    || ["actor", "pvm_host"].contains(&name.as_str());
                let listed = BUILTIN_RULES
                    .iter()
                    .any(|r| r.names.contains(&name.as_str()));
                if !machinery && !listed {
                    unlisted.push(name);
                }
            }
            assert!(unlisted.is_empty(), "builtins without a rule: {unlisted:?}");
            for rule in BUILTIN_RULES {
                for name in rule.names {
                    assert!(
                        runtime.builtins.get_item(*name, vm).is_ok(),
                        "rule for builtin {name}, which actors do not have"
                    );
                }
            }
        });
    }

    #[test]
    fn every_function_of_a_native_module_is_in_the_allow_list_and_back() {
        use crate::meter::natives::table::MODULE_RULES;
        let runtime = runtime();
        runtime.interpreter.enter(|vm| {
            let import = runtime.builtins.get_item("__import__", vm).unwrap();
            let mut unlisted = Vec::new();
            for module_name in ["pvm_host", "hashing", "base64", "json", "math"] {
                let module = import.call((module_name,), vm).expect("imports");
                let dict = module.dict().expect("a module has a dict");
                let mut functions = Vec::new();
                for (key, value) in dict {
                    let name = key
                        .downcast_ref::<PyStr>()
                        .and_then(|s| s.to_str())
                        .unwrap_or_default()
                        .to_owned();
                    if rustpython_vm::AsObject::is(
                        value.class(),
                        vm.ctx.types.builtin_function_or_method_type,
                    ) {
                        functions.push(name);
                    }
                }
                for name in &functions {
                    let listed = MODULE_RULES.iter().any(|r| {
                        r.types.contains(&module_name) && r.names.contains(&name.as_str())
                    });
                    if !listed {
                        unlisted.push(format!("{module_name}.{name}"));
                    }
                }
                for rule in MODULE_RULES
                    .iter()
                    .filter(|r| r.types.contains(&module_name))
                {
                    for name in rule.names {
                        assert!(
                            functions.iter().any(|f| f == name),
                            "rule for {module_name}.{name}, which the module does not have"
                        );
                    }
                }
            }
            assert!(
                unlisted.is_empty(),
                "module functions without a rule: {unlisted:?}"
            );
        });
    }
}
