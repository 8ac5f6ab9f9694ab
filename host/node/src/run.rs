//! Running a node: the RPC server on a tokio runtime, the block producer on
//! the calling thread (the only writer of the chain), optional metrics, and
//! signal handling (SIGINT/SIGTERM stop after the block in progress).

use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::json;
use timerhost_chain::Chain;
use timerhost_rpc::{Mempool, MempoolConfig, RpcContext};
use timerhost_state::SledBackend;
use timerhost_types::{Address, SignedTransaction};

use crate::block_report::BlockReport;
use crate::error::{NodeError, Result};
use crate::metrics::{self, Metrics};
use crate::producer::{Producer, ProducerEvent, Schedule};

/// How to run a node.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// JSON-RPC listen address.
    pub rpc: SocketAddr,
    /// Block schedule.
    pub schedule: Schedule,
    /// Prometheus listen address.
    pub metrics: Option<SocketAddr>,
    /// Tip recipient.
    pub proposer: Address,
    /// Mempool bounds.
    pub mempool: MempoolConfig,
    /// Print JSON lines instead of human lines.
    pub json: bool,
    /// Transactions to put in the mempool before the first block (dev examples).
    pub prelude: Vec<SignedTransaction>,
    /// Blocks of history kept (`[storage] keep_blocks`; 0 = all).
    pub keep_blocks: u64,
    /// Blocks whose state stays provable (`[storage] proof_blocks`).
    pub proof_blocks: u64,
    /// The full-disk guard of the data directory, if any.
    pub disk: Option<crate::disk::DiskGuard>,
}

/// What a running node serves besides its chain: the async runtime, the
/// JSON-RPC server on it and the metrics listener (both node kinds).
pub(crate) struct Services {
    /// The runtime the RPC server (and a network node's engine) runs on.
    pub runtime: tokio::runtime::Runtime,
    /// The JSON-RPC address bound.
    pub rpc: SocketAddr,
    /// The metrics address bound, if metrics are on.
    pub metrics: Option<SocketAddr>,
    server: timerhost_rpc::ServerHandle,
}

impl Services {
    /// Starts a runtime of `threads` workers named `name`, the RPC server on
    /// `rpc` and, if asked, metrics on `metrics_addr`. `below_producer`: the
    /// runtime's threads yield to a producer thread of the node's own
    /// (`crate::priority`).
    pub(crate) fn start(
        threads: usize,
        name: &str,
        below_producer: bool,
        rpc: SocketAddr,
        ctx: RpcContext<SledBackend>,
        metrics_addr: Option<SocketAddr>,
        metrics: Arc<Metrics>,
    ) -> Result<Services> {
        // Blocks (and RPC dry runs) execute on these threads: they get the
        // native stack the VM's recursion limit needs.
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        if below_producer {
            builder.on_thread_start(crate::priority::lower_this_thread);
        }
        let runtime = builder
            .worker_threads(threads)
            .thread_stack_size(timerhost_vm::runtime::EXECUTION_THREAD_STACK_BYTES)
            .enable_all()
            .thread_name(name)
            .build()
            .map_err(|source| NodeError::Io {
                action: "starting the runtime for",
                path: rpc.to_string().into(),
                source,
            })?;
        // One descriptor per RPC connection, with room for the store and
        // the peers.
        let wanted = u64::from(timerhost_rpc::server::DEFAULT_MAX_CONNECTIONS) + 1_024;
        let fds = crate::fd_limit::raise(wanted);
        if fds < wanted {
            tracing::warn!(
                "the file-descriptor limit is {fds}: fewer than the {} RPC connections the server accepts can be open at once (raise `ulimit -n`)",
                timerhost_rpc::server::DEFAULT_MAX_CONNECTIONS
            );
        }
        let (bound, server) = runtime
            .block_on(timerhost_rpc::start(rpc, ctx))
            .map_err(|e| NodeError::Rpc(Box::new(e)))?;
        let metrics = match metrics_addr {
            Some(addr) => Some(metrics::serve(addr, metrics)?),
            None => None,
        };
        Ok(Services {
            runtime,
            rpc: bound,
            metrics,
            server,
        })
    }

    /// Prints the start-up lines: `rpc: URL`, `metrics: URL` and `chain ID
    /// at height H <what>` — or, with `--json`, one `started` event carrying
    /// the same and `extra`'s fields.
    pub(crate) fn announce(
        &self,
        as_json: bool,
        chain_id: u64,
        height: u64,
        extra: serde_json::Value,
        what: String,
    ) {
        if as_json {
            let mut event = json!({
                "event": "started",
                "rpc": format!("http://{}", self.rpc),
                "dashboard": format!("http://{}/", self.rpc),
                "metrics": self.metrics.map(|a| format!("http://{a}/metrics")),
                "chain_id": chain_id,
                "height": height,
            });
            if let (Some(e), serde_json::Value::Object(more)) = (event.as_object_mut(), extra) {
                e.extend(more);
            }
            println!("{event}");
        } else {
            println!("rpc: http://{}", self.rpc);
            if let Some(m) = self.metrics {
                println!("metrics: http://{m}/metrics");
            }
            println!("dashboard: http://{}/", self.rpc);
            println!("chain {chain_id} at height {height} {what}");
        }
    }

    /// Stops the RPC server, then the runtime (giving tasks 2 s).
    pub(crate) fn stop(self) {
        let _ = self.server.stop();
        self.runtime.block_on(self.server.stopped());
        self.runtime
            .shutdown_timeout(std::time::Duration::from_secs(2));
    }
}

/// Runs the node until SIGINT/SIGTERM; returns the last committed height.
pub fn run(chain: Chain<SledBackend>, opts: RunOptions) -> Result<u64> {
    let chain = Arc::new(chain);
    let pool = Arc::new(Mutex::new(Mempool::new(opts.mempool)));
    for tx in opts.prelude {
        let gap = opts.mempool.max_nonce_gap;
        let admission = timerhost_rpc::mempool::validate(&chain, &tx, gap)
            .map_err(|e| NodeError::Rpc(Box::new(e)))?;
        pool.lock()
            .insert(tx, admission)
            .map_err(|e| NodeError::Rpc(Box::new(e)))?;
    }
    let metrics = Arc::new(Metrics::default());
    metrics.height.set(chain.head()?.height);
    let as_json = opts.json;
    let log: Box<dyn Fn(ProducerEvent<'_>) + Send> = Box::new(move |event| {
        let s = match event {
            ProducerEvent::Block(s) => s,
            ProducerEvent::Reverted { height, dropped } => {
                if as_json {
                    println!(
                        "{}",
                        json!({ "event": "reverted", "height": height, "mempool_dropped": dropped })
                    );
                } else {
                    println!(
                        "reverted to a dev snapshot: head at height {height}{}",
                        if dropped > 0 {
                            format!(", {dropped} mempool transaction(s) no longer valid dropped")
                        } else {
                            String::new()
                        }
                    );
                }
                return;
            }
        };
        log_block(as_json, s);
    });
    let (producer, handle) = Producer::new(
        chain.clone(),
        pool.clone(),
        opts.proposer,
        opts.schedule,
        metrics.clone(),
        log,
        opts.disk.clone(),
    );
    let ctx = RpcContext::new(chain.clone(), pool, Arc::new(handle.clone()));
    let services = Services::start(2, "rpc", true, opts.rpc, ctx, opts.metrics, metrics)?;
    chain.store().set_proof_blocks(opts.proof_blocks);
    let pruner = crate::pruner::Pruner::start(chain.clone(), opts.keep_blocks);
    let head = chain.head()?;
    services.announce(
        as_json,
        chain.genesis().chain_id,
        head.height,
        json!({}),
        format!(
            "({}); Ctrl-C stops after the current block",
            match opts.schedule {
                Schedule::Interval(d) => format!("a block every {d:?}"),
                Schedule::Manual => "manual blocks: dev_mine / timerhost mine".into(),
            }
        ),
    );
    let stopper = handle.clone();
    services.runtime.spawn(async move {
        wait_for_signal().await;
        tracing::info!("stop requested; finishing the current block");
        stopper.stop();
    });
    drop(handle);
    let outcome = producer.run();
    if let Some(pruner) = pruner {
        pruner.stop();
    }
    services.stop();
    let height = outcome?;
    if as_json {
        println!("{}", json!({ "event": "stopped", "height": height }));
    } else {
        println!("stopped at height {height}");
    }
    Ok(height)
}

/// Prints one committed block's line (human or JSON).
pub(crate) fn log_block(as_json: bool, s: &BlockReport) {
    tracing::debug!(
        height = s.height,
        txs = s.txs,
        fired = s.timers_fired,
        "block committed"
    );
    if as_json {
        println!(
            "{}",
            json!({
                "event": "block",
                "height": s.height,
                "timestamp": s.timestamp_ms,
                "txs": s.txs,
                "refused": s.rejected,
                "timers_fired": s.timers_fired,
                "timers_expired": s.timers_expired,
                "timers_unfunded": s.timers_unfunded,
                "timers_revoked": s.timers_revoked,
                "timers_shut_down": s.timers_shut_down,
                "timers_carried_over": s.timers_carried_over,
                "gc_backlog": s.gc_backlog,
                "lane_cycles": s.lane_cycles,
                "lane_reserved": s.lane_reserved,
                "lane_budget": s.lane_budget,
                "gc_cycles": s.gc_cycles,
                "gc_budget": s.gc_budget,
                "cycles_used": s.cycles_used,
                "elapsed_ms": s.elapsed.as_secs_f64() * 1000.0,
            })
        );
    } else {
        println!("{}", s.line());
    }
}

/// Resolves on SIGINT or SIGTERM.
pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
