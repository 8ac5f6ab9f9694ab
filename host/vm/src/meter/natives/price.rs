//! The cost functions of the allow-list ([`super::table`]): what a native
//! call costs, computed from its receiver and arguments *before* it runs,
//! with the size of what it will produce checked against the memory budget
//! before it is allocated.
//!
//! Each [`Price`] is one way work grows. The argument vector a price sees is
//! the call's: for a method, the receiver first (`s.upper()` is
//! `str.upper(s)`); for a class method, the class first.

use rustpython_vm::builtins::{PyList, PyRange, PyStr, PyTuple};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::meter::charge::charge;
use crate::meter::operators::charge_operator;
use crate::meter::sizes::*;
use crate::meter::swallowed::{charge_keys_probe_into, charge_set_key};
use crate::rules::costs;
use crate::rules::guards::OperatorCode;

/// How a native's work grows, and so what it is charged (see the
/// variants). Charges are on top of the call's static cost (10 cycles,
/// `costs::code::CALL`), which every call pays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Price {
    /// Constant time (`list.append`, `dict.get`, `int.bit_length`): nothing
    /// beyond the call. Hashing a key is charged by the hash slots.
    Free,
    /// One hash lookup of a key that may be a `set` (`set.discard`,
    /// `set.remove`): RustPython retries an unhashable set key as a
    /// frozenset copy of it, so such a key pays the swallowed `TypeError`
    /// and the copy's size (`crate::meter::swallowed::charge_set_key`).
    SetKey,
    /// A fixed number of cycles: constant-time natives that are slow in
    /// RustPython (`list[int]` builds a generic alias: ~4 µs).
    Constant(u64),
    /// Linear in the receiver: one cycle per element or per 16 bytes.
    Receiver,
    /// Linear in the receiver, every argument and the result.
    Sized,
    /// Like [`Price::Sized`], and every positional argument is walked (a
    /// str or bytes per character): a lazy iterable
    /// (`range`, `map`, `zip`, a generator) is drained first, one charged
    /// item at a time, so no item is pulled inside the native uncharged.
    Consuming,
    /// Like [`Price::Consuming`], and builds a new set or dict from what it
    /// walked: 4 cycles per element (hashing and inserting each).
    Build,
    /// `dict.fromkeys(keys, value)`: like [`Price::Build`] over `keys` only.
    FromKeys,
    /// In-place growth (`list.extend`, `set.update`, `dict.update`): walks
    /// every argument (lazy ones drained, per item) — 4 cycles per element
    /// into a set or dict, 1 onto a list, bytes copied into a bytearray by
    /// 16 — but not the receiver, which only grows.
    Extend,
    /// `__setitem__`/`__delitem__` of a list or bytearray: the receiver and
    /// the value, a lazy value drained first (slice assignment takes any
    /// iterable).
    StoreItem,
    /// `join`: walks its argument like [`Price::Consuming`], and the
    /// result (every part plus a separator between each two) is checked
    /// before it is allocated (`"".join([s] * 1024)` of a 1 MB `s`).
    Join,
    /// `ljust`/`rjust`/`center`/`zfill`: the requested width, checked.
    Pad,
    /// `expandtabs`: the receiver times the tab size, checked.
    ExpandTabs,
    /// `replace`: the receiver plus every possible replacement, checked.
    Replace,
    /// `list.sort`: n·log2(n) comparisons on top of the walk.
    Sort,
    /// `str.translate`: a table lookup per character.
    Translate,
    /// `count` on str/bytes: RustPython scans slowly (4 cycles per 16 bytes).
    Count,
    /// `strip`/`lstrip`/`rstrip` (and `bytes.translate`'s `delete`): every
    /// character of the receiver may be looked up in the set of characters,
    /// so the receiver times the set.
    CharacterSet,
    /// `int.from_bytes`: the result's bits checked against the int cap.
    FromBytes,
    /// `int.to_bytes`: the requested length, checked.
    ToBytes,
    /// `str.format`/`format_map`: the template is checked (plain fields,
    /// bounded widths) and each field charged, then the sizes.
    Format,
    /// `__format__(spec)`: the spec is checked like an f-string's.
    FormatSpec,
    /// `__round__(ndigits)`: `10 ** |ndigits|` is an int like any other, so
    /// `|ndigits|` is bounded by the int cap.
    Round,
    /// A direct call of an operator's dunder (`x.__mul__(y)`): what the
    /// operator guard charges for `x op y`; `reflected` for `__rmul__`.
    Operator { op: OperatorCode, reflected: bool },
    /// A direct comparison (`a.__eq__(b)`): the shorter operand, at least
    /// one cycle (a probe of colliding dict keys compares this way).
    Compare,
    /// A direct `__repr__`/`__str__`/`__hash__` of a container: the slot
    /// charge (4 cycles per element or 16 bytes for a repr, 1 for a hash).
    Repr,
    /// `range.index`/`count`/`__contains__`: constant for an int, but any
    /// other value is compared with every element.
    RangeSearch,
    /// Refused with a reason (`__sizeof__`: memory layout is per node).
    Refused(&'static str),
    /// A builtin replaced by a charging stand-in of its own (`sum`, `int`,
    /// `getattr`), which the text describes.
    Stand(&'static str),
}

/// Cycles per element (or 16 bytes) of one level of `repr`
/// (`crate::meter::slots`'s rate).
const REPR_CYCLES_PER_UNIT: u64 = 4;

/// What any `round(x, n)` costs beyond its ndigits.
const ROUND_CYCLES: u64 = 40;

/// Cycles per element of comparing a value with every element of a range
/// (`'x' in range(n)`: ~40 ns an element).
pub(crate) const RANGE_SEARCH_CYCLES: u64 = 4;

/// What a dunder costs to reach beyond its operation: a direct call or a
/// derived class's slot goes through a method lookup and RustPython's
/// generic slot (~500–900 ns; `I(a) / b` ran at 92 ns per cycle uncharged).
const DUNDER_DISPATCH_CYCLES: u64 = 40;

impl Price {
    /// Is the result charged by its size after the call?
    pub(crate) fn charges_result(self) -> bool {
        !matches!(
            self,
            Price::Free
                | Price::SetKey
                | Price::Constant(_)
                | Price::Receiver
                | Price::Compare
                | Price::Repr
                | Price::RangeSearch
                | Price::Refused(_)
                | Price::Stand(_)
        )
    }

    /// One line for the documentation table (`natives::docs`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Price::Free => "constant",
            Price::SetKey => {
                "constant; a set key: its size + 48 (copied to a frozenset after a swallowed error)"
            }
            Price::Constant(_) => "a fixed charge (see why)",
            Price::Receiver => "3 × receiver size",
            Price::Sized => "receiver + arguments + result",
            Price::Consuming => "receiver + arguments (lazy ones drained, per item) + result",
            Price::Join => "parts (lazy ones drained, per item) + result (checked)",
            Price::Build => "receiver + 4 per element walked (lazy ones drained) + result",
            Price::Extend => {
                "arguments (lazy ones drained, per item; 4 per element into a set or dict)"
            }
            Price::FromKeys => "4 per key walked (lazy keys drained) + result",
            Price::StoreItem => "receiver + value (a lazy value drained, per item)",
            Price::Pad => "width (checked) + result",
            Price::ExpandTabs => "receiver × tab size (checked) + result",
            Price::Replace => "5 × receiver + replacements (checked) + result",
            Price::Sort => "n + n·log2 n",
            Price::Translate => "receiver + 1 per character + result",
            Price::Count => "4 × receiver + arguments",
            Price::CharacterSet => "receiver × character set + result",
            Price::FromBytes => "input (int cap checked) + result",
            Price::ToBytes => "length (checked) + result",
            Price::Format => "5 + 8 per field (template checked) + sizes",
            Price::FormatSpec => "spec checked + value + result",
            Price::Round => "ndigits checked against the int cap + result",
            Price::Operator { .. } => "as the operator",
            Price::Compare => "shorter operand (at least 1)",
            Price::Repr => "4 per element or 16 bytes (hash: 1)",
            Price::RangeSearch => "constant for an int, else the range's length",
            Price::Refused(_) => "refused",
            Price::Stand(text) => text,
        }
    }

    /// Charges the call before it runs; may replace lazy arguments by
    /// what they produced. `args[0]` is the receiver (or the class).
    pub(crate) fn charge_before(
        self,
        native: &str,
        args: &mut FuncArgs,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let receiver = args.args.first().cloned();
        let receiver_size = receiver.as_ref().map_or((0, 0), |r| size_of(r));
        let int_arg = |args: &FuncArgs, index: usize| -> Option<i64> {
            args.args.get(index).and_then(int_value).map(int_to_i64)
        };
        let sized = |args: &FuncArgs| -> u64 {
            args.args
                .iter()
                .map(|a| size_cycles(size_of(a)))
                .fold(0u64, u64::saturating_add)
        };
        match self {
            Price::Free | Price::Stand(_) => Ok(()),
            Price::SetKey => match args.args.get(1) {
                Some(key) => charge_set_key(key, vm),
                None => Ok(()),
            },
            Price::Constant(cycles) => charge(cycles, 0, vm),
            Price::Refused(reason) => Err(refusal(native, reason, vm)),
            // A test of every character: ~2 ns each (30 ns per cycle at
            // one cycle per 16 bytes).
            Price::Receiver => charge(3 * size_cycles(receiver_size), 0, vm),
            Price::Sized => charge(sized(args), 0, vm),
            Price::Consuming => {
                for index in 1..args.args.len() {
                    let argument = args.args[index].clone();
                    args.args[index] = materialize(argument, vm)?;
                }
                // Keyword arguments are values (`d.update(a=1)`), charged by size.
                let keywords: u64 = args
                    .kwargs
                    .values()
                    .map(|v| size_cycles(size_of(v)))
                    .fold(0u64, u64::saturating_add);
                charge(keywords, 0, vm)?;
                // `materialize` charged the arguments' walks; the receiver's:
                charge(size_cycles(receiver_size), 0, vm)
            }
            Price::FromKeys => {
                if let Some(keys) = args.args.get(1).cloned() {
                    precheck_built_entries(&keys, vm)?;
                    let keys = materialize(keys, vm)?;
                    let length = keys.length(vm).map_or(0, |l| l as u64);
                    charge(length.saturating_mul(costs::size::PER_ELEMENT_BUILT), 0, vm)?;
                    args.args[1] = keys;
                }
                Ok(())
            }
            Price::Extend => {
                let Some(receiver) = receiver else {
                    return Ok(());
                };
                for index in 1..args.args.len() {
                    charge_keys_probe_into(&receiver, &args.args[index], vm)?;
                    args.args[index] = grow_in_place(&receiver, args.args[index].clone(), vm)?;
                }
                Ok(())
            }
            Price::Build => {
                let mut elements = receiver_size.0;
                for index in 1..args.args.len() {
                    if let Some(receiver) = &receiver {
                        charge_keys_probe_into(receiver, &args.args[index], vm)?;
                    }
                    precheck_built_entries(&args.args[index], vm)?;
                    let argument = materialize(args.args[index].clone(), vm)?;
                    elements = elements.saturating_add(argument.length(vm).map_or(0, |l| l as u64));
                    args.args[index] = argument;
                }
                charge(
                    elements.saturating_mul(costs::size::PER_ELEMENT_BUILT),
                    0,
                    vm,
                )
            }
            Price::StoreItem => {
                if let Some(value) = args.args.get(2).cloned() {
                    if !is_sized(&value) && int_value(&value).is_none() {
                        args.args[2] = materialize(value, vm)?;
                    }
                }
                charge(sized(args), 0, vm)
            }
            Price::Join => {
                if let Some(parts) = args.args.get(1).cloned() {
                    let parts = materialize(parts, vm)?;
                    let (_, separator) = receiver_size;
                    let mut total = 0u128;
                    let mut count = 0u128;
                    let mut add = |part: &PyObjectRef| {
                        total += u128::from(size_of(part).1);
                        count += 1;
                    };
                    if let Some(list) = parts.downcast_ref::<PyList>() {
                        list.borrow_vec().iter().for_each(&mut add);
                    } else if let Some(tuple) = parts.downcast_ref::<PyTuple>() {
                        tuple.iter().for_each(&mut add);
                    }
                    precheck_result_bytes(
                        total + count.saturating_sub(1) * u128::from(separator),
                        vm,
                    )?;
                    args.args[1] = parts;
                }
                charge(size_cycles(receiver_size), 0, vm)
            }
            Price::Pad => {
                let width = int_arg(args, 1).unwrap_or(0).max(0) as u128;
                precheck_result_bytes(width * 4, vm)?;
                // RustPython pads a character at a time: ~4 ns a byte
                // (35–39 ns per cycle at one cycle per 16 bytes).
                charge((width / 4).min(u128::from(u64::MAX)) as u64, 0, vm)?;
                charge(sized(args), 0, vm)
            }
            Price::ExpandTabs => {
                let tab = int_arg(args, 1).unwrap_or(8).max(1) as u128;
                precheck_result_bytes(tab * u128::from(receiver_size.1), vm)?;
                // A character at a time (~14 ns each; 55 ns per cycle at
                // the size charges alone).
                let items = receiver.as_ref().and_then(items_of_text).unwrap_or(0);
                charge(
                    items.saturating_add(tab.min(u128::from(u64::MAX)) as u64),
                    0,
                    vm,
                )?;
                charge(sized(args), 0, vm)
            }
            Price::Replace => {
                if args.args.len() >= 3 {
                    let receiver_chars = receiver_size.1;
                    let (_, old_bytes) = size_of(&args.args[1]);
                    let (_, new_bytes) = size_of(&args.args[2]);
                    // An empty `old` matches between every two characters.
                    let occurrences = receiver_chars
                        .checked_div(old_bytes)
                        .unwrap_or(receiver_chars + 1);
                    let occurrences = match int_arg(args, 3) {
                        Some(count) if count >= 0 => occurrences.min(count as u64),
                        _ => occurrences,
                    };
                    precheck_result_bytes(
                        u128::from(receiver_chars)
                            + u128::from(occurrences) * u128::from(new_bytes),
                        vm,
                    )?;
                }
                // Slow per byte in RustPython: 25 ns per cycle at 3 cycles
                // per 16 bytes (fairness benchmark).
                charge(4 * costs::for_bytes(receiver_size.1), 0, vm)?;
                charge(sized(args), 0, vm)
            }
            Price::Sort => {
                let elements = receiver_size.0;
                let log = 64 - elements.leading_zeros() as u64;
                charge(elements * log * costs::size::SORT_LOG_FACTOR, 0, vm)?;
                charge(key_calls(elements, args), 0, vm)?;
                charge(sized(args), 0, vm)?;
                meter_key(args, vm);
                Ok(())
            }
            Price::Translate => {
                let items = receiver.as_ref().and_then(items_of_text).unwrap_or(0);
                charge(items * costs::size::PER_ELEMENT, 0, vm)?;
                if let Some(delete) = args.args.get(2) {
                    let set = items_of_text(delete).unwrap_or(0);
                    charge(items.saturating_mul(set) / 16, 0, vm)?;
                }
                charge(sized(args), 0, vm)
            }
            Price::Count => {
                charge(3 * costs::for_bytes(receiver_size.1), 0, vm)?;
                charge(sized(args), 0, vm)
            }
            Price::CharacterSet => {
                let items = receiver.as_ref().and_then(items_of_text).unwrap_or(0);
                let set = args.args.get(1).and_then(items_of_text).unwrap_or(0);
                charge(items.saturating_mul(set) / 16, 0, vm)?;
                charge(sized(args), 0, vm)
            }
            Price::FromBytes => {
                // A class-method call and a conversion (~300 ns at any size).
                charge(20, 0, vm)?;
                let (_, input_bytes) = args.args.get(1).map_or((0, 0), |a| size_of(a));
                check_int_bits(u128::from(input_bytes) * 8, vm)?;
                charge(sized(args), 0, vm)
            }
            Price::ToBytes => {
                charge(10, 0, vm)?;
                let length = int_arg(args, 1)
                    .or_else(|| {
                        args.kwargs
                            .get("length")
                            .and_then(int_value)
                            .map(int_to_i64)
                    })
                    .unwrap_or(1)
                    .max(0) as u128;
                precheck_result_bytes(length, vm)?;
                charge(
                    costs::for_bytes(length.min(u128::from(u64::MAX)) as u64),
                    0,
                    vm,
                )?;
                charge(sized(args), 0, vm)
            }
            Price::Format => {
                let template = receiver
                    .as_ref()
                    .and_then(|t| t.downcast_ref::<PyStr>())
                    .and_then(|t| t.to_str().map(str::to_owned))
                    .unwrap_or_default();
                let fields = crate::rules::formatting::check_format_template(&template)
                    .map_err(|reason| vm.new_value_error(reason))?;
                // Each field can repeat any argument: the result is at most
                // the template plus every field holding the largest one.
                let largest = args
                    .args
                    .iter()
                    .skip(1)
                    .chain(args.kwargs.values())
                    .map(formatted_bytes_bound)
                    .max()
                    .unwrap_or(0);
                precheck_result_bytes(
                    u128::from(receiver_size.1) + u128::from(fields) * u128::from(largest),
                    vm,
                )?;
                charge(
                    costs::code::FORMAT + fields * costs::code::FORMAT_FIELD,
                    0,
                    vm,
                )?;
                charge(sized(args), 0, vm)
            }
            Price::FormatSpec => {
                let spec = args
                    .args
                    .get(1)
                    .and_then(|s| s.downcast_ref::<PyStr>())
                    .and_then(|s| s.to_str().map(str::to_owned))
                    .unwrap_or_default();
                crate::rules::formatting::check_format_spec(&spec)
                    .map_err(|reason| vm.new_value_error(reason))?;
                if let Some(int) = receiver.as_ref().and_then(int_value) {
                    charge(int_decimal_cycles(int_bits(int)), 0, vm)?;
                }
                charge(sized(args), 0, vm)
            }
            Price::Round => {
                // Even small roundings divide and multiply big ints (~600 ns).
                charge(ROUND_CYCLES, 0, vm)?;
                if let Some(ndigits) = int_arg(args, 1) {
                    // log2(10) ≈ 3.33 bits per decimal digit.
                    let bits = u128::from(ndigits.unsigned_abs()) * 10 / 3;
                    check_int_bits(bits, vm)?;
                    charge(int_product_cycles(bits as u64, bits as u64), 0, vm)?;
                }
                charge(sized(args), 0, vm)
            }
            Price::Operator { op, reflected } => {
                charge(DUNDER_DISPATCH_CYCLES, 0, vm)?;
                let (Some(left), Some(right)) = (args.args.first(), args.args.get(1)) else {
                    return Ok(());
                };
                if reflected {
                    charge_operator(op, right, left, vm)
                } else {
                    charge_operator(op, left, right, vm)
                }
            }
            Price::Compare => {
                let shorter = args
                    .args
                    .iter()
                    .take(2)
                    .map(|a| size_cycles(size_of(a)))
                    .min()
                    .unwrap_or(0);
                charge(shorter.max(1), 0, vm)
            }
            Price::Repr => charge(REPR_CYCLES_PER_UNIT * size_cycles(receiver_size), 0, vm),
            Price::RangeSearch => {
                let Some(range) = receiver.as_ref() else {
                    return Ok(());
                };
                let needle_is_int = args
                    .args
                    .get(1)
                    .is_some_and(|n| n.class().is(vm.ctx.types.int_type));
                if !needle_is_int && range.downcast_ref::<PyRange>().is_some() {
                    let length = range.length(vm).unwrap_or(usize::MAX) as u64;
                    charge(length.saturating_mul(RANGE_SEARCH_CYCLES), 0, vm)?;
                }
                Ok(())
            }
        }
    }
}

/// Bytes formatting `value` can produce at most: its text, or for a
/// container four characters per element plus its nested bytes.
fn formatted_bytes_bound(value: &PyObjectRef) -> u64 {
    let (elements, bytes) = size_of(value);
    if value.downcast_ref::<PyStr>().is_some() {
        // A str formats as itself.
        return bytes;
    }
    // Bytes format as their repr (up to 4 characters a byte), an int as
    // its digits (under 3 per byte), a container's elements each through
    // their own (checked) repr plus a separator.
    bytes
        .saturating_mul(4)
        .saturating_add(elements.saturating_mul(64))
        .saturating_add(64)
}

/// The error a refused native raises.
pub(crate) fn refusal(
    native: &str,
    reason: &str,
    vm: &VirtualMachine,
) -> rustpython_vm::builtins::PyBaseExceptionRef {
    vm.new_type_error(format!("{native} is not available to actors: {reason}"))
}

/// The reason a native that no rule prices is refused.
pub(crate) const UNPRICED: &str =
    "the VM has no price for it (the allow-list is in docs/METERING.md, \"Natives\")";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_producing_prices_charge_the_result() {
        assert!(!Price::Free.charges_result());
        assert!(Price::Sized.charges_result());
        assert!(Price::Consuming.charges_result());
        assert!(!Price::Refused("x").charges_result());
    }
}
