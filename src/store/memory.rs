//! An in-memory store that behaves like S3 and R2 where it matters: per-key linearizable
//! conditional puts, ETag = a digest of the body (so identical bytes give identical etags, as S3's MD5 does),
//! If-Match on a missing key fails, list is ascending. Clones share the same data, so several
//! `Fencepost` instances on one `MemoryStore` behave like workers sharing a bucket.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::rc::Rc;

use async_trait::async_trait;

use super::{
    ListPage, Listed, ObjectStore, Precondition, PutOutcome, StoreResult, StoredObject, WriteMeta, content_etag,
};

/// Keys per listing page, as S3 returns them.
const PAGE: usize = 1000;

#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    objects: Rc<RefCell<BTreeMap<String, StoredObject>>>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait(?Send)]
impl ObjectStore for MemoryStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        // Every operation yields first, as a network round trip would, so concurrent callers on a
        // single-threaded executor really interleave. The operation itself is atomic.
        crate::base::future::yield_now().await;
        Ok(self.objects.borrow().get(key).cloned())
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        crate::base::future::yield_now().await;
        let mut objects = self.objects.borrow_mut();
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
        // Wall-clock time, as a real store records it (not a test's manual clock).
        let last_modified = crate::time::Clock::now(&crate::host::clock::SystemClock).ok();
        objects.insert(
            key.to_owned(),
            StoredObject { body: body.to_vec(), etag: etag.clone(), meta: meta.clone(), last_modified },
        );
        Ok(PutOutcome::Written { etag })
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        crate::base::future::yield_now().await;
        self.objects.borrow_mut().remove(key);
        Ok(())
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        crate::base::future::yield_now().await;
        let mut objects = self.objects.borrow_mut();
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
        let objects = self.objects.borrow();
        // Pages of S3's size, so callers meet the page loop as they would on a real store. The
        // cursor is the last key of the page before.
        let from = match cursor.or(start_after) {
            Some(after) if after >= prefix => (Bound::Excluded(after.to_owned()), Bound::Unbounded),
            _ => (Bound::Included(prefix.to_owned()), Bound::Unbounded),
        };
        let mut entries: Vec<Listed> = objects
            .range(from)
            .take_while(|(k, _)| k.starts_with(prefix))
            .take(PAGE + 1)
            .map(|(key, o)| Listed {
                key: key.clone(),
                etag: Some(o.etag.clone()),
                size: Some(o.body.len() as u64),
                last_modified: o.last_modified,
            })
            .collect();
        let next = if entries.len() > PAGE {
            entries.truncate(PAGE);
            entries.last().map(|e| e.key.clone())
        } else {
            None
        };
        Ok(ListPage { entries, next })
    }
}
