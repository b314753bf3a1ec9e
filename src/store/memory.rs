//! An in-memory store that behaves like S3 and R2 where it matters: per-key linearizable
//! conditional puts, ETag = a digest of the body (so identical bytes give identical etags, as S3's MD5 does),
//! If-Match on a missing key fails, list is ascending. Clones share the same data, so several
//! `Fencepost` instances on one `MemoryStore` behave like workers sharing a bucket.

use crate::base::sync::Lock;
use crate::base::sync::Shared;
use std::collections::BTreeMap;
use std::ops::Bound;

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

/// The keys in order. A delete leaves a tombstone (`None`) and the map is rebuilt without them
/// once they outnumber the live keys: removal from a `BTreeMap` (rebalancing, merging nodes) is
/// about 4 KB of wasm of its own, insertion is compiled in anyway, and the rebuild keeps memory
/// within twice the live keys at an amortised O(log n) per delete.
#[derive(Debug, Default)]
struct Table {
    map: BTreeMap<String, Option<StoredObject>>,
    tombstones: usize,
}

impl Table {
    fn get(&self, key: &str) -> Option<&StoredObject> {
        self.map.get(key)?.as_ref()
    }

    fn remove(&mut self, key: &str) {
        let Some(slot) = self.map.get_mut(key) else { return };
        if slot.take().is_none() {
            return;
        }
        self.tombstones += 1;
        if self.tombstones > self.map.len() / 2 {
            let mut live = BTreeMap::new();
            for (key, object) in std::mem::take(&mut self.map) {
                if object.is_some() {
                    live.insert(key, object);
                }
            }
            self.map = live;
            self.tombstones = 0;
        }
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
        if let Some(None) = objects.map.insert(key.to_owned(), Some(object)) {
            objects.tombstones -= 1;
        }
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
        let from = match cursor.or(start_after) {
            Some(after) if after >= prefix => (Bound::Excluded(after.to_owned()), Bound::Unbounded),
            _ => (Bound::Included(prefix.to_owned()), Bound::Unbounded),
        };
        let entries: Vec<Listed> = objects
            .map
            .range(from)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter_map(|(key, o)| Some((key, o.as_ref()?)))
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
    fn deleted_keys_are_gone_before_and_after_the_tombstones_are_swept() {
        block_on(async {
            let store = MemoryStore::new();
            for i in 0..10 {
                put(&store, &format!("k{i}")).await;
            }
            // Four deletes leave tombstones (no more than the live keys); sweeps come later.
            for i in 0..4 {
                store.delete(&format!("k{i}")).await.unwrap();
            }
            assert_eq!(store.objects.lock().tombstones, 4);
            assert_eq!(keys(&store).await, ["k4", "k5", "k6", "k7", "k8", "k9"]);
            assert!(store.get("k0").await.unwrap().is_none());
            assert!(!store.delete_if_match("k0", &content_etag(b"k0")).await.unwrap());
            let created = store.put("k1", b"again", &Precondition::IfAbsent, &WriteMeta::default()).await.unwrap();
            assert!(matches!(created, PutOutcome::Written { .. }));
            assert_eq!(store.objects.lock().tombstones, 3);
            for i in 4..7 {
                assert!(
                    store.delete_if_match(&format!("k{i}"), &content_etag(format!("k{i}").as_bytes())).await.unwrap()
                );
            }
            assert_eq!(store.objects.lock().tombstones, 0);
            assert_eq!(store.objects.lock().map.len(), 4);
            assert_eq!(keys(&store).await, ["k1", "k7", "k8", "k9"]);
            store.delete("missing").await.unwrap();
            store.delete("k1").await.unwrap();
            store.delete("k1").await.unwrap();
            assert_eq!(store.objects.lock().tombstones, 1);
        });
    }
}
