//! [`Value`]: the data actors exchange with the chain — handler arguments,
//! return values, storage values and event data — and its canonical encoding.
//!
//! The value model is Python's JSON-like core: `None`, `bool`, arbitrary
//! precision `int`, `str`, `bytes`, `list`, `tuple` and `dict`. The encoding is
//! canonical (one byte string per value) so that values can be hashed into the
//! state root:
//!
//! | tag | value | body |
//! |----|-------|------|
//! | 0 | `None` | — |
//! | 1 / 2 | `False` / `True` | — |
//! | 3 / 4 | int ≥ 0 / int < 0 | u32 LE length ‖ big-endian magnitude, no leading zero byte (0 has length 0) |
//! | 5 | `str` | u32 LE length ‖ UTF-8 |
//! | 6 | `bytes` | u32 LE length ‖ bytes |
//! | 7 / 8 | `list` / `tuple` | u32 LE count ‖ items |
//! | 9 | `dict` | u32 LE count ‖ (key ‖ value)*, keys strictly ascending by their encoding |
//!
//! Dict keys must be hashable scalars or tuples of them (no list or dict).
//! Decoding enforces every rule above (minimal ints, sorted unique keys, nesting
//! depth ≤ [`MAX_DEPTH`]) so a decoded value re-encodes to the same bytes.

use borsh::io::{Error as IoError, ErrorKind as IoErrorKind, Read, Write};
use borsh::{BorshDeserialize, BorshSerialize};
use num_bigint::{BigInt, Sign};

/// Deepest nesting of lists/tuples/dicts accepted when decoding.
pub const MAX_DEPTH: usize = 64;

/// A canonical actor value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// Python `None`.
    None,
    /// Python `bool`.
    Bool(bool),
    /// Python `int` (arbitrary precision).
    Int(BigInt),
    /// Python `str`.
    Str(String),
    /// Python `bytes`.
    Bytes(Vec<u8>),
    /// Python `list`.
    List(Vec<Value>),
    /// Python `tuple`.
    Tuple(Vec<Value>),
    /// Python `dict`; entries kept sorted by the canonical encoding of the key.
    Dict(Vec<(Value, Value)>),
}

impl Value {
    /// Builds a dict from entries in any order, sorting them canonically. Later
    /// duplicates replace earlier ones, as in Python. Returns `None` if a key is
    /// not hashable (a list or dict).
    pub fn dict_from(entries: impl IntoIterator<Item = (Value, Value)>) -> Option<Value> {
        // Sorted once by encoded key (stable, so equal keys keep their
        // order) and the last of each run of duplicates kept: n·log n. (A
        // search per key made converting an 81,800-key dict take ~13 s.)
        let mut keyed: Vec<(Vec<u8>, Value, Value)> = Vec::new();
        for (k, v) in entries {
            if !k.is_hashable() {
                return None;
            }
            keyed.push((k.to_bytes(), k, v));
        }
        keyed.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Value, Value)> = Vec::with_capacity(keyed.len());
        let mut last: Option<Vec<u8>> = None;
        for (encoded, k, v) in keyed {
            if last.as_ref() == Some(&encoded) {
                if let Some(slot) = out.last_mut() {
                    slot.1 = v;
                }
                continue;
            }
            last = Some(encoded);
            out.push((k, v));
        }
        Some(Value::Dict(out))
    }

    /// A dict with `str` keys named in code (the protocol's events), the same
    /// value [`Value::dict_from`] builds from them: sorted by the canonical
    /// encoding of the key — its length as little-endian u32 bytes, then its
    /// bytes — without encoding each key to compare it (#46: a fire's
    /// `TimerFired` has 21 fields, and encoding them for the sort was a
    /// tenth of a fire). Later duplicates replace earlier ones.
    pub fn dict_of_names(fields: Vec<(&str, Value)>) -> Value {
        fn order(name: &str) -> ([u8; 4], &[u8]) {
            ((name.len() as u32).to_le_bytes(), name.as_bytes())
        }
        let mut fields = fields;
        // Callers on hot paths write their fields in order: a check of
        // neighbours instead of a sort. Stable: of equal names the last
        // stays last, and is kept below.
        if !fields.is_sorted_by(|a, b| order(a.0) <= order(b.0)) {
            fields.sort_by(|a, b| order(a.0).cmp(&order(b.0)));
        }
        let mut out: Vec<(Value, Value)> = Vec::with_capacity(fields.len());
        let mut last: Option<&str> = None;
        for (name, value) in fields {
            if last == Some(name) {
                if let Some(slot) = out.last_mut() {
                    slot.1 = value;
                }
                continue;
            }
            last = Some(name);
            out.push((Value::str(name), value));
        }
        Value::Dict(out)
    }

    /// Convenience: a `str` value.
    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(s.into())
    }

    /// Convenience: an `int` value.
    pub fn int(i: impl Into<BigInt>) -> Value {
        Value::Int(i.into())
    }

    /// The value as a `u128` if it is an `int` in `0..2^128`.
    pub fn as_u128(&self) -> Option<u128> {
        match self {
            Value::Int(i) => u128::try_from(i).ok(),
            _ => None,
        }
    }

    /// Can this value be a dict key?
    pub fn is_hashable(&self) -> bool {
        match self {
            Value::List(_) | Value::Dict(_) => false,
            Value::Tuple(items) => items.iter().all(Value::is_hashable),
            _ => true,
        }
    }

    /// Canonical bytes of this value.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out)
            .expect("writing to a Vec<u8> cannot fail");
        out
    }

    /// Decodes canonical bytes, rejecting trailing bytes.
    pub fn from_bytes(bytes: &[u8]) -> crate::Result<Value> {
        borsh::from_slice::<Value>(bytes).map_err(|e| crate::Error::Malformed {
            what: "value",
            reason: e.to_string(),
        })
    }

    /// Looks up a `str` key in a dict value.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Writes the canonical encoding to `out` as it goes (no buffer of its
    /// own: a fire's event is serialised twice, for its receipt's hash and
    /// for the store, and a buffer per value was a third of that).
    fn write_to<W: Write>(&self, out: &mut W) -> Result<(), IoError> {
        fn len<W: Write>(out: &mut W, n: usize) -> Result<(), IoError> {
            out.write_all(&(n as u32).to_le_bytes())
        }
        match self {
            Value::None => out.write_all(&[0]),
            Value::Bool(false) => out.write_all(&[1]),
            Value::Bool(true) => out.write_all(&[2]),
            Value::Int(i) => {
                out.write_all(&[if i.sign() == Sign::Minus { 4 } else { 3 }])?;
                // Ints that fit in 128 bits (nearly all) without the
                // magnitude's own allocation.
                if let Ok(small) = u128::try_from(i.magnitude()) {
                    let bytes = small.to_be_bytes();
                    let magnitude = &bytes[small.leading_zeros() as usize / 8..];
                    len(out, magnitude.len())?;
                    return out.write_all(magnitude);
                }
                let (_, mag) = i.to_bytes_be();
                len(out, mag.len())?;
                out.write_all(&mag)
            }
            Value::Str(s) => {
                out.write_all(&[5])?;
                len(out, s.len())?;
                out.write_all(s.as_bytes())
            }
            Value::Bytes(b) => {
                out.write_all(&[6])?;
                len(out, b.len())?;
                out.write_all(b)
            }
            Value::List(items) | Value::Tuple(items) => {
                out.write_all(&[if matches!(self, Value::List(_)) { 7 } else { 8 }])?;
                len(out, items.len())?;
                for item in items {
                    item.write_to(out)?;
                }
                Ok(())
            }
            Value::Dict(entries) => {
                out.write_all(&[9])?;
                len(out, entries.len())?;
                for (k, v) in entries {
                    k.write_to(out)?;
                    v.write_to(out)?;
                }
                Ok(())
            }
        }
    }

    fn read_from<R: Read>(reader: &mut R, depth: usize) -> Result<Value, IoError> {
        let invalid = |msg: String| IoError::new(IoErrorKind::InvalidData, msg);
        let tag = u8::deserialize_reader(reader)?;
        let read_len = |reader: &mut R| -> Result<usize, IoError> {
            Ok(u32::deserialize_reader(reader)? as usize)
        };
        // Reads exactly n bytes without trusting n for a huge up-front allocation.
        let read_bytes = |reader: &mut R, n: usize| -> Result<Vec<u8>, IoError> {
            let mut buf = Vec::with_capacity(n.min(4096));
            let got = reader.take(n as u64).read_to_end(&mut buf)?;
            if got != n {
                return Err(IoError::new(IoErrorKind::UnexpectedEof, "value truncated"));
            }
            Ok(buf)
        };
        let nested_depth = || {
            if depth >= MAX_DEPTH {
                Err(invalid(format!("value nested deeper than {MAX_DEPTH}")))
            } else {
                Ok(depth + 1)
            }
        };
        Ok(match tag {
            0 => Value::None,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 | 4 => {
                let n = read_len(reader)?;
                let mag = read_bytes(reader, n)?;
                if mag.first() == Some(&0) {
                    return Err(invalid("int has a leading zero byte".into()));
                }
                if tag == 4 && mag.is_empty() {
                    return Err(invalid("negative zero int".into()));
                }
                let sign = if tag == 4 { Sign::Minus } else { Sign::Plus };
                Value::Int(BigInt::from_bytes_be(sign, &mag))
            }
            5 => {
                let n = read_len(reader)?;
                let bytes = read_bytes(reader, n)?;
                Value::Str(
                    String::from_utf8(bytes).map_err(|_| invalid("str is not UTF-8".into()))?,
                )
            }
            6 => {
                let n = read_len(reader)?;
                Value::Bytes(read_bytes(reader, n)?)
            }
            7 | 8 => {
                let d = nested_depth()?;
                let n = read_len(reader)?;
                let mut items = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    items.push(Value::read_from(reader, d)?);
                }
                if tag == 7 {
                    Value::List(items)
                } else {
                    Value::Tuple(items)
                }
            }
            9 => {
                let d = nested_depth()?;
                let n = read_len(reader)?;
                let mut entries = Vec::with_capacity(n.min(1024));
                let mut prev: Option<Vec<u8>> = None;
                for _ in 0..n {
                    let k = Value::read_from(reader, d)?;
                    if !k.is_hashable() {
                        return Err(invalid("dict key is a list or dict".into()));
                    }
                    let enc = k.to_bytes();
                    if prev.as_ref().is_some_and(|p| *p >= enc) {
                        return Err(invalid(
                            "dict keys not in strictly ascending canonical order".into(),
                        ));
                    }
                    prev = Some(enc);
                    let v = Value::read_from(reader, d)?;
                    entries.push((k, v));
                }
                Value::Dict(entries)
            }
            other => return Err(invalid(format!("unknown value tag {other}"))),
        })
    }
}

impl BorshSerialize for Value {
    fn serialize<W: Write>(&self, writer: &mut W) -> Result<(), IoError> {
        self.write_to(writer)
    }
}

impl BorshDeserialize for Value {
    fn deserialize_reader<R: Read>(reader: &mut R) -> Result<Self, IoError> {
        Value::read_from(reader, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::None),
            any::<bool>().prop_map(Value::Bool),
            any::<i128>().prop_map(|i| Value::Int(i.into())),
            ".{0,8}".prop_map(Value::Str),
            proptest::collection::vec(any::<u8>(), 0..8).prop_map(Value::Bytes),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::List),
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Tuple),
                proptest::collection::vec((any::<i64>(), inner), 0..6).prop_map(|es| {
                    Value::dict_from(es.into_iter().map(|(k, v)| (Value::int(k), v))).unwrap()
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn round_trip(v in arb_value()) {
            let bytes = v.to_bytes();
            prop_assert_eq!(Value::from_bytes(&bytes).unwrap(), v);
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(v) = Value::from_bytes(&bytes) {
                // Canonical: whatever decodes re-encodes to the same bytes.
                prop_assert_eq!(v.to_bytes(), bytes);
            }
        }
    }

    #[test]
    fn ints_encode_as_sign_and_minimal_big_endian_magnitude_at_every_width() {
        let two = BigInt::from(2);
        let one = BigInt::from(1);
        let mut ints = vec![BigInt::from(0), BigInt::from(1), BigInt::from(-1)];
        for bits in [7u32, 8, 63, 64, 127, 128, 129, 200] {
            let p = two.pow(bits);
            ints.extend([&p - &one, p.clone(), &p + &one, -p.clone(), -(&p - &one)]);
        }
        for i in ints {
            let (sign, magnitude) = i.to_bytes_be();
            let magnitude: &[u8] = if i.sign() == Sign::NoSign {
                &[]
            } else {
                &magnitude
            };
            let mut expected = vec![if sign == Sign::Minus { 4 } else { 3 }];
            expected.extend_from_slice(&(magnitude.len() as u32).to_le_bytes());
            expected.extend_from_slice(magnitude);
            let value = Value::Int(i.clone());
            assert_eq!(value.to_bytes(), expected, "{i}");
            assert_eq!(Value::from_bytes(&expected).unwrap(), value, "{i}");
        }
    }

    #[test]
    fn a_dict_of_names_is_the_dict_built_from_its_fields() {
        let long = "k".repeat(256);
        let names = [
            "timer_id",
            "b",
            "a",
            "ab",
            "deliver_id",
            "a",
            long.as_str(),
            "zz",
            "tip",
            "b",
        ];
        let fields = || {
            names
                .iter()
                .enumerate()
                .map(|(i, n)| (*n, Value::int(i as u64)))
                .collect::<Vec<_>>()
        };
        let general =
            Value::dict_from(fields().into_iter().map(|(k, v)| (Value::str(k), v))).unwrap();
        let named = Value::dict_of_names(fields());
        assert_eq!(named, general);
        assert_eq!(named.to_bytes(), general.to_bytes());
        // A 256-byte name sorts first (its length's low byte is 0), and a
        // duplicate keeps its last value.
        let Value::Dict(entries) = &named else {
            panic!()
        };
        assert_eq!(entries[0].0, Value::str(long.as_str()));
        assert_eq!(named.get("a"), Some(&Value::int(5u64)));
        assert_eq!(named.get("b"), Some(&Value::int(9u64)));
        // Fields given already in order (the path that skips the sort),
        // duplicates beside each other, build the same dict.
        let mut in_order = fields();
        in_order.sort_by_key(|(name, _)| ((name.len() as u32).to_le_bytes(), name.as_bytes()));
        assert_eq!(Value::dict_of_names(in_order), general);
    }

    #[test]
    fn dict_is_order_independent() {
        let a = Value::dict_from([
            (Value::str("b"), Value::int(2)),
            (Value::str("a"), Value::int(1)),
        ])
        .unwrap();
        let b = Value::dict_from([
            (Value::str("a"), Value::int(1)),
            (Value::str("b"), Value::int(2)),
        ])
        .unwrap();
        assert_eq!(a.to_bytes(), b.to_bytes());
        assert_eq!(a.get("a"), Some(&Value::int(1)));
        assert!(Value::dict_from([(Value::List(vec![]), Value::None)]).is_none());
    }

    #[test]
    fn later_duplicates_replace_earlier_ones_in_any_position() {
        let d = Value::dict_from([
            (Value::str("a"), Value::int(1)),
            (Value::str("b"), Value::int(2)),
            (Value::str("a"), Value::int(3)),
            (Value::str("a"), Value::int(4)),
            (Value::str("b"), Value::int(5)),
        ])
        .unwrap();
        assert_eq!(
            d,
            Value::Dict(vec![
                (Value::str("a"), Value::int(4)),
                (Value::str("b"), Value::int(5)),
            ])
        );
        // Many keys: one sort, not a search per key.
        let many =
            Value::dict_from((0..50_000).rev().map(|i| (Value::int(i), Value::None))).unwrap();
        let Value::Dict(entries) = many else { panic!() };
        assert_eq!(entries.len(), 50_000);
    }

    #[test]
    fn rejects_non_canonical_forms() {
        // int 1 with a leading zero byte
        assert!(Value::from_bytes(&[3, 2, 0, 0, 0, 0, 1]).is_err());
        // negative zero
        assert!(Value::from_bytes(&[4, 0, 0, 0, 0]).is_err());
        // dict with descending keys: {2: None, 1: None}
        let two = Value::int(2).to_bytes();
        let one = Value::int(1).to_bytes();
        let mut bad = vec![9, 2, 0, 0, 0];
        bad.extend(&two);
        bad.push(0);
        bad.extend(&one);
        bad.push(0);
        assert!(Value::from_bytes(&bad)
            .unwrap_err()
            .to_string()
            .contains("ascending"));
        // trailing byte
        assert!(Value::from_bytes(&[0, 0]).is_err());
        // huge declared length does not allocate or panic
        assert!(Value::from_bytes(&[6, 0xff, 0xff, 0xff, 0xff, 1, 2]).is_err());
    }

    #[test]
    fn rejects_excessive_nesting() {
        let mut bytes = Vec::new();
        for _ in 0..(MAX_DEPTH + 2) {
            bytes.extend([7, 1, 0, 0, 0]);
        }
        bytes.push(0);
        assert!(Value::from_bytes(&bytes)
            .unwrap_err()
            .to_string()
            .contains("nested deeper"));
    }

    #[test]
    fn big_ints_round_trip() {
        let big: BigInt = BigInt::from(10).pow(40) * -1;
        let v = Value::Int(big);
        assert_eq!(Value::from_bytes(&v.to_bytes()).unwrap(), v);
        assert_eq!(Value::int(0).to_bytes(), vec![3, 0, 0, 0, 0]);
    }
}
