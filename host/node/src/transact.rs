//! The client commands that sign and send a transaction: `deploy`, `call`,
//! `transfer` and `revoke-timer-payments`.

use timerhost_types::TxKind;

use crate::cli::Command;
use crate::client;
use crate::client_args::send_and_report;
use crate::error::{NodeError, Result};

/// Runs one of this group's commands.
pub(crate) fn run(j: bool, command: &Command) -> Result<()> {
    match command {
        Command::Deploy {
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
        Command::Call {
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
        Command::Transfer { to, amount, tx } => {
            let kind = TxKind::Transfer {
                to: client::address(to)?,
                amount: client::parse_amount(amount)?,
            };
            send_and_report(j, tx, kind)?;
        }
        Command::RevokeTimerPayments { tx } => {
            send_and_report(j, tx, TxKind::RevokeTimerPayments)?;
        }
        other => unreachable!("not a transaction command: {other:?}"),
    }
    Ok(())
}
