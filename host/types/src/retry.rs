//! Retry policies (#45): what a timer asked for with `retries=` and
//! `retry_backoff=`, where it stands, and when its next attempt is due.
//!
//! The backoff doubles per retry: retry `n` (from 1) is due `backoff ×
//! 2^(n−1)` after the failed fire — blocks for a height timer or a watch,
//! seconds for a time timer.

use borsh::{BorshDeserialize, BorshSerialize};

/// A timer's retry policy and the attempts it has used.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct RetryPolicy {
    /// Most retries after the first fire.
    pub retries: u32,
    /// Delay before the first retry (blocks, or seconds for a time timer).
    pub backoff: u64,
    /// Failed fires so far (0 until the first fire fails).
    pub failures: u32,
    /// The sequence number of the schedule its fee payer consented to:
    /// `revoke_timer_payments` judges every retry by it, so revoking a
    /// schedule revokes its retries too.
    pub consent_seq: u64,
}

impl RetryPolicy {
    /// Does the policy allow another fire now that `failures` fires have
    /// failed (the first fire and `failures − 1` retries)?
    pub fn has_retry_left(&self) -> bool {
        self.failures <= self.retries
    }

    /// The delay before retry `attempt` (from 1): `backoff × 2^(attempt−1)`,
    /// saturating.
    pub fn delay(&self, attempt: u32) -> u64 {
        let shift = attempt.saturating_sub(1);
        if shift >= 64 {
            return u64::MAX;
        }
        self.backoff
            .saturating_mul(1u64.checked_shl(shift).unwrap_or(u64::MAX))
    }

    /// The sum of every delay the policy can wait, saturating: how far past
    /// its first due point its last retry can be.
    pub fn total_delay(&self) -> u64 {
        (1..=self.retries).fold(0u64, |sum, n| sum.saturating_add(self.delay(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(retries: u32, backoff: u64) -> RetryPolicy {
        RetryPolicy {
            retries,
            backoff,
            failures: 0,
            consent_seq: 0,
        }
    }

    #[test]
    fn the_backoff_doubles_per_retry_and_saturates() {
        let p = policy(4, 3);
        assert_eq!(
            (1..=4).map(|n| p.delay(n)).collect::<Vec<_>>(),
            [3, 6, 12, 24]
        );
        assert_eq!(p.total_delay(), 45);
        assert_eq!(policy(32, u64::MAX / 2).delay(32), u64::MAX);
        assert_eq!(policy(32, u64::MAX).total_delay(), u64::MAX);
    }

    #[test]
    fn retries_run_out_after_the_policy_s_count() {
        let mut p = policy(2, 1);
        p.failures = 1;
        assert!(p.has_retry_left());
        p.failures = 2;
        assert!(p.has_retry_left());
        p.failures = 3;
        assert!(!p.has_retry_left());
    }
}
