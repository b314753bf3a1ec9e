//! Key rules. Keys become URL paths (S3) and object names shared with CairnDB, so the rules keep
//! them unambiguous everywhere: URL parsers rewrite `.`/`..` segments, stores that keep objects as
//! a tree of paths fold empty segments (SeaweedFS stores `a//b` and `/a/b` as `a/b`, and `a/` as
//! a directory with no bytes; Azure and SeaweedFS store `a\b` as `a/b` too), control characters
//! break headers and XML, and CairnDB's engine owns a few top-level prefixes.

use crate::base::error::quoted;
use crate::base::error::{Error, Result};

pub const MAX_KEY_BYTES: usize = 1024;
pub const RESERVED_PREFIXES: [&str; 4] = ["log/", "snapshots/", "logs/", "txapplied/"];

/// Check a key used by any fencepost operation.
pub fn validate_key(key: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::invalid("key must not be empty"));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::invalid(format!("key is {} bytes; the limit is {MAX_KEY_BYTES} UTF-8 bytes", key.len())));
    }
    check_characters(key, "key")?;
    if key.split('/').any(|seg| seg.is_empty() || seg == "." || seg == "..") {
        return Err(Error::invalid(format!(
            "key {} has an empty, '.' or '..' path segment (a leading or trailing '/', or '//')",
            quoted(key)
        )));
    }
    reserved_check(key, "key")
}

/// The reserved prefix `key` is under, if any: CairnDB's engine owns those objects, so fencepost
/// neither writes nor deletes them, even when a listing shows them.
pub fn reserved_prefix(key: &str) -> Option<&'static str> {
    RESERVED_PREFIXES.into_iter().find(|p| key.starts_with(p))
}

/// Refuse `name` (a key, or a prefix that would list only keys) under a reserved prefix; `what`
/// says which it is in the message.
pub fn reserved_check(name: &str, what: &str) -> Result<()> {
    match reserved_prefix(name) {
        Some(p) => Err(Error::invalid(format!("{what} {} is under the reserved prefix {}", quoted(name), quoted(p)))),
        None => Ok(()),
    }
}

/// Check a list prefix: may be empty; otherwise the same character rules as a key.
pub fn validate_prefix(prefix: &str) -> Result<()> {
    if prefix.len() > MAX_KEY_BYTES {
        return Err(Error::invalid(format!("prefix is longer than {MAX_KEY_BYTES} bytes")));
    }
    check_characters(prefix, "prefix")
}

/// Check a store prefix (`s3Store({prefix})`): the same rules as a key segment, no trailing slash
/// needed (one is added), no reserved names.
pub fn normalize_store_prefix(prefix: &str) -> Result<String> {
    let trimmed = prefix.trim_matches('/');
    if trimmed.is_empty() {
        return Ok(String::new());
    }
    check_characters(trimmed, "store prefix")?;
    if trimmed.split('/').any(|seg| seg.is_empty() || seg == "." || seg == "..") {
        return Err(Error::invalid(format!("store prefix {} has an empty, '.' or '..' segment", quoted(prefix))));
    }
    let prefix = format!("{trimmed}/");
    if prefix.len() >= MAX_KEY_BYTES {
        // Every key under it would be over the limit: said here, not by each call.
        return Err(Error::invalid(format!(
            "store prefix is {} bytes with its '/'; keys under it must fit in {MAX_KEY_BYTES} UTF-8 bytes",
            prefix.len()
        )));
    }
    reserved_check(&prefix, "store prefix")?;
    Ok(prefix)
}

/// No control characters, nor U+FFFE and U+FFFF: XML 1.0 has no way to write those, and S3's and
/// Azure's listings are XML (a server puts a replacement character in their place, or fails). No
/// backslash: Azure and SeaweedFS take it for a `/`, so `a\b` would be another key's object.
fn check_characters(s: &str, what: &str) -> Result<()> {
    if s.contains('\\') {
        return Err(Error::invalid(format!("{what} contains '\\', which Azure and SeaweedFS store as '/'")));
    }
    match s.chars().find(|c| c.is_control() || matches!(c, '\u{fffe}' | '\u{ffff}')) {
        Some(c) if c.is_control() => {
            Err(Error::invalid(format!("{what} contains the control character U+{:04X}", c as u32)))
        }
        Some(c) => Err(Error::invalid(format!("{what} contains U+{:04X}, which XML listings cannot carry", c as u32))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_keys() {
        for k in ["a", "jobs/42", "a b+c%d=e&f?g#h~i", "ünï/😀", "x.y/..z/.w", &"k".repeat(1024)] {
            validate_key(k).unwrap_or_else(|e| panic!("{k}: {e}"));
        }
    }

    #[test]
    fn rejects_bad_keys() {
        for k in [
            "",
            ".",
            "..",
            "a/./b",
            "a/..",
            "../x",
            "/a",
            "a/",
            "a//b",
            "/",
            "log/x",
            "snapshots/1",
            "logs/a",
            "txapplied/t",
            "a\nb",
            "\u{7f}",
            "a\u{0}",
            "a\u{fffe}",
            "\u{ffff}b",
            "a\\b",
            "\\",
            &"k".repeat(1025),
            &"é".repeat(513),
        ] {
            assert!(matches!(validate_key(k), Err(Error::InvalidArgument(_))), "{k:?}");
        }
        // Only the exact prefixes are reserved.
        validate_key("logx/1").unwrap();
        validate_key("catalog/1").unwrap();
    }

    #[test]
    fn store_prefix_gets_one_trailing_slash() {
        assert_eq!(normalize_store_prefix("").unwrap(), "");
        assert_eq!(normalize_store_prefix("app").unwrap(), "app/");
        assert_eq!(normalize_store_prefix("/a/b/").unwrap(), "a/b/");
        assert!(normalize_store_prefix("a//b").is_err());
        assert!(normalize_store_prefix("a/../b").is_err());
        assert!(normalize_store_prefix("a\\b").is_err());
        // A prefix that leaves no room for a key.
        assert!(normalize_store_prefix(&"p".repeat(1022)).is_ok());
        assert!(normalize_store_prefix(&"p".repeat(1023)).is_err());
        // CairnDB's engine prefixes, which a store prefix would put every key under.
        for reserved in ["log", "/logs/", "snapshots/x", "txapplied"] {
            assert!(normalize_store_prefix(reserved).is_err(), "{reserved}");
        }
        assert_eq!(normalize_store_prefix("catalog").unwrap(), "catalog/");
    }
}
