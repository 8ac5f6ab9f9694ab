//! f-string fields whose format spec is computed (`f"{name:<{width}}"`):
//! the spec is only known at run time, so the field becomes
//! `{_pvm_format(value, f"<spec>", conversion)}` — the guard applies the
//! conversion, checks the spec like `format()` does (widths of at most four
//! digits, no nested fields left), charges by size and formats. Fields
//! with a literal spec are checked at deploy and stay as they are.

use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use super::{guard_call, int_literal};
use crate::rules::guards::Guard;

/// The conversion code `_pvm_format` receives: 0 none, 1 `!s`, 2 `!r`,
/// 3 `!a`.
pub(crate) fn conversion_code(flag: ast::ConversionFlag) -> u64 {
    match flag {
        ast::ConversionFlag::None => 0,
        ast::ConversionFlag::Str => 1,
        ast::ConversionFlag::Repr => 2,
        ast::ConversionFlag::Ascii => 3,
    }
}

/// Does this field's spec contain a replacement field of its own?
fn has_computed_spec(field: &ast::InterpolatedElement) -> bool {
    field.format_spec.as_ref().is_some_and(|spec| {
        spec.elements
            .iter()
            .any(|element| matches!(element, ast::InterpolatedStringElement::Interpolation(_)))
    })
}

/// Rewrites every field of `fstring` with a computed spec (see the module
/// docs).
pub(super) fn guard_computed_specs(fstring: &mut ast::ExprFString) {
    for part in fstring.value.iter_mut() {
        let ast::FStringPart::FString(part) = part else {
            continue;
        };
        for element in &mut part.elements {
            let ast::InterpolatedStringElement::Interpolation(field) = element else {
                continue;
            };
            if !has_computed_spec(field) || field.debug_text.is_some() {
                continue;
            }
            let spec = field.format_spec.take().expect("a computed spec");
            let range = field.range();
            let spec_string = Expr::FString(ast::ExprFString {
                node_index: Default::default(),
                range: spec.range,
                value: ast::FStringValue::single(ast::FString {
                    range: spec.range,
                    node_index: Default::default(),
                    elements: spec.elements,
                    flags: ast::FStringFlags::empty(),
                }),
                runtime_joined_str: None,
                runtime_values: None,
            });
            let value = std::mem::replace(
                &mut *field.expression,
                Expr::NoneLiteral(ast::ExprNoneLiteral::default()),
            );
            let code = int_literal(conversion_code(field.conversion), range);
            *field.expression = guard_call(
                Guard::Format.name(),
                vec![value, spec_string, code],
                Vec::new(),
                range,
            );
            field.conversion = ast::ConversionFlag::None;
        }
    }
}
