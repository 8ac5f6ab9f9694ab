//! `timerhost gov …`: show the configs, update them, cancel or extend a
//! timer, pause, resume or shut timers down. Every instruction is signed by
//! a member of the genesis `system_deployers`; the node refuses any other
//! signer before inclusion.

use clap::Subcommand;
use serde_json::json;
use timerhost_rpc::Client;
use timerhost_types::TxKind;

use crate::client_args::{pretty, print, send_and_report, NodeArgs, TxArgs};
use crate::error::{NodeError, Result};

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
