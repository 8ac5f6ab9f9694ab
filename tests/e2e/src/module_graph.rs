//! A crate's module graph, read from its sources: which module refers to
//! which through a `crate::…`, `super::…` or `self::…` path (a `use`, or a
//! path written in the code), brace groups (`crate::{a, b::c}`) included.
//! Full-line comments and everything from the first `#[cfg(test)]` of a
//! file on are left out: tests may reach anywhere.
//!
//! The architecture tests use it to keep every crate free of import
//! cycles and the actor VM's folders in their order (docs/ARCHITECTURE.md).
//! It reads text, not types: a path it cannot resolve to a module of the
//! crate (an external crate, a macro) is ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`meter::natives::price`; the crate root is `""`) → the
/// modules it refers to (itself left out).
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// Each module's references.
    pub references: BTreeMap<String, BTreeSet<String>>,
}

impl ModuleGraph {
    /// Reads the crate whose sources are under `src`.
    pub fn read(src: &Path) -> ModuleGraph {
        let mut sources = BTreeMap::new();
        collect(src, &[], &mut sources);
        let modules: BTreeSet<String> = sources.keys().cloned().collect();
        let references = sources
            .iter()
            .map(|(module, code)| {
                let mut found = BTreeSet::new();
                for (anchor, base) in [
                    ("crate::", Vec::new()),
                    ("super::", parent(module)),
                    ("self::", split(module)),
                ] {
                    for (at, _) in code.match_indices(anchor) {
                        // `my_crate::` or `xself::` are other names, and
                        // the `super::` of `super::super::` is read with
                        // its first.
                        let before = code[..at].chars().next_back();
                        if before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                            || code[..at].ends_with("::")
                        {
                            continue;
                        }
                        let mut paths = Vec::new();
                        expand(&code[at + anchor.len()..], &base, &mut paths);
                        for path in paths {
                            if let Some(target) = resolve(&path, &modules) {
                                found.insert(target.clone());
                            }
                        }
                    }
                }
                found.remove(module);
                (module.clone(), found)
            })
            .collect();
        ModuleGraph { references }
    }

    /// An import cycle, as the modules along it (the first repeated at the
    /// end), or `None` when the graph has none.
    pub fn cycle(&self) -> Option<Vec<String>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            Open,
            Done,
        }
        fn visit(
            graph: &ModuleGraph,
            module: &str,
            marks: &mut BTreeMap<String, Mark>,
            path: &mut Vec<String>,
        ) -> Option<Vec<String>> {
            match marks.get(module) {
                Some(Mark::Done) => return None,
                Some(Mark::Open) => {
                    let start = path.iter().position(|m| m == module).unwrap_or(0);
                    let mut cycle = path[start..].to_vec();
                    cycle.push(module.to_owned());
                    return Some(cycle);
                }
                None => {}
            }
            marks.insert(module.to_owned(), Mark::Open);
            path.push(module.to_owned());
            for next in graph.references.get(module).into_iter().flatten() {
                if let Some(cycle) = visit(graph, next, marks, path) {
                    return Some(cycle);
                }
            }
            path.pop();
            marks.insert(module.to_owned(), Mark::Done);
            None
        }
        let mut marks = BTreeMap::new();
        self.references
            .keys()
            .find_map(|module| visit(self, module, &mut marks, &mut Vec::new()))
    }
}

/// Every `.rs` file under `dir` by module path, its code without full-line
/// comments and tests.
fn collect(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("readable entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let Some(name) = path.file_stem().and_then(|s| s.to_str()).map(str::to_owned) else {
            continue;
        };
        if path.is_dir() {
            // `src/bin/*` are programs of their own, not modules.
            if prefix.is_empty() && name == "bin" {
                continue;
            }
            let mut deeper = prefix.to_vec();
            deeper.push(name);
            collect(&path, &deeper, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut module = prefix.to_vec();
            if !(name == "mod" || (prefix.is_empty() && (name == "lib" || name == "main"))) {
                module.push(name);
            }
            let text = std::fs::read_to_string(&path).expect("readable source");
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or("")
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            out.entry(module.join("::")).or_default().push_str(&code);
        }
    }
}

fn split(module: &str) -> Vec<String> {
    if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").map(str::to_owned).collect()
    }
}

fn parent(module: &str) -> Vec<String> {
    let mut p = split(module);
    p.pop();
    p
}

/// The paths a reference starting at `text` names, each under `base`:
/// `a::b::C` is one, `a::{b, c::{d, e}}` three.
fn expand(text: &str, base: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = base.to_vec();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            for item in group_items(group) {
                expand(item, &path, out);
            }
            return;
        }
        let segment: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if segment.is_empty() {
            break;
        }
        rest = &rest[segment.len()..];
        match segment.as_str() {
            "self" => {}
            "super" => {
                path.pop();
            }
            _ => path.push(segment),
        }
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => break,
        }
    }
    out.push(path);
}

/// The comma-separated items of a brace group whose opening brace has just
/// been consumed, up to its closing brace.
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.into_iter().filter(|i| !i.trim().is_empty()).collect()
}

/// The longest module path that `path` starts with.
fn resolve<'a>(path: &[String], modules: &'a BTreeSet<String>) -> Option<&'a String> {
    (0..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n].join("::")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        let dir = tempfile_dir();
        for (path, code) in files {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, code).unwrap();
        }
        let g = ModuleGraph::read(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        g
    }

    fn tempfile_dir() -> std::path::PathBuf {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "module-graph-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn groups_super_and_self_paths_are_followed() {
        let g = graph(&[
            ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
            (
                "a/mod.rs",
                "pub mod x;\nuse crate::{b, c::Thing};\nuse self::x::Y;\n",
            ),
            ("a/x.rs", "use super::super::b::Z;\n// use crate::c;\n"),
            (
                "b.rs",
                "fn f() { crate::c::g() }\n#[cfg(test)]\nuse crate::a;\n",
            ),
            ("c.rs", "use my_crate::a;\n"),
        ]);
        let refs = |m: &str| g.references[m].iter().cloned().collect::<Vec<_>>();
        assert_eq!(refs("a"), ["a::x", "b", "c"]);
        assert_eq!(refs("a::x"), ["b"]);
        assert_eq!(refs("b"), ["c"]);
        assert!(refs("c").is_empty());
        assert_eq!(g.cycle(), None);
    }

    #[test]
    fn a_cycle_is_named_along_its_path() {
        let g = graph(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
            ("a.rs", "use crate::b::B;\n"),
            ("b.rs", "use crate::{c::C};\n"),
            ("c.rs", "use crate::a;\n"),
        ]);
        assert_eq!(g.cycle().unwrap(), ["a", "b", "c", "a"]);
    }
}
