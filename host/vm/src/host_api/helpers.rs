//! The deterministic helper modules actors may import instead of the
//! standard library: `hashing` (keccak256, sha256), `base64`, `math` (integer
//! helpers) and `json` (a canonical encoder/decoder over the value model).
//! Every function charges by input size before doing its work.

use base64::Engine as _;
use rustpython_vm::builtins::{PyBytes, PyStr};
use rustpython_vm::function::{FuncArgs, OptionalArg};
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};
use sha2::Digest as _;
use timerhost_types::Value;

use crate::host_api::convert::{py_to_value, value_to_py};
use crate::meter::charge::charge;
use crate::meter::sizes::check_int_bits;
use crate::rules::costs;

/// A `bytes` argument's bytes, or a `str`'s UTF-8.
pub fn bytes_arg(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    if let Some(bytes) = obj.downcast_ref::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Some(text) = obj.downcast_ref::<PyStr>() {
        return Ok(text.to_str().unwrap_or_default().as_bytes().to_vec());
    }
    Err(vm.new_type_error("expected bytes or str"))
}

fn charge_bytes(base: u64, length: usize, vm: &VirtualMachine) -> PyResult<()> {
    charge(base + costs::for_bytes(length as u64), 0, vm)
}

/// `hashing.keccak256(data) -> bytes`, `hashing.sha256(data) -> bytes`.
pub(crate) fn hashing_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
        (
            "keccak256",
            vm.new_function(
                "keccak256",
                |data: PyObjectRef, vm: &VirtualMachine| -> PyResult<Vec<u8>> {
                    let data = bytes_arg(&data, vm)?;
                    // Keccak runs at about half SHA-256's speed here (no
                    // hardware support): twice the per-byte charge.
                    charge_bytes(costs::host::HASH_BASE, data.len() * 2, vm)?;
                    Ok(timerhost_types::keccak256(&data).as_bytes().to_vec())
                },
            )
            .into(),
        ),
        (
            "sha256",
            vm.new_function(
                "sha256",
                |data: PyObjectRef, vm: &VirtualMachine| -> PyResult<Vec<u8>> {
                    let data = bytes_arg(&data, vm)?;
                    charge_bytes(costs::host::HASH_BASE, data.len(), vm)?;
                    Ok(sha2::Sha256::digest(&data).to_vec())
                },
            )
            .into(),
        ),
    ]
}

/// `base64.b64encode(data) -> bytes`, `base64.b64decode(data) -> bytes`
/// (standard alphabet, padded, strict), and the `urlsafe_` pair (`-` and
/// `_` for `+` and `/`).
pub(crate) fn base64_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
        (
            "urlsafe_b64encode",
            vm.new_function(
                "urlsafe_b64encode",
                |data: PyObjectRef, vm: &VirtualMachine| -> PyResult<Vec<u8>> {
                    let data = bytes_arg(&data, vm)?;
                    charge_bytes(1, data.len() * 2, vm)?;
                    Ok(base64::engine::general_purpose::URL_SAFE
                        .encode(&data)
                        .into_bytes())
                },
            )
            .into(),
        ),
        (
            "urlsafe_b64decode",
            vm.new_function(
                "urlsafe_b64decode",
                |data: PyObjectRef, vm: &VirtualMachine| -> PyResult<Vec<u8>> {
                    let data = bytes_arg(&data, vm)?;
                    charge_bytes(1, data.len() * 2, vm)?;
                    base64::engine::general_purpose::URL_SAFE
                        .decode(&data)
                        .map_err(|e| vm.new_value_error(format!("invalid base64: {e}")))
                },
            )
            .into(),
        ),
        (
            "b64encode",
            vm.new_function(
                "b64encode",
                |data: PyObjectRef, vm: &VirtualMachine| -> PyResult<Vec<u8>> {
                    let data = bytes_arg(&data, vm)?;
                    charge_bytes(1, data.len() * 2, vm)?;
                    Ok(base64::engine::general_purpose::STANDARD
                        .encode(&data)
                        .into_bytes())
                },
            )
            .into(),
        ),
        (
            "b64decode",
            vm.new_function(
                "b64decode",
                |data: PyObjectRef, vm: &VirtualMachine| -> PyResult<Vec<u8>> {
                    let data = bytes_arg(&data, vm)?;
                    charge_bytes(1, data.len() * 2, vm)?;
                    base64::engine::general_purpose::STANDARD
                        .decode(&data)
                        .map_err(|e| vm.new_value_error(format!("invalid base64: {e}")))
                },
            )
            .into(),
        ),
    ]
}

/// Integer helpers: `math.isqrt(n)`, `math.gcd(a, b)`.
pub(crate) fn math_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    use integer::{gcd, isqrt};
    vec![
        (
            "isqrt",
            vm.new_function("isqrt", |n: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                let value = int_arg(&n, vm)?;
                if value.sign() == num_bigint::Sign::Minus {
                    return Err(vm.new_value_error("isqrt() argument must be nonnegative"));
                }
                let limbs = value.bits() / 64 + 1;
                charge(limbs * limbs, 0, vm)?;
                Ok(value_to_py(&Value::Int(isqrt(&value)), vm))
            })
            .into(),
        ),
        (
            "gcd",
            vm.new_function(
                "gcd",
                |a: PyObjectRef, b: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let a = int_arg(&a, vm)?;
                    let b = int_arg(&b, vm)?;
                    let bits = a.bits().max(b.bits());
                    let limbs = bits / 64 + 1;
                    // Quadratic with a large constant (measured ~48 ns per
                    // limb² cycle at 6,000 bits): four cycles per limb²; and
                    // two per bit for the steps (a division and an allocation each),
                    // which dominates small operands (79 ns per cycle at 281
                    // bits without it).
                    charge(4 * limbs * limbs + 2 * bits, 0, vm)?;
                    Ok(value_to_py(&Value::Int(gcd(a, b)), vm))
                },
            )
            .into(),
        ),
        (
            "factorial",
            vm.new_function(
                "factorial",
                |n: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let n =
                        small_nonnegative(&n, "factorial() not defined for negative values", vm)?;
                    let mut product = num_bigint::BigInt::from(1u8);
                    for k in 2..=n {
                        // One limb-by-word product per step, charged before it
                        // runs; the bit cap ends a huge `n` long before its cost.
                        charge(product.bits() / 64 + 1, 0, vm)?;
                        product *= k;
                        check_int_bits(u128::from(product.bits()), vm)?;
                    }
                    Ok(value_to_py(&Value::Int(product), vm))
                },
            )
            .into(),
        ),
        (
            "comb",
            vm.new_function(
                "comb",
                |n: PyObjectRef, k: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let message = "n must be a non-negative integer";
                    let n = small_nonnegative(&n, message, vm)?;
                    let k = small_nonnegative(&k, "k must be a non-negative integer", vm)?;
                    if k > n {
                        return Ok(value_to_py(&Value::Int(0u8.into()), vm));
                    }
                    let k = k.min(n - k);
                    let mut result = num_bigint::BigInt::from(1u8);
                    for i in 0..k {
                        // A limb-by-word product and division per step.
                        charge(2 * (result.bits() / 64 + 1), 0, vm)?;
                        result = result * (n - i) / (i + 1);
                        check_int_bits(u128::from(result.bits()) + 64, vm)?;
                    }
                    Ok(value_to_py(&Value::Int(result), vm))
                },
            )
            .into(),
        ),
        (
            "perm",
            vm.new_function(
                "perm",
                |n: PyObjectRef, k: OptionalArg<PyObjectRef>, vm: &VirtualMachine| -> PyResult {
                    let n = small_nonnegative(&n, "n must be a non-negative integer", vm)?;
                    // `perm(n)` is `n!`.
                    let k = match k {
                        OptionalArg::Present(k) if !vm.is_none(&k) => {
                            small_nonnegative(&k, "k must be a non-negative integer", vm)?
                        }
                        _ => n,
                    };
                    if k > n {
                        return Ok(value_to_py(&Value::Int(0u8.into()), vm));
                    }
                    let mut result = num_bigint::BigInt::from(1u8);
                    for i in 0..k {
                        // One limb-by-word product per step, charged before it
                        // (like `factorial`).
                        charge(result.bits() / 64 + 1, 0, vm)?;
                        result *= n - i;
                        check_int_bits(u128::from(result.bits()), vm)?;
                    }
                    Ok(value_to_py(&Value::Int(result), vm))
                },
            )
            .into(),
        ),
    ]
}

/// A non-negative int argument that fits a `u64` (anything larger could
/// only produce a result over the integer cap).
fn small_nonnegative(obj: &PyObjectRef, negative: &str, vm: &VirtualMachine) -> PyResult<u64> {
    let value = int_arg(obj, vm)?;
    if value.sign() == num_bigint::Sign::Minus {
        return Err(vm.new_value_error(negative.to_owned()));
    }
    u64::try_from(&value).map_err(|_| {
        vm.new_overflow_error(format!(
            "integer results are limited to {} bits in actors",
            crate::meter::sizes::MAX_INT_BITS
        ))
    })
}

/// An `int` argument's value. Anything else is refused by its type before
/// it is looked at: converting it first walked a whole container, unpriced,
/// only to refuse it (`math.isqrt(list_of_300_ints)` ran at ~780 ns per
/// cycle, the metering fuzzer, #47).
pub fn int_arg(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<num_bigint::BigInt> {
    let Some(int) = obj.downcast_ref::<rustpython_vm::builtins::PyInt>() else {
        return Err(vm.new_type_error(format!("expected int, got '{}'", obj.class().name())));
    };
    Ok(crate::meter::sizes::from_py_bigint(int.as_bigint()))
}

/// Integer algorithms over `num_bigint` (two functions do not justify another crate).
pub mod integer {
    use num_bigint::BigInt;
    use num_traits::{Signed, Zero};

    /// `math.gcd`: Euclid's algorithm, non-negative.
    pub fn gcd(mut a: BigInt, mut b: BigInt) -> BigInt {
        a = a.abs();
        b = b.abs();
        while !b.is_zero() {
            let r = &a % &b;
            a = b;
            b = r;
        }
        a
    }

    /// `math.isqrt` of a non-negative `n`.
    pub fn isqrt(n: &BigInt) -> BigInt {
        n.sqrt()
    }
}

/// `json.dumps(value) -> str` (canonical: sorted keys, no whitespace, bytes
/// refused) and `json.loads(text) -> value` (ints stay exact; floats refused).
/// The layout `json.dumps(value, **options)` asks for: without options the
/// canonical form; with any of CPython's (`sort_keys`, `separators`,
/// `ensure_ascii`) CPython's defaults for the rest, so the text is what
/// CPython writes, `indent` included. The hooks (`default`, `cls`) are refused.
pub fn dumps_style(args: &mut FuncArgs, vm: &VirtualMachine) -> PyResult<json::Style> {
    if args.kwargs.is_empty() {
        return Ok(json::Style::canonical());
    }
    let mut style = json::Style::cpython();
    // With an indent CPython's item separator loses its space, unless
    // separators are given.
    let separators_given = args.kwargs.contains_key("separators");
    for (name, value) in std::mem::take(&mut args.kwargs) {
        match name.as_str().unwrap_or("") {
            "sort_keys" => style.sort_keys = value.try_to_bool(vm)?,
            // CPython: an int is that many spaces (none below 1), a str is
            // used as it is; `None` is the one-line layout. Indents of more
            // than 16 characters are refused (the text grows by the indent
            // times the depth for every item).
            "indent" => {
                style.indent = if vm.is_none(&value) {
                    None
                } else if let Some(text) = value.downcast_ref::<rustpython_vm::builtins::PyStr>() {
                    Some(text.to_str().unwrap_or_default().to_owned())
                } else {
                    let width = value.try_to_value::<i64>(vm)?;
                    Some(" ".repeat(width.clamp(0, 17) as usize))
                };
                if style.indent.as_ref().is_some_and(|indent| indent.len() > 16) {
                    return Err(vm.new_value_error(
                        "json.dumps() indents longer than 16 characters are not supported",
                    ));
                }
                if !separators_given {
                    style.item_separator = ",".into();
                }
            }
            "ensure_ascii" => style.ensure_ascii = value.try_to_bool(vm)?,
            "separators" => {
                let pair: Vec<String> = value
                    .try_to_value::<Vec<String>>(vm)
                    .ok()
                    .filter(|pair| pair.len() == 2 && pair.iter().all(|s| s.len() <= 8))
                    .ok_or_else(|| {
                        vm.new_type_error("separators must be two short strings, e.g. (',', ':')")
                    })?;
                style.item_separator = pair[0].clone();
                style.key_separator = pair[1].clone();
            }
            other => {
                return Err(vm.new_type_error(format!(
                    "json.dumps() option '{other}' is not supported (sort_keys, separators, ensure_ascii and indent are)"
                )))
            }
        }
    }
    Ok(style)
}

pub(crate) fn json_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
        (
            "dumps",
            vm.new_function(
                "dumps",
                |mut args: FuncArgs, vm: &VirtualMachine| -> PyResult<String> {
                    let style = dumps_style(&mut args, vm)?;
                    if args.args.len() != 1 {
                        return Err(vm.new_type_error("dumps() takes one value"));
                    }
                    // CPython writes members in the dict's order unless
                    // asked to sort them.
                    let value = if style.sort_keys {
                        py_to_value(&args.args[0], vm)?
                    } else {
                        crate::host_api::convert::py_to_value_in_order(&args.args[0], vm)?
                    };
                    crate::meter::sizes::charge_conversion(&value, 1, vm)?;
                    charge(json::int_cycles(&value), 0, vm)?;
                    // The text and bytes copied in, paid before encoding
                    // (which refuses bytes: `json.dumps` of 350 KB of bytes
                    // ran at ~3.9× ordinary code when only the output was
                    // charged, #47).
                    let copied = json::text_bytes(&value);
                    if copied > 0 {
                        charge_bytes(1, copied as usize, vm)?;
                    }
                    if let Some(indent) = &style.indent {
                        let extra = json::indent_bytes(&value, indent.len(), 0);
                        crate::meter::sizes::precheck_result_bytes(extra, vm)?;
                        charge_bytes(1, extra.min(u128::from(u64::MAX)) as usize, vm)?;
                    }
                    let mut out = String::new();
                    json::encode_with(&value, &style, &mut out)
                        .map_err(|e| vm.new_type_error(e))?;
                    charge_bytes(1, out.len(), vm)?;
                    Ok(out)
                },
            )
            .into(),
        ),
        (
            "loads",
            vm.new_function(
                "loads",
                |text: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let text = bytes_arg(&text, vm)?;
                    charge_bytes(1, text.len(), vm)?;
                    let text = String::from_utf8(text)
                        .map_err(|_| vm.new_value_error("json text must be UTF-8"))?;
                    let text = json::Prepared::new(text);
                    charge(text.int_cycles(), 0, vm)?;
                    let value = text
                        .decode()
                        .map_err(|e| vm.new_value_error(format!("invalid json: {e}")))?;
                    crate::meter::sizes::charge_conversion(&value, 1, vm)?;
                    Ok(value_to_py(&value, vm))
                },
            )
            .into(),
        ),
    ]
}

/// The canonical JSON codec (on `serde_json`, unit-tested there).
pub mod json;
