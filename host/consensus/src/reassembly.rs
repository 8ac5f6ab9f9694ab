//! Gossip delivers a proposal's stream messages in any order and possibly
//! twice; [`Reassembly`] buffers them per (publisher, stream id) and hands a
//! stream's parts over, in sequence order, once every message up to its
//! `Fin` has arrived. It is bounded: a hostile peer cannot make it hold more
//! than [`MAX_OPEN_STREAMS`] streams of at most [`MAX_STREAM_MESSAGES`]
//! messages each.

use std::collections::{BTreeMap, HashMap};

use malachitebft_engine::util::streaming::{StreamContent, StreamId, StreamMessage};

use crate::proposal::{ProposalPart, PROPOSAL_CHUNK_BYTES};
use crate::streaming::MAX_STREAMED_BLOCK_BYTES;

/// Most streams buffered at once (across publishers); the oldest is dropped
/// to make room. A few heights' worth of proposals from every validator.
pub const MAX_OPEN_STREAMS: usize = 256;

/// Most messages one stream may have: `Init`, the data chunks of the
/// largest block, `Fin` part, and the stream's own end marker.
pub const MAX_STREAM_MESSAGES: u64 = (MAX_STREAMED_BLOCK_BYTES / PROPOSAL_CHUNK_BYTES) as u64 + 3;

#[derive(Debug, Default)]
struct OpenStream {
    parts: BTreeMap<u64, ProposalPart>,
    /// Sequence number of the end-of-stream marker, once seen.
    end: Option<u64>,
    /// Arrival order, to drop the oldest stream first.
    opened: u64,
}

/// Stream messages being put back in order.
#[derive(Debug, Default)]
pub struct Reassembly {
    streams: HashMap<(Vec<u8>, StreamId), OpenStream>,
    opened: u64,
}

/// Why a stream message was dropped.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReassemblyError {
    /// A sequence number beyond any stream's length.
    #[error("stream message {0} is beyond the longest possible stream")]
    TooLong(u64),
}

impl Reassembly {
    /// Takes one message published by `publisher` (its peer id bytes);
    /// returns the stream's parts in order once it is complete.
    pub fn push(
        &mut self,
        publisher: Vec<u8>,
        message: StreamMessage<ProposalPart>,
    ) -> Result<Option<Vec<ProposalPart>>, ReassemblyError> {
        if message.sequence >= MAX_STREAM_MESSAGES {
            return Err(ReassemblyError::TooLong(message.sequence));
        }
        let key = (publisher, message.stream_id.clone());
        if !self.streams.contains_key(&key) && self.streams.len() >= MAX_OPEN_STREAMS {
            self.drop_oldest();
        }
        self.opened += 1;
        let opened = self.opened;
        let stream = self
            .streams
            .entry(key.clone())
            .or_insert_with(|| OpenStream {
                opened,
                ..OpenStream::default()
            });
        match message.content {
            StreamContent::Data(part) => {
                stream.parts.insert(message.sequence, part);
            }
            StreamContent::Fin => stream.end = Some(message.sequence),
        }
        let complete = stream.end.is_some_and(|end| {
            stream.parts.len() as u64 == end && stream.parts.keys().next_back() < Some(&end)
        });
        if !complete {
            return Ok(None);
        }
        let stream = self.streams.remove(&key).expect("present");
        Ok(Some(stream.parts.into_values().collect()))
    }

    /// Streams still waiting for messages.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    fn drop_oldest(&mut self) {
        if let Some(key) = self
            .streams
            .iter()
            .min_by_key(|(_, s)| s.opened)
            .map(|(k, _)| k.clone())
        {
            self.streams.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn msg(id: u8, seq: u64, content: StreamContent<ProposalPart>) -> StreamMessage<ProposalPart> {
        StreamMessage::new(StreamId::new(Bytes::from(vec![id])), seq, content)
    }

    fn data(n: u8) -> StreamContent<ProposalPart> {
        StreamContent::Data(ProposalPart::Data(vec![n]))
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
        assert_eq!(r.push(p.clone(), msg(1, 0, data(0))).unwrap(), None);
        // Another publisher's stream with the same id stays separate.
        assert_eq!(r.push(b"other".to_vec(), msg(1, 1, data(9))).unwrap(), None);
        let parts = r.push(p, msg(1, 1, data(1))).unwrap().unwrap();
        assert_eq!(
            parts,
            vec![
                ProposalPart::Data(vec![0]),
                ProposalPart::Data(vec![1]),
                ProposalPart::Data(vec![2])
            ]
        );
        assert_eq!(r.open_streams(), 1);
    }

    #[test]
    fn hostile_streams_are_bounded() {
        let mut r = Reassembly::default();
        assert_eq!(
            r.push(b"p".to_vec(), msg(1, MAX_STREAM_MESSAGES, data(0))),
            Err(ReassemblyError::TooLong(MAX_STREAM_MESSAGES))
        );
        for i in 0..(MAX_OPEN_STREAMS + 10) {
            r.push(i.to_be_bytes().to_vec(), msg(1, 0, data(0)))
                .unwrap();
        }
        assert_eq!(r.open_streams(), MAX_OPEN_STREAMS);
    }
}
