//! Which local variables of a function provably hold small numbers, so that
//! operators on them need no size guard ([`super::Rewriter::is_small`]).
//!
//! A guarded operator costs a native call (~70 ns in RustPython, against
//! ~35 ns for a plain `-` of two ints), and ordinary loops are full of them
//! on locals no caller can reach: `row - c` with `c` a `range` index,
//! `seed = (seed * 1103515245 + 12345) % 2147483648`, `count += 1`. This
//! module proves such locals bounded from how the function binds them; the
//! proof must hold for any actor, so it accepts only a few binding shapes.
//!
//! A function's local is a candidate when every binding of it in the
//! function is one of
//!
//! - `x = e` (alone or in a chain `x = y = e`),
//! - `x += e`, `x -= e`, or `x = x + e`, `x = e + x`, `x = x - e`,
//! - `x %= m` with `m` a non-zero int literal,
//! - `for x in range(…)` (the builtin `range`, which the module never rebinds),
//!
//! and it is not a parameter, never deleted, never a `global`/`nonlocal`
//! name anywhere in the module, and never the target of `:=` (anywhere in
//! the function, comprehensions included). Then three sets, each proved by
//! induction over the function's bindings:
//!
//! 1. **Numbers** (`numeric`): every binding yields an `int`, `float`,
//!    `bool` or `complex` when the numbers it reads are numbers — a
//!    literal, `len(…)`, a `range` index, or arithmetic of numbers. (Not a
//!    user object: its `__add__` could return anything.)
//! 2. **Bounded** (`bounded`): every binding yields a value of at most a
//!    fixed size — a literal, `len(…)` (< 2⁶³), a `range` index (no larger
//!    than the range's bounds), a bounded local copied, `e % m` of a number
//!    `e` (smaller than `m`), or `x %= m`. Nothing here grows with the
//!    variable's previous value, so no loop can grow it.
//! 3. **Counters**: the bounded bindings plus `x += e` / `x -= e` with `e`
//!    bounded. Each step adds at most a bounded amount, so after `n` steps
//!    the value is at most `n` times that bound: a few dozen bits more than
//!    the bound for any execution the cycle limit allows — never doubling
//!    (`x += x` is not a counter step: its increment is not bounded).
//!
//! The counters (which include the bounded locals) are what
//! [`bounded_locals`] returns. Their values are ints of bounded size, so an
//! exempt operator on them does work bounded the way `x + 1` already is.
//! Inside a nested function, lambda, class or comprehension the caller
//! knows nothing ([`super::Rewriter`] clears the set): a nested scope may
//! have its own variable of the same name.

use std::collections::{HashMap, HashSet};

use ruff_python_ast::visitor::{self as read, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};

use super::{imported_names, Bindings};

/// Is `expr` a call of the builtin `name` (which `module` never binds)
/// with `arity` plain positional arguments and nothing else?
fn is_builtin_call(
    expr: &Expr,
    name: &str,
    arity: std::ops::RangeInclusive<usize>,
    module: &Bindings,
) -> bool {
    let Expr::Call(call) = expr else { return false };
    matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == name)
        && call.arguments.keywords.is_empty()
        && arity.contains(&call.arguments.args.len())
        && !call
            .arguments
            .args
            .iter()
            .any(|a| matches!(a, Expr::Starred(_)))
        && !module.binds(name)
}

/// Is `expr` `len(x)` of the builtin `len`?
pub(super) fn is_len_call(expr: &Expr, module: &Bindings) -> bool {
    is_builtin_call(expr, "len", 1..=1, module)
}

/// Is `expr` a call of the builtin `range` with plain positional arguments?
pub(super) fn is_plain_range(expr: &Expr, module: &Bindings) -> bool {
    is_builtin_call(expr, "range", 1..=3, module)
}

/// A number literal of bounded size: a float, a complex, or an int below
/// 2⁶⁴. An int literal may be as long as the source allows (a
/// 200,000-digit literal is 83 KB), and work with it grows with its size.
pub(super) fn is_small_literal(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(int),
            ..
        }) => int.as_u64().is_some(),
        Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => true,
        _ => false,
    }
}

/// A non-zero int literal below 2⁶⁴.
fn is_nonzero_int_literal(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(int),
            ..
        }) if int.as_u64().is_some_and(|m| m != 0)
    )
}

/// How a function binds one of its names.
enum Binding<'a> {
    /// `x = e`.
    Value(&'a Expr),
    /// `x += e`, `x -= e`, `x = x ± e`, `x = e + x`.
    Step(&'a Expr),
    /// `x %= m`, `m` a non-zero int literal.
    Modulo,
    /// `for x in range(…)`.
    RangeIndex,
    /// Anything else: a parameter, another target shape, `del`, `import`,
    /// `def`, `with … as`, `except … as`, a match capture, `:=`.
    Other,
}

/// The bindings of a function's own scope (not of the functions, classes,
/// lambdas and comprehensions nested in it).
struct ScopeBindings<'a, 'm> {
    bindings: HashMap<String, Vec<Binding<'a>>>,
    /// The module's bindings: whether it rebinds `range`.
    module: &'m Bindings,
}

impl<'a> ScopeBindings<'a, '_> {
    fn record(&mut self, name: &str, binding: Binding<'a>) {
        self.bindings
            .entry(name.to_string())
            .or_default()
            .push(binding);
    }
}

/// For `x = value`: is it a step of `x` (`x + e`, `e + x`, `x - e`), and by
/// what?
fn step_of<'a>(name: &str, value: &'a Expr) -> Option<&'a Expr> {
    let Expr::BinOp(binop) = value else {
        return None;
    };
    let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == name);
    match binop.op {
        ast::Operator::Add if is_name(&binop.left) => Some(&binop.right),
        ast::Operator::Add if is_name(&binop.right) => Some(&binop.left),
        ast::Operator::Sub if is_name(&binop.left) => Some(&binop.right),
        _ => None,
    }
}

impl<'a> Visitor<'a> for ScopeBindings<'a, '_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            // A nested scope: only its name (and decorators, defaults and
            // bases, which bind nothing but `:=`, found separately) belongs
            // to this one.
            Stmt::FunctionDef(function) => self.record(function.name.as_str(), Binding::Other),
            Stmt::ClassDef(class) => self.record(class.name.as_str(), Binding::Other),
            Stmt::Assign(assign)
                if assign
                    .targets
                    .iter()
                    .all(|target| matches!(target, Expr::Name(_))) =>
            {
                for target in &assign.targets {
                    let Expr::Name(name) = target else { continue };
                    let name = name.id.as_str();
                    let binding = match step_of(name, &assign.value) {
                        Some(step) => Binding::Step(step),
                        None => Binding::Value(&assign.value),
                    };
                    self.record(name, binding);
                }
                self.visit_expr(&assign.value);
            }
            Stmt::AugAssign(assign) if matches!(assign.target.as_ref(), Expr::Name(_)) => {
                let Expr::Name(name) = assign.target.as_ref() else {
                    return;
                };
                let binding = match assign.op {
                    ast::Operator::Add | ast::Operator::Sub => Binding::Step(&assign.value),
                    ast::Operator::Mod if is_nonzero_int_literal(&assign.value) => Binding::Modulo,
                    _ => Binding::Other,
                };
                self.record(name.id.as_str(), binding);
                self.visit_expr(&assign.value);
            }
            Stmt::For(for_stmt)
                if matches!(for_stmt.target.as_ref(), Expr::Name(_))
                    && is_plain_range(&for_stmt.iter, self.module) =>
            {
                if let Expr::Name(name) = for_stmt.target.as_ref() {
                    self.record(name.id.as_str(), Binding::RangeIndex);
                }
                self.visit_expr(&for_stmt.iter);
                self.visit_body(&for_stmt.body);
                self.visit_body(&for_stmt.orelse);
            }
            Stmt::Import(_) | Stmt::ImportFrom(_) => {
                for name in imported_names(stmt) {
                    self.record(name, Binding::Other);
                }
            }
            _ => read::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(name) if name.ctx != ast::ExprContext::Load => {
                self.record(name.id.as_str(), Binding::Other)
            }
            // Their own scopes (a `:=` inside is found separately).
            Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_) => {}
            _ => read::walk_expr(self, expr),
        }
    }

    fn visit_except_handler(&mut self, handler: &'a ast::ExceptHandler) {
        let ast::ExceptHandler::ExceptHandler(h) = handler;
        if let Some(name) = &h.name {
            self.record(name.as_str(), Binding::Other);
        }
        read::walk_except_handler(self, handler);
    }

    fn visit_pattern(&mut self, pattern: &'a ast::Pattern) {
        let captured = match pattern {
            ast::Pattern::MatchAs(p) => p.name.as_ref(),
            ast::Pattern::MatchStar(p) => p.name.as_ref(),
            ast::Pattern::MatchMapping(p) => p.rest.as_ref(),
            _ => None,
        };
        if let Some(name) = captured {
            self.record(name.as_str(), Binding::Other);
        }
        read::walk_pattern(self, pattern);
    }
}

/// Every `:=` target of a function body, comprehensions included (a `:=`
/// in a comprehension binds in the enclosing function), and of what a
/// nested function, lambda or class evaluates in it (decorators, defaults,
/// annotations, bases); not those of their bodies, which bind in their own
/// scope and are walked with their own function (so every function's proof
/// walks its own body once).
#[derive(Default)]
struct WalrusTargets {
    names: HashSet<String>,
}

impl<'a> Visitor<'a> for WalrusTargets {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(function) => {
                for decorator in &function.decorator_list {
                    self.visit_decorator(decorator);
                }
                self.visit_parameters(&function.parameters);
                if let Some(returns) = &function.returns {
                    self.visit_expr(returns);
                }
            }
            Stmt::ClassDef(class) => {
                for decorator in &class.decorator_list {
                    self.visit_decorator(decorator);
                }
                if let Some(arguments) = &class.arguments {
                    self.visit_arguments(arguments);
                }
            }
            _ => read::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Named(named) => {
                if let Expr::Name(name) = named.target.as_ref() {
                    self.names.insert(name.id.to_string());
                }
                read::walk_expr(self, expr);
            }
            Expr::Lambda(lambda) => {
                if let Some(parameters) = &lambda.parameters {
                    self.visit_parameters(parameters);
                }
            }
            _ => read::walk_expr(self, expr),
        }
    }
}

/// The analysis of one function (see the module docs).
struct Proof<'a, 'm> {
    /// The module's bindings: whether it rebinds `len`.
    module: &'m Bindings,
    bindings: HashMap<String, Vec<Binding<'a>>>,
}

impl Proof<'_, '_> {
    /// Does `expr` yield a number when the names in `numbers` hold numbers?
    fn numeric(&self, expr: &Expr, numbers: &HashSet<String>) -> bool {
        match expr {
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => true,
            Expr::Name(name) => numbers.contains(name.id.as_str()),
            Expr::UnaryOp(unary) => {
                unary.op != ast::UnaryOp::Not && self.numeric(&unary.operand, numbers)
            }
            Expr::BinOp(binop) => {
                binop.op != ast::Operator::MatMult
                    && self.numeric(&binop.left, numbers)
                    && self.numeric(&binop.right, numbers)
            }
            _ => is_len_call(expr, self.module),
        }
    }

    /// Is `expr` of a fixed bound when the names in `bounded` are (and those
    /// in `numbers` hold numbers)?
    fn bounded(&self, expr: &Expr, bounded: &HashSet<String>, numbers: &HashSet<String>) -> bool {
        match expr {
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => is_small_literal(expr),
            Expr::Name(name) => bounded.contains(name.id.as_str()),
            Expr::UnaryOp(unary) => {
                matches!(unary.op, ast::UnaryOp::USub | ast::UnaryOp::UAdd)
                    && self.bounded(&unary.operand, bounded, numbers)
            }
            Expr::BinOp(binop) => {
                binop.op == ast::Operator::Mod
                    && is_nonzero_int_literal(&binop.right)
                    && self.numeric(&binop.left, numbers)
            }
            _ => is_len_call(expr, self.module),
        }
    }

    /// The greatest set of candidates all of whose bindings `holds` accepts
    /// when the set is assumed. A worklist: a name is checked again only
    /// when a name whose membership its check needs (`depends`) leaves the
    /// set. Every check needs all of those names, so a name is checked at
    /// most twice while it stays in the set, and the whole proof is linear
    /// in the function's size (re-checking every name until nothing changed
    /// was quadratic in a chain of copies `a1 = a0`, `a2 = a1`, …, of which
    /// ~30,000 fit in a 256 KB source).
    fn fixed_point(
        &self,
        mut set: HashSet<String>,
        depends: &HashMap<String, Vec<String>>,
        holds: impl Fn(&Binding<'_>, &HashSet<String>) -> bool,
    ) -> HashSet<String> {
        let mut queue: Vec<String> = set.iter().cloned().collect();
        queue.sort_unstable();
        while let Some(name) = queue.pop() {
            if !set.contains(&name) || self.bindings[&name].iter().all(|b| holds(b, &set)) {
                continue;
            }
            set.remove(&name);
            if let Some(dependents) = depends.get(&name) {
                queue.extend(dependents.iter().filter(|d| set.contains(*d)).cloned());
            }
        }
        set
    }
}

/// For each name, the names whose check in one of the proof's steps needs
/// it: `read` gives, for a binding's expression, the names whose membership
/// the step's check asks about.
fn dependents(
    bindings: &HashMap<String, Vec<Binding<'_>>>,
    read: impl Fn(&Expr, &mut HashSet<String>),
) -> HashMap<String, Vec<String>> {
    let mut dependents: HashMap<String, Vec<String>> = HashMap::new();
    for (name, bindings) in bindings {
        let mut needed = HashSet::new();
        for binding in bindings {
            if let Binding::Value(e) | Binding::Step(e) = binding {
                read(e, &mut needed);
            }
        }
        for source in needed {
            dependents.entry(source).or_default().push(name.clone());
        }
    }
    dependents
}

/// The names [`Proof::numeric`] asks the numbers about: those of an
/// arithmetic expression, not inside `len(…)`.
fn arithmetic_names(expr: &Expr, into: &mut HashSet<String>) {
    match expr {
        Expr::Name(name) => {
            into.insert(name.id.to_string());
        }
        Expr::UnaryOp(unary) => arithmetic_names(&unary.operand, into),
        Expr::BinOp(binop) => {
            arithmetic_names(&binop.left, into);
            arithmetic_names(&binop.right, into);
        }
        _ => {}
    }
}

/// The names [`Proof::bounded`] asks the bounded set about: a copied name,
/// under unary signs (the left side of `% m` is asked of the numbers).
fn copied_name(expr: &Expr, into: &mut HashSet<String>) {
    match expr {
        Expr::Name(name) => {
            into.insert(name.id.to_string());
        }
        Expr::UnaryOp(unary) => copied_name(&unary.operand, into),
        _ => {}
    }
}

/// The locals of `function` that provably hold small ints (or other
/// numbers of bounded size): see the module docs.
pub(super) fn bounded_locals(
    function: &ast::StmtFunctionDef,
    module: &Bindings,
) -> HashSet<String> {
    let mut scope = ScopeBindings {
        bindings: HashMap::new(),
        module,
    };
    for parameter in function.parameters.iter() {
        scope.record(parameter.name().as_str(), Binding::Other);
    }
    scope.visit_body(&function.body);
    let mut walrus = WalrusTargets::default();
    walrus.visit_body(&function.body);

    let proof = Proof {
        module,
        bindings: scope.bindings,
    };
    let candidates: HashSet<String> = proof
        .bindings
        .iter()
        .filter(|(name, bindings)| {
            !module.declared.contains(*name)
                && !walrus.names.contains(*name)
                && !bindings.iter().any(|b| matches!(b, Binding::Other))
        })
        .map(|(name, _)| name.clone())
        .collect();

    let numbers = proof.fixed_point(
        candidates.clone(),
        &dependents(&proof.bindings, arithmetic_names),
        |binding, numbers| match binding {
            Binding::Value(e) | Binding::Step(e) => proof.numeric(e, numbers),
            Binding::Modulo | Binding::RangeIndex => true,
            Binding::Other => false,
        },
    );
    let bounded = proof.fixed_point(
        numbers.clone(),
        &dependents(&proof.bindings, copied_name),
        |binding, bounded| match binding {
            Binding::Value(e) => proof.bounded(e, bounded, &numbers),
            Binding::Modulo | Binding::RangeIndex => true,
            Binding::Step(_) | Binding::Other => false,
        },
    );
    numbers
        .iter()
        .filter(|name| {
            proof.bindings[*name].iter().all(|binding| match binding {
                Binding::Value(e) | Binding::Step(e) => proof.bounded(e, &bounded, &numbers),
                Binding::Modulo | Binding::RangeIndex => true,
                Binding::Other => false,
            })
        })
        .cloned()
        .collect()
}
