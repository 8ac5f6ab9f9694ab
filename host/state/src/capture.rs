//! The capture of a snapshot's height while blocks go on committing
//! ([`crate::snapshots`]): what each commit remembers of the values it
//! overwrites. Apart from the snapshots module so that the store, which
//! feeds it, and the snapshots, which read it, do not import each other.

use std::collections::HashMap;

use crate::backend::KvBackend;
use crate::error::Result;
use crate::namespaces::{ns_key, STATE};
use crate::overlay::ChangeSet;

/// The values a snapshot's height had, for every key changed since.
#[derive(Debug)]
pub(crate) struct Capture {
    pub(crate) height: u64,
    pub(crate) undo: HashMap<Vec<u8>, Option<Vec<u8>>>,
    /// A builder has taken it (`ChainStore::build_captured_snapshot`).
    pub(crate) building: bool,
}

impl Capture {
    /// Starts capturing `height` (the head, under the commit lock).
    pub(crate) fn new(height: u64) -> Capture {
        Capture {
            height,
            undo: HashMap::new(),
            building: false,
        }
    }

    /// Remembers the current value of every key `changes` is about to
    /// write, unless an earlier commit already did (that one is older).
    pub(crate) fn remember(&mut self, backend: &dyn KvBackend, changes: &ChangeSet) -> Result<()> {
        for key in changes.keys() {
            if !self.undo.contains_key(key) {
                let old = backend.get(&ns_key(STATE, key))?;
                self.undo.insert(key.clone(), old);
            }
        }
        Ok(())
    }
}
