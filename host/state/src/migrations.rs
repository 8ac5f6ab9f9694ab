//! Store migrations (#44): a store written in an older format is brought
//! to [`STORE_FORMAT`] in place, one format at a time, instead of being
//! re-created from genesis.
//!
//! **Policy.** A release migrates stores from [`OLDEST_MIGRATABLE_FORMAT`]
//! on — the two formats before its own, and further back while the steps
//! between only move the marker or write a key or two (nothing in them can
//! go untested: format 13 still migrates 9, since 10 → 11 and 11 → 12 only
//! move the marker and 12 → 13 writes one key beside it). An
//! older store is refused by name
//! ([`StorageError::Format`]); its operator upgrades through an
//! intermediate release or joins again by state sync.
//!
//! **Crash safety.** Every step writes only entries the format it starts
//! from does not read (a new namespace, a new metadata key), in bounded
//! atomic batches, and moves the format marker in its *last* batch. A
//! SIGKILL anywhere leaves a store of the old format (plus entries it
//! ignores, rewritten identically when the step runs again) or of the new
//! one, never a store that reads as one and holds the other's layout.
//!
//! | step | what it writes |
//! |------|----------------|
//! | 9 → 10 | a header record (`h ‖ height`) for every stored block |
//! | 10 → 11 | nothing but the marker: format 11 may prune history below `M history_floor` (`crate::pruning`), which a format-10 binary would read as a corrupt store, so the marker keeps such binaries out |
//! | 11 → 12 | nothing but the marker: format 12 lets a fire leave its timer's id lookup stale (#46, `timerhost_timers::record::IdLookup`), which a format-11 binary would read as a corrupt store (and its audit would refuse in a snapshot), so the marker keeps such binaries out |
//! | 12 → 13 | the indexed height (`M tx_indexed`, the head: every block of a format-12 store is in the transaction index) and the marker: format 13 stores new blocks' receipts and event chunks compressed (`crate::compressed`; it reads the plain ones older blocks keep), which a format-12 binary would refuse as an unknown encoding version, and a node's commits leave the transaction index to its indexer (`crate::tx_index`), which a format-12 binary would not find |

use timerhost_types::encoding;
use timerhost_types::Block;

use crate::backend::{KvBackend, WriteBatch};
use crate::error::{corrupt, Result, StorageError};
use crate::headers::StoredHeader;
use crate::namespaces::{ns_key, read_head, BLOCK, HEADERS, HEAD_KEY, META};

/// Layout version of the store (namespaces, index shapes, and the layout of
/// consensus state that the code reads back), written with block 0 under
/// `M format`. Bump it whenever a layout changes; a database with another
/// value is refused at open (`ChainStore::check_format`) instead of being
/// misread, or migrated when it is at most two formats old (the module docs).
///
/// 2: event indexes are per-block posting lists (1 had one entry per event
/// and no marker).
/// 3: timer indexes are chunked and timer records carry their index slots
/// (`timerhost_timers::index`); 2 had one state key per timer per index.
/// 4: timers carry their deposit, `TimerConfig` has `max_fires_per_block`
/// and `deposit_per_byte`, and the timer status and revocation marks exist.
/// 5: timers are committed through one tree leaf per due bucket; records and
/// indexes moved to the derived `u` namespace, accounts carry `live_timers`
/// and GC entries their record's hash; block timestamps are unix ms.
/// 6: timers carry their kind (height, time, state) and `TimerConfig` the
/// watch limits; time timers and state watches have their own keys.
/// 7: timers carry their bid and escrow key, `TimerConfig` the ordering
/// fields, and the Globalbox and the ARC-21 registry exist.
/// 8: every due bucket keeps a stored form (`u l`/`u m`): its record
/// hashes while small, else its lattice until it empties (#29), so that a
/// bucket changes without reading a record.
/// 9: events are stored apart from their receipts in chunks (`V`), event
/// postings are positions in the block's events, and events that name a
/// timer are indexed by it (`E t`).
/// 10: each block's header and transaction count are stored apart (`h`).
/// 11: history (blocks, receipts, events, their indexes) may be pruned
/// below `M history_floor` (`crate::pruning`); headers are kept.
/// 12: a fire leaves its timer's id lookup (`u i`) stale, for pruning to
/// delete (#46).
/// 13: a block's receipts record (`R`) and event chunks (`V`) are stored
/// LZ4-compressed (`crate::compressed`, #46); older blocks' stay plain.
/// The transaction index (`X`) may lag the head: blocks above `M
/// tx_indexed` have their entries pending (`crate::tx_index`).
pub const STORE_FORMAT: u32 = 13;

/// The oldest format this build migrates.
pub const OLDEST_MIGRATABLE_FORMAT: u32 = 9;

/// Blocks a 9 → 10 batch covers.
pub const HEADER_BATCH_BLOCKS: usize = 512;

/// What a migration did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigrationReport {
    /// The format found.
    pub from: u32,
    /// The format left.
    pub to: u32,
    /// Entries written (markers included).
    pub entries_written: u64,
}

/// The format marker of a store with a head (`None`: before markers).
pub(crate) fn stored_format(backend: &dyn KvBackend) -> Result<Option<u32>> {
    let key = ns_key(META, b"format");
    match backend.get(&key)? {
        None => Ok(None),
        Some(bytes) => <[u8; 4]>::try_from(bytes.as_slice())
            .map(|b| Some(u32::from_be_bytes(b)))
            .map_err(|_| corrupt("store format", &key, "not 4 bytes")),
    }
}

fn set_format(batch: &mut WriteBatch, format: u32) {
    batch.put(ns_key(META, b"format"), format.to_be_bytes().to_vec());
}

/// Refuses a store this build can neither read nor migrate; says a
/// migratable one needs migrating.
pub(crate) fn check(backend: &dyn KvBackend) -> Result<()> {
    match stored_format(backend)? {
        Some(STORE_FORMAT) => Ok(()),
        Some(found) if (OLDEST_MIGRATABLE_FORMAT..STORE_FORMAT).contains(&found) => {
            Err(StorageError::NeedsMigration {
                found,
                expected: STORE_FORMAT,
            })
        }
        found => Err(StorageError::Format {
            found: found.map_or_else(|| "none (before format markers)".into(), |f| f.to_string()),
            expected: STORE_FORMAT,
        }),
    }
}

/// Migrates a store with a head to [`STORE_FORMAT`], calling `progress`
/// after every batch with the format being left and the entries written
/// so far. A store already current is left untouched.
pub(crate) fn migrate(
    backend: &dyn KvBackend,
    mut progress: impl FnMut(u32, u64),
) -> Result<MigrationReport> {
    let from = match check(backend) {
        Ok(()) => STORE_FORMAT,
        Err(StorageError::NeedsMigration { found, .. }) => found,
        Err(other) => return Err(other),
    };
    let mut report = MigrationReport {
        from,
        to: from,
        entries_written: 0,
    };
    while report.to < STORE_FORMAT {
        match report.to {
            9 => headers_apart(backend, &mut report, &mut progress)?,
            // Marker-only steps: what the newer format may hold, the older
            // reads as corrupt.
            // 12 → 13: every block of a format-12 store is indexed
            // (`crate::tx_index`), so its head is the indexed height.
            12 => {
                let head = read_head(backend)?
                    .ok_or_else(|| corrupt("head height", &ns_key(META, HEAD_KEY), "missing"))?;
                let mut batch = WriteBatch::new();
                crate::tx_index::stage_indexed_height(&mut batch, head);
                set_format(&mut batch, 13);
                backend.write(batch)?;
                report.entries_written += 2;
            }
            10 | 11 => {
                let mut batch = WriteBatch::new();
                set_format(&mut batch, report.to + 1);
                backend.write(batch)?;
                report.entries_written += 1;
            }
            other => unreachable!("format {other} is checked migratable above"),
        }
        report.to += 1;
        progress(report.to, report.entries_written);
    }
    Ok(report)
}

/// 9 → 10: a header record for every block, in batches; the marker last.
fn headers_apart(
    backend: &dyn KvBackend,
    report: &mut MigrationReport,
    progress: &mut impl FnMut(u32, u64),
) -> Result<()> {
    let end = [BLOCK + 1];
    let mut start = vec![BLOCK];
    loop {
        let blocks = backend.scan(&start, Some(&end), HEADER_BATCH_BLOCKS)?;
        let Some((last, _)) = blocks.last() else {
            break;
        };
        let mut next = last.clone();
        next.push(0);
        let mut batch = WriteBatch::new();
        for (key, bytes) in &blocks {
            let block: Block = encoding::decode(bytes).map_err(|e| corrupt("block", key, e))?;
            let stored = StoredHeader {
                tx_count: block.txs.len() as u32,
                header: block.header,
            };
            batch.put(
                ns_key(HEADERS, &stored.header.height.to_be_bytes()),
                encoding::encode(&stored),
            );
        }
        report.entries_written += blocks.len() as u64;
        backend.write(batch)?;
        progress(9, report.entries_written);
        if blocks.len() < HEADER_BATCH_BLOCKS {
            break;
        }
        start = next;
    }
    let mut batch = WriteBatch::new();
    set_format(&mut batch, 10);
    backend.write(batch)?;
    report.entries_written += 1;
    Ok(())
}
