//! The VM crate's modules form layers: no module reaches another that
//! (directly or through others) reaches it back (docs/ARCHITECTURE.md).
//! Reads the sources and follows every `crate::module` reference outside
//! comments and test modules.

use std::collections::{BTreeMap, BTreeSet};

fn module_references() -> BTreeMap<String, BTreeSet<String>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("src exists") {
        let path = entry.expect("readable entry").path();
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
            let text = std::fs::read_to_string(&path).expect("readable source");
            let code = text.split("#[cfg(test)]").next().unwrap_or("").to_owned();
            sources.insert(name.to_owned(), code);
        }
    }
    let names: BTreeSet<String> = sources.keys().cloned().collect();
    sources
        .iter()
        .map(|(module, code)| {
            let mut references = BTreeSet::new();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for part in line.split("crate::").skip(1) {
                    let target: String = part
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if names.contains(&target) && &target != module {
                        references.insert(target);
                    }
                }
            }
            (module.clone(), references)
        })
        .collect()
}

#[test]
fn vm_modules_import_each_other_without_cycles() {
    let references = module_references();
    for (module, direct) in &references {
        let mut stack: Vec<(String, Vec<String>)> = direct
            .iter()
            .map(|d| (d.clone(), vec![module.clone(), d.clone()]))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some((current, path)) = stack.pop() {
            assert!(&current != module, "import cycle: {}", path.join(" → "));
            if !seen.insert(current.clone()) {
                continue;
            }
            for next in &references[&current] {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
}

#[test]
fn the_meter_and_the_guard_contract_import_nothing_of_the_crate() {
    let references = module_references();
    for module in ["meter", "guards", "names", "formatting", "costs"] {
        assert!(
            references[module].is_empty(),
            "{module} imports {:?}",
            references[module]
        );
    }
}
