//! The deterministic helper modules actors may import instead of the
//! standard library: `hashing` (keccak256, sha256), `base64`, `math` (integer
//! helpers) and `json` (a canonical encoder/decoder over the value model).
//! Every function charges by input size before doing its work.

use base64::Engine as _;
use rustpython_vm::builtins::{PyBytes, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};
use sha2::Digest as _;
use timerhost_types::Value;

use crate::convert::{py_to_value, value_to_py};
use crate::costs;
use crate::exec::charge;
use crate::sizes::check_int_bits;

fn bytes_arg(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
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
/// (standard alphabet, padded, strict).
pub(crate) fn base64_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
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
                    let limbs = a.bits().max(b.bits()) / 64 + 1;
                    // Quadratic with a large constant (measured ~48 ns per
                    // limb² cycle at 6,000 bits): four cycles per limb².
                    charge(4 * limbs * limbs, 0, vm)?;
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
            crate::sizes::MAX_INT_BITS
        ))
    })
}

fn int_arg(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<num_bigint::BigInt> {
    match py_to_value(obj, vm)? {
        Value::Int(i) => Ok(i),
        _ => Err(vm.new_type_error("expected int")),
    }
}

/// Integer algorithms over `num_bigint` (two functions do not justify another crate).
mod integer {
    use num_bigint::BigInt;
    use num_traits::{Signed, Zero};

    pub(super) fn gcd(mut a: BigInt, mut b: BigInt) -> BigInt {
        a = a.abs();
        b = b.abs();
        while !b.is_zero() {
            let r = &a % &b;
            a = b;
            b = r;
        }
        a
    }

    pub(super) fn isqrt(n: &BigInt) -> BigInt {
        n.sqrt()
    }
}

/// `json.dumps(value) -> str` (canonical: sorted keys, no whitespace, bytes
/// refused) and `json.loads(text) -> value` (ints stay exact; floats refused).
/// The layout `json.dumps(value, **options)` asks for: without options the
/// canonical form; with any of CPython's (`sort_keys`, `separators`,
/// `ensure_ascii`) CPython's defaults for the rest, so the text is what
/// CPython writes. `indent` and the hooks (`default`, `cls`) are refused.
fn dumps_style(args: &mut FuncArgs, vm: &VirtualMachine) -> PyResult<json::Style> {
    if args.kwargs.is_empty() {
        return Ok(json::Style::canonical());
    }
    let mut style = json::Style::cpython();
    for (name, value) in std::mem::take(&mut args.kwargs) {
        match name.as_str().unwrap_or("") {
            "sort_keys" => style.sort_keys = value.try_to_bool(vm)?,
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
                    "json.dumps() option '{other}' is not supported (sort_keys, separators and ensure_ascii are)"
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
                    let value = py_to_value(&args.args[0], vm)?;
                    crate::sizes::charge_conversion(&value, 1, vm)?;
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
                    let value = json::decode(&text)
                        .map_err(|e| vm.new_value_error(format!("invalid json: {e}")))?;
                    crate::sizes::charge_conversion(&value, 1, vm)?;
                    Ok(value_to_py(&value, vm))
                },
            )
            .into(),
        ),
    ]
}

/// The canonical JSON codec (pure Rust, unit-tested below).
pub mod json {
    use num_bigint::BigInt;
    use timerhost_types::Value;

    /// How [`encode_with`] lays text out.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Style {
        /// Between array items and object members.
        pub item_separator: String,
        /// Between an object key and its value.
        pub key_separator: String,
        /// Object keys sorted by UTF-8 bytes (= code points), else in
        /// insertion order.
        pub sort_keys: bool,
        /// Non-ASCII characters as `\uXXXX` escapes.
        pub ensure_ascii: bool,
        /// `\b` and `\f` as CPython writes them (the canonical form uses
        /// `\u0008`, `\u000c`).
        pub short_escapes: bool,
    }

    impl Style {
        /// The VM's canonical form: keys sorted, no whitespace, UTF-8 as is.
        pub fn canonical() -> Style {
            Style {
                item_separator: ",".into(),
                key_separator: ":".into(),
                sort_keys: true,
                ensure_ascii: false,
                short_escapes: false,
            }
        }

        /// CPython's `json.dumps` defaults.
        pub fn cpython() -> Style {
            Style {
                item_separator: ", ".into(),
                key_separator: ": ".into(),
                sort_keys: false,
                ensure_ascii: true,
                short_escapes: true,
            }
        }
    }

    /// Encodes canonically: object keys sorted by UTF-8 bytes, no whitespace,
    /// tuples as arrays, only `str` dict keys, no bytes.
    pub fn encode(value: &Value, out: &mut String) -> Result<(), String> {
        encode_with(value, &Style::canonical(), out)
    }

    /// Encodes in `style` (tuples as arrays, only `str` dict keys, no bytes).
    pub fn encode_with(value: &Value, style: &Style, out: &mut String) -> Result<(), String> {
        match value {
            Value::None => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => out.push_str(&i.to_string()),
            Value::Str(s) => encode_str(s, style, out),
            Value::Bytes(_) => {
                return Err("bytes are not JSON serializable (base64-encode them)".into())
            }
            Value::List(items) | Value::Tuple(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push_str(&style.item_separator);
                    }
                    encode_with(item, style, out)?;
                }
                out.push(']');
            }
            Value::Dict(entries) => {
                let mut keyed = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    let Value::Str(key) = key else {
                        return Err("JSON object keys must be str".into());
                    };
                    keyed.push((key, value));
                }
                if style.sort_keys {
                    keyed.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                }
                out.push('{');
                for (index, (key, value)) in keyed.into_iter().enumerate() {
                    if index > 0 {
                        out.push_str(&style.item_separator);
                    }
                    encode_str(key, style, out);
                    out.push_str(&style.key_separator);
                    encode_with(value, style, out)?;
                }
                out.push('}');
            }
        }
        Ok(())
    }

    fn encode_str(s: &str, style: &Style, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' if style.short_escapes => out.push_str("\\b"),
                '\u{c}' if style.short_escapes => out.push_str("\\f"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c if style.ensure_ascii && !c.is_ascii() => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    /// Decodes JSON text into a value (objects → dict, arrays → list).
    pub fn decode(text: &str) -> Result<Value, String> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
        };
        let value = parser.value()?;
        parser.whitespace();
        if parser.at != parser.bytes.len() {
            return Err(format!("trailing characters at {}", parser.at));
        }
        Ok(value)
    }

    struct Parser<'t> {
        bytes: &'t [u8],
        at: usize,
        depth: usize,
    }

    impl Parser<'_> {
        fn whitespace(&mut self) {
            while matches!(self.bytes.get(self.at), Some(b' ' | b'\n' | b'\r' | b'\t')) {
                self.at += 1;
            }
        }

        fn expect(&mut self, literal: &str) -> Result<(), String> {
            if self.bytes[self.at..].starts_with(literal.as_bytes()) {
                self.at += literal.len();
                Ok(())
            } else {
                Err(format!("expected {literal} at {}", self.at))
            }
        }

        fn value(&mut self) -> Result<Value, String> {
            self.whitespace();
            match self.bytes.get(self.at) {
                Some(b'n') => self.expect("null").map(|_| Value::None),
                Some(b't') => self.expect("true").map(|_| Value::Bool(true)),
                Some(b'f') => self.expect("false").map(|_| Value::Bool(false)),
                Some(b'"') => self.string().map(Value::Str),
                Some(b'[') => self.nested(|p| {
                    let mut items = Vec::new();
                    p.at += 1;
                    p.whitespace();
                    if p.bytes.get(p.at) == Some(&b']') {
                        p.at += 1;
                        return Ok(Value::List(items));
                    }
                    loop {
                        items.push(p.value()?);
                        p.whitespace();
                        match p.bytes.get(p.at) {
                            Some(b',') => p.at += 1,
                            Some(b']') => {
                                p.at += 1;
                                return Ok(Value::List(items));
                            }
                            _ => return Err(format!("expected , or ] at {}", p.at)),
                        }
                    }
                }),
                Some(b'{') => self.nested(|p| {
                    let mut entries = Vec::new();
                    p.at += 1;
                    p.whitespace();
                    if p.bytes.get(p.at) == Some(&b'}') {
                        p.at += 1;
                        return Ok(Value::Dict(entries));
                    }
                    loop {
                        p.whitespace();
                        let key = p.string()?;
                        p.whitespace();
                        p.expect(":")?;
                        let value = p.value()?;
                        entries.push((Value::Str(key), value));
                        p.whitespace();
                        match p.bytes.get(p.at) {
                            Some(b',') => p.at += 1,
                            Some(b'}') => {
                                p.at += 1;
                                return Value::dict_from(entries)
                                    .ok_or_else(|| "bad key".to_string());
                            }
                            _ => return Err(format!("expected , or }} at {}", p.at)),
                        }
                    }
                }),
                Some(b'-' | b'0'..=b'9') => self.number(),
                _ => Err(format!("unexpected character at {}", self.at)),
            }
        }

        fn nested(
            &mut self,
            f: impl FnOnce(&mut Self) -> Result<Value, String>,
        ) -> Result<Value, String> {
            self.depth += 1;
            if self.depth > timerhost_types::value::MAX_DEPTH {
                return Err("nested too deeply".into());
            }
            let value = f(self);
            self.depth -= 1;
            value
        }

        fn number(&mut self) -> Result<Value, String> {
            let start = self.at;
            if self.bytes.get(self.at) == Some(&b'-') {
                self.at += 1;
            }
            while matches!(self.bytes.get(self.at), Some(b'0'..=b'9')) {
                self.at += 1;
            }
            if matches!(self.bytes.get(self.at), Some(b'.' | b'e' | b'E')) {
                return Err(format!("floats are not supported (at {start})"));
            }
            let digits =
                std::str::from_utf8(&self.bytes[start..self.at]).map_err(|e| e.to_string())?;
            if digits.len() > 4300 {
                return Err("integer has more than 4300 digits".into());
            }
            digits
                .parse::<BigInt>()
                .map(Value::Int)
                .map_err(|_| format!("bad number at {start}"))
        }

        fn string(&mut self) -> Result<String, String> {
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(format!("expected string at {}", self.at));
            }
            self.at += 1;
            let mut out = String::new();
            loop {
                let rest =
                    std::str::from_utf8(&self.bytes[self.at..]).map_err(|e| e.to_string())?;
                let mut chars = rest.char_indices();
                let Some((_, c)) = chars.next() else {
                    return Err("unterminated string".into());
                };
                self.at += c.len_utf8();
                match c {
                    '"' => return Ok(out),
                    '\\' => {
                        let escape = *self.bytes.get(self.at).ok_or("unterminated escape")?;
                        self.at += 1;
                        match escape {
                            b'"' => out.push('"'),
                            b'\\' => out.push('\\'),
                            b'/' => out.push('/'),
                            b'n' => out.push('\n'),
                            b'r' => out.push('\r'),
                            b't' => out.push('\t'),
                            b'b' => out.push('\u{8}'),
                            b'f' => out.push('\u{c}'),
                            b'u' => {
                                let hex = self
                                    .bytes
                                    .get(self.at..self.at + 4)
                                    .ok_or("short \\u escape")?;
                                let code = u32::from_str_radix(
                                    std::str::from_utf8(hex).map_err(|e| e.to_string())?,
                                    16,
                                )
                                .map_err(|e| e.to_string())?;
                                self.at += 4;
                                out.push(
                                    char::from_u32(code)
                                        .ok_or("surrogate escapes are not supported")?,
                                );
                            }
                            other => return Err(format!("bad escape \\{}", other as char)),
                        }
                    }
                    c if (c as u32) < 0x20 => return Err("control character in string".into()),
                    c => out.push(c),
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn canonical_round_trip() {
            let value = decode(r#"{"b": [1, -2, "x\n"], "a": null, "c": {"z": true}}"#).unwrap();
            let mut out = String::new();
            encode(&value, &mut out).unwrap();
            assert_eq!(out, r#"{"a":null,"b":[1,-2,"x\n"],"c":{"z":true}}"#);
            assert_eq!(decode(&out).unwrap(), value);
        }

        #[test]
        fn refuses_floats_bytes_and_garbage() {
            assert!(decode("1.5").is_err());
            assert!(decode("[1,]").is_err());
            assert!(decode("{} x").is_err());
            assert!(encode(&Value::Bytes(vec![1]), &mut String::new()).is_err());
            let big = "9".repeat(100);
            assert_eq!(decode(&big).unwrap(), Value::Int(big.parse().unwrap()));
        }
    }
}
