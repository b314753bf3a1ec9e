//! A JSON reader producing `serde_json::Value`, written here rather than taken from serde_json's
//! deserializer: that one is generic machinery (a `Deserializer`, visitors, its own float parser
//! and error texts) that made up a tenth of the npm package's wasm, while fencepost only ever reads
//! whole documents into a `Value`. It accepts exactly RFC 8259 JSON, as serde_json does: the same
//! numbers (integers as `u64`/`i64` when they fit, else the nearest `f64`; out-of-range floats
//! refused), the same strings (escapes, surrogate pairs; no raw control characters, no lone
//! surrogates, valid UTF-8), duplicate keys resolved to the last, nesting bounded, nothing after
//! the value. The tests check it against serde_json itself. One difference, on purpose: `-0` is the
//! integer 0, as Python's `json` (CairnDB) reads it, not serde_json's float -0.0.

use serde_json::{Map, Number, Value};

use super::plain_run;
use crate::base::number::{parse_i64, parse_u64};

/// How deeply a document may nest before it is refused (serde_json's limit too): recursion here is
/// bounded, so no stored document can exhaust the stack.
const MAX_NESTING: usize = 128;

/// Why a text is not JSON, and where (a byte offset into it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseError {
    pub kind: ErrorKind,
    pub offset: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text ends inside a value.
    Eof,
    Syntax,
    /// Nested deeper than 128 levels (`MAX_NESTING`).
    TooDeep,
    /// A number beyond the range of `f64`.
    OutOfRange,
}

impl ParseError {
    /// 1-based line and column of the offset, as editors count them (columns in bytes).
    pub fn line_column(&self, text: &[u8]) -> (usize, usize) {
        let before = &text[..self.offset.min(text.len())];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let column = before.len() - before.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        (line, column)
    }
}

/// Read one JSON document.
pub fn read(text: &[u8]) -> Result<Value, ParseError> {
    let mut reader = Reader { text, at: 0 };
    let value = reader.value(0)?;
    reader.skip_whitespace();
    if reader.at < text.len() {
        return Err(reader.error(ErrorKind::Syntax));
    }
    Ok(value)
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

type Parsed<T> = Result<T, ParseError>;

impl Reader<'_> {
    fn error(&self, kind: ErrorKind) -> ParseError {
        ParseError { kind, offset: self.at }
    }

    /// A syntax error at the current byte, or the end of the text.
    fn unexpected(&self) -> ParseError {
        self.error(if self.at >= self.text.len() { ErrorKind::Eof } else { ErrorKind::Syntax })
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Parsed<()> {
        if self.peek() != Some(byte) {
            return Err(self.unexpected());
        }
        self.at += 1;
        Ok(())
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Parsed<Value> {
        for &b in word {
            self.eat(b)?;
        }
        Ok(value)
    }

    fn value(&mut self, depth: usize) -> Parsed<Value> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(b'[') => self.nested(depth, Self::array),
            Some(b'{') => self.nested(depth, Self::object),
            _ => Err(self.unexpected()),
        }
    }

    fn nested(&mut self, depth: usize, read: fn(&mut Self, usize) -> Parsed<Value>) -> Parsed<Value> {
        if depth >= MAX_NESTING {
            return Err(self.error(ErrorKind::TooDeep));
        }
        self.at += 1; // the opening bracket
        read(self, depth + 1)
    }

    /// A comma-separated sequence up to `close`, the reader just past the opening bracket; `item`
    /// reads each element.
    fn sequence(&mut self, close: u8, mut item: impl FnMut(&mut Self) -> Parsed<()>) -> Parsed<()> {
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            item(self)?;
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b) if b == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Parsed<Value> {
        let mut items = Vec::new();
        self.sequence(b']', |r| {
            items.push(r.value(depth)?);
            Ok(())
        })?;
        Ok(Value::Array(items))
    }

    fn object(&mut self, depth: usize) -> Parsed<Value> {
        let mut map = Map::new();
        self.sequence(b'}', |r| {
            r.skip_whitespace();
            if r.peek() != Some(b'"') {
                return Err(r.unexpected());
            }
            let key = r.string()?;
            r.skip_whitespace();
            r.eat(b':')?;
            let value = r.value(depth)?;
            map.insert(key, value); // a repeated key: the last one wins
            Ok(())
        })?;
        Ok(Value::Object(map))
    }

    /// A string, the reader at its opening quote.
    fn string(&mut self) -> Parsed<String> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            // Copy the run up to the next quote, backslash or control character in one go: runs
            // of printable ASCII, and between them the bytes a string also carries as they are
            // (DEL, and UTF-8 sequences, checked as UTF-8 at the end).
            let rest = self.text.get(self.at..).unwrap_or_default();
            let mut run = plain_run(rest);
            while rest.get(run).is_some_and(|b| *b >= 0x7f) {
                run += 1;
                run += plain_run(rest.get(run..).unwrap_or_default());
            }
            out.extend_from_slice(&rest[..run]);
            self.at += run;
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    // Raw bytes were copied as they were: the string must be valid UTF-8.
                    return String::from_utf8(out)
                        .map_err(|_| ParseError { kind: ErrorKind::Syntax, offset: self.at - 1 });
                }
                Some(b'\\') => {
                    self.at += 1;
                    let c = self.escape()?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                _ => return Err(self.unexpected()), // a control character, or the end
            }
        }
    }

    /// The character of an escape, the reader just past its backslash.
    fn escape(&mut self) -> Parsed<char> {
        let Some(b) = self.peek() else { return Err(self.unexpected()) };
        self.at += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{08}',
            b'f' => '\u{0c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate must be followed by an escaped low one.
                        self.eat(b'\\')?;
                        self.eat(b'u')?;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.error(ErrorKind::Syntax));
                        }
                        let c = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                        char::from_u32(c).ok_or_else(|| self.error(ErrorKind::Syntax))?
                    }
                    0xDC00..=0xDFFF => return Err(self.error(ErrorKind::Syntax)),
                    _ => char::from_u32(u32::from(unit)).ok_or_else(|| self.error(ErrorKind::Syntax))?,
                }
            }
            _ => {
                self.at -= 1;
                return Err(self.error(ErrorKind::Syntax));
            }
        })
    }

    fn hex4(&mut self) -> Parsed<u16> {
        let mut unit = 0u16;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(self.unexpected()),
            };
            unit = unit << 4 | u16::from(digit);
            self.at += 1;
        }
        Ok(unit)
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`: an integer when it has neither fraction
    /// nor exponent and fits `u64`/`i64`, otherwise the nearest `f64` (std's correctly rounded
    /// parse); beyond `f64`'s range it is refused.
    fn number(&mut self) -> Parsed<Number> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.unexpected()),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.require_digits()?;
            integral = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.require_digits()?;
            integral = false;
        }
        // Only ASCII digits, signs, '.' and 'e' were consumed.
        let text = std::str::from_utf8(&self.text[start..self.at]).map_err(|_| self.error(ErrorKind::Syntax))?;
        if integral {
            let exact = if negative { parse_i64(text).map(Number::from) } else { parse_u64(text).map(Number::from) };
            if let Some(n) = exact {
                return Ok(n);
            }
        }
        let f = exact_f64(text).unwrap_or_else(|| crate::host::float::parse_f64(text));
        Number::from_f64(f).ok_or(ParseError { kind: ErrorKind::OutOfRange, offset: start })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn require_digits(&mut self) -> Parsed<()> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.unexpected());
        }
        self.digits();
        Ok(())
    }
}

/// Clinger's fast path: a decimal of at most 15 significant digits whose power of ten is at most 22
/// in size is one exact multiplication or division of two exact doubles, so correctly rounded. Most
/// numbers in documents are such; the rest go to the platform's full parser.
fn exact_f64(text: &str) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, i32::try_from(parse_i64(exponent)?).ok()?),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = int.bytes().chain(frac.bytes()).skip_while(|b| *b == b'0');
    let mut m: u64 = 0;
    let mut count = 0;
    for b in digits {
        count += 1;
        if count > 15 {
            return None;
        }
        m = m * 10 + u64::from(b - b'0');
    }
    let e = exponent.checked_sub(i32::try_from(frac.len()).ok()?)?;
    let magnitude = POW10.get(e.unsigned_abs() as usize)?;
    let f = if e >= 0 { m as f64 * magnitude } else { m as f64 / magnitude };
    Some(if negative { -f } else { f })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agreement with serde_json: the same value for what both accept, a refusal for what it refuses.
    fn agrees(text: &str) {
        let ours = read(text.as_bytes());
        let theirs = serde_json::from_str::<Value>(text);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{text:?}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{text:?}: ours {ours:?}, serde_json {theirs:?}"),
        }
    }

    #[test]
    fn agrees_with_serde_json() {
        for text in [
            "null",
            "true",
            "false",
            " 0 ",
            "1",
            "-1",
            "12345678901234567890",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "1.5",
            "-0.0",
            "1e3",
            "1E+3",
            "1e-3",
            "2.5e-324",
            "1e-400",
            "1e308",
            "1.7976931348623157e308",
            "1e309",
            "-1e400",
            "0.1",
            "3.141592653589793",
            "123456789012345678901234567890.5",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "0x10",
            "NaN",
            "Infinity",
            r#""""#,
            r#""a""#,
            r#""\"\\\/\b\f\n\r\t""#,
            r#""\u0041\u00e9\u20ac""#,
            r#""\ud83d\ude00""#,
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83d\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            "\"a\tb\"",
            "\"a\nb\"",
            "\"\u{7f}\"",
            "\"é😀\"",
            // Longer than a word: special bytes on both sides of eight-byte boundaries.
            "\"abcdefgh\u{7f}ijklmnopé qrstuvwx😀yz\\n0123456789abcdef\\\"ghij\"",
            "\"abcdefghijklmno\u{1}pq\"",
            "\"abcdefghijklmnopqrstuvw\"",
            "[]",
            "[1,2,3]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{}",
            r#"{"a":1}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{a:1}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"b":[{"c":null}],"a":{}}"#,
            "[1] x",
            "",
            " ",
            "[",
            "{",
            r#"{"a":"#,
            "nul",
            "truex",
            " \t\r\n[ 1 , { \"k\" : [ ] } ] \n",
        ] {
            agrees(text);
        }
    }

    /// The one deliberate difference: `-0` is the integer 0, as Python's `json` (CairnDB) reads it,
    /// so both write it back as `0`; serde_json reads it as the float -0.0 (written `-0.0`).
    #[test]
    fn minus_zero_is_an_integer_as_in_python() {
        assert_eq!(read(b"-0").unwrap(), Value::from(0));
        assert_eq!(crate::codec::json::to_canonical(&read(b"[-0,-0.0]").unwrap()), b"[0,-0.0]");
    }

    #[test]
    fn refuses_what_serde_json_refuses_in_bytes() {
        for bytes in
            [&b"\"\xff\""[..], b"\"abcdefghij\xffklmnop\"", b"\"\xc3\"", b"\"\xed\xa0\x80\"", b"[\"ok\", \"\xe2\x82\"]"]
        {
            assert!(read(bytes).is_err());
            assert!(serde_json::from_slice::<Value>(bytes).is_err());
        }
    }

    #[test]
    fn fast_path_floats_are_the_correctly_rounded_ones() {
        for text in
            ["0.1", "-2.5e3", "1.5", "123456789012345e-22", "9e22", "3.14159", "0.000001", "1e-22", "-0.0", "7e0"]
        {
            assert_eq!(exact_f64(text), Some(text.parse::<f64>().unwrap()), "{text}");
        }
        for slow in ["1234567890123456", "1e23", "1e-23", "2.5e-324"] {
            assert_eq!(exact_f64(slow), None, "{slow}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(read(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(MAX_NESTING + 1), "]".repeat(MAX_NESTING + 1));
        assert_eq!(read(deep.as_bytes()).unwrap_err().kind, ErrorKind::TooDeep);
        let hostile = "[".repeat(1_000_000);
        assert!(read(hostile.as_bytes()).is_err());
    }

    #[test]
    fn errors_say_what_and_where() {
        let text = b"{\"a\":\n  tru}";
        let e = read(text).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Syntax);
        assert_eq!(e.line_column(text), (2, 6));
        assert_eq!(read(b"[1,").unwrap_err().kind, ErrorKind::Eof);
        assert_eq!(read(b"1e999").unwrap_err().kind, ErrorKind::OutOfRange);
    }

    /// Random and mutated documents: never a panic, and the same verdict as serde_json.
    #[test]
    fn mutations_agree_with_serde_json() {
        let base = r#"{"deadline_at":"2026-01-01T00:00:30.000000Z","epoch":7,"holder":"h","state":{"a":[1,-2.5e3,"\u00e9x",true,null]}}"#;
        let mut next = crate::test_support::xorshift(0x2545_F491_4F6C_DD1Du64);
        let alphabet = b"{}[]\",:.-+eE0123456789\\u tfnrl";
        for _ in 0..20_000 {
            let mut bytes = base.as_bytes().to_vec();
            for _ in 0..(next() % 3 + 1) {
                let i = (next() as usize) % bytes.len();
                bytes[i] = alphabet[(next() as usize) % alphabet.len()];
            }
            let text = String::from_utf8(bytes).unwrap();
            agrees(&text);
        }
    }
}
