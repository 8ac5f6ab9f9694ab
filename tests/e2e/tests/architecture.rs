//! The workspace's modules import each other without cycles (#43): in
//! every crate, no module reaches another that, directly or through
//! others, reaches it back, so each crate reads from the bottom up
//! (docs/ARCHITECTURE.md). The actor VM's folder order is checked by its
//! own `host/vm/tests/layers.rs`.

use std::path::{Path, PathBuf};

use timerhost_e2e::module_graph::ModuleGraph;

/// Every crate's `src` directory: `host/*`, the Python extension and this one.
fn crate_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("host"))
        .expect("host/ exists")
        .map(|e| e.expect("readable entry").path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    dirs.push(root.join("python/src"));
    dirs.push(root.join("tests/e2e/src"));
    dirs.sort();
    dirs
}

#[test]
fn no_crate_has_an_import_cycle() {
    let sources = crate_sources();
    assert!(sources.len() >= 10, "found only {sources:?}");
    let cycles: Vec<String> = sources
        .iter()
        .filter_map(|src| {
            let cycle = ModuleGraph::read(src).cycle()?;
            Some(format!("{}: {}", src.display(), cycle.join(" → ")))
        })
        .collect();
    assert!(cycles.is_empty(), "import cycles: {cycles:#?}");
}
