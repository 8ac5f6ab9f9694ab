//! Crash-test block producer: opens a node home and commits blocks of dev
//! account transfers as fast as it can, printing `COMMITTED <height>
//! <tx hashes,comma-separated>` on stdout only after each commit has returned
//! (i.e. is durable). The crash test SIGKILLs it at random moments.
//!
//! Every block also exercises the three timer kinds through one actor
//! ([`PULSE`], deployed by the last dev account in the first block): a call
//! writes a watched key and schedules a time timer due two blocks later,
//! and the actor's height timer rearms itself, so kills land between
//! commits that fire, carry and register timers of every kind.
//!
//! Like a node, its commits leave the transaction index pending (#46,
//! `timerhost_state::tx_index`), written every third block: kills land with
//! blocks whose index entries exist only in memory, and the reopened store
//! must still find every reported receipt.

use std::io::Write;

use timerhost_chain::testing::TxBuilder;
use timerhost_node::home::Home;
use timerhost_types::{actor_address, dev_accounts, Address, Value, DEV_CHAIN_ID};

/// The actor whose timers every block touches.
const PULSE: &str = r#"
import pvm_host

class Pulse:
    def tick(self):
        if "watch" not in self.storage:
            self.storage["watch"] = pvm_host.watch(["k"])
            pvm_host.schedule_timer(pvm_host.block_height() + 1, b"h")
        self.storage["k"] = pvm_host.block_height()
        pvm_host.schedule_timer_at(pvm_host.block_timestamp_ms() + 2, b"t", gas_limit=20000)

    def handle_timer(self, payload):
        self.storage["n"] = self.storage.get("n", 0) + 1
        if payload == b"h":
            pvm_host.schedule_timer(pvm_host.block_height() + 1, b"h")
"#;

// The actor VM bounds each execution's memory through this allocator.
#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let home = match args
        .iter()
        .position(|a| a == "--home")
        .and_then(|i| args.get(i + 1))
    {
        Some(h) => Home::new(h),
        None => {
            eprintln!("usage: crash-writer --home DIR");
            std::process::exit(1);
        }
    };
    let chain = home.open().unwrap_or_else(|e| {
        eprintln!("crash-writer: {e}");
        std::process::exit(1)
    });
    chain.store().index_transactions_apart(true);
    let keys = dev_accounts();
    let deployer = keys.last().expect("dev accounts").address();
    let pulse = actor_address(&deployer, 0);
    let stdout = std::io::stdout();
    loop {
        let head = chain.head().expect("head");
        let mut txs = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let nonce = chain.account(&key.address()).expect("account").nonce;
            let mut b = TxBuilder::new(key.clone(), DEV_CHAIN_ID);
            b.nonce = nonce;
            if key.address() == deployer {
                if nonce == 0 {
                    txs.push(b.deploy(PULSE, vec![], 10u128.pow(21)));
                } else {
                    txs.push(b.call(pulse, "tick", Vec::<Value>::new(), 0));
                }
                continue;
            }
            let mut to = [0u8; 20];
            to[..8].copy_from_slice(&head.height.to_be_bytes());
            to[19] = 0x80 | i as u8;
            txs.push(b.transfer(Address(to), 1 + i as u128));
        }
        let proposed = chain
            .produce_block(&txs, head.timestamp_ms + 1, Address([0xcc; 20]))
            .expect("produce block");
        assert!(proposed.rejected.is_empty(), "{:?}", proposed.rejected);
        let hashes: Vec<String> = proposed
            .executed
            .block
            .txs
            .iter()
            .map(|t| t.hash().to_string())
            .collect();
        let height = proposed.executed.block.header.height;
        if height.is_multiple_of(3) {
            chain
                .store()
                .index_transactions(16)
                .expect("index transactions");
        }
        let mut out = stdout.lock();
        writeln!(out, "COMMITTED {} {}", height, hashes.join(",")).expect("stdout");
        out.flush().expect("stdout");
    }
}
