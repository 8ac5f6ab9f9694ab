//! Client commands: talk to a running node over JSON-RPC (`--rpc URL`),
//! signing transactions with `--key FILE` (a hex private key) or
//! `--dev-account N` (dev chains only).
//!
//! Transaction commands fill in the pending nonce and fee caps from the
//! node (caps at twice the current basefees plus the tip), submit, and wait
//! for the receipt (`--no-wait` returns the hash at once). A failed
//! execution prints the actor's error, Python traceback and the cycles/cells
//! used, and exits with status 1.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use timerhost_rpc::json::{hex0x, parse_address, value_from_json};
use timerhost_rpc::Client;
use timerhost_types::{
    dev_account_key, Address, BasefeeConfig, Hash, PrivateKey, SignedTransaction, Transaction,
    TxKind, Value, DEV_ACCOUNT_COUNT,
};

use crate::error::{NodeError, Result};

/// Signing and fee options of a transaction command.
#[derive(Clone, Debug)]
pub struct TxOptions {
    /// The signer.
    pub key: PrivateKey,
    /// Cycles limit.
    pub cycles_limit: u64,
    /// Cells limit.
    pub cells_limit: u64,
    /// Tip per cycle.
    pub tip: u128,
    /// Do not wait for the receipt.
    pub no_wait: bool,
}

/// Loads the signer from `--key FILE` or `--dev-account N`.
pub fn signer(key_file: Option<&Path>, dev_account: Option<u32>) -> Result<PrivateKey> {
    match (key_file, dev_account) {
        (Some(path), None) => crate::keys::read(path),
        (None, Some(n)) if n < DEV_ACCOUNT_COUNT as u32 => Ok(dev_account_key(n)),
        (None, Some(n)) => Err(NodeError::Usage(format!(
            "--dev-account must be 0..{}, got {n}",
            DEV_ACCOUNT_COUNT - 1
        ))),
        (None, None) => Err(NodeError::Usage(
            "this command signs a transaction: give --key FILE or --dev-account N".into(),
        )),
        (Some(_), Some(_)) => Err(NodeError::Usage(
            "give either --key or --dev-account, not both".into(),
        )),
    }
}

/// Parses a JSON array of actor arguments.
pub fn parse_args(text: Option<&str>) -> Result<Vec<Value>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let j: Json = serde_json::from_str(text)
        .map_err(|e| NodeError::Usage(format!("arguments are not JSON ({e}): {text}")))?;
    match j {
        Json::Array(items) => items
            .iter()
            .map(|i| value_from_json(i).map_err(NodeError::from))
            .collect(),
        other => Err(NodeError::Usage(format!(
            "arguments must be a JSON array, e.g. '[5, \"x\"]'; got {other}"
        ))),
    }
}

/// Parses an amount (decimal, `_` allowed).
pub fn parse_amount(s: &str) -> Result<u128> {
    s.replace('_', "")
        .parse()
        .map_err(|_| NodeError::Usage(format!("bad amount {s:?}: give a decimal integer")))
}

/// Parses an address argument.
pub fn address(s: &str) -> Result<Address> {
    Ok(parse_address(s)?)
}

/// Signs `kind` with the sender's pending nonce and the node's fees, sends
/// it and (unless `no_wait`) waits for its receipt. Returns the receipt (or
/// `{"tx_hash": …}`).
pub fn send(client: &Client, opts: &TxOptions, kind: TxKind) -> Result<Json> {
    let status = client.call("th_status", json!([]))?;
    let chain_id = status["chain_id"].as_u64().unwrap_or_default();
    let sender = opts.key.address();
    let nonce = client
        .call("th_getNonce", json!([sender, "pending"]))?
        .as_u64()
        .unwrap_or_default();
    let basefee: BasefeeConfig =
        serde_json::from_value(client.call("th_getBasefeeConfig", json!([]))?)
            .map_err(|e| NodeError::Usage(format!("the node sent a bad basefee config: {e}")))?;
    let tx: SignedTransaction = Transaction {
        chain_id,
        nonce,
        cycles_limit: opts.cycles_limit,
        cells_limit: opts.cells_limit,
        max_fee_per_cycle: basefee
            .cycle_basefee
            .saturating_mul(2)
            .saturating_add(opts.tip),
        max_fee_per_cell: basefee.cell_basefee.saturating_mul(2),
        priority_fee_per_cycle: opts.tip,
        kind,
    }
    .sign(&opts.key);
    let hash = client.call("th_sendRawTransaction", json!([hex0x(&tx.to_bytes())]))?;
    if opts.no_wait {
        return Ok(json!({ "tx_hash": hash, "pending": true }));
    }
    let hash: Hash = serde_json::from_value(hash)
        .map_err(|e| NodeError::Usage(format!("the node sent a bad hash: {e}")))?;
    wait_receipt(client, &hash, Duration::from_secs(60))
}

/// Polls for a receipt.
pub fn wait_receipt(client: &Client, hash: &Hash, timeout: Duration) -> Result<Json> {
    let start = Instant::now();
    loop {
        let r = client.call("th_getReceipt", json!([hash]))?;
        if !r.is_null() && r.get("pending").is_none() {
            return Ok(r);
        }
        if start.elapsed() > timeout {
            return Err(NodeError::Usage(format!(
                "transaction {hash} was accepted but not included within {timeout:?} (a --manual node needs `timerhost mine`)"
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
