//! Real programs three ways (issue #30): every `benches/programs/*.py` run
//!
//! 1. as a metered actor call through [`timerhost_vm::Vm`] (`MockHost`),
//! 2. unmetered: the same text without its `@actor` line in a plain RustPython
//!    interpreter (no instrumentation, no meter, no natives; the interpreter
//!    `Settings` the VM uses, the VM's recursion limit, automatic collection
//!    off and young garbage collected before a run as the VM's settle does),
//!    with the VM's library modules (`src/interpreter/stdlib/*.py`, compiled plainly)
//!    in `sys.modules` and stand-ins for the Rust-native `json` and `math`,
//! 3. on CPython (`python3`, or `$TIMERHOST_PYTHON`): the same text in a
//!    subprocess, timed inside Python with `time.perf_counter_ns`.
//!
//! Each figure is the best of `--rounds` (default 10) runs after 3 s of
//! warm-up; a round runs every program once metered and once unmetered, so a
//! burst of load on the shared machine lands on both sides and on one round
//! of several programs rather than on every round of one. CPython runs
//! afterwards, one subprocess per program (a warm-up run, then the rounds).
//!
//! The unmetered interpreter lives on its own thread: RustPython's built-in
//! type objects are per thread (`rustpython-common`'s `static_cell` without
//! the `threading` feature), and the VM wraps their slots on the threads it
//! runs on (`meter::slots`, `meter::int_hash`, ...), so an interpreter sharing the
//! VM's thread would run through those wrappers.
//!
//! The three results of every program must be equal (compared as one
//! canonical text: the metered `Value`, the unmetered object converted the
//! same way, CPython's object written by the same rules); the bench fails if
//! they are not.
//!
//! Programs: one module per file, helper classes and functions above, the
//! `@actor` class at the bottom with the handler `run(self, n)`; the line
//! `# bench: n = N` gives `n`.
//!
//! `cargo bench -p timerhost-vm --bench programs --ignore-rust-version`
//! (`-- NAME` runs the programs whose name contains NAME; `-- --rounds 3`;
//! `-- --micro` runs `benches/micro/*.py` instead: one construct each, four
//! times per iteration, to price what the metering inserts around it).

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustpython_vm::builtins::PyStr;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::scope::Scope;
use rustpython_vm::{Interpreter, PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::{Address, Invocation, Value};
use timerhost_vm::convert::{py_to_value, value_to_py};
use timerhost_vm::helpers::{bytes_arg, dumps_style, int_arg, integer, json};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

/// Per-call limits of the metered runs: the chain's largest transaction
/// (`max_block_cycles`, 400M), a million cells and the default 64 MiB.
fn limits() -> ExecLimits {
    ExecLimits::new(400_000_000, 1_000_000)
}

/// One program of `benches/programs`.
struct Program {
    name: String,
    /// The file as deployed.
    source: String,
    /// The file without its `@actor` line (unmetered and CPython).
    plain: String,
    /// The actor class's name.
    class: String,
    n: u64,
}

fn load_programs(folder: &str, filter: Option<&str>) -> Vec<Program> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .collect();
    paths.sort();
    let mut programs = Vec::new();
    for path in paths {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("a UTF-8 file name")
            .to_owned();
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("program readable");
        let n = source
            .lines()
            .find_map(|l| l.strip_prefix("# bench: n = "))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name}: no `# bench: n = N` line"));
        let lines: Vec<&str> = source.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.trim() == "@actor")
            .unwrap_or_else(|| panic!("{name}: no `@actor` line"));
        let class = lines[at + 1..]
            .iter()
            .find_map(|l| l.strip_prefix("class "))
            .map(|rest| {
                rest.split([':', '('])
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_owned()
            })
            .unwrap_or_else(|| panic!("{name}: no class after `@actor`"));
        let plain: String = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        programs.push(Program {
            name,
            source,
            plain,
            class,
            n,
        });
    }
    programs
}

// ---------------------------------------------------------------------------
// Results compared as one canonical text.

/// Python-like text of a value: dict entries sorted by their text, strings
/// JSON-quoted (CPython's `json.dumps(s, ensure_ascii=False)` writes the same).
fn canonical(value: &Value) -> String {
    fn join<'v>(items: impl Iterator<Item = &'v Value>) -> String {
        items.map(canonical).collect::<Vec<_>>().join(", ")
    }
    match value {
        Value::None => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Int(i) => i.to_string(),
        Value::Str(s) => serde_json::to_string(s).expect("a string serializes"),
        Value::Bytes(b) => format!("b\"{}\"", hex::encode(b)),
        Value::List(items) => format!("[{}]", join(items.iter())),
        Value::Tuple(items) => format!("({})", join(items.iter())),
        Value::Dict(entries) => {
            let mut texts: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", canonical(k), canonical(v)))
                .collect();
            texts.sort();
            format!("{{{}}}", texts.join(", "))
        }
    }
}

/// The same rules in Python, for the CPython run.
const CPYTHON_DRIVER: &str = r#"
import json, sys, time

def canonical(v):
    if v is None or v is True or v is False:
        return repr(v)
    t = type(v)
    if t is int:
        return str(v)
    if t is str:
        return json.dumps(v, ensure_ascii=False)
    if t is bytes:
        return 'b"' + v.hex() + '"'
    if t is list:
        return "[" + ", ".join(canonical(x) for x in v) + "]"
    if t is tuple:
        return "(" + ", ".join(canonical(x) for x in v) + ")"
    if t is dict:
        return "{" + ", ".join(sorted(canonical(k) + ": " + canonical(x) for k, x in v.items())) + "}"
    raise TypeError("a value of type %s cannot leave an actor" % t.__name__)

name, cls_name, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
source = sys.stdin.read()
module = {"__name__": "actor"}
exec(compile(source, "<" + name + ">", "exec"), module)
cls = module[cls_name]
result = cls().run(n)
best = None
for _ in range(rounds):
    started = time.perf_counter_ns()
    result = cls().run(n)
    elapsed = time.perf_counter_ns() - started
    best = elapsed if best is None else min(best, elapsed)
print(best)
print(canonical(result))
"#;

/// What differs between the three runs besides the meter.
const NOTES: &str = "\
notes: metered = Vm::call on MockHost (wall time of the call: settle, instance, handler, result conversion);
  unmetered = plain RustPython 0.6.0, the VM's Settings, recursion limit and gc regime, the VM's library
  modules compiled without instrumentation, `json`/`math` as Rust stand-ins over the VM's codec and int
  code (uncharged); no restricted builtins, guards, slot wrappers or free-list settling;
  CPython = its own stdlib (C `bisect`, `itertools`, `functools`, `operator`, `collections.deque`,
  `json`, `math`; exec-generated dataclass methods), its gc on.";

// ---------------------------------------------------------------------------
// Metered.

struct Metered {
    vm: Vm,
    host: MockHost,
    actor: Address,
}

impl Metered {
    fn deploy(program: &Program) -> Metered {
        let vm = Vm::new().expect("the allocator is installed");
        let mut host = MockHost::new();
        let actor = Address([7; 20]);
        host.install_actor(actor, &program.source);
        let deployed = vm.deploy(&mut host, &actor, &program.source, &[], limits());
        if !deployed.is_success() {
            panic!("{}: deploy failed: {:?}", program.name, deployed.result);
        }
        Metered { vm, host, actor }
    }

    fn run(&mut self, program: &Program) -> (Duration, u64, Value) {
        let started = Instant::now();
        let outcome = self.vm.call(
            &mut self.host,
            &self.actor,
            "run",
            &[Value::int(program.n)],
            limits(),
            Invocation::Transaction,
        );
        let elapsed = started.elapsed();
        match outcome.result {
            Ok(value) => (elapsed, outcome.cycles_used, value),
            Err(error) => panic!(
                "{}: metered run failed after {} cycles: {:?}: {}\n{}",
                program.name,
                outcome.cycles_used,
                error.kind,
                error.message,
                error.traceback.unwrap_or_default()
            ),
        }
    }
}

// ---------------------------------------------------------------------------
// Unmetered: a plain interpreter on a thread of its own.

/// What the VM's `_pvm_epoch()` returns; bumped before every unmetered run
/// (the VM starts an epoch per execution: `functools` caches last one).
static EPOCH: AtomicU64 = AtomicU64::new(1);

/// The VM's young-generation threshold for collecting before an execution
/// (`runtime::GC_YOUNG_THRESHOLD`, private there).
const GC_YOUNG_THRESHOLD: usize = 2000;

enum Request {
    Load {
        name: String,
        source: String,
        class: String,
    },
    Run {
        name: String,
        n: u64,
    },
}

type Reply = Result<Option<(Duration, Value)>, String>;

/// A handle on the unmetered interpreter's thread.
struct Plain {
    requests: mpsc::Sender<Request>,
    replies: mpsc::Receiver<Reply>,
}

impl Plain {
    fn start() -> Plain {
        let (requests, incoming) = mpsc::channel::<Request>();
        let (outgoing, replies) = mpsc::channel::<Reply>();
        std::thread::Builder::new()
            .name("unmetered".into())
            .stack_size(64 << 20)
            .spawn(move || plain_thread(incoming, outgoing))
            .expect("thread spawns");
        Plain { requests, replies }
    }

    fn ask(&self, request: Request) -> Reply {
        self.requests.send(request).expect("unmetered thread alive");
        self.replies.recv().expect("unmetered thread alive")
    }

    fn load(&self, program: &Program) {
        if let Err(message) = self.ask(Request::Load {
            name: program.name.clone(),
            source: program.plain.clone(),
            class: program.class.clone(),
        }) {
            panic!("{}: unmetered load failed: {message}", program.name);
        }
    }

    fn run(&self, program: &Program) -> (Duration, Value) {
        match self.ask(Request::Run {
            name: program.name.clone(),
            n: program.n,
        }) {
            Ok(Some(done)) => done,
            Ok(None) => unreachable!("a run replies with its result"),
            Err(message) => panic!("{}: unmetered run failed: {message}", program.name),
        }
    }
}

fn plain_thread(requests: mpsc::Receiver<Request>, replies: mpsc::Sender<Reply>) {
    let interpreter = plain_interpreter();
    let mut classes: std::collections::HashMap<String, PyObjectRef> = Default::default();
    for request in requests {
        let reply = interpreter.enter(|vm| match request {
            Request::Load {
                name,
                source,
                class,
            } => {
                let loaded = load_module(&name, &source, vm).and_then(|globals| {
                    globals
                        .get_item(class.as_str(), vm)
                        .map_err(|e| describe(&e, vm))
                });
                loaded.map(|class| {
                    classes.insert(name, class);
                    None
                })
            }
            Request::Run { name, n } => {
                let class = classes.get(&name).ok_or("not loaded")?;
                EPOCH.fetch_add(1, Ordering::Relaxed);
                let started = Instant::now();
                // What the VM's settle does before an execution (its time is
                // in the metered figure too).
                let (young, _, _) = rustpython_vm::gc_state::gc_state().get_count();
                if young >= GC_YOUNG_THRESHOLD {
                    vm.state.gc.collect_force(0);
                }
                let result = class.call((), vm).and_then(|instance| {
                    instance.get_attr("run", vm)?.call((vm.ctx.new_int(n),), vm)
                });
                let elapsed = started.elapsed();
                let result = result.map_err(|e| describe(&e, vm))?;
                let value = py_to_value(&result, vm).map_err(|e| describe(&e, vm))?;
                Ok(Some((elapsed, value)))
            }
        });
        if replies.send(reply).is_err() {
            return;
        }
    }
}

fn describe(error: &rustpython_vm::builtins::PyBaseExceptionRef, vm: &VirtualMachine) -> String {
    let mut text = String::new();
    let _ = vm.write_exception(&mut text, error);
    text
}

/// The interpreter configured as `timerhost_vm::runtime` configures its own
/// (same `Settings`, recursion limit, automatic collection off), without the
/// VM's instrumentation, natives, restricted builtins or slot wrappers.
fn plain_interpreter() -> Interpreter {
    let interpreter = Interpreter::builder(timerhost_vm::runtime::interpreter_settings()).build();
    interpreter.enter(|vm| {
        vm.recursion_limit
            .set(timerhost_vm::runtime::RECURSION_LIMIT);
        vm.state.gc.disable();
        if let Err(message) = install_modules(vm) {
            panic!("unmetered interpreter: {message}");
        }
        // As the VM does with its interpreter's own objects (here: the
        // library modules too, which the VM loads later and never collects).
        vm.state.gc.freeze();
    });
    interpreter
}

/// Stand-ins for the natives the VM puts in its library modules' globals
/// (`library.rs`; a new one shows up here as a `NameError` at start-up):
/// `_pvm_set_class_attr` is `type`'s own setattr there too, past a
/// metaclass's `__setattr__`, and deletes when given no value;
/// `_pvm_object_setattr` is `object.__setattr__` after the VM's bookkeeping
/// of writes to values made at load; `_pvm_make_class` is `type`; `_pvm_def`
/// `exec`s a generated `def`. `_pvm_epoch` is added from Rust. Every
/// `_pvm_*` name defined here goes into every library module's globals.
const LIBRARY_PRELUDE: &str = r#"
def _pvm_set_class_attr(cls, name, *value):
    if value:
        type.__setattr__(cls, name, value[0])
    else:
        type.__delattr__(cls, name)

_pvm_del_class_attr = _pvm_set_class_attr
_pvm_object_setattr = object.__setattr__
_pvm_make_class = type

def _pvm_def(source, namespace):
    exec(source, namespace)
    return namespace[source[4:source.index('(')]]
"#;

fn install_modules(vm: &VirtualMachine) -> Result<(), String> {
    let modules = vm
        .sys_module
        .get_attr("modules", vm)
        .map_err(|e| describe(&e, vm))?;
    let add = |name: &str, dict: rustpython_vm::builtins::PyDictRef| -> Result<(), String> {
        let module: PyObjectRef = vm.new_module(name, dict, None).into();
        modules
            .set_item(name, module, vm)
            .map_err(|e| describe(&e, vm))
    };
    add("json", native_dict(vm, json_functions(vm)))?;
    add("math", native_dict(vm, math_functions(vm)))?;
    let prelude = load_module("<pvm prelude>", LIBRARY_PRELUDE, vm)?;
    prelude
        .set_item(
            "_pvm_epoch",
            vm.new_function("_pvm_epoch", || EPOCH.load(Ordering::Relaxed))
                .into(),
            vm,
        )
        .map_err(|e| describe(&e, vm))?;
    let natives: Vec<(PyObjectRef, PyObjectRef)> = prelude
        .items_vec()
        .into_iter()
        .filter(|(name, _)| {
            name.downcast_ref::<PyStr>()
                .and_then(|s| s.to_str())
                .is_some_and(|s| s.starts_with("_pvm_"))
        })
        .collect();
    for (name, source) in timerhost_vm::library::LIBRARY_MODULES {
        let globals = vm.ctx.new_dict();
        let set = |key: &str, value: PyObjectRef| {
            globals
                .set_item(key, value, vm)
                .map_err(|e| describe(&e, vm))
        };
        set("__name__", vm.ctx.new_str(*name).into())?;
        for (native, value) in &natives {
            globals
                .set_item(&**native, value.clone(), vm)
                .map_err(|e| describe(&e, vm))?;
        }
        let code = vm
            .compile(
                source,
                rustpython_vm::compiler::Mode::Exec,
                format!("<{name}>"),
            )
            .map_err(|e| format!("library module {name}: {e:?}"))?;
        vm.run_code_obj(code, Scope::with_builtins(None, globals.clone(), vm))
            .map_err(|e| format!("library module {name}: {}", describe(&e, vm)))?;
        add(name, globals)?;
    }
    Ok(())
}

/// Compiles and runs `source` as a module; its globals.
fn load_module(
    name: &str,
    source: &str,
    vm: &VirtualMachine,
) -> Result<rustpython_vm::builtins::PyDictRef, String> {
    let code = vm
        .compile(
            source,
            rustpython_vm::compiler::Mode::Exec,
            format!("<{name}>"),
        )
        .map_err(|e| format!("{e:?}"))?;
    let globals = vm.ctx.new_dict();
    globals
        .set_item("__name__", vm.ctx.new_str("actor").into(), vm)
        .map_err(|e| describe(&e, vm))?;
    vm.run_code_obj(code, Scope::with_builtins(None, globals.clone(), vm))
        .map_err(|e| describe(&e, vm))?;
    Ok(globals)
}

fn native_dict(
    vm: &VirtualMachine,
    functions: Vec<(&'static str, PyObjectRef)>,
) -> rustpython_vm::builtins::PyDictRef {
    let dict = vm.ctx.new_dict();
    for (name, function) in functions {
        dict.set_item(name, function, vm).expect("dict insert");
    }
    dict
}

/// `json.dumps`/`json.loads` as the VM's (`helpers.rs`): the same codec
/// (`timerhost_vm::helpers::json` over `Value`), the same options, no charges.
fn json_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
        (
            "dumps",
            vm.new_function(
                "dumps",
                |mut args: FuncArgs, vm: &VirtualMachine| -> PyResult<String> {
                    let style = dumps_style(&mut args, vm)?;
                    if args.args.len() != 1 {
                        return Err(vm.new_type_error("dumps() takes one value"));
                    }
                    let value = py_to_value(&args.args[0], vm)?;
                    let mut out = String::new();
                    json::encode_with(&value, &style, &mut out)
                        .map_err(|e| vm.new_type_error(e))?;
                    Ok(out)
                },
            )
            .into(),
        ),
        (
            "loads",
            vm.new_function(
                "loads",
                |text: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let text = String::from_utf8(bytes_arg(&text, vm)?)
                        .map_err(|_| vm.new_value_error("json text must be UTF-8"))?;
                    let value = json::Prepared::new(text)
                        .decode()
                        .map_err(|e| vm.new_value_error(format!("invalid json: {e}")))?;
                    Ok(value_to_py(&value, vm))
                },
            )
            .into(),
        ),
    ]
}

/// `math.isqrt` and `math.gcd` as the VM's ([`integer`]), no charges.
fn math_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
        (
            "isqrt",
            vm.new_function("isqrt", |n: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                let value = int_arg(&n, vm)?;
                if value.sign() == num_bigint::Sign::Minus {
                    return Err(vm.new_value_error("isqrt() argument must be nonnegative"));
                }
                Ok(value_to_py(&Value::Int(integer::isqrt(&value)), vm))
            })
            .into(),
        ),
        (
            "gcd",
            vm.new_function(
                "gcd",
                |a: PyObjectRef, b: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let gcd = integer::gcd(int_arg(&a, vm)?, int_arg(&b, vm)?);
                    Ok(value_to_py(&Value::Int(gcd), vm))
                },
            )
            .into(),
        ),
    ]
}

// ---------------------------------------------------------------------------
// CPython.

fn python() -> String {
    std::env::var("TIMERHOST_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn python_version() -> Option<String> {
    let output = Command::new(python()).arg("--version").output().ok()?;
    Some(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Best of `rounds` (after one warm-up run) in a CPython subprocess, and
/// the canonical text of its result.
fn cpython(program: &Program, rounds: usize) -> (Duration, String) {
    let mut child = Command::new(python())
        .args([
            "-c",
            CPYTHON_DRIVER,
            &program.name,
            &program.class,
            &program.n.to_string(),
            &rounds.to_string(),
        ])
        .env("PYTHONIOENCODING", "utf-8")
        .env("PYTHONHASHSEED", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python()));
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(program.plain.as_bytes())
        .expect("program written to CPython");
    let output = child.wait_with_output().expect("CPython finishes");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    let nanos: Option<u64> = lines.next().and_then(|l| l.trim().parse().ok());
    match (output.status.success(), nanos, lines.next()) {
        (true, Some(nanos), Some(result)) => (Duration::from_nanos(nanos), result.to_owned()),
        _ => panic!(
            "{}: CPython run failed:\n{}{}",
            program.name,
            stdout,
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

// ---------------------------------------------------------------------------

/// A program's deployed actor and what its runs measured so far.
struct State {
    metered: Metered,
    metered_value: Value,
    plain_value: Value,
    /// Cycles of every metered call, the untimed ones included.
    cycles_by_call: Vec<u64>,
    best_metered: Duration,
    best_plain: Duration,
}

struct Row {
    name: String,
    n: u64,
    metered: Duration,
    plain: Duration,
    cpython: Duration,
    cycles: u64,
}

impl Row {
    fn ns_per_cycle(&self) -> f64 {
        self.metered.as_nanos() as f64 / self.cycles as f64
    }
    fn over_cpython(&self) -> f64 {
        self.metered.as_secs_f64() / self.cpython.as_secs_f64()
    }
    fn over_plain(&self) -> f64 {
        self.metered.as_secs_f64() / self.plain.as_secs_f64()
    }
    fn plain_over_cpython(&self) -> f64 {
        self.plain.as_secs_f64() / self.cpython.as_secs_f64()
    }
}

fn geomean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v.ln(), c + 1));
    (sum / count as f64).exp()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let head: String = text.chars().take(max).collect();
        format!("{head}…")
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut rounds = 10usize;
    let mut filter = None;
    let mut folder = "benches/programs";
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--rounds" => {
                i += 1;
                rounds = args
                    .get(i)
                    .and_then(|r| r.parse().ok())
                    .filter(|r| *r > 0)
                    .expect("--rounds N");
            }
            "--micro" => folder = "benches/micro",
            a if a.starts_with('-') => {}
            a => filter = Some(a.to_owned()),
        }
        i += 1;
    }
    let programs = load_programs(folder, filter.as_deref());
    assert!(!programs.is_empty(), "no program matches");
    let version = python_version().unwrap_or_else(|| panic!("{} not found", python()));
    println!(
        "{} programs, best of {rounds} runs after a warm-up; CPython: {version}",
        programs.len()
    );
    println!("{NOTES}");

    let plain = Plain::start();
    let mut states: Vec<State> = programs
        .iter()
        .map(|program| {
            let mut metered = Metered::deploy(program);
            plain.load(program);
            // The first call loads the class into the VM's interpreter; its
            // value is what every later run must return.
            let (_, first_cycles, metered_value) = metered.run(program);
            let (_, plain_value) = plain.run(program);
            State {
                metered,
                metered_value,
                plain_value,
                cycles_by_call: vec![first_cycles],
                best_metered: Duration::MAX,
                best_plain: Duration::MAX,
            }
        })
        .collect();
    // Warm the machine up (CPU frequency, caches, the allocator) with every
    // program, as the fairness bench does; then the timed rounds, each
    // running every program once metered and once unmetered, so a burst of
    // load on the shared machine costs a round of several programs rather
    // than every round of one.
    let warm_up = Instant::now();
    while warm_up.elapsed() < Duration::from_secs(3) {
        for (program, state) in programs.iter().zip(&mut states) {
            let (_, cycles, _) = state.metered.run(program);
            state.cycles_by_call.push(cycles);
            plain.run(program);
        }
    }
    let mut failures = Vec::new();
    for _ in 0..rounds {
        for (program, state) in programs.iter().zip(&mut states) {
            let (elapsed, cycles, value) = state.metered.run(program);
            state.best_metered = state.best_metered.min(elapsed);
            state.cycles_by_call.push(cycles);
            if value != state.metered_value {
                failures.push(format!(
                    "{}: metered runs returned different values",
                    program.name
                ));
            }
            state.best_plain = state.best_plain.min(plain.run(program).0);
        }
    }

    let mut rows = Vec::new();
    let mut results = Vec::new();
    let mut varying = Vec::new();
    for (program, state) in programs.iter().zip(&states) {
        // The charge of a call should not depend on the calls before it;
        // where it does, say so (the table uses the last call's cycles).
        let cycles_by_call = &state.cycles_by_call;
        let cycles = *cycles_by_call.last().expect("at least one call");
        if cycles_by_call.iter().any(|c| *c != cycles) {
            let mut runs: Vec<(u64, usize)> = Vec::new();
            for c in cycles_by_call {
                match runs.last_mut() {
                    Some((last, count)) if last == c => *count += 1,
                    _ => runs.push((*c, 1)),
                }
            }
            let list: Vec<String> = runs
                .iter()
                .map(|(c, count)| format!("{c} ×{count}"))
                .collect();
            varying.push(format!("{}: {}", program.name, list.join(", ")));
        }
        let (best_cpython, cpython_text) = cpython(program, rounds);
        let metered_text = canonical(&state.metered_value);
        let plain_text = canonical(&state.plain_value);
        if plain_text != metered_text {
            failures.push(format!(
                "{}: unmetered result differs:\n  metered   {metered_text}\n  unmetered {plain_text}",
                program.name
            ));
        }
        if cpython_text != metered_text {
            failures.push(format!(
                "{}: CPython result differs:\n  metered {metered_text}\n  CPython {cpython_text}",
                program.name
            ));
        }
        results.push((program.name.clone(), metered_text));
        rows.push(Row {
            name: program.name.clone(),
            n: program.n,
            metered: state.best_metered,
            plain: state.best_plain,
            cpython: best_cpython,
            cycles,
        });
    }

    println!();
    println!(
        "| program | n | metered ms | unmetered ms | CPython ms | cycles | ns/cycle | metered/CPython | metered/unmetered | unmetered/CPython |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {} | {:.1} | {:.2} | {:.2} | {:.2} |",
            row.name,
            row.n,
            ms(row.metered),
            ms(row.plain),
            ms(row.cpython),
            row.cycles,
            row.ns_per_cycle(),
            row.over_cpython(),
            row.over_plain(),
            row.plain_over_cpython()
        );
    }
    println!(
        "| **geometric mean** | | {:.2} | {:.2} | {:.2} | {:.0} | {:.1} | {:.2} | {:.2} | {:.2} |",
        geomean(rows.iter().map(|r| ms(r.metered))),
        geomean(rows.iter().map(|r| ms(r.plain))),
        geomean(rows.iter().map(|r| ms(r.cpython))),
        geomean(rows.iter().map(|r| r.cycles as f64)),
        geomean(rows.iter().map(Row::ns_per_cycle)),
        geomean(rows.iter().map(Row::over_cpython)),
        geomean(rows.iter().map(Row::over_plain)),
        geomean(rows.iter().map(Row::plain_over_cpython)),
    );
    let by_rate = |a: &&Row, b: &&Row| a.ns_per_cycle().total_cmp(&b.ns_per_cycle());
    if let (Some(low), Some(high)) = (rows.iter().min_by(by_rate), rows.iter().max_by(by_rate)) {
        println!(
            "\nns/cycle spread: max/min {:.2} ({} {:.1} / {} {:.1})",
            high.ns_per_cycle() / low.ns_per_cycle(),
            high.name,
            high.ns_per_cycle(),
            low.name,
            low.ns_per_cycle()
        );
    }
    if !varying.is_empty() {
        println!("\ncycles charged by successive calls of the same deployed actor (not constant):");
        for line in &varying {
            println!("  {line}");
        }
    }
    println!("\nresults (metered):");
    for (name, text) in &results {
        println!("  {name:<10} {}", shorten(text, 100));
    }
    if !failures.is_empty() {
        eprintln!("\nFAILED:");
        for failure in &failures {
            eprintln!("  {failure}");
        }
        std::process::exit(1);
    }
}
