//! Random tokens: lease holders and write tokens. 128 bits, URL-safe base64 without padding (22
//! characters), so they fit in S3 metadata headers, R2 custom metadata and URLs unchanged.

use super::encoding::base64url;
use crate::base::error::{Error, Result, StorageFailure};

/// A fresh random 128-bit token.
pub fn random_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    crate::host::random::random_bytes(&mut bytes).map_err(|m| {
        Error::Storage(StorageFailure { code: Some("NoRandomSource".into()), status: None, message: m, key: None })
    })?;
    Ok(base64url(&bytes))
}

/// True for strings that could be one of our tokens (used to read metadata defensively).
pub fn looks_like_token(s: &str) -> bool {
    // The alphabet's ranges tested, not the alphabet searched: a search is a `memchr` call per
    // byte, and every read from an HTTP or custom store checks its 34 tokens this way.
    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
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
    fn a_token_is_made_of_the_alphabet_and_nothing_else() {
        for b in 0..=u8::MAX {
            let one = [b];
            let s = std::str::from_utf8(&one).unwrap_or("\u{80}");
            let expected = super::super::encoding::ALPHABET.contains(&b);
            assert_eq!(looks_like_token(s), expected, "byte {b}");
        }
        assert!(!looks_like_token(""));
        assert!(looks_like_token(&"a".repeat(64)));
        assert!(!looks_like_token(&"a".repeat(65)));
        assert!(!looks_like_token("ab cd"));
    }
}
