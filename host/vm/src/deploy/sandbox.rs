//! The deploy-time validator: rejects every construct that could reach outside
//! the sandbox or leak non-deterministic values, and names the line, the
//! construct and the alternative in a [`DeployRejection`].
//!
//! The validator is the first of four layers. The second is the restricted
//! builtins dict and import hook in [`crate::interpreter::runtime`] (names not listed there
//! do not exist for an actor); the third is the size guards; the fourth is
//! the load ([`crate::interpreter::load`]), which runs module-level code under its own
//! budget and refuses mutable values shared between calls. The rules here are
//! syntactic, so they are decidable at deploy and cheap:
//!
//! - no introspection attribute ([`crate::rules::names::refuse_attribute`]): dunders
//!   other than the protocol methods (`__class__`, `__dict__`, `__globals__`,
//!   `__subclasses__`, …), `_pvm` and `_sunder_` names, frame and code
//!   attributes; `format`/`format_map` only called in place, where the
//!   method guard checks the template;
//! - no dunder names other than a few class attributes, and none of the
//!   builtins that escape or reflect on the interpreter (`eval`, `exec`,
//!   `open`, `globals`, `vars`, `id`, …);
//! - imports only of the actor modules ([`IMPORTABLE_MODULES`]);
//! - no `async`, `try*`, type aliases, template strings, class keywords
//!   (`metaclass=`), `__del__` and the other dunders
//!   [`crate::rules::names::REFUSED_DUNDER_METHODS`] lists; module level holds
//!   definitions and assignments, not control flow;
//! - f-string format specs are literal and cannot request huge widths;
//! - statements and expressions nest less deep than the compiler allows
//!   ([`check_nesting`]), checked before any other pass walks the tree.
use std::fmt;

use ruff_python_ast::visitor::{walk_expr, walk_stmt, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_source_file::LineIndex;
use ruff_text_size::{Ranged, TextSize};

/// Modules an actor may import.
pub const IMPORTABLE_MODULES: &[&str] = &[
    "pvm_host",
    "json",
    "base64",
    "hashing",
    "math",
    "typing",
    "dataclasses",
    "enum",
    "collections",
    "functools",
    "itertools",
    "bisect",
    "operator",
    "string",
    "heapq",
    "copy",
    "contextlib",
    "collections.abc",
];

/// `from __future__ import …` features: `annotations` (annotations kept as
/// strings) and those that are already Python 3's behaviour.
pub const FUTURE_FEATURES: &[&str] = &[
    "annotations",
    "generator_stop",
    "division",
    "absolute_import",
    "print_function",
    "unicode_literals",
    "with_statement",
    "nested_scopes",
    "generators",
];

/// Modules actors often reach for, and why each is absent.
const REFUSED_MODULES: &[(&str, &str)] = &[
    ("re", "its matcher runs a whole match inside one native call, so catastrophic backtracking could not be metered; use str methods (split, partition, startswith, isdigit)"),
    ("random", "randomness differs between nodes; derive values from pvm_host (block height, hashes of state) with hashing.keccak256"),
    ("time", "the clock differs between nodes; use pvm_host.block_timestamp() and block_height()"),
    ("datetime", "the clock differs between nodes; use pvm_host.block_timestamp() and integer arithmetic"),
    ("decimal", "not provided; use integers in fixed point (amounts in the smallest unit)"),
    ("fractions", "not provided; use integers in fixed point (amounts in the smallest unit)"),
];

/// The reason an import of `module` is refused.
fn import_refusal(module: &str) -> String {
    let allowed = format!("only {} can be imported", IMPORTABLE_MODULES.join(", "));
    match REFUSED_MODULES.iter().find(|(name, _)| *name == module) {
        Some((_, why)) => format!("{why} ({allowed})"),
        None => allowed,
    }
}

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
    "globals",
    "locals",
    "vars",
    "dir",
    "id",
    "memoryview",
    "aiter",
    "anext",
    "float",
    "complex",
];

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
    check_nesting(source, module)?;
    let mut validator = Validator {
        lines: LineIndex::from_source_text(source),
        source,
        error: None,
        bound: crate::deploy::instrument::bound_names(module),
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

/// Refuses a module whose statements and expressions nest as deep as
/// RustPython's compiler allows (its symbol table counts both, and refuses
/// depth `CompileOpts::recursion_limit`, 1,000). The instrumenter only
/// wraps nodes, so such a module could never compile; refusing it here,
/// first, keeps the passes that follow — the binding scan, this validator,
/// the instrumenter, each recursive — from walking it at all. They did:
/// `t += x + 1 + 1 + … + 1` of 60,000 terms (120 KB of source) was walked
/// for 55–81 s by the instrumenter's number analysis before the compiler
/// refused it, and overflowed a 64 MiB stack in an earlier version.
fn check_nesting(source: &str, module: &ast::ModModule) -> Result<(), DeployRejection> {
    struct Depth {
        depth: usize,
        limit: usize,
        deepest: Option<TextSize>,
    }
    impl Depth {
        fn enter(&mut self, at: TextSize) -> bool {
            if self.deepest.is_some() {
                return false;
            }
            if self.depth + 1 >= self.limit {
                self.deepest = Some(at);
                return false;
            }
            self.depth += 1;
            true
        }
    }
    impl<'a> Visitor<'a> for Depth {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if self.enter(stmt.start()) {
                walk_stmt(self, stmt);
                self.depth -= 1;
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            if self.enter(expr.start()) {
                walk_expr(self, expr);
                self.depth -= 1;
            }
        }
    }
    let limit = rustpython_codegen::CompileOpts::default().recursion_limit;
    let mut depth = Depth {
        depth: 0,
        limit,
        deepest: None,
    };
    depth.visit_body(&module.body);
    match depth.deepest {
        None => Ok(()),
        Some(at) => Err(DeployRejection {
            line: LineIndex::from_source_text(source).line_index(at).get(),
            construct: "nesting".to_owned(),
            reason: format!(
                "statements and expressions may nest at most {} deep (the compiler's limit); \
                 split the expression into named parts",
                limit - 1
            ),
        }),
    }
}

struct Validator<'s> {
    lines: LineIndex,
    source: &'s str,
    error: Option<DeployRejection>,
    /// Names the module binds somewhere: binding `id` or `type` (a field, a
    /// parameter) is fine; only reading the forbidden builtin is refused.
    bound: std::collections::HashSet<String>,
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

    /// Module bodies define things: control flow at module level would run
    /// once per node, at load, where it belongs in a function.
    fn check_module_level(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Import(_)
            | Stmt::ImportFrom(_)
            | Stmt::FunctionDef(_)
            | Stmt::Pass(_)
            | Stmt::Assign(_)
            | Stmt::AnnAssign(_)
            | Stmt::Expr(_) => {}
            Stmt::ClassDef(class) => self.check_class_body(class),
            // `if TYPE_CHECKING:`, a choice between two definitions: each
            // branch holds what module level may hold.
            Stmt::If(if_stmt) => {
                for inner in if_stmt
                    .body
                    .iter()
                    .chain(if_stmt.elif_else_clauses.iter().flat_map(|c| c.body.iter()))
                {
                    self.check_module_level(inner);
                }
            }
            other => {
                let snippet = self.snippet(other);
                self.reject(
                    other,
                    snippet,
                    "module level may only contain imports, functions, classes, assignments and `if` blocks of those (it runs once per node, at load); put logic in a function",
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
                    "class keywords (metaclass=…) are not allowed: a metaclass would run code whenever the class is used; use a decorator or a base class",
                );
            }
            for base in arguments.args.iter() {
                if !is_static_reference(base) {
                    self.reject(
                        base,
                        self.snippet(base),
                        "class bases must be names (Base, enum.Enum, Generic[T])",
                    );
                }
            }
        }
        for stmt in &class.body {
            match stmt {
                Stmt::FunctionDef(_)
                | Stmt::ClassDef(_)
                | Stmt::Pass(_)
                | Stmt::Assign(_)
                | Stmt::AnnAssign(_)
                | Stmt::Expr(_) => {}
                other => {
                    let snippet = self.snippet(other);
                    self.reject(
                        other,
                        snippet,
                        "class bodies may only contain methods, classes, assignments and annotations",
                    );
                }
            }
        }
    }

    fn check_name(&mut self, node: &impl Ranged, name: &str) {
        let dunder = name.len() > 4 && name.starts_with("__") && name.ends_with("__");
        if (dunder && !crate::rules::names::CLASS_DUNDER_ATTRIBUTES.contains(&name))
            || name.starts_with("_pvm")
        {
            self.reject(
                node,
                format!("name {name}"),
                "dunder and _pvm names are reserved",
            );
        } else if FORBIDDEN_NAMES.contains(&name) && !self.bound.contains(name) {
            self.reject(
                node,
                format!("name {name}"),
                "this builtin is not available to actors",
            );
        }
    }
}

/// `Name`, `module.Name`, `Generic[T]`: what a class base may be.
fn is_static_reference(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => true,
        Expr::Attribute(attribute) => is_static_reference(&attribute.value),
        Expr::Subscript(subscript) => is_static_reference(&subscript.value),
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
                    if alias.name.as_str().contains('.') {
                        self.reject(
                            stmt,
                            format!("import {}", alias.name),
                            format!("import the names you need: from {} import …", alias.name),
                        );
                    } else if !IMPORTABLE_MODULES.contains(&alias.name.as_str()) {
                        self.reject(
                            stmt,
                            format!("import {}", alias.name),
                            import_refusal(alias.name.as_str()),
                        );
                    }
                    if let Some(asname) = &alias.asname {
                        self.check_name(alias, asname.as_str());
                    }
                }
            }
            Stmt::ImportFrom(import)
                if import.level == 0
                    && import.module.as_ref().map(|m| m.as_str()) == Some("__future__") =>
            {
                for alias in &import.names {
                    if !FUTURE_FEATURES.contains(&alias.name.as_str()) {
                        self.reject(
                            stmt,
                            format!("from __future__ import {}", alias.name),
                            format!(
                                "only these __future__ features are known: {}",
                                FUTURE_FEATURES.join(", ")
                            ),
                        );
                    }
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map(|m| m.as_str()).unwrap_or("");
                if import.level > 0 || !IMPORTABLE_MODULES.contains(&module) {
                    self.reject(
                        stmt,
                        format!("from {module} import"),
                        import_refusal(module),
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
                if name.starts_with("_pvm") {
                    self.reject(
                        stmt,
                        format!("def {name}"),
                        "_pvm names are reserved for the VM",
                    );
                }
                if let Some((_, reason)) = crate::rules::names::REFUSED_DUNDER_METHODS
                    .iter()
                    .find(|(refused, _)| *refused == name)
                {
                    self.reject(stmt, format!("def {name}"), *reason);
                }
                if function.type_params.is_some() {
                    self.reject(
                        stmt,
                        format!("def {name}[…]"),
                        "type parameter syntax is not supported; use typing.TypeVar",
                    );
                }
                for parameter in function.parameters.iter() {
                    let parameter = parameter.name().as_str();
                    if parameter.starts_with("__") || parameter.starts_with("_pvm") {
                        self.check_name(stmt, parameter);
                    }
                }
            }
            Stmt::ClassDef(class) => {
                let name = class.name.as_str();
                self.check_name(stmt, name);
                if class.type_params.is_some() {
                    self.reject(
                        stmt,
                        format!("class {name}[…]"),
                        "type parameter syntax is not supported; use typing.Generic",
                    );
                }
            }
            Stmt::With(with) if with.is_async => {
                self.reject(stmt, "async with", "async code is not supported")
            }
            Stmt::TypeAlias(_) => self.reject(
                stmt,
                "type",
                "type statements are not supported; assign the alias (Alias = dict[str, int])",
            ),
            Stmt::IpyEscapeCommand(_) => self.reject(stmt, "escape command", "not Python"),
            Stmt::Try(try_stmt) if try_stmt.is_star => {
                self.reject(stmt, "try/except*", "exception groups are not supported")
            }
            Stmt::For(for_stmt) if for_stmt.is_async => {
                self.reject(stmt, "async for", "async code is not supported")
            }
            // Every assignment, augmented-assignment, loop and comprehension
            // target CPython accepts is admitted: the instrumenter evaluates
            // a target's parts once and draws what a starred target unpacks
            // through a charged list (`instrument::stores`).
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
                if let Some(reason) = crate::rules::names::refuse_attribute(attr) {
                    self.reject(expr, format!("attribute .{attr}"), reason);
                } else if crate::rules::names::FORMAT_METHODS.contains(&attr) {
                    self.reject(
                        expr,
                        format!("attribute .{attr}"),
                        "str.format and format_map can only be called in place (\"{}\".format(x)), where the VM checks the template",
                    );
                }
            }
            Expr::Call(call) => {
                // `"…".format(…)` in place: the attribute itself is fine.
                if let Expr::Attribute(attribute) = call.func.as_ref() {
                    if crate::rules::names::FORMAT_METHODS.contains(&attribute.attr.as_str()) {
                        self.visit_expr(&attribute.value);
                        for argument in call.arguments.args.iter() {
                            self.visit_expr(argument);
                        }
                        for keyword in call.arguments.keywords.iter() {
                            self.visit_expr(&keyword.value);
                        }
                        return;
                    }
                }
            }
            Expr::Await(_) => self.reject(expr, "await", "async code is not supported"),
            Expr::TString(_) => self.reject(
                expr,
                "template string",
                "template strings are not supported",
            ),
            Expr::IpyEscapeCommand(_) => self.reject(expr, "escape command", "not Python"),
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. })
                if generators.iter().any(|g| g.is_async) =>
            {
                self.reject(expr, "async comprehension", "async code is not supported");
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
    /// A literal format spec is checked here (widths of at most four
    /// digits); a computed one (`f"{name:<{width}}"`) is checked when it
    /// runs (`_pvm_format`), and may itself only contain literal specs.
    fn check_fstring(&mut self, expr: &Expr, fstring: &ast::ExprFString) {
        for element in fstring.value.elements() {
            let ast::InterpolatedStringElement::Interpolation(interpolation) = element else {
                continue;
            };
            let Some(spec) = &interpolation.format_spec else {
                continue;
            };
            let mut literal = String::new();
            let mut computed = false;
            for part in &spec.elements {
                match part {
                    ast::InterpolatedStringElement::Literal(text) => literal.push_str(&text.value),
                    ast::InterpolatedStringElement::Interpolation(inner) => {
                        computed = true;
                        if inner.format_spec.as_ref().is_some_and(|inner_spec| {
                            inner_spec.elements.iter().any(|e| {
                                matches!(e, ast::InterpolatedStringElement::Interpolation(_))
                            })
                        }) {
                            self.reject(
                                expr,
                                self.snippet(expr),
                                "a format spec inside a computed format spec must be literal",
                            );
                        }
                    }
                }
            }
            if computed {
                if interpolation.debug_text.is_some() {
                    self.reject(
                        expr,
                        self.snippet(expr),
                        "a computed format spec cannot be combined with `=`",
                    );
                }
                continue;
            }
            if let Err(reason) = crate::rules::formatting::check_format_spec(&literal) {
                self.reject(expr, self.snippet(expr), reason);
            }
        }
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
            check("class A:\n    def f(self):\n        x = 1\n        return id(x)\n").unwrap_err();
        assert_eq!(rejection.line, 4);
        assert_eq!(rejection.construct, "name id");
        assert!(rejection.to_string().starts_with("line 4: name id:"));
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
                "class A:\n    def f(self):\n        return list(map('{}'.format_map, []))\n",
                "attribute .format_map",
            ),
            (
                "class A:\n    def f(self):\n        return vars()\n",
                "name vars",
            ),
            (
                "class A:\n    def f(self):\n        g = '{}'.format\n",
                "attribute .format",
            ),
            (
                "class A:\n    def __del__(self):\n        pass\n",
                "def __del__",
            ),
            (
                "class A:\n    def f(self):\n        return self._pvm_x\n",
                "attribute ._pvm_x",
            ),
            (
                "class A:\n    def f(self, e):\n        return e._value_\n",
                "attribute ._value_",
            ),
            (
                "class A:\n    async def f(self):\n        pass\n",
                "async def f",
            ),
            (
                "class A:\n    def f(self):\n        return f'{1:>99999}'\n",
                "f'{1:>99999}'",
            ),
            ("class A(metaclass=M):\n    pass\n", "class A"),
            ("for x in y:\n    pass\nclass A:\n    pass\n", "for x in y:"),
            ("print(1)\nclass A:\n    pass\n", "name print"),
        ] {
            let rejection = check(source).expect_err(source);
            assert_eq!(rejection.construct, construct, "{source}: {rejection}");
        }
    }

    #[test]
    fn forbidden_builtins_may_be_bound_as_names_but_not_read_as_builtins() {
        check("class Order:\n    id: int = 0\n    def f(self, type, hash=1):\n        return [type, hash]\n").unwrap();
        let rejection = check("class A:\n    def f(self):\n        return id(self)\n").unwrap_err();
        assert_eq!(rejection.construct, "name id");
    }

    #[test]
    fn chained_comparisons_that_split_into_pairs_are_accepted() {
        for source in [
            "class A:\n    def f(self, a, b, c):\n        return a == b < c\n",
            "class A:\n    def f(self, a):\n        return self.b() < a == 3\n",
            "class A:\n    def f(self, i, n):\n        return 0 <= i < n\n",
            "class A:\n    def f(self, a, c):\n        return a == self.b() == c\n",
        ] {
            check(source).expect(source);
        }
    }
}
