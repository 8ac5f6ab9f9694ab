//! How client commands print: JSON for scripts (`--json`), text for people.

use serde_json::Value as Json;

/// Prints `value` as JSON, or for people with `human`.
pub(crate) fn print(as_json: bool, value: &Json, human: impl FnOnce(&Json)) {
    if as_json {
        println!("{value}");
    } else {
        human(value);
    }
}

/// Pretty-printed JSON.
pub(crate) fn pretty(v: &Json) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}

/// Human rendering of a receipt; returns whether it succeeded.
pub fn print_receipt(r: &Json) -> bool {
    let ok = r["status"] == "success";
    println!(
        "tx {} in block {}: {}",
        r["tx_hash"].as_str().unwrap_or("?"),
        r["height"],
        if ok { "success" } else { "FAILED" }
    );
    println!(
        "  cycles {}  cells {}  fee {} (burned {}, tip {})",
        r["cycles_used"],
        r["cells_used"],
        r["fee_paid"].as_str().unwrap_or("?"),
        r["burned"].as_str().unwrap_or("?"),
        r["tip"].as_str().unwrap_or("?")
    );
    if let Some(a) = r["created_actor"].as_str() {
        println!("  actor deployed at {a}");
    }
    if !r["return_value"].is_null() {
        println!("  returned {}", r["return_value"]);
    }
    if let Some(e) = r["error"].as_object() {
        println!(
            "  error [{}] {}",
            e.get("kind").and_then(Json::as_str).unwrap_or("?"),
            e.get("message").and_then(Json::as_str).unwrap_or("")
        );
        if let Some(tb) = e.get("traceback").and_then(Json::as_str) {
            for line in tb.lines() {
                println!("  | {line}");
            }
        }
    }
    for ev in r["events"].as_array().into_iter().flatten() {
        println!(
            "  event {} from {}: {}",
            ev["name"].as_str().unwrap_or("?"),
            ev["emitter"].as_str().unwrap_or("?"),
            ev["data"]
        );
    }
    ok
}
