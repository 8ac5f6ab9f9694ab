//! Blocks and block headers, and the binary Merkle root used for the
//! transaction and receipt roots.

use borsh::{BorshDeserialize, BorshSerialize};
use serde::{Deserialize, Serialize};

use crate::encoding::{self, Canonical};
use crate::primitives::{keccak256, keccak256_concat, Address, Hash};
use crate::tx::SignedTransaction;

/// A block header. Its hash (`keccak256` of its canonical encoding) is the block hash.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize, Serialize, Deserialize)]
pub struct BlockHeader {
    /// Chain id, so headers of different chains never collide.
    pub chain_id: u64,
    /// Height; genesis is 0.
    pub height: u64,
    /// Unix milliseconds, strictly greater than the parent's (#17: time
    /// timers are due in the first block whose timestamp reaches theirs).
    pub timestamp_ms: u64,
    /// Who produced the block (receives tips).
    pub proposer: Address,
    /// Hash of the parent header (zero for genesis).
    pub parent_hash: Hash,
    /// Merkle root of the transaction hashes.
    pub tx_root: Hash,
    /// State root after executing this block.
    pub state_root: Hash,
    /// Merkle root of the receipt hashes (user and deferred receipts, in order).
    pub receipts_root: Hash,
    /// Cycles used by the whole block (transactions and deferred work).
    pub cycles_used: u64,
    /// Cells used by the whole block.
    pub cells_used: u64,
    /// The timer lane's basefee in force for this block (#31, CIP-1 v3
    /// Part III): charged per handler cycle of every fire under `market`
    /// ordering; at its floor, and charged to nobody, under the others.
    pub lane_basefee: u64,
}

impl Canonical for BlockHeader {
    const NAME: &'static str = "block header";
}

impl BlockHeader {
    /// The block hash.
    pub fn hash(&self) -> Hash {
        keccak256(&encoding::encode(self))
    }
}

/// A block: header plus the user transactions it includes.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Block {
    /// The header.
    pub header: BlockHeader,
    /// User transactions in execution order.
    pub txs: Vec<SignedTransaction>,
}

impl Canonical for Block {
    const NAME: &'static str = "block";
}

/// Binary Merkle root over `leaves`: pairs are hashed as
/// `keccak256(0x01 ‖ left ‖ right)`, leaves as `keccak256(0x00 ‖ leaf)` (domain
/// separation prevents second-preimage tricks), an odd node is promoted as is,
/// and the root of no leaves is the zero hash.
pub fn merkle_root(leaves: &[Hash]) -> Hash {
    if leaves.is_empty() {
        return Hash::ZERO;
    }
    let mut level: Vec<Hash> = leaves
        .iter()
        .map(|l| keccak256_concat(&[&[0u8], l.as_bytes()]))
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|pair| match pair {
                [l, r] => keccak256_concat(&[&[1u8], l.as_bytes(), r.as_bytes()]),
                [single] => *single,
                _ => unreachable!("chunks(2) yields one or two items"),
            })
            .collect();
    }
    level[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merkle_root_properties() {
        assert_eq!(merkle_root(&[]), Hash::ZERO);
        let a = keccak256(b"a");
        let b = keccak256(b"b");
        let c = keccak256(b"c");
        assert_ne!(merkle_root(&[a]), a, "leaves are domain-separated");
        assert_ne!(merkle_root(&[a, b]), merkle_root(&[b, a]));
        assert_ne!(merkle_root(&[a, b, c]), merkle_root(&[a, b]));
        assert_eq!(merkle_root(&[a, b, c]), merkle_root(&[a, b, c]));
    }

    #[test]
    fn header_round_trip_and_hash_changes() {
        let h = BlockHeader {
            chain_id: 1,
            height: 5,
            timestamp_ms: 100,
            proposer: Address([1; 20]),
            parent_hash: keccak256(b"p"),
            tx_root: Hash::ZERO,
            state_root: keccak256(b"s"),
            receipts_root: Hash::ZERO,
            cycles_used: 3,
            cells_used: 4,
            lane_basefee: 100,
        };
        let bytes = encoding::encode(&h);
        assert_eq!(encoding::decode::<BlockHeader>(&bytes).unwrap(), h);
        let mut h2 = h.clone();
        h2.timestamp_ms += 1;
        assert_ne!(h.hash(), h2.hash());
    }
}
