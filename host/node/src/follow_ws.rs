//! `timerhost events --follow` without `--to`: the node pushes each block's
//! matching events over its WebSocket subscription (`th_subscribe
//! ["events", …]`, #48) instead of being polled.
//!
//! The subscription delivers blocks in order from `from_height`, so the
//! follower only remembers the next height: after a dropped connection, a
//! dropped slow client or a dev chain's revert (the node ends the
//! subscription naming the height to resume from) it subscribes again from
//! there, and nothing is printed twice or skipped. `--to` reads a finite
//! range and keeps the polling follower ([`crate::follow`]).

use std::time::Duration;

use serde_json::{json, Value as Json};
use soketto::handshake::{Client as Handshake, ServerResponse};
use timerhost_rpc::Client;
use tokio_util::compat::TokioAsyncReadCompatExt;

use crate::error::{NodeError, Result};
use crate::follow::Follow;

/// Pause before subscribing again after the connection went away.
pub const RECONNECT: Duration = Duration::from_millis(500);

/// How one subscription ended.
enum End {
    /// The connection went away; resume from this height.
    Closed(u64),
    /// The node ended it (a revert, or too slow): its message and the
    /// height it says to resume from.
    Ended(String, u64),
}

fn usage(e: impl std::fmt::Display) -> NodeError {
    NodeError::Usage(e.to_string())
}

/// Follows events pushed by the node at `client`'s address, forever.
pub fn follow_pushed(
    client: &Client,
    f: &Follow,
    mut print: impl FnMut(&Json),
    mut notice: impl FnMut(&str),
) -> Result<()> {
    let mut next = match f.from {
        Some(h) => h,
        None => {
            let head = client.call("th_getBlock", json!(["latest"]))?;
            head["height"]
                .as_u64()
                .ok_or_else(|| usage(format!("the node sent a malformed head block: {head}")))?
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(usage)?;
    runtime.block_on(async {
        loop {
            match subscribe_once(client.url(), f, next, &mut print).await? {
                End::Closed(resume) => {
                    next = resume;
                    tokio::time::sleep(RECONNECT).await;
                }
                End::Ended(why, resume) => {
                    if why.starts_with("reverted") {
                        notice(&format!(
                            "the chain was reverted: blocks above height {} were replaced; following again from height {resume}",
                            resume.saturating_sub(1)
                        ));
                    } else {
                        notice(&format!("{why}; following again from height {resume}"));
                    }
                    next = resume;
                }
            }
        }
    })
}

/// `timerhost timer ID --follow`: prints every event of the timer's life
/// as the node pushes it (`th_subscribe ["timer", id]`), and returns once
/// the node says it ended.
pub fn follow_timer(client: &Client, id: &str, mut print: impl FnMut(&Json)) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(usage)?;
    runtime.block_on(async {
        let params = json!(["timer", id]);
        match subscribe(client.url(), &params, 0, &mut print).await? {
            Stream::Ended(_) => Ok(()),
            Stream::Closed(_) => Err(usage(format!(
                "the connection to {} closed before timer {id} ended",
                client.url()
            ))),
            Stream::Stopped(why, _) => Err(usage(why)),
        }
    })
}

/// The `from_height N` a node's closing message names.
fn resume_height(why: &str) -> Option<u64> {
    let at = why.rfind("from_height ")? + "from_height ".len();
    why[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

async fn subscribe_once(
    url: &str,
    f: &Follow,
    from: u64,
    print: &mut impl FnMut(&Json),
) -> Result<End> {
    let params = json!(["events", {"name": f.name, "actor": f.actor, "from_height": from}]);
    Ok(match subscribe(url, &params, from, print).await? {
        Stream::Closed(next) | Stream::Ended(next) => End::Closed(next),
        Stream::Stopped(why, next) => End::Ended(why, next),
    })
}

/// How a subscription's stream stopped.
enum Stream {
    /// The connection went away; the next height not seen.
    Closed(u64),
    /// A timer's life ended (its last notification said so).
    Ended(u64),
    /// The node ended it with this message, naming where to resume.
    Stopped(String, u64),
}

/// Subscribes with `params` and prints the events of every notification.
async fn subscribe(
    url: &str,
    params: &Json,
    from: u64,
    print: &mut impl FnMut(&Json),
) -> Result<Stream> {
    let address = url
        .trim_start_matches("http://")
        .trim_start_matches("ws://")
        .trim_end_matches('/');
    let Ok(stream) = tokio::net::TcpStream::connect(address).await else {
        return Ok(Stream::Closed(from));
    };
    let mut handshake = Handshake::new(stream.compat(), address, "/");
    match handshake.handshake().await {
        Ok(ServerResponse::Accepted { .. }) => {}
        Ok(other) => {
            return Err(usage(format!(
            "the node at {url} refused a WebSocket connection ({other:?}): is it a timerhost node?"
        )))
        }
        Err(_) => return Ok(Stream::Closed(from)),
    }
    let (mut tx, mut rx) = handshake.into_builder().finish();
    let request = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "th_subscribe",
        "params": params,
    });
    if tx.send_text(request.to_string()).await.is_err() || tx.flush().await.is_err() {
        return Ok(Stream::Closed(from));
    }
    let mut next = from;
    loop {
        let mut bytes = Vec::new();
        if rx.receive_data(&mut bytes).await.is_err() {
            return Ok(Stream::Closed(next));
        }
        let msg: Json = serde_json::from_slice(&bytes).map_err(usage)?;
        if let Some(err) = msg.get("error") {
            return Err(usage(format!(
                "th_subscribe: {}",
                err["message"].as_str().unwrap_or("refused")
            )));
        }
        if msg["method"] != "th_subscription" {
            continue;
        }
        let notification = &msg["params"];
        if let Some(err) = notification.get("error") {
            let why = err
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            let resume = resume_height(&why).unwrap_or(next);
            return Ok(Stream::Stopped(why, resume));
        }
        let result = &notification["result"];
        for e in result["events"].as_array().into_iter().flatten() {
            print(e);
        }
        if let Some(h) = result["height"].as_u64() {
            next = h + 1;
        }
        if result["ended"] == true {
            return Ok(Stream::Ended(next));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resume_height_is_read_from_the_nodes_message() {
        assert_eq!(
            resume_height("reverted: the dev chain replaced the blocks from height 13 on (dev_revert); resubscribe with from_height 13"),
            Some(13)
        );
        assert_eq!(
            resume_height("dropped: the client fell 1024 notifications behind for 5s; resubscribe with from_height 700"),
            Some(700)
        );
        assert_eq!(resume_height("something else"), None);
    }
}
