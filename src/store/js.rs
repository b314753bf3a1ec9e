//! A store written in JavaScript (wasm32 only): the npm package's `customStore({get, put, delete,
//! list})`, and the adapters built on it (the R2 binding, Deno KV, a Durable Object's storage).
//!
//! The JS layer normalises the user's object into a `HostStore` of four calls with fixed shapes
//! and turns whatever it throws into a `HostFailure`; this side adds what every store gets from
//! the core: one attempt per call, bounded by a per-attempt timeout (the call's `AbortSignal` is
//! aborted when the attempt is abandoned, by the timeout or by the caller's cancel), and a failure
//! the retry layer can act on (`retryable` failures of a write are resolved by reading back first,
//! since the write may have landed). The raw bindings are in `crate::host::sys`.

use async_trait::async_trait;
use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use super::{
    FailureKind, IfChanged, ListPage, Listed, ObjectStore, Precondition, PutOutcome, StoreError, StoreResult,
    StoredObject, WriteMeta,
};
use crate::base::error::{Error, Result};
use crate::base::future::{Either, race};
use crate::base::sync::Shared;
use crate::host::io::AbortOnDrop;
use crate::host::sys::{HostAnswer, HostFailure, HostStore};
use crate::time::{Clock, Timestamp};

/// An [`ObjectStore`] over a JS object with `get`, `put`, `delete` and `list` in the shapes the
/// npm package's JS layer hands over (see `pkg/host-stores.js`).
pub struct JsStore {
    host: HostStore,
    name: String,
    clock: Shared<dyn Clock>,
    timeout: f64,
    /// A custom store's contract: its etags are unique per write ([`ObjectStore::unique_etags`])
    /// and its own opaque tokens ([`ObjectStore::opaque_etags`]).
    custom: bool,
}

impl JsStore {
    /// The store over `host`, named `name` in messages ("custom store", "R2"…), each attempt given
    /// `timeout` seconds on `clock`. What it can do besides the four calls, `host` says in
    /// `conditionalGet` and `conditionalDelete`.
    pub fn from_js(host: JsValue, name: &str, clock: Shared<dyn Clock>, timeout: f64) -> Result<Self> {
        if !crate::host::sys::has_methods(&host, &["get", "put", "delete", "list"]) {
            return Err(Error::invalid("a store needs get, put, delete and list methods"));
        }
        super::validate_timeout(name, timeout)?;
        Ok(JsStore { host: host.unchecked_into(), name: name.to_owned(), clock, timeout, custom: false })
    }

    /// A host under a custom store's contract: its etags change with every write, never come
    /// back, and are compared exactly as it handed them out (not the R2 binding's, whose etag is
    /// the body's MD5, bare, and which takes an HTTP `ETag` value's quotes off).
    pub fn with_custom_contract(self) -> Self {
        JsStore { custom: true, ..self }
    }

    /// One attempt: what a call made with `guard`'s signal returned, awaited racing the timeout;
    /// when the attempt is abandoned (the timeout, or its future dropped by a cancel), dropping the
    /// guard aborts the signal, so the store can stop its own work. Not generic: one copy for all
    /// four calls.
    async fn attempt(
        &self,
        method: &str,
        write: bool,
        guard: AbortOnDrop,
        returned: Result<JsValue, JsValue>,
    ) -> StoreResult<JsValue> {
        let returned = returned.map_err(|e| self.failure(method, write, &e))?;
        let settled = crate::host::io::in_flight(crate::host::promise::settled(&returned));
        let answer = match race(settled, self.clock.sleep(self.timeout)).await {
            Either::Left(answer) => answer,
            Either::Right(()) => {
                let timeout = crate::base::number::number_text(self.timeout);
                return Err(StoreError::transport(format!("{} {method}: no answer within {timeout} s", self.name)));
            }
        };
        guard.disarm();
        answer.map_err(|e| self.failure(method, write, &e))
    }

    /// What the JS layer threw, as the retry layer needs it: retryable (a write may have landed,
    /// so it is read back first — unless its status is 429 or 503, which say, as S3's do, that it
    /// was refused before anything was applied) or not (refused; its `code` and `status` kept).
    fn failure(&self, method: &str, write: bool, thrown: &JsValue) -> StoreError {
        let failure: &HostFailure = thrown.unchecked_ref();
        let message = if thrown.is_object() { failure.message().as_string() } else { thrown.as_string() };
        let message = format!("{} {method}: {}", self.name, message.unwrap_or_else(|| "failed".into()));
        if !thrown.is_object() {
            return StoreError::new(FailureKind::Fatal, None, None, message);
        }
        let status = failure.status().as_f64().filter(|s| (100.0..=599.0).contains(s)).map(|s| s as u16);
        let kind = match (failure.retryable().as_bool(), write) {
            (Some(true), true) if matches!(status, Some(429 | 503)) => FailureKind::Transient,
            (Some(true), true) => FailureKind::Indeterminate,
            (Some(true), false) => FailureKind::Transient,
            _ => FailureKind::Fatal,
        };
        StoreError::new(kind, failure.code().as_string().as_deref(), status, message)
    }

    fn malformed(&self, what: &str) -> StoreError {
        StoreError::new(FailureKind::Fatal, Some("MalformedResponse"), None, format!("{} {what}", self.name))
    }

    /// An etag as the store gave it: opaque, handed back unchanged in `ifMatch` (a store that
    /// quotes its etags gets them quoted).
    fn etag(&self, value: JsValue, method: &str) -> StoreResult<String> {
        match value.as_string() {
            Some(e) if !e.is_empty() => Ok(e),
            _ => Err(self.malformed(&format!("{method}: an answer without an etag"))),
        }
    }

    /// A `get` answer: `null` (absent) or `{data, etag, meta, modified?}`.
    fn object(&self, answer: JsValue) -> StoreResult<Option<StoredObject>> {
        if answer.is_null() || answer.is_undefined() {
            return Ok(None);
        }
        let a: &HostAnswer = answer.unchecked_ref();
        let etag = self.etag(a.etag(), "get")?;
        let data = a.data().dyn_into::<Uint8Array>().map_err(|_| self.malformed("get: data is not bytes"))?;
        let meta = strings(&a.meta());
        let meta = WriteMeta::from_entries(|name| meta.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()));
        Ok(Some(StoredObject { body: data.to_vec(), etag, meta, last_modified: modified(&a.modified()) }))
    }
}

/// A record of strings as (name, value) pairs; anything else reads as none.
fn strings(record: &JsValue) -> Vec<(String, String)> {
    let Some(record) = record.dyn_ref::<Object>() else { return Vec::new() };
    Object::entries(record)
        .iter()
        .filter_map(|pair| {
            let pair: Array = pair.dyn_into().ok()?;
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

/// A time the store gave, in milliseconds; one no lease document could record (before year 0 or
/// past 9999: a store's bug) is an unknown age, which `prune` never deletes on.
fn modified(ms: &JsValue) -> Option<Timestamp> {
    ms.as_f64().filter(|m| m.is_finite()).map(Timestamp::from_millis_f64).filter(|t| t.is_on_wire())
}

#[async_trait(?Send)]
impl ObjectStore for JsStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        let guard = AbortOnDrop::new();
        let returned = self.host.get(key, None, guard.signal());
        let answer = self.attempt("get", false, guard, returned).await?;
        self.object(answer)
    }

    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        let guard = AbortOnDrop::new();
        let returned = self.host.get(key, Some(etag), guard.signal());
        let answer = self.attempt("get", false, guard, returned).await?;
        if answer.is_object() && answer.unchecked_ref::<HostAnswer>().not_modified().as_bool() == Some(true) {
            return Ok(IfChanged::NotModified);
        }
        // The whole object sent back (a store that does not look at the condition): the one store
        // call's `send` compares its etag with the one asked about.
        Ok(IfChanged::Current(self.object(answer)?))
    }

    fn conditional_get(&self) -> bool {
        self.host.conditional_get().is_truthy()
    }

    fn unique_etags(&self) -> bool {
        self.custom
    }

    fn opaque_etags(&self) -> bool {
        self.custom
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        let record: Array =
            meta.entries().into_iter().map(|(name, value)| Array::of2(&name.into(), &value.into())).collect();
        // Pairs of strings always make a record.
        let record = Object::from_entries(&record).unwrap_or_else(|_| Object::new());
        let condition = match precondition {
            Precondition::None => None,
            Precondition::IfAbsent => Some("*"),
            Precondition::IfMatch(etag) => Some(etag.as_str()),
        };
        let data = Uint8Array::from(body);
        let guard = AbortOnDrop::new();
        let returned = self.host.put(key, &data, condition, &record, guard.signal());
        let answer = self.attempt("put", true, guard, returned).await?;
        if answer.is_null() || answer.is_undefined() {
            return Ok(PutOutcome::PreconditionFailed);
        }
        // The write landed; without an etag the retry layer's read-back finds out which version.
        let etag = self.etag(answer, "put").map_err(|e| StoreError { kind: FailureKind::Indeterminate, ..e })?;
        Ok(PutOutcome::Written { etag })
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        let guard = AbortOnDrop::new();
        let returned = self.host.delete(key, None, guard.signal());
        self.attempt("delete", true, guard, returned).await.map(drop)
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        let guard = AbortOnDrop::new();
        let returned = self.host.delete(key, Some(etag), guard.signal());
        let answer = self.attempt("delete", true, guard, returned).await?;
        answer.as_bool().ok_or_else(|| self.malformed("delete: an answer that is not a boolean"))
    }

    fn conditional_delete(&self) -> bool {
        self.host.conditional_delete().is_truthy()
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        let guard = AbortOnDrop::new();
        let returned = self.host.list(prefix, start_after, cursor, guard.signal());
        let answer = self.attempt("list", false, guard, returned).await?;
        let page: &HostAnswer = answer.unchecked_ref();
        let entries = page.entries();
        if !answer.is_object() || !Array::is_array(&entries) {
            return Err(self.malformed("list: a page without entries"));
        }
        let entries = entries
            .unchecked_ref::<Array>()
            .iter()
            .filter(JsValue::is_object)
            .filter_map(|entry| {
                let e: &HostAnswer = entry.unchecked_ref();
                Some(Listed {
                    key: e.key().as_string()?,
                    etag: e.etag().as_string(),
                    // A size is a whole number of bytes; anything else is no size.
                    size: e.size().as_f64().filter(|s| *s >= 0.0 && s.fract() == 0.0 && *s < 9.0e15).map(|s| s as u64),
                    last_modified: modified(&e.modified()),
                })
            })
            .collect();
        Ok(ListPage { entries, next: page.cursor().as_string().filter(|c| !c.is_empty()) })
    }
}
