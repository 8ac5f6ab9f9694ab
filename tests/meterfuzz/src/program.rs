//! A candidate program: statements that build inputs of size `n` and one
//! operation repeated `k` times, rendered as an actor whose `run(n, k)` the
//! child measures (the fairness benchmark's shape, so a finding reads like
//! one of its workloads).

use serde::{Deserialize, Serialize};

/// One program under measurement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    /// Where it came from: a shape and an operation (`nested_tuple/isinstance`),
    /// a natives-table workload (`workload:list.sort`) or a named finding.
    pub name: String,
    /// Statements that build the inputs from `n` (ordinary, metered code).
    pub setup: String,
    /// The statement(s) measured; an exception it raises is caught, so a
    /// refused operation is measured too (refusing must also be cheap).
    pub op: String,
    /// The size the setup builds.
    pub n: u64,
    /// The generator's genes (indices into the shapes and operations), when
    /// it was generated; mutations act on them.
    pub genes: Option<Genes>,
}

/// Indices of a generated program's parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Genes {
    /// Index into [`crate::shapes::SHAPES`].
    pub shape: usize,
    /// Index into [`crate::ops::OPS`].
    pub op: usize,
    /// Whether the operation receives the input through a lazy iterator.
    pub lazy: bool,
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|line| format!("{by}{line}\n")).collect()
}

impl Program {
    /// The actor source: `run(n, k)` builds the inputs, then runs the
    /// operation `k` times, each inside `try` (an exception is part of what
    /// is measured, an abort ends the call).
    pub fn source(&self) -> String {
        let setup = if self.setup.trim().is_empty() {
            "pass".to_string()
        } else {
            self.setup.clone()
        };
        format!(
            "class Fuzz:\n    def run(self, n, k):\n{}        for _ in range(k):\n            try:\n{}            except Exception:\n                pass\n        return 0\n",
            indent(&setup, "        "),
            indent(&self.op, "                "),
        )
    }

    /// A one-line label: name and size.
    pub fn label(&self) -> String {
        format!("{} (n={})", self.name, self.n)
    }

    /// The same program at another size.
    pub fn with_n(&self, n: u64) -> Program {
        Program { n, ..self.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_repeats_the_operation_inside_try() {
        let program = Program {
            name: "t".into(),
            setup: "x = list(range(n))".into(),
            op: "sorted(x)".into(),
            n: 3,
            genes: None,
        };
        let source = program.source();
        assert!(source.contains("        x = list(range(n))\n"));
        assert!(source.contains("            try:\n                sorted(x)\n"));
        assert_eq!(program.with_n(9).n, 9);
    }
}
