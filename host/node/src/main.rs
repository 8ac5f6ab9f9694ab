//! The `timerhost` binary; all logic lives in the `timerhost_node` library.

fn main() -> std::process::ExitCode {
    timerhost_node::cli::main()
}
