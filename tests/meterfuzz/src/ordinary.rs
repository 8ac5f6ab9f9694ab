//! The ordinary-program suite the search measures against: the real
//! programs of the VM's benchmark (`host/vm/benches/programs/*.py`), each
//! run metered in a child like every candidate. Their median nanoseconds per
//! cycle, measured in the same run on the same build, is the yardstick: a
//! candidate's ratio to it is what a block filled with the candidate would
//! take over a block of ordinary code, whatever the machine.

use crate::measure::Request;
use crate::{FuzzError, Result};

/// Where the suite lives, from this crate.
pub const PROGRAMS_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../host/vm/benches/programs"
);

/// The suite as requests for the child, sorted by name.
pub fn suite() -> Result<Vec<Request>> {
    let entries = std::fs::read_dir(PROGRAMS_DIR).map_err(|source| FuzzError::Suite {
        path: PROGRAMS_DIR.into(),
        source,
    })?;
    let mut requests = Vec::new();
    for entry in entries {
        let path = entry.map_err(FuzzError::Io)?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("py") {
            continue;
        }
        let source = std::fs::read_to_string(&path).map_err(FuzzError::Io)?;
        let n = source
            .lines()
            .find_map(|line| line.strip_prefix("# bench: n = "))
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| FuzzError::SuiteProgram(path.display().to_string()))?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_string();
        requests.push(Request::Ordinary { name, source, n });
    }
    requests.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    Ok(requests)
}

fn name_of(request: &Request) -> &str {
    match request {
        Request::Ordinary { name, .. } => name,
        Request::Fuzz(program) => &program.name,
    }
}

/// The median of `values` (0 for none).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return 0.0;
    }
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_has_the_benchmark_programs() {
        let suite = suite().unwrap();
        assert!(suite.len() >= 10, "{} programs", suite.len());
        assert!(suite.iter().any(|r| name_of(r) == "queens"));
    }

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
