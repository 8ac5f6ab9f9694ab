//! # timerhost-python (`timerhost._native`)
//!
//! The native core of the `timerhost` Python package: the node's own
//! [`timerhost_chain::Chain`] with the real actor VM, in-process, no RPC.
//! Every block a test mines goes through the same propose → execute →
//! end-of-block (timers) → commit pipeline a validator runs, over an
//! in-memory store (or sled with `path=`).
//!
//! This layer is deliberately thin and untyped: it speaks dicts, lists and
//! actor values. The pure-Python package (`python/timerhost/`) wraps it in
//! the documented, typed API (`Chain`, `Receipt`, `Timer`, …).
//!
//! Errors: a transaction refused before inclusion raises
//! `TransactionRejected` (nothing is mined); a node-side failure (storage,
//! corrupt state) raises `ChainError`. An actor's exception is never an
//! error here: it is a receipt with `status == "failed"`.

mod convert;

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use timerhost_chain::testing::TxBuilder;
use timerhost_chain::{Chain, NoHooks, VmRuntime};
use timerhost_state::{EventFilter, KvBackend, MemoryBackend, SledBackend, StoreSnapshot};
use timerhost_types::{
    dev_accounts, Address, BasefeeConfig, Genesis, Hash, PrivateKey, SignedTransaction,
    SystemInstruction, TimerConfig, TxKind, Value,
};

/// The actor VM meters memory through the global allocator, and refuses to
/// start without it (see `timerhost_vm::alloc`). Only Rust allocations of
/// this extension go through it; CPython's own allocator is untouched.
#[global_allocator]
static ALLOCATOR: timerhost_vm::MeteredAllocator = timerhost_vm::MeteredAllocator;

create_exception!(
    timerhost,
    TimerhostError,
    PyException,
    "Base class of every error raised by the timerhost package."
);
create_exception!(
    timerhost,
    TransactionRejected,
    TimerhostError,
    "A transaction was refused before inclusion (bad nonce, unfunded, wrong signer, limits); nothing was mined."
);
create_exception!(
    timerhost,
    ChainError,
    TimerhostError,
    "The chain itself failed (storage, corrupt state, bad block parameters)."
);

create_exception!(
    timerhost,
    ProofError,
    TimerhostError,
    "A state proof does not hold: the value it claims is not what the header's state root commits to."
);

/// Checks a `th_getProof` answer's `value` (hex-decoded bytes, `None`:
/// absent) and `proof` against `state_root`, for the state key of `kind`
/// (`"account"`: `subject` is the address; `"storage"`: `subject` is the
/// actor, `storage_key` the key as it wrote it). Returns the proven value —
/// an account as a dict, a storage value as Python, `None` for a proven
/// absence — or raises [`ProofError`].
#[pyfunction]
#[pyo3(signature = (state_root, kind, subject, storage_key, value, proof))]
fn verify_state_proof<'py>(
    py: Python<'py>,
    state_root: &str,
    kind: &str,
    subject: &str,
    storage_key: Option<&str>,
    value: Option<Vec<u8>>,
    proof: Vec<u8>,
) -> PyResult<Bound<'py, PyAny>> {
    let bad = |why: String| ProofError::new_err(why);
    let root: Hash = state_root
        .parse()
        .map_err(|e| bad(format!("the header's state root {state_root:?}: {e}")))?;
    let address: Address = subject
        .parse()
        .map_err(|e| bad(format!("the proof's address {subject:?}: {e}")))?;
    let key = match (kind, storage_key) {
        ("account", _) => timerhost_types::keys::account(&address),
        ("storage", Some(k)) => timerhost_types::keys::storage(&address, k.as_bytes()),
        _ => {
            return Err(bad(format!(
                "a proof of kind {kind:?} cannot be checked here"
            )))
        }
    };
    timerhost_state::verify_proof(&root, &key, value.as_deref(), &proof).map_err(bad)?;
    match (kind, value) {
        (_, None) => Ok(py.None().into_bound(py)),
        ("account", Some(bytes)) => {
            let acct = timerhost_types::decode::<timerhost_types::keys::Account>(&bytes)
                .map_err(|e| bad(format!("the proven account does not decode: {e}")))?;
            let d = pyo3::types::PyDict::new(py);
            d.set_item("balance", acct.balance)?;
            d.set_item("nonce", acct.nonce)?;
            d.set_item("is_actor", acct.is_actor)?;
            d.set_item("schedule_nonce", acct.schedule_nonce)?;
            d.set_item("live_timers", acct.live_timers)?;
            Ok(d.into_any())
        }
        (_, Some(bytes)) => {
            let v = Value::from_bytes(&bytes)
                .map_err(|e| bad(format!("the proven value does not decode: {e}")))?;
            convert::value_to_py(py, &v)
        }
    }
}

/// Checks a `th_getProof` answer of kind `"timer"` (`proof`: its bytes)
/// for timer `timer_id` against `state_root`; returns the proven timer as
/// a dict, or raises [`ProofError`].
#[pyfunction]
fn verify_timer_proof<'py>(
    py: Python<'py>,
    state_root: &str,
    timer_id: &str,
    proof: Vec<u8>,
) -> PyResult<Bound<'py, PyDict>> {
    let bad = |why: String| ProofError::new_err(why);
    let root: Hash = state_root
        .parse()
        .map_err(|e| bad(format!("the header's state root {state_root:?}: {e}")))?;
    let id: Hash = timer_id
        .parse()
        .map_err(|e| bad(format!("the timer id {timer_id:?}: {e}")))?;
    let timer = timerhost_timers::proof::verify(&root, &id, &proof).map_err(bad)?;
    convert::timer(py, &timer)
}

/// Runs `f` on the VM's execution worker (`timerhost_vm::runtime`), the GIL
/// released meanwhile.
fn on_execution_worker<R: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce() -> R + Send + 'static,
) -> R {
    py.detach(|| timerhost_vm::runtime::ExecutionWorker::get().run(f))
}

/// A node-side failure (chain, storage, encoding) as `ChainError`.
fn chain_err(e: impl std::fmt::Display) -> PyErr {
    ChainError::new_err(e.to_string())
}

/// Where the default proposer's tips go: a fixed, recognisable address that
/// is none of the dev accounts, so tips never blur balance assertions.
const PROPOSER: Address = Address([0xc0; 20]);

/// One transaction as the Python layer describes it.
struct TxSpec {
    key: PrivateKey,
    nonce: Option<u64>,
    cycles_limit: u64,
    cells_limit: u64,
    max_fee_per_cycle: Option<u128>,
    max_fee_per_cell: Option<u128>,
    tip: u128,
    kind: TxKind,
}

/// Signs one transaction spec with `nonce`. Wallet-style fee defaults
/// (EIP-1559 practice): twice the current basefee plus the tip, so the
/// basefee may rise for a while before the transaction stops being
/// includable.
fn sign_spec(
    spec: TxSpec,
    chain_id: u64,
    nonce: u64,
    cycle_basefee: u128,
    cell_basefee: u128,
) -> SignedTransaction {
    let mut builder = TxBuilder::new(spec.key, chain_id);
    builder.nonce = nonce;
    builder.cycles_limit = spec.cycles_limit;
    builder.cells_limit = spec.cells_limit;
    builder.priority_fee_per_cycle = spec.tip;
    builder.max_fee_per_cycle = spec
        .max_fee_per_cycle
        .unwrap_or(cycle_basefee.saturating_mul(2) + spec.tip);
    builder.max_fee_per_cell = spec
        .max_fee_per_cell
        .unwrap_or(cell_basefee.saturating_mul(2));
    builder.sign(spec.kind)
}

fn field_error(key: &str, e: PyErr) -> PyErr {
    PyValueError::new_err(format!("transaction field {key:?}: {e}"))
}

fn req<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    match d.get_item(key)? {
        Some(v) => v.extract::<T>().map_err(|e| field_error(key, e.into())),
        None => Err(PyValueError::new_err(format!(
            "transaction field {key:?} is missing"
        ))),
    }
}

fn opt<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => Ok(Some(
            v.extract::<T>().map_err(|e| field_error(key, e.into()))?,
        )),
        _ => Ok(None),
    }
}

fn args(d: &Bound<'_, PyDict>) -> PyResult<Vec<Value>> {
    match d.get_item("args")? {
        None => Ok(Vec::new()),
        Some(list) => list
            .try_iter()?
            .map(|item| convert::py_to_value(&item?))
            .collect(),
    }
}

fn parse_spec(d: &Bound<'_, PyDict>) -> PyResult<TxSpec> {
    let key_hex: String = req(d, "key")?;
    let key = PrivateKey::from_hex(&key_hex)
        .map_err(|e| PyValueError::new_err(format!("signer key: {e}")))?;
    let op: String = req(d, "op")?;
    let kind = match op.as_str() {
        "transfer" => TxKind::Transfer {
            to: convert::address(&req::<String>(d, "to")?, "transfer recipient")?,
            amount: req(d, "amount")?,
        },
        "deploy" => TxKind::DeployActor {
            code: req(d, "code")?,
            args: args(d)?,
            value: opt(d, "value")?.unwrap_or(0),
        },
        "call" => TxKind::CallActor {
            actor: convert::address(&req::<String>(d, "actor")?, "actor")?,
            handler: req(d, "handler")?,
            args: args(d)?,
            value: opt(d, "value")?.unwrap_or(0),
        },
        "update_timer_config" => {
            let json: String = req(d, "config")?;
            let cfg: TimerConfig = serde_json::from_str(&json)
                .map_err(|e| PyValueError::new_err(format!("timer config: {e}")))?;
            TxKind::System(SystemInstruction::UpdateTimerConfig(cfg))
        }
        "update_basefee_config" => {
            let json: String = req(d, "config")?;
            let cfg: BasefeeConfig = serde_json::from_str(&json)
                .map_err(|e| PyValueError::new_err(format!("basefee config: {e}")))?;
            TxKind::System(SystemInstruction::UpdateBasefeeConfig(cfg))
        }
        "cancel_timer" => TxKind::System(SystemInstruction::CancelTimer {
            timer_id: convert::hash(&req_any(d, "timer_id")?, "timer_id")?,
        }),
        "extend_timer" => TxKind::System(SystemInstruction::ExtendTimer {
            timer_id: convert::hash(&req_any(d, "timer_id")?, "timer_id")?,
            new_expires_at: req(d, "new_expires_at")?,
        }),
        "pause_timers" => TxKind::System(SystemInstruction::PauseTimers),
        "resume_timers" => TxKind::System(SystemInstruction::ResumeTimers),
        "shutdown_timers" => TxKind::System(SystemInstruction::ShutdownTimers),
        "revoke_timer_payments" => TxKind::RevokeTimerPayments,
        "submit_proposal" => {
            let json: String = req(d, "action")?;
            TxKind::System(SystemInstruction::SubmitProposal(proposal_action(&json)?))
        }
        "cast_vote" => TxKind::System(SystemInstruction::CastVote {
            proposal_id: req(d, "proposal_id")?,
            approve: req(d, "approve")?,
        }),
        "execute_proposal" => TxKind::System(SystemInstruction::ExecuteProposal {
            proposal_id: req(d, "proposal_id")?,
        }),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown transaction op {other:?}"
            )))
        }
    };
    Ok(TxSpec {
        key,
        nonce: opt(d, "nonce")?,
        cycles_limit: req(d, "cycles_limit")?,
        cells_limit: req(d, "cells_limit")?,
        max_fee_per_cycle: opt(d, "max_fee_per_cycle")?,
        max_fee_per_cell: opt(d, "max_fee_per_cell")?,
        tip: opt(d, "tip")?.unwrap_or(0),
        kind,
    })
}

/// A proposal action from its JSON form `{"kind", …fields}` (#32): the
/// kinds and fields of `th_getProposals`' actions.
fn proposal_action(json: &str) -> PyResult<timerhost_types::ProposalAction> {
    use timerhost_types::governance::parse_validator_key;
    use timerhost_types::ProposalAction as A;
    let bad = |what: String| PyValueError::new_err(format!("proposal action: {what}"));
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
    let field = |k: &str| v.get(k).ok_or_else(|| bad(format!("{k} is missing")));
    let text = |k: &str| -> PyResult<String> {
        field(k)?
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| bad(format!("{k} must be a string")))
    };
    let number = |k: &str| -> PyResult<u64> {
        field(k)?
            .as_u64()
            .ok_or_else(|| bad(format!("{k} must be a non-negative int")))
    };
    let key = |k: &str| -> PyResult<[u8; 32]> { parse_validator_key(&text(k)?).map_err(bad) };
    let address = |a: &str| convert::address(a, "address");
    let kind = text("kind")?;
    Ok(match kind.as_str() {
        "UpdateTimerConfig" => A::UpdateTimerConfig(
            serde_json::from_value(field("config")?.clone()).map_err(|e| bad(e.to_string()))?,
        ),
        "UpdateBasefeeConfig" => A::UpdateBasefeeConfig(
            serde_json::from_value(field("config")?.clone()).map_err(|e| bad(e.to_string()))?,
        ),
        "AddValidator" => A::AddValidator {
            public_key: key("public_key")?,
            power: number("power")?,
            operator: address(&text("operator")?)?,
        },
        "RemoveValidator" => A::RemoveValidator {
            public_key: key("public_key")?,
        },
        "SetValidatorPower" => A::SetValidatorPower {
            public_key: key("public_key")?,
            power: number("power")?,
        },
        "SetSystemDeployers" => A::SetSystemDeployers(
            field("system_deployers")?
                .as_array()
                .ok_or_else(|| bad("system_deployers must be a list".into()))?
                .iter()
                .map(|a| address(a.as_str().unwrap_or_default()))
                .collect::<PyResult<Vec<_>>>()?,
        ),
        "ScheduleUpgrade" => A::ScheduleUpgrade {
            name: text("name")?,
            height: number("height")?,
            info: v
                .get("info")
                .and_then(|i| i.as_str())
                .unwrap_or_default()
                .to_owned(),
        },
        other => {
            return Err(bad(format!(
                "unknown kind {other:?} (UpdateTimerConfig, UpdateBasefeeConfig, AddValidator, RemoveValidator, SetValidatorPower, SetSystemDeployers, ScheduleUpgrade)"
            )))
        }
    })
}

fn req_any<'py>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Bound<'py, PyAny>> {
    d.get_item(key)?
        .ok_or_else(|| PyValueError::new_err(format!("transaction field {key:?} is missing")))
}

/// The in-process chain.
#[pyclass(module = "timerhost._native")]
struct NativeChain {
    /// `None` once closed (the store, and a sled lock, released). Shared
    /// with the execution worker while it mines a block.
    chain: Option<Arc<Chain<Box<dyn KvBackend>>>>,
    /// Snapshots by id; `None` once reverted past (ids are never reused).
    snapshots: Vec<Option<StoreSnapshot>>,
}

impl NativeChain {
    fn chain(&self) -> PyResult<&Arc<Chain<Box<dyn KvBackend>>>> {
        self.chain
            .as_ref()
            .ok_or_else(|| ChainError::new_err("this chain is closed"))
    }

    fn basefee(&self) -> PyResult<BasefeeConfig> {
        self.chain()?.basefee_config().map_err(chain_err)
    }

    /// Signs the specs with nonces taken from the head state, counting
    /// earlier transactions of the same sender in this block.
    fn sign(&self, specs: Vec<TxSpec>) -> PyResult<Vec<SignedTransaction>> {
        let basefee = self.basefee()?;
        let chain_id = self.chain()?.genesis().chain_id;
        let mut next_nonce: std::collections::HashMap<Address, u64> = Default::default();
        let mut out = Vec::with_capacity(specs.len());
        for spec in specs {
            let sender = spec.key.address();
            // The head state is read only when neither the caller nor an
            // earlier transaction of this batch fixed the nonce.
            let nonce = match (spec.nonce, next_nonce.get(&sender)) {
                (Some(n), _) => n,
                (None, Some(n)) => *n,
                (None, None) => self.chain()?.account(&sender).map_err(chain_err)?.nonce,
            };
            next_nonce.insert(sender, nonce + 1);
            out.push(sign_spec(
                spec,
                chain_id,
                nonce,
                basefee.cycle_basefee,
                basefee.cell_basefee,
            ));
        }
        Ok(out)
    }
}

#[pymethods]
impl NativeChain {
    /// A fresh dev chain (chain id 1337, ten funded dev accounts), in memory,
    /// or persisted in sled under `path` (reopened if it already exists);
    /// with `validators` N > 0, N dev validators governing by proposals.
    #[new]
    #[pyo3(signature = (path=None, validators=0))]
    fn new(py: Python<'_>, path: Option<PathBuf>, validators: u32) -> PyResult<Self> {
        let backend: Box<dyn KvBackend> = match path {
            None => Box::new(MemoryBackend::new()),
            Some(p) => Box::new(SledBackend::open(&p).map_err(|e| {
                ChainError::new_err(format!("opening the store at {}: {e}", p.display()))
            })?),
        };
        let runtime = VmRuntime::new().map_err(chain_err)?;
        // #32: N dev validators operated by dev accounts 0..N−1, config
        // updates through proposals.
        let genesis = match validators {
            0 => Genesis::dev(),
            n if n as usize <= timerhost_types::DEV_ACCOUNT_COUNT => {
                timerhost_types::dev_validator_genesis(n)
            }
            n => {
                return Err(PyValueError::new_err(format!(
                    "validators={n}: at most {} (dev accounts operate them)",
                    timerhost_types::DEV_ACCOUNT_COUNT
                )))
            }
        };
        // Genesis runs actor code (the system actors' deploys): on the
        // execution worker, like every block.
        let chain = on_execution_worker(py, move || {
            Chain::open(backend, genesis, Arc::new(runtime), Arc::new(NoHooks))
        })
        .map_err(chain_err)?;
        Ok(Self {
            chain: Some(Arc::new(chain)),
            snapshots: Vec::new(),
        })
    }

    /// `(address, private key hex)` of the ten dev accounts.
    fn dev_keys(&self) -> Vec<(String, String)> {
        dev_accounts()
            .into_iter()
            .map(|k| (k.address().to_hex(), k.to_hex()))
            .collect()
    }

    /// Addresses allowed to sign system instructions.
    fn system_deployers(&self) -> PyResult<Vec<String>> {
        Ok(self
            .chain()?
            .params()
            .map_err(chain_err)?
            .system_deployers
            .iter()
            .map(|a| a.to_hex())
            .collect())
    }

    /// The head block's header as a dict.
    fn head<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        convert::header(py, &self.chain()?.head().map_err(chain_err)?)
    }

    /// Mines one block at `timestamp_ms` (unix ms) with `txs` (dicts built by the Python
    /// layer). If any transaction is refused, nothing is committed and
    /// `TransactionRejected(message, index)` is raised.
    fn mine_block<'py>(
        &self,
        py: Python<'py>,
        txs: Vec<Bound<'py, PyDict>>,
        timestamp: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let specs = txs.iter().map(parse_spec).collect::<PyResult<Vec<_>>>()?;
        let signed = self.sign(specs)?;
        let chain = self.chain()?.clone();
        // Actor code runs on the execution worker, whose stack holds the
        // VM's bounds (#49), never on Python's thread.
        let proposed = on_execution_worker(py, move || {
            let proposed = chain.propose(&signed, timestamp, PROPOSER)?;
            if proposed.rejected.is_empty() {
                chain.commit(&proposed.executed)?;
            }
            Ok::<_, timerhost_chain::ChainError>(proposed)
        })
        .map_err(chain_err)?;
        if let Some((index, hash, reason)) = proposed.rejected.first() {
            return Err(TransactionRejected::new_err((
                format!("transaction {index} ({hash}) rejected: {reason}"),
                *index,
                reason.to_string(),
            )));
        }
        let executed = &proposed.executed;
        convert::block(py, &executed.block, &executed.receipts)
    }

    /// Balance and nonce of an address.
    fn account(&self, address: &str) -> PyResult<(u128, u64)> {
        let a = self
            .chain()?
            .account(&convert::address(address, "address")?)
            .map_err(chain_err)?;
        Ok((a.balance, a.nonce))
    }

    /// Up to `limit` keys of an actor's storage that start with `prefix`,
    /// in key order (a range scan of committed state; no block is mined).
    fn storage_keys(&self, actor: &str, prefix: &str, limit: usize) -> PyResult<Vec<String>> {
        use timerhost_state::StateRead;
        let actor = convert::address(actor, "actor")?;
        let state = self.chain()?.store().state();
        let base = timerhost_types::keys::storage_prefix(&actor).len();
        let (start, end) =
            timerhost_types::keys::storage_scan_range(&actor, prefix.as_bytes(), None);
        let found = state.scan(&start, Some(&end), limit).map_err(chain_err)?;
        Ok(found
            .into_iter()
            .map(|(k, _)| String::from_utf8_lossy(&k[base..]).into_owned())
            .collect())
    }

    /// An actor's storage value, `None` if absent.
    fn storage<'py>(&self, py: Python<'py>, actor: &str, key: &str) -> PyResult<Bound<'py, PyAny>> {
        use timerhost_state::StateRead;
        let actor = convert::address(actor, "actor")?;
        let state = self.chain()?.store().state();
        let bytes = state
            .get(&timerhost_types::keys::storage(&actor, key.as_bytes()))
            .map_err(chain_err)?;
        match bytes {
            None => Ok(py.None().into_bound(py)),
            Some(b) => {
                let v = Value::from_bytes(&b).map_err(|e| {
                    ChainError::new_err(format!("corrupt storage value at {key:?}: {e}"))
                })?;
                convert::value_to_py(py, &v)
            }
        }
    }

    /// Is there an actor (code) at `address`?
    fn is_actor(&self, address: &str) -> PyResult<bool> {
        use timerhost_state::StateRead;
        let a = convert::address(address, "address")?;
        Ok(self
            .chain()?
            .store()
            .state()
            .get(&timerhost_types::keys::code(&a))
            .map_err(chain_err)?
            .is_some())
    }

    /// One timer by id, `None` if it does not exist (fired, expired, cancelled).
    fn timer<'py>(
        &self,
        py: Python<'py>,
        timer_id: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = convert::hash(&timer_id, "timer_id")?;
        let state = self.chain()?.store().state();
        match timerhost_timers::store::get(&state, &id).map_err(chain_err)? {
            None => Ok(py.None().into_bound(py)),
            Some(t) => Ok(convert::timer(py, &t)?.into_any()),
        }
    }

    /// Pending timers filtered by actor, height and fee payer (all given
    /// filters apply), in firing order within a height.
    #[pyo3(signature = (actor=None, height=None, fee_payer=None))]
    fn timers<'py>(
        &self,
        py: Python<'py>,
        actor: Option<&str>,
        height: Option<u64>,
        fee_payer: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        use timerhost_timers::store;
        let state = self.chain()?.store().state();
        let actor = actor.map(|a| convert::address(a, "actor")).transpose()?;
        let fee_payer = fee_payer
            .map(|a| convert::address(a, "fee_payer"))
            .transpose()?;
        let mut timers = match (actor, height, fee_payer) {
            (Some(a), _, _) => store::by_actor(&state, &a, usize::MAX).map_err(chain_err)?,
            (None, Some(h), _) => store::by_height(&state, h, usize::MAX).map_err(chain_err)?,
            (None, None, Some(p)) => {
                store::by_fee_payer(&state, &p, usize::MAX).map_err(chain_err)?
            }
            (None, None, None) => store::all(&state, usize::MAX).map_err(chain_err)?,
        };
        timers.retain(|t| {
            actor.is_none_or(|a| t.actor_address == a)
                && height.is_none_or(|h| t.height == h)
                && fee_payer.is_none_or(|p| t.fee_payer == p)
        });
        timers.sort_by_key(|t| (t.height, t.seq));
        let dicts = timers
            .iter()
            .map(|t| convert::timer(py, t))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, dicts)
    }

    /// The Globalbox's entries in order, as JSON (`th_getGlobalbox`'s shape).
    fn globalbox_json(&self) -> PyResult<String> {
        let chain = self.chain()?;
        let state = chain.store().state();
        let config = timerhost_chain::accounts::timer_config(&state).map_err(chain_err)?;
        let head = chain.head().map_err(chain_err)?.height;
        let listed = timerhost_timers::globalbox::listing(&state, &config, head, usize::MAX)
            .map_err(chain_err)?;
        let entries: Vec<serde_json::Value> = listed
            .iter()
            .map(|l| {
                let e = &l.entry;
                serde_json::json!({
                    "position": l.position,
                    "timer_id": e.timer_id.to_hex(),
                    "actor": e.actor.to_hex(),
                    "kind": l.kind,
                    "due_height": e.due_height,
                    "bid": e.bid,
                    "max_fee_per_cycle": e.max_fee_per_cycle,
                    "weight": e.weight,
                    "waiting": l.waiting,
                    "score": e.score.to_string(),
                    "score_now": l.score_now.to_string(),
                })
            })
            .collect();
        serde_json::to_string(&entries).map_err(chain_err)
    }

    /// Events from committed blocks, oldest first.
    #[pyo3(signature = (name=None, actor=None, from_height=None, to_height=None))]
    fn events<'py>(
        &self,
        py: Python<'py>,
        name: Option<String>,
        actor: Option<&str>,
        from_height: Option<u64>,
        to_height: Option<u64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let filter = EventFilter {
            name,
            emitter: actor.map(|a| convert::address(a, "actor")).transpose()?,
            from_height,
            to_height,
            limit: 0,
        };
        let records = self.chain()?.store().events(&filter).map_err(chain_err)?;
        let dicts = records
            .iter()
            .map(|r| convert::event_record(py, r))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, dicts)
    }

    /// A committed block with its receipts, `None` above the head.
    fn block<'py>(&self, py: Python<'py>, height: u64) -> PyResult<Bound<'py, PyAny>> {
        let store = self.chain()?.store();
        match store.block(height).map_err(chain_err)? {
            None => Ok(py.None().into_bound(py)),
            Some(b) => {
                let receipts = store.receipts(height).map_err(chain_err)?;
                Ok(convert::block(py, &b, &receipts)?.into_any())
            }
        }
    }

    /// The receipt of a transaction by hash, `None` if unknown.
    fn receipt<'py>(
        &self,
        py: Python<'py>,
        tx_hash: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let hash = convert::hash(&tx_hash, "tx_hash")?;
        match self.chain()?.store().receipt(&hash).map_err(chain_err)? {
            None => Ok(py.None().into_bound(py)),
            Some((loc, r)) => Ok(convert::receipt(py, &r, loc.height)?.into_any()),
        }
    }

    /// The timer config in force, as JSON.
    fn timer_config_json(&self) -> PyResult<String> {
        let cfg = timerhost_chain::accounts::timer_config(&self.chain()?.store().state())
            .map_err(chain_err)?;
        serde_json::to_string(&cfg).map_err(chain_err)
    }

    /// `th_quoteTimer`'s answer, as JSON: the quote a transaction in the
    /// next block would get from `pvm_host.timer_quote`.
    #[pyo3(signature = (height=None, gas_limit=None, timestamp_ms=None, bid=None, max_fee_per_cycle=None, retries=None, book=false))]
    #[allow(clippy::too_many_arguments)] // Python's keywords, one each
    fn quote_timer_json(
        &self,
        height: Option<u64>,
        gas_limit: Option<u64>,
        timestamp_ms: Option<u64>,
        bid: Option<u64>,
        max_fee_per_cycle: Option<u64>,
        retries: Option<u32>,
        book: bool,
    ) -> PyResult<String> {
        let request = timerhost_types::QuoteRequest {
            height,
            timestamp_ms,
            gas_limit,
            bid,
            max_fee_per_cycle,
            retries,
            book,
        };
        let quote = self
            .chain()?
            .quote_timer(request)
            .map_err(chain_err)?
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        serde_json::to_string(&quote).map_err(chain_err)
    }

    /// `actor`'s dead-letter queue (#45): the dicts
    /// `pvm_host.dead_letters()` returns to the actor itself.
    fn dead_letters<'py>(&self, py: Python<'py>, actor: &str) -> PyResult<Bound<'py, PyList>> {
        let actor = convert::address(actor, "actor")?;
        let state = self.chain()?.store().state();
        let entries = timerhost_timers::dead_letters::list(&state, &actor).map_err(chain_err)?;
        let items = entries
            .iter()
            .map(|e| convert::value_to_py(py, &e.to_value()))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The validator set of consensus at `height` (default: the next
    /// block's), as JSON (`th_getValidators`' shape), or `None` on a chain
    /// without validators.
    #[pyo3(signature = (height=None))]
    fn validators_json(&self, height: Option<u64>) -> PyResult<Option<String>> {
        let chain = self.chain()?;
        let height = match height {
            Some(h) => h,
            None => chain.head().map_err(chain_err)?.height + 1,
        };
        let Some(set) = chain.validators_at(height).map_err(chain_err)? else {
            return Ok(None);
        };
        let rows: Vec<serde_json::Value> = set
            .validators
            .iter()
            .map(|v| {
                serde_json::json!({
                    "address": v.address().to_hex(),
                    "public_key": v.public_key_hex(),
                    "power": v.power,
                    "operator": v.operator.to_hex(),
                })
            })
            .collect();
        serde_json::to_string(&rows).map(Some).map_err(chain_err)
    }

    /// Every proposal, oldest first, as JSON: id, proposer, action kind,
    /// status, votes and their tally against the next block's set.
    fn proposals_json(&self) -> PyResult<String> {
        let chain = self.chain()?;
        let next = chain.head().map_err(chain_err)?.height + 1;
        let set = chain
            .validators_at(next)
            .map_err(chain_err)?
            .unwrap_or_default();
        let rows: Vec<serde_json::Value> = chain
            .proposals(1, usize::MAX)
            .map_err(chain_err)?
            .iter()
            .map(|p| {
                let t = p.tally(&set);
                serde_json::json!({
                    "proposal_id": p.id,
                    "proposer": p.proposer.to_hex(),
                    "action": p.action.name(),
                    "deposit": p.deposit.to_string(),
                    "submitted_at": p.submitted_at,
                    "voting_ends_at": p.voting_ends_at,
                    "status": p.status.as_str(),
                    "votes": p.votes.iter().map(|(o, a)| serde_json::json!([o.to_hex(), a])).collect::<Vec<_>>(),
                    "yes_power": t.yes,
                    "no_power": t.no,
                    "total_power": t.total,
                })
            })
            .collect();
        serde_json::to_string(&rows).map_err(chain_err)
    }

    /// The timer lane's market for the next block (#31): `(lane basefee,
    /// median tip of the last block that fired)`.
    fn lane_market(&self) -> PyResult<(u64, u64)> {
        let state = self.chain()?.store().state();
        let config = timerhost_chain::accounts::timer_config(&state).map_err(chain_err)?;
        let market = timerhost_timers::lane::market(&state, &config).map_err(chain_err)?;
        Ok((market.basefee, market.median_tip))
    }

    /// The governance status of timers: `active`, `paused`, `shutting_down` or `shutdown`.
    fn timer_status(&self) -> PyResult<&'static str> {
        let status =
            timerhost_timers::control::status(&self.chain()?.store().state()).map_err(chain_err)?;
        Ok(status.as_str())
    }

    /// The basefee config in force for the next block, as JSON (u128 fields as strings).
    fn basefee_config_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.basefee()?).map_err(chain_err)
    }

    /// Captures the whole chain; returns the snapshot id.
    fn snapshot(&mut self) -> PyResult<usize> {
        let snap = self.chain()?.snapshot().map_err(chain_err)?;
        self.snapshots.push(Some(snap));
        Ok(self.snapshots.len() - 1)
    }

    /// Returns the chain to snapshot `id`. That snapshot and every later
    /// one are used up (as in anvil); returns `False` for an unknown or
    /// used-up id, changing nothing.
    fn revert(&mut self, id: usize) -> PyResult<bool> {
        let Some(Some(snap)) = self.snapshots.get(id) else {
            return Ok(false);
        };
        self.chain()?.revert(snap).map_err(chain_err)?;
        for later in &mut self.snapshots[id..] {
            *later = None;
        }
        Ok(true)
    }

    /// Releases the store (and the sled lock with it); later calls fail.
    fn close(&mut self) {
        self.chain = None;
        self.snapshots.clear();
    }
}

/// The address of the actor that `deployer`'s transaction with `nonce` creates.
#[pyfunction]
fn actor_address(deployer: &str, nonce: u64) -> PyResult<String> {
    Ok(timerhost_types::actor_address(&convert::address(deployer, "deployer")?, nonce).to_hex())
}

/// A transaction spec (the dicts `Chain` builds) signed for a node: the
/// hex of its encoding, what `th_sendRawTransaction` takes. `nonce` is used
/// unless the spec fixes one.
#[pyfunction]
fn sign_transaction(
    spec: &Bound<'_, PyDict>,
    chain_id: u64,
    nonce: u64,
    cycle_basefee: u128,
    cell_basefee: u128,
) -> PyResult<String> {
    let spec = parse_spec(spec)?;
    let nonce = spec.nonce.unwrap_or(nonce);
    let tx = sign_spec(spec, chain_id, nonce, cycle_basefee, cell_basefee);
    let hex: String = tx.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("0x{hex}"))
}

/// An actor value from its canonical encoding (as `th_getStorage(…,
/// "raw")` returns it).
#[pyfunction]
fn decode_value<'py>(py: Python<'py>, encoded: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let v = Value::from_bytes(encoded)
        .map_err(|e| PyValueError::new_err(format!("not an encoded actor value: {e}")))?;
    convert::value_to_py(py, &v)
}

/// The ten dev accounts: `(address, private key)`.
#[pyfunction]
fn dev_account_keys() -> Vec<(String, String)> {
    dev_accounts()
        .into_iter()
        .map(|k| (k.address().to_hex(), k.to_hex()))
        .collect()
}

/// The address of a private key (hex).
#[pyfunction]
fn key_address(private_key: &str) -> PyResult<String> {
    Ok(PrivateKey::from_hex(private_key)
        .map_err(|e| PyValueError::new_err(format!("private key: {e}")))?
        .address()
        .to_hex())
}

/// The `timerhost._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeChain>()?;
    m.add_function(wrap_pyfunction!(actor_address, m)?)?;
    m.add_function(wrap_pyfunction!(key_address, m)?)?;
    m.add_function(wrap_pyfunction!(sign_transaction, m)?)?;
    m.add_function(wrap_pyfunction!(dev_account_keys, m)?)?;
    m.add_function(wrap_pyfunction!(decode_value, m)?)?;
    m.add_function(wrap_pyfunction!(verify_state_proof, m)?)?;
    m.add_function(wrap_pyfunction!(verify_timer_proof, m)?)?;
    m.add("ProofError", m.py().get_type::<ProofError>())?;
    m.add("TimerhostError", m.py().get_type::<TimerhostError>())?;
    m.add(
        "TransactionRejected",
        m.py().get_type::<TransactionRejected>(),
    )?;
    m.add("ChainError", m.py().get_type::<ChainError>())?;
    m.add("TRIGGER_KINDS", timerhost_types::TimerKind::NAMES.to_vec())?;
    m.add(
        "CRON_REGISTRY_ADDRESS",
        timerhost_types::CRON_REGISTRY_ADDRESS.to_hex(),
    )?;
    Ok(())
}
