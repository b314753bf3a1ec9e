//! Canonical JSON, byte-identical to CairnDB's `json.dumps(v, sort_keys=True, separators=(",", ":"))`
//! (with Python's default `ensure_ascii=True`): object keys sorted by code point, no whitespace,
//! every character outside printable ASCII escaped as `\uXXXX` (astral characters as a UTF-16
//! surrogate pair), floats in Python's `repr` form. Two writers that agree on a value therefore
//! agree on its bytes, and so on its S3 ETag.

use serde_json::Value;

use crate::base::error::{Error, Result};
use crate::base::number::{push_digits, python_float_repr};
use crate::codec::encoding::HEX_DIGITS;

mod finite;
/// A value as JSON, refusing NaN and the infinities (serde_json writes them as `null`).
pub(crate) use finite::to_value;
mod read;

pub use read::{ErrorKind, read};

/// Encode `value` canonically.
pub fn to_canonical(value: &Value) -> Vec<u8> {
    to_canonical_text(value).into_bytes()
}

/// [`to_canonical`] as text (what a binding hands to JS: no second UTF-8 check).
pub fn to_canonical_text(value: &Value) -> String {
    let mut out = String::with_capacity(64);
    write_value(&mut out, value);
    out
}

/// Parse stored bytes. Any valid JSON is accepted (not only canonical JSON), so documents written by
/// other tools are readable.
pub fn parse(bytes: &[u8]) -> std::result::Result<Value, String> {
    read(bytes).map_err(|e| {
        let what = match e.kind {
            ErrorKind::Eof => "it ends too early",
            ErrorKind::Syntax => "a syntax error",
            ErrorKind::TooDeep => "nested too deeply",
            ErrorKind::OutOfRange => "a value out of range",
        };
        let (line, column) = e.line_column(bytes);
        format!("not JSON: {what} at line {line} column {column}")
    })
}

/// How deeply a value written by fencepost may nest. Readers (`parse` here, Python's json in
/// CairnDB) refuse very deep documents, so a deeper value would be written but never read back;
/// one level is kept for the lease document around a state.
pub const MAX_DEPTH: usize = 120;

/// Check a value before it is written: finite numbers only (a value built in Rust may have gone
/// through `f64`), and at most [`MAX_DEPTH`] levels of nesting.
pub fn check_value(value: &Value) -> Result<()> {
    fn walk(value: &Value, depth: usize) -> Result<()> {
        match value {
            Value::Number(n) if n.as_f64().is_some_and(|f| !f.is_finite()) => {
                Err(Error::invalid("numbers must be finite"))
            }
            Value::Array(_) | Value::Object(_) if depth >= MAX_DEPTH => {
                Err(Error::invalid(format!("value nests deeper than {MAX_DEPTH} levels")))
            }
            Value::Array(items) => items.iter().try_for_each(|v| walk(v, depth + 1)),
            Value::Object(map) => map.values().try_for_each(|v| walk(v, depth + 1)),
            _ => Ok(()),
        }
    }
    walk(value, 0)
}

/// Validate a value produced by a caller before it is encoded and written.
pub(crate) fn checked(value: Value) -> Result<Value> {
    check_value(&value)?;
    Ok(value)
}

/// `value` as the JSON fencepost stores: the typed API's way in. One that does not serialize (a map
/// with non-string keys, a NaN or an infinity, a failing `Serialize`) is an
/// [`Error::InvalidArgument`] naming `what` and the key; nothing is written.
pub(crate) fn to_json<T: serde::Serialize>(value: &T, what: &str, key: &str) -> Result<Value> {
    finite::to_value(value).map_err(|e| {
        Error::invalid(format!("the {what} for {} does not serialize as JSON: {e}", crate::base::error::quoted(key)))
    })
}

/// A stored JSON value as `T`: the typed API's way out. One that is not a `T` is [`Error::Corrupt`],
/// naming the key, `what` it is and what serde said; nothing was written.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(value: Value, what: &str, key: &str) -> Result<T> {
    serde_json::from_value(value).map_err(|e| Error::corrupt(key, format!("the {what} is not the type asked for: {e}")))
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            // Keys by code point, as Python sorts them: Rust orders `str` by UTF-8 bytes, which is
            // the same order (JS's default sort, by UTF-16 units, differs for astral characters).
            // serde_json's map iterates in that order already, unless some crate in the build
            // turns on its `preserve_order`: then the keys are sorted here (with the sort the
            // stores' listings use, so no second sort routine is compiled in).
            if maps_iterate_sorted() {
                write_fields(out, map.iter().map(|(k, v)| (k.as_str(), v)), write_value);
            } else {
                let mut keys: Vec<&String> = map.keys().collect();
                crate::base::sort::sort(&mut keys);
                write_fields(out, keys.into_iter().filter_map(|k| Some((k.as_str(), map.get(k)?))), write_value);
            }
        }
    }
}

/// An object of these fields, in the order given, appended to `out` (a map's, [`fields_text`]'s or
/// [`texts_object`]'s), each value written by `write`.
fn write_fields<'a, V: ?Sized + 'a>(
    out: &mut String,
    fields: impl Iterator<Item = (&'a str, &'a V)>,
    write: fn(&mut String, &V),
) {
    out.push('{');
    for (i, (k, v)) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, k);
        out.push(':');
        write(out, v);
    }
    out.push('}');
}

/// The JSON text of an object whose values are JSON text already (a lease's snapshot, a value
/// written once), the fields in the order given: canonical when the caller gives them in code-point
/// order of their keys and each text is canonical.
pub fn texts_object(fields: &[(&str, &str)]) -> String {
    let mut out = String::new();
    write_fields(&mut out, fields.iter().map(|(k, v)| (*k, *v)), String::push_str);
    out
}

/// The canonical JSON text of an object with these named fields, given in any order: what a
/// binding replies, whose few fields are not worth a map (each key allocated, inserted, iterated
/// and freed: about a tenth of a memory-store call's instructions in the npm package).
pub fn fields_text(fields: &mut [(&str, Value)]) -> String {
    crate::base::sort::sort_by(fields, |a, b| a.0 < b.0);
    let mut out = String::with_capacity(64);
    write_fields(&mut out, fields.iter().map(|(k, v)| (*k, v)), write_value);
    out
}

/// Does serde_json's map iterate in key order (a `BTreeMap`, unless some crate in the build turns
/// on its `preserve_order`)? Asked of one map once, rather than of every map written.
fn maps_iterate_sorted() -> bool {
    static SORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SORTED.get_or_init(|| {
        let mut map = serde_json::Map::new();
        map.insert("b".into(), Value::Null);
        map.insert("a".into(), Value::Null);
        map.keys().next().is_some_and(|k| k == "a")
    })
}

fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        if i < 0 {
            out.push('-');
        }
        push_digits(out, i.unsigned_abs(), 1);
    } else if let Some(u) = n.as_u64() {
        push_digits(out, u, 1);
    } else if let Some(f) = n.as_f64() {
        out.push_str(&python_float_repr(f));
    }
}

/// `s` as a JSON string literal, escaped as canonical JSON escapes it (request bodies written by
/// hand rather than built as a `Value`).
pub(crate) fn string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

/// The length of the run at the start of `bytes` that a JSON string carries as it is, both ways:
/// printable ASCII other than `"` and `\\`. Found eight bytes at a time (each test below says
/// whether any byte of a word is of a kind; only a word with one is looked at byte by byte): a
/// lease's snapshot or document is mostly such runs (its write provenance, 800 bytes of tokens),
/// and at `opt-level = "z"` a loop over single bytes costs about ten instructions each.
#[inline(never)]
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = ONES * 0x80;
    let has_zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let plain = |b: &u8| (b' '..=b'~').contains(b) && *b != b'"' && *b != b'\\';
    let mut at = 0;
    for word in bytes.chunks_exact(8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        let above_tilde = (w.wrapping_add(ONES) | w) & HIGH;
        if below_space | above_tilde | has_zero(w ^ (ONES * 0x22)) | has_zero(w ^ (ONES * 0x5c)) != 0 {
            break;
        }
        at += 8;
    }
    let rest = bytes.get(at..).unwrap_or_default();
    at + rest.iter().position(|b| !plain(b)).unwrap_or(rest.len())
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    // Runs of printable ASCII go out in one copy (no UTF-8 decoding for them); only what needs
    // escaping is written character by character.
    let bytes = s.as_bytes();
    let (mut plain, mut at) = (0, 0);
    loop {
        at += plain_run(bytes.get(at..).unwrap_or_default());
        if at >= bytes.len() {
            break;
        }
        out.push_str(s.get(plain..at).unwrap_or_default());
        let c = s.get(at..).and_then(|rest| rest.chars().next()).unwrap_or(char::REPLACEMENT_CHARACTER);
        at += c.len_utf8();
        plain = at;
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{08}' => "\\b",
            '\u{0c}' => "\\f",
            _ => "",
        };
        if !escape.is_empty() {
            out.push_str(escape);
            continue;
        }
        let mut units = [0u16; 2];
        for &unit in c.encode_utf16(&mut units).iter() {
            out.push_str("\\u");
            for shift in [12, 8, 4, 0] {
                out.push(char::from(HEX_DIGITS[usize::from((unit >> shift) & 0xf)]));
            }
        }
    }
    out.push_str(s.get(plain..).unwrap_or_default());
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::number::{number_text, python_float_repr, shortest_digits};
    use serde_json::json;

    fn enc(v: Value) -> String {
        String::from_utf8(to_canonical(&v)).unwrap()
    }

    #[test]
    fn matches_python_sort_keys_compact_ascii() {
        // Expected strings produced by CPython 3.11:
        // json.dumps(v, sort_keys=True, separators=(",", ":"))
        assert_eq!(enc(json!({"b": 1, "a": [true, null, "x"]})), r#"{"a":[true,null,"x"],"b":1}"#);
        assert_eq!(enc(json!({"z": {"y": {"x": []}}, "a": {}})), r#"{"a":{},"z":{"y":{"x":[]}}}"#);
        assert_eq!(enc(json!("é\u{1F600}")), r#""\u00e9\ud83d\ude00""#);
        assert_eq!(enc(json!("tab\tq\"b\\\u{7f}\u{1}")), r#""tab\tq\"b\\\u007f\u0001""#);
        assert_eq!(enc(json!(-12345678901234i64)), "-12345678901234");
        assert_eq!(enc(json!(18446744073709551615u64)), "18446744073709551615");
        // Integers are written digit by digit here, not by `to_string`: the same text at the edges.
        for i in [0, 1, -1, 9, 10, -10, 99, 100, i64::MAX, i64::MIN, i64::MIN + 1] {
            assert_eq!(enc(json!(i)), i.to_string());
        }
        assert_eq!(enc(json!(u64::MAX - 1)), (u64::MAX - 1).to_string());
    }

    #[test]
    fn plain_run_stops_at_the_first_byte_a_string_cannot_carry_as_it_is() {
        // Every byte value at every place of the first three words (and past them), after a run
        // of plain text: the word-at-a-time scan against the byte-by-byte definition.
        let plain = |b: u8| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\';
        for at in 0..27 {
            for byte in 0..=255u8 {
                let mut text = vec![b'a'; 30];
                text[at] = byte;
                let expected = if plain(byte) { 30 } else { at };
                assert_eq!(plain_run(&text), expected, "byte {byte:#x} at {at}");
                assert_eq!(plain_run(&text[..at]), at);
            }
        }
        assert_eq!(plain_run(b""), 0);
    }

    #[test]
    fn texts_object_is_the_canonical_object_of_canonical_texts_in_key_order() {
        let (a, b) = (json!({"y": [1, "é"], "x": null}), json!(7));
        let text = texts_object(&[("a", &to_canonical_text(&a)), ("b", &to_canonical_text(&b))]);
        assert_eq!(text, to_canonical_text(&json!({"a": a, "b": b})));
        assert_eq!(texts_object(&[]), "{}");
    }

    #[test]
    fn fields_text_is_the_canonical_object_whatever_the_order_given() {
        let mut fields =
            [("value", json!({"b": 1, "a": 2})), ("key", json!("k")), ("\u{ff61}", json!(1)), ("etag", json!(null))];
        let map: serde_json::Map<String, Value> = fields.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        assert_eq!(fields_text(&mut fields), enc(Value::Object(map)));
        assert_eq!(fields_text(&mut []), "{}");
    }

    #[test]
    fn keys_sort_by_code_point_not_utf16() {
        // U+FF61 sorts before U+1F600 by code point; UTF-16 order would put the surrogate first.
        let v = json!({"\u{1F600}": 1, "\u{FF61}": 2, "a": 3, "B": 4});
        assert_eq!(enc(v), r#"{"B":4,"a":3,"\uff61":2,"\ud83d\ude00":1}"#);
    }

    #[test]
    fn floats_use_python_repr() {
        for (f, s) in [
            (1.0, "1.0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456789012345.6, "123456789012345.6"),
            (1e22, "1e+22"),
            (-0.0, "-0.0"),
            (5e-324, "5e-324"),
        ] {
            assert_eq!(python_float_repr(f), s, "{f}");
        }
    }

    #[test]
    fn depth_is_bounded_so_every_written_value_reads_back() {
        let mut v = json!(1);
        for _ in 0..MAX_DEPTH {
            v = json!([v]);
        }
        check_value(&v).unwrap();
        assert_eq!(parse(&to_canonical(&json!({ "state": v.clone() }))).unwrap()["state"], v);
        assert!(matches!(check_value(&json!([v])), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn parse_accepts_any_json() {
        assert_eq!(parse(b" { \"a\" : 1 } ").unwrap(), json!({"a": 1}));
        assert!(parse(b"{nope").is_err());
    }

    #[test]
    fn numbers_in_messages_read_as_js_prints_them() {
        for (f, s) in [
            (30.0, "30"),
            (0.5, "0.5"),
            (-2.25, "-2.25"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-7"),
            (123456.0, "123456"),
            (0.000001, "0.000001"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (0.0, "0"),
            (1e-300, "1e-300"),
        ] {
            assert_eq!(number_text(f), s, "{f}");
        }
    }

    /// Shortest (as many digits as core::fmt's shortest form) and round-tripping; on exact ties
    /// ryu rounds half to even, as Python's repr does (core::fmt does not: for
    /// -1149636667324797.25 it prints ...797.3 where Python prints ...797.2).
    #[test]
    fn shortest_digits_round_trip_and_are_shortest() {
        // -1149636667324797.25 exactly: a tie between ...797.2 and ...797.3 at 17 digits.
        assert_eq!(python_float_repr(f64::from_bits(0xC310_565A_94B4_E5F5)), "-1149636667324797.2");
        let mut next = crate::test_support::xorshift(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let f = f64::from_bits(next());
            if !f.is_finite() || f == 0.0 {
                continue;
            }
            let (negative, digits, exp) = shortest_digits(f);
            let back: f64 = format!("{}{}.{}e{}", if negative { "-" } else { "" }, &digits[..1], &digits[1..], exp)
                .parse()
                .unwrap();
            assert_eq!(back, f, "{digits} e{exp}");
            let sci = format!("{f:e}");
            let core_digits = sci.split_once('e').unwrap().0.chars().filter(char::is_ascii_digit).count();
            assert_eq!(digits.len(), core_digits, "{f:e}");
        }
    }
}
