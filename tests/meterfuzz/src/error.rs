//! The fuzzer's errors: what stops a search itself (a program that is slow,
//! crashes or grows is a finding, never an error).

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    /// The child process could not be started.
    #[error("cannot start the child {exe}: {source}")]
    Spawn {
        /// The binary run as the child.
        exe: String,
        /// Why.
        source: std::io::Error,
    },
    /// Reading or writing a pipe or file failed.
    #[error("i/o: {0}")]
    Io(std::io::Error),
    /// A request or report did not (de)serialise.
    #[error("request or report: {0}")]
    Json(#[from] serde_json::Error),
    /// The child's measuring thread panicked.
    #[error("the measuring thread panicked")]
    ChildPanicked,
    /// The ordinary suite's folder could not be read.
    #[error("the ordinary suite {path}: {source}")]
    Suite {
        /// The folder.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A program of the suite lacks its `# bench: n = N` line.
    #[error("{0}: no `# bench: n = N` line")]
    SuiteProgram(String),
    /// An ordinary program failed: the yardstick itself is broken.
    #[error("the ordinary program {0} did not run: {1}")]
    OrdinaryFailed(String, String),
}

/// The fuzzer's result.
pub type Result<T> = std::result::Result<T, FuzzError>;
