//! Block heights as the engine counts them: block 0 is genesis, so the
//! engine starts at height 1.

use std::fmt;

use borsh::{BorshDeserialize, BorshSerialize};

/// A block height.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    BorshSerialize,
    BorshDeserialize,
)]
pub struct Height(pub u64);

impl fmt::Display for Height {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl malachitebft_core_types::Height for Height {
    const ZERO: Self = Height(0);
    const INITIAL: Self = Height(1);

    fn increment_by(&self, n: u64) -> Self {
        Height(self.0.saturating_add(n))
    }

    fn decrement_by(&self, n: u64) -> Option<Self> {
        self.0.checked_sub(n).map(Height)
    }

    fn as_u64(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use malachitebft_core_types::Height as _;

    #[test]
    fn heights_count_from_one_after_genesis() {
        assert_eq!(Height::INITIAL, Height(1));
        assert_eq!(Height(5).increment(), Height(6));
        assert_eq!(Height(0).decrement(), None);
        assert_eq!(Height(7).decrement_by(2), Some(Height(5)));
    }
}
