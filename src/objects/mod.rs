//! The objects layer, the conditional key-value store as callers see it: [`Objects`] (its doc
//! says what it guarantees); `write` and `resolve` hold
//! the write path and the read-back resolution of ambiguous writes.

pub(crate) mod events;
mod resolve;
pub(crate) mod retry;
pub(crate) mod transition;
pub(crate) mod versions;
mod write;

use crate::base::mutation::{self, Mutation};
use crate::base::sync::Shared;
use crate::base::sync::SyncCell;
use std::future::Future;

use crate::base::cancel::Cancel;
use crate::base::error::{Error, Result, quoted};
use crate::codec::keys::{validate_key, validate_prefix};
use crate::store::{
    IfChanged, ListPage, ObjectStore, Precondition, Reply, Request, StoreResult, StoredObject, WriteMeta, collect_keys,
    malformed_listing, normalize_etag,
};
use crate::time::{Clock, ClockSource, Timestamp};
use events::{Call, Observer, OnEvent};
use retry::{Abandon, RetryPolicy};

/// `wait_for` polls at most this often (seconds).
pub(crate) const MIN_POLL_INTERVAL: f64 = 0.05;

/// Why a delete cancelled in flight is an ambiguous write: the key is still there (or could not be
/// read), and the delete sent may yet reach the store.
const DELETE_MAY_LAND: &str = "the call was cancelled while a delete that may still land was on its way";

/// A write that landed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The etag of the version we wrote; `None` when a read-back showed that it landed but has
    /// already been replaced by later writes (so its etag is unknown and a guarded writer must
    /// re-read before its next write).
    pub etag: Option<String>,
    /// The provenance we wrote with it; the next write that replaces it chains from this.
    pub meta: WriteMeta,
}

/// Options of [`Objects::wait_for`]; durations in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitOptions {
    /// Give up (with [`Error::Timeout`]) after this long; default 30.
    pub timeout: f64,
    /// Seconds between polls (one GET each); default 1, at least 0.05.
    pub poll_interval: f64,
    /// Wait for an etag different from this one (a change), instead of mere existence.
    pub changed_from: Option<String>,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions { timeout: 30.0, poll_interval: 1.0, changed_from: None }
    }
}

/// The conditional key-value store as callers see it (the layer under claim, lease and doc), from
/// [`crate::Fencepost::objects`]
/// or [`Objects::new`]. Cheap to clone (shares the store, the clock and the store-clock estimate).
///
/// The store behind key rules, bounded retries with backoff, and the resolution of ambiguous
/// writes. Layer 1 (claim, lease, doc) writes only through here, so every primitive gets the same
/// retry budget and the same "did my write land?" logic. Keys are validated as layer 1's are.
///
/// ```
/// use fencepost::store::{MemoryStore, Precondition};
/// use fencepost::{Fencepost, Options, WaitOptions};
///
/// # futures::executor::block_on(async {
/// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
/// let objects = db.objects();
/// // Create-only: the first put wins, the second finds the key taken (`None`).
/// let first = objects.put("config/a", b"v1", Precondition::IfAbsent).await?.expect("created");
/// assert!(objects.put("config/a", b"v2", Precondition::IfAbsent).await?.is_none());
/// // Compare-and-swap on the etag the write returned.
/// let etag = first.etag.expect("its etag");
/// assert!(objects.put("config/a", b"v2", Precondition::IfMatch(etag.clone())).await?.is_some());
/// assert!(objects.put("config/a", b"v3", Precondition::IfMatch(etag.clone())).await?.is_none(), "stale etag");
/// objects.put("config/b", b"x", Precondition::None).await?;
/// assert_eq!(objects.list("config/").await?, ["config/a", "config/b"]);
/// // Wait for a change from the version we saw (one GET per poll; here it has changed already).
/// let changed = objects.wait_for("config/a", &WaitOptions { changed_from: Some(etag), ..WaitOptions::default() }).await?;
/// assert_eq!(changed.body, b"v2");
/// objects.delete("config/b").await?;
/// assert!(objects.get("config/b").await?.is_none());
/// # Ok::<(), fencepost::Error>(())
/// # }).unwrap();
/// ```
///
/// # Ambiguous writes
///
/// Every write carries a fresh random token and the tokens of the versions it
/// replaced (see [`WriteMeta`]). When a conditional put's outcome is unknown (transport error, lost
/// response, 500), the key is read back before anything is retried:
/// - the current version, or one it descends from, carries our token → our write landed;
/// - the current version is still the one we tried to replace → it did not land; retry;
/// - the current version descends from the one we tried to replace through someone else's write
///   (its history holds the base's token, not ours) → we lost the race;
/// - anything else cannot be proven → [`Error::AmbiguousWrite`]; never a guess.
///
/// # Cancellation
///
/// With [`Objects::with_cancel`] (or `with_cancel` on a [`crate::Fencepost`], [`crate::Doc`] or
/// [`crate::Lease`]), a cancelled call stops its waits (backoff, `wait_for`
/// polls) and retries at once. A read or list, or a write not sent yet, then fails with the
/// cancel's reason. A put in flight is abandoned and treated like a transport error, but
/// resolved by a single read-back attempt: landed → success (a landed claim still wins); proven
/// not landed → the reason; unprovable → [`Error::AmbiguousWrite`] with the reason as its cause.
/// A delete in flight too: the key gone → success; another version there (a conditional delete)
/// → the reason; the version it meant to delete still there → [`Error::AmbiguousWrite`] (the
/// delete sent may yet arrive).
///
/// # Store clock
///
/// With [`ClockSource::Store`], after every response the store's clock (its `Date`
/// header, [`ObjectStore::server_time`]) is compared with the configured clock; the objects layer
/// then reads the store's time, so lease deadlines are written and judged in it. A `Date` names a
/// whole second, stamped somewhere between the request's sending and its answer: each response
/// bounds the offset to that second plus the round trip, the bounds of successive responses are
/// intersected (a few responses at different fractions of a second narrow it to about the round
/// trip), and the middle of what is left is the offset. Bounds that no longer meet (a clock that
/// jumped) start again from the latest response. Until a store has answered, and for stores
/// without a clock, the offset is 0.
#[derive(Clone)]
pub struct Objects {
    store: Shared<dyn ObjectStore>,
    clock: Shared<dyn Clock>,
    retry: RetryPolicy,
    /// The cancel calls through this handle obey ([`Objects::with_cancel`]).
    cancel: Option<Cancel>,
    /// With [`ClockSource::Store`]: the bounds of the store's clock minus ours, microseconds
    /// (`OFFSET_UNKNOWN` until a response with a clock).
    store_offset: Option<Shared<SyncCell<(i64, i64)>>>,
    /// Who hears about requests, calls and lease transitions ([`events`]).
    observer: Observer,
    /// The last version seen of each doc key, shared by every handle of this `Fencepost`.
    versions: Shared<versions::Versions>,
}

impl Objects {
    pub fn new(store: Shared<dyn ObjectStore>, clock: Shared<dyn Clock>, retry: RetryPolicy) -> Result<Self> {
        retry.validate()?;
        let versions = Shared::default();
        Ok(Objects { store, clock, retry, cancel: None, store_offset: None, observer: Observer::default(), versions })
    }

    /// Report every request, call and lease transition made through this handle (and the handles
    /// made from it) to `on_event` ([`events::Event`]).
    pub fn with_events(mut self, on_event: Option<OnEvent>) -> Self {
        self.observer = Observer { on_event, call: None };
        self
    }

    /// Judge and write lease deadlines in the store's time (`Store`) or the configured clock's.
    pub fn with_clock_source(mut self, source: ClockSource) -> Self {
        self.store_offset = match source {
            ClockSource::Local => None,
            ClockSource::Store => Some(Shared::new(SyncCell::new(OFFSET_UNKNOWN))),
        };
        self
    }

    /// A handle on the same store whose calls obey `cancel` (see the module doc).
    pub fn with_cancel(&self, cancel: &Cancel) -> Objects {
        Objects { cancel: Some(cancel.clone()), ..self.clone() }
    }

    /// This handle without its cancel: what a long-lived handle (a lease) keeps from the call
    /// that created it. Without its `Fencepost`'s doc-version cache too (a lease reads none of
    /// it), so a lease kept somewhere (a binding's table of kept periods) does not keep up to 1 MB
    /// of versions alive after its `Fencepost` is gone.
    pub(crate) fn detached(&self) -> Objects {
        let mut detached = self.uncancelled();
        detached.observer.call = None;
        detached.versions = Shared::default();
        detached
    }

    /// This handle without its cancel, its requests still the call's: what a call that holds a
    /// lease throughout (`once`, `withLease`, `withPermit`) runs the lease's renewals and release on.
    pub(crate) fn uncancelled(&self) -> Objects {
        Objects { cancel: None, ..self.clone() }
    }

    /// The last versions of doc keys this `Fencepost` saw (bounded: [`versions`]).
    pub(crate) fn versions(&self) -> &versions::Versions {
        &self.versions
    }

    pub fn cancel(&self) -> Option<&Cancel> {
        self.cancel.as_ref()
    }

    /// The store's clock minus the configured one, in seconds, with [`ClockSource::Store`].
    pub fn store_offset(&self) -> Option<f64> {
        self.store_offset.as_ref().map(|o| offset_micros(o.get()) as f64 / 1e6)
    }

    /// Now: the configured clock, corrected by the store's offset with [`ClockSource::Store`]. An
    /// error when a user-supplied clock fails or gives a time the wire format cannot carry (years
    /// 1–9999), rather than a silent fallback.
    pub(crate) fn now(&self) -> Result<Timestamp> {
        let now = self.local_now()?;
        let offset = self.store_offset.as_ref().map_or(0, |o| offset_micros(o.get()));
        let now = Timestamp::from_micros(now.as_micros().saturating_add(offset));
        if now.is_on_wire() { Ok(now) } else { Err(Error::invalid("the store's clock is outside the years 1-9999")) }
    }

    /// The configured clock alone: what durations (waits, timeouts) are measured with.
    pub(crate) fn local_now(&self) -> Result<Timestamp> {
        let now = self.clock.now()?;
        if now.is_on_wire() {
            Ok(now)
        } else {
            Err(Error::invalid("the clock returned a time outside the years 1-9999"))
        }
    }

    /// Wait `secs` on the configured clock; the cancel's reason if it fires first.
    pub(crate) async fn sleep(&self, secs: f64) -> Result<()> {
        self.guard(self.clock.sleep(secs)).await
    }

    /// A random float in [0, 1): the configured clock's ([`Clock::jitter`]), else the host's.
    pub(crate) fn jitter(&self) -> f64 {
        self.clock.jitter().unwrap_or_else(crate::host::random::random_unit)
    }

    /// A wait on the configured clock that no cancel cuts short (a deadline's timer).
    pub(crate) fn timer(&self, secs: f64) -> crate::base::future::BoxFuture<'static, ()> {
        self.clock.sleep(secs)
    }

    /// `f`, unless this handle's cancel fires first (then its reason).
    pub(crate) async fn guard<F: Future>(&self, f: F) -> Result<F::Output> {
        match &self.cancel {
            None => Ok(f.await),
            Some(cancel) => cancel.run(f).await,
        }
    }

    /// The cancel's reason, if it has fired.
    pub(crate) fn check_cancel(&self) -> Result<()> {
        self.cancel.as_ref().map_or(Ok(()), Cancel::check)
    }

    /// A deadline `secs` from now that the wire format can carry.
    pub(crate) fn deadline_in(&self, secs: f64) -> Result<Timestamp> {
        let at = self.now()?.plus_secs(secs);
        if at.is_on_wire() { Ok(at) } else { Err(Error::invalid("the deadline would fall after the year 9999")) }
    }

    /// The key rules (`keys`: non-empty, at most 1024 bytes, no control characters, no `.`/`..`
    /// segment, not under CairnDB's reserved prefixes) plus the store's own budget: a store prefix uses up part of S3's and R2's
    /// 1024 bytes, so an over-long key is an `InvalidArgument` here rather than a refusal there.
    pub(crate) fn check_key(&self, key: &str) -> Result<()> {
        validate_key(key)?;
        let budget = self.store.max_key_bytes();
        if key.len() > budget {
            return Err(Error::invalid(format!(
                "key is {} bytes; with this store's prefix the limit is {budget} UTF-8 bytes",
                key.len()
            )));
        }
        Ok(())
    }

    // ---- the public layer-0 API: validates keys, then the same paths layer 1 uses ----

    /// The current version of `key`, or `None`.
    pub async fn get(&self, key: &str) -> Result<Option<StoredObject>> {
        let (objects, call) = self.call("objects.get");
        let got = match self.check_key(key) {
            Ok(()) => objects.read(key).await,
            Err(e) => Err(e),
        };
        Call::end(call, self, key, got)
    }

    /// The current version of `key` unless it is still `etag` (`If-None-Match`):
    /// [`IfChanged::NotModified`] then, without the body (HTTP 304) on every store that answers
    /// conditional reads ([`Objects::conditional_get`]). One request.
    pub async fn get_if_changed(&self, key: &str, etag: &str) -> Result<IfChanged> {
        let (objects, call) = self.call("objects.get");
        let got = match self.check_key(key) {
            // `*` (any version) is a condition for writes: stores answer it on a read each their
            // own way (ignored, or refused as 400), so it is refused here, as an empty etag is.
            Ok(()) if etag.is_empty() || etag == "*" => {
                Err(Error::invalid("ifNoneMatch is the etag of the version already seen (not empty, not \"*\")"))
            }
            Ok(()) => objects.read_if_changed(key, etag).await,
            Err(e) => Err(e),
        };
        Call::end(call, self, key, got)
    }

    /// Whether the store answers conditional reads itself (a 304 without the body), rather than
    /// sending the whole object for fencepost to compare.
    pub fn conditional_get(&self) -> bool {
        self.store.conditional_get()
    }

    /// Put `data`; `None` when the precondition failed (someone else's write won).
    /// An `IfMatch` etag may be given as fencepost hands it out or as an HTTP `ETag` header value
    /// (quoted, or weak `W/"…"`); `*` and empty etags are refused, since stores disagree on them.
    pub async fn put(&self, key: &str, data: &[u8], precondition: Precondition) -> Result<Option<Written>> {
        let (objects, call) = self.call("objects.put");
        let put = match self.checked_put(key, precondition) {
            Ok(precondition) => objects.write(key, data, precondition, None).await,
            Err(e) => Err(e),
        };
        Call::end(call, self, key, put)
    }

    fn checked_put(&self, key: &str, precondition: Precondition) -> Result<Precondition> {
        self.check_key(key)?;
        Ok(match precondition {
            Precondition::IfMatch(etag) => {
                let etag = self.given_etag(&etag);
                if etag.is_empty() || etag == "*" || (etag.contains('"') && !self.store.opaque_etags()) {
                    return Err(Error::invalid(format!(
                        "ifMatch must be an etag from this store, not {}",
                        quoted(&etag)
                    )));
                }
                Precondition::IfMatch(etag)
            }
            other => other,
        })
    }

    /// Delete `key`; a missing key is a no-op.
    pub async fn delete(&self, key: &str) -> Result<()> {
        let (objects, call) = self.call("objects.delete");
        let deleted = match self.check_key(key) {
            Ok(()) => objects.remove(key).await,
            Err(e) => Err(e),
        };
        Call::end(call, self, key, deleted)
    }

    /// Delete `key` only while its etag is `etag`: `false` when it changed or is gone. Only on
    /// stores with a conditional delete ([`ObjectStore::conditional_delete`]). One request; one
    /// more (a read) when an attempt went unanswered and the repeat was refused.
    pub async fn delete_if_match(&self, key: &str, etag: &str) -> Result<bool> {
        self.check_key(key)?;
        let (reply, unanswered) =
            match self.retrying_or_stopped(Request::DeleteIfMatch { key, etag }, Abandon::OnCancel).await {
                Ok(answered) => answered,
                Err(stopped) => return self.settle_stopped_delete(key, Some(etag), stopped).await,
            };
        let deleted = reply.into_deleted();
        if deleted || !unanswered {
            return Ok(deleted);
        }
        // The unanswered attempt may have deleted the version, and the repeat then finds nothing
        // to delete: gone means the version named was deleted (by it, or by a concurrent deleter),
        // still there means it had changed.
        Ok(self.read(key).await?.is_none())
    }

    /// Whether the store honours [`Objects::delete_if_match`].
    pub fn conditional_delete(&self) -> bool {
        self.store.conditional_delete()
    }

    /// Every key under `prefix`, ascending (one request per page of up to 1000 keys).
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        let (objects, call) = self.call("objects.list");
        let listed = objects.all_keys(prefix).await;
        Call::end(call, self, prefix, listed)
    }

    pub(crate) async fn all_keys(&self, prefix: &str) -> Result<Vec<String>> {
        // Each page judges the prefix (the first before any request).
        collect_keys(prefix, |cursor| async move { self.page(prefix, None, cursor.as_deref()).await }).await
    }

    /// One page of the objects under `prefix` — key, etag, size and last-modified time, in key
    /// order — for listings too large to hold at once: the first page (after the key
    /// `start_after`, when given) with `cursor` `None`, else the page after the one whose
    /// [`ListPage::next`] `cursor` is; `next` is `None` on the last. One request per page.
    pub async fn entries_page(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        cursor: Option<&str>,
    ) -> Result<ListPage> {
        let (objects, call) = self.call("objects.entries");
        let page = objects.page(prefix, start_after, cursor).await;
        Call::end(call, self, prefix, page)
    }

    /// A page of a listing (see [`Objects::entries_page`]), judged: in range, in key order, not the
    /// same page again.
    pub(crate) async fn page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> Result<ListPage> {
        validate_prefix(prefix)?;
        let list = Request::List { prefix, start_after, cursor };
        let mut page = self.retrying(list, Abandon::OnCancel).await?.into_page();
        // What a server reports outside the asked-for range is not ours to hand on.
        page.entries.retain(|e| e.key.starts_with(prefix) && start_after.is_none_or(|after| e.key.as_str() > after));
        // In key order, each key once, whatever order a store of one's own answered in.
        crate::base::sort::sort_by(&mut page.entries, |a, b| a.key < b.key);
        page.entries.dedup_by(|a, b| a.key == b.key);
        if cursor.is_some() && page.next.as_deref() == cursor {
            return Err(Error::Storage(malformed_listing(prefix, "the same page cursor twice").into_failure()));
        }
        Ok(page)
    }

    /// Poll until `key` exists (and, with `changed_from`, has another etag); one GET per poll.
    pub async fn wait_for(&self, key: &str, options: &WaitOptions) -> Result<StoredObject> {
        let (objects, call) = self.call("objects.waitFor");
        let found = objects.poll(key, options).await;
        Call::end(call, self, key, found)
    }

    async fn poll(&self, key: &str, options: &WaitOptions) -> Result<StoredObject> {
        self.check_key(key)?;
        for (name, v) in [("timeout", options.timeout), ("pollInterval", options.poll_interval)] {
            if !v.is_finite() || v < 0.0 {
                return Err(Error::invalid(format!("{name} must be a finite number of seconds >= 0")));
            }
        }
        // A floor on the interval: a zero interval would spin through a Worker's subrequests.
        let poll = options.poll_interval.max(MIN_POLL_INTERVAL);
        let deadline = self.local_now()?.plus_secs(options.timeout);
        // A hard cap on polls as well, so a clock that does not advance cannot make this loop
        // forever (one GET per poll; t = 0, poll, 2·poll, … timeout).
        let max_polls = (options.timeout / poll).ceil().min(1e6) as u64 + 1;
        let changed_from = options.changed_from.as_deref().map(|etag| self.given_etag(etag));
        for _ in 0..max_polls {
            if let Some(obj) = self.read(key).await? {
                if changed_from.as_deref() != Some(obj.etag.as_str()) {
                    return Ok(obj);
                }
            }
            let remaining = self.local_now()?.secs_until(deadline);
            if remaining <= 0.0 {
                break;
            }
            self.sleep(poll.min(remaining)).await?;
        }
        Err(Error::Timeout { key: key.to_owned(), seconds: options.timeout })
    }

    /// An etag a caller handed in, as the store compares it: an HTTP `ETag` value's quotes and
    /// weak marker dropped, except where the etags are the store's own opaque tokens.
    fn given_etag(&self, etag: &str) -> String {
        if self.store.opaque_etags() { etag.to_owned() } else { normalize_etag(etag) }
    }

    // ---- the paths layer 1 uses (keys already validated) ----

    pub(crate) async fn read(&self, key: &str) -> Result<Option<StoredObject>> {
        Ok(self.retrying(Request::Get(key), Abandon::OnCancel).await?.into_object())
    }

    /// [`Objects::get_if_changed`] for layer 1. An answer with the very etag asked about (a server
    /// that ignored the condition) is "not modified" too, so every store answers alike (the one
    /// store call's `send` says so).
    pub(crate) async fn read_if_changed(&self, key: &str, etag: &str) -> Result<IfChanged> {
        let etag = self.given_etag(etag);
        Ok(self.retrying(Request::GetIfChanged { key, etag: &etag }, Abandon::OnCancel).await?.into_if_changed())
    }

    pub(crate) async fn remove(&self, key: &str) -> Result<()> {
        match self.retrying_or_stopped(Request::Delete(key), Abandon::OnCancel).await {
            Ok(_) => Ok(()),
            Err(stopped) => self.settle_stopped_delete(key, None, stopped).await.map(drop),
        }
    }

    /// A delete of `key` (of version `etag`, when conditional) that stopped. When a cancel stopped
    /// it with an attempt that may still be carried out (in flight, or unanswered), one read settles
    /// it, as a put in flight is settled: the key gone → deleted; another version there (a
    /// conditional delete) → it can never land: the reason; the version it meant to delete still
    /// there (or the read failed) → it may yet land: an ambiguous write. Otherwise the error is
    /// the answer (a cancel before anything could land: its reason, with nothing read).
    async fn settle_stopped_delete(&self, key: &str, etag: Option<&str>, stopped: retry::Stopped) -> Result<bool> {
        let retry::Stopped { error: e, may_land } = stopped;
        if !may_land {
            return Err(e);
        }
        match self.read_back(key).await {
            Ok(None) => Ok(true),
            Ok(Some(current)) if etag.is_some_and(|etag| current.etag != etag) => Err(e),
            Ok(Some(_)) | Err(_) => Err(Error::ambiguous(key, DELETE_MAY_LAND, Some(e))),
        }
    }

    /// Create `key` only if absent.
    pub(crate) async fn create(&self, key: &str, body: &[u8]) -> Result<Option<Written>> {
        let precondition =
            if mutation::on(Mutation::DropIfNoneMatch) { Precondition::None } else { Precondition::IfAbsent };
        self.write(key, body, precondition, None).await
    }

    /// Replace exactly the version `base`, chaining the write-token history from it.
    pub(crate) async fn replace(
        &self,
        key: &str,
        body: &[u8],
        base_etag: &str,
        base_meta: &WriteMeta,
    ) -> Result<Option<Written>> {
        let guard = if mutation::on(Mutation::DropIfMatch) {
            Precondition::None
        } else {
            Precondition::IfMatch(base_etag.to_owned())
        };
        self.write(key, body, guard, Some(base_meta)).await
    }

    /// The broken write of [`Mutation::TrustRememberedVersion`]: `body` over whatever is stored.
    pub(crate) async fn overwrite(&self, key: &str, body: &[u8], base_meta: &WriteMeta) -> Result<Option<Written>> {
        self.write(key, body, Precondition::None, Some(base_meta)).await
    }

    /// Attempt `attempt` of `request`. With [`Abandon::OnCancel`] it is abandoned for the
    /// cancel's reason if that fires first (or has already: then nothing is sent). The store's
    /// clock is read right after the response, and the request reported to the listener.
    async fn send(&self, request: Request<'_>, attempt: u32, abandon: Abandon) -> Result<StoreResult<Reply>> {
        if let Abandon::OnCancel = abandon {
            self.check_cancel()?;
        }
        let started = self.request_started();
        let sent = self.store_offset.as_ref().and_then(|_| self.clock.now().ok());
        let answered = match abandon {
            Abandon::OnCancel => self.guard(self.store.send(request)).await,
            Abandon::Never => Ok(self.store.send(request).await),
        };
        if let (Ok(_), Some(sent)) = (&answered, sent) {
            self.observe_store_clock(sent);
        }
        self.request_ended(started, &request, attempt, answered.as_ref().ok());
        answered
    }

    /// With [`ClockSource::Store`]: narrow the offset's bounds by the store's latest response,
    /// its request sent at `sent` (local time). Read right after the request returns (no other
    /// task runs in between, so it is this response's `Date`).
    fn observe_store_clock(&self, sent: Timestamp) {
        let Some(offset) = &self.store_offset else { return };
        if let (Some(server), Ok(received)) = (self.store.server_time(), self.clock.now()) {
            // The store's time (the middle of the second its `Date` names) was within half a second
            // of `server` at some instant between `sent` and `received`.
            let server = server.as_micros();
            let sample = (
                server.saturating_sub(HALF_SECOND).saturating_sub(received.as_micros()),
                server.saturating_add(HALF_SECOND).saturating_sub(sent.as_micros()),
            );
            let (lo, hi) = offset.get();
            let both = (lo.max(sample.0), hi.min(sample.1));
            offset.set(if both.0 <= both.1 { both } else { sample });
        }
    }
}

/// The store's clock is not known yet: every response's bounds fit inside these.
const OFFSET_UNKNOWN: (i64, i64) = (i64::MIN, i64::MAX);
const HALF_SECOND: i64 = 500_000;

/// The offset the bounds stand for: their middle, 0 while they are unknown.
fn offset_micros((lo, hi): (i64, i64)) -> i64 {
    if (lo, hi) == OFFSET_UNKNOWN { 0 } else { lo + (hi - lo) / 2 }
}

#[cfg(test)]
mod tests;
