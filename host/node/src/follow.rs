//! `timerhost events --follow --to H`: read matching events up to a height,
//! polling for blocks as they arrive (without `--to` the node pushes them:
//! [`crate::follow_ws`]).
//!
//! The follower polls the node ([`POLL`]) and works in whole blocks: it only
//! asks for events up to a height the node has already committed (a block's
//! events are committed with it, atomically), then moves its start past that
//! height. So no block is read twice and none is skipped. Within one range
//! it pages with `th_getEvents`' `after` cursor, so a block holding more
//! matching events than one answer may carry is still read whole.
//!
//! A dev node can move backwards (`dev_revert`). The follower remembers the
//! hashes of the last [`REMEMBERED`] blocks it read; when the newest of them
//! is no longer on the chain it walks back to the newest one that is, says
//! so on stderr, and continues from the block after it, printing the
//! replacement blocks' events.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{json, Value as Json};
use timerhost_rpc::Client;

use crate::error::{NodeError, Result};

/// Time between two polls of the node.
pub const POLL: Duration = Duration::from_millis(200);

/// Events per `th_getEvents` call: the node's cap (`timerhost_rpc::server::MAX_LIST`).
pub const PAGE: usize = timerhost_rpc::server::MAX_LIST;

/// How many recent block hashes are kept to find where a revert forked.
pub const REMEMBERED: usize = 256;

/// What to follow.
#[derive(Clone, Debug)]
pub struct Follow {
    /// Only events with this name.
    pub name: Option<String>,
    /// Only events emitted by this address.
    pub actor: Option<String>,
    /// First height (default: the head when following starts).
    pub from: Option<u64>,
    /// Last height: stop once it has been read (default: never stop).
    pub to: Option<u64>,
    /// Events asked for per call ([`PAGE`]; smaller in tests).
    pub page: usize,
}

impl Default for Follow {
    fn default() -> Self {
        Self {
            name: None,
            actor: None,
            from: None,
            to: None,
            page: PAGE,
        }
    }
}

fn bad_answer(what: &str, got: &Json) -> NodeError {
    NodeError::Usage(format!("the node sent a malformed {what}: {got}"))
}

/// Height and hash of the head.
fn head(client: &Client) -> Result<(u64, String)> {
    let b = client.call("th_getBlock", json!(["latest"]))?;
    match (b["height"].as_u64(), b["hash"].as_str()) {
        (Some(h), Some(hash)) => Ok((h, hash.to_string())),
        _ => Err(bad_answer("head block", &b)),
    }
}

/// The hash of the block at `height`, if there is one.
fn hash_at(client: &Client, height: u64) -> Result<Option<String>> {
    let b = client.call("th_getBlock", json!([height]))?;
    if b.is_null() {
        return Ok(None);
    }
    b["hash"]
        .as_str()
        .map(|h| Some(h.to_string()))
        .ok_or_else(|| bad_answer("block", &b))
}

/// Follows events until `to` is passed (or forever). `print` receives each
/// event record in chain order; `notice` receives messages for stderr.
pub fn follow(
    client: &Client,
    f: &Follow,
    mut print: impl FnMut(&Json),
    mut notice: impl FnMut(&str),
) -> Result<()> {
    let mut next = match f.from {
        Some(h) => h,
        None => head(client)?.0,
    };
    // (height, hash) of the last blocks read, oldest first.
    let mut seen: VecDeque<(u64, String)> = VecDeque::new();
    loop {
        let (head_height, head_hash) = head(client)?;
        match find_fork(client, &mut seen, head_height, &head_hash)? {
            Fork::None => {}
            Fork::At(h) => {
                notice(&format!(
                    "the chain was reverted: blocks above height {h} were replaced; following again from height {}",
                    h + 1
                ));
                next = h + 1;
            }
            Fork::Below(oldest) => {
                notice(&format!(
                    "the chain was reverted below height {oldest}, further back than the last {REMEMBERED} blocks read; following again from height {oldest} (earlier replaced blocks are not re-read)"
                ));
                next = oldest;
            }
        }
        let upto = f.to.map_or(head_height, |t| t.min(head_height));
        if upto >= next {
            // Hashes first: a revert racing this read then shows up at the
            // next poll instead of going unnoticed.
            let remember_from = next.max((upto + 1).saturating_sub(REMEMBERED as u64));
            for h in remember_from..=upto {
                let hash = if h == head_height {
                    Some(head_hash.clone())
                } else {
                    hash_at(client, h)?
                };
                if let Some(hash) = hash {
                    seen.push_back((h, hash));
                }
            }
            while seen.len() > REMEMBERED {
                seen.pop_front();
            }
            read_range(client, f, next, upto, &mut print)?;
            next = upto + 1;
        }
        if f.to.is_some_and(|t| next > t) {
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
}

/// Where a revert left the blocks already read.
#[derive(Debug, PartialEq, Eq)]
enum Fork {
    /// The newest block read is still on the chain.
    None,
    /// Blocks above this height (the newest read that is still on the chain) were replaced.
    At(u64),
    /// Every remembered block was replaced; this is the oldest of them.
    Below(u64),
}

/// Checks the newest remembered block against the chain; after a revert,
/// drops the remembered blocks it replaced and says where it forked.
fn find_fork(
    client: &Client,
    seen: &mut VecDeque<(u64, String)>,
    head_height: u64,
    head_hash: &str,
) -> Result<Fork> {
    let on_chain = |client: &Client, h: u64, hash: &str| -> Result<bool> {
        Ok(match h.cmp(&head_height) {
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => hash == head_hash,
            std::cmp::Ordering::Less => hash_at(client, h)?.as_deref() == Some(hash),
        })
    };
    match seen.back() {
        Some((h, hash)) if !on_chain(client, *h, hash)? => {}
        _ => return Ok(Fork::None),
    }
    let oldest = seen.front().map_or(0, |(h, _)| *h);
    while let Some((h, hash)) = seen.back() {
        if on_chain(client, *h, hash)? {
            return Ok(Fork::At(*h));
        }
        seen.pop_back();
    }
    Ok(Fork::Below(oldest))
}

/// Prints every matching event of heights `from..=to` (all committed).
fn read_range(
    client: &Client,
    f: &Follow,
    from: u64,
    to: u64,
    print: &mut impl FnMut(&Json),
) -> Result<()> {
    let mut after = Json::Null;
    loop {
        let page = client.call(
            "th_getEvents",
            json!([{
                "name": f.name,
                "actor": f.actor,
                "from": from,
                "to": to,
                "limit": f.page,
                "after": after,
            }]),
        )?;
        let events = page
            .as_array()
            .ok_or_else(|| bad_answer("event list", &page))?;
        for e in events {
            print(e);
        }
        if events.len() < f.page {
            return Ok(());
        }
        after = events.last().cloned().unwrap_or(Json::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use parking_lot::Mutex;
    use timerhost_chain::testing::{dev_builders, dev_chain};
    use timerhost_rpc::{Mempool, MempoolConfig, NodeControl, NodeSnapshot, RpcContext, RpcError};
    use timerhost_types::{actor_address, Address, Value};

    /// Blocks are produced by the test itself.
    struct NoProducer;

    impl NodeControl for NoProducer {
        fn mine(&self, _: u64) -> Result<Vec<u64>, RpcError> {
            Err(RpcError::Producer("no producer in this test".into()))
        }
        fn set_next_timestamp(&self, _: u64) -> Result<(), RpcError> {
            Err(RpcError::Producer("no producer in this test".into()))
        }
        fn snapshot(&self) -> Result<NodeSnapshot, RpcError> {
            Err(RpcError::Producer("no producer in this test".into()))
        }
        fn revert(&self, _: &NodeSnapshot) -> Result<(), RpcError> {
            Err(RpcError::Producer("no producer in this test".into()))
        }
        fn describe(&self) -> Json {
            json!({ "mode": "manual" })
        }
    }

    #[test]
    fn pages_through_blocks_with_more_events_than_a_page_without_gaps_or_repeats() {
        let chain = Arc::new(dev_chain());
        let mut b = dev_builders();
        let actor = actor_address(&b[1].address(), 0);
        let produce = |txs: Vec<timerhost_types::SignedTransaction>| {
            let ts = chain.head().unwrap().timestamp_ms + 1;
            let p = chain.produce_block(&txs, ts, Address::ZERO).unwrap();
            assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        };
        produce(vec![b[1].deploy("mock", vec![], 0)]);
        // Blocks 2..=4 with 5, 0 and 3 events: pages of 2 split blocks.
        for count in [5, 0, 3] {
            let txs = (0..count)
                .map(|i| {
                    b[1].call(
                        actor,
                        "emit",
                        vec![Value::Str("Tick".into()), Value::int(i)],
                        0,
                    )
                })
                .collect();
            produce(txs);
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_stack_size(timerhost_vm::runtime::EXECUTION_THREAD_STACK_BYTES)
            .enable_all()
            .build()
            .unwrap();
        let ctx = RpcContext::new(
            chain.clone(),
            Arc::new(Mutex::new(Mempool::new(MempoolConfig::default()))),
            Arc::new(NoProducer),
        );
        let (addr, server) = rt
            .block_on(timerhost_rpc::start("127.0.0.1:0".parse().unwrap(), ctx))
            .unwrap();
        let client = Client::new(&addr.to_string());
        let follow = |from, to, page| {
            let mut got = Vec::new();
            let f = Follow {
                name: Some("Tick".into()),
                from: Some(from),
                to: Some(to),
                page,
                ..Follow::default()
            };
            follow(&client, &f, |e| got.push(e.clone()), |m| panic!("{m}")).unwrap();
            got
        };
        let all = follow(0, 4, PAGE);
        let positions: Vec<(u64, u64)> = all
            .iter()
            .map(|e| {
                (
                    e["height"].as_u64().unwrap(),
                    e["receipt_index"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            positions,
            vec![
                (2, 0),
                (2, 1),
                (2, 2),
                (2, 3),
                (2, 4),
                (4, 0),
                (4, 1),
                (4, 2)
            ]
        );
        assert_eq!(follow(0, 4, 2), all);
        assert_eq!(follow(0, 4, 1), all);
        assert_eq!(follow(3, 4, 2), all[5..].to_vec());
        rt.block_on(async {
            let _ = server.stop();
            server.stopped().await;
        });
    }
}
