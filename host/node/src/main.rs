//! The `timerhost` binary; all logic lives in the `timerhost_node` library.

// The actor VM bounds each execution's memory through this allocator.
#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

fn main() -> std::process::ExitCode {
    timerhost_node::cli::main()
}
