//! What a validator's consensus does, as counters and gauges the node
//! serves with its other metrics (`consensus_*` in docs/RPC.md, "Metrics").

use std::sync::atomic::{AtomicU64, Ordering};

/// Consensus metrics, updated by the app loop and the engine's events.
#[derive(Debug, Default)]
pub struct ConsensusMetrics {
    /// Height being decided.
    pub height: AtomicU64,
    /// Round of that height.
    pub round: AtomicU64,
    /// Connected peers.
    pub peers: AtomicU64,
    /// Blocks this node proposed.
    pub proposals_made: AtomicU64,
    /// Proposals received whole and signed by their proposer.
    pub proposals_received: AtomicU64,
    /// Proposals received and refused on execution (wrong root, bad tx, …).
    pub proposals_refused: AtomicU64,
    /// Proposals refused as equivocation: a second, different block from a
    /// proposer for a (height, round) it already proposed at, neither
    /// executed nor kept.
    pub equivocations: AtomicU64,
    /// Votes this node signed and published.
    pub votes_published: AtomicU64,
    /// Votes received from peers.
    pub votes_received: AtomicU64,
    /// Blocks taken from peers by sync.
    pub blocks_synced: AtomicU64,
    /// Milliseconds from the start of the last committed height to its commit.
    pub commit_latency_ms: AtomicU64,
    /// Heights that needed more than one round.
    pub heights_with_extra_rounds: AtomicU64,
    /// Validators in the set of the height being decided (#32).
    pub validators: AtomicU64,
    /// 1 while this node's key is in that set (it votes), else 0.
    pub in_validator_set: AtomicU64,
    /// Heights at which the validator set changed since the node started.
    pub validator_set_changes: AtomicU64,
}

impl ConsensusMetrics {
    /// Sets a gauge.
    pub fn set(gauge: &AtomicU64, v: u64) {
        gauge.store(v, Ordering::Relaxed);
    }

    /// Adds one to a counter.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The metrics as (name, help, kind, value), for the exposition format.
    pub fn samples(&self) -> Vec<(&'static str, &'static str, &'static str, u64)> {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        vec![
            (
                "consensus_height",
                "Height being decided.",
                "gauge",
                g(&self.height),
            ),
            (
                "consensus_round",
                "Round of the height being decided.",
                "gauge",
                g(&self.round),
            ),
            (
                "consensus_peers",
                "Connected peers.",
                "gauge",
                g(&self.peers),
            ),
            (
                "consensus_proposals_made_total",
                "Blocks this node proposed.",
                "counter",
                g(&self.proposals_made),
            ),
            (
                "consensus_proposals_received_total",
                "Proposals received whole and signed.",
                "counter",
                g(&self.proposals_received),
            ),
            (
                "consensus_proposals_refused_total",
                "Proposals refused on execution.",
                "counter",
                g(&self.proposals_refused),
            ),
            (
                "consensus_equivocations_total",
                "Second, different proposals from a proposer for one height and round, refused unexecuted.",
                "counter",
                g(&self.equivocations),
            ),
            (
                "consensus_votes_published_total",
                "Votes this node signed and published.",
                "counter",
                g(&self.votes_published),
            ),
            (
                "consensus_votes_received_total",
                "Votes received from peers.",
                "counter",
                g(&self.votes_received),
            ),
            (
                "consensus_blocks_synced_total",
                "Blocks taken from peers by sync.",
                "counter",
                g(&self.blocks_synced),
            ),
            (
                "consensus_commit_latency_ms",
                "Milliseconds from the start of the last committed height to its commit.",
                "gauge",
                g(&self.commit_latency_ms),
            ),
            (
                "consensus_heights_with_extra_rounds_total",
                "Heights that needed more than one round.",
                "counter",
                g(&self.heights_with_extra_rounds),
            ),
            (
                "consensus_validators",
                "Validators in the set of the height being decided.",
                "gauge",
                g(&self.validators),
            ),
            (
                "consensus_in_validator_set",
                "1 while this node's key is in that set (it votes), else 0.",
                "gauge",
                g(&self.in_validator_set),
            ),
            (
                "consensus_validator_set_changes_total",
                "Heights at which the validator set changed since the node started.",
                "counter",
                g(&self.validator_set_changes),
            ),
        ]
    }
}
