//! Before the load: fresh accounts funded by one transaction each, the load
//! actor deployed, and one call measured so every transaction asks for the
//! limits it needs (a block fits transactions by their limits, not by what
//! they use).

use std::time::Duration;

use serde_json::{json, Value as Json};
use timerhost_rpc::json::hex0x;
use timerhost_rpc::Client;
use timerhost_types::{
    keccak256, Address, BasefeeConfig, Hash, PrivateKey, SignedTransaction, Transaction, TxKind,
    Value, TX_BASE_CYCLES,
};

use super::args::{LoadArgs, LoadKind};
use crate::client::wait_receipt;
use crate::error::{NodeError, Result};

/// The actor `call` and `timer` loads drive.
pub const LOAD_ACTOR: &str = r#"
import pvm_host


class Load:
    def deploy(self):
        self.storage["hits"] = 0
        self.storage["fired"] = 0

    def hit(self):
        self.storage["hits"] += 1

    def arm(self, delay):
        pvm_host.schedule_timer(pvm_host.block_height() + delay, b"")

    @pvm_host.timer_handler
    def handle_timer(self, payload):
        self.storage["fired"] += 1
"#;

/// Blocks between a `timer` transaction and its timer's fire.
pub const TIMER_DELAY_BLOCKS: u64 = 5;

/// Funds kept by the load actor to pay its timers' fires.
const ACTOR_FUNDS: u128 = 10u128.pow(22);

/// Most funding transfers in flight from the funder at once (within any
/// mempool's per-sender window).
const FUNDING_WAVE: usize = 32;

/// One kind of transaction's limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Cycles limit.
    pub cycles: u64,
    /// Cells limit.
    pub cells: u64,
}

/// Everything signing needs.
pub struct Prepared {
    /// Chain id.
    pub chain_id: u64,
    /// The fresh accounts and the next nonce of each.
    pub accounts: Vec<(PrivateKey, u64)>,
    /// The load actor, for `call`, `timer` and `mixed`.
    pub actor: Option<Address>,
    /// Fee cap per cycle.
    pub max_fee_per_cycle: u128,
    /// Fee cap per cell.
    pub max_fee_per_cell: u128,
    /// Limits of a transfer.
    pub transfer: Limits,
    /// Limits of a `hit` call.
    pub call: Limits,
    /// Limits of an `arm` call.
    pub timer: Limits,
}

/// The key of fresh account `i` of the run seeded `seed`.
fn fresh_key(seed: u64, i: u32) -> PrivateKey {
    let mut counter = 0u32;
    PrivateKey::from_entropy(|| {
        counter += 1;
        let mut material = b"timerhost load".to_vec();
        material.extend_from_slice(&seed.to_be_bytes());
        material.extend_from_slice(&i.to_be_bytes());
        material.extend_from_slice(&counter.to_be_bytes());
        keccak256(&material).0
    })
}

/// Sends one signed set-up transaction and waits for its receipt, which
/// must be a success.
fn send_and_wait(client: &Client, tx: &SignedTransaction) -> Result<Json> {
    let hash = client.call("th_sendRawTransaction", json!([hex0x(&tx.to_bytes())]))?;
    let hash: Hash = serde_json::from_value(hash)
        .map_err(|e| NodeError::Usage(format!("the node sent a bad hash: {e}")))?;
    let receipt = wait_receipt(client, &hash, Duration::from_secs(60))?;
    if receipt["status"] != "success" {
        return Err(NodeError::Usage(format!(
            "a set-up transaction failed: {}",
            receipt["error"]
        )));
    }
    Ok(receipt)
}

/// Creates and funds the accounts, deploys the actor and sizes the limits.
pub fn prepare(
    client: &Client,
    funder: &PrivateKey,
    args: &LoadArgs,
    seed: u64,
    progress: &dyn Fn(&str),
) -> Result<Prepared> {
    let status = client.call("th_status", json!([]))?;
    let chain_id = status["chain_id"]
        .as_u64()
        .ok_or_else(|| NodeError::Usage(format!("the node's status has no chain id: {status}")))?;
    let basefee: BasefeeConfig =
        serde_json::from_value(client.call("th_getBasefeeConfig", json!([]))?)
            .map_err(|e| NodeError::Usage(format!("the node sent a bad basefee config: {e}")))?;
    // Room for the basefee to rise while the load runs.
    let max_fee_per_cycle = basefee.cycle_basefee.saturating_mul(10);
    let max_fee_per_cell = basefee.cell_basefee.saturating_mul(10);
    let mut nonce = client
        .call("th_getNonce", json!([funder.address(), "pending"]))?
        .as_u64()
        .unwrap_or_default();
    let mut funder_tx = |kind: TxKind, cycles: u64, cells: u64| -> SignedTransaction {
        let tx = Transaction {
            chain_id,
            nonce,
            cycles_limit: cycles,
            cells_limit: cells,
            max_fee_per_cycle,
            max_fee_per_cell,
            priority_fee_per_cycle: 0,
            kind,
        }
        .sign(funder);
        nonce += 1;
        tx
    };
    let needs_actor = args.kind != LoadKind::Transfer;
    let actor = if needs_actor {
        progress("deploying the load actor…");
        let receipt = send_and_wait(
            client,
            &funder_tx(
                TxKind::DeployActor {
                    code: LOAD_ACTOR.to_string(),
                    args: Vec::new(),
                    value: ACTOR_FUNDS,
                },
                50_000_000,
                2_000_000,
            ),
        )?;
        let actor: Address = serde_json::from_value(receipt["created_actor"].clone())
            .map_err(|e| NodeError::Usage(format!("the deploy created no actor: {e}")))?;
        Some(actor)
    } else {
        None
    };
    // Size each kind by one measured transaction from the funder: twice what
    // it used, never below the intrinsic cost of a large transaction.
    let measure = |receipt: &Json| Limits {
        cycles: (receipt["cycles_used"].as_u64().unwrap_or(0) * 2).max(TX_BASE_CYCLES * 2),
        cells: (receipt["cells_used"].as_u64().unwrap_or(0) * 2).max(1_000),
    };
    let transfer = Limits {
        cycles: TX_BASE_CYCLES * 2,
        cells: 1_000,
    };
    let (call, timer) = match actor {
        None => (transfer, transfer),
        Some(actor) => {
            let hit = send_and_wait(
                client,
                &funder_tx(call_kind(actor, "hit", vec![]), 5_000_000, 200_000),
            )?;
            let arm = send_and_wait(
                client,
                &funder_tx(
                    call_kind(actor, "arm", vec![Value::int(TIMER_DELAY_BLOCKS)]),
                    5_000_000,
                    200_000,
                ),
            )?;
            (measure(&hit), measure(&arm))
        }
    };
    // Each account's share of the run, at the most it could cost, twice.
    let total = ((args.rate as f64) * args.duration).ceil() as u128;
    let per_account = total.div_ceil(args.accounts as u128) + 1;
    let worst = [transfer, call, timer]
        .iter()
        .map(|l| l.cycles as u128 * max_fee_per_cycle + l.cells as u128 * max_fee_per_cell)
        .max()
        .unwrap_or(0)
        + 1;
    let funding = per_account.saturating_mul(worst).saturating_mul(2);
    progress(&format!(
        "funding {} fresh accounts with {funding} each…",
        args.accounts
    ));
    let keys: Vec<PrivateKey> = (0..args.accounts).map(|i| fresh_key(seed, i)).collect();
    for wave in keys.chunks(FUNDING_WAVE) {
        let txs: Vec<SignedTransaction> = wave
            .iter()
            .map(|k| {
                funder_tx(
                    TxKind::Transfer {
                        to: k.address(),
                        amount: funding,
                    },
                    transfer.cycles,
                    transfer.cells,
                )
            })
            .collect();
        let calls: Vec<(&str, Json)> = txs
            .iter()
            .map(|t| ("th_sendRawTransaction", json!([hex0x(&t.to_bytes())])))
            .collect();
        for answer in client.call_batch(&calls)? {
            answer?;
        }
        let last = txs.last().expect("a wave is not empty").hash();
        wait_receipt(client, &last, Duration::from_secs(60))?;
    }
    let mut accounts = Vec::with_capacity(keys.len());
    for key in keys {
        let nonce = client
            .call("th_getNonce", json!([key.address(), "pending"]))?
            .as_u64()
            .unwrap_or_default();
        accounts.push((key, nonce));
    }
    Ok(Prepared {
        chain_id,
        accounts,
        actor,
        max_fee_per_cycle,
        max_fee_per_cell,
        transfer,
        call,
        timer,
    })
}

/// A call of the load actor's `method`.
pub fn call_kind(actor: Address, method: &str, args: Vec<Value>) -> TxKind {
    TxKind::CallActor {
        actor,
        handler: method.to_string(),
        args,
        value: 0,
    }
}
