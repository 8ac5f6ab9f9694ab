//! What governance reads: the configs in force (at the head, at genesis or
//! at a recent height), the validator set of a height, and the proposals
//! with their tallies — an open proposal's against the next block's set, a
//! closed one's against the set of the block it closed in (#48).

use std::collections::BTreeMap;

use serde_json::Value as Json;
use timerhost_state::KvBackend;

use super::{filter_obj, u64_of, RpcContext, MAX_LIST};
use crate::error::{Result, RpcError};
use crate::json::{basefee_config_json, timer_config_json};

/// Closed proposals whose closing block is looked up for their tally (the
/// index keeps those closed in the last `PROPOSAL_RETENTION_BLOCKS`).
const CLOSED_PROPOSALS_READ: usize = 10_000;

impl<B: KvBackend + 'static> RpcContext<B> {
    /// `th_getTimerConfig [height?]`: the TimerConfig in force at the head,
    /// at genesis (`0`), or at one of the node's recent heights
    /// (`[storage] proof_blocks`).
    pub(super) fn timer_config(&self, a: &[Json]) -> Result<Json> {
        let config = match self.config_height(a)? {
            None => timerhost_chain::accounts::timer_config(&self.chain.store().state())?,
            Some(0) => self.chain.genesis().timers.clone(),
            Some(h) => self.at_recent_height(h, |state| {
                Ok(timerhost_chain::accounts::timer_config(state))
            })??,
        };
        Ok(timer_config_json(&config))
    }

    /// `th_getBasefeeConfig [height?]`: as [`Self::timer_config`].
    pub(super) fn basefee_config(&self, a: &[Json]) -> Result<Json> {
        let config = match self.config_height(a)? {
            None => self.chain.basefee_config()?,
            Some(0) => self.chain.genesis().basefee.clone(),
            Some(h) => self.at_recent_height(h, |state| {
                Ok(timerhost_chain::accounts::basefee_config(state))
            })??,
        };
        Ok(basefee_config_json(&config))
    }

    /// The optional height of a config query (`None`: the head's).
    fn config_height(&self, a: &[Json]) -> Result<Option<u64>> {
        match a.first() {
            None | Some(Json::Null) => Ok(None),
            Some(v) => {
                let height = u64_of(v, "height")?;
                let head = self.chain.head()?.height;
                Ok((height != head).then_some(height))
            }
        }
    }

    /// `read` of the state at recent height `height`; a height outside the
    /// kept window is refused with the window.
    fn at_recent_height<T>(
        &self,
        height: u64,
        read: impl FnOnce(&timerhost_state::recent::StateAt<'_, B>) -> timerhost_state::Result<T>,
    ) -> Result<T> {
        self.chain.store().at_height(height, read).map_err(|e| {
            RpcError::InvalidParams(format!(
                "the config at height {height}: {e} (genesis's is at height 0; every change since is a ProposalExecuted or *_config.updated event)"
            ))
        })
    }

    /// `th_getValidators [height?]`: the validator set of consensus at
    /// `height` (default: the next block's; known up to the head's +
    /// `VALIDATOR_SET_DELAY`), `null` on a chain without validators.
    pub(super) fn validators(&self, a: &[Json]) -> Result<Json> {
        let next = self.chain.head()?.height + 1;
        let height = match a.first() {
            None | Some(Json::Null) => next,
            Some(v) => u64_of(v, "height")?,
        };
        let limit = next + timerhost_types::VALIDATOR_SET_DELAY;
        if height > limit {
            return Err(RpcError::InvalidParams(format!(
                "the set of height {height} is not known yet: changes executed by then could still apply (known up to {limit})"
            )));
        }
        Ok(match self.chain.validators_at(height)? {
            Some(set) => crate::json::validator_set_json(height, &set),
            None => Json::Null,
        })
    }

    /// `th_getProposals [{from?, limit?}]`: proposals from id `from`
    /// (default 1), oldest first, at most `limit` (default and cap
    /// `MAX_LIST`). An open proposal is tallied against the next block's
    /// set; a closed one against the set of the block it closed in
    /// (`closed_at`), the tally it was decided by.
    pub(super) fn proposals(&self, a: &[Json]) -> Result<Json> {
        let f = filter_obj(a, &["from", "limit"])?;
        let get = |k: &str| f.and_then(|m| m.get(k)).filter(|v| !v.is_null());
        let from = get("from")
            .map(|v| u64_of(v, "from"))
            .transpose()?
            .unwrap_or(1);
        let limit = get("limit")
            .map(|v| u64_of(v, "limit"))
            .transpose()?
            .map_or(MAX_LIST, |l| (l as usize).min(MAX_LIST));
        let next = self.chain.head()?.height + 1;
        let closed = self.chain.proposal_closing_heights(CLOSED_PROPOSALS_READ)?;
        let mut sets = BTreeMap::new();
        let mut listed = Vec::new();
        for p in self.chain.proposals(from, limit)? {
            let closed_at = closed.get(&p.id).copied();
            let at = closed_at.unwrap_or(next);
            let set = match sets.entry(at) {
                std::collections::btree_map::Entry::Occupied(found) => found.into_mut(),
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(self.chain.validators_at(at)?.unwrap_or_default())
                }
            };
            let mut json = crate::json::proposal_json(&p, set);
            json["closed_at"] = closed_at.map_or(Json::Null, Json::from);
            listed.push(json);
        }
        Ok(Json::Array(listed))
    }
}
