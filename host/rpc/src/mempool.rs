//! The mempool: signed transactions waiting for a block.
//!
//! - **Admission** ([`validate`]): everything the block pipeline checks
//!   statically (size, signature, chain id, dev-key rule, limits, fee
//!   bounds, governance membership) plus the state checks against the head
//!   (fee caps ≥ basefee, balance ≥ pre-charge + value). The nonce may run
//!   ahead of the account by at most `max_nonce_gap` so a client can send
//!   several transactions in a row.
//! - **Paid for** (#50): a sender's queued transactions must be payable
//!   *together* from its balance (each one's pre-charge + value), so a
//!   balance cannot back 256 queued transactions at once; and a
//!   transaction whose nonce leaves a gap (*gapped*: it cannot run until
//!   the gap fills) is held at most `gapped_ttl_blocks` blocks, and
//!   gapped transactions together take at most `max_gapped_percent` of
//!   the pool. Before, 79 funded accounts sending nonces 1..256 and never 0
//!   filled all 20,000 slots in 2.4 s at no cost, for ever, and honest
//!   transfers were refused "mempool full".
//! - **Bounds**: at most `max_txs` transactions, `max_per_sender` per
//!   sender; a duplicate or a second transaction for the same (sender,
//!   nonce) is refused. A full pool makes room for a *ready* transaction
//!   (one that can run next) by evicting the longest-held gapped one; only
//!   a pool full of ready transactions refuses it.
//! - **Order** ([`Mempool::candidates`]): senders in order of arrival (a
//!   sender whose queue empties goes to the back when it returns), each
//!   sender's transactions in nonce order starting at its account nonce and
//!   stopping at the first gap. Deterministic for a given arrival order.

use std::collections::{BTreeMap, HashMap};

use timerhost_chain::validation::{check_against_state, check_static, TxError};
use timerhost_chain::Chain;
use timerhost_state::KvBackend;
use timerhost_types::{Address, Hash, SignedTransaction};

use crate::error::{Result, RpcError};

/// Mempool bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MempoolConfig {
    /// Most transactions held in total.
    pub max_txs: usize,
    /// Most transactions held per sender.
    pub max_per_sender: usize,
    /// How far a nonce may run ahead of the sender's account nonce.
    pub max_nonce_gap: u64,
    /// Most transactions handed to one block (its cycle and cell limits
    /// may fit fewer).
    pub max_block_txs: usize,
    /// Blocks a gapped transaction is held before it is dropped.
    pub gapped_ttl_blocks: u64,
    /// Share of `max_txs` gapped transactions may take together.
    pub max_gapped_percent: u8,
}

impl Default for MempoolConfig {
    fn default() -> Self {
        Self {
            max_txs: 20_000,
            max_per_sender: 256,
            max_nonce_gap: 256,
            max_block_txs: 5_000,
            gapped_ttl_blocks: 32,
            max_gapped_percent: 25,
        }
    }
}

impl MempoolConfig {
    /// Most gapped transactions held together.
    pub fn max_gapped(&self) -> usize {
        self.max_txs * usize::from(self.max_gapped_percent.min(100)) / 100
    }
}

/// What admission learned of a transaction ([`validate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// Its sender.
    pub sender: Address,
    /// The sender's account nonce at the head.
    pub account_nonce: u64,
    /// The sender's balance at the head.
    pub balance: u128,
    /// What it may take from the sender: its pre-charge plus its value.
    pub cost: u128,
}

/// Validates `tx` for admission against the chain's head (see the module
/// docs).
pub fn validate<B: KvBackend>(
    chain: &Chain<B>,
    tx: &SignedTransaction,
    max_nonce_gap: u64,
) -> Result<Admission> {
    let params = chain.params()?;
    let basefee = chain.basefee_config()?;
    let reject = |e: TxError| RpcError::rejected(&e);
    let sender = check_static(tx, tx.to_bytes().len(), &params, &basefee, None).map_err(reject)?;
    let account = chain.account(&sender)?;
    let nonce = tx.tx.nonce;
    if nonce < account.nonce {
        return Err(reject(TxError::NonceTooLow {
            sender,
            expected: account.nonce,
            got: nonce,
        }));
    }
    if nonce - account.nonce > max_nonce_gap {
        return Err(RpcError::TxRejected {
            reason: "nonce_too_far_ahead",
            message: format!(
                "nonce too far ahead: account {sender} expects nonce {}, transaction has {nonce}; the mempool accepts at most {max_nonce_gap} ahead (node.toml [mempool] max_nonce_gap)",
                account.nonce
            ),
        });
    }
    // Fees and funds as if the nonce were next; the queue as a whole is
    // checked against the balance when it is inserted.
    let quote =
        check_against_state(tx, sender, nonce, account.balance, &basefee).map_err(reject)?;
    Ok(Admission {
        sender,
        account_nonce: account.nonce,
        balance: account.balance,
        cost: quote.prepay.saturating_add(tx.tx.value()),
    })
}

/// A held transaction.
#[derive(Debug)]
struct Entry {
    tx: SignedTransaction,
    hash: Hash,
    cost: u128,
    /// The pool's block count when it arrived.
    arrived: u64,
    /// Arrival number (orders the eviction of gapped transactions).
    seq: u64,
}

/// One sender's transactions.
#[derive(Debug, Default)]
struct SenderQueue {
    txs: BTreeMap<u64, Entry>,
    /// Its account nonce, as last seen (admission, or after a block).
    account_nonce: u64,
    /// The sum of its transactions' costs.
    cost: u128,
}

impl SenderQueue {
    /// One past the run of transactions from the account nonce: the first
    /// nonce that would be gapped.
    fn ready_end(&self) -> u64 {
        let mut next = self.account_nonce;
        while self.txs.contains_key(&next) {
            next += 1;
        }
        next
    }

    /// Transactions that cannot run until a gap fills.
    fn gapped(&self) -> usize {
        let end = self.ready_end();
        self.txs.range(end..).count()
    }
}

/// Pending transactions (see the module docs).
#[derive(Debug, Default)]
pub struct Mempool {
    config: MempoolConfig,
    queues: HashMap<Address, SenderQueue>,
    order: Vec<Address>,
    hashes: HashMap<Hash, (Address, u64)>,
    /// Every transaction by arrival: (seq → sender, nonce).
    arrivals: BTreeMap<u64, (Address, u64)>,
    next_seq: u64,
    /// Blocks seen ([`Mempool::remove_stale`] runs once per block).
    blocks: u64,
    /// Gapped transactions held, over all senders.
    gapped: usize,
    /// Why recently dropped transactions left (bounded, oldest forgotten
    /// first): `th_getReceipt` reports them.
    dropped: HashMap<Hash, String>,
    dropped_order: std::collections::VecDeque<Hash>,
}

/// Dropped transactions whose reason the pool remembers.
pub const DROPPED_REMEMBERED: usize = 100_000;

impl Mempool {
    /// An empty pool with these bounds.
    pub fn new(config: MempoolConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// The bounds.
    pub fn config(&self) -> MempoolConfig {
        self.config
    }

    /// Number of pending transactions.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Is the pool empty?
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Gapped transactions held (they wait for an earlier nonce).
    pub fn gapped_len(&self) -> usize {
        self.gapped
    }

    /// Why transaction `hash` was dropped, if it was lately.
    pub fn dropped_reason(&self, hash: &Hash) -> Option<&str> {
        self.dropped.get(hash).map(String::as_str)
    }

    /// Removes transaction `hash` and remembers why (a block refused it,
    /// it was evicted or it expired). Returns whether it was there.
    pub fn drop_tx(&mut self, hash: &Hash, reason: impl Into<String>) -> bool {
        if !self.remove(hash) {
            return false;
        }
        if self.dropped_order.len() >= DROPPED_REMEMBERED {
            if let Some(oldest) = self.dropped_order.pop_front() {
                self.dropped.remove(&oldest);
            }
        }
        self.dropped.insert(*hash, reason.into());
        self.dropped_order.push_back(*hash);
        true
    }

    /// Is this transaction pending?
    pub fn contains(&self, hash: &Hash) -> bool {
        self.hashes.contains_key(hash)
    }

    /// Refuses transaction `hash` if the pool holds it already
    /// (`already_pending`): checked at insertion, and by the RPC before it
    /// spends a signature recovery on a peer's repeated gossip.
    pub fn refuse_held(&self, hash: &Hash) -> Result<()> {
        if self.contains(hash) {
            return Err(RpcError::TxRejected {
                reason: "already_pending",
                message: format!("transaction {hash} is already in the mempool"),
            });
        }
        Ok(())
    }

    /// The sender of each of `txs` that is pending here (recovered when it
    /// was admitted), `None` for the others: what a node executing a peer's
    /// block need not recover again.
    pub fn known_senders(&self, txs: &[SignedTransaction]) -> Vec<Option<Address>> {
        txs.iter()
            .map(|tx| self.hashes.get(&tx.hash()).map(|(sender, _)| *sender))
            .collect()
    }

    /// The next nonce `sender` should use given its account nonce: one past
    /// the contiguous run of pending transactions.
    pub fn pending_nonce(&self, sender: &Address, account_nonce: u64) -> u64 {
        let mut next = account_nonce;
        if let Some(q) = self.queues.get(sender) {
            while q.txs.contains_key(&next) {
                next += 1;
            }
        }
        next
    }

    /// Recounts `sender`'s gapped transactions into the total.
    fn recount(&mut self, sender: &Address, before: usize) {
        let after = self.queues.get(sender).map_or(0, SenderQueue::gapped);
        self.gapped = self.gapped - before + after;
    }

    /// Adds a validated transaction ([`validate`]'s admission).
    pub fn insert(&mut self, tx: SignedTransaction, admission: Admission) -> Result<Hash> {
        let hash = tx.hash();
        self.refuse_held(&hash)?;
        let Admission {
            sender,
            account_nonce,
            balance,
            cost,
        } = admission;
        let nonce = tx.tx.nonce;
        let max_per_sender = self.config.max_per_sender;
        let (gapped_here, queued_cost) = {
            let queue = self.queues.entry(sender).or_default();
            queue.account_nonce = queue.account_nonce.max(account_nonce);
            if queue.txs.contains_key(&nonce) {
                return Err(RpcError::TxRejected {
                    reason: "nonce_already_pending",
                    message: format!(
                        "another transaction from {sender} with nonce {nonce} is already pending"
                    ),
                });
            }
            if queue.txs.len() >= max_per_sender {
                return Err(RpcError::TxRejected {
                    reason: "sender_full",
                    message: format!(
                        "{sender} already has {} pending transactions, the most one sender may have (node.toml [mempool] max_per_sender)",
                        queue.txs.len()
                    ),
                });
            }
            (nonce > queue.ready_end(), queue.cost)
        };
        let total = queued_cost.saturating_add(cost);
        if total > balance {
            self.forget_if_empty(&sender);
            return Err(RpcError::TxRejected {
                reason: "queue_unpaid",
                message: format!(
                    "{sender} has {balance} but its pending transactions and this one may take {total} together (pre-charges and values); wait for the earlier ones to be included"
                ),
            });
        }
        if gapped_here && self.gapped >= self.config.max_gapped() {
            self.forget_if_empty(&sender);
            return Err(RpcError::TxRejected {
                reason: "gapped_full",
                message: format!(
                    "the mempool holds {} transactions waiting for an earlier nonce, the most it holds (node.toml [mempool] max_gapped_percent); send nonce {} of {sender} first",
                    self.gapped,
                    self.pending_nonce(&sender, account_nonce)
                ),
            });
        }
        if self.len() >= self.config.max_txs {
            // A ready transaction takes the place of the longest-held
            // gapped one; anything else waits for blocks to drain the pool.
            if gapped_here || !self.evict_gapped() {
                self.forget_if_empty(&sender);
                return Err(RpcError::MempoolFull {
                    capacity: self.config.max_txs,
                });
            }
        }
        let before = self.queues.get(&sender).map_or(0, SenderQueue::gapped);
        let seq = self.next_seq;
        self.next_seq += 1;
        let queue = self.queues.entry(sender).or_default();
        if queue.txs.is_empty() {
            self.order.push(sender);
        }
        queue.cost = queue.cost.saturating_add(cost);
        queue.txs.insert(
            nonce,
            Entry {
                tx,
                hash,
                cost,
                arrived: self.blocks,
                seq,
            },
        );
        self.hashes.insert(hash, (sender, nonce));
        self.arrivals.insert(seq, (sender, nonce));
        self.recount(&sender, before);
        Ok(hash)
    }

    /// Drops the empty queue a refused insertion made.
    fn forget_if_empty(&mut self, sender: &Address) {
        if self.queues.get(sender).is_some_and(|q| q.txs.is_empty()) {
            self.queues.remove(sender);
        }
    }

    /// Evicts the longest-held gapped transaction; `false` if none is.
    fn evict_gapped(&mut self) -> bool {
        let victim = self.arrivals.values().copied().find(|(sender, nonce)| {
            self.queues
                .get(sender)
                .is_some_and(|q| *nonce >= q.ready_end())
        });
        match victim {
            Some((sender, nonce)) => {
                let hash = self.queues[&sender].txs[&nonce].hash;
                tracing::debug!(%hash, %sender, nonce, "evicted a gapped transaction for a ready one");
                self.drop_tx(
                    &hash,
                    format!("evicted from a full mempool for a transaction ready to run (nonce {nonce} waited for an earlier one)"),
                )
            }
            None => false,
        }
    }

    /// Up to `max` transactions ready for the next block, in inclusion order.
    pub fn candidates(
        &self,
        account_nonce: impl FnMut(&Address) -> Result<u64>,
        max: usize,
    ) -> Result<Vec<SignedTransaction>> {
        Ok(self
            .candidates_with_senders(account_nonce, max)?
            .into_iter()
            .map(|(tx, _)| tx)
            .collect())
    }

    /// [`Self::candidates`] with each one's sender, recovered at admission
    /// (for [`timerhost_chain::Chain::propose_recovered`]).
    pub fn candidates_with_senders(
        &self,
        mut account_nonce: impl FnMut(&Address) -> Result<u64>,
        max: usize,
    ) -> Result<Vec<(SignedTransaction, Address)>> {
        let mut out = Vec::new();
        for sender in &self.order {
            let Some(queue) = self.queues.get(sender) else {
                continue;
            };
            let mut next = account_nonce(sender)?;
            while let Some(entry) = queue.txs.get(&next) {
                if out.len() >= max {
                    return Ok(out);
                }
                out.push((entry.tx.clone(), *sender));
                next += 1;
            }
        }
        Ok(out)
    }

    /// Removes one transaction (e.g. one a block refused). Returns whether it was there.
    pub fn remove(&mut self, hash: &Hash) -> bool {
        let Some((sender, nonce)) = self.hashes.remove(hash) else {
            return false;
        };
        let before = self.queues.get(&sender).map_or(0, SenderQueue::gapped);
        if let Some(q) = self.queues.get_mut(&sender) {
            if let Some(entry) = q.txs.remove(&nonce) {
                q.cost = q.cost.saturating_sub(entry.cost);
                self.arrivals.remove(&entry.seq);
            }
        }
        self.recount(&sender, before);
        if self.queues.get(&sender).is_some_and(|q| q.txs.is_empty()) {
            self.queues.remove(&sender);
            self.order.retain(|a| *a != sender);
        }
        true
    }

    /// Runs admission ([`validate`]) again for every pending transaction
    /// against the chain's head and drops the ones it now refuses. Used after
    /// `dev_revert`, which rewinds nonces, balances and basefees under the
    /// pool: a transaction whose sender is now too far behind it (nonce gap),
    /// who can no longer pay, or whose fee cap is below the restored basefee
    /// goes; one that merely waits for an earlier nonce stays, exactly as it
    /// would have been admitted. Returns the dropped hashes with the reason,
    /// in inclusion order (senders by arrival, then nonce).
    pub fn revalidate<B: KvBackend>(&mut self, chain: &Chain<B>) -> Result<Vec<(Hash, String)>> {
        let mut dropped = Vec::new();
        for sender in &self.order {
            for entry in self
                .queues
                .get(sender)
                .into_iter()
                .flat_map(|q| q.txs.values())
            {
                match validate(chain, &entry.tx, self.config.max_nonce_gap) {
                    Ok(_) => {}
                    Err(RpcError::TxRejected { message, .. }) => {
                        dropped.push((entry.hash, message))
                    }
                    // A storage failure says nothing about the transaction.
                    Err(e) => return Err(e),
                }
            }
        }
        for (hash, why) in &dropped {
            self.drop_tx(hash, format!("refused again after a revert: {why}"));
        }
        Ok(dropped)
    }

    /// After a block: drops every transaction whose nonce its sender has
    /// already used (included in a block, or made obsolete), and every
    /// gapped one held longer than `gapped_ttl_blocks`. Returns how many
    /// were dropped.
    pub fn remove_stale(
        &mut self,
        mut account_nonce: impl FnMut(&Address) -> Result<u64>,
    ) -> Result<usize> {
        self.blocks += 1;
        let mut stale = Vec::new();
        let mut expired = Vec::new();
        let ttl = self.config.gapped_ttl_blocks;
        let blocks = self.blocks;
        for (sender, q) in &mut self.queues {
            let n = account_nonce(sender)?;
            q.account_nonce = n;
            stale.extend(q.txs.range(..n).map(|(_, e)| e.hash));
            let end = q.ready_end();
            expired.extend(
                q.txs
                    .range(end..)
                    .filter(|(_, e)| blocks.saturating_sub(e.arrived) > ttl)
                    .map(|(nonce, e)| (e.hash, end, *nonce)),
            );
        }
        for h in &stale {
            self.remove(h);
        }
        for (h, missing, nonce) in &expired {
            self.drop_tx(
                h,
                format!("expired: nonce {nonce} waited {ttl} blocks for nonce {missing} (node.toml [mempool] gapped_ttl_blocks)"),
            );
        }
        let stale = [stale, expired.into_iter().map(|(h, ..)| h).collect()].concat();
        // Account nonces moved: recount what is gapped.
        self.gapped = self.queues.values().map(SenderQueue::gapped).sum();
        Ok(stale.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_chain::testing::{dev_builders, dev_chain};

    /// An admission that pays for anything (the tests of order and bounds).
    fn free(sender: Address) -> Admission {
        Admission {
            sender,
            account_nonce: 0,
            balance: u128::MAX,
            cost: 1,
        }
    }

    #[test]
    fn order_is_per_sender_nonce_order_senders_by_arrival() {
        let mut b = dev_builders();
        let to = b[9].address();
        let (a, c) = (b[1].address(), b[2].address());
        let a0 = b[1].transfer(to, 1);
        let a1 = b[1].transfer(to, 1);
        let a2 = b[1].transfer(to, 1);
        let c0 = b[2].transfer(to, 1);
        let mut pool = Mempool::new(MempoolConfig::default());
        // Arrival: c0, a1, a0 (a2 withheld: a gap stops nothing here).
        pool.insert(c0.clone(), free(c)).unwrap();
        pool.insert(a1.clone(), free(a)).unwrap();
        pool.insert(a0.clone(), free(a)).unwrap();
        let got = pool.candidates(|_| Ok(0), 100).unwrap();
        assert_eq!(got, vec![c0.clone(), a0.clone(), a1.clone()]);
        assert_eq!(pool.pending_nonce(&a, 0), 2);
        // After a block that included c0 and a0, only a1 remains ready.
        assert_eq!(pool.remove_stale(|_| Ok(1)).unwrap(), 2);
        assert_eq!(pool.candidates(|_| Ok(1), 100).unwrap(), vec![a1.clone()]);
        pool.insert(a2.clone(), free(a)).unwrap();
        assert_eq!(pool.candidates(|_| Ok(1), 1).unwrap(), vec![a1]);
        assert_eq!(pool.len(), 2);
    }

    #[test]
    fn bounds_and_duplicates_are_refused_clearly() {
        let mut b = dev_builders();
        let to = b[9].address();
        let a = b[1].address();
        let mut pool = Mempool::new(MempoolConfig {
            max_txs: 2,
            max_per_sender: 10,
            max_nonce_gap: 4,
            max_block_txs: 100,
            ..MempoolConfig::default()
        });
        let t0 = b[1].transfer(to, 1);
        pool.insert(t0.clone(), free(a)).unwrap();
        let e = pool.insert(t0.clone(), free(a)).unwrap_err().to_string();
        assert!(e.contains("already in the mempool"), "{e}");
        let mut other = b[1].clone();
        other.nonce = 0;
        let e = pool
            .insert(other.transfer(to, 2), free(a))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nonce 0 is already pending"), "{e}");
        pool.insert(b[1].transfer(to, 1), free(a)).unwrap();
        let e = pool.insert(b[1].transfer(to, 1), free(a)).unwrap_err();
        assert!(matches!(e, RpcError::MempoolFull { capacity: 2 }), "{e}");
    }

    #[test]
    fn revalidate_after_a_revert_drops_what_admission_now_refuses() {
        let chain = dev_chain();
        let snapshot = chain.snapshot().unwrap();
        let mut b = dev_builders();
        let to = b[9].address();
        let rich = b[8].address();
        let start = chain.account(&rich).unwrap().balance;
        // After the snapshot: account 1 uses nonces 0 and 1, account 8 is
        // given half of account 5's funds.
        let mined = [
            b[1].transfer(to, 1),
            b[1].transfer(to, 1),
            b[5].transfer(rich, start / 2),
        ];
        let ts = chain.head().unwrap().timestamp_ms + 1;
        let p = chain.produce_block(&mined, ts, Address::ZERO).unwrap();
        assert!(p.rejected.is_empty(), "{:?}", p.rejected);
        let config = MempoolConfig {
            max_nonce_gap: 2,
            ..MempoolConfig::default()
        };
        let mut pool = Mempool::new(config);
        let keep = b[1].transfer(to, 1); // nonce 2: 2 ahead once nonces rewind
        let far = b[1].transfer(to, 1); // nonce 3: 3 ahead, beyond the gap
        let spend = b[8].transfer(to, start + start / 4); // needs the gift
        for t in [&keep, &far, &spend] {
            let admission = validate(&chain, t, config.max_nonce_gap).unwrap();
            pool.insert(t.clone(), admission).unwrap();
        }
        assert!(pool.revalidate(&chain).unwrap().is_empty());

        chain.revert(&snapshot).unwrap();
        let dropped = pool.revalidate(&chain).unwrap();
        let hashes: Vec<Hash> = dropped.iter().map(|(h, _)| *h).collect();
        assert_eq!(hashes, vec![far.hash(), spend.hash()], "{dropped:?}");
        assert!(dropped[0].1.contains("too far ahead"), "{dropped:?}");
        assert!(dropped[1].1.contains("insufficient balance"), "{dropped:?}");
        assert!(pool.contains(&keep.hash()));
        assert_eq!(pool.len(), 1);
        assert_eq!(pool.pending_nonce(&b[1].address(), 0), 0);
    }

    #[test]
    fn admission_checks_signature_nonce_gap_and_funds() {
        let chain = dev_chain();
        let mut b = dev_builders();
        let to = b[9].address();
        let ok = b[1].transfer(to, 1);
        let admission = validate(&chain, &ok, 4).unwrap();
        assert_eq!(
            (admission.sender, admission.account_nonce),
            (b[1].address(), 0)
        );
        b[1].nonce = 4;
        assert!(validate(&chain, &b[1].transfer(to, 1), 4).is_ok());
        let e = validate(&chain, &b[1].transfer(to, 1), 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("too far ahead"), "{e}");
        b[2].nonce = 0;
        let e = validate(&chain, &b[2].transfer(to, u128::MAX / 2), 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("insufficient balance"), "{e}");
        let mut bad = b[3].transfer(to, 1);
        bad.signature[5] ^= 1;
        let e = validate(&chain, &bad, 4).unwrap_err().to_string();
        assert!(e.starts_with("transaction rejected"), "{e}");
        let mut wrong = timerhost_chain::testing::TxBuilder::new(b[3].key.clone(), 7);
        let e = validate(&chain, &wrong.transfer(to, 1), 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("wrong chain id"), "{e}");
    }

    /// Admits `tx` as the RPC does.
    fn admit(
        pool: &mut Mempool,
        chain: &Chain<timerhost_state::MemoryBackend>,
        tx: &SignedTransaction,
    ) -> Result<Hash> {
        let admission = validate(chain, tx, pool.config().max_nonce_gap)?;
        pool.insert(tx.clone(), admission)
    }

    /// #50 defect 4, scaled down (2,000 slots, 20 flooders × 100 gapped
    /// transactions): funded accounts sending nonces 1.. and never 0 filled
    /// the pool for free and for ever, and an honest transfer was refused
    /// "mempool full". Now gapped transactions take at most a quarter of
    /// the pool and expire; a full pool evicts them for a ready one; and
    /// the honest transfer is committed within 3 blocks.
    #[test]
    fn defect4_gapped_transactions_cannot_fill_the_pool_or_keep_an_honest_one_out() {
        let chain = dev_chain();
        let mut b = dev_builders();
        let config = MempoolConfig {
            max_txs: 2_000,
            max_per_sender: 256,
            max_nonce_gap: 256,
            gapped_ttl_blocks: 8,
            ..MempoolConfig::default()
        };
        let mut pool = Mempool::new(config);
        // 20 flooders, funded from the dev accounts.
        let flooders: Vec<timerhost_chain::testing::TxBuilder> = (0..20u8)
            .map(|i| {
                let key = timerhost_types::PrivateKey::from_bytes(&[i + 1; 32]).unwrap();
                timerhost_chain::testing::TxBuilder::new(key, timerhost_types::DEV_CHAIN_ID)
            })
            .collect();
        let funding: Vec<SignedTransaction> = flooders
            .iter()
            .map(|f| b[1 + (f.address().0[0] as usize) % 8].transfer(f.address(), 10u128.pow(20)))
            .collect();
        let mut ts = chain.head().unwrap().timestamp_ms;
        let mut mine = |pool: &mut Mempool, extra: &[SignedTransaction]| {
            ts += 1_000;
            let mut txs = extra.to_vec();
            txs.extend(
                pool.candidates(|a| Ok(chain.account(a)?.nonce), 5_000)
                    .unwrap(),
            );
            let p = chain.produce_block(&txs, ts, Address::ZERO).unwrap();
            pool.remove_stale(|a| Ok(chain.account(a)?.nonce)).unwrap();
            p.executed
                .block
                .txs
                .iter()
                .map(|t| t.hash())
                .collect::<Vec<_>>()
        };
        mine(&mut pool, &funding);
        // The flood: nonces 1..=100 from each, never 0.
        let mut gapped_full = 0;
        for mut f in flooders {
            f.nonce = 1;
            for _ in 0..100 {
                match admit(&mut pool, &chain, &f.transfer(Address([9; 20]), 1)) {
                    Ok(_) => {}
                    Err(RpcError::TxRejected {
                        reason: "gapped_full",
                        ..
                    }) => gapped_full += 1,
                    Err(e) => panic!("{e}"),
                }
            }
        }
        assert_eq!(
            pool.gapped_len(),
            config.max_gapped(),
            "a quarter of the pool"
        );
        assert_eq!(gapped_full, 2_000 - config.max_gapped());
        // Fill the rest with ready transactions of a dev account…
        let mut ready = 0;
        while pool.len() < config.max_txs {
            let who = 1 + ready / 200;
            admit(&mut pool, &chain, &b[who].transfer(Address([8; 20]), 1)).unwrap();
            ready += 1;
        }
        // …and an honest transfer still gets in, in place of a gapped one.
        let honest = b[9].transfer(Address([7; 20]), 5);
        admit(&mut pool, &chain, &honest).expect("a ready transaction evicts a gapped one");
        assert_eq!(pool.gapped_len(), config.max_gapped() - 1);
        let mut committed = false;
        for _ in 0..3 {
            if mine(&mut pool, &[]).contains(&honest.hash()) {
                committed = true;
                break;
            }
        }
        assert!(
            committed,
            "the honest transfer is committed within 3 blocks"
        );
        // The gapped ones expire.
        for _ in 0..config.gapped_ttl_blocks {
            mine(&mut pool, &[]);
        }
        assert_eq!(pool.gapped_len(), 0);
    }

    #[test]
    fn defect4_a_senders_queue_must_be_payable_together() {
        let chain = dev_chain();
        let mut b = dev_builders();
        let mut pool = Mempool::new(MempoolConfig::default());
        let key = timerhost_types::PrivateKey::from_bytes(&[42; 32]).unwrap();
        let mut poor = timerhost_chain::testing::TxBuilder::new(key, timerhost_types::DEV_CHAIN_ID);
        // Enough for one transaction's pre-charge and value, not two.
        let one = poor.transfer(Address([1; 20]), 1);
        let quote =
            timerhost_chain::fees::FeeQuote::for_tx(&one.tx, &chain.basefee_config().unwrap())
                .unwrap();
        let ts = chain.head().unwrap().timestamp_ms + 1;
        chain
            .produce_block(
                &[b[1].transfer(poor.address(), quote.prepay + 1 + quote.prepay / 2)],
                ts,
                Address::ZERO,
            )
            .unwrap();
        admit(&mut pool, &chain, &one).unwrap();
        let two = poor.transfer(Address([1; 20]), 1);
        let e = admit(&mut pool, &chain, &two).unwrap_err();
        assert_eq!(e.reason(), Some("queue_unpaid"), "{e}");
        assert!(e.to_string().contains("together"), "{e}");
    }
}
