//! The system actors every genesis installs (#19): ARC-21's cron registry
//! at `0x…06`. Their sources ship inside the binary, so every node installs
//! the same code, and no transaction can deploy or front-run them.

use timerhost_state::Overlay;
use timerhost_types::keys::{self, Account, ActorMeta};
use timerhost_types::{keccak256, Address, CRON_REGISTRY_ADDRESS};

/// ARC-21's cron registry (`actors/system/cron.py`).
pub const CRON_REGISTRY_SOURCE: &str = include_str!("../../../actors/system/cron.py");

/// Every system actor: its address and source.
pub const SYSTEM_ACTORS: &[(Address, &str)] = &[(CRON_REGISTRY_ADDRESS, CRON_REGISTRY_SOURCE)];

/// Writes the system actors into genesis state: an actor account with no
/// balance, its code, and no storage (their handlers start from empty
/// storage, so no `deploy` runs). The deployer is the zero address: nobody.
pub fn install(overlay: &mut Overlay<'_>) {
    for (address, source) in SYSTEM_ACTORS {
        overlay.put_encoded(
            keys::account(address),
            &Account {
                is_actor: true,
                ..Default::default()
            },
        );
        let code_hash = keccak256(source.as_bytes());
        overlay.put_encoded(
            keys::code(address),
            &ActorMeta {
                code_hash,
                deployer: Address::ZERO,
            },
        );
        overlay.put(keys::code_source(&code_hash), source.as_bytes().to_vec());
    }
}
