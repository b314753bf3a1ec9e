//! The object-store seam. A store does exactly one attempt per call and says precisely how
//! it failed; retries, backoff and the resolution of ambiguous writes live in one place above it
//! ([`crate::Objects`]), so every store gets them the same way.

pub mod azure;
mod counting;
/// Public as `crate::testing`.
pub(crate) mod fault;
pub mod gcs;
pub mod http;
mod memory;
#[cfg(all(feature = "object_store", not(target_arch = "wasm32")))]
pub mod object_store;
mod prefix;
pub mod s3;

#[cfg(target_arch = "wasm32")]
pub mod js;
#[cfg(target_arch = "wasm32")]
pub mod r2;

use std::future::Future;

use async_trait::async_trait;

use crate::base::sync::{MaybeSend, MaybeSync, Shared};

pub use counting::{CountingStore, Op, RequestCounter, RequestCounts, Tally};
pub use memory::MemoryStore;
pub use prefix::PrefixStore;

/// How many replaced write tokens a write carries: enough to recognise one's own write after up to
/// 31 others landed on top of it before the read-back (24 writers racing on one key with every
/// other response lost: no ambiguous outcome in 480 calls, against 3.3 % with 8). 32 tokens are
/// 735 bytes of metadata, well inside the 2 KB S3 and R2 allow.
pub(crate) const TOKEN_HISTORY: usize = 32;

/// Seconds an attempt may go unanswered before it counts as a transport error (every store that
/// waits on something outside the process: S3, Azure, GCS, stores written in JS, and the fault
/// store's hangs and pauses).
pub const DEFAULT_TIMEOUT: f64 = 30.0;

/// A timeout in seconds as every store's options take it: a number > 0.
pub(crate) fn validate_timeout(service: &str, timeout: f64) -> crate::base::error::Result<()> {
    if timeout.is_finite() && timeout > 0.0 {
        return Ok(());
    }
    Err(crate::base::error::Error::invalid(format!(
        "{service} timeout must be a number of seconds > 0, got {}",
        crate::base::number::number_text(timeout)
    )))
}

/// Metadata names (S3 adds `x-amz-meta-`; R2 uses them as `customMetadata` keys), so the S3 API and
/// the R2 binding see the same provenance on one bucket.
pub(crate) const META_TOKEN: &str = "fencepost-token";
pub(crate) const META_HISTORY: &str = "fencepost-history";
pub(crate) const META_ORIGIN: &str = "fencepost-origin";

/// The provenance fencepost attaches to each write: its own random token, the tokens of the
/// versions it replaced (newest first), and the token of the write that created the key's current
/// lineage (its origin), copied along by every compare-and-swap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteMeta {
    pub token: Option<String>,
    /// The replaced versions' tokens, newest first, separated by single spaces (tokens are
    /// URL-safe, never a space), at most 32; empty when none ([`WriteMeta::history_tokens`] lists
    /// them). One string, as stores keep it in their metadata, rather than a list: a write copies
    /// its base's history and a store clones what it keeps, and one string is one allocation
    /// where a list was 33 (copying and freeing those lists was about half of the wasm
    /// instructions of a `doc.update` on the memory store).
    pub history: String,
    /// `None` when unknown (a write by a tool that keeps no provenance, or a layer-0 `ifMatch` put,
    /// which does not know the version it replaces).
    pub origin: Option<String>,
}

impl WriteMeta {
    /// A write that starts a lineage (a create, or a plain put).
    pub(crate) fn creating(token: String) -> Self {
        WriteMeta { origin: Some(token.clone()), token: Some(token), history: String::new() }
    }

    /// The provenance of a write replacing `base`: base's token, then base's history, capped; the
    /// same origin.
    pub(crate) fn replacing(token: String, base: &WriteMeta) -> Self {
        let tokens = base.token.as_deref().into_iter().chain(base.history_tokens());
        let history = history_of(tokens, base.history.len() + 24);
        WriteMeta { token: Some(token), history, origin: base.origin.clone() }
    }

    /// The history's tokens, newest first.
    pub fn history_tokens(&self) -> impl Iterator<Item = &str> {
        self.history.split(' ').filter(|t| !t.is_empty())
    }

    /// Did the write tagged `token` produce this version or one it descends from?
    pub(crate) fn contains(&self, token: &str) -> bool {
        self.token.as_deref() == Some(token) || self.history_tokens().any(|t| t == token)
    }

    /// The metadata entries to store: (name, value), empty ones left out. Tokens are URL-safe, so
    /// a space never occurs in one and separates the history.
    pub(crate) fn entries(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some(t) = &self.token {
            out.push((META_TOKEN, t.clone()));
        }
        if !self.history.is_empty() {
            out.push((META_HISTORY, self.history.clone()));
        }
        if let Some(o) = &self.origin {
            out.push((META_ORIGIN, o.clone()));
        }
        out
    }

    /// Parse metadata read back from a store (`get` looks a name up); anything that is not a token
    /// is ignored, never trusted.
    pub(crate) fn from_entries(get: impl Fn(&str) -> Option<String>) -> Self {
        let one =
            |name: &str| get(name).map(|t| t.trim().to_owned()).filter(|t| crate::codec::token::looks_like_token(t));
        let stored = get(META_HISTORY).unwrap_or_default();
        let tokens = stored.split([' ', ',']).filter(|t| crate::codec::token::looks_like_token(t));
        let history = history_of(tokens, stored.len());
        WriteMeta { token: one(META_TOKEN), history, origin: one(META_ORIGIN) }
    }
}

/// A history from its tokens, newest first: the first `TOKEN_HISTORY` of them, single spaces
/// between (`capacity`: about its length, so that it is allocated once).
fn history_of<'a>(tokens: impl Iterator<Item = &'a str>, capacity: usize) -> String {
    let mut history = String::with_capacity(capacity);
    for t in tokens.take(TOKEN_HISTORY) {
        if !history.is_empty() {
            history.push(' ');
        }
        history.push_str(t);
    }
    history
}

/// One stored version of a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    pub body: Vec<u8>,
    /// Normalised: no surrounding quotes, no `W/` prefix.
    pub etag: String,
    pub meta: WriteMeta,
    /// When the store last wrote it (S3: `Last-Modified`, whole seconds; R2: `uploaded`), if it says.
    pub last_modified: Option<crate::time::Timestamp>,
}

/// One object of a listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    /// Relative to the store.
    pub key: String,
    /// Normalised like [`StoredObject::etag`], when the store lists it.
    pub etag: Option<String>,
    pub size: Option<u64>,
    pub last_modified: Option<crate::time::Timestamp>,
}

/// One page of a listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListPage {
    /// Ascending within the page.
    pub entries: Vec<Listed>,
    /// Where the next page starts (an opaque cursor: S3's continuation token, R2's cursor, the
    /// memory store's last key), `None` on the last page.
    pub next: Option<String>,
}

impl ListPage {
    /// The first `page` of `entries` (ascending, at most one more than a page fetched), the
    /// cursor being the page's last key when more follow: how stores that list locally page.
    pub(crate) fn first_of(mut entries: Vec<Listed>, page: usize) -> ListPage {
        let next = if entries.len() > page {
            entries.truncate(page);
            entries.last().map(|e| e.key.clone())
        } else {
            None
        };
        ListPage { entries, next }
    }
}

/// The precondition of a put.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precondition {
    None,
    /// Only if the key does not exist (`If-None-Match: *`).
    IfAbsent,
    /// Only if the stored etag equals this one (`If-Match`); a missing key fails.
    IfMatch(String),
}

/// What a conditional read ([`ObjectStore::get_if_changed`]) found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IfChanged {
    /// The stored version is still the one named: nothing was sent back (HTTP 304).
    NotModified,
    /// Another version (or `None`: the key is absent).
    Current(Option<StoredObject>),
}

/// What a put did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutOutcome {
    Written {
        etag: String,
    },
    /// The precondition did not hold: someone else's write won.
    PreconditionFailed,
}

/// How a single request failed; decides what the retry layer may do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Definitely not applied and worth retrying (429, 503 SlowDown, most 409s).
    Transient,
    /// 409 ConditionalRequestConflict: a concurrent conditional write on the key. Retried; if the
    /// budget runs out, a conditional put has lost.
    ConditionalConflict,
    /// May or may not have been applied (transport error, lost response, 500). Writes are resolved
    /// by reading the key back before anything is retried.
    Indeterminate,
    /// Refused; retrying will not help (403, 400, …).
    Fatal,
}

impl FailureKind {
    /// The kind as events report it: `"transient"`, `"conflict"`, `"indeterminate"`, `"fatal"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Transient => "transient",
            FailureKind::ConditionalConflict => "conflict",
            FailureKind::Indeterminate => "indeterminate",
            FailureKind::Fatal => "fatal",
        }
    }

    /// What an HTTP status (and the store's error code) lets the retry layer do: S3's statuses,
    /// which the other HTTP stores share, and the fault store's injected answers.
    pub(crate) fn of_http(status: u16, code: Option<&str>) -> FailureKind {
        match (status, code) {
            (409, Some("ConditionalRequestConflict")) => FailureKind::ConditionalConflict,
            // Refused before anything was applied; trying again can help.
            (409 | 429 | 503, _) => FailureKind::Transient,
            // The server gave up waiting for our body: nothing was applied.
            (408, _) | (400, Some("RequestTimeout")) => FailureKind::Transient,
            // 500, 502, 504…: the request may have been applied before the failure.
            (500..=599, _) => FailureKind::Indeterminate,
            _ => FailureKind::Fatal,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError {
    pub kind: FailureKind,
    pub code: Option<String>,
    pub status: Option<u16>,
    pub message: String,
}

impl StoreError {
    pub fn new(kind: FailureKind, code: Option<&str>, status: Option<u16>, message: impl Into<String>) -> Self {
        StoreError { kind, code: code.map(str::to_owned), status, message: message.into() }
    }

    pub fn transport(message: impl Into<String>) -> Self {
        Self::new(FailureKind::Indeterminate, None, None, message)
    }

    pub(crate) fn into_failure(self) -> crate::base::error::StorageFailure {
        crate::base::error::StorageFailure { code: self.code, status: self.status, message: self.message, key: None }
    }

    /// The failure of a request about the object `key` (`None`: a listing).
    pub(crate) fn failure_at(self, key: Option<&str>) -> crate::base::error::StorageFailure {
        crate::base::error::StorageFailure { key: key.map(str::to_owned), ..self.into_failure() }
    }

    /// The caller's error for a request about `key` that the store refused. A key the store calls
    /// too long (S3's `KeyTooLongError`) is the caller's key refused, an `InvalidArgument`, as the
    /// key rules' own refusals are: SeaweedFS, by default, takes no path segment over 255 bytes,
    /// though the whole key is within the 1024 bytes the rules allow.
    pub(crate) fn into_error(self, key: Option<&str>) -> crate::base::error::Error {
        if self.code.as_deref() == Some("KeyTooLongError") {
            let bytes = key.map_or(0, str::len);
            return crate::base::error::Error::invalid(format!(
                "the store refused the key ({bytes} bytes) as too long: {} (SeaweedFS, for one, takes no path segment over 255 bytes unless its filer's max_file_name_length is raised)",
                self.message
            ));
        }
        crate::base::error::Error::Storage(self.failure_at(key))
    }
}

pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// A linearizable (per key) conditional object store. Keys here are full keys relative to the
/// store's own prefix; stores that have a prefix add it themselves.
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
pub trait ObjectStore: MaybeSend + MaybeSync {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>>;
    /// `get`, unless the stored version is still `etag` (`If-None-Match`): then
    /// [`IfChanged::NotModified`], without the body. The default reads the whole object and
    /// compares etags (the same answer, at the cost of a full read); stores that ask the server
    /// say so in [`ObjectStore::conditional_get`].
    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        Ok(match self.get(key).await? {
            Some(object) if object.etag == etag => IfChanged::NotModified,
            other => IfChanged::Current(other),
        })
    }
    /// Whether [`ObjectStore::get_if_changed`] is answered by the store itself (304, no body).
    fn conditional_get(&self) -> bool {
        false
    }
    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome>;
    /// Deleting a missing key is not an error.
    async fn delete(&self, key: &str) -> StoreResult<()>;
    /// Delete `key` only while its etag is `etag` (`If-Match` on DELETE): `false` when it is not
    /// (changed, or gone). Stores without a conditional delete answer `Unsupported` (see
    /// [`ObjectStore::conditional_delete`]), and callers re-read right before a plain delete.
    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        let _ = (key, etag);
        Err(StoreError::new(FailureKind::Fatal, Some("Unsupported"), None, "this store has no conditional delete"))
    }
    /// Whether [`ObjectStore::delete_if_match`] is honoured (S3 and memory; not the R2 binding).
    fn conditional_delete(&self) -> bool {
        false
    }
    /// Whether a key's etag changes with every write and never comes back to an earlier one, not
    /// after a delete either (a custom store's contract), so that finding the etag a layer-0
    /// conditional write named still there proves the write did not land. Not where equal bytes
    /// give equal etags (S3's MD5, R2, the memory store's digest): another write of the same bytes
    /// brings the etag back.
    fn unique_etags(&self) -> bool {
        false
    }
    /// Whether the store's etags are its own opaque tokens, compared as given (a custom store's
    /// contract: it gets back exactly the etag it handed out). Otherwise an etag a caller hands in
    /// may be an HTTP `ETag` value, its quotes and weak marker dropped before use.
    fn opaque_etags(&self) -> bool {
        false
    }
    /// One page of the objects under `prefix`: the first (after the key `start_after`, if given)
    /// when `cursor` is `None`, else the one after the page whose [`ListPage::next`] it is. The
    /// loop over pages is written once (`collect_keys`).
    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage>;

    /// The longest key (UTF-8 bytes) this store can take: S3 and R2 allow 1024 bytes including
    /// the store prefix, so a prefix uses up part of the budget.
    fn max_key_bytes(&self) -> usize {
        crate::codec::keys::MAX_KEY_BYTES
    }

    /// The store's clock as of its latest response (S3: the `Date` header, plus half of the second
    /// it truncates), `None` when that response carried none or the store has no clock of its own
    /// (memory, R2 binding). Read right after a request returns; see [`crate::ClockSource::Store`].
    fn server_time(&self) -> Option<crate::time::Timestamp> {
        None
    }
}

/// What a store may be given as: a store itself (`MemoryStore::new()`, `S3Store::new(config)?`),
/// or one already shared (`Arc<CountingStore>`, `Arc<dyn ObjectStore>`; `Rc` in wasm32), to keep a
/// handle on it. Taken by `Fencepost::new` and the decorators' constructors.
///
/// (Not a blanket `impl ObjectStore for Arc<S>`: with one, a call through an `Arc<dyn ObjectStore>`
/// would resolve to that impl and box every future twice.)
pub trait IntoStore {
    fn into_store(self) -> Shared<dyn ObjectStore>;
}

impl<S: ObjectStore + 'static> IntoStore for S {
    fn into_store(self) -> Shared<dyn ObjectStore> {
        Shared::new(self)
    }
}

impl<S: ObjectStore + 'static> IntoStore for Shared<S> {
    fn into_store(self) -> Shared<dyn ObjectStore> {
        self
    }
}

impl IntoStore for Shared<dyn ObjectStore> {
    fn into_store(self) -> Shared<dyn ObjectStore> {
        self
    }
}

/// One request to a store, as a value: what the objects layer's one retry loop sends (so that loop,
/// and the events it reports, are compiled once rather than once per operation).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Request<'a> {
    Get(&'a str),
    /// A conditional read: the object unless its etag is still this one.
    GetIfChanged {
        key: &'a str,
        etag: &'a str,
    },
    Put {
        key: &'a str,
        body: &'a [u8],
        precondition: &'a Precondition,
        meta: &'a WriteMeta,
    },
    Delete(&'a str),
    DeleteIfMatch {
        key: &'a str,
        etag: &'a str,
    },
    List {
        prefix: &'a str,
        start_after: Option<&'a str>,
        cursor: Option<&'a str>,
    },
}

impl Request<'_> {
    /// How error messages name the request (`GET "key"`).
    pub(crate) fn verb(&self) -> &'static str {
        match self {
            Request::Get(_) | Request::GetIfChanged { .. } => "GET",
            Request::Put { .. } => "PUT",
            Request::Delete(_) | Request::DeleteIfMatch { .. } => "DELETE",
            Request::List { .. } => "LIST",
        }
    }

    pub(crate) fn op(&self) -> Op {
        match self {
            Request::Get(_) | Request::GetIfChanged { .. } => Op::Get,
            Request::Put { .. } => Op::Put,
            Request::Delete(_) | Request::DeleteIfMatch { .. } => Op::Delete,
            Request::List { .. } => Op::List,
        }
    }

    /// A PUT or a DELETE: what per-key write limits count.
    pub(crate) fn writes(&self) -> bool {
        matches!(self, Request::Put { .. } | Request::Delete(_) | Request::DeleteIfMatch { .. })
    }

    /// The key (a listing's prefix).
    pub(crate) fn key(&self) -> &str {
        match *self {
            Request::Get(key) | Request::Delete(key) => key,
            Request::Put { key, .. } | Request::DeleteIfMatch { key, .. } | Request::GetIfChanged { key, .. } => key,
            Request::List { prefix, .. } => prefix,
        }
    }

    /// The object the request is about: its key, or `None` for a listing.
    pub(crate) fn object_key(&self) -> Option<&str> {
        match self {
            Request::List { .. } => None,
            _ => Some(self.key()),
        }
    }
}

/// A store's answer to a [`Request`].
#[derive(Debug)]
pub(crate) enum Reply {
    Object(Option<StoredObject>),
    /// A conditional read found the version it named.
    NotModified,
    Put(PutOutcome),
    /// A delete: done, or (a conditional one) refused.
    Deleted(bool),
    Page(ListPage),
}

impl Reply {
    /// The status an HTTP store would have answered with, and how events name the outcome.
    pub(crate) fn status(&self) -> (u16, &'static str) {
        match self {
            Reply::Object(Some(_)) | Reply::Put(PutOutcome::Written { .. }) | Reply::Page(_) => (200, "ok"),
            Reply::Object(None) => (404, "absent"),
            Reply::Put(PutOutcome::PreconditionFailed) | Reply::Deleted(false) => (412, "refused"),
            Reply::Deleted(true) => (204, "ok"),
            Reply::NotModified => (304, "not-modified"),
        }
    }

    // The request decides the reply's kind; a mismatch cannot happen, and reads as "nothing".
    pub(crate) fn into_object(self) -> Option<StoredObject> {
        if let Reply::Object(o) = self { o } else { None }
    }
    pub(crate) fn into_if_changed(self) -> IfChanged {
        match self {
            Reply::NotModified => IfChanged::NotModified,
            other => IfChanged::Current(other.into_object()),
        }
    }
    pub(crate) fn into_put(self) -> PutOutcome {
        if let Reply::Put(p) = self { p } else { PutOutcome::PreconditionFailed }
    }
    pub(crate) fn into_deleted(self) -> bool {
        matches!(self, Reply::Deleted(true))
    }
    pub(crate) fn into_page(self) -> ListPage {
        if let Reply::Page(p) = self { p } else { ListPage::default() }
    }
}

impl<'a> dyn ObjectStore + 'a {
    /// Send `request` (one store call).
    pub(crate) async fn send(&self, request: Request<'_>) -> StoreResult<Reply> {
        Ok(match request {
            Request::Get(key) => Reply::Object(self.get(key).await?),
            // An answer with the very etag asked about (a server that ignored the condition) is
            // "not modified" too, here, so the request's event says 304 as the caller hears it.
            Request::GetIfChanged { key, etag } => match self.get_if_changed(key, etag).await? {
                IfChanged::Current(Some(object)) if object.etag != etag => Reply::Object(Some(object)),
                IfChanged::Current(None) => Reply::Object(None),
                IfChanged::Current(Some(_)) | IfChanged::NotModified => Reply::NotModified,
            },
            Request::Put { key, body, precondition, meta } => {
                Reply::Put(self.put(key, body, precondition, meta).await?)
            }
            Request::Delete(key) => Reply::Deleted(self.delete(key).await.map(|()| true)?),
            Request::DeleteIfMatch { key, etag } => Reply::Deleted(self.delete_if_match(key, etag).await?),
            Request::List { prefix, start_after, cursor } => {
                Reply::Page(self.list_page(prefix, start_after, cursor).await?)
            }
        })
    }

    /// Every key under `prefix`, ascending, following the pages (an inherent method of
    /// `dyn ObjectStore`, so it is compiled once, not per store).
    pub async fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        collect_keys(prefix, |cursor| async move { self.list_page(prefix, None, cursor.as_deref()).await }).await
    }
}

/// The one page loop: every key of the pages `page(cursor)` hands back, from the first page
/// (`None`) on, sorted and without duplicates (stores list in UTF-8 byte order already; this makes
/// it a guarantee for all). A page that would start the listing over (a repeated cursor) is a
/// broken server, reported rather than followed forever.
///
/// `page` takes its cursor by value: an async closure borrowing it would make the future not
/// `Send` (the borrow's lifetime is higher-ranked, which `Send` inference cannot see through).
pub(crate) async fn collect_keys<E: From<StoreError>, F: Future<Output = Result<ListPage, E>>>(
    prefix: &str,
    mut page: impl FnMut(Option<String>) -> F,
) -> Result<Vec<String>, E> {
    let mut keys = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_LIST_PAGES {
        let listed = page(cursor.clone()).await?;
        keys.extend(listed.entries.into_iter().map(|e| e.key).filter(|k| k.starts_with(prefix)));
        match listed.next {
            None => {
                crate::base::sort::sort(&mut keys);
                keys.dedup();
                return Ok(keys);
            }
            Some(next) if cursor.as_deref() == Some(next.as_str()) => {
                return Err(malformed_listing(prefix, "the same page cursor twice").into());
            }
            next => cursor = next,
        }
    }
    Err(malformed_listing(prefix, &format!("still truncated after {MAX_LIST_PAGES} pages")).into())
}

impl From<StoreError> for crate::base::error::Error {
    fn from(e: StoreError) -> Self {
        crate::base::error::Error::Storage(e.into_failure())
    }
}

/// A listing that keeps getting truncated with fresh cursors past this many pages (1000 keys each)
/// is a broken server, not a bucket.
pub(crate) const MAX_LIST_PAGES: usize = 100_000;

pub(crate) fn malformed_listing(prefix: &str, why: &str) -> StoreError {
    let what = crate::base::error::quoted(prefix);
    StoreError::new(FailureKind::Fatal, Some("MalformedResponse"), None, format!("LIST {what}: {why}"))
}

/// Strip the quotes (and weak marker) S3 puts around an ETag; R2 bindings give it bare.
pub(crate) fn normalize_etag(raw: &str) -> String {
    let t = raw.trim();
    let t = t.strip_prefix("W/").unwrap_or(t);
    t.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(t).to_owned()
}

/// The memory store's etag: a digest of the body, as S3's (hex MD5 of a single-part upload) is —
/// the same bytes give the same etag — in 32 hex digits like S3's. SHA-256 (truncated) rather
/// than MD5 because the S3 signer carries SHA-256 already: no second digest in the wasm.
pub(crate) fn content_etag(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    crate::codec::encoding::hex(&Sha256::digest(body)[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_normalise() {
        assert_eq!(normalize_etag("\"abc\""), "abc");
        assert_eq!(normalize_etag("abc"), "abc");
        assert_eq!(normalize_etag("W/\"abc\""), "abc");
        assert_eq!(content_etag(b""), "e3b0c44298fc1c149afbf4c8996fb924");
    }

    #[test]
    fn history_is_capped_newest_first_and_origin_is_kept() {
        let mut meta = WriteMeta::creating("t0".into());
        let last = TOKEN_HISTORY + 4;
        for i in 1..=last {
            meta = WriteMeta::replacing(format!("t{i}"), &meta);
        }
        assert_eq!(meta.history_tokens().count(), TOKEN_HISTORY);
        assert_eq!(meta.history_tokens().next(), Some(format!("t{}", last - 1)).as_deref());
        assert!(!meta.history.contains("  ") && !meta.history.starts_with(' ') && !meta.history.ends_with(' '));
        assert_eq!(meta.origin.as_deref(), Some("t0"));
        let (kept, dropped) = (format!("t{}", last - TOKEN_HISTORY), format!("t{}", last - TOKEN_HISTORY - 1));
        assert!(meta.contains(&format!("t{last}")) && meta.contains(&kept) && !meta.contains(&dropped));
        // All of it fits the 2 KB of user metadata S3 and R2 allow, names included.
        let bytes: usize = meta.entries().iter().map(|(name, value)| name.len() + value.len()).sum();
        assert!(bytes < 1024, "{bytes} bytes of metadata");
        let entries = meta.entries();
        let parsed = WriteMeta::from_entries(|n| entries.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()));
        assert_eq!(parsed, meta);
        let junk = WriteMeta::from_entries(|n| match n {
            META_TOKEN => Some("bad token!".into()),
            META_HISTORY => Some("a,<x>, b".into()),
            _ => None,
        });
        assert_eq!((junk.token, junk.history, junk.origin), (None, "a b".to_owned(), None));
    }
}
