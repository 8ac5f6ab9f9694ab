//! The real `timerhost` CLI, built inside the e2e package so its tests can run it.

// The actor VM bounds each execution's memory through this allocator.
#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

fn main() -> std::process::ExitCode {
    timerhost_node::cli::main()
}
