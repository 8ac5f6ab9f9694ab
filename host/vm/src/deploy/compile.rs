//! Deploy-time compilation: parse → validate ([`crate::deploy::sandbox`]) → find the
//! actor class → instrument ([`crate::deploy::instrument`]) → compile to bytecode.
//! Done once per code hash; the result is cached by [`crate::Vm`].

use std::collections::HashMap;

use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_source_file::{LineIndex, SourceFileBuilder};
use ruff_text_size::Ranged;
use rustpython_compiler_core::bytecode::CodeObject;
use timerhost_types::{check_handler_name, keccak256, ErrorKind, Hash, Invocation, MAX_CODE_BYTES};

use crate::deploy::sandbox::{self, DeployRejection};

/// An actor's validated, instrumented bytecode.
#[derive(Clone)]
pub struct CompiledActor {
    /// keccak256 of the source.
    pub code_hash: Hash,
    /// Name of the actor class.
    pub class_name: String,
    /// Public methods of the actor class (including inherited ones), sorted.
    pub handlers: Vec<String>,
    /// The handlers only a timer fire may invoke: `handle_timer` and every
    /// method decorated `@pvm_host.timer_handler`, sorted.
    pub timer_handlers: Vec<String>,
    /// Variables some function of the module rebinds with `nonlocal`: a
    /// closure made at load over one of them would be shared state
    /// ([`crate::interpreter::load::freeze`] refuses it).
    pub(crate) nonlocal_names: Vec<String>,
    /// Does the module rebind its globals (`global x`)? Then they are reset
    /// to what the load made at every invocation.
    pub(crate) rebinds_globals: bool,
    /// The module with the `_pvm_mut` guard on every subscript store: used
    /// when its load leaves lists, dicts, sets or instances behind
    /// ([`crate::interpreter::constants`]).
    pub(crate) bytecode: CodeObject,
    /// The same module without those guards: used when its load leaves no
    /// mutable value (nothing a call could write survives it), which the
    /// runtime checks by loading it first ([`crate::interpreter::runtime`]).
    pub(crate) unguarded: CodeObject,
}

impl std::fmt::Debug for CompiledActor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledActor")
            .field("code_hash", &self.code_hash)
            .field("class_name", &self.class_name)
            .field("handlers", &self.handlers)
            .field("timer_handlers", &self.timer_handlers)
            .finish_non_exhaustive()
    }
}

fn rejection(line: usize, construct: &str, reason: impl Into<String>) -> DeployRejection {
    DeployRejection {
        line,
        construct: construct.to_owned(),
        reason: reason.into(),
    }
}

/// The native stack deploy-time compilation runs on. The parsed tree of a
/// source of [`MAX_CODE_BYTES`] can be ~130,000 nodes deep (`x + 1 + 1 +
/// …`); the validator refuses it at depth 1,000 (`crate::deploy::sandbox`), but the
/// parser's tree is dropped recursively, one frame per level: on an 8 MiB
/// stack (a Python process's main thread, where the in-process chain
/// deploys) that overflowed and aborted the process; 64 MiB holds it
/// (release build, measured). Reserved, committed only where touched.
const COMPILE_STACK_BYTES: usize = 64 << 20;

/// Validates and compiles actor source, on a thread of its own with
/// [`COMPILE_STACK_BYTES`] of stack whatever the caller's (inline if no
/// thread can be started).
pub fn validate_and_compile(source: &str) -> Result<CompiledActor, DeployRejection> {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("compile".to_owned())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn_scoped(scope, || validate_and_compile_here(source))
        {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => validate_and_compile_here(source),
        }
    })
}

fn validate_and_compile_here(source: &str) -> Result<CompiledActor, DeployRejection> {
    if source.len() > MAX_CODE_BYTES {
        return Err(rejection(
            0,
            "source",
            format!("actor source is limited to {MAX_CODE_BYTES} bytes"),
        ));
    }
    let code_hash = keccak256(source.as_bytes());
    let lines = LineIndex::from_source_text(source);
    let parsed = ruff_python_parser::parse_module(source).map_err(|error| {
        let line = lines.line_index(error.location.start()).get();
        rejection(line, "syntax", error.error.to_string())
    })?;
    let mut module = parsed.into_syntax();
    sandbox::validate(source, &module)?;
    let ActorClass {
        name: class_name,
        handlers,
        timer_handlers,
    } = find_actor_class(&module, &lines)?;
    let (nonlocal_names, rebinds_globals) = scoped_names(&module);
    let mut unguarded_module = module.clone();
    crate::deploy::instrument::instrument(&mut module);
    crate::deploy::instrument::instrument_without_store_guards(&mut unguarded_module);
    let compile = |module: ast::ModModule| {
        let source_file = SourceFileBuilder::new(format!("actor:{code_hash}"), source).finish();
        rustpython_codegen::compile::compile_top(
            ast::Mod::Module(module),
            source_file,
            rustpython_compiler_core::Mode::Exec,
            rustpython_codegen::CompileOpts::default(),
        )
        .map_err(|error| {
            let line = error.location.map_or(0, |l| l.line.get());
            rejection(line, "compile", error.error.to_string())
        })
    };
    let bytecode = compile(module)?;
    let unguarded = compile(unguarded_module)?;
    Ok(CompiledActor {
        code_hash,
        class_name,
        handlers,
        timer_handlers,
        nonlocal_names,
        rebinds_globals,
        bytecode,
        unguarded,
    })
}

/// The names the module declares `nonlocal`, and whether it declares any
/// `global`.
fn scoped_names(module: &ast::ModModule) -> (Vec<String>, bool) {
    use ruff_python_ast::visitor::{walk_stmt, Visitor};
    #[derive(Default)]
    struct Declarations {
        nonlocal: Vec<String>,
        global: bool,
    }
    impl<'a> Visitor<'a> for Declarations {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            match stmt {
                Stmt::Nonlocal(nonlocal) => self
                    .nonlocal
                    .extend(nonlocal.names.iter().map(|n| n.to_string())),
                Stmt::Global(_) => self.global = true,
                _ => {}
            }
            walk_stmt(self, stmt);
        }
    }
    let mut declarations = Declarations::default();
    for stmt in &module.body {
        declarations.visit_stmt(stmt);
    }
    declarations.nonlocal.sort();
    declarations.nonlocal.dedup();
    (declarations.nonlocal, declarations.global)
}

impl CompiledActor {
    /// May only a timer fire invoke `handler`?
    pub fn is_timer_handler(&self, handler: &str) -> bool {
        self.timer_handlers
            .binary_search_by(|h| h.as_str().cmp(handler))
            .is_ok()
    }
}

/// The actor class of a module and what its methods are for.
struct ActorClass {
    name: String,
    handlers: Vec<String>,
    timer_handlers: Vec<String>,
}

/// The module's one class, or its one `@actor` class, and its public methods.
fn find_actor_class(
    module: &ast::ModModule,
    lines: &LineIndex,
) -> Result<ActorClass, DeployRejection> {
    let classes: Vec<&ast::StmtClassDef> = module
        .body
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::ClassDef(class) => Some(class),
            _ => None,
        })
        .collect();
    let marked: Vec<&&ast::StmtClassDef> = classes
        .iter()
        .filter(|class| {
            class
                .decorator_list
                .iter()
                .any(|d| matches!(&d.expression, Expr::Name(n) if n.id.as_str() == "actor"))
        })
        .collect();
    // Without `@actor`, the actor is the one class with public methods
    // (helper classes with only `__init__` and dunders, exceptions, and
    // dataclasses without methods do not count).
    let with_handlers: Vec<&&ast::StmtClassDef> = classes
        .iter()
        .filter(|class| {
            class.body.iter().any(
                |stmt| matches!(stmt, Stmt::FunctionDef(f) if !f.name.as_str().starts_with('_')),
            )
        })
        .collect();
    let chosen = match (classes.len(), marked.len()) {
        (0, _) => {
            return Err(rejection(
                0,
                "module",
                "an actor module must define a class",
            ))
        }
        (_, 1) => *marked[0],
        (1, 0) => classes[0],
        (_, 0) if with_handlers.len() == 1 => with_handlers[0],
        (_, 0) => {
            let line = lines.line_index(classes[1].start()).get();
            return Err(rejection(
                line,
                "class",
                "several classes with public methods: mark the actor with @actor",
            ));
        }
        (_, _) => {
            let line = lines.line_index(marked[1].start()).get();
            return Err(rejection(
                line,
                "@actor",
                "only one class may be marked @actor",
            ));
        }
    };
    let by_name: HashMap<&str, &ast::StmtClassDef> =
        classes.iter().map(|c| (c.name.as_str(), *c)).collect();
    let mut handlers = Vec::new();
    let mut timer_handlers = vec![timerhost_types::timer::DEFAULT_TIMER_HANDLER.to_owned()];
    let mut pending = vec![chosen];
    let mut seen = 0;
    while let Some(class) = pending.pop() {
        seen += 1;
        if seen > 64 {
            break;
        }
        for stmt in &class.body {
            if let Stmt::FunctionDef(function) = stmt {
                let name = function.name.as_str();
                if crate::rules::names::ACTOR_REFUSED_DUNDER_METHODS.contains(&name) {
                    let line = lines.line_index(function.start()).get();
                    return Err(rejection(
                        line,
                        &format!("def {name}"),
                        "not on the actor class: it would intercept self.storage, self.address and self.deployer, which the VM sets on every invocation (helper classes may define it)",
                    ));
                }
                let is_static = function.decorator_list.iter().any(
                    |d| matches!(&d.expression, Expr::Name(n) if n.id.as_str() == "staticmethod"),
                );
                if !name.starts_with('_') && !is_static {
                    handlers.push(name.to_owned());
                    if function
                        .decorator_list
                        .iter()
                        .any(sandbox::is_timer_handler_decorator)
                    {
                        timer_handlers.push(name.to_owned());
                    }
                }
            }
        }
        if let Some(arguments) = &class.arguments {
            for base in arguments.args.iter() {
                if let Expr::Name(base) = base {
                    if let Some(base_class) = by_name.get(base.id.as_str()) {
                        pending.push(base_class);
                    }
                }
            }
        }
    }
    handlers.sort();
    handlers.dedup();
    timer_handlers.sort();
    timer_handlers.dedup();
    Ok(ActorClass {
        name: chosen.name.to_string(),
        handlers,
        timer_handlers,
    })
}

/// Why `handler` is not a name any invocation may run, if it is not: the
/// one rule of [`check_handler_name`].
pub(crate) fn refuse_name(handler: &str) -> Option<(ErrorKind, String)> {
    check_handler_name(handler).err().map(|reason| {
        let shown: String = handler.chars().take(64).collect();
        (
            ErrorKind::InvalidInput,
            format!("'{shown}' is not a public handler: {reason}"),
        )
    })
}

/// Why `invocation` may not run `handler` of `compiled`, if it may not: a
/// timer handler invoked by anything but a timer fire.
pub(crate) fn refuse_timer_handler(
    compiled: &CompiledActor,
    handler: &str,
    invocation: &Invocation,
) -> Option<(ErrorKind, String)> {
    (*invocation == Invocation::Transaction && compiled.is_timer_handler(handler)).then(|| {
        (
            ErrorKind::Unauthorized,
            format!(
                "'{handler}' is a timer handler: only a timer fire can invoke it, not a transaction or pvm_host.call"
            ),
        )
    })
}
