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
mod snapshot;
pub(crate) mod with_lease;

use crate::base::sync::Shared;
use std::future::Future;
use std::marker::PhantomData;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::base::future::BoxFuture;
use crate::base::mutation::{self, Mutation};
use crate::base::sync::{Lock, MaybeSend};

pub use document::LeaseView;
pub(crate) use document::{LeaseDoc, MAX_EPOCH};

use crate::base::cancel::Cancel;
use crate::base::error::{Error, LostReason, Result};
use crate::codec::json::{self, checked};
use crate::objects::Objects;
use crate::objects::events::{Call, Event, LeaseAction};
use crate::objects::transition::{Transition, settle};
use crate::store::{StoredObject, WriteMeta};
use crate::time::Timestamp;

/// Guarded writes absorb at most this many cooperative writes before giving up with `LeaseLost`.
const HANDLE_PATIENCE: u32 = 10;

/// Options of [`crate::Fencepost::lease`] and [`crate::Fencepost::with_lease`]: `LeaseOptions::new(ttl)`,
/// then what differs, by builder (`LeaseOptions::new(30.0).wait(5.0).holder("worker-7")`).
/// `T` is the type of the lease's state (any `serde` type; `serde_json::Value` by default):
/// `LeaseOptions::new(30.0).state_type::<JobState>()` makes the lease a `Lease<JobState>`.
pub struct LeaseOptions<T = Value> {
    /// Seconds, > 0.
    pub(crate) ttl: f64,
    /// Defaults to a fresh random token (128 bits). It is a credential: whoever knows it can
    /// [`crate::Fencepost::attach_lease`].
    pub(crate) holder: Option<String>,
    /// Take over a lease whose deadline has passed (default `true`).
    pub(crate) steal_if_expired: bool,
    /// Seconds to keep trying while the lease is held by someone else (`None`: one attempt).
    pub(crate) wait: Option<f64>,
    /// Under [`crate::Fencepost::with_lease`]: renew every this many seconds (`None`: `ttl / 3`).
    pub(crate) keep_alive_every: Option<f64>,
    /// Written as the state when an acquisition finds none (JSON null), as JSON; an `Err` is a
    /// value that did not serialize, reported by the call.
    pub(crate) initial_state: Option<std::result::Result<Value, Error>>,
    pub(crate) state: PhantomData<fn() -> T>,
}

impl LeaseOptions {
    /// A lease of `ttl` seconds (> 0): a random holder, expired leases taken over, one attempt.
    pub fn new(ttl: f64) -> Self {
        let (holder, wait, keep_alive_every, initial_state) = (None, None, None, None);
        LeaseOptions { ttl, holder, steal_if_expired: true, wait, keep_alive_every, initial_state, state: PhantomData }
    }
}

impl<T> LeaseOptions<T> {
    /// The lease's state as a `U` (any `serde` type): the lease comes back as a `Lease<U>`.
    pub fn state_type<U>(self) -> LeaseOptions<U> {
        let LeaseOptions { ttl, holder, steal_if_expired, wait, keep_alive_every, initial_state, .. } = self;
        LeaseOptions { ttl, holder, steal_if_expired, wait, keep_alive_every, initial_state, state: PhantomData }
    }

    /// The state to write when an acquisition finds none yet (the first one, typically), and so
    /// the state's type: `LeaseOptions::new(30.0).initial_state(Job::default())` is a
    /// `LeaseOptions<Job>`, whose leases start from a default `Job`. A later acquisition keeps
    /// the state it finds.
    pub fn initial_state<U: Serialize>(self, state: U) -> LeaseOptions<U> {
        // As every typed value is: NaN and the infinities refused, not written as `null`.
        let json = crate::codec::json::to_value(&state)
            .map_err(|e| Error::invalid(format!("the initial lease state does not serialize as JSON: {e}")));
        LeaseOptions { initial_state: Some(json), ..self.state_type() }
    }

    /// Hold it as `holder` (default: a fresh random token of 128 bits). The holder is a
    /// credential: whoever knows it can [`crate::Fencepost::attach_lease`].
    pub fn holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = Some(holder.into());
        self
    }

    /// Take over a lease whose deadline has passed (default `true`).
    pub fn steal_if_expired(mut self, steal: bool) -> Self {
        self.steal_if_expired = steal;
        self
    }

    /// Keep trying for up to `seconds` while the lease is held by someone else (default: one
    /// attempt). The attempts back off with jitter up to about a second apart, so a release is
    /// noticed within about a second, and one is made right at the held lease's deadline.
    pub fn wait(mut self, seconds: f64) -> Self {
        self.wait = Some(seconds);
        self
    }

    /// Under [`crate::Fencepost::with_lease`]: renew every `seconds` (default `ttl / 3`; must be
    /// > 0 and < `ttl`).
    pub fn keep_alive_every(mut self, seconds: f64) -> Self {
        self.keep_alive_every = Some(seconds);
        self
    }

    pub fn ttl(&self) -> f64 {
        self.ttl
    }
}

// By hand: a derive would ask `T` itself for `Clone`/`Debug`/`PartialEq`, which only names it.
impl<T> Clone for LeaseOptions<T> {
    fn clone(&self) -> Self {
        let LeaseOptions { ttl, holder, steal_if_expired, wait, keep_alive_every, initial_state, .. } = self;
        let (holder, initial_state) = (holder.clone(), initial_state.clone());
        let (ttl, steal_if_expired, wait, keep_alive_every) = (*ttl, *steal_if_expired, *wait, *keep_alive_every);
        LeaseOptions { ttl, holder, steal_if_expired, wait, keep_alive_every, initial_state, state: PhantomData }
    }
}

impl<T> std::fmt::Debug for LeaseOptions<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaseOptions")
            .field("ttl", &self.ttl)
            // A holder is a credential (whoever knows it can attach): shown only as there.
            .field("holder", &self.holder.as_ref().map(|_| "[redacted]"))
            .field("steal_if_expired", &self.steal_if_expired)
            .field("wait", &self.wait)
            .field("keep_alive_every", &self.keep_alive_every)
            .field("initial_state", &self.initial_state)
            .finish()
    }
}

impl<T> PartialEq for LeaseOptions<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.ttl, &self.holder, self.steal_if_expired, self.wait, self.keep_alive_every)
            == (other.ttl, &other.holder, other.steal_if_expired, other.wait, other.keep_alive_every)
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
    view: Lock<View>,
    /// Fired with a `LeaseLost` reason once a handle learns the period is over.
    ended: Cancel,
}

impl Period {
    /// Whether the period is over, judged with its view `v` locked (a release records itself in
    /// the view before it fires `ended`): a write or a read settling afterwards leaves the view at
    /// the end's version.
    fn is_over(&self, v: &View) -> bool {
        v.released || self.ended.is_cancelled()
    }
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
/// use fencepost::store::MemoryStore;
/// use fencepost::{Error, Fencepost, Lease, LeaseOptions, Options};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, Default, PartialEq)]
/// struct Job { step: u32, cancel: bool }
///
/// # futures::executor::block_on(async {
/// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
/// // Acquire, seeding the state on the first acquisition: written atomically with the new epoch.
/// let lease: Lease<Job> = db
///     .lease_with_state("jobs/nightly", LeaseOptions::new(30.0), |prev| Ok(prev.unwrap_or_default()))
///     .await?
///     .expect("free");
/// assert_eq!((lease.epoch(), lease.state()?), (1, Job::default()));
/// // Held: anyone else gets `None`.
/// assert!(db.lease("jobs/nightly", LeaseOptions::new(30.0)).await?.is_none());
///
/// // Checkpoint under the fence.
/// lease.update_state(|job| Ok(Job { step: job.step + 1, ..job })).await?;
/// // Ask the holder to stop, from outside, without fencing it; its next write absorbs this.
/// db.cooperative_write("jobs/nightly", |job: Job| Ok(Job { cancel: true, ..job })).await?;
/// lease.renew().await?;
/// assert_eq!(lease.state()?, Job { step: 1, cancel: true });
/// lease.release().await?;
/// assert!(matches!(lease.renew().await, Err(Error::LeaseLost { .. })), "released handles are done");
///
/// // The next owner gets epoch 2 and the state where the last one left it.
/// let options = LeaseOptions::new(30.0).state_type::<Job>();
/// let next = db.lease("jobs/nightly", options).await?.expect("released");
/// assert_eq!((next.epoch(), next.state()?.step), (2, 1));
/// # Ok::<(), fencepost::Error>(())
/// # }).unwrap();
/// ```
pub struct Lease<T = Value> {
    objects: Objects,
    period: Shared<Period>,
    state: PhantomData<fn() -> T>,
}

impl<T> Clone for Lease<T> {
    fn clone(&self) -> Self {
        Lease { objects: self.objects.clone(), period: self.period.clone(), state: PhantomData }
    }
}

impl<T> std::fmt::Debug for Lease<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("key", &self.period.key)
            .field("epoch", &self.period.epoch)
            .field("ttl", &self.period.ttl)
            .field("ended", &self.period.ended.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// Builds a guarded write's proposal from the handle's view (`Send` natively, like the futures
/// holding it).
#[cfg(not(target_arch = "wasm32"))]
type Propose<'f> = dyn FnMut(&View) -> BoxFuture<'f, Result<Proposal>> + Send + 'f;
#[cfg(target_arch = "wasm32")]
type Propose<'f> = dyn FnMut(&View) -> BoxFuture<'f, Result<Proposal>> + 'f;

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
            view: Lock::new(view),
            ended: Cancel::new(),
        };
        // The acquiring call's cancel is not the period's.
        Lease { objects: objects.detached(), period: Shared::new(period), state: PhantomData }
    }
}

impl<T: Serialize + DeserializeOwned + MaybeSend + 'static> Lease<T> {
    /// The state as last seen or written. A stored state that is not a `T` (a cooperative write
    /// of another shape) is [`Error::Corrupt`], naming the key and serde's error.
    pub fn state(&self) -> Result<T> {
        json::from_json(self.state_value(), "lease state", &self.period.key)
    }

    /// Read-modify-write of the state, guarded; `f` sees the freshest state (it runs again after a
    /// cooperative write, so keep it free of side effects). Returns the state written.
    pub async fn update_state(&self, mut f: impl FnMut(T) -> Result<T> + MaybeSend) -> Result<T> {
        self.update_state_async(move |s| std::future::ready(f(s))).await
    }

    /// [`Lease::update_state`] for a transition that must await.
    pub async fn update_state_async<F, Fut>(&self, mut f: F) -> Result<T>
    where
        F: FnMut(T) -> Fut + MaybeSend,
        Fut: Future<Output = Result<T>> + MaybeSend + 'static,
    {
        let key = self.period.key.clone();
        let mut transition = crate::objects::transition::typed(&key, "lease state", &mut f);
        let written = self.update_state_value(&mut transition).await?;
        json::from_json(written, "lease state", &key)
    }

    /// Replace the state, guarded (unseen cooperative writes are discarded).
    pub async fn write(&self, state: &T) -> Result<()> {
        self.write_value(json::to_json(state, "lease state", &self.period.key)?).await.map(drop)
    }

    /// Give the lease up: holder = null, deadline = now, the state kept (cooperative writes
    /// included). The document stays, so epochs keep increasing.
    pub async fn release(&self) -> Result<()> {
        self.release_value(None).await
    }

    /// [`Lease::release`], writing `state` as the final state.
    pub async fn release_with(&self, state: &T) -> Result<()> {
        self.release_value(Some(json::to_json(state, "final state", &self.period.key)?)).await
    }
}

impl<T> Lease<T> {
    /// The same handle with its state as a `U` (any `serde` type): for a lease from
    /// [`crate::Fencepost::attach_lease`], say. No request.
    pub fn typed<U>(self) -> Lease<U> {
        Lease { objects: self.objects, period: self.period, state: PhantomData }
    }

    /// A handle on the same period (its state is shared) whose calls obey `cancel`: a renew or
    /// write in flight when it fires is settled as [`Objects`]' "Cancellation" describes.
    pub fn with_cancel(&self, cancel: &Cancel) -> Lease<T> {
        Lease { objects: self.objects.with_cancel(cancel), period: self.period.clone(), state: PhantomData }
    }

    /// The same period with its requests counted as `call`'s (no cancel): the lease a held call
    /// works with, so that its renewals and its release are the call's requests.
    pub(crate) fn counted_in(&self, call: &Objects) -> Lease<T> {
        Lease { objects: call.uncancelled(), period: self.period.clone(), state: PhantomData }
    }

    /// The same period with no cancel and no call to report to: for work that outlives the call
    /// that acquired it (a release in the background).
    #[cfg(any(not(target_arch = "wasm32"), feature = "worker"))]
    pub(crate) fn detached(&self) -> Lease<T> {
        Lease { objects: self.objects.detached(), period: self.period.clone(), state: PhantomData }
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
    /// The state as JSON, whatever `T` is.
    pub fn state_value(&self) -> Value {
        self.period.view.lock().state.clone()
    }
    pub fn deadline_at(&self) -> Timestamp {
        self.period.view.lock().deadline_at
    }
    /// The etag of the version this handle last saw or wrote (`None` right after a write whose
    /// response was lost and which has since been replaced).
    pub fn etag(&self) -> Option<String> {
        self.period.view.lock().etag.clone()
    }
    /// Released through this handle (or one sharing its state).
    pub fn is_released(&self) -> bool {
        self.period.view.lock().released
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
            // No write follows the end, so the provenance the view kept for the next one (up to
            // 32 tokens) goes: a handle kept after its period (a JS one until the garbage
            // collector finalizes it) then holds little.
            self.period.view.lock().meta = WriteMeta::default();
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
        // Not heard after the period's end (a renewal that landed before a release settled after it).
        if !self.period.ended.is_cancelled() {
            self.transition(LeaseAction::Renewed, None);
        }
        Ok(())
    }

    /// Read-modify-write of the state, guarded; `f` sees the freshest state (it runs again after a
    /// cooperative write). Returns the state written.
    #[doc(hidden)]
    pub async fn update_state_value(&self, f: &mut Transition<'_>) -> Result<Value> {
        let objects = &self.objects;
        self.guarded_write("lease.updateState", &mut |v: &View| {
            let (state, deadline_at) = (v.state.clone(), v.deadline_at);
            let next = f(state);
            Box::pin(
                async move { Ok(Proposal { keep_holder: true, deadline_at, state: settle(objects, next).await? }) },
            )
        })
        .await
    }

    /// Replace the state, guarded (unseen cooperative writes are discarded).
    #[doc(hidden)]
    pub async fn write_value(&self, state: Value) -> Result<Value> {
        let state = checked(state)?;
        self.guarded_write("lease.write", &mut |v: &View| {
            let p = Proposal { keep_holder: true, deadline_at: v.deadline_at, state: state.clone() };
            Box::pin(async move { Ok(p) })
        })
        .await
    }

    /// Give the lease up: holder = null, deadline = now, optionally a final state (otherwise the
    /// current one, cooperative writes included). The document stays, so epochs keep increasing.
    #[doc(hidden)]
    pub async fn release_value(&self, final_state: Option<Value>) -> Result<()> {
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
    async fn guarded_write<'f>(&self, method: &'static str, propose: &mut Propose<'f>) -> Result<Value> {
        let (objects, call) = self.objects.call(method);
        let handle: Lease<T> = Lease { objects, period: self.period.clone(), state: PhantomData };
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
    async fn try_guarded_write<'f>(&self, propose: &mut Propose<'f>) -> Result<Value> {
        let period = &self.period;
        for _ in 0..HANDLE_PATIENCE {
            let view = period.view.lock().clone();
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
                    let mut v = period.view.lock();
                    // The period ended while this write was in flight (released through this
                    // handle: a renewal that landed before the release and was read back after
                    // it). The write did land, but a released handle never looks held again.
                    if period.is_over(&v) {
                        return Ok(doc.state);
                    }
                    *v = View {
                        etag: written.etag,
                        meta: written.meta,
                        deadline_at: doc.deadline(),
                        state: doc.state.clone(),
                        extra: doc.extra,
                        released: releasing,
                    };
                    drop(v);
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
            // The same epoch with no holder: the period was released, through another of its handles.
            return Err(match doc.holder {
                None => Error::lease_lost(
                    &period.key,
                    LostReason::Released,
                    "the lease was released through another handle",
                ),
                Some(_) => Error::lease_lost(&period.key, LostReason::Stolen, "another holder took the lease"),
            });
        }
        let mut v = period.view.lock();
        // Ended while this read was in flight (released through this handle): the view keeps the
        // end's version, and the write loop stops at the end.
        if period.is_over(&v) {
            return Ok(());
        }
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
