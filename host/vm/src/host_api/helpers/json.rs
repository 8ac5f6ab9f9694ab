//! The actors' `json` codec over the value model, on `serde_json` (issue
//! #29: the hand-written decoder this replaces re-validated the rest of the
//! text for every string character and looked each object key up in a list
//! of the earlier ones, 4.6–13.7 s for 900 KB documents).
//!
//! `serde_json` parses and validates the text, decodes strings and escapes
//! and writes the output; this module keeps the VM's rules on top of it:
//! canonical output byte for byte (keys sorted by UTF-8 bytes, no
//! whitespace, `\u0008`/`\u000c`), CPython's layout on request, ints exact
//! (never through `f64`), floats refused, nesting ≤ [`MAX_DEPTH`].
//!
//! Ints: without its `arbitrary_precision` feature `serde_json` hands an
//! integer over exactly only within `i64`/`u64` and refuses one beyond `f64`'s
//! range ("number out of range"). That feature is not an option: features
//! unify across the cargo build, and with it every crate of the node would see
//! numbers inside untagged enums and flattened structs turn into maps (a float
//! there no longer deserializes), and an object `{"$serde_json::private::
//! Number": "12"}` would decode as the number 12. So before parsing,
//! [`inexact_numbers`] walks the text once (a linear scan that only has to
//! know where strings and number literals are) and takes out, in document
//! order, every number literal `serde_json` would not hand over exactly: an
//! integer literal beyond `i64`/`u64` (or `-0`) is overwritten in place by
//! `-0` and spaces (same length, so error positions stay right), which
//! `serde_json` reports as the float `-0.0`; a float literal is left as it
//! is. Each float the parser then reports is the next of those literals, in
//! order: an integer's digits become an exact `BigInt`, a real float is
//! refused.

use std::fmt;
use std::io;

use num_bigint::BigInt;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};
use serde_json::value::RawValue;
use timerhost_types::value::MAX_DEPTH;
use timerhost_types::Value;

/// The most characters an integer literal may have: CPython's default limit
/// on `int` conversions (which does not count the sign; this one does, as
/// the hand-written decoder did).
const MAX_INT_LITERAL: usize = 4300;

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
    /// CPython's `indent=`: every array item and object member on a line of
    /// its own, indented by this string once per level.
    pub indent: Option<String>,
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
            indent: None,
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
            indent: None,
        }
    }
}

/// Encodes canonically: object keys sorted by UTF-8 bytes, no whitespace,
/// tuples as arrays, only `str` dict keys, no bytes.
pub fn encode(value: &Value, out: &mut String) -> Result<(), String> {
    encode_with(value, &Style::canonical(), out)
}

/// Bytes an indent adds to the encoding of `value` at nesting `level`: a
/// line break and `level` indents per item (what `json.dumps` pre-checks
/// before it encodes).
pub fn indent_bytes(value: &Value, indent: usize, level: u128) -> u128 {
    let line = 1 + level * indent as u128;
    match value {
        Value::List(items) | Value::Tuple(items) => {
            let inner: u128 = items
                .iter()
                .map(|item| line + indent as u128 + indent_bytes(item, indent, level + 1))
                .sum();
            inner + line
        }
        Value::Dict(entries) => {
            let inner: u128 = entries
                .iter()
                .map(|(_, item)| line + indent as u128 + indent_bytes(item, indent, level + 1))
                .sum();
            inner + line
        }
        _ => 0,
    }
}

/// Encodes in `style` (tuples as arrays, only `str` dict keys, no bytes),
/// appending to `out`; on an error `out` is left as it was.
pub fn encode_with(value: &Value, style: &Style, out: &mut String) -> Result<(), String> {
    let mut text = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(
        &mut text,
        Layout {
            style,
            level: 0,
            has_value: false,
        },
    );
    Encode {
        value,
        sort_keys: style.sort_keys,
    }
    .serialize(&mut serializer)
    .map_err(|e| e.to_string())?;
    out.push_str(std::str::from_utf8(&text).map_err(|e| e.to_string())?);
    Ok(())
}

/// A value to serialize, with the key order asked for.
struct Encode<'v> {
    value: &'v Value,
    sort_keys: bool,
}

impl Encode<'_> {
    fn of<'w>(&self, value: &'w Value) -> Encode<'w> {
        Encode {
            value,
            sort_keys: self.sort_keys,
        }
    }
}

impl Serialize for Encode<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::None => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(i) => match i64::try_from(i) {
                Ok(small) => serializer.serialize_i64(small),
                // Beyond i64: the decimal digits, written as they are.
                Err(_) => RawValue::from_string(i.to_string())
                    .map_err(ser::Error::custom)?
                    .serialize(serializer),
            },
            Value::Str(s) => serializer.serialize_str(s),
            Value::Bytes(_) => Err(ser::Error::custom(
                "bytes are not JSON serializable (base64-encode them)",
            )),
            Value::List(items) | Value::Tuple(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&self.of(item))?;
                }
                seq.end()
            }
            Value::Dict(entries) => {
                let mut keyed = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    let Value::Str(key) = key else {
                        return Err(ser::Error::custom("JSON object keys must be str"));
                    };
                    keyed.push((key, value));
                }
                if self.sort_keys {
                    keyed.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                }
                let mut map = serializer.serialize_map(Some(keyed.len()))?;
                for (key, value) in keyed {
                    map.serialize_entry(key, &self.of(value))?;
                }
                map.end()
            }
        }
    }
}

/// `serde_json`'s compact layout with a [`Style`]'s separators and escapes,
/// and CPython's line breaks when it has an indent.
struct Layout<'s> {
    style: &'s Style,
    /// Nesting depth (for the indent).
    level: usize,
    /// Has the innermost open array or object written an item?
    has_value: bool,
}

impl Layout<'_> {
    fn new_line<W: ?Sized + io::Write>(&self, writer: &mut W) -> io::Result<()> {
        if let Some(indent) = &self.style.indent {
            writer.write_all(b"\n")?;
            for _ in 0..self.level {
                writer.write_all(indent.as_bytes())?;
            }
        }
        Ok(())
    }

    fn open<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            self.new_line(writer)?;
        }
        self.has_value = true;
        writer.write_all(bracket)
    }
}

impl Formatter for Layout<'_> {
    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if !first {
            writer.write_all(self.style.item_separator.as_bytes())?;
        }
        self.new_line(writer)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.begin_array_value(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(self.style.key_separator.as_bytes())
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        match escape {
            CharEscape::Backspace if !self.style.short_escapes => writer.write_all(b"\\u0008"),
            CharEscape::FormFeed if !self.style.short_escapes => writer.write_all(b"\\u000c"),
            escape => CompactFormatter.write_char_escape(writer, escape),
        }
    }

    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        if !self.style.ensure_ascii {
            return writer.write_all(fragment.as_bytes());
        }
        let mut rest = fragment;
        while let Some(at) = rest.find(|c: char| !c.is_ascii()) {
            writer.write_all(&rest.as_bytes()[..at])?;
            let c = rest[at..].chars().next().unwrap_or_default();
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            rest = &rest[at + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }
}

/// Decodes JSON text into a value (objects → dict, arrays → list).
pub fn decode(text: &str) -> Result<Value, String> {
    Prepared::new(text.to_owned()).decode()
}

/// Text ready to decode: the integer literals `serde_json` cannot hand over
/// exactly are taken out (see the module docs), so what converting them will
/// cost is known before it is done ([`Prepared::int_cycles`]).
pub struct Prepared {
    text: Vec<u8>,
    numbers: Vec<Inexact>,
}

impl Prepared {
    /// One linear pass over `text`, which is rewritten in place.
    pub fn new(text: String) -> Prepared {
        let mut text = text.into_bytes();
        let numbers = inexact_numbers(&mut text);
        Prepared { text, numbers }
    }

    /// What parsing the long integer literals costs ([`decimal_cycles`] of
    /// each; a literal longer than the 4,300-character limit is refused
    /// unparsed).
    pub fn int_cycles(&self) -> u64 {
        self.numbers
            .iter()
            .map(|number| match number {
                Inexact::Int(literal) if literal.len() <= MAX_INT_LITERAL => {
                    decimal_cycles(literal.len() as u64)
                }
                _ => 0,
            })
            .fold(0, u64::saturating_add)
    }

    /// Parses the text into a value.
    pub fn decode(self) -> Result<Value, String> {
        // Only ASCII digits were overwritten, with ASCII: still UTF-8.
        let text = String::from_utf8(self.text).map_err(|e| e.to_string())?;
        let mut numbers = self.numbers.into_iter();
        let mut parser = serde_json::Deserializer::from_str(&text);
        let value = Decode {
            numbers: &mut numbers,
            depth: 0,
        }
        .deserialize(&mut parser)
        .map_err(|e| e.to_string())?;
        parser.end().map_err(|e| e.to_string())?;
        Ok(value)
    }
}

pub use crate::meter::sizes::decimal_cycles;

/// What writing the ints of `value` that lie beyond `i64` costs
/// ([`decimal_cycles`] of each, digits bounded from its bits).
pub fn int_cycles(value: &Value) -> u64 {
    match value {
        Value::Int(i) if i64::try_from(i).is_err() => decimal_cycles(i.bits() * 1233 / 4096 + 1),
        Value::List(items) | Value::Tuple(items) => {
            items.iter().map(int_cycles).fold(0, u64::saturating_add)
        }
        Value::Dict(entries) => entries
            .iter()
            .map(|(k, v)| int_cycles(k).saturating_add(int_cycles(v)))
            .fold(0, u64::saturating_add),
        _ => 0,
    }
}

/// Bytes of text and bytes a value holds: what converting it copied and
/// encoding it escapes, whether or not encoding then succeeds.
pub fn text_bytes(value: &Value) -> u64 {
    match value {
        Value::Str(s) => s.len() as u64,
        Value::Bytes(b) => b.len() as u64,
        Value::List(items) | Value::Tuple(items) => {
            items.iter().map(text_bytes).fold(0, u64::saturating_add)
        }
        Value::Dict(entries) => entries
            .iter()
            .map(|(k, v)| text_bytes(k).saturating_add(text_bytes(v)))
            .fold(0, u64::saturating_add),
        _ => 0,
    }
}

/// A number literal `serde_json` reports as a float.
#[derive(Debug, PartialEq, Eq)]
enum Inexact {
    /// An integer beyond `i64`/`u64`, or `-0`: its literal.
    Int(String),
    /// Anything else (a float; or no number at all, which the parser refuses).
    Other,
}

/// Takes out the number literals `serde_json` would report as floats, in
/// document order (see the module docs), overwriting each integer among them
/// with `-0` and spaces. One pass: strings are skipped by their quotes and
/// backslashes, a number literal is a run of `0-9 + - . e E` that starts with
/// a digit or `-` outside a string. In a document the parser accepts, these
/// runs are exactly its number tokens.
fn inexact_numbers(text: &mut [u8]) -> Vec<Inexact> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        match text[at] {
            b'"' => {
                at += 1;
                while at < text.len() {
                    match text[at] {
                        b'\\' => at += 2,
                        b'"' => break,
                        _ => at += 1,
                    }
                }
                at += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = at;
                while at < text.len()
                    && matches!(text[at], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    at += 1;
                }
                let literal = &mut text[start..at];
                if !is_int_literal(literal) {
                    found.push(Inexact::Other);
                } else if !fits_serde_json(literal) {
                    found.push(Inexact::Int(String::from_utf8_lossy(literal).into_owned()));
                    let rewritten = b"-0".iter().chain(std::iter::repeat(&b' '));
                    for (byte, new) in literal.iter_mut().zip(rewritten) {
                        *byte = *new;
                    }
                }
            }
            _ => at += 1,
        }
    }
    found
}

/// JSON's integer grammar: `-?(0|[1-9][0-9]*)`.
fn is_int_literal(literal: &[u8]) -> bool {
    let digits = literal.strip_prefix(b"-").unwrap_or(literal);
    match digits {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Whether `serde_json` hands this integer literal over exactly (as `u64` or
/// `i64`): not `-0`, nor beyond those ranges.
fn fits_serde_json(literal: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(literal) else {
        return false;
    };
    if literal.starts_with(b"-") {
        text != "-0" && text.parse::<i64>().is_ok()
    } else {
        text.parse::<u64>().is_ok()
    }
}

fn int_from_literal<E: de::Error>(literal: &str) -> Result<Value, E> {
    if literal.len() > MAX_INT_LITERAL {
        return Err(E::custom(format!(
            "integer has more than {MAX_INT_LITERAL} digits"
        )));
    }
    literal
        .parse::<BigInt>()
        .map(Value::Int)
        .map_err(|_| E::custom("bad number"))
}

/// Builds a [`Value`] from the parser's events.
struct Decode<'n> {
    /// What [`inexact_numbers`] took out, consumed one per float reported.
    numbers: &'n mut std::vec::IntoIter<Inexact>,
    /// Lists and dicts around the value being built.
    depth: usize,
}

impl Decode<'_> {
    /// The depth of a list or dict opened here, if allowed.
    fn nested<E: de::Error>(&self) -> Result<usize, E> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(E::custom("nested too deeply"));
        }
        Ok(depth)
    }
}

impl<'de> DeserializeSeed<'de> for Decode<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Decode<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::None)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Int(n.into()))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int(n.into()))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Value, E> {
        match self.numbers.next() {
            Some(Inexact::Int(literal)) => int_from_literal(&literal),
            _ => Err(E::custom("floats are not supported")),
        }
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::Str(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let depth = self.nested()?;
        let numbers = self.numbers;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Decode {
            numbers: &mut *numbers,
            depth,
        })? {
            items.push(item);
        }
        Ok(Value::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let depth = self.nested()?;
        let numbers = self.numbers;
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Decode {
                numbers: &mut *numbers,
                depth,
            })?;
            entries.push((key, value));
        }
        Ok(dict(entries))
    }
}

/// The dict of an object's members, as [`Value::dict_from`] builds it (keys
/// in canonical order, a later duplicate replacing an earlier one, as in
/// CPython) but in O(n log n): `dict_from` looks each key up in a list.
fn dict(members: Vec<(String, Value)>) -> Value {
    let mut keyed: Vec<(Vec<u8>, Value, Value)> = members
        .into_iter()
        .map(|(key, value)| {
            let key = Value::Str(key);
            (key.to_bytes(), key, value)
        })
        .collect();
    // Stable: duplicates stay in document order, the last one wins.
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let mut entries: Vec<(Vec<u8>, Value, Value)> = Vec::with_capacity(keyed.len());
    for entry in keyed {
        match entries.last_mut() {
            Some(last) if last.0 == entry.0 => last.2 = entry.2,
            _ => entries.push(entry),
        }
    }
    Value::Dict(entries.into_iter().map(|(_, k, v)| (k, v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::Digest as _;

    fn int(text: &str) -> Value {
        Value::Int(text.parse().unwrap())
    }

    fn dict_of(members: &[(&str, Value)]) -> Value {
        Value::Dict(
            members
                .iter()
                .map(|(k, v)| (Value::str(*k), v.clone()))
                .collect(),
        )
    }

    fn encoded(value: &Value, style: &Style) -> Result<String, String> {
        let mut out = String::new();
        encode_with(value, style, &mut out).map(|_| out)
    }

    fn styles() -> Vec<Style> {
        let mut sorted_cpython = Style::cpython();
        sorted_cpython.sort_keys = true;
        let mut utf8_cpython = Style::cpython();
        utf8_cpython.ensure_ascii = false;
        let mut compact_cpython = Style::cpython();
        compact_cpython.item_separator = ",".into();
        compact_cpython.key_separator = ":".into();
        let mut odd = Style::canonical();
        odd.item_separator = " ;\t".into();
        odd.key_separator = "=>".into();
        odd.ensure_ascii = true;
        vec![
            Style::canonical(),
            Style::cpython(),
            sorted_cpython,
            utf8_cpython,
            compact_cpython,
            odd,
        ]
    }

    /// Big ints, unicode, escapes, nested dicts and the values the encoder
    /// refuses.
    fn samples() -> Vec<Value> {
        let cap: BigInt = (BigInt::from(1) << 65_536u32) - 1;
        let controls: String = (0u8..0x20).map(char::from).collect();
        let mut values = vec![
            Value::None,
            Value::Bool(true),
            Value::Bool(false),
            int("0"),
            int("-1"),
            int("9223372036854775807"),
            int("9223372036854775808"),
            int("-9223372036854775808"),
            int("-9223372036854775809"),
            int("18446744073709551615"),
            int("18446744073709551616"),
            int(&format!("-{}", "9".repeat(400))),
            Value::Int(cap.clone()),
            Value::Int(-cap),
            Value::str(""),
            Value::str("plain ascii"),
            Value::str(controls),
            Value::str("quote \" backslash \\ slash / del \u{7f} nul \0"),
            Value::str("\u{8}\u{c}\n\r\t"),
            Value::str("é 中文 😀 \u{2028}\u{2029} \u{ffff} \u{10ffff} \u{80}"),
            Value::Bytes(vec![1, 2]),
            Value::List(vec![]),
            Value::Tuple(vec![]),
            Value::Dict(vec![]),
            Value::Tuple(vec![int("1"), Value::str("x"), Value::None]),
            Value::List(vec![
                Value::List(vec![Value::List(vec![])]),
                Value::Tuple(vec![]),
            ]),
            dict_of(&[
                ("b", int("2")),
                ("a", Value::List(vec![int("1"), Value::None])),
                ("é", Value::Bool(true)),
                ("Z", Value::str("😀")),
                ("", int("-3")),
                ("a\nb", Value::str("\u{8}")),
            ]),
            dict_of(&[(
                "outer",
                dict_of(&[
                    ("z", dict_of(&[("y", int(&"7".repeat(100)))])),
                    ("k", Value::List(vec![dict_of(&[("😀", Value::None)])])),
                ]),
            )]),
            Value::Dict(vec![(int("1"), int("2"))]),
            Value::Dict(vec![(Value::str("k"), Value::Bytes(vec![]))]),
            Value::List(vec![int("1"), Value::Bytes(vec![])]),
        ];
        let nested = values.clone();
        values.push(Value::List(nested));
        values
    }

    /// The output (or error) of every sample in every style, hashed: what the
    /// hand-written encoder replaced in #29 wrote. Before that encoder was
    /// deleted, this one was compared with it directly, on these samples and
    /// on 2,000 random values (`any_value`) in every style, and its decoder
    /// with the old decoder on every text either wrote.
    #[test]
    fn output_is_the_hand_written_encoders_byte_for_byte() {
        let mut hasher = sha2::Sha256::new();
        for value in samples() {
            for style in styles() {
                let out = encoded(&value, &style).unwrap_or_else(|e| format!("ERR:{e}"));
                hasher.update(out.as_bytes());
                hasher.update(b"\n");
            }
        }
        assert_eq!(
            hex::encode(hasher.finalize()),
            "da8dca11103d67774d16d69c81c32753ed5bfdb8b270122db2ddeead06074bd6"
        );
    }

    /// A readable part of the above: the canonical and CPython layouts.
    #[test]
    fn canonical_and_cpython_layouts() {
        let samples = samples();
        let cases = [
            (
                16,
                r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\t\n\u000b\u000c\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#,
                r#""\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f""#,
            ),
            (
                17,
                "\"quote \\\" backslash \\\\ slash / del \u{7f} nul \\u0000\"",
                "\"quote \\\" backslash \\\\ slash / del \u{7f} nul \\u0000\"",
            ),
            (
                19,
                "\"é 中文 😀 \u{2028}\u{2029} \u{ffff} \u{10ffff} \u{80}\"",
                r#""\u00e9 \u4e2d\u6587 \ud83d\ude00 \u2028\u2029 \uffff \udbff\udfff \u0080""#,
            ),
            (24, r#"[1,"x",null]"#, r#"[1, "x", null]"#),
            (
                26,
                r#"{"":-3,"Z":"😀","a":[1,null],"a\nb":"\u0008","b":2,"é":true}"#,
                r#"{"b": 2, "a": [1, null], "\u00e9": true, "Z": "\ud83d\ude00", "": -3, "a\nb": "\b"}"#,
            ),
        ];
        for (index, canonical, cpython) in cases {
            let value = &samples[index];
            assert_eq!(encoded(value, &Style::canonical()).unwrap(), canonical);
            assert_eq!(encoded(value, &Style::cpython()).unwrap(), cpython);
        }
        let big = format!(
            "{{\"outer\":{{\"k\":[{{\"😀\":null}}],\"z\":{{\"y\":{}}}}}}}",
            "7".repeat(100)
        );
        assert_eq!(encoded(&samples[27], &Style::canonical()).unwrap(), big);
        for (index, error) in [
            (20, "bytes are not JSON serializable (base64-encode them)"),
            (28, "JSON object keys must be str"),
            (30, "bytes are not JSON serializable (base64-encode them)"),
        ] {
            for style in styles() {
                assert_eq!(encoded(&samples[index], &style).unwrap_err(), error);
            }
        }
        let mut out = String::from("kept");
        assert!(encode(&samples[30], &mut out).is_err());
        assert_eq!(out, "kept");
    }

    /// Any value: scalars, strings of any characters, nested lists, tuples
    /// and dicts (str keys, and now and then another key or bytes).
    fn any_value() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::None),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|i| Value::Int(i.into())),
            (any::<i128>(), 0u32..300).prop_map(|(i, shift)| Value::Int(BigInt::from(i) << shift)),
            any::<String>().prop_map(Value::Str),
            "[\\x00-\\x1f\"\\\\/a-z\u{7f}é😀]{0,12}".prop_map(Value::Str),
            prop::collection::vec(any::<u8>(), 0..3).prop_map(Value::Bytes),
        ];
        scalar.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::List),
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Tuple),
                prop::collection::vec(("[a-c\u{e9}\u{1f600}\n]{0,3}", inner.clone()), 0..8)
                    .prop_map(|members| {
                        Value::dict_from(members.into_iter().map(|(k, v)| (Value::Str(k), v)))
                            .unwrap()
                    }),
                (any::<i64>(), inner)
                    .prop_map(|(k, v)| Value::Dict(vec![(Value::Int(k.into()), v)])),
            ]
        })
    }

    /// What decoding a value's JSON gives back: tuples become lists.
    fn as_json(value: &Value) -> Value {
        match value {
            Value::List(items) | Value::Tuple(items) => {
                Value::List(items.iter().map(as_json).collect())
            }
            Value::Dict(entries) => Value::Dict(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), as_json(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// In every style whose separators are JSON, the text decodes to the
        /// value (tuples as lists), and re-encodes canonically to the same
        /// bytes as the value.
        #[test]
        fn any_value_round_trips(value in any_value()) {
            let canonical = encoded(&value, &Style::canonical());
            for style in styles() {
                if style.item_separator.trim() != "," || style.key_separator.trim() != ":" {
                    continue;
                }
                let Ok(text) = encoded(&value, &style) else {
                    prop_assert!(canonical.is_err());
                    continue;
                };
                let decoded = decode(&text);
                prop_assert_eq!(decoded.as_ref(), Ok(&as_json(&value)), "{}", text);
                prop_assert_eq!(encoded(&decoded.unwrap(), &Style::canonical()), canonical.clone());
            }
        }
    }

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

    /// Documents read as the hand-written decoder read them (its results,
    /// recorded before it was deleted): ints at every boundary `serde_json`
    /// has, whitespace, escapes, duplicates, depth; `None` for a refusal.
    #[test]
    fn decodes_documents_as_the_hand_written_decoder_did() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let cases: Vec<(String, Option<String>)> = vec![
            ("0".into(), Some("0".into())),
            ("-0".into(), Some("0".into())),
            ("[-0, 0, -1, 1]".into(), Some("[0,0,-1,1]".into())),
            (
                "9223372036854775807".into(),
                Some("9223372036854775807".into()),
            ),
            (
                "9223372036854775808".into(),
                Some("9223372036854775808".into()),
            ),
            (
                "-9223372036854775808".into(),
                Some("-9223372036854775808".into()),
            ),
            (
                "-9223372036854775809".into(),
                Some("-9223372036854775809".into()),
            ),
            (
                "18446744073709551615".into(),
                Some("18446744073709551615".into()),
            ),
            (
                "18446744073709551616".into(),
                Some("18446744073709551616".into()),
            ),
            (
                "-18446744073709551616".into(),
                Some("-18446744073709551616".into()),
            ),
            (
                " \t\r\n[ 1 , { \"a\" : [ ] } ]\n ".into(),
                Some(r#"[1,{"a":[]}]"#.into()),
            ),
            (
                r#""\"\\\/\b\f\n\r\t\u0041\u00e9\u4e2d\uffff""#.into(),
                Some("\"\\\"\\\\/\\u0008\\u000c\\n\\r\\tAé中\u{ffff}\"".into()),
            ),
            ("\"é中😀\u{7f}\"".into(), Some("\"é中😀\u{7f}\"".into())),
            (
                r#"{"a": 1, "b": 2, "a": 3}"#.into(),
                Some(r#"{"a":3,"b":2}"#.into()),
            ),
            (
                r#"{"é": 1, "z": 2, "": 3, "aa": 4, "b": {"b": 5}}"#.into(),
                Some(r#"{"":3,"aa":4,"b":{"b":5},"z":2,"é":1}"#.into()),
            ),
            (
                r#"[true, false, null, "true", {"null": null}]"#.into(),
                Some(r#"[true,false,null,"true",{"null":null}]"#.into()),
            ),
            (deep(64), Some(deep(64))),
            (deep(65), None),
            (
                format!("1{}", "0".repeat(400)),
                Some(format!("1{}", "0".repeat(400))),
            ),
        ];
        let refused = [
            "",
            "   ",
            "[1,]",
            "{} x",
            "[1 2]",
            "{1: 2}",
            r#"{"a" 1}"#,
            "\"a\u{1}\"",
            r#""\x""#,
            r#""\u12""#,
            r#""unterminated"#,
            "-",
            "--1",
            "1-2",
            "[1.5]",
            "1e5",
            "[1E400]",
            "nul",
            "True",
            "+1",
        ];
        let cases = cases
            .into_iter()
            .chain(refused.iter().map(|text| (text.to_string(), None)));
        for (text, expected) in cases {
            let canonical =
                decode(&text).map(|value| encoded(&value, &Style::canonical()).unwrap());
            assert_eq!(canonical.ok(), expected, "{text:?}");
        }
        // Long literals, in strings and out: 4,300 characters at most.
        let digits = "1234567890".repeat(430);
        let short = &digits[1..];
        let text =
            format!(r#"{{"{digits}": [{digits}, -{short}], "s": "{digits}", "t": "\"{digits}"}}"#);
        let expected = dict_of(&[
            (
                digits.as_str(),
                Value::List(vec![int(&digits), int(&format!("-{short}"))]),
            ),
            ("s", Value::str(digits.as_str())),
            ("t", Value::str(format!("\"{digits}"))),
        ]);
        assert_eq!(
            decode(&text),
            Ok(as_json(
                &Value::dict_from(match expected {
                    Value::Dict(entries) => entries,
                    _ => unreachable!(),
                })
                .unwrap()
            ))
        );
        assert!(decode(&format!("[{digits}0]")).is_err());
        assert!(decode(&format!("-{digits}")).is_err());
    }

    /// Where the decoder now follows JSON and CPython instead of the
    /// hand-written one.
    #[test]
    fn differs_from_the_hand_written_decoder_only_where_it_broke_json() {
        // Leading zeros: the old decoder read "007" as 7.
        for text in ["007", "-01", "[00]"] {
            assert!(decode(text).is_err(), "{text}");
        }
        // `\u` takes four hex digits; the old decoder let Rust's integer
        // parser read "+041".
        assert!(decode(r#""\u+041""#).is_err());
        // Surrogate pairs (what `ensure_ascii` writes for 😀) now decode (the
        // old decoder refused them); a lone surrogate is still refused.
        assert_eq!(decode(r#""\ud83d\ude00""#), Ok(Value::str("😀")));
        assert!(decode(r#""\ud83d""#).is_err());
        assert!(decode(r#""\ude00x""#).is_err());
    }

    #[test]
    fn ints_are_exact_and_bounded() {
        let literal = format!("-{}", "9".repeat(4299));
        assert_eq!(decode(&literal), Ok(int(&literal)));
        let long = format!("-{}", "9".repeat(4300));
        let error = decode(&long).unwrap_err();
        assert!(error.contains("more than 4300 digits"), "{error}");
        assert!(decode(&long[1..]).is_ok());
        let error = decode("[18446744073709551616, 1.0]").unwrap_err();
        assert!(error.starts_with("floats are not supported"), "{error}");
        // The object serde_json's arbitrary_precision would take for a number.
        assert_eq!(
            decode(r#"{"$serde_json::private::Number": "12"}"#),
            Ok(dict_of(&[(
                "$serde_json::private::Number",
                Value::str("12")
            )]))
        );
    }

    #[test]
    fn only_inexact_integer_literals_are_rewritten() {
        let mut text = br#"["-0 1e5", -0, 1, -9223372036854775809, "\"99999999999999999999", 2.5, 99999999999999999999]"#.to_vec();
        let found = inexact_numbers(&mut text);
        assert_eq!(
            found,
            vec![
                Inexact::Int("-0".into()),
                Inexact::Int("-9223372036854775809".into()),
                Inexact::Other,
                Inexact::Int("99999999999999999999".into()),
            ]
        );
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r#"["-0 1e5", -0, 1, -0                  , "\"99999999999999999999", 2.5, -0                  ]"#
        );
    }

    #[test]
    fn long_ints_are_priced_before_they_are_converted() {
        assert_eq!(decimal_cycles(4299), 4299 / 2 + 4299 * 4299 / 4096);
        let prepared = Prepared::new(format!(
            "[1, -0, 9223372036854775808, 18446744073709551616, {}, {}, 2.5]",
            "9".repeat(4300),
            "9".repeat(4301)
        ));
        assert_eq!(
            prepared.int_cycles(),
            decimal_cycles(2) + decimal_cycles(20) + decimal_cycles(4300)
        );
        assert!(prepared.decode().is_err());
        // Writing: ints beyond i64, digits bounded from their bits.
        let value = Value::List(vec![
            int("9223372036854775807"),
            int("9223372036854775808"),
            Value::Tuple(vec![int(&"9".repeat(4299))]),
            dict_of(&[("k", int("-9"))]),
        ]);
        assert_eq!(
            int_cycles(&value),
            decimal_cycles(20) + decimal_cycles(4299)
        );
    }

    #[test]
    fn dicts_take_canonical_order_and_the_last_duplicate() {
        let members = vec![
            ("b".to_string(), int("1")),
            ("a".into(), int("2")),
            ("é".into(), int("3")),
            ("b".into(), int("4")),
            ("ab".into(), int("5")),
            ("b".into(), int("6")),
        ];
        let expected = Value::dict_from(
            members
                .iter()
                .map(|(k, v)| (Value::str(k.as_str()), v.clone())),
        )
        .unwrap();
        assert_eq!(dict(members), expected);
    }
}
