//! **Deploy**: what happens once per actor source, before any of it runs —
//! parse and validate it ([`sandbox`]), insert the meter calls and size
//! guards ([`instrument`]), compile it to bytecode ([`compile`]), and keep
//! the result by code hash ([`code_cache`]).
//!
//! Entry points: [`compile::validate_and_compile`] (and the cache's
//! `compile`), whose rejection names the line and construct.
//!
//! Never: run actor code, charge a meter or reach the interpreter; it
//! reads only [`crate::rules`].

pub(crate) mod code_cache;
pub mod compile;
pub mod instrument;
pub mod sandbox;
