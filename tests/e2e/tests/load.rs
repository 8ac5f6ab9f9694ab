//! `timerhost load` against a dev node (#34): every accepted transaction is
//! committed exactly once — checked by the tool and, independently, by
//! reading every block of the run.

mod common;

use std::collections::HashSet;

use common::Node;
use serde_json::json;

#[test]
fn load_commits_every_accepted_transaction_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("dev");
    let node = Node::dev(&home, &["--block-time", "200ms", "--no-examples"]);
    let before = node.rpc("th_getBlock", json!(["latest"]))["height"]
        .as_u64()
        .unwrap();
    let accounts = 20u64;
    let r = node.cli_json(&[
        "load",
        "--rate",
        "300",
        "--duration",
        "3",
        "--kind",
        "mixed",
        "--accounts",
        &accounts.to_string(),
        "--seed",
        "7",
    ]);
    assert_eq!(r["sent"], 900, "{r}");
    assert_eq!(r["accepted"], 900, "{r}");
    assert_eq!(r["committed"], 900, "{r}");
    assert_eq!(r["lost"], 0, "{r}");
    assert_eq!(r["duplicated"], 0, "{r}");
    assert_eq!(r["errors"], json!({}), "{r}");
    assert!(r["latency_ms"]["p99"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["blocks"].as_u64().unwrap() >= 2, "{r}");

    // Independently: the blocks since the start hold the run's 900
    // transactions plus its set-up (one deploy, two measured calls, one
    // funding transfer per account), and no transaction twice.
    let head = node.rpc("th_getBlock", json!(["latest"]))["height"]
        .as_u64()
        .unwrap();
    let mut seen = HashSet::new();
    let mut total = 0;
    for h in before + 1..=head {
        let block = node.rpc("th_getBlock", json!([h]));
        for tx in block["txs"].as_array().unwrap() {
            total += 1;
            assert!(seen.insert(tx.as_str().unwrap().to_string()), "{tx} twice");
        }
    }
    assert_eq!(
        total,
        900 + 3 + accounts,
        "transactions in blocks {before}..={head}"
    );
    // A third of the run scheduled timers that fire five blocks later.
    let fired = node.rpc(
        "th_getEvents",
        json!([{ "name": "TimerFired", "limit": 1000 }]),
    );
    assert!(
        !fired.as_array().unwrap().is_empty(),
        "no timer of the run fired"
    );
}

/// `--find-max` (#46): runs at rising rates and reports the highest that
/// held. A dev node keeps up with a few hundred transfers a second, so the
/// search doubles from 50 to its cap of 200 and every step holds.
#[test]
fn find_max_raises_the_rate_until_the_cap_and_reports_each_step() {
    let dir = tempfile::tempdir().unwrap();
    let node = Node::dev(
        &dir.path().join("dev"),
        &["--block-time", "200ms", "--no-examples"],
    );
    let r = node.cli_json(&[
        "load",
        "--find-max",
        "--rate",
        "50",
        "--max-rate",
        "200",
        "--duration",
        "1",
        "--p99",
        "5s",
        "--accounts",
        "10",
        "--drain",
        "10s",
        "--seed",
        "3",
    ]);
    let rates: Vec<u64> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["rate"].as_u64().unwrap())
        .collect();
    assert_eq!(rates, vec![50, 100, 200], "{r}");
    assert!(
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["held"] == true),
        "{r}"
    );
    assert_eq!(r["max_rate_held"], 200, "{r}");
    // A bound no run can keep: nothing holds, the search halves to 1 tx/s.
    let r = node.cli_json(&[
        "load",
        "--find-max",
        "--rate",
        "4",
        "--duration",
        "1",
        "--p99",
        "1ms",
        "--accounts",
        "2",
        "--drain",
        "5s",
        "--seed",
        "4",
    ]);
    assert!(r["max_rate_held"].is_null(), "{r}");
    let rates: Vec<u64> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["rate"].as_u64().unwrap())
        .collect();
    assert_eq!(rates, vec![4, 2, 1], "{r}");
}
