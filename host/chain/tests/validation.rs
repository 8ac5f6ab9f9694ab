//! Every reason a transaction is rejected, each with an error that names the
//! problem, and the guarantee that a rejected transaction changes nothing.

use timerhost_chain::testing::{dev_builders, dev_chain, TxBuilder};
use timerhost_chain::validation::decode_tx;
use timerhost_chain::{ChainError, TxError};
use timerhost_types::{
    dev_account_key, Address, BasefeeConfig, PrivateKey, SignedTransaction, DEV_CHAIN_ID,
    MAX_TX_BYTES,
};

/// The dev genesis timestamp, in unix ms (block timestamps are ms).
const T: u64 = 1_767_225_600_000;

fn rejected(
    chain: &timerhost_chain::Chain<timerhost_state::MemoryBackend>,
    tx: &SignedTransaction,
) -> TxError {
    match chain.check_tx(tx) {
        Err(ChainError::Tx(e)) => {
            // Block building skips it with the same error and changes nothing for the sender.
            let sender = tx.recover_sender().ok();
            let before = sender.map(|s| chain.account(&s).unwrap());
            let proposed = chain
                .produce_block(
                    std::slice::from_ref(tx),
                    chain.head().unwrap().timestamp_ms + 1,
                    Address([0xee; 20]),
                )
                .unwrap();
            assert_eq!(
                proposed.rejected.len(),
                1,
                "block building must skip the invalid tx"
            );
            assert_eq!(
                proposed.rejected[0].2, e,
                "same error at admission and at inclusion"
            );
            assert!(proposed.executed.block.txs.is_empty());
            if let (Some(s), Some(before)) = (sender, before) {
                assert_eq!(
                    chain.account(&s).unwrap(),
                    before,
                    "a rejected tx must not change its sender"
                );
            }
            e
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
}

#[test]
fn malformed_encoding_is_named() {
    let e = decode_tx(&[1, 2, 3]).unwrap_err();
    assert!(matches!(e, TxError::Malformed(_)));
    assert!(e.to_string().starts_with("malformed transaction"), "{e}");
}

#[test]
fn unknown_transaction_kind_is_named() {
    let mut b = dev_builders().remove(0);
    let mut bytes = b.transfer(Address([1; 20]), 1).to_bytes();
    bytes[81] = 200;
    let e = decode_tx(&bytes).unwrap_err().to_string();
    assert!(e.contains("unknown transaction kind tag 200"), "{e}");
}

#[test]
fn oversized_transaction_is_rejected_before_decoding() {
    let e = decode_tx(&vec![0u8; MAX_TX_BYTES + 1]).unwrap_err();
    assert!(matches!(e, TxError::TooLarge { .. }), "{e}");
}

#[test]
fn bad_signature() {
    let chain = dev_chain();
    let mut tx = dev_builders()[0].clone().transfer(Address([1; 20]), 1);
    tx.signature[64] = 9;
    let e = rejected(&chain, &tx);
    assert!(matches!(e, TxError::BadSignature(_)), "{e}");
    assert!(e.to_string().contains("recovery id"), "{e}");
}

#[test]
fn wrong_chain_id() {
    let chain = dev_chain();
    let mut b = TxBuilder::new(dev_account_key(0), 42);
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert_eq!(
        e,
        TxError::WrongChainId {
            expected: DEV_CHAIN_ID,
            got: 42
        }
    );
    assert_eq!(
        e.to_string(),
        "wrong chain id: transaction is for chain 42, this chain is 1337"
    );
}

#[test]
fn nonce_too_low_and_too_high() {
    let chain = dev_chain();
    let mut b = dev_builders().remove(1);
    chain
        .produce_block(&[b.transfer(Address([1; 20]), 1)], T + 1, Address::ZERO)
        .unwrap();
    b.nonce = 0;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::NonceTooLow {
                expected: 1,
                got: 0,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("nonce too low"), "{e}");
    b.nonce = 5;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::NonceTooHigh {
                expected: 1,
                got: 5,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn insufficient_balance_for_max_fee_and_value() {
    let chain = dev_chain();
    let mut b = dev_builders().remove(2);
    let balance = chain.account(&b.address()).unwrap().balance;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), balance));
    match &e {
        TxError::InsufficientBalance {
            available,
            value,
            fee,
            required,
            ..
        } => {
            assert_eq!(*available, balance);
            assert_eq!(*value, balance);
            assert_eq!(*required, fee + value);
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("insufficient balance"), "{e}");
    // An unfunded key cannot pay even the fee.
    let mut poor = TxBuilder::new(PrivateKey::from_bytes(&[7u8; 32]).unwrap(), DEV_CHAIN_ID);
    assert!(matches!(
        rejected(&chain, &poor.transfer(Address([1; 20]), 0)),
        TxError::InsufficientBalance { available: 0, .. }
    ));
}

#[test]
fn fee_cap_below_basefee() {
    let chain = dev_chain();
    let mut b = dev_builders().remove(0);
    b.max_fee_per_cycle = 10;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::FeeCapBelowBasefee {
                dimension: "cycle",
                ..
            }
        ),
        "{e}"
    );
    let mut b = dev_builders().remove(0);
    b.max_fee_per_cell = 10;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::FeeCapBelowBasefee {
                dimension: "cell",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn limits_above_block_limits() {
    let chain = dev_chain();
    let cfg = BasefeeConfig::default();
    let mut b = dev_builders().remove(0);
    b.cycles_limit = cfg.max_block_cycles + 1;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::LimitAboveBlockLimit {
                dimension: "cycles",
                ..
            }
        ),
        "{e}"
    );
    let mut b = dev_builders().remove(0);
    b.cells_limit = cfg.max_block_cells + 1;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::LimitAboveBlockLimit {
                dimension: "cells",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn limits_below_intrinsic_cost() {
    let chain = dev_chain();
    let mut b = dev_builders().remove(0);
    b.cycles_limit = 10;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::LimitBelowIntrinsic {
                dimension: "cycles",
                ..
            }
        ),
        "{e}"
    );
    let mut b = dev_builders().remove(0);
    b.cells_limit = 10;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(
        matches!(
            e,
            TxError::LimitBelowIntrinsic {
                dimension: "cells",
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn block_full_when_limits_exceed_remaining_room() {
    use timerhost_types::Value;
    let chain = dev_chain();
    let cfg = BasefeeConfig::default();
    let mut builders = dev_builders();
    let deploy = builders[0].deploy("mock", vec![], 0);
    let actor = chain
        .produce_block(&[deploy], T + 1, Address::ZERO)
        .unwrap()
        .executed
        .receipts[0]
        .created_actor
        .unwrap();
    // Block limits bound cycles *used*: a tx is admitted if its limit fits in what is left.
    let burn = cfg.max_block_cycles * 6 / 10;
    let mut heavy = |i: usize| {
        let b = &mut builders[i];
        b.cycles_limit = burn + 10_000;
        b.call(actor, "burn", vec![Value::int(burn)], 0)
    };
    let txs = vec![heavy(1), heavy(2)];
    let proposed = chain.produce_block(&txs, T + 2, Address::ZERO).unwrap();
    assert_eq!(proposed.executed.block.txs.len(), 1);
    assert!(proposed.executed.receipts[0].is_success());
    let e = &proposed.rejected[0].2;
    assert!(
        matches!(
            e,
            TxError::BlockFull {
                dimension: "cycles",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().starts_with("block is full"), "{e}");
}

#[test]
fn system_instruction_from_outsider_is_rejected() {
    let chain = dev_chain();
    let mut outsider = dev_builders().remove(3);
    let e = rejected(&chain, &outsider.update_basefee(BasefeeConfig::default()));
    assert!(matches!(e, TxError::NotGovernance { .. }), "{e}");
    assert!(e.to_string().contains("not in system_deployers"), "{e}");
}

#[test]
fn invalid_governance_config_is_rejected() {
    let chain = dev_chain();
    let mut gov = dev_builders().remove(0);
    let e = rejected(
        &chain,
        &gov.update_basefee(BasefeeConfig {
            min_cell_basefee: 0,
            ..Default::default()
        }),
    );
    assert!(e.to_string().contains("min_cell_basefee"), "{e}");
}

#[test]
fn fee_overflow_is_rejected() {
    let chain = dev_chain();
    let mut b = dev_builders().remove(0);
    b.max_fee_per_cycle = u128::MAX;
    let e = rejected(&chain, &b.transfer(Address([1; 20]), 1));
    assert!(matches!(e, TxError::FeeOverflow(_)), "{e}");
}

#[test]
fn transfer_to_zero_address_is_rejected() {
    let chain = dev_chain();
    let e = rejected(
        &chain,
        &dev_builders()[0].clone().transfer(Address::ZERO, 1),
    );
    assert!(
        matches!(e, TxError::InvalidField { field: "to", .. }),
        "{e}"
    );
}

#[test]
fn dev_keys_are_refused_on_non_dev_chains() {
    use std::sync::Arc;
    use timerhost_chain::testing::MockRuntime;
    use timerhost_chain::{Chain, NoHooks};
    use timerhost_types::{Genesis, GenesisAccount};
    let real = PrivateKey::from_bytes(&[9u8; 32]).unwrap();
    let mut genesis = Genesis::dev();
    genesis.chain_id = 77;
    genesis.system_deployers = vec![real.address()];
    genesis.accounts = vec![GenesisAccount {
        address: real.address(),
        balance: 10u128.pow(24),
    }];
    let chain = Chain::open(
        timerhost_state::MemoryBackend::new(),
        genesis,
        Arc::new(MockRuntime),
        Arc::new(NoHooks),
    )
    .unwrap();
    let mut dev = TxBuilder::new(dev_account_key(0), 77);
    let e = rejected(&chain, &dev.transfer(Address([1; 20]), 0));
    assert!(matches!(e, TxError::DevKeyOnNonDevChain { .. }), "{e}");
    let mut ok = TxBuilder::new(real, 77);
    chain.check_tx(&ok.transfer(Address([1; 20]), 5)).unwrap();
}
