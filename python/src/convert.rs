//! Conversions between Python objects and the chain's types.
//!
//! Actor values ([`Value`]) map one-to-one onto Python's `None`, `bool`,
//! `int`, `str`, `bytes`, `list`, `tuple` and `dict`, as they do inside the
//! actor VM, so what a test passes is exactly what the actor receives.
//! Records (receipts, events, timers, blocks) become plain dicts that the
//! pure-Python layer wraps in typed classes.

use num_bigint::BigInt;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::BoundObject;
use timerhost_state::EventRecord;
use timerhost_types::value::MAX_DEPTH;
use timerhost_types::{
    Address, Block, BlockHeader, Event, Hash, Receipt, ReceiptStatus, Timer, TxSource, Value,
};

/// A Python object as an actor value.
pub fn py_to_value(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value(obj, 0)
}

fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth >= MAX_DEPTH {
        return Err(PyValueError::new_err(format!(
            "value nested deeper than {MAX_DEPTH} levels"
        )));
    }
    if obj.is_none() {
        return Ok(Value::None);
    }
    // bool before int: Python's bool is a subclass of int.
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Value::Int(obj.extract::<BigInt>()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::Str(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        return Ok(Value::List(
            list.iter()
                .map(|x| to_value(&x, depth + 1))
                .collect::<PyResult<_>>()?,
        ));
    }
    if let Ok(tuple) = obj.cast::<PyTuple>() {
        return Ok(Value::Tuple(
            tuple
                .iter()
                .map(|x| to_value(&x, depth + 1))
                .collect::<PyResult<_>>()?,
        ));
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        let mut entries = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            entries.push((to_value(&k, depth + 1)?, to_value(&v, depth + 1)?));
        }
        return Value::dict_from(entries).ok_or_else(|| {
            PyTypeError::new_err("dict keys passed to an actor must be hashable (not list or dict)")
        });
    }
    let type_name = obj.get_type().name()?.to_string();
    let hint = if obj.is_instance_of::<PyFloat>() {
        " (actor values are exact: pass an int, e.g. in the smallest unit)"
    } else {
        ""
    };
    Err(PyTypeError::new_err(format!(
        "a {type_name} cannot be passed to an actor: use None, bool, int, str, bytes, list, tuple or dict{hint}"
    )))
}

/// An actor value as a Python object.
pub fn value_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::None => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::List(items) => PyList::new(py, values_to_py(py, items)?)?.into_any(),
        Value::Tuple(items) => PyTuple::new(py, values_to_py(py, items)?)?.into_any(),
        Value::Dict(entries) => {
            let dict = PyDict::new(py);
            for (k, v) in entries {
                dict.set_item(value_to_py(py, k)?, value_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

fn values_to_py<'py>(py: Python<'py>, items: &[Value]) -> PyResult<Vec<Bound<'py, PyAny>>> {
    items.iter().map(|v| value_to_py(py, v)).collect()
}

/// Parses a `0x…` address, naming the argument on failure.
pub fn address(text: &str, what: &str) -> PyResult<Address> {
    text.parse()
        .map_err(|e| PyValueError::new_err(format!("{what}: not an address ({text:?}): {e}")))
}

/// A 32-byte hash from bytes or `0x…` hex.
pub fn hash(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Hash> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        let bytes = b.as_bytes();
        let array: [u8; 32] = bytes.try_into().map_err(|_| {
            PyValueError::new_err(format!("{what}: expected 32 bytes, got {}", bytes.len()))
        })?;
        return Ok(Hash(array));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let text = s.to_str()?;
        return text
            .parse()
            .map_err(|e| PyValueError::new_err(format!("{what}: not a hash ({text:?}): {e}")));
    }
    Err(PyTypeError::new_err(format!(
        "{what}: expected 32 bytes or a 0x-prefixed hex string"
    )))
}

/// A dict from `(key, value)` pairs.
fn dict<'py>(
    py: Python<'py>,
    items: Vec<(&str, Bound<'py, PyAny>)>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in items {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn any<'py, T>(py: Python<'py>, v: T) -> PyResult<Bound<'py, PyAny>>
where
    T: IntoPyObject<'py>,
    PyErr: From<T::Error>,
{
    Ok(v.into_pyobject(py)?.into_any().into_bound())
}

/// An event as a dict (`name`, `data`, `actor`, `height`, `tx_hash`).
pub fn event<'py>(
    py: Python<'py>,
    ev: &Event,
    height: u64,
    tx_hash: &Hash,
) -> PyResult<Bound<'py, PyDict>> {
    dict(
        py,
        vec![
            ("name", any(py, &ev.name)?),
            ("data", value_to_py(py, &ev.data)?),
            ("actor", any(py, ev.emitter.to_hex())?),
            ("height", any(py, height)?),
            ("tx_hash", any(py, tx_hash.to_hex())?),
        ],
    )
}

/// A stored event record as a dict.
pub fn event_record<'py>(py: Python<'py>, rec: &EventRecord) -> PyResult<Bound<'py, PyDict>> {
    event(py, &rec.event, rec.height, &rec.tx_hash)
}

/// A receipt as a dict; `height` is the block it was executed in.
pub fn receipt<'py>(py: Python<'py>, r: &Receipt, height: u64) -> PyResult<Bound<'py, PyDict>> {
    let (source, origin, fee_payer, delivery) = match &r.source {
        TxSource::User => ("user", None, None, None),
        TxSource::Deferred {
            origin_tx_hash,
            fee_payer,
            delivery,
        } => (
            "deferred",
            Some(origin_tx_hash.to_hex()),
            Some(fee_payer.to_hex()),
            *delivery,
        ),
        TxSource::EndOfBlock => ("end_of_block", None, None, None),
        TxSource::StartOfBlock => ("start_of_block", None, None, None),
    };
    let error = match &r.error {
        None => py.None().into_bound(py),
        Some(e) => dict(
            py,
            vec![
                ("kind", any(py, e.kind.as_str())?),
                ("message", any(py, &e.message)?),
                ("traceback", any(py, e.traceback.as_deref())?),
            ],
        )?
        .into_any(),
    };
    let events = r
        .events
        .iter()
        .map(|ev| event(py, ev, height, &r.tx_hash))
        .collect::<PyResult<Vec<_>>>()?;
    let return_value = match &r.return_value {
        Some(v) => value_to_py(py, v)?,
        None => py.None().into_bound(py),
    };
    dict(
        py,
        vec![
            ("tx_hash", any(py, r.tx_hash.to_hex())?),
            ("sender", any(py, r.sender.to_hex())?),
            ("source", any(py, source)?),
            ("origin_tx_hash", any(py, origin)?),
            ("fee_payer", any(py, fee_payer)?),
            ("deliver_seq", any(py, delivery.map(|d| d.deliver_seq))?),
            ("fire_seq", any(py, delivery.map(|d| d.fire_seq))?),
            (
                "deliver_id",
                any(py, delivery.map(|d| d.deliver_id.to_hex()))?,
            ),
            (
                "status",
                any(
                    py,
                    match r.status {
                        ReceiptStatus::Success => "success",
                        ReceiptStatus::Failed => "failed",
                    },
                )?,
            ),
            ("error", error),
            ("cycles_used", any(py, r.cycles_used)?),
            ("cells_used", any(py, r.cells_used)?),
            ("fee_paid", any(py, r.fee_paid)?),
            ("burned", any(py, r.burned)?),
            ("tip", any(py, r.tip)?),
            ("events", PyList::new(py, events)?.into_any()),
            ("return_value", return_value),
            (
                "created_actor",
                any(py, r.created_actor.map(|a| a.to_hex()))?,
            ),
            ("height", any(py, height)?),
        ],
    )
}

/// A block header as a dict.
pub fn header<'py>(py: Python<'py>, h: &BlockHeader) -> PyResult<Bound<'py, PyDict>> {
    dict(
        py,
        vec![
            ("height", any(py, h.height)?),
            ("timestamp", any(py, h.timestamp_ms)?),
            ("hash", any(py, h.hash().to_hex())?),
            ("parent_hash", any(py, h.parent_hash.to_hex())?),
            ("state_root", any(py, h.state_root.to_hex())?),
            ("proposer", any(py, h.proposer.to_hex())?),
            ("lane_basefee", any(py, h.lane_basefee)?),
        ],
    )
}

/// A block with its receipts as a dict (`header` fields plus `tx_count`, `receipts`).
pub fn block<'py>(
    py: Python<'py>,
    b: &Block,
    receipts: &[Receipt],
) -> PyResult<Bound<'py, PyDict>> {
    let d = header(py, &b.header)?;
    d.set_item("tx_count", b.txs.len())?;
    let receipts = receipts
        .iter()
        .map(|r| receipt(py, r, b.header.height))
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("receipts", PyList::new(py, receipts)?)?;
    Ok(d)
}

/// A timer record as a dict, with CIP-5 §3.1 field names.
pub fn timer<'py>(py: Python<'py>, t: &Timer) -> PyResult<Bound<'py, PyDict>> {
    dict(
        py,
        vec![
            (
                "timer_id",
                PyBytes::new(py, t.timer_id.as_bytes()).into_any(),
            ),
            ("actor_address", any(py, t.actor_address.to_hex())?),
            ("height", any(py, t.height)?),
            ("payload", PyBytes::new(py, &t.payload).into_any()),
            ("handler", any(py, &t.handler)?),
            ("fee_payer", any(py, t.fee_payer.to_hex())?),
            ("gas_limit_per_fire", any(py, t.gas_limit_per_fire)?),
            ("expires_at", any(py, t.expires_at)?),
            ("seq", any(py, t.seq)?),
            ("deposit", any(py, t.deposit)?),
            ("bid", any(py, t.bid)?),
            ("max_fee_per_cycle", any(py, t.max_fee_per_cycle)?),
            (
                "escrow_key",
                any(
                    py,
                    t.escrow_key
                        .as_deref()
                        .map(|k| String::from_utf8_lossy(k).into_owned()),
                )?,
            ),
            ("trigger", value_to_py(py, &t.trigger_value())?),
            ("booked", any(py, t.booked)?),
            (
                "retry",
                match &t.retry {
                    None => py.None().into_bound(py),
                    Some(r) => dict(
                        py,
                        vec![
                            ("retries", any(py, r.retries)?),
                            ("backoff", any(py, r.backoff)?),
                            ("failures", any(py, r.failures)?),
                        ],
                    )?
                    .into_any(),
                },
            ),
        ],
    )
}
