//! A store wrapper for tests: counts requests per operation and injects faults — a competing write
//! slipped in just before a put, a response lost after the write landed, throttling, server errors,
//! transport errors. Public so applications can test their own code against the same failures.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use async_trait::async_trait;

use super::{ObjectStore, Precondition, PutOutcome, StoreError, StoreResult, StoredObject, WriteMeta};
use crate::LocalBoxFuture;

/// Which request a fault applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Get,
    Put,
    Delete,
    List,
}

/// What happens to the next matching request.
pub enum Fault {
    /// No fault: lets one request through (to aim a later fault at the request after it).
    Pass,
    /// Run this first (typically: another writer's put on the inner store), then the request.
    Before(Box<dyn FnOnce() -> LocalBoxFuture<'static, ()>>),
    /// Forward the request, then run this before answering: `std::future::pending()` makes a
    /// request that lands and is never answered; a hook that fires a cancel makes one that is
    /// cancelled while in flight.
    After(Box<dyn FnOnce() -> LocalBoxFuture<'static, ()>>),
    /// Forward the request, let it land, then report a transport error: an ambiguous write.
    LoseResponse,
    /// Do not forward; fail with this HTTP status and S3 error code.
    Status(u16, &'static str),
    /// Do not forward; fail as if the connection was refused.
    Transport,
    /// Puts only: report a client-side timeout now, while the request is still on its way; it
    /// reaches the store just before the next request (of any kind).
    Late,
}

impl Fault {
    /// Run `hook` (another process's writes) just before the request.
    pub fn before<F: std::future::Future<Output = ()> + 'static>(hook: F) -> Fault {
        Fault::Before(Box::new(move || Box::pin(hook)))
    }

    /// Run `hook` after the request reached the store, before its answer is returned.
    pub fn after<F: std::future::Future<Output = ()> + 'static>(hook: F) -> Fault {
        Fault::After(Box::new(move || Box::pin(hook)))
    }

    /// A competing write: `key` is overwritten with `body` on `store` just before the request.
    pub fn competing_put(store: Rc<dyn ObjectStore>, key: &str, body: Vec<u8>) -> Fault {
        let key = key.to_owned();
        Fault::Before(Box::new(move || {
            Box::pin(async move {
                let _ = store.put(&key, &body, &Precondition::None, &WriteMeta::default()).await;
            })
        }))
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
}

/// A put that timed out client-side and is still on its way: key, body, precondition, provenance.
type LatePut = (String, Vec<u8>, Precondition, WriteMeta);

pub struct FaultStore {
    inner: Rc<dyn ObjectStore>,
    faults: RefCell<VecDeque<(Op, Fault)>>,
    counts: Cell<RequestCounts>,
    hide_write_meta: Cell<bool>,
    late_put: RefCell<Option<LatePut>>,
}

impl FaultStore {
    pub fn new(inner: Rc<dyn ObjectStore>) -> Self {
        FaultStore {
            inner,
            faults: RefCell::new(VecDeque::new()),
            counts: Cell::new(RequestCounts::default()),
            hide_write_meta: Cell::new(false),
            late_put: RefCell::new(None),
        }
    }

    /// Read objects without their write tokens, as a browser does when the bucket's CORS rules do
    /// not expose the `x-amz-meta-*` headers.
    pub fn hide_write_meta(&self, hide: bool) {
        self.hide_write_meta.set(hide);
    }

    /// Queue a fault for the next request of kind `op` (faults for one op fire in order).
    pub fn inject(&self, op: Op, fault: Fault) {
        self.faults.borrow_mut().push_back((op, fault));
    }

    pub fn counts(&self) -> RequestCounts {
        self.counts.get()
    }

    /// The counts so far, and start again from zero.
    pub fn take_counts(&self) -> RequestCounts {
        self.counts.replace(RequestCounts::default())
    }

    fn begin(&self, op: Op) -> Option<Fault> {
        let mut c = self.counts.get();
        match op {
            Op::Get => c.get += 1,
            Op::Put => c.put += 1,
            Op::Delete => c.delete += 1,
            Op::List => c.list += 1,
        }
        self.counts.set(c);
        let mut faults = self.faults.borrow_mut();
        let pos = faults.iter().position(|(o, _)| *o == op)?;
        faults.remove(pos).map(|(_, f)| f)
    }

    /// A `Late` put arrives now, before the request being made.
    async fn deliver_late_put(&self) {
        let late = self.late_put.borrow_mut().take();
        if let Some((key, body, precondition, meta)) = late {
            let _ = self.inner.put(&key, &body, &precondition, &meta).await;
        }
    }

    /// Apply the fault (if any) around `request`.
    async fn run<T>(&self, op: Op, request: impl std::future::Future<Output = StoreResult<T>>) -> StoreResult<T> {
        self.deliver_late_put().await;
        self.apply(self.begin(op), request).await
    }

    async fn apply<T>(
        &self,
        fault: Option<Fault>,
        request: impl std::future::Future<Output = StoreResult<T>>,
    ) -> StoreResult<T> {
        match fault {
            None | Some(Fault::Pass) => request.await,
            Some(Fault::Before(hook)) => {
                hook().await;
                request.await
            }
            Some(Fault::After(hook)) => {
                let answer = request.await;
                hook().await;
                answer
            }
            Some(Fault::LoseResponse) => {
                request.await?;
                Err(StoreError::transport("injected: connection reset after the request was sent"))
            }
            // Classified exactly as the S3 store classifies a real answer.
            Some(Fault::Status(status, code)) => Err(StoreError::new(
                super::s3::response::failure_kind(status, Some(code)),
                Some(code),
                Some(status),
                "injected",
            )),
            Some(Fault::Transport) => Err(StoreError::transport("injected: connection refused")),
            Some(Fault::Late) => Err(StoreError::transport("injected: Late applies to puts only")),
        }
    }
}

#[async_trait(?Send)]
impl ObjectStore for FaultStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        let got = self.run(Op::Get, self.inner.get(key)).await?;
        Ok(got.map(|o| if self.hide_write_meta.get() { StoredObject { meta: WriteMeta::default(), ..o } } else { o }))
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        self.deliver_late_put().await;
        match self.begin(Op::Put) {
            Some(Fault::Late) => {
                *self.late_put.borrow_mut() = Some((key.to_owned(), body.to_vec(), precondition.clone(), meta.clone()));
                Err(StoreError::transport("injected: timed out while the request is still on its way"))
            }
            fault => self.apply(fault, self.inner.put(key, body, precondition, meta)).await,
        }
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        self.run(Op::Delete, self.inner.delete(key)).await
    }

    async fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        self.run(Op::List, self.inner.list(prefix)).await
    }

    fn max_key_bytes(&self) -> usize {
        self.inner.max_key_bytes()
    }

    fn server_time(&self) -> Option<crate::time::Timestamp> {
        self.inner.server_time()
    }
}
