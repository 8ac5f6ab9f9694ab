//! `timerhost-meterfuzz`: the metering fuzzer's command line.
//!
//! `timerhost-meterfuzz --seed 1 --minutes 60` searches for an hour and
//! prints the worst programs and every finding; it exits 1 when it found
//! something (a program over the threshold, a crash, a hang, growth past
//! the memory budget plus slack). `child` is the mode it runs its children
//! in (one program each, read from stdin).

#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use timerhost_meterfuzz::runner::{serve_child, Runner};
use timerhost_meterfuzz::search::{search, SearchConfig};

#[derive(Parser)]
#[command(
    name = "timerhost-meterfuzz",
    about = "Searches for underpriced actor programs."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Mode>,
    /// Seeds the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How long to search, in seconds (after measuring the ordinary suite).
    #[arg(long, default_value_t = 120)]
    seconds: u64,
    /// A finding is a program slower per cycle than this many times the
    /// ordinary median.
    #[arg(long, default_value_t = timerhost_meterfuzz::search::DEFAULT_THRESHOLD)]
    threshold: f64,
    /// Print a line per program measured.
    #[arg(long)]
    verbose: bool,
    /// Run the seed's programs only, without breeding from the slowest (the
    /// short run's mode: the same programs on every machine).
    #[arg(long)]
    no_breeding: bool,
    /// Write the whole outcome as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Mode {
    /// Measures one program read from stdin (used by the search itself).
    #[command(hide = true)]
    Child,
}

fn main() {
    let cli = Cli::parse();
    if let Some(Mode::Child) = cli.command {
        if let Err(error) = serve_child() {
            eprintln!("child: {error}");
            std::process::exit(2);
        }
        return;
    }
    let exe = std::env::current_exe().expect("the fuzzer knows its own path");
    let mut config = SearchConfig::new(cli.seed, Duration::from_secs(cli.seconds));
    config.threshold = cli.threshold;
    config.verbose = cli.verbose;
    config.mutate = !cli.no_breeding;
    let outcome = match search(&config, &Runner::new(exe)) {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(2);
        }
    };
    println!(
        "seed {}: {} programs in {:.0} s ({} fresh, {} mutated, {} seeds); ordinary median {:.1} ns/cycle",
        outcome.seed,
        outcome.programs,
        outcome.seconds,
        outcome.fresh,
        outcome.mutated,
        outcome.seeded,
        outcome.ordinary_median
    );
    println!("slowest per cycle (ratio to the ordinary median):");
    for scored in &outcome.worst {
        println!(
            "  {:6.2}x  {}  [{}]",
            scored.ratio,
            scored.program.label(),
            scored.report.outcome
        );
    }
    if let Some((growth, label)) = &outcome.largest_growth {
        println!(
            "largest growth of the process: {} MiB ({label})",
            growth >> 20
        );
    }
    if let Some(path) = &cli.json {
        let text = serde_json::to_string_pretty(&outcome).expect("the outcome serialises");
        std::fs::write(path, text).expect("write the JSON report");
    }
    if outcome.findings.is_empty() {
        println!("no findings");
        return;
    }
    for finding in &outcome.findings {
        println!("FINDING {:?}\n{}", finding.problem, finding.source);
    }
    std::process::exit(1);
}
