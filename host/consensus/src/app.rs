//! The application side of the engine: [`App`] answers every message
//! Malachite sends (`AppMsg`) with the block pipeline.
//!
//! | engine asks | the app |
//! |---|---|
//! | `ConsensusReady` | starts at the chain's head + 1 |
//! | `GetValue` | builds a block from the pool ([`Chain::propose`]), records it, streams it |
//! | `ReceivedProposalPart` | reorders, checks the proposer's signature, executes the block ([`Chain::accept`]: root, header, drift) and answers valid or invalid |
//! | `Decided` | stores the certificate, commits the executed block |
//! | `Finalized` | starts the next height |
//! | `GetDecidedValues` | serves committed blocks with their certificates |
//! | `ProcessSyncedValue` | executes a peer's decided block ([`Chain::execute`]) |
//!
//! Execution is synchronous and may take a while, so it runs in
//! `block_in_place`: the engine's other actors keep the runtime's other
//! worker threads.
//!
//! A proposer gets one block executed per (height, round): the first
//! complete, signed proposal from the round's proposer is executed and kept,
//! and the verdict on it is the answer to every re-delivery. A second,
//! different block from the same proposer for the same (height, round) is
//! equivocation: it is logged as evidence and counted
//! (`consensus_equivocations_total`), never executed nor stored, so a
//! byzantine proposer cannot make a validator execute and hold blocks
//! without end.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use malachitebft_app_channel::app::engine::host::{HeightParams, Next, SyncedValueOutcome};
use malachitebft_app_channel::app::streaming::{StreamContent, StreamId, StreamMessage};
use malachitebft_app_channel::app::types::core::{
    CommitCertificate, ExtendedCommitCertificate, LinearTimeouts, Round, Validity, VoteExtensions,
};
use malachitebft_app_channel::app::types::sync::RawDecidedValue;
use malachitebft_app_channel::app::types::{LocallyProposedValue, ProposedValue};
use malachitebft_app_channel::{AppMsg, Channels, NetworkMsg};
use malachitebft_core_consensus::PeerId;
use timerhost_chain::{Chain, ExecutedBlock, TxError};
use timerhost_state::KvBackend;
use timerhost_types::{decode, encode, Address, Block, Hash, SignedTransaction};

use crate::byzantine::ByzantineMode;
use crate::context::TimerhostContext;
use crate::error::{ConsensusError, Result};
use crate::height::Height;
use crate::metrics::ConsensusMetrics;
use crate::proposal::ProposalPart;
use crate::reassembly::{parts_footprint, Reassembly, ReassemblyLimits};
use crate::signing::ConsensusSigner;
use crate::store::DecidedStore;
use crate::streaming::{stream_block, Assembler, StreamedBlock};
use crate::validators::{ValidatorAddress, ValidatorSet};
use crate::value::BlockValue;

type Ctx = TimerhostContext;

/// How many heights ahead of the one being decided a proposal is kept for.
pub const FUTURE_HEIGHTS: u64 = 2;

/// Most proposals kept for future heights (every validator, a few rounds).
pub const MAX_FUTURE_PROPOSALS: usize = 64;

/// What the node plugs into the app: its transaction pool, its log and its
/// metrics.
pub trait AppHooks: Send + Sync + 'static {
    /// Transactions to propose, in the pool's deterministic order, each
    /// with the sender the pool recovered when it admitted it.
    fn candidates(&self) -> Vec<(SignedTransaction, Address)>;
    /// The block this node just built refused these candidates.
    fn refused(&self, rejected: &[(usize, Hash, TxError)]);
    /// The senders of `txs` this node already recovered (its pool's), or
    /// `None` each: a peer's block then recovers only the others.
    fn known_senders(&self, txs: &[SignedTransaction]) -> Vec<Option<Address>> {
        vec![None; txs.len()]
    }
    /// A block was committed (decided by the network, or synced).
    fn committed(&self, executed: &ExecutedBlock, round: Round, started: Instant);
    /// May a block be committed now? The reason it may not (a full disk:
    /// the app waits, re-asking every [`COMMIT_RECHECK`], and consensus
    /// waits for it; the network goes on without this node).
    fn commit_allowed(&self) -> std::result::Result<(), String> {
        Ok(())
    }
}

/// How often a node refused a commit (a full disk) asks again.
pub const COMMIT_RECHECK: Duration = Duration::from_secs(1);

/// Settings the app needs from the node's configuration.
#[derive(Clone, Debug)]
pub struct AppSettings {
    /// Round step timeouts.
    pub timeouts: LinearTimeouts,
    /// Target interval between blocks.
    pub block_time: Duration,
    /// Largest accepted lead of a block's timestamp over this node's clock.
    pub max_future_drift_ms: u64,
    /// Address credited with the tips of the blocks this node proposes.
    pub tip_recipient: Address,
    /// Test hook: propose corrupted blocks.
    pub byzantine: Option<ByzantineMode>,
    /// Byte caps of the buffer of proposal streams whose signatures are not
    /// checked yet (`[consensus] max_buffered_proposal_bytes`).
    pub reassembly: ReassemblyLimits,
}

/// The slot a proposer fills once: (height, round, proposer).
type ProposalSlot = (Height, Round, ValidatorAddress);

/// A block executed against the head, waiting for the network's decision.
struct Undecided {
    executed: ExecutedBlock,
    value: ProposedValue<Ctx>,
}

/// The app's state.
pub struct App<B: KvBackend> {
    chain: Arc<Chain<B>>,
    hooks: Arc<dyn AppHooks>,
    /// This node's signer: it signs its proposals (validators).
    signer: ConsensusSigner,
    validators: ValidatorSet,
    settings: AppSettings,
    store: DecidedStore,
    metrics: Arc<ConsensusMetrics>,
    reassembly: Reassembly,
    undecided: HashMap<Hash, Undecided>,
    /// The verdict on the first proposal validated in each slot of the
    /// height being decided; any other block in that slot is equivocation.
    first_proposals: HashMap<ProposalSlot, ProposedValue<Ctx>>,
    /// Proposals for heights above the one being decided, checked once it starts.
    future: Vec<(StreamedBlock, Vec<ProposalPart>)>,
    height: Height,
    round: Round,
    height_started: Instant,
    committed: bool,
    streams_sent: u64,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn chain_err(e: timerhost_chain::ChainError) -> ConsensusError {
    ConsensusError::Chain(e.to_string())
}

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// `Ok` if the stream's signer is the proposer of its height and round,
/// else the validator whose turn it was: any other validator's block gets
/// no vote, however well signed.
pub fn proposes_in_turn(
    validators: &ValidatorSet,
    streamed: &StreamedBlock,
) -> std::result::Result<(), ValidatorAddress> {
    let round = streamed.round.as_u32().unwrap_or(0);
    let expected = validators.proposer(streamed.height.0, round).address;
    if streamed.proposer == expected {
        Ok(())
    } else {
        Err(expected)
    }
}

/// A proposal's parts as the messages of stream `stream_id`: one per part,
/// in order, then the end-of-stream marker.
fn stream_messages(
    stream_id: StreamId,
    parts: Vec<ProposalPart>,
) -> impl Iterator<Item = StreamMessage<ProposalPart>> {
    let end = parts.len() as u64;
    let end_marker = StreamMessage::new(stream_id.clone(), end, StreamContent::Fin);
    parts
        .into_iter()
        .enumerate()
        .map(move |(i, p)| StreamMessage::new(stream_id.clone(), i as u64, StreamContent::Data(p)))
        .chain(std::iter::once(end_marker))
}

/// The block a stream's parts carry (already verified when stored).
fn block_of(parts: &[ProposalPart]) -> Result<Block> {
    let bytes: Vec<u8> = parts
        .iter()
        .filter_map(|p| match p {
            ProposalPart::Data(d) => Some(d.as_slice()),
            _ => None,
        })
        .flatten()
        .copied()
        .collect();
    decode(&bytes).map_err(|e| ConsensusError::Store(format!("a stored proposal: {e}")))
}

impl<B: KvBackend + 'static> App<B> {
    /// The app over `chain`.
    pub fn new(
        chain: Arc<Chain<B>>,
        hooks: Arc<dyn AppHooks>,
        signer: ConsensusSigner,
        validators: ValidatorSet,
        settings: AppSettings,
        store: DecidedStore,
        metrics: Arc<ConsensusMetrics>,
    ) -> App<B> {
        let reassembly = Reassembly::with_limits(settings.reassembly);
        App {
            chain,
            hooks,
            signer,
            validators,
            settings,
            store,
            metrics,
            reassembly,
            undecided: HashMap::new(),
            first_proposals: HashMap::new(),
            future: Vec::new(),
            height: Height(0),
            round: Round::Nil,
            height_started: Instant::now(),
            committed: false,
            streams_sent: 0,
        }
    }

    fn chain_id(&self) -> u64 {
        self.chain.genesis().chain_id
    }

    fn head_height(&self) -> Result<u64> {
        Ok(self.chain.head().map_err(chain_err)?.height)
    }

    /// The validator set of `height`, from state (#32): a change executed
    /// in block `h` is the set from `h + VALIDATOR_SET_DELAY`, so the set of
    /// the height about to start is always known.
    fn set_at(&self, height: u64) -> Result<ValidatorSet> {
        let record = self
            .chain
            .validators_at(height)
            .map_err(chain_err)?
            .ok_or_else(|| {
                ConsensusError::Engine(format!("no validator set in state for height {height}"))
            })?;
        ValidatorSet::from_record(&record)
    }

    /// The parameters of `height`: its validator set, the timeouts and the
    /// block time.
    fn params(&mut self, height: u64) -> Result<HeightParams<Ctx>> {
        let set = self.set_at(height)?;
        if set != self.validators {
            tracing::info!(
                height,
                validators = set.validators().len(),
                total_power = malachitebft_core_types::ValidatorSet::total_voting_power(&set),
                "the validator set changes"
            );
            ConsensusMetrics::inc(&self.metrics.validator_set_changes);
        }
        ConsensusMetrics::set(&self.metrics.validators, set.validators().len() as u64);
        ConsensusMetrics::set(
            &self.metrics.in_validator_set,
            u64::from(set.contains(&self.signer.address())),
        );
        self.validators = set.clone();
        Ok(HeightParams::new(
            set,
            self.settings.timeouts,
            Some(self.settings.block_time),
        ))
    }

    /// Answers messages until the engine stops (its channel closes).
    pub async fn run(&mut self, channels: &mut Channels<Ctx>) -> Result<()> {
        while let Some(msg) = channels.consensus.recv().await {
            self.handle(msg, channels).await?;
        }
        Err(ConsensusError::Engine(
            "the consensus engine stopped (its channel closed)".into(),
        ))
    }

    async fn publish(&mut self, channels: &Channels<Ctx>, parts: Vec<ProposalPart>) -> Result<()> {
        self.streams_sent += 1;
        let mut id = self.height.0.to_be_bytes().to_vec();
        id.extend_from_slice(&self.round.as_i64().to_be_bytes());
        id.extend_from_slice(&self.streams_sent.to_be_bytes());
        let stream_id = StreamId::new(Bytes::from(id));
        for m in stream_messages(stream_id, parts) {
            channels
                .network
                .send(NetworkMsg::PublishProposalPart(m))
                .await
                .map_err(|_| ConsensusError::Engine("the network actor stopped".into()))?;
        }
        Ok(())
    }

    /// Stops the node before `height` when a governed upgrade this binary
    /// does not know applies to it (#44): every validator that has not
    /// installed it stops at the same height, with the upgrade named.
    fn halt_before_unknown_upgrade(&self, height: u64) -> Result<()> {
        match timerhost_chain::upgrades::check_known(&self.chain.store().state(), height) {
            Ok(()) => Ok(()),
            Err(e @ timerhost_chain::ChainError::UnknownUpgrade { .. }) => {
                tracing::error!(error = %e, "halting for an upgrade");
                Err(ConsensusError::Halted(e.to_string()))
            }
            Err(e) => Err(ConsensusError::Chain(e.to_string())),
        }
    }

    async fn handle(&mut self, msg: AppMsg<Ctx>, channels: &Channels<Ctx>) -> Result<()> {
        match msg {
            AppMsg::ConsensusReady { reply } => {
                let start = Height(self.head_height()? + 1);
                self.halt_before_unknown_upgrade(start.0)?;
                tracing::info!(height = %start, "consensus ready");
                let params = self.params(start.0)?;
                let _ = reply.send((start, params));
            }
            AppMsg::StartedRound {
                height,
                round,
                proposer,
                role,
                reply_value,
            } => {
                tracing::debug!(%height, %round, %proposer, ?role, "round started");
                self.halt_before_unknown_upgrade(height.0)?;
                if height != self.height {
                    self.height = height;
                    self.height_started = Instant::now();
                    self.committed = false;
                    self.first_proposals.retain(|(h, _, _), _| *h >= height);
                }
                self.round = round;
                ConsensusMetrics::set(&self.metrics.height, height.0);
                ConsensusMetrics::set(&self.metrics.round, round.as_i64().max(0) as u64);
                let ready: Vec<_> = {
                    let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.future)
                        .into_iter()
                        .partition(|(s, _)| s.height == height);
                    self.future = later
                        .into_iter()
                        .filter(|(s, _)| s.height > height)
                        .collect();
                    now
                };
                for (streamed, parts) in ready {
                    self.validate(streamed, parts);
                }
                let values = self
                    .undecided
                    .values()
                    .filter(|u| u.value.height == height && u.value.round == round)
                    .map(|u| u.value.clone())
                    .collect();
                let _ = reply_value.send(values);
            }
            AppMsg::GetValue {
                height,
                round,
                timeout: _,
                reply,
            } => {
                let (value, parts) = self.build_value(height, round)?;
                let _ = reply.send(value);
                self.publish(channels, parts).await?;
            }
            AppMsg::ReceivedProposalPart {
                from,
                published_by,
                part,
                reply,
            } => {
                let value = self.received_part(published_by.unwrap_or(from), part);
                let _ = reply.send(value);
            }
            AppMsg::Decided {
                certificate,
                extensions,
                reply,
            } => {
                // Never commit into a full disk: wait for space (reads and
                // the RPC go on; a stop request ends the wait with the task).
                while let Err(why) = self.hooks.commit_allowed() {
                    tracing::debug!(height = %certificate.height, %why, "waiting to commit");
                    tokio::time::sleep(COMMIT_RECHECK).await;
                }
                self.decided(certificate, extensions);
                let _ = reply.send(());
            }
            AppMsg::Finalized {
                certificate,
                extensions,
                evidence: _,
                reply,
            } => {
                let decided = certificate.height;
                let head = self.head_height()?;
                let next = if head >= decided.0 {
                    let full = ExtendedCommitCertificate::from_commit_certificate_and_extensions(
                        certificate,
                        extensions,
                    );
                    if let Err(e) = self.store.put_certificate(&full) {
                        tracing::warn!(height = %decided, error = %e, "could not store the finalized certificate");
                    }
                    Next::Start(Height(head + 1), self.params(head + 1)?)
                } else {
                    tracing::error!(height = %decided, "decided but not committed; restarting the height");
                    Next::Restart(decided, self.params(decided.0)?)
                };
                let _ = reply.send(next);
            }
            AppMsg::GetDecidedValues { range, reply } => {
                let values = self.decided_values(range.start().0, range.end().0)?;
                let _ = reply.send(values);
            }
            AppMsg::GetHistoryMinHeight { reply } => {
                // A pruning node serves blocks from its history floor on.
                let floor = self
                    .chain
                    .store()
                    .history_floor()
                    .map_err(|e| ConsensusError::Chain(e.to_string()))?;
                let _ = reply.send(Height(floor.max(1)));
            }
            AppMsg::ProcessSyncedValue {
                height,
                round,
                proposer,
                value_bytes,
                reply,
            } => {
                let outcome = self.synced_value(height, round, proposer, &value_bytes);
                let _ = reply.send(outcome);
            }
            AppMsg::RestreamProposal {
                height, value_id, ..
            } => match self.store.stream(height.0, &value_id)? {
                Some(parts) => self.publish(channels, parts).await?,
                None => {
                    tracing::debug!(%height, %value_id, "asked to restream a proposal this node does not have")
                }
            },
            AppMsg::ExtendVote { reply, .. } => {
                let _ = reply.send(None);
            }
            AppMsg::VerifyVoteExtensions {
                extensions, reply, ..
            } => {
                let _ = reply.send(extensions.into_iter().map(|(a, _)| (a, Ok(()))).collect());
            }
        }
        Ok(())
    }

    /// The value this node proposes at (`height`, `round`) and its parts:
    /// the one recorded if it already proposed there (after a restart it
    /// must not propose a different block), else a new block.
    fn build_value(
        &mut self,
        height: Height,
        round: Round,
    ) -> Result<(LocallyProposedValue<Ctx>, Vec<ProposalPart>)> {
        if let Some(hash) = self.store.own_proposal(height.0, round)? {
            if let Some(parts) = self.store.stream(height.0, &hash)? {
                tracing::info!(%height, %round, block = %hash, "proposing the block recorded before a restart");
                if !self.undecided.contains_key(&hash) {
                    let block = block_of(&parts)?;
                    if let Ok(executed) = blocking(|| self.chain.execute(&block)) {
                        self.remember(executed, round, Round::Nil, self.signer.address());
                    }
                }
                return Ok((
                    LocallyProposedValue::new(height, round, BlockValue(hash)),
                    parts,
                ));
            }
        }
        let head = self.chain.head().map_err(chain_err)?;
        let timestamp = now_ms().max(head.timestamp_ms + 1);
        let (candidates, senders): (Vec<_>, Vec<_>) = self
            .hooks
            .candidates()
            .into_iter()
            .map(|(tx, sender)| (tx, Ok(sender)))
            .unzip();
        let proposed = blocking(|| {
            self.chain.propose_recovered(
                &candidates,
                &senders,
                timestamp,
                self.settings.tip_recipient,
            )
        })
        .map_err(chain_err)?;
        self.hooks.refused(&proposed.rejected);
        let mut block = proposed.executed.block.clone();
        match self.settings.byzantine {
            Some(mode) => {
                mode.corrupt(&mut block);
                tracing::warn!(%height, %round, ?mode, "byzantine test hook: proposing a corrupted block");
            }
            None => {
                self.remember(proposed.executed, round, Round::Nil, self.signer.address());
            }
        }
        let hash = block.header.hash();
        let parts = stream_block(
            &self.signer,
            self.signer.address(),
            self.chain_id(),
            round,
            Round::Nil,
            &block,
        );
        self.store.put_stream(height.0, &hash, &parts)?;
        self.store.put_own_proposal(height.0, round, &hash)?;
        ConsensusMetrics::inc(&self.metrics.proposals_made);
        tracing::info!(%height, %round, block = %hash, txs = block.txs.len(), "proposing");
        Ok((
            LocallyProposedValue::new(height, round, BlockValue(hash)),
            parts,
        ))
    }

    fn remember(
        &mut self,
        executed: ExecutedBlock,
        round: Round,
        valid_round: Round,
        proposer: ValidatorAddress,
    ) -> ProposedValue<Ctx> {
        let hash = executed.block.header.hash();
        let value = ProposedValue {
            height: Height(executed.block.header.height),
            round,
            valid_round,
            proposer,
            value: BlockValue(hash),
            validity: Validity::Valid,
        };
        self.undecided.insert(
            hash,
            Undecided {
                executed,
                value: value.clone(),
            },
        );
        value
    }

    fn received_part(
        &mut self,
        publisher: PeerId,
        part: StreamMessage<ProposalPart>,
    ) -> Option<ProposedValue<Ctx>> {
        let parts = match self.reassembly.push(publisher.to_bytes(), part) {
            Ok(Some(parts)) => parts,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(%publisher, error = %e, "dropped a proposal stream message");
                return None;
            }
        };
        let mut assembler = Assembler::default();
        let mut streamed = None;
        for p in parts.iter().cloned() {
            match assembler.push(p, self.chain_id(), &self.validators) {
                Ok(Some(s)) => streamed = Some(s),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(%publisher, error = %e, "refused a proposal stream");
                    return None;
                }
            }
        }
        let streamed = streamed?;
        ConsensusMetrics::inc(&self.metrics.proposals_received);
        if streamed.height < self.height {
            return None;
        }
        if streamed.height > self.height {
            // Kept until that height starts; bounded, since only the next
            // few heights can be reached before they are decided.
            // By count and by bytes (#28): a validator signing huge blocks
            // for later heights holds no more than the stream buffer's cap.
            if streamed.height.0 <= self.height.0 + FUTURE_HEIGHTS {
                let cap = self.settings.reassembly.total_bytes;
                let size = parts_footprint(&parts);
                let mut held: usize = self.future.iter().map(|(_, p)| parts_footprint(p)).sum();
                while !self.future.is_empty()
                    && (self.future.len() >= MAX_FUTURE_PROPOSALS || held + size > cap)
                {
                    held -= parts_footprint(&self.future.remove(0).1);
                }
                if held + size <= cap {
                    self.future.push((streamed, parts));
                }
            }
            return None;
        }
        self.validate(streamed, parts)
    }

    /// Executes a streamed block against the head: the answer consensus
    /// votes on. Only the round's proposer may propose, and only one block
    /// per (height, round): see the module's documentation.
    fn validate(
        &mut self,
        streamed: StreamedBlock,
        parts: Vec<ProposalPart>,
    ) -> Option<ProposedValue<Ctx>> {
        if let Err(expected) = proposes_in_turn(&self.validators, &streamed) {
            tracing::warn!(height = %streamed.height, round = %streamed.round, proposer = %streamed.proposer, %expected, "refused a proposal from a validator that is not the round's proposer");
            return None;
        }
        let hash = streamed.block.header.hash();
        let slot = (streamed.height, streamed.round, streamed.proposer);
        if let Some(first) = self.first_proposals.get(&slot) {
            if first.value.0 == hash {
                // Re-delivered (gossip, a restream): the same answer, not
                // executed again — even when it was invalid.
                let mut value = first.clone();
                value.valid_round = streamed.pol_round;
                return Some(value);
            }
            ConsensusMetrics::inc(&self.metrics.equivocations);
            tracing::warn!(
                height = %streamed.height,
                round = %streamed.round,
                proposer = %streamed.proposer,
                first = %first.value.0,
                second = %hash,
                "equivocation: the proposer sent a second, different block for this height and round; not executed nor kept"
            );
            return None;
        }
        let verdict = self.verdict(&streamed, hash, &parts);
        self.first_proposals.insert(slot, verdict.clone());
        Some(verdict)
    }

    /// The answer on a block new to its slot: the value kept from an earlier
    /// round if it was executed before, else what executing it says.
    fn verdict(
        &mut self,
        streamed: &StreamedBlock,
        hash: Hash,
        parts: &[ProposalPart],
    ) -> ProposedValue<Ctx> {
        if let Some(u) = self.undecided.get(&hash) {
            let mut value = u.value.clone();
            value.round = streamed.round;
            value.valid_round = streamed.pol_round;
            value.proposer = streamed.proposer;
            return value;
        }
        let drift = self.settings.max_future_drift_ms;
        let known = self.hooks.known_senders(&streamed.block.txs);
        match blocking(|| {
            self.chain
                .accept_known(&streamed.block, now_ms(), drift, known)
        }) {
            Ok(executed) => {
                if let Err(e) = self.store.put_stream(streamed.height.0, &hash, parts) {
                    tracing::warn!(error = %e, "could not record a proposal");
                }
                self.remember(
                    executed,
                    streamed.round,
                    streamed.pol_round,
                    streamed.proposer,
                )
            }
            Err(e) => {
                ConsensusMetrics::inc(&self.metrics.proposals_refused);
                tracing::warn!(height = %streamed.height, round = %streamed.round, proposer = %streamed.proposer, block = %hash, error = %e, "refused a proposed block");
                ProposedValue {
                    height: streamed.height,
                    round: streamed.round,
                    valid_round: streamed.pol_round,
                    proposer: streamed.proposer,
                    value: BlockValue(hash),
                    validity: Validity::Invalid,
                }
            }
        }
    }

    /// Commits the decided block: its certificate first (see [`DecidedStore`]).
    fn decided(&mut self, certificate: CommitCertificate<Ctx>, extensions: VoteExtensions<Ctx>) {
        let height = certificate.height;
        let round = certificate.round;
        let value_id = certificate.value_id;
        let full = ExtendedCommitCertificate::from_commit_certificate_and_extensions(
            certificate,
            extensions,
        );
        let outcome = (|| -> Result<()> {
            if self.head_height()? >= height.0 {
                return Ok(()); // already committed (e.g. decided again after a restart)
            }
            self.store.put_certificate(&full)?;
            let executed = match self.undecided.remove(&value_id) {
                Some(u) => u.executed,
                None => {
                    let parts = self.store.stream(height.0, &value_id)?.ok_or_else(|| {
                        ConsensusError::Chain(format!(
                            "block {value_id} decided at height {height} was never received"
                        ))
                    })?;
                    let block = block_of(&parts)?;
                    blocking(|| self.chain.execute(&block)).map_err(chain_err)?
                }
            };
            if executed.block.header.hash() != value_id {
                return Err(ConsensusError::Chain(format!(
                    "the executed block is not the decided block {value_id}"
                )));
            }
            blocking(|| self.chain.commit(&executed)).map_err(chain_err)?;
            self.hooks.committed(&executed, round, self.height_started);
            Ok(())
        })();
        match outcome {
            Ok(()) => {
                self.committed = true;
                ConsensusMetrics::set(
                    &self.metrics.commit_latency_ms,
                    self.height_started.elapsed().as_millis() as u64,
                );
                if round.as_i64() > 0 {
                    ConsensusMetrics::inc(&self.metrics.heights_with_extra_rounds);
                }
                self.undecided.clear();
                self.first_proposals.retain(|(h, _, _), _| *h > height);
                if let Err(e) = self.store.prune_through(height.0) {
                    tracing::warn!(error = %e, "could not prune old proposals");
                }
            }
            Err(e) => {
                tracing::error!(%height, %round, block = %value_id, error = %e, "could not commit a decided block")
            }
        }
    }

    fn decided_values(&self, from: u64, to: u64) -> Result<Vec<RawDecidedValue<Ctx>>> {
        let head = self.head_height()?;
        let mut values = Vec::new();
        let floor = self
            .chain
            .store()
            .history_floor()
            .map_err(|e| ConsensusError::Chain(e.to_string()))?;
        for h in from.max(floor).max(1)..=to.min(head) {
            let block = match self.chain.store().block(h) {
                Ok(block) => block,
                // Pruned since the floor was read: nothing older to serve.
                Err(timerhost_state::StorageError::Pruned { .. }) => continue,
                Err(e) => return Err(ConsensusError::Chain(e.to_string())),
            };
            let (Some(block), Some(certificate)) = (block, self.store.certificate(h)?) else {
                break;
            };
            values.push(RawDecidedValue::new(
                Bytes::from(encode(&block)),
                certificate,
            ));
        }
        Ok(values)
    }

    /// A block a peer says was decided at `height`: re-executed here, and
    /// its root checked, before consensus commits it.
    fn synced_value(
        &mut self,
        height: Height,
        round: Round,
        proposer: ValidatorAddress,
        bytes: &[u8],
    ) -> SyncedValueOutcome<Ctx> {
        let Ok(block) = decode::<Block>(bytes) else {
            tracing::warn!(%height, "a peer synced bytes that are not a block");
            return SyncedValueOutcome::PeerFault;
        };
        if block.header.height != height.0 {
            return SyncedValueOutcome::PeerFault;
        }
        let hash = block.header.hash();
        let head = match self.head_height() {
            Ok(h) => h,
            Err(_) => return SyncedValueOutcome::LocalTransientError,
        };
        if height.0 != head + 1 {
            return SyncedValueOutcome::LocalTransientError;
        }
        ConsensusMetrics::inc(&self.metrics.blocks_synced);
        if let Some(u) = self.undecided.get(&hash) {
            return SyncedValueOutcome::Verdict(u.value.clone());
        }
        match blocking(|| self.chain.execute(&block)) {
            Ok(executed) => {
                SyncedValueOutcome::Verdict(self.remember(executed, round, Round::Nil, proposer))
            }
            Err(e) => {
                tracing::error!(%height, block = %hash, error = %e, "a synced block does not execute to its header");
                SyncedValueOutcome::Verdict(ProposedValue {
                    height,
                    round,
                    valid_round: Round::Nil,
                    proposer,
                    value: BlockValue(hash),
                    validity: Validity::Invalid,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing::ConsensusKey;
    use crate::validators::Validator;
    use std::sync::atomic::Ordering;
    use timerhost_chain::testing::dev_chain;
    use timerhost_chain::DEFAULT_MAX_FUTURE_DRIFT_MS;
    use timerhost_state::MemoryBackend;
    use timerhost_types::BlockHeader;

    /// A node with an empty pool that ignores its commits.
    struct Quiet;

    impl AppHooks for Quiet {
        fn candidates(&self) -> Vec<(SignedTransaction, Address)> {
            Vec::new()
        }
        fn refused(&self, _: &[(usize, Hash, TxError)]) {}
        fn committed(&self, _: &ExecutedBlock, _: Round, _: Instant) {}
    }

    /// Feeds a whole stream of `parts` to `app` as gossip from `peer`; the
    /// app's answer once the stream completed.
    fn deliver(
        app: &mut App<MemoryBackend>,
        peer: PeerId,
        stream: u8,
        parts: Vec<ProposalPart>,
    ) -> Option<ProposedValue<Ctx>> {
        let mut answer = None;
        for m in stream_messages(StreamId::new(Bytes::from(vec![stream])), parts) {
            answer = app.received_part(peer, m);
        }
        answer
    }

    /// Four validators of power 1 and their keys.
    fn four_validators() -> (Vec<ConsensusKey>, ValidatorSet) {
        let keys: Vec<_> = (1..=4).map(|i| ConsensusKey::from_bytes([i; 32])).collect();
        let set = ValidatorSet::new(
            keys.iter()
                .map(|k| Validator::new(k.public_key(), 1))
                .collect(),
        )
        .unwrap();
        (keys, set)
    }

    /// An app of a four-validator dev chain, deciding height 1, run by a
    /// validator that is not height 1's first proposer.
    struct TestApp {
        app: App<MemoryBackend>,
        chain: Arc<Chain<MemoryBackend>>,
        chain_id: u64,
        in_turn: ValidatorAddress,
        proposer_key: ConsensusKey,
        metrics: Arc<ConsensusMetrics>,
        store: DecidedStore,
    }

    impl TestApp {
        fn new(reassembly: ReassemblyLimits) -> TestApp {
            let (keys, set) = four_validators();
            let in_turn = set.proposer(1, 0).address;
            let proposer_key = keys.iter().find(|k| k.address() == in_turn).unwrap();
            let own_key = keys.iter().find(|k| k.address() != in_turn).unwrap();
            let chain = Arc::new(dev_chain());
            let chain_id = chain.genesis().chain_id;
            let store = DecidedStore::temporary().unwrap();
            let metrics = Arc::new(ConsensusMetrics::default());
            let app = App::new(
                chain.clone(),
                Arc::new(Quiet),
                ConsensusSigner::new(chain_id, own_key.clone()),
                set,
                AppSettings {
                    timeouts: LinearTimeouts::default(),
                    block_time: Duration::from_secs(1),
                    max_future_drift_ms: DEFAULT_MAX_FUTURE_DRIFT_MS,
                    tip_recipient: Address::ZERO,
                    byzantine: None,
                    reassembly,
                },
                store.clone(),
                metrics.clone(),
            );
            TestApp {
                app,
                chain,
                chain_id,
                in_turn,
                proposer_key: proposer_key.clone(),
                metrics,
                store,
            }
        }
    }

    /// #28: signed proposals for later heights are kept by count *and* by
    /// bytes — no more than the stream buffer's cap, the oldest dropped.
    #[test]
    fn proposals_for_later_heights_are_bounded_by_bytes() {
        let limits = ReassemblyLimits {
            stream_bytes: 16_000,
            total_bytes: crate::reassembly::max_stream_footprint(16_000),
        };
        let t = TestApp::new(limits);
        let (chain, chain_id, in_turn) = (t.chain.clone(), t.chain_id, t.in_turn);
        let signer = ConsensusSigner::new(chain_id, t.proposer_key.clone());
        let mut app = t.app;
        // Deciding height 0's successor is height 1: proposals for it wait.
        app.height = Height(0);
        let mut builders = timerhost_chain::testing::dev_builders();
        let txs: Vec<_> = (0..40)
            .map(|i| builders[1].transfer(Address([9; 20]), 1 + i))
            .collect();
        let peer = PeerId::from_bytes(&[[0x12, 32].as_slice(), &[7; 32]].concat()).unwrap();
        let parent = chain.head().unwrap().timestamp_ms;
        for r in 0..30u32 {
            let block = chain
                .propose(&txs, parent + 1_000 + u64::from(r), Address::ZERO)
                .unwrap()
                .executed
                .block;
            let parts = stream_block(
                &signer,
                in_turn,
                chain_id,
                Round::new(r),
                Round::Nil,
                &block,
            );
            assert_eq!(
                deliver(&mut app, peer, r as u8, parts),
                None,
                "kept for later"
            );
        }
        let held: usize = app.future.iter().map(|(_, p)| parts_footprint(p)).sum();
        assert!(
            held <= limits.total_bytes,
            "{held} > {}",
            limits.total_bytes
        );
        assert!(app.future.len() < 30, "the oldest were dropped");
        assert!(!app.future.is_empty());
        // The newest is kept.
        assert_eq!(app.future.last().unwrap().0.round, Round::new(29));
    }

    #[test]
    fn an_equivocating_proposer_gets_only_its_first_block_executed_and_is_counted() {
        let (height, round) = (Height(1), Round::ZERO);
        let t = TestApp::new(ReassemblyLimits::default());
        let (chain, chain_id, in_turn, metrics, store) = (
            t.chain.clone(),
            t.chain_id,
            t.in_turn,
            t.metrics.clone(),
            t.store.clone(),
        );
        let proposer_key = t.proposer_key.clone();
        let mut app = t.app;
        app.height = height;
        app.round = round;

        // Two valid, different blocks for height 1, both signed by the
        // round's proposer for round 0.
        let parent = chain.head().unwrap().timestamp_ms;
        let first = chain
            .propose(&[], parent + 1_000, Address::ZERO)
            .unwrap()
            .executed
            .block;
        let second = chain
            .propose(&[], parent + 2_000, Address::ZERO)
            .unwrap()
            .executed
            .block;
        let (first_id, second_id) = (first.header.hash(), second.header.hash());
        assert_ne!(first_id, second_id);
        let signer = ConsensusSigner::new(chain_id, proposer_key.clone());
        let parts_of =
            |block: &Block| stream_block(&signer, in_turn, chain_id, round, Round::Nil, block);
        // A SHA-256 multihash (code 0x12, 32 bytes): any digest names a peer.
        let peer = PeerId::from_bytes(&[[0x12, 32].as_slice(), &[7; 32]].concat()).unwrap();

        let accepted = deliver(&mut app, peer, 1, parts_of(&first)).expect("first proposal");
        assert_eq!(
            (accepted.value, accepted.validity, accepted.proposer),
            (BlockValue(first_id), Validity::Valid, in_turn)
        );

        // The same proposal again (gossip, a restream): the same answer.
        assert_eq!(deliver(&mut app, peer, 2, parts_of(&first)), Some(accepted));
        assert_eq!(metrics.equivocations.load(Ordering::Relaxed), 0);

        // A different block for the same height and round: equivocation.
        assert_eq!(deliver(&mut app, peer, 3, parts_of(&second)), None);
        assert_eq!(metrics.equivocations.load(Ordering::Relaxed), 1);
        assert_eq!(metrics.proposals_received.load(Ordering::Relaxed), 3);
        assert_eq!(metrics.proposals_refused.load(Ordering::Relaxed), 0);
        // Only the first was executed and kept.
        assert_eq!(
            app.undecided.keys().copied().collect::<Vec<_>>(),
            vec![first_id]
        );
        assert!(store.stream(height.0, &first_id).unwrap().is_some());
        assert_eq!(store.stream(height.0, &second_id).unwrap(), None);
    }

    #[test]
    fn only_the_rounds_proposer_may_propose_and_stored_streams_give_their_block_back() {
        let (keys, set) = four_validators();
        let block = Block {
            header: BlockHeader {
                chain_id: 7,
                height: 5,
                timestamp_ms: 5_000,
                proposer: Address::ZERO,
                parent_hash: Hash([1; 32]),
                tx_root: Hash([2; 32]),
                state_root: Hash([3; 32]),
                receipts_root: Hash([4; 32]),
                cycles_used: 0,
                cells_used: 0,
                lane_basefee: 0,
            },
            txs: Vec::new(),
        };
        let round = Round::new(1);
        let turn = set.proposer(5, 1).address;
        let stranger = keys
            .iter()
            .map(|k| k.address())
            .find(|a| *a != turn)
            .unwrap();
        let streamed = |proposer| StreamedBlock {
            height: Height(5),
            round,
            pol_round: Round::Nil,
            proposer,
            block: block.clone(),
        };
        assert_eq!(proposes_in_turn(&set, &streamed(turn)), Ok(()));
        assert_eq!(proposes_in_turn(&set, &streamed(stranger)), Err(turn));

        let signer = ConsensusSigner::new(7, keys[0].clone());
        let parts = stream_block(&signer, keys[0].address(), 7, round, Round::Nil, &block);
        assert_eq!(block_of(&parts).unwrap(), block);
        assert!(block_of(&[ProposalPart::Data(vec![1, 2])]).is_err());
    }
}
