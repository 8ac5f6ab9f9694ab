//! # timerhost-timers
//!
//! CIP-5 native timers as a pure state machine over [`timerhost_state`]'s
//! overlay: every rule lives in one findable place.
//!
//! | CIP-5 | module |
//! |---|---|
//! | §3.1 record, §3.2 store, per-actor and per-payer listing | [`store`], [`record`] |
//! | how the state root commits to every pending timer (one leaf per due bucket) | [`bucket`] |
//! | a batch of removals applied once | [`removal`] |
//! | the store's counters (pending timers, sequences) | [`counters`] |
//! | derived state checked against the root (a state-synced store, #44) | [`audit`] |
//! | a pending timer's proof of presence against the root (#48) | [`proof`] |
//! | the quote before scheduling (#17) | [`quote`] |
//! | §3.2 height index and the other chunked indexes | [`index`] |
//! | §3.2 FIFO due queues (height and time), carry-over, GC backlog | [`queue`] |
//! | §4.1–4.3 host calls and their constraints | [`host`] |
//! | §4.2 custom handler convention | [`handler`] |
//! | §5.1–5.4, §6.2–6.3, §6.5 end-of-block classification, pre-charge | [`delivery`] |
//! | one block's lane, fire quota, GC, enqueue and cells budgets | [`budgets`] |
//! | §5.4, §6.4 governance instructions; AIP-125 pause, resume, shutdown | [`governance`] |
//! | governance status, fee-payer revocation (CAD018) | [`control`] |
//! | event names and fields | [`events`] |
//! | every `t…`/`u…` key, and how a bad one is reported | [`keys`] |
//! | state watches: registration, matching written keys, waiting hits (#17) | [`watch`] |
//! | the expiry queue of time timers and watches (#17) | [`expiry`] |
//! | priority ordering: the Globalbox, scores and the comparator (#18) | [`globalbox`] |
//! | market ordering's fairness weight (#31) | [`fairness`] |
//! | the lane basefee as delivery and scheduling read it (#31) | [`lane`] |
//! | escrow-funded timers: the integer in actor storage that pays them (#19) | [`escrow`] |
//! | booked capacity: shares, prices, the booked timers of a block (#45) | [`bookings`] |
//! | retries of failed fires (#45) | [`retries`] |
//! | the dead-letter queue of timers whose retries ran out (#45) | [`dead_letters`] |
//! | its host calls: list, retry, drop (#45) | [`dead_letter_calls`] |
//! | deposits the protocol lends on a fee payer's behalf (retries, dead letters) | [`deposit`] |
//!
//! The chain crate calls [`delivery::deliver_time`] at the start of a block
//! and [`delivery::deliver`] at its end (one [`delivery::BlockBudgets`] for
//! both), executes the returned fires as deferred transactions, and reports
//! each outcome back through [`events::timer_fired`].

pub mod audit;
pub mod bookings;
pub mod bucket;
pub mod budgets;
pub mod control;
pub mod counters;
pub mod dead_letter_calls;
pub mod dead_letters;
pub mod delivery;
pub mod deposit;
pub mod error;
pub mod escrow;
pub mod events;
pub mod expiry;
pub mod fairness;
pub mod globalbox;
pub mod governance;
pub mod handler;
pub mod host;
pub mod index;
pub mod keys;
pub mod lane;
pub mod proof;
pub mod queue;
pub mod quote;
pub mod record;
pub mod removal;
pub mod retries;
pub mod store;
pub mod watch;

pub use delivery::{deliver, DeliveryPlan, DeliveryStats, Fire};
pub use error::{Result, TimerError};
pub use host::{HostCaller, Scheduled};
