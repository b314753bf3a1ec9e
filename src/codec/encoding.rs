//! Lowercase hex, base64 (standard and URL-safe): small enough to write here rather than add a
//! dependency to the wasm.

/// The URL-safe base64 alphabet (RFC 4648 §5).
pub(crate) const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Lowercase hex digits.
pub(crate) const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex (ETags, SigV4 hashes), by table rather than one `format!` per byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX_DIGITS[usize::from(b >> 4)] as char);
        out.push(HEX_DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// URL-safe base64 without padding.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    encode64(bytes, |six| ALPHABET[six] as char, false)
}

/// Standard base64 with padding (RFC 4648 §4): Azure's keys and signatures.
pub(crate) fn base64(bytes: &[u8]) -> String {
    encode64(bytes, |six| standard(six as u8) as char, true)
}

/// The standard alphabet: the URL-safe one with `+` and `/` for its last two letters.
fn standard(six: u8) -> u8 {
    match ALPHABET[usize::from(six & 63)] {
        b'-' => b'+',
        b'_' => b'/',
        c => c,
    }
}

fn encode64(bytes: &[u8], letter: impl Fn(usize) -> char, pad: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(letter((n >> (18 - 6 * i) & 63) as usize));
        }
        if pad {
            out.extend(std::iter::repeat_n('=', 4 - chars));
        }
    }
    out
}

/// Standard base64 (padding optional, no whitespace) back to bytes; `None` when it is not.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let six = (0..64u8).find(|&i| standard(i) == c)?;
        acc = acc << 6 | u32::from(six);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    // Leftover bits must be zero padding of the last byte, and a lone sixth of a byte is no base64.
    (text.len() % 4 != 1 && acc & ((1 << bits) - 1) == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_rfc4648_vectors() {
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn base64_round_trips_rfc4648_vectors() {
        for (plain, coded) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(plain.as_bytes()), coded);
            assert_eq!(base64_decode(coded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
        assert_eq!(base64_decode("+/8=").as_deref(), Some(&[0xfb, 0xff][..]));
        for bad in ["Zg=x", "Z", "Zh==", "-_8=", "Zm 9v"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }
}
