//! `timerhost keys new|list`: signing keys for the client commands, and
//! validators' consensus keys (`keys new --consensus`, ed25519, written to
//! `HOME/consensus.key` or `--out`; genesis lists its public key).
//!
//! A key file holds one line, the secp256k1 private key as `0x` + 64 hex
//! digits: exactly what `--key FILE` reads. `keys new` draws the key from the
//! operating system's randomness (`getrandom`, through `rand::rngs::OsRng`),
//! creates the file with mode 0600 and never overwrites one. It writes to
//! `--out FILE`, or to `HOME/keys/ADDRESS.key` with `--home HOME` (the
//! directory `keys list --home HOME` reads back). There is no encryption: a
//! key file is as secret as the file system keeps it.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use rand::RngCore;
use serde_json::json;
use timerhost_types::{Address, PrivateKey};

use crate::dev::{dev_account_rows, print_dev_accounts};
use crate::error::{NodeError, Result};
use crate::output::print;

/// The directory of key files under a home.
pub fn keys_dir(home: &Path) -> PathBuf {
    home.join("keys")
}

/// The file `keys new --home HOME` writes for `address`.
pub fn key_path(home: &Path, address: &Address) -> PathBuf {
    keys_dir(home).join(format!("{address}.key"))
}

/// A fresh key from the operating system's randomness.
pub fn generate() -> PrivateKey {
    PrivateKey::from_entropy(|| {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        bytes
    })
}

/// Writes `key` to a new file at `path` (mode 0600 on Unix), creating the
/// parent directories (mode 0700 where this creates them). An existing file
/// is never overwritten.
pub fn write_new(path: &Path, key: &PrivateKey) -> Result<()> {
    write_secret(path, &key.to_hex())
}

/// The file `keys new --consensus --home HOME` writes.
pub fn consensus_key_path(home: &Path) -> PathBuf {
    home.join("consensus.key")
}

/// Writes a secret (one hex line) to a new file at `path` (mode 0600 on
/// Unix), creating the parent directories (mode 0700 where this creates
/// them). An existing file is never overwritten.
pub fn write_secret(path: &Path, secret_hex: &str) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        let mut dir = std::fs::DirBuilder::new();
        dir.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut dir, 0o700);
        dir.create(parent).map_err(|source| NodeError::Io {
            action: "creating the key directory",
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let mut options = std::fs::OpenOptions::new();
    // create_new: the check and the creation are one system call, so two
    // `keys new` racing for one path cannot both write it.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::AlreadyExists {
            NodeError::Usage(format!(
                "{} already exists; refusing to overwrite a key file (pick another --out)",
                path.display()
            ))
        } else {
            NodeError::Io {
                action: "creating the key file",
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    writeln!(file, "{secret_hex}")
        .and_then(|()| file.sync_all())
        .map_err(|source| NodeError::Io {
            action: "writing the key file",
            path: path.to_path_buf(),
            source,
        })
}

/// Reads a key file (the `--key FILE` format).
pub fn read(path: &Path) -> Result<PrivateKey> {
    let text = std::fs::read_to_string(path).map_err(|source| NodeError::Io {
        action: "reading the key file",
        path: path.to_path_buf(),
        source,
    })?;
    PrivateKey::from_hex(text.trim())
        .map_err(|e| NodeError::Usage(format!("{}: not a hex private key: {e}", path.display())))
}

/// One file of a keys directory: its address, or why it could not be read.
#[derive(Debug)]
pub struct KeyFile {
    /// The file.
    pub path: PathBuf,
    /// The key's address, or the error reading it.
    pub address: std::result::Result<Address, String>,
}

/// The `*.key` files of `dir`, by file name; none if `dir` does not exist.
pub fn list_dir(dir: &Path) -> Result<Vec<KeyFile>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(NodeError::Io {
                action: "listing the key directory",
                path: dir.to_path_buf(),
                source,
            })
        }
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| NodeError::Io {
            action: "listing the key directory",
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "key") {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| {
            let address = read(&path).map(|k| k.address()).map_err(|e| e.to_string());
            KeyFile { path, address }
        })
        .collect())
}

/// Key commands.
#[derive(Debug, Subcommand)]
pub enum KeysAction {
    /// Generate a secp256k1 key from OS randomness and write it to a new
    /// file (mode 0600, never overwritten) that `--key FILE` reads; prints
    /// its address. With --consensus: a validator's ed25519 consensus key,
    /// with its public key for the genesis validator set.
    New {
        /// The key file to create.
        #[arg(long, conflicts_with = "home", required_unless_present = "home")]
        out: Option<PathBuf>,
        /// Write it to HOME/keys/ADDRESS.key (HOME/consensus.key with
        /// --consensus) instead.
        #[arg(long)]
        home: Option<PathBuf>,
        /// A validator's consensus key (ed25519) instead of an account key.
        #[arg(long)]
        consensus: bool,
    },
    /// A node's consensus key: its validator address and public key (what
    /// a proposal adding it names: `timerhost gov propose add-validator`).
    ShowConsensus {
        /// The node's home (reads HOME/consensus.key).
        #[arg(long)]
        home: PathBuf,
    },
    /// The ten dev accounts (their keys are public) and, with --home, the
    /// key files in HOME/keys.
    List {
        /// List the key files of HOME/keys too.
        #[arg(long)]
        home: Option<PathBuf>,
    },
}

/// Runs `timerhost keys …`.
pub(crate) fn command(j: bool, action: &KeysAction) -> Result<()> {
    match action {
        KeysAction::New {
            out,
            home,
            consensus: true,
        } => {
            let key = timerhost_consensus::ConsensusKey::generate();
            let path = match (out, home) {
                (Some(out), _) => out.clone(),
                (None, Some(home)) => consensus_key_path(home),
                (None, None) => unreachable!("clap requires --out or --home"),
            };
            write_secret(&path, &key.to_hex())?;
            let public_key = timerhost_consensus::signing::public_key_to_hex(&key.public_key());
            let address = key.address();
            let v = json!({ "validator_address": address.to_string(), "public_key": public_key, "file": path });
            print(j, &v, |_| {
                println!("validator {address}");
                println!("consensus key written to {} (mode 0600)", path.display());
                println!("add it to the genesis validator set:");
                println!("[[validators]]\npublic_key = \"{public_key}\"\npower = 1\noperator = \"0x… (the account that signs its votes)\"");
            });
        }
        KeysAction::ShowConsensus { home } => {
            let path = consensus_key_path(home);
            let text = std::fs::read_to_string(&path).map_err(|source| NodeError::Io {
                action: "reading",
                path: path.clone(),
                source,
            })?;
            let key = timerhost_consensus::ConsensusKey::from_hex(text.trim()).map_err(|e| {
                NodeError::Config {
                    path: path.clone(),
                    reason: e.to_string(),
                }
            })?;
            let public_key = timerhost_consensus::signing::public_key_to_hex(&key.public_key());
            let address = key.address();
            let v = json!({ "validator_address": address.to_string(), "public_key": public_key });
            print(j, &v, |_| {
                println!("validator {address}");
                println!("public key {public_key}");
            });
        }
        KeysAction::New { out, home, .. } => {
            let key = crate::keys::generate();
            let address = key.address();
            let path = match (out, home) {
                (Some(out), _) => out.clone(),
                (None, Some(home)) => crate::keys::key_path(home, &address),
                (None, None) => unreachable!("clap requires --out or --home"),
            };
            crate::keys::write_new(&path, &key)?;
            let v = json!({ "address": address, "file": path });
            print(j, &v, |_| {
                println!("address {address}");
                println!(
                    "key written to {} (mode 0600); sign with --key {}",
                    path.display(),
                    path.display()
                );
            });
        }
        KeysAction::List { home } => {
            let dir = home.as_deref().map(crate::keys::keys_dir);
            let files = match &dir {
                Some(d) => crate::keys::list_dir(d)?,
                None => Vec::new(),
            };
            let file_rows: Vec<_> = files
                .iter()
                .map(|k| match &k.address {
                    Ok(a) => json!({ "file": k.path, "address": a }),
                    Err(e) => json!({ "file": k.path, "error": e }),
                })
                .collect();
            let v = json!({
                "dev_accounts": dev_account_rows(),
                "keys_dir": dir,
                "keys": file_rows,
            });
            print(j, &v, |v| {
                print_dev_accounts(v["dev_accounts"].as_array().map_or(&[], Vec::as_slice));
                if let Some(d) = &dir {
                    println!("Key files in {}:", d.display());
                    if files.is_empty() {
                        println!("  (none; create one with `timerhost keys new --home ...`)");
                    }
                    for k in &files {
                        match &k.address {
                            Ok(a) => println!("  {a}  {}", k.path.display()),
                            Err(e) => println!("  unreadable  {}: {e}", k.path.display()),
                        }
                    }
                }
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_key_file_reads_back_is_private_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let key = generate();
        assert_ne!(key.to_bytes(), generate().to_bytes());
        let path = key_path(&home, &key.address());
        write_new(&path, &key).unwrap();
        assert_eq!(read(&path).unwrap().address(), key.address());
        // The same format `--key FILE` reads.
        let signer = crate::client::signer(Some(&path), None).unwrap();
        assert_eq!(signer.address(), key.address());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(keys_dir(&home))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let e = write_new(&path, &generate()).unwrap_err().to_string();
        assert!(e.contains("already exists"), "{e}");
        assert_eq!(read(&path).unwrap().address(), key.address());

        std::fs::write(keys_dir(&home).join("broken.key"), "0x12\n").unwrap();
        std::fs::write(keys_dir(&home).join("notes.txt"), "ignored").unwrap();
        let listed = list_dir(&keys_dir(&home)).unwrap();
        assert_eq!(listed.len(), 2, "{listed:?}");
        let good = listed.iter().find(|k| k.path == path).unwrap();
        assert_eq!(good.address.as_ref().unwrap(), &key.address());
        let bad = listed.iter().find(|k| k.path != path).unwrap();
        assert!(
            bad.address
                .as_ref()
                .unwrap_err()
                .contains("not a hex private key"),
            "{bad:?}"
        );
        assert!(list_dir(&dir.path().join("none")).unwrap().is_empty());
    }
}
