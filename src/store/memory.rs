//! An in-memory store that behaves like S3 and R2 where it matters: per-key linearizable
//! conditional puts, ETag = a digest of the body (so identical bytes give identical etags, as S3's MD5 does),
//! If-Match on a missing key fails, list is ascending. Clones share the same data, so several
//! `Fencepost` instances on one `MemoryStore` behave like workers sharing a bucket.

use crate::base::sync::Lock;
use crate::base::sync::Shared;

use async_trait::async_trait;

use crate::time::Clock;

use super::{
    IfChanged, ListPage, Listed, ObjectStore, Precondition, PutOutcome, StoreResult, StoredObject, WriteMeta,
    content_etag,
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

/// Entries per run of [`Table`]: a new key moves at most this many entries (a few KB).
const RUN: usize = 64;

/// The objects in key order, as consecutive sorted runs of at most [`RUN`] entries: a key is
/// found by two binary searches (its run, then its place in the run), inserted and removed in its
/// run, which splits in two when full and goes when empty. A `BTreeMap` would do the same job, but
/// a second instance of it (beside the JSON objects') is about 2 KB of the npm package's wasm,
/// gzipped; one sorted `Vec` would be as small but move every later key on each new key.
#[derive(Debug, Default)]
struct Table {
    /// Never empty; each sorted, each one's keys before the next one's.
    runs: Vec<Vec<(String, StoredObject)>>,
}

/// Where `key` is in `run`, or where it would go.
fn find(run: &[(String, StoredObject)], key: &str) -> std::result::Result<usize, usize> {
    run.binary_search_by(|(k, _)| k.as_str().cmp(key))
}

impl Table {
    /// The run that holds `key` or would: the last one starting at or before it (else the first).
    fn run_of(&self, key: &str) -> usize {
        let after = self.runs.partition_point(|run| run.first().is_some_and(|(first, _)| first.as_str() <= key));
        after.saturating_sub(1)
    }

    fn get(&self, key: &str) -> Option<&StoredObject> {
        let run = self.runs.get(self.run_of(key))?;
        let at = find(run, key).ok()?;
        run.get(at).map(|(_, object)| object)
    }

    fn insert(&mut self, key: &str, object: StoredObject) {
        let r = self.run_of(key);
        let Some(run) = self.runs.get_mut(r) else {
            self.runs.push(vec![(key.to_owned(), object)]);
            return;
        };
        match find(run, key) {
            Ok(at) => {
                if let Some(entry) = run.get_mut(at) {
                    entry.1 = object;
                }
            }
            Err(at) => {
                run.insert(at, (key.to_owned(), object));
                if run.len() > RUN {
                    let upper = run.split_off(RUN / 2);
                    self.runs.insert(r + 1, upper);
                }
            }
        }
    }

    fn remove(&mut self, key: &str) {
        let r = self.run_of(key);
        let Some(run) = self.runs.get_mut(r) else { return };
        if let Ok(at) = find(run, key) {
            run.remove(at);
            if run.is_empty() {
                self.runs.remove(r);
            }
        }
    }

    /// The entries from `key` on, in order: those after it, or (`inclusive`) from it.
    fn from(&self, key: &str, inclusive: bool) -> impl Iterator<Item = &(String, StoredObject)> {
        let r = self.run_of(key);
        let first = self.runs.get(r).map_or(&[][..], |run| {
            let at = run.partition_point(|(k, _)| if inclusive { k.as_str() < key } else { k.as_str() <= key });
            run.get(at..).unwrap_or_default()
        });
        first.iter().chain(self.runs.get(r + 1..).unwrap_or_default().iter().flatten())
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

    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        crate::base::future::yield_now().await;
        Ok(match self.objects.lock().get(key) {
            Some(object) if object.etag == etag => IfChanged::NotModified,
            other => IfChanged::Current(other.cloned()),
        })
    }

    fn conditional_get(&self) -> bool {
        true
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
            assert_eq!(store.objects.lock().runs.iter().map(Vec::len).sum::<usize>(), 10);
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

    #[test]
    fn many_keys_split_and_merge_runs_and_keep_the_order_of_a_sorted_set() {
        block_on(async {
            let store = MemoryStore::new();
            let mut model = std::collections::BTreeSet::new();
            // 997 is prime, so i * 389 % 997 visits every key once, in scattered order.
            for i in 0..997u32 {
                let key = format!("k/{}", i * 389 % 997);
                put(&store, &key).await;
                model.insert(key);
            }
            assert!(store.objects.lock().runs.len() > 997 / RUN);
            for i in (0..997u32).filter(|i| i % 3 != 0) {
                let key = format!("k/{i}");
                store.delete(&key).await.unwrap();
                model.remove(&key);
            }
            assert!(store.objects.lock().runs.iter().all(|run| !run.is_empty() && run.len() <= RUN));
            let expected: Vec<String> = model.iter().cloned().collect();
            assert_eq!(keys(&store).await, expected);
            for key in &expected {
                assert!(store.get(key).await.unwrap().is_some(), "{key}");
            }
            assert!(store.get("k/1").await.unwrap().is_none());
            // Every start point: what follows it in the model, a page at a time.
            for after in ["", "k/", "k/5", "k/50", "k/999", "l"] {
                let page = store.list_page("k/", Some(after), None).await.unwrap();
                let want: Vec<&String> = model.iter().filter(|k| k.as_str() > after).collect();
                let got: Vec<&String> = page.entries.iter().map(|e| &e.key).collect();
                assert_eq!(got, want, "after {after:?}");
            }
            for key in &expected {
                store.delete(key).await.unwrap();
            }
            assert!(store.objects.lock().runs.is_empty());
            assert!(keys(&store).await.is_empty());
        });
    }
}
