//! Escrow-funded timers (#19): a timer scheduled with `escrow=KEY` is paid
//! for by the integer at `KEY` in its actor's own storage, not by the
//! actor's balance as a whole.
//!
//! The coins never move: they stay in the actor's balance, which still pays
//! every deposit and fire as for any timer. The integer is the share of that
//! balance the timer may use, kept exact by the protocol at every moment:
//!
//! - the deposit is subtracted from it at scheduling and added back when the
//!   timer leaves;
//! - a fire is admitted only if the escrow covers its maximum cost, and that
//!   pre-charge is **held out of the integer at admission** ([`hold`]), just
//!   as it leaves the balance: while the fire waits and while its handler
//!   runs, the integer says what is still free to spend;
//! - once the cost is known, what the fire did not use comes back
//!   ([`settle`]), even if the handler deleted the key meanwhile.
//!
//! So an actor that holds money for many parties (ARC-21's cron registry,
//! one escrow per job) has a balance exactly the sum of its escrows after
//! every block, whatever the fires in between do — a job cancelled while its
//! run waits in the same block refunds only what that run cannot use (#28).
//!
//! The integer is the actor's ordinary storage value (`self.storage[KEY]`),
//! so the actor reads it, tops it up and pays it out like any other. A key
//! holding anything but a non-negative int counts as 0, and the protocol
//! leaves it untouched. Nothing the actor writes there can fail a block:
//! [`release`] pays at most what the escrow says *and* the actor holds, and
//! a shortfall is the fire's own failure ([`release_shortfall`]).

use timerhost_state::accounts::{self, Debit};
use timerhost_state::{Overlay, StateRead};
use timerhost_types::keys;
use timerhost_types::{Address, Value};

use crate::error::Result;

/// The escrow at `key` of `actor`: `None` when the key holds something
/// other than a non-negative int; 0 when it is absent.
pub fn read(
    state: &(impl StateRead + ?Sized),
    actor: &Address,
    key: &[u8],
) -> Result<Option<u128>> {
    let Some(bytes) = state.get(&keys::storage(actor, key))? else {
        return Ok(Some(0));
    };
    Ok(Value::from_bytes(&bytes).ok().and_then(|v| v.as_u128()))
}

/// What the escrow can pay: its amount, 0 when it is not an int.
pub fn available(state: &(impl StateRead + ?Sized), actor: &Address, key: &[u8]) -> Result<u128> {
    Ok(read(state, actor, key)?.unwrap_or(0))
}

fn write(state: &mut Overlay<'_>, actor: &Address, key: &[u8], amount: u128) {
    state.put(keys::storage(actor, key), Value::int(amount).to_bytes());
}

/// Adds `amount` (a deposit coming back) to the escrow; a key holding
/// something else is left alone (the coins are in the balance either way).
pub fn credit(state: &mut Overlay<'_>, actor: &Address, key: &[u8], amount: u128) -> Result<()> {
    if amount == 0 {
        return Ok(());
    }
    if let Some(held) = read(state, actor, key)? {
        write(state, actor, key, held.saturating_add(amount));
    }
    Ok(())
}

/// Subtracts `amount` (a deposit, a fire's settled cost): `Insufficient`
/// (nothing written) when the escrow holds less.
pub fn debit(state: &mut Overlay<'_>, actor: &Address, key: &[u8], amount: u128) -> Result<Debit> {
    let held = available(state, actor, key)?;
    if held < amount {
        return Ok(Debit::Insufficient { available: held });
    }
    if amount > 0 {
        write(state, actor, key, held - amount);
    }
    Ok(Debit::Done)
}

/// Holds an admitted fire's pre-charge (`max_cost`) out of its escrow. The
/// walk admits a fire only when the escrow covers it, so `Insufficient`
/// (nothing written) means the caller skipped that check.
pub fn hold(state: &mut Overlay<'_>, actor: &Address, key: &[u8], max_cost: u128) -> Result<Debit> {
    debit(state, actor, key, max_cost)
}

/// Settles a fire: what it did not use of its held pre-charge (`refund`)
/// comes back to the escrow. A key the handler deleted is written again
/// with the refund (the coins are in the balance; the integer must say so);
/// a key it filled with something else is left alone.
pub fn settle(state: &mut Overlay<'_>, actor: &Address, key: &[u8], refund: u128) -> Result<()> {
    credit(state, actor, key, refund)
}

/// Why `release_escrow` cannot pay out the escrow at `key` now: the
/// integer exceeds the actor's balance (the actor wrote a larger number
/// there, or paid its balance away in the handler). `None` when it can.
///
/// Called before the fire's own settlement: the refund still to come adds
/// the same amount to both sides, so the comparison holds after it too.
pub fn release_shortfall(
    state: &(impl StateRead + ?Sized),
    actor: &Address,
    key: &[u8],
) -> Result<Option<String>> {
    let held = available(state, actor, key)?;
    let balance = accounts::load(state, actor)?.balance;
    Ok((held > balance).then(|| {
        format!(
            "release_escrow: the escrow at storage key {:?} holds {held}, more than the actor's balance {balance}; nothing was released",
            String::from_utf8_lossy(key)
        )
    }))
}

/// `release_escrow(to)` after the fire settled: what is left is paid from
/// the actor's balance to `to`, and the key is deleted. Returns the amount.
/// The caller checked [`release_shortfall`] before the settlement, so the
/// balance covers it; `Insufficient` is returned untouched (nothing moved)
/// for it to treat as the invariant violation it would be.
pub fn release(
    state: &mut Overlay<'_>,
    actor: &Address,
    key: &[u8],
    to: &Address,
) -> Result<std::result::Result<u128, Debit>> {
    let held = available(state, actor, key)?;
    match accounts::transfer(state, actor, to, held)? {
        Debit::Done => {
            state.delete(keys::storage(actor, key));
            Ok(Ok(held))
        }
        short => Ok(Err(short)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timerhost_state::EmptyState;

    const ACTOR: Address = Address([6; 20]);
    const KEY: &[u8] = b"escrow:1";

    #[test]
    fn credit_debit_settle_and_release_keep_the_integer_exact() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        assert_eq!(read(&state, &ACTOR, KEY).unwrap(), Some(0));
        accounts::credit(&mut state, &ACTOR, 1_000).unwrap();
        write(&mut state, &ACTOR, KEY, 900);
        assert_eq!(
            debit(&mut state, &ACTOR, KEY, 901).unwrap(),
            Debit::Insufficient { available: 900 }
        );
        assert_eq!(debit(&mut state, &ACTOR, KEY, 100).unwrap(), Debit::Done);
        credit(&mut state, &ACTOR, KEY, 40).unwrap();
        // A fire pre-charged 300 used 140: 160 comes back.
        assert_eq!(hold(&mut state, &ACTOR, KEY, 300).unwrap(), Debit::Done);
        settle(&mut state, &ACTOR, KEY, 160).unwrap();
        assert_eq!(available(&state, &ACTOR, KEY).unwrap(), 700);
        assert_eq!(release_shortfall(&state, &ACTOR, KEY).unwrap(), None);
        let to = Address([9; 20]);
        assert_eq!(release(&mut state, &ACTOR, KEY, &to).unwrap(), Ok(700));
        assert_eq!(accounts::load(&state, &to).unwrap().balance, 700);
        assert_eq!(accounts::load(&state, &ACTOR).unwrap().balance, 300);
        assert_eq!(state.get(&keys::storage(&ACTOR, KEY)).unwrap(), None);
    }

    #[test]
    fn a_key_holding_something_else_counts_as_nothing_and_is_left_alone() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        let text = Value::str("not money").to_bytes();
        state.put(keys::storage(&ACTOR, KEY), text.clone());
        assert_eq!(available(&state, &ACTOR, KEY).unwrap(), 0);
        credit(&mut state, &ACTOR, KEY, 5).unwrap();
        settle(&mut state, &ACTOR, KEY, 5).unwrap();
        assert_eq!(state.get(&keys::storage(&ACTOR, KEY)).unwrap(), Some(text));
    }

    /// #28 bug 1: an escrow larger than the balance is a shortfall to report
    /// (the fire fails), never a storage error; nothing moves.
    #[test]
    fn an_escrow_above_the_balance_is_a_shortfall_not_an_error() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        accounts::credit(&mut state, &ACTOR, 1_000).unwrap();
        write(&mut state, &ACTOR, KEY, 10u128.pow(30));
        let why = release_shortfall(&state, &ACTOR, KEY).unwrap().unwrap();
        assert!(why.contains("more than the actor's balance 1000"), "{why}");
        let to = Address([9; 20]);
        assert_eq!(
            release(&mut state, &ACTOR, KEY, &to).unwrap(),
            Err(Debit::Insufficient { available: 1_000 })
        );
        assert_eq!(accounts::load(&state, &ACTOR).unwrap().balance, 1_000);
        assert_eq!(available(&state, &ACTOR, KEY).unwrap(), 10u128.pow(30));
    }

    /// #28 bug 2: a deleted key gets the refund of the fire that was in
    /// flight when it went, so the integer still says where the coins are.
    #[test]
    fn a_refund_to_a_deleted_escrow_writes_it_again() {
        let empty = EmptyState;
        let mut state = Overlay::new(&empty);
        write(&mut state, &ACTOR, KEY, 500);
        assert_eq!(hold(&mut state, &ACTOR, KEY, 300).unwrap(), Debit::Done);
        assert_eq!(available(&state, &ACTOR, KEY).unwrap(), 200);
        state.delete(keys::storage(&ACTOR, KEY));
        settle(&mut state, &ACTOR, KEY, 120).unwrap();
        assert_eq!(read(&state, &ACTOR, KEY).unwrap(), Some(120));
    }
}
