//! [`StoredHeader`]: a block's header and transaction count, kept apart
//! from the block (`h ‖ height`, store format 10) and for every height —
//! pruning removes blocks, receipts and events, never headers — so the
//! head, the dashboard's timeline and the search for when a time timer was
//! due read a few hundred bytes per block.

use timerhost_types::encoding::Canonical;
use timerhost_types::BlockHeader;

/// A block's header and how many transactions it holds, stored apart from
/// the block (`h ‖ height`).
#[derive(Clone, Debug, PartialEq, Eq, borsh::BorshSerialize, borsh::BorshDeserialize)]
pub struct StoredHeader {
    /// The header.
    pub header: BlockHeader,
    /// Transactions in the block.
    pub tx_count: u32,
}

impl Canonical for StoredHeader {
    const NAME: &'static str = "block header";
}
