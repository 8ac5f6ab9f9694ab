//! Crash-test block producer: opens a node home and commits blocks of dev
//! account transfers as fast as it can, printing `COMMITTED <height>
//! <tx hashes,comma-separated>` on stdout only after each commit has returned
//! (i.e. is durable). The crash test SIGKILLs it at random moments.

use std::io::Write;

use timerhost_chain::testing::TxBuilder;
use timerhost_node::home::Home;
use timerhost_types::{dev_accounts, Address, DEV_CHAIN_ID};

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
    let keys = dev_accounts();
    let stdout = std::io::stdout();
    loop {
        let head = chain.head().expect("head");
        let mut txs = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let nonce = chain.account(&key.address()).expect("account").nonce;
            let mut b = TxBuilder::new(key.clone(), DEV_CHAIN_ID);
            b.nonce = nonce;
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
        let mut out = stdout.lock();
        writeln!(
            out,
            "COMMITTED {} {}",
            proposed.executed.block.header.height,
            hashes.join(",")
        )
        .expect("stdout");
        out.flush().expect("stdout");
    }
}
