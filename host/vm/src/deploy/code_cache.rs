//! Compiled actors by code hash, shared by every thread of a
//! [`crate::Vm`]: an actor's source is validated, instrumented and compiled
//! once per process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use timerhost_types::Hash;

use crate::deploy::compile::{validate_and_compile, CompiledActor};
use crate::deploy::sandbox::DeployRejection;

/// Compiled actors by code hash, shared by all threads of a [`crate::Vm`].
#[derive(Default)]
pub struct CodeCache {
    compiled: Mutex<HashMap<Hash, Arc<CompiledActor>>>,
}

impl CodeCache {
    /// Validated and compiled `source`, from the cache when seen before.
    pub(crate) fn compile(
        &self,
        source: &str,
    ) -> std::result::Result<Arc<CompiledActor>, DeployRejection> {
        let code_hash = timerhost_types::keccak256(source.as_bytes());
        if let Some(found) = self.lock().get(&code_hash) {
            return Ok(found.clone());
        }
        let compiled = Arc::new(validate_and_compile(source)?);
        self.lock().insert(code_hash, compiled.clone());
        Ok(compiled)
    }

    /// Cached code for `code_hash`, compiling the source `load` gives (the
    /// host's) on a miss.
    pub(crate) fn get_or_compile(
        &self,
        code_hash: &Hash,
        load: impl FnOnce(&Hash) -> Option<String>,
    ) -> Option<Arc<CompiledActor>> {
        if let Some(found) = self.lock().get(code_hash) {
            return Some(found.clone());
        }
        let source = load(code_hash)?;
        self.compile(&source).ok()
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Hash, Arc<CompiledActor>>> {
        // A panic while holding the lock cannot leave the map inconsistent
        // (single inserts), so a poisoned lock is still usable.
        self.compiled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
