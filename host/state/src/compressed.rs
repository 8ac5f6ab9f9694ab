//! History records stored compressed (#46): a block's receipts record (`R`)
//! and its event chunks (`V`).
//!
//! A block of 20,000 timer fires stores ~12 MB of events and ~4.6 MB of
//! receipts, and sled's cost for a batch follows its bytes (it logs every
//! value and copies a leaf whole when one of its keys changes). Those
//! records repeat themselves — every `TimerFired` carries the same
//! twenty-one field names, hex addresses, the same handler — so LZ4 (fast
//! enough to cost far less than the bytes it saves) shrinks them several
//! times over. The block's hashes are untouched: receipts are hashed in
//! their canonical encoding, before they reach the store.
//!
//! A stored record is its [`Canonical`] encoding (`VERSION ‖ borsh`, as
//! before format 13) or, since format 13, [`LZ4_TAG`] `‖ size (u32 LE) ‖
//! LZ4 block of borsh`. Readers take both, so a store migrated from an
//! older format keeps its records as they are.

use timerhost_types::encoding::{self, Canonical};

/// The first byte of a compressed record. The types stored so are at
/// `Canonical::VERSION` 1, so a record's first byte tells the two forms apart.
pub const LZ4_TAG: u8 = 0x80;

/// Most bytes LZ4 can expand one input byte into (a run of one repeated
/// byte). A stored size beyond `255 ×` its compressed bytes is corruption,
/// refused before anything is allocated for it.
const LZ4_MAX_RATIO: usize = 255;

/// Stores `body`, the borsh encoding of a `T`, compressed; bodies past
/// `u32::MAX` bytes (LZ4's size prefix) are stored in the plain form.
pub(crate) fn encode_body<T: Canonical>(body: &[u8]) -> Vec<u8> {
    const {
        assert!(
            T::VERSION != LZ4_TAG,
            "a version must not read as the LZ4 tag"
        )
    };
    if u32::try_from(body.len()).is_err() {
        let mut out = Vec::with_capacity(body.len() + 1);
        out.push(T::VERSION);
        out.extend_from_slice(body);
        return out;
    }
    let compressed = lz4_flex::block::compress_prepend_size(body);
    let mut out = Vec::with_capacity(compressed.len() + 1);
    out.push(LZ4_TAG);
    out.extend_from_slice(&compressed);
    out
}

/// Stores `value` compressed ([`encode_body`] of its borsh encoding).
pub(crate) fn encode<T: Canonical>(value: &T) -> Vec<u8> {
    encode_body::<T>(&borsh::to_vec(value).expect("writing to a Vec<u8> cannot fail"))
}

/// Reads a record stored by [`encode`] or by [`encoding::encode`]; the
/// error says what was wrong with it.
pub(crate) fn decode<T: Canonical>(bytes: &[u8]) -> Result<T, String> {
    let Some((&LZ4_TAG, compressed)) = bytes.split_first() else {
        return encoding::decode(bytes).map_err(|e| e.to_string());
    };
    let (size, block) = lz4_flex::block::uncompressed_size(compressed)
        .map_err(|e| format!("compressed {}: {e}", T::NAME))?;
    if size > block.len().saturating_mul(LZ4_MAX_RATIO) {
        return Err(format!(
            "compressed {} claims {size} bytes from {}, more than LZ4 can expand",
            T::NAME,
            block.len()
        ));
    }
    let mut body = vec![0u8; size];
    let written = lz4_flex::block::decompress_into(block, &mut body)
        .map_err(|e| format!("compressed {}: {e}", T::NAME))?;
    if written != size {
        return Err(format!(
            "compressed {} holds {written} bytes, its size says {size}",
            T::NAME
        ));
    }
    T::try_from_slice(&body).map_err(|e| format!("malformed {}: {e}", T::NAME))
}

#[cfg(test)]
mod tests {
    use borsh::{BorshDeserialize, BorshSerialize};

    use super::*;

    #[derive(Debug, PartialEq, BorshSerialize, BorshDeserialize)]
    struct Record(Vec<String>);

    impl Canonical for Record {
        const NAME: &'static str = "test record";
    }

    fn record() -> Record {
        Record((0..200).map(|i| format!("field_{}", i % 7)).collect())
    }

    #[test]
    fn a_compressed_record_reads_back_and_is_smaller() {
        let value = record();
        let stored = encode(&value);
        assert_eq!(stored[0], LZ4_TAG);
        assert!(
            stored.len() * 4 < encoding::encode(&value).len(),
            "{}",
            stored.len()
        );
        assert_eq!(decode::<Record>(&stored).unwrap(), value);
    }

    #[test]
    fn a_record_stored_before_compression_still_reads() {
        let value = record();
        assert_eq!(decode::<Record>(&encoding::encode(&value)).unwrap(), value);
    }

    #[test]
    fn corrupt_compressed_records_are_refused_by_what_is_wrong() {
        let stored = encode(&record());
        // A size no LZ4 block of this length can expand to: refused before
        // allocating it.
        let mut huge = stored.clone();
        huge[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        let err = decode::<Record>(&huge).unwrap_err();
        assert!(err.contains("more than LZ4 can expand"), "{err}");
        // Cut short.
        let err = decode::<Record>(&stored[..stored.len() - 3]).unwrap_err();
        assert!(err.contains("compressed test record"), "{err}");
        // Too short for a size.
        let err = decode::<Record>(&[LZ4_TAG, 1]).unwrap_err();
        assert!(err.contains("compressed test record"), "{err}");
        // A size smaller than what the block holds.
        let mut short = stored.clone();
        short[1..5].copy_from_slice(&10u32.to_le_bytes());
        assert!(decode::<Record>(&short).is_err());
        // Valid LZ4 of bytes that are not a record.
        let err = decode::<Record>(&encode_body::<Record>(&[7, 0, 0, 0, 1])).unwrap_err();
        assert!(err.contains("malformed test record"), "{err}");
    }
}
