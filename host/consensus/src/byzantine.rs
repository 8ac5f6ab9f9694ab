//! A test hook: a validator that proposes bad blocks on purpose, so the
//! end-to-end tests can show honest validators refuse them and the network
//! carries on. Off unless `timerhost node --byzantine-proposer MODE` is
//! given (a hidden flag); it changes only the blocks this node proposes.

use timerhost_chain::testing::TxBuilder;
use timerhost_types::{merkle_root, Address, Block, Hash, PrivateKey};

/// How a byzantine proposer corrupts its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByzantineMode {
    /// The header claims a state root execution does not produce.
    WrongStateRoot,
    /// The block carries a transaction no honest proposer would include
    /// (a transfer from an account without funds); the header's roots are
    /// recomputed so only the transaction is wrong.
    BadTransaction,
}

impl std::str::FromStr for ByzantineMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "wrong-state-root" => Ok(ByzantineMode::WrongStateRoot),
            "bad-transaction" => Ok(ByzantineMode::BadTransaction),
            other => Err(format!(
                "unknown byzantine mode {other:?}: use wrong-state-root or bad-transaction"
            )),
        }
    }
}

impl ByzantineMode {
    /// Corrupts an honestly built block.
    pub fn corrupt(self, block: &mut Block) {
        match self {
            ByzantineMode::WrongStateRoot => {
                block.header.state_root = Hash([0xbb; 32]);
            }
            ByzantineMode::BadTransaction => {
                let key = PrivateKey::from_bytes(&[0x5a; 32]).expect("valid scalar");
                let mut pauper = TxBuilder::new(key, block.header.chain_id);
                block
                    .txs
                    .push(pauper.transfer(Address([0xee; 20]), 1_000_000));
                let hashes: Vec<Hash> = block.txs.iter().map(|t| t.hash()).collect();
                block.header.tx_root = merkle_root(&hashes);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_chain::testing::dev_chain;
    use timerhost_chain::{BlockError, ChainError};

    #[test]
    fn every_corruption_is_refused_by_an_honest_validator_and_named() {
        let proposer = dev_chain();
        let honest = dev_chain();
        let parent = proposer.head().unwrap().timestamp_ms;
        let block = proposer
            .propose(&[], parent + 1_000, Address::ZERO)
            .unwrap()
            .executed
            .block;
        honest.execute(&block).expect("the honest block executes");
        for (mode, expect) in [
            (ByzantineMode::WrongStateRoot, "state_root"),
            (ByzantineMode::BadTransaction, "insufficient balance"),
        ] {
            let mut bad = block.clone();
            mode.corrupt(&mut bad);
            assert_ne!(bad.header.hash(), block.header.hash());
            let e = honest.execute(&bad).unwrap_err();
            match (&mode, &e) {
                (
                    ByzantineMode::WrongStateRoot,
                    ChainError::Block(BlockError::StateRootMismatch { .. }),
                )
                | (
                    ByzantineMode::BadTransaction,
                    ChainError::Block(BlockError::InvalidTx { .. }),
                ) => {}
                _ => panic!("{mode:?} refused for the wrong reason: {e}"),
            }
            assert!(e.to_string().contains(expect), "{e}");
        }
        assert_eq!(
            "bad-transaction".parse::<ByzantineMode>(),
            Ok(ByzantineMode::BadTransaction)
        );
        assert!("nice"
            .parse::<ByzantineMode>()
            .unwrap_err()
            .contains("wrong-state-root"));
    }
}
