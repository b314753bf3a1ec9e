//! An in-memory store that behaves like S3 and R2 where it matters: per-key linearizable
//! conditional puts, ETag = a digest of the body (so identical bytes give identical etags, as S3's MD5 does),
//! If-Match on a missing key fails, list is ascending. Clones share the same data, so several
//! `Fencepost` instances on one `MemoryStore` behave like workers sharing a bucket.

use crate::base::sync::Lock;
use crate::base::sync::Shared;

use async_trait::async_trait;

use crate::time::Clock;

use super::{
    ListPage, Listed, ObjectStore, Precondition, PutOutcome, StoreResult, StoredObject, WriteMeta, content_etag,
};

/// Keys per listing page, as S3 returns them.
const PAGE: usize = 1000;

#[derive(Clone)]
pub struct MemoryStore {
    objects: Shared<Lock<Table>>,
    /// What `last_modified` records: the wall clock, as a real store's, unless a simulation
    /// gives its own ([`MemoryStore::with_clock`]).
    clock: Shared<dyn Clock>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_clock(Shared::new(crate::host::clock::SystemClock))
    }
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").field("objects", &self.objects).finish_non_exhaustive()
    }
}

/// The objects in key order, in one sorted `Vec`: found by binary search, inserted and removed in
/// place. A second `BTreeMap` instance (beside the JSON objects') would be about 2 KB of the npm
/// package's wasm, gzipped; a new key moves the keys after it, which costs less than a
/// microsecond per thousand keys, well within what a store kept in memory holds.
#[derive(Debug, Default)]
struct Table {
    entries: Vec<(String, StoredObject)>,
}

impl Table {
    /// Where `key` is, or where it would go.
    fn position(&self, key: &str) -> std::result::Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    fn get(&self, key: &str) -> Option<&StoredObject> {
        let at = self.position(key).ok()?;
        self.entries.get(at).map(|(_, object)| object)
    }

    fn insert(&mut self, key: &str, object: StoredObject) {
        match self.position(key) {
            Ok(at) => self.entries[at].1 = object,
            Err(at) => self.entries.insert(at, (key.to_owned(), object)),
        }
    }

    fn remove(&mut self, key: &str) {
        if let Ok(at) = self.position(key) {
            self.entries.remove(at);
        }
    }

    /// The entries from `key` on: those after it, or (`inclusive`) from it.
    fn from(&self, key: &str, inclusive: bool) -> &[(String, StoredObject)] {
        let at = self.entries.partition_point(|(k, _)| if inclusive { k.as_str() < key } else { k.as_str() <= key });
        self.entries.get(at..).unwrap_or_default()
    }
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A memory store whose objects' `last_modified` comes from `clock` (a simulation's manual
    /// clock, so that `prune` and the listing repeat with the seed).
    pub fn with_clock(clock: Shared<dyn Clock>) -> Self {
        MemoryStore { objects: Shared::default(), clock }
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl ObjectStore for MemoryStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        // Every operation yields first, as a network round trip would, so concurrent callers on a
        // single-threaded executor really interleave. The operation itself is atomic.
        crate::base::future::yield_now().await;
        Ok(self.objects.lock().get(key).cloned())
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        crate::base::future::yield_now().await;
        let mut objects = self.objects.lock();
        let holds = match (precondition, objects.get(key)) {
            (Precondition::None, _) => true,
            (Precondition::IfAbsent, existing) => existing.is_none(),
            (Precondition::IfMatch(etag), Some(existing)) => existing.etag == *etag,
            (Precondition::IfMatch(_), None) => false,
        };
        if !holds {
            return Ok(PutOutcome::PreconditionFailed);
        }
        let etag = content_etag(body);
        let last_modified = self.clock.now().ok();
        let object = StoredObject { body: body.to_vec(), etag: etag.clone(), meta: meta.clone(), last_modified };
        objects.insert(key, object);
        Ok(PutOutcome::Written { etag })
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        crate::base::future::yield_now().await;
        self.objects.lock().remove(key);
        Ok(())
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        crate::base::future::yield_now().await;
        let mut objects = self.objects.lock();
        let matches = objects.get(key).is_some_and(|o| o.etag == etag);
        if matches {
            objects.remove(key);
        }
        Ok(matches)
    }

    fn conditional_delete(&self) -> bool {
        true
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        crate::base::future::yield_now().await;
        let objects = self.objects.lock();
        // Pages of S3's size, so callers meet the page loop as they would on a real store. The
        // cursor is the last key of the page before.
        let start = match cursor.or(start_after) {
            Some(after) if after >= prefix => objects.from(after, false),
            _ => objects.from(prefix, true),
        };
        let entries: Vec<Listed> = start
            .iter()
            .take_while(|(k, _)| k.starts_with(prefix))
            .take(PAGE + 1)
            .map(|(key, o)| Listed {
                key: key.clone(),
                etag: Some(o.etag.clone()),
                size: Some(o.body.len() as u64),
                last_modified: o.last_modified,
            })
            .collect();
        Ok(ListPage::first_of(entries, PAGE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    async fn put(store: &MemoryStore, key: &str) {
        store.put(key, key.as_bytes(), &Precondition::None, &WriteMeta::default()).await.unwrap();
    }

    async fn keys(store: &MemoryStore) -> Vec<String> {
        store.list_page("", None, None).await.unwrap().entries.into_iter().map(|e| e.key).collect()
    }

    #[test]
    fn keys_stay_in_order_through_inserts_overwrites_and_deletes() {
        block_on(async {
            let store = MemoryStore::new();
            for i in [5, 1, 9, 3, 7, 0, 8, 2, 6, 4] {
                put(&store, &format!("k{i}")).await;
            }
            put(&store, "k5").await;
            assert_eq!(store.objects.lock().entries.len(), 10);
            for i in 0..4 {
                store.delete(&format!("k{i}")).await.unwrap();
            }
            assert_eq!(keys(&store).await, ["k4", "k5", "k6", "k7", "k8", "k9"]);
            assert!(store.get("k0").await.unwrap().is_none());
            assert!(!store.delete_if_match("k0", &content_etag(b"k0")).await.unwrap());
            let created = store.put("k1", b"again", &Precondition::IfAbsent, &WriteMeta::default()).await.unwrap();
            assert!(matches!(created, PutOutcome::Written { .. }));
            for i in 4..7 {
                assert!(
                    store.delete_if_match(&format!("k{i}"), &content_etag(format!("k{i}").as_bytes())).await.unwrap()
                );
            }
            assert_eq!(keys(&store).await, ["k1", "k7", "k8", "k9"]);
            store.delete("missing").await.unwrap();
            store.delete("k1").await.unwrap();
            store.delete("k1").await.unwrap();
            assert_eq!(keys(&store).await, ["k7", "k8", "k9"]);
            let after = store.list_page("k", Some("k7"), None).await.unwrap();
            assert_eq!(after.entries.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["k8", "k9"]);
            let before_prefix = store.list_page("k8", Some("a"), None).await.unwrap();
            assert_eq!(before_prefix.entries.len(), 1);
        });
    }
}
