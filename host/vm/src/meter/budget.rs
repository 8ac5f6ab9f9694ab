//! The resource meter of one execution: cycles, cells, and the sticky abort
//! that ends it (out of cycles, cells or memory). Pure bookkeeping — it
//! imports nothing from the rest of the crate, so its rules can be read and
//! tested on their own; the runtime calls it from every charge point.
//!
//! Aborts are *sticky*: once the meter has tripped, every further charge
//! fails the same way, so an actor cannot swallow an abort.

use timerhost_types::ErrorKind;

/// Why an execution was aborted by the meter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abort {
    /// Out of cycles.
    Cycles,
    /// Out of cells.
    Cells,
    /// Over the memory budget.
    Memory,
}

impl Abort {
    /// The receipt's error kind.
    pub fn kind(self) -> ErrorKind {
        match self {
            Abort::Cycles => ErrorKind::OutOfCycles,
            Abort::Cells => ErrorKind::OutOfCells,
            Abort::Memory => ErrorKind::OutOfMemory,
        }
    }
}

/// The resource meter of one execution (shared by nested calls).
#[derive(Debug, Default)]
pub struct Meter {
    /// Cycles charged so far (the limit once it ran out).
    pub cycles_used: u64,
    /// Cycles available.
    pub cycles_limit: u64,
    /// Cells charged so far.
    pub cells_used: u64,
    /// Cells available.
    pub cells_limit: u64,
    /// Why the execution was aborted, once it was: sticky.
    pub abort: Option<Abort>,
}

impl Meter {
    /// Charges `cycles` and `cells`; `memory_exceeded` says whether the
    /// execution's memory budget has been overrun since the last charge (the
    /// caller reads `crate::meter::alloc`: the meter itself depends on nothing).
    #[inline]
    pub fn charge(&mut self, cycles: u64, cells: u64, memory_exceeded: bool) -> Result<(), Abort> {
        if let Some(abort) = self.abort {
            return Err(abort);
        }
        if memory_exceeded {
            // Where exactly the budget trips depends on the interpreter's
            // allocation history (caches warmed by earlier executions), not on
            // the code alone: charge the whole budget, as for running out of
            // cycles, so every node that trips records the same receipt.
            self.cycles_used = self.cycles_limit;
            self.cells_used = self.cells_limit;
            self.abort = Some(Abort::Memory);
            return Err(Abort::Memory);
        }
        let cycles_after = self.cycles_used.saturating_add(cycles);
        if cycles_after > self.cycles_limit {
            self.cycles_used = self.cycles_limit;
            self.abort = Some(Abort::Cycles);
            return Err(Abort::Cycles);
        }
        let cells_after = self.cells_used.saturating_add(cells);
        if cells_after > self.cells_limit {
            self.cycles_used = cycles_after;
            self.cells_used = self.cells_limit;
            self.abort = Some(Abort::Cells);
            return Err(Abort::Cells);
        }
        self.cycles_used = cycles_after;
        self.cells_used = cells_after;
        Ok(())
    }

    /// Records `abort` unless an earlier one was recorded, reporting the
    /// limit it stands for as used up, as [`Meter::charge`] does: a
    /// pre-check that refuses an operation out of memory (it compares with
    /// what is left of the budget) charges the whole budget like the flag.
    pub fn trip(&mut self, abort: Abort) {
        if self.abort.is_none() {
            self.abort = Some(abort);
            match abort {
                Abort::Cycles => self.cycles_used = self.cycles_limit,
                Abort::Cells => self.cells_used = self.cells_limit,
                Abort::Memory => {
                    self.cycles_used = self.cycles_limit;
                    self.cells_used = self.cells_limit;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_aborts_are_sticky_and_saturate() {
        let mut meter = Meter {
            cycles_limit: 100,
            cells_limit: 10,
            ..Meter::default()
        };
        meter.charge(60, 5, false).unwrap();
        assert_eq!(meter.charge(50, 0, false), Err(Abort::Cycles));
        assert_eq!(meter.cycles_used, 100);
        // Once tripped, every later charge fails the same way, even a free one.
        assert_eq!(meter.charge(0, 0, false), Err(Abort::Cycles));
        let mut meter = Meter {
            cycles_limit: 100,
            cells_limit: 10,
            ..Meter::default()
        };
        assert_eq!(meter.charge(1, 11, false), Err(Abort::Cells));
        assert_eq!((meter.cycles_used, meter.cells_used), (1, 10));
        assert_eq!(Abort::Memory.kind(), ErrorKind::OutOfMemory);
        // Over the memory budget: the whole of both limits is charged.
        let mut meter = Meter {
            cycles_limit: 100,
            cells_limit: 10,
            ..Meter::default()
        };
        assert_eq!(meter.charge(1, 0, true), Err(Abort::Memory));
        assert_eq!((meter.cycles_used, meter.cells_used), (100, 10));
    }
}
