//! `timerhost dev`: a local devnet in one command — the dev genesis (with
//! ARC-21's cron registry at `0x…06`, as in every genesis), funded dev
//! accounts, and the example actors deployed in the first block: two
//! heartbeats, an ARC-20 token and a sample ARC-21 subscription that
//! charges it every minute through the registry.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde_json::json;
use timerhost_chain::Chain;
use timerhost_state::SledBackend;
use timerhost_types::{
    actor_address, dev_accounts, Address, Genesis, PrivateKey, SignedTransaction, TxKind, Value,
    DEV_CHAIN_ID,
};

use crate::config::parse_duration;
use crate::error::{NodeError, Result};
use crate::home::Home;
use crate::producer::Schedule;
use crate::run::RunOptions;

/// The self-funded heartbeat example.
pub const HEARTBEAT_PY: &str = include_str!("../../../actors/heartbeat/heartbeat.py");
/// The deployer-funded heartbeat example.
pub const HEARTBEAT_DEPLOYER_FUNDED_PY: &str =
    include_str!("../../../actors/heartbeat/heartbeat_deployer_funded.py");
/// The ARC-20 token.
pub const ARC20_PY: &str = include_str!("../../../actors/arc20/arc20.py");
/// The ARC-21 subscriptions merchant contract.
pub const SUBSCRIPTIONS_PY: &str = include_str!("../../../actors/arc21/subscriptions.py");

/// One token: the unit of the sample token's 18 decimals, and of the native coin.
const TOKEN: u128 = 10u128.pow(18);

/// Signs the first block's transactions, nonces counted per signer.
struct Prelude<'a> {
    chain: &'a Chain<SledBackend>,
    basefee: timerhost_types::BasefeeConfig,
    nonces: std::collections::HashMap<Address, u64>,
    txs: Vec<SignedTransaction>,
    examples: Vec<serde_json::Value>,
}

impl<'a> Prelude<'a> {
    fn sign(&mut self, key: &PrivateKey, kind: TxKind) -> Result<(u64, SignedTransaction)> {
        let sender = key.address();
        let nonce = match self.nonces.get(&sender) {
            Some(n) => *n,
            None => self.chain.account(&sender)?.nonce,
        };
        self.nonces.insert(sender, nonce + 1);
        let basefee = &self.basefee;
        let tx = timerhost_types::Transaction {
            chain_id: DEV_CHAIN_ID,
            nonce,
            cycles_limit: 5_000_000,
            cells_limit: 1_000_000,
            // Twice the basefee: the prelude shares the first block.
            max_fee_per_cycle: basefee.cycle_basefee * 2 + 1,
            max_fee_per_cell: basefee.cell_basefee * 2,
            priority_fee_per_cycle: 1,
            kind,
        }
        .sign(key);
        self.txs.push(tx.clone());
        Ok((nonce, tx))
    }

    /// Deploys `code` from `key`; returns the actor's address.
    fn deploy(
        &mut self,
        name: &str,
        key: &PrivateKey,
        code: &str,
        args: Vec<Value>,
        value: u128,
    ) -> Result<Address> {
        let kind = TxKind::DeployActor {
            code: code.to_string(),
            args,
            value,
        };
        let (nonce, tx) = self.sign(key, kind)?;
        let address = actor_address(&key.address(), nonce);
        self.examples.push(json!({
            "name": name,
            "address": address,
            "tx_hash": tx.hash(),
        }));
        Ok(address)
    }

    fn call(
        &mut self,
        key: &PrivateKey,
        actor: Address,
        handler: &str,
        args: Vec<Value>,
        value: u128,
    ) -> Result<()> {
        let kind = TxKind::CallActor {
            actor,
            handler: handler.into(),
            args,
            value,
        };
        self.sign(key, kind).map(|_| ())
    }
}

/// The example actors' transactions for the first block, and what to print
/// about them.
fn dev_examples(
    chain: &Chain<SledBackend>,
    keys: &[PrivateKey],
) -> Result<(Vec<SignedTransaction>, Vec<serde_json::Value>)> {
    let mut p = Prelude {
        chain,
        basefee: chain.basefee_config()?,
        nonces: Default::default(),
        txs: Vec::new(),
        examples: Vec::new(),
    };
    let (deployer, customer, merchant) = (&keys[0], &keys[1], &keys[2]);
    // Self-funded: beats every 5 blocks, paid from the 1,000 coins it holds.
    p.deploy(
        "heartbeat",
        deployer,
        HEARTBEAT_PY,
        vec![Value::int(5)],
        1_000 * TOKEN,
    )?;
    // Deployer-funded: 10 beats, every 10 blocks, paid by dev account 0.
    p.deploy(
        "heartbeat_deployer_funded",
        deployer,
        HEARTBEAT_DEPLOYER_FUNDED_PY,
        vec![Value::int(10), Value::int(10)],
        0,
    )?;
    // An ARC-20 token; dev account 1 holds the supply.
    let token = p.deploy(
        "arc20_token",
        deployer,
        ARC20_PY,
        vec![
            Value::str("Dev Dollar"),
            Value::str("DUSD"),
            Value::int(18),
            Value::int(1_000_000 * TOKEN),
            Value::str(customer.address().to_hex()),
        ],
        0,
    )?;
    // A merchant contract; dev account 1 subscribes to pay dev account 2
    // one token a minute, for 60 minutes, through the cron registry.
    let subscriptions = p.deploy("subscriptions", deployer, SUBSCRIPTIONS_PY, vec![], 0)?;
    p.call(
        customer,
        token,
        "approve",
        vec![Value::str(subscriptions.to_hex()), Value::int(60 * TOKEN)],
        0,
    )?;
    p.call(
        customer,
        subscriptions,
        "approveSubscription",
        vec![
            Value::str(token.to_hex()),
            Value::str(merchant.address().to_hex()),
            Value::int(TOKEN),
            Value::int(60),
            Value::int(60),
        ],
        TOKEN, // the cron job's escrow; what the charges do not use comes back
    )?;
    p.examples.push(json!({
        "name": "cron_registry",
        "address": timerhost_types::CRON_REGISTRY_ADDRESS,
        "tx_hash": null,
    }));
    Ok((p.txs, p.examples))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn dev(
    as_json: bool,
    home: Option<&PathBuf>,
    block_time: &str,
    manual: bool,
    rpc: SocketAddr,
    metrics: Option<SocketAddr>,
    no_examples: bool,
) -> Result<()> {
    let schedule = if manual {
        Schedule::Manual
    } else {
        Schedule::Interval(parse_duration(block_time).map_err(NodeError::Usage)?)
    };
    // A temporary home lives as long as this function.
    let temp;
    let root = match home {
        Some(h) => h.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("timerhost-dev-")
                .tempdir()
                .map_err(|source| NodeError::Io {
                    action: "creating a temporary home in",
                    path: std::env::temp_dir(),
                    source,
                })?;
            temp.path().join("home")
        }
    };
    let home = Home::new(&root);
    let chain = if home.genesis_path().exists() {
        let chain = home.open()?;
        if !chain.genesis().is_dev() {
            return Err(NodeError::Usage(format!(
                "{} holds chain {}, not a dev chain; use `timerhost node` for it",
                root.display(),
                chain.genesis().chain_id
            )));
        }
        chain
    } else {
        home.init(&Genesis::dev())?
    };
    let fresh = chain.head()?.height == 0;
    let keys = dev_accounts();
    let (prelude, examples) = if fresh && !no_examples {
        dev_examples(&chain, &keys)?
    } else {
        (Vec::new(), Vec::new())
    };
    let accounts = dev_account_rows();
    if as_json {
        println!(
            "{}",
            json!({ "event": "dev", "home": root, "dev_accounts": accounts, "examples": examples })
        );
    } else {
        println!(
            "timerhost dev: chain {DEV_CHAIN_ID}, home {}",
            root.display()
        );
        print_dev_accounts(&accounts);
        for e in &examples {
            let when = if e["tx_hash"].is_null() {
                "in genesis"
            } else {
                "deployed in the first block"
            };
            println!(
                "Example {} at {} ({when})",
                e["name"].as_str().unwrap_or(""),
                e["address"].as_str().unwrap_or("")
            );
        }
    }
    crate::run::run(
        chain,
        RunOptions {
            rpc,
            schedule,
            metrics,
            proposer: keys[0].address(),
            mempool: Default::default(),
            json: as_json,
            prelude,
            // A devnet keeps its whole history (`timerhost node` reads
            // `[storage] keep_blocks`).
            keep_blocks: 0,
            proof_blocks: timerhost_state::DEFAULT_PROOF_BLOCKS,
            disk: Some(crate::disk::DiskGuard::new(
                home.data_path(),
                crate::disk::DEFAULT_MIN_FREE_BYTES,
            )),
        },
    )?;
    Ok(())
}

/// Prints the dev accounts and their (public) keys for people.
pub(crate) fn print_dev_accounts(rows: &[serde_json::Value]) {
    println!("Dev accounts (their keys are public: only accepted on chain {DEV_CHAIN_ID}):");
    for a in rows {
        println!(
            "  #{:<2} {}  key {}",
            a["index"],
            a["address"].as_str().unwrap_or(""),
            a["private_key"].as_str().unwrap_or("")
        );
    }
}

pub(crate) fn dev_account_rows() -> Vec<serde_json::Value> {
    dev_accounts()
        .iter()
        .enumerate()
        .map(|(i, k)| json!({ "index": i, "address": k.address(), "private_key": k.to_hex() }))
        .collect()
}
