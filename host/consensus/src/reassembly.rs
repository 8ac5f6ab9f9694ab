//! Gossip delivers a proposal's stream messages in any order and possibly
//! twice; [`Reassembly`] buffers them per (publisher, stream id) and hands a
//! stream's parts over, in sequence order, once every message up to its
//! `Fin` has arrived.
//!
//! Nothing in a stream can be checked against its proposer's signature
//! before the stream is whole, so until then every byte is held on a peer's
//! word. The buffer is therefore bounded by bytes as well as by count:
//!
//! - a part may carry at most [`PROPOSAL_CHUNK_BYTES`] of block data (or a
//!   [`MAX_FIN_SIGNATURE_BYTES`] signature), what an honest proposer sends;
//! - a stream's data may add up to no more than the block size its `Init`
//!   part declares, itself at most [`MAX_STREAMED_BLOCK_BYTES`] (the limit
//!   also binds before `Init` has arrived);
//! - all open streams together hold at most [`MAX_BUFFERED_BYTES`],
//!   counting [`PART_OVERHEAD_BYTES`] for every part on top of its payload;
//!   the oldest streams of the publisher holding the most are dropped to
//!   make room, so a flooding peer loses its own streams first;
//! - at most [`MAX_OPEN_STREAMS`] streams of at most [`MAX_STREAM_MESSAGES`]
//!   messages each.
//!
//! A stream that breaks a per-part or per-stream rule is dropped whole: no
//! honest proposer sends it, and keeping what it already sent would only
//! hold memory for a stream that cannot complete.

use std::collections::{BTreeMap, HashMap};

use malachitebft_engine::util::streaming::{StreamContent, StreamId, StreamMessage};

use crate::proposal::{ProposalPart, PROPOSAL_CHUNK_BYTES};
use crate::streaming::MAX_STREAMED_BLOCK_BYTES;

/// Most streams buffered at once (across publishers); the oldest of the
/// publisher with the most streams is dropped to make room. A few heights'
/// worth of proposals from every validator.
pub const MAX_OPEN_STREAMS: usize = 256;

/// Most messages one stream may have: `Init`, the data chunks of the
/// largest block, `Fin` part, and the stream's own end marker.
pub const MAX_STREAM_MESSAGES: u64 = (MAX_STREAMED_BLOCK_BYTES / PROPOSAL_CHUNK_BYTES) as u64 + 3;

/// Largest signature a `Fin` part may carry: an ed25519 signature's 64
/// bytes (anything longer is refused by the signature check anyway).
pub const MAX_FIN_SIGNATURE_BYTES: usize = 64;

/// What holding one part costs beyond its payload — the part itself and its
/// entry in its stream's map — generously rounded up, so that a flood of
/// empty parts is not free.
pub const PART_OVERHEAD_BYTES: usize = 128;

/// Most bytes all open streams may hold together, overheads included:
/// 256 MiB, room for four of the largest possible blocks being streamed at
/// once (honest blocks are far smaller: a block's cell limit caps it). A
/// peer can make a validator buffer no more than this before signatures
/// are checked.
pub const MAX_BUFFERED_BYTES: usize = 256 * 1024 * 1024;

/// Most bytes one stream can come to hold with at most `data_bytes` of
/// block data: its data, every message's overhead and a `Fin` signature.
pub const fn max_stream_footprint(data_bytes: usize) -> usize {
    data_bytes + MAX_STREAM_MESSAGES as usize * PART_OVERHEAD_BYTES + MAX_FIN_SIGNATURE_BYTES
}

// Dropping every other stream must always make room for the one growing.
const _: () = assert!(max_stream_footprint(MAX_STREAMED_BLOCK_BYTES) <= MAX_BUFFERED_BYTES);

/// The byte caps a [`Reassembly`] enforces; the default is the constants
/// above (smaller caps let tests fill the buffer cheaply).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReassemblyLimits {
    /// Most block data one stream may carry, and its `Init` declare.
    pub stream_bytes: usize,
    /// Most bytes all open streams may hold together, overheads included.
    pub total_bytes: usize,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        ReassemblyLimits {
            stream_bytes: MAX_STREAMED_BLOCK_BYTES,
            total_bytes: MAX_BUFFERED_BYTES,
        }
    }
}

#[derive(Debug, Default)]
struct OpenStream {
    parts: BTreeMap<u64, ProposalPart>,
    /// Sequence number of the end-of-stream marker, once seen.
    end: Option<u64>,
    /// Arrival order, to drop the oldest stream first.
    opened: u64,
    /// Block size the `Init` part declared, once it arrived.
    declared: Option<usize>,
    /// Sum of the `Data` parts' lengths.
    data_bytes: usize,
    /// What the stream holds, overheads included.
    buffered_bytes: usize,
}

type StreamKey = (Vec<u8>, StreamId);

/// Stream messages being put back in order.
#[derive(Debug, Default)]
pub struct Reassembly {
    streams: HashMap<StreamKey, OpenStream>,
    opened: u64,
    limits: ReassemblyLimits,
    /// What all open streams hold, overheads included.
    buffered_bytes: usize,
}

/// Why a stream message was dropped.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReassemblyError {
    /// A sequence number beyond any stream's length.
    #[error("stream message {0} is beyond the longest possible stream")]
    TooLong(u64),
    /// A part carrying more than an honest proposer puts in one.
    #[error("stream message {sequence} carries {bytes} bytes, more than a part may")]
    PartTooLarge {
        /// The message's sequence number.
        sequence: u64,
        /// Its payload's length.
        bytes: usize,
    },
    /// `Init` somewhere other than first, or something else first.
    #[error(
        "stream message {0} misplaces the Init part (a stream starts with it, and only there)"
    )]
    MisplacedInit(u64),
    /// `Init` declares a block larger than a stream may carry.
    #[error(
        "the stream declares a {declared}-byte block, more than the {limit} a stream may carry"
    )]
    DeclaredTooLarge {
        /// The declared size.
        declared: u64,
        /// The per-stream cap.
        limit: usize,
    },
    /// The stream's data adds up to more than its `Init` declared (or,
    /// before `Init`, than any stream may carry).
    #[error("the stream's parts carry {carried} bytes of block data, more than its {limit}")]
    ExceedsDeclaredSize {
        /// Block data received so far, this part included.
        carried: usize,
        /// The declared size, or the per-stream cap before `Init`.
        limit: usize,
    },
}

/// Bytes of payload a part carries.
fn payload_bytes(part: &ProposalPart) -> usize {
    match part {
        ProposalPart::Init { .. } => 0,
        ProposalPart::Data(chunk) => chunk.len(),
        ProposalPart::Fin { signature, .. } => signature.len(),
    }
}

/// Bytes of block data a part carries.
fn data_bytes(part: &ProposalPart) -> usize {
    match part {
        ProposalPart::Data(chunk) => chunk.len(),
        _ => 0,
    }
}

/// What holding a part costs.
fn footprint(part: &ProposalPart) -> usize {
    PART_OVERHEAD_BYTES + payload_bytes(part)
}

/// What holding a whole stream's parts costs, counted as the buffer counts
/// them (the app bounds the signed proposals it keeps for later heights by
/// the same measure).
pub fn parts_footprint(parts: &[ProposalPart]) -> usize {
    parts.iter().map(footprint).sum()
}

impl Reassembly {
    /// An empty buffer with these caps.
    ///
    /// # Panics
    /// If one stream within `limits.stream_bytes` could outgrow
    /// `limits.total_bytes`: evicting every other stream must make room.
    pub fn with_limits(limits: ReassemblyLimits) -> Reassembly {
        assert!(
            max_stream_footprint(limits.stream_bytes) <= limits.total_bytes,
            "the total cap must hold the largest stream: {limits:?}"
        );
        Reassembly {
            limits,
            ..Reassembly::default()
        }
    }

    /// Takes one message published by `publisher` (its peer id bytes);
    /// returns the stream's parts in order once it is complete.
    pub fn push(
        &mut self,
        publisher: Vec<u8>,
        message: StreamMessage<ProposalPart>,
    ) -> Result<Option<Vec<ProposalPart>>, ReassemblyError> {
        let sequence = message.sequence;
        if sequence >= MAX_STREAM_MESSAGES {
            return Err(ReassemblyError::TooLong(sequence));
        }
        let key = (publisher, message.stream_id);
        match message.content {
            StreamContent::Data(part) => {
                if let Err(e) = self.admit(&key, sequence, part) {
                    self.drop_stream(&key);
                    return Err(e);
                }
            }
            StreamContent::Fin => self.open(&key).end = Some(sequence),
        }
        Ok(self.take_if_complete(&key))
    }

    /// Streams still waiting for messages.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// What all open streams hold, overheads included (never more than the
    /// total cap).
    pub fn buffered_bytes(&self) -> usize {
        self.buffered_bytes
    }

    /// Checks a part against the caps and buffers it; the caller drops the
    /// stream on an error.
    fn admit(
        &mut self,
        key: &StreamKey,
        sequence: u64,
        part: ProposalPart,
    ) -> Result<(), ReassemblyError> {
        let oversized = match &part {
            ProposalPart::Data(chunk) => chunk.len() > PROPOSAL_CHUNK_BYTES,
            ProposalPart::Fin { signature, .. } => signature.len() > MAX_FIN_SIGNATURE_BYTES,
            ProposalPart::Init { .. } => false,
        };
        if oversized {
            return Err(ReassemblyError::PartTooLarge {
                sequence,
                bytes: payload_bytes(&part),
            });
        }
        let declares = match &part {
            ProposalPart::Init { block_bytes, .. } => Some(*block_bytes),
            _ => None,
        };
        // The declared size is only trusted in the first message, where an
        // honest proposer puts it; anything else there, or a second `Init`
        // further on, is not an honest stream.
        if declares.is_some() != (sequence == 0) {
            return Err(ReassemblyError::MisplacedInit(sequence));
        }
        let declared = match declares {
            Some(declared) => Some(
                usize::try_from(declared)
                    .ok()
                    .filter(|&n| n <= self.limits.stream_bytes)
                    .ok_or(ReassemblyError::DeclaredTooLarge {
                        declared,
                        limit: self.limits.stream_bytes,
                    })?,
            ),
            None => None,
        };

        let stream_bytes = self.limits.stream_bytes;
        let stream = self.open(key);
        let replaced = stream.parts.get(&sequence);
        let carried = stream.data_bytes - replaced.map_or(0, data_bytes) + data_bytes(&part);
        let limit = declared.or(stream.declared).unwrap_or(stream_bytes);
        if carried > limit {
            return Err(ReassemblyError::ExceedsDeclaredSize { carried, limit });
        }
        let released = replaced.map_or(0, footprint);
        let added = footprint(&part);

        // Make room before taking the part, so the buffer never holds more
        // than the total cap, not even for a moment.
        while self.buffered_bytes - released + added > self.limits.total_bytes {
            if !self.drop_oldest(Some(key), true) {
                break; // cannot happen: one stream fits the cap alone
            }
        }
        let stream = self.streams.get_mut(key).expect("opened above");
        if declared.is_some() {
            stream.declared = declared;
        }
        stream.data_bytes = carried;
        stream.buffered_bytes = stream.buffered_bytes - released + added;
        self.buffered_bytes = self.buffered_bytes - released + added;
        stream.parts.insert(sequence, part);
        Ok(())
    }

    /// The stream `key`, opened (making room by count) if new.
    fn open(&mut self, key: &StreamKey) -> &mut OpenStream {
        if !self.streams.contains_key(key) {
            if self.streams.len() >= MAX_OPEN_STREAMS {
                self.drop_oldest(None, false);
            }
            self.opened += 1;
            self.streams.insert(
                key.clone(),
                OpenStream {
                    opened: self.opened,
                    ..OpenStream::default()
                },
            );
        }
        self.streams.get_mut(key).expect("just opened")
    }

    /// The stream's parts in order, removed from the buffer, if every
    /// message up to its end marker has arrived.
    fn take_if_complete(&mut self, key: &StreamKey) -> Option<Vec<ProposalPart>> {
        let stream = self.streams.get(key)?;
        let complete = stream.end.is_some_and(|end| {
            stream.parts.len() as u64 == end && stream.parts.keys().next_back() < Some(&end)
        });
        if !complete {
            return None;
        }
        let stream = self.drop_stream(key).expect("present");
        Some(stream.parts.into_values().collect())
    }

    fn drop_stream(&mut self, key: &StreamKey) -> Option<OpenStream> {
        let stream = self.streams.remove(key)?;
        self.buffered_bytes -= stream.buffered_bytes;
        Some(stream)
    }

    /// Drops the oldest stream of the publisher holding the most — bytes
    /// when making room for a part, streams when making room for a stream
    /// — other than `keep`. A peer flooding the buffer so evicts its own
    /// streams before anyone else's: an honest proposer's stream in flight
    /// survives a flood from others. `false` when there is nothing to drop.
    fn drop_oldest(&mut self, keep: Option<&StreamKey>, by_bytes: bool) -> bool {
        let mut load: HashMap<&[u8], usize> = HashMap::new();
        for ((publisher, _), s) in &self.streams {
            *load.entry(publisher.as_slice()).or_default() +=
                if by_bytes { s.buffered_bytes } else { 1 };
        }
        // `opened` is unique, so the choice is the same on every node.
        let victim = self
            .streams
            .iter()
            .filter(|(k, _)| Some(*k) != keep)
            .max_by_key(|((publisher, _), s)| {
                (load[publisher.as_slice()], std::cmp::Reverse(s.opened))
            })
            .map(|(k, _)| k.clone());
        match victim {
            Some(key) => {
                self.drop_stream(&key);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::height::Height;
    use crate::validators::ValidatorAddress;
    use bytes::Bytes;
    use malachitebft_core_types::Round;
    use timerhost_types::{Address, Hash};

    fn msg(id: u8, seq: u64, content: StreamContent<ProposalPart>) -> StreamMessage<ProposalPart> {
        StreamMessage::new(StreamId::new(Bytes::from(vec![id])), seq, content)
    }

    fn data(n: u8) -> StreamContent<ProposalPart> {
        StreamContent::Data(ProposalPart::Data(vec![n]))
    }

    fn chunk(len: usize) -> StreamContent<ProposalPart> {
        StreamContent::Data(ProposalPart::Data(vec![0xab; len]))
    }

    fn init(block_bytes: u64) -> StreamContent<ProposalPart> {
        StreamContent::Data(ProposalPart::Init {
            height: Height(1),
            round: Round::ZERO,
            proposer: ValidatorAddress(Address([1; 20])),
            pol_round: Round::Nil,
            block_bytes,
        })
    }

    fn fin() -> StreamContent<ProposalPart> {
        StreamContent::Data(ProposalPart::Fin {
            block_hash: Hash([3; 32]),
            signature: vec![0; 64],
        })
    }

    #[test]
    fn out_of_order_and_duplicate_messages_complete_once_in_order() {
        let mut r = Reassembly::default();
        let p = b"peer".to_vec();
        assert_eq!(
            r.push(p.clone(), msg(1, 3, StreamContent::Fin)).unwrap(),
            None
        );
        assert_eq!(r.push(p.clone(), msg(1, 2, data(2))).unwrap(), None);
        assert_eq!(r.push(p.clone(), msg(1, 2, data(2))).unwrap(), None);
        assert_eq!(r.push(p.clone(), msg(1, 0, init(2))).unwrap(), None);
        // Another publisher's stream with the same id stays separate.
        assert_eq!(r.push(b"other".to_vec(), msg(1, 1, data(9))).unwrap(), None);
        let parts = r.push(p, msg(1, 1, data(1))).unwrap().unwrap();
        assert_eq!(parts.len(), 3);
        assert!(matches!(
            parts[0],
            ProposalPart::Init { block_bytes: 2, .. }
        ));
        assert_eq!(
            parts[1..],
            [ProposalPart::Data(vec![1]), ProposalPart::Data(vec![2])]
        );
        assert_eq!(r.open_streams(), 1);
        // The duplicate was counted once, and the completed stream released.
        assert_eq!(r.buffered_bytes(), PART_OVERHEAD_BYTES + 1);
    }

    #[test]
    fn hostile_streams_are_bounded() {
        let mut r = Reassembly::default();
        assert_eq!(
            r.push(b"p".to_vec(), msg(1, MAX_STREAM_MESSAGES, data(0))),
            Err(ReassemblyError::TooLong(MAX_STREAM_MESSAGES))
        );
        for i in 0..(MAX_OPEN_STREAMS + 10) {
            r.push(i.to_be_bytes().to_vec(), msg(1, 1, data(0)))
                .unwrap();
        }
        assert_eq!(r.open_streams(), MAX_OPEN_STREAMS);
    }

    #[test]
    fn a_part_larger_than_a_chunk_drops_its_stream() {
        let mut r = Reassembly::default();
        let p = b"peer".to_vec();
        r.push(p.clone(), msg(1, 0, init(1_000_000))).unwrap();
        r.push(p.clone(), msg(1, 1, chunk(PROPOSAL_CHUNK_BYTES)))
            .unwrap();
        assert_eq!(
            r.push(p.clone(), msg(1, 2, chunk(PROPOSAL_CHUNK_BYTES + 1))),
            Err(ReassemblyError::PartTooLarge {
                sequence: 2,
                bytes: PROPOSAL_CHUNK_BYTES + 1
            })
        );
        assert_eq!((r.open_streams(), r.buffered_bytes()), (0, 0));

        // So does a `Fin` with more than a signature in it.
        let bloated = StreamContent::Data(ProposalPart::Fin {
            block_hash: Hash([3; 32]),
            signature: vec![0; PROPOSAL_CHUNK_BYTES],
        });
        assert!(matches!(
            r.push(p, msg(2, 1, bloated)),
            Err(ReassemblyError::PartTooLarge { sequence: 1, .. })
        ));
        assert_eq!((r.open_streams(), r.buffered_bytes()), (0, 0));
    }

    #[test]
    fn a_stream_whose_parts_pass_its_declared_size_is_dropped() {
        let mut r = Reassembly::default();
        let p = b"peer".to_vec();
        r.push(p.clone(), msg(1, 0, init(100))).unwrap();
        r.push(p.clone(), msg(1, 1, chunk(60))).unwrap();
        // Re-delivering a part replaces it: 60 bytes, not 120.
        r.push(p.clone(), msg(1, 1, chunk(60))).unwrap();
        assert_eq!(
            r.push(p.clone(), msg(1, 2, chunk(41))),
            Err(ReassemblyError::ExceedsDeclaredSize {
                carried: 101,
                limit: 100
            })
        );
        assert_eq!((r.open_streams(), r.buffered_bytes()), (0, 0));
        // The rest of the dropped stream starts afresh and cannot complete.
        r.push(p.clone(), msg(1, 3, fin())).unwrap();
        assert_eq!(r.push(p.clone(), msg(1, 4, StreamContent::Fin)), Ok(None));

        // Data that arrived before `Init` is held to the declaration too.
        r.push(p.clone(), msg(2, 1, chunk(60))).unwrap();
        assert_eq!(
            r.push(p.clone(), msg(2, 0, init(59))),
            Err(ReassemblyError::ExceedsDeclaredSize {
                carried: 60,
                limit: 59
            })
        );
        // A declaration past the per-stream cap, or an `Init` out of place.
        assert_eq!(
            r.push(
                p.clone(),
                msg(3, 0, init(MAX_STREAMED_BLOCK_BYTES as u64 + 1))
            ),
            Err(ReassemblyError::DeclaredTooLarge {
                declared: MAX_STREAMED_BLOCK_BYTES as u64 + 1,
                limit: MAX_STREAMED_BLOCK_BYTES
            })
        );
        assert_eq!(
            r.push(p.clone(), msg(4, 2, init(10))),
            Err(ReassemblyError::MisplacedInit(2))
        );
        assert_eq!(
            r.push(p, msg(4, 0, data(1))),
            Err(ReassemblyError::MisplacedInit(0))
        );
        assert_eq!(r.open_streams(), 1); // stream 1's late messages
    }

    #[test]
    fn streams_filling_the_total_cap_drop_the_oldest_and_stay_under_it() {
        let limits = ReassemblyLimits {
            stream_bytes: 4_000,
            total_bytes: max_stream_footprint(4_000) + 10_000,
        };
        let mut r = Reassembly::with_limits(limits);
        let p = b"peer".to_vec();
        let per_stream = 3 * PART_OVERHEAD_BYTES + 4_000;
        let streams = 3 * limits.total_bytes / per_stream;
        assert!(streams < MAX_OPEN_STREAMS); // the byte cap binds, not the count
        for id in 0..streams as u8 {
            r.push(p.clone(), msg(id, 0, init(4_000))).unwrap();
            r.push(p.clone(), msg(id, 1, chunk(2_000))).unwrap();
            r.push(p.clone(), msg(id, 2, chunk(2_000))).unwrap();
            assert!(r.buffered_bytes() <= limits.total_bytes);
        }
        let kept = limits.total_bytes / per_stream;
        assert_eq!(r.open_streams(), kept);
        assert_eq!(r.buffered_bytes(), kept * per_stream);

        // The newest streams are whole and complete; the oldest went.
        let newest = streams as u8 - 1;
        r.push(p.clone(), msg(newest, 3, fin())).unwrap();
        let parts = r.push(p.clone(), msg(newest, 4, StreamContent::Fin));
        assert_eq!(parts.unwrap().map(|v| v.len()), Some(4));
        r.push(p.clone(), msg(0, 3, fin())).unwrap();
        assert_eq!(r.push(p, msg(0, 4, StreamContent::Fin)), Ok(None));
        assert!(r.buffered_bytes() <= limits.total_bytes);
    }

    /// A flood from one peer evicts that peer's own streams: another
    /// publisher's stream in flight survives and completes.
    #[test]
    fn a_flooding_peer_evicts_its_own_streams_not_an_honest_one() {
        let limits = ReassemblyLimits {
            stream_bytes: 4_000,
            total_bytes: max_stream_footprint(4_000) + 10_000,
        };
        let mut r = Reassembly::with_limits(limits);
        let honest = b"proposer".to_vec();
        r.push(honest.clone(), msg(200, 0, init(4_000))).unwrap();
        r.push(honest.clone(), msg(200, 1, chunk(2_000))).unwrap();
        let flooder = b"flooder".to_vec();
        for id in 0..100u8 {
            r.push(flooder.clone(), msg(id, 0, init(4_000))).unwrap();
            r.push(flooder.clone(), msg(id, 1, chunk(2_000))).unwrap();
            r.push(flooder.clone(), msg(id, 2, chunk(2_000))).unwrap();
            assert!(r.buffered_bytes() <= limits.total_bytes);
        }
        // Many streams arriving one by one, past the count cap, too.
        for id in 0..=255u8 {
            r.push(b"sybil".to_vec(), msg(id, 0, init(10))).unwrap();
        }
        r.push(honest.clone(), msg(200, 2, chunk(2_000))).unwrap();
        r.push(honest.clone(), msg(200, 3, fin())).unwrap();
        let parts = r.push(honest, msg(200, 4, StreamContent::Fin)).unwrap();
        assert_eq!(
            parts.map(|v| v.len()),
            Some(4),
            "the honest stream completed"
        );
    }

    #[test]
    #[should_panic(expected = "the total cap must hold the largest stream")]
    fn a_total_cap_below_one_stream_is_refused() {
        Reassembly::with_limits(ReassemblyLimits {
            stream_bytes: 4_000,
            total_bytes: 4_000,
        });
    }
}
