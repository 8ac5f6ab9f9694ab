//! `timerhost load --find-max` (#46): the capacity of a node or a network
//! as one command. Runs of `--duration` at rising rates: the rate doubles
//! from `--rate` while each run *holds* — every transaction sent is
//! accepted and committed (none refused, e.g. by a full mempool, none lost)
//! and p99 stays within `--p99` — then bisects between the last rate that held and the first
//! that did not, until they are within [`RESOLUTION`] of each other. The
//! answer is the highest rate that held (`None` if even the first did not).
//! Each run after the first starts once every node's mempool is empty (at
//! most [`SETTLE_TIMEOUT`]), so an overloaded run's backlog neither weighs
//! on the next nor fills its set-up's mempool.

/// The search stops once the rate that failed is within this factor of the
/// rate that held.
pub const RESOLUTION: f64 = 1.1;

/// Longest wait for the mempools to empty between two runs.
pub const SETTLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// What one run at a rate gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The rate sent (tx/s).
    pub rate: u64,
    /// Committed per second.
    pub committed_tps: f64,
    /// p99 latency, ms.
    pub p99_ms: f64,
    /// Sent transactions not committed (refused or lost).
    pub uncommitted: usize,
    /// Did it hold?
    pub held: bool,
}

impl Step {
    /// Judges a run against the p99 bound. (Committed per second is
    /// reported, not judged: over a short run it is diluted by the wait
    /// for the last block, whatever the node's capacity.)
    pub fn judge(
        rate: u64,
        committed_tps: f64,
        p99_ms: f64,
        uncommitted: usize,
        p99_bound_ms: f64,
    ) -> Step {
        let held = uncommitted == 0 && p99_ms <= p99_bound_ms;
        Step {
            rate,
            committed_tps,
            p99_ms,
            uncommitted,
            held,
        }
    }
}

/// The search's state.
#[derive(Clone, Debug)]
pub struct Search {
    held: Option<u64>,
    failed: Option<u64>,
    max_rate: u64,
    next: Option<u64>,
}

impl Search {
    /// Starts at `start` tx/s, never above `max_rate`.
    pub fn new(start: u64, max_rate: u64) -> Search {
        Search {
            held: None,
            failed: None,
            max_rate,
            next: Some(start.clamp(1, max_rate.max(1))),
        }
    }

    /// The next rate to run, if any.
    pub fn next_rate(&self) -> Option<u64> {
        self.next
    }

    /// Records the run at the last rate given.
    pub fn record(&mut self, step: &Step) {
        if step.held {
            self.held = Some(self.held.map_or(step.rate, |h| h.max(step.rate)));
        } else {
            self.failed = Some(self.failed.map_or(step.rate, |f| f.min(step.rate)));
        }
        self.next = match (self.held, self.failed) {
            // Nothing held yet: halve, down to 1 tx/s.
            (None, Some(failed)) => (failed > 1).then_some(failed / 2),
            (Some(held), None) => (held < self.max_rate).then(|| (held * 2).min(self.max_rate)),
            (Some(held), Some(failed)) => {
                let mid = held + (failed - held) / 2;
                (failed as f64 > held as f64 * RESOLUTION && mid > held && mid < failed)
                    .then_some(mid)
            }
            (None, None) => self.next,
        };
    }

    /// The highest rate that held.
    pub fn best(&self) -> Option<u64> {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Searches a node that holds exactly up to `capacity` tx/s.
    fn search(start: u64, max_rate: u64, capacity: u64) -> (Option<u64>, Vec<u64>) {
        let mut s = Search::new(start, max_rate);
        let mut tried = Vec::new();
        while let Some(rate) = s.next_rate() {
            tried.push(rate);
            assert!(tried.len() < 40, "{tried:?}");
            let ok = rate <= capacity;
            let p99 = if ok { 200.0 } else { 5_000.0 };
            s.record(&Step::judge(rate, rate as f64, p99, 0, 1_000.0));
        }
        (s.best(), tried)
    }

    #[test]
    fn the_search_finds_the_capacity_within_its_resolution() {
        for (start, capacity) in [(1_000, 7_300), (100, 100_000), (5_000, 2_600), (1, 1)] {
            let (best, tried) = search(start, 1_000_000, capacity);
            let best = best.unwrap();
            assert!(best <= capacity, "{start} {capacity}: {best} {tried:?}");
            assert!(
                best as f64 * RESOLUTION * 1.01 >= capacity as f64,
                "{start} {capacity}: {best} {tried:?}"
            );
        }
    }

    #[test]
    fn the_cap_and_a_node_that_holds_nothing_end_the_search() {
        let (best, tried) = search(1_000, 4_000, 1_000_000);
        assert_eq!(best, Some(4_000));
        assert_eq!(tried.last(), Some(&4_000));
        let (best, _) = search(1_000, 1_000_000, 0);
        assert_eq!(best, None);
    }

    #[test]
    fn a_run_that_refuses_loses_or_waits_does_not_hold() {
        assert!(Step::judge(1_000, 800.0, 900.0, 0, 1_000.0).held);
        assert!(!Step::judge(1_000, 1_000.0, 900.0, 1, 1_000.0).held);
        assert!(!Step::judge(1_000, 1_000.0, 1_100.0, 0, 1_000.0).held);
    }
}
