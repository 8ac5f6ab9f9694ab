//! The dev-chain client commands: `snapshot`, `revert` and `mine`.

use clap::Subcommand;
use serde_json::json;
use timerhost_rpc::Client;

use crate::client_args::NodeArgs;
use crate::error::{NodeError, Result};
use crate::output::print;

/// Normalises a snapshot id (`0x1`, or decimal `1`) to the node's form (`0x1`).
fn parse_snapshot_id(id: &str) -> Result<String> {
    let t = id.trim();
    let n = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    };
    n.map(|n| format!("{n:#x}")).ok_or_else(|| {
        NodeError::Usage(format!(
            "bad snapshot id {id:?}: give it as `timerhost snapshot` printed it, e.g. 0x1"
        ))
    })
}

/// The height of snapshot `id` as `th_status` lists it (`null` if it is not held).
fn snapshot_height(c: &Client, id: &serde_json::Value) -> Result<serde_json::Value> {
    let status = c.call("th_status", json!([]))?;
    Ok(status["snapshots"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["id"] == *id)
        .map_or(serde_json::Value::Null, |s| s["height"].clone()))
}

/// The dev-chain client commands (dev chains only).
#[derive(Debug, Subcommand)]
pub enum DevToolsCommand {
    /// Produce N blocks now (dev chains only).
    Mine {
        /// Number of blocks.
        #[arg(default_value_t = 1)]
        blocks: u64,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Save the dev chain's state and print its id for `timerhost revert`
    /// (dev chains only; held in the node's memory, lost when it stops).
    Snapshot {
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Return the dev chain to a snapshot: head, state, blocks, receipts and
    /// events. That snapshot and every later one are forgotten.
    Revert {
        /// Snapshot id, as `timerhost snapshot` printed it (e.g. 0x1).
        id: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
}

impl DevToolsCommand {
    /// Runs the command.
    pub fn execute(&self, j: bool) -> Result<()> {
        match self {
            DevToolsCommand::Snapshot { node } => {
                let c = Client::new(&node.rpc);
                let id = c.call("dev_snapshot", json!([]))?;
                let v = json!({ "id": id, "height": snapshot_height(&c, &id)? });
                print(j, &v, |v| {
                    println!(
                        "snapshot {} at height {} (revert with `timerhost revert {}`)",
                        v["id"].as_str().unwrap_or("?"),
                        v["height"],
                        v["id"].as_str().unwrap_or("?")
                    )
                });
            }
            DevToolsCommand::Revert { id, node } => {
                let c = Client::new(&node.rpc);
                let id = &parse_snapshot_id(id)?;
                // Read before reverting: the revert forgets the snapshot, and on
                // an interval node the head may move on right after it.
                let height = snapshot_height(&c, &json!(id))?;
                if c.call("dev_revert", json!([id]))? != json!(true) {
                    return Err(NodeError::Usage(format!(
                    "the node holds no snapshot {id}: unknown, already reverted to, or forgotten by a revert to an earlier one (snapshots are lost when the node stops)"
                )));
                }
                let v = json!({ "id": id, "reverted": true, "height": height });
                print(j, &v, |v| {
                    println!("reverted to snapshot {id}: head at height {}", v["height"])
                });
            }
            DevToolsCommand::Mine { blocks, node } => {
                let r = Client::new(&node.rpc).call("dev_mine", json!([blocks]))?;
                print(j, &r, |r| {
                    println!("mined {} block(s), head at {}", r["mined"], r["to"]);
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_ids_are_normalised_to_the_nodes_form() {
        assert_eq!(parse_snapshot_id("0x1a").unwrap(), "0x1a");
        assert_eq!(parse_snapshot_id(" 26 ").unwrap(), "0x1a");
        let e = parse_snapshot_id("one").unwrap_err().to_string();
        assert!(e.contains("bad snapshot id \"one\""), "{e}");
    }
}
