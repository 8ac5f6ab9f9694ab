//! Large allocations an actor's execution makes, mapped from the OS
//! directly, so that what it frees is given back at once and a growing
//! buffer is moved, not copied.
//!
//! mimalloc keeps freed memory mapped for
//! [`PURGE_DELAY_MS`](crate::meter::alloc::PURGE_DELAY_MS) (a block's many
//! allocations reuse it), and grows a large block by allocating the new
//! size, copying and freeing the old. A list an actor grows by doubling
//! therefore held every size it had passed through, and the last two at
//! once: `[a for a in x for b in y if b]`, stopped by its 64 MiB budget at a
//! counted peak of 95 MB, grew the process by 202 MiB (the metering fuzzer,
//! seed 5757, #47). Mapped directly, a buffer of at least
//! [`DIRECT_MAP_BYTES`] grows with `mremap` (the pages move; nothing is
//! copied or left behind) and is unmapped when freed: the same program
//! grows the process by 94 MiB.
//!
//! Only allocations made while an execution's budget counts are mapped
//! here: the node's own large buffers (a block's change set, sled's) stay
//! with mimalloc, which keeps their pages warm from block to block (mapped
//! fresh, a 20,000-fire block ran 3.4 % slower). A freed block is known as
//! one of these by its address, kept in [`MAPPED`] while it lives; when
//! every slot is taken an allocation simply stays with mimalloc. The count
//! the budget keeps is of requested sizes either way: this changes the
//! process's footprint, never an execution's outcome.
//!
//! Linux only (`mremap`); elsewhere every allocation stays with mimalloc.

// Mapping memory for the global allocator cannot be done without `unsafe`;
// the calls only map, remap and unmap whole regions this module made.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

/// Allocations of at least this many bytes made during an execution are
/// mapped directly (see the module docs). Below it the sizes a doubling
/// buffer leaves behind add up to less than this.
pub const DIRECT_MAP_BYTES: usize = 16 << 20;

/// The smallest page size of the platforms we build for: a mapping is
/// aligned to it, so a layout asking for more stays with mimalloc.
const MIN_PAGE_BYTES: usize = 4096;

/// Live direct mappings at most (their addresses; 0 is a free slot): 64 ×
/// 16 MiB is far past any execution's budget, so the slots run out only if
/// mappings outlive their executions, and then new ones go to mimalloc.
const SLOTS: usize = 64;

/// The addresses of the live direct mappings.
static MAPPED: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

/// Whether a request of this size and alignment may be mapped directly
/// (the caller adds: only while an execution's budget counts).
#[inline]
pub(crate) fn suits(size: usize, align: usize) -> bool {
    cfg!(target_os = "linux") && size >= DIRECT_MAP_BYTES && align <= MIN_PAGE_BYTES
}

/// Whether the block at `ptr` (of a size that [`suits`]) is a live direct
/// mapping.
pub(crate) fn is_mapped(ptr: *mut u8) -> bool {
    let address = ptr as usize;
    MAPPED
        .iter()
        .any(|slot| slot.load(Ordering::Acquire) == address)
}

/// Moves the record of a mapping from `from` to `to` (0 for none): false
/// if no slot held `from`.
fn swap_record(from: usize, to: usize) -> bool {
    MAPPED.iter().any(|slot| {
        slot.compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    })
}

/// A new zeroed direct mapping of `size` bytes, recorded; null if none can
/// be made or recorded (the caller then asks mimalloc).
///
/// # Safety
/// The caller frees it with [`release`] or grows it with [`grow`], with the
/// same size.
pub(crate) unsafe fn acquire(size: usize) -> *mut u8 {
    // SAFETY: a fresh anonymous mapping, undone at once if it cannot be recorded.
    unsafe {
        let ptr = os::map(size);
        if !ptr.is_null() && !swap_record(0, ptr as usize) {
            os::unmap(ptr, size);
            return std::ptr::null_mut();
        }
        ptr
    }
}

/// The direct mapping at `ptr` resized to `new_size` (moved if it must
/// be), its record following it; null if it cannot be (then untouched).
///
/// # Safety
/// `ptr` is a live direct mapping of `old_size` bytes ([`is_mapped`]).
pub(crate) unsafe fn grow(ptr: *mut u8, old_size: usize, new_size: usize) -> *mut u8 {
    // The record says "moving" while the pages move: once they have, the
    // old address is free for any allocator to hand out again, and must not
    // be taken for a direct mapping by another thread's free.
    swap_record(ptr as usize, MOVING);
    // SAFETY: the caller guarantees the mapping.
    let moved = unsafe { os::remap(ptr, old_size, new_size) };
    let now = if moved.is_null() { ptr } else { moved };
    swap_record(MOVING, now as usize);
    moved
}

/// The record of a mapping being moved (no allocation has this address).
const MOVING: usize = 1;

/// Unmaps a live direct mapping and forgets it.
///
/// # Safety
/// `ptr` is a live direct mapping of `size` bytes, not used again.
pub(crate) unsafe fn release(ptr: *mut u8, size: usize) {
    swap_record(ptr as usize, 0);
    // SAFETY: the caller guarantees the mapping is ours and dead.
    unsafe { os::unmap(ptr, size) }
}

#[cfg(target_os = "linux")]
mod os {
    use rustix::mm::{mmap_anonymous, mremap, munmap, MapFlags, MremapFlags, ProtFlags};
    use std::ffi::c_void;

    /// A new zeroed mapping of `size` bytes, or null.
    ///
    /// # Safety
    /// The caller frees it with [`unmap`] or grows it with [`remap`], with
    /// the same size.
    pub(crate) unsafe fn map(size: usize) -> *mut u8 {
        // SAFETY: an anonymous private mapping at an address of the kernel's
        // choosing touches no existing memory.
        match unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                size,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        } {
            Ok(ptr) => ptr.cast(),
            Err(_) => std::ptr::null_mut(),
        }
    }

    /// The mapping at `ptr` (made by [`map`] or [`remap`] with `old_size`)
    /// resized to `new_size`, moved if it must be; null if it cannot be
    /// (the old mapping is then untouched).
    ///
    /// # Safety
    /// `ptr` and `old_size` name a live mapping of this module.
    pub(crate) unsafe fn remap(ptr: *mut u8, old_size: usize, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees the mapping; MAYMOVE lets the kernel
        // move its pages, never onto another mapping.
        match unsafe {
            mremap(
                ptr.cast::<c_void>(),
                old_size,
                new_size,
                MremapFlags::MAYMOVE,
            )
        } {
            Ok(ptr) => ptr.cast(),
            Err(_) => std::ptr::null_mut(),
        }
    }

    /// Unmaps a mapping of this module.
    ///
    /// # Safety
    /// `ptr` and `size` name a live mapping of this module, not used again.
    pub(crate) unsafe fn unmap(ptr: *mut u8, size: usize) {
        // SAFETY: the caller guarantees the mapping is ours and dead. A
        // failure would leave the pages mapped (leaked), never corrupt.
        let _ = unsafe { munmap(ptr.cast::<c_void>(), size) };
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    // Never reached: `suits` is false off Linux.
    pub(crate) unsafe fn map(_size: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub(crate) unsafe fn remap(_ptr: *mut u8, _old_size: usize, _new_size: usize) -> *mut u8 {
        std::ptr::null_mut()
    }
    pub(crate) unsafe fn unmap(_ptr: *mut u8, _size: usize) {}
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_is_zeroed_grows_keeping_its_contents_and_is_freed() {
        let size = DIRECT_MAP_BYTES;
        // SAFETY: the mapping is made, written within its size, grown with
        // its size, read within the new size and released once.
        unsafe {
            let ptr = acquire(size);
            assert!(!ptr.is_null());
            assert!(is_mapped(ptr));
            assert_eq!(ptr as usize % MIN_PAGE_BYTES, 0);
            assert_eq!(*ptr.add(size - 1), 0);
            *ptr = 7;
            *ptr.add(size - 1) = 9;
            let grown = grow(ptr, size, size * 4);
            assert!(!grown.is_null());
            assert!(is_mapped(grown));
            assert_eq!((*grown, *grown.add(size - 1)), (7, 9));
            assert_eq!(*grown.add(size * 4 - 1), 0);
            release(grown, size * 4);
            assert!(!is_mapped(grown));
        }
    }

    #[test]
    fn past_the_last_free_slot_a_mapping_is_refused() {
        // Untouched anonymous mappings cost address space, not memory.
        let size = DIRECT_MAP_BYTES;
        let mut held = Vec::new();
        // SAFETY: every mapping made is released once, below.
        unsafe {
            for _ in 0..=SLOTS {
                let ptr = acquire(size);
                if ptr.is_null() {
                    break;
                }
                held.push(ptr);
            }
            let refused = held.len() < SLOTS + 1;
            for &ptr in &held {
                release(ptr, size);
            }
            assert!(refused, "{} mappings recorded in {SLOTS} slots", held.len());
        }
    }

    #[test]
    fn only_large_page_aligned_requests_suit() {
        assert!(suits(DIRECT_MAP_BYTES, 8));
        assert!(!suits(DIRECT_MAP_BYTES - 1, 8));
        assert!(!suits(DIRECT_MAP_BYTES, 2 * MIN_PAGE_BYTES));
    }
}
