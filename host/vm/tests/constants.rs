//! Values made at load (module- and class-level lists, dicts, sets,
//! instances, decorator caches): every invocation sees them as the load left
//! them, whatever an earlier or an outer invocation wrote (issue #30).

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

mod common;

use common::*;
use timerhost_types::Value;

fn list(items: &[i64]) -> Value {
    Value::List(items.iter().map(|i| Value::Int((*i).into())).collect())
}

/// Calls `handler` twice on one warm VM and once on a fresh VM (a cold
/// node): all three must agree.
fn same_warm_and_cold(source: &str, handler: &str) -> Value {
    let (vm, mut host, actor) = deployed(source, &[]);
    let first = ok(&call(&vm, &mut host, &actor, handler, &[]));
    let second = ok(&call(&vm, &mut host, &actor, handler, &[]));
    let cold = std::thread::spawn({
        let source = source.to_owned();
        let handler = handler.to_owned();
        move || {
            let (vm, mut host, actor) = deployed(&source, &[]);
            ok(&call(&vm, &mut host, &actor, &handler, &[]))
        }
    })
    .join()
    .expect("cold node");
    assert_eq!(first, second, "a second call saw the first call's writes");
    assert_eq!(first, cold, "a warm node and a cold node disagree");
    first
}

#[test]
fn c01_module_list_appended_in_a_call_is_reset() {
    let source = r#"
WORDS = ["a", "b"]
@actor
class A:
    def go(self):
        WORDS.append("c")
        WORDS[0] = "z"
        return len(WORDS)
"#;
    assert_eq!(same_warm_and_cold(source, "go"), Value::Int(3.into()));
}

#[test]
fn c02_every_write_path_is_undone() {
    let source = r#"
XS = [3, 1, 2]
D = {"a": 1}
S = {1, 2}
B = bytearray(b"ab")
class Config:
    def __init__(self):
        self.limit = 5
        self.items = [1]
CONFIG = Config()
@actor
class A:
    def go(self):
        global XS, D, S, B
        before = [list(XS), dict(D), sorted(S), bytes(B), CONFIG.limit, list(CONFIG.items)]
        XS.sort(); XS.reverse(); XS.insert(0, 9); XS.extend([7]); XS += [8]; XS *= 2
        del XS[0]; XS[1:3] = [5]; XS.pop(); XS.remove(5)
        D["b"] = 2; D.update(c=3); D.setdefault("d", 4); D |= {"e": 5}; del D["a"]; D.pop("b")
        S.add(3); S |= {4}; S -= {1}; S.discard(2); S ^= {9}; S &= {3, 4, 9, 10}
        B.extend(b"cd"); B[0] = 120; B += b"!"; del B[1]
        CONFIG.limit += 1; CONFIG.items.append(2); CONFIG.extra = True; CONFIG.items[0] += 5
        for XS[0] in range(2):
            pass
        return before
"#;
    let expected = Value::List(vec![
        list(&[3, 1, 2]),
        Value::Dict(vec![(Value::Str("a".into()), Value::Int(1.into()))]),
        list(&[1, 2]),
        Value::Bytes(b"ab".to_vec()),
        Value::Int(5.into()),
        list(&[1]),
    ]);
    assert_eq!(same_warm_and_cold(source, "go"), expected);
}

#[test]
fn c03_returning_a_written_constant_returns_what_the_call_made() {
    let source = r#"
SEEN = []
@actor
class A:
    def go(self):
        SEEN.append(1)
        return SEEN
"#;
    assert_eq!(same_warm_and_cold(source, "go"), list(&[1]));
}

#[test]
fn c04_memoising_decorator_cache_starts_empty_every_call() {
    let source = r#"
def memo(f):
    cache = {}
    def wrapper(n):
        if n not in cache:
            cache[n] = f(n)
        return cache[n]
    wrapper.cache = cache
    return wrapper

@memo
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

@actor
class A:
    def go(self):
        first = len(fib.cache)
        return [first, fib(60), len(fib.cache)]
"#;
    assert_eq!(
        same_warm_and_cold(source, "go"),
        list(&[0, 1548008755920, 61])
    );
}

#[test]
fn c05_registry_filled_by_a_class_decorator_at_load() {
    let source = r#"
HANDLERS = {}
def register(cls):
    HANDLERS[cls.__name__.lower()] = cls
    return cls

@register
class Deposit:
    def apply(self, x): return x + 1

@register
class Withdraw:
    def apply(self, x): return x - 1

@actor
class A:
    def go(self):
        HANDLERS["bogus"] = None
        return sorted(k for k in HANDLERS if HANDLERS[k] is not None) + [HANDLERS["deposit"]().apply(1)]
"#;
    assert_eq!(
        same_warm_and_cold(source, "go"),
        Value::List(vec![
            Value::Str("deposit".into()),
            Value::Str("withdraw".into()),
            Value::Int(2.into())
        ])
    );
}

#[test]
fn c06_a_nested_call_into_the_same_code_sees_load_time_values() {
    // Two actors with the same code: the outer one writes the constant, then
    // calls the inner one, which must see the load-time value, and the
    // outer one must get its own write back afterwards.
    let source = r#"
import pvm_host
LOG = []
@actor
class A:
    def outer(self, other):
        LOG.append("outer")
        inner = pvm_host.call(other, "inner")
        return [inner, list(LOG)]
    def inner(self):
        seen = list(LOG)
        LOG.append("inner")
        return seen
"#;
    let (vm, mut host, first) = deployed(source, &[]);
    let second = addr(2);
    deploy_at(&vm, &mut host, second, source, &[], limits());
    let outcome = call(
        &vm,
        &mut host,
        &first,
        "outer",
        &[Value::Str(second.to_hex())],
    );
    assert_eq!(
        ok(&outcome),
        Value::List(vec![
            Value::List(vec![]),
            Value::List(vec![Value::Str("outer".into())])
        ])
    );
    // And nothing stays behind for the next call.
    let again = call(
        &vm,
        &mut host,
        &first,
        "outer",
        &[Value::Str(second.to_hex())],
    );
    assert_eq!(ok(&again), ok(&outcome));
}

#[test]
fn c07_a_failing_call_is_reset_too() {
    let source = r#"
STACK = [1]
@actor
class A:
    def boom(self):
        STACK.append(2)
        raise ValueError("no")
    def size(self):
        return len(STACK)
"#;
    let (vm, mut host, actor) = deployed(source, &[]);
    assert!(call(&vm, &mut host, &actor, "boom", &[]).result.is_err());
    assert_eq!(
        ok(&call(&vm, &mut host, &actor, "size", &[])),
        Value::Int(1.into())
    );
}

#[test]
fn c08_the_first_write_is_charged_by_the_size_of_what_is_restored() {
    let source = r#"
BIG = list(range(20000))
SMALL = [1]
@actor
class A:
    def big(self):
        BIG.append(1)
        BIG.append(2)
    def small(self):
        SMALL.append(1)
        SMALL.append(2)
"#;
    let (vm, mut host, actor) = deployed(source, &[]);
    let big = call(&vm, &mut host, &actor, "big", &[]).cycles_used;
    let small = call(&vm, &mut host, &actor, "small", &[]).cycles_used;
    assert!(
        big >= small + 19_000,
        "restoring 20,000 items is charged: big {big}, small {small}"
    );
}

#[test]
fn c09_a_hostile_caller_cannot_leave_a_constant_changed() {
    // The worst caller: a huge write to a constant, then out of cycles.
    let source = r#"
TABLE = {"fee": 10}
@actor
class A:
    def poison(self):
        TABLE["fee"] = 0
        for i in range(10 ** 9):
            TABLE[i] = i
    def fee(self):
        return TABLE["fee"]
"#;
    let (vm, mut host, actor) = deployed(source, &[]);
    let poisoned = call(&vm, &mut host, &actor, "poison", &[]);
    assert!(poisoned.result.is_err());
    assert_eq!(
        ok(&call(&vm, &mut host, &actor, "fee", &[])),
        Value::Int(10.into())
    );
}

#[test]
fn c10_dict_keys_that_compare_in_python_are_refused_at_deploy() {
    let source = r#"
class Key:
    def __init__(self, k): self.k = k
    def __eq__(self, other): return True
    def __hash__(self): return 1
TABLE = {Key(1): "a", Key(2): "b"}
@actor
class A:
    def go(self):
        return 1
"#;
    let vm = timerhost_vm::Vm::new().expect("allocator");
    let mut host = timerhost_vm::testing::MockHost::new();
    let actor = addr(1);
    host.install_actor(actor, source);
    let outcome = vm.deploy(&mut host, &actor, source, &[], limits());
    let error = outcome.result.expect_err("refused");
    assert!(
        error.message.contains("defines __eq__ in Python"),
        "{}",
        error.message
    );
}

#[test]
fn c11_identity_objects_and_enum_members_are_fine_keys() {
    let source = r#"
from enum import Enum
class Color(Enum):
    RED = 1
    BLUE = 2
PRICE = {Color.RED: 5, Color.BLUE: 7}
@actor
class A:
    def go(self):
        PRICE[Color.RED] += 1
        return [PRICE[Color.RED], PRICE[Color.BLUE]]
"#;
    assert_eq!(same_warm_and_cold(source, "go"), list(&[6, 7]));
}

#[test]
fn c12_a_module_without_lists_or_dicts_is_watched_through_methods_and_slots() {
    // No list, dict or bytearray at load: the module runs without the
    // subscript-store guards; its instances and sets are still reset.
    let source = r#"
class Config:
    def __init__(self):
        self.limit = 5
CONFIG = Config()
TAGS = {"a"}
@actor
class A:
    def go(self):
        global TAGS
        before = [CONFIG.limit, sorted(TAGS)]
        CONFIG.limit += 1
        setattr(CONFIG, "extra", 1)
        TAGS.add("b")
        TAGS |= {"c"}
        xs = [0, 0]
        xs[0] = 1
        return before
"#;
    assert_eq!(
        same_warm_and_cold(source, "go"),
        Value::List(vec![
            Value::Int(5.into()),
            Value::List(vec![Value::Str("a".into())])
        ])
    );
}

#[test]
fn c13_starred_unpacking_of_an_infinite_iterator_runs_out_of_cycles() {
    let source = r#"
import itertools
@actor
class A:
    def loop(self):
        for first, *rest in [itertools.count()]:
            return first
    def comprehension(self):
        return [a for a, *b in [itertools.count()]]
    def nested(self):
        (a, *b), c = itertools.count(), 1
        return a
"#;
    let (vm, mut host, actor) = deployed(source, &[]);
    for handler in ["loop", "comprehension", "nested"] {
        let outcome = call(&vm, &mut host, &actor, handler, &[]);
        assert_eq!(
            outcome.error_kind(),
            Some(timerhost_types::ErrorKind::OutOfCycles),
            "{handler}: {:?}",
            outcome.result
        );
    }
}

#[test]
fn c14_objects_hashed_at_load_are_found_in_every_call() {
    let source = r#"
class Node:
    def __init__(self, name):
        self.name = name
A_NODE = Node("a")
B_NODE = Node("b")
SEEN = {A_NODE}
INDEX = {A_NODE: 1, B_NODE: 2}
@actor
class A:
    def go(self):
        fresh = Node("c")
        SEEN.add(fresh)
        INDEX[fresh] = 3
        return [A_NODE in SEEN, B_NODE in SEEN, INDEX[B_NODE], len(SEEN), [n.name for n in INDEX]]
"#;
    assert_eq!(
        same_warm_and_cold(source, "go"),
        Value::List(vec![
            Value::Bool(true),
            Value::Bool(false),
            Value::Int(2.into()),
            Value::Int(2.into()),
            Value::List(vec![
                Value::Str("a".into()),
                Value::Str("b".into()),
                Value::Str("c".into())
            ]),
        ])
    );
}
