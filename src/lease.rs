//! lease: expiring ownership with an epoch fence token.
//!
//! The lease document `{epoch, holder, deadline_at, state}` is only ever replaced by
//! compare-and-swap. Acquiring bumps `epoch`, so `(key, epoch, holder)` names one ownership period.
//! Every write through a [`Lease`] handle is guarded by the etag it last saw; when the guard fails
//! the handle re-reads: another epoch or holder (or no document) means the lease is lost; the same
//! epoch and holder means a cooperative write landed, which is absorbed before retrying.

use std::cell::RefCell;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::fencepost::{Fencepost, Transition, checked, validate_holder, validate_ttl};
use crate::json;
use crate::objects::Objects;
use crate::store::{StoredObject, WriteMeta};
use crate::time::Timestamp;
use crate::token::random_token;

/// Rounds of "lost the race, read again" before acquisition reports a conflict.
const ACQUIRE_ATTEMPTS: u32 = 8;
/// Guarded writes absorb at most this many cooperative writes before giving up with `LeaseLost`.
const HANDLE_PATIENCE: u32 = 10;
/// `cooperative_write` attempts.
const COOPERATIVE_ATTEMPTS: u32 = 10;
/// Epochs stay exact in every JSON reader, JS's included (2^53 - 1).
pub const MAX_EPOCH: u64 = 9_007_199_254_740_991;

/// The stored lease document.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseDoc {
    pub epoch: u64,
    pub holder: Option<String>,
    /// `None` only for a document without a holder (some writers release with a null deadline);
    /// written back as null, so a rewrite never invents a time.
    pub deadline_at: Option<Timestamp>,
    pub state: Value,
    /// Fields fencepost does not know (another tool's, a later version's): carried through every
    /// rewrite unchanged, so sharing a bucket never loses them.
    pub extra: Map<String, Value>,
}

impl LeaseDoc {
    /// Parse stored bytes strictly: anything but the expected shape is `Corrupt`, never a panic
    /// and never silently repaired (a repair would overwrite someone's data).
    pub fn parse(key: &str, bytes: &[u8]) -> Result<Self> {
        let bad = |m: &str| Error::corrupt(key, format!("not a lease document: {m}"));
        let value = json::parse(bytes).map_err(|m| bad(&m))?;
        let Value::Object(mut map) = value else { return Err(bad("not a JSON object")) };
        let epoch = match map.get("epoch") {
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64().filter(|f| f.fract() == 0.0 && (0.0..=MAX_EPOCH as f64).contains(f)).map(|f| f as u64)
                })
                .filter(|e| *e <= MAX_EPOCH)
                .ok_or_else(|| bad("epoch is not an integer from 0 to 2^53-1"))?,
            _ => return Err(bad("epoch is missing or not a number")),
        };
        let holder = match map.get("holder") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) => None,
            _ => return Err(bad("holder is missing or not a string or null")),
        };
        let deadline_at = match map.get("deadline_at") {
            Some(Value::String(s)) => Some(
                Timestamp::parse_rfc3339(s)
                    .filter(|t| t.is_on_wire())
                    .ok_or_else(|| bad("deadline_at is not an RFC 3339 timestamp in the years 1-9999"))?,
            ),
            // A null deadline can only mean "not held".
            Some(Value::Null) if holder.is_none() => None,
            _ => return Err(bad("deadline_at is missing or not a timestamp")),
        };
        let state = map.remove("state").unwrap_or(Value::Null);
        for known in ["epoch", "holder", "deadline_at"] {
            map.remove(known);
        }
        Ok(LeaseDoc { epoch, holder, deadline_at, state, extra: map })
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut map = self.extra.clone();
        map.insert("epoch".into(), Value::from(self.epoch));
        map.insert("holder".into(), self.holder.clone().map_or(Value::Null, Value::String));
        map.insert("deadline_at".into(), self.deadline_at.map_or(Value::Null, |t| Value::String(t.to_rfc3339())));
        map.insert("state".into(), self.state.clone());
        json::to_canonical(&Value::Object(map))
    }

    /// The deadline of a held lease (`parse` refuses a holder without one); the earliest time for
    /// an unheld document without a deadline.
    fn deadline(&self) -> Timestamp {
        self.deadline_at.unwrap_or(Timestamp::WIRE_MIN)
    }

    /// SPEC: expired means no holder, or a deadline at or before now (inclusive).
    pub fn is_expired(&self, now: Timestamp) -> bool {
        self.holder.is_none() || self.deadline_at.is_none_or(|d| d <= now)
    }
}

/// Options of [`Fencepost::lease`].
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseOptions {
    /// Seconds, > 0.
    pub ttl: f64,
    /// Defaults to a fresh random token.
    pub holder: Option<String>,
    pub steal_if_expired: bool,
}

impl LeaseOptions {
    pub fn new(ttl: f64) -> Self {
        LeaseOptions { ttl, holder: None, steal_if_expired: true }
    }
}

/// What a handle last saw of its document.
#[derive(Debug, Clone)]
struct View {
    /// `None` when our last write is known to have landed but was since replaced: re-read first.
    etag: Option<String>,
    extra: Map<String, Value>,
    meta: WriteMeta,
    deadline_at: Timestamp,
    state: Value,
    released: bool,
}

/// A handle on one ownership period `(key, epoch, holder)`.
pub struct Lease {
    objects: Objects,
    key: String,
    holder: String,
    epoch: u64,
    ttl: f64,
    view: RefCell<View>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("key", &self.key)
            .field("epoch", &self.epoch)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// The next document a guarded write wants, computed from the handle's current view.
struct Proposal {
    /// false only for a release (holder = null).
    keep_holder: bool,
    deadline_at: Timestamp,
    state: Value,
}

impl Fencepost {
    /// Acquire `key`, or `None` when it is held by someone else (or expired and
    /// `steal_if_expired` is false). Requests: 2 to acquire, 1 when held.
    pub async fn lease(
        &self,
        key: &str,
        options: LeaseOptions,
        mut state_fn: Option<&mut Transition<'_>>,
    ) -> Result<Option<Lease>> {
        self.objects.check_key(key)?;
        validate_ttl(options.ttl)?;
        let holder = match options.holder {
            Some(h) => {
                validate_holder(&h)?;
                h
            }
            None => random_token()?,
        };
        for _ in 0..ACQUIRE_ATTEMPTS {
            let current = self.objects.read(key).await?;
            let (next_epoch, prior_state, extra, base) = match &current {
                None => (1, Value::Null, Map::new(), None),
                Some(obj) => {
                    let doc = LeaseDoc::parse(key, &obj.body)?;
                    let now = self.objects.now()?;
                    let ours = doc.holder.as_deref() == Some(holder.as_str());
                    let expired = doc.is_expired(now);
                    if !ours && (!expired || !options.steal_if_expired) {
                        return Ok(None);
                    }
                    let next = doc.epoch.checked_add(1).filter(|e| *e <= MAX_EPOCH).ok_or_else(|| {
                        Error::corrupt(key, "the next epoch would exceed 2^53-1, which JS numbers cannot carry exactly")
                    })?;
                    (next, doc.state, doc.extra, Some(obj))
                }
            };
            let state = match state_fn.as_deref_mut() {
                Some(f) => checked(f(prior_state).await?)?,
                None => prior_state,
            };
            let doc = LeaseDoc {
                epoch: next_epoch,
                holder: Some(holder.clone()),
                deadline_at: Some(self.objects.deadline_in(options.ttl)?),
                state,
                extra,
            };
            let body = doc.encode();
            let written = match base {
                None => self.objects.create(key, &body).await?,
                Some(base) => self.objects.replace(key, &body, &base.etag, &base.meta).await?,
            };
            if let Some(w) = written {
                return Ok(Some(Lease::from_write(&self.objects, key, options.ttl, doc, w.etag, w.meta)));
            }
        }
        Err(Error::Conflict { key: key.to_owned(), attempts: ACQUIRE_ATTEMPTS })
    }

    /// Re-attach to the current ownership period of `holder`: one read, nothing written. `None`
    /// when the lease is absent, released, held by someone else, or expired.
    pub async fn attach_lease(&self, key: &str, holder: &str, ttl: f64) -> Result<Option<Lease>> {
        self.objects.check_key(key)?;
        validate_holder(holder)?;
        validate_ttl(ttl)?;
        let Some(obj) = self.objects.read(key).await? else { return Ok(None) };
        let doc = LeaseDoc::parse(key, &obj.body)?;
        if doc.holder.as_deref() != Some(holder) || doc.is_expired(self.objects.now()?) {
            return Ok(None);
        }
        Ok(Some(Lease::from_write(&self.objects, key, ttl, doc, Some(obj.etag), obj.meta)))
    }

    /// Change the state of a lease from outside: a CAS loop on `state` only; epoch, holder and
    /// deadline are preserved and the holder is not fenced. `None` when there is no lease document.
    /// Requests: 2.
    pub async fn cooperative_write(&self, key: &str, f: &mut Transition<'_>) -> Result<Option<Value>> {
        self.objects.check_key(key)?;
        for _ in 0..COOPERATIVE_ATTEMPTS {
            let Some(obj) = self.objects.read(key).await? else { return Ok(None) };
            let mut doc = LeaseDoc::parse(key, &obj.body)?;
            doc.state = checked(f(doc.state).await?)?;
            if self.objects.replace(key, &doc.encode(), &obj.etag, &obj.meta).await?.is_some() {
                return Ok(Some(doc.state));
            }
        }
        Err(Error::Conflict { key: key.to_owned(), attempts: COOPERATIVE_ATTEMPTS })
    }
}

impl Lease {
    fn from_write(
        objects: &Objects,
        key: &str,
        ttl: f64,
        doc: LeaseDoc,
        etag: Option<String>,
        meta: WriteMeta,
    ) -> Self {
        let deadline_at = doc.deadline();
        Lease {
            // The acquiring call's cancel is not the period's.
            objects: objects.detached(),
            key: key.to_owned(),
            holder: doc.holder.unwrap_or_default(),
            epoch: doc.epoch,
            ttl,
            view: RefCell::new(View { etag, meta, deadline_at, state: doc.state, extra: doc.extra, released: false }),
        }
    }

    pub fn key(&self) -> &str {
        &self.key
    }
    pub fn holder(&self) -> &str {
        &self.holder
    }
    pub fn epoch(&self) -> u64 {
        self.epoch
    }
    pub fn ttl(&self) -> f64 {
        self.ttl
    }
    pub fn state(&self) -> Value {
        self.view.borrow().state.clone()
    }
    pub fn deadline_at(&self) -> Timestamp {
        self.view.borrow().deadline_at
    }
    /// The etag of the version this handle last saw or wrote (`None` right after a write whose
    /// response was lost and which has since been replaced).
    pub fn etag(&self) -> Option<String> {
        self.view.borrow().etag.clone()
    }
    pub fn is_released(&self) -> bool {
        self.view.borrow().released
    }

    /// Extend the deadline to now + ttl, keeping the state (absorbing any cooperative write).
    pub async fn renew(&self) -> Result<()> {
        let deadline_at = self.objects.deadline_in(self.ttl)?;
        self.guarded_write(&mut |v: &View| {
            let p = Proposal { keep_holder: true, deadline_at, state: v.state.clone() };
            Box::pin(async move { Ok(p) })
        })
        .await
        .map(drop)
    }

    /// Read-modify-write of the state, guarded; `f` sees the freshest state (it runs again after a
    /// cooperative write). Returns the state written.
    pub async fn update_state(&self, f: &mut Transition<'_>) -> Result<Value> {
        self.guarded_write(&mut |v: &View| {
            let (state, deadline_at) = (v.state.clone(), v.deadline_at);
            let next = f(state);
            Box::pin(async move { Ok(Proposal { keep_holder: true, deadline_at, state: checked(next.await?)? }) })
        })
        .await
    }

    /// Replace the state, guarded (unseen cooperative writes are discarded).
    pub async fn write(&self, state: Value) -> Result<Value> {
        let state = checked(state)?;
        self.guarded_write(&mut |v: &View| {
            let p = Proposal { keep_holder: true, deadline_at: v.deadline_at, state: state.clone() };
            Box::pin(async move { Ok(p) })
        })
        .await
    }

    /// Give the lease up: holder = null, deadline = now, optionally a final state (otherwise the
    /// current one, cooperative writes included). The document stays, so epochs keep increasing.
    pub async fn release(&self, final_state: Option<Value>) -> Result<()> {
        let final_state = final_state.map(checked).transpose()?;
        let now = self.objects.now()?;
        self.guarded_write(&mut |v: &View| {
            let state = final_state.clone().unwrap_or_else(|| v.state.clone());
            Box::pin(async move { Ok(Proposal { keep_holder: false, deadline_at: now, state }) })
        })
        .await
        .map(drop)
    }

    /// The one write path of a handle: `propose` builds the next document from the handle's view
    /// and the write is guarded by the view's etag. On a failed guard the view is refreshed
    /// (`LeaseLost` if fenced) and the proposal rebuilt, at most `HANDLE_PATIENCE` times.
    async fn guarded_write<'f>(
        &self,
        propose: &mut dyn FnMut(&View) -> crate::LocalBoxFuture<'f, Result<Proposal>>,
    ) -> Result<Value> {
        for _ in 0..HANDLE_PATIENCE {
            let view = self.view.borrow().clone();
            if view.released {
                return Err(Error::lease_lost(&self.key, "the lease was released through this handle"));
            }
            let Some(etag) = view.etag.clone() else {
                self.refresh().await?;
                continue;
            };
            let proposal = propose(&view).await?;
            let releasing = !proposal.keep_holder;
            let doc = LeaseDoc {
                epoch: self.epoch,
                holder: proposal.keep_holder.then(|| self.holder.clone()),
                deadline_at: Some(proposal.deadline_at),
                state: proposal.state,
                extra: view.extra.clone(),
            };
            match self.objects.replace(&self.key, &doc.encode(), &etag, &view.meta).await? {
                Some(written) => {
                    let mut v = self.view.borrow_mut();
                    *v = View {
                        etag: written.etag,
                        meta: written.meta,
                        deadline_at: doc.deadline(),
                        state: doc.state.clone(),
                        extra: doc.extra,
                        released: releasing,
                    };
                    return Ok(doc.state);
                }
                None => self.refresh().await?,
            }
        }
        Err(Error::lease_lost(
            &self.key,
            format!("gave up after {HANDLE_PATIENCE} attempts under a stream of cooperative writes"),
        ))
    }

    /// Re-read after a failed guard: fenced → `LeaseLost`; same period → absorb the fresh version.
    async fn refresh(&self) -> Result<()> {
        let Some(obj) = self.objects.read(&self.key).await? else {
            return Err(Error::lease_lost(&self.key, "the lease document was deleted"));
        };
        let StoredObject { body, etag, meta } = obj;
        let doc = LeaseDoc::parse(&self.key, &body)?;
        if doc.epoch != self.epoch {
            return Err(Error::lease_lost(&self.key, format!("epoch advanced from {} to {}", self.epoch, doc.epoch)));
        }
        if doc.holder.as_deref() != Some(self.holder.as_str()) {
            let why = if doc.holder.is_none() { "the lease was released" } else { "another holder took the lease" };
            return Err(Error::lease_lost(&self.key, why));
        }
        let mut v = self.view.borrow_mut();
        v.etag = Some(etag);
        v.meta = meta;
        v.deadline_at = doc.deadline();
        v.state = doc.state;
        v.extra = doc.extra;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VALID: &[u8] =
        br#"{"deadline_at":"2026-01-01T00:00:30.000000Z","epoch":7,"holder":"h","state":{"a":[1,"x"]}}"#;

    #[test]
    fn parses_and_round_trips() {
        let doc = LeaseDoc::parse("k", VALID).unwrap();
        assert_eq!((doc.epoch, doc.holder.as_deref()), (7, Some("h")));
        assert_eq!(doc.encode(), VALID);
        // CairnDB/Python spellings: `+00:00` offsets, integral floats for the epoch.
        let py = br#"{"deadline_at": "2026-01-01T00:00:30+00:00", "epoch": 7.0, "holder": null, "state": null}"#;
        let doc = LeaseDoc::parse("k", py).unwrap();
        assert!(doc.holder.is_none() && doc.epoch == 7);
        // Fields of other tools survive a rewrite.
        let more =
            br#"{"deadline_at":"2026-01-01T00:00:30.000000Z","epoch":7,"holder":"h","owner_host":"py-1","state":null}"#;
        assert_eq!(LeaseDoc::parse("k", more).unwrap().encode(), more);
    }

    /// No stored bytes can panic the parser: random bytes, and every single-byte mutation and
    /// truncation of a valid document, give a value or a `Corrupt` error.
    #[test]
    fn never_panics_on_stored_bytes() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let len = (next() % 64) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            if let Err(e) = LeaseDoc::parse("k", &bytes) {
                assert!(matches!(e, Error::Corrupt { .. }));
            }
        }
        for i in 0..VALID.len() {
            let _ = LeaseDoc::parse("k", &VALID[..i]);
            for b in [b'"', b'0', b'-', b'}', b'\\', 0xff, b'e', b'9'] {
                let mut m = VALID.to_vec();
                m[i] = b;
                let _ = LeaseDoc::parse("k", &m);
            }
        }
        for weird in [
            r#"{"deadline_at":"2026-01-01T00:00:30Z","epoch":1e400,"holder":"h"}"#,
            r#"{"deadline_at":"9999-12-31T23:59:60.999999-23:59","epoch":18446744073709551615,"holder":"h"}"#,
        ] {
            let _ = LeaseDoc::parse("k", weird.as_bytes());
        }
    }
}
