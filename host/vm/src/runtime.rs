//! The per-thread interpreter and everything actor code can call into: the
//! meter, the size guards, the guarded builtins, the import hook, the
//! `pvm_host` module and the helper modules.
//!
//! One interpreter per thread is created lazily and reused for every
//! execution on that thread (creating one costs milliseconds and leaks memory
//! on drop); native functions are created once with it, because
//! `vm.new_function` leaks its closure. Per-execution data lives in two
//! thread-locals: [`EXEC`] (meter, call frames, events — plain data) and
//! [`HOST`] (the borrowed [`Host`], installed for exactly the duration of an
//! execution through `scoped-tls-hkt`, so no lifetime is ever erased).
//!
//! Aborts (out of cycles / cells / memory) are *sticky*: once the meter has
//! tripped, every further meter call and guard raises again, and the outcome
//! is decided by the meter, not by what the actor did with the exception. So
//! `except BaseException: pass` cannot swallow an abort.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use rustpython_vm::builtins::{
    PyBaseExceptionRef, PyByteArray, PyBytes, PyDict, PyDictRef, PyFrozenSet, PyInt, PyList,
    PyRange, PySet, PyStr, PyTuple, PyTypeRef,
};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::scope::Scope;
use rustpython_vm::{AsObject, Interpreter, PyObjectRef, PyResult, Settings, VirtualMachine};
use scoped_tls_hkt::{scoped_thread_local, ReborrowMut};
use timerhost_types::{Address, ErrorKind, Event, Hash, Invocation, TimerRequest, Value};

use crate::compile::CompiledActor;
use crate::convert::{py_to_value, value_to_py};
use crate::costs;
use crate::guards::{CompareCode, Guard, OperatorCode};
use crate::host::{BlockInfo, Host, HostCall};
use crate::meter::{Abort, Meter};
use crate::vm::CodeCache;

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

/// Deepest chain of nested `pvm_host.call`s (the outermost handler is depth 1).
pub const MAX_CALL_DEPTH: usize = 32;
/// Python frames allowed per execution (recursion bombs stop here, catchably).
pub const RECURSION_LIMIT: usize = 200;

/// Tracked objects created since the last collection after which
/// [`Runtime::settle`] collects cyclic garbage (RustPython's own default).
const GC_YOUNG_THRESHOLD: usize = 2000;
/// Peak bytes of executions since the last settle after which the free lists
/// that keep payloads are refilled (see [`Runtime::settle`]).
const SETTLE_AFTER_PEAK_BYTES: u64 = 64 * 1024;
/// Free-list capacities of RustPython 0.6.0 (`MAX_FREELIST`; the version is
/// pinned in the workspace). `memory_peak_does_not_depend_on_earlier_executions`
/// fails if a change of these leaves settling incomplete.
const DICT_FREELIST: usize = 80;
const INT_FREELIST: usize = 100;
const RANGE_FREELIST: usize = 6;
const SLICE_FREELIST: usize = 1;
const LIST_FREELIST: usize = 80;
const TUPLE_FREELIST: usize = 2000;
const FLOAT_FREELIST: usize = 100;
const COMPLEX_FREELIST: usize = 100;
const FRAME_FREELIST: usize = 200;

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
}

/// Everything one execution (with its nested calls) needs besides the host.
pub(crate) struct ExecState {
    pub(crate) meter: Meter,
    pub(crate) frames: Vec<Frame>,
    pub(crate) events: Vec<Event>,
    pub(crate) code_cache: Arc<CodeCache>,
    pub(crate) block: BlockInfo,
    pub(crate) tx_sender: Address,
}

thread_local! {
    pub(crate) static EXEC: RefCell<Option<ExecState>> = const { RefCell::new(None) };
    static RUNTIME: RefCell<Option<&'static Runtime>> = const { RefCell::new(None) };
}

fn with_exec<R>(f: impl FnOnce(&mut ExecState) -> R) -> R {
    EXEC.with(|cell| f(cell.borrow_mut().as_mut().expect("inside an execution")))
}

/// Objects created once per interpreter.
pub(crate) struct Runtime {
    pub(crate) interpreter: Interpreter,
    builtins: PyObjectRef,
    storage: PyObjectRef,
    abort_type: PyTypeRef,
    host_error_type: PyTypeRef,
    actor_classes: RefCell<HashMap<Hash, PyObjectRef>>,
    /// A prelude generator function: each call makes a frame (for settling
    /// the frame free list).
    frame_maker: PyObjectRef,
    /// Peak bytes of the executions since the free lists were last settled.
    unsettled_peak_bytes: std::cell::Cell<u64>,
    /// Something outside any budget (class loading, a collection) took
    /// objects off or put them on the free lists: settle all of them.
    unsettled_all: std::cell::Cell<bool>,
}

/// The interpreter of this thread, created on first use and kept for the
/// thread's lifetime (deliberately leaked: dropping an interpreter leaks
/// anyway and its objects must not outlive it).
/// Drops this thread's interpreter from use after a panic inside it; the
/// next execution gets a fresh one (the old one is leaked, never reused).
pub(crate) fn discard_runtime() {
    RUNTIME.with(|slot| *slot.borrow_mut() = None);
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
    "isinstance",
    "len",
    "range",
    "reversed",
    "zip",
    "map",
    "filter",
    "round",
    "staticmethod",
    "slice",
    "NotImplemented",
    "Ellipsis",
];
/// Builtins that consume their first argument entirely in Rust.
const CONSUMING_BUILTINS: &[&str] = &[
    "sum",
    "min",
    "max",
    "any",
    "all",
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
    "sorted",
];
/// Builtins whose work grows with their argument or result (conversions).
const CONVERTING_BUILTINS: &[&str] = &[
    "str",
    "int",
    "bytes",
    "bytearray",
    "bin",
    "hex",
    "oct",
    "pow",
];
const EXCEPTIONS: &[&str] = &[
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
];

impl Runtime {
    fn new() -> Runtime {
        let mut settings = Settings::default();
        // Fixed str/bytes hash seed: dict and set order must not vary per process.
        settings.hash_seed = Some(0);
        settings.int_max_str_digits = 4300;
        settings.import_site = false;
        settings.install_signal_handlers = false;
        let interpreter = Interpreter::builder(settings).build();
        interpreter.enter(make_identity_deterministic);
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
            crate::iteration::init_type();
            crate::slot_meter::install(vm);
            let parts = Runtime::init_objects(vm);
            // The interpreter's own objects live forever: keep them out of
            // every later collection's scan.
            vm.state.gc.freeze();
            let frame_maker = parts
                .4
                .get_item("_pvm_frame", vm)
                .expect("_pvm_frame defined");
            (parts, frame_maker)
        });
        let ((builtins, storage, abort_type, host_error_type, prelude), frame_maker) = parts;
        let runtime = Runtime {
            interpreter,
            builtins,
            storage,
            abort_type,
            host_error_type,
            actor_classes: RefCell::new(HashMap::new()),
            frame_maker,
            unsettled_peak_bytes: std::cell::Cell::new(0),
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
    fn init_objects(
        vm: &VirtualMachine,
    ) -> (PyObjectRef, PyObjectRef, PyTypeRef, PyTypeRef, PyDictRef) {
        let real = vm.builtins.dict();
        let get = |name: &str| {
            real.get_item(name, vm)
                .unwrap_or_else(|_| panic!("builtin {name} exists"))
        };
        let builtins = vm.ctx.new_dict();
        let set = |name: &str, value: PyObjectRef| {
            builtins.set_item(name, value, vm).expect("dict insert")
        };

        for name in PLAIN_BUILTINS.iter().chain(EXCEPTIONS) {
            set(name, get(name));
        }
        for name in CONSUMING_BUILTINS {
            let original = get(name);
            let sort = *name == "sorted";
            let function = vm.new_function(name, move |args: FuncArgs, vm: &VirtualMachine| {
                consuming_builtin(&original, sort, args, vm)
            });
            set(name, function.into());
        }
        for name in CONVERTING_BUILTINS {
            let original = get(name);
            let function = vm.new_function(name, move |args: FuncArgs, vm: &VirtualMachine| {
                converting_builtin(&original, args, vm)
            });
            set(name, function.into());
        }
        let real_build_class = get("__build_class__");
        let build_class = vm.new_function(
            "__build_class__",
            move |args: FuncArgs, vm: &VirtualMachine| {
                build_class_native(&real_build_class, args, vm)
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

        // One native per guard the instrumenter can emit (crate::guards).
        for guard in Guard::ALL {
            let name = guard.name();
            let native: PyObjectRef = match guard {
                Guard::Meter => vm.new_function(name, meter_native).into(),
                Guard::Iter => vm.new_function(name, crate::iteration::iter_native).into(),
                Guard::Cmp => vm.new_function(name, compare_native).into(),
                Guard::Binop => vm.new_function(name, binop_native).into(),
                Guard::Augop => vm.new_function(name, augop_native).into(),
                Guard::Contains => vm.new_function(name, contains_native).into(),
                Guard::Method => vm.new_function(name, method_native).into(),
                Guard::Result => vm.new_function(name, result_native).into(),
                Guard::Materialize => vm.new_function(name, materialize_native).into(),
                Guard::Kwargs => vm.new_function(name, kwargs_native).into(),
            };
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
                vm.new_function("_storage_get", storage_get_native),
            ),
            (
                "_storage_set",
                vm.new_function("_storage_set", storage_set_native),
            ),
            (
                "_storage_delete",
                vm.new_function("_storage_delete", storage_delete_native),
            ),
            (
                "_storage_next",
                vm.new_function("_storage_next", storage_next_native),
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
        let pvm_host = make_module(vm, "pvm_host", host_functions(vm));
        pvm_host
            .set_attr("HostError", host_error_type.clone(), vm)
            .expect("module attr");
        set("pvm_host", pvm_host.clone());
        modules.insert("pvm_host", pvm_host);
        modules.insert(
            "hashing",
            make_module(vm, "hashing", crate::helpers::hashing_functions(vm)),
        );
        modules.insert(
            "base64",
            make_module(vm, "base64", crate::helpers::base64_functions(vm)),
        );
        modules.insert(
            "math",
            make_module(vm, "math", crate::helpers::math_functions(vm)),
        );
        modules.insert(
            "json",
            make_module(vm, "json", crate::helpers::json_functions(vm)),
        );

        let import_modules = modules;
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
                import_modules.get(name.as_str()).cloned().ok_or_else(|| {
                    vm.new_import_error(format!("No module named '{name}'"), vm.ctx.new_str(name))
                })
            },
        );
        set("__import__", import.into());

        (
            builtins.into(),
            storage,
            abort_type,
            host_error_type,
            prelude_globals,
        )
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
        let unsettled = self.unsettled_peak_bytes.get() + crate::alloc::last_peak_bytes();
        let (young, _, _) = rustpython_vm::gc_state::gc_state().get_count();
        if young >= GC_YOUNG_THRESHOLD {
            vm.state.gc.collect_force(0);
            self.unsettled_all.set(true);
        }
        let all = self.unsettled_all.replace(false);
        if !all && unsettled < SETTLE_AFTER_PEAK_BYTES {
            self.unsettled_peak_bytes.set(unsettled);
            return;
        }
        self.unsettled_peak_bytes.set(0);
        refill_free_lists(vm, &self.frame_maker, all);
    }

    /// The actor class for compiled code, executing its module on first use in
    /// this interpreter. Module bodies only define things (the validator
    /// guarantees it), so the cached class carries no state between calls and
    /// the cache cannot change any result or cost.
    pub(crate) fn actor_class(&self, compiled: &CompiledActor, vm: &VirtualMachine) -> PyResult {
        if let Some(class) = self.actor_classes.borrow().get(&compiled.code_hash) {
            return Ok(class.clone());
        }
        let globals = vm.ctx.new_dict();
        globals.set_item("__builtins__", self.builtins.clone(), vm)?;
        globals.set_item("__name__", vm.ctx.new_str("actor").into(), vm)?;
        // Converting with the VM (not the bare context) is required for
        // constants such as frozensets that the compiler folds `in {…}` into.
        let code =
            rustpython_vm::builtins::PyCode::new_ref_from_bytecode(vm, compiled.bytecode.clone());
        vm.run_code_obj(code, Scope::new(None, globals.clone()))?;
        let class = globals.get_item(compiled.class_name.as_str(), vm)?;
        self.actor_classes
            .borrow_mut()
            .insert(compiled.code_hash, class.clone());
        // Loading kept objects alive that came off the free lists.
        self.unsettled_all.set(true);
        Ok(class)
    }

    /// Instantiates the actor and invokes `handler` with `args`.
    pub(crate) fn invoke(
        &self,
        compiled: &CompiledActor,
        actor: &Address,
        deployer: &Address,
        handler: &str,
        args: &[Value],
        vm: &VirtualMachine,
    ) -> PyResult<Option<PyObjectRef>> {
        let class = self.actor_class(compiled, vm)?;
        if !compiled.handlers.iter().any(|h| h == handler) {
            return Ok(None);
        }
        let py_args: Vec<PyObjectRef> = args.iter().map(|a| value_to_py(a, vm)).collect();
        self.call_handler(&class, actor, deployer, handler, py_args, vm)
            .map(Some)
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

    /// The `kind` of a `pvm_host.HostError`, or `None` for other exceptions.
    pub(crate) fn host_error_kind(
        &self,
        exc: &PyBaseExceptionRef,
        vm: &VirtualMachine,
    ) -> Option<ErrorKind> {
        if !exc.class().fast_issubclass(&self.host_error_type) {
            return None;
        }
        let kind = exc.as_object().get_attr("kind", vm).ok()?;
        let kind = kind.downcast_ref::<PyStr>()?.to_str()?.to_owned();
        ALL_ERROR_KINDS.iter().copied().find(|k| k.as_str() == kind)
    }

    pub(crate) fn abort_exception(&self, abort: Abort, vm: &VirtualMachine) -> PyBaseExceptionRef {
        let message = match abort {
            Abort::Cycles => "out of cycles",
            Abort::Cells => "out of cells",
            Abort::Memory => "out of memory",
        };
        vm.new_exception_msg(self.abort_type.clone(), message.into())
    }

    pub(crate) fn host_error(
        &self,
        kind: ErrorKind,
        message: &str,
        vm: &VirtualMachine,
    ) -> PyBaseExceptionRef {
        let exc = vm.new_exception_msg(
            self.host_error_type.clone(),
            format!("{}: {message}", kind.as_str()).into(),
        );
        let _ = exc
            .as_object()
            .set_attr("kind", vm.ctx.new_str(kind.as_str()), vm);
        exc
    }
}

/// Default `repr`/`str` of objects, functions, methods, generators and
/// modules embed memory addresses (`<X object at 0x7f…>`), and their default
/// hash is address-based, so set order would vary between runs. Type slots
/// live in the process-wide RustPython context and actor classes inherit
/// from `object`, so overriding the slots once makes every such repr
/// address-free and makes those objects unhashable (as dict keys or set
/// members their order would otherwise depend on addresses). `None` gets a
/// constant hash, as in CPython 3.12.
fn address_free_repr(
    obj: &rustpython_vm::PyObject,
    vm: &VirtualMachine,
) -> PyResult<rustpython_vm::builtins::PyStrRef> {
    Ok(vm.ctx.new_str(format!("<{} object>", obj.class().name())))
}

fn unhashable(
    obj: &rustpython_vm::PyObject,
    vm: &VirtualMachine,
) -> PyResult<rustpython_vm::common::hash::PyHash> {
    Err(vm.new_type_error(format!(
        "unhashable type: '{}' (its hash would depend on its memory address)",
        obj.class().name()
    )))
}

/// `__build_class__` for actors: classes created by actor code get the
/// address-free repr and address-free (absent) hash, whatever they inherit.
fn build_class_native(real: &PyObjectRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let class = real.call(args, vm)?;
    if let Some(class) = class.downcast_ref::<rustpython_vm::builtins::PyType>() {
        class.slots.repr.store(Some(address_free_repr));
        class.slots.hash.store(Some(unhashable));
    }
    Ok(class)
}

/// Takes every entry off RustPython's free lists and puts back fresh,
/// minimal objects (see [`Runtime::settle`]); `all` includes the lists whose
/// entries keep no payload (tuples, floats, complex numbers, frames).
fn refill_free_lists(vm: &VirtualMachine, frame_maker: &PyObjectRef, all: bool) {
    use rustpython_vm::builtins::PySlice;
    use rustpython_vm::PyPayload;

    // Slices and ranges first: dropping what their dead entries hold may put
    // ints and lists on their free lists, which are refilled after.
    let mut fresh: Vec<PyObjectRef> = Vec::new();
    fresh.extend((0..SLICE_FREELIST).map(|_| {
        PySlice {
            start: None,
            stop: vm.ctx.none(),
            step: None,
        }
        .into_ref(&vm.ctx)
        .into()
    }));
    fresh.extend((0..RANGE_FREELIST).map(|_| {
        PyRange {
            start: vm.ctx.new_int(0),
            stop: vm.ctx.new_int(0),
            step: vm.ctx.new_int(1),
        }
        .into_ref(&vm.ctx)
        .into()
    }));
    fresh.extend((0..DICT_FREELIST).map(|_| vm.ctx.new_dict().into()));
    // Beyond the small-int cache, so each is a new object.
    fresh.extend((0..INT_FREELIST).map(|i| vm.ctx.new_int(1_000_000 + i).into()));
    fresh.extend((0..LIST_FREELIST).map(|_| vm.ctx.new_list(Vec::new()).into()));
    if all {
        fresh.extend((0..TUPLE_FREELIST).map(|_| vm.ctx.new_tuple(vec![vm.ctx.none()]).into()));
        // Complex numbers before floats: making one from two floats uses floats.
        let complex_type = vm.ctx.types.complex_type.to_owned();
        fresh.extend((0..COMPLEX_FREELIST).map(|_| {
            complex_type
                .as_object()
                .call((0.5f64, 0.5f64), vm)
                .expect("complex(0.5, 0.5)")
        }));
        fresh.extend((0..FLOAT_FREELIST).map(|_| vm.ctx.new_float(0.5).into()));
        // Each call of the generator function makes a generator with a frame.
        fresh.extend((0..FRAME_FREELIST).map(|_| {
            frame_maker
                .call((), vm)
                .expect("a generator function call makes a generator")
        }));
    }
    // Dropped together: back onto the free lists, each full of identical
    // minimal entries.
    drop(fresh);
}

fn make_identity_deterministic(vm: &VirtualMachine) {
    use rustpython_vm::common::hash::PyHash;
    use rustpython_vm::PyObject;

    fn none_hash(_: &PyObject, _: &VirtualMachine) -> PyResult<PyHash> {
        Ok(0xFCA86420)
    }
    let types = &vm.ctx.types;
    for class in [
        types.object_type,
        types.function_type,
        types.builtin_function_or_method_type,
        types.bound_method_type,
        types.method_descriptor_type,
        types.generator_type,
        types.module_type,
        types.cell_type,
    ] {
        class.slots.repr.store(Some(address_free_repr));
        class.slots.hash.store(Some(unhashable));
    }
    types.type_type.slots.hash.store(Some(unhashable));
    // printf-style formatting (`"%999999999d" % 1`) allocates whatever width
    // the format asks for, inside one instruction. Removing the slot makes
    // `str % x` a plain TypeError everywhere, so `%` needs no guard.
    for class in [types.str_type, types.bytes_type, types.bytearray_type] {
        class.slots.as_number.remainder.store(None);
        class.slots.as_number.right_remainder.store(None);
        class.slots.as_number.inplace_remainder.store(None);
    }
    types.none_type.slots.hash.store(Some(none_hash));
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

// ---------------------------------------------------------------------------
// Charging

/// Charges the meter; on an abort returns the exception to raise.
pub(crate) fn charge(cycles: u64, cells: u64, vm: &VirtualMachine) -> PyResult<()> {
    let memory_exceeded = crate::alloc::MemoryBudget::exceeded();
    with_exec(|state| state.meter.charge(cycles, cells, memory_exceeded))
        .map_err(|abort| runtime().abort_exception(abort, vm))
}

/// [`charge`] for code that also runs outside executions (the metered type
/// slots, [`crate::slot_meter`]): outside one, or while the host itself holds
/// the execution state, nothing is charged.
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
        Some(Err(abort)) => Err(runtime().abort_exception(abort, vm)),
        _ => Ok(()),
    }
}

fn trip(abort: Abort, vm: &VirtualMachine) -> PyBaseExceptionRef {
    with_exec(|state| state.meter.trip(abort));
    runtime().abort_exception(abort, vm)
}

/// Largest integer (in bits) a guarded operation may produce. Bounding ints
/// keeps every unguarded integer operation (`x + 1`, `x % 7`) cheap, which is
/// what lets the instrumenter skip guards on them.
pub const MAX_INT_BITS: u128 = 65_536;

fn check_int_bits(bits: u128, vm: &VirtualMachine) -> PyResult<()> {
    if bits > MAX_INT_BITS {
        return Err(vm.new_overflow_error(format!(
            "integer results are limited to {MAX_INT_BITS} bits in actors"
        )));
    }
    Ok(())
}

/// Fails with `out_of_memory` before an operation that would produce more
/// than the per-operation cap or what is left of the memory budget.
fn precheck_result_bytes(bytes: u128, vm: &VirtualMachine) -> PyResult<()> {
    let cap =
        u128::from(costs::size::MAX_RESULT_BYTES.min(crate::alloc::MemoryBudget::remaining()));
    if bytes > cap {
        return Err(trip(Abort::Memory, vm));
    }
    Ok(())
}

fn charge_host<T>(call: &HostCall<T>, vm: &VirtualMachine) -> PyResult<()> {
    charge(call.cost.cycles, call.cost.cells, vm)
}

/// `(elements, bytes)` an operation over `obj` touches.
pub(crate) fn size_of(obj: &rustpython_vm::PyObject) -> (u64, u64) {
    if let Some(s) = obj.downcast_ref::<PyStr>() {
        return (0, s.byte_len() as u64);
    }
    if let Some(b) = obj.downcast_ref::<PyBytes>() {
        return (0, b.as_bytes().len() as u64);
    }
    if let Some(b) = obj.downcast_ref::<PyByteArray>() {
        return (0, b.borrow_buf().len() as u64);
    }
    if let Some(i) = obj.downcast_ref::<PyInt>() {
        return (0, i.as_bigint().bits() / 8);
    }
    if let Some(l) = obj.downcast_ref::<PyList>() {
        return (l.borrow_vec().len() as u64, 0);
    }
    if let Some(t) = obj.downcast_ref::<PyTuple>() {
        return (t.len() as u64, 0);
    }
    if let Some(d) = obj.downcast_ref::<PyDict>() {
        return (d.__len__() as u64, 0);
    }
    if obj.downcast_ref::<PySet>().is_some() || obj.downcast_ref::<PyFrozenSet>().is_some() {
        // Exact builtin sets (actors cannot define __len__): no user code runs.
        return (set_len(obj), 0);
    }
    (0, 0)
}

pub(crate) fn size_cycles((elements, bytes): (u64, u64)) -> u64 {
    elements * costs::size::PER_ELEMENT + costs::for_bytes(bytes)
}

fn charge_size(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    charge(size_cycles(size_of(obj)), 0, vm)
}

/// Charges converting `value` between objects and the canonical encoding
/// `ways` times: per nested item (charged by encoded bytes alone, `json`
/// round trips of a 20,000-element list ran at 235–402 ns per cycle).
pub(crate) fn charge_conversion(value: &Value, ways: u64, vm: &VirtualMachine) -> PyResult<()> {
    let items = crate::convert::nested_items(value);
    charge(items * ways * costs::size::PER_CONVERTED_ITEM, 0, vm)
}

/// Characters of a `str`, bytes of a `bytes`/`bytearray`: the items walking
/// it produces.
fn items_of_text(obj: &PyObjectRef) -> Option<u64> {
    if let Some(s) = obj.downcast_ref::<PyStr>() {
        return Some(s.char_len() as u64);
    }
    if let Some(b) = obj.downcast_ref::<PyBytes>() {
        return Some(b.as_bytes().len() as u64);
    }
    obj.downcast_ref::<PyByteArray>()
        .map(|b| b.borrow_buf().len() as u64)
}

fn is_sized(obj: &PyObjectRef) -> bool {
    obj.downcast_ref::<PyStr>().is_some()
        || obj.downcast_ref::<PyBytes>().is_some()
        || obj.downcast_ref::<PyByteArray>().is_some()
        || obj.downcast_ref::<PyList>().is_some()
        || obj.downcast_ref::<PyTuple>().is_some()
        || obj.downcast_ref::<PyDict>().is_some()
        || obj.downcast_ref::<PySet>().is_some()
        || obj.downcast_ref::<PyFrozenSet>().is_some()
}

/// Charges for walking `obj` and returns something safe to hand to a Rust
/// loop: sized containers as they are, ranges by length, anything else (a
/// lazy iterator, which would otherwise run unmetered inside Rust) drained
/// here into a list, one charged item at a time.
fn materialize(obj: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    if let Some(items) = items_of_text(&obj) {
        // Walking a str or bytes makes an object per character or byte
        // (`set(s)` of 1 MB took 13 ms for 62,500 cycles at bytes / 16).
        charge(items * costs::size::PER_ELEMENT, 0, vm)?;
        return Ok(obj);
    }
    if is_sized(&obj) {
        charge_size(&obj, vm)?;
        return Ok(obj);
    }
    if obj.downcast_ref::<PyRange>().is_some() {
        let length = obj.length(vm)? as u64;
        charge(length * costs::size::PER_ELEMENT, 0, vm)?;
        return Ok(obj);
    }
    let iterator = obj.get_iter(vm)?;
    let mut items = Vec::new();
    loop {
        charge(costs::size::PER_ELEMENT, 0, vm)?;
        match iterator.next(vm)? {
            rustpython_vm::protocol::PyIterReturn::Return(item) => items.push(item),
            rustpython_vm::protocol::PyIterReturn::StopIteration(_) => break,
        }
    }
    Ok(vm.ctx.new_list(items).into())
}

fn int_value(obj: &PyObjectRef) -> Option<&PyInt> {
    obj.downcast_ref::<PyInt>().map(|int| &**int)
}

/// Saturating conversion (huge values become `i64::MAX`/`MIN`): used for
/// counts and exponents, where saturation makes the pre-check fail as it should.
fn int_to_i64(int: &PyInt) -> i64 {
    match int_to_i128(int) {
        Some(value) => value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        None if int.as_bigint().sign() == malachite_bigint::Sign::Minus => i64::MIN,
        None => i64::MAX,
    }
}

fn int_to_i128(int: &PyInt) -> Option<i128> {
    let value = int.as_bigint();
    if value.bits() > 120 {
        return None;
    }
    num_traits::ToPrimitive::to_i128(&crate::convert::from_py_bigint(value))
}

fn set_len(obj: &rustpython_vm::PyObject) -> u64 {
    runtime()
        .interpreter
        .enter(|vm| obj.length(vm).unwrap_or(0) as u64)
}

fn int_bits(int: &PyInt) -> u64 {
    int.as_bigint().bits()
}

/// Cycles for multiplying ints of these sizes: a schoolbook bound on limb
/// products (zero for two machine words).
pub(crate) fn int_product_cycles(a_bits: u64, b_bits: u64) -> u64 {
    (a_bits / 64 + 1) * (b_bits / 64 + 1) / 4
}

// ---------------------------------------------------------------------------
// Natives the instrumenter inserts

fn meter_native(amount: u64, vm: &VirtualMachine) -> PyResult<bool> {
    charge(amount, 0, vm)?;
    Ok(true)
}

/// The operator behind a guard's code; anything else is a VM bug.
fn operator(code: u8, vm: &VirtualMachine) -> PyResult<OperatorCode> {
    OperatorCode::from_code(code)
        .ok_or_else(|| vm.new_runtime_error(format!("unknown operator code {code}")))
}

/// Pre-checks and charges `left op right` by operand sizes.
fn charge_operator(
    op: OperatorCode,
    left: &PyObjectRef,
    right: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let left_size = size_of(left);
    let right_size = size_of(right);
    match op {
        // Sequence repetition: the result is len × count.
        OperatorCode::Mult => {
            let repetition = match (int_value(left), int_value(right)) {
                (Some(_), Some(_)) => None,
                (Some(count), None) => Some((count, right_size)),
                (None, Some(count)) => Some((count, left_size)),
                (None, None) => None,
            };
            if let Some((count, (elements, bytes))) = repetition {
                let count = int_to_i64(count).max(0) as u128;
                let result_bytes = (u128::from(elements) * 8 + u128::from(bytes)) * count;
                precheck_result_bytes(result_bytes, vm)?;
                let elements_out = u128::from(elements) * count;
                return charge(
                    (elements_out as u64) * costs::size::PER_ELEMENT
                        + costs::for_bytes(u128::from(bytes) as u64 * count as u64),
                    0,
                    vm,
                );
            }
            if let (Some(a), Some(b)) = (int_value(left), int_value(right)) {
                check_int_bits(u128::from(int_bits(a)) + u128::from(int_bits(b)), vm)?;
                return charge(int_product_cycles(int_bits(a), int_bits(b)), 0, vm);
            }
        }
        // Integer power: the result has about bits(a) × b bits.
        OperatorCode::Pow => {
            if let (Some(base), Some(exponent)) = (int_value(left), int_value(right)) {
                let exponent = int_to_i64(exponent);
                let base_bits = int_bits(base);
                if exponent > 0 && base_bits > 1 {
                    let result_bits = u128::from(base_bits) * exponent as u128;
                    precheck_result_bytes(result_bits / 8, vm)?;
                    check_int_bits(result_bits, vm)?;
                    let result_limbs = (result_bits / 64) as u64 + 1;
                    let squarings = 64 - (exponent as u64).leading_zeros() as u64;
                    return charge(result_limbs * squarings, 0, vm);
                }
                return charge(1, 0, vm);
            }
        }
        // Left shift: bits(a) + n.
        OperatorCode::LShift => {
            if let (Some(value), Some(shift)) = (int_value(left), int_value(right)) {
                let shift = int_to_i64(shift).max(0) as u128;
                let result_bits = u128::from(int_bits(value)) + shift;
                precheck_result_bytes(result_bits / 8, vm)?;
                if int_bits(value) > 0 {
                    check_int_bits(result_bits, vm)?;
                }
                return charge((result_bits / 64) as u64 / 4, 0, vm);
            }
        }
        // printf-style formatting can request unbounded widths ("%999999999d").
        OperatorCode::Mod
            if left.downcast_ref::<PyStr>().is_some()
                || left.downcast_ref::<PyBytes>().is_some() =>
        {
            return Err(
                vm.new_type_error("%-formatting is not supported by the actor VM; use f-strings")
            );
        }
        _ => {}
    }
    charge(size_cycles(left_size) + size_cycles(right_size), 0, vm)
}

fn apply_operator(
    op: OperatorCode,
    left: &PyObjectRef,
    right: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    match op {
        OperatorCode::Add => vm._add(left, right),
        OperatorCode::Sub => vm._sub(left, right),
        OperatorCode::Mult => vm._mul(left, right),
        OperatorCode::MatMult => vm._matmul(left, right),
        OperatorCode::Div => vm._truediv(left, right),
        OperatorCode::Mod => vm._mod(left, right),
        OperatorCode::Pow => vm._pow(left, right, vm.ctx.none.as_object()),
        OperatorCode::LShift => vm._lshift(left, right),
        OperatorCode::RShift => vm._rshift(left, right),
        OperatorCode::BitOr => vm._or(left, right),
        OperatorCode::BitXor => vm._xor(left, right),
        OperatorCode::BitAnd => vm._and(left, right),
        OperatorCode::FloorDiv => vm._floordiv(left, right),
    }
}

fn binop_native(code: u8, left: PyObjectRef, right: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let op = operator(code, vm)?;
    charge_operator(op, &left, &right, vm)?;
    let result = apply_operator(op, &left, &right, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

/// `a == b` (`code` 0) or `a != b` (1) through the types' comparison slots,
/// which charge by size ([`crate::slot_meter`]); RustPython may otherwise
/// compare two `str`s inline, uncharged, once the instruction is hot.
fn compare_native(
    code: u8,
    left: PyObjectRef,
    right: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    use rustpython_vm::types::PyComparisonOp;
    let op = match CompareCode::from_code(code) {
        Some(CompareCode::Eq) => PyComparisonOp::Eq,
        Some(CompareCode::NotEq) => PyComparisonOp::Ne,
        None => return Err(vm.new_runtime_error(format!("unknown comparison code {code}"))),
    };
    left.rich_compare(right, op, vm)
}

/// `x op= y`: pre-checks like `_pvm_binop` and returns `y` for the in-place op.
fn augop_native(
    code: u8,
    current: PyObjectRef,
    value: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let op = operator(code, vm)?;
    charge_operator(op, &current, &value, vm)?;
    // `list += iterator` would drain the iterator inside Rust.
    if op == OperatorCode::Add && current.downcast_ref::<PyList>().is_some() {
        return materialize(value, vm);
    }
    Ok(value)
}

fn contains_native(container: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let hashed = container.downcast_ref::<PyDict>().is_some()
        || container.downcast_ref::<PySet>().is_some()
        || container.downcast_ref::<PyFrozenSet>().is_some()
        || container.downcast_ref::<PyRange>().is_some();
    if hashed {
        return Ok(container);
    }
    if is_sized(&container) {
        charge_size(&container, vm)?;
        return Ok(container);
    }
    // Objects with their own `__contains__` (the storage view: it charges a
    // host read) are left alone; only `in` over a lazy iterator, which would
    // be drained inside Rust, is materialised with per-item charges.
    if container
        .class()
        .has_attr(vm.ctx.intern_str("__contains__"))
    {
        return Ok(container);
    }
    materialize(container, vm)
}

fn result_native(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    charge_size(&value, vm)?;
    Ok(value)
}

fn materialize_native(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    materialize(value, vm)
}

/// `f(**mapping)`: besides walking the mapping, RustPython copies every key
/// into a Rust string and hashes it again for the callee's keyword
/// arguments, on every call — a 1 MB key cost ~0.8 ms per call for ~20
/// cycles before this charge. Keys are charged by their bytes.
fn kwargs_native(value: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let value = materialize(value, vm)?;
    if let Some(dict) = value.downcast_ref::<PyDict>() {
        let key_bytes: u64 = dict.into_iter().map(|(key, _)| size_of(&key).1).sum();
        charge(costs::for_bytes(key_bytes), 0, vm)?;
    }
    Ok(value)
}

/// `obj.name(*args, **kwargs)` for methods whose cost depends on sizes.
fn method_native(mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    if args.args.len() < 2 {
        return Err(vm.new_type_error("_pvm_method needs a receiver and a name"));
    }
    let receiver = args.args.remove(0);
    let name_obj = args.args.remove(0);
    let name = name_obj
        .downcast_ref::<PyStr>()
        .and_then(|s| s.to_str().map(str::to_owned))
        .ok_or_else(|| vm.new_type_error("method name must be str"))?;
    let (elements, bytes) = size_of(&receiver);
    let receiver_chars = bytes;
    let int_arg =
        |index: usize| -> Option<i64> { args.args.get(index).and_then(int_value).map(int_to_i64) };
    match name.as_str() {
        "ljust" | "rjust" | "center" | "zfill" => {
            let width = int_arg(0).unwrap_or(0).max(0) as u128;
            precheck_result_bytes(width * 4, vm)?;
            charge(costs::for_bytes(width as u64), 0, vm)?;
        }
        "expandtabs" => {
            let tab = int_arg(0).unwrap_or(8).max(1) as u128;
            precheck_result_bytes(tab * u128::from(receiver_chars), vm)?;
        }
        "from_bytes" => {
            let (_, input_bytes) = args.args.first().map_or((0, 0), |a| size_of(a));
            check_int_bits(u128::from(input_bytes) * 8, vm)?;
        }
        "to_bytes" => {
            let length = int_arg(0).unwrap_or(1).max(0) as u128;
            precheck_result_bytes(length, vm)?;
        }
        "replace" if args.args.len() >= 2 => {
            let (_, old_bytes) = size_of(&args.args[0]);
            let (_, new_bytes) = size_of(&args.args[1]);
            // An empty `old` matches between every two characters.
            let occurrences = receiver_chars
                .checked_div(old_bytes)
                .unwrap_or(receiver_chars + 1);
            let occurrences = match int_arg(2) {
                Some(count) if count >= 0 => occurrences.min(count as u64),
                _ => occurrences,
            };
            precheck_result_bytes(
                u128::from(receiver_chars) + u128::from(occurrences) * u128::from(new_bytes),
                vm,
            )?;
            // Slow per byte in RustPython (see `count` below).
            charge(2 * costs::for_bytes(bytes), 0, vm)?;
        }
        "join"
        | "extend"
        | "update"
        | "union"
        | "intersection"
        | "difference"
        | "symmetric_difference"
        | "issubset"
        | "issuperset"
        | "isdisjoint" => {
            if let Some(first) = args.args.first().cloned() {
                args.args[0] = materialize(first.clone(), vm)?;
            }
        }
        "sort" => {
            let log = 64 - elements.leading_zeros() as u64;
            charge(elements * log * costs::size::SORT_LOG_FACTOR, 0, vm)?;
        }
        // RustPython does several times the reference work per byte in these
        // (measured, docs/METERING.md "Size surcharges"): `translate` looks
        // every character up in the table, `count` (and `replace`, above)
        // scan slowly.
        "translate" => {
            let items = items_of_text(&receiver).unwrap_or(0);
            charge(items * costs::size::PER_ELEMENT, 0, vm)?;
        }
        "count" => charge(3 * costs::for_bytes(bytes), 0, vm)?,
        _ => {}
    }
    let argument_cycles: u64 = args.args.iter().map(|a| size_cycles(size_of(a))).sum();
    charge(size_cycles((elements, bytes)) + argument_cycles, 0, vm)?;
    let method = receiver.get_attr(&vm.ctx.new_str(name), vm)?;
    let result = method.call(args, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

fn consuming_builtin(
    original: &PyObjectRef,
    sort: bool,
    mut args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    if args.args.len() == 1 {
        let first = args.args.remove(0);
        let materialized = materialize(first, vm)?;
        if sort {
            let (elements, _) = size_of(&materialized);
            let elements = elements.max(materialized.length(vm).unwrap_or(0) as u64);
            let log = 64 - elements.leading_zeros() as u64;
            charge(elements * log * costs::size::SORT_LOG_FACTOR, 0, vm)?;
        }
        args.args.insert(0, materialized);
    } else {
        for arg in &args.args {
            charge_size(arg, vm)?;
        }
    }
    let result = original.call(args, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

fn converting_builtin(original: &PyObjectRef, mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let is_bytes_ctor = original.is(vm.ctx.types.bytes_type.as_object())
        || original.is(vm.ctx.types.bytearray_type.as_object());
    if let Some(first) = args.args.first().cloned() {
        if is_bytes_ctor {
            if let Some(length) = int_value(&first) {
                let length = int_to_i64(length).max(0) as u128;
                precheck_result_bytes(length, vm)?;
            } else if !is_sized(&first) {
                args.args[0] = materialize(first.clone(), vm)?;
            }
        }
        if original.is(vm.builtins.dict().get_item("pow", vm)?.as_object()) && args.args.len() >= 2
        {
            let second = args.args[1].clone();
            if args.args.len() == 2 {
                charge_operator(OperatorCode::Pow, &first, &second, vm)?;
            } else {
                // One modular squaring (and at most one multiplication) per
                // exponent bit, each quadratic in the modulus' limbs: a
                // charge linear in the limbs bought 65 ms for 586k cycles
                // with 6,000-bit operands.
                let modulus_bits = args.args.get(2).and_then(int_value).map_or(64, int_bits);
                let exponent_bits = int_value(&second).map_or(64, int_bits);
                let limbs = modulus_bits / 64 + 1;
                // (+3 per bit: even one-limb steps allocate a big int each.)
                charge(
                    exponent_bits.saturating_mul(limbs * (limbs / 8 + 1) + 3),
                    0,
                    vm,
                )?;
            }
        }
    }
    for arg in &args.args {
        charge_size(arg, vm)?;
    }
    let result = original.call(args, vm)?;
    charge_size(&result, vm)?;
    Ok(result)
}

// ---------------------------------------------------------------------------
// Storage natives (called from the trusted prelude)

fn current_actor() -> Address {
    with_exec(|state| state.frames.last().expect("a frame").actor)
}

fn storage_key(key: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    let key = key
        .downcast_ref::<PyStr>()
        .filter(|_| key.class().is(vm.ctx.types.str_type))
        .ok_or_else(|| vm.new_type_error("storage keys must be str"))?;
    Ok(key
        .to_str()
        .ok_or_else(|| vm.new_value_error("storage keys must be valid UTF-8"))?
        .as_bytes()
        .to_vec())
}

fn host_result<T>(call: HostCall<T>, vm: &VirtualMachine) -> PyResult<T> {
    charge_host(&call, vm)?;
    call.result
        .map_err(|failure| runtime().host_error(failure.kind, &failure.message, vm))
}

fn storage_get_native(key: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let key = storage_key(&key, vm)?;
    let actor = current_actor();
    let call = HOST.with(|slot| slot.host.storage_get(&actor, &key));
    let found = host_result(call, vm)?;
    let (found, value) = match found {
        Some(bytes) => {
            // Decoding and building the objects is linear in the value's size;
            // a flat read cost would let a loop re-read a 16 MiB value cheaply.
            charge(costs::for_bytes(bytes.len() as u64), 0, vm)?;
            let value = Value::from_bytes(&bytes)
                .map_err(|e| vm.new_runtime_error(format!("corrupt storage value: {e}")))?;
            charge_conversion(&value, 1, vm)?;
            (true, value_to_py(&value, vm))
        }
        None => (false, vm.ctx.none()),
    };
    Ok(vm
        .ctx
        .new_tuple(vec![vm.ctx.new_bool(found).into(), value])
        .into())
}

fn storage_set_native(key: PyObjectRef, value: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    let key = storage_key(&key, vm)?;
    let value = py_to_value(&value, vm)?;
    charge_conversion(&value, 1, vm)?;
    let encoded = value.to_bytes();
    precheck_result_bytes(encoded.len() as u128, vm)?;
    let actor = current_actor();
    let call = HOST.with(|slot| slot.host.storage_set(&actor, &key, &encoded));
    host_result(call, vm)
}

fn storage_delete_native(key: PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    let key = storage_key(&key, vm)?;
    let actor = current_actor();
    let existing = HOST.with(|slot| slot.host.storage_get(&actor, &key));
    if host_result(existing, vm)?.is_none() {
        return Ok(false);
    }
    let call = HOST.with(|slot| slot.host.storage_delete(&actor, &key));
    host_result(call, vm)?;
    Ok(true)
}

fn storage_next_native(prefix: PyObjectRef, after: PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let prefix = storage_key(&prefix, vm)?;
    let after = if vm.is_none(&after) {
        None
    } else {
        Some(storage_key(&after, vm)?)
    };
    let actor = current_actor();
    let call = HOST.with(|slot| {
        slot.host
            .storage_next_key(&actor, &prefix, after.as_deref())
    });
    match host_result(call, vm)? {
        Some(key) => {
            let key = String::from_utf8(key)
                .map_err(|_| vm.new_runtime_error("storage key is not UTF-8"))?;
            Ok(vm.ctx.new_str(key).into())
        }
        None => Ok(vm.ctx.none()),
    }
}

// ---------------------------------------------------------------------------
// pvm_host

fn parse_address(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Address> {
    if let Some(text) = obj.downcast_ref::<PyStr>() {
        let text = text.to_str().unwrap_or_default();
        return text
            .parse::<Address>()
            .map_err(|e| vm.new_value_error(format!("bad address: {e}")));
    }
    if let Some(bytes) = obj.downcast_ref::<PyBytes>() {
        return Address::from_slice(bytes.as_bytes())
            .map_err(|e| vm.new_value_error(format!("bad address: {e}")));
    }
    Err(vm.new_type_error("an address is a '0x…' str or 20 bytes"))
}

fn parse_u64(obj: &PyObjectRef, what: &str, vm: &VirtualMachine) -> PyResult<u64> {
    int_value(obj)
        .and_then(|i| u64::try_from(int_to_i128(i)?).ok())
        .ok_or_else(|| vm.new_value_error(format!("{what} must be a non-negative int below 2**64")))
}

fn parse_u128(obj: &PyObjectRef, what: &str, vm: &VirtualMachine) -> PyResult<u128> {
    int_value(obj)
        .and_then(|i| u128::try_from(int_to_i128(i)?).ok())
        .ok_or_else(|| {
            vm.new_value_error(format!("{what} must be a non-negative int below 2**128"))
        })
}

fn parse_timer_id(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Hash> {
    obj.downcast_ref::<PyBytes>()
        .and_then(|b| Hash::from_slice(b.as_bytes()).ok())
        .ok_or_else(|| vm.new_value_error("a timer id is 32 bytes"))
}

fn optional(obj: Option<&PyObjectRef>, vm: &VirtualMachine) -> Option<PyObjectRef> {
    obj.filter(|o| !vm.is_none(o)).cloned()
}

fn take_kwarg(args: &mut FuncArgs, name: &str) -> Option<PyObjectRef> {
    args.kwargs.swap_remove(name)
}

fn host_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    let context_read = |vm: &VirtualMachine| charge(costs::host::CONTEXT_READ, 0, vm);
    vec![
        (
            "block_height",
            vm.new_function(
                "block_height",
                move |vm: &VirtualMachine| -> PyResult<u64> {
                    context_read(vm)?;
                    Ok(with_exec(|s| s.block.height))
                },
            )
            .into(),
        ),
        (
            "block_timestamp",
            vm.new_function(
                "block_timestamp",
                move |vm: &VirtualMachine| -> PyResult<u64> {
                    context_read(vm)?;
                    Ok(with_exec(|s| s.block.timestamp))
                },
            )
            .into(),
        ),
        (
            "actor_address",
            vm.new_function(
                "actor_address",
                move |vm: &VirtualMachine| -> PyResult<String> {
                    context_read(vm)?;
                    Ok(current_actor().to_hex())
                },
            )
            .into(),
        ),
        (
            "tx_sender",
            vm.new_function(
                "tx_sender",
                move |vm: &VirtualMachine| -> PyResult<String> {
                    context_read(vm)?;
                    Ok(with_exec(|s| s.tx_sender).to_hex())
                },
            )
            .into(),
        ),
        (
            "caller",
            vm.new_function("caller", move |vm: &VirtualMachine| -> PyResult<String> {
                context_read(vm)?;
                Ok(with_exec(|s| s.frames.last().expect("a frame").caller).to_hex())
            })
            .into(),
        ),
        (
            "balance",
            vm.new_function(
                "balance",
                |account: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let account = parse_address(&account, vm)?;
                    let call = HOST.with(|slot| slot.host.balance(&account));
                    let balance = host_result(call, vm)?;
                    Ok(vm.ctx.new_int(balance).into())
                },
            )
            .into(),
        ),
        (
            "transfer",
            vm.new_function(
                "transfer",
                |to: PyObjectRef, amount: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let to = parse_address(&to, vm)?;
                    let amount = parse_u128(&amount, "amount", vm)?;
                    let from = current_actor();
                    let call = HOST.with(|slot| slot.host.transfer(&from, &to, amount));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "emit",
            vm.new_function(
                "emit",
                |name: PyObjectRef, data: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let name = name
                        .downcast_ref::<PyStr>()
                        .and_then(|s| s.to_str().map(str::to_owned))
                        .ok_or_else(|| vm.new_type_error("event name must be str"))?;
                    let data = py_to_value(&data, vm)?;
                    charge_conversion(&data, 1, vm)?;
                    let encoded = data.to_bytes();
                    precheck_result_bytes(encoded.len() as u128, vm)?;
                    let emitter = current_actor();
                    let call = HOST.with(|slot| slot.host.emit(&emitter, &name, &encoded));
                    host_result(call, vm)?;
                    with_exec(|s| {
                        s.events.push(Event {
                            emitter,
                            name,
                            data,
                        })
                    });
                    Ok(())
                },
            )
            .into(),
        ),
        ("call", vm.new_function("call", call_native).into()),
        (
            "schedule_timer",
            vm.new_function(
                "schedule_timer",
                |height: PyObjectRef, payload: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let request = TimerRequest {
                        height: parse_u64(&height, "height", vm)?,
                        payload: payload_bytes(&payload, vm)?,
                        fee_payer: None,
                        gas_limit: None,
                        expires_at: None,
                    };
                    schedule(request, vm)
                },
            )
            .into(),
        ),
        (
            "schedule_timer_ex",
            vm.new_function(
                "schedule_timer_ex",
                |mut args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                    let mut positional = args.args.clone().into_iter();
                    let height = positional
                        .next()
                        .or_else(|| take_kwarg(&mut args, "height"));
                    let payload = positional
                        .next()
                        .or_else(|| take_kwarg(&mut args, "payload"));
                    let fee_payer = positional
                        .next()
                        .or_else(|| take_kwarg(&mut args, "fee_payer"));
                    let gas_limit = positional
                        .next()
                        .or_else(|| take_kwarg(&mut args, "gas_limit"));
                    let expires_at = positional
                        .next()
                        .or_else(|| take_kwarg(&mut args, "expires_at"));
                    if let Some((name, _)) = args.kwargs.iter().next() {
                        return Err(vm.new_type_error(format!(
                            "schedule_timer_ex() got an unexpected keyword argument '{name}'"
                        )));
                    }
                    let (Some(height), Some(payload)) = (height, payload) else {
                        return Err(
                            vm.new_type_error("schedule_timer_ex() needs height and payload")
                        );
                    };
                    let request = TimerRequest {
                        height: parse_u64(&height, "height", vm)?,
                        payload: payload_bytes(&payload, vm)?,
                        fee_payer: optional(fee_payer.as_ref(), vm)
                            .map(|a| parse_address(&a, vm))
                            .transpose()?,
                        gas_limit: optional(gas_limit.as_ref(), vm)
                            .map(|g| parse_u64(&g, "gas_limit", vm))
                            .transpose()?,
                        expires_at: optional(expires_at.as_ref(), vm)
                            .map(|e| parse_u64(&e, "expires_at", vm))
                            .transpose()?,
                    };
                    schedule(request, vm)
                },
            )
            .into(),
        ),
        (
            "extend_timer",
            vm.new_function(
                "extend_timer",
                |timer_id: PyObjectRef,
                 new_expires_at: PyObjectRef,
                 vm: &VirtualMachine|
                 -> PyResult<()> {
                    let timer_id = parse_timer_id(&timer_id, vm)?;
                    let new_expires_at = parse_u64(&new_expires_at, "new_expires_at", vm)?;
                    let actor = current_actor();
                    let call =
                        HOST.with(|slot| slot.host.extend_timer(&actor, &timer_id, new_expires_at));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "cancel_timer",
            vm.new_function(
                "cancel_timer",
                |timer_id: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let timer_id = parse_timer_id(&timer_id, vm)?;
                    let actor = current_actor();
                    let call = HOST.with(|slot| slot.host.cancel_timer(&actor, &timer_id));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "revoke_timer_payments",
            vm.new_function(
                "revoke_timer_payments",
                |vm: &VirtualMachine| -> PyResult<()> {
                    let actor = current_actor();
                    let call = HOST.with(|slot| slot.host.revoke_timer_payments(&actor));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            // `@pvm_host.timer_handler` marks a method only a timer fire may
            // invoke. The mark is read from the source at deploy
            // (`CompiledActor::timer_handlers`); at run time the decorator
            // returns the method unchanged.
            "timer_handler",
            vm.new_function("timer_handler", |method: PyObjectRef| -> PyObjectRef {
                method
            })
            .into(),
        ),
    ]
}

fn payload_bytes(payload: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    payload
        .downcast_ref::<PyBytes>()
        .map(|b| b.as_bytes().to_vec())
        .ok_or_else(|| vm.new_type_error("timer payload must be bytes"))
}

fn schedule(request: TimerRequest, vm: &VirtualMachine) -> PyResult {
    let actor = current_actor();
    // The outermost frame is the actor the transaction (or fire) targets.
    let nested = with_exec(|s| s.frames.len() > 1);
    let call = HOST.with(|slot| slot.host.schedule_timer(&actor, nested, request));
    let timer_id = host_result(call, vm)?;
    Ok(vm.ctx.new_bytes(timer_id.as_bytes().to_vec()).into())
}

/// `pvm_host.call(actor, handler, *args, value=0)`: runs another actor's
/// handler synchronously inside a host checkpoint. Its failure reverts its
/// effects and raises `HostError` in the caller (or re-raises an abort,
/// which the whole execution shares).
fn call_native(mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let value = take_kwarg(&mut args, "value");
    if let Some((name, _)) = args.kwargs.iter().next() {
        return Err(vm.new_type_error(format!(
            "call() got an unexpected keyword argument '{name}'"
        )));
    }
    if args.args.len() < 2 {
        return Err(vm.new_type_error("call(actor, handler, *args, value=0)"));
    }
    let target = parse_address(&args.args[0], vm)?;
    let handler = args.args[1]
        .downcast_ref::<PyStr>()
        .and_then(|s| s.to_str().map(str::to_owned))
        .ok_or_else(|| vm.new_type_error("handler must be str"))?;
    let call_args: Vec<Value> = args.args[2..]
        .iter()
        .map(|a| py_to_value(a, vm))
        .collect::<PyResult<_>>()?;
    // Converted here and rebuilt as objects in the callee.
    for arg in &call_args {
        charge_conversion(arg, 2, vm)?;
    }
    let amount = match &value {
        Some(v) => parse_u128(v, "value", vm)?,
        None => 0,
    };
    let runtime = runtime();
    let payload_cells =
        Value::List(call_args.clone()).to_bytes().len() as u64 + handler.len() as u64;
    charge(costs::host::CALL, payload_cells, vm)?;

    let caller = current_actor();
    let depth = with_exec(|s| s.frames.len());
    if depth >= MAX_CALL_DEPTH {
        return Err(runtime.host_error(
            ErrorKind::CallDepthExceeded,
            &format!("nested calls are limited to depth {MAX_CALL_DEPTH}"),
            vm,
        ));
    }
    if let Some((kind, message)) = crate::vm::refuse_name(&handler) {
        return Err(runtime.host_error(kind, &message, vm));
    }
    let record =
        host_result(HOST.with(|slot| slot.host.actor_record(&target)), vm)?.ok_or_else(|| {
            runtime.host_error(ErrorKind::NotFound, &format!("no actor at {target}"), vm)
        })?;
    let code_cache = with_exec(|s| s.code_cache.clone());
    let compiled = HOST
        .with(|slot| code_cache.get_or_compile(&record.code_hash, &mut *slot.host))
        .ok_or_else(|| {
            runtime.host_error(
                ErrorKind::NotFound,
                &format!("code of {target} is unavailable"),
                vm,
            )
        })?;

    if let Some((kind, message)) =
        crate::vm::refuse_timer_handler(&compiled, &handler, Invocation::Transaction)
    {
        return Err(runtime.host_error(kind, &message, vm));
    }

    let checkpoint = HOST.with(|slot| slot.host.checkpoint());
    let events_before = with_exec(|s| s.events.len());
    let result = (|| -> PyResult {
        if amount > 0 {
            host_result(
                HOST.with(|slot| slot.host.transfer(&caller, &target, amount)),
                vm,
            )?;
        }
        with_exec(|s| {
            s.frames.push(Frame {
                actor: target,
                caller,
            })
        });
        let outcome = runtime.invoke(
            &compiled,
            &target,
            &record.deployer,
            &handler,
            &call_args,
            vm,
        );
        with_exec(|s| s.frames.pop());
        let returned = outcome?.ok_or_else(|| {
            runtime.host_error(
                ErrorKind::NotFound,
                &format!("actor {target} has no handler '{handler}'"),
                vm,
            )
        })?;
        // Values cross actor boundaries by copy, never by reference; the
        // copy is paid by size like any other conversion.
        let value = py_to_value(&returned, vm)?;
        charge(costs::for_bytes(value.to_bytes().len() as u64), 0, vm)?;
        charge_conversion(&value, 2, vm)?;
        Ok(value_to_py(&value, vm))
    })();
    match result {
        Ok(value) => {
            HOST.with(|slot| slot.host.commit(checkpoint));
            Ok(value)
        }
        Err(exc) => {
            HOST.with(|slot| slot.host.revert(checkpoint));
            with_exec(|s| s.events.truncate(events_before));
            if let Some(abort) = with_exec(|s| s.meter.abort) {
                return Err(runtime.abort_exception(abort, vm));
            }
            // A HostError escaping the callee (a host rejection or a deeper
            // call's failure) already names the root cause and its kind:
            // pass it up unchanged instead of nesting messages 32 deep.
            if runtime.host_error_kind(&exc, vm).is_some() {
                return Err(exc);
            }
            let message = crate::vm::exception_message(&exc, vm);
            Err(runtime.host_error(
                ErrorKind::Revert,
                &format!("call to {target}.{handler} failed: {message}"),
                vm,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The instrumenter names guards only through `crate::guards`; every one
    /// of them must be a callable builtin of the interpreter actors run in.
    #[test]
    fn every_guard_the_instrumenter_can_emit_is_a_builtin() {
        let runtime = runtime();
        runtime.interpreter.enter(|vm| {
            for guard in Guard::ALL {
                let native = runtime
                    .builtins
                    .get_item(guard.name(), vm)
                    .unwrap_or_else(|_| panic!("{} is not a builtin", guard.name()));
                assert!(native.is_callable(), "{}", guard.name());
            }
        });
    }
}
