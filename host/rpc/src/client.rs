//! [`Client`]: a blocking JSON-RPC client over HTTP, used by the CLI's client
//! commands (`timerhost status`, `deploy`, …).

use std::time::Duration;

use serde_json::{json, Value as Json};

use crate::error::{Result, RpcError};

/// A JSON-RPC client for one node.
#[derive(Debug, Clone)]
pub struct Client {
    url: String,
    agent: ureq::Agent,
}

impl Client {
    /// A client for the node at `url` (e.g. `http://127.0.0.1:8645`; the
    /// scheme may be omitted).
    pub fn new(url: &str) -> Self {
        Self::with_timeout(url, Duration::from_secs(120))
    }

    /// A client whose every request (connecting, sending and reading the
    /// answer) gives up after `timeout`.
    pub fn with_timeout(url: &str, timeout: Duration) -> Self {
        let url = if url.contains("://") {
            url.to_string()
        } else {
            format!("http://{url}")
        };
        let agent = ureq::AgentBuilder::new().timeout(timeout).build();
        Self { url, agent }
    }

    /// The node URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Calls `method` with positional `params` and returns its result.
    pub fn call(&self, method: &str, params: Json) -> Result<Json> {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
        let reply = self.post(body)?;
        self.answer(reply)
    }

    fn transport(&self, reason: String) -> RpcError {
        RpcError::Transport {
            url: self.url.clone(),
            reason,
        }
    }

    /// Posts one JSON-RPC body and reads the JSON answer.
    fn post(&self, body: Json) -> Result<Json> {
        let resp = match self.agent.post(&self.url).send_json(body) {
            Ok(r) => r,
            // jsonrpsee answers JSON-RPC errors with HTTP 200; other statuses
            // still carry a JSON body worth reading when there is one.
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => return Err(self.transport(e.to_string())),
        };
        resp.into_json()
            .map_err(|e| self.transport(format!("the answer is not JSON: {e}")))
    }

    /// One answer's result, or its error as [`RpcError::Remote`].
    fn answer(&self, reply: Json) -> Result<Json> {
        if let Some(err) = reply.get("error") {
            return Err(RpcError::Remote {
                code: err["code"].as_i64().unwrap_or(0),
                message: err["message"].as_str().unwrap_or("no message").to_string(),
                reason: err["data"]["reason"].as_str().map(str::to_string),
            });
        }
        reply.get("result").cloned().ok_or_else(|| {
            self.transport(format!("the answer has neither result nor error: {reply}"))
        })
    }

    /// Sends `calls` as one JSON-RPC batch (one HTTP request) and returns
    /// each call's answer in order. `Err` only when the batch as a whole
    /// failed (transport, or an answer that is not a batch).
    pub fn call_batch(&self, calls: &[(&str, Json)]) -> Result<Vec<Result<Json>>> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let body: Vec<Json> = calls
            .iter()
            .enumerate()
            .map(|(id, (method, params))| {
                json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
            })
            .collect();
        let reply = self.post(Json::Array(body))?;
        let Json::Array(items) = reply else {
            // A batch refused whole (too large, say) answers with one error.
            return Err(self.answer(reply).err().unwrap_or_else(|| {
                self.transport("a batch was answered with a single result".into())
            }));
        };
        // Answers may come in any order: place each by its id.
        let mut out: Vec<Option<Result<Json>>> = (0..calls.len()).map(|_| None).collect();
        for item in items {
            let Some(id) = item["id"].as_u64().map(|i| i as usize) else {
                continue;
            };
            if id < out.len() {
                out[id] = Some(self.answer(item));
            }
        }
        Ok(out
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| Err(self.transport("the batch answer lacks this call".into())))
            })
            .collect())
    }
}
