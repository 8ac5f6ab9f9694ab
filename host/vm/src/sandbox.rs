//! The deploy-time validator: rejects every construct that could reach outside
//! the sandbox, leak non-deterministic values or keep state outside
//! `self.storage`, and names the line and construct in a [`DeployRejection`].
//!
//! The validator is the first of three layers. The second is the restricted
//! builtins dict and import hook in [`crate::runtime`] (names not listed there
//! do not exist for an actor); the third is the size guards. The rules are
//! deliberately syntactic, so they are decidable at deploy and cheap:
//!
//! - no attribute whose name starts with `_` (closes `__class__`,
//!   `__subclasses__`, `__globals__`, `__dict__`, …) and none of the
//!   non-underscore introspection attributes (`gi_frame`, `f_back`,
//!   `tb_frame`, `co_code`, `mro`, …), nor `format`/`format_map`, whose field
//!   syntax (`"{0.__class__}"`) performs attribute access from a string;
//! - no dunder names and no names of reflective builtins (`getattr`, `eval`,
//!   `exec`, `compile`, `open`, `id`, `hash`, `type`, `globals`, …);
//! - imports only of the five actor modules;
//! - no attribute assignment, `global`, `with`, `async`, `match`, `try*`,
//!   type aliases or template strings; module and class bodies contain only
//!   imports, functions, classes and constant assignments; default arguments
//!   are constants; no dunder methods (so objects get our deterministic
//!   `repr` and hashing rules);
//! - f-string format specs are literal and cannot request huge widths.

use std::fmt;

use ruff_python_ast::visitor::{walk_expr, walk_stmt, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_source_file::LineIndex;
use ruff_text_size::{Ranged, TextSize};

/// Modules an actor may import.
pub const IMPORTABLE_MODULES: &[&str] = &["pvm_host", "json", "base64", "hashing", "math"];

/// Decorators an actor may use.
/// Decorators by bare name; `@pvm_host.timer_handler` is allowed too
/// ([`is_timer_handler_decorator`]).
const ALLOWED_DECORATORS: &[&str] = &["actor", "staticmethod", "timer_handler"];

/// Builtins that reflect on or escape the interpreter, named so the rejection
/// is explicit (they are also absent from the actor's builtins).
const FORBIDDEN_NAMES: &[&str] = &[
    "exec",
    "eval",
    "compile",
    "open",
    "input",
    "print",
    "breakpoint",
    "help",
    "exit",
    "quit",
    "getattr",
    "setattr",
    "delattr",
    "hasattr",
    "globals",
    "locals",
    "vars",
    "dir",
    "id",
    "hash",
    "type",
    "object",
    "super",
    "memoryview",
    "classmethod",
    "property",
    "iter",
    "next",
    "format",
    "repr",
    "ascii",
    "callable",
    "issubclass",
    "aiter",
    "anext",
    "float",
    "complex",
];

/// Non-underscore attributes that expose frames, code or the class hierarchy.
const FORBIDDEN_ATTRIBUTE_PREFIXES: &[&str] = &["gi_", "cr_", "ag_", "f_", "tb_", "co_"];
const FORBIDDEN_ATTRIBUTES: &[&str] = &["mro", "format", "format_map", "fromkeys"];

/// Widest field an f-string format spec may request.
const MAX_FORMAT_WIDTH_DIGITS: usize = 4;

/// Why an actor's source was refused at deploy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeployRejection {
    /// 1-based source line (0 when the problem is not tied to a line).
    pub line: usize,
    /// The construct, as written or named (`import os`, `attribute __class__`).
    pub construct: String,
    /// Why it is refused.
    pub reason: String,
}

impl fmt::Display for DeployRejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.construct, self.reason)
    }
}

/// Checks a parsed module; returns the first violation in source order.
pub fn validate(source: &str, module: &ast::ModModule) -> Result<(), DeployRejection> {
    let mut validator = Validator {
        lines: LineIndex::from_source_text(source),
        source,
        error: None,
    };
    for stmt in &module.body {
        validator.check_module_level(stmt);
        validator.visit_stmt(stmt);
        if let Some(error) = validator.error.take() {
            return Err(error);
        }
    }
    Ok(())
}

struct Validator<'s> {
    lines: LineIndex,
    source: &'s str,
    error: Option<DeployRejection>,
}

impl Validator<'_> {
    fn line(&self, offset: TextSize) -> usize {
        self.lines.line_index(offset).get()
    }

    fn reject(
        &mut self,
        node: &impl Ranged,
        construct: impl Into<String>,
        reason: impl Into<String>,
    ) {
        if self.error.is_none() {
            self.error = Some(DeployRejection {
                line: self.line(node.start()),
                construct: construct.into(),
                reason: reason.into(),
            });
        }
    }

    fn snippet(&self, node: &impl Ranged) -> String {
        let text = &self.source[node.range()];
        let first_line = text.lines().next().unwrap_or("");
        first_line.chars().take(60).collect()
    }

    /// Module bodies may only define things: anything executed at import time
    /// would run unmetered and could keep state between calls.
    fn check_module_level(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Import(_) | Stmt::ImportFrom(_) | Stmt::FunctionDef(_) | Stmt::Pass(_) => {}
            Stmt::ClassDef(class) => self.check_class_body(class),
            Stmt::Assign(assign) => self.check_constant(&assign.value),
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    self.check_constant(value);
                }
            }
            Stmt::Expr(expr) if is_constant(&expr.value) => {}
            other => {
                let snippet = self.snippet(other);
                self.reject(
                    other,
                    snippet,
                    "module level may only contain imports, functions, classes and constant assignments",
                );
            }
        }
    }

    fn check_class_body(&mut self, class: &ast::StmtClassDef) {
        if let Some(arguments) = &class.arguments {
            if !arguments.keywords.is_empty() {
                self.reject(
                    class,
                    format!("class {}", class.name),
                    "class keywords (metaclass=…) are not allowed",
                );
            }
            for base in arguments.args.iter() {
                if !matches!(base, Expr::Name(_)) {
                    self.reject(
                        base,
                        self.snippet(base),
                        "class bases must be plain names of classes in this module",
                    );
                }
            }
        }
        for stmt in &class.body {
            match stmt {
                Stmt::FunctionDef(_) | Stmt::Pass(_) => {}
                Stmt::Assign(assign) => self.check_constant(&assign.value),
                Stmt::Expr(expr) if is_constant(&expr.value) => {}
                other => {
                    let snippet = self.snippet(other);
                    self.reject(
                        other,
                        snippet,
                        "class bodies may only contain methods and constant assignments",
                    );
                }
            }
        }
    }

    fn check_constant(&mut self, expr: &Expr) {
        if !is_constant(expr) {
            self.reject(
                expr,
                self.snippet(expr),
                "only constants (numbers, strings, bytes, True/False/None and tuples of them) may be assigned here; keep state in self.storage",
            );
        }
    }

    fn check_name(&mut self, node: &impl Ranged, name: &str) {
        if name.starts_with("__") || name.starts_with("_pvm") {
            self.reject(
                node,
                format!("name {name}"),
                "dunder and _pvm names are reserved",
            );
        } else if FORBIDDEN_NAMES.contains(&name) {
            self.reject(
                node,
                format!("name {name}"),
                "this builtin is not available to actors",
            );
        }
    }
}

/// Literal constants, unary minus on numbers, and tuples of constants.
fn is_constant(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_) => true,
        Expr::UnaryOp(unary) => {
            matches!(unary.op, ast::UnaryOp::USub | ast::UnaryOp::UAdd)
                && matches!(*unary.operand, Expr::NumberLiteral(_))
        }
        Expr::Tuple(tuple) => tuple.elts.iter().all(is_constant),
        _ => false,
    }
}

impl<'a> Visitor<'a> for Validator<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if self.error.is_some() {
            return;
        }
        match stmt {
            Stmt::Import(import) => {
                for alias in &import.names {
                    if !IMPORTABLE_MODULES.contains(&alias.name.as_str()) {
                        self.reject(
                            stmt,
                            format!("import {}", alias.name),
                            format!("only {} can be imported", IMPORTABLE_MODULES.join(", ")),
                        );
                    }
                    if let Some(asname) = &alias.asname {
                        self.check_name(alias, asname.as_str());
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map(|m| m.as_str()).unwrap_or("");
                if import.level > 0 || !IMPORTABLE_MODULES.contains(&module) {
                    self.reject(
                        stmt,
                        format!("from {module} import"),
                        format!("only {} can be imported", IMPORTABLE_MODULES.join(", ")),
                    );
                }
                for alias in &import.names {
                    if alias.name.as_str() == "*" {
                        self.reject(
                            stmt,
                            format!("from {module} import *"),
                            "star imports are not allowed",
                        );
                    }
                    self.check_name(alias, alias.name.as_str());
                    if let Some(asname) = &alias.asname {
                        self.check_name(alias, asname.as_str());
                    }
                }
            }
            Stmt::FunctionDef(function) => {
                let name = function.name.as_str();
                if function.is_async {
                    self.reject(
                        stmt,
                        format!("async def {name}"),
                        "async functions are not supported",
                    );
                }
                if name.starts_with("__") || name.starts_with("_pvm") {
                    self.reject(
                        stmt,
                        format!("def {name}"),
                        "dunder methods are not allowed (objects get deterministic repr/eq/hash from the VM)",
                    );
                }
                for decorator in &function.decorator_list {
                    self.check_decorator(decorator);
                }
                if function.type_params.is_some() {
                    self.reject(
                        stmt,
                        format!("def {name}[…]"),
                        "type parameters are not supported",
                    );
                }
                for parameter in function.parameters.iter_non_variadic_params() {
                    if let Some(default) = &parameter.default {
                        if !is_constant(default) {
                            self.reject(
                                default.as_ref(),
                                self.snippet(default.as_ref()),
                                "default arguments must be constants (a mutable default would persist between calls)",
                            );
                        }
                    }
                }
                for parameter in function.parameters.iter() {
                    self.check_name(stmt, parameter.name().as_str());
                }
            }
            Stmt::ClassDef(class) => {
                let name = class.name.as_str();
                self.check_name(stmt, name);
                for decorator in &class.decorator_list {
                    self.check_decorator(decorator);
                }
                if class.type_params.is_some() {
                    self.reject(
                        stmt,
                        format!("class {name}[…]"),
                        "type parameters are not supported",
                    );
                }
            }
            Stmt::Global(_) => self.reject(
                stmt,
                "global",
                "module globals are constant; keep state in self.storage",
            ),
            Stmt::With(_) => self.reject(stmt, "with", "context managers are not supported"),
            Stmt::Match(_) => self.reject(stmt, "match", "match statements are not supported"),
            Stmt::TypeAlias(_) => self.reject(stmt, "type", "type aliases are not supported"),
            Stmt::IpyEscapeCommand(_) => self.reject(stmt, "escape command", "not Python"),
            Stmt::Try(try_stmt) if try_stmt.is_star => {
                self.reject(stmt, "try/except*", "exception groups are not supported")
            }
            Stmt::For(for_stmt) if for_stmt.is_async => {
                self.reject(stmt, "async for", "async code is not supported")
            }
            Stmt::Assign(assign) => {
                for target in &assign.targets {
                    self.check_store_target(target);
                }
            }
            Stmt::AnnAssign(assign) => self.check_store_target(&assign.target),
            Stmt::AugAssign(assign) => {
                self.check_store_target(&assign.target);
                if !is_simple_target(&assign.target) {
                    self.reject(
                        stmt,
                        self.snippet(stmt),
                        "augmented assignment needs a name or name[key] target (the VM reads it twice to meter the operation)",
                    );
                }
            }
            Stmt::Delete(delete) => {
                for target in &delete.targets {
                    self.check_store_target(target);
                }
            }
            Stmt::For(for_stmt) => self.check_store_target(&for_stmt.target),
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if self.error.is_some() {
            return;
        }
        match expr {
            Expr::Name(name) => self.check_name(expr, name.id.as_str()),
            Expr::Attribute(attribute) => {
                let attr = attribute.attr.as_str();
                if attr.starts_with('_')
                    || FORBIDDEN_ATTRIBUTES.contains(&attr)
                    || FORBIDDEN_ATTRIBUTE_PREFIXES
                        .iter()
                        .any(|p| attr.starts_with(p))
                {
                    self.reject(
                        expr,
                        format!("attribute .{attr}"),
                        "introspection attributes (and str.format field access) are not available to actors",
                    );
                }
            }
            Expr::Await(_) => self.reject(expr, "await", "async code is not supported"),
            Expr::Compare(compare) => {
                if let Some(operand) = crate::instrument::unsplittable_chain_operand(compare) {
                    self.reject(
                        operand,
                        "chained comparison",
                        "a chain that uses == or != (on operands that may be long strings) can only share plain names between its comparisons; split it with `and`",
                    );
                }
            }
            Expr::TString(_) => self.reject(
                expr,
                "template string",
                "template strings are not supported",
            ),
            Expr::IpyEscapeCommand(_) => self.reject(expr, "escape command", "not Python"),
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. }) => {
                if generators.iter().any(|g| g.is_async) {
                    self.reject(expr, "async comprehension", "async code is not supported");
                }
                for generator in generators {
                    self.check_store_target(&generator.target);
                }
            }
            Expr::FString(fstring) => self.check_fstring(expr, fstring),
            Expr::Starred(_) => {}
            _ => {}
        }
        walk_expr(self, expr);
    }
}

/// Is this decorator `@pvm_host.timer_handler` (or `@timer_handler`, imported
/// from `pvm_host`)?
pub(crate) fn is_timer_handler_decorator(decorator: &ast::Decorator) -> bool {
    match &decorator.expression {
        Expr::Attribute(attribute) => {
            attribute.attr.as_str() == "timer_handler"
                && matches!(attribute.value.as_ref(), Expr::Name(n) if n.id.as_str() == "pvm_host")
        }
        Expr::Name(name) => name.id.as_str() == "timer_handler",
        _ => false,
    }
}

impl Validator<'_> {
    fn check_decorator(&mut self, decorator: &ast::Decorator) {
        let allowed = matches!(&decorator.expression, Expr::Name(n) if ALLOWED_DECORATORS.contains(&n.id.as_str()))
            || is_timer_handler_decorator(decorator);
        if !allowed {
            self.reject(
                decorator,
                format!("@{}", self.snippet(&decorator.expression)),
                "only @actor, @staticmethod and @pvm_host.timer_handler decorators are allowed",
            );
        }
    }

    /// State lives in `self.storage`, never in attributes; starred targets
    /// would unpack an unbounded iterator inside one unmetered instruction.
    fn check_store_target(&mut self, target: &Expr) {
        match target {
            Expr::Attribute(_) => self.reject(
                target,
                self.snippet(target),
                "attribute assignment is not allowed; keep state in self.storage",
            ),
            Expr::Starred(_) => self.reject(
                target,
                self.snippet(target),
                "starred assignment targets are not supported",
            ),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for elt in elts {
                    self.check_store_target(elt);
                }
            }
            _ => {}
        }
    }

    fn check_fstring(&mut self, expr: &Expr, fstring: &ast::ExprFString) {
        for element in fstring.value.elements() {
            let ast::InterpolatedStringElement::Interpolation(interpolation) = element else {
                continue;
            };
            if interpolation.conversion != ast::ConversionFlag::None {
                self.reject(
                    expr,
                    self.snippet(expr),
                    "f-string conversions (!r, !s, !a) are not supported",
                );
            }
            let Some(spec) = &interpolation.format_spec else {
                continue;
            };
            let mut literal = String::new();
            for part in &spec.elements {
                match part {
                    ast::InterpolatedStringElement::Literal(text) => literal.push_str(&text.value),
                    ast::InterpolatedStringElement::Interpolation(_) => {
                        self.reject(
                            expr,
                            self.snippet(expr),
                            "f-string format specs must be literal",
                        );
                    }
                }
            }
            let longest_number = literal
                .split(|c: char| !c.is_ascii_digit())
                .map(str::len)
                .max()
                .unwrap_or(0);
            if longest_number > MAX_FORMAT_WIDTH_DIGITS {
                self.reject(
                    expr,
                    self.snippet(expr),
                    "f-string widths and precisions are limited to 4 digits",
                );
            }
        }
    }
}

/// `name` or `name[key]` / `name.attr[key]` with a constant or name key:
/// targets that can be read a second time without side effects.
pub(crate) fn is_simple_target(target: &Expr) -> bool {
    match target {
        Expr::Name(_) => true,
        Expr::Subscript(subscript) => {
            let base_ok = match subscript.value.as_ref() {
                Expr::Name(_) => true,
                Expr::Attribute(attribute) => matches!(attribute.value.as_ref(), Expr::Name(_)),
                _ => false,
            };
            let key_ok =
                matches!(subscript.slice.as_ref(), Expr::Name(_)) || is_constant(&subscript.slice);
            base_ok && key_ok
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(source: &str) -> Result<(), DeployRejection> {
        let module = ruff_python_parser::parse_module(source)
            .unwrap()
            .into_syntax();
        validate(source, &module)
    }

    #[test]
    fn accepts_ordinary_actor_code() {
        let source = "import pvm_host\nfrom json import dumps\nLIMIT = (1, -2, 'x')\nclass A:\n    \"\"\"doc\"\"\"\n    RATE = 3\n    def f(self, x=None, *args, **kw):\n        ys = [y for y in range(x) if y % 2]\n        self.storage['k'] = {**kw}\n        self.storage['k'] += 1\n        return f'{x:>8}' + dumps(ys)\n";
        check(source).unwrap();
    }

    #[test]
    fn names_line_and_construct() {
        let rejection =
            check("class A:\n    def f(self):\n        x = 1\n        return type(x)\n")
                .unwrap_err();
        assert_eq!(rejection.line, 4);
        assert_eq!(rejection.construct, "name type");
        assert!(rejection.to_string().starts_with("line 4: name type:"));
    }

    #[test]
    fn rejects_each_escape_class() {
        for (source, construct) in [
            ("import sys\n", "import sys"),
            ("from . import x\n", "from  import"),
            (
                "class A:\n    def f(self):\n        return self.__dict__\n",
                "attribute .__dict__",
            ),
            (
                "class A:\n    def f(self, g):\n        return g.gi_code\n",
                "attribute .gi_code",
            ),
            (
                "class A:\n    def f(self):\n        return '{}'.format_map({})\n",
                "attribute .format_map",
            ),
            (
                "class A:\n    def f(self):\n        return vars()\n",
                "name vars",
            ),
            (
                "class A:\n    def f(self):\n        with x:\n            pass\n",
                "with",
            ),
            (
                "class A:\n    async def f(self):\n        pass\n",
                "async def f",
            ),
            ("class A:\n    def f(self):\n        a, *b = [1, 2]\n", "*b"),
            (
                "class A:\n    def f(self):\n        return f'{1:>{9999999}}'\n",
                "f'{1:>{9999999}}'",
            ),
            (
                "class A:\n    def f(self):\n        return f'{1:>99999}'\n",
                "f'{1:>99999}'",
            ),
            (
                "class A:\n    def f(self, d):\n        d[g()] += 1\n",
                "d[g()] += 1",
            ),
            ("@dataclass\nclass A:\n    pass\n", "@dataclass"),
            ("class A(metaclass=M):\n    pass\n", "class A"),
            ("x = [1]\nclass A:\n    pass\n", "[1]"),
            ("print(1)\nclass A:\n    pass\n", "print(1)"),
            (
                "class A:\n    def f(self, a, c):\n        return a == self.b() == c\n",
                "chained comparison",
            ),
        ] {
            let rejection = check(source).expect_err(source);
            assert_eq!(rejection.construct, construct, "{source}: {rejection}");
        }
    }

    #[test]
    fn chained_comparisons_that_split_into_pairs_are_accepted() {
        for source in [
            "class A:\n    def f(self, a, b, c):\n        return a == b < c\n",
            "class A:\n    def f(self, a):\n        return self.b() < a == 3\n",
            "class A:\n    def f(self, i, n):\n        return 0 <= i < n\n",
        ] {
            check(source).expect(source);
        }
    }
}
