//! Shared helpers of the tests that run a node: start `timerhost` on a
//! loopback port, drive it through the CLI and raw JSON-RPC, stop it.
// Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod network;

pub const TIMERHOST: &str = env!("CARGO_BIN_EXE_timerhost");
pub const HEARTBEAT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../actors/heartbeat/heartbeat.py"
);

/// The programs of #49, as an actor author would write them: each call
/// used to overflow the native stack of whichever node executed it.
pub const DEEP: &str = r#"import pvm_host

def wrap(it):
    for v in it:
        yield v

class Deep:
    def frozensets(self, n):
        x = frozenset()
        for _ in range(n):
            x = frozenset([x])
        return hash(x) & 1

    def generators(self, n):
        x = iter([1])
        for _ in range(n):
            x = wrap(x)
        return 1

    def zips(self, n):
        it = iter([1, 2])
        for _ in range(n):
            it = zip(it)
        return len(list(it))

    def exceptions(self, n):
        e = ValueError(1)
        for _ in range(n):
            e = ValueError(e)
        raise e
"#;

/// Calls `handler(n)` of `actor` from dev account 2 with 20M cycles and
/// returns its receipt, success or not (a failed call exits non-zero
/// after printing it).
pub fn call_receipt(node: &Node, actor: &str, handler: &str, n: u64) -> Value {
    let out = node.cli(&[
        "call",
        actor,
        handler,
        &format!("[{n}]"),
        "--dev-account",
        "2",
        "--cycles-limit",
        "20000000",
        "--json",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{handler}({n}): {e}: {stdout}"))
}

/// A running node process; killed on drop if still running.
pub struct Node {
    pub child: Child,
    pub url: String,
    pub metrics: Option<String>,
    pub out: Arc<Mutex<String>>,
}

impl Node {
    /// Starts `timerhost dev` in `home` on a free loopback port, with
    /// `extra` arguments.
    pub fn dev(home: &Path, extra: &[&str]) -> Node {
        let mut args = vec!["dev", "--home", home_arg(home), "--rpc", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        Node::start(&args)
    }

    /// Starts `timerhost ARGS` and waits for its `rpc:` line.
    pub fn start(args: &[&str]) -> Node {
        Node::start_under(&[], args)
    }

    /// Starts `PREFIX… timerhost ARGS` (e.g. `ip netns exec NS`, which
    /// execs into the node: its pid is the node's) and waits for its
    /// `rpc:` line.
    /// [`Node::start`] with the node's stderr (its log) written to `log`.
    pub fn start_logged(args: &[&str], log: &Path) -> Node {
        Node::spawn(&[], args, Stdio::from(std::fs::File::create(log).unwrap()))
    }

    pub fn start_under(prefix: &[&str], args: &[&str]) -> Node {
        Node::spawn(prefix, args, Stdio::null())
    }

    fn spawn(prefix: &[&str], args: &[&str], stderr: Stdio) -> Node {
        let mut command = match prefix.split_first() {
            None => Command::new(TIMERHOST),
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(TIMERHOST);
                c
            }
        };
        let mut child = command
            .args(args)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let out = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let sink = out.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line.clone());
                sink.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        let mut url = None;
        let mut metrics = None;
        let deadline = Instant::now() + Duration::from_secs(60);
        while url.is_none() {
            let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("node did not start: {}", out.lock().unwrap());
            };
            if let Some(u) = line.strip_prefix("rpc: ") {
                url = Some(u.to_string());
            }
            // With --json the start-up line is an object.
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if v["event"] == "started" {
                    url = v["rpc"].as_str().map(str::to_string);
                    metrics = v["metrics"].as_str().map(str::to_string);
                    if metrics.is_none() && args.contains(&"--metrics") {
                        panic!("no metrics address in {line}");
                    }
                }
            }
            if let Some(m) = line.strip_prefix("metrics: ") {
                metrics = Some(m.to_string());
            }
        }
        // The metrics line follows the rpc line.
        if args.contains(&"--metrics") && metrics.is_none() {
            let line = rx.recv_timeout(Duration::from_secs(10)).unwrap();
            metrics = line.strip_prefix("metrics: ").map(str::to_string);
        }
        Node {
            child,
            url: url.unwrap(),
            metrics,
            out,
        }
    }

    /// Runs a client command against this node; returns its output.
    pub fn cli(&self, args: &[&str]) -> Output {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--rpc", &self.url]);
        Command::new(TIMERHOST).args(&all).output().unwrap()
    }

    /// Runs a client command with `--json` that must succeed; returns its JSON.
    pub fn cli_json(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.push("--json");
        let out = self.cli(&all);
        assert!(
            out.status.success(),
            "timerhost {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// `timerhost rpc METHOD PARAMS --json`.
    pub fn rpc(&self, method: &str, params: Value) -> Value {
        self.cli_json(&["rpc", method, &params.to_string()])
    }

    /// A raw JSON-RPC request over HTTP; returns the whole response object.
    pub fn raw(&self, body: &str) -> Value {
        let hostport = self.url.trim_start_matches("http://");
        let mut s = TcpStream::connect(hostport).unwrap();
        write!(
            s,
            "POST / HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        let body = resp.split("\r\n\r\n").nth(1).unwrap();
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {resp}"))
    }

    /// The Prometheus text served on `--metrics`.
    pub fn scrape(&self) -> String {
        let url = self.metrics.clone().expect("metrics address printed");
        let hostport = url
            .trim_start_matches("http://")
            .trim_end_matches("/metrics");
        let mut s = TcpStream::connect(hostport).unwrap();
        write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    }

    /// The value of metric `name` (panics if it is absent).
    pub fn metric(&self, name: &str) -> f64 {
        let text = self.scrape();
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no metric {name} in {text}"))
            .parse()
            .unwrap()
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn terminate(mut self) -> String {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                assert!(st.success(), "node exited with {st}");
                break;
            }
            assert!(Instant::now() < deadline, "node did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        let out = self.out.lock().unwrap().clone();
        out
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn home_arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `timerhost ARGS --json` with no node (keys, replay, migrate), which must
/// succeed; its JSON output.
pub fn offline_json(args: &[&str]) -> Value {
    let out = Command::new(TIMERHOST)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
