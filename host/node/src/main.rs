//! Placeholder until the CLI lands.
fn main() {}
