//! **Host API**: what an actor calls to reach the chain, and the state of
//! the execution those calls act on — the [`host::Host`] trait the chain
//! implements, the execution in progress ([`exec`]: its call frames,
//! events, block and the borrowed host), the `pvm_host` module
//! ([`pvm_host`], its timer calls in [`timer_natives`]), nested calls ([`call_native`]), `self.storage`
//! ([`storage_natives`]), argument parsing ([`args`]), the value model
//! ([`convert`]) and the native library modules (`hashing`, `base64`,
//! `math`, `json`: [`helpers`]).
//!
//! Entry points: [`host::Host`], [`exec::with_exec`], and the functions
//! each module registers with the interpreter.
//!
//! Never: reach the interpreter's set-up or loading ([`crate::interpreter`]);
//! a nested call enters another actor through the `Invoke` function the
//! interpreter gives each execution. It reads [`crate::meter`],
//! [`crate::deploy`] and [`crate::rules`].

pub(crate) mod args;
pub(crate) mod call_native;
pub mod convert;
pub(crate) mod exec;
pub mod helpers;
pub mod host;
pub(crate) mod pvm_host;
pub(crate) mod storage_natives;
pub(crate) mod timer_natives;
