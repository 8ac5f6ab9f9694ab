//! The borsh encoding of [`TimerConfig`], written by hand so that adding
//! governed fields does not change a byte of what was encoded before them.
//!
//! A config is stored in consensus state, carried by `UpdateTimerConfig`
//! transactions and proposals, and hashed into state roots and transaction
//! hashes. The fields up to `lane_reservation_percent` are encoded as a
//! derive would. Later fields come in groups, each written only when it
//! differs from a chain that predates it: the top bit of
//! `lane_reservation_percent` (a percentage, ≤ 100, whose top bit no valid
//! config ever set) says a flags byte follows, and each flag bit a group —
//! bit 0 the retry fields of #45 ([`TimerConfig::is_pre_retry`]), bit 1 its
//! booking fields ([`TimerConfig::is_pre_booking`]). The
//! encoding stays self-delimiting wherever a config sits inside a larger
//! value, and a flag this build does not know is refused by name.

use std::io::{Error as IoError, ErrorKind as IoErrorKind, Read, Write};

use borsh::{BorshDeserialize, BorshSerialize};

use crate::timer_config::TimerConfig;

/// Set in the encoded `lane_reservation_percent` when a flags byte follows.
const EXTENSION_FOLLOWS: u64 = 1 << 63;

/// Flag: the retry group follows.
const HAS_RETRY_GROUP: u8 = 1;
/// Flag: the booking group follows (after the retry group, if both).
const HAS_BOOKING_GROUP: u8 = 2;
/// Every flag this build knows.
const KNOWN_FLAGS: u8 = HAS_RETRY_GROUP | HAS_BOOKING_GROUP;

/// The booking fields (#45), in their encoded order.
#[derive(BorshSerialize, BorshDeserialize)]
struct BookingGroup {
    bookable_lane_percent: u64,
    max_booking_blocks: u64,
}

/// The retry fields (#45), in their encoded order.
#[derive(BorshSerialize, BorshDeserialize)]
struct RetryGroup {
    max_retries: u32,
    dead_letter_ttl_blocks: u64,
    max_dead_letters_per_actor: u32,
}

impl BorshSerialize for TimerConfig {
    fn serialize<W: Write>(&self, w: &mut W) -> std::io::Result<()> {
        self.max_ttl_blocks.serialize(w)?;
        self.max_cycles_per_fire.serialize(w)?;
        self.max_cells_per_fire.serialize(w)?;
        self.max_timers_per_actor.serialize(w)?;
        self.gc_cycles_per_block.serialize(w)?;
        self.lane_cycles_per_block.serialize(w)?;
        self.max_fires_per_block.serialize(w)?;
        self.deposit_per_byte.serialize(w)?;
        self.max_watch_keys.serialize(w)?;
        self.max_watch_matches_per_block.serialize(w)?;
        self.max_bid.serialize(w)?;
        self.ordering.serialize(w)?;
        self.w_age.serialize(w)?;
        self.w_bid.serialize(w)?;
        self.max_fires_per_target.serialize(w)?;
        self.lane_target_percent.serialize(w)?;
        self.lane_basefee_change_denominator.serialize(w)?;
        self.min_lane_basefee.serialize(w)?;
        self.fairness_window_blocks.serialize(w)?;
        let flags = if self.is_pre_retry() {
            0
        } else {
            HAS_RETRY_GROUP
        } | if self.is_pre_booking() {
            0
        } else {
            HAS_BOOKING_GROUP
        };
        if flags == 0 {
            return self.lane_reservation_percent.serialize(w);
        }
        // An unvalidated config could hold a percentage with the top bit
        // set; it would read back as another config, so it is refused here.
        if self.lane_reservation_percent & EXTENSION_FOLLOWS != 0 {
            return Err(IoError::new(
                IoErrorKind::InvalidInput,
                "lane_reservation_percent is not a percentage",
            ));
        }
        (self.lane_reservation_percent | EXTENSION_FOLLOWS).serialize(w)?;
        flags.serialize(w)?;
        if flags & HAS_RETRY_GROUP != 0 {
            RetryGroup {
                max_retries: self.max_retries,
                dead_letter_ttl_blocks: self.dead_letter_ttl_blocks,
                max_dead_letters_per_actor: self.max_dead_letters_per_actor,
            }
            .serialize(w)?;
        }
        if flags & HAS_BOOKING_GROUP != 0 {
            BookingGroup {
                bookable_lane_percent: self.bookable_lane_percent,
                max_booking_blocks: self.max_booking_blocks,
            }
            .serialize(w)?;
        }
        Ok(())
    }
}

impl BorshDeserialize for TimerConfig {
    fn deserialize_reader<R: Read>(r: &mut R) -> std::io::Result<Self> {
        let mut config = TimerConfig {
            max_ttl_blocks: u64::deserialize_reader(r)?,
            max_cycles_per_fire: u64::deserialize_reader(r)?,
            max_cells_per_fire: u64::deserialize_reader(r)?,
            max_timers_per_actor: u32::deserialize_reader(r)?,
            gc_cycles_per_block: u64::deserialize_reader(r)?,
            lane_cycles_per_block: u64::deserialize_reader(r)?,
            max_fires_per_block: u64::deserialize_reader(r)?,
            deposit_per_byte: u128::deserialize_reader(r)?,
            max_watch_keys: u32::deserialize_reader(r)?,
            max_watch_matches_per_block: u64::deserialize_reader(r)?,
            max_bid: u64::deserialize_reader(r)?,
            ordering: BorshDeserialize::deserialize_reader(r)?,
            w_age: u64::deserialize_reader(r)?,
            w_bid: u64::deserialize_reader(r)?,
            max_fires_per_target: u64::deserialize_reader(r)?,
            lane_target_percent: u64::deserialize_reader(r)?,
            lane_basefee_change_denominator: u64::deserialize_reader(r)?,
            min_lane_basefee: u64::deserialize_reader(r)?,
            fairness_window_blocks: u64::deserialize_reader(r)?,
            lane_reservation_percent: u64::deserialize_reader(r)?,
            ..TimerConfig::default()
        }
        .pre_45();
        if config.lane_reservation_percent & EXTENSION_FOLLOWS != 0 {
            config.lane_reservation_percent &= !EXTENSION_FOLLOWS;
            let flags = u8::deserialize_reader(r)?;
            if flags == 0 || flags & !KNOWN_FLAGS != 0 {
                return Err(IoError::new(
                    IoErrorKind::InvalidData,
                    format!(
                        "timer config flags {flags:#04x} (this build knows 0x01: the retry fields, 0x02: the booking fields)"
                    ),
                ));
            }
            if flags & HAS_RETRY_GROUP != 0 {
                let group = RetryGroup::deserialize_reader(r)?;
                config.max_retries = group.max_retries;
                config.dead_letter_ttl_blocks = group.dead_letter_ttl_blocks;
                config.max_dead_letters_per_actor = group.max_dead_letters_per_actor;
                // One config, one encoding: a group holding the pre-#45
                // values would be a second spelling of a config without it.
                if config.is_pre_retry() {
                    return Err(IoError::new(
                        IoErrorKind::InvalidData,
                        "timer config carries retry fields that hold their pre-#45 values",
                    ));
                }
            }
            if flags & HAS_BOOKING_GROUP != 0 {
                let group = BookingGroup::deserialize_reader(r)?;
                config.bookable_lane_percent = group.bookable_lane_percent;
                config.max_booking_blocks = group.max_booking_blocks;
                if config.is_pre_booking() {
                    return Err(IoError::new(
                        IoErrorKind::InvalidData,
                        "timer config carries booking fields that hold their pre-#45 values",
                    ));
                }
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timer_config::TimerOrdering;

    /// The derive this encoding replaced, field for field: what every
    /// config was encoded as before #45.
    #[derive(BorshSerialize)]
    struct BeforeRetries {
        max_ttl_blocks: u64,
        max_cycles_per_fire: u64,
        max_cells_per_fire: u64,
        max_timers_per_actor: u32,
        gc_cycles_per_block: u64,
        lane_cycles_per_block: u64,
        max_fires_per_block: u64,
        deposit_per_byte: u128,
        max_watch_keys: u32,
        max_watch_matches_per_block: u64,
        max_bid: u64,
        ordering: TimerOrdering,
        w_age: u64,
        w_bid: u64,
        max_fires_per_target: u64,
        lane_target_percent: u64,
        lane_basefee_change_denominator: u64,
        min_lane_basefee: u64,
        fairness_window_blocks: u64,
        lane_reservation_percent: u64,
    }

    fn before(c: &TimerConfig) -> Vec<u8> {
        borsh::to_vec(&BeforeRetries {
            max_ttl_blocks: c.max_ttl_blocks,
            max_cycles_per_fire: c.max_cycles_per_fire,
            max_cells_per_fire: c.max_cells_per_fire,
            max_timers_per_actor: c.max_timers_per_actor,
            gc_cycles_per_block: c.gc_cycles_per_block,
            lane_cycles_per_block: c.lane_cycles_per_block,
            max_fires_per_block: c.max_fires_per_block,
            deposit_per_byte: c.deposit_per_byte,
            max_watch_keys: c.max_watch_keys,
            max_watch_matches_per_block: c.max_watch_matches_per_block,
            max_bid: c.max_bid,
            ordering: c.ordering,
            w_age: c.w_age,
            w_bid: c.w_bid,
            max_fires_per_target: c.max_fires_per_target,
            lane_target_percent: c.lane_target_percent,
            lane_basefee_change_denominator: c.lane_basefee_change_denominator,
            min_lane_basefee: c.min_lane_basefee,
            fairness_window_blocks: c.fairness_window_blocks,
            lane_reservation_percent: c.lane_reservation_percent,
        })
        .unwrap()
    }

    #[test]
    fn a_config_without_retries_or_bookings_keeps_its_old_bytes() {
        let old = TimerConfig {
            ordering: TimerOrdering::Market,
            max_bid: 77,
            ..TimerConfig::default()
        }
        .pre_45();
        let bytes = borsh::to_vec(&old).unwrap();
        assert_eq!(bytes, before(&old));
        assert_eq!(borsh::from_slice::<TimerConfig>(&bytes).unwrap(), old);
    }

    #[test]
    fn the_new_fields_round_trip_inside_a_larger_value() {
        for config in [
            TimerConfig {
                max_retries: 5,
                dead_letter_ttl_blocks: 99,
                ..TimerConfig::default()
            },
            TimerConfig::default().pre_retry(),
            TimerConfig::default().pre_booking(),
        ] {
            // Followed by another field, as inside a proposal.
            let bytes = borsh::to_vec(&(config.clone(), 42u64)).unwrap();
            assert_eq!(
                borsh::from_slice::<(TimerConfig, u64)>(&bytes).unwrap(),
                (config, 42)
            );
        }
    }

    #[test]
    fn a_second_spelling_of_a_pre_retry_config_is_refused() {
        let old = TimerConfig::default().pre_45();
        let mut bytes = before(&old);
        let n = bytes.len();
        bytes[n - 1] |= 0x80;
        bytes.push(HAS_RETRY_GROUP);
        bytes.extend(
            borsh::to_vec(&RetryGroup {
                max_retries: 0,
                dead_letter_ttl_blocks: old.dead_letter_ttl_blocks,
                max_dead_letters_per_actor: old.max_dead_letters_per_actor,
            })
            .unwrap(),
        );
        assert!(borsh::from_slice::<TimerConfig>(&bytes).is_err());
        // An unknown group is named.
        let mut unknown = before(&old);
        unknown[n - 1] |= 0x80;
        unknown.push(0x04);
        let err = borsh::from_slice::<TimerConfig>(&unknown).unwrap_err();
        assert!(err.to_string().contains("0x04"), "{err}");
    }
}
