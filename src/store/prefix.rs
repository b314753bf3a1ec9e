//! [`PrefixStore`]: any store, with every key under a prefix (as `object_store`'s `PrefixStore`
//! does), so several users can share one bucket. The backends know nothing of prefixes.

use crate::base::sync::Shared;

use async_trait::async_trait;

use super::{IfChanged, ListPage, Listed, ObjectStore, Precondition, PutOutcome, StoreResult, StoredObject, WriteMeta};
use crate::base::error::Result;
use crate::codec::keys::normalize_store_prefix;
use crate::time::Timestamp;

/// `inner` with key `k` stored at `prefix/k` (CairnDB's layout); keys are reported without it.
#[derive(Clone)]
pub struct PrefixStore {
    inner: Shared<dyn ObjectStore>,
    /// `""` or ending in `/`.
    prefix: String,
}

impl PrefixStore {
    /// Leading and trailing slashes are ignored (`"app"`, `"/app/"` and `"app/"` are the same);
    /// an empty, `.` or `..` segment or a control character is an `InvalidArgument`.
    pub fn new(inner: impl super::IntoStore, prefix: &str) -> Result<Self> {
        let inner = inner.into_store();
        Ok(PrefixStore { inner, prefix: normalize_store_prefix(prefix)? })
    }

    /// The normalised prefix: `""` or ending in `/`.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    fn full(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }
}

impl std::fmt::Debug for PrefixStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrefixStore").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl ObjectStore for PrefixStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        self.inner.get(&self.full(key)).await
    }

    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        self.inner.get_if_changed(&self.full(key), etag).await
    }

    fn conditional_get(&self) -> bool {
        self.inner.conditional_get()
    }

    fn unique_etags(&self) -> bool {
        self.inner.unique_etags()
    }

    fn opaque_etags(&self) -> bool {
        self.inner.opaque_etags()
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        self.inner.put(&self.full(key), body, precondition, meta).await
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        self.inner.delete(&self.full(key)).await
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        self.inner.delete_if_match(&self.full(key), etag).await
    }

    fn conditional_delete(&self) -> bool {
        self.inner.conditional_delete()
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        let after = start_after.map(|k| self.full(k));
        let page = self.inner.list_page(&self.full(prefix), after.as_deref(), cursor).await?;
        // Anything outside the prefix (a server ignoring `prefix`) is not ours to report.
        let entries = page
            .entries
            .into_iter()
            .filter_map(|e| Some(Listed { key: e.key.strip_prefix(&self.prefix)?.to_owned(), ..e }))
            .collect();
        Ok(ListPage { entries, next: page.next })
    }

    /// The prefix uses up part of the inner store's budget (S3 and R2: 1024 bytes in all).
    fn max_key_bytes(&self) -> usize {
        self.inner.max_key_bytes().saturating_sub(self.prefix.len())
    }

    fn server_time(&self) -> Option<Timestamp> {
        self.inner.server_time()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use futures::executor::block_on;

    #[test]
    fn keys_live_under_the_prefix_and_are_reported_without_it() {
        let bucket: Shared<dyn ObjectStore> = Shared::new(MemoryStore::new());
        let app = PrefixStore::new(bucket.clone(), "/app/").unwrap();
        assert_eq!(app.prefix(), "app/");
        let app: Shared<dyn ObjectStore> = Shared::new(app);
        let meta = WriteMeta::default();
        block_on(app.put("jobs/1", b"x", &Precondition::None, &meta)).unwrap();
        block_on(bucket.put("other/1", b"y", &Precondition::None, &meta)).unwrap();
        assert_eq!(block_on(bucket.list("")).unwrap(), ["app/jobs/1", "other/1"]);
        assert_eq!(block_on(app.list("")).unwrap(), ["jobs/1"]);
        assert!(block_on(app.get("jobs/1")).unwrap().is_some());
        assert_eq!(app.max_key_bytes(), crate::codec::keys::MAX_KEY_BYTES - 4);
        assert!(PrefixStore::new(bucket.clone(), "a/../b").is_err());
        assert!(PrefixStore::new(bucket, "a//b").is_err());
    }
}
