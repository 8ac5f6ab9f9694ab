//! The workspace's feature unifier, managed by `cargo hakari` (#34).
//!
//! Every member depends on it, and it turns on the union of the features
//! the whole workspace asks of each third-party crate, so that building
//! one member (`maturin develop` builds only `timerhost-python`) resolves
//! the same features as `cargo test --workspace` and reuses its artefacts
//! instead of rebuilding ~130 crates, RustPython among them. After changing
//! a dependency: `cargo hakari generate && cargo hakari manage-deps`
//! (`cargo install cargo-hakari`); a stale hack only costs build time.
