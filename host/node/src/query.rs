//! The read-only client commands: `status`, `balance`, `block`, `receipt`,
//! `timer`, `timers`, `quote`, `globalbox`, `dead-letters`, `events` (with `--follow`) and
//! `rpc` — JSON-RPC reads, printed for people or, with `--json`, for scripts.

use clap::Subcommand;
use serde_json::json;
use timerhost_rpc::Client;

use crate::client;
use crate::client_args::NodeArgs;
use crate::error::{NodeError, Result};
use crate::output::{pretty, print, print_receipt};

fn print_event(e: &serde_json::Value) {
    println!(
        "#{} {} from {}: {}",
        e["height"],
        e["name"].as_str().unwrap_or("?"),
        e["emitter"].as_str().unwrap_or("?"),
        e["data"]
    );
}

/// The read-only client commands.
#[derive(Debug, Subcommand)]
pub enum QueryCommand {
    /// Node status (height, head, mempool, block production).
    Status {
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Balance and nonce of an address.
    Balance {
        /// The address.
        address: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A block (default: the latest).
    Block {
        /// Height.
        height: Option<u64>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A transaction's receipt (events, error and Python traceback, fees).
    Receipt {
        /// Transaction hash.
        hash: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// A pending timer by id.
    Timer {
        /// Timer id (0x…).
        id: String,
        /// Print every event of its life as the node pushes it (from its
        /// scheduling on), until it fires for the last time, expires or is
        /// cancelled.
        #[arg(long)]
        follow: bool,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Pending timers of an actor, at a height, or paid by an address.
    Timers {
        /// Timers of this actor.
        #[arg(long)]
        actor: Option<String>,
        /// Timers due at this height.
        #[arg(long)]
        height: Option<u64>,
        /// Timers paid by this address.
        #[arg(long)]
        fee_payer: Option<String>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The validator set of consensus at a height (`th_getValidators`):
    /// address, public key, power and operator of each validator.
    Validators {
        /// The height (default: the next block's).
        #[arg(long)]
        height: Option<u64>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// The Globalbox under priority ordering: the due fires queued by score,
    /// in the order they will be materialised (`th_getGlobalbox`).
    Globalbox {
        /// Most entries to show.
        #[arg(long)]
        limit: Option<u64>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// What a timer would cost before you schedule it: the pre-charge per
    /// fire at today's basefees, the deposit, the lane cycles already
    /// reserved at that height and whether one more fits (`th_quoteTimer`).
    Quote {
        /// Firing height (default: the first height a transaction sent now
        /// could schedule, the next block's + 1).
        #[arg(long)]
        height: Option<u64>,
        /// A time timer due at this unix millisecond instead (after the
        /// head's timestamp).
        #[arg(long, conflicts_with = "height")]
        timestamp_ms: Option<u64>,
        /// Cycles per fire (default: `max_cycles_per_fire`).
        #[arg(long)]
        gas_limit: Option<u64>,
        /// The lane fee cap per cycle to price (#31; default `2 × lane
        /// basefee + priority fee`).
        #[arg(long)]
        max_fee_per_cycle: Option<u64>,
        /// The priority fee (bid) per cycle to price.
        #[arg(long, alias = "bid")]
        max_priority_fee_per_cycle: Option<u64>,
        /// A retry policy's count of retries (#45): the quote adds its worst
        /// case, every attempt at `max_cost`.
        #[arg(long)]
        retries: Option<u32>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// An actor's dead-letter queue (#45, `th_getDeadLetters`): its timers
    /// whose retries all failed, with the last error. Only the actor itself
    /// retries or drops an entry, through one of its handlers.
    DeadLetters {
        /// The actor.
        actor: String,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Events, filtered by name, actor and height range.
    Events {
        /// Event name (e.g. TimerFired).
        #[arg(long)]
        name: Option<String>,
        /// Emitting actor.
        #[arg(long)]
        actor: Option<String>,
        /// Lowest height.
        #[arg(long)]
        from: Option<u64>,
        /// Highest height (with --follow: stop once it is reached).
        #[arg(long)]
        to: Option<u64>,
        /// Most events.
        #[arg(long, conflicts_with = "follow")]
        limit: Option<u64>,
        /// Keep polling and print new matching events as blocks arrive, from
        /// the current head (or --from) until Ctrl-C; with --json, one event
        /// per line.
        #[arg(long)]
        follow: bool,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
    /// Call any JSON-RPC method: `timerhost rpc th_getTimers '[{"actor":"0x…"}]'`.
    Rpc {
        /// Method name.
        method: String,
        /// Parameters, as JSON (an array, or one value).
        params: Option<String>,
        /// Which node to talk to.
        #[command(flatten)]
        node: NodeArgs,
    },
}

impl QueryCommand {
    /// Runs the command.
    pub fn execute(&self, j: bool) -> Result<()> {
        match self {
            QueryCommand::Status { node } => {
                let s = Client::new(&node.rpc).call("th_status", json!([]))?;
                print(j, &s, |s| {
                    println!(
                        "chain {}{} at height {} (head {}, timestamp {} ms)",
                        s["chain_id"],
                        if s["dev"] == true { " (dev)" } else { "" },
                        s["height"],
                        s["head_hash"].as_str().unwrap_or("?"),
                        s["timestamp"]
                    );
                    println!(
                        "mempool {}/{}; producer {}",
                        s["mempool"]["size"], s["mempool"]["capacity"], s["producer"]
                    );
                    println!(
                    "timers {} ({} ordering); deposits held {}; lane basefee {} (last median tip {})",
                    s["timers"]["status"].as_str().unwrap_or("?"),
                    s["timers"]["ordering"].as_str().unwrap_or("?"),
                    s["timers"]["deposits_held"].as_str().unwrap_or("?"),
                    s["timers"]["lane_basefee"],
                    s["timers"]["lane_median_tip"]
                );
                });
            }
            QueryCommand::Balance { address, node } => {
                let a = client::address(address)?;
                let acct = Client::new(&node.rpc).call("th_getAccount", json!([a]))?;
                print(j, &acct, |a| {
                    println!(
                        "{}: balance {} nonce {}{}",
                        a["address"].as_str().unwrap_or("?"),
                        a["balance"].as_str().unwrap_or("?"),
                        a["nonce"],
                        if a["is_actor"] == true {
                            " (actor)"
                        } else {
                            ""
                        }
                    )
                });
            }
            QueryCommand::Block { height, node } => {
                let b = Client::new(&node.rpc).call("th_getBlock", json!([height]))?;
                if b.is_null() {
                    return Err(NodeError::Usage(format!(
                        "no block at height {}",
                        height.unwrap_or_default()
                    )));
                }
                print(j, &b, pretty);
            }
            QueryCommand::Timer { id, follow, node } => {
                if *follow {
                    let c = Client::new(&node.rpc);
                    return crate::follow_ws::follow_timer(&c, id, |e| {
                        if j {
                            println!("{e}");
                        } else {
                            print_event(e);
                        }
                    });
                }
                let t = Client::new(&node.rpc).call("th_getTimer", json!([id]))?;
                if t.is_null() {
                    return Err(NodeError::Usage(format!(
                        "no pending timer {id} (it fired, expired or was cancelled)"
                    )));
                }
                print(j, &t, pretty);
            }
            QueryCommand::Quote {
                height,
                timestamp_ms,
                gas_limit,
                max_fee_per_cycle,
                max_priority_fee_per_cycle,
                retries,
                node,
            } => {
                let q = Client::new(&node.rpc).call(
                    "th_quoteTimer",
                    json!([{
                        "height": height,
                        "timestamp_ms": timestamp_ms,
                        "gas_limit": gas_limit,
                        "max_fee_per_cycle": max_fee_per_cycle,
                        "max_priority_fee_per_cycle": max_priority_fee_per_cycle,
                        "retries": retries,
                    }]),
                )?;
                print(j, &q, |q| {
                    let at = match q["timestamp_ms"].as_u64() {
                        Some(t) => format!("due at {t} ms"),
                        None => format!("at height {}", q["height"]),
                    };
                    println!(
                    "a timer {at} with gas_limit {}: max_cost {} per fire, deposit {} (empty payload)",
                    q["gas_limit"],
                    q["max_cost"].as_str().unwrap_or("?"),
                    q["deposit"].as_str().unwrap_or("?")
                );
                    println!(
                    "lane basefee {} per cycle; priced with max_fee_per_cycle {} and max_priority_fee_per_cycle {}",
                    q["lane_basefee"], q["max_fee_per_cycle"], q["max_priority_fee_per_cycle"]
                );
                    if q["max_attempts"].as_u64().unwrap_or(1) > 1 {
                        println!(
                            "with its retries: at most {} attempts, worst case {}",
                            q["max_attempts"],
                            q["worst_case_cost"].as_str().unwrap_or("?")
                        );
                    }
                    for tier in ["economy", "standard", "fast", "urgent"] {
                        let t = &q["suggested_fees"][tier];
                        println!(
                            "  {tier:<8} max_fee_per_cycle {:<12} max_priority_fee_per_cycle {}",
                            t["max_fee_per_cycle"], t["max_priority_fee_per_cycle"]
                        );
                    }
                    println!(
                        "lane {} cycles, {} reserved by {} timer(s) queued there; {}",
                        q["lane_budget"],
                        q["reserved"],
                        q["queued"],
                        if q["fits"] == true {
                            "one more fits"
                        } else {
                            "one more would be carried over"
                        }
                    );
                });
            }
            QueryCommand::Timers {
                actor,
                height,
                fee_payer,
                node,
            } => {
                let ts = Client::new(&node.rpc).call(
                    "th_getTimers",
                    json!([{ "actor": actor, "height": height, "fee_payer": fee_payer }]),
                )?;
                print(j, &ts, |ts| {
                    let list = ts.as_array().cloned().unwrap_or_default();
                    println!("{} pending timer(s)", list.len());
                    for t in list {
                        println!(
                        "  {}  actor {}  trigger {} {}  handler {}  payer {}  expires {}  deposit {}",
                        t["timer_id"].as_str().unwrap_or("?"),
                        t["actor"].as_str().unwrap_or("?"),
                        t["trigger"]["kind"].as_str().unwrap_or("?"),
                        t["height"],
                        t["handler"].as_str().unwrap_or("?"),
                        t["fee_payer"].as_str().unwrap_or("?"),
                        t["expires_at"],
                        t["deposit"].as_str().unwrap_or("?")
                    );
                    }
                });
            }
            QueryCommand::Validators { height, node } => {
                let set = Client::new(&node.rpc).call("th_getValidators", json!([height]))?;
                if set.is_null() {
                    return Err(NodeError::Usage(
                        "this chain has no validators: a single node produces its blocks".into(),
                    ));
                }
                print(j, &set, |set| {
                    let list = set["validators"].as_array().cloned().unwrap_or_default();
                    println!(
                        "{} validator(s) at height {}, total power {}",
                        list.len(),
                        set["height"],
                        set["total_power"]
                    );
                    for v in list {
                        println!(
                            "  {}  power {}  operator {}  key {}",
                            v["address"].as_str().unwrap_or("?"),
                            v["power"],
                            v["operator"].as_str().unwrap_or("?"),
                            v["public_key"].as_str().unwrap_or("?"),
                        );
                    }
                });
            }
            QueryCommand::DeadLetters { actor, node } => {
                let entries = Client::new(&node.rpc)
                    .call("th_getDeadLetters", json!([{ "actor": actor }]))?;
                print(j, &entries, |entries| {
                    let list = entries.as_array().cloned().unwrap_or_default();
                    println!("{} dead letter(s) of {actor}", list.len());
                    for e in list {
                        println!(
                            "  timer {}  {} attempts, last at height {}  expires at {}  deposit {}\n    {}",
                            e["timer_id"].as_str().unwrap_or("?"),
                            e["attempts"],
                            e["dead_at"],
                            e["expires_at"],
                            e["deposit"].as_str().unwrap_or("?"),
                            e["error"].as_str().unwrap_or("?"),
                        );
                    }
                });
            }
            QueryCommand::Globalbox { limit, node } => {
                let entries =
                    Client::new(&node.rpc).call("th_getGlobalbox", json!([{ "limit": limit }]))?;
                print(j, &entries, |entries| {
                    let list = entries.as_array().cloned().unwrap_or_default();
                    println!("{} queued fire(s), head first", list.len());
                    for e in list {
                        let place = if e["waiting"] == true {
                            format!(
                                "waiting for the lane basefee to fall to its cap {}",
                                e["max_fee_per_cycle"]
                            )
                        } else {
                            format!(
                                "score {} (at enqueue {}), weight {}",
                                e["score_now"].as_str().unwrap_or("?"),
                                e["score"].as_str().unwrap_or("?"),
                                e["weight"]
                            )
                        };
                        println!(
                            "  #{}  {}  {} timer {}  due at {}  bid {}  {place}",
                            e["position"],
                            e["actor"].as_str().unwrap_or("?"),
                            e["kind"].as_str().unwrap_or("?"),
                            e["timer_id"].as_str().unwrap_or("?"),
                            e["due_height"],
                            e["bid"],
                        );
                    }
                });
            }
            QueryCommand::Events {
                name,
                actor,
                from,
                to,
                limit,
                follow,
                node,
            } => {
                let c = Client::new(&node.rpc);
                if *follow {
                    let f = crate::follow::Follow {
                        name: name.clone(),
                        actor: actor.clone(),
                        from: *from,
                        to: *to,
                        ..Default::default()
                    };
                    // JSON Lines: the stream has no end to close an array with.
                    let show = |e: &serde_json::Value| {
                        if j {
                            println!("{e}");
                        } else {
                            print_event(e);
                        }
                    };
                    let notice = |msg: &str| eprintln!("note: {msg}");
                    if to.is_some() {
                        // A finite range: read it, polling until its end.
                        crate::follow::follow(&c, &f, show, notice)?;
                    } else {
                        // Forever: the node pushes each block's events.
                        crate::follow_ws::follow_pushed(&c, &f, show, notice)?;
                    }
                    return Ok(());
                }
                let es = c.call(
                "th_getEvents",
                json!([{ "name": name, "actor": actor, "from": from, "to": to, "limit": limit }]),
            )?;
                print(j, &es, |es| {
                    for e in es.as_array().into_iter().flatten() {
                        print_event(e);
                    }
                });
            }
            QueryCommand::Rpc {
                method,
                params,
                node,
            } => {
                let params: serde_json::Value = match params {
                    None => json!([]),
                    Some(p) => serde_json::from_str(p)
                        .map_err(|e| NodeError::Usage(format!("params are not JSON ({e}): {p}")))?,
                };
                let r = Client::new(&node.rpc).call(method, params)?;
                if j {
                    println!("{r}");
                } else {
                    pretty(&r);
                }
            }
            QueryCommand::Receipt { hash, node } => {
                let r = Client::new(&node.rpc).call("th_getReceipt", json!([hash]))?;
                if r.is_null() {
                    return Err(NodeError::Usage(format!("no transaction {hash} is known")));
                }
                if j {
                    println!("{r}");
                } else if r.get("pending").is_some() {
                    println!("{hash} is pending in the mempool");
                } else {
                    print_receipt(&r);
                }
            }
        }
        Ok(())
    }
}
