//! The metering rewrite: turns a validated actor AST into one that pays for
//! itself. It runs once per code hash at deploy, so its cost never reaches a
//! call. Three kinds of insertions, all calls to natives defined in
//! [`crate::runtime`] under names actors cannot write (`_pvm_*`):
//!
//! 1. **Block meters.** Every function body, loop body (`for`, `while`, their
//!    `else`), `if`/`elif`/`else` branch and `try`/`except`/`finally` block
//!    starts with `_pvm_meter(n)`, where `n` is the static cost of the block's
//!    straight-line statements ([`crate::costs::code`]); loops add the
//!    per-iteration cost (and a `while` its test), functions their entry cost.
//!    Comprehensions get `_pvm_meter(n)` as the first `if` of each generator
//!    (charged per item), lambdas wrap their body as `_pvm_meter(n) and body`.
//!    A block is charged on entry, before its work, so running out aborts at
//!    the start of the block that does not fit — the same point on every run.
//! 2. **Size guards.** Operations whose work grows with their operands are
//!    routed through guards that pre-check and charge by size: binary
//!    operators (`_pvm_binop`), augmented assignment (`_pvm_augop`), the right
//!    side of `in` (`_pvm_contains`), size-dependent method calls
//!    (`_pvm_method`), starred arguments (`_pvm_materialize`), slices and
//!    f-strings (`_pvm_result`, which charges the size of what was produced).
//! 3. Nothing else: builtins with size-dependent cost are replaced by guarded
//!    versions in the actor's builtins dict instead of being rewritten here.
//!
//! Synthesised nodes carry the range of the code they meter, so line numbers
//! in tracebacks stay those of the actor's source.

use ruff_python_ast::relocate::relocate_expr;
use ruff_python_ast::visitor::transformer::{walk_expr, walk_stmt, Transformer};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use crate::costs::code as cost;

/// Method names whose work depends on the size of the receiver or arguments;
/// calls to them go through `_pvm_method` (user methods with these names too,
/// for which the guard adds nothing but its call).
pub const SIZED_METHODS: &[&str] = &[
    "join",
    "replace",
    "split",
    "rsplit",
    "splitlines",
    "count",
    "find",
    "rfind",
    "index",
    "rindex",
    "strip",
    "lstrip",
    "rstrip",
    "lower",
    "upper",
    "title",
    "capitalize",
    "swapcase",
    "casefold",
    "encode",
    "decode",
    "ljust",
    "rjust",
    "center",
    "zfill",
    "expandtabs",
    "startswith",
    "endswith",
    "partition",
    "rpartition",
    "translate",
    "hex",
    "fromhex",
    "to_bytes",
    "from_bytes",
    "extend",
    "insert",
    "remove",
    "pop",
    "sort",
    "reverse",
    "copy",
    "update",
    "union",
    "intersection",
    "difference",
    "symmetric_difference",
    "issubset",
    "issuperset",
    "isdisjoint",
    "values",
    "items",
    "keys",
    "setdefault",
    "isdigit",
    "isalpha",
    "isalnum",
    "isspace",
    "islower",
    "isupper",
    "isdecimal",
    "isnumeric",
    "isidentifier",
    "isprintable",
    "removeprefix",
    "removesuffix",
    "bit_length",
    "bit_count",
];

/// The operator code `_pvm_binop` / `_pvm_augop` receive.
pub fn operator_code(op: ast::Operator) -> u8 {
    use ast::Operator::*;
    match op {
        Add => 0,
        Sub => 1,
        Mult => 2,
        MatMult => 3,
        Div => 4,
        Mod => 5,
        Pow => 6,
        LShift => 7,
        RShift => 8,
        BitOr => 9,
        BitXor => 10,
        BitAnd => 11,
        FloorDiv => 12,
    }
}

/// Rewrites `module` in place.
pub fn instrument(module: &mut ast::ModModule) {
    let rewriter = Rewriter;
    for stmt in module.body.iter_mut() {
        rewriter.visit_stmt(stmt);
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

fn meter_call(amount: u64, range: TextRange) -> Expr {
    guard_call(
        "_pvm_meter",
        vec![int_literal(amount, range)],
        Vec::new(),
        range,
    )
}

fn meter_stmt(amount: u64, range: TextRange) -> Stmt {
    let parsed =
        ruff_python_parser::parse_module("_pvm_meter(0)").expect("VM-generated template parses");
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

fn is_numeric_literal(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => true,
        Expr::UnaryOp(unary) => matches!(*unary.operand, Expr::NumberLiteral(_)),
        _ => false,
    }
}

/// Operators whose work is bounded when one operand is a number literal:
/// the other operand must then be a number too (str/list/set raise
/// `TypeError`; `str % x` is disabled at the type level), and integers are
/// capped at [`crate::runtime::MAX_INT_BITS`], so the operation is cheap.
/// `*`, `**` and `<<` are never exempt: they amplify (`s * 2`, `2 ** n`).
fn is_exempt_with_literal(op: ast::Operator, left: &Expr, right: &Expr) -> bool {
    use ast::Operator::*;
    matches!(
        op,
        Add | Sub | Div | FloorDiv | Mod | BitAnd | BitOr | BitXor | RShift
    ) && (is_numeric_literal(left) || is_numeric_literal(right))
}

fn is_guard_name(expr: &Expr) -> bool {
    matches!(expr, Expr::Name(name) if name.id.as_str().starts_with("_pvm_"))
}

struct Rewriter;

impl Transformer for Rewriter {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        walk_stmt(self, stmt);
        match stmt {
            Stmt::FunctionDef(function) => meter_suite(&mut function.body, cost::FUNCTION_ENTRY),
            Stmt::For(for_stmt) => {
                meter_suite(&mut for_stmt.body, cost::ITERATION + cost::STATEMENT);
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
            Stmt::Try(try_stmt) => {
                meter_suite(&mut try_stmt.body, 0);
                for handler in &mut try_stmt.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    meter_suite(&mut handler.body, cost::STATEMENT);
                }
                meter_suite(&mut try_stmt.orelse, 0);
                meter_suite(&mut try_stmt.finalbody, 0);
            }
            Stmt::AugAssign(assign)
                if !is_exempt_with_literal(assign.op, &assign.target, &assign.value) =>
            {
                // `x op= y` becomes `x op= _pvm_augop(code, x, y)`: the guard
                // sees both operands, charges and pre-checks, and returns `y`
                // so the in-place operation itself is unchanged. The validator
                // only admits targets that can be re-read without side effects.
                let range = assign.value.range();
                let mut reread = (*assign.target).clone();
                set_load_context(&mut reread);
                let value = take(&mut assign.value);
                *assign.value = guard_call(
                    "_pvm_augop",
                    vec![
                        int_literal(u64::from(operator_code(assign.op)), range),
                        reread,
                        value,
                    ],
                    Vec::new(),
                    range,
                );
            }
            _ => {}
        }
    }

    fn visit_expr(&self, expr: &mut Expr) {
        walk_expr(self, expr);
        let range = expr.range();
        match expr {
            // Even two literals are guarded for `*`, `**`, `<<`: `2 ** 10**8`
            // is a bomb written entirely in constants.
            Expr::BinOp(binop) if !is_exempt_with_literal(binop.op, &binop.left, &binop.right) => {
                let code = int_literal(u64::from(operator_code(binop.op)), range);
                let left = take(&mut binop.left);
                let right = take(&mut binop.right);
                *expr = guard_call("_pvm_binop", vec![code, left, right], Vec::new(), range);
            }
            Expr::Compare(compare) => {
                let ops = compare.ops.clone();
                for (op, comparator) in ops.iter().zip(compare.comparators.iter_mut()) {
                    if matches!(op, ast::CmpOp::In | ast::CmpOp::NotIn) {
                        let inner_range = comparator.range();
                        let container = take(comparator);
                        *comparator =
                            guard_call("_pvm_contains", vec![container], Vec::new(), inner_range);
                    }
                }
            }
            Expr::Call(call) => {
                let sized_method = match call.func.as_ref() {
                    Expr::Attribute(attribute)
                        if SIZED_METHODS.contains(&attribute.attr.as_str()) =>
                    {
                        Some(attribute.attr.to_string())
                    }
                    _ => None,
                };
                if let Some(method) = sized_method {
                    {
                        let Expr::Attribute(mut attribute) = take(&mut call.func) else {
                            unreachable!()
                        };
                        let mut args = vec![
                            take(&mut attribute.value),
                            template(&format!("{method:?}"), range),
                        ];
                        args.extend(call.arguments.args.iter_mut().map(take));
                        let keywords: Vec<ast::Keyword> =
                            std::mem::take(&mut call.arguments.keywords)
                                .into_iter()
                                .collect();
                        *expr = guard_call("_pvm_method", args, keywords, range);
                        return;
                    }
                }
                for keyword in call.arguments.keywords.iter_mut() {
                    if keyword.arg.is_none() {
                        let inner_range = keyword.value.range();
                        let value = take(&mut keyword.value);
                        keyword.value =
                            guard_call("_pvm_materialize", vec![value], Vec::new(), inner_range);
                    }
                }
            }
            Expr::Starred(starred) if starred.ctx == ast::ExprContext::Load => {
                let inner_range = starred.value.range();
                let value = take(&mut starred.value);
                *starred.value =
                    guard_call("_pvm_materialize", vec![value], Vec::new(), inner_range);
            }
            Expr::Subscript(subscript)
                if subscript.ctx == ast::ExprContext::Load
                    && matches!(subscript.slice.as_ref(), Expr::Slice(_)) =>
            {
                let sliced = take(expr);
                *expr = guard_call("_pvm_result", vec![sliced], Vec::new(), range);
            }
            Expr::FString(_) => {
                let formatted = take(expr);
                *expr = guard_call("_pvm_result", vec![formatted], Vec::new(), range);
            }
            Expr::Lambda(lambda) => {
                let body_cost = cost::FUNCTION_ENTRY + expr_cost(&lambda.body);
                let body = take(&mut lambda.body);
                let mut and = template("_pvm_meter(0) and None", range);
                if let Expr::BoolOp(bool_op) = &mut and {
                    bool_op.values = vec![meter_call(body_cost, range), body];
                }
                *lambda.body = and;
            }
            Expr::ListComp(ast::ExprListComp {
                elt, generators, ..
            })
            | Expr::SetComp(ast::ExprSetComp {
                elt, generators, ..
            })
            | Expr::Generator(ast::ExprGenerator {
                elt, generators, ..
            }) => {
                let element = expr_cost(elt);
                meter_generators(generators, element, range);
            }
            Expr::DictComp(ast::ExprDictComp {
                key,
                value,
                generators,
                ..
            }) => {
                let element = key.as_deref().map_or(0, expr_cost) + expr_cost(value);
                meter_generators(generators, element, range);
            }
            _ => {}
        }
    }
}

fn set_load_context(expr: &mut Expr) {
    match expr {
        Expr::Name(name) => name.ctx = ast::ExprContext::Load,
        Expr::Subscript(subscript) => subscript.ctx = ast::ExprContext::Load,
        Expr::Attribute(attribute) => attribute.ctx = ast::ExprContext::Load,
        _ => {}
    }
}

fn meter_generators(generators: &mut [ast::Comprehension], element_cost: u64, range: TextRange) {
    let last = generators.len().saturating_sub(1);
    for (index, generator) in generators.iter_mut().enumerate() {
        let mut per_item = cost::ITERATION + generator.ifs.iter().map(expr_cost).sum::<u64>();
        if index == last {
            per_item += element_cost;
        }
        generator.ifs.insert(0, meter_call(per_item, range));
    }
}

/// Inserts `_pvm_meter(extra + cost of the suite's own statements)` at its top.
fn meter_suite(body: &mut ast::Suite, extra: u64) {
    let Some(first) = body.first() else { return };
    let range = first.range();
    let amount = extra + body.iter().map(stmt_header_cost).sum::<u64>();
    body.insert(0, meter_stmt(amount, range));
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
        Stmt::FunctionDef(_) | Stmt::ClassDef(_) => cost::CONTAINER,
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
            if is_guard_name(&call.func) {
                // Guards stand in for one operator; they charge sizes themselves.
                let is_meter =
                    matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == "_pvm_meter");
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
                            Some(1 + expr_cost(&i.expression))
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
        Expr::Lambda(_) => cost::CONTAINER,
        Expr::ListComp(c) => {
            cost::CONTAINER + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
        }
        Expr::SetComp(c) => {
            cost::CONTAINER + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
        }
        Expr::DictComp(c) => {
            cost::CONTAINER + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
        }
        Expr::Generator(c) => {
            cost::CONTAINER + c.generators.first().map_or(0, |g| expr_cost(&g.iter))
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
        let Stmt::Expr(expr) = stmt else {
            panic!("expected a meter statement")
        };
        let Expr::Call(call) = expr.value.as_ref() else {
            panic!("expected a call")
        };
        assert!(matches!(call.func.as_ref(), Expr::Name(n) if n.id.as_str() == "_pvm_meter"));
        match &call.arguments.args[0] {
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
                "_pvm_binop",
                "in:_pvm_contains",
                "_pvm_result",
                "_pvm_method",
                ""
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
        assert_eq!(
            comp.generators[0].ifs.len(),
            2,
            "meter inserted before the user's condition"
        );
    }
}
