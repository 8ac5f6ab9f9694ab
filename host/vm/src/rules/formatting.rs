//! Checks of format strings before they run: `str.format`/`format_map`
//! fields, `format(x, spec)` and f-string specs, and printf-style `%`
//! conversions. A format can ask for any width (`"{:>999999999}"`,
//! `"%999999999d"`), which the builtin would allocate inside one
//! instruction; and a `str.format` field can read attributes and items of
//! its arguments from a string (`"{0.__class__}"`), out of reach of the
//! deploy validator. Widths and precisions are limited to
//! [`MAX_FORMAT_WIDTH_DIGITS`] digits and fields to plain names or indexes;
//! the result is then charged by its size like any produced value.
//!
//! Imports nothing from the rest of the crate.

/// Widest field (or precision) a format may request, in digits.
pub const MAX_FORMAT_WIDTH_DIGITS: usize = 4;

/// Why a format spec (`>8`, `04d`, `,`) is refused, if it is.
pub fn check_format_spec(spec: &str) -> Result<(), String> {
    if spec.contains('{') || spec.contains('}') {
        return Err("nested replacement fields in a format spec are not supported".into());
    }
    let longest = spec
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    if longest > MAX_FORMAT_WIDTH_DIGITS {
        return Err(format!(
            "format widths and precisions are limited to {MAX_FORMAT_WIDTH_DIGITS} digits"
        ));
    }
    Ok(())
}

/// Why a `str.format` template is refused, if it is: each field is empty, a
/// number or a name (no `.attribute` or `[index]`), with an optional `!r`,
/// `!s` or `!a` and a spec that passes [`check_format_spec`]. Returns the
/// number of fields (what formatting it costs).
pub fn check_format_template(template: &str) -> Result<u64, String> {
    let mut fields = 0;
    let mut chars = template.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                chars.next();
            }
            '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                chars.next();
            }
            '{' => {
                let mut depth = 1;
                let mut end = None;
                for (index, c) in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(index);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let end = end.ok_or("a replacement field is not closed")?;
                check_field(&template[start + 1..end])?;
                fields += 1;
            }
            _ => {}
        }
    }
    Ok(fields)
}

fn check_field(field: &str) -> Result<(), String> {
    let (name_and_conversion, spec) = match field.find(':') {
        Some(colon) => (&field[..colon], Some(&field[colon + 1..])),
        None => (field, None),
    };
    let name = match name_and_conversion.find('!') {
        Some(bang) => {
            let conversion = &name_and_conversion[bang + 1..];
            if !matches!(conversion, "r" | "s" | "a") {
                return Err(format!("unknown conversion !{conversion}"));
            }
            &name_and_conversion[..bang]
        }
        None => name_and_conversion,
    };
    let plain = name.is_empty()
        || name.chars().all(|c| c.is_ascii_digit())
        || name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !plain {
        return Err(format!(
            "format field {{{name}}}: attribute and index access inside format fields is not supported; pass the value itself"
        ));
    }
    if name.starts_with('_') {
        return Err(format!(
            "format field {{{name}}}: underscore names are private to the VM"
        ));
    }
    spec.map_or(Ok(()), check_format_spec)
}

/// Why a printf-style (`%`) template is refused, if it is: `*` widths and
/// widths or precisions over [`MAX_FORMAT_WIDTH_DIGITS`] digits. Returns the
/// number of conversions.
pub fn check_percent_template(template: &[u8]) -> Result<u64, String> {
    let mut conversions = 0;
    let mut index = 0;
    while index < template.len() {
        if template[index] != b'%' {
            index += 1;
            continue;
        }
        index += 1;
        if template.get(index) == Some(&b'%') {
            index += 1;
            continue;
        }
        conversions += 1;
        if template.get(index) == Some(&b'(') {
            while index < template.len() && template[index] != b')' {
                index += 1;
            }
            index += 1;
        }
        while index < template.len() && b"#0- +".contains(&template[index]) {
            index += 1;
        }
        for part in ["width", "precision"] {
            if part == "precision" {
                if template.get(index) != Some(&b'.') {
                    break;
                }
                index += 1;
            }
            if template.get(index) == Some(&b'*') {
                return Err(format!("a * {part} in %-formatting is not supported"));
            }
            let digits_start = index;
            while index < template.len() && template[index].is_ascii_digit() {
                index += 1;
            }
            if index - digits_start > MAX_FORMAT_WIDTH_DIGITS {
                return Err(format!(
                    "%-format widths and precisions are limited to {MAX_FORMAT_WIDTH_DIGITS} digits"
                ));
            }
        }
        index += 1;
    }
    Ok(conversions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_templates_pass() {
        for template in [
            "{} {}",
            "{0}-{1}",
            "{name!r:>8}",
            "{:04d}",
            "{:,}",
            "{{literal}}",
            "{x:.2f}",
        ] {
            check_format_template(template).expect(template);
        }
        for template in ["%d items", "%5.2s|%-5s", "%(name)s", "%%", "%05x"] {
            check_percent_template(template.as_bytes()).expect(template);
        }
    }

    #[test]
    fn fields_and_conversions_are_counted() {
        assert_eq!(check_format_template("{} {{x}} {name!r:>4}"), Ok(2));
        assert_eq!(check_percent_template(b"%d%% %(k)s %5.2x"), Ok(3));
    }

    #[test]
    fn attribute_access_and_huge_widths_are_refused() {
        for template in [
            "{0.__class__}",
            "{x[0]}",
            "{:>99999}",
            "{:{w}}",
            "{0",
            "{!z}",
            "{_x}",
        ] {
            assert!(check_format_template(template).is_err(), "{template}");
        }
        for template in ["%99999d", "%*d", "%.*f", "%.12345s"] {
            assert!(
                check_percent_template(template.as_bytes()).is_err(),
                "{template}"
            );
        }
    }
}
