//! `timerhost cron …`: ARC-21's cron registry (`0x…06`, in every genesis)
//! from a wallet — schedule a call, top a job up, cancel it, list jobs —
//! without writing an actor. Each transaction calls the registry as the
//! signer; listing reads committed state (`th_getStorageKeys`,
//! `th_getStorage`).

use clap::Subcommand;
use serde_json::{json, Value as Json};
use timerhost_rpc::Client;
use timerhost_types::{TxKind, Value, CRON_REGISTRY_ADDRESS};

use crate::client;
use crate::client_args::{send_and_report, NodeArgs, TxArgs};
use crate::error::{NodeError, Result};
use crate::output::print;

/// Cron registry actions.
#[derive(Debug, Subcommand)]
pub enum CronAction {
    /// Schedule `TARGET.METHOD(*ARGS)` at `--at` (unix seconds), once or
    /// every `--interval` seconds (≥ 60), funded by `--escrow`.
    Schedule {
        /// The actor to call.
        target: String,
        /// Its handler.
        method: String,
        /// Arguments, as a JSON array.
        args: Option<String>,
        /// First run, unix seconds.
        #[arg(long)]
        at: u64,
        /// Seconds between runs: 0 (one-shot) or at least 60.
        #[arg(long, default_value_t = 0)]
        interval: u64,
        /// Most runs; 0 = until the escrow runs out.
        #[arg(long, default_value_t = 0)]
        max_runs: u64,
        /// Cycles each run of the target may use.
        #[arg(long, default_value_t = 100_000)]
        gas_limit: u64,
        /// The job's escrow (smallest unit): pays every run; the rest is refunded.
        #[arg(long)]
        escrow: String,
        /// Where refunds go (default: the signer).
        #[arg(long)]
        refund_to: Option<String>,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Cancel a job (its owner only); the rest of its escrow is refunded.
    Cancel {
        /// Job id.
        id: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Add to a job's escrow (anyone may).
    TopUp {
        /// Job id.
        id: String,
        /// Amount (smallest unit).
        amount: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// List the live jobs of an owner, with their escrow and next run.
    Jobs {
        /// The owner's address.
        owner: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
}

fn call(handler: &str, args: Vec<Value>, value: u128) -> TxKind {
    TxKind::CallActor {
        actor: CRON_REGISTRY_ADDRESS,
        handler: handler.into(),
        args,
        value,
    }
}

/// The job `id` as `getJob` shows it, from committed state; `None` if gone.
fn job(c: &Client, id: &str) -> Result<Option<Json>> {
    let registry = CRON_REGISTRY_ADDRESS.to_hex();
    let mut record = c.call("th_getStorage", json!([registry, format!("job:{id}")]))?;
    let Some(fields) = record.as_object_mut() else {
        return Ok(None);
    };
    fields.remove("timer");
    fields.remove("refundTo");
    let escrow = c.call("th_getStorage", json!([registry, format!("escrow:{id}")]))?;
    fields.insert("gasEscrow".into(), escrow);
    Ok(Some(record))
}

/// A JSON number or decimal string as people write it.
fn plain(v: &Json) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// Runs a cron action.
pub(crate) fn cron(j: bool, action: &CronAction) -> Result<()> {
    match action {
        CronAction::Schedule {
            target,
            method,
            args,
            at,
            interval,
            max_runs,
            gas_limit,
            escrow,
            refund_to,
            tx,
        } => {
            let mut call_args = vec![
                Value::str(client::address(target)?.to_hex()),
                Value::str(method.clone()),
                Value::List(client::parse_args(args.as_deref())?),
                Value::int(*at),
                Value::int(*interval),
                Value::int(*max_runs),
                Value::int(*gas_limit),
            ];
            if let Some(to) = refund_to {
                call_args.push(Value::str(client::address(to)?.to_hex()));
            }
            let kind = call("schedule", call_args, client::parse_amount(escrow)?);
            send_and_report(j, tx, kind)?;
        }
        CronAction::Cancel { id, tx } => {
            send_and_report(j, tx, call("cancel", vec![Value::str(id.clone())], 0))?
        }
        CronAction::TopUp { id, amount, tx } => send_and_report(
            j,
            tx,
            call(
                "topUp",
                vec![Value::str(id.clone())],
                client::parse_amount(amount)?,
            ),
        )?,
        CronAction::Jobs { owner, node } => {
            let c = Client::new(&node.rpc);
            let prefix = format!("owner:{}:", client::address(owner)?.to_hex());
            let keys = c.call(
                "th_getStorageKeys",
                json!([CRON_REGISTRY_ADDRESS.to_hex(), prefix]),
            )?;
            let mut ids: Vec<String> = keys
                .as_array()
                .ok_or_else(|| NodeError::Usage("th_getStorageKeys returned no list".into()))?
                .iter()
                .filter_map(|k| k.as_str()?.strip_prefix(&prefix).map(str::to_owned))
                .collect();
            ids.sort_by_key(|id| id.parse::<u64>().unwrap_or(u64::MAX));
            let mut jobs = Vec::new();
            for id in &ids {
                jobs.extend(job(&c, id)?);
            }
            print(j, &Json::Array(jobs.clone()), |_| {
                if jobs.is_empty() {
                    println!("no jobs");
                }
                for job in &jobs {
                    println!(
                        "job {}  {}.{}  next run {}  every {} s  runs left {}  escrow {}",
                        job["id"].as_str().unwrap_or("?"),
                        job["target"].as_str().unwrap_or("?"),
                        job["method"].as_str().unwrap_or("?"),
                        job["nextRunAt"],
                        job["intervalSec"],
                        job["runsLeft"],
                        plain(&job["gasEscrow"]),
                    );
                }
            });
        }
    }
    Ok(())
}
