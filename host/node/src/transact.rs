//! The client commands that sign and send a transaction: `deploy`, `call`,
//! `transfer` and `revoke-timer-payments`.

use std::path::PathBuf;

use clap::Subcommand;
use timerhost_types::TxKind;

use crate::client;
use crate::client_args::{send_and_report, TxArgs};
use crate::error::{NodeError, Result};

/// The client commands that sign and send a transaction.
#[derive(Debug, Subcommand)]
pub enum TransactCommand {
    /// Deploy a Python actor.
    Deploy {
        /// The actor's source file.
        file: PathBuf,
        /// Arguments of `deploy`, as a JSON array.
        #[arg(long)]
        args: Option<String>,
        /// Amount transferred to the new actor.
        #[arg(long, default_value = "0")]
        value: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Call an actor's handler.
    Call {
        /// The actor.
        actor: String,
        /// Handler name.
        handler: String,
        /// Arguments, as a JSON array.
        args: Option<String>,
        /// Amount transferred to the actor.
        #[arg(long, default_value = "0")]
        value: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Transfer funds.
    Transfer {
        /// Recipient.
        to: String,
        /// Amount in the smallest unit.
        amount: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Revoke every timer that names the signer as fee payer and was
    /// scheduled before now: each is removed when it comes due, without
    /// running and without charging the signer; its deposit is refunded.
    RevokeTimerPayments {
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
}

impl TransactCommand {
    /// Runs the command.
    pub fn execute(&self, j: bool) -> Result<()> {
        match self {
            TransactCommand::Deploy {
                file,
                args,
                value,
                tx,
            } => {
                let code = std::fs::read_to_string(file).map_err(|source| NodeError::Io {
                    action: "reading",
                    path: file.clone(),
                    source,
                })?;
                let kind = TxKind::DeployActor {
                    code,
                    args: client::parse_args(args.as_deref())?,
                    value: client::parse_amount(value)?,
                };
                send_and_report(j, tx, kind)?;
            }
            TransactCommand::Call {
                actor,
                handler,
                args,
                value,
                tx,
            } => {
                let kind = TxKind::CallActor {
                    actor: client::address(actor)?,
                    handler: handler.clone(),
                    args: client::parse_args(args.as_deref())?,
                    value: client::parse_amount(value)?,
                };
                send_and_report(j, tx, kind)?;
            }
            TransactCommand::Transfer { to, amount, tx } => {
                let kind = TxKind::Transfer {
                    to: client::address(to)?,
                    amount: client::parse_amount(amount)?,
                };
                send_and_report(j, tx, kind)?;
            }
            TransactCommand::RevokeTimerPayments { tx } => {
                send_and_report(j, tx, TxKind::RevokeTimerPayments)?;
            }
        }
        Ok(())
    }
}
