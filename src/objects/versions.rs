//! The last version a [`crate::Fencepost`] saw of each doc key (value, etag, write provenance),
//! so an update from any handle on that key — a new `db.doc(key)` per request included — first
//! tries one guarded PUT from it (1 request when nobody else wrote).
//!
//! Bounded, least recently used first out: at most [`MAX_KEYS`] keys and [`MAX_BYTES`] of values.
//! It lives on the `Fencepost` (shared by its clones), not on the handles, so a program that makes
//! a handle per request and drops it holds no more than this: nothing here waits for a garbage
//! collector.

use serde_json::Value;

use crate::base::sync::Lock;
use crate::store::WriteMeta;

/// Keys remembered at most.
pub const MAX_KEYS: usize = 1000;
/// Bytes of remembered values (as canonical JSON) at most; a value larger than this is not kept.
pub const MAX_BYTES: usize = 1 << 20;

/// A version of a document as this `Fencepost` last saw it.
#[derive(Debug, Clone)]
pub(crate) struct Version {
    pub value: Value,
    pub etag: String,
    pub meta: WriteMeta,
    /// The size of the value as stored (its canonical JSON), counted against [`MAX_BYTES`].
    pub size: usize,
}

/// The versions, least recently used first: a plain list rather than a map, because a map of
/// another key and value type is a few kilobytes more of the wasm, and a list of at most 1,000
/// is searched in microseconds (programs that update docs mostly touch a few keys).
#[derive(Default)]
struct Lru {
    entries: Vec<(String, Version)>,
    bytes: usize,
}

/// The bounded cache of [`Version`]s (see the module's doc).
#[derive(Default)]
pub(crate) struct Versions(Lock<Lru>);

impl Versions {
    /// The remembered version of `key`, taken out (a failed write then leaves nothing stale).
    pub(crate) fn take(&self, key: &str) -> Option<Version> {
        let mut lru = self.0.lock();
        let at = lru.entries.iter().rposition(|(k, _)| k == key)?;
        let (_, version) = lru.entries.remove(at);
        lru.bytes -= version.size;
        Some(version)
    }

    /// Remember `version` of `key` (replacing what was there), evicting the least recently used
    /// keys past the bounds.
    pub(crate) fn put(&self, key: &str, version: Version) {
        drop(self.take(key));
        if version.size > MAX_BYTES {
            return;
        }
        let mut lru = self.0.lock();
        lru.bytes += version.size;
        lru.entries.push((key.to_owned(), version));
        let mut evict = 0;
        while lru.entries.len() - evict > MAX_KEYS || lru.bytes > MAX_BYTES {
            lru.bytes -= lru.entries[evict].1.size;
            evict += 1;
        }
        lru.entries.drain(..evict);
    }

    /// Forget `key`'s version: the next update reads first.
    pub(crate) fn forget(&self, key: &str) {
        drop(self.take(key));
    }

    /// (keys, bytes) remembered now.
    #[cfg(test)]
    pub(crate) fn usage(&self) -> (usize, usize) {
        let lru = self.0.lock();
        (lru.entries.len(), lru.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(size: usize) -> Version {
        Version { value: Value::Null, etag: "e".into(), meta: WriteMeta::default(), size }
    }

    #[test]
    fn bounded_by_keys_oldest_out() {
        let v = Versions::default();
        for i in 0..MAX_KEYS + 10 {
            v.put(&format!("k{i}"), version(10));
        }
        assert_eq!(v.usage(), (MAX_KEYS, MAX_KEYS * 10));
        assert!(v.take("k0").is_none(), "the oldest went first");
        assert!(v.take(&format!("k{}", MAX_KEYS + 9)).is_some());
    }

    #[test]
    fn bounded_by_bytes_and_reuse_refreshes() {
        let v = Versions::default();
        v.put("a", version(MAX_BYTES / 2));
        v.put("b", version(MAX_BYTES / 4));
        let a = v.take("a").unwrap();
        v.put("a", a); // used again: now the newest
        v.put("c", version(MAX_BYTES / 2));
        assert!(v.take("b").is_none(), "b was the least recently used");
        assert!(v.take("c").is_some());
        v.put("huge", version(MAX_BYTES + 1));
        assert!(v.take("huge").is_none(), "a value over the bound is not kept");
    }
}
