//! The metering rewrite: turns a validated actor AST into one that pays for
//! itself. It runs once per code hash at deploy, so its cost never reaches a
//! call. Its insertions reach natives defined in [`crate::interpreter::runtime`] under
//! names actors cannot write (`_pvm_*`; the one-argument ones as subscripts
//! of native objects, `_pvm_meter[n]`, which RustPython reaches without
//! building an argument list):
//!
//! 1. **Block meters.** Every function body, loop body (`for`, `while`, their
//!    `else`), `if`/`elif`/`else` branch and `try`/`except`/`finally` block
//!    starts with `_pvm_meter[n]`, where `n` is the static cost of the
//!    block's straight-line statements ([`crate::rules::costs::code`]); loops add the
//!    per-iteration cost (and a `while` its test), functions their entry cost.
//!    A `for` loop's body and each comprehension generator are instead
//!    charged by the iterator: `for x in xs` becomes
//!    `for x in _pvm_iter(xs, n)`, a native iterator that charges `n` each
//!    time it produces an item, i.e. just before the body (or the item's
//!    conditions and element) runs. That costs no extra bytecode per
//!    iteration, where a meter at the top of the body was a full native call
//!    (most of the metering overhead of a tight loop). Lambdas wrap their
//!    body as `_pvm_meter[n] and body`. A block is charged on entry, before
//!    its work, so running out aborts at the start of the block that does not
//!    fit — the same point on every run.
//! 2. **Size guards.** Operations whose work grows with their operands are
//!    routed through guards that pre-check and charge by size: binary
//!    operators (`_pvm_binop_add(a, b)`, …), augmented assignment to any target
//!    (`_pvm_augop`, [`stores`]), starred arguments and targets (`_pvm_materialize`,
//!    `_pvm_unpack`, `_pvm_kwargs`), f-strings (`_pvm_result`) and their
//!    computed specs (`_pvm_format`, [`fstrings`]). Comparisons are left as
//!    written: they stay generic instructions ([`crate::interpreter::generic_ops`]), so
//!    the types' comparison slots charge them.
//! 3. **Store guards.** `_pvm_mut[c]` on the container of every subscript
//!    store ([`stores`]): values made at load are restored after a call that
//!    wrote them ([`crate::interpreter::constants`]).
//!
//! Builtins with size-dependent cost are replaced by guarded versions in the
//! actor's builtins dict instead of being rewritten here, and every native
//! method charges its own work (`crate::meter::natives`).
//!
//! Synthesised nodes carry the range of the code they meter, so line numbers
//! in tracebacks stay those of the actor's source.

use std::cell::RefCell;
use std::collections::HashSet;

use ruff_python_ast::relocate::relocate_expr;
use ruff_python_ast::visitor::transformer::{walk_expr, walk_stmt, Transformer};
use ruff_python_ast::visitor::{self as read, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

mod bounded;
mod fstrings;
mod stores;

use crate::rules::costs::code as cost;
use crate::rules::guards::{Guard, OperatorCode, GUARD_PREFIX};

/// Rewrites `module` in place.
pub fn instrument(module: &mut ast::ModModule) {
    instrument_with(module, true);
}

/// Rewrites `module` in place, without the `_pvm_mut` guard on subscript
/// stores: for an actor module whose load leaves no mutable value (see
/// [`crate::deploy::compile::CompiledActor`]). Its functions can then only write
/// into what the call made.
pub fn instrument_without_store_guards(module: &mut ast::ModModule) {
    instrument_with(module, false);
}

fn instrument_with(module: &mut ast::ModModule, guard_stores: bool) {
    let mut bindings = Bindings::default();
    bindings.visit_body(&module.body);
    let rewriter = Rewriter {
        small_names: RefCell::new(HashSet::new()),
        pattern_types: PATTERN_TYPES
            .iter()
            .copied()
            .filter(|name| !bindings.binds(name))
            .collect(),
        module: bindings,
        exempt_products: RefCell::new(HashSet::new()),
        guard_stores,
    };
    for stmt in module.body.iter_mut() {
        rewriter.visit_stmt(stmt);
    }
}

/// Every name `module` binds anywhere (see [`Bindings`]).
pub(crate) fn bound_names(module: &ast::ModModule) -> HashSet<String> {
    let mut bindings = Bindings::default();
    bindings.visit_body(&module.body);
    bindings
        .bound
        .into_iter()
        .chain(bindings.declared)
        .collect()
}

/// Names a piece of code binds — assignment and `del` targets, loop,
/// comprehension and `with` targets, `:=`, `def`/`class` names, imports,
/// parameters, `except … as`, match captures — and names it declares
/// `global` or `nonlocal`.
#[derive(Debug, Default)]
struct Bindings {
    bound: HashSet<String>,
    declared: HashSet<String>,
}

impl Bindings {
    fn binds(&self, name: &str) -> bool {
        self.bound.contains(name) || self.declared.contains(name)
    }
}

/// The names an `import` or `from … import` statement binds (`import a.b`
/// binds `a`); none for any other statement.
fn imported_names(stmt: &Stmt) -> impl Iterator<Item = &str> {
    let (plain, from): (&[ast::Alias], &[ast::Alias]) = match stmt {
        Stmt::Import(import) => (&import.names, &[]),
        Stmt::ImportFrom(import) => (&[], &import.names),
        _ => (&[], &[]),
    };
    let plain = plain.iter().map(|alias| {
        let name = alias.asname.as_ref().unwrap_or(&alias.name).as_str();
        name.split('.').next().unwrap_or(name)
    });
    let from = from
        .iter()
        .map(|alias| alias.asname.as_ref().unwrap_or(&alias.name).as_str());
    plain.chain(from)
}

impl<'a> Visitor<'a> for Bindings {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(function) => {
                self.bound.insert(function.name.to_string());
            }
            Stmt::ClassDef(class) => {
                self.bound.insert(class.name.to_string());
            }
            Stmt::Import(_) | Stmt::ImportFrom(_) => {
                self.bound.extend(imported_names(stmt).map(str::to_string));
            }
            Stmt::Global(global) => {
                self.declared
                    .extend(global.names.iter().map(|n| n.to_string()));
            }
            Stmt::Nonlocal(nonlocal) => {
                self.declared
                    .extend(nonlocal.names.iter().map(|n| n.to_string()));
            }
            _ => {}
        }
        read::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(name) = expr {
            if name.ctx != ast::ExprContext::Load {
                self.bound.insert(name.id.to_string());
            }
        }
        read::walk_expr(self, expr);
    }

    fn visit_parameter(&mut self, parameter: &'a ast::Parameter) {
        self.bound.insert(parameter.name.to_string());
        read::walk_parameter(self, parameter);
    }

    fn visit_except_handler(&mut self, handler: &'a ast::ExceptHandler) {
        let ast::ExceptHandler::ExceptHandler(h) = handler;
        if let Some(name) = &h.name {
            self.bound.insert(name.to_string());
        }
        read::walk_except_handler(self, handler);
    }

    fn visit_pattern(&mut self, pattern: &'a ast::Pattern) {
        match pattern {
            ast::Pattern::MatchAs(p) => self.bound.extend(p.name.iter().map(|n| n.to_string())),
            ast::Pattern::MatchStar(p) => self.bound.extend(p.name.iter().map(|n| n.to_string())),
            ast::Pattern::MatchMapping(p) => {
                self.bound.extend(p.rest.iter().map(|n| n.to_string()))
            }
            _ => {}
        }
        read::walk_pattern(self, pattern);
    }
}

/// Largest literal `c` for which `i * c` on a `range` loop index is exempt.
const MAX_INDEX_MULTIPLIER: u64 = 1 << 31;

/// Finds `name * c` / `c * name` (`c` a small int literal) that run at most
/// once per iteration of the loop whose body is walked: not inside nested
/// loops, functions, lambdas or comprehensions.
struct IndexProducts<'n> {
    name: &'n str,
    found: Vec<(TextRange, u64)>,
}

impl<'a> Visitor<'a> for IndexProducts<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        if !matches!(
            stmt,
            Stmt::For(_) | Stmt::While(_) | Stmt::FunctionDef(_) | Stmt::ClassDef(_)
        ) {
            read::walk_stmt(self, stmt);
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_) => {}
            Expr::BinOp(binop) if binop.op == ast::Operator::Mult => {
                let is_index = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == self.name);
                let found = match (binop.left.as_ref(), binop.right.as_ref()) {
                    (l, r) if is_index(l) => multiplier(r),
                    (l, r) if is_index(r) => multiplier(l),
                    _ => None,
                };
                match found {
                    Some(c) => self.found.push((binop.range, c)),
                    None => read::walk_expr(self, expr),
                }
            }
            _ => read::walk_expr(self, expr),
        }
    }
}

fn template(text: &str, range: TextRange) -> Expr {
    let parsed = ruff_python_parser::parse_expression(text).expect("VM-generated template parses");
    let mut expr = *parsed.into_syntax().body;
    relocate_expr(&mut expr, range);
    expr
}

/// `func(*prefix_args, *args)` located at `range`.
fn guard_call(func: &str, args: Vec<Expr>, keywords: Vec<ast::Keyword>, range: TextRange) -> Expr {
    let mut call = template(&format!("{func}()"), range);
    if let Expr::Call(call) = &mut call {
        call.arguments.args = args.into_boxed_slice();
        call.arguments.keywords = keywords.into_iter().collect();
    }
    call
}

fn int_literal(value: u64, range: TextRange) -> Expr {
    template(&value.to_string(), range)
}

/// `guard[value]`: a one-argument guard as a subscript of its native object
/// (see [`crate::meter::guard_natives::subscript_guard`]), cheaper than a call.
fn guard_subscript(guard: Guard, value: Expr, range: TextRange) -> Expr {
    Expr::Subscript(ast::ExprSubscript {
        node_index: Default::default(),
        range,
        value: Box::new(template(guard.name(), range)),
        slice: Box::new(value),
        ctx: ast::ExprContext::Load,
    })
}

/// Is `expr` the one-argument guard `guard[…]`?
fn subscripted_guard(expr: &Expr) -> Option<Guard> {
    let Expr::Subscript(subscript) = expr else {
        return None;
    };
    let Expr::Name(name) = subscript.value.as_ref() else {
        return None;
    };
    Guard::from_name(name.id.as_str()).filter(|guard| guard.is_subscripted())
}

/// `_pvm_meter[amount]` (see [`crate::meter::guard_natives::meter_object`]).
fn meter_call(amount: u64, range: TextRange) -> Expr {
    template(&format!("{}[{amount}]", Guard::Meter.name()), range)
}

fn meter_stmt(amount: u64, range: TextRange) -> Stmt {
    let source = format!("{}[0]", Guard::Meter.name());
    let parsed = ruff_python_parser::parse_module(&source).expect("VM-generated template parses");
    let mut stmt = parsed
        .into_syntax()
        .body
        .into_iter()
        .next()
        .expect("one statement");
    if let Stmt::Expr(expr_stmt) = &mut stmt {
        expr_stmt.range = range;
        *expr_stmt.value = meter_call(amount, range);
    }
    stmt
}

fn take(expr: &mut Expr) -> Expr {
    std::mem::replace(expr, Expr::NoneLiteral(ast::ExprNoneLiteral::default()))
}

/// The operators [`Rewriter::exempt`] may leave unguarded: `*`, `**` and
/// `<<` amplify, `@` is never a number's.
fn is_exempt_kind(op: ast::Operator) -> bool {
    use ast::Operator::*;
    matches!(
        op,
        Add | Sub | Div | FloorDiv | Mod | BitAnd | BitOr | BitXor | RShift
    )
}

/// The value of an int literal of at most [`MAX_INDEX_MULTIPLIER`]: what
/// an exempt product may multiply by ([`Rewriter::exempt`],
/// [`IndexProducts`]).
fn multiplier(expr: &Expr) -> Option<u64> {
    match expr {
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(int),
            ..
        }) => int.as_u64().filter(|c| *c <= MAX_INDEX_MULTIPLIER),
        _ => None,
    }
}

fn is_guard_name(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(name) if name.id.as_str().starts_with(GUARD_PREFIX))
}

struct Rewriter {
    /// Insert the `_pvm_mut` guard on subscript stores ([`stores`]).
    guard_stores: bool,
    /// Every name the module binds or declares `global`/`nonlocal`
    /// anywhere ([`Bindings`]): a rebound `range` or `len` proves nothing, a
    /// declared name may be rebound by any call.
    module: Bindings,
    /// Locals of the function being rewritten that hold small numbers
    /// ([`bounded`]); empty outside functions and inside nested scopes.
    small_names: RefCell<HashSet<String>>,
    /// `i * c` products exempt from `_pvm_binop` ([`Rewriter::exempt_index_products`]).
    exempt_products: RefCell<HashSet<TextRange>>,
    /// The builtin type names ([`PATTERN_TYPES`]) the module never rebinds.
    pattern_types: HashSet<&'static str>,
}

/// Builtin types a class pattern may name (`case int(x)`). Actors see
/// metered stand-ins under these names (`crate::interpreter::builtin_types`), which a
/// class pattern does not accept; the instrumenter names the real type
/// instead, through a `_pvm_type_…` builtin only rewritten code can write.
pub const PATTERN_TYPES: &[&str] = &[
    "int",
    "str",
    "bytes",
    "bytearray",
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
];

/// The builtin under which the real type of `name` is visible to class
/// patterns.
pub fn pattern_type_name(name: &str) -> String {
    format!("{GUARD_PREFIX}type_{name}")
}

/// Points class patterns naming a builtin type at the real type.
fn rewrite_class_patterns(pattern: &mut ast::Pattern, types: &HashSet<&'static str>) {
    match pattern {
        ast::Pattern::MatchClass(class) => {
            if let Expr::Name(name) = class.cls.as_mut() {
                if types.contains(name.id.as_str()) {
                    name.id = pattern_type_name(name.id.as_str()).into();
                }
            }
            for inner in class.arguments.patterns.iter_mut() {
                rewrite_class_patterns(inner, types);
            }
            for keyword in class.arguments.keywords.iter_mut() {
                rewrite_class_patterns(&mut keyword.pattern, types);
            }
        }
        ast::Pattern::MatchSequence(sequence) => {
            for inner in sequence.patterns.iter_mut() {
                rewrite_class_patterns(inner, types);
            }
        }
        ast::Pattern::MatchMapping(mapping) => {
            for inner in mapping.patterns.iter_mut() {
                rewrite_class_patterns(inner, types);
            }
        }
        ast::Pattern::MatchAs(as_pattern) => {
            if let Some(inner) = as_pattern.pattern.as_deref_mut() {
                rewrite_class_patterns(inner, types);
            }
        }
        ast::Pattern::MatchOr(or) => {
            for inner in or.patterns.iter_mut() {
                rewrite_class_patterns(inner, types);
            }
        }
        _ => {}
    }
}

impl Rewriter {
    /// Whether `expr` (already rewritten) always evaluates to a *small*
    /// built-in number or raises: number literals below 2⁶⁴ (a longer int
    /// literal costs by its length: `t = BIG + 1` of a 200,000-digit
    /// literal walks its limbs on every use), `len(…)` of the builtin, the
    /// function's small locals ([`bounded`]), `not x`, unary operators on
    /// small numbers, exempt operators ([`Rewriter::exempt`]) between small
    /// numbers, a small name or literal times a small literal, and `y % m`
    /// for a small `m` when `y` is an int (a product of a `range` loop
    /// index, [`Rewriter::exempt_index_products`]): its result is smaller
    /// than `m`. Built-in types give a number or
    /// raise: no built-in type but the sequences' `*` (never exempt) and
    /// `str`/`bytes` `%` (removed from those types, `crate::interpreter::runtime`)
    /// combines with a number into a non-number.
    ///
    /// Small, not merely numeric: `x - 0` is a number whenever it is
    /// anything, but as large as `x`, and `x += x - 0` doubles `x` once per
    /// iteration. When it counted (until #30's last session), that loop ran
    /// unguarded past the integer cap: 10,000,000 cycles bought 28 s of
    /// big-int additions. And `y % 7` of an unknown `y` may run a class's
    /// `__mod__`, which may return anything (a large set, which an
    /// unguarded `s |= o % 7` would walk inside Rust).
    fn is_small(&self, expr: &Expr) -> bool {
        match expr {
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => bounded::is_small_literal(expr),
            Expr::Name(name) => self.small_names.borrow().contains(name.id.as_str()),
            Expr::Call(_) => bounded::is_len_call(expr, &self.module),
            Expr::UnaryOp(unary) => unary.op == ast::UnaryOp::Not || self.is_small(&unary.operand),
            // A small atom times a small literal (see `exempt`).
            Expr::BinOp(binop) if binop.op == ast::Operator::Mult => {
                self.exempt(binop.op, &binop.left, &binop.right)
            }
            // Each operand is looked at once (a chain `1 + 1 + … + 1` is a
            // left spine as deep as it is long). With both operands small,
            // the operator is exempt iff it is one of the exempt kinds.
            Expr::BinOp(binop) => {
                is_exempt_kind(binop.op)
                    && self.is_small(&binop.right)
                    && (self.is_small(&binop.left)
                        || (binop.op == ast::Operator::Mod
                            && self.exempt_products.borrow().contains(&binop.left.range())))
            }
            _ => false,
        }
    }

    /// Operators whose work is bounded when one operand is a small number (a
    /// literal, or an expression [`Rewriter::is_small`] proves yields one):
    /// the other operand must then be a number too (str/list/set raise
    /// `TypeError`; `str % x` is disabled at the type level) or an object
    /// whose operator method runs as metered Python; the result has at most
    /// one bit more than the larger operand, and integers are capped at
    /// [`crate::meter::sizes::MAX_INT_BITS`] by every guarded operation, so the
    /// operation is cheap and repeating it cannot grow an int past the cap.
    /// For augmented assignment the same holds of the target: `xs += 1`
    /// raises before any work. `*`, `**` and `<<` are never exempt: they
    /// amplify (`s * 2`, `2 ** n`).
    fn exempt(&self, op: ast::Operator, left: &Expr, right: &Expr) -> bool {
        use ast::Operator::Mod;
        // `"%d items" % n` is formatting, which the operator guard checks.
        if op == Mod
            && matches!(
                left,
                Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::FString(_)
            )
        {
            return false;
        }
        // A small name or literal times a small int literal: a product of
        // two bounded ints, whose work grows with one operand's limbs as a
        // sum's does (`seed * 1103515245`). Never a product's product: that
        // is not an atom, so chains stay guarded.
        if op == ast::Operator::Mult {
            let atom =
                |e: &Expr| matches!(e, Expr::Name(_) | Expr::NumberLiteral(_)) && self.is_small(e);
            return (multiplier(right).is_some() && atom(left))
                || (multiplier(left).is_some() && atom(right));
        }
        // The right side first: in a chain `x + 1 + 1 + …` it is the literal,
        // and the left spine is not walked again for every node.
        is_exempt_kind(op) && (self.is_small(right) || self.is_small(left))
    }

    /// `isinstance(x, int)`'s class argument with the real types of
    /// [`crate::rules::guards::REAL_TYPES`] in place of their stand-ins, in a tuple
    /// too (`(int, float)`), when the module binds neither `isinstance` nor
    /// the name: the same answer, without the stand-in's `__instancecheck__`.
    fn pass_real_types(&self, classes: &mut Expr) {
        match classes {
            Expr::Name(name) if name.ctx == ast::ExprContext::Load => {
                let visible = name.id.as_str();
                if let Some(hidden) = crate::rules::guards::real_type_name(visible)
                    .filter(|_| !self.module.binds(visible))
                {
                    name.id = hidden.into();
                }
            }
            Expr::Tuple(tuple) => tuple
                .elts
                .iter_mut()
                .for_each(|element| self.pass_real_types(element)),
            _ => {}
        }
    }

    /// For `for i in range(…)` whose body never rebinds `i`: marks each
    /// `i * c` (`c` a literal ≤ 2³¹) that runs at most once per iteration as
    /// exempt from the `_pvm_binop` guard and returns the `c`s, which
    /// `_pvm_iter` receives to charge what the guards would have charged.
    ///
    /// Why this is sound: `i` can only hold what the range yields, an `int`
    /// (the module never rebinds `range`, nothing in the body rebinds `i`,
    /// and no code anywhere declares `i` global or nonlocal, so no call can
    /// either); `int * small int` cannot amplify the way `seq * n` does, and
    /// its cost grows only with the bits of `i`, which the iterator knows
    /// from the range's bounds. `_pvm_iter` also refuses an exemption list
    /// on anything but a real `range`, in case this analysis ever misses a
    /// binding.
    fn exempt_index_products(&self, for_stmt: &ast::StmtFor) -> Vec<u64> {
        let Expr::Name(target) = for_stmt.target.as_ref() else {
            return Vec::new();
        };
        let name = target.id.as_str();
        if self.module.declared.contains(name)
            || !bounded::is_plain_range(&for_stmt.iter, &self.module)
        {
            return Vec::new();
        }
        let mut body_bindings = Bindings::default();
        body_bindings.visit_body(&for_stmt.body);
        if body_bindings.binds(name) {
            return Vec::new();
        }
        let mut products = IndexProducts {
            name,
            found: Vec::new(),
        };
        products.visit_body(&for_stmt.body);
        let mut exempt = self.exempt_products.borrow_mut();
        products
            .found
            .into_iter()
            .map(|(range, c)| {
                exempt.insert(range);
                c
            })
            .collect()
    }
}

impl Transformer for Rewriter {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        let multipliers = match stmt {
            Stmt::For(for_stmt) => self.exempt_index_products(for_stmt),
            _ => Vec::new(),
        };
        // A function's body sees its own small locals; a class body none.
        let scope = match stmt {
            Stmt::FunctionDef(function) => Some(bounded::bounded_locals(function, &self.module)),
            Stmt::ClassDef(_) => Some(HashSet::new()),
            _ => None,
        };
        let outer = scope.map(|names| self.small_names.replace(names));
        walk_stmt(self, stmt);
        if let Some(outer) = outer {
            self.small_names.replace(outer);
        }
        match stmt {
            _ if !self.guard_stores => {}
            Stmt::Assign(assign) => assign
                .targets
                .iter_mut()
                .for_each(stores::guard_store_target),
            Stmt::AnnAssign(assign) if assign.value.is_some() => {
                stores::guard_store_target(&mut assign.target)
            }
            Stmt::Delete(delete) => delete
                .targets
                .iter_mut()
                .for_each(stores::guard_store_target),
            Stmt::For(for_stmt) => stores::guard_store_target(&mut for_stmt.target),
            Stmt::With(with) => with
                .items
                .iter_mut()
                .filter_map(|item| item.optional_vars.as_deref_mut())
                .for_each(stores::guard_store_target),
            _ => {}
        }
        match stmt {
            Stmt::FunctionDef(function) => meter_suite(&mut function.body, cost::FUNCTION_ENTRY),
            // A class body runs once per class statement executed (in a
            // function, once per call): metered like any block. (Unmetered,
            // 300 classes of 3,000 assignments ran 0.26 s for 53k cycles.)
            Stmt::ClassDef(class) => meter_suite(&mut class.body, 0),
            // (`async for` never gets here: the validator rejects it.)
            Stmt::For(for_stmt) => {
                if has_starred_target(&for_stmt.target) {
                    materialize_items(&mut for_stmt.iter, &for_stmt.target);
                }
                let per_item =
                    cost::ITERATION + cost::STATEMENT + charge_rest_separately(&mut for_stmt.body);
                meter_iteration(&mut for_stmt.iter, per_item, &multipliers);
                meter_suite(&mut for_stmt.orelse, 0);
            }
            Stmt::While(while_stmt) => {
                let test = expr_cost(&while_stmt.test);
                meter_suite(&mut while_stmt.body, cost::ITERATION + test);
                meter_suite(&mut while_stmt.orelse, 0);
            }
            Stmt::If(if_stmt) => {
                meter_suite(&mut if_stmt.body, 0);
                for clause in &mut if_stmt.elif_else_clauses {
                    meter_suite(&mut clause.body, 0);
                }
            }
            Stmt::With(with) => meter_suite(&mut with.body, 0),
            Stmt::Match(match_stmt) => {
                for case in &mut match_stmt.cases {
                    meter_suite(&mut case.body, 0);
                    rewrite_class_patterns(&mut case.pattern, &self.pattern_types);
                }
                // A star pattern copies the rest of the subject (`case [x,
                // *rest]`, `case {**rest}`): charge the subject's size once.
                if match_stmt
                    .cases
                    .iter()
                    .any(|case| has_star_pattern(&case.pattern))
                {
                    let range = match_stmt.subject.range();
                    let subject = take(&mut match_stmt.subject);
                    *match_stmt.subject = guard_subscript(Guard::Result, subject, range);
                }
            }
            Stmt::Assign(assign) if assign.targets.iter().any(has_starred_target) => {
                // `first, *rest = xs` copies xs inside one instruction: draw
                // it through a charged list first (and the items a nested
                // starred target unpacks: `(p, *q), r = x`).
                let range = assign.value.range();
                let value = take(&mut assign.value);
                let shape = assign
                    .targets
                    .iter()
                    .find(|target| has_starred_target(target))
                    .and_then(nested_star_shape);
                *assign.value = match shape {
                    Some(shape) => guard_call(
                        Guard::Unpack.name(),
                        vec![value, template(&shape, range)],
                        Vec::new(),
                        range,
                    ),
                    None => guard_subscript(Guard::Materialize, value, range),
                };
            }
            Stmt::Try(try_stmt) => {
                meter_suite(&mut try_stmt.body, 0);
                for handler in &mut try_stmt.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    meter_suite(&mut handler.body, cost::EXCEPTION_HANDLED);
                }
                meter_suite(&mut try_stmt.orelse, 0);
                meter_suite(&mut try_stmt.finalbody, 0);
            }
            // `s %= args` is formatting when `s` is a string: the `%` slots
            // only run inside the operator guard, so it becomes
            // `s = _pvm_binop_mod(s, args)` (the same for numbers).
            Stmt::AugAssign(assign)
                if assign.op == ast::Operator::Mod
                    && !self.exempt(assign.op, &assign.target, &assign.value) =>
            {
                *stmt = stores::rewrite_augmented(assign, Guard::Binop, self.guard_stores);
            }
            // `x op= y` becomes `x = _pvm_augop(code, x, y)`: the guard sees
            // both operands, charges and pre-checks, and performs the
            // in-place operation ([`stores`]).
            Stmt::AugAssign(assign) if !self.exempt(assign.op, &assign.target, &assign.value) => {
                *stmt = stores::rewrite_augmented(assign, Guard::Augop, self.guard_stores);
            }
            // `xs[i] += 1`: the native operation (a number cannot grow a
            // container), with the container's mutation guard.
            Stmt::AugAssign(assign) if self.guard_stores => {
                stores::guard_store_target(&mut assign.target)
            }
            _ => {}
        }
    }

    fn visit_expr(&self, expr: &mut Expr) {
        // A nested scope may have a variable of the same name.
        let nested_scope = matches!(
            expr,
            Expr::Lambda(_)
                | Expr::ListComp(_)
                | Expr::SetComp(_)
                | Expr::DictComp(_)
                | Expr::Generator(_)
        );
        let outer = nested_scope.then(|| self.small_names.take());
        walk_expr(self, expr);
        if let Some(outer) = outer {
            self.small_names.replace(outer);
        }
        let range = expr.range();
        match expr {
            // Even two literals are guarded for `*`, `**`, `<<`: `2 ** 10**8`
            // is a bomb written entirely in constants.
            Expr::BinOp(binop)
                if !self.exempt(binop.op, &binop.left, &binop.right)
                    && !self.exempt_products.borrow().contains(&range) =>
            {
                let guard = OperatorCode::of(binop.op).binop_guard();
                let left = take(&mut binop.left);
                let right = take(&mut binop.right);
                *expr = guard_call(guard, vec![left, right], Vec::new(), range);
            }
            // Comparisons need no guard: they stay generic
            // (`crate::interpreter::generic_ops`) and the types' slots charge by size;
            // `in` is charged in the containers' membership slots
            // (`crate::meter::contains`).
            Expr::Call(call) => {
                // `**mapping` first, so that it is guarded whether or not the
                // call itself is rewritten below.
                for keyword in call.arguments.keywords.iter_mut() {
                    if keyword.arg.is_none() {
                        let inner_range = keyword.value.range();
                        let value = take(&mut keyword.value);
                        keyword.value = guard_subscript(Guard::Kwargs, value, inner_range);
                    }
                }
                // Method calls need no guard: every native method charges
                // its own work (`crate::meter::natives`).
                if !self.module.binds("isinstance")
                    && matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "isinstance")
                    && call.arguments.args.len() == 2
                    && call.arguments.keywords.is_empty()
                    && !call
                        .arguments
                        .args
                        .iter()
                        .any(|a| matches!(a, Expr::Starred(_)))
                {
                    self.pass_real_types(&mut call.arguments.args[1]);
                }
            }
            Expr::Starred(starred) if starred.ctx == ast::ExprContext::Load => {
                let inner_range = starred.value.range();
                let value = take(&mut starred.value);
                *starred.value = guard_subscript(Guard::Materialize, value, inner_range);
            }
            // Slices need no guard: the built-in sequences' subscript slots
            // charge what a slice selects before copying it
            // (`crate::meter::subscripts`).
            Expr::Set(set) => {
                // `{*x}` hashes every item into a new table inside one
                // instruction: its splat (already `_pvm_materialize[x]`,
                // the arm above, children first) becomes the set's guard.
                for elt in set.elts.iter_mut() {
                    if let Expr::Starred(starred) = elt {
                        if let Expr::Subscript(sub) = starred.value.as_mut() {
                            if let Expr::Name(name) = sub.value.as_mut() {
                                if name.id.as_str() == Guard::Materialize.name() {
                                    name.id = Guard::SetUnpack.name().into();
                                }
                            }
                        }
                    }
                }
            }
            Expr::Dict(dict) => {
                // `{**mapping}` copies every entry inside Rust, like a splat.
                for item in dict.items.iter_mut().filter(|item| item.key.is_none()) {
                    let inner_range = item.value.range();
                    let value = take(&mut item.value);
                    item.value = guard_subscript(Guard::Materialize, value, inner_range);
                }
            }
            Expr::FString(fstring) => {
                fstrings::guard_computed_specs(fstring);
                let formatted = take(expr);
                *expr = guard_subscript(Guard::Result, formatted, range);
            }
            Expr::Lambda(lambda) => {
                let body_cost = cost::FUNCTION_ENTRY + expr_cost(&lambda.body);
                let body = take(&mut lambda.body);
                let mut and = template(&format!("{}[0] and None", Guard::Meter.name()), range);
                if let Expr::BoolOp(bool_op) = &mut and {
                    bool_op.values = vec![meter_call(body_cost, range), body];
                }
                *lambda.body = and;
            }
            Expr::ListComp(ast::ExprListComp {
                elt, generators, ..
            })
            | Expr::Generator(ast::ExprGenerator {
                elt, generators, ..
            }) => {
                let element = expr_cost(elt);
                meter_generators(generators, element, self.guard_stores);
            }
            // Each element hashed and inserted into the set or dict being
            // built, as a native that builds one pays
            // (`costs::size::PER_ELEMENT_BUILT`): `{v: v for v in x}` of
            // 50,000 strings ran at 3.6–4.6× ordinary code per cycle, of
            // ranges and floats at 3.1×, when an item cost its iteration
            // only (the metering fuzzer, #47).
            Expr::SetComp(ast::ExprSetComp {
                elt, generators, ..
            }) => {
                let element = expr_cost(elt) + crate::rules::costs::size::PER_ELEMENT_BUILT;
                meter_generators(generators, element, self.guard_stores);
            }
            Expr::DictComp(ast::ExprDictComp {
                key,
                value,
                generators,
                ..
            }) => {
                let element = key.as_deref().map_or(0, expr_cost)
                    + expr_cost(value)
                    + crate::rules::costs::size::PER_ELEMENT_BUILT;
                meter_generators(generators, element, self.guard_stores);
            }
            _ => {}
        }
    }
}

fn meter_generators(generators: &mut [ast::Comprehension], element_cost: u64, guard_stores: bool) {
    let last = generators.len().saturating_sub(1);
    for (index, generator) in generators.iter_mut().enumerate() {
        if guard_stores {
            stores::guard_store_target(&mut generator.target);
        }
        if has_starred_target(&generator.target) {
            materialize_items(&mut generator.iter, &generator.target);
        }
        let mut per_item = cost::ITERATION + generator.ifs.iter().map(expr_cost).sum::<u64>();
        if index == last {
            per_item += element_cost;
        }
        // (async generators are rejected by the validator.)
        meter_iteration(&mut generator.iter, per_item, &[]);
    }
}

/// `iterable` becomes `_pvm_iter(iterable, per_item)`: the native iterator
/// charges `per_item` for every item it produces (none when it is exhausted).
fn meter_iteration(iterable: &mut Expr, per_item: u64, index_multipliers: &[u64]) {
    let range = iterable.range();
    let inner = take(iterable);
    let mut args = vec![inner, int_literal(per_item, range)];
    if !index_multipliers.is_empty() {
        let listed: Vec<String> = index_multipliers.iter().map(u64::to_string).collect();
        args.push(template(&format!("({},)", listed.join(", ")), range));
    }
    *iterable = guard_call(ITER_GUARD, args, Vec::new(), range);
}

/// The native that meters iteration (see the module docs).
const ITER_GUARD: &str = Guard::Iter.name();

/// Cost of a suite's own statements, excluding its nested suites.
fn suite_cost(body: &ast::Suite) -> u64 {
    body.iter().map(stmt_header_cost).sum()
}

/// `iterable` becomes `(_pvm_materialize[_pvm_item] for _pvm_item in
/// iterable)`: a starred loop target (`for first, *rest in rows`) copies
/// each item, so each is drawn through a charged list first (an infinite
/// iterator as an item runs out of cycles item by item).
fn materialize_items(iterable: &mut Expr, target: &Expr) {
    let range = iterable.range();
    let inner = take(iterable);
    let drawn = match nested_star_shape(target) {
        Some(shape) => format!("{}(_pvm_item, {shape})", Guard::Unpack.name()),
        None => format!("{}[_pvm_item]", Guard::Materialize.name()),
    };
    let mut generator = template(&format!("({drawn} for _pvm_item in _pvm_items)"), range);
    if let Expr::Generator(generator) = &mut generator {
        generator.generators[0].iter = inner;
    }
    *iterable = generator;
}

/// For a target with a starred name inside a nested tuple (`(p, *q), r`),
/// its shape as a Python literal for `_pvm_materialize`: per position `0`
/// (a name), `1` (the starred one) or the nested target's own shape.
/// `None` when no nested target is starred (materialising the value is
/// enough).
fn nested_star_shape(target: &Expr) -> Option<String> {
    fn shape(target: &Expr) -> String {
        match target {
            Expr::Starred(_) => "1".into(),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let inner: Vec<String> = elts.iter().map(shape).collect();
                format!("({},)", inner.join(", "))
            }
            _ => "0".into(),
        }
    }
    let nested = match target {
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => elts
            .iter()
            .any(|elt| !matches!(elt, Expr::Starred(_)) && has_starred_target(elt)),
        _ => false,
    };
    nested.then(|| shape(target))
}

/// Does an assignment target unpack with `*name`?
fn has_starred_target(target: &Expr) -> bool {
    match target {
        Expr::Starred(_) => true,
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            elts.iter().any(has_starred_target)
        }
        _ => false,
    }
}

/// Does a match pattern capture the rest of a sequence or mapping?
fn has_star_pattern(pattern: &ast::Pattern) -> bool {
    match pattern {
        ast::Pattern::MatchStar(_) => true,
        ast::Pattern::MatchMapping(mapping) => {
            mapping.rest.is_some() || mapping.patterns.iter().any(has_star_pattern)
        }
        ast::Pattern::MatchSequence(sequence) => sequence.patterns.iter().any(has_star_pattern),
        ast::Pattern::MatchClass(class) => {
            class.arguments.patterns.iter().any(has_star_pattern)
                || class
                    .arguments
                    .keywords
                    .iter()
                    .any(|keyword| has_star_pattern(&keyword.pattern))
        }
        ast::Pattern::MatchAs(as_pattern) => {
            as_pattern.pattern.as_deref().is_some_and(has_star_pattern)
        }
        ast::Pattern::MatchOr(or) => or.patterns.iter().any(has_star_pattern),
        _ => false,
    }
}

/// Inserts `_pvm_meter[extra + cost of the suite's own statements]` at its top.
/// A docstring stays the suite's first statement (`f.__doc__`, a class's
/// `__doc__`): the meter goes after it. What follows a statement that may
/// leave the suite (`if …: continue`, `if …: return x`) is charged by a
/// meter of its own after that statement ([`charge_rest_separately`]), so a
/// block that leaves early pays for what it ran.
fn meter_suite(body: &mut ast::Suite, extra: u64) {
    let Some(first) = body.first() else { return };
    let range = first.range();
    let docstring =
        matches!(first, Stmt::Expr(expr) if matches!(*expr.value, Expr::StringLiteral(_)));
    let amount = extra + charge_rest_separately(body);
    body.insert(usize::from(docstring), meter_stmt(amount, range));
}

/// Splits `body` after each statement that may leave it, inserting
/// `_pvm_meter[cost of what follows]` there; returns the cost of the
/// statements up to the first such split (what the suite's own meter, or
/// its loop's iterator, charges).
fn charge_rest_separately(body: &mut ast::Suite) -> u64 {
    let Some(exit) = body
        .iter()
        .position(may_leave)
        .filter(|index| index + 1 < body.len())
    else {
        return suite_cost(body);
    };
    let mut rest = body.split_off(exit + 1);
    let rest_range = rest[0].range();
    let rest_cost = charge_rest_separately(&mut rest);
    let prepaid = body
        .last_mut()
        .map_or(0, |split| prepay_lone_exit(split, rest_cost));
    let head = suite_cost(body) + prepaid;
    body.push(meter_stmt(rest_cost - prepaid, rest_range));
    body.extend(rest);
    head
}

/// For `if test: continue` (or `break`, or `return` of a name or a
/// literal, and no `elif`/`else`) followed by more of its suite: takes the
/// branch's own meter out and returns its amount, which the suite's head
/// then pays and the meter of the rest (`rest_cost`, at least as much)
/// charges less. Every path pays what it paid before — the branch's cost
/// once the head is paid; the rest's meter, which the other path meets
/// right after the `if`, that much less — without a meter call in a
/// branch many loops take on most iterations (`if c in cols: continue`:
/// ~50 ns in RustPython).
fn prepay_lone_exit(split: &mut Stmt, rest_cost: u64) -> u64 {
    let Stmt::If(if_stmt) = split else { return 0 };
    let lone_exit = if_stmt.elif_else_clauses.is_empty()
        && if_stmt.body.len() == 2
        && match &if_stmt.body[1] {
            Stmt::Continue(_) | Stmt::Break(_) => true,
            Stmt::Return(ret) => matches!(
                ret.value.as_deref(),
                None | Some(
                    Expr::Name(_)
                        | Expr::NumberLiteral(_)
                        | Expr::BooleanLiteral(_)
                        | Expr::NoneLiteral(_)
                )
            ),
            _ => false,
        };
    let Some(amount) = lone_exit
        .then(|| meter_amount_of(&if_stmt.body[0]))
        .flatten()
        .filter(|amount| *amount <= rest_cost)
    else {
        return 0;
    };
    if_stmt.body.remove(0);
    amount
}

/// The amount of a `_pvm_meter[n]` statement ([`meter_stmt`]).
fn meter_amount_of(stmt: &Stmt) -> Option<u64> {
    let Stmt::Expr(expr) = stmt else { return None };
    let Expr::Subscript(subscript) = expr.value.as_ref() else {
        return None;
    };
    if subscripted_guard(&expr.value) != Some(Guard::Meter) {
        return None;
    }
    match subscript.slice.as_ref() {
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(int),
            ..
        }) => int.as_u64(),
        _ => None,
    }
}

/// Can `stmt` end the suite it is in before the next statement runs (a
/// `return`, `raise`, `break` or `continue` in some branch of it; `break`
/// and `continue` of a loop nested in it do not count)?
fn may_leave(stmt: &Stmt) -> bool {
    fn leaves(body: &[Stmt], in_loop: bool) -> bool {
        body.iter().any(|stmt| leaves_one(stmt, in_loop))
    }
    fn leaves_one(stmt: &Stmt, in_loop: bool) -> bool {
        match stmt {
            Stmt::Return(_) | Stmt::Raise(_) => true,
            Stmt::Break(_) | Stmt::Continue(_) => !in_loop,
            Stmt::If(s) => {
                leaves(&s.body, in_loop)
                    || s.elif_else_clauses
                        .iter()
                        .any(|clause| leaves(&clause.body, in_loop))
            }
            Stmt::With(s) => leaves(&s.body, in_loop),
            Stmt::Try(s) => {
                leaves(&s.body, in_loop)
                    || leaves(&s.orelse, in_loop)
                    || leaves(&s.finalbody, in_loop)
                    || s.handlers.iter().any(|handler| {
                        let ast::ExceptHandler::ExceptHandler(handler) = handler;
                        leaves(&handler.body, in_loop)
                    })
            }
            Stmt::Match(s) => s.cases.iter().any(|case| leaves(&case.body, in_loop)),
            Stmt::For(s) => leaves(&s.body, true) || leaves(&s.orelse, in_loop),
            Stmt::While(s) => leaves(&s.body, true) || leaves(&s.orelse, in_loop),
            _ => false,
        }
    }
    leaves_one(stmt, false)
}

/// Cost of a statement excluding its nested suites (they meter themselves).
fn stmt_header_cost(stmt: &Stmt) -> u64 {
    let exprs: u64 = match stmt {
        Stmt::Expr(s) => expr_cost(&s.value),
        Stmt::Assign(s) => expr_cost(&s.value) + s.targets.iter().map(target_cost).sum::<u64>(),
        Stmt::AnnAssign(s) => s.value.as_deref().map_or(0, expr_cost) + target_cost(&s.target),
        Stmt::AugAssign(s) => cost::OPERATOR + expr_cost(&s.target) + expr_cost(&s.value),
        Stmt::Return(s) => s.value.as_deref().map_or(0, expr_cost),
        Stmt::If(s) => {
            expr_cost(&s.test)
                + s.elif_else_clauses
                    .iter()
                    .filter_map(|c| c.test.as_ref())
                    .map(expr_cost)
                    .sum::<u64>()
        }
        Stmt::For(s) => expr_cost(&s.iter),
        Stmt::While(s) => expr_cost(&s.test),
        Stmt::Raise(s) => s.exc.as_deref().map_or(0, expr_cost) + cost::CALL,
        Stmt::Assert(s) => expr_cost(&s.test) + s.msg.as_deref().map_or(0, expr_cost),
        Stmt::Delete(s) => s.targets.iter().map(target_cost).sum(),
        Stmt::FunctionDef(_) => cost::FUNCTION_CREATION,
        Stmt::ClassDef(_) => cost::CONTAINER,
        // `__enter__` and `__exit__` are two calls.
        Stmt::With(s) => s
            .items
            .iter()
            .map(|item| expr_cost(&item.context_expr) + 2 * cost::CALL)
            .sum(),
        // Every case may be tried: its pattern's tests and its guard.
        Stmt::Match(s) => {
            expr_cost(&s.subject)
                + s.cases
                    .iter()
                    .map(|case| {
                        cost::STATEMENT + cost::CALL + case.guard.as_deref().map_or(0, expr_cost)
                    })
                    .sum::<u64>()
        }
        Stmt::Try(s) => s
            .handlers
            .iter()
            .map(|h| {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                h.type_.as_deref().map_or(0, expr_cost)
            })
            .sum(),
        _ => 0,
    };
    cost::STATEMENT + exprs
}

fn target_cost(target: &Expr) -> u64 {
    match target {
        Expr::Name(_) => 0,
        Expr::Subscript(s) => cost::SUBSCRIPT + expr_cost(&s.value) + expr_cost(&s.slice),
        Expr::Tuple(t) => t.elts.iter().map(target_cost).sum::<u64>() + cost::OPERATOR,
        Expr::List(l) => l.elts.iter().map(target_cost).sum::<u64>() + cost::OPERATOR,
        other => expr_cost(other),
    }
}

/// Static cost of evaluating `expr` once, excluding the bodies of lambdas and
/// comprehension items (metered where they run) and what callees charge.
pub(crate) fn expr_cost(expr: &Expr) -> u64 {
    match expr {
        Expr::Call(call) => {
            let arguments: u64 = call.arguments.args.iter().map(expr_cost).sum::<u64>()
                + call
                    .arguments
                    .keywords
                    .iter()
                    .map(|k| expr_cost(&k.value))
                    .sum::<u64>();
            if matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == ITER_GUARD) {
                // The iteration meter wraps an iterable the enclosing block
                // already pays for; its per-item charge is the loop's own.
                return call.arguments.args.first().map_or(0, expr_cost);
            }
            if is_guard_name(&call.func) {
                // Guards stand in for one operator; they charge sizes themselves.
                let is_meter = matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == Guard::Meter.name());
                if is_meter {
                    0
                } else {
                    cost::OPERATOR + arguments
                }
            } else {
                cost::CALL + expr_cost(&call.func) + arguments
            }
        }
        Expr::BinOp(b) => cost::OPERATOR + expr_cost(&b.left) + expr_cost(&b.right),
        Expr::UnaryOp(u) => cost::OPERATOR + expr_cost(&u.operand),
        Expr::BoolOp(b) => {
            cost::OPERATOR * b.values.len() as u64 + b.values.iter().map(expr_cost).sum::<u64>()
        }
        Expr::Compare(c) => {
            cost::OPERATOR * c.ops.len() as u64
                + expr_cost(&c.left)
                + c.comparators.iter().map(expr_cost).sum::<u64>()
        }
        Expr::Name(_) => cost::NAME,
        Expr::Attribute(a) => cost::ATTRIBUTE + expr_cost(&a.value),
        // The block meter and the mutation guard are bookkeeping, not the
        // program's work; the other one-argument guards stand in for one
        // operator, like the called ones.
        Expr::Subscript(s) if subscripted_guard(expr).is_some() => match subscripted_guard(expr) {
            Some(Guard::Meter) => 0,
            Some(Guard::Mutate) => expr_cost(&s.slice),
            _ => cost::OPERATOR + expr_cost(&s.slice),
        },
        // The block meter and the mutation guard are bookkeeping, not the
        // program's work; the other one-argument guards stand in for one
        // operator, like the called ones.
        Expr::Subscript(s) if subscripted_guard(expr).is_some() => match subscripted_guard(expr) {
            Some(Guard::Meter) => 0,
            Some(Guard::Mutate) => expr_cost(&s.slice),
            _ => cost::OPERATOR + expr_cost(&s.slice),
        },
        Expr::Subscript(s) => cost::SUBSCRIPT + expr_cost(&s.value) + expr_cost(&s.slice),
        Expr::Slice(s) => [&s.lower, &s.upper, &s.step]
            .into_iter()
            .flatten()
            .map(|e| expr_cost(e))
            .sum(),
        Expr::List(l) => {
            cost::CONTAINER + l.elts.len() as u64 + l.elts.iter().map(expr_cost).sum::<u64>()
        }
        Expr::Tuple(t) => {
            cost::CONTAINER + t.elts.len() as u64 + t.elts.iter().map(expr_cost).sum::<u64>()
        }
        Expr::Set(s) => {
            cost::CONTAINER + s.elts.len() as u64 + s.elts.iter().map(expr_cost).sum::<u64>()
        }
        Expr::Dict(d) => {
            cost::CONTAINER
                + d.items.len() as u64
                + d.items
                    .iter()
                    .map(|item| item.key.as_ref().map_or(0, expr_cost) + expr_cost(&item.value))
                    .sum::<u64>()
        }
        Expr::FString(f) => {
            cost::FORMAT
                + f.value
                    .elements()
                    .filter_map(|e| match e {
                        ast::InterpolatedStringElement::Interpolation(i) => {
                            Some(cost::FORMAT_INTERPOLATION + expr_cost(&i.expression))
                        }
                        ast::InterpolatedStringElement::Literal(_) => None,
                    })
                    .sum::<u64>()
        }
        Expr::If(i) => {
            cost::OPERATOR + expr_cost(&i.test) + expr_cost(&i.body) + expr_cost(&i.orelse)
        }
        Expr::Named(n) => cost::STATEMENT + expr_cost(&n.value),
        Expr::Starred(s) => expr_cost(&s.value),
        Expr::Yield(y) => cost::CALL + y.value.as_deref().map_or(0, expr_cost),
        Expr::YieldFrom(y) => cost::CALL + expr_cost(&y.value),
        Expr::Lambda(_) => cost::FUNCTION_CREATION,
        Expr::ListComp(c) => {
            cost::CONTAINER
                + cost::FUNCTION_CREATION
                + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
        }
        Expr::SetComp(c) => {
            cost::CONTAINER
                + cost::FUNCTION_CREATION
                + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
        }
        Expr::DictComp(c) => {
            cost::CONTAINER
                + cost::FUNCTION_CREATION
                + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
        }
        Expr::Generator(c) => {
            cost::FUNCTION_CREATION
                + cost::GENERATOR_CREATION
                + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(source: &str) -> ast::ModModule {
        let mut module = ruff_python_parser::parse_module(source)
            .unwrap()
            .into_syntax();
        instrument(&mut module);
        module
    }

    fn function_body(module: &ast::ModModule) -> &ast::Suite {
        match &module.body[0] {
            Stmt::FunctionDef(function) => &function.body,
            other => panic!("expected a function, got {other:?}"),
        }
    }

    fn meter_amount(stmt: &Stmt) -> u64 {
        meter_amount_of(stmt).unwrap_or_else(|| panic!("expected a meter statement: {stmt:?}"))
    }

    fn int_value(expr: &Expr) -> u64 {
        match expr {
            Expr::NumberLiteral(ast::ExprNumberLiteral {
                value: ast::Number::Int(i),
                ..
            }) => i.as_u64().unwrap(),
            other => panic!("expected an int, got {other:?}"),
        }
    }

    fn callee_name(expr: &Expr) -> String {
        match expr {
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Name(name) => name.id.to_string(),
                _ => String::new(),
            },
            Expr::Compare(compare) => format!("in:{}", callee_name(&compare.comparators[0])),
            // A subscripted guard (`_pvm_result[x]`).
            Expr::Subscript(_) => subscripted_guard(expr)
                .map(|guard| guard.name().to_owned())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    #[test]
    fn function_entry_and_loop_bodies_are_metered() {
        let module =
            rewritten("def f(n):\n    t = 0\n    while n:\n        n -= 1\n    return t\n");
        let body = function_body(&module);
        // entry 5 + `t = 0` (1) + while header (1, test is a name: 0) + return (1)
        assert_eq!(meter_amount(&body[0]), 5 + 1 + 1 + 1);
        let Stmt::While(while_stmt) = &body[2] else {
            panic!()
        };
        // iteration 2 + test 0 + `n -= 1` (statement 1 + operator 1; a literal
        // operand needs no guard)
        assert_eq!(meter_amount(&while_stmt.body[0]), 2 + 1 + 1);
    }

    #[test]
    fn guards_replace_size_dependent_operations() {
        let module =
            rewritten("def f(a, b):\n    return a * b, a in b, a[1:], ', '.join(b), 2 + 3\n");
        let Stmt::Return(ret) = &function_body(&module)[1] else {
            panic!()
        };
        let Expr::Tuple(tuple) = ret.value.as_deref().unwrap() else {
            panic!()
        };
        let names: Vec<String> = tuple.elts.iter().map(callee_name).collect();
        assert_eq!(
            names,
            [
                OperatorCode::Mult.binop_guard(),
                // `in` is charged in the containers' slots (`meter::contains`).
                "in:",
                "",
                "",
                ""
            ]
        );
    }

    #[test]
    fn keyword_splats_are_guarded_in_plain_and_sized_method_calls() {
        let module = rewritten("def f(g, d, a):\n    return g(**a), d.update(**a), g(*a)\n");
        let Stmt::Return(ret) = &function_body(&module)[1] else {
            panic!()
        };
        let Expr::Tuple(tuple) = ret.value.as_deref().unwrap() else {
            panic!()
        };
        let splat_guard = |call: &Expr| -> String {
            let Expr::Call(call) = call else { panic!() };
            match call.arguments.keywords.first() {
                Some(keyword) => callee_name(&keyword.value),
                None => {
                    let Expr::Starred(starred) = &call.arguments.args[0] else {
                        panic!()
                    };
                    callee_name(&starred.value)
                }
            }
        };
        let guards: Vec<String> = tuple.elts.iter().map(splat_guard).collect();
        assert_eq!(
            guards,
            [
                Guard::Kwargs.name(),
                Guard::Kwargs.name(),
                Guard::Materialize.name()
            ]
        );
    }

    #[test]
    fn comprehensions_and_lambdas_are_metered_per_item() {
        let module =
            rewritten("def f(xs):\n    g = lambda x: x\n    return [x for x in xs if x]\n");
        let body = function_body(&module);
        let Stmt::Assign(assign) = &body[1] else {
            panic!()
        };
        let Expr::Lambda(lambda) = assign.value.as_ref() else {
            panic!()
        };
        assert!(matches!(lambda.body.as_ref(), Expr::BoolOp(_)));
        let Stmt::Return(ret) = &body[2] else {
            panic!()
        };
        let Expr::ListComp(comp) = ret.value.as_deref().unwrap() else {
            panic!()
        };
        assert_eq!(comp.generators[0].ifs.len(), 1, "only the user's condition");
        // iteration 2 + condition `x` (0) + element `x` (0)
        assert_eq!(iter_meter(&comp.generators[0].iter), 2);
    }

    /// The per-item amount of `_pvm_iter(iterable, amount)`.
    fn iter_meter(expr: &Expr) -> u64 {
        let Expr::Call(call) = expr else {
            panic!("expected _pvm_iter, got {expr:?}")
        };
        assert_eq!(callee_name(expr), Guard::Iter.name());
        int_value(&call.arguments.args[1])
    }

    #[test]
    fn for_loops_are_metered_by_their_iterator() {
        let module =
            rewritten("def f(xs):\n    t = 0\n    for x in xs:\n        t = x\n    return t\n");
        let body = function_body(&module);
        // entry 5 + `t = 0` (1) + for header (1, iterable a name: 0, the
        // wrapper adds nothing) + return (1): unchanged by the wrapper.
        assert_eq!(meter_amount(&body[0]), 5 + 1 + 1 + 1);
        let Stmt::For(for_stmt) = &body[2] else {
            panic!()
        };
        // iteration 2 + target 1 + `t = x` (1)
        assert_eq!(iter_meter(&for_stmt.iter), 2 + 1 + 1);
        assert!(
            matches!(&for_stmt.body[0], Stmt::Assign(_)),
            "no meter call left in the body"
        );
    }

    /// The loop of `source`'s first function: whether its body still holds a
    /// `_pvm_binop` guard, and the multipliers passed to `_pvm_iter`.
    fn index_exemption(source: &str) -> (bool, Vec<u64>) {
        let module = rewritten(source);
        let for_stmt = function_body(&module)
            .iter()
            .find_map(|stmt| match stmt {
                Stmt::For(for_stmt) => Some(for_stmt),
                _ => None,
            })
            .expect("a for loop");
        let guarded = format!("{:?}", for_stmt.body).contains(Guard::Binop.name());
        let Expr::Call(call) = for_stmt.iter.as_ref() else {
            panic!()
        };
        let multipliers = match call.arguments.args.get(2) {
            Some(Expr::Tuple(tuple)) => tuple.elts.iter().map(int_value).collect(),
            _ => Vec::new(),
        };
        (guarded, multipliers)
    }

    #[test]
    fn range_index_times_a_small_literal_is_exempt_and_prepaid_by_the_iterator() {
        let exempt = "def f(n):\n    t = 0\n    for i in range(n):\n        t += i * 2 % 7\n        t += 3 * i\n    return t\n";
        assert_eq!(index_exemption(exempt), (false, vec![2, 3]));
    }

    #[test]
    fn range_index_products_stay_guarded_when_the_index_might_not_be_an_int() {
        for source in [
            // the body rebinds the index
            "def f(n):\n    for i in range(n):\n        i = 'x'\n        t = i * 2\n",
            "def f(n):\n    for i in range(n):\n        t = i * 2\n        (i := 'x')\n",
            "def f(n):\n    for i in range(n):\n        for i in 'ab':\n            pass\n        t = i * 2\n",
            // `range` is bound somewhere in the module
            "def f(n):\n    for i in range(n):\n        t = i * 2\ndef g(range):\n    return range\n",
            // the index is declared global/nonlocal somewhere
            "def f(n):\n    for i in range(n):\n        t = i * 2\ndef g():\n    global i\n",
            // not a plain range(...) or not a name target
            "def f(xs):\n    for i in xs:\n        t = i * 2\n",
            "def f(n):\n    for i in range(*n):\n        t = i * 2\n",
            // a literal too large, or an amplifying operator
            "def f(n):\n    for i in range(n):\n        t = i * 4294967296\n",
            "def f(n):\n    for i in range(n):\n        t = i ** 2\n",
        ] {
            let (guarded, multipliers) = index_exemption(source);
            assert!(guarded && multipliers.is_empty(), "{source}");
        }
        // Products that may run more than once per item are not prepaid:
        // in a nested scope they keep their guard; in a nested loop the
        // index is a small local ([`bounded`]) and the product is exempt.
        assert_eq!(
            index_exemption(
                "def f(n):\n    for i in range(n):\n        while n:\n            t = i * 2\n"
            ),
            (false, Vec::new())
        );
        for source in [
            "def f(n):\n    for i in range(n):\n        t = [i * 2 for _ in n]\n",
            "def f(n):\n    for i in range(n):\n        g = lambda: i * 2\n",
        ] {
            let (guarded, multipliers) = index_exemption(source);
            assert!(guarded && multipliers.is_empty(), "{source}");
        }
    }

    /// Is an operator guard left anywhere in the body of the function `f`?
    fn guards_in_f(source: &str) -> Vec<String> {
        let module = rewritten(source);
        let text = format!("{:?}", function_body(&module));
        OperatorCode::ALL
            .iter()
            .flat_map(|op| [op.binop_guard(), op.augop_guard()])
            .filter(|guard| text.contains(&format!("\"{guard}\"")))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn operators_on_small_locals_need_no_guard() {
        for source in [
            // a range index against anything (queens' `row - c`)
            "def f(n, row, s):\n    for c in range(n):\n        t = row - c\n        u = row + c\n",
            // a linear congruential seed, and what it indexes with
            "def f(n):\n    seed = 7\n    for i in range(n - 1, 0, -1):\n        seed = (seed * 1103515245 + 12345) % 2147483648\n        j = seed % (i + 1)\n",
            // counters, their products by small literals, len()
            "def f(xs):\n    count = 0\n    total = len(xs)\n    for x in xs:\n        count += 1\n        total = total - 2\n        t = count * 3 - x\n",
            // len() of anything
            "def f(xs, s):\n    t = s - len(xs)\n    u = len(xs) + s\n",
            // a modulo step
            "def f(n):\n    h = 0\n    for i in range(n):\n        h += i\n        h %= 65521\n        t = h * 31 - n\n",
        ] {
            assert_eq!(guards_in_f(source), Vec::<String>::new(), "{source}");
        }
    }

    #[test]
    fn locals_that_may_grow_or_hold_anything_keep_their_guards() {
        for source in [
            // doubling, directly or through a step that is not bounded
            "def f(n, s):\n    x = 1\n    for _ in range(n):\n        x += x\n        t = x - s\n",
            "def f(n, s):\n    x = 1\n    for _ in range(n):\n        x = x + x\n        t = x - s\n",
            "def f(n, s):\n    a = 1\n    b = 1\n    for _ in range(n):\n        a += b\n        b += a\n        t = a - s\n",
            "def f(n, s):\n    x = 1\n    for _ in range(n):\n        y = x\n        x += y\n        t = x - s\n",
            "def f(n, s):\n    x = 1\n    for _ in range(n):\n        x *= 2\n        t = x - s\n",
            // a parameter, a call, an unknown operand of `%`
            "def f(x, s):\n    t = x - s\n",
            "def f(g, s):\n    x = g()\n    t = x - s\n",
            "def f(o, s):\n    x = o % 7\n    t = x - s\n",
            // other bindings: del, :=, a loop over anything, an import
            "def f(s):\n    x = 1\n    del x\n    t = x - s\n",
            "def f(s):\n    x = 1\n    ys = [(x := y) for y in s]\n    t = x - s\n",
            "def f(s):\n    x = 1\n    def g(a=(x := s)):\n        return a\n    t = x - s\n",
            "def f(s):\n    x = 1\n    @(lambda d, y=(x := s): d)\n    def g():\n        pass\n    t = x - s\n",
            "def f(s):\n    x = 1\n    class C(x := s):\n        pass\n    t = x - s\n",
            "def f(xs, s):\n    x = 1\n    for x in xs:\n        pass\n    t = x - s\n",
            // rebound builtins, global and nonlocal names
            "def f(s):\n    x = len(s)\n    t = x - s\nlen = 5\n",
            "def f(s):\n    t = len(s) - s\ndef g(len):\n    return len\n",
            "def f(n, s):\n    for c in range(n):\n        t = c - s\ndef range(n):\n    return n\n",
            "def f(s):\n    x = 1\n    t = x - s\ndef g():\n    global x\n",
        ] {
            assert!(!guards_in_f(source).is_empty(), "{source}");
        }
        // A nested scope may have its own variable of the same name.
        for source in [
            "def f(s):\n    c = 1\n    def g(c):\n        return c - s\n    return g\n",
            "def f(s):\n    c = 1\n    return lambda c: c - s\n",
            "def f(s):\n    c = 1\n    return [c - s for c in s]\n",
        ] {
            assert!(!guards_in_f(source).is_empty(), "{source}");
        }
    }

    /// The proof is linear in the function: a chain of 20,000 copies whose
    /// head is a parameter loses one name per round of a naive fixed point
    /// (quadratic: minutes at deploy).
    #[test]
    fn a_long_chain_of_copies_is_proved_quickly() {
        let chain = 20_000;
        let mut source = String::from("def f(p, s):\n    a0 = p\n");
        for i in 1..=chain {
            source.push_str(&format!("    a{i} = a{}\n", i - 1));
        }
        source.push_str(&format!("    return a{chain} - s\n"));
        let started = std::time::Instant::now();
        let module = rewritten(&source);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let Some(Stmt::Return(ret)) = function_body(&module).last() else {
            panic!()
        };
        assert_eq!(
            callee_name(ret.value.as_deref().unwrap()),
            OperatorCode::Sub.binop_guard()
        );
        // With a literal head the whole chain is small.
        let source = source.replacen("a0 = p", "a0 = 1", 1);
        let module = rewritten(&source);
        let Some(Stmt::Return(ret)) = function_body(&module).last() else {
            panic!()
        };
        assert!(matches!(ret.value.as_deref(), Some(Expr::BinOp(_))));
    }

    /// `if …: continue` followed by more of the loop body: the branch has no
    /// meter; the iterator's charge includes its cost and the rest's meter
    /// charges that much less, so both paths pay what they did before.
    #[test]
    fn a_lone_exit_branch_is_paid_by_the_head() {
        let plain = rewritten("def f(xs, s):\n    for x in xs:\n        if x in s:\n            pass\n        t = 1\n        u = 2\n");
        let folded = rewritten("def f(xs, s):\n    for x in xs:\n        if x in s:\n            continue\n        t = 1\n        u = 2\n");
        let loop_of = |module: &ast::ModModule| match &function_body(module)[1] {
            Stmt::For(for_stmt) => for_stmt.clone(),
            other => panic!("{other:?}"),
        };
        let (plain, folded) = (loop_of(&plain), loop_of(&folded));
        // Without an exit: one suite, charged by the iterator.
        assert_eq!(plain.body.len(), 3);
        let Stmt::If(branch) = &folded.body[0] else {
            panic!()
        };
        assert!(
            matches!(branch.body.as_slice(), [Stmt::Continue(_)]),
            "{:?}",
            branch.body
        );
        // `continue` costs 1: the iterator charges it, the rest's meter
        // (`t = 1; u = 2`: 2) charges 1 less.
        assert_eq!(iter_meter(&folded.iter), iter_meter(&plain.iter) - 2 + 1);
        assert_eq!(meter_amount(&folded.body[1]), 2 - 1);
        // With an `else`, or a branch doing more, the branch keeps its meter.
        for source in [
            "def f(xs, s):\n    for x in xs:\n        if x in s:\n            continue\n        else:\n            pass\n        t = 1\n",
            "def f(xs, s):\n    for x in xs:\n        if x in s:\n            s = 1\n            continue\n        t = 1\n",
            "def f(xs, s):\n    for x in xs:\n        if x in s:\n            return s.pop()\n        t = 1\n",
        ] {
            let module = rewritten(source);
            let Stmt::For(for_stmt) = &function_body(&module)[1] else {
                panic!()
            };
            let Stmt::If(branch) = &for_stmt.body[0] else {
                panic!()
            };
            assert!(meter_amount_of(&branch.body[0]).is_some(), "{source}");
        }
    }

    #[test]
    fn isinstance_receives_real_types_unless_a_name_is_rebound() {
        let classes = |source: &str| {
            let module = rewritten(source);
            let Stmt::Return(ret) = &function_body(&module)[1] else {
                panic!("{source}")
            };
            let Some(Expr::Call(call)) = ret.value.as_deref() else {
                panic!("{source}")
            };
            format!("{:?}", call.arguments.args[1])
        };
        let both = classes("def f(x):\n    return isinstance(x, (int, (str, float)))\n");
        assert!(
            both.contains("_pvm_type_int") && both.contains("_pvm_type_str"),
            "{both}"
        );
        assert!(both.contains("\"float\""), "{both}");
        // `type`'s stand-in counts stand-ins as types: never replaced.
        assert!(classes("def f(x):\n    return isinstance(x, type)\n").contains("\"type\""));
        // A module that binds the type's name, or `isinstance`, keeps it.
        let rebound =
            classes("def f(x):\n    return isinstance(x, int)\ndef g(int):\n    return int\n");
        assert!(!rebound.contains("_pvm_type_int"), "{rebound}");
        let shadowed = classes(
            "def f(x):\n    return isinstance(x, int)\ndef isinstance(a, b):\n    return a\n",
        );
        assert!(!shadowed.contains("_pvm_type_int"), "{shadowed}");
        // issubclass is left alone: its first argument may be a stand-in.
        assert!(classes("def f(x):\n    return issubclass(x, int)\n").contains("\"int\""));
    }

    #[test]
    fn augmented_assignment_of_a_small_number_needs_no_guard() {
        let module = rewritten(
            "def f(t, i, x):\n    t += 3 % 7\n    t += x\n    t -= -1\n    t += i * 2 % 7\n",
        );
        let body = function_body(&module);
        let values: Vec<String> = body[1..]
            .iter()
            .map(|stmt| match stmt {
                Stmt::AugAssign(assign) => callee_name(&assign.value),
                // A guarded one is `t = _pvm_augop_add(t, x)`.
                Stmt::Assign(assign) => callee_name(&assign.value),
                other => panic!("expected an augmented assignment, got {other:?}"),
            })
            .collect();
        // A small number on the right: `t` must be a number too (or the
        // statement raises). `x` may be a list, and `i * 2` an object whose
        // `__mod__` returns one.
        let guarded = OperatorCode::Add.augop_guard();
        assert_eq!(values, ["", guarded, "", guarded]);
        // A number, but not a small one: `t += t - 0` doubles `t`.
        let doubling =
            rewritten("def f(t):\n    t += t - 0\n    t = t + (t - 0)\n    t += (t & 0) % 7\n");
        let doubling = function_body(&doubling);
        assert!(matches!(&doubling[1], Stmt::Assign(a) if callee_name(&a.value) == guarded));
        assert!(
            matches!(&doubling[2], Stmt::Assign(a) if callee_name(&a.value) == OperatorCode::Add.binop_guard())
        );
        assert!(
            matches!(&doubling[3], Stmt::Assign(a) if callee_name(&a.value) == guarded),
            "`y % 7` of an unknown `y` may run a class's `__mod__`"
        );
        // `i * 2 % 7` of a range index is a small int: the product and the
        // modulo stay plain operators and the statement needs no guard.
        let index = rewritten("def f(n, t):\n    for i in range(n):\n        t += i * 2 % 7\n");
        let Stmt::For(for_stmt) = &function_body(&index)[1] else {
            panic!()
        };
        let Stmt::AugAssign(first) = &for_stmt.body[0] else {
            panic!("no guard: {:?}", for_stmt.body[0])
        };
        let Expr::BinOp(modulo) = first.value.as_ref() else {
            panic!("`% 7` stays a plain operator")
        };
        assert!(matches!(modulo.left.as_ref(), Expr::BinOp(_)));
    }

    #[test]
    fn comparisons_stay_plain_and_chains_stay_chains() {
        // The types' slots charge them (comparisons are never specialised:
        // `crate::interpreter::generic_ops`; `in` is `crate::meter::contains`'s), so no
        // comparison is rewritten.
        let module = rewritten(
            "def f(a, b, c):\n    return a == b, a != b, a == 'x', a < b, a == b < c, a in b\n",
        );
        let Stmt::Return(ret) = &function_body(&module)[1] else {
            panic!()
        };
        let Expr::Tuple(tuple) = ret.value.as_deref().unwrap() else {
            panic!()
        };
        let names: Vec<String> = tuple.elts.iter().map(callee_name).collect();
        // ("in:" is how the helper names a plain comparison.)
        assert_eq!(names, ["in:", "in:", "in:", "in:", "in:", "in:"]);
        assert!(matches!(&tuple.elts[4], Expr::Compare(c) if c.ops.len() == 2));
    }
}
