//! The cost table: every number the VM charges, in one place. Changing any of
//! them changes consensus (cycle counts are part of receipts), so the pinned
//! cycle-count test in `tests/determinism.rs` fails on purpose when they move.
//! `docs/METERING.md` explains each one.

/// Static weights of executed code, charged per basic block by the meter
/// calls the instrumenter inserts (see [`crate::deploy::instrument`]).
pub mod code {
    /// Every statement executed (bookkeeping, stores, jumps).
    pub const STATEMENT: u64 = 1;
    /// Arithmetic, bitwise, boolean and comparison operators, unary ops.
    pub const OPERATOR: u64 = 1;
    /// A name load (local, global or builtin).
    pub const NAME: u64 = 0;
    /// An attribute load.
    pub const ATTRIBUTE: u64 = 2;
    /// A subscript (`x[i]`, dict or list access).
    pub const SUBSCRIPT: u64 = 3;
    /// A call (Python or native), before what the callee itself charges.
    pub const CALL: u64 = 10;
    /// Building a container display (`[..]`, `{..}`, `(..)`), plus one per element.
    pub const CONTAINER: u64 = 2;
    /// One loop iteration (for/while) or comprehension item.
    pub const ITERATION: u64 = 2;
    /// Entering a function body (frame setup).
    pub const FUNCTION_ENTRY: u64 = 5;
    /// An f-string, plus [`FORMAT_INTERPOLATION`] per interpolated value.
    pub const FORMAT: u64 = 5;
    /// Each value an f-string interpolates: formatted through its type's
    /// `__format__` (an actor's subclass of a container through a method
    /// lookup along its MRO, then `str`, then `repr`), ~0.3–1 µs. At 1,
    /// `f"{x}"` of a one-item list or dict subclass ran at 3.3–3.4×
    /// ordinary code per cycle (the metering fuzzer's second long run, #47),
    /// and at 4 still up to 3.4× in the third.
    pub const FORMAT_INTERPOLATION: u64 = 6;
    /// Per replacement field of a `str.format`/`format_map` template (parsed
    /// and formatted natively on every call; half of it per `%` conversion,
    /// which RustPython formats about twice as fast).
    pub const FORMAT_FIELD: u64 = 8;
    /// Creating a class (`class X: …` run): RustPython builds the type, its
    /// slots and its MRO natively, and the VM gives it its address-free
    /// identity and metered comparisons — ~24 µs for a class without bases
    /// (the metering fuzzer, release build, issue #47: 89 ns per cycle when
    /// this was 150; ordinary code ~25).
    pub const CLASS_CREATION: u64 = 600;
    /// Entering an `except` handler: the exception caught was made, its
    /// message formatted and its traceback built natively, and the stack
    /// unwound to the handler — ~0.5–1.5 µs in RustPython, for any exception a
    /// native raises (`{[]: 1}`'s `TypeError` in a loop ran at ~65 ns per
    /// cycle when a handler cost a statement; the metering fuzzer, #47).
    pub const EXCEPTION_HANDLED: u64 = 48;
    /// A missing attribute of a module (`math.prod`): RustPython's module
    /// looks for a module `__getattr__`, reads the module's name and spec and
    /// checks it against the standard library's names before it formats the
    /// error — ~2.5 µs with the handler; `math.prod(x)` in a `try` ran at
    /// ~2.5× ordinary code per cycle when only the handler was paid (the
    /// metering fuzzer's short run, #47). Charged as the lookup fails.
    pub const MODULE_ATTRIBUTE_MISS: u64 = 40;
    /// An exception a native makes and swallows itself: `hasattr` and
    /// `getattr` with a default when the attribute is missing, and
    /// `dict(pairs)`/`dict.update(pairs)`, whose argument RustPython probes
    /// for `keys` (a formatted `AttributeError`, then discarded). The same
    /// work as a handled exception, charged as the native swallows it. Found
    /// by the metering fuzzer (#47): `dict(zip(x, x))` of two items ran at
    /// ~3.9× ordinary code per cycle, `hasattr(x, "missing")` at ~4×.
    pub const EXCEPTION_SWALLOWED: u64 = EXCEPTION_HANDLED;
    /// Making a function object: a `def`, a `lambda`, or the hidden
    /// function a comprehension or generator expression runs in (its code,
    /// qualified name, defaults and closure cells, ~0.5–0.7 µs in
    /// RustPython). Found by the metering fuzzer (issue #47): `def f():
    /// pass` in a loop ran at ~110 ns per cycle, a one-item comprehension at
    /// ~100, when they cost a container display's 2 cycles.
    pub const FUNCTION_CREATION: u64 = 24;
    /// And a generator expression's generator and frame, made on top of its
    /// function (~1.2 µs in all, ~170 ns per cycle before).
    pub const GENERATOR_CREATION: u64 = 12;
    /// A function a library module generates as source (`_pvm_def`: a
    /// dataclass's `__init__`, `__eq__`, …), parsed, instrumented and compiled
    /// natively: a base, plus [`GENERATED_FUNCTION_PER_BYTE`] per byte of its
    /// source. Measured with a dataclass (four fields, `order=True`) made in
    /// a loop: ~680 µs per class, ~2 KB of generated source, 90 ns per cycle
    /// when a generated function cost 150 + 1 per byte.
    pub const GENERATED_FUNCTION: u64 = 1_000;
    /// Per byte of generated source (see [`GENERATED_FUNCTION`]).
    pub const GENERATED_FUNCTION_PER_BYTE: u64 = 12;
    /// And per entry of the new class's MRO: slot inheritance walks all of
    /// it, ~1.9 µs per entry (a chain of 1,000 classes, each deriving from
    /// the last, took 933 ms with this charge absent — quadratic in depth).
    pub const CLASS_PER_MRO_ENTRY: u64 = 16;
    /// And per name in the new class's namespace (copied into the type,
    /// looked up for `__set_name__` and special methods: ~0.4 µs a name in
    /// a class of 3,000, found by the metering fuzzer, issue #47).
    pub const CLASS_PER_NAME: u64 = 12;
}

/// Size surcharges for operations whose work grows with their input; charged by
/// the guard natives before (for the input) and after (for the output) the
/// operation itself.
pub mod size {
    /// Per element of a container an operation walks (`sum`, `in`, `sorted`, …).
    pub const PER_ELEMENT: u64 = 1;
    /// Per call of a `key` function a native makes (`sorted`, `min`, `max`,
    /// `list.sort`): the call's own cost, before what the key charges.
    pub const KEY_CALL: u64 = 8;
    /// Per 16 bytes of str/bytes an operation reads or produces.
    pub const BYTES_PER_CYCLE: u64 = 16;
    /// Bytes of two ints' limbs an addition or subtraction (and the walk of
    /// a division's operands, and writing an int result) covers per cycle.
    pub const INT_BYTES_PER_CYCLE: u64 = 128;
    /// Per element hashed and inserted into a set or dict a native builds or
    /// grows (`a | b`, `set(x)`, `d.update(x)`: ~50 ns an element at one).
    pub const PER_ELEMENT_BUILT: u64 = 4;
    /// The first write in an invocation to a value made at load (a module
    /// constant, [`crate::interpreter::constants`]): marking it and restoring it when the
    /// invocation ends, plus [`PER_ELEMENT`] per item of a list (16 bytes
    /// of a bytearray) or [`PER_ELEMENT_BUILT`] per entry of a dict, set or
    /// instance restored.
    pub const RESTORE_BASE: u64 = 20;
    /// `sorted`/`list.sort`: extra factor of log2(n) per element.
    pub const SORT_LOG_FACTOR: u64 = 1;
    /// Per value inside a container converted between Python objects and the
    /// canonical encoding (storage, events, cross-actor calls, `json`): each
    /// is an object to walk or build, 80–200 ns in RustPython.
    pub const PER_CONVERTED_ITEM: u64 = 8;
    /// Largest result any single operation may produce, in bytes; beyond it
    /// the execution fails with `out_of_memory` *before* allocating.
    pub const MAX_RESULT_BYTES: u64 = 16 * 1024 * 1024;
}

/// Host-call costs used by [`crate::testing::MockHost`] and recommended to the
/// chain (CIP-3 / CIP-5 §6.1).
pub mod host {
    /// Reading one storage slot.
    pub const STORAGE_READ: u64 = 10;
    /// Writing or deleting one storage slot.
    pub const STORAGE_WRITE: u64 = 50;
    /// One step of an ordered key scan.
    pub const STORAGE_NEXT_KEY: u64 = 10;
    /// The VM's own work for a `timer_quote` (binding its keywords, building
    /// the result dict), charged on top of the host's cost (160 ran at
    /// ~2.6× ordinary code against the mock host, the metering fuzzer, #47).
    pub const TIMER_QUOTE_VM: u64 = 250;
    /// The VM's own work per step of a key scan (charged by the VM on top
    /// of the host's `STORAGE_NEXT_KEY`).
    pub const STORAGE_KEY_STEP_VM: u64 = 30;
    /// Looking up an actor's record (code hash, deployer).
    pub const ACTOR_LOOKUP: u64 = 10;
    /// Reading a balance.
    pub const BALANCE: u64 = 10;
    /// A value transfer.
    pub const TRANSFER: u64 = 100;
    /// Emitting an event (plus its bytes in cells).
    pub const EMIT: u64 = 30;
    /// A nested actor call (plus its arguments in cells), before the callee runs.
    pub const CALL: u64 = 100;
    // The timer host-call costs (CIP-5 §6.1) are consensus constants the
    // timers crate charges too: they live in `timerhost_types::timer`
    // (`SET_TIMER_BASE_CYCLES`, `EXTEND_TIMER_CYCLES`, `CANCEL_TIMER_CYCLES`,
    // `REVOKE_TIMER_PAYMENTS_CYCLES`).
    /// Block info, tx sender, actor address: constant per execution.
    pub const CONTEXT_READ: u64 = 2;
    /// Hashing (keccak256/sha256): base, plus [`super::size`] per input byte.
    pub const HASH_BASE: u64 = 30;
}

/// Cells: bytes that become durable or leave the VM.
pub mod cells {
    /// Fixed overhead per storage write (key bookkeeping), plus key and value bytes.
    pub const STORAGE_WRITE_OVERHEAD: u64 = 32;
    /// Fixed overhead per event, plus name and data bytes.
    pub const EVENT_OVERHEAD: u64 = 16;
}

/// Cycles needed for `bytes` bytes of str/bytes work.
pub fn for_bytes(bytes: u64) -> u64 {
    bytes / size::BYTES_PER_CYCLE
}
