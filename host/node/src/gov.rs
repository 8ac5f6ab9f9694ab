//! `timerhost gov …`: show the configs, update them, cancel or extend a
//! timer, pause, resume or shut timers down — signed by a member of the
//! `system_deployers` (the node refuses any other signer before inclusion)
//! — and, on a chain governed by its validators (#32), propose, vote on,
//! execute and list proposals (anyone proposes and executes; validator
//! operators vote).

use clap::Subcommand;
use serde_json::json;
use timerhost_rpc::Client;
use timerhost_types::TxKind;

use crate::client_args::{send_and_report, NodeArgs, TxArgs};
use crate::error::{NodeError, Result};
use crate::output::{pretty, print};

/// Governance actions.
#[derive(Debug, Subcommand)]
pub enum GovAction {
    /// Show the TimerConfig and BasefeeConfig in force.
    ShowConfig {
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Update TimerConfig fields (from the next block): KEY=VALUE…
    SetTimerConfig {
        /// Fields to change, e.g. max_ttl_blocks=5000.
        #[arg(required = true)]
        settings: Vec<String>,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Update BasefeeConfig fields (from the next block): KEY=VALUE…
    SetBasefeeConfig {
        /// Fields to change, e.g. min_cycle_basefee=200.
        #[arg(required = true)]
        settings: Vec<String>,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Cancel a pending timer.
    CancelTimer {
        /// Timer id.
        id: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Extend a pending timer's expiry (clamped to height + max_ttl_blocks,
    /// never below its firing height).
    ExtendTimer {
        /// Timer id.
        id: String,
        /// New `expires_at` height.
        height: u64,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Pause timers: nothing fires or is classified, due timers wait in
    /// order, scheduling is refused until resume-timers.
    PauseTimers {
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Resume timers after a pause or a shutdown.
    ResumeTimers {
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Shut timers down: every pending timer is removed over the following
    /// blocks (GC budget) with its deposit refunded; scheduling is refused
    /// until resume-timers.
    ShutdownTimers {
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Submit a proposal for the validators to vote on (its deposit is
    /// taken from the signer, returned when it is executed or expires).
    Propose {
        /// What it does.
        #[command(subcommand)]
        action: ProposeAction,
    },
    /// Vote on a proposal as a validator's operator (a second vote replaces
    /// the first).
    Vote {
        /// The proposal.
        proposal_id: u64,
        /// Vote no (default: yes).
        #[arg(long)]
        no: bool,
        /// Signer (the operator), fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Execute a proposal that more than 2/3 of the power approved.
    Execute {
        /// The proposal.
        proposal_id: u64,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// List the proposals with their votes and status (`th_getProposals`).
    Proposals {
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
}

/// What a proposal does.
#[derive(Debug, Subcommand)]
pub enum ProposeAction {
    /// New TimerConfig fields (the rest as in force): KEY=VALUE…
    TimerConfig {
        /// Fields to change, e.g. ordering=market.
        #[arg(required = true)]
        settings: Vec<String>,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// New BasefeeConfig fields (the rest as in force): KEY=VALUE…
    BasefeeConfig {
        /// Fields to change, e.g. min_cycle_basefee=200.
        #[arg(required = true)]
        settings: Vec<String>,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Add a validator (its key from `timerhost keys show --consensus`).
    AddValidator {
        /// Its ed25519 public key (`0x` + 64 hex digits).
        public_key: String,
        /// Its voting power.
        #[arg(long, default_value_t = 1)]
        power: u64,
        /// The account that will sign its votes.
        #[arg(long)]
        operator: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Remove a validator.
    RemoveValidator {
        /// Its ed25519 public key.
        public_key: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Change a validator's power.
    SetValidatorPower {
        /// Its ed25519 public key.
        public_key: String,
        /// The new power.
        power: u64,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Replace the system deployers (who may send emergency instructions).
    SetSystemDeployers {
        /// Their addresses.
        addresses: Vec<String>,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
    /// Schedule a governed upgrade: from HEIGHT on, validators whose
    /// release knows NAME apply its rules; the others stop before HEIGHT.
    ScheduleUpgrade {
        /// The upgrade's name (`zero-value-transfer-guard`, …).
        name: String,
        /// The first height executed under it (at least 2 blocks after the
        /// proposal is executed).
        #[arg(long)]
        height: u64,
        /// Text for operators: which release to install, where.
        #[arg(long, default_value = "")]
        info: String,
        /// Signer, fees and node.
        #[command(flatten)]
        tx: TxArgs,
    },
}

impl ProposeAction {
    fn tx(&self) -> &TxArgs {
        match self {
            ProposeAction::TimerConfig { tx, .. }
            | ProposeAction::BasefeeConfig { tx, .. }
            | ProposeAction::AddValidator { tx, .. }
            | ProposeAction::RemoveValidator { tx, .. }
            | ProposeAction::SetValidatorPower { tx, .. }
            | ProposeAction::SetSystemDeployers { tx, .. }
            | ProposeAction::ScheduleUpgrade { tx, .. } => tx,
        }
    }

    /// The action, checked as the node will check it.
    fn action(&self) -> Result<timerhost_types::ProposalAction> {
        use timerhost_types::governance::parse_validator_key;
        use timerhost_types::{BasefeeConfig, ProposalAction as A, TimerConfig};
        let key = |k: &str| parse_validator_key(k).map_err(NodeError::Usage);
        let address = |a: &str| crate::client::address(a);
        let action = match self {
            ProposeAction::TimerConfig { settings, tx } => A::UpdateTimerConfig(updated_config(
                tx,
                "th_getTimerConfig",
                settings,
                "TimerConfig",
                TimerConfig::validate,
            )?),
            ProposeAction::BasefeeConfig { settings, tx } => {
                A::UpdateBasefeeConfig(updated_config(
                    tx,
                    "th_getBasefeeConfig",
                    settings,
                    "BasefeeConfig",
                    BasefeeConfig::validate,
                )?)
            }
            ProposeAction::AddValidator {
                public_key,
                power,
                operator,
                ..
            } => A::AddValidator {
                public_key: key(public_key)?,
                power: *power,
                operator: address(operator)?,
            },
            ProposeAction::RemoveValidator { public_key, .. } => A::RemoveValidator {
                public_key: key(public_key)?,
            },
            ProposeAction::SetValidatorPower {
                public_key, power, ..
            } => A::SetValidatorPower {
                public_key: key(public_key)?,
                power: *power,
            },
            ProposeAction::SetSystemDeployers { addresses, .. } => A::SetSystemDeployers(
                addresses
                    .iter()
                    .map(|a| address(a))
                    .collect::<Result<Vec<_>>>()?,
            ),
            ProposeAction::ScheduleUpgrade {
                name, height, info, ..
            } => A::ScheduleUpgrade {
                name: name.clone(),
                height: *height,
                info: info.clone(),
            },
        };
        action
            .check()
            .map_err(|why| NodeError::Usage(format!("{}: {why}", action.name())))?;
        Ok(action)
    }
}

/// Applies KEY=VALUE settings to a config's JSON form, refusing unknown keys.
fn apply_settings(
    mut config: serde_json::Value,
    settings: &[String],
    what: &str,
) -> Result<serde_json::Value> {
    for s in settings {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| NodeError::Usage(format!("{s:?}: expected KEY=VALUE")))?;
        let known: Vec<String> = config
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let slot = config.get_mut(k.trim()).ok_or_else(|| {
            NodeError::Usage(format!(
                "{what} has no field {k:?} (fields: {})",
                known.join(", ")
            ))
        })?;
        let v = v.trim().replace('_', "");
        *slot = match slot {
            serde_json::Value::String(_) => json!(v),
            _ => json!(v.parse::<u64>().map_err(|_| NodeError::Usage(format!(
                "{k}: {v:?} is not a non-negative integer"
            )))?),
        };
    }
    Ok(config)
}

/// The node's live config (read with `method`) with `settings` applied and
/// validated, ready to send in an update instruction.
fn updated_config<T: serde::de::DeserializeOwned>(
    t: &TxArgs,
    method: &str,
    settings: &[String],
    what: &str,
    validate: fn(&T) -> timerhost_types::Result<()>,
) -> Result<T> {
    let current = Client::new(&t.node.rpc).call(method, json!([]))?;
    let cfg: T = serde_json::from_value(apply_settings(current, settings, what)?)
        .map_err(|e| NodeError::Usage(format!("invalid config: {e}")))?;
    validate(&cfg).map_err(|e| NodeError::Usage(format!("invalid {what}: {e}")))?;
    Ok(cfg)
}

/// Runs a governance action.
pub(crate) fn gov(j: bool, action: &GovAction) -> Result<()> {
    use timerhost_types::{BasefeeConfig, SystemInstruction, TimerConfig};
    let hash = |id: &str| -> Result<timerhost_types::Hash> {
        id.trim()
            .parse()
            .map_err(|e| NodeError::Usage(format!("bad timer id {id:?}: {e}")))
    };
    match action {
        GovAction::ShowConfig { node } => {
            let c = Client::new(&node.rpc);
            let v = json!({
                "timer_config": c.call("th_getTimerConfig", json!([]))?,
                "basefee_config": c.call("th_getBasefeeConfig", json!([]))?,
            });
            print(j, &v, pretty);
        }
        GovAction::SetTimerConfig { settings, tx } => {
            let cfg = updated_config(
                tx,
                "th_getTimerConfig",
                settings,
                "TimerConfig",
                TimerConfig::validate,
            )?;
            send_and_report(
                j,
                tx,
                TxKind::System(SystemInstruction::UpdateTimerConfig(cfg)),
            )?;
        }
        GovAction::SetBasefeeConfig { settings, tx } => {
            let cfg = updated_config(
                tx,
                "th_getBasefeeConfig",
                settings,
                "BasefeeConfig",
                BasefeeConfig::validate,
            )?;
            send_and_report(
                j,
                tx,
                TxKind::System(SystemInstruction::UpdateBasefeeConfig(cfg)),
            )?;
        }
        GovAction::CancelTimer { id, tx } => send_and_report(
            j,
            tx,
            TxKind::System(SystemInstruction::CancelTimer {
                timer_id: hash(id)?,
            }),
        )?,
        GovAction::ExtendTimer { id, height, tx } => send_and_report(
            j,
            tx,
            TxKind::System(SystemInstruction::ExtendTimer {
                timer_id: hash(id)?,
                new_expires_at: *height,
            }),
        )?,
        GovAction::PauseTimers { tx } => {
            send_and_report(j, tx, TxKind::System(SystemInstruction::PauseTimers))?
        }
        GovAction::ResumeTimers { tx } => {
            send_and_report(j, tx, TxKind::System(SystemInstruction::ResumeTimers))?
        }
        GovAction::ShutdownTimers { tx } => {
            send_and_report(j, tx, TxKind::System(SystemInstruction::ShutdownTimers))?
        }
        GovAction::Propose { action } => send_and_report(
            j,
            action.tx(),
            TxKind::System(SystemInstruction::SubmitProposal(action.action()?)),
        )?,
        GovAction::Vote {
            proposal_id,
            no,
            tx,
        } => send_and_report(
            j,
            tx,
            TxKind::System(SystemInstruction::CastVote {
                proposal_id: *proposal_id,
                approve: !no,
            }),
        )?,
        GovAction::Execute { proposal_id, tx } => send_and_report(
            j,
            tx,
            TxKind::System(SystemInstruction::ExecuteProposal {
                proposal_id: *proposal_id,
            }),
        )?,
        GovAction::Proposals { node } => {
            let list = Client::new(&node.rpc).call("th_getProposals", json!([{}]))?;
            print(j, &list, |list| {
                let list = list.as_array().cloned().unwrap_or_default();
                println!("{} proposal(s)", list.len());
                for p in list {
                    println!(
                        "  #{} {} by {}: {} — yes {} / no {} of {} power, voting until block {}",
                        p["proposal_id"],
                        p["action"]["kind"].as_str().unwrap_or("?"),
                        p["proposer"].as_str().unwrap_or("?"),
                        p["status"].as_str().unwrap_or("?"),
                        p["yes_power"],
                        p["no_power"],
                        p["total_power"],
                        p["voting_ends_at"],
                    );
                }
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_apply_to_known_fields_only() {
        let c = json!({ "max_ttl_blocks": 10, "cycle_basefee": "5" });
        let out = apply_settings(
            c.clone(),
            &["max_ttl_blocks=2_000".into(), "cycle_basefee=7".into()],
            "X",
        )
        .unwrap();
        assert_eq!(out, json!({ "max_ttl_blocks": 2000, "cycle_basefee": "7" }));
        let e = apply_settings(c.clone(), &["nope=1".into()], "X").unwrap_err();
        assert!(e.to_string().contains("has no field"), "{e}");
        let e = apply_settings(c, &["max_ttl_blocks=-1".into()], "X").unwrap_err();
        assert!(e.to_string().contains("non-negative"), "{e}");
    }
}
