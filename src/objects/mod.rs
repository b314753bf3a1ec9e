//! Layer 0 for callers: the store behind key rules, bounded retries with backoff, and the
//! resolution of ambiguous writes. Layer 1 (claim, lease, doc) writes only through here, so every
//! primitive gets the same retry budget and the same "did my write land?" logic.
//!
//! Ambiguous writes: every write carries a fresh random token and the tokens of the versions it
//! replaced (see [`WriteMeta`]). When a conditional put's outcome is unknown (transport error, lost
//! response, 500), the key is read back before anything is retried:
//! - the current version, or one it descends from, carries our token → our write landed;
//! - the current version is still the one we tried to replace → it did not land; retry;
//! - the current version descends from the one we tried to replace through someone else's write
//!   (its history holds the base's token, not ours) → we lost the race;
//! - anything else cannot be proven → [`Error::AmbiguousWrite`]; never a guess.

use std::rc::Rc;

use crate::error::{Error, Result};
use crate::keys::{validate_key, validate_prefix};
use crate::retry::RetryPolicy;
use crate::store::{
    FailureKind, ObjectStore, Precondition, PutOutcome, StoreResult, StoredObject, WriteMeta, normalize_etag,
};
use crate::time::{Clock, Timestamp};
use crate::token::{random_token, random_unit};

/// `wait_for` polls at most this often (seconds).
pub const MIN_POLL_INTERVAL: f64 = 0.05;

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
    pub timeout: f64,
    pub poll_interval: f64,
    /// Wait for an etag different from this one (a change), instead of mere existence.
    pub changed_from: Option<String>,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions { timeout: 30.0, poll_interval: 1.0, changed_from: None }
    }
}

enum Resolution {
    Landed(Option<String>),
    NotLanded,
    Lost,
    Unknown(String),
}

/// The conditional key-value store as callers see it. Cheap to clone (shares the store).
#[derive(Clone)]
pub struct Objects {
    store: Rc<dyn ObjectStore>,
    clock: Rc<dyn Clock>,
    retry: RetryPolicy,
}

impl Objects {
    pub fn new(store: Rc<dyn ObjectStore>, clock: Rc<dyn Clock>, retry: RetryPolicy) -> Result<Self> {
        retry.validate()?;
        Ok(Objects { store, clock, retry })
    }

    /// Now, from the configured clock; an error when a user-supplied clock fails or gives a time
    /// the wire format cannot carry (years 1–9999), rather than a silent fallback.
    pub fn now(&self) -> Result<Timestamp> {
        let now = self.clock.now()?;
        if now.is_on_wire() {
            Ok(now)
        } else {
            Err(Error::invalid("the clock returned a time outside the years 1-9999"))
        }
    }

    /// A deadline `secs` from now that the wire format can carry.
    pub(crate) fn deadline_in(&self, secs: f64) -> Result<Timestamp> {
        let at = self.now()?.plus_secs(secs);
        if at.is_on_wire() { Ok(at) } else { Err(Error::invalid("the deadline would fall after the year 9999")) }
    }

    /// Key rules (SPEC) plus the store's own budget: a store prefix uses up part of S3's and R2's
    /// 1024 bytes, so an over-long key is an `InvalidArgument` here rather than a refusal there.
    pub fn check_key(&self, key: &str) -> Result<()> {
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
        self.check_key(key)?;
        self.read(key).await
    }

    /// Put `data`; `None` when the precondition failed (someone else's write won).
    /// An `IfMatch` etag may be given as fencepost hands it out or as an HTTP `ETag` header value
    /// (quoted, or weak `W/"…"`); `*` and empty etags are refused, since stores disagree on them.
    pub async fn put(&self, key: &str, data: &[u8], precondition: Precondition) -> Result<Option<Written>> {
        self.check_key(key)?;
        let precondition = match precondition {
            Precondition::IfMatch(etag) => {
                let etag = normalize_etag(&etag);
                if etag.is_empty() || etag == "*" || etag.contains('"') {
                    return Err(Error::invalid(format!("ifMatch must be an etag from this store, not {etag:?}")));
                }
                Precondition::IfMatch(etag)
            }
            other => other,
        };
        self.write(key, data, precondition, None).await
    }

    /// Delete `key`; a missing key is a no-op.
    pub async fn delete(&self, key: &str) -> Result<()> {
        self.check_key(key)?;
        self.retrying(|| self.store.delete(key)).await
    }

    /// Every key under `prefix`, ascending.
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>> {
        validate_prefix(prefix)?;
        self.retrying(|| self.store.list(prefix)).await
    }

    /// Poll until `key` exists (and, with `changed_from`, has another etag); one GET per poll.
    pub async fn wait_for(&self, key: &str, options: &WaitOptions) -> Result<StoredObject> {
        self.check_key(key)?;
        for (name, v) in [("timeout", options.timeout), ("pollInterval", options.poll_interval)] {
            if !v.is_finite() || v < 0.0 {
                return Err(Error::invalid(format!("{name} must be a finite number of seconds >= 0")));
            }
        }
        // A floor on the interval: a zero interval would spin through a Worker's subrequests.
        let poll = options.poll_interval.max(MIN_POLL_INTERVAL);
        let deadline = self.now()?.plus_secs(options.timeout);
        // A hard cap on polls as well, so a clock that does not advance cannot make this loop
        // forever (one GET per poll; t = 0, poll, 2·poll, … timeout).
        let max_polls = (options.timeout / poll).ceil().min(1e6) as u64 + 1;
        for _ in 0..max_polls {
            if let Some(obj) = self.read(key).await? {
                if options.changed_from.as_deref().map(normalize_etag).as_deref() != Some(obj.etag.as_str()) {
                    return Ok(obj);
                }
            }
            let remaining = deadline.0.saturating_sub(self.now()?.0) as f64 / 1e6;
            if remaining <= 0.0 {
                break;
            }
            self.clock.sleep(poll.min(remaining)).await;
        }
        Err(Error::Timeout { key: key.to_owned(), seconds: options.timeout })
    }

    // ---- the paths layer 1 uses (keys already validated) ----

    pub(crate) async fn read(&self, key: &str) -> Result<Option<StoredObject>> {
        self.retrying(|| self.store.get(key)).await
    }

    /// Create `key` only if absent.
    pub(crate) async fn create(&self, key: &str, body: &[u8]) -> Result<Option<Written>> {
        self.write(key, body, Precondition::IfAbsent, None).await
    }

    /// Replace exactly the version `base`, chaining the write-token history from it.
    pub(crate) async fn replace(
        &self,
        key: &str,
        body: &[u8],
        base_etag: &str,
        base_meta: &WriteMeta,
    ) -> Result<Option<Written>> {
        self.write(key, body, Precondition::IfMatch(base_etag.to_owned()), Some(base_meta)).await
    }

    /// One logical write: retried within the budget, ambiguous outcomes resolved by read-back.
    async fn write(
        &self,
        key: &str,
        body: &[u8],
        precondition: Precondition,
        base: Option<&WriteMeta>,
    ) -> Result<Option<Written>> {
        let token = random_token()?;
        let meta = match base {
            Some(base) => WriteMeta::replacing(token, base),
            // A create or plain put starts a lineage; a layer-0 `ifMatch` put does not know the
            // version it replaces, so its lineage is unknown.
            None if matches!(precondition, Precondition::IfMatch(_)) => {
                WriteMeta { token: Some(token), history: Vec::new(), origin: None }
            }
            None => WriteMeta::creating(token),
        };
        let mut last_error = None;
        // An attempt whose outcome we could not see may still land later (a client-side timeout
        // leaves the request in flight), so a later "precondition failed" may be our own write.
        let mut unanswered = false;
        for attempt in 1..=self.retry.max_attempts {
            if attempt > 1 {
                self.backoff(attempt - 1).await;
            }
            let error = match self.store.put(key, body, &precondition, &meta).await {
                Ok(PutOutcome::Written { etag }) => return Ok(Some(Written { etag: Some(etag), meta })),
                Ok(PutOutcome::PreconditionFailed) if unanswered => {
                    return self.settle_lost(key, &precondition, &meta, base).await;
                }
                Ok(PutOutcome::PreconditionFailed) => return Ok(None),
                Err(e) => e,
            };
            match error.kind {
                FailureKind::Fatal => return Err(Error::Storage(error.into_failure())),
                FailureKind::Indeterminate => match self.resolve(key, &precondition, &meta, base).await? {
                    Resolution::Landed(etag) => return Ok(Some(Written { etag, meta })),
                    Resolution::Lost => return Ok(None),
                    Resolution::NotLanded => unanswered = true,
                    Resolution::Unknown(why) => {
                        return Err(Error::ambiguous(key, why, None));
                    }
                },
                FailureKind::Transient | FailureKind::ConditionalConflict => {}
            }
            last_error = Some(error);
        }
        match last_error {
            // SPEC: a conditional put still meeting ConditionalRequestConflict after its retries lost.
            // (Our own unanswered attempt may be what conflicts: settle that first.)
            Some(e) if e.kind == FailureKind::ConditionalConflict && precondition != Precondition::None => {
                if unanswered { self.settle_lost(key, &precondition, &meta, base).await } else { Ok(None) }
            }
            Some(e) => Err(Error::Storage(e.into_failure())),
            None => Err(Error::invalid("retry budget allows no attempt")),
        }
    }

    /// A conditional put lost after an earlier attempt went unanswered: was it our own late write?
    async fn settle_lost(
        &self,
        key: &str,
        precondition: &Precondition,
        meta: &WriteMeta,
        base: Option<&WriteMeta>,
    ) -> Result<Option<Written>> {
        match self.resolve(key, precondition, meta, base).await? {
            Resolution::Landed(etag) => Ok(Some(Written { etag, meta: meta.clone() })),
            Resolution::Unknown(why) => Err(Error::ambiguous(key, why, None)),
            Resolution::NotLanded | Resolution::Lost => Ok(None),
        }
    }

    /// After an ambiguous put: read the key back and decide what happened (see the module doc).
    async fn resolve(
        &self,
        key: &str,
        precondition: &Precondition,
        mine: &WriteMeta,
        base: Option<&WriteMeta>,
    ) -> Result<Resolution> {
        let my_token = mine.token.as_deref().unwrap_or_default();
        // A read-back that fails leaves the outcome unproven: that is an ambiguous write, not a
        // storage error about some other request.
        let current = match self.read(key).await {
            Ok(current) => current,
            Err(Error::Storage(f)) => return Ok(Resolution::Unknown(format!("the read-back failed: {f}"))),
            Err(e) => return Err(e),
        };
        let Some(current) = current else {
            return Ok(match precondition {
                // Nothing there: our create or plain put did not land (or landed and was deleted,
                // which leaves the same state): trying again is safe.
                Precondition::None | Precondition::IfAbsent => Resolution::NotLanded,
                // The version we meant to replace is gone, so our write cannot succeed any more.
                Precondition::IfMatch(_) => Resolution::Lost,
            });
        };
        if current.meta.token.as_deref() == Some(my_token) {
            return Ok(Resolution::Landed(Some(current.etag)));
        }
        if current.meta.contains(my_token) || current.meta.origin.as_deref() == Some(my_token) {
            return Ok(Resolution::Landed(None));
        }
        Ok(match precondition {
            // Someone else's version is there and does not descend from ours: a retry would
            // overwrite it, and ours may have landed before it. Not provable either way.
            Precondition::None => {
                Resolution::Unknown("another write replaced the key; ours may have landed before it".into())
            }
            // The key's lineage was started by someone else's create: ours did not win.
            Precondition::IfAbsent if current.meta.origin.is_some() => Resolution::Lost,
            Precondition::IfAbsent => Resolution::Unknown("the key exists but its provenance is not visible".into()),
            Precondition::IfMatch(etag) => match base.and_then(|b| b.token.as_deref()) {
                // Still the very version we meant to replace (tokens are unique; an equal etag
                // alone is not enough: equal bytes give equal etags): ours did not land.
                Some(base_token) if current.meta.token.as_deref() == Some(base_token) && current.etag == *etag => {
                    Resolution::NotLanded
                }
                // The version we meant to replace has a successor, and it is not ours.
                Some(base_token) if current.meta.history.iter().any(|t| t == base_token) => Resolution::Lost,
                _ => Resolution::Unknown("the key changed, or its provenance is not visible".into()),
            },
        })
    }

    /// Run a request that is safe to repeat (get, delete, list) within the retry budget.
    async fn retrying<T, F, Fut>(&self, mut request: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = StoreResult<T>>,
    {
        let mut attempt = 1;
        loop {
            match request().await {
                Ok(v) => return Ok(v),
                Err(e) if e.kind != FailureKind::Fatal && attempt < self.retry.max_attempts => {
                    self.backoff(attempt).await;
                    attempt += 1;
                }
                // Fatal, or the budget is spent: report the store's own words.
                Err(e) => return Err(Error::Storage(e.into_failure())),
            }
        }
    }

    async fn backoff(&self, retry: u32) {
        let delay = self.retry.delay(retry, random_unit());
        if delay > 0.0 {
            self.clock.sleep(delay).await;
        }
    }
}
