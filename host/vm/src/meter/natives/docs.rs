//! The allow-list as the Markdown table in `docs/METERING.md` ("Natives"),
//! so the documentation is the code: a test fails when they differ, and
//! `UPDATE_METERING=1 cargo test -p timerhost-vm --lib natives::docs`
//! rewrites the section.

use super::table::RULES;

/// Where the generated section starts and ends in `docs/METERING.md`.
pub(crate) const BEGIN: &str =
    "<!-- natives:begin (generated from host/vm/src/meter/natives/table.rs) -->";
pub(crate) const END: &str = "<!-- natives:end -->";

fn code_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The table, one row per rule.
pub(crate) fn markdown() -> String {
    let mut out = String::new();
    out.push_str("| types | natives | charged | why |\n|---|---|---|---|\n");
    for rule in super::table::BUILTIN_RULES
        .iter()
        .chain(super::table::MODULE_RULES)
        .chain(RULES)
    {
        let charged = match rule.price {
            super::price::Price::Refused(reason) => format!("refused: {reason}"),
            price => price.describe().to_owned(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            code_list(rule.types),
            code_list(rule.names),
            charged,
            rule.why.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metering_md_lists_the_allow_list() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/METERING.md");
        let text = std::fs::read_to_string(path).expect("docs/METERING.md");
        let start = text.find(BEGIN).expect("the natives section begins") + BEGIN.len();
        let end = text.find(END).expect("the natives section ends");
        let expected = format!("\n{}", markdown());
        if std::env::var_os("UPDATE_METERING").is_some() {
            let updated = format!("{}{}{}", &text[..start], expected, &text[end..]);
            std::fs::write(path, updated).expect("write docs/METERING.md");
            return;
        }
        assert!(
            text[start..end] == expected,
            "docs/METERING.md's natives table differs from host/vm/src/meter/natives/table.rs: \
             run `UPDATE_METERING=1 cargo test -p timerhost-vm --lib natives::docs`"
        );
    }
}
