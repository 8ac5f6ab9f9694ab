//! The hostile-actor suite: every actor here tries to escape, stall, exhaust
//! or leak, and must be contained with the right outcome while the process
//! (this test binary) stays alive.

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use std::time::{Duration, Instant};

use common::addr;
use timerhost_types::{ErrorKind, Invocation, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

/// Limits for hostile runs: 10M cycles, 100k cells, 64 MiB.
fn hostile_limits() -> ExecLimits {
    ExecLimits::new(10_000_000, 100_000)
}

/// Longest any contained attack may take (generous for debug builds on a
/// loaded 2-core machine; the point is "bounded", not a benchmark).
const TIME_BOUND: Duration = Duration::from_secs(20);

/// Deploys `source` (expecting success) and runs `run()`; returns the outcome.
fn run_hostile(source: &str, args: &[Value]) -> timerhost_vm::Outcome {
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(1);
    host.install_actor(actor, source);
    let deployed = vm.deploy(&mut host, &actor, source, &[], hostile_limits());
    assert!(
        deployed.is_success(),
        "deploy failed: {:?}",
        deployed.result
    );
    let started = Instant::now();
    let outcome = vm.call(
        &mut host,
        &actor,
        "run",
        args,
        hostile_limits(),
        Invocation::Transaction,
    );
    assert!(
        started.elapsed() < TIME_BOUND,
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(host.open_checkpoints(), 0);
    if !outcome.is_success() {
        assert!(outcome.events.is_empty());
        assert_eq!(
            host.storage_value(&actor, "poison"),
            None,
            "failed execution left a write"
        );
    }
    outcome
}

fn expect_runtime(kind: ErrorKind, body: &str) {
    let source = format!("import pvm_host\nclass Hostile:\n    def run(self):\n        self.storage['poison'] = 1\n{body}");
    let outcome = run_hostile(&source, &[]);
    assert_eq!(
        outcome.error_kind(),
        Some(kind),
        "{body}\n=> {:?}",
        outcome.result
    );
}

fn expect_rejected(body: &str, construct: &str) {
    let source = format!("class Hostile:\n    def run(self):\n{body}");
    let vm = Vm::new().unwrap();
    let rejection = vm.validate_and_compile(&source).expect_err(body);
    assert!(
        rejection.construct.contains(construct),
        "{body}\n=> {rejection} (expected construct containing {construct})"
    );
    assert!(rejection.line >= 3, "{rejection}");
    let mut host = MockHost::new();
    let outcome = vm.deploy(&mut host, &addr(1), &source, &[], hostile_limits());
    assert_eq!(outcome.error_kind(), Some(ErrorKind::Forbidden));
}

// --- CPU ----------------------------------------------------------------

#[test]
fn h01_infinite_loop() {
    expect_runtime(
        ErrorKind::OutOfCycles,
        "        while True:\n            pass\n",
    );
}

#[test]
fn h02_recursion_bomb() {
    let source = "class Hostile:\n    def f(self, n):\n        return self.f(n + 1)\n    def run(self):\n        self.storage['poison'] = 1\n        return self.f(0)\n";
    let outcome = run_hostile(source, &[]);
    let error = outcome.result.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Revert);
    assert!(
        error.message.starts_with("RecursionError"),
        "{}",
        error.message
    );
}

#[test]
fn h03_sum_of_huge_range() {
    expect_runtime(ErrorKind::OutOfCycles, "        return sum(range(10**9))\n");
}

#[test]
fn h04_membership_in_big_list_in_a_loop() {
    expect_runtime(
        ErrorKind::OutOfCycles,
        "        big = list(range(100000))\n        n = 0\n        while True:\n            if -1 in big:\n                n += 1\n",
    );
}

#[test]
fn h05_catching_the_out_of_cycles_abort() {
    expect_runtime(
        ErrorKind::OutOfCycles,
        "        try:\n            while True:\n                pass\n        except BaseException:\n            return 'survived'\n",
    );
}

#[test]
fn h06_catching_abort_and_looping_in_finally() {
    expect_runtime(
        ErrorKind::OutOfCycles,
        "        try:\n            while True:\n                pass\n        finally:\n            while True:\n                pass\n",
    );
}

/// Builtins drain lazy iterators item by item (charged) into a list, so at
/// these limits the list's memory runs out before the cycles do.
#[test]
fn h07_builtin_consuming_lazy_iterator() {
    expect_runtime(
        ErrorKind::OutOfMemory,
        "        return sum(map(abs, range(10**12)))\n",
    );
}

#[test]
fn h08_sorted_huge_range() {
    expect_runtime(
        ErrorKind::OutOfCycles,
        "        return len(sorted(range(10**8)))\n",
    );
}

/// Two cycles per item buy 5M items: the list outgrows 64 MiB first.
#[test]
fn h09_big_comprehension() {
    expect_runtime(
        ErrorKind::OutOfMemory,
        "        return len([x for x in range(10**9)])\n",
    );
}

#[test]
fn h10_lambda_via_map() {
    expect_runtime(
        ErrorKind::OutOfMemory,
        "        f = lambda x: x + 1\n        return max(map(f, range(10**10)))\n",
    );
}

// --- memory ---------------------------------------------------------------

#[test]
fn h11_list_repetition_bomb() {
    expect_runtime(ErrorKind::OutOfMemory, "        return len([0] * 10**9)\n");
}

#[test]
fn h12_power_bomb() {
    expect_runtime(ErrorKind::OutOfMemory, "        return 10**10**8 > 0\n");
}

#[test]
fn h13_slow_growth_by_append() {
    let source = "class Hostile:\n    def run(self):\n        self.storage['poison'] = 1\n        xs = []\n        while True:\n            xs.append('x' * 1000)\n";
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(1);
    host.install_actor(actor, source);
    assert!(vm
        .deploy(&mut host, &actor, source, &[], hostile_limits())
        .is_success());
    let limits = ExecLimits {
        cycles: 1_000_000_000,
        cells: 100_000,
        memory_bytes: 16 * 1024 * 1024,
    };
    let outcome = vm.call(
        &mut host,
        &actor,
        "run",
        &[],
        limits,
        Invocation::Transaction,
    );
    assert_eq!(
        outcome.error_kind(),
        Some(ErrorKind::OutOfMemory),
        "{:?}",
        outcome.result
    );
}

#[test]
fn h14_string_width_bomb() {
    expect_runtime(
        ErrorKind::OutOfMemory,
        "        return len('x'.ljust(10**10))\n",
    );
}

#[test]
fn h15_bytes_constructor_bomb() {
    expect_runtime(
        ErrorKind::OutOfMemory,
        "        return len(bytes(10**10))\n",
    );
}

#[test]
fn h16_shift_bomb() {
    expect_runtime(ErrorKind::OutOfMemory, "        return (1 << 10**11) > 0\n");
}

/// Each doubling pays for the bytes it copies: cycles run out near 16 MiB.
#[test]
fn h17_string_doubling() {
    expect_runtime(
        ErrorKind::OutOfCycles,
        "        s = 'x'\n        while True:\n            s = s + s\n",
    );
}

// --- cells ----------------------------------------------------------------

#[test]
fn h18_huge_return_value() {
    expect_runtime(ErrorKind::OutOfCells, "        return 'x' * 1000000\n");
}

#[test]
fn h19_huge_event() {
    expect_runtime(
        ErrorKind::OutOfCells,
        "        pvm_host.emit('Big', 'x' * 1000000)\n",
    );
}

#[test]
fn h20_huge_storage_write() {
    expect_runtime(
        ErrorKind::OutOfCells,
        "        self.storage['big'] = b'x' * 1000000\n",
    );
}

#[test]
fn h21_payload_over_one_mib() {
    let source = "class Hostile:\n    def run(self, payload):\n        return len(payload)\n";
    let outcome = run_hostile(source, &[Value::Bytes(vec![0; 1024 * 1024 + 1])]);
    assert_eq!(outcome.error_kind(), Some(ErrorKind::OutOfCells));
    assert_eq!(outcome.cells_used, hostile_limits().cells);
}

// --- sandbox escapes (rejected at deploy) ------------------------------------

#[test]
fn h22_import_os_sys_time() {
    for module in [
        "os", "sys", "time", "_io", "marshal", "gc", "_thread", "re", "random",
    ] {
        expect_rejected(
            &format!("        import {module}\n"),
            &format!("import {module}"),
        );
    }
    expect_rejected("        from os import path\n", "from os import");
}

#[test]
fn h23_open_and_dunder_import() {
    expect_rejected("        return open('/etc/passwd').read()\n", "name open");
    expect_rejected("        return __import__('os')\n", "name __import__");
}

#[test]
fn h24_subclasses_walk() {
    expect_rejected(
        "        return ().__class__.__bases__[0].__subclasses__()\n",
        "attribute .__",
    );
}

#[test]
fn h25_frame_walk_via_generator() {
    expect_rejected(
        "        g = (x for x in [1])\n        return g.gi_frame.f_back.f_globals\n",
        "attribute .f_globals",
    );
}

#[test]
fn h26_format_field_access() {
    // Called in place, the template is checked before it runs…
    expect_runtime_message(
        ErrorKind::Revert,
        "        return '{0.__class__}'.format(1)\n",
        "attribute and index access inside format fields",
    );
    expect_runtime_message(
        ErrorKind::Revert,
        "        return str.format('{0.__class__}', 1)\n",
        "attribute and index access inside format fields",
    );
    expect_runtime_message(
        ErrorKind::Revert,
        "        return '{x[0]}'.format_map({'x': [1]})\n",
        "attribute and index access inside format fields",
    );
    // …and the bound method cannot be taken away to be called unchecked.
    expect_rejected("        f = '{0.__class__}'.format\n", "attribute .format");
    expect_runtime_message(
        ErrorKind::Revert,
        "        return getattr('{0.__class__}', 'format')(1)\n",
        "call it in place",
    );
}

fn expect_runtime_message(kind: ErrorKind, body: &str, message: &str) {
    let source = format!("import pvm_host\nclass Hostile:\n    def run(self):\n{body}");
    let outcome = run_hostile(&source, &[]);
    assert_eq!(
        outcome.error_kind(),
        Some(kind),
        "{body}\n=> {:?}",
        outcome.result
    );
    let error = outcome.result.expect_err("failed");
    assert!(
        error.message.contains(message),
        "{body}\n=> {} (expected it to contain {message})",
        error.message
    );
}

#[test]
fn h27_getattr_with_built_strings() {
    for call in [
        "getattr(1, '__' + 'class__')",
        "getattr(1, '__' + 'class__', None)",
        "hasattr(self, '__' + 'dict__')",
        "setattr(self, '__' + 'class__', int)",
        "delattr(self, '_pvm' + '_x')",
        "getattr(self, '_value' + '_')",
        "getattr(lambda: 0, 'f_' + 'globals')",
    ] {
        expect_runtime_message(
            ErrorKind::Revert,
            &format!("        return {call}\n"),
            "attribute '",
        );
    }
}

#[test]
fn h28_exec_eval_compile() {
    expect_rejected("        exec('1')\n", "name exec");
    expect_rejected("        return eval('1')\n", "name eval");
    expect_rejected("        return compile('1', 'x', 'eval')\n", "name compile");
}

#[test]
fn h29_id_hash_and_default_repr() {
    // A module that binds `id` somewhere still has no builtin `id` to call.
    let source = "class Hostile:\n    def f(self, id):\n        return id\n    def run(self):\n        return id(self)\n";
    let outcome = run_hostile(source, &[]);
    assert!(
        outcome
            .result
            .as_ref()
            .is_err_and(|e| e.message.contains("NameError")),
        "{:?}",
        outcome.result
    );
    expect_rejected("        return id(self)\n", "name id");
    // `hash` is deterministic now (#30): identity hashes are numbered, not
    // addresses; the same in another thread.
    let source = "class Hostile:\n    def run(self):\n        return [hash(self), hash(object()), hash(Hostile), hash('x'), hash((1, 'x'))]\n";
    let here = run_hostile(source, &[]).result;
    assert!(here.is_ok(), "{here:?}");
    let elsewhere = std::thread::spawn(move || run_hostile(source, &[]).result)
        .join()
        .unwrap();
    assert_eq!(here, elsewhere);
    // `repr` is allowed: the default one names the class, never an address.
    let source = "class Hostile:\n    def run(self):\n        return [repr(self), f'{self!r}', repr(object()), repr(type(self)) != '']\n";
    let outcome = run_hostile(source, &[]);
    assert_eq!(
        outcome.result.expect("runs"),
        Value::List(vec![
            Value::Str("<Hostile object>".into()),
            Value::Str("<Hostile object>".into()),
            Value::Str("<object object>".into()),
            Value::Bool(true),
        ])
    );
}

#[test]
fn h30_state_outside_storage() {
    // Values made at load are shared by every call on a node: a mutable one
    // is restored after every call that wrote it (`tests/constants.rs`), so
    // no call sees another's writes.
    for source in [
        "CACHE = []\nclass A:\n    def f(self):\n        CACHE.append(1)\n        return len(CACHE)\n",
        "class A:\n    seen = {}\n    def f(self):\n        self.seen[len(self.seen)] = 1\n        return len(self.seen)\n",
        "class A:\n    def f(self, acc=[]):\n        acc.append(1)\n        return len(acc)\n",
        "def counted(f):\n    calls = [0]\n    def inner(self):\n        calls[0] += 1\n        return calls[0]\n    return inner\nclass A:\n    @counted\n    def f(self):\n        pass\n",
    ] {
        let vm = Vm::new().unwrap();
        let mut host = MockHost::new();
        common::deploy_at(&vm, &mut host, addr(1), source, &[], hostile_limits());
        for _ in 0..3 {
            let outcome = vm.call(
                &mut host,
                &addr(1),
                "f",
                &[],
                hostile_limits(),
                Invocation::Transaction,
            );
            assert_eq!(outcome.result.expect(source), Value::Int(1.into()), "{source}");
        }
    }
    // A closure variable rebound with `nonlocal` cannot be restored: refused
    // when the module loads (so at deploy), naming where it is.
    let source = "def counted(f):\n    calls = 0\n    def inner(self):\n        nonlocal calls\n        calls += 1\n        return calls\n    return inner\nclass A:\n    @counted\n    def f(self):\n        pass\n";
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let outcome = vm.deploy(&mut host, &addr(1), source, &[], hostile_limits());
    let error = outcome.result.expect_err(source);
    assert!(
        error.message.contains("nonlocal"),
        "{source}\n=> {}",
        error.message
    );
    // Instance attributes, `global` and class attributes: nothing survives a call.
    let source = "COUNT = 0\nclass Box:\n    shared = 0\nclass A:\n    def f(self):\n        global COUNT\n        COUNT += 1\n        self.seen = getattr(self, 'seen', 0) + 1\n        return [COUNT, self.seen]\n    def g(self):\n        Box.shared += 1\n        Box.extra = 1\n        return [Box.shared, hasattr(Box, 'extra')]\n    def h(self):\n        import json\n        json.dumps = len\n";
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    common::deploy_at(&vm, &mut host, addr(1), source, &[], hostile_limits());
    for _ in 0..3 {
        let outcome = vm.call(
            &mut host,
            &addr(1),
            "f",
            &[],
            hostile_limits(),
            Invocation::Transaction,
        );
        assert_eq!(
            outcome.result.expect("f runs"),
            Value::List(vec![Value::Int(1.into()), Value::Int(1.into())])
        );
    }
    // A class's attributes may be set in a call and are put back after it.
    for _ in 0..3 {
        let outcome = vm.call(
            &mut host,
            &addr(1),
            "g",
            &[],
            hostile_limits(),
            Invocation::Transaction,
        );
        assert_eq!(
            outcome.result.expect("g runs"),
            Value::List(vec![Value::Int(1.into()), Value::Bool(true)])
        );
    }
    // A library module's attributes may not.
    let outcome = vm.call(
        &mut host,
        &addr(1),
        "h",
        &[],
        hostile_limits(),
        Invocation::Transaction,
    );
    let error = outcome.result.expect_err("h");
    assert!(
        error.message.contains("shared by every call"),
        "h: {}",
        error.message
    );
}

#[test]
fn h31_printf_width_bomb_is_refused_at_runtime() {
    expect_runtime(ErrorKind::Revert, "        return '%999999999d' % 1\n");
    expect_runtime(
        ErrorKind::Revert,
        "        fmt = b'%999999999d'\n        return fmt % (1,)\n",
    );
}

#[test]
fn h34_integers_are_capped() {
    expect_runtime(ErrorKind::Revert, "        return 2 ** 70000 > 0\n");
    expect_runtime(
        ErrorKind::Revert,
        "        x = 3\n        while True:\n            x = x * x\n",
    );
    expect_runtime(
        ErrorKind::Revert,
        "        return int.from_bytes(b'x' * 9000, 'big') > 0\n",
    );
}

#[test]
fn h32_names_that_do_not_exist_for_actors() {
    // Not rejected by name, but absent from the actor's builtins.
    expect_runtime(ErrorKind::Revert, "        return memoryview_(b'')\n");
}

#[test]
fn h33_no_address_leaks_through_str_or_set_order() {
    let source = "import pvm_host\nclass Hostile:\n    def run(self):\n        f = lambda: 0\n        g = (x for x in [1])\n        return [str(self), f'{self}', str(f), str(g), str(pvm_host.emit), str(pvm_host), str(Hostile), str(self.run), str([None, True])]\n";
    let outcome = run_hostile(source, &[]);
    let value = format!("{:?}", outcome.result);
    assert!(outcome.is_success(), "{value}");
    assert!(!value.contains("0x"), "{value}");
    // Bound methods stay unhashable; objects of plain classes, classes and
    // functions hash deterministically (#30): a set of them iterates in the
    // same order in another thread, on a warm interpreter, every time.
    let source = "class Hostile:\n    def run(self):\n        return len({self.run, 1})\n";
    let outcome = run_hostile(source, &[]);
    assert!(
        outcome.result.unwrap_err().message.contains("unhashable"),
        "bound method"
    );
    let source = "class Node:\n    def __init__(self, i):\n        self.i = i\nclass Hostile:\n    def run(self):\n        nodes = [Node(i) for i in range(200)]\n        late = set(reversed(nodes))\n        return [[n.i for n in set(nodes)], [n.i for n in late], len({self: 1, Hostile: 2, Node: 3, len: 4})]\n";
    let first = run_hostile(source, &[]);
    assert!(first.is_success(), "{:?}", first.result);
    let again = run_hostile(source, &[]);
    assert_eq!(again.result, first.result);
    let elsewhere = std::thread::spawn(move || run_hostile(source, &[]).result)
        .join()
        .unwrap();
    assert_eq!(elsewhere, first.result);
    let source = "class Hostile:\n    def run(self):\n        return [x for x in {None, 1, 'a', (2, None)}]\n";
    let first = run_hostile(source, &[]).result;
    assert_eq!(
        std::thread::spawn(move || run_hostile(source, &[]).result)
            .join()
            .unwrap(),
        first
    );
}

#[test]
fn h35_deeply_nested_data_does_not_overflow_the_native_stack() {
    for operation in [
        "str(x)",
        "x == y",
        "len(sorted([x, y]))",
        "f'{x}'",
        "[x] * 2 == [y] * 2",
    ] {
        let body = format!(
            "        x = []\n        y = []\n        for i in range(200000):\n            x = [x]\n            y = [y]\n        return {operation}\n"
        );
        let source = format!(
            "class Hostile:\n    def run(self):\n        self.storage['poison'] = 1\n{body}"
        );
        let outcome = run_hostile(&source, &[]);
        assert!(!outcome.is_success(), "{operation}: {:?}", outcome.result);
    }
}

/// An actor whose `run(n)` does `setup`, then `step` `n` times.
fn loop_source(setup: &str, step: &str) -> String {
    format!(
        "class Hostile:\n    def run(self, n):\n{setup}        for _ in range(n):\n            {step}\n"
    )
}

/// Cycles that one more run of `step` costs after `setup`: the difference
/// between `run(2)` and `run(1)` of a loop doing `step` `n` times.
fn marginal_cycles(setup: &str, step: &str) -> u64 {
    let source = loop_source(setup, step);
    let cycles = |n: u64| {
        let outcome = run_hostile(&source, &[Value::int(n)]);
        assert!(outcome.is_success(), "{step}: {:?}", outcome.result);
        outcome.cycles_used
    };
    cycles(2) - cycles(1)
}

// Comparisons and hashes recurse into nested data inside Rust; the type slots
// charge each level (see host/vm/src/meter/slots.rs). Before, each of these
// steps cost a handful of cycles for milliseconds of work.

#[test]
fn h36_nested_equality_is_charged_per_element_compared() {
    let setup = "        a = [list(range(10000))] * 100\n        b = [list(range(10000))] * 100\n";
    assert!(marginal_cycles(setup, "a == b") >= 100 * 10_000);
    expect_runtime(
        ErrorKind::OutOfCycles,
        &format!("{setup}        while True:\n            a == b\n"),
    );
}

#[test]
fn h37_membership_of_a_nested_copy_is_charged_per_element_compared() {
    let setup = "        a = [list(range(10000))] * 100\n        x = list(range(10000))\n        x[-1] = -1\n";
    assert!(marginal_cycles(setup, "x in a") >= 100 * 10_000);
}

#[test]
fn h38_hashing_big_tuples_and_bytes_is_charged_per_lookup() {
    let setup = "        t = tuple(range(100000))\n        b = bytes(1000000)\n        s = {1}\n        d = {}\n";
    assert!(marginal_cycles(setup, "t in s") >= 100_000);
    assert!(marginal_cycles(setup, "d.get(t)") >= 100_000);
    assert!(marginal_cycles(setup, "b in s") >= 1_000_000 / 16);
}

#[test]
fn h39_long_string_equality_is_charged_by_length() {
    let setup = "        s = 'x' * 100000\n        t = 'x' * 100000\n";
    assert!(marginal_cycles(setup, "s == t") >= 100_000 / 16);
    assert!(marginal_cycles(setup, "s < t") >= 100_000 / 16);
    assert!(marginal_cycles(setup, "[s] == [t]") >= 100_000 / 16);
}

/// RustPython specialises hot instructions (e.g. `==` between two `str`s
/// becomes an inline comparison that skips the type's slot). Charges must
/// not change when that happens: every iteration of a long loop, and every
/// later call, costs exactly what the first did.
#[test]
fn h40_comparison_charges_do_not_depend_on_warm_up() {
    let setup = "        s = 'x' * 1000\n        t = 'x' * 1000\n        a = [s, 1]\n        b = [t, 1]\n        k = 'k' * 500\n        d = {'k' * 500: 1}\n";
    for step in [
        "s == t",
        "s != t",
        "s < t",
        "s == 'short'",
        "s == t == s",
        "s <= t == s",
        "a == b",
        "s in a",
        "d[k]",
        "k in d",
        "(s, 1) == (t, 1)",
        "str(a)",
        "f'{a}'",
    ] {
        let source = loop_source(setup, step);
        let vm = Vm::new().unwrap();
        let mut host = MockHost::new();
        let actor = addr(1);
        common::deploy_at(&vm, &mut host, actor, &source, &[], hostile_limits());
        let mut cycles = |n: u64| {
            let outcome = vm.call(
                &mut host,
                &actor,
                "run",
                &[Value::int(n)],
                hostile_limits(),
                Invocation::Transaction,
            );
            assert!(outcome.is_success(), "{step}: {:?}", outcome.result);
            outcome.cycles_used
        };
        let one = cycles(1);
        let per_iteration = cycles(2) - one;
        assert_eq!(
            cycles(500) - one,
            499 * per_iteration,
            "{step}: a hot loop is charged differently"
        );
        for _ in 0..20 {
            assert_eq!(
                cycles(1),
                one,
                "{step}: a later call is charged differently"
            );
        }
    }
}

/// A dict or set lookup whose key equals, but is not the same object as, the
/// stored key compares the two strings; the lookup goes through `str`'s
/// comparison slot, so the comparison is charged by length. The identical
/// key compares by identity and costs nothing extra.
#[test]
fn h41_dict_and_set_lookups_by_an_equal_long_string_are_charged_by_length() {
    let setup = "        k1 = 'x' * 100000\n        k2 = 'x' * 99999 + 'x'\n        d = {k1: 1}\n        s = {k1}\n";
    for step in [
        "d[k2]",
        "k2 in d",
        "d.get(k2)",
        "k2 in s",
        "s.add(k2)",
        "d[k2] = 2",
    ] {
        let cycles = marginal_cycles(setup, step);
        assert!(cycles >= 100_000 / 16, "{step}: {cycles}");
    }
    let identical = marginal_cycles(setup, "d[k1]");
    assert!(identical < 100, "d[k1]: {identical}");
}

/// `f(**mapping)` copies and rehashes every key for the callee on every call
/// (before the keyword guard, a 1 MB key cost ~0.8 ms per call for ~20
/// cycles). Keys are charged by their bytes, also when the call is a sized
/// method's (`_pvm_method`), and a loop of such calls runs out of cycles.
#[test]
fn h42_keyword_splats_are_charged_by_key_bytes() {
    let setup = "        k1 = 'x' * 1000000\n        a = {k1: 1}\n        d = {}\n        def g(**kw):\n            return 0\n";
    for step in ["dict(**a)", "g(**a)", "d.update(**a)"] {
        let cycles = marginal_cycles(setup, step);
        assert!(cycles >= 1_000_000 / 16, "{step}: {cycles}");
    }
    expect_runtime(
        ErrorKind::OutOfCycles,
        &format!("{setup}        while True:\n            g(**a)\n"),
    );
}

/// `{**mapping}` in a dict display copies every entry inside Rust (before the
/// guard, 200,000 entries cost 7 cycles for ~6 ms).
#[test]
fn h43_dict_display_unpacking_is_charged_per_entry() {
    let setup = "        bd = {i: None for i in range(100000)}\n";
    for step in ["{**bd}", "{'a': 1, **bd}"] {
        let cycles = marginal_cycles(setup, step);
        assert!(cycles >= 100_000, "{step}: {cycles}");
    }
}

/// `i * c` on a `range` loop index runs without a `_pvm_binop` guard (the
/// instrumenter proves `i` is an int); the loop's iterator charges what the
/// guard would have, from the range's bounds. Big indexes therefore cost per
/// item exactly what the same product of a big int costs through the guard.
#[test]
fn h44_exempt_index_products_cost_what_the_guard_charges() {
    let cycles = |source: &str, n: u64| {
        let outcome = run_hostile(source, &[Value::int(n)]);
        assert!(outcome.is_success(), "{source}: {:?}", outcome.result);
        outcome.cycles_used
    };
    let marginal = |body: &str| {
        let source = format!(
            "class Hostile:\n    def run(self, n):\n        big = 2 ** 30000\n        x = 0\n{body}"
        );
        cycles(&source, 3) - cycles(&source, 2)
    };
    let exempt = marginal("        for i in range(big, big + n):\n            x = i * 3\n");
    let guarded = marginal("        for i in range(n):\n            x = big * 3\n");
    assert_eq!(exempt, guarded);
    let small_exempt = marginal("        for i in range(n):\n            x = i * 3\n");
    let small_guarded =
        marginal("        k = 5\n        for i in range(n):\n            x = k * 3\n");
    assert_eq!(small_exempt, small_guarded);
    // A 30,000-bit index pays for its product and result: 469 limbs / 16
    // and 3,750 bytes / 128.
    assert!(
        exempt >= small_exempt + 29 + 29,
        "{exempt} vs {small_exempt}"
    );
}

/// Walking a `str` or `bytes` makes an object per character or byte, so the
/// builtins and splats that walk one are charged per item, not per 16 bytes
/// (`set(s)` of 1 MB took 13 ms for 62,500 cycles); `translate` looks every
/// character up, and RustPython's `count` scans slowly: both are surcharged
/// (release-build rates in docs/METERING.md).
#[test]
fn h45_walking_text_is_charged_per_character() {
    let setup = "        s = 'ab' * 50000\n        b = b'ab' * 50000\n        d = {}\n";
    for step in [
        "set(s)",
        "tuple(b)",
        "max(s)",
        "'-'.join(s)",
        "s.translate({97: 98})",
        "[*s]",
    ] {
        let cycles = marginal_cycles(setup, step);
        assert!(cycles >= 100_000, "{step}: {cycles}");
    }
    for step in ["s.count('b')", "b.count(b'b')"] {
        let cycles = marginal_cycles(setup, step);
        assert!(cycles >= 4 * 100_000 / 16, "{step}: {cycles}");
    }
    for step in ["s.replace('a', 'c')", "b.replace(b'a', b'c')"] {
        let cycles = marginal_cycles(setup, step);
        assert!(cycles >= 3 * 100_000 / 16, "{step}: {cycles}");
    }
}

/// Converting structured values (storage, events, calls, `json`) walks or
/// builds an object per nested value, and `pow(a, e, m)` / `math.gcd` are
/// quadratic in their operands: all are charged accordingly (before, a
/// `json.dumps` of 20,000 ints cost 6,822 cycles and a 6,000-bit modular
/// power 586k cycles for 65 ms).
#[test]
fn h46_structured_conversions_and_modular_powers_are_charged_by_their_work() {
    let setup = "        small = list(range(2000))\n        self.storage['k'] = small\n        a = 3 ** 2500\n        m = 7 ** 2200 + 2\n        e = 5 ** 1000\n";
    let prelude =
        "import pvm_host\nimport json\nimport math\nfrom hashing import keccak256, sha256\n";
    let marginal = |step: &str| {
        let source = format!("{prelude}{}", loop_source(setup, step));
        let cycles = |n: u64| {
            let outcome = run_hostile(&source, &[Value::int(n)]);
            assert!(outcome.is_success(), "{step}: {:?}", outcome.result);
            outcome.cycles_used
        };
        cycles(2) - cycles(1)
    };
    for step in [
        "json.dumps(small)",
        "self.storage.get('k')",
        "self.storage['k2'] = small",
        "pvm_host.emit('x', small)",
    ] {
        let cycles = marginal(step);
        assert!(cycles >= 8 * 2000, "{step}: {cycles}");
    }
    // Keccak has no hardware support here: twice sha256's per-byte charge.
    let keccak = marginal("keccak256(bytes(160000))");
    let sha = marginal("sha256(bytes(160000))");
    assert!(
        keccak >= sha + 160_000 / 16,
        "keccak256: {keccak}, sha256: {sha}"
    );
    let limbs = 6177 / 64 + 1;
    let cycles = marginal("pow(a, e, m)");
    // bits(5 ** 1000) = 2,322; bits(m) = 6,177.
    assert!(cycles >= 2322 * limbs * (limbs / 8 + 1), "pow: {cycles}");
    let cycles = marginal("math.gcd(a, m)");
    assert!(cycles >= 4 * limbs * limbs, "gcd: {cycles}");
}

/// `str(x)` and `f"{x}"` of a container format every element,
/// nested containers included: the `repr` slots of the built-in containers,
/// `str` and `bytes` charge per element (or per 16 bytes) where the work
/// happens (before, `f"{xs}"` of 100 ints cost 35 cycles for 5 µs; a list of
/// 100 references to that list formatted 10,000 ints for the bytes of the
/// result alone).
#[test]
fn h47_formatting_containers_is_charged_per_element() {
    let setup = "        xs = list(range(1000))\n        nested = [xs] * 100\n        d = {i: i for i in range(1000)}\n        s = 'x' * 16000\n";
    for (step, at_least) in [
        ("str(xs)", 4 * 1000),
        ("f'{xs}'", 4 * 1000),
        ("f'{nested}'", 4 * 100 * 1000),
        ("str(d)", 4 * 1000),
        ("str([s])", 4 * 16000 / 16),
    ] {
        let cycles = marginal_cycles(setup, step);
        assert!(cycles >= at_least, "{step}: {cycles}");
    }
}

/// `math.factorial` and `math.comb` cannot buy unbounded big-int work: a
/// huge argument ends at the integer cap (a clear, catchable error) after
/// work proportional to what was charged, and the values agree with CPython.
#[test]
fn h48_factorial_and_comb_stop_at_the_integer_cap() {
    let source = r#"
import math

class A:
    def run(self, n):
        return math.factorial(n)

    def comb(self, n, k):
        return math.comb(n, k)
"#;
    for n in [10_000i64, 1_000_000, 10i64.pow(18)] {
        let outcome = run_hostile(source, &[Value::int(n)]);
        let error = outcome.result.unwrap_err();
        assert!(
            error.message.contains("limited to 65536 bits"),
            "factorial({n}): {}",
            error.message
        );
    }
    let ok = run_hostile(source, &[Value::int(20)]);
    assert_eq!(ok.result.unwrap(), Value::int(2_432_902_008_176_640_000i64));
    // comb through a second handler: exact, and refused past the cap.
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let actor = addr(1);
    host.install_actor(actor, source);
    assert!(vm
        .deploy(&mut host, &actor, source, &[], hostile_limits())
        .is_success());
    let comb = |n: i64, k: i64, host: &mut MockHost| {
        vm.call(
            host,
            &actor,
            "comb",
            &[Value::int(n), Value::int(k)],
            hostile_limits(),
            Invocation::Transaction,
        )
    };
    assert_eq!(comb(10, 3, &mut host).result.unwrap(), Value::int(120));
    assert_eq!(comb(3, 10, &mut host).result.unwrap(), Value::int(0));
    let big = comb(200_000, 100_000, &mut host);
    // Its steps are charged as they grow: the cycles run out before the cap.
    let error = big.result.unwrap_err();
    assert!(
        error.message.contains("limited to 65536 bits") || error.kind == ErrorKind::OutOfCycles,
        "{:?}: {} ({} cycles)",
        error.kind,
        error.message,
        big.cycles_used
    );
}

/// Runs a whole hostile module's `run` twice on one VM (cold, then warm
/// interpreter) and returns both outcomes' error kinds and cycles.
fn run_module_twice(source: &str) -> [(Option<ErrorKind>, u64); 2] {
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    host.install_actor(addr(1), source);
    let deployed = vm.deploy(&mut host, &addr(1), source, &[], hostile_limits());
    assert!(deployed.is_success(), "{source}\n=> {:?}", deployed.result);
    let mut runs = [(None, 0); 2];
    for run in &mut runs {
        let started = Instant::now();
        let outcome = vm.call(
            &mut host,
            &addr(1),
            "run",
            &[],
            hostile_limits(),
            Invocation::Transaction,
        );
        assert!(
            started.elapsed() < TIME_BOUND,
            "{source}: took {:?}",
            started.elapsed()
        );
        *run = (outcome.error_kind(), outcome.cycles_used);
    }
    runs
}

#[test]
fn h50_user_dunders_decorators_and_classes_are_metered() {
    for (source, kind) in [
        // A `__hash__` / `__eq__` / `__lt__` that loops, called by builtins.
        (
            "class K:\n    def __hash__(self):\n        while True:\n            pass\nclass Hostile:\n    def run(self):\n        return {K(): 1}\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "class K:\n    def __eq__(self, other):\n        while True:\n            pass\n    __hash__ = None\nclass Hostile:\n    def run(self):\n        return K() in [K()]\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "class K:\n    def __lt__(self, other):\n        xs = []\n        while True:\n            xs.append('x' * 1000)\nclass Hostile:\n    def run(self):\n        return sorted([K(), K()])\n",
            // (Out of memory before `'x' * 1000` was charged per copy.)
            ErrorKind::OutOfCycles,
        ),
        // A decorator that recurses, at call time.
        (
            "def again(f):\n    def inner(*a):\n        return inner(*a)\n    return inner\nclass Hostile:\n    @again\n    def run(self):\n        return 1\n",
            ErrorKind::Revert,
        ),
        // Deep class hierarchies built at run time.
        (
            "class Hostile:\n    def run(self):\n        base = object\n        while True:\n            class Next(base):\n                pass\n            base = Next\n",
            ErrorKind::OutOfCycles,
        ),
        // Generator and exception bombs.
        (
            "def forever():\n    n = 0\n    while True:\n        n += 1\n        yield n\nclass Hostile:\n    def run(self):\n        return list(forever())\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "class Boom(Exception):\n    pass\nclass Hostile:\n    def run(self):\n        chain = None\n        while True:\n            try:\n                raise Boom('x' * 100) from chain\n            except Boom as e:\n                chain = e\n",
            // (Out of memory before exceptions were charged their ~1 µs;
            // contained either way, the same on cold and warm interpreters.)
            ErrorKind::OutOfCycles,
        ),
        // Constructing a builtin subclass from an unbounded iterator.
        (
            "def forever():\n    while True:\n        yield 1\nclass Bag(list):\n    pass\nclass Hostile:\n    def run(self):\n        return len(Bag(forever())) + len(tuple(forever()))\n",
            ErrorKind::OutOfCycles,
        ),
        // A `with` whose `__exit__` swallows the abort cannot keep running.
        (
            "class Quiet:\n    def __enter__(self):\n        return self\n    def __exit__(self, *exc):\n        return True\nclass Hostile:\n    def run(self):\n        while True:\n            with Quiet():\n                while True:\n                    pass\n",
            ErrorKind::OutOfCycles,
        ),
    ] {
        let [cold, warm] = run_module_twice(source);
        assert_eq!(cold.0, Some(kind), "{source}");
        assert_eq!(cold, warm, "{source}: cold and warm interpreters differ");
    }
}

#[test]
fn h51_module_level_code_runs_under_its_own_budget() {
    // A decorator that never returns fails the load, at deploy, the same way every time.
    let source = "def stall(f):\n    while True:\n        pass\nclass A:\n    @stall\n    def f(self):\n        pass\n";
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    let outcome = vm.deploy(&mut host, &addr(1), source, &[], hostile_limits());
    let error = outcome.result.expect_err("stalls");
    assert!(
        error.message.contains("failed to load: out of cycles"),
        "{}",
        error.message
    );
    // Module-level code cannot reach the chain.
    let source = "import pvm_host\ndef grab(f):\n    pvm_host.transfer('0x' + '11' * 20, 1)\n    return f\nclass A:\n    @grab\n    def f(self):\n        pass\n";
    let outcome = vm.deploy(&mut host, &addr(1), source, &[], hostile_limits());
    let error = outcome.result.expect_err("no chain at load");
    assert!(
        error.message.contains("chain is not reachable"),
        "{}",
        error.message
    );
}

#[test]
fn h52_library_modules_are_metered_and_hold_no_state_between_calls() {
    for (source, kind) in [
        // Infinite iterators consumed by builtins, library code and loops.
        (
            "import itertools\nclass Hostile:\n    def run(self):\n        return len(list(itertools.count()))\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "import itertools\nclass Hostile:\n    def run(self):\n        return sum(itertools.repeat(1))\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "import itertools\nclass Hostile:\n    def run(self):\n        return max(itertools.cycle([1, 2]))\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "import itertools, collections\nclass Hostile:\n    def run(self):\n        return len(collections.deque(itertools.count()))\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "import functools, operator, itertools\nclass Hostile:\n    def run(self):\n        return functools.reduce(operator.add, itertools.count())\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "import itertools\nclass Hostile:\n    def run(self):\n        return len(tuple(itertools.product(range(100), repeat=6)))\n",
            ErrorKind::OutOfCycles,
        ),
        // A cache that grows without bound.
        (
            "import functools\n@functools.cache\ndef f(n):\n    return [n] * 100\nclass Hostile:\n    def run(self):\n        n = 0\n        while True:\n            f(n)\n            n += 1\n",
            ErrorKind::OutOfCycles,
        ),
        // Dataclass and namedtuple bombs.
        (
            "from dataclasses import dataclass, field\n@dataclass\nclass Big:\n    xs: list = field(default_factory=list)\nclass Hostile:\n    def run(self):\n        out = []\n        while True:\n            out.append(Big([0] * 100000))\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "from collections import namedtuple\nclass Hostile:\n    def run(self):\n        return namedtuple('P', ['f' + str(i) for i in range(100000)])\n",
            ErrorKind::OutOfCycles,
        ),
        (
            "from collections import Counter\nclass Hostile:\n    def run(self):\n        return Counter('x' * 10**7).most_common(1)\n",
            ErrorKind::OutOfCycles,
        ),
    ] {
        let [cold, warm] = run_module_twice(source);
        assert_eq!(cold.0, Some(kind), "{source}");
        assert_eq!(cold, warm, "{source}: cold and warm interpreters differ");
    }
    // A module-level cache makes no call cheaper than the first: each
    // execution starts with it empty.
    let source = "import functools\n@functools.cache\ndef slow(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\nclass Hostile:\n    def run(self):\n        return slow(5000)\n";
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    common::deploy_at(&vm, &mut host, addr(1), source, &[], hostile_limits());
    let cycles: Vec<u64> = (0..3)
        .map(|_| {
            let outcome = vm.call(
                &mut host,
                &addr(1),
                "run",
                &[],
                hostile_limits(),
                Invocation::Transaction,
            );
            assert!(outcome.is_success(), "{:?}", outcome.result);
            outcome.cycles_used
        })
        .collect();
    assert_eq!(cycles[0], cycles[1]);
    assert_eq!(cycles[1], cycles[2]);
    // What library classes expose as dicts are fresh copies: changing one
    // changes nothing shared.
    let source = "from collections import namedtuple\nfrom typing import NamedTuple\nConfig = namedtuple('Config', 'host port', defaults=(8080,))\nclass P(NamedTuple):\n    x: int = 1\nclass Hostile:\n    def run(self):\n        Config._field_defaults['port'] = 1\n        P._field_defaults['x'] = 2\n        return [Config('h').port, P().x, Config._field_defaults['port']]\n";
    let [cold, warm] = run_module_twice(source);
    assert_eq!(cold, warm);
    assert_eq!(
        run_hostile(source, &[]).result.expect("runs"),
        Value::List(vec![
            Value::Int(8080.into()),
            Value::Int(1.into()),
            Value::Int(8080.into())
        ])
    );
    // Library modules are shared: actors cannot change them.
    for body in [
        "        import dataclasses\n        dataclasses.dataclass = len\n",
        "        import enum\n        enum.Enum.extra = 1\n",
        "        import functools\n        functools.reduce.extra = 1\n",
    ] {
        expect_runtime_message(ErrorKind::Revert, body, "shared by every call");
    }
}

#[test]
fn h53_the_actor_class_keeps_its_contract_under_the_wider_dialect() {
    // Attribute hooks on the actor class would intercept storage/address/deployer.
    for hook in [
        "__getattr__",
        "__getattribute__",
        "__setattr__",
        "__delattr__",
    ] {
        let source = format!(
            "class A:\n    def {hook}(self, *args):\n        return None\n    def f(self):\n        return 1\n"
        );
        let vm = Vm::new().unwrap();
        let rejection = vm.validate_and_compile(&source).expect_err(hook);
        assert_eq!(rejection.construct, format!("def {hook}"), "{rejection}");
        assert!(rejection.reason.contains("self.storage"), "{rejection}");
    }
    // On a helper class they are ordinary (metered) Python.
    let source = "class Proxy:\n    def __init__(self, target):\n        self.target = target\n    def __getattr__(self, name):\n        return name.upper()\nclass Hostile:\n    def run(self):\n        return Proxy(1).anything\n";
    assert_eq!(
        run_hostile(source, &[]).result.expect("helper hooks run"),
        Value::Str("ANYTHING".into())
    );
    // A decorated handler is still the handler of that name, with the same
    // rules: public names only, timer handlers only from a timer fire.
    let source = "import pvm_host\ndef logged(f):\n    def inner(self, *args):\n        return ['logged', f(self, *args)]\n    return inner\nclass A:\n    @logged\n    def get(self, x):\n        return x\n    @logged\n    @pvm_host.timer_handler\n    def on_fire(self, payload):\n        return payload\n    @logged\n    def _private(self):\n        return 0\n";
    let vm = Vm::new().unwrap();
    let mut host = MockHost::new();
    common::deploy_at(&vm, &mut host, addr(1), source, &[], hostile_limits());
    let call = |host: &mut MockHost, handler: &str, invocation| {
        vm.call(
            host,
            &addr(1),
            handler,
            &[Value::Int(7.into())],
            hostile_limits(),
            invocation,
        )
    };
    assert_eq!(
        call(&mut host, "get", Invocation::Transaction)
            .result
            .expect("public"),
        Value::List(vec![Value::Str("logged".into()), Value::Int(7.into())])
    );
    assert_eq!(
        call(&mut host, "on_fire", Invocation::Transaction).error_kind(),
        Some(ErrorKind::Unauthorized)
    );
    assert!(call(
        &mut host,
        "on_fire",
        Invocation::TimerFire(timerhost_vm::testing::TEST_FIRE)
    )
    .is_success());
    assert_eq!(
        call(&mut host, "_private", Invocation::Transaction).error_kind(),
        Some(ErrorKind::InvalidInput)
    );
}

/// `json.loads` of a ~900 KB document completes and is charged exactly its
/// price over what `json.loads("[]")` costs: `len/16`, 8 per nested value
/// and, for each int beyond 64 bits, `digits/2 + digits²/4096` for its
/// quadratic decimal conversion (docs/METERING.md, the `json` rows); so is
/// `json.dumps` of 880 KB of big ints. Before #29 the hand-written decoder
/// re-validated the rest of the text for every string character and looked
/// each object key up in a list of the earlier ones: 4.6–13.7 s for these
/// documents, while long ints ran at 151 ns per cycle and big ints written at
/// 784. Timed by `cargo test --release -p timerhost-vm --test bench
/// json_loads -- --ignored --nocapture` (docs/PERFORMANCE.md).
#[test]
fn h54_json_of_900_kb_is_charged_by_its_work_and_completes() {
    let run = |shape: u64, parse: u64| {
        let outcome = run_hostile(
            common::JSON_DOCUMENTS,
            &[Value::int(shape), Value::int(parse)],
        );
        let Ok(Value::Int(length)) = &outcome.result else {
            panic!("shape {shape}: {:?}", outcome.result);
        };
        (u64::try_from(length).unwrap(), outcome.cycles_used)
    };
    // Cycles of the `json` call, the lengths before and after.
    let json_cycles = |shape: u64| {
        let (before, without) = run(shape, 0);
        let (after, with) = run(shape, 1);
        (before, after, with - without)
    };
    let decimal = |digits: u64| digits / 2 + digits * digits / 4096;
    let (_, _, empty) = json_cycles(0);
    for (shape, parsed, nested, ints) in [
        (1, 900_000, 0, 0),
        (2, 180_000, 180_000, 0),
        (3, 81_800, 2 * 81_800, 0),
        (4, 209, 209, 209 * decimal(4299)),
    ] {
        let (text_len, parsed_len, cycles) = json_cycles(shape);
        assert!((898_000..=900_002).contains(&text_len), "{text_len}");
        assert_eq!(parsed_len, parsed, "shape {shape}");
        assert_eq!(
            cycles - empty,
            text_len / 16 + 8 * nested + ints,
            "shape {shape}: {text_len} bytes, {nested} nested values"
        );
    }
    let (items, text_len, cycles) = json_cycles(5);
    assert_eq!((items, text_len), (45, 45 * 19_567 + 46));
    assert_eq!(
        cycles - empty,
        text_len / 16 + 8 * 45 + 45 * decimal(19_567)
    );
}

/// Recursion to CPython's default depth (1,000 frames), through natives too,
/// on a thread with the stack executions get (`EXECUTION_THREAD_STACK_BYTES`);
/// one frame more is a catchable `RecursionError`; on a thread far too small
/// for it, RustPython's native-stack guard raises `RecursionError` instead
/// of crashing the node (#30).
#[test]
fn h40_recursion_to_the_limit() {
    let plain = "class Hostile:\n    def f(self, n):\n        return 0 if n == 0 else 1 + self.f(n - 1)\n    def run(self, n):\n        try:\n            return self.f(n)\n        except RecursionError:\n            return -1\n";
    let programs: &[(&str, i64)] = &[
        (plain, 990),
        ("class K:\n    def __init__(self, n):\n        self.n = n\n    def __lt__(self, o):\n        if self.n > 0:\n            sorted([K(self.n - 1), K(self.n - 1)])\n        return False\nclass Hostile:\n    def run(self, n):\n        return len(sorted([K(n), K(n)]))\n", 320),
        ("class R:\n    def __init__(self, n):\n        self.n = n\n    def __repr__(self):\n        return repr(R(self.n - 1)) if self.n > 0 else 'x'\nclass Hostile:\n    def run(self, n):\n        return len(repr(R(n)))\n", 490),
        ("def g(n):\n    if n > 0:\n        yield from g(n - 1)\n    yield n\nclass Hostile:\n    def run(self, n):\n        return sum(g(n))\n", 490),
    ];
    let on_thread = |stack: usize, source: &'static str, depth: i64| {
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || run_hostile(source, &[Value::int(depth)]))
            .unwrap()
            .join()
            .expect("the thread survives")
    };
    let stack = timerhost_vm::runtime::EXECUTION_THREAD_STACK_BYTES;
    for (source, depth) in programs {
        let outcome = on_thread(stack, source, *depth);
        assert!(outcome.is_success(), "{source}: {:?}", outcome.result);
    }
    assert_eq!(on_thread(stack, plain, 990).result, Ok(Value::int(990)));
    assert_eq!(on_thread(stack, plain, 1_000).result, Ok(Value::int(-1)));
    // Nesting built by a loop, then walked natively by repr.
    let nested = "class Hostile:\n    def run(self, n):\n        x = []\n        for i in range(n):\n            x = [x]\n        try:\n            return len(repr(x))\n        except RecursionError:\n            return -1\n";
    let outcome = on_thread(stack, nested, 50_000);
    assert!(outcome.is_success(), "{:?}", outcome.result);
    // A thread far too small: the result or RecursionError, never a crash.
    for (source, depth) in [(plain, 990), (nested, 50_000)] {
        let outcome = on_thread(256 << 10, source, depth);
        // Success is the result or a caught RecursionError.
        assert!(
            outcome.is_success(),
            "{source} {depth}: {:?}",
            outcome.result
        );
    }
}

/// `x - 0` is a number whenever it is anything, but not a small one, so
/// `x += x - 0` (which doubles `x`) is not exempt from the operator guard
/// the way `x += 1` is: the guard charges each addition by the operands'
/// size. When such numeric expressions counted as exempt, 10,000,000
/// cycles bought 28 s of big-int additions (release build).
#[test]
fn h55_doubling_through_a_numeric_expression_is_charged_by_size() {
    for body in [
        "        x = 3\n        while True:\n            x += x - 0\n",
        "        x = 3\n        while True:\n            x = x + (x - 0)\n",
        "        x = 3\n        while True:\n            x = (x | 0) + (x ^ 0)\n",
        "        x = 3\n        while True:\n            x += (x >> 0) - 0\n",
    ] {
        expect_out_of_cycles_quickly(body);
    }
}

/// A loop that must run out of its 10,000,000 cycles in well under the
/// generic [`TIME_BOUND`]: each iteration's work is charged, none done for
/// free inside Rust.
fn expect_out_of_cycles_quickly(body: &str) {
    let started = Instant::now();
    expect_runtime(ErrorKind::OutOfCycles, body);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{body}: {:?}",
        started.elapsed()
    );
}

/// `y % 7` is small only when `y` is known to be an int: a class of the
/// actor's may define `__mod__` to return anything, here a large set, which
/// an unguarded `s |= o % 7` would walk inside Rust on every iteration for
/// the price of the loop's statements.
#[test]
fn h56_an_operator_method_cannot_feed_an_unguarded_in_place_operation() {
    expect_out_of_cycles_quickly("        big = set(range(200000))\n        class O:\n            def __mod__(self, m):\n                return big\n        o = O()\n        s = set()\n        while True:\n            s |= o % 7\n");
}

/// A source nested as deep as the compiler allows could never compile, but
/// every pass before the compiler walked it, recursively: `t += x + 1 + …`
/// of 60,000 terms (120 KB) kept the instrumenter busy for 55–81 s, and
/// overflowed a 64 MiB stack in an earlier version. The validator refuses
/// it first, naming the limit, in milliseconds and on a small stack.
#[test]
fn h57_deeply_nested_source_is_refused_before_any_pass_walks_it() {
    let vm = Vm::new().unwrap();
    let chain = vec!["1"; 60_000].join("+");
    let source = format!(
        "class Hostile:\n    def run(self, x):\n        t = 0\n        t += x + {chain}\n        return t\n"
    );
    let started = Instant::now();
    let rejection = vm.validate_and_compile(&source).expect_err("too deep");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(rejection.construct, "nesting");
    assert_eq!(rejection.line, 4);
    assert!(
        rejection.reason.contains("at most 999 deep"),
        "{}",
        rejection.reason
    );
    // A chain just under the limit still deploys.
    let chain = vec!["1"; 900].join("+");
    let source = format!(
        "class Hostile:\n    def run(self, x):\n        t = 0\n        t += x + {chain}\n        return t\n"
    );
    vm.validate_and_compile(&source).expect("900 terms compile");
}

/// The locals the instrumenter proves small (`instrument::bounded`) run
/// their operators unguarded; none of these may grow past that proof: a
/// step by another growing local (`a += b; b += a` doubles both), a copy
/// fed back (`y = x; x += y`), a literal too long to be small (a
/// 19,000-digit literal (63,000 bits) as a sum's operand or a modulus: each operation
/// would walk ~1,000 limbs for the price of a statement).
#[test]
fn h58_small_locals_cannot_grow_or_borrow_a_long_literal() {
    let long = "7".repeat(19_000);
    for body in [
        "        a = 1\n        b = 1\n        while True:\n            a += b\n            b += a\n".to_string(),
        "        x = 3\n        while True:\n            y = x\n            x += y\n".to_string(),
        "        x = 3\n        while True:\n            x = x + x\n".to_string(),
        format!("        t = 0\n        while True:\n            t = {long} + 1\n"),
        format!("        x = 3\n        while True:\n            x = (x * 3 + {long}) % {long}\n"),
        format!("        x = 0\n        while True:\n            x += {long}\n"),
    ] {
        expect_out_of_cycles_quickly(&body);
    }
}

/// Membership is charged in the containers' own slots (`contains_meter`),
/// with no guard in the code: every kind of container an `in` can walk —
/// scanning built-ins, a big dict's values, native lazy iterators (one of
/// them endless), generators, a class whose `__iter__` hands out a native
/// iterator, a subclass of `list` — must charge its walk, so each of these
/// loops runs out of its 10,000,000 cycles within seconds.
#[test]
fn h59_membership_charges_every_walk() {
    let setup = "        big = list(range(100000))\n        text = 'ab' * 100000\n        data = b'ab' * 100000\n        table = {i: i for i in range(100000)}\n        endless = range(10 ** 15)\n        class Bag:\n            def __iter__(self):\n                return map(abs, endless)\n        class Stack(list):\n            pass\n        stack = Stack(big)\n";
    for test in [
        "-1 in tuple(big)",
        "'abc' in text",
        "b'abc' in data",
        "99 in bytearray(data)",
        "-1 in table.values()",
        "-1 in map(abs, endless)",
        "-1 in zip(endless, endless)",
        "-1 in enumerate(endless)",
        "-1 in filter(None, endless)",
        "-1 in iter(big)",
        "-1 in reversed(big)",
        "-1 in (x for x in endless)",
        "-1 in Bag()",
        "-1 in stack",
        "-1 not in big",
    ] {
        expect_out_of_cycles_quickly(&format!(
            "{setup}        while True:\n            t = {test}\n"
        ));
    }
}
