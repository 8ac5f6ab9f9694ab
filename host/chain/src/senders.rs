//! Recovering the senders of a block's transactions ahead of executing it,
//! on every core.
//!
//! Recovering a secp256k1 signature costs more than executing a transfer
//! (#34: ~90 µs against ~40), and it depends on nothing but the
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

/// The sender of each of `txs`, in order, recovered on every core.
pub fn recover_all(txs: &[SignedTransaction]) -> Vec<Recovered> {
    recover_missing(txs, vec![None; txs.len()])
}

/// The sender of each of `txs`: `known[i]` where the caller knows it (a
/// follower's mempool admitted most of a block's transactions and
/// recovered their senders then), the others recovered on every core.
pub fn recover_missing(txs: &[SignedTransaction], known: Vec<Option<Address>>) -> Vec<Recovered> {
    let recover = |tx: &SignedTransaction| tx.recover_sender().map_err(|e| e.to_string());
    let missing: Vec<usize> = (0..txs.len())
        .filter(|&i| known.get(i).copied().flatten().is_none())
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(missing.len() / MIN_PER_THREAD).max(1);
    let recovered: Vec<Recovered> = if threads == 1 {
        missing.iter().map(|&i| recover(&txs[i])).collect()
    } else {
        let per_thread = missing.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = missing
                .chunks(per_thread)
                .map(|chunk| {
                    scope.spawn(move || chunk.iter().map(|&i| recover(&txs[i])).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("signature recovery does not panic"))
                .collect()
        })
    };
    let mut out: Vec<Recovered> = (0..txs.len())
        .map(|i| Ok(known.get(i).copied().flatten().unwrap_or(Address::ZERO)))
        .collect();
    for (i, r) in missing.into_iter().zip(recovered) {
        out[i] = r;
    }
    out
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
