//! The parent's side: runs one request in a fresh child process (the fuzzer
//! binary's `child` mode), watching its wall time and resident memory, and
//! classifies how it ended. The child's memory is capped from outside: a
//! process that grows past [`RSS_KILL_BYTES`] is killed before it can take
//! the machine with it, and that is a finding too.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::measure::{proc_status_of, Report, Request};
use crate::{FuzzError, Result};

/// A child whose resident set passes this is killed (a node's process has
/// many executions' worth of room, not a gigabyte per transaction).
pub const RSS_KILL_BYTES: u64 = 1024 * 1024 * 1024;

/// A child running longer than this is killed: a measured call is at most
/// [`crate::measure::CALL_CYCLES`], seconds of ordinary code in all.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

/// How a child ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Ending {
    /// It measured the program and reported.
    Measured(Report),
    /// It died: a signal or a nonzero exit without a report.
    Crashed {
        /// What ended it (`signal 6`, `exit 101`).
        how: String,
        /// The end of what it printed on stderr.
        stderr: String,
    },
    /// It ran past [`CHILD_TIMEOUT`].
    Hung,
    /// Its resident set passed [`RSS_KILL_BYTES`].
    MemoryKilled {
        /// The resident bytes seen when it was killed.
        rss_bytes: u64,
    },
}

/// Spawns children of `exe` (the fuzzer binary, which serves `child`).
#[derive(Clone, Debug)]
pub struct Runner {
    exe: PathBuf,
}

impl Runner {
    /// Children are `exe child`.
    pub fn new(exe: PathBuf) -> Runner {
        Runner { exe }
    }

    /// Runs `request` in a child of its own.
    pub fn run(&self, request: &Request) -> Result<Ending> {
        let input = serde_json::to_vec(request)?;
        let mut child = Command::new(&self.exe)
            .arg("child")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| FuzzError::Spawn {
                exe: self.exe.display().to_string(),
                source,
            })?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(&input)
            .map_err(FuzzError::Io)?;
        let mut stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let out_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stdout.read_to_string(&mut text);
            text
        });
        let err_reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let pid = child.id().to_string();
        let started = Instant::now();
        let mut killed: Option<Ending> = None;
        let status = loop {
            if let Some(status) = child.try_wait().map_err(FuzzError::Io)? {
                break status;
            }
            let rss = proc_status_of(&pid, "VmRSS");
            if rss > RSS_KILL_BYTES {
                killed = Some(Ending::MemoryKilled { rss_bytes: rss });
            } else if started.elapsed() > CHILD_TIMEOUT {
                killed = Some(Ending::Hung);
            }
            if killed.is_some() {
                let _ = child.kill();
                break child.wait().map_err(FuzzError::Io)?;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let out = out_reader.join().unwrap_or_default();
        let err = err_reader.join().unwrap_or_default();
        if let Some(ending) = killed {
            return Ok(ending);
        }
        if status.success() {
            if let Ok(report) = serde_json::from_str::<Report>(out.trim()) {
                return Ok(Ending::Measured(report));
            }
        }
        use std::os::unix::process::ExitStatusExt;
        let how = match (status.signal(), status.code()) {
            (Some(signal), _) => format!("signal {signal}"),
            (None, Some(code)) => format!("exit {code}"),
            (None, None) => "unknown".into(),
        };
        let tail: String = {
            let lines: Vec<&str> = err.lines().collect();
            lines[lines.len().saturating_sub(8)..].join("\n")
        };
        Ok(Ending::Crashed { how, stderr: tail })
    }
}

/// The child's entry: reads a [`Request`] from stdin, measures it on a
/// thread with a node's execution stack (64 MiB) and prints the [`Report`].
pub fn serve_child() -> Result<()> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(FuzzError::Io)?;
    let request: Request = serde_json::from_str(&input)?;
    let report = std::thread::Builder::new()
        .name("execution".into())
        .stack_size(64 * 1024 * 1024)
        .spawn(move || crate::measure::measure(&request))
        .map_err(FuzzError::Io)?
        .join()
        .map_err(|_| FuzzError::ChildPanicked)?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
