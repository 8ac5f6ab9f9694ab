//! The offline commands on a node home: `init` (a new home and block 0 from
//! a genesis) and `replay` (re-execute every stored block and check roots).

use std::io::IsTerminal;
use std::path::PathBuf;

use serde_json::json;
use timerhost_types::{Genesis, DEV_CHAIN_ID};

use crate::dev::{dev_account_rows, print_dev_accounts};
use crate::error::{NodeError, Result};
use crate::home::{parse_genesis, Home, DEFAULT_GENESIS_TOML};

pub(crate) fn init(
    as_json: bool,
    home: &PathBuf,
    dev: bool,
    chain_id: Option<u64>,
    genesis_file: Option<&PathBuf>,
) -> Result<()> {
    let mut genesis = if dev {
        if chain_id.is_some_and(|id| id != DEV_CHAIN_ID) {
            return Err(NodeError::Usage(format!(
                "dev chains always use chain id {DEV_CHAIN_ID}; drop --chain-id or --dev"
            )));
        }
        Genesis::dev()
    } else if let Some(path) = genesis_file {
        let text = std::fs::read_to_string(path).map_err(|source| NodeError::Io {
            action: "reading",
            path: path.clone(),
            source,
        })?;
        parse_genesis(&text).map_err(|reason| NodeError::Genesis {
            path: path.clone(),
            reason,
        })?
    } else {
        parse_genesis(DEFAULT_GENESIS_TOML).map_err(|reason| NodeError::Genesis {
            path: "config/genesis.toml".into(),
            reason,
        })?
    };
    if let Some(id) = chain_id {
        if !dev && id == DEV_CHAIN_ID {
            return Err(NodeError::Usage(format!(
                "chain id {DEV_CHAIN_ID} is reserved for dev chains; use --dev"
            )));
        }
        genesis.chain_id = id;
    }
    let chain = Home::new(home).init(&genesis)?;
    let head = chain.head()?;
    let accounts: Vec<_> = if genesis.is_dev() {
        dev_account_rows()
    } else {
        Vec::new()
    };
    if as_json {
        println!(
            "{}",
            json!({
                "home": home,
                "chain_id": genesis.chain_id,
                "dev": genesis.is_dev(),
                "genesis_hash": head.hash(),
                "state_root": head.state_root,
                "dev_accounts": accounts,
            })
        );
    } else {
        println!("Initialised timerhost home at {}", home.display());
        println!(
            "  chain id      {}{}",
            genesis.chain_id,
            if genesis.is_dev() { " (dev)" } else { "" }
        );
        println!("  genesis hash  {}", head.hash());
        println!("  state root    {}", head.state_root);
        if genesis.is_dev() {
            print_dev_accounts(&accounts);
        }
    }
    Ok(())
}

/// `timerhost migrate`: brings the home's store to this release's format
/// (`timerhost_state::migrations`), printing progress on stderr.
pub(crate) fn migrate(as_json: bool, home: &PathBuf) -> Result<()> {
    let home = Home::new(home);
    let store =
        timerhost_state::ChainStore::new(timerhost_state::SledBackend::open(&home.data_path())?);
    let report = store.migrate(|format, written| {
        if !as_json {
            eprintln!("migrate: leaving format {format}, {written} entries written");
        }
    })?;
    if as_json {
        println!(
            "{}",
            json!({
                "from": report.from,
                "to": report.to,
                "entries_written": report.entries_written,
            })
        );
    } else if report.from == report.to {
        println!(
            "the store is already in format {} (nothing to do)",
            report.to
        );
    } else {
        println!(
            "migrated the store from format {} to {} ({} entries written)",
            report.from, report.to, report.entries_written
        );
    }
    Ok(())
}

/// `timerhost compact`: rewrites the home's database without the space
/// pruned history left behind (`timerhost_state::compaction`).
pub(crate) fn compact(as_json: bool, home: &PathBuf) -> Result<()> {
    let home = Home::new(home);
    let started = std::time::Instant::now();
    let report = timerhost_state::compaction::compact(&home.data_path(), |copied| {
        if !as_json && copied % 1_000_000 < 8_192 {
            eprintln!("compact: {copied} entries copied");
        }
    })?;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    if as_json {
        println!(
            "{}",
            json!({
                "entries": report.entries,
                "bytes_before": report.bytes_before,
                "bytes_after": report.bytes_after,
                "seconds": started.elapsed().as_secs_f64(),
            })
        );
    } else {
        println!(
            "compacted {} entries: {:.0} MiB → {:.0} MiB in {:.1} s",
            report.entries,
            mib(report.bytes_before),
            mib(report.bytes_after),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

pub(crate) fn replay(as_json: bool, home: &PathBuf) -> Result<()> {
    let chain = Home::new(home).open()?;
    let head = chain.head()?;
    let bar = if std::io::stderr().is_terminal() && !as_json {
        let bar = indicatif::ProgressBar::new(head.height + 1);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "replaying {bar:40} {pos}/{len} blocks ({per_sec}, eta {eta})",
            )
            .expect("valid template"),
        );
        Some(bar)
    } else {
        None
    };
    let step = (head.height / 10).max(1);
    let verified = chain.replay(|p| match &bar {
        Some(bar) => bar.set_position(p.height + 1),
        None if !as_json && (p.height % step == 0 || p.height == p.head) => {
            eprintln!("replay: verified height {}/{}", p.height, p.head)
        }
        None => {}
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // Conservation at the head: every balance, plus what was burned, is
    // the genesis supply.
    let state = chain.store().state();
    let supply = timerhost_chain::accounts::supply(&state)?;
    let balances = timerhost_chain::accounts::total_balances(&state)?;
    let conserved = balances.checked_add(supply.burned) == Some(supply.genesis_supply);
    if as_json {
        println!(
            "{}",
            json!({
                "verified_height": verified,
                "state_root": head.state_root,
                "supply": {
                    "genesis": supply.genesis_supply.to_string(),
                    "burned": supply.burned.to_string(),
                    "balances": balances.to_string(),
                    "conserved": conserved,
                },
                "ok": conserved,
            })
        );
    } else {
        println!(
            "replayed {} blocks from genesis: every state root matches (head {} at height {})",
            verified, head.state_root, verified
        );
        println!(
            "supply: {balances} in balances + {} burned = genesis {}: {}",
            supply.burned,
            supply.genesis_supply,
            if conserved {
                "conserved"
            } else {
                "NOT CONSERVED"
            }
        );
    }
    if !conserved {
        return Err(NodeError::Usage(format!(
            "supply not conserved at height {verified}: balances {balances} + burned {} != genesis {}",
            supply.burned, supply.genesis_supply
        )));
    }
    Ok(())
}
