//! lease: expiring ownership with an epoch fence token.
//!
//! The lease document `{epoch, holder, deadline_at, state}` is only ever replaced by
//! compare-and-swap. Acquiring bumps `epoch`, so `(key, epoch, holder)` names one ownership period.
//! Every write through a [`Lease`] handle is guarded by the etag it last saw; when the guard fails
//! the handle re-reads: another epoch or holder (or no document) means the lease is lost; the same
//! epoch and holder means a cooperative write landed, which is absorbed before retrying.
//!
//! The period's state (what was last seen of the document, and whether the period is over) is
//! shared by a handle and its clones ([`Lease::with_cancel`]). Once any of them learns the period
//! is over — released through a handle, a write found it lost, keep-alive could not renew in time —
//! [`Lease::ended`] fires and every later write rejects with `LeaseLost` without a request.
//!
//! Modules: `document` (the stored bytes), `acquire` (`Fencepost::lease` with its `wait`,
//! `attach_lease`, `cooperative_write`), `keep_alive` (`Lease::keep_alive`,
//! `Fencepost::with_lease`).

pub(crate) mod acquire;
pub(crate) mod break_lease;
mod document;
mod keep_alive;
pub(crate) mod with_lease;

use crate::base::mutation::{self, Mutation};
use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Map, Value};

pub use document::LeaseView;
pub(crate) use document::{LeaseDoc, MAX_EPOCH};

use crate::base::cancel::Cancel;
use crate::base::error::{Error, LostReason, Result};
use crate::codec::json::checked;
use crate::objects::Objects;
use crate::objects::events::{Call, Event, LeaseAction};
use crate::objects::transition::Transition;
use crate::store::{StoredObject, WriteMeta};
use crate::time::Timestamp;

/// Guarded writes absorb at most this many cooperative writes before giving up with `LeaseLost`.
const HANDLE_PATIENCE: u32 = 10;

/// Options of [`crate::Fencepost::lease`]: `LeaseOptions::new(ttl)`, then set what differs
/// (`LeaseOptions { wait: Some(5.0), ..LeaseOptions::new(30.0) }`).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseOptions {
    /// Seconds, > 0.
    pub ttl: f64,
    /// Defaults to a fresh random token (128 bits). It is a credential: whoever knows it can
    /// [`crate::Fencepost::attach_lease`].
    pub holder: Option<String>,
    /// Take over a lease whose deadline has passed (default `true`).
    pub steal_if_expired: bool,
    /// Seconds to keep trying while the lease is held by someone else (`None`: one attempt). The
    /// attempts back off with jitter up to about a second apart, so a release is noticed within
    /// about a second, and one is made right at the held lease's deadline.
    pub wait: Option<f64>,
    /// Under [`crate::Fencepost::with_lease`]: renew every this many seconds (`None`: `ttl / 3`;
    /// must be > 0 and < `ttl`).
    pub keep_alive_every: Option<f64>,
}

impl LeaseOptions {
    pub fn new(ttl: f64) -> Self {
        LeaseOptions { ttl, holder: None, steal_if_expired: true, wait: None, keep_alive_every: None }
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

/// One ownership period as the handles on it know it.
struct Period {
    key: String,
    holder: String,
    epoch: u64,
    ttl: f64,
    view: RefCell<View>,
    /// Fired with a `LeaseLost` reason once a handle learns the period is over.
    ended: Cancel,
}

/// A handle on one ownership period `(key, epoch, holder)`, from [`crate::Fencepost::lease`] or
/// [`crate::Fencepost::attach_lease`]. Clones share the period's state.
///
/// The lease document `{epoch, holder, deadline_at, state}` is only ever replaced by
/// compare-and-swap, and acquiring bumps `epoch`: the epoch is a fence token. Every write through
/// a handle ([`Lease::renew`], [`Lease::update_state`], [`Lease::write`], [`Lease::release`]) is
/// guarded by the etag the handle last saw; when the guard fails the handle re-reads: another
/// epoch or holder (or no document) means the lease is lost ([`crate::Error::LeaseLost`]: stop,
/// discard the work); the same epoch and holder means a cooperative write
/// ([`crate::Fencepost::cooperative_write`]) landed, which is absorbed before retrying.
/// Once a handle learns its period is over, [`Lease::ended`] fires and every later write rejects
/// with `LeaseLost` without a request. Keep a lease alive with [`Lease::keep_alive`], or run a
/// function under one with [`crate::Fencepost::with_lease`].
///
/// ```
/// use std::rc::Rc;
/// use fencepost::store::MemoryStore;
/// use fencepost::{Error, Fencepost, LeaseOptions, Options, transition};
/// use serde_json::json;
///
/// # futures::executor::block_on(async {
/// let db = Fencepost::new(Rc::new(MemoryStore::new()), Options::default())?;
/// // Acquire, seeding the state on the first acquisition (`stateFn`): the transition is written
/// // atomically with the new epoch.
/// let mut seed = transition(|prev| Ok(if prev.is_null() { json!({"step": 0}) } else { prev }));
/// let lease = db.lease("jobs/nightly", LeaseOptions::new(30.0), Some(&mut *seed)).await?.expect("free");
/// assert_eq!((lease.epoch(), lease.state()), (1, json!({"step": 0})));
/// // Held: anyone else gets `None`.
/// assert!(db.lease("jobs/nightly", LeaseOptions::new(30.0), None).await?.is_none());
///
/// // Checkpoint under the fence.
/// lease.update_state(&mut *transition(|s| Ok(json!({"step": s["step"].as_i64().unwrap_or(0) + 1})))).await?;
/// // Ask the holder to stop, from outside, without fencing it; its next write absorbs this.
/// db.cooperative_write("jobs/nightly", &mut *transition(|mut s| { s["cancel"] = json!(true); Ok(s) })).await?;
/// lease.renew().await?;
/// assert_eq!(lease.state(), json!({"step": 1, "cancel": true}));
/// lease.release(None).await?;
/// assert!(matches!(lease.renew().await, Err(Error::LeaseLost { .. })), "released handles are done");
///
/// // The next owner gets epoch 2 and the state where the last one left it.
/// let next = db.lease("jobs/nightly", LeaseOptions::new(30.0), None).await?.expect("released");
/// assert_eq!((next.epoch(), next.state()["step"].clone()), (2, json!(1)));
/// # Ok::<(), fencepost::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Lease {
    objects: Objects,
    period: Rc<Period>,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("key", &self.period.key)
            .field("epoch", &self.period.epoch)
            .field("ttl", &self.period.ttl)
            .field("ended", &self.period.ended.is_cancelled())
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
        let view = View { etag, meta, deadline_at, state: doc.state, extra: doc.extra, released: false };
        let period = Period {
            key: key.to_owned(),
            holder: doc.holder.unwrap_or_default(),
            epoch: doc.epoch,
            ttl,
            view: RefCell::new(view),
            ended: Cancel::new(),
        };
        // The acquiring call's cancel is not the period's.
        Lease { objects: objects.detached(), period: Rc::new(period) }
    }

    /// A handle on the same period (its state is shared) whose calls obey `cancel`: a renew or
    /// write in flight when it fires is settled as [`Objects`]' "Cancellation" describes.
    pub fn with_cancel(&self, cancel: &Cancel) -> Lease {
        Lease { objects: self.objects.with_cancel(cancel), period: self.period.clone() }
    }

    pub fn key(&self) -> &str {
        &self.period.key
    }
    pub fn holder(&self) -> &str {
        &self.period.holder
    }
    pub fn epoch(&self) -> u64 {
        self.period.epoch
    }
    pub fn ttl(&self) -> f64 {
        self.period.ttl
    }
    pub fn state(&self) -> Value {
        self.period.view.borrow().state.clone()
    }
    pub fn deadline_at(&self) -> Timestamp {
        self.period.view.borrow().deadline_at
    }
    /// The etag of the version this handle last saw or wrote (`None` right after a write whose
    /// response was lost and which has since been replaced).
    pub fn etag(&self) -> Option<String> {
        self.period.view.borrow().etag.clone()
    }
    /// Released through this handle (or one sharing its state).
    pub fn is_released(&self) -> bool {
        self.period.view.borrow().released
    }

    /// Fired, with a `LeaseLost` reason, as soon as the handle learns that its period is over:
    /// released, found lost by a write or renew, or not renewed in time by keep-alive. Await
    /// [`Cancel::cancelled`] on it, or bind other calls to it ([`Cancel::follow`]). Firing it
    /// yourself ends the handle's period too: later writes reject with `LeaseLost`.
    pub fn ended(&self) -> &Cancel {
        &self.period.ended
    }

    /// The `LeaseLost` of a period that ended other than by a release through one of its handles
    /// (found lost by a write or renew, or not renewed in time); `None` while live or released.
    pub(crate) fn lost(&self) -> Option<Error> {
        if self.is_released() { None } else { self.ended_error() }
    }

    /// Record that the period is over and hand back the error writes now reject with (the first
    /// reason recorded wins).
    fn end(&self, lost: Error) -> Error {
        if !self.period.ended.is_cancelled() {
            self.period.ended.cancel_with(lost.clone());
            match &lost {
                Error::LeaseLost { reason: LostReason::Released, .. } => self.transition(LeaseAction::Released, None),
                Error::LeaseLost { reason, .. } => self.transition(LeaseAction::Lost, Some(*reason)),
                _ => {}
            }
        }
        self.ended_error().unwrap_or(lost)
    }

    /// The error every write after the end rejects with.
    fn ended_error(&self) -> Option<Error> {
        self.period.ended.reason().map(|reason| match reason {
            lost @ Error::LeaseLost { .. } => lost,
            other => Error::lease_lost(
                &self.period.key,
                LostReason::Released,
                format!("the lease handle was ended: {other}"),
            ),
        })
    }

    /// Extend the deadline to now + ttl, keeping the state (absorbing any cooperative write).
    pub async fn renew(&self) -> Result<()> {
        let deadline_at = self.objects.deadline_in(self.period.ttl)?;
        self.guarded_write("lease.renew", &mut |v: &View| {
            let p = Proposal { keep_holder: true, deadline_at, state: v.state.clone() };
            Box::pin(async move { Ok(p) })
        })
        .await?;
        self.transition(LeaseAction::Renewed, None);
        Ok(())
    }

    /// Read-modify-write of the state, guarded; `f` sees the freshest state (it runs again after a
    /// cooperative write). Returns the state written.
    pub async fn update_state(&self, f: &mut Transition<'_>) -> Result<Value> {
        self.guarded_write("lease.updateState", &mut |v: &View| {
            let (state, deadline_at) = (v.state.clone(), v.deadline_at);
            let next = f(state);
            Box::pin(async move { Ok(Proposal { keep_holder: true, deadline_at, state: checked(next.await?)? }) })
        })
        .await
    }

    /// Replace the state, guarded (unseen cooperative writes are discarded).
    pub async fn write(&self, state: Value) -> Result<Value> {
        let state = checked(state)?;
        self.guarded_write("lease.write", &mut |v: &View| {
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
        self.guarded_write("lease.release", &mut |v: &View| {
            let state = final_state.clone().unwrap_or_else(|| v.state.clone());
            Box::pin(async move { Ok(Proposal { keep_holder: false, deadline_at: now, state }) })
        })
        .await
        .map(drop)
    }

    /// The one write path of a handle (the call `method`); a `LeaseLost` it meets ends the
    /// period for every handle.
    async fn guarded_write<'f>(
        &self,
        method: &'static str,
        propose: &mut dyn FnMut(&View) -> crate::base::future::LocalBoxFuture<'f, Result<Proposal>>,
    ) -> Result<Value> {
        let (objects, call) = self.objects.call(method);
        let handle = Lease { objects, period: self.period.clone() };
        let written = match handle.try_guarded_write(propose).await {
            Err(lost @ Error::LeaseLost { .. }) => Err(self.end(lost)),
            other => other,
        };
        Call::end(call, &self.objects, &self.period.key, written)
    }

    /// Report a transition of this period to the listener.
    fn transition(&self, action: LeaseAction, reason: Option<LostReason>) {
        let (key, epoch) = (&self.period.key, self.period.epoch);
        self.objects.emit(Event::Lease { key, epoch, action, reason });
    }

    /// `propose` builds the next document from the handle's view and the write is guarded by the
    /// view's etag. On a failed guard the view is refreshed (`LeaseLost` if fenced) and the
    /// proposal rebuilt, at most `HANDLE_PATIENCE` times.
    async fn try_guarded_write<'f>(
        &self,
        propose: &mut dyn FnMut(&View) -> crate::base::future::LocalBoxFuture<'f, Result<Proposal>>,
    ) -> Result<Value> {
        let period = &self.period;
        for _ in 0..HANDLE_PATIENCE {
            let view = period.view.borrow().clone();
            if let Some(ended) = self.ended_error() {
                return Err(ended);
            }
            let Some(etag) = view.etag.as_deref() else {
                self.refresh().await?;
                continue;
            };
            let proposal = propose(&view).await?;
            let releasing = !proposal.keep_holder;
            let doc = LeaseDoc {
                epoch: period.epoch,
                holder: proposal.keep_holder.then(|| period.holder.clone()),
                deadline_at: Some(proposal.deadline_at),
                state: proposal.state,
                // The view is this attempt's own copy: its unknown fields move into the document.
                extra: view.extra,
            };
            match self.objects.replace(&period.key, &doc.encode(), etag, &view.meta).await? {
                Some(written) => {
                    *period.view.borrow_mut() = View {
                        etag: written.etag,
                        meta: written.meta,
                        deadline_at: doc.deadline(),
                        state: doc.state.clone(),
                        extra: doc.extra,
                        released: releasing,
                    };
                    if releasing {
                        self.end(Error::lease_lost(
                            &period.key,
                            LostReason::Released,
                            "the lease was released through this handle",
                        ));
                    }
                    return Ok(doc.state);
                }
                None => self.refresh().await?,
            }
        }
        Err(Error::lease_lost(
            &period.key,
            LostReason::Stolen,
            format!("gave up after {HANDLE_PATIENCE} attempts under a stream of cooperative writes"),
        ))
    }

    /// Re-read after a failed guard: fenced → `LeaseLost`; same period → absorb the fresh version.
    async fn refresh(&self) -> Result<()> {
        let period = &self.period;
        let Some(obj) = self.objects.read(&period.key).await? else {
            return Err(Error::lease_lost(&period.key, LostReason::Deleted, "the lease document was deleted"));
        };
        let StoredObject { body, etag, meta, .. } = obj;
        let doc = LeaseDoc::parse(&period.key, &body)?;
        let absorb = mutation::on(Mutation::AbsorbForeignEpoch);
        if doc.epoch != period.epoch && !absorb {
            return Err(Error::lease_lost(
                &period.key,
                LostReason::Stolen,
                format!("epoch advanced from {} to {}", period.epoch, doc.epoch),
            ));
        }
        if doc.holder.as_deref() != Some(period.holder.as_str()) && !absorb {
            let why = if doc.holder.is_none() { "the lease was released" } else { "another holder took the lease" };
            return Err(Error::lease_lost(&period.key, LostReason::Stolen, why));
        }
        let mut v = period.view.borrow_mut();
        v.etag = Some(etag);
        v.meta = meta;
        v.deadline_at = doc.deadline();
        v.state = doc.state;
        v.extra = doc.extra;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
