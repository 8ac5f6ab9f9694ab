//! The node home directory:
//!
//! ```text
//! HOME/
//!   genesis.toml   the chain's genesis (see config/genesis.toml for every field)
//!   data/          the sled database: state, tree, blocks, receipts, indexes
//!   node.toml      optional node configuration (config/node.toml documents it)
//!   consensus.key  a validator's ed25519 key (`keys new --consensus`)
//!   consensus/     a validator network node's engine WAL (`wal/`) and its
//!                  certificate and proposal store (`store/`)
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use timerhost_chain::{ActorRuntime, BlockHooks, Chain, NoHooks, VmRuntime};
use timerhost_state::SledBackend;
use timerhost_types::Genesis;

use crate::error::{NodeError, Result};

/// The default (non-dev) genesis template shipped in `config/genesis.toml`.
pub const DEFAULT_GENESIS_TOML: &str = include_str!("../../../config/genesis.toml");

/// The dev genesis as shipped in `config/genesis.dev.toml` (kept equal to `Genesis::dev()` by a test).
pub const DEV_GENESIS_TOML: &str = include_str!("../../../config/genesis.dev.toml");

/// A node home.
#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// A home at `root` (not checked).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Path of the genesis file.
    pub fn genesis_path(&self) -> PathBuf {
        self.root.join("genesis.toml")
    }

    /// Path of the database.
    pub fn data_path(&self) -> PathBuf {
        self.root.join("data")
    }

    /// Reads and validates the genesis file.
    pub fn genesis(&self) -> Result<Genesis> {
        let path = self.genesis_path();
        if !path.exists() {
            return Err(NodeError::NotInitialised {
                path: self.root.clone(),
            });
        }
        let text = std::fs::read_to_string(&path).map_err(|source| NodeError::Io {
            action: "reading",
            path: path.clone(),
            source,
        })?;
        parse_genesis(&text).map_err(|reason| NodeError::Genesis { path, reason })
    }

    /// Creates the home: writes `genesis` and an empty database holding block 0.
    pub fn init(&self, genesis: &Genesis) -> Result<Chain<SledBackend>> {
        let path = self.genesis_path();
        if path.exists() {
            return Err(NodeError::AlreadyInitialised {
                path: self.root.clone(),
            });
        }
        genesis.validate().map_err(|e| NodeError::Genesis {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        std::fs::create_dir_all(&self.root).map_err(|source| NodeError::Io {
            action: "creating",
            path: self.root.clone(),
            source,
        })?;
        let text = format!(
            "# timerhost genesis — every field is documented in config/genesis.toml of the timerhost repository.\n{}",
            genesis.to_toml()
        );
        std::fs::write(&path, text).map_err(|source| NodeError::Io {
            action: "writing",
            path: path.clone(),
            source,
        })?;
        self.open()
    }

    /// Opens the chain with the Python actor VM (the binary must install
    /// `timerhost_vm::MeteredAllocator` as its global allocator).
    pub fn open(&self) -> Result<Chain<SledBackend>> {
        self.open_with(Arc::new(VmRuntime::new()?), Arc::new(NoHooks))
    }

    /// Opens the chain with the given runtime and hooks.
    pub fn open_with(
        &self,
        runtime: Arc<dyn ActorRuntime>,
        hooks: Arc<dyn BlockHooks>,
    ) -> Result<Chain<SledBackend>> {
        let genesis = self.genesis()?;
        let backend = SledBackend::open(&self.data_path())?;
        Ok(Chain::open(backend, genesis, runtime, hooks)?)
    }
}

/// Parses genesis TOML, validating it.
pub fn parse_genesis(text: &str) -> std::result::Result<Genesis, String> {
    Genesis::from_toml(text).map_err(|e| e.to_string())
}

#[cfg(test)]
#[global_allocator]
static TEST_ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_genesis_files_are_valid() {
        let g = parse_genesis(DEFAULT_GENESIS_TOML).unwrap();
        assert!(!g.is_dev());
        assert_eq!(
            parse_genesis(DEV_GENESIS_TOML).unwrap(),
            Genesis::dev(),
            "config/genesis.dev.toml drifted from Genesis::dev()"
        );
    }

    #[test]
    fn init_then_reopen_and_refuse_second_init() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("h"));
        let err = home.open().unwrap_err().to_string();
        assert!(err.contains("timerhost init"), "{err}");
        let chain = home.init(&Genesis::dev()).unwrap();
        let head = chain.head().unwrap();
        drop(chain);
        assert_eq!(home.open().unwrap().head().unwrap(), head);
        let err = home.init(&Genesis::dev()).unwrap_err().to_string();
        assert!(err.contains("already initialised"), "{err}");
    }
}
