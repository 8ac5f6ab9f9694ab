//! Escrow-funded timers (#19): a timer scheduled with `escrow=KEY` is paid
//! for by the integer at `KEY` in its actor's own storage, not by the
//! actor's balance as a whole.
//!
//! The coins never move: they stay in the actor's balance, which still pays
//! every deposit and fire as for any timer. The integer is the share of that
//! balance the timer may use, kept exact by the protocol — the deposit is
//! subtracted from it at scheduling and added back when the timer leaves,
//! each fire must be covered by it, and the fire's settled cost is
//! subtracted once it is known. An actor that holds money for many parties
//! (ARC-21's cron registry, one escrow per job) can then show, after every
//! block, that its balance is exactly the sum of its escrows — which it
//! could not do itself, since a fire's cost is only known after its handler
//! returns.
//!
//! The integer is the actor's ordinary storage value (`self.storage[KEY]`),
//! so the actor reads it, tops it up and pays it out like any other. A key
//! holding anything but a non-negative int counts as 0, and the protocol
//! leaves it untouched.

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

/// Charges a settled fire: its cost is subtracted, at most what the escrow
/// holds (the fire was admitted only if the escrow covered its maximum, so
/// less means the handler itself lowered it).
pub fn settle(state: &mut Overlay<'_>, actor: &Address, key: &[u8], cost: u128) -> Result<()> {
    if let Some(held) = read(state, actor, key)? {
        write(state, actor, key, held.saturating_sub(cost));
    }
    Ok(())
}

/// `release_escrow(to)` after the fire settled: what is left is paid from
/// the actor's balance to `to`, and the key is deleted. Returns the amount.
pub fn release(state: &mut Overlay<'_>, actor: &Address, key: &[u8], to: &Address) -> Result<u128> {
    let held = available(state, actor, key)?;
    state.delete(keys::storage(actor, key));
    if let Debit::Insufficient { available } = accounts::transfer(state, actor, to, held)? {
        return Err(timerhost_state::StorageError::Corrupt {
            what: "escrow",
            key: actor.to_hex(),
            reason: format!("escrow {held} exceeds the actor's balance {available}"),
        });
    }
    Ok(held)
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
        settle(&mut state, &ACTOR, KEY, 140).unwrap();
        assert_eq!(available(&state, &ACTOR, KEY).unwrap(), 700);
        let to = Address([9; 20]);
        assert_eq!(release(&mut state, &ACTOR, KEY, &to).unwrap(), 700);
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
}
