//! A timer's quote: what `timer_quote`, `th_quoteTimer` and `timerhost
//! quote` are asked ([`QuoteRequest`]) and answer ([`TimerQuote`]).

use serde::{Deserialize, Serialize};

use crate::lane::SuggestedFees;

/// What `timer_quote` is asked about: a height (default: the next block)
/// or a time, and a gas limit per fire (default: `max_cycles_per_fire`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuoteRequest {
    /// The height of a height timer.
    pub height: Option<u64>,
    /// The time (unix ms) of a time timer.
    pub timestamp_ms: Option<u64>,
    /// Cycles per fire.
    pub gas_limit: Option<u64>,
    /// The priority fee per cycle the timer would offer (`bid=` /
    /// `max_priority_fee_per_cycle=`), as scheduling defaults it.
    pub bid: Option<u64>,
    /// Its lane fee cap per cycle, as scheduling defaults it.
    pub max_fee_per_cycle: Option<u64>,
    /// `retries=` of its retry policy (#45), at most `max_retries`.
    pub retries: Option<u32>,
    /// Quote a booking of that height or time (#45, `book=True`).
    pub book: bool,
}

/// What a timer would cost and whether it would fire on time: the answer to
/// `pvm_host.timer_quote`, RPC `th_quoteTimer`, `timerhost quote` and the
/// Python package's `chain.quote_timer` (#17, after Hedera's
/// `hasScheduleCapacity` and Massa's quote).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimerQuote {
    /// The height quoted (for a time quote: the next block's).
    pub height: u64,
    /// The time slot quoted (unix ms), for a time timer's quote.
    #[serde(default)]
    pub timestamp_ms: Option<u64>,
    /// The gas limit per fire quoted.
    pub gas_limit: u64,
    /// What one fire would pre-charge its fee payer at today's basefees
    /// (`(gas_limit + TIMER_FIRE_BASE_CYCLES) × cycle_basefee +
    /// max_cells_per_fire × cell_basefee`, plus `gas_limit ×` the bid —
    /// under market ordering, `gas_limit × max_fee_per_cycle`).
    pub max_cost: u128,
    /// The lane basefee of the current block (#31).
    pub lane_basefee: u64,
    /// The fee caps the quote priced (given or defaulted).
    pub max_fee_per_cycle: u64,
    /// The priority fee per cycle the quote priced (given or defaulted).
    pub max_priority_fee_per_cycle: u64,
    /// Fee caps by urgency, from the lane basefee and the previous block's
    /// median tip (CIP-1 v3 Part III's hints).
    pub suggested_fees: SuggestedFees,
    /// The deposit of a timer with an empty payload and the default handler
    /// (each payload or handler byte adds `deposit_per_byte`).
    pub deposit: u128,
    /// `TimerConfig.lane_cycles_per_block`.
    pub lane_budget: u64,
    /// Lane cycles already reserved by timers queued for that height or
    /// time slot (their `gas_limit_per_fire + TIMER_FIRE_BASE_CYCLES`);
    /// timers carried over from earlier blocks are not counted.
    pub reserved: u64,
    /// Timers queued for that height or time slot.
    pub queued: u64,
    /// Would one more such timer fire at that height without carry-over
    /// (lane and `max_fires_per_block`), counting the timers queued there?
    pub fits: bool,
    /// Fires the retry policy can cost: the first and every retry (#45).
    #[serde(default = "one")]
    pub max_attempts: u64,
    /// The worst case of the policy: every attempt at `max_cost`
    /// (`max_attempts × max_cost`, at today's basefees; each attempt is
    /// pre-charged and refunded on its own).
    #[serde(default)]
    pub worst_case_cost: u128,
    /// With `book`: the booking, if it could be made now.
    #[serde(default)]
    pub booking: Option<BookingQuote>,
}

/// The answer to "can I book it, and at what price" (#45).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookingQuote {
    /// Would a booking be accepted now?
    pub bookable: bool,
    /// Its fee (paid at booking, burned, not refunded on cancel), when
    /// bookable.
    pub booking_fee: Option<u128>,
    /// Why not, when not bookable.
    pub reason: Option<String>,
    /// Lane cycles and fires already booked in that block (or second).
    pub booked_cycles: u64,
    /// See `booked_cycles`.
    pub booked_fires: u64,
    /// The bookable share of a block: cycles and fires.
    pub share_cycles: u64,
    /// See `share_cycles`.
    pub share_fires: u64,
    /// The nearest heights from the one asked with room for this booking
    /// (a height quote only; at most 5 within 256 blocks).
    pub free_heights: Vec<u64>,
}

impl BookingQuote {
    /// As `pvm_host.timer_quote(book=True)["booking"]` shows it.
    pub fn to_value(&self) -> crate::Value {
        use crate::Value;
        Value::dict_from([
            (Value::str("bookable"), Value::Bool(self.bookable)),
            (
                Value::str("booking_fee"),
                self.booking_fee.map_or(Value::None, Value::int),
            ),
            (
                Value::str("reason"),
                self.reason.as_deref().map_or(Value::None, Value::str),
            ),
            (Value::str("booked_cycles"), Value::int(self.booked_cycles)),
            (Value::str("booked_fires"), Value::int(self.booked_fires)),
            (Value::str("share_cycles"), Value::int(self.share_cycles)),
            (Value::str("share_fires"), Value::int(self.share_fires)),
            (
                Value::str("free_heights"),
                Value::List(self.free_heights.iter().map(|h| Value::int(*h)).collect()),
            ),
        ])
        .expect("str keys are hashable")
    }
}

fn one() -> u64 {
    1
}

impl TimerQuote {
    /// The quote as the dict `pvm_host.timer_quote` and the Python package
    /// return (`height`, `gas_limit`, `max_cost`, `deposit`, `lane_budget`,
    /// `reserved`, `queued`, `fits`).
    pub fn to_value(&self) -> crate::Value {
        use crate::Value;
        Value::dict_from([
            (Value::str("height"), Value::int(self.height)),
            (
                Value::str("timestamp_ms"),
                self.timestamp_ms.map_or(Value::None, Value::int),
            ),
            (Value::str("gas_limit"), Value::int(self.gas_limit)),
            (Value::str("max_cost"), Value::int(self.max_cost)),
            (Value::str("deposit"), Value::int(self.deposit)),
            (Value::str("lane_budget"), Value::int(self.lane_budget)),
            (Value::str("reserved"), Value::int(self.reserved)),
            (Value::str("queued"), Value::int(self.queued)),
            (Value::str("fits"), Value::Bool(self.fits)),
            (Value::str("max_attempts"), Value::int(self.max_attempts)),
            (
                Value::str("worst_case_cost"),
                Value::int(self.worst_case_cost),
            ),
            (Value::str("lane_basefee"), Value::int(self.lane_basefee)),
            (
                Value::str("max_fee_per_cycle"),
                Value::int(self.max_fee_per_cycle),
            ),
            (
                Value::str("max_priority_fee_per_cycle"),
                Value::int(self.max_priority_fee_per_cycle),
            ),
            (Value::str("suggested_fees"), self.suggested_fees.to_value()),
            (
                Value::str("bookable"),
                self.booking
                    .as_ref()
                    .map_or(Value::None, |b| Value::Bool(b.bookable)),
            ),
            (
                Value::str("booking_fee"),
                self.booking
                    .as_ref()
                    .and_then(|b| b.booking_fee)
                    .map_or(Value::None, Value::int),
            ),
            (
                Value::str("booking"),
                self.booking
                    .as_ref()
                    .map_or(Value::None, BookingQuote::to_value),
            ),
        ])
        .expect("str keys are hashable")
    }
}
