//! What every client command shares: where the node is ([`NodeArgs`]), how
//! a transaction is signed and paid for ([`TxArgs`]), and sending one and
//! reporting its receipt.

use std::path::PathBuf;

use timerhost_rpc::Client;
use timerhost_types::TxKind;

use crate::client::{self, TxOptions};
use crate::error::{NodeError, Result};
use crate::output;

/// Where the node is.
#[derive(Debug, Clone, clap::Args)]
pub struct NodeArgs {
    /// Node JSON-RPC URL.
    #[arg(long, default_value = "http://127.0.0.1:8645")]
    pub rpc: String,
}

/// Signing and fee options of transaction commands.
#[derive(Debug, Clone, clap::Args)]
pub struct TxArgs {
    #[command(flatten)]
    pub(crate) node: NodeArgs,
    /// File holding the signer's hex private key.
    #[arg(long)]
    pub(crate) key: Option<PathBuf>,
    /// Sign with dev account N (0–9; dev chains only).
    #[arg(long)]
    pub(crate) dev_account: Option<u32>,
    /// Cycles limit.
    #[arg(long, default_value_t = 5_000_000)]
    pub(crate) cycles_limit: u64,
    /// Cells limit.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) cells_limit: u64,
    /// Tip per cycle.
    #[arg(long, default_value_t = 1)]
    pub(crate) tip: u128,
    /// Return once the node accepted the transaction, without waiting for its receipt.
    #[arg(long)]
    pub(crate) no_wait: bool,
}

/// The signer and fee options of a transaction command.
pub(crate) fn tx_options(t: &TxArgs) -> Result<TxOptions> {
    Ok(TxOptions {
        key: client::signer(t.key.as_deref(), t.dev_account)?,
        cycles_limit: t.cycles_limit,
        cells_limit: t.cells_limit,
        tip: t.tip,
        no_wait: t.no_wait,
    })
}

/// Signs and sends `kind`, prints its receipt (or its hash with
/// `--no-wait`) and fails if the transaction failed.
pub(crate) fn send_and_report(as_json: bool, t: &TxArgs, kind: TxKind) -> Result<()> {
    let c = Client::new(&t.node.rpc);
    let receipt = client::send(&c, &tx_options(t)?, kind)?;
    let ok = receipt["status"] == "success" || receipt.get("pending").is_some();
    if as_json {
        println!("{receipt}");
    } else if receipt.get("pending").is_some() {
        println!("submitted {}", receipt["tx_hash"].as_str().unwrap_or("?"));
    } else {
        output::print_receipt(&receipt);
    }
    if ok {
        Ok(())
    } else {
        Err(NodeError::Usage(format!(
            "transaction {} failed",
            receipt["tx_hash"].as_str().unwrap_or("?")
        )))
    }
}
