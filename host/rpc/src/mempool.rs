//! The mempool: signed transactions waiting for a block.
//!
//! - **Admission** ([`validate`]): everything the block pipeline checks
//!   statically (size, signature, chain id, dev-key rule, limits, fee
//!   bounds, governance membership) plus the state checks against the head
//!   (fee caps ≥ basefee, balance ≥ pre-charge + value). The nonce may run
//!   ahead of the account by at most `max_nonce_gap` so a client can send
//!   several transactions in a row; the funds check of such a future
//!   transaction is against today's balance, and the block pipeline checks
//!   again when it is included.
//! - **Bounds**: at most `max_txs` transactions, `max_per_sender` per sender;
//!   a duplicate or a second transaction for the same (sender, nonce) is
//!   refused.
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
}

impl Default for MempoolConfig {
    fn default() -> Self {
        Self {
            max_txs: 20_000,
            max_per_sender: 256,
            max_nonce_gap: 256,
            max_block_txs: 5_000,
        }
    }
}

/// Validates `tx` for admission against the chain's head (see the module
/// docs). Returns the sender and its account nonce.
pub fn validate<B: KvBackend>(
    chain: &Chain<B>,
    tx: &SignedTransaction,
    max_nonce_gap: u64,
) -> Result<(Address, u64)> {
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
    // Check fees and funds as if the nonce were next.
    check_against_state(tx, sender, nonce, account.balance, &basefee).map_err(reject)?;
    Ok((sender, account.nonce))
}

/// Pending transactions (see the module docs).
#[derive(Debug, Default)]
pub struct Mempool {
    config: MempoolConfig,
    queues: HashMap<Address, BTreeMap<u64, SignedTransaction>>,
    order: Vec<Address>,
    hashes: HashMap<Hash, (Address, u64)>,
}

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
            while q.contains_key(&next) {
                next += 1;
            }
        }
        next
    }

    /// Adds an already validated transaction from `sender`.
    pub fn insert(&mut self, tx: SignedTransaction, sender: Address) -> Result<Hash> {
        let hash = tx.hash();
        self.refuse_held(&hash)?;
        if self.len() >= self.config.max_txs {
            return Err(RpcError::MempoolFull {
                capacity: self.config.max_txs,
            });
        }
        let nonce = tx.tx.nonce;
        let queue = self.queues.entry(sender).or_default();
        if queue.contains_key(&nonce) {
            return Err(RpcError::TxRejected {
                reason: "nonce_already_pending",
                message: format!(
                    "another transaction from {sender} with nonce {nonce} is already pending"
                ),
            });
        }
        if queue.len() >= self.config.max_per_sender {
            return Err(RpcError::TxRejected {
                reason: "sender_full",
                message: format!(
                    "{sender} already has {} pending transactions, the most one sender may have (node.toml [mempool] max_per_sender)",
                    queue.len()
                ),
            });
        }
        if queue.is_empty() {
            self.order.push(sender);
        }
        queue.insert(nonce, tx);
        self.hashes.insert(hash, (sender, nonce));
        Ok(hash)
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
            while let Some(tx) = queue.get(&next) {
                if out.len() >= max {
                    return Ok(out);
                }
                out.push((tx.clone(), *sender));
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
        if let Some(q) = self.queues.get_mut(&sender) {
            q.remove(&nonce);
            if q.is_empty() {
                self.queues.remove(&sender);
                self.order.retain(|a| *a != sender);
            }
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
            for tx in self.queues.get(sender).into_iter().flat_map(|q| q.values()) {
                match validate(chain, tx, self.config.max_nonce_gap) {
                    Ok(_) => {}
                    Err(RpcError::TxRejected { message, .. }) => dropped.push((tx.hash(), message)),
                    // A storage failure says nothing about the transaction.
                    Err(e) => return Err(e),
                }
            }
        }
        for (hash, _) in &dropped {
            self.remove(hash);
        }
        Ok(dropped)
    }

    /// Drops every transaction whose nonce its sender has already used
    /// (included in a block, or made obsolete). Returns how many were dropped.
    pub fn remove_stale(
        &mut self,
        mut account_nonce: impl FnMut(&Address) -> Result<u64>,
    ) -> Result<usize> {
        let mut stale = Vec::new();
        for (sender, q) in &self.queues {
            let n = account_nonce(sender)?;
            stale.extend(q.range(..n).map(|(_, tx)| tx.hash()));
        }
        for h in &stale {
            self.remove(h);
        }
        Ok(stale.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_chain::testing::{dev_builders, dev_chain};

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
        pool.insert(c0.clone(), c).unwrap();
        pool.insert(a1.clone(), a).unwrap();
        pool.insert(a0.clone(), a).unwrap();
        let got = pool.candidates(|_| Ok(0), 100).unwrap();
        assert_eq!(got, vec![c0.clone(), a0.clone(), a1.clone()]);
        assert_eq!(pool.pending_nonce(&a, 0), 2);
        // After a block that included c0 and a0, only a1 remains ready.
        assert_eq!(pool.remove_stale(|_| Ok(1)).unwrap(), 2);
        assert_eq!(pool.candidates(|_| Ok(1), 100).unwrap(), vec![a1.clone()]);
        pool.insert(a2.clone(), a).unwrap();
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
        });
        let t0 = b[1].transfer(to, 1);
        pool.insert(t0.clone(), a).unwrap();
        let e = pool.insert(t0.clone(), a).unwrap_err().to_string();
        assert!(e.contains("already in the mempool"), "{e}");
        let mut other = b[1].clone();
        other.nonce = 0;
        let e = pool
            .insert(other.transfer(to, 2), a)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nonce 0 is already pending"), "{e}");
        pool.insert(b[1].transfer(to, 1), a).unwrap();
        let e = pool.insert(b[1].transfer(to, 1), a).unwrap_err();
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
            let (sender, _) = validate(&chain, t, config.max_nonce_gap).unwrap();
            pool.insert(t.clone(), sender).unwrap();
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
        assert_eq!(validate(&chain, &ok, 4).unwrap(), (b[1].address(), 0));
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
}
