//! Recovering the senders of a block's transactions ahead of executing it,
//! on every core.
//!
//! Recovering a secp256k1 signature cost more than executing a transfer
//! (#34: 196 µs through k256 here, 42 µs now through libsecp256k1, against
//! ~50 µs to execute and commit a transfer), and it depends on nothing but the
//! transaction's bytes, so a block's senders are recovered in parallel
//! before its transactions run in order; execution then checks the rest of
//! each transaction on one core. A node that admitted a transaction to its
//! mempool has recovered its sender already and passes it along
//! ([`crate::Chain::propose_recovered`]).

use timerhost_types::{Address, SignedTransaction};

/// A transaction's recovered sender, or why its signature does not recover.
pub type Recovered = Result<Address, String>;

/// Fewest transactions worth a thread of their own.
const MIN_PER_THREAD: usize = 64;

/// `f` of each of `items`, in order, computed in chunks on every core (on
/// this thread alone for fewer than [`MIN_PER_THREAD`] items a thread).
pub fn on_every_core<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(items.len() / MIN_PER_THREAD).max(1);
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let per_thread = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(per_thread)
            .map(|chunk| scope.spawn(move || chunk.iter().map(f).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker does not panic"))
            .collect()
    })
}

/// The sender of each of `txs`, in order, recovered on every core.
pub fn recover_all(txs: &[SignedTransaction]) -> Vec<Recovered> {
    recover_missing(txs, vec![None; txs.len()])
}

/// The sender of each of `txs`: `known[i]` where the caller knows it (a
/// follower's mempool admitted most of a block's transactions and
/// recovered their senders then), the others recovered on every core.
pub fn recover_missing(txs: &[SignedTransaction], known: Vec<Option<Address>>) -> Vec<Recovered> {
    let missing: Vec<usize> = (0..txs.len())
        .filter(|&i| known.get(i).copied().flatten().is_none())
        .collect();
    let recovered = on_every_core(&missing, |&i| {
        txs[i].recover_sender().map_err(|e| e.to_string())
    });
    // `recovered` holds one sender per unknown one, in order.
    let mut recovered = recovered.into_iter();
    (0..txs.len())
        .map(|i| match known.get(i).copied().flatten() {
            Some(sender) => Ok(sender),
            None => recovered.next().expect("one recovery per unknown sender"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::dev_builders;

    #[test]
    fn every_sender_is_recovered_in_order_and_a_bad_signature_named() {
        let mut b = dev_builders();
        let mut txs: Vec<_> = (0..300)
            .map(|i| b[i % 10].transfer(Address([1; 20]), 1))
            .collect();
        txs[150].signature[5] ^= 0xff;
        let got = recover_all(&txs);
        assert_eq!(got.len(), 300);
        for (i, r) in got.iter().enumerate() {
            if i == 150 {
                assert!(r.is_err() || r.as_ref().ok() != Some(&b[i % 10].address()));
            } else {
                assert_eq!(r.as_ref().unwrap(), &b[i % 10].address(), "tx {i}");
            }
        }
        // Known senders are taken as given; the rest are recovered.
        let mut known = vec![None; 300];
        known[3] = Some(Address([9; 20]));
        let mixed = recover_missing(&txs, known);
        assert_eq!(mixed[3], Ok(Address([9; 20])));
        assert_eq!(mixed[4], got[4]);
        assert_eq!(mixed[150], got[150]);
    }
}
