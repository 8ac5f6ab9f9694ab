//! The consensus key layout: every piece of consensus state lives under one
//! of these keys in a flat, ordered key space, and the state root commits to
//! all of them. One-byte namespaces keep keys short; addresses and heights are
//! fixed-width big-endian so that key order is meaningful for range scans.
//!
//! | namespace | key | value |
//! |---|---|---|
//! | `a` | `a ‖ address` | [`Account`](crate::keys::Account) |
//! | `c` | `c ‖ address` | [`ActorMeta`](crate::keys::ActorMeta): code hash and deployer |
//! | `k` | `k ‖ code hash` | actor source (UTF-8), shared by actors with the same code |
//! | `s` | `s ‖ address ‖ storage key` | canonical [`Value`](crate::Value) |
//! | `g` | `g ‖ name` | governed configs (`basefee`, `chain`, …) |
//! | `m` | `m ‖ name` | chain metadata (`head`, `supply`) |
//! | `t` | the timers' committed state: due-bucket digests, GC backlog, counters (layout in the `timerhost-timers` crate) |
//! | `u` | the timers' *derived* state: records and indexes (same crate) |
//!
//! Every namespace is committed by the state tree except [`TIMERS_DERIVED`]:
//! its entries are written in the same atomic batch as the rest, but the tree
//! commits to them through the `t` due-bucket digests instead of one leaf
//! each, so that a block's tree work does not grow with the number of
//! pending timers ([`is_committed`] is the one rule).

use borsh::{BorshDeserialize, BorshSerialize};

use crate::encoding::Canonical;
use crate::primitives::Address;

/// Account records.
pub const ACCOUNT: u8 = b'a';
/// Actor metadata (code hash, deployer).
pub const CODE: u8 = b'c';
/// Actor source by code hash.
pub const CODE_SOURCE: u8 = b'k';
/// Actor storage.
pub const STORAGE: u8 = b's';
/// Governed configuration.
pub const CONFIG: u8 = b'g';
/// Chain metadata.
pub const META: u8 = b'm';
/// Timers: committed state (due-bucket digests, GC backlog, counters).
pub const TIMERS: u8 = b't';
/// Timers: derived state (records and indexes), committed through the
/// due-bucket digests under [`TIMERS`] rather than by the tree itself.
///
/// Why `u`: it sorts after every other state key, so in sled the derived
/// range borders only small timer keys and the transaction index. A fires
/// block empties thousands of record and chunk nodes, and sled merges each
/// into its left neighbour; under `T` that neighbour was the block-receipts
/// namespace, whose multi-megabyte values were rewritten on every merge
/// (docs/PERFORMANCE.md).
pub const TIMERS_DERIVED: u8 = b'u';

/// `u i ‖ timer id`: a timer's id lookup, the key of its record (derived).
/// Defined here because pruning, in the state crate, removes the lookups a
/// fire leaves stale (`timerhost_timers::record::IdLookup`).
pub const TIMER_ID_LOOKUP: [u8; 2] = [TIMERS_DERIVED, b'i'];

/// The id lookup key of timer `timer_id` ([`TIMER_ID_LOOKUP`]).
pub fn timer_id_lookup_key(timer_id: &[u8; 32]) -> Vec<u8> {
    let mut key = TIMER_ID_LOOKUP.to_vec();
    key.extend_from_slice(timer_id);
    key
}

/// Is `key` a leaf of the state tree? Everything but [`TIMERS_DERIVED`].
pub fn is_committed(key: &[u8]) -> bool {
    key.first() != Some(&TIMERS_DERIVED)
}

/// An account record.
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct Account {
    /// Balance in the smallest unit.
    pub balance: u128,
    /// Number of transactions sent.
    pub nonce: u64,
    /// Is this an actor (has code)?
    pub is_actor: bool,
    /// Actor-only: counter of accepted timer schedules (timer id derivation).
    pub schedule_nonce: u64,
    /// Actor-only: timers it holds now (the CIP-5 §4.2 cap reads this).
    pub live_timers: u32,
}

impl Canonical for Account {
    const NAME: &'static str = "account";
}

/// What the chain records about a deployed actor.
#[derive(Clone, Debug, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct ActorMeta {
    /// keccak256 of the source.
    pub code_hash: crate::Hash,
    /// Who deployed it.
    pub deployer: Address,
}

impl Canonical for ActorMeta {
    const NAME: &'static str = "actor metadata";
}

/// Key of an actor's source by code hash.
pub fn code_source(code_hash: &crate::Hash) -> Vec<u8> {
    let mut k = vec![CODE_SOURCE];
    k.extend_from_slice(code_hash.as_bytes());
    k
}

/// Chain head metadata stored in state (so the root commits to height and time).
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct HeadMeta {
    /// Height of the block that wrote this.
    pub height: u64,
    /// Timestamp of that block (unix ms).
    pub timestamp_ms: u64,
}

impl Canonical for HeadMeta {
    const NAME: &'static str = "head metadata";
}

/// Supply accounting stored in state: what genesis minted and what fees burned.
#[derive(Clone, Debug, Default, PartialEq, Eq, BorshSerialize, BorshDeserialize)]
pub struct SupplyMeta {
    /// Sum of genesis balances.
    pub genesis_supply: u128,
    /// Total burned by basefees so far.
    pub burned: u128,
}

impl Canonical for SupplyMeta {
    const NAME: &'static str = "supply metadata";
}

fn with_address(ns: u8, address: &Address) -> Vec<u8> {
    let mut key = Vec::with_capacity(21);
    key.push(ns);
    key.extend_from_slice(address.as_bytes());
    key
}

/// Key of an account record.
pub fn account(address: &Address) -> Vec<u8> {
    with_address(ACCOUNT, address)
}

/// Key of an actor's [`ActorMeta`].
pub fn code(address: &Address) -> Vec<u8> {
    with_address(CODE, address)
}

/// Prefix of all storage keys of an actor.
pub fn storage_prefix(address: &Address) -> Vec<u8> {
    with_address(STORAGE, address)
}

/// Key of one actor storage slot.
pub fn storage(address: &Address, key: &[u8]) -> Vec<u8> {
    let mut k = storage_prefix(address);
    k.extend_from_slice(key);
    k
}

/// Key of the basefee config.
pub fn basefee_config() -> Vec<u8> {
    [&[CONFIG][..], b"basefee"].concat()
}

/// Key of the chain params.
pub fn chain_params() -> Vec<u8> {
    [&[CONFIG][..], b"chain"].concat()
}

/// Key of the timer config.
pub fn timer_config() -> Vec<u8> {
    [&[CONFIG][..], b"timer"].concat()
}

/// Key of the timer lane's [`LaneMarket`](crate::LaneMarket) (#31; absent
/// = at the floor).
pub fn lane_market() -> Vec<u8> {
    [&[CONFIG][..], b"lane_market"].concat()
}

/// Key of every [`UpgradePlans`](crate::UpgradePlans) the validators
/// scheduled (#44).
pub fn upgrade_plans() -> Vec<u8> {
    [&[CONFIG][..], b"upgrades"].concat()
}

/// Key of the [`GovernanceConfig`](crate::GovernanceConfig) (#32).
pub fn governance_config() -> Vec<u8> {
    [&[CONFIG][..], b"governance"].concat()
}

/// Prefix of the validator-set history: `g vset/ ‖ !activation_height BE` →
/// [`ValidatorSetRecord`](crate::ValidatorSetRecord), newest first, so a
/// forward scan from [`validator_set_at`]`(h)` finds the set of height `h`.
pub fn validator_sets() -> Vec<u8> {
    [&[CONFIG][..], b"vset/"].concat()
}

/// The key of the set that is consensus's from `height` on.
pub fn validator_set_at(height: u64) -> Vec<u8> {
    [validator_sets(), (!height).to_be_bytes().to_vec()].concat()
}

/// Prefix of proposals: `g proposal/ ‖ id BE` → [`Proposal`](crate::Proposal).
pub fn proposals() -> Vec<u8> {
    [&[CONFIG][..], b"proposal/"].concat()
}

/// The key of proposal `id`.
pub fn proposal(id: u64) -> Vec<u8> {
    [proposals(), id.to_be_bytes().to_vec()].concat()
}

/// The number of the next proposal.
pub fn next_proposal() -> Vec<u8> {
    [&[CONFIG][..], b"next_proposal"].concat()
}

/// Prefix of open proposals by the end of their voting period:
/// `g voting_end/ ‖ voting_ends_at BE ‖ id BE` (empty value).
pub fn proposal_ends() -> Vec<u8> {
    [&[CONFIG][..], b"voting_end/"].concat()
}

/// Prefix of the closed proposals' index, by closing height (#50).
pub fn proposals_closed() -> Vec<u8> {
    [&[CONFIG][..], b"closed/"].concat()
}

/// The key of proposal `id`, closed (executed, expired or rejected) at
/// `closed_at`: its record is removed [`crate::governance::PROPOSAL_RETENTION_BLOCKS`]
/// blocks later.
pub fn proposal_closed(closed_at: u64, id: u64) -> Vec<u8> {
    [
        proposals_closed(),
        closed_at.to_be_bytes().to_vec(),
        id.to_be_bytes().to_vec(),
    ]
    .concat()
}

/// The key of open proposal `id` ending at `voting_ends_at`.
pub fn proposal_end(voting_ends_at: u64, id: u64) -> Vec<u8> {
    [
        proposal_ends(),
        voting_ends_at.to_be_bytes().to_vec(),
        id.to_be_bytes().to_vec(),
    ]
    .concat()
}

/// Key of the governance [`TimerStatus`](crate::TimerStatus) (absent = active).
pub fn timer_status() -> Vec<u8> {
    [&[CONFIG][..], b"timer_status"].concat()
}

/// The key range one step of an ordered scan over `actor`'s storage reads:
/// keys starting with `prefix`, strictly after `after` when given. Returns
/// `(start, end)` with `end` exclusive.
pub fn storage_scan_range(
    actor: &Address,
    prefix: &[u8],
    after: Option<&[u8]>,
) -> (Vec<u8>, Vec<u8>) {
    let full_prefix = storage(actor, prefix);
    let start = match after {
        // Strictly after `after`: its successor in byte order.
        Some(a) if a >= prefix => {
            let mut k = storage(actor, a);
            k.push(0);
            k
        }
        _ => full_prefix.clone(),
    };
    // The prefix with its last byte incremented, or the end of the actor's
    // key space when the prefix is all 0xff.
    let end = prefix_end(&full_prefix).unwrap_or_else(|| {
        prefix_end(&storage_prefix(actor)).expect("the namespace byte is not 0xff")
    });
    (start, end)
}

/// The smallest key greater than every key starting with `prefix`, if any.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Key of the head metadata.
pub fn head() -> Vec<u8> {
    [&[META][..], b"head"].concat()
}

/// Key of the supply metadata.
pub fn supply() -> Vec<u8> {
    [&[META][..], b"supply"].concat()
}
