//! The VM's library modules: `typing`, `dataclasses`, `enum`,
//! `collections`, `functools`, `itertools`, `bisect`, `operator`,
//! `string`, `heapq`, `copy` and `contextlib`, written in Python
//! (`src/stdlib/*.py`) as the deterministic subset of their CPython
//! namesakes.
//!
//! They are trusted code — not validated, since they use metaclasses and
//! introspection actors may not — but instrumented exactly like actor code,
//! so every loop and call in them is metered: `itertools.count()` consumed by
//! `list()` runs out of cycles, a `dataclass` with many fields costs its
//! fields. Each is compiled once per process and executed once per
//! interpreter, on first import, under a load budget of its own
//! ([`crate::interpreter::load::run_load`]), so importing one costs no execution anything;
//! what it defined is then frozen like a loaded actor module
//! ([`crate::interpreter::load::freeze`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;

use ruff_python_ast as ast;
use ruff_source_file::SourceFileBuilder;
use rustpython_compiler_core::bytecode::CodeObject;
use rustpython_vm::builtins::PyDictRef;
use rustpython_vm::scope::Scope;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// The library modules and their sources.
pub const LIBRARY_MODULES: &[(&str, &str)] = &[
    ("typing", include_str!("stdlib/typing.py")),
    ("dataclasses", include_str!("stdlib/dataclasses.py")),
    ("enum", include_str!("stdlib/enum.py")),
    ("collections", include_str!("stdlib/collections.py")),
    ("functools", include_str!("stdlib/functools.py")),
    ("itertools", include_str!("stdlib/itertools.py")),
    ("bisect", include_str!("stdlib/bisect.py")),
    ("operator", include_str!("stdlib/operator.py")),
    ("string", include_str!("stdlib/string.py")),
    ("heapq", include_str!("stdlib/heapq.py")),
    ("copy", include_str!("stdlib/copy.py")),
    ("contextlib", include_str!("stdlib/contextlib.py")),
    ("collections.abc", include_str!("stdlib/collections_abc.py")),
];

/// Cycles a library module may spend while it loads (defining classes with
/// metaclasses and decorators is real work; it is paid once per
/// interpreter and by nobody).
pub const LIBRARY_LOAD_CYCLES: u64 = 50_000_000;

/// The instrumented bytecode of every library module, compiled on first use.
fn compiled() -> &'static HashMap<&'static str, Result<CodeObject, String>> {
    static COMPILED: OnceLock<HashMap<&'static str, Result<CodeObject, String>>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        LIBRARY_MODULES
            .iter()
            .map(|(name, source)| (*name, compile(name, source)))
            .collect()
    })
}

fn compile(name: &str, source: &str) -> Result<CodeObject, String> {
    let parsed = ruff_python_parser::parse_module(source)
        .map_err(|error| format!("library module {name} does not parse: {error}"))?;
    let mut module = parsed.into_syntax();
    // Guarded like actor code: a library object an actor module makes at
    // load (`QUEUE = deque()`) is one of that module's values, and the
    // library's own stores write into it.
    crate::deploy::instrument::instrument(&mut module);
    let source_file = SourceFileBuilder::new(format!("<pvm {name}>"), source).finish();
    rustpython_codegen::compile::compile_top(
        ast::Mod::Module(module),
        source_file,
        rustpython_compiler_core::Mode::Exec,
        rustpython_codegen::CompileOpts::default(),
    )
    .map_err(|error| format!("library module {name} does not compile: {}", error.error))
}

thread_local! {
    /// This interpreter's loaded library modules.
    static LOADED: RefCell<HashMap<&'static str, PyObjectRef>> = RefCell::new(HashMap::new());
}

/// `import name` of a library module (`None`: not a library module).
pub(crate) fn import(
    name: &str,
    builtins: &PyDictRef,
    invoke: crate::host_api::exec::Invoke,
    vm: &VirtualMachine,
) -> Option<PyResult> {
    let (name, _) = LIBRARY_MODULES.iter().find(|(n, _)| *n == name)?;
    if let Some(module) = LOADED.with(|loaded| loaded.borrow().get(name).cloned()) {
        return Some(Ok(module));
    }
    Some(load(name, builtins, invoke, vm))
}

fn load(
    name: &'static str,
    builtins: &PyDictRef,
    invoke: crate::host_api::exec::Invoke,
    vm: &VirtualMachine,
) -> PyResult {
    let code = match compiled().get(name).expect("listed") {
        Ok(code) => code.clone(),
        Err(message) => return Err(vm.new_import_error(message.clone(), vm.ctx.new_str(name))),
    };
    let globals = vm.ctx.new_dict();
    globals.set_item("__builtins__", builtins.clone().into(), vm)?;
    globals.set_item("__name__", vm.ctx.new_str(name).into(), vm)?;
    globals.set_item(
        "_pvm_epoch",
        vm.new_function("_pvm_epoch", crate::host_api::exec::current_epoch)
            .into(),
        vm,
    )?;
    for native in ["_pvm_set_class_attr", "_pvm_del_class_attr"] {
        globals.set_item(
            native,
            vm.new_function(native, crate::interpreter::load::set_class_attribute)
                .into(),
            vm,
        )?;
    }
    let definer_builtins = builtins.clone();
    globals.set_item(
        "_pvm_def",
        vm.new_function(
            "_pvm_def",
            move |source: rustpython_vm::builtins::PyStrRef,
                  namespace: PyDictRef,
                  vm: &VirtualMachine|
                  -> PyResult {
                define_function(&source, namespace, &definer_builtins, vm)
            },
        )
        .into(),
        vm,
    )?;
    globals.set_item(
        "_pvm_make_class",
        vm.new_function(
            "_pvm_make_class",
            crate::interpreter::identity::make_class_native,
        )
        .into(),
        vm,
    )?;
    globals.set_item(
        "_pvm_object_setattr",
        vm.new_function("_pvm_object_setattr", object_setattr)
            .into(),
        vm,
    )?;
    let code = crate::interpreter::generic_ops::metered_code(vm, code);
    let ran = crate::interpreter::load::run_load(invoke, LIBRARY_LOAD_CYCLES, || {
        vm.run_code_obj(code, Scope::new(None, globals.clone()))
    });
    let failed = |message: String| {
        Err(vm.new_import_error(
            format!("library module {name} failed to load: {message}"),
            vm.ctx.new_str(name),
        ))
    };
    match ran {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => return failed(crate::host_api::exec::exception_message(&error, vm)),
        Err(abort) => return failed(crate::meter::charge::abort_message(abort).to_owned()),
    }
    if let Err(mutable) = crate::interpreter::load::freeze(
        &globals,
        &[],
        crate::interpreter::load::Mutables::Refused,
        vm,
    ) {
        return failed(mutable.to_string());
    }
    let module: PyObjectRef = vm.new_module(name, globals, None).into();
    crate::interpreter::load::freeze_objects([&module]);
    LOADED.with(|loaded| loaded.borrow_mut().insert(name, module.clone()));
    Ok(module)
}

/// `_pvm_object_setattr(obj, name, value)`: `object.__setattr__` for the
/// library's own classes (frozen dataclasses, sentinels), through
/// [`crate::interpreter::constants::before_write`] so a write to a value made at load —
/// `ORIGIN.__init__(1, 2)` on a frozen dataclass constant — is undone after
/// the call like any other.
fn object_setattr(
    obj: PyObjectRef,
    name: PyObjectRef,
    value: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    crate::interpreter::constants::before_write(&obj, vm)?;
    vm.ctx
        .types
        .object_type
        .as_object()
        .get_attr("__setattr__", vm)?
        .call((obj, name, value), vm)?;
    Ok(())
}

/// `_pvm_def(source, namespace)`: the function a library module generates
/// as source (a `dataclass`'s `__init__`, `__eq__`, …, as CPython's
/// `dataclasses` does with `exec`), instrumented and compiled like library
/// code and defined with `namespace` as its globals. One `def` statement
/// only. Charged before the work by its source's bytes
/// ([`crate::rules::costs::code::GENERATED_FUNCTION`]).
fn define_function(
    source: &rustpython_vm::builtins::PyStr,
    namespace: PyDictRef,
    builtins: &PyDictRef,
    vm: &VirtualMachine,
) -> PyResult {
    let text = source
        .to_str()
        .ok_or_else(|| vm.new_value_error("_pvm_def needs UTF-8 source"))?;
    crate::meter::charge::charge_if_executing(
        crate::rules::costs::code::GENERATED_FUNCTION
            + crate::rules::costs::code::GENERATED_FUNCTION_PER_BYTE * text.len() as u64,
        vm,
    )?;
    let parsed = ruff_python_parser::parse_module(text)
        .map_err(|error| vm.new_value_error(format!("_pvm_def: {error}")))?;
    let mut module = parsed.into_syntax();
    let name = match module.body.as_slice() {
        [ast::Stmt::FunctionDef(function)] => function.name.to_string(),
        _ => return Err(vm.new_value_error("_pvm_def takes one def statement")),
    };
    crate::deploy::instrument::instrument(&mut module);
    let source_file = SourceFileBuilder::new("<pvm generated>", text).finish();
    let code = rustpython_codegen::compile::compile_top(
        ast::Mod::Module(module),
        source_file,
        rustpython_compiler_core::Mode::Exec,
        rustpython_codegen::CompileOpts::default(),
    )
    .map_err(|error| vm.new_value_error(format!("_pvm_def: {}", error.error)))?;
    namespace.set_item("__builtins__", builtins.clone().into(), vm)?;
    let code = crate::interpreter::generic_ops::metered_code(vm, code);
    vm.run_code_obj(code, Scope::new(None, namespace.clone()))?;
    namespace.get_item(name.as_str(), vm)
}
