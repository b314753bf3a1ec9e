//! Random tokens: lease holders and write tokens. 128 bits, URL-safe base64 without padding (22
//! characters), so they fit in S3 metadata headers, R2 custom metadata and URLs unchanged.

use crate::error::{Error, Result};

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A fresh random 128-bit token.
pub fn random_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    crate::platform::random_bytes(&mut bytes).map_err(|m| {
        Error::Storage(crate::error::StorageFailure { code: Some("NoRandomSource".into()), status: None, message: m })
    })?;
    Ok(base64url(&bytes))
}

/// A uniformly random float in [0, 1) for backoff jitter (falls back to 0.5 without randomness:
/// jitter is an optimisation, not a correctness property).
pub fn random_unit() -> f64 {
    let mut bytes = [0u8; 8];
    if crate::platform::random_bytes(&mut bytes).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

/// Lowercase hex (ETags, SigV4 hashes), by table rather than one `format!` per byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

pub fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// True for strings that could be one of our tokens (used to read metadata defensively).
pub fn looks_like_token(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| ALPHABET.contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_22_url_safe_chars_and_distinct() {
        let a = random_token().unwrap();
        let b = random_token().unwrap();
        assert_eq!(a.len(), 22);
        assert!(looks_like_token(&a));
        assert_ne!(a, b);
    }

    #[test]
    fn base64url_matches_rfc4648_vectors() {
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn unit_is_in_range() {
        for _ in 0..100 {
            let u = random_unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
