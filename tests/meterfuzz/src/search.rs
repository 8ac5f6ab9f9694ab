//! The search: measures the ordinary suite, then runs the named findings,
//! the natives table's workloads at large sizes, fresh programs (a shape ×
//! an operation) and mutations of the slowest programs found so far — a
//! genetic loop whose fitness is nanoseconds per cycle over the ordinary
//! median. A candidate over the threshold is measured twice more, each time
//! beside the ordinary program nearest the median (the machine is shared: a
//! finding must hold on its best run, against the machine as it is then —
//! a slower moment scales the median up, never down) and minimised
//! (its size halved while it still holds). Crashes, hangs and growth past
//! the memory budget plus [`SearchConfig::memory_slack_bytes`] are findings
//! whatever their time.

use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use timerhost_vm::natives::workloads::WORKLOADS;
use timerhost_vm::ExecLimits;

use crate::measure::{Report, Request};
use crate::ops::OPS;
use crate::ordinary::median;
use crate::program::{Genes, Program};
use crate::runner::{Ending, Runner};
use crate::shapes::SHAPES;
use crate::Result;

/// How a search runs.
#[derive(Clone, Debug)]
pub struct SearchConfig {
    /// Seeds the generator (fresh programs and mutations).
    pub seed: u64,
    /// Wall time for the search after the baseline.
    pub budget: Duration,
    /// A program slower per cycle than this many times the ordinary median
    /// is a finding.
    pub threshold: f64,
    /// Growth of the process past the execution's memory budget that is
    /// tolerated (the interpreter's own structures, the allocator's pages).
    pub memory_slack_bytes: u64,
    /// Print a line per program.
    pub verbose: bool,
    /// Breed the slowest programs found (the long runs). Off, the programs
    /// run are the seeds and fresh ones alone: the same sequence on every
    /// machine for a seed, whatever the timings (the short run in the test
    /// command, which must not depend on what a noisy machine measured).
    pub mutate: bool,
}

impl SearchConfig {
    /// A config with the defaults of `timerhost-meterfuzz`.
    pub fn new(seed: u64, budget: Duration) -> SearchConfig {
        SearchConfig {
            seed,
            budget,
            threshold: DEFAULT_THRESHOLD,
            memory_slack_bytes: DEFAULT_MEMORY_SLACK_BYTES,
            verbose: false,
            mutate: true,
        }
    }
}

/// The bound: 3× the ordinary median.
pub const DEFAULT_THRESHOLD: f64 = 3.0;

/// 128 MiB beyond the 64 MiB budget. The budget's flag is raised by the
/// allocation that passes it, and a single allocation can be a container
/// doubling (a dict's table, a list's buffer, a string being built) while
/// the old one is still alive: up to the budget again before the next
/// charge point sees the flag. On top of that come the allocator's pages
/// and the interpreter's caches (ordinary programs grow the process by
/// under 20 MiB). Measured worst in the fuzzer's runs: 153 MiB
/// (`collections.Counter` of a 612,000-item range, a dict comprehension
/// over nested lists' reprs), against 1.2 GB before #47.
pub const DEFAULT_MEMORY_SLACK_BYTES: u64 = 128 * 1024 * 1024;

/// What was wrong with a program.
#[derive(Clone, Debug, Serialize)]
pub enum Problem {
    /// Slower per cycle than the threshold allows.
    Slow {
        /// Its ratio to the ordinary median (best of its runs).
        ratio: f64,
    },
    /// The process grew past budget plus slack.
    Memory {
        /// How far it grew.
        rss_growth_bytes: u64,
    },
    /// The child died.
    Crash {
        /// How.
        how: String,
        /// The end of its stderr.
        stderr: String,
    },
    /// The child ran past the timeout.
    Hang,
}

/// A confirmed, minimised finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// What was wrong.
    pub problem: Problem,
    /// The smallest program found that still shows it.
    pub program: Program,
    /// Its actor source, ready to paste into a test.
    pub source: String,
}

/// One measured program, for the report.
#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    /// The program.
    pub program: Program,
    /// ns per cycle over the ordinary median.
    pub ratio: f64,
    /// What the child reported.
    pub report: Report,
}

/// What a search found.
#[derive(Clone, Debug, Serialize)]
pub struct SearchOutcome {
    /// The seed it ran with.
    pub seed: u64,
    /// The ordinary suite's median ns per cycle.
    pub ordinary_median: f64,
    /// Each ordinary program's ns per cycle.
    pub ordinary: Vec<(String, f64)>,
    /// Programs measured.
    pub programs: usize,
    /// Of them, generated fresh, mutated, and from seeds (findings, workloads).
    pub fresh: usize,
    /// Mutated from the population.
    pub mutated: usize,
    /// Seeds run.
    pub seeded: usize,
    /// The slowest programs per cycle (not findings unless over the threshold).
    pub worst: Vec<Scored>,
    /// The largest growth of the process seen, and by which program.
    pub largest_growth: Option<(u64, String)>,
    /// What is wrong.
    pub findings: Vec<Finding>,
    /// Seconds the search ran.
    pub seconds: f64,
}

impl SearchOutcome {
    /// The worst ratio measured.
    pub fn worst_ratio(&self) -> f64 {
        self.worst.first().map_or(0.0, |s| s.ratio)
    }
}

struct Search<'a> {
    config: &'a SearchConfig,
    runner: &'a Runner,
    rng: ChaCha8Rng,
    median: f64,
    /// The ordinary program nearest the median, with its first figure:
    /// measured again beside every confirmation, so a finding is judged
    /// against the machine as it is then (a long run shares the machine
    /// with builds and other jobs).
    yardstick: Option<(Request, f64)>,
    population: Vec<Scored>,
    /// Names (shape and operation) of the programs already found: their
    /// mutations are counted but not confirmed, minimised or bred again, so
    /// a long run moves on instead of re-finding one problem.
    found: std::collections::HashSet<String>,
    outcome: SearchOutcome,
}

/// Size of the population mutations draw from.
const POPULATION: usize = 24;

/// The memory limit a program must stay under.
fn memory_limit(config: &SearchConfig) -> u64 {
    ExecLimits::DEFAULT_MEMORY_BYTES + config.memory_slack_bytes
}

/// Measures the ordinary suite; returns each program's ns per cycle.
pub fn measure_ordinary(runner: &Runner) -> Result<Vec<(String, f64)>> {
    let mut figures = Vec::new();
    for request in crate::ordinary::suite()? {
        let Request::Ordinary { name, .. } = &request else {
            continue;
        };
        let name = name.clone();
        match runner.run(&request)? {
            Ending::Measured(report) if report.outcome == "ok" => {
                figures.push((name, report.ns_per_cycle))
            }
            other => return Err(crate::FuzzError::OrdinaryFailed(name, format!("{other:?}"))),
        }
    }
    Ok(figures)
}

/// The ordinary program whose figure is nearest the median, as a request
/// for the child, with that figure.
fn yardstick(ordinary: &[(String, f64)], median_ns: f64) -> Result<Option<(Request, f64)>> {
    let Some((name, figure)) = ordinary
        .iter()
        .min_by(|a, b| (a.1 - median_ns).abs().total_cmp(&(b.1 - median_ns).abs()))
    else {
        return Ok(None);
    };
    Ok(crate::ordinary::suite()?
        .into_iter()
        .find(|request| matches!(request, Request::Ordinary { name: n, .. } if n == name))
        .map(|request| (request, *figure)))
}

/// Runs a search.
pub fn search(config: &SearchConfig, runner: &Runner) -> Result<SearchOutcome> {
    let started = Instant::now();
    let ordinary = measure_ordinary(runner)?;
    let median_ns = median(&ordinary.iter().map(|(_, v)| *v).collect::<Vec<_>>());
    eprintln!(
        "ordinary suite: median {median_ns:.1} ns/cycle over {} programs; threshold {:.1} ns/cycle ({}x); memory limit {} MiB",
        ordinary.len(),
        median_ns * config.threshold,
        config.threshold,
        memory_limit(config) >> 20
    );
    let mut search = Search {
        config,
        runner,
        rng: ChaCha8Rng::seed_from_u64(config.seed),
        median: median_ns,
        yardstick: yardstick(&ordinary, median_ns)?,
        population: Vec::new(),
        found: std::collections::HashSet::new(),
        outcome: SearchOutcome {
            seed: config.seed,
            ordinary_median: median_ns,
            ordinary,
            programs: 0,
            fresh: 0,
            mutated: 0,
            seeded: 0,
            worst: Vec::new(),
            largest_growth: None,
            findings: Vec::new(),
            seconds: 0.0,
        },
    };
    let mut seeds = crate::corpus::findings();
    let mut workloads = workload_seeds(&mut search.rng);
    seeds.append(&mut workloads);
    let deadline = Instant::now() + config.budget;
    let mut next_seed = 0;
    // The named findings always run, whatever the budget.
    let named = crate::corpus::findings().len();
    while next_seed < named || Instant::now() < deadline {
        let choice: f64 = search.rng.gen();
        let program = if next_seed < named || (choice < 0.3 && next_seed < seeds.len()) {
            next_seed += 1;
            search.outcome.seeded += 1;
            seeds[next_seed - 1].clone()
        } else if choice < 0.65 || search.population.is_empty() || !config.mutate {
            search.outcome.fresh += 1;
            fresh(&mut search.rng)
        } else {
            search.outcome.mutated += 1;
            let index = search.pick();
            let parent = search.population[index].program.clone();
            mutate(&parent, &mut search.rng)
        };
        search.evaluate(program)?;
    }
    search.outcome.seconds = started.elapsed().as_secs_f64();
    let mut worst = search.population.clone();
    worst.truncate(10);
    search.outcome.worst = worst;
    Ok(search.outcome)
}

impl Search<'_> {
    /// A population index, the slowest most likely.
    fn pick(&mut self) -> usize {
        let u: f64 = self.rng.gen();
        ((u * u) * self.population.len() as f64) as usize
    }

    fn evaluate(&mut self, program: Program) -> Result<()> {
        self.outcome.programs += 1;
        if self.found.contains(&program.name) {
            return Ok(());
        }
        let ending = self.runner.run(&Request::Fuzz(program.clone()))?;
        match ending {
            Ending::Measured(report) => {
                let ratio = report.ns_per_cycle / self.median;
                if self.config.verbose {
                    eprintln!(
                        "{:7.2}x {:>9} cycles k={:<5} {:<30} {}",
                        ratio,
                        report.cycles,
                        report.k,
                        truncate(&report.outcome, 30),
                        program.label()
                    );
                }
                if self
                    .outcome
                    .largest_growth
                    .as_ref()
                    .is_none_or(|(g, _)| report.rss_growth_bytes > *g)
                {
                    self.outcome.largest_growth = Some((report.rss_growth_bytes, program.label()));
                }
                if report.rss_growth_bytes > memory_limit(self.config) {
                    let minimal = self.minimise(&program, |search, candidate| {
                        matches!(search.runner.run(&Request::Fuzz(candidate.clone())),
                            Ok(Ending::Measured(r)) if r.rss_growth_bytes > memory_limit(search.config))
                    });
                    self.record(
                        Problem::Memory {
                            rss_growth_bytes: report.rss_growth_bytes,
                        },
                        minimal,
                    );
                }
                if ratio > self.config.threshold {
                    if let Some(confirmed) = self.confirm(&program, ratio)? {
                        let minimal = self.minimise(&program, |search, candidate| {
                            search.ratio_of(candidate).unwrap_or(0.0) > search.config.threshold
                        });
                        self.record(Problem::Slow { ratio: confirmed }, minimal);
                    }
                }
                if !self.found.contains(&program.name) {
                    self.admit(Scored {
                        program,
                        ratio,
                        report,
                    });
                }
            }
            Ending::Crashed { how, stderr } => {
                eprintln!("CRASH ({how}): {}", program.label());
                self.record(Problem::Crash { how, stderr }, program);
            }
            Ending::Hung => {
                eprintln!("HANG: {}", program.label());
                self.record(Problem::Hang, program);
            }
            Ending::MemoryKilled { rss_bytes } => {
                eprintln!(
                    "MEMORY: killed at {} MiB: {}",
                    rss_bytes >> 20,
                    program.label()
                );
                let minimal = self.minimise(&program, |search, candidate| {
                    match search.runner.run(&Request::Fuzz(candidate.clone())) {
                        Ok(Ending::MemoryKilled { .. }) => true,
                        Ok(Ending::Measured(r)) => r.rss_growth_bytes > memory_limit(search.config),
                        _ => false,
                    }
                });
                self.record(
                    Problem::Memory {
                        rss_growth_bytes: rss_bytes,
                    },
                    minimal,
                );
            }
        }
        Ok(())
    }

    /// The program's ratio on one more run (None if it did not measure),
    /// against the median scaled by the yardstick measured beside it.
    fn ratio_of(&self, program: &Program) -> Option<f64> {
        let report = match self.runner.run(&Request::Fuzz(program.clone())) {
            Ok(Ending::Measured(report)) => report,
            _ => return None,
        };
        let scale = self.yardstick.as_ref().map_or(1.0, |(request, first)| {
            match self.runner.run(request) {
                // Never judged against a machine faster than at the start.
                Ok(Ending::Measured(now)) if now.ns_per_cycle > 0.0 => {
                    (now.ns_per_cycle / first).max(1.0)
                }
                _ => 1.0,
            }
        });
        Some(report.ns_per_cycle / (self.median * scale))
    }

    /// Two more runs; the finding holds on its best (lowest) ratio.
    fn confirm(&mut self, program: &Program, first: f64) -> Result<Option<f64>> {
        let mut best = first;
        for _ in 0..2 {
            match self.ratio_of(program) {
                Some(ratio) => best = best.min(ratio),
                None => return Ok(None),
            }
            if best <= self.config.threshold {
                return Ok(None);
            }
        }
        Ok(Some(best))
    }

    /// Halves the program's size while `holds` (at most eight times).
    fn minimise(
        &mut self,
        program: &Program,
        holds: impl Fn(&mut Search<'_>, &Program) -> bool,
    ) -> Program {
        let mut smallest = program.clone();
        for _ in 0..8 {
            if smallest.n <= 1 {
                break;
            }
            let candidate = smallest.with_n(smallest.n / 2);
            if holds(self, &candidate) {
                smallest = candidate;
            } else {
                break;
            }
        }
        smallest
    }

    fn record(&mut self, problem: Problem, program: Program) {
        eprintln!("FINDING {problem:?}: {}", program.label());
        self.found.insert(program.name.clone());
        let source = program.source();
        self.outcome.findings.push(Finding {
            problem,
            program,
            source,
        });
    }

    fn admit(&mut self, scored: Scored) {
        if !scored.ratio.is_finite() {
            return;
        }
        let position = self
            .population
            .iter()
            .position(|s| s.ratio < scored.ratio)
            .unwrap_or(self.population.len());
        self.population.insert(position, scored);
        self.population.truncate(POPULATION);
    }
}

fn truncate(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// The natives table's workloads, each at a random size 16–1024× its own.
fn workload_seeds(rng: &mut ChaCha8Rng) -> Vec<Program> {
    let mut seeds: Vec<Program> = WORKLOADS
        .iter()
        .map(|workload| Program {
            name: format!("workload:{}", workload.native),
            setup: workload.setup.into(),
            op: workload.op.into(),
            n: workload.n * (16 << rng.gen_range(0..7)),
            genes: None,
        })
        .collect();
    seeds.shuffle(rng);
    seeds
}

/// A size for `shape`: log-uniform in 1..=max_n.
fn size_for(max_n: u64, rng: &mut ChaCha8Rng) -> u64 {
    let bits = 64 - max_n.leading_zeros();
    let exponent = rng.gen_range(0.0..f64::from(bits));
    (2f64.powf(exponent) as u64).clamp(1, max_n)
}

/// A program from its genes.
pub fn from_genes(genes: Genes, n: u64) -> Program {
    let shape = &SHAPES[genes.shape];
    let op = OPS[genes.op];
    let setup = format!(
        "{}\n{}",
        crate::shapes::render(shape, "x"),
        crate::shapes::render(shape, "y")
    );
    let lazy = if genes.lazy { "/lazy" } else { "" };
    Program {
        name: format!("{}/{}{lazy}", shape.name, op.lines().last().unwrap_or(op)),
        setup,
        op: crate::ops::render(op, genes.lazy, n),
        n,
        genes: Some(genes),
    }
}

/// A fresh program: a random shape, operation and size.
pub fn fresh(rng: &mut ChaCha8Rng) -> Program {
    let genes = Genes {
        shape: rng.gen_range(0..SHAPES.len()),
        op: rng.gen_range(0..OPS.len()),
        lazy: rng.gen_bool(0.2),
    };
    from_genes(genes, size_for(SHAPES[genes.shape].max_n, rng))
}

/// A mutation of `parent`: its size scaled, or (for a generated program)
/// its shape, operation or laziness changed.
pub fn mutate(parent: &Program, rng: &mut ChaCha8Rng) -> Program {
    let scale = |n: u64, rng: &mut ChaCha8Rng| match rng.gen_range(0..3) {
        0 => n.saturating_mul(4),
        1 => n.saturating_mul(2),
        _ => (n / 2).max(1),
    };
    let Some(genes) = parent.genes else {
        let n = scale(parent.n, rng).min(50_000_000);
        return parent.with_n(n);
    };
    let mut genes = genes;
    let mut n = parent.n;
    match rng.gen_range(0..4) {
        0 => n = scale(n, rng).min(SHAPES[genes.shape].max_n * 4),
        1 => {
            genes.shape = rng.gen_range(0..SHAPES.len());
            n = n.min(SHAPES[genes.shape].max_n);
        }
        2 => genes.op = rng.gen_range(0..OPS.len()),
        _ => genes.lazy = !genes.lazy,
    }
    from_genes(genes, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_determined_by_the_seed() {
        let mut a = ChaCha8Rng::seed_from_u64(5);
        let mut b = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..50 {
            assert_eq!(fresh(&mut a), fresh(&mut b));
        }
    }

    #[test]
    fn mutations_stay_in_bounds() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut program = fresh(&mut rng);
        for _ in 0..500 {
            program = mutate(&program, &mut rng);
            let genes = program.genes.unwrap();
            assert!(genes.shape < SHAPES.len() && genes.op < OPS.len());
            assert!(program.n >= 1 && program.n <= SHAPES[genes.shape].max_n * 4);
        }
        let seed = &workload_seeds(&mut rng)[0];
        assert!(mutate(seed, &mut rng).genes.is_none());
    }

    #[test]
    fn sizes_cover_the_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let sizes: Vec<u64> = (0..2000).map(|_| size_for(100_000, &mut rng)).collect();
        assert!(sizes.iter().any(|&n| n < 10));
        assert!(sizes.iter().any(|&n| n > 30_000));
        assert!(sizes.iter().all(|&n| (1..=100_000).contains(&n)));
    }
}
