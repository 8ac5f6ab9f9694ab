//! Host-level errors of the VM itself. An *actor* failing is never one of
//! these: it is an [`Outcome`](crate::Outcome) with an
//! [`ExecError`](timerhost_types::ExecError).

/// Errors that prevent the VM from running at all.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// The process does not route allocations through
    /// [`MeteredAllocator`](crate::MeteredAllocator), so memory budgets
    /// could not be enforced.
    #[error("timerhost_vm::MeteredAllocator is not the global allocator; declare it with #[global_allocator] in the binary")]
    AllocatorNotInstalled,
    /// An execution was started from inside another execution on the same
    /// thread (nested calls must go through `pvm_host.call`).
    #[error("an actor execution is already running on this thread")]
    Reentrant,
}

/// Result alias for [`VmError`].
pub type Result<T, E = VmError> = std::result::Result<T, E>;
