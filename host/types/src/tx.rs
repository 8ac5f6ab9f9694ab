//! Transactions: the signed [`Transaction`] envelope, its [`TxKind`]s and the
//! governance [`SystemInstruction`]s.
//!
//! The signing digest is `keccak256("timerhost/tx/v1" ‖ borsh(Transaction))`;
//! the chain id inside the transaction gives replay protection across chains.
//! The transaction hash is `keccak256` of the full canonical encoding of the
//! [`SignedTransaction`] (signature included).

use borsh::io::{Error as IoError, ErrorKind as IoErrorKind, Read};
use borsh::{BorshDeserialize, BorshSerialize};

use crate::config::BasefeeConfig;
use crate::crypto::{recover_signer, PrivateKey};
use crate::encoding::{self, Canonical};
use crate::error::Result;
use crate::primitives::{keccak256, keccak256_concat, Address, Hash};
use crate::timer_config::TimerConfig;
use crate::value::Value;

/// Domain separator mixed into every signing digest.
pub const TX_SIGNING_DOMAIN: &[u8] = b"timerhost/tx/v1";

/// Address of the actor that `deployer` creates with the transaction of nonce
/// `nonce`: the last 20 bytes of `keccak256("timerhost/actor" ‖ deployer ‖ nonce BE)`.
/// Clients can predict it before sending the deployment.
pub fn actor_address(deployer: &Address, nonce: u64) -> Address {
    let digest = keccak256_concat(&[
        b"timerhost/actor",
        deployer.as_bytes(),
        &nonce.to_be_bytes(),
    ]);
    Address::from_slice(&digest.as_bytes()[12..]).expect("20 bytes")
}

/// An unsigned transaction.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Transaction {
    /// The chain this transaction is valid on.
    pub chain_id: u64,
    /// Sender's nonce; must equal the account nonce at execution.
    pub nonce: u64,
    /// Most cycles (computation) this transaction may use.
    pub cycles_limit: u64,
    /// Most cells (bytes) this transaction may use.
    pub cells_limit: u64,
    /// Highest total price per cycle (basefee + tip) the sender accepts.
    pub max_fee_per_cycle: u128,
    /// Highest price per cell the sender accepts.
    pub max_fee_per_cell: u128,
    /// Tip per cycle offered to the proposer (capped by `max_fee_per_cycle − basefee`).
    pub priority_fee_per_cycle: u128,
    /// What the transaction does.
    pub kind: TxKind,
}

/// What a transaction does.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize)]
pub enum TxKind {
    /// Move `amount` from the sender to `to`.
    Transfer {
        /// Recipient.
        to: Address,
        /// Amount in the smallest unit.
        amount: u128,
    },
    /// Deploy a Python actor; its `deploy(*args)` runs once.
    DeployActor {
        /// Python source of the actor module.
        code: String,
        /// Positional arguments for `deploy`.
        args: Vec<Value>,
        /// Amount transferred to the new actor.
        value: u128,
    },
    /// Call a handler of an actor.
    CallActor {
        /// The actor.
        actor: Address,
        /// Handler (method) name.
        handler: String,
        /// Positional arguments.
        args: Vec<Value>,
        /// Amount transferred to the actor before the call.
        value: u128,
    },
    /// A governance instruction; the sender must be in `system_deployers`.
    System(SystemInstruction),
    /// Revoke every timer that names the sender as fee payer and was
    /// scheduled before this transaction (CAD018's account-takeover guard):
    /// each is removed at its next classification without executing and
    /// without charging the sender, its deposit refunded.
    RevokeTimerPayments,
}

impl TxKind {
    /// Short name used in logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            TxKind::Transfer { .. } => "Transfer",
            TxKind::DeployActor { .. } => "DeployActor",
            TxKind::CallActor { .. } => "CallActor",
            TxKind::System(s) => s.name(),
            TxKind::RevokeTimerPayments => "RevokeTimerPayments",
        }
    }
}

impl BorshDeserialize for TxKind {
    fn deserialize_reader<R: Read>(reader: &mut R) -> std::result::Result<Self, IoError> {
        let tag = u8::deserialize_reader(reader)?;
        Ok(match tag {
            0 => TxKind::Transfer {
                to: BorshDeserialize::deserialize_reader(reader)?,
                amount: BorshDeserialize::deserialize_reader(reader)?,
            },
            1 => TxKind::DeployActor {
                code: BorshDeserialize::deserialize_reader(reader)?,
                args: BorshDeserialize::deserialize_reader(reader)?,
                value: BorshDeserialize::deserialize_reader(reader)?,
            },
            2 => TxKind::CallActor {
                actor: BorshDeserialize::deserialize_reader(reader)?,
                handler: BorshDeserialize::deserialize_reader(reader)?,
                args: BorshDeserialize::deserialize_reader(reader)?,
                value: BorshDeserialize::deserialize_reader(reader)?,
            },
            3 => TxKind::System(BorshDeserialize::deserialize_reader(reader)?),
            4 => TxKind::RevokeTimerPayments,
            other => {
                return Err(IoError::new(
                    IoErrorKind::InvalidData,
                    format!(
                        "unknown transaction kind tag {other} (known: 0 Transfer, 1 DeployActor, 2 CallActor, 3 System, 4 RevokeTimerPayments)"
                    ),
                ))
            }
        })
    }
}

/// Governance instructions. Tags 0–6 are gated by `system_deployers`;
/// `SubmitProposal` (anyone), `CastVote` (validator operators) and
/// `ExecuteProposal` (anyone) by their own rules (#32).
///
/// New variants are only ever appended, so old encodings stay valid.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize)]
pub enum SystemInstruction {
    /// Replace the basefee configuration; takes effect from the next block.
    UpdateBasefeeConfig(BasefeeConfig),
    /// Cancel a timer (CIP-5 §5.4); idempotent.
    CancelTimer {
        /// The timer.
        timer_id: Hash,
    },
    /// Extend a timer's TTL (CIP-5 §5.4), clamped to `height + max_ttl_blocks`.
    ExtendTimer {
        /// The timer.
        timer_id: Hash,
        /// Requested new `expires_at`.
        new_expires_at: u64,
    },
    /// Replace the timer configuration (CIP-5 §6.4); takes effect from the next block.
    UpdateTimerConfig(TimerConfig),
    /// Pause timers (AIP-125): nothing fires or is classified, scheduling is refused.
    PauseTimers,
    /// Resume timers after a pause or a shutdown.
    ResumeTimers,
    /// Shut timers down (AIP-125): every pending timer is removed over the
    /// following blocks with its deposit refunded; scheduling is refused
    /// until `ResumeTimers`.
    ShutdownTimers,
    /// Submit a proposal for the validators to vote on (#32): anyone may,
    /// with the governed deposit.
    SubmitProposal(crate::governance::ProposalAction),
    /// A validator operator's vote on an open proposal (a second vote
    /// replaces the first).
    CastVote {
        /// The proposal.
        proposal_id: u64,
        /// Yes or no.
        approve: bool,
    },
    /// Execute a passed proposal (anyone may).
    ExecuteProposal {
        /// The proposal.
        proposal_id: u64,
    },
}

impl SystemInstruction {
    /// Is it one of the proposal instructions, which `system_deployers`
    /// do not gate?
    pub fn is_proposal_step(&self) -> bool {
        matches!(
            self,
            SystemInstruction::SubmitProposal(_)
                | SystemInstruction::CastVote { .. }
                | SystemInstruction::ExecuteProposal { .. }
        )
    }

    /// Short name used in logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            SystemInstruction::UpdateBasefeeConfig(_) => "System(UpdateBasefeeConfig)",
            SystemInstruction::CancelTimer { .. } => "System(CancelTimer)",
            SystemInstruction::ExtendTimer { .. } => "System(ExtendTimer)",
            SystemInstruction::UpdateTimerConfig(_) => "System(UpdateTimerConfig)",
            SystemInstruction::PauseTimers => "System(PauseTimers)",
            SystemInstruction::ResumeTimers => "System(ResumeTimers)",
            SystemInstruction::ShutdownTimers => "System(ShutdownTimers)",
            SystemInstruction::SubmitProposal(_) => "System(SubmitProposal)",
            SystemInstruction::CastVote { .. } => "System(CastVote)",
            SystemInstruction::ExecuteProposal { .. } => "System(ExecuteProposal)",
        }
    }
}

impl BorshDeserialize for SystemInstruction {
    fn deserialize_reader<R: Read>(reader: &mut R) -> std::result::Result<Self, IoError> {
        let tag = u8::deserialize_reader(reader)?;
        Ok(match tag {
            0 => SystemInstruction::UpdateBasefeeConfig(BorshDeserialize::deserialize_reader(reader)?),
            1 => SystemInstruction::CancelTimer { timer_id: BorshDeserialize::deserialize_reader(reader)? },
            2 => SystemInstruction::ExtendTimer {
                timer_id: BorshDeserialize::deserialize_reader(reader)?,
                new_expires_at: BorshDeserialize::deserialize_reader(reader)?,
            },
            3 => SystemInstruction::UpdateTimerConfig(BorshDeserialize::deserialize_reader(reader)?),
            4 => SystemInstruction::PauseTimers,
            5 => SystemInstruction::ResumeTimers,
            6 => SystemInstruction::ShutdownTimers,
            7 => SystemInstruction::SubmitProposal(BorshDeserialize::deserialize_reader(reader)?),
            8 => SystemInstruction::CastVote {
                proposal_id: BorshDeserialize::deserialize_reader(reader)?,
                approve: BorshDeserialize::deserialize_reader(reader)?,
            },
            9 => SystemInstruction::ExecuteProposal {
                proposal_id: BorshDeserialize::deserialize_reader(reader)?,
            },
            other => {
                return Err(IoError::new(
                    IoErrorKind::InvalidData,
                    format!(
                        "unknown system instruction tag {other} (known: 0 UpdateBasefeeConfig, 1 CancelTimer, 2 ExtendTimer, 3 UpdateTimerConfig, 4 PauseTimers, 5 ResumeTimers, 6 ShutdownTimers, 7 SubmitProposal, 8 CastVote, 9 ExecuteProposal)"
                    ),
                ))
            }
        })
    }
}

impl Transaction {
    /// The digest the sender signs.
    pub fn signing_digest(&self) -> Hash {
        keccak256_concat(&[TX_SIGNING_DOMAIN, &encoding::encode_raw(self)])
    }

    /// Signs the transaction with `key`.
    pub fn sign(self, key: &PrivateKey) -> SignedTransaction {
        let signature = key.sign_digest(&self.signing_digest());
        SignedTransaction {
            tx: self,
            signature,
        }
    }

    /// Worst-case fee the sender must be able to pay: every limit at its max price.
    /// `None` on overflow.
    pub fn max_fee(&self) -> Option<u128> {
        let cycles = (self.cycles_limit as u128).checked_mul(self.max_fee_per_cycle)?;
        let cells = (self.cells_limit as u128).checked_mul(self.max_fee_per_cell)?;
        cycles.checked_add(cells)
    }

    /// Value moved from the sender by this transaction besides fees.
    pub fn value(&self) -> u128 {
        match &self.kind {
            TxKind::Transfer { amount, .. } => *amount,
            TxKind::DeployActor { value, .. } | TxKind::CallActor { value, .. } => *value,
            TxKind::System(_) | TxKind::RevokeTimerPayments => 0,
        }
    }
}

/// A transaction with its recoverable signature.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct SignedTransaction {
    /// The signed content.
    pub tx: Transaction,
    /// `r ‖ s ‖ v` over [`Transaction::signing_digest`].
    pub signature: [u8; 65],
}

impl Canonical for SignedTransaction {
    const NAME: &'static str = "transaction";
}

impl SignedTransaction {
    /// Canonical bytes (what is gossiped, stored and hashed).
    pub fn to_bytes(&self) -> Vec<u8> {
        encoding::encode(self)
    }

    /// Decodes canonical bytes, naming the problem on failure.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        encoding::decode(bytes)
    }

    /// The transaction hash.
    pub fn hash(&self) -> Hash {
        keccak256(&self.to_bytes())
    }

    /// Recovers the sender from the signature.
    pub fn recover_sender(&self) -> Result<Address> {
        recover_signer(&self.tx.signing_digest(), &self.signature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::dev_account_key;

    pub(crate) fn sample(kind: TxKind) -> Transaction {
        Transaction {
            chain_id: 1337,
            nonce: 4,
            cycles_limit: 100_000,
            cells_limit: 10_000,
            max_fee_per_cycle: 2_000,
            max_fee_per_cell: 1_000,
            priority_fee_per_cycle: 5,
            kind,
        }
    }

    fn kinds() -> Vec<TxKind> {
        vec![
            TxKind::Transfer {
                to: Address([7; 20]),
                amount: 99,
            },
            TxKind::DeployActor {
                code: "class A:\n    pass\n".into(),
                args: vec![Value::int(1), Value::str("x")],
                value: 5,
            },
            TxKind::CallActor {
                actor: Address([9; 20]),
                handler: "bump".into(),
                args: vec![Value::Bytes(vec![1, 2])],
                value: 0,
            },
            TxKind::System(SystemInstruction::UpdateBasefeeConfig(
                BasefeeConfig::default(),
            )),
        ]
    }

    #[test]
    fn every_kind_round_trips_and_recovers_sender() {
        let key = dev_account_key(0);
        for kind in kinds() {
            let signed = sample(kind).sign(&key);
            let bytes = signed.to_bytes();
            let back = SignedTransaction::from_bytes(&bytes).unwrap();
            assert_eq!(back, signed);
            assert_eq!(back.hash(), signed.hash());
            assert_eq!(back.recover_sender().unwrap(), key.address());
        }
    }

    #[test]
    fn encoding_is_stable() {
        // Pin the exact bytes of one transaction so any accidental change of the
        // wire format fails review.
        let tx = sample(TxKind::Transfer {
            to: Address([7; 20]),
            amount: 99,
        });
        let bytes = encoding::encode_raw(&tx);
        assert_eq!(
            hex::encode(&bytes),
            "39050000000000000400000000000000a0860100000000001027000000000000d0070000000000000000000000000000e80300000000000000000000000000000500000000000000000000000000000000070707070707070707070707070707070707070763000000000000000000000000000000"
        );
    }

    #[test]
    fn unknown_kind_is_named() {
        let signed = sample(TxKind::Transfer {
            to: Address([7; 20]),
            amount: 1,
        })
        .sign(&dev_account_key(0));
        let mut bytes = signed.to_bytes();
        // version byte + 8+8+8+8 + 16*3 = 81 → kind tag
        bytes[81] = 9;
        let err = SignedTransaction::from_bytes(&bytes)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown transaction kind tag 9"), "{err}");
    }

    #[test]
    fn malformed_and_versioned_errors() {
        let err = SignedTransaction::from_bytes(&[]).unwrap_err().to_string();
        assert!(err.contains("malformed transaction: empty input"), "{err}");
        let err = SignedTransaction::from_bytes(&[2, 0, 0])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unsupported transaction encoding version 2"),
            "{err}"
        );
        let signed = sample(TxKind::Transfer {
            to: Address([7; 20]),
            amount: 1,
        })
        .sign(&dev_account_key(0));
        let mut bytes = signed.to_bytes();
        bytes.push(0);
        assert!(SignedTransaction::from_bytes(&bytes)
            .unwrap_err()
            .to_string()
            .contains("malformed transaction"));
        bytes.truncate(bytes.len() - 10);
        assert!(SignedTransaction::from_bytes(&bytes).is_err());
    }

    #[test]
    fn tampering_changes_signer() {
        let key = dev_account_key(1);
        let mut signed = sample(TxKind::Transfer {
            to: Address([7; 20]),
            amount: 1,
        })
        .sign(&key);
        signed.tx.nonce += 1;
        assert_ne!(signed.recover_sender().ok(), Some(key.address()));
    }

    #[test]
    fn max_fee_overflow_is_detected() {
        let mut tx = sample(TxKind::Transfer {
            to: Address([7; 20]),
            amount: 1,
        });
        tx.max_fee_per_cycle = u128::MAX;
        assert_eq!(tx.max_fee(), None);
    }

    proptest::proptest! {
        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            let _ = SignedTransaction::from_bytes(&bytes);
        }

        #[test]
        fn mutating_valid_bytes_never_panics(pos in 0usize..200, byte in proptest::prelude::any::<u8>()) {
            let signed = sample(TxKind::CallActor {
                actor: Address([9; 20]), handler: "h".into(), args: vec![Value::int(5)], value: 1,
            }).sign(&dev_account_key(2));
            let mut bytes = signed.to_bytes();
            let i = pos % bytes.len();
            bytes[i] = byte;
            if let Ok(tx) = SignedTransaction::from_bytes(&bytes) {
                let _ = tx.recover_sender();
            }
        }
    }
}
