//! Signing the whole run ahead of time, on every core, so sending costs
//! only the sending.

use timerhost_types::{Address, Hash, SignedTransaction, Transaction, TxKind, Value};

use super::args::LoadKind;
use super::setup::{call_kind, Limits, Prepared, TIMER_DELAY_BLOCKS};

/// One pre-signed transaction of the run.
pub struct PlannedTx {
    /// Its hash (what blocks list).
    pub hash: Hash,
    /// `0x…` hex of its bytes (what `th_sendRawTransaction` takes).
    pub raw: String,
}

/// What transaction `i` of the run does.
fn kind_of(load: LoadKind, i: usize, prepared: &Prepared) -> (TxKind, Limits) {
    let which = match load {
        LoadKind::Mixed => [LoadKind::Transfer, LoadKind::Call, LoadKind::Timer][i % 3],
        other => other,
    };
    let actor = prepared.actor;
    match (which, actor) {
        (LoadKind::Call, Some(actor)) => (call_kind(actor, "hit", Vec::new()), prepared.call),
        (LoadKind::Timer, Some(actor)) => (
            call_kind(actor, "arm", vec![Value::int(TIMER_DELAY_BLOCKS)]),
            prepared.timer,
        ),
        _ => {
            // A fresh recipient per transfer: the costlier case (a new account).
            let mut to = [0x10u8; 20];
            to[12..].copy_from_slice(&(i as u64).to_be_bytes());
            to[..8].copy_from_slice(&prepared.chain_id.to_be_bytes());
            (
                TxKind::Transfer {
                    to: Address(to),
                    amount: 1,
                },
                prepared.transfer,
            )
        }
    }
}

/// Transaction `i`: account `i % K` at its next nonce plus `i / K`.
fn sign_one(load: LoadKind, i: usize, prepared: &Prepared) -> PlannedTx {
    let accounts = prepared.accounts.len();
    let (key, first_nonce) = &prepared.accounts[i % accounts];
    let (kind, limits) = kind_of(load, i, prepared);
    let tx: SignedTransaction = Transaction {
        chain_id: prepared.chain_id,
        nonce: first_nonce + (i / accounts) as u64,
        cycles_limit: limits.cycles,
        cells_limit: limits.cells,
        max_fee_per_cycle: prepared.max_fee_per_cycle,
        max_fee_per_cell: prepared.max_fee_per_cell,
        priority_fee_per_cycle: 0,
        kind,
    }
    .sign(key);
    let bytes = tx.to_bytes();
    PlannedTx {
        hash: timerhost_types::keccak256(&bytes),
        raw: timerhost_rpc::json::hex0x(&bytes),
    }
}

/// Every transaction of the run, in sending order: the accounts take turns,
/// so each sends in nonce order.
pub fn sign_all(prepared: &Prepared, load: LoadKind, total: usize) -> Vec<PlannedTx> {
    let indexes: Vec<usize> = (0..total).collect();
    timerhost_chain::senders::on_every_core(&indexes, |&i| sign_one(load, i, prepared))
}
