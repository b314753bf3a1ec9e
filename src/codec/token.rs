//! Random tokens: lease holders and write tokens. 128 bits, URL-safe base64 without padding (22
//! characters), so they fit in S3 metadata headers, R2 custom metadata and URLs unchanged.

use super::encoding::{ALPHABET, base64url};
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
}
