//! The metering fuzzer's short run (issue #47; part of the README's test
//! command): a fixed seed, 90 seconds after the ordinary suite's
//! baseline, every named finding first, then the natives table's workloads
//! and fresh programs in the seed's order (no breeding: which programs run
//! does not depend on the machine's timings). It fails on any program over 3× the
//! ordinary median per cycle (confirmed on its best of three runs), any
//! crash or hang, and any growth of the process past the memory budget plus
//! 128 MiB. The same run outside the tests: `timerhost-meterfuzz --seed 47
//! --seconds 90 --no-breeding`. A long run is `cargo run --release -p
//! timerhost-meterfuzz -- --seed N --seconds 3600` (docs/METERING.md, "Keeping prices honest").

use std::path::PathBuf;
use std::time::Duration;

use timerhost_meterfuzz::runner::Runner;
use timerhost_meterfuzz::search::{search, SearchConfig};

/// The seed of the short run.
const SEED: u64 = 47;

/// Seconds of search after the baseline.
const SECONDS: u64 = 90;

#[test]
fn a_short_search_finds_no_underpriced_program() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_timerhost-meterfuzz"));
    let mut config = SearchConfig::new(SEED, Duration::from_secs(SECONDS));
    // The same programs on every machine: no breeding from timings.
    config.mutate = false;
    let outcome = search(&config, &Runner::new(exe)).expect("the search runs");
    eprintln!(
        "{} programs ({} fresh, {} mutated, {} seeds) in {:.0} s; ordinary median {:.1} ns/cycle; worst ratio {:.2}",
        outcome.programs,
        outcome.fresh,
        outcome.mutated,
        outcome.seeded,
        outcome.seconds,
        outcome.ordinary_median,
        outcome.worst_ratio()
    );
    for scored in &outcome.worst {
        eprintln!("  {:6.2}x  {}", scored.ratio, scored.program.label());
    }
    // Every named finding ran, and the search went beyond them.
    assert!(outcome.seeded >= timerhost_meterfuzz::corpus::findings().len());
    assert!(outcome.programs > outcome.seeded, "{outcome:?}");
    assert_eq!(outcome.mutated, 0);
    let findings: Vec<String> = outcome
        .findings
        .iter()
        .map(|finding| format!("{:?}:\n{}", finding.problem, finding.source))
        .collect();
    assert!(
        findings.is_empty(),
        "the fuzzer found underpriced programs:\n{}",
        findings.join("\n")
    );
}
