//! The real `timerhost` CLI, built inside the e2e package so its tests can run it.

fn main() -> std::process::ExitCode {
    timerhost_node::cli::main()
}
