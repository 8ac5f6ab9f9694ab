//! Deep structures: whatever an actor nests, no operation on it and no
//! freeing of it may abort the process, and every outcome is the same on
//! every stack the node could run it on (issue #49).
//!
//! Before the deterministic nesting bound (`timerhost_vm::nesting`) and the
//! bounded release (`release.rs`), one call of each program below aborted
//! the process with "has overflowed its stack" — a test binary, or every
//! validator of a network. Each constructor runs in a child process, so an
//! abort is reported as that constructor's failure instead of killing the
//! suite.

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::addr;
use timerhost_types::{ErrorKind, Invocation, Value};
use timerhost_vm::runtime::EXECUTION_THREAD_STACK_BYTES;
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Outcome, Vm};

/// The environment variable naming the constructor a child process runs.
const CHILD: &str = "TIMERHOST_NESTING_CHILD";

/// Depths every constructor is built to: both sides of the bound, past it,
/// and as deep as a few million cycles build.
const DEPTHS: &[i64] = &[998, 1_002, 5_000];
/// Deeper than any bound, within the memory budget for most constructors,
/// and past it.
const DEEPEST: &[i64] = &[60_000, 200_000];

/// A way to nest: module-level `setup`, a first value `init`, and `step`,
/// the body of `def step(x)` returning the next, deeper value.
struct Constructor {
    name: &'static str,
    setup: &'static str,
    init: &'static str,
    step: &'static str,
}

const CONSTRUCTORS: &[Constructor] = &[
    Constructor { name: "frozenset", setup: "", init: "frozenset()", step: "return frozenset([x])" },
    Constructor { name: "frozenset_with_members", setup: "", init: "frozenset()", step: "return frozenset([x, 1])" },
    Constructor { name: "frozenset_union", setup: "", init: "frozenset()", step: "return frozenset() | {x}" },
    Constructor { name: "frozenset_xor", setup: "", init: "frozenset()", step: "return frozenset([2]) ^ {x}" },
    Constructor { name: "frozenset_union_method", setup: "", init: "frozenset()", step: "return frozenset().union([x])" },
    Constructor { name: "frozenset_symmetric_difference", setup: "", init: "frozenset()", step: "return frozenset().symmetric_difference([x])" },
    Constructor { name: "frozenset_through_tuples", setup: "", init: "frozenset()", step: "return frozenset([(x,)])" },
    Constructor { name: "tuple", setup: "", init: "()", step: "return (x,)" },
    Constructor { name: "list", setup: "", init: "[]", step: "return [x]" },
    Constructor { name: "dict", setup: "", init: "{}", step: "return {1: x}" },
    Constructor { name: "dict_keys_view", setup: "", init: "{}", step: "return {1: x}.keys()" },
    Constructor { name: "set_of_tuple", setup: "", init: "()", step: "return ({1}, x)" },
    Constructor { name: "exception", setup: "", init: "ValueError(1)", step: "return ValueError(x)" },
    Constructor { name: "exception_cause", setup: "", init: "ValueError(1)", step: "try:\n        raise ValueError(2) from x\n    except ValueError as e:\n        return e" },
    Constructor { name: "zip", setup: "", init: "iter([1, 2])", step: "return zip(x)" },
    Constructor { name: "map", setup: "", init: "iter([1, 2])", step: "return map(abs, x)" },
    Constructor { name: "filter", setup: "", init: "iter([1, 2])", step: "return filter(None, x)" },
    Constructor { name: "enumerate", setup: "", init: "iter([1, 2])", step: "return enumerate(x)" },
    Constructor { name: "generator", setup: "def wrap(it):\n    for v in it:\n        yield v\n", init: "iter([1])", step: "return wrap(x)" },
    Constructor { name: "started_generator", setup: "def hold(it):\n    yield 1\n    yield from it\n", init: "iter([1, 2])", step: "g = hold(x)\n    next(g)\n    return g" },
    Constructor { name: "generator_expression", setup: "", init: "iter([1])", step: "return (v for v in x)" },
    Constructor { name: "islice", setup: "import itertools\n", init: "iter([1])", step: "return itertools.islice(x, 5)" },
    Constructor { name: "chain", setup: "import itertools\n", init: "iter([1])", step: "return itertools.chain(x)" },
    Constructor { name: "closure", setup: "def mk(g):\n    return lambda: g\n", init: "None", step: "return mk(x)" },
    Constructor { name: "instance", setup: "class Node:\n    def __init__(self, nxt):\n        self.nxt = nxt\n", init: "None", step: "return Node(x)" },
    Constructor { name: "slots_instance", setup: "class Node:\n    __slots__ = ('nxt',)\n    def __init__(self, nxt):\n        self.nxt = nxt\n", init: "None", step: "return Node(x)" },
    Constructor { name: "slice", setup: "", init: "None", step: "return slice(x)" },
    Constructor { name: "staticmethod", setup: "", init: "abs", step: "return staticmethod(x)" },
    Constructor { name: "classmethod", setup: "", init: "abs", step: "return classmethod(x)" },
    Constructor { name: "property", setup: "", init: "abs", step: "return property(x)" },
    Constructor { name: "partial", setup: "import functools\n", init: "abs", step: "return functools.partial(x)" },
    Constructor { name: "generic_alias", setup: "", init: "int", step: "return list[x]" },
    Constructor { name: "deque", setup: "from collections import deque\n", init: "deque()", step: "return deque([x])" },
    Constructor { name: "ordered_dict", setup: "from collections import OrderedDict\n", init: "OrderedDict()", step: "return OrderedDict({1: x})" },
    Constructor { name: "class_tuple", setup: "", init: "ValueError", step: "return (x,)" },
];

/// What each constructor's value goes through, one `try` each.
const SINGLE_OPERATIONS: &[(&str, &str)] = &[
    ("hash", "hash(x)"),
    ("set_display", "{x}"),
    ("dict_key", "{x: 1}"),
    ("in_dict", "x in {1: 2}"),
    ("repr", "repr(x)"),
    ("str", "str(x)"),
    ("fstring", "f'{x}'"),
    ("format", "format(x, '')"),
    ("ascii", "ascii(x)"),
    ("sorted_by_repr", "sorted([x, x], key=repr)"),
    ("list", "list(x)"),
    ("tuple", "tuple(x)"),
    ("any", "any(x)"),
    ("next", "next(iter(x))"),
    ("len", "len(x)"),
    ("bool", "bool(x)"),
    ("call", "x()"),
    ("deepcopy", "copy.deepcopy(x)"),
    ("copy", "copy.copy(x)"),
    ("json", "json.dumps(x)"),
    ("isinstance", "isinstance(1, x)"),
    ("issubclass", "issubclass(int, x)"),
    ("except", "catch(x)"),
    ("exception_str", "str(ValueError(x))"),
    ("class_attribute", "holder(x).m"),
    ("instance_attribute", "holder(x)().m"),
    ("emit", "pvm_host.emit('Deep', {'v': x})"),
    ("store", "store(x)"),
];

/// Operations on two equal structures built apart.
const PAIR_OPERATIONS: &[(&str, &str)] = &[
    ("eq", "x == y"),
    ("ne", "x != y"),
    ("lt", "x < y"),
    ("sorted", "sorted([x, y])"),
    ("max", "max(x, y)"),
    ("in_list", "y in [x]"),
    ("dict_lookup", "{x: 1}[y]"),
    ("set_intersection", "{x} & {y}"),
];

fn actor_source(c: &Constructor) -> String {
    let mut single = String::new();
    for (name, expr) in SINGLE_OPERATIONS {
        single.push_str(&format!("        attempt(r, '{name}', lambda: {expr})\n"));
    }
    let mut pair = String::new();
    for (name, expr) in PAIR_OPERATIONS {
        pair.push_str(&format!("        attempt(r, '{name}', lambda: {expr})\n"));
    }
    format!(
        "import pvm_host\nimport copy\nimport json\n{setup}
def step(x):
    {step}

def build(n):
    x = {init}
    for _ in range(n):
        x = step(x)
    return x

def attempt(results, name, f):
    try:
        f()
        results.append(name + ':ok')
    except Exception as e:
        results.append(name + ':' + type(e).__name__)

def catch(x):
    try:
        raise KeyError(1)
    except x:
        return 1
    except KeyError:
        return 0

def holder(x):
    class C:
        m = x
    return C

class Deep:
    def store(self, x):
        self.storage['deep'] = x

    def single(self, n):
        x = build(n)
        r = []
        store = self.store
{single}        return r

    def pair(self, n):
        x = build(n)
        y = build(n)
        r = []
{pair}        return r

    def ret(self, n):
        return build(n)
",
        setup = c.setup,
        step = c.step,
        init = c.init,
    )
}

/// The result and cycles of each call, in order, as text.
type Record = Vec<String>;

fn record(outcome: &Outcome) -> String {
    let result = match &outcome.result {
        Ok(value) => format!("{value:?}"),
        // The message of an actor exception may quote a structure; the
        // kind and the exception's name decide the outcome.
        Err(error) => format!(
            "{:?} {}",
            error.kind,
            error.message.split(':').next().unwrap_or_default()
        ),
    };
    format!("{result} cycles={}", outcome.cycles_used)
}

/// Runs `c`'s handlers at `depths` on a fresh VM on a thread of `stack`
/// bytes.
fn run_on_stack(c: &'static Constructor, stack: usize, depths: &'static [i64]) -> Record {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let source = actor_source(c);
            let vm = Vm::new().expect("allocator installed");
            let mut host = MockHost::new();
            let actor = addr(1);
            host.install_actor(actor, &source);
            let limits = ExecLimits::new(200_000_000, 10_000_000);
            let deployed = vm.deploy(&mut host, &actor, &source, &[], limits);
            assert!(deployed.is_success(), "{}: {:?}", c.name, deployed.result);
            let mut out = Vec::new();
            for &depth in depths {
                for handler in ["single", "pair", "ret"] {
                    let outcome = vm.call(
                        &mut host,
                        &actor,
                        handler,
                        &[Value::int(depth)],
                        limits,
                        Invocation::Transaction,
                    );
                    if handler == "ret" && depth > 64 {
                        // A value deeper than the value model's bound.
                        assert!(!outcome.is_success(), "{}: {:?}", c.name, outcome.result);
                    }
                    out.push(format!("{handler}({depth}) {}", record(&outcome)));
                }
            }
            out
        })
        .expect("spawn")
        .join()
        .expect("the thread survives")
}

/// The child's work: `c` built to every depth on the node's execution
/// stack, then the depths around the bound again on a stack an eighth of
/// it — the outcomes must not depend on the stack.
fn child(c: &'static Constructor) {
    let started = Instant::now();
    // `TIMERHOST_NESTING_STACK_DIVISOR` measures the margin: the largest
    // divisor every kind still passes with (docs/PERFORMANCE.md).
    let divisor: usize = std::env::var("TIMERHOST_NESTING_STACK_DIVISOR")
        .ok()
        .and_then(|d| d.parse().ok())
        .unwrap_or(8);
    let full = run_on_stack(c, EXECUTION_THREAD_STACK_BYTES, DEPTHS);
    let small = run_on_stack(c, EXECUTION_THREAD_STACK_BYTES / divisor, DEPTHS);
    assert_eq!(full, small, "{}: outcomes depend on the stack", c.name);
    let deepest = run_on_stack(c, EXECUTION_THREAD_STACK_BYTES, DEEPEST);
    println!("{}: {:?} in {:?}", c.name, full, started.elapsed());
    println!("{} at {DEEPEST:?}: {:?}", c.name, deepest);
    println!("CHILD-OK");
}

#[test]
fn no_nesting_aborts_the_process_or_depends_on_the_stack() {
    if let Ok(name) = std::env::var(CHILD) {
        let c = CONSTRUCTORS
            .iter()
            .find(|c| c.name == name)
            .expect("a known constructor");
        child(c);
        return;
    }
    let exe = std::env::current_exe().expect("test binary");
    let mut failures = Vec::new();
    for c in CONSTRUCTORS {
        let started = Instant::now();
        let output = Command::new(&exe)
            .args([
                "--exact",
                "no_nesting_aborts_the_process_or_depends_on_the_stack",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, c.name)
            .output()
            .expect("runs the child");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() || !stdout.contains("CHILD-OK") {
            let tail: String = stderr.lines().rev().take(6).collect::<Vec<_>>().join(" | ");
            failures.push(format!("{}: {:?} {tail}", c.name, output.status));
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{} took {:?}",
            c.name,
            started.elapsed()
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Runs `source`'s `run(n)` on the node's execution stack and returns the
/// outcome.
fn run_deep(source: &str, n: i64) -> Outcome {
    let source = source.to_owned();
    std::thread::Builder::new()
        .stack_size(EXECUTION_THREAD_STACK_BYTES)
        .spawn(move || {
            let vm = Vm::new().expect("allocator installed");
            let mut host = MockHost::new();
            let actor = addr(1);
            common::deploy_at(
                &vm,
                &mut host,
                actor,
                &source,
                &[],
                ExecLimits::new(10_000_000, 100_000),
            );
            vm.call(
                &mut host,
                &actor,
                "run",
                &[Value::int(n)],
                ExecLimits::new(50_000_000, 100_000),
                Invocation::Transaction,
            )
        })
        .expect("spawn")
        .join()
        .expect("the thread survives")
}

/// The first program: a frozenset nested 200,000 deep, hashed once,
/// aborted `timerhost dev`. Now building it stops at the bound.
#[test]
fn frozenset_nested_past_the_bound_is_refused_when_built() {
    let source = "import pvm_host\nclass Fz:\n    def run(self, n):\n        x = frozenset()\n        for _ in range(n):\n            x = frozenset([x])\n        return hash(x) & 1\n";
    let shallow = run_deep(source, 990);
    assert!(shallow.is_success(), "{:?}", shallow.result);
    let deep = run_deep(source, 200_000);
    let error = deep.result.clone().expect_err("refused");
    assert_eq!(error.kind, ErrorKind::Revert);
    assert!(
        error.message.starts_with("RecursionError"),
        "{}",
        error.message
    );
    assert_eq!(
        run_deep(source, 200_000),
        deep,
        "the same outcome every run"
    );
}

/// The cheapest abort: 20,000 unstarted generators, each holding the next,
/// freed when the call returns.
#[test]
fn a_chain_of_generators_is_freed_without_recursion() {
    let source = "def wrap(it):\n    for v in it:\n        yield v\n\nclass Chain:\n    def run(self, n):\n        x = iter([1])\n        for _ in range(n):\n            x = wrap(x)\n        return 1\n";
    for n in [20_000, 150_000] {
        let outcome = run_deep(source, n);
        assert_eq!(outcome.result, Ok(Value::int(1)), "{n}");
    }
}

/// A started generator's `finally` block runs when it is freed, deferred or
/// not, and what it does is charged the same on every run.
#[test]
fn deferred_finalizers_still_run_their_finally_blocks() {
    let source = "import pvm_host\ndef hold(it, log):\n    try:\n        yield 1\n        yield from it\n    finally:\n        log.append(1)\n\nclass Chain:\n    def run(self, n):\n        log = []\n        def make():\n            x = iter([1])\n            for _ in range(n):\n                x = hold(x, log)\n                next(x)\n            return 1\n        make()\n        return len(log)\n";
    for n in [10, 50, 2_000, 20_000] {
        let outcome = run_deep(source, n);
        assert_eq!(outcome.result, Ok(Value::int(n)), "{n}");
        assert_eq!(run_deep(source, n), outcome, "{n}: the same every run");
    }
}

/// `str` of an exception whose argument is an exception, nested: the
/// innermost levels past the bound format as CPython formats a failed
/// argument, and the handler goes on.
#[test]
fn nested_exceptions_format_within_the_bound() {
    let source = "class E:\n    def run(self, n):\n        e = ValueError(1)\n        for _ in range(n):\n            e = ValueError(e)\n        return str(e)\n";
    assert_eq!(run_deep(source, 500).result, Ok(Value::str("1")));
    assert_eq!(
        run_deep(source, 200_000).result,
        Ok(Value::str("<element str() failed>"))
    );
    // Raised out of the handler: the receipt's message is formatted by the
    // host through the same bound.
    let raised = "class E:\n    def run(self, n):\n        e = ValueError(1)\n        for _ in range(n):\n            e = ValueError(e)\n        raise e\n";
    let error = run_deep(raised, 200_000).result.expect_err("raised");
    assert_eq!(error.message, "ValueError: <element str() failed>");
}

/// Iterator chains drained by a native: `RecursionError` at the bound.
#[test]
fn iterator_chains_stop_at_the_bound() {
    for wrap in [
        "zip(it)",
        "map(abs, it)",
        "filter(None, it)",
        "enumerate(it)",
    ] {
        let source = format!("class I:\n    def run(self, n):\n        it = iter([1, 2])\n        for _ in range(n):\n            it = {wrap}\n        try:\n            return len(list(it))\n        except RecursionError:\n            return -1\n");
        assert_eq!(run_deep(&source, 900).result, Ok(Value::int(2)), "{wrap}");
        assert_eq!(
            run_deep(&source, 200_000).result,
            Ok(Value::int(-1)),
            "{wrap}"
        );
    }
}
