//! Stores into containers: the mutation guard on subscript targets, and
//! augmented assignment to every target CPython accepts.
//!
//! - `a[k] = v`, `del a[k]`, `for a[k] in …`, `with … as a[k]` and the
//!   subscript targets inside tuples become `_pvm_mut(a)[k] …`: the guard
//!   returns `a` after telling [`crate::interpreter::constants`] it is about to change
//!   (RustPython's specialised store instructions write into exact lists
//!   and dicts without any slot a hook could wrap).
//! - `t op= v` becomes `t = _pvm_augop(code, <t loaded>, v[, container])`:
//!   the guard charges and pre-checks like a binary operator, then performs
//!   the in-place operation itself and returns its result, which the
//!   assignment stores. The target's parts are evaluated once, in CPython's
//!   order (container, key, load, value, operation, store): parts that are
//!   not plain names or constants are bound to `_pvm_a`/`_pvm_k…`
//!   temporaries with `:=` on the load, and the store reuses them.

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange};

use super::{guard_call, take};

use crate::rules::guards::{Guard, OperatorCode};

/// Wraps the container of every subscript in `target` (a store or delete
/// target, possibly a tuple or list of them) in `_pvm_mut(…)`.
pub(super) fn guard_store_target(target: &mut Expr) {
    match target {
        Expr::Subscript(subscript) => {
            let range = subscript.value.range();
            let container = take(&mut subscript.value);
            *subscript.value = super::guard_subscript(Guard::Mutate, container, range);
        }
        Expr::Tuple(tuple) => tuple.elts.iter_mut().for_each(guard_store_target),
        Expr::List(list) => list.elts.iter_mut().for_each(guard_store_target),
        Expr::Starred(starred) => guard_store_target(&mut starred.value),
        _ => {}
    }
}

/// Can `expr` be evaluated twice with the effect of once (a name or a
/// constant)?
pub(super) fn is_pure(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_)
        | Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_) => true,
        Expr::UnaryOp(unary) => {
            matches!(unary.op, ast::UnaryOp::USub)
                && matches!(*unary.operand, Expr::NumberLiteral(_))
        }
        Expr::Tuple(tuple) => tuple.elts.iter().all(is_pure),
        _ => false,
    }
}

pub(super) fn name(id: &str, context: ast::ExprContext, range: TextRange) -> Expr {
    Expr::Name(ast::ExprName {
        range,
        node_index: Default::default(),
        id: id.into(),
        ctx: context,
    })
}

/// `(id := value)`.
pub(super) fn bind(id: &str, value: Expr, range: TextRange) -> Expr {
    Expr::Named(ast::ExprNamed {
        range,
        node_index: Default::default(),
        target: Box::new(name(id, ast::ExprContext::Store, range)),
        value: Box::new(value),
    })
}

/// `part` for the load and what the store reuses: a pure part as it is, any
/// other bound to temporary `id` on the load.
fn split_part(part: Expr, id: &str) -> (Expr, Expr) {
    if is_pure(&part) {
        let mut store = part.clone();
        set_load(&mut store);
        return (part, store);
    }
    let range = part.range();
    (
        bind(id, part, range),
        name(id, ast::ExprContext::Load, range),
    )
}

fn set_load(expr: &mut Expr) {
    match expr {
        Expr::Name(name) => name.ctx = ast::ExprContext::Load,
        Expr::Tuple(tuple) => {
            tuple.ctx = ast::ExprContext::Load;
            tuple.elts.iter_mut().for_each(set_load);
        }
        _ => {}
    }
}

/// An augmented assignment's target, split for the rewrite.
struct SplitTarget {
    /// Where the result is stored (store context).
    store: Expr,
    /// The current value, evaluated once (load context).
    load: Expr,
    /// The container a subscript target writes into.
    container: Option<Expr>,
}

fn split_target(target: Expr) -> SplitTarget {
    match target {
        Expr::Name(mut store) => {
            let mut load = store.clone();
            load.ctx = ast::ExprContext::Load;
            store.ctx = ast::ExprContext::Store;
            SplitTarget {
                store: Expr::Name(store),
                load: Expr::Name(load),
                container: None,
            }
        }
        Expr::Attribute(attribute) => {
            let ast::ExprAttribute {
                value,
                attr,
                range,
                node_index,
                ..
            } = attribute;
            let (owner_load, owner_store) = split_part(*value, "_pvm_a");
            let load = Expr::Attribute(ast::ExprAttribute {
                value: Box::new(owner_load),
                attr: attr.clone(),
                ctx: ast::ExprContext::Load,
                range,
                node_index: node_index.clone(),
            });
            let store = Expr::Attribute(ast::ExprAttribute {
                value: Box::new(owner_store),
                attr,
                ctx: ast::ExprContext::Store,
                range,
                node_index,
            });
            SplitTarget {
                store,
                load,
                container: None,
            }
        }
        Expr::Subscript(subscript) => {
            let ast::ExprSubscript {
                value,
                slice,
                range,
                node_index,
                ..
            } = subscript;
            let (container_load, container_store) = split_part(*value, "_pvm_a");
            let (key_load, key_store) = match *slice {
                Expr::Slice(slice) => {
                    let mut parts_load = slice.clone();
                    let mut parts_store = slice;
                    for (index, (load, store)) in [
                        (&mut parts_load.lower, &mut parts_store.lower),
                        (&mut parts_load.upper, &mut parts_store.upper),
                        (&mut parts_load.step, &mut parts_store.step),
                    ]
                    .into_iter()
                    .enumerate()
                    {
                        if let Some(part) = store.take() {
                            let (l, s) = split_part(*part, &format!("_pvm_k{index}"));
                            *load = Some(Box::new(l));
                            *store = Some(Box::new(s));
                        }
                    }
                    (Expr::Slice(parts_load), Expr::Slice(parts_store))
                }
                key => split_part(key, "_pvm_k"),
            };
            let load = Expr::Subscript(ast::ExprSubscript {
                value: Box::new(container_load),
                slice: Box::new(key_load),
                ctx: ast::ExprContext::Load,
                range,
                node_index: node_index.clone(),
            });
            let store = Expr::Subscript(ast::ExprSubscript {
                value: Box::new(container_store.clone()),
                slice: Box::new(key_store),
                ctx: ast::ExprContext::Store,
                range,
                node_index,
            });
            SplitTarget {
                store,
                load,
                container: Some(container_store),
            }
        }
        other => {
            // The validator admits only the three target kinds above.
            let mut load = other.clone();
            set_load(&mut load);
            SplitTarget {
                store: other,
                load,
                container: None,
            }
        }
    }
}

/// `target op= value` as `target = guard(<target loaded>, value[,
/// container])`, `guard` the operator's native of the family `guard`:
/// [`Guard::Augop`] (which performs the in-place operation) or
/// [`Guard::Binop`] (`%=`, formatting).
pub(super) fn rewrite_augmented(
    assign: &mut ast::StmtAugAssign,
    guard: Guard,
    guard_stores: bool,
) -> Stmt {
    let range = assign.range;
    let value_range = assign.value.range();
    let operator = OperatorCode::of(assign.op);
    let split = split_target(take(&mut assign.target));
    let value = take(&mut assign.value);
    let call = if guard == Guard::Binop {
        guard_call(
            operator.binop_guard(),
            vec![split.load, value],
            Vec::new(),
            value_range,
        )
    } else {
        let mut args = vec![split.load, value];
        if guard_stores {
            if let Some(container) = split.container {
                args.push(container);
            }
        }
        guard_call(operator.augop_guard(), args, Vec::new(), value_range)
    };
    let mut assignment = ruff_python_parser::parse_module("_pvm = 0")
        .expect("template parses")
        .into_syntax()
        .body
        .remove(0);
    if let Stmt::Assign(assignment) = &mut assignment {
        assignment.range = range;
        assignment.targets = vec![split.store];
        *assignment.value = call;
    }
    assignment
}
