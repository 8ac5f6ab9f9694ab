//! Ordinary programs as metered actor calls, for before/after timing of
//! the VM (#29: ordinary code must not get slower). Wall time per call,
//! best of 7, and the cycles charged.
//!
//! `cargo test --release -p timerhost-vm --test realprog -- --ignored --nocapture`

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

use std::time::{Duration, Instant};

use timerhost_types::{Address, Invocation, Value};
use timerhost_vm::testing::MockHost;
use timerhost_vm::{ExecLimits, Vm};

const PROGRAMS: &[(&str, &str)] = &[
    (
        "scheduler",
        r#"
class Task:
    def __init__(self, name, priority, cost):
        self.name = name
        self.priority = priority
        self.cost = cost
        self.done = 0
    def step(self, budget):
        used = min(budget, self.cost - self.done)
        self.done += used
        return used
    def finished(self):
        return self.done >= self.cost
class Scheduler:
    def __init__(self):
        self.tasks = []
        self.log = []
    def add(self, task):
        self.tasks.append(task)
        self.tasks.sort(key=lambda t: (-t.priority, t.name))
    def run(self, quantum):
        ticks = 0
        while self.tasks:
            task = self.tasks.pop(0)
            ticks += task.step(quantum)
            if task.finished():
                self.log.append(task.name)
            else:
                self.tasks.append(task)
        return ticks
@actor
class Actor:
    def run(self, n):
        s = Scheduler()
        for i in range(n):
            s.add(Task("t" + str(i), i % 5, 10 + i % 7))
        return s.run(3) + len(s.log)
"#,
    ),
    (
        "records",
        r#"
from dataclasses import dataclass
from enum import Enum
import bisect
class Kind(Enum):
    BUY = 1
    SELL = 2
@dataclass
class Order:
    id: int
    kind: Kind
    price: int
    qty: int
@actor
class Actor:
    def run(self, n):
        orders = [Order(i, Kind.BUY if i % 3 else Kind.SELL, (i * 7919) % 1000, 1 + i % 9) for i in range(n)]
        buys = sorted((o for o in orders if o.kind == Kind.BUY), key=lambda o: (o.price, o.id))
        prices = [o.price for o in buys]
        total = 0
        for o in orders:
            if o.kind == Kind.SELL:
                total += bisect.bisect_left(prices, o.price) * o.qty
        return total
"#,
    ),
    (
        "queens",
        r#"
def solve(n, row, cols, d1, d2):
    if row == n:
        yield 1
        return
    for c in range(n):
        if c in cols or (row - c) in d1 or (row + c) in d2:
            continue
        cols.add(c)
        d1.add(row - c)
        d2.add(row + c)
        yield from solve(n, row + 1, cols, d1, d2)
        cols.remove(c)
        d1.remove(row - c)
        d2.remove(row + c)
@actor
class Actor:
    def run(self, n):
        return sum(solve(n, 0, set(), set(), set()))
"#,
    ),
    (
        "ledger",
        r#"
class Ledger:
    def __init__(self):
        self.balances = {}
        self.history = []
    def mint(self, who, amount):
        self.balances[who] = self.balances.get(who, 0) + amount
    def transfer(self, src, dst, amount):
        if self.balances.get(src, 0) < amount:
            raise ValueError("insufficient funds: " + src)
        self.balances[src] -= amount
        self.balances[dst] = self.balances.get(dst, 0) + amount
        self.history.append((src, dst, amount))
@actor
class Actor:
    def run(self, n):
        led = Ledger()
        names = ["acct" + str(i) for i in range(50)]
        for name in names:
            led.mint(name, 1000)
        failed = 0
        for i in range(n):
            try:
                led.transfer(names[i % 50], names[(i * 7) % 50], (i * 13) % 300)
            except ValueError:
                failed += 1
        return failed + len(led.history) + sum(led.balances.values())
"#,
    ),
    (
        "shuffle",
        r#"
@actor
class Actor:
    def run(self, n):
        xs = list(range(n))
        seed = 12345
        for i in range(n - 1, 0, -1):
            seed = (seed * 1103515245 + 12345) % 2147483648
            j = seed % (i + 1)
            xs[i], xs[j] = xs[j], xs[i]
        chunks = [xs[k:k + 10] for k in range(0, n, 10)]
        return sum(max(c) - min(c) for c in chunks) + len(" ".join(str(x) for x in xs[:100]))
"#,
    ),
];

fn limits() -> ExecLimits {
    ExecLimits::new(2_000_000_000, 1_000_000)
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn real_programs() {
    let sizes = [
        ("scheduler", 300),
        ("records", 2000),
        ("queens", 7),
        ("ledger", 5000),
        ("shuffle", 20000),
    ];
    for (name, source) in PROGRAMS {
        let n = sizes.iter().find(|(s, _)| s == name).unwrap().1;
        let vm = Vm::new().unwrap();
        let mut host = MockHost::new();
        let actor = Address([7; 20]);
        host.install_actor(actor, source);
        let deployed = vm.deploy(&mut host, &actor, source, &[], limits());
        assert!(deployed.is_success(), "{name}: {:?}", deployed.result);
        let mut best = Duration::MAX;
        let mut cycles = 0;
        for _ in 0..7 {
            let started = Instant::now();
            let outcome = vm.call(
                &mut host,
                &actor,
                "run",
                &[Value::int(n)],
                limits(),
                Invocation::Transaction,
            );
            let elapsed = started.elapsed();
            assert!(outcome.is_success(), "{name}: {:?}", outcome.result);
            best = best.min(elapsed);
            cycles = outcome.cycles_used;
        }
        println!(
            "REAL {name:<10} {:>8.2} ms  {cycles:>9} cycles  {:.1} ns/cycle",
            best.as_secs_f64() * 1e3,
            best.as_nanos() as f64 / cycles as f64
        );
    }
}
