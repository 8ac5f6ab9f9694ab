//! What a validator keeps beside the chain (`HOME/consensus/store`, sled):
//!
//! - `certificates`: each committed height's commit certificate — the
//!   precommit signatures that decided it — served to syncing peers with
//!   the block;
//! - `streams`: every proposal this node validated or built for a height
//!   not yet committed, as the signed parts it was streamed in, so a
//!   restart can still commit a decided value and re-stream it on request;
//! - `own`: the value this node proposed at each (height, round), so after
//!   a crash it proposes the very same block again instead of equivocating.
//!
//! A certificate is written *before* its block is committed to the chain:
//! a crash in between leaves a certificate for a height the chain does not
//! have yet, which the next decision at that height overwrites, never a
//! committed block without its certificate.

use std::path::Path;

use malachitebft_core_types::{ExtendedCommitCertificate, Round};
use timerhost_types::Hash;

use crate::codec::{decode_certificate, encode_certificate};
use crate::context::TimerhostContext;
use crate::error::{ConsensusError, Result};
use crate::proposal::ProposalPart;

/// The validator's side store.
#[derive(Debug, Clone)]
pub struct DecidedStore {
    certificates: sled::Tree,
    streams: sled::Tree,
    own: sled::Tree,
}

fn store_err(e: impl std::fmt::Display) -> ConsensusError {
    ConsensusError::Store(e.to_string())
}

fn stream_key(height: u64, block_hash: &Hash) -> Vec<u8> {
    let mut k = height.to_be_bytes().to_vec();
    k.extend_from_slice(block_hash.as_bytes());
    k
}

fn round_key(height: u64, round: Round) -> [u8; 16] {
    let mut k = [0; 16];
    k[..8].copy_from_slice(&height.to_be_bytes());
    k[8..].copy_from_slice(&round.as_i64().to_be_bytes());
    k
}

impl DecidedStore {
    /// Opens (or creates) the store at `path`.
    pub fn open(path: &Path) -> Result<DecidedStore> {
        let db = sled::open(path).map_err(store_err)?;
        Self::from_db(&db)
    }

    /// A store in memory (tests).
    pub fn temporary() -> Result<DecidedStore> {
        let db = sled::Config::new()
            .temporary(true)
            .open()
            .map_err(store_err)?;
        Self::from_db(&db)
    }

    fn from_db(db: &sled::Db) -> Result<DecidedStore> {
        Ok(DecidedStore {
            certificates: db.open_tree("certificates").map_err(store_err)?,
            streams: db.open_tree("streams").map_err(store_err)?,
            own: db.open_tree("own").map_err(store_err)?,
        })
    }

    /// Records the certificate that decided `certificate.height` (durably).
    pub fn put_certificate(
        &self,
        certificate: &ExtendedCommitCertificate<TimerhostContext>,
    ) -> Result<()> {
        self.certificates
            .insert(
                certificate.height.0.to_be_bytes(),
                encode_certificate(certificate),
            )
            .map_err(store_err)?;
        self.certificates.flush().map_err(store_err)?;
        Ok(())
    }

    /// The certificate that decided `height`, if this node has it.
    pub fn certificate(
        &self,
        height: u64,
    ) -> Result<Option<ExtendedCommitCertificate<TimerhostContext>>> {
        match self
            .certificates
            .get(height.to_be_bytes())
            .map_err(store_err)?
        {
            None => Ok(None),
            Some(bytes) => decode_certificate(&bytes)
                .map(Some)
                .map_err(|e| ConsensusError::Store(format!("certificate {height}: {e}"))),
        }
    }

    /// Keeps the signed parts of a proposal validated (or built) for `height`.
    pub fn put_stream(&self, height: u64, block_hash: &Hash, parts: &[ProposalPart]) -> Result<()> {
        let bytes = borsh::to_vec(parts).expect("writing to a Vec cannot fail");
        self.streams
            .insert(stream_key(height, block_hash), bytes)
            .map_err(store_err)?;
        Ok(())
    }

    /// The parts of the proposal of block `block_hash` at `height`.
    pub fn stream(&self, height: u64, block_hash: &Hash) -> Result<Option<Vec<ProposalPart>>> {
        match self
            .streams
            .get(stream_key(height, block_hash))
            .map_err(store_err)?
        {
            None => Ok(None),
            Some(bytes) => borsh::from_slice(&bytes)
                .map(Some)
                .map_err(|e| ConsensusError::Store(format!("stream at {height}: {e}"))),
        }
    }

    /// Records (durably, before it is published) the block this node
    /// proposes at (`height`, `round`).
    pub fn put_own_proposal(&self, height: u64, round: Round, block_hash: &Hash) -> Result<()> {
        self.own
            .insert(round_key(height, round), block_hash.as_bytes().as_slice())
            .map_err(store_err)?;
        self.streams.flush().map_err(store_err)?;
        self.own.flush().map_err(store_err)?;
        Ok(())
    }

    /// The block this node proposed at (`height`, `round`), if any.
    pub fn own_proposal(&self, height: u64, round: Round) -> Result<Option<Hash>> {
        Ok(self
            .own
            .get(round_key(height, round))
            .map_err(store_err)?
            .and_then(|v| <[u8; 32]>::try_from(v.as_ref()).ok().map(Hash)))
    }

    /// Forgets proposals and own proposals at heights up to `height`
    /// (committed: they can no longer be decided).
    pub fn prune_through(&self, height: u64) -> Result<()> {
        let end = (height + 1).to_be_bytes();
        for tree in [&self.streams, &self.own] {
            let keys: Vec<_> = tree
                .range(..end.as_slice())
                .keys()
                .collect::<std::result::Result<_, _>>()
                .map_err(store_err)?;
            for k in keys {
                tree.remove(k).map_err(store_err)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::height::Height;

    #[test]
    fn certificates_streams_and_own_proposals_round_trip_and_prune() {
        let s = DecidedStore::temporary().unwrap();
        let cert = ExtendedCommitCertificate::<TimerhostContext> {
            height: Height(3),
            round: Round::new(1),
            value_id: Hash([9; 32]),
            commit_signatures: Vec::new(),
        };
        s.put_certificate(&cert).unwrap();
        assert_eq!(s.certificate(3).unwrap(), Some(cert));
        assert_eq!(s.certificate(4).unwrap(), None);
        let parts = vec![ProposalPart::Data(vec![1, 2, 3])];
        s.put_stream(3, &Hash([1; 32]), &parts).unwrap();
        s.put_stream(4, &Hash([2; 32]), &parts).unwrap();
        s.put_own_proposal(4, Round::new(0), &Hash([2; 32]))
            .unwrap();
        assert_eq!(s.stream(3, &Hash([1; 32])).unwrap(), Some(parts.clone()));
        assert_eq!(
            s.own_proposal(4, Round::new(0)).unwrap(),
            Some(Hash([2; 32]))
        );
        assert_eq!(s.own_proposal(4, Round::new(1)).unwrap(), None);
        s.prune_through(3).unwrap();
        assert_eq!(s.stream(3, &Hash([1; 32])).unwrap(), None);
        assert_eq!(s.stream(4, &Hash([2; 32])).unwrap(), Some(parts));
        s.prune_through(4).unwrap();
        assert_eq!(s.own_proposal(4, Round::new(0)).unwrap(), None);
    }
}
