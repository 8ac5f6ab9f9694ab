//! The `timerhost` CLI as a user runs it: init, replay, clear errors and exit codes.

use std::process::Command;

const TIMERHOST: &str = env!("CARGO_BIN_EXE_timerhost");

fn run(args: &[&str]) -> std::process::Output {
    Command::new(TIMERHOST).args(args).output().unwrap()
}

#[test]
fn init_dev_prints_accounts_and_replay_passes() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let home = home.to_str().unwrap();
    let out = run(&["init", "--dev", "--home", home, "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["chain_id"], 1337);
    assert_eq!(v["dev_accounts"].as_array().unwrap().len(), 10);
    let out = run(&["replay", "--home", home]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("every state root matches"));
    // A second init is refused with a clear message.
    let out = run(&["init", "--dev", "--home", home]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already initialised"));
}

#[test]
fn init_default_template_and_chain_id_rules() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let out = run(&[
        "init",
        "--home",
        a.to_str().unwrap(),
        "--chain-id",
        "99",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["chain_id"], 99);
    assert_eq!(v["dev"], false);
    let out = run(&[
        "init",
        "--home",
        dir.path().join("b").to_str().unwrap(),
        "--chain-id",
        "1337",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("reserved for dev chains"));
    let out = run(&[
        "init",
        "--dev",
        "--home",
        dir.path().join("c").to_str().unwrap(),
        "--chain-id",
        "5",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("dev chains always use chain id 1337"));
}

#[test]
fn bad_genesis_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("g.toml");
    std::fs::write(&g, "chain_id = 0\ngenesis_timestamp = 1\n").unwrap();
    let out = run(&[
        "init",
        "--home",
        dir.path().join("h").to_str().unwrap(),
        "--genesis",
        g.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid genesis file") && err.contains("chain_id must not be 0"),
        "{err}"
    );
}

#[test]
fn replay_on_missing_home_explains_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&[
        "replay",
        "--home",
        dir.path().join("nope").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `timerhost init --home"));
}

#[test]
fn a_second_process_on_the_same_home_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let home = home.to_str().unwrap();
    assert!(run(&["init", "--dev", "--home", home]).status.success());
    let mut writer = Command::new(env!("CARGO_BIN_EXE_crash-writer"))
        .args(["--home", home])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the writer holds the database (it reports its first commit).
    // Keep reading its output in the background so it never blocks or dies on a closed pipe.
    let mut reader = std::io::BufReader::new(writer.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
    assert!(line.starts_with("COMMITTED"), "{line}");
    let drain = std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    let out = run(&["replay", "--home", home]);
    writer.kill().unwrap();
    let _ = drain.join();
    writer.wait().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("locked by another process"), "{err}");
}

#[test]
fn keys_new_writes_a_private_key_file_once_and_keys_list_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("k.key");
    let file = file.to_str().unwrap();
    let out = run(&["keys", "new", "--out", file, "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let address = v["address"].as_str().unwrap().to_string();
    assert!(address.starts_with("0x") && address.len() == 42, "{v}");
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.starts_with("0x") && text.trim().len() == 66,
        "{text:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Never overwritten.
    let out = run(&["keys", "new", "--out", file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    assert_eq!(std::fs::read_to_string(file).unwrap(), text);
    // A destination is required.
    let out = run(&["keys", "new"]);
    assert_eq!(out.status.code(), Some(2));

    // With --home: HOME/keys/ADDRESS.key, which `keys list --home` reads back.
    let home = dir.path().join("home");
    let home = home.to_str().unwrap();
    let out = run(&["keys", "new", "--home", home]);
    assert!(out.status.success(), "{out:?}");
    let human = String::from_utf8_lossy(&out.stdout).to_string();
    let second = human
        .lines()
        .find_map(|l| l.strip_prefix("address "))
        .unwrap_or_else(|| panic!("{human}"))
        .to_string();
    assert!(
        human.contains(&format!("keys/{second}.key (mode 0600)")),
        "{human}"
    );
    let out = run(&["keys", "list", "--home", home, "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dev_accounts"].as_array().unwrap().len(), 10);
    assert_eq!(v["keys"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["keys"][0]["address"], second.as_str());
    // The dev accounts match what `init --dev` prints.
    let init = run(&[
        "init",
        "--dev",
        "--home",
        dir.path().join("d").to_str().unwrap(),
        "--json",
    ]);
    let init: serde_json::Value = serde_json::from_slice(&init.stdout).unwrap();
    assert_eq!(v["dev_accounts"], init["dev_accounts"]);
    let out = run(&["keys", "list"]);
    let human = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(human.matches("key 0x").count(), 10, "{human}");
}

/// #20: a validator's consensus key — written once, mode 0600, its public
/// key what genesis lists; `init` takes a genesis with that validator set
/// and refuses a malformed one, naming it.
#[test]
fn keys_new_consensus_makes_a_validator_key_that_genesis_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("v1");
    let home = home.to_str().unwrap();
    let out = run(&["keys", "new", "--consensus", "--home", home, "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let public_key = v["public_key"].as_str().unwrap().to_string();
    assert!(
        public_key.starts_with("0x") && public_key.len() == 66,
        "{v}"
    );
    let file = std::path::Path::new(home).join("consensus.key");
    assert_eq!(v["file"], file.to_str().unwrap());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let out = run(&["keys", "new", "--consensus", "--home", home]);
    assert_eq!(out.status.code(), Some(1), "never overwritten");

    let genesis = dir.path().join("genesis.toml");
    let base = "chain_id = 42\ngenesis_timestamp = 1767225600\n";
    std::fs::write(
        &genesis,
        format!("{base}[[validators]]\npublic_key = \"{public_key}\"\npower = 1\noperator = \"0x1111111111111111111111111111111111111111\"\n"),
    )
    .unwrap();
    let chain_home = dir.path().join("chain");
    let out = run(&[
        "init",
        "--home",
        chain_home.to_str().unwrap(),
        "--genesis",
        genesis.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    std::fs::write(
        &genesis,
        format!("{base}[[validators]]\npublic_key = \"0x12\"\npower = 1\noperator = \"0x1111111111111111111111111111111111111111\"\n"),
    )
    .unwrap();
    let out = run(&[
        "init",
        "--home",
        dir.path().join("bad").to_str().unwrap(),
        "--genesis",
        genesis.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not 0x and 64 hex digits"), "{err}");
}
