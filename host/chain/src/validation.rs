//! Transaction validation: everything checked before a transaction may touch
//! state. A rejected transaction is never applied and pays nothing.
//!
//! Two layers: [`check_static`] needs only the transaction and chain params
//! (size, chain id, signature, limits, field bounds); [`check_against_state`]
//! also needs the sender's account and the current basefee (nonce, balance,
//! fee caps). Both are used by the mempool on arrival and by block execution.

use timerhost_types::crypto::is_dev_account;
use timerhost_types::{
    Address, BasefeeConfig, ChainParams, SignedTransaction, SystemInstruction, TxKind,
    MAX_CODE_BYTES, MAX_HANDLER_BYTES, MAX_TX_BYTES, TX_BASE_CYCLES,
};

pub use crate::error::TxError;
use crate::fees::FeeQuote;

/// Decodes a transaction received from outside (RPC, a peer), checking its
/// size before touching its content.
pub fn decode_tx(bytes: &[u8]) -> Result<SignedTransaction, TxError> {
    if bytes.len() > MAX_TX_BYTES {
        return Err(TxError::TooLarge {
            size: bytes.len(),
            max: MAX_TX_BYTES,
        });
    }
    SignedTransaction::from_bytes(bytes).map_err(|e| TxError::Malformed(e.to_string()))
}

/// Intrinsic cost of a transaction: what it pays before doing anything.
pub fn intrinsic(encoded_len: usize) -> (u64, u64) {
    (TX_BASE_CYCLES, encoded_len as u64)
}

/// Checks that need no state. Returns the sender: `recovered` when the
/// caller recovered it already ([`crate::senders`]), else recovered here.
pub fn check_static(
    tx: &SignedTransaction,
    encoded_len: usize,
    params: &ChainParams,
    basefee: &BasefeeConfig,
    recovered: Option<&crate::senders::Recovered>,
) -> Result<Address, TxError> {
    if encoded_len > MAX_TX_BYTES {
        return Err(TxError::TooLarge {
            size: encoded_len,
            max: MAX_TX_BYTES,
        });
    }
    let t = &tx.tx;
    if t.chain_id != params.chain_id {
        return Err(TxError::WrongChainId {
            expected: params.chain_id,
            got: t.chain_id,
        });
    }
    let sender = match recovered {
        Some(r) => r.clone(),
        None => tx.recover_sender().map_err(|e| e.to_string()),
    }
    .map_err(TxError::BadSignature)?;
    if !params.is_dev() && is_dev_account(&sender) {
        return Err(TxError::DevKeyOnNonDevChain {
            sender,
            chain_id: params.chain_id,
            dev_chain_id: timerhost_types::DEV_CHAIN_ID,
        });
    }
    let (intrinsic_cycles, intrinsic_cells) = intrinsic(encoded_len);
    if t.cycles_limit < intrinsic_cycles {
        return Err(TxError::LimitBelowIntrinsic {
            dimension: "cycles",
            limit: t.cycles_limit,
            intrinsic: intrinsic_cycles,
        });
    }
    if t.cells_limit < intrinsic_cells {
        return Err(TxError::LimitBelowIntrinsic {
            dimension: "cells",
            limit: t.cells_limit,
            intrinsic: intrinsic_cells,
        });
    }
    if t.cycles_limit > basefee.max_block_cycles {
        return Err(TxError::LimitAboveBlockLimit {
            dimension: "cycles",
            limit: t.cycles_limit,
            max: basefee.max_block_cycles,
        });
    }
    if t.cells_limit > basefee.max_block_cells {
        return Err(TxError::LimitAboveBlockLimit {
            dimension: "cells",
            limit: t.cells_limit,
            max: basefee.max_block_cells,
        });
    }
    t.max_fee().ok_or_else(|| {
        TxError::FeeOverflow(
            "cycles_limit × max_fee_per_cycle + cells_limit × max_fee_per_cell exceeds 2^128"
                .into(),
        )
    })?;
    match &t.kind {
        TxKind::Transfer { to, .. } => {
            if let Some(refusal) = to.payment_refusal() {
                return Err(TxError::InvalidField {
                    field: "to",
                    reason: refusal.into(),
                });
            }
        }
        TxKind::DeployActor { code, .. } => {
            if code.len() > MAX_CODE_BYTES {
                return Err(TxError::InvalidField {
                    field: "code",
                    reason: format!("{} bytes, the maximum is {MAX_CODE_BYTES}", code.len()),
                });
            }
        }
        TxKind::CallActor { handler, .. } => {
            if handler.is_empty() || handler.len() > MAX_HANDLER_BYTES {
                return Err(TxError::InvalidField {
                    field: "handler",
                    reason: format!(
                        "must be 1..={MAX_HANDLER_BYTES} bytes, found {}",
                        handler.len()
                    ),
                });
            }
        }
        TxKind::RevokeTimerPayments => {}
        TxKind::System(instruction) => {
            // Proposals have their own rules (anyone submits and executes,
            // operators vote: `governance.rs`); the rest is governance's.
            if !instruction.is_proposal_step() && !params.system_deployers.contains(&sender) {
                return Err(TxError::NotGovernance {
                    sender,
                    instruction: instruction.name(),
                });
            }
            match instruction {
                SystemInstruction::UpdateBasefeeConfig(cfg) => {
                    cfg.validate().map_err(|e| TxError::InvalidField {
                        field: "basefee config",
                        reason: e.to_string(),
                    })?;
                }
                SystemInstruction::UpdateTimerConfig(cfg) => {
                    cfg.validate().map_err(|e| TxError::InvalidField {
                        field: "timer config",
                        reason: e.to_string(),
                    })?;
                }
                // A malformed action is refused before it costs a deposit.
                SystemInstruction::SubmitProposal(action) => {
                    action.check().map_err(|reason| TxError::InvalidField {
                        field: "proposal action",
                        reason: format!("{}: {reason}", action.name()),
                    })?;
                }
                SystemInstruction::CancelTimer { .. }
                | SystemInstruction::ExtendTimer { .. }
                | SystemInstruction::PauseTimers
                | SystemInstruction::ResumeTimers
                | SystemInstruction::ShutdownTimers
                | SystemInstruction::CastVote { .. }
                | SystemInstruction::ExecuteProposal { .. } => {}
            }
        }
    }
    Ok(sender)
}

/// Checks against the sender's account and the current basefee. Returns the fee quote.
pub fn check_against_state(
    tx: &SignedTransaction,
    sender: Address,
    account_nonce: u64,
    balance: u128,
    basefee: &BasefeeConfig,
) -> Result<FeeQuote, TxError> {
    let t = &tx.tx;
    if t.nonce < account_nonce {
        return Err(TxError::NonceTooLow {
            sender,
            expected: account_nonce,
            got: t.nonce,
        });
    }
    if t.nonce > account_nonce {
        return Err(TxError::NonceTooHigh {
            sender,
            expected: account_nonce,
            got: t.nonce,
        });
    }
    let quote = FeeQuote::for_tx(t, basefee)?;
    let value = t.value();
    let required = quote
        .prepay
        .checked_add(value)
        .ok_or_else(|| TxError::FeeOverflow("pre-charge + value exceeds 2^128".into()))?;
    if balance < required {
        return Err(TxError::InsufficientBalance {
            sender,
            available: balance,
            required,
            fee: quote.prepay,
            value,
        });
    }
    Ok(quote)
}
