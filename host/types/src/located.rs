//! Located transaction hashes (#46): a deferred transaction's hash (a
//! timer's fire, an end-of-block hook's call) that names where its receipt
//! is, so that no transaction-index entry is written per fire.
//!
//! Under upgrade `located-fire-hashes` a deferred transaction's hash is its
//! keccak hash with the first 8 bytes replaced by the block height and the
//! next 4 by the receipt's index in the block (both big-endian). 20 bytes
//! of keccak remain. Any 32 bytes decode to a place; only a receipt at that
//! place carrying exactly this hash proves the hash located, so an ordinary
//! hash that happens to decode to a real place is never mistaken for one.

use crate::primitives::Hash;

/// Bytes of a located hash that name the block height.
const HEIGHT_BYTES: usize = 8;
/// Bytes after the height that name the receipt's index in the block.
const INDEX_BYTES: usize = 4;

/// `hash` located at receipt `index` of block `height`.
pub fn located_tx_hash(hash: Hash, height: u64, index: u32) -> Hash {
    let mut bytes = hash.0;
    bytes[..HEIGHT_BYTES].copy_from_slice(&height.to_be_bytes());
    bytes[HEIGHT_BYTES..HEIGHT_BYTES + INDEX_BYTES].copy_from_slice(&index.to_be_bytes());
    Hash(bytes)
}

/// The place (height, receipt index) `hash` names if it is located.
pub fn named_place(hash: &Hash) -> (u64, u32) {
    let mut height = [0u8; HEIGHT_BYTES];
    height.copy_from_slice(&hash.0[..HEIGHT_BYTES]);
    let mut index = [0u8; INDEX_BYTES];
    index.copy_from_slice(&hash.0[HEIGHT_BYTES..HEIGHT_BYTES + INDEX_BYTES]);
    (u64::from_be_bytes(height), u32::from_be_bytes(index))
}

/// Does `hash` name receipt `index` of block `height`?
pub fn names_place(hash: &Hash, height: u64, index: u32) -> bool {
    named_place(hash) == (height, index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_located_hash_names_its_place_and_keeps_the_rest_of_its_hash() {
        let inner = Hash([0xab; 32]);
        let h = located_tx_hash(inner, 0x0102_0304_0506_0708, 0x0a0b_0c0d);
        assert_eq!(named_place(&h), (0x0102_0304_0506_0708, 0x0a0b_0c0d));
        assert!(names_place(&h, 0x0102_0304_0506_0708, 0x0a0b_0c0d));
        assert!(!names_place(&h, 0x0102_0304_0506_0708, 0x0a0b_0c0e));
        assert_eq!(h.0[12..], inner.0[12..]);
    }
}
