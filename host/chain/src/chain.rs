//! [`Chain`]: a store plus the pipeline, driven as propose → execute → commit
//! so that a consensus engine can call each step separately.
//!
//! - [`Chain::propose`] builds a block from candidate transactions, skipping
//!   (and reporting) invalid ones; it commits nothing.
//! - [`Chain::execute`] re-executes someone else's block strictly: any invalid
//!   transaction or header field that disagrees rejects the whole block.
//! - [`Chain::commit`] persists an executed block atomically.
//! - [`Chain::replay`] re-executes the stored chain from genesis on a fresh
//!   in-memory state and checks every state root.

use std::sync::Arc;

use timerhost_state::commitment::TreeUpdate;
use timerhost_state::{
    ChainStore, ChangeSet, CommitRequest, KvBackend, MemoryBackend, StoreSnapshot,
};
use timerhost_timers::DeliveryStats;
use timerhost_types::{
    merkle_root, Address, BasefeeConfig, Block, BlockHeader, ChainParams, Genesis, Hash, Receipt,
    SignedTransaction,
};

use crate::accounts;
use crate::error::{BlockError, ChainError, Result, TxError};
use crate::executor::BlockExecutor;
use crate::genesis::{genesis_changes, genesis_header};
use crate::runtime::{ActorRuntime, BlockEnv, BlockHooks};
use crate::validation::{check_against_state, check_static};

/// A block executed but not yet committed.
pub struct ExecutedBlock {
    /// The block with its final header.
    pub block: Block,
    /// Receipts (user, end-of-block, deferred).
    pub receipts: Vec<Receipt>,
    /// What end-of-block timer delivery did (fires admitted, lane cycles
    /// reserved, GC cycles used, …): not part of the header, exposed for the
    /// node's log and metrics.
    pub timer_stats: DeliveryStats,
    changes: ChangeSet,
    tree_update: TreeUpdate,
    /// The parent's timestamp, for the block's timer summary (#33): known
    /// when the block is sealed, so committing reads no other block.
    parent_timestamp_ms: u64,
}

impl std::fmt::Debug for ExecutedBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutedBlock")
            .field("height", &self.block.header.height)
            .field("txs", &self.block.txs.len())
            .field("receipts", &self.receipts.len())
            .finish()
    }
}

/// A block built by [`Chain::propose`], with the transactions it left out.
#[derive(Debug)]
pub struct ProposedBlock {
    /// The executed block.
    pub executed: ExecutedBlock,
    /// Candidates skipped: (index among candidates, hash, reason).
    pub rejected: Vec<(usize, Hash, TxError)>,
}

/// Progress of [`Chain::replay`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayProgress {
    /// Height just verified.
    pub height: u64,
    /// Height replay will stop at.
    pub head: u64,
}

/// How far ahead of an accepting node's clock a block's timestamp may be by
/// default ([`Chain::accept`]): 15 s, as Ethereum clients allowed for
/// proof-of-work headers.
pub const DEFAULT_MAX_FUTURE_DRIFT_MS: u64 = 15_000;

/// A chain: store, genesis, actor runtime and end-of-block hooks.
pub struct Chain<B: KvBackend> {
    store: ChainStore<B>,
    genesis: Genesis,
    runtime: Arc<dyn ActorRuntime>,
    hooks: Arc<dyn BlockHooks>,
}

impl<B: KvBackend> std::fmt::Debug for Chain<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain")
            .field("chain_id", &self.genesis.chain_id)
            .finish_non_exhaustive()
    }
}

/// The header of the genesis block for `genesis` (computed on a scratch store).
pub fn expected_genesis_header(genesis: &Genesis) -> Result<BlockHeader> {
    let scratch = ChainStore::new(MemoryBackend::new());
    let changes = genesis_changes(genesis)?;
    let (root, _) = scratch.compute_root(&changes, 0)?;
    Ok(genesis_header(genesis, root))
}

impl<B: KvBackend> Chain<B> {
    /// Opens a chain: writes genesis into an empty store, or checks that the
    /// store's genesis matches `genesis`.
    pub fn open(
        backend: B,
        genesis: Genesis,
        runtime: Arc<dyn ActorRuntime>,
        hooks: Arc<dyn BlockHooks>,
    ) -> Result<Self> {
        let store = ChainStore::new(backend);
        let chain = Self {
            store,
            genesis,
            runtime,
            hooks,
        };
        match chain.store.head_height()? {
            None => {
                let changes = genesis_changes(&chain.genesis)?;
                let (root, tree_update) = chain.store.compute_root(&changes, 0)?;
                let block = Block {
                    header: genesis_header(&chain.genesis, root),
                    txs: Vec::new(),
                };
                chain.store.commit(CommitRequest {
                    block: &block,
                    receipts: &[],
                    changes: &changes,
                    tree_update: &tree_update,
                    summary: None,
                })?;
                tracing::info!(chain_id = chain.genesis.chain_id, state_root = %root, "wrote genesis");
            }
            Some(_) => {
                if let Err(timerhost_state::StorageError::NeedsMigration { found, expected }) =
                    chain.store.check_format()
                {
                    // In place, crash-safe (`timerhost_state::migrations`):
                    // an interrupted start resumes it.
                    tracing::info!(from = found, to = expected, "migrating the store");
                    let report = chain.store.migrate(|format, written| {
                        tracing::info!(leaving = format, entries_written = written, "migrating")
                    })?;
                    tracing::info!(
                        from = report.from,
                        to = report.to,
                        entries_written = report.entries_written,
                        "store migrated"
                    );
                }
                chain.store.check_format()?;
                let stored = chain.store.block(0)?.ok_or_else(|| {
                    ChainError::Genesis("the database has a head but no block 0".into())
                })?;
                let expected = expected_genesis_header(&chain.genesis)?;
                if stored.header != expected {
                    return Err(ChainError::Genesis(format!(
                        "the genesis file does not match the database (database genesis hash {}, file gives {})",
                        stored.header.hash(),
                        expected.hash()
                    )));
                }
            }
        }
        Ok(chain)
    }

    /// The store.
    pub fn store(&self) -> &ChainStore<B> {
        &self.store
    }

    /// The genesis this chain was opened with.
    pub fn genesis(&self) -> &Genesis {
        &self.genesis
    }

    /// Header of the last committed block.
    pub fn head(&self) -> Result<BlockHeader> {
        self.store
            .head_header()?
            .ok_or_else(|| ChainError::Internal("opened chain has no head".into()))
    }

    /// Chain params from state.
    pub fn params(&self) -> Result<ChainParams> {
        accounts::chain_params(&self.store.state())
    }

    /// Basefee config in force for the next block.
    pub fn basefee_config(&self) -> Result<BasefeeConfig> {
        accounts::basefee_config(&self.store.state())
    }

    /// The quote `pvm_host.timer_quote` would give a transaction in the
    /// next block (RPC `th_quoteTimer`, the Python package's
    /// `chain.quote_timer`): at the head's configs and basefees, a height
    /// after the next block's, or a time after the head's timestamp.
    pub fn quote_timer(
        &self,
        request: timerhost_types::QuoteRequest,
    ) -> Result<std::result::Result<timerhost_types::TimerQuote, timerhost_timers::TimerError>>
    {
        let state = self.store.state();
        let head = self.head()?;
        Ok(timerhost_timers::quote::quote(
            &state,
            &accounts::timer_config(&state)?,
            &accounts::basefee_config(&state)?,
            head.height + 1,
            head.timestamp_ms,
            request,
        )?)
    }

    /// The validator set of consensus at `height` (#32; changes executed in
    /// block `h` are the set from `h + VALIDATOR_SET_DELAY`), `None` on a
    /// chain without validators. Known for every height up to the head's +
    /// `VALIDATOR_SET_DELAY`.
    pub fn validators_at(
        &self,
        height: u64,
    ) -> Result<Option<timerhost_types::ValidatorSetRecord>> {
        crate::governance::validators_at(&self.store.state(), height)
    }

    /// Proposals from `from_id` on, oldest first (at most `limit`).
    pub fn proposals(&self, from_id: u64, limit: usize) -> Result<Vec<timerhost_types::Proposal>> {
        crate::governance::proposals(&self.store.state(), from_id, limit)
    }

    /// The block each kept closed proposal closed in, by id (at most
    /// `limit`; [`crate::governance::closing_heights`]).
    pub fn proposal_closing_heights(
        &self,
        limit: usize,
    ) -> Result<std::collections::BTreeMap<u64, u64>> {
        crate::governance::closing_heights(&self.store.state(), limit)
    }

    /// Balance and nonce of an account at the head.
    pub fn account(&self, address: &Address) -> Result<timerhost_types::keys::Account> {
        Ok(accounts::load(&self.store.state(), address)?)
    }

    /// Mempool admission: validates a transaction against the head state,
    /// requiring the exact next nonce. Returns the sender.
    pub fn check_tx(&self, tx: &SignedTransaction) -> Result<Address> {
        let params = self.params()?;
        let basefee = self.basefee_config()?;
        let sender = check_static(tx, tx.to_bytes().len(), &params, &basefee, None)?;
        let account = self.account(&sender)?;
        check_against_state(tx, sender, account.nonce, account.balance, &basefee)?;
        Ok(sender)
    }

    fn next_env(&self, timestamp_ms: u64, proposer: Address) -> Result<(BlockHeader, BlockEnv)> {
        let parent = self.head()?;
        let height = parent.height + 1;
        if timestamp_ms <= parent.timestamp_ms {
            return Err(BlockError::TimestampNotIncreasing {
                height,
                timestamp_ms,
                parent_timestamp_ms: parent.timestamp_ms,
            }
            .into());
        }
        let env = BlockEnv {
            chain_id: self.genesis.chain_id,
            height,
            timestamp_ms,
            proposer,
            parent_state_root: parent.state_root,
        };
        Ok((parent, env))
    }

    fn seal(
        &self,
        parent: &BlockHeader,
        env: &BlockEnv,
        txs: Vec<SignedTransaction>,
        executor: BlockExecutor<'_>,
    ) -> Result<ExecutedBlock> {
        let timer_stats = executor.timer_stats().clone();
        let output = executor.finish()?;
        let (state_root, tree_update) = self.store.compute_root(&output.changes, env.height)?;
        let tx_hashes: Vec<Hash> = txs.iter().map(SignedTransaction::hash).collect();
        let receipt_hashes: Vec<Hash> = output.receipts.iter().map(Receipt::hash).collect();
        let header = BlockHeader {
            chain_id: env.chain_id,
            height: env.height,
            timestamp_ms: env.timestamp_ms,
            proposer: env.proposer,
            parent_hash: parent.hash(),
            tx_root: merkle_root(&tx_hashes),
            state_root,
            receipts_root: merkle_root(&receipt_hashes),
            cycles_used: output.cycles_used,
            cells_used: output.cells_used,
            lane_basefee: output.lane_basefee,
        };
        Ok(ExecutedBlock {
            block: Block { header, txs },
            receipts: output.receipts,
            timer_stats,
            changes: output.changes,
            tree_update,
            parent_timestamp_ms: parent.timestamp_ms,
        })
    }

    /// Builds the next block from `candidates` in order, skipping invalid
    /// ones, at `timestamp_ms` (unix ms, after the parent's). Commits nothing.
    pub fn propose(
        &self,
        candidates: &[SignedTransaction],
        timestamp_ms: u64,
        proposer: Address,
    ) -> Result<ProposedBlock> {
        let senders = crate::senders::recover_all(candidates);
        self.propose_recovered(candidates, &senders, timestamp_ms, proposer)
    }

    /// [`Self::propose`] with each candidate's sender recovered already
    /// (`senders[i]` for `candidates[i]`, as [`crate::senders::recover_all`]
    /// gives them): a mempool recovers them at admission.
    pub fn propose_recovered(
        &self,
        candidates: &[SignedTransaction],
        senders: &[crate::senders::Recovered],
        timestamp_ms: u64,
        proposer: Address,
    ) -> Result<ProposedBlock> {
        if senders.len() != candidates.len() {
            return Err(ChainError::Internal(format!(
                "{} senders given for {} candidates",
                senders.len(),
                candidates.len()
            )));
        }
        let (parent, env) = self.next_env(timestamp_ms, proposer)?;
        let state = self.store.state();
        let mut executor = BlockExecutor::new(
            &state,
            env.clone(),
            self.runtime.as_ref(),
            self.hooks.as_ref(),
        )?;
        executor.begin_block()?;
        let mut included = Vec::with_capacity(candidates.len());
        let mut rejected = Vec::new();
        for (i, (tx, sender)) in candidates.iter().zip(senders).enumerate() {
            match executor.apply_tx(tx, Some(sender))? {
                Ok(_) => included.push(tx.clone()),
                Err(e) => rejected.push((i, tx.hash(), e)),
            }
        }
        executor.end_of_block()?;
        let executed = self.seal(&parent, &env, included, executor)?;
        Ok(ProposedBlock { executed, rejected })
    }

    /// Accepts a block proposed by someone else *now*: its timestamp may be
    /// at most `max_future_drift_ms` ahead of this node's clock `now_ms`
    /// (the proposer sets timestamps; the parent check is in
    /// [`Self::execute`]), then it is strictly re-executed. The clock check
    /// is not part of execution, so replaying old blocks never depends on
    /// when it happens. [`DEFAULT_MAX_FUTURE_DRIFT_MS`] is the default drift.
    pub fn accept(
        &self,
        block: &Block,
        now_ms: u64,
        max_future_drift_ms: u64,
    ) -> Result<ExecutedBlock> {
        self.accept_known(block, now_ms, max_future_drift_ms, Vec::new())
    }

    /// [`Self::accept`] with the senders the caller already knows
    /// (`known[i]` for transaction i, `None` or absent where it does not):
    /// a node's mempool recovered them when it admitted the transactions.
    pub fn accept_known(
        &self,
        block: &Block,
        now_ms: u64,
        max_future_drift_ms: u64,
        known: Vec<Option<Address>>,
    ) -> Result<ExecutedBlock> {
        let h = &block.header;
        let ahead_ms = h.timestamp_ms.saturating_sub(now_ms);
        if ahead_ms > max_future_drift_ms {
            return Err(BlockError::TimestampTooFarAhead {
                height: h.height,
                timestamp_ms: h.timestamp_ms,
                now_ms,
                ahead_ms,
                max_drift_ms: max_future_drift_ms,
            }
            .into());
        }
        self.execute_known(block, known)
    }

    /// Strictly re-executes a block proposed elsewhere and checks its header.
    pub fn execute(&self, block: &Block) -> Result<ExecutedBlock> {
        self.execute_known(block, Vec::new())
    }

    /// [`Self::execute`] with the senders the caller already knows (see
    /// [`Self::accept_known`]); the others are recovered on every core.
    pub fn execute_known(
        &self,
        block: &Block,
        known: Vec<Option<Address>>,
    ) -> Result<ExecutedBlock> {
        let h = &block.header;
        if h.chain_id != self.genesis.chain_id {
            return Err(BlockError::WrongChain {
                height: h.height,
                found: h.chain_id,
                expected: self.genesis.chain_id,
            }
            .into());
        }
        let (parent, env) = self.next_env(h.timestamp_ms, h.proposer)?;
        if h.height != env.height {
            return Err(BlockError::BadParent {
                height: h.height,
                reason: format!("the next height is {}", env.height),
            }
            .into());
        }
        if h.parent_hash != parent.hash() {
            return Err(BlockError::BadParent {
                height: h.height,
                reason: format!(
                    "parent hash {} is not the head's hash {}",
                    h.parent_hash,
                    parent.hash()
                ),
            }
            .into());
        }
        let state = self.store.state();
        let mut executor = BlockExecutor::new(
            &state,
            env.clone(),
            self.runtime.as_ref(),
            self.hooks.as_ref(),
        )?;
        executor.begin_block()?;
        let senders = crate::senders::recover_missing(&block.txs, known);
        for (index, (tx, sender)) in block.txs.iter().zip(&senders).enumerate() {
            if let Err(error) = executor.apply_tx(tx, Some(sender))? {
                return Err(BlockError::InvalidTx {
                    index,
                    hash: tx.hash(),
                    error: Box::new(error),
                }
                .into());
            }
        }
        executor.end_of_block()?;
        let executed = self.seal(&parent, &env, block.txs.clone(), executor)?;
        let c = &executed.block.header;
        if h.state_root != c.state_root {
            return Err(BlockError::StateRootMismatch {
                height: h.height,
                claimed: h.state_root,
                computed: c.state_root,
            }
            .into());
        }
        let checks: [(&'static str, String, String); 5] = [
            ("tx_root", h.tx_root.to_string(), c.tx_root.to_string()),
            (
                "receipts_root",
                h.receipts_root.to_string(),
                c.receipts_root.to_string(),
            ),
            (
                "cycles_used",
                h.cycles_used.to_string(),
                c.cycles_used.to_string(),
            ),
            (
                "cells_used",
                h.cells_used.to_string(),
                c.cells_used.to_string(),
            ),
            (
                "lane_basefee",
                h.lane_basefee.to_string(),
                c.lane_basefee.to_string(),
            ),
        ];
        for (field, claimed, computed) in checks {
            if claimed != computed {
                return Err(BlockError::HeaderMismatch {
                    height: h.height,
                    field,
                    claimed,
                    computed,
                }
                .into());
            }
        }
        Ok(executed)
    }

    /// Commits an executed block atomically, with its timer summary (#33).
    pub fn commit(&self, executed: &ExecutedBlock) -> Result<()> {
        let summary = crate::summary::BlockSummary::of(
            executed.block.header.height,
            executed.parent_timestamp_ms,
            &executed.receipts,
            &executed.timer_stats,
        );
        let summary = timerhost_types::encode(&summary);
        self.store.commit(CommitRequest {
            block: &executed.block,
            receipts: &executed.receipts,
            changes: &executed.changes,
            tree_update: &executed.tree_update,
            summary: Some(&summary),
        })?;
        Ok(())
    }

    /// The timer summary of block `height` (#33): the one committed with
    /// it (a few bytes), or — for a block committed before summaries
    /// existed — one made from its receipts (without the delivery stats
    /// only execution knows). `None` above the head.
    pub fn block_summary(&self, height: u64) -> Result<Option<crate::summary::BlockSummary>> {
        if let Some(bytes) = self.store.summary(height)? {
            return timerhost_types::decode(&bytes)
                .map(Some)
                .map_err(|e| ChainError::Internal(format!("block {height}'s summary: {e}")));
        }
        if self.store.header(height)?.is_none() {
            return Ok(None);
        }
        let parent_ms = match height.checked_sub(1) {
            Some(h) => self.store.header(h)?.map_or(0, |s| s.header.timestamp_ms),
            None => 0,
        };
        Ok(Some(crate::summary::BlockSummary::of(
            height,
            parent_ms,
            &self.store.receipts(height)?,
            &DeliveryStats::default(),
        )))
    }

    /// Captures the whole store (dev tooling; see [`StoreSnapshot`]).
    pub fn snapshot(&self) -> Result<StoreSnapshot> {
        Ok(self.store.snapshot()?)
    }

    /// Returns the store to `snapshot`: head, state root, balances, storage,
    /// pending timers, blocks, receipts and events exactly as they were.
    /// Blocks committed after the snapshot are forgotten.
    pub fn revert(&self, snapshot: &StoreSnapshot) -> Result<()> {
        self.store.restore(snapshot)?;
        Ok(())
    }

    /// Proposes and commits the next block (at `timestamp_ms`, unix ms).
    pub fn produce_block(
        &self,
        candidates: &[SignedTransaction],
        timestamp_ms: u64,
        proposer: Address,
    ) -> Result<ProposedBlock> {
        let proposed = self.propose(candidates, timestamp_ms, proposer)?;
        self.commit(&proposed.executed)?;
        Ok(proposed)
    }

    /// Re-executes every stored block from genesis on a fresh in-memory state
    /// with the same runtime and hooks, checking each state root. Returns the
    /// height verified; the first mismatch is an error naming its height.
    pub fn replay(&self, mut progress: impl FnMut(ReplayProgress)) -> Result<u64> {
        let head = self.head()?.height;
        let fresh = Chain::open(
            MemoryBackend::new(),
            self.genesis.clone(),
            self.runtime.clone(),
            self.hooks.clone(),
        )?;
        let stored_genesis = self
            .store
            .block(0)?
            .ok_or_else(|| ChainError::Internal("no block 0".into()))?;
        let replayed_genesis = fresh.head()?;
        if stored_genesis.header.state_root != replayed_genesis.state_root {
            return Err(ChainError::ReplayMismatch {
                height: 0,
                stored: stored_genesis.header.state_root,
                computed: replayed_genesis.state_root,
            });
        }
        progress(ReplayProgress { height: 0, head });
        for height in 1..=head {
            let block = self.store.block(height)?.ok_or_else(|| {
                ChainError::Internal(format!("block {height} missing from the store"))
            })?;
            let executed = match fresh.execute(&block) {
                Ok(e) => e,
                Err(ChainError::Block(BlockError::StateRootMismatch {
                    claimed, computed, ..
                })) => {
                    return Err(ChainError::ReplayMismatch {
                        height,
                        stored: claimed,
                        computed,
                    });
                }
                Err(e) => {
                    return Err(ChainError::ReplayFailed {
                        height,
                        source: Box::new(e),
                    })
                }
            };
            fresh.commit(&executed)?;
            progress(ReplayProgress { height, head });
        }
        Ok(head)
    }
}
