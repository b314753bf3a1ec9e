//! Counting requests per operation: every request is a Workers subrequest, so applications (and
//! the test suites) check what an operation costs. [`CountingStore`] is the production wrapper;
//! the testing [`super::FaultStore`] counts the same way.

use crate::base::sync::SyncCell;
use crate::base::sync::{MaybeSend, MaybeSync, Shared};

use async_trait::async_trait;

use super::{IfChanged, ListPage, ObjectStore, Precondition, PutOutcome, StoreResult, StoredObject, WriteMeta};

/// Which request: what faults apply to and what counts are kept per. (The JS binding's counting
/// store counts `op as u32` into `[get, put, delete, list]`: keep the order.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Put,
    Delete,
    List,
}

impl Op {
    /// The operation as events report it: `"get"`, `"put"`, `"delete"`, `"list"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Get => "get",
            Op::Put => "put",
            Op::Delete => "delete",
            Op::List => "list",
        }
    }
}

/// Requests seen, per operation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    pub get: u32,
    pub put: u32,
    pub delete: u32,
    pub list: u32,
}

impl RequestCounts {
    pub fn total(&self) -> u32 {
        self.get + self.put + self.delete + self.list
    }

    fn with(mut self, op: Op) -> Self {
        let n = match op {
            Op::Get => &mut self.get,
            Op::Put => &mut self.put,
            Op::Delete => &mut self.delete,
            Op::List => &mut self.list,
        };
        *n = n.saturating_add(1);
        self
    }
}

/// Counts kept by a wrapper store.
#[derive(Debug, Default)]
pub struct RequestCounter(SyncCell<RequestCounts>);

impl RequestCounter {
    pub fn record(&self, op: Op) {
        self.0.set(self.0.get().with(op));
    }

    pub fn get(&self) -> RequestCounts {
        self.0.get()
    }

    /// The counts so far, and start again from zero.
    pub fn take(&self) -> RequestCounts {
        self.0.replace(RequestCounts::default())
    }
}

/// Where a [`CountingStore`] counts: counts of its own ([`CountingStore::new`]), or the embedder's
/// (the JS binding adds to a JS array of the store's handle, so that no core memory lives as long
/// as the handle).
pub trait Tally: MaybeSend + MaybeSync {
    fn record(&self, op: Op);
}

impl Tally for RequestCounter {
    fn record(&self, op: Op) {
        RequestCounter::record(self, op);
    }
}

/// A store that counts the requests it passes on, and nothing else. Clones share the counts.
pub struct CountingStore<T: Tally = RequestCounter> {
    inner: Shared<dyn ObjectStore>,
    counter: Shared<T>,
}

impl<T: Tally> Clone for CountingStore<T> {
    fn clone(&self) -> Self {
        CountingStore { inner: self.inner.clone(), counter: self.counter.clone() }
    }
}

impl CountingStore {
    pub fn new(inner: impl super::IntoStore) -> Self {
        Self::with_tally(inner, Shared::default())
    }

    pub fn counts(&self) -> RequestCounts {
        self.counter.get()
    }

    pub fn take_counts(&self) -> RequestCounts {
        self.counter.take()
    }
}

impl<T: Tally> CountingStore<T> {
    /// Counting into `tally` (shared with whoever else holds it).
    pub fn with_tally(inner: impl super::IntoStore, tally: Shared<T>) -> Self {
        CountingStore { inner: inner.into_store(), counter: tally }
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl<T: Tally + 'static> ObjectStore for CountingStore<T> {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        self.counter.record(Op::Get);
        self.inner.get(key).await
    }

    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        self.counter.record(Op::Get);
        self.inner.get_if_changed(key, etag).await
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
        self.counter.record(Op::Put);
        self.inner.put(key, body, precondition, meta).await
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        self.counter.record(Op::Delete);
        self.inner.delete(key).await
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        self.counter.record(Op::Delete);
        self.inner.delete_if_match(key, etag).await
    }

    fn conditional_delete(&self) -> bool {
        self.inner.conditional_delete()
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        self.counter.record(Op::List);
        self.inner.list_page(prefix, start_after, cursor).await
    }

    fn max_key_bytes(&self) -> usize {
        self.inner.max_key_bytes()
    }

    fn server_time(&self) -> Option<crate::time::Timestamp> {
        self.inner.server_time()
    }
}
