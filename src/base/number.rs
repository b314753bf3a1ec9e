//! Numbers as text without `core::fmt`'s float formatting (which would add its tables to the wasm):
//! Python's `repr(float)` for the wire format and JS's number printing for messages share one
//! shortest-digits routine.

/// `text` as an optionally signed decimal integer: whether it is negative, and its magnitude; `None`
/// unless it is `+`, `-` or nothing, then ASCII digits, within `u64`. The crate's one integer
/// parser, written here because std's `str::parse` is compiled once per integer type it reads
/// (three of them were 1.4 KB of the wasm).
pub(crate) fn parse_integer(text: &str) -> Option<(bool, u64)> {
    let (negative, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        all => (false, all),
    };
    if digits.is_empty() {
        return None;
    }
    // `n > MAX / 10` rather than `checked_mul(10)`: wasm32 has no high-half multiply, so the
    // checked form costs a call to a 128-bit multiply per digit.
    let magnitude = digits.iter().try_fold(0u64, |n, &d| {
        let digit = d.wrapping_sub(b'0');
        if digit > 9 || n > u64::MAX / 10 {
            return None;
        }
        (n * 10).checked_add(u64::from(digit))
    })?;
    Some((negative, magnitude))
}

/// `text` as an unsigned decimal integer (an optional `+`, then digits), as `str::parse::<u64>` reads it.
pub(crate) fn parse_u64(text: &str) -> Option<u64> {
    match parse_integer(text)? {
        (false, n) => Some(n),
        (true, _) => None,
    }
}

/// `text` as a signed decimal integer within `i64`, as `str::parse::<i64>` reads it.
pub(crate) fn parse_i64(text: &str) -> Option<i64> {
    match parse_integer(text)? {
        (false, n) => i64::try_from(n).ok(),
        (true, n) => 0i64.checked_sub_unsigned(n),
    }
}

/// `n`'s decimal digits appended to `out`, zero-padded to at least `width`: the crate's one
/// integer printer, written here rather than through `core::fmt` (its machinery per call, and a
/// `String::push` per character, cost several times as much for the integers of every JSON
/// document and timestamp written).
pub(crate) fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let from = at.min(digits.len().saturating_sub(width));
    out.push_str(std::str::from_utf8(digits.get(from..).unwrap_or_default()).unwrap_or_default());
}

/// Python's `repr(float)`: the shortest round-tripping digits, positional notation when the decimal
/// exponent is in [-4, 16), scientific (`1e+16`, `1.5e-05`) otherwise, always with a `.0` or an
/// exponent so it reads back as a float.
pub(crate) fn python_float_repr(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    shortest_text(f, -4..16, ".0", 2)
}

/// A number for a message, as JS would print it (`30`, `0.5`, `1e+21`), without pulling float
/// formatting from `core::fmt` into the wasm: the same shortest digits as the wire format.
pub fn number_text(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".into()
        } else if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if f == 0.0 {
        return "0".into();
    }
    shortest_text(f, -6..21, "", 1)
}

/// The shortest digits of a finite, non-zero `f`: positional when the decimal exponent is in
/// `plain` (integral values ending in `whole`), otherwise scientific with a signed exponent of at
/// least `exp_digits` digits. Python's repr and JS's number printing differ only in those choices.
fn shortest_text(f: f64, plain: std::ops::Range<i32>, whole: &str, exp_digits: usize) -> String {
    let (negative, digits, exp) = shortest_digits(f);
    let sign = if negative { "-" } else { "" };
    if plain.contains(&exp) {
        return format!("{sign}{}", positional(&digits, exp, whole));
    }
    let (first, rest) = crate::base::text::split_at(&digits, 1);
    let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
    let exp_sign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{first}{frac}e{exp_sign}{:0exp_digits$}", exp.abs())
}

/// `digits` × 10^(exp - digits + 1) written out without an exponent; `whole` ends integral values.
fn positional(digits: &str, exp: i32, whole: &str) -> String {
    let point = exp + 1; // position of the decimal point within `digits`
    if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{}{}{whole}", digits, "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = crate::base::text::split_at(digits, point as usize);
        format!("{int}.{frac}")
    }
}

/// The shortest round-tripping decimal digits of a finite, non-zero `f`, the closest of the
/// shortest with ties to even, as Python's repr picks them: (negative, digits without leading or
/// trailing zeros, exponent of the first digit).
pub(crate) fn shortest_digits(f: f64) -> (bool, String, i32) {
    let text = round_trip_text(f);
    let text = text.as_str();
    let (negative, text) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let (mantissa, exp) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let exp = parse_i64(exp).unwrap_or(0) as i32;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // `format!` is in the wasm anyway; collecting the two `Chars` brought code of their own.
    let all = format!("{int}{frac}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_owned();
    // The first significant digit sits `int.len() - 1 - leading` places left of the units.
    (negative, digits, exp + int.len() as i32 - 1 - leading as i32)
}

/// `f` as shortest round-tripping text (`123.45`, `1e-7`, `1.5e+21`): in wasm the host's own
/// number printing (ECMAScript's Number::toString picks the same digits: the closest of the
/// shortest, ties to even), which every host has, so the module carries no float printer;
/// natively ryu.
#[cfg(target_arch = "wasm32")]
fn round_trip_text(f: f64) -> String {
    js_sys::Number::from(f).to_string_with_radix(10).map(String::from).unwrap_or_default()
}

#[cfg(not(target_arch = "wasm32"))]
fn round_trip_text(f: f64) -> String {
    ryu::Buffer::new().format_finite(f).to_owned()
}

/// The next output of SplitMix64 from `state`: tiny, and every bit of its output depends on the
/// seed. Not a secure generator: for simulations and a manual clock's jitter, which need repeats.
pub(crate) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 64 random bits as a float in [0, 1).
pub(crate) fn unit_float(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_as_std_reads_them() {
        let cases = [
            "0",
            "-0",
            "+0",
            "7",
            "-7",
            "+7",
            "007",
            "",
            "-",
            "+",
            "1a",
            " 1",
            "1 ",
            "--1",
            "+-1",
            "1.0",
            "١",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
        ];
        for text in cases {
            assert_eq!(parse_i64(text), text.parse::<i64>().ok(), "{text:?}");
            assert_eq!(parse_u64(text), text.parse::<u64>().ok(), "{text:?}");
        }
    }
}
