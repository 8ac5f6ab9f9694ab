//! What a node serves to nodes joining by state sync (#44): its snapshots'
//! manifests, their chunks and raw headers, each as hex of the borsh bytes
//! the joining node checks (docs/RPC.md, "State sync"). Nothing here is
//! trusted by the receiver: chunks are checked against a state root, and
//! headers by their hash chain back from a trusted block.

use serde_json::{json, Value as Json};
use timerhost_state::{KvBackend, SnapshotManifest};
use timerhost_types::encoding;

use super::{u64_of, RpcContext};
use crate::error::{Result, RpcError};

/// Most headers one `th_getRawHeaders` returns.
pub const MAX_RAW_HEADERS: u64 = 1_000;

/// A manifest as `th_getSnapshots` lists it: its fields for people, and its
/// borsh bytes for the node that restores it.
pub fn manifest_json(m: &SnapshotManifest) -> Json {
    json!({
        "height": m.height,
        "block_hash": m.block_hash.to_string(),
        "state_root": m.state_root.to_string(),
        "id": m.id().to_string(),
        "chunks": m.chunks(),
        "tree_chunks": m.tree_chunks(),
        "derived_chunks": m.derived_chunks(),
        "leaves": m.leaves,
        "derived_entries": m.derived_entries,
        "bytes": m.bytes,
        "manifest": format!("0x{}", hex::encode(borsh::to_vec(m).expect("writing to a Vec cannot fail"))),
    })
}

impl<B: KvBackend + 'static> RpcContext<B> {
    /// `th_getSnapshots`: the finished snapshots this node serves.
    pub(super) fn snapshots(&self) -> Result<Json> {
        let list = self.chain.store().snapshots()?;
        Ok(Json::Array(list.iter().map(manifest_json).collect()))
    }

    /// `th_getSnapshotChunk [height, index]`: one chunk, hex of its borsh.
    pub(super) fn snapshot_chunk(&self, a: &[Json]) -> Result<Json> {
        let height = u64_of(
            a.first().ok_or_else(|| {
                RpcError::InvalidParams("missing parameter 0 (snapshot height)".into())
            })?,
            "snapshot height",
        )?;
        let index = u64_of(
            a.get(1).ok_or_else(|| {
                RpcError::InvalidParams("missing parameter 1 (chunk index)".into())
            })?,
            "chunk index",
        )?;
        let index = u32::try_from(index)
            .map_err(|_| RpcError::InvalidParams(format!("chunk index {index} is too large")))?;
        match self.chain.store().snapshot_chunk(height, index)? {
            None => Err(RpcError::InvalidParams(format!(
                "this node has no snapshot of height {height} with a chunk {index} (th_getSnapshots lists what it serves)"
            ))),
            Some(chunk) => Ok(json!({
                "height": height,
                "index": index,
                "chunk": format!("0x{}", hex::encode(borsh::to_vec(&chunk).expect("writing to a Vec cannot fail"))),
            })),
        }
    }

    /// `th_getRawHeaders [from, count]`: up to [`MAX_RAW_HEADERS`] stored
    /// headers from `from` on, each hex of its canonical encoding with its
    /// block's transaction count (`null` for a height this node has no
    /// header of).
    pub(super) fn raw_headers(&self, a: &[Json]) -> Result<Json> {
        let from = u64_of(
            a.first().ok_or_else(|| {
                RpcError::InvalidParams("missing parameter 0 (first height)".into())
            })?,
            "first height",
        )?;
        let count = match a.get(1) {
            None | Some(Json::Null) => MAX_RAW_HEADERS,
            Some(v) => u64_of(v, "header count")?,
        };
        if count > MAX_RAW_HEADERS {
            return Err(RpcError::InvalidParams(format!(
                "at most {MAX_RAW_HEADERS} headers per call, asked for {count}"
            )));
        }
        let head = self.chain.head()?.height;
        let mut out = Vec::new();
        for height in from..from.saturating_add(count).min(head + 1) {
            out.push(match self.chain.store().header(height)? {
                Some(h) => json!({
                    "header": format!("0x{}", hex::encode(encoding::encode(&h.header))),
                    "tx_count": h.tx_count,
                }),
                None => Json::Null,
            });
        }
        Ok(json!({ "from": from, "headers": out }))
    }
}
