//! `timerhost testnet --validators N [--dir D]`: a local validator network
//! in one command. It creates (or reuses) one home per node under `D`:
//!
//! ```text
//! D/node0 … D/node{N-1}   validators: consensus.key, genesis.toml, node.toml
//! D/follower0 …           --followers M: nodes that follow and serve RPC,
//!                         each with a consensus key that is not in the
//!                         set (a proposal can add it, #32)
//! D/pids                  process ids of the running nodes
//! ```
//!
//! Every node shares the dev genesis (chain 1337, the funded dev accounts)
//! with the N validators — dev account i operates validator i, and config
//! updates go through proposals (`timerhost gov propose`) — listens on loopback (`--rpc-port` + i for
//! JSON-RPC, `--p2p-port` + i for peers), dials all the others and forwards
//! transactions to their RPC. Then it starts every node as a child process
//! (logs in `D/<node>/node.log`) and stops them all on Ctrl-C;
//! `--init-only` only writes the homes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use clap::Args;
use serde_json::json;
use timerhost_consensus::ConsensusKey;
use timerhost_types::{Genesis, GenesisValidator};

use crate::error::{NodeError, Result};
use crate::home::Home;
use crate::keys::{consensus_key_path, write_secret};

/// `timerhost testnet`'s arguments.
#[derive(Debug, Args)]
pub struct TestnetArgs {
    /// Number of validators.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub validators: u16,
    /// Extra nodes that follow the chain without voting.
    #[arg(long, default_value_t = 0)]
    pub followers: u16,
    /// Directory of the node homes (reused when it already holds them).
    #[arg(long, default_value = "timerhost-testnet")]
    pub dir: PathBuf,
    /// JSON-RPC port of the first node; node i uses this + i.
    #[arg(long, default_value_t = 8700)]
    pub rpc_port: u16,
    /// Peer-to-peer port of the first node; node i uses this + i.
    #[arg(long, default_value_t = 26700)]
    pub p2p_port: u16,
    /// Target interval between blocks.
    #[arg(long, default_value = "500ms")]
    pub block_time: String,
    /// How long validators wait for a round's proposal.
    #[arg(long, default_value = "2s")]
    pub timeout_propose: String,
    /// Write the homes and exit (start each with `timerhost node --home D/<node>`).
    #[arg(long)]
    pub init_only: bool,
}

/// One node of the testnet.
struct NodeSpec {
    name: String,
    home: PathBuf,
    rpc_port: u16,
    p2p_port: u16,
}

fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> NodeError + 'a {
    move |source| NodeError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

impl TestnetArgs {
    fn nodes(&self) -> Result<Vec<NodeSpec>> {
        let total = u32::from(self.validators) + u32::from(self.followers);
        for (flag, base) in [("--rpc-port", self.rpc_port), ("--p2p-port", self.p2p_port)] {
            if u32::from(base) + total > 65_535 {
                return Err(NodeError::Usage(format!(
                    "{flag} {base} leaves no room for {total} nodes below port 65535"
                )));
            }
        }
        Ok((0..total)
            .map(|i| {
                let name = if i < u32::from(self.validators) {
                    format!("node{i}")
                } else {
                    format!("follower{}", i - u32::from(self.validators))
                };
                NodeSpec {
                    home: self.dir.join(&name),
                    name,
                    rpc_port: self.rpc_port + i as u16,
                    p2p_port: self.p2p_port + i as u16,
                }
            })
            .collect())
    }

    fn node_toml(&self, me: &NodeSpec, all: &[NodeSpec]) -> String {
        let others = all.iter().filter(|n| n.name != me.name);
        let peers: Vec<String> = others
            .clone()
            .map(|n| format!("\"/ip4/127.0.0.1/tcp/{}\"", n.p2p_port))
            .collect();
        let gossip: Vec<String> = others
            .map(|n| format!("\"http://127.0.0.1:{}\"", n.rpc_port))
            .collect();
        format!(
            "# Written by `timerhost testnet` (every field: config/node.toml).\n\
             rpc = \"127.0.0.1:{rpc}\"\n\
             block_time = \"{block_time}\"\n\n\
             [consensus]\n\
             listen = \"/ip4/127.0.0.1/tcp/{p2p}\"\n\
             peers = [{peers}]\n\
             tx_gossip = [{gossip}]\n\
             timeout_propose = \"{propose}\"\n\
             status_interval = \"1s\"\n",
            rpc = me.rpc_port,
            block_time = self.block_time,
            p2p = me.p2p_port,
            peers = peers.join(", "),
            gossip = gossip.join(", "),
            propose = self.timeout_propose,
        )
    }

    /// Writes every home that does not exist yet.
    fn init(&self, nodes: &[NodeSpec]) -> Result<bool> {
        let existing = nodes
            .iter()
            .filter(|n| n.home.join("genesis.toml").exists())
            .count();
        if existing == nodes.len() {
            return Ok(false);
        }
        if existing > 0 {
            return Err(NodeError::Usage(format!(
                "{} holds only part of a testnet ({existing} of {} homes); delete it or pick another --dir",
                self.dir.display(),
                nodes.len()
            )));
        }
        crate::config::parse_duration(&self.block_time).map_err(NodeError::Usage)?;
        crate::config::parse_duration(&self.timeout_propose).map_err(NodeError::Usage)?;
        // Every node gets a consensus key: validators are in the genesis set,
        // followers stand by and vote once a proposal adds them (#32).
        let keys: Vec<ConsensusKey> = nodes.iter().map(|_| ConsensusKey::generate()).collect();
        let mut genesis = Genesis::dev();
        genesis.validators = keys[..usize::from(self.validators)]
            .iter()
            .enumerate()
            .map(|(i, k)| GenesisValidator {
                public_key: timerhost_consensus::signing::public_key_to_hex(&k.public_key()),
                power: 1,
                // Dev account i operates validator i: `--dev-account i` votes.
                operator: timerhost_types::dev_account_key(i as u32).address(),
            })
            .collect();
        // Operators past the ten funded dev accounts get the same balance,
        // so that every one can pay for its votes.
        for v in genesis
            .validators
            .iter()
            .skip(timerhost_types::DEV_ACCOUNT_COUNT)
        {
            genesis.accounts.push(timerhost_types::GenesisAccount {
                address: v.operator,
                balance: timerhost_types::genesis::DEV_ACCOUNT_BALANCE,
            });
        }
        // A validator network's configs change by proposal; dev account 0
        // keeps the emergency instructions.
        genesis.governance.mode = timerhost_types::GovernanceMode::Proposals;
        for (i, node) in nodes.iter().enumerate() {
            std::fs::create_dir_all(&node.home).map_err(io("creating", &node.home))?;
            if let Some(key) = keys.get(i) {
                write_secret(&consensus_key_path(&node.home), &key.to_hex())?;
            }
            let toml_path = node.home.join("node.toml");
            std::fs::write(&toml_path, self.node_toml(node, nodes))
                .map_err(io("writing", &toml_path))?;
            Home::new(&node.home).init(&genesis)?;
        }
        Ok(true)
    }

    /// Creates the homes and, unless `--init-only`, runs every node until Ctrl-C.
    pub fn execute(&self, as_json: bool) -> Result<()> {
        let nodes = self.nodes()?;
        let created = self.init(&nodes)?;
        let listing: Vec<_> = nodes
            .iter()
            .map(|n| {
                json!({
                    "name": n.name,
                    "home": n.home,
                    "rpc": format!("http://127.0.0.1:{}", n.rpc_port),
                    "p2p": format!("/ip4/127.0.0.1/tcp/{}", n.p2p_port),
                })
            })
            .collect();
        if as_json {
            println!(
                "{}",
                json!({ "event": if created { "created" } else { "reused" }, "dir": self.dir, "nodes": listing })
            );
        } else {
            println!(
                "{} a testnet of {} validator(s){} in {}",
                if created { "created" } else { "reusing" },
                self.validators,
                if self.followers > 0 {
                    format!(" and {} follower(s)", self.followers)
                } else {
                    String::new()
                },
                self.dir.display()
            );
            for n in &nodes {
                println!(
                    "  {:<10} rpc http://127.0.0.1:{}  home {}",
                    n.name,
                    n.rpc_port,
                    n.home.display()
                );
            }
        }
        if self.init_only {
            if !as_json {
                println!(
                    "start each node with: timerhost node --home {}/<node>",
                    self.dir.display()
                );
            }
            return Ok(());
        }
        self.run(&nodes, as_json)
    }

    fn run(&self, nodes: &[NodeSpec], as_json: bool) -> Result<()> {
        let exe = std::env::current_exe().map_err(io("locating", Path::new("timerhost")))?;
        let mut children: Vec<(String, Child)> = Vec::new();
        for n in nodes {
            let log_path = n.home.join("node.log");
            let log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log_path)
                .map_err(io("opening", &log_path))?;
            let err = log.try_clone().map_err(io("opening", &log_path))?;
            let child = Command::new(&exe)
                .arg("node")
                .arg("--home")
                .arg(&n.home)
                .stdin(Stdio::null())
                .stdout(log)
                .stderr(err)
                .spawn()
                .map_err(io("starting a node for", &n.home))?;
            children.push((n.name.clone(), child));
        }
        let pids: Vec<String> = children.iter().map(|(_, c)| c.id().to_string()).collect();
        let pid_path = self.dir.join("pids");
        std::fs::write(&pid_path, pids.join("\n") + "\n").map_err(io("writing", &pid_path))?;
        if !as_json {
            println!(
                "running (logs in {dir}/<node>/node.log). Stop with Ctrl-C here, or: kill $(cat {dir}/pids)",
                dir = self.dir.display()
            );
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(io("starting the signal handler for", &self.dir))?;
        // A node that exits is reported and the others keep running (a
        // validator set tolerates fewer than a third of its power down);
        // Ctrl-C, or every node gone, ends the testnet.
        let mut running: Vec<bool> = vec![true; children.len()];
        rt.block_on(async {
            let mut signal = std::pin::pin!(crate::run::wait_for_signal());
            while running.iter().any(|r| *r) {
                tokio::select! {
                    _ = &mut signal => return,
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {
                        for ((name, child), alive) in children.iter_mut().zip(running.iter_mut()) {
                            if *alive {
                                if let Ok(Some(status)) = child.try_wait() {
                                    *alive = false;
                                    eprintln!("{name} exited ({status}); the other nodes keep running (see its node.log; `timerhost node --home {}/{name}` restarts it)", self.dir.display());
                                }
                            }
                        }
                    }
                }
            }
        });
        for ((_, child), alive) in children.iter().zip(&running) {
            if *alive {
                let _ = Command::new("kill")
                    .arg("-TERM")
                    .arg(child.id().to_string())
                    .status();
            }
        }
        for (_, child) in children.iter_mut() {
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&pid_path);
        if !as_json {
            println!(
                "testnet stopped; `timerhost testnet --dir {}` restarts it",
                self.dir.display()
            );
        }
        Ok(())
    }
}
