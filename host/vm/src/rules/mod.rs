//! **Rules**: the static tables both deploy and run time read — what a
//! cycle is worth for each construct and host call ([`costs`]), the names
//! of the guards the instrumenter inserts and the runtime provides
//! ([`guards`], the contract between the two), which names and attributes
//! an actor may reach ([`names`]), and which format templates and specs it
//! may use ([`formatting`]).
//!
//! Entry points: the constants and pure functions of each file.
//!
//! Never: import anything else of the crate, or touch the interpreter —
//! these are data and pure functions, read by every other folder.

pub mod costs;
pub mod formatting;
pub mod guards;
pub mod names;
