//! Prometheus metrics (`--metrics ADDR`): counters and gauges updated by the
//! block producer, served as text exposition format on any HTTP path.
//!
//! Per-block gauges describe the last committed block; `_total` counters
//! add up since the node started. Every metric is listed, with its meaning,
//! in `docs/RPC.md` ("Metrics").

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::block_report::BlockReport;
use crate::error::{NodeError, Result};

/// One metric value.
#[derive(Debug, Default)]
pub struct Gauge(AtomicU64);

impl Gauge {
    /// Sets the value.
    pub fn set(&self, v: u64) {
        self.0.store(v, Ordering::Relaxed);
    }
    /// Adds to the value.
    pub fn add(&self, v: u64) {
        self.0.fetch_add(v, Ordering::Relaxed);
    }
    /// The value.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The node's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Height of the last committed block.
    pub height: Gauge,
    /// Wall time of the last block, microseconds.
    pub block_time_us: Gauge,
    /// User transactions included (total).
    pub txs: Gauge,
    /// Timers fired (total).
    pub timers_fired: Gauge,
    /// Timers expired (total).
    pub timers_expired: Gauge,
    /// Timers destroyed for lack of funds (total).
    pub timers_unfunded: Gauge,
    /// Timers whose fee payer revoked them (total).
    pub timers_revoked: Gauge,
    /// Timers removed by governance shutdowns (total).
    pub timers_shut_down: Gauge,
    /// Timers due but left in the queue by the last block (lane full).
    pub timers_carried_over: Gauge,
    /// Dead timers waiting in the GC backlog after the last block.
    pub gc_backlog: Gauge,
    /// Timer-lane cycles used by the last block.
    pub lane_cycles: Gauge,
    /// Timer-lane cycles reserved (fires' gas limits) by the last block.
    pub lane_reserved: Gauge,
    /// Timer-lane budget in force.
    pub lane_budget: Gauge,
    /// GC cycles used by the last block.
    pub gc_cycles: Gauge,
    /// GC budget in force.
    pub gc_budget: Gauge,
    /// Cycles used by the last block.
    pub block_cycles: Gauge,
    /// Transactions in the mempool.
    pub mempool_size: Gauge,
    /// Consensus metrics, on a node of a validator network.
    pub consensus: std::sync::OnceLock<Arc<timerhost_consensus::ConsensusMetrics>>,
}

impl Metrics {
    /// Records a produced block.
    pub fn record_block(&self, s: &BlockReport) {
        self.height.set(s.height);
        self.block_time_us.set(s.elapsed.as_micros() as u64);
        self.txs.add(s.txs as u64);
        self.timers_fired.add(s.timers_fired);
        self.timers_expired.add(s.timers_expired);
        self.timers_unfunded.add(s.timers_unfunded);
        self.timers_revoked.add(s.timers_revoked);
        self.timers_shut_down.add(s.timers_shut_down);
        self.timers_carried_over.set(s.timers_carried_over);
        self.gc_backlog.set(s.gc_backlog);
        self.lane_cycles.set(s.lane_cycles);
        self.lane_reserved.set(s.lane_reserved);
        self.lane_budget.set(s.lane_budget);
        self.gc_cycles.set(s.gc_cycles);
        self.gc_budget.set(s.gc_budget);
        self.block_cycles.set(s.cycles_used);
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let rows: [(&str, &str, &str, f64); 17] = [
            (
                "timerhost_block_height",
                "gauge",
                "Height of the last committed block.",
                self.height.get() as f64,
            ),
            (
                "timerhost_block_time_seconds",
                "gauge",
                "Wall time spent producing the last block.",
                self.block_time_us.get() as f64 / 1e6,
            ),
            (
                "timerhost_txs_total",
                "counter",
                "User transactions included in blocks.",
                self.txs.get() as f64,
            ),
            (
                "timerhost_timers_fired_total",
                "counter",
                "Timers fired.",
                self.timers_fired.get() as f64,
            ),
            (
                "timerhost_timers_expired_total",
                "counter",
                "Timers expired before firing.",
                self.timers_expired.get() as f64,
            ),
            (
                "timerhost_timers_unfunded_total",
                "counter",
                "Timers destroyed because their fee payer could not pay.",
                self.timers_unfunded.get() as f64,
            ),
            (
                "timerhost_timers_revoked_total",
                "counter",
                "Timers removed unexecuted because their fee payer revoked their payments.",
                self.timers_revoked.get() as f64,
            ),
            (
                "timerhost_timers_shutdown_total",
                "counter",
                "Timers removed by governance shutdowns (deposits refunded).",
                self.timers_shut_down.get() as f64,
            ),
            (
                "timerhost_timers_carried_over",
                "gauge",
                "Timers due by the last block but left queued for a later one (timer lane full).",
                self.timers_carried_over.get() as f64,
            ),
            (
                "timerhost_timers_gc_backlog",
                "gauge",
                "Expired or unfunded timers waiting in the GC backlog after the last block.",
                self.gc_backlog.get() as f64,
            ),
            (
                "timerhost_timer_lane_cycles",
                "gauge",
                "Cycles used by timer fires in the last block.",
                self.lane_cycles.get() as f64,
            ),
            (
                "timerhost_timer_lane_reserved_cycles",
                "gauge",
                "Timer-lane cycles reserved by the fires admitted in the last block (their gas limits).",
                self.lane_reserved.get() as f64,
            ),
            (
                "timerhost_timer_lane_budget_cycles",
                "gauge",
                "The timer lane's per-block budget.",
                self.lane_budget.get() as f64,
            ),
            (
                "timerhost_timer_gc_cycles",
                "gauge",
                "GC budget used removing expired and unfunded timers in the last block.",
                self.gc_cycles.get() as f64,
            ),
            (
                "timerhost_timer_gc_budget_cycles",
                "gauge",
                "The per-block GC budget.",
                self.gc_budget.get() as f64,
            ),
            (
                "timerhost_block_cycles",
                "gauge",
                "Cycles used by the last block.",
                self.block_cycles.get() as f64,
            ),
            (
                "timerhost_mempool_size",
                "gauge",
                "Transactions waiting in the mempool.",
                self.mempool_size.get() as f64,
            ),
        ];
        let mut out = String::new();
        for (name, kind, help, v) in rows {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}\n"
            ));
        }
        if let Some(c) = self.consensus.get() {
            for (name, help, kind, v) in c.samples() {
                out.push_str(&format!(
                    "# HELP timerhost_{name} {help}\n# TYPE timerhost_{name} {kind}\ntimerhost_{name} {v}\n"
                ));
            }
        }
        out
    }
}

/// Serves `metrics` on `addr` from a background thread. Returns the bound address.
pub fn serve(addr: SocketAddr, metrics: Arc<Metrics>) -> Result<SocketAddr> {
    let listener = TcpListener::bind(addr).map_err(|source| NodeError::Io {
        action: "binding the metrics listener on",
        path: addr.to_string().into(),
        source,
    })?;
    let bound = listener.local_addr().map_err(|source| NodeError::Io {
        action: "reading the address of",
        path: addr.to_string().into(),
        source,
    })?;
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf);
                let body = metrics.render();
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    body.len(),
                    body
                );
            }
        })
        .map_err(|source| NodeError::Io {
            action: "spawning the metrics thread for",
            path: addr.to_string().into(),
            source,
        })?;
    Ok(bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn value(text: &str, name: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {text}"))
            .parse()
            .unwrap()
    }

    #[test]
    fn a_block_sets_the_per_block_gauges_and_adds_to_the_counters() {
        let m = Metrics::default();
        let mut s = BlockReport {
            height: 7,
            timestamp_ms: 1_700_000_000,
            txs: 2,
            rejected: 0,
            timers_fired: 3,
            timers_expired: 1,
            timers_unfunded: 2,
            timers_revoked: 1,
            timers_shut_down: 3,
            timers_carried_over: 5,
            gc_backlog: 4,
            lane_cycles: 1_234,
            lane_reserved: 1_650_000,
            lane_budget: 2_000_000,
            gc_cycles: 3_000,
            gc_budget: 5_000,
            cycles_used: 9_999,
            elapsed: Duration::from_millis(12),
        };
        m.record_block(&s);
        s.height = 8;
        s.timers_carried_over = 0;
        s.gc_cycles = 0;
        m.record_block(&s);
        let text = m.render();
        for (name, v) in [
            ("timerhost_block_height", 8.0),
            ("timerhost_txs_total", 4.0),
            ("timerhost_timers_fired_total", 6.0),
            ("timerhost_timers_expired_total", 2.0),
            ("timerhost_timers_unfunded_total", 4.0),
            ("timerhost_timers_revoked_total", 2.0),
            ("timerhost_timers_shutdown_total", 6.0),
            ("timerhost_timers_carried_over", 0.0),
            ("timerhost_timers_gc_backlog", 4.0),
            ("timerhost_timer_lane_cycles", 1_234.0),
            ("timerhost_timer_lane_reserved_cycles", 1_650_000.0),
            ("timerhost_timer_lane_budget_cycles", 2_000_000.0),
            ("timerhost_timer_gc_cycles", 0.0),
            ("timerhost_timer_gc_budget_cycles", 5_000.0),
            ("timerhost_block_cycles", 9_999.0),
            ("timerhost_block_time_seconds", 0.012),
        ] {
            assert_eq!(value(&text, name), v, "{name}");
        }
        // Every metric has HELP and TYPE lines.
        assert_eq!(text.matches("# HELP ").count(), 17);
        assert_eq!(text.matches("# TYPE ").count(), 17);
        assert!(text.contains("# TYPE timerhost_timers_fired_total counter"));
        assert!(text.contains("# TYPE timerhost_timers_carried_over gauge"));
    }
}
