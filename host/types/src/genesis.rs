//! The genesis file (`config/genesis.toml`): chain id, start time, funded
//! accounts, the governance set, the validator set and the initial configs.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

use crate::config::BasefeeConfig;
use crate::crypto::{dev_accounts, is_dev_account};
use crate::error::{Error, Result};
use crate::primitives::{u128_string, Address};
use crate::timer_config::TimerConfig;
use crate::DEV_CHAIN_ID;

/// Balance of each dev account on a dev chain: one million whole tokens of 10^18 units.
pub const DEV_ACCOUNT_BALANCE: u128 = 1_000_000 * 10u128.pow(18);

/// One funded account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenesisAccount {
    /// The address.
    pub address: Address,
    /// Initial balance in the smallest unit (decimal string or integer).
    #[serde(with = "u128_string")]
    pub balance: u128,
}

/// One validator of the genesis validator set (#20): its consensus
/// public key (ed25519, made with `timerhost keys new --consensus`), its
/// voting power and its operator (#32).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenesisValidator {
    /// `0x` + 64 hex digits: the ed25519 public key.
    pub public_key: String,
    /// Voting power, at least 1.
    pub power: u64,
    /// The secp256k1 account that signs the validator's governance
    /// transactions (its votes on proposals).
    pub operator: Address,
}

/// The genesis file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Genesis {
    /// Chain id; [`DEV_CHAIN_ID`] marks a development chain.
    pub chain_id: u64,
    /// Timestamp of the genesis block in unix *seconds* (the file format
    /// predates millisecond block timestamps); block 0's header carries it
    /// in ms ([`Genesis::genesis_timestamp_ms`]) and block 1 must be later.
    pub genesis_timestamp: u64,
    /// Governance set: senders allowed to submit system instructions.
    #[serde(default)]
    pub system_deployers: Vec<Address>,
    /// Funded accounts.
    #[serde(default)]
    pub accounts: Vec<GenesisAccount>,
    /// The validators that agree on every block (#20); empty for a chain
    /// whose single node produces every block (`timerhost dev`).
    #[serde(default)]
    pub validators: Vec<GenesisValidator>,
    /// Initial basefee config.
    #[serde(default)]
    pub basefee: BasefeeConfig,
    /// Initial timer config (CIP-5 defaults when omitted).
    #[serde(default)]
    pub timers: TimerConfig,
    /// How config updates reach the chain, and the proposals' voting
    /// period and deposit (#32; direct when omitted).
    #[serde(default)]
    pub governance: crate::governance::GovernanceConfig,
    /// Upgrades the chain starts under, each active from height 0 (#46:
    /// `located-fire-hashes`); the node refuses a name it does not know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upgrades: Vec<String>,
}

/// The upgrade a new chain starts under (`timerhost_chain::upgrades`
/// knows it): deferred transactions' hashes name their receipt (#46).
pub const LOCATED_FIRE_HASHES: &str = "located-fire-hashes";

impl Genesis {
    /// Block 0's timestamp in unix ms.
    pub fn genesis_timestamp_ms(&self) -> u64 {
        self.genesis_timestamp.saturating_mul(1000)
    }

    /// The development genesis: chain id [`DEV_CHAIN_ID`], the ten dev accounts
    /// funded with [`DEV_ACCOUNT_BALANCE`] each, dev account 0 as governance.
    pub fn dev() -> Genesis {
        let accounts = dev_accounts();
        Genesis {
            chain_id: DEV_CHAIN_ID,
            genesis_timestamp: 1_767_225_600, // 2026-01-01T00:00:00Z
            system_deployers: vec![accounts[0].address()],
            accounts: accounts
                .iter()
                .map(|k| GenesisAccount {
                    address: k.address(),
                    balance: DEV_ACCOUNT_BALANCE,
                })
                .collect(),
            validators: Vec::new(),
            basefee: BasefeeConfig::default(),
            timers: TimerConfig::default(),
            governance: crate::governance::GovernanceConfig::default(),
            // New chains start with a fire's hash naming its receipt (#46).
            upgrades: vec![LOCATED_FIRE_HASHES.to_string()],
        }
    }

    /// The validator set genesis lists, as state keeps it; `None` for a
    /// chain without validators. Errors name the bad key.
    pub fn validator_set(&self) -> Result<Option<crate::governance::ValidatorSetRecord>> {
        if self.validators.is_empty() {
            return Ok(None);
        }
        let members = self
            .validators
            .iter()
            .map(|v| {
                Ok(crate::governance::ValidatorInfo {
                    public_key: crate::governance::parse_validator_key(&v.public_key)
                        .map_err(Error::Genesis)?,
                    power: v.power,
                    operator: v.operator,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        crate::governance::ValidatorSetRecord::new(members)
            .map(Some)
            .map_err(Error::Genesis)
    }

    /// Parses TOML and validates.
    pub fn from_toml(text: &str) -> Result<Genesis> {
        let genesis: Genesis = toml_parse(text)?;
        genesis.validate()?;
        Ok(genesis)
    }

    /// Is this a development chain?
    pub fn is_dev(&self) -> bool {
        self.chain_id == DEV_CHAIN_ID
    }

    /// Sum of all genesis balances.
    pub fn total_supply(&self) -> Result<u128> {
        self.accounts.iter().try_fold(0u128, |acc, a| {
            acc.checked_add(a.balance)
                .ok_or_else(|| Error::Genesis("total supply overflows u128".into()))
        })
    }

    /// Checks internal consistency, naming the first problem found.
    pub fn validate(&self) -> Result<()> {
        if self.chain_id == 0 {
            return Err(Error::Genesis("chain_id must not be 0".into()));
        }
        let mut seen = BTreeSet::new();
        for a in &self.accounts {
            if a.address.is_zero() || a.address.is_system_reserved() {
                return Err(Error::Genesis(format!(
                    "account {} is the zero address or in the reserved system band 0x..01-0x..0f",
                    a.address
                )));
            }
            if !seen.insert(a.address) {
                return Err(Error::Genesis(format!(
                    "account {} is listed twice",
                    a.address
                )));
            }
            if !self.is_dev() && is_dev_account(&a.address) {
                return Err(Error::Genesis(format!(
                    "account {} is a dev account whose private key is public; dev accounts may only be funded on chain id {DEV_CHAIN_ID}",
                    a.address
                )));
            }
        }
        let mut keys = BTreeSet::new();
        for v in &self.validators {
            let digits = v.public_key.strip_prefix("0x").unwrap_or(&v.public_key);
            if format!("0x{digits}").parse::<crate::Hash>().is_err() {
                return Err(Error::Genesis(format!(
                    "validator public_key {:?} is not 0x and 64 hex digits (an ed25519 key from `timerhost keys new --consensus`)",
                    v.public_key
                )));
            }
            if v.power == 0 {
                return Err(Error::Genesis(format!(
                    "validator {} has power 0; give it at least 1",
                    v.public_key
                )));
            }
            if !keys.insert(digits.to_ascii_lowercase()) {
                return Err(Error::Genesis(format!(
                    "validator {} is listed twice",
                    v.public_key
                )));
            }
        }
        self.validators
            .iter()
            .try_fold(0u64, |total, v| total.checked_add(v.power))
            .ok_or_else(|| Error::Genesis("the validators' total power overflows a u64".into()))?;
        for d in &self.system_deployers {
            if !self.is_dev() && is_dev_account(d) {
                return Err(Error::Genesis(format!(
                    "system deployer {d} is a dev account whose private key is public; not allowed on chain id {}",
                    self.chain_id
                )));
            }
        }
        self.total_supply()?;
        self.basefee.validate()?;
        self.timers.validate()?;
        self.governance.validate()?;
        self.validator_set()?;
        Ok(())
    }
}

fn toml_parse(text: &str) -> Result<Genesis> {
    toml::from_str(text).map_err(|e| Error::Genesis(e.to_string()))
}

impl Genesis {
    /// Renders as TOML (amounts as strings so that u128 values survive).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("genesis always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_round_trip() {
        let g = Genesis::dev();
        let text = g.to_toml();
        assert_eq!(Genesis::from_toml(&text).unwrap(), g);
        let err = Genesis::from_toml("chain_id = 5\ngenesis_timestamp = 1\nbogus = 1\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("bogus"), "{err}");
    }

    #[test]
    fn dev_genesis_is_valid() {
        let g = Genesis::dev();
        g.validate().unwrap();
        assert_eq!(g.accounts.len(), 10);
        assert_eq!(g.total_supply().unwrap(), 10 * DEV_ACCOUNT_BALANCE);
    }

    #[test]
    fn dev_accounts_refused_on_other_chains() {
        let mut g = Genesis::dev();
        g.chain_id = 7;
        let err = g.validate().unwrap_err().to_string();
        assert!(err.contains("dev account"), "{err}");
        g.accounts.clear();
        let err = g.validate().unwrap_err().to_string();
        assert!(err.contains("system deployer"), "{err}");
    }

    #[test]
    fn duplicates_and_reserved_rejected() {
        let mut g = Genesis::dev();
        g.accounts.push(g.accounts[0].clone());
        assert!(g
            .validate()
            .unwrap_err()
            .to_string()
            .contains("listed twice"));
        let mut g = Genesis::dev();
        g.accounts[0].address = Address::system(3);
        assert!(g
            .validate()
            .unwrap_err()
            .to_string()
            .contains("reserved system band"));
    }

    #[test]
    fn validators_are_checked_by_key_form_power_and_uniqueness() {
        let point = |seed: u8| {
            let key = ed25519_consensus::SigningKey::from([seed; 32]).verification_key();
            crate::Hash(key.to_bytes()).to_hex()
        };
        let key = point(1);
        let mut g = Genesis::dev();
        g.validators = vec![GenesisValidator {
            public_key: key.clone(),
            power: 10,
            operator: Address([1; 20]),
        }];
        g.validate().unwrap();
        let text = g.to_toml();
        assert!(text.contains("[[validators]]"), "{text}");
        assert_eq!(Genesis::from_toml(&text).unwrap(), g);

        let mut bad = g.clone();
        bad.validators[0].public_key = "0x1234".into();
        let e = bad.validate().unwrap_err().to_string();
        assert!(e.contains("not 0x and 64 hex digits"), "{e}");
        let mut bad = g.clone();
        bad.validators[0].power = 0;
        assert!(bad.validate().unwrap_err().to_string().contains("power 0"));
        let mut bad = g.clone();
        bad.validators.push(GenesisValidator {
            public_key: key.to_uppercase().replace("0X", "0x"),
            power: 1,
            operator: Address([2; 20]),
        });
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("listed twice"));
        let mut bad = g;
        bad.validators[0].power = u64::MAX;
        bad.validators.push(GenesisValidator {
            public_key: point(2),
            power: 1,
            operator: Address([2; 20]),
        });
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("overflows"));
    }
}
