//! The VM crate's layers (docs/ARCHITECTURE.md, "The actor VM"): four
//! folders, one job each, imports running one way —
//! `rules` ← `deploy` ← `meter` ← `host_api` ← `interpreter` ← the entry
//! points at the top (`vm`, `lib`, `error`, `testing`) — and no module
//! reaching another that (directly or through others) reaches it back.
//! Reads the sources and follows every `crate::…`, `super::…` and
//! `self::…` reference outside comments and test modules.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

// The workspace's module-graph reader (one definition, also used by the
// workspace-wide architecture test).
#[path = "../../../tests/e2e/src/module_graph.rs"]
mod module_graph;
use module_graph::ModuleGraph;

/// The folders, lowest first: a module may import its own folder and those
/// before it.
const FOLDERS: [&str; 5] = ["rules", "deploy", "meter", "host_api", "interpreter"];

/// The VM crate's module graph.
fn module_references() -> BTreeMap<String, BTreeSet<String>> {
    let mut references =
        ModuleGraph::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")).references;
    // The crate root declares the folders and re-exports their entry
    // points; it is the top, not a module of a folder.
    references.remove("");
    for targets in references.values_mut() {
        targets.remove("");
    }
    references
}

/// The rank of the folder `module` lives in (the entry points rank above
/// every folder).
fn rank(module: &str) -> usize {
    let top = module.split("::").next().unwrap_or_default();
    FOLDERS
        .iter()
        .position(|f| *f == top)
        .unwrap_or(FOLDERS.len())
}

#[test]
fn vm_modules_import_each_other_without_cycles() {
    let graph = ModuleGraph {
        references: module_references(),
    };
    assert_eq!(graph.cycle(), None, "an import cycle");
}

#[test]
fn imports_run_one_way_between_the_folders() {
    let references = module_references();
    let mut upward = Vec::new();
    for (module, targets) in &references {
        for target in targets {
            // A folder's own `mod.rs` (module = the folder) declares its
            // children; that is not an import.
            if target.starts_with(&format!("{module}::")) {
                continue;
            }
            if rank(target) > rank(module) {
                upward.push(format!("{module} → {target}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the layers ({}): {upward:#?}",
        FOLDERS.join(" ← ")
    );
}

#[test]
fn the_meters_budget_and_the_rules_import_nothing_of_the_crate() {
    let references = module_references();
    for module in [
        "meter::budget",
        "rules::guards",
        "rules::names",
        "rules::formatting",
        "rules::costs",
    ] {
        assert!(
            references[module].is_empty(),
            "{module} imports {:?}",
            references[module]
        );
    }
}

#[test]
fn the_top_level_holds_only_the_entry_points() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("src exists")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.is_file() && path.extension().is_some_and(|x| x == "rs"))
                .then(|| path.file_name()?.to_str().map(str::to_owned))
                .flatten()
        })
        .collect();
    files.sort();
    assert_eq!(files, ["error.rs", "lib.rs", "testing.rs", "vm.rs"]);
}
