//! The natives actor code may call, and what each costs: an allow-list with
//! prices.
//!
//! RustPython's native surface — every method of every built-in type, the
//! dunders reachable by direct calls, the class and static methods — is far
//! larger than any list of "expensive" methods, so the VM does not enumerate
//! what to charge; it enumerates what may run. [`table`] holds one rule per
//! group of natives with its [`price::Price`], computed from the arguments
//! before the native runs (result sizes checked against the memory budget
//! then); [`install`] applies it to every built-in type of the interpreter,
//! so a native that no rule names is refused with an error that names it.
//! [`inventory`] finds the types and classifies their namespaces.
//!
//! Layers: `inventory` and `table` import nothing from each other; `price`
//! evaluates a rule; `install` uses all three.

#[cfg(test)]
mod docs;
pub(crate) mod install;
pub(crate) mod inventory;
pub(crate) mod price;
pub(crate) mod table;
pub mod workloads;

pub(crate) use install::install;
