//! [`MeteredAllocator`]: a counting global allocator that gives every
//! execution a memory budget.
//!
//! No metering of Python code can see allocations made inside Rust builtins
//! (`list.append` growth, string building), so the budget is enforced where
//! all memory comes from. While an execution runs on a thread, the allocator
//! counts that thread's net bytes; when the count passes the budget it raises
//! a flag, and the VM turns the flag into a deterministic `out_of_memory`
//! abort at the next meter call or guard. It never refuses an allocation
//! (a refused allocation aborts the whole process in Rust), so single huge
//! allocations are stopped *before* they happen by the size guards
//! ([`crate::rules::costs::size::MAX_RESULT_BYTES`]).
//!
//! Determinism: the flag is raised at an allocation, and observed only at the
//! next meter call; both are functions of the executed code and the
//! interpreter's (deterministic) allocation pattern for it.
//!
//! `#[global_allocator]` can only be declared by the final binary or test
//! crate, so every binary and test crate that runs actors must contain:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;
//! ```
//!
//! [`crate::Vm::new`] refuses to start without it (see [`is_installed`]).

// `GlobalAlloc` is an unsafe trait: implementing it (and forwarding to the
// underlying allocator) cannot be done without `unsafe`. This module is the only
// place in the crate that needs it; the code only forwards and counts.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use mimalloc::MiMalloc;

use crate::meter::direct_map;

/// The counting allocator; install it with `#[global_allocator]`.
///
/// It counts and forwards to mimalloc rather than glibc's malloc: a node's
/// heap holds millions of small, long-lived vectors (state keys, tree nodes,
/// block-sized change sets), and glibc's allocator spent a quarter of an
/// end-of-block in `_int_malloc`/`malloc_consolidate` on such a heap
/// (docs/PERFORMANCE.md). The count is of requested layout sizes, so the
/// underlying allocator does not affect what actors are charged.
pub struct MeteredAllocator;

static UNDERLYING: MiMalloc = MiMalloc;

// mimalloc's own option API (linked in with the allocator by
// libmimalloc-sys; its Rust bindings for it need a crate we do not vendor).
extern "C" {
    fn mi_option_set(option: std::os::raw::c_int, value: std::os::raw::c_long);
    fn mi_option_get(option: std::os::raw::c_int) -> std::os::raw::c_long;
}

/// `mi_option_purge_delay`: index 15 of `mi_option_t` in both the v2 and
/// the v3 headers bundled with libmimalloc-sys 0.1.49 (Cargo.lock pins it).
const MI_OPTION_PURGE_DELAY: std::os::raw::c_int = 15;

/// How long memory mimalloc has freed stays mapped before it is returned to
/// the OS, in milliseconds (mimalloc's default: 1,000).
pub const PURGE_DELAY_MS: i64 = 10_000;

/// Keeps freed memory mapped for [`PURGE_DELAY_MS`] instead of 1 s.
///
/// Why: a block allocates and frees a lot (change sets, tree updates,
/// receipts); returning that memory to the OS after 1 s and faulting it back
/// in (the kernel zeroing every page) took up to 29% of an end-to-end fires
/// block, and a node producing a block a second pays it every block. With
/// 10 s, consecutive blocks reuse the memory; an idle node still gives it
/// back. Fires per second, alternating runs of one binary: 14,078–19,801
/// with the default, 17,356–25,147 with 10 s (docs/PERFORMANCE.md).
/// Idempotent; called by `Vm::new`.
pub fn keep_freed_memory_between_blocks() {
    // SAFETY: mimalloc's option setter takes any option index and value and
    // only stores them (options are process-wide atomics).
    unsafe {
        mi_option_set(
            MI_OPTION_PURGE_DELAY,
            PURGE_DELAY_MS as std::os::raw::c_long,
        )
    };
}

/// The purge delay mimalloc currently uses, in milliseconds.
#[allow(clippy::useless_conversion)] // `c_long` is 32 bits on some targets
pub fn purge_delay_ms() -> i64 {
    // SAFETY: reads a process-wide option.
    i64::from(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) })
}

static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    // const-initialised Cells without destructors: safe to touch from inside
    // the allocator (no lazy initialisation, no allocation, no TLS dtor).
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static LIVE_BYTES: Cell<i64> = const { Cell::new(0) };
    static PEAK_BYTES: Cell<i64> = const { Cell::new(0) };
    static BUDGET: Cell<i64> = const { Cell::new(i64::MAX) };
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
    static LAST_PEAK: Cell<i64> = const { Cell::new(0) };
    static LAST_LIVE: Cell<i64> = const { Cell::new(0) };
}

fn record(delta: i64) {
    let _ = ACTIVE.try_with(|active| {
        if !active.get() {
            return;
        }
        let live = LIVE_BYTES.get() + delta;
        LIVE_BYTES.set(live);
        if live > PEAK_BYTES.get() {
            PEAK_BYTES.set(live);
        }
        if live > BUDGET.get() {
            EXCEEDED.set(true);
        }
    });
}

/// Whether an execution's budget counts this thread's allocations now.
#[inline]
fn counting() -> bool {
    ACTIVE.try_with(Cell::get).unwrap_or(false)
}

/// A block for `layout`: mapped directly if an execution asks for a large
/// one ([`direct_map`]), else from mimalloc.
///
/// # Safety
/// As `GlobalAlloc::alloc`.
#[inline]
unsafe fn allocate(layout: Layout, zeroed: bool) -> *mut u8 {
    if direct_map::suits(layout.size(), layout.align()) && counting() {
        // SAFETY: freed by `dealloc` or grown by `realloc`, which find it
        // among the direct mappings by its address.
        let ptr = unsafe { direct_map::acquire(layout.size()) };
        if !ptr.is_null() {
            return ptr;
        }
    }
    // SAFETY: forwarded unchanged to the underlying allocator.
    unsafe {
        if zeroed {
            UNDERLYING.alloc_zeroed(layout)
        } else {
            UNDERLYING.alloc(layout)
        }
    }
}

/// Frees a block of either kind.
///
/// # Safety
/// As `GlobalAlloc::dealloc`.
#[inline]
unsafe fn free(ptr: *mut u8, layout: Layout) {
    if direct_map::suits(layout.size(), layout.align()) && direct_map::is_mapped(ptr) {
        // SAFETY: a live direct mapping of this size.
        return unsafe { direct_map::release(ptr, layout.size()) };
    }
    // SAFETY: `ptr` was allocated by `UNDERLYING` with this layout.
    unsafe { UNDERLYING.dealloc(ptr, layout) }
}

unsafe impl GlobalAlloc for MeteredAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !INSTALLED.load(Ordering::Relaxed) {
            INSTALLED.store(true, Ordering::Relaxed);
        }
        record(layout.size() as i64);
        // SAFETY: GlobalAlloc's contract, passed on.
        unsafe { allocate(layout, false) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record(layout.size() as i64);
        // SAFETY: GlobalAlloc's contract, passed on; a new mapping is zeroed.
        unsafe { allocate(layout, true) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        record(-(layout.size() as i64));
        // SAFETY: GlobalAlloc's contract, passed on.
        unsafe { free(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let mapped = direct_map::suits(layout.size(), layout.align()) && direct_map::is_mapped(ptr);
        let moved = if mapped && direct_map::suits(new_size, layout.align()) {
            // SAFETY: a live direct mapping of the old size.
            unsafe { direct_map::grow(ptr, layout.size(), new_size) }
        } else if mapped || (direct_map::suits(new_size, layout.align()) && counting()) {
            // Across the threshold, or into a mapping: a new block, the
            // contents copied, the old one freed where it came from.
            // SAFETY: `new_size` is non-zero and, with the old alignment,
            // a valid layout (GlobalAlloc's contract for `realloc`).
            let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
            // SAFETY: both blocks are live and distinct, at least the copied
            // length long; the old one is freed as it was allocated.
            unsafe {
                let new = allocate(new_layout, false);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    free(ptr, layout);
                }
                new
            }
        } else {
            // SAFETY: forwarded unchanged to the underlying allocator.
            unsafe { UNDERLYING.realloc(ptr, layout, new_size) }
        };
        if !moved.is_null() {
            record(new_size as i64 - layout.size() as i64);
        }
        moved
    }
}

/// Has [`MeteredAllocator`] served at least one allocation in this process?
pub fn is_installed() -> bool {
    // Make sure at least one allocation has happened before asking.
    drop(std::hint::black_box(Box::new(0u8)));
    INSTALLED.load(Ordering::Relaxed)
}

/// Counts this thread's allocations against `budget_bytes` until dropped.
/// Nested budgets are not supported: an inner call inherits the outer budget.
pub struct MemoryBudget {
    owner: bool,
}

impl MemoryBudget {
    /// Starts counting against `budget_bytes` (a no-op inside another budget).
    pub fn start(budget_bytes: u64) -> MemoryBudget {
        if ACTIVE.get() {
            return MemoryBudget { owner: false };
        }
        LIVE_BYTES.set(0);
        PEAK_BYTES.set(0);
        EXCEEDED.set(false);
        BUDGET.set(i64::try_from(budget_bytes).unwrap_or(i64::MAX));
        ACTIVE.set(true);
        MemoryBudget { owner: true }
    }

    /// Has the execution gone over its budget?
    #[inline]
    pub fn exceeded() -> bool {
        EXCEEDED.get()
    }

    /// Bytes still available before the budget trips (0 when over).
    pub fn remaining() -> u64 {
        if !ACTIVE.get() {
            return u64::MAX;
        }
        (BUDGET.get() - LIVE_BYTES.get()).max(0) as u64
    }

    /// Highest net allocation seen so far in this execution.
    pub fn peak() -> u64 {
        PEAK_BYTES.get().max(0) as u64
    }
}

/// Stops counting this thread's allocations until dropped (then the
/// counting state is back exactly as it was): what a module load allocates
/// is the interpreter's, not the running execution's.
pub struct SuspendedBudget {
    saved: (bool, i64, i64, i64, bool),
}

impl SuspendedBudget {
    /// Suspends the budget in force, if any.
    pub fn start() -> SuspendedBudget {
        let saved = (
            ACTIVE.get(),
            LIVE_BYTES.get(),
            PEAK_BYTES.get(),
            BUDGET.get(),
            EXCEEDED.get(),
        );
        ACTIVE.set(false);
        SuspendedBudget { saved }
    }
}

impl Drop for SuspendedBudget {
    fn drop(&mut self) {
        let (active, live, peak, budget, exceeded) = self.saved;
        LIVE_BYTES.set(live);
        PEAK_BYTES.set(peak);
        BUDGET.set(budget);
        EXCEEDED.set(exceeded);
        ACTIVE.set(active);
    }
}

/// Peak net allocation of the last execution that finished on this thread.
///
/// Diagnostics only (tests, profiling): it is a real byte count, so it is not
/// part of any receipt; see docs/METERING.md "Memory".
pub fn last_peak_bytes() -> u64 {
    LAST_PEAK.get().max(0) as u64
}

/// Net bytes the last execution that finished on this thread left
/// allocated (negative when it freed more than it allocated): what it left
/// behind, cyclic garbage included, until a collection. Not part of any
/// receipt; the runtime collects once enough has been left
/// ([`crate::interpreter::runtime`]).
pub fn last_live_bytes() -> i64 {
    LAST_LIVE.get()
}

impl Drop for MemoryBudget {
    fn drop(&mut self) {
        if self.owner {
            LAST_PEAK.set(PEAK_BYTES.get());
            LAST_LIVE.set(LIVE_BYTES.get());
            ACTIVE.set(false);
            BUDGET.set(i64::MAX);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn mapped<T>(buffer: &[T]) -> bool {
        direct_map::is_mapped(buffer.as_ptr().cast_mut().cast())
    }

    #[test]
    fn an_executions_large_buffers_are_mapped_directly_and_the_nodes_are_not() {
        let large = direct_map::DIRECT_MAP_BYTES;
        // Outside an execution (the node's own buffers): mimalloc's.
        let nodes: Vec<u8> = Vec::with_capacity(large);
        assert!(!mapped(&nodes));
        drop(nodes);

        let _budget = MemoryBudget::start(u64::MAX);
        // A buffer doubled past the threshold moves into a mapping, keeps its
        // contents as it grows, and goes back to mimalloc when shrunk below.
        let mut items: Vec<u64> = (0..1_000).collect();
        while items.len() * 8 < 2 * large {
            items.extend_from_within(..);
        }
        assert!(mapped(&items));
        assert!(items
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (i % 1_000) as u64));
        items.truncate(1_000);
        items.shrink_to_fit();
        assert!(!mapped(&items));
        assert!(items.iter().enumerate().all(|(i, &v)| v == i as u64));
        // A zeroed one is mapped too, and reads as zeroes.
        let zeroed = vec![0u8; large];
        assert!(mapped(&zeroed));
        assert!(zeroed.iter().step_by(4096).all(|&b| b == 0));
    }
}
