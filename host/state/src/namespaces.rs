//! The backend's namespaces: the first byte of every key says which
//! record it is, so every part of the store shares one ordered key space
//! without collisions, and a prefix scan reads one kind of record.
//!
//! Backend namespaces (first key byte):
//!
//! | ns | key | value |
//! |----|-----|-------|
//! | `S` | `S ‖ consensus key` | consensus value (see `timerhost_types::keys`); derived keys (`keys::is_committed`) are stored here too but are not tree leaves |
//! | `N` | `N ‖ borsh(NodeKey)` | Jellyfish Merkle Tree node |
//! | `B` | `B ‖ height BE` | canonical block (`timerhost_types::Block`) |
//! | `R` | `R ‖ height BE` | the block's receipts without their events ([`crate::history`]) |
//! | `V` | `V ‖ height BE ‖ chunk BE u32` | 256 of the block's events, in order |
//! | `h` | `h ‖ height BE` | the block's header and transaction count (`StoredHeader`) |
//! | `H` | `H ‖ block hash` | height BE |
//! | `X` | `X ‖ tx hash` | where its receipt is (`TxLocation`) |
//! | `E` | `E n ‖ len ‖ name ‖ height BE` / `E a ‖ address ‖ height BE` | positions (BE u32) in that block's events |
//! | `E` | `E t ‖ timer id[..8] ‖ height BE ‖ position BE u32` | empty: an event naming that timer |
//! | `Y` | `Y ‖ height BE` | the chain's summary of that block (#33) |
//! | `M` | `M ‖ name` | node metadata (`head` height, …) |
//! | `Z` | `Z ‖ height BE ‖ part ‖ …` | a state snapshot served to syncing nodes ([`crate::snapshots`]) |
//! | `n` | `n ‖ borsh(NodeKey)` | empty: a tree node made stale while a snapshot was being taken, deleted when it is done ([`crate::snapshots`]) |
//! | `U` | `U ‖ height BE ‖ state key` | the key's value before block `height` wrote it (`0` absent, `1 ‖ value`): kept for the last `proof_blocks` blocks ([`crate::recent_records`]) |
//! | `K` | `K ‖ height BE ‖ borsh(NodeKey)` | empty: a tree node block `height` made stale, kept with the node for the last `proof_blocks` blocks ([`crate::recent`]) |
//!
//! Every namespace byte is defined here and nowhere else.

/// `S ‖ consensus key`: consensus state (and its derived keys).
pub const STATE: u8 = b'S';
/// `N ‖ borsh(NodeKey)`: Jellyfish Merkle Tree nodes ([`crate::commitment`]).
pub const TREE_NODES: u8 = b'N';
/// `B ‖ height BE`: canonical blocks.
pub const BLOCK: u8 = b'B';
/// `H ‖ block hash`: the block's height.
pub const HASH_INDEX: u8 = b'H';
/// `M ‖ name`: node metadata (`head`, `format`, …).
pub const META: u8 = b'M';
/// Per-block summaries the chain computes at commit (#33), by height.
pub const SUMMARY: u8 = b'Y';
/// Each block's header and transaction count apart from its transactions
/// (#50): the head, `th_status` and the dashboard's timeline read a few
/// hundred bytes per block instead of decoding blocks of megabytes.
pub const HEADERS: u8 = b'h';
/// `R ‖ height`: the block's receipts without their events.
pub const RECEIPTS: u8 = b'R';
/// `V ‖ height ‖ chunk`: the block's events, [`crate::history::EVENTS_PER_CHUNK`] a record.
pub const EVENT_CHUNKS: u8 = b'V';
/// `X ‖ tx hash`: where a transaction's receipt lives.
pub const TX_INDEX: u8 = b'X';
/// `E …`: the event indexes ([`crate::history`]).
pub const EVENT_INDEX: u8 = b'E';

/// `Z ‖ height ‖ part ‖ …`: state snapshots for state sync (#44).
pub const SNAPSHOTS: u8 = b'Z';
/// `n ‖ borsh(NodeKey)`: tree nodes whose deletion waits for a snapshot.
pub const DEFERRED_STALE: u8 = b'n';

/// `U ‖ height ‖ key`: a key's value before the block at `height` wrote it
/// (the recent states proofs are made at, [`crate::recent`]).
pub const PREVIOUS_VALUES: u8 = b'U';
/// `K ‖ height ‖ borsh(NodeKey)`: a tree node made stale at `height`, kept
/// while that height is among the recent states ([`crate::recent`]).
pub const RETAINED_STALE: u8 = b'K';

/// `ns ‖ rest`.
pub fn ns_key(ns: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + rest.len());
    k.push(ns);
    k.extend_from_slice(rest);
    k
}

/// `M ‖ head`: the height of the last committed block (big-endian u64).
pub(crate) const HEAD_KEY: &[u8] = b"head";

/// The height of the last committed block, `None` before genesis.
pub(crate) fn read_head(
    backend: &dyn crate::backend::KvBackend,
) -> crate::error::Result<Option<u64>> {
    read_meta_u64(backend, HEAD_KEY, "head height")
}

/// The big-endian u64 stored under `M ‖ name` (the head, the history floor,
/// the indexed height, …), if any; `what` names it in a corruption error.
pub(crate) fn read_meta_u64(
    backend: &dyn crate::backend::KvBackend,
    name: &[u8],
    what: &'static str,
) -> crate::error::Result<Option<u64>> {
    let key = ns_key(META, name);
    match backend.get(&key)? {
        None => Ok(None),
        Some(bytes) => <[u8; 8]>::try_from(bytes.as_slice())
            .map(|b| Some(u64::from_be_bytes(b)))
            .map_err(|_| crate::error::corrupt(what, &key, "not 8 bytes")),
    }
}
