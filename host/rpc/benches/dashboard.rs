//! The dashboard's views with 1,000,000 pending timers (#33): each view's
//! JSON-RPC calls, timed together, must answer in under 200 ms.
//!
//! ```text
//! cargo bench -p timerhost-rpc --bench dashboard --ignore-rust-version
//! ```
//!
//! One mock-runtime chain on sled in a temporary home, as a node keeps it
//! (the timer machinery, not Python, is what grows with the pending count;
//! the restart benchmark's home holds the same 1,000,000 timers scheduled
//! through Python), gets 1,000,000 timers
//! of one actor at a far height (ten blocks of 100,000), a few hundred
//! timers of another due in the next blocks and seconds, and a state watch;
//! the ones due soon fire. Then each view's calls — exactly those
//! `host/rpc/dashboard/app.js` makes — are timed five times and the median
//! printed, with the same on a chain of 10,000 for scale. The timer page is
//! timed for a pending timer and for a fired one (found through the
//! per-block fire lists, `timerhost_state::history`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonrpsee::core::params::ArrayParams;
use jsonrpsee::RpcModule;
use parking_lot::Mutex;
use serde_json::{json, Value as Json};
use timerhost_chain::testing::{bench_builders, bench_chain, MockRuntime};
use timerhost_chain::Chain;
use timerhost_rpc::{methods, Mempool, MempoolConfig, NodeControl, RpcContext};
use timerhost_state::SledBackend;
use timerhost_types::{Address, Value};

const TARGET: Duration = Duration::from_millis(200);

struct Idle;

impl NodeControl for Idle {
    fn mine(&self, _: u64) -> timerhost_rpc::Result<Vec<u64>> {
        Ok(Vec::new())
    }
    fn set_next_timestamp(&self, _: u64) -> timerhost_rpc::Result<()> {
        Ok(())
    }
    fn snapshot(&self) -> timerhost_rpc::Result<timerhost_rpc::NodeSnapshot> {
        Err(timerhost_rpc::RpcError::Producer("not here".into()))
    }
    fn revert(&self, _: &timerhost_rpc::NodeSnapshot) -> timerhost_rpc::Result<()> {
        Ok(())
    }
    fn describe(&self) -> Json {
        json!({ "mode": "manual" })
    }
}

/// What a view is timed on: the chain and its home, the far actor, one of its
/// pending timers and one timer that fired.
struct Built {
    chain: Arc<Chain<SledBackend>>,
    _home: tempfile::TempDir,
    actor: Address,
    pending_timer: String,
    fired_timer: String,
}

/// A chain with `pending` far timers of one actor and a few due soon.
fn chain_with(pending: u64) -> Built {
    let home = tempfile::tempdir().unwrap();
    let chain = bench_chain(
        SledBackend::open(home.path()).unwrap(),
        Arc::new(MockRuntime),
    );
    let mut b = bench_builders();
    let mut height = 0u64;
    let mut produce = |txs: Vec<timerhost_types::SignedTransaction>| {
        height += 1;
        let p = chain
            .produce_block(
                &txs,
                1_767_225_600_000 + height * 1_000,
                Address([0xee; 20]),
            )
            .unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        p.executed.receipts
    };
    let far = produce(vec![b[0].deploy("mock", vec![], 10u128.pow(23))])[0]
        .created_actor
        .unwrap();
    let near = produce(vec![b[1].deploy("mock", vec![], 10u128.pow(23))])[0]
        .created_actor
        .unwrap();
    let mut left = pending;
    while left > 0 {
        let n = left.min(100_000);
        produce(vec![b[0].call(
            far,
            "schedule_many",
            vec![
                Value::int(n),
                Value::int(1_000_000u64),
                Value::int(1_000u64),
            ],
            0,
        )]);
        left -= n;
    }
    let now = chain.head().unwrap();
    produce(vec![
        b[1].call(
            near,
            "schedule_many",
            vec![
                Value::int(200u64),
                Value::int(now.height + 10),
                Value::int(1_000u64),
            ],
            0,
        ),
        b[1].call(
            near,
            "schedule_many_at",
            vec![
                Value::int(200u64),
                Value::int(now.timestamp_ms + 20_000),
                Value::int(1_000u64),
            ],
            0,
        ),
        b[2].call(
            near,
            "watch",
            vec![Value::List(vec![Value::str("k")]), Value::int(1_000u64)],
            0,
        ),
    ]);
    // Past the near timers' due height: they fire.
    for _ in 0..12 {
        produce(vec![]);
    }
    let state = chain.store().state();
    let one = timerhost_timers::store::by_actor(&state, &far, 1).unwrap()[0].timer_id;
    let fired = chain
        .store()
        .events(&timerhost_state::EventFilter {
            name: Some("TimerFired".into()),
            limit: 1,
            ..Default::default()
        })
        .unwrap();
    let Some(Value::Bytes(fired)) = fired[0].event.data.get("timer_id").cloned() else {
        panic!("a fire names its timer");
    };
    Built {
        chain: Arc::new(chain),
        _home: home,
        actor: far,
        pending_timer: one.to_hex(),
        fired_timer: format!("0x{}", hex::encode(fired)),
    }
}

async fn call(m: &RpcModule<RpcContext<SledBackend>>, method: &str, params: Json) {
    let mut p = ArrayParams::new();
    for item in params.as_array().unwrap() {
        p.insert(item).unwrap();
    }
    let _: Json = m
        .call(method, p)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"));
}

/// The calls of each view, as the page makes them.
fn views(
    actor: &Address,
    timer: &str,
    fired: &str,
) -> Vec<(&'static str, Vec<(&'static str, Json)>)> {
    let a = actor.to_hex();
    vec![
        (
            "now",
            vec![
                ("th_status", json!([])),
                ("th_getBlockStats", json!([{ "count": 60 }])),
                ("th_getAhead", json!([{ "blocks": 30, "seconds": 60 }])),
                ("th_getTimerConfig", json!([])),
                ("th_getBasefeeConfig", json!([])),
            ],
        ),
        ("timers", vec![("th_getTimersPage", json!([{}]))]),
        (
            "timers filtered (kind=time: all 1M are height timers)",
            vec![("th_getTimersPage", json!([{ "kind": "time" }]))],
        ),
        (
            "timers of the actor with 1M",
            vec![("th_getTimersPage", json!([{ "actor": a }]))],
        ),
        ("timer page", vec![("th_getTimerLife", json!([timer]))]),
        (
            "timer page of a fired timer",
            vec![("th_getTimerLife", json!([fired]))],
        ),
        ("watches", vec![("th_getWatches", json!([{}]))]),
        ("cron jobs", vec![("th_getCronJobs", json!([{}]))]),
        (
            "actor with 1M timers",
            vec![
                ("th_getAccount", json!([a])),
                ("th_getStorageKeys", json!([a, "", 50])),
                (
                    "th_getEvents",
                    json!([{ "actor": a, "from": 0, "limit": 50 }]),
                ),
                ("th_getTimersPage", json!([{ "actor": a }])),
            ],
        ),
    ]
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!("timerhost dashboard views (median of 5, each view's calls together)\n");
    println!("| view | 10,000 pending | 1,000,000 pending | under 200 ms |");
    println!("|---|---|---|---|");
    let mut results = Vec::new();
    for pending in [10_000u64, 1_000_000] {
        let started = Instant::now();
        let built = chain_with(pending);
        eprintln!(
            "chain with {pending} pending built in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let pool = Arc::new(Mutex::new(Mempool::new(MempoolConfig::default())));
        let m = methods(RpcContext::new(built.chain.clone(), pool, Arc::new(Idle)));
        let mut times = Vec::new();
        for (name, calls) in views(&built.actor, &built.pending_timer, &built.fired_timer) {
            let mut runs = Vec::new();
            for _ in 0..5 {
                let t = Instant::now();
                runtime.block_on(async {
                    for (method, params) in &calls {
                        call(&m, method, params.clone()).await;
                    }
                });
                runs.push(t.elapsed());
            }
            times.push((name, median(runs)));
        }
        results.push(times);
    }
    let mut all_met = true;
    for (small, large) in results[0].iter().zip(&results[1]) {
        let met = large.1 < TARGET;
        all_met &= met;
        println!(
            "| {} | {:.1} ms | {:.1} ms | {} |",
            small.0,
            small.1.as_secs_f64() * 1e3,
            large.1.as_secs_f64() * 1e3,
            if met { "yes" } else { "NO" }
        );
    }
    println!("\nevery view under 200 ms with 1,000,000 pending: {all_met}");
}
