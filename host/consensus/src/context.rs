//! [`TimerhostContext`]: the consensus context of a timerhost chain. Only
//! the type lives here, so that the proposal, vote and validator types can
//! name it without reaching the binding that names them back
//! ([`crate::context_impl`] says which types the engine runs on).

/// The consensus context of a timerhost chain.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerhostContext;
