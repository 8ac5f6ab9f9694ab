//! The borsh encoding of [`Timer`], written by hand so that the fields #45
//! added cost nothing to a timer that does not use them.
//!
//! The CIP-5 fields are encoded as a derive would. When a timer has a retry
//! policy or is booked, the top bit of its kind's tag (0, 1 or 2) is set
//! and a flags byte follows the kind, then each field its flags name (bit
//! 0: the [`RetryPolicy`]; bit 1: booked, no data); the escrow key comes
//! last as before. A timer without
//! them keeps its bytes, so every record hash — and every bucket digest and
//! state root built from one — is what it was. A later field takes the
//! next flag bit; a flag this build does not know is refused by name.

use std::io::{Error as IoError, ErrorKind as IoErrorKind, Read, Write};

use borsh::{BorshDeserialize, BorshSerialize};

use crate::retry::RetryPolicy;
use crate::timer::{Timer, TimerKind};

/// Set in the kind's tag when [`Extras`] follow it.
const EXTRAS_FOLLOW: u8 = 0x80;

/// Flag: a [`RetryPolicy`] follows.
const HAS_RETRY: u8 = 1;
/// Flag: the timer is booked.
const BOOKED: u8 = 2;

impl BorshSerialize for Timer {
    fn serialize<W: Write>(&self, w: &mut W) -> std::io::Result<()> {
        self.actor_address.serialize(w)?;
        self.height.serialize(w)?;
        self.payload.serialize(w)?;
        self.timer_id.serialize(w)?;
        self.handler.serialize(w)?;
        self.fee_payer.serialize(w)?;
        self.gas_limit_per_fire.serialize(w)?;
        self.expires_at.serialize(w)?;
        self.seq.serialize(w)?;
        self.deposit.serialize(w)?;
        self.bid.serialize(w)?;
        self.max_fee_per_cycle.serialize(w)?;
        let mut kind = borsh::to_vec(&self.kind)?;
        let flags =
            if self.retry.is_some() { HAS_RETRY } else { 0 } | if self.booked { BOOKED } else { 0 };
        if flags == 0 {
            w.write_all(&kind)?;
        } else {
            kind[0] |= EXTRAS_FOLLOW;
            w.write_all(&kind)?;
            flags.serialize(w)?;
            if let Some(retry) = &self.retry {
                retry.serialize(w)?;
            }
        }
        self.escrow_key.serialize(w)
    }
}

impl BorshDeserialize for Timer {
    fn deserialize_reader<R: Read>(r: &mut R) -> std::io::Result<Self> {
        let actor_address = BorshDeserialize::deserialize_reader(r)?;
        let height = u64::deserialize_reader(r)?;
        let payload = BorshDeserialize::deserialize_reader(r)?;
        let timer_id = BorshDeserialize::deserialize_reader(r)?;
        let handler = BorshDeserialize::deserialize_reader(r)?;
        let fee_payer = BorshDeserialize::deserialize_reader(r)?;
        let gas_limit_per_fire = u64::deserialize_reader(r)?;
        let expires_at = u64::deserialize_reader(r)?;
        let seq = u64::deserialize_reader(r)?;
        let deposit = u128::deserialize_reader(r)?;
        let bid = u64::deserialize_reader(r)?;
        let max_fee_per_cycle = u64::deserialize_reader(r)?;
        let tag = u8::deserialize_reader(r)?;
        let untagged = [tag & !EXTRAS_FOLLOW];
        let kind = TimerKind::deserialize_reader(&mut (&untagged[..]).chain(&mut *r))?;
        let mut retry = None;
        let mut booked = false;
        if tag & EXTRAS_FOLLOW != 0 {
            let flags = u8::deserialize_reader(r)?;
            // One timer, one encoding: no empty flags, no unknown ones.
            if flags == 0 || flags & !(HAS_RETRY | BOOKED) != 0 {
                return Err(IoError::new(
                    IoErrorKind::InvalidData,
                    format!(
                        "timer extras flags {flags:#04x} (this build knows 0x01: a retry policy, 0x02: booked)"
                    ),
                ));
            }
            if flags & HAS_RETRY != 0 {
                retry = Some(RetryPolicy::deserialize_reader(r)?);
            }
            booked = flags & BOOKED != 0;
        }
        Ok(Timer {
            actor_address,
            height,
            payload,
            timer_id,
            handler,
            fee_payer,
            gas_limit_per_fire,
            expires_at,
            seq,
            deposit,
            bid,
            max_fee_per_cycle,
            kind,
            escrow_key: BorshDeserialize::deserialize_reader(r)?,
            retry,
            booked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::{Address, Hash};
    use crate::timer::{Watch, WatchKey};

    /// The derive this encoding replaced: what every timer was encoded as
    /// before #45.
    #[derive(BorshSerialize)]
    struct BeforeRetries {
        actor_address: Address,
        height: u64,
        payload: Vec<u8>,
        timer_id: Hash,
        handler: String,
        fee_payer: Address,
        gas_limit_per_fire: u64,
        expires_at: u64,
        seq: u64,
        deposit: u128,
        bid: u64,
        max_fee_per_cycle: u64,
        kind: TimerKind,
        escrow_key: Option<Vec<u8>>,
    }

    fn timer(kind: TimerKind) -> Timer {
        Timer {
            actor_address: Address([1; 20]),
            height: 7,
            payload: vec![1, 2, 3],
            timer_id: Hash([2; 32]),
            handler: "handle_timer".into(),
            fee_payer: Address([3; 20]),
            gas_limit_per_fire: 10,
            expires_at: 9,
            seq: 4,
            deposit: 123,
            bid: 5,
            max_fee_per_cycle: 6,
            kind,
            escrow_key: Some(b"e".to_vec()),
            retry: None,
            booked: false,
        }
    }

    fn kinds() -> Vec<TimerKind> {
        vec![
            TimerKind::Height,
            TimerKind::Time { timestamp_ms: 99 },
            TimerKind::State(Watch {
                actor: Address([4; 20]),
                keys: vec![WatchKey::parse("price*")],
                fires: 2,
            }),
        ]
    }

    #[test]
    fn a_timer_without_retries_or_booking_keeps_its_old_bytes() {
        for kind in kinds() {
            let t = timer(kind);
            let old = borsh::to_vec(&BeforeRetries {
                actor_address: t.actor_address,
                height: t.height,
                payload: t.payload.clone(),
                timer_id: t.timer_id,
                handler: t.handler.clone(),
                fee_payer: t.fee_payer,
                gas_limit_per_fire: t.gas_limit_per_fire,
                expires_at: t.expires_at,
                seq: t.seq,
                deposit: t.deposit,
                bid: t.bid,
                max_fee_per_cycle: t.max_fee_per_cycle,
                kind: t.kind.clone(),
                escrow_key: t.escrow_key.clone(),
            })
            .unwrap();
            assert_eq!(borsh::to_vec(&t).unwrap(), old);
            assert_eq!(borsh::from_slice::<Timer>(&old).unwrap(), t);
        }
    }

    #[test]
    fn retries_and_bookings_round_trip_for_every_kind() {
        for kind in kinds() {
            for (retry, booked) in [(true, false), (false, true), (true, true)] {
                let mut t = timer(kind.clone());
                t.retry = retry.then_some(RetryPolicy {
                    retries: 3,
                    backoff: 2,
                    failures: 1,
                    consent_seq: 1,
                });
                t.booked = booked;
                let bytes = borsh::to_vec(&(t.clone(), 9u8)).unwrap();
                assert_eq!(borsh::from_slice::<(Timer, u8)>(&bytes).unwrap(), (t, 9));
            }
        }
    }
}
