//! Any [`object_store::ObjectStore`] (the Apache Arrow `object_store` crate) as a fencepost store
//! (feature `object_store`, native only): [`ObjectStoreAdapter`].
//!
//! ```
//! use std::sync::Arc;
//! use fencepost::store::object_store::ObjectStoreAdapter;
//! use fencepost::{Fencepost, Options};
//! use object_store::memory::InMemory;
//! use serde_json::json;
//!
//! # futures::executor::block_on(async {
//! let store = ObjectStoreAdapter::new(Arc::new(InMemory::new()));
//! let db = Fencepost::new(Arc::new(store), Options::default())?;
//! assert!(db.claim("cron/nightly/2026-05-01", json!({"by": "worker-1"})).await?.won);
//! let second = db.claim("cron/nightly/2026-05-01", json!({"by": "worker-2"})).await?;
//! assert!(!second.won);
//! assert_eq!(second.value, json!({"by": "worker-1"}));
//! # Ok::<(), fencepost::Error>(())
//! # }).unwrap();
//! ```
//!
//! What each operation becomes: a create is `PutMode::Create`, a compare-and-swap
//! `PutMode::Update` with the etag (quoted, as `If-Match` wants it), a plain put
//! `PutMode::Overwrite`; the write tokens travel as `Attribute::Metadata` (S3's `x-amz-meta-*`,
//! the same names as fencepost's own S3 store, so both can share a bucket).
//!
//! What the backends can do (object_store 0.14):
//! - `InMemory`, `AmazonS3` (its default `S3ConditionalPut::ETagMatch`) and `MicrosoftAzure`:
//!   everything. An S3-compatible server that lists in another order than S3's (SeaweedFS puts
//!   `a/b/…` before `a/b-c`) needs [`unordered_listing`](ObjectStoreAdapter::unordered_listing).
//! - `LocalFileSystem`: creates and plain puts only (no `PutMode::Update`, so no lease or doc),
//!   and no user metadata at all: build the adapter [`without_metadata`](ObjectStoreAdapter::without_metadata)
//!   and [`unordered_listing`](ObjectStoreAdapter::unordered_listing) for it.
//! - `GoogleCloudStorage`: its update matches the object's generation (`UpdateVersion::version`),
//!   which a fencepost etag does not carry: use [`crate::store::gcs::GcsStore`].
//! - `HttpStore` (WebDAV): plain puts only.
//!
//! A backend that cannot do a conditional write answers the typed, fatal `Unsupported`; no write
//! is ever made unconditional in its place.
//!
//! Build cloud clients without retries of their own (`with_retry(RetryConfig { max_retries: 0, .. })`
//! on the builder): fencepost's retry layer resolves a write whose answer was lost by reading
//! it back, while object_store re-sends a conditional put after a 5xx, and the 412 the re-send
//! meets may be the first attempt's own write, reported as lost.
//!
//! object_store's clients need tokio (its reactor and timers), fencepost's futures do not: each
//! call runs as a task on the caller's tokio runtime, or else on a small runtime of the adapter's
//! own (one worker thread, started on first use), as fencepost's `ReqwestTransport` does.

#![cfg_attr(docsrs, doc(cfg(feature = "object_store")))]

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use ::object_store::path::Path;
use ::object_store::{
    Attribute, Attributes, Error as OsError, GetOptions, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion,
};
use async_trait::async_trait;
use futures_util::StreamExt;

use super::{
    FailureKind, IfChanged, ListPage, Listed, ObjectStore, Precondition, PutOutcome, StoreError, StoreResult,
    StoredObject, WriteMeta, malformed_listing, normalize_etag,
};
use crate::base::error::quoted;
use crate::host::tokio::NoAnswer;
use crate::time::Timestamp;

/// Keys per listing page, as S3 returns them.
const PAGE: usize = 1000;

/// An [`ObjectStore`] on any `object_store` backend. Clones share the backend.
///
/// Keys must be `object_store` paths as they are written: no empty segment, no leading or
/// trailing `/`, no ASCII control character (`Path::parse` keeps such a key byte for byte, where
/// `Path::from` would percent-encode `%`, `#`, `?`… into another key than other fencepost clients
/// use). Any other key is refused with the fatal `InvalidArgument`, never stored under another name.
#[derive(Clone, Debug)]
pub struct ObjectStoreAdapter {
    store: Arc<dyn ::object_store::ObjectStore>,
    metadata: bool,
    ordered: bool,
}

impl ObjectStoreAdapter {
    /// The adapter on `store`, assuming it keeps user metadata and lists in key order (S3, Azure,
    /// GCS and `InMemory` do both).
    pub fn new(store: Arc<dyn ::object_store::ObjectStore>) -> Self {
        ObjectStoreAdapter { store, metadata: true, ordered: true }
    }

    /// For a backend that keeps no user metadata (`LocalFileSystem` refuses any): writes carry no
    /// write token, so a write whose answer is lost cannot be told apart from another writer's,
    /// and fencepost reports such a write as `AmbiguousWrite` where it would otherwise resolve it.
    /// Without this such a backend's writes fail with `Unsupported`, saying so.
    pub fn without_metadata(mut self) -> Self {
        self.metadata = false;
        self
    }

    /// For a backend whose listing is not in key (UTF-8 byte) order: `LocalFileSystem` walks
    /// directories as they come, SeaweedFS lists `a/b/…` before `a/b-c` and honours `start-after`
    /// in that order. Each page then reads the prefix's whole directory, assuming nothing, where
    /// in key order it starts after the cursor and stops after a page. Without this, a listing
    /// that shows a key out of order fails (`MalformedResponse`) rather than risk missing keys.
    pub fn unordered_listing(mut self) -> Self {
        self.ordered = false;
        self
    }

    /// The backend.
    pub fn inner(&self) -> &Arc<dyn ::object_store::ObjectStore> {
        &self.store
    }
}

impl ObjectStoreAdapter {
    /// One GET with `options` (a plain read, or a conditional one that may answer `NotModified`).
    async fn fetch(&self, key: &str, options: GetOptions) -> StoreResult<IfChanged> {
        let (store, path) = (self.store.clone(), path_of("GET", key)?);
        let got = on_tokio(async move {
            let result = match store.get_opts(&path, options).await {
                Err(OsError::NotModified { .. }) => return Ok(None),
                Err(e) if absent(&e) => return Ok(Some(None)),
                other => other?,
            };
            let (meta, attributes) = (result.meta.clone(), result.attributes.clone());
            Ok::<_, OsError>(Some(Some((meta, attributes, result.bytes().await?))))
        })
        .await?
        .map_err(|e| failure("GET", key, e))?;
        // `None`: not modified; `Some(None)`: absent.
        let Some(got) = got else { return Ok(IfChanged::NotModified) };
        let Some((meta, attributes, body)) = got else { return Ok(IfChanged::Current(None)) };
        let etag = etag_of("GET", key, meta.e_tag.as_deref(), meta.version.is_some())?;
        let meta_of = |name: &str| attributes.get(&Attribute::Metadata(name.to_owned().into())).map(|v| v.to_string());
        Ok(IfChanged::Current(Some(StoredObject {
            body: body.to_vec(),
            etag,
            meta: WriteMeta::from_entries(meta_of),
            last_modified: Some(Timestamp::from_micros(meta.last_modified.timestamp_micros())),
        })))
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl ObjectStore for ObjectStoreAdapter {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        match self.fetch(key, GetOptions::default()).await? {
            IfChanged::Current(object) => Ok(object),
            // A backend answering "not modified" to a read that named no version is broken.
            IfChanged::NotModified => Err(StoreError::new(
                FailureKind::Fatal,
                Some("MalformedResponse"),
                Some(304),
                format!("GET {}: not modified, though no version was named", quoted(key)),
            )),
        }
    }

    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        let options =
            GetOptions { if_none_match: Some(format!("\"{}\"", normalize_etag(etag))), ..GetOptions::default() };
        self.fetch(key, options).await
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
        let (store, path) = (self.store.clone(), path_of("PUT", key)?);
        let mode = match precondition {
            Precondition::None => PutMode::Overwrite,
            Precondition::IfAbsent => PutMode::Create,
            // Quoted, as an entity tag is (and as fencepost's S3 store sends it): `InMemory`
            // compares the quoted form.
            Precondition::IfMatch(etag) => {
                PutMode::Update(UpdateVersion { e_tag: Some(format!("\"{}\"", normalize_etag(etag))), version: None })
            }
        };
        let mut attributes = Attributes::new();
        if self.metadata {
            attributes.insert(Attribute::ContentType, "application/json".into());
            for (name, value) in meta.entries() {
                attributes.insert(Attribute::Metadata(name.into()), value.into());
            }
        }
        let update = matches!(mode, PutMode::Update(_));
        let options = PutOptions { mode, attributes, ..PutOptions::default() };
        let payload: PutPayload = body.to_vec().into();
        let put = on_tokio(async move { store.put_opts(&path, payload, options).await }).await?;
        match put {
            Ok(done) => {
                // It landed; without an etag the retry layer's read-back finds out which version.
                let etag = etag_of("PUT", key, done.e_tag.as_deref(), done.version.is_some())
                    .map_err(|e| StoreError { kind: FailureKind::Indeterminate, ..e })?;
                Ok(PutOutcome::Written { etag })
            }
            // A create meeting the key (412, or 409 from some servers), a CAS meeting another etag
            // or no object (object_store turns S3's 404 into `Precondition`; others may not).
            Err(OsError::AlreadyExists { .. }) if !update => Ok(PutOutcome::PreconditionFailed),
            Err(OsError::Precondition { .. } | OsError::NotModified { .. }) => Ok(PutOutcome::PreconditionFailed),
            Err(e) if update && absent(&e) => Ok(PutOutcome::PreconditionFailed),
            // A CAS answered 409 (what object_store maps `AlreadyExists` from): S3's
            // ConditionalRequestConflict, a concurrent conditional write; retried above, and
            // lost if it persists.
            Err(OsError::AlreadyExists { .. }) => Err(StoreError::new(
                FailureKind::ConditionalConflict,
                Some("ConditionalRequestConflict"),
                Some(409),
                format!("PUT {}: a concurrent conditional write", quoted(key)),
            )),
            Err(e) => Err(failure("PUT", key, e)),
        }
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        let (store, path) = (self.store.clone(), path_of("DELETE", key)?);
        match on_tokio(async move { store.delete(&path).await }).await? {
            Ok(()) => Ok(()),
            Err(e) if absent(&e) => Ok(()),
            Err(e) => Err(failure("DELETE", key, e)),
        }
    }

    /// object_store has no conditional delete; callers re-read before a plain one.
    fn conditional_delete(&self) -> bool {
        false
    }

    /// fencepost's prefixes are string prefixes (`a/b` covers `a/bc`), object_store's whole path
    /// segments: the listing is of the prefix's directory (up to its last `/`; the whole store
    /// for a prefix without one), filtered by the string prefix here. A page is the 1000 smallest
    /// keys after the cursor, which is the last key of the page before.
    ///
    /// In key order (the default) the listing starts after the cursor (`list_with_offset`: S3
    /// pushes it down as `start-after`) and stops after a page, or at the first key past the
    /// prefix; a key out of order fails the listing, since a page may then have missed keys.
    /// Unordered, each page reads the whole directory and assumes nothing.
    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        let dir = match prefix.rfind('/') {
            Some(i) => Some(path_of("LIST", &prefix[..i])?),
            None => None,
        };
        // Keys before the prefix cannot match: start from it at least.
        let after = cursor.or(start_after).filter(|a| *a >= prefix).map(str::to_owned);
        // Where object_store starts (exclusive): the bound, else the prefix less its last character
        // (every key with the prefix sorts after that), so S3 skips what comes before. Only a path
        // that is a prefix of it, so no greater than it: the exact bound is checked on every key.
        let floor = after.clone().or_else(|| prefix.char_indices().last().map(|(i, _)| prefix[..i].to_owned()));
        let offset = floor
            .and_then(|f| Path::parse(&f).ok().filter(|p| !p.is_root() && f.starts_with(p.as_ref())))
            .filter(|_| self.ordered);
        let (store, owned_prefix, ordered) = (self.store.clone(), prefix.to_owned(), self.ordered);
        let listed = on_tokio(async move {
            let mut stream = match &offset {
                Some(offset) => store.list_with_offset(dir.as_ref(), offset),
                None => store.list(dir.as_ref()),
            };
            // The PAGE + 1 smallest keys seen (one more than a page tells that another follows).
            let mut page = BTreeMap::new();
            // In key order: the last key seen, or (before any) the offset.
            let mut last = offset.as_ref().map(|o| o.to_string());
            while let Some(meta) = stream.next().await {
                let meta = meta?;
                let key = meta.location.as_ref();
                if ordered {
                    if last.as_deref().is_some_and(|l| key <= l) {
                        return Ok(Err(key.to_owned()));
                    }
                    last = Some(key.to_owned());
                    // The keys with the prefix are behind us once one sorts after it.
                    if !key.starts_with(owned_prefix.as_str()) && key > owned_prefix.as_str() {
                        break;
                    }
                }
                if !key.starts_with(owned_prefix.as_str()) || after.as_deref().is_some_and(|a| key <= a) {
                    continue;
                }
                page.insert(key.to_owned(), meta);
                if page.len() > PAGE + 1 {
                    page.pop_last();
                }
                // In key order nothing later can belong on this page.
                if ordered && page.len() > PAGE {
                    break;
                }
            }
            Ok::<_, OsError>(Ok(page))
        })
        .await?
        .map_err(|e| failure("LIST", prefix, e))?;
        let page = listed.map_err(|key| {
            let why = format!(
                "the backend listed {} out of key order (ObjectStoreAdapter::unordered_listing is for such a backend)",
                quoted(&key)
            );
            malformed_listing(prefix, &why)
        })?;
        let entries: Vec<Listed> = page
            .into_values()
            .map(|meta| Listed {
                key: meta.location.to_string(),
                etag: meta.e_tag.as_deref().map(normalize_etag),
                size: Some(meta.size),
                last_modified: Some(Timestamp::from_micros(meta.last_modified.timestamp_micros())),
            })
            .collect();
        Ok(ListPage::first_of(entries, PAGE))
    }
}

/// `key` as the object_store path that is exactly it (see [`ObjectStoreAdapter`]).
fn path_of(verb: &str, key: &str) -> StoreResult<Path> {
    match Path::parse(key) {
        Ok(path) if path.as_ref() == key => Ok(path),
        _ => Err(StoreError::new(
            FailureKind::Fatal,
            Some("InvalidArgument"),
            None,
            format!(
                "{verb} {}: not an object_store path as written (no empty segment, no leading or trailing '/', \
                 no control character)",
                quoted(key)
            ),
        )),
    }
}

/// The normalised etag an answer carries: what a compare-and-swap matches.
fn etag_of(verb: &str, key: &str, etag: Option<&str>, has_version: bool) -> StoreResult<String> {
    match etag.map(normalize_etag).filter(|e| !e.is_empty()) {
        Some(etag) => Ok(etag),
        None => {
            // A backend that versions objects without etags is one fencepost cannot compare-and-swap on.
            let (code, versioned) = match has_version {
                true => ("Unsupported", " (only a version, which fencepost's compare-and-swap cannot use)"),
                false => ("MalformedResponse", ""),
            };
            let message = format!("{verb} {}: the backend gave no etag{versioned}", quoted(key));
            Err(StoreError::new(FailureKind::Fatal, Some(code), None, message))
        }
    }
}

/// A missing object, not a missing bucket: object_store reports both as `NotFound`, and a bucket
/// that is not there must not read as a store where every key is absent (S3 names it in the body).
fn absent(error: &OsError) -> bool {
    matches!(error, OsError::NotFound { .. }) && !error.to_string().contains("<Code>NoSuchBucket</Code>")
}

/// What an object_store error lets the retry layer do. Messages leave out the sources of
/// permission errors (S3's 403 body echoes the request's signature and string to sign), and are
/// capped otherwise.
fn failure(verb: &str, key: &str, error: OsError) -> StoreError {
    let what = format!("{verb} {}", quoted(key));
    let fatal = |code: &str, message: String| StoreError::new(FailureKind::Fatal, Some(code), None, message);
    match error {
        OsError::NotImplemented { operation, implementer } => {
            let hint = if operation.contains("attributes") {
                " (a backend without user metadata needs ObjectStoreAdapter::without_metadata)"
            } else {
                ""
            };
            fatal("Unsupported", format!("{what}: {implementer} does not implement {operation}{hint}"))
        }
        OsError::NotSupported { source } => {
            fatal("Unsupported", format!("{what}: not supported: {}", capped(&*source)))
        }
        OsError::PermissionDenied { .. } => fatal("AccessDenied", format!("{what}: permission denied")),
        OsError::Unauthenticated { .. } => fatal("Unauthenticated", format!("{what}: no valid credentials")),
        OsError::NotFound { .. } if !absent(&error) => {
            fatal("NoSuchBucket", format!("{what}: the bucket does not exist"))
        }
        OsError::InvalidPath { source } => fatal("InvalidArgument", format!("{what}: {}", capped(&source))),
        OsError::UnknownConfigurationKey { .. } => fatal("InvalidArgument", format!("{what}: {}", capped(&error))),
        // A request that never reached the server: nothing was applied.
        other if transport_kind(&other) == Some(::object_store::client::HttpErrorKind::Connect) => {
            StoreError::new(FailureKind::Transient, None, None, format!("{what}: {}", capped(&other)))
        }
        // Transport, a 5xx, anything else: a write may have landed (read back before any retry).
        other => StoreError::transport(format!("{what}: {}", capped(&other))),
    }
}

/// The kind of the HTTP client error in `error`'s chain, if there is one.
fn transport_kind(error: &(dyn std::error::Error + 'static)) -> Option<::object_store::client::HttpErrorKind> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(http) = e.downcast_ref::<::object_store::client::HttpError>() {
            return Some(http.kind());
        }
        current = e.source();
    }
    None
}

fn capped(error: &dyn std::fmt::Display) -> String {
    const MAX: usize = 400;
    let text = error.to_string();
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Run `call` on tokio (the caller's runtime, else fencepost's own); dropping the returned
/// future (a timeout, a cancel) aborts it.
async fn on_tokio<T: Send + 'static>(call: impl Future<Output = T> + Send + 'static) -> StoreResult<T> {
    crate::host::tokio::on_tokio(call).await.map_err(|e| match e {
        NoAnswer::NoRuntime(why) => StoreError::new(FailureKind::Fatal, None, None, why),
        NoAnswer::Ended(why) => StoreError::transport(format!("the object_store call ended without an answer: {why}")),
    })
}
