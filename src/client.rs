//! `Fencepost`: the whole coordination API on one store, in one place. Each method checks nothing
//! and decides nothing itself: it hands over to the primitive's own module (`claim`, `lease`,
//! `doc`), which works through the objects layer.

use crate::base::sync::Shared;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::base::cancel::Cancel;
use crate::base::error::Result;
use crate::base::sync::MaybeSend;
use crate::claim::{self, Claim};
use crate::counter::{self, Counter};
use crate::doc::Doc;
use crate::host::clock::SystemClock;
use crate::inspect::{self, Inspection};
use crate::lease::break_lease::{self, Broken};
use crate::lease::{Lease, LeaseOptions, acquire, with_lease};
use crate::objects::Objects;
use crate::objects::events::{Call, OnEvent};
use crate::objects::retry::RetryPolicy;
use crate::objects::transition::Transition;
use crate::once::{self, Once, OnceOptions};
use crate::prune::{self, PruneOptions, Pruned};
use crate::semaphore::Semaphore;
use crate::store::{IntoStore, ObjectStore};
use crate::time::{Clock, ClockSource};
use crate::watch::{Seen, Watch, Watcher};

/// Options of [`Fencepost::new`]; `Options::default()` for the usual ones.
#[derive(Clone, Default)]
pub struct Options {
    /// Where "now" comes from (lease deadlines) and how to wait; defaults to [`SystemClock`].
    pub clock: Option<Shared<dyn Clock>>,
    /// How transient store failures are retried (5 attempts, full-jitter backoff by default).
    pub retry: RetryPolicy,
    /// Whose time lease deadlines are written and judged in: `clock` (default), or the store's
    /// (`clock` corrected by the offset the store's responses show).
    pub clock_source: ClockSource,
    /// Hears every request, call and lease transition ([`crate::Event`]), synchronously: make it quick.
    pub on_event: Option<OnEvent>,
}

/// The coordination primitives on one store: [`Fencepost::claim`], [`Fencepost::lease`] (and
/// [`Fencepost::with_lease`], [`Fencepost::attach_lease`], [`Fencepost::cooperative_write`]),
/// [`Fencepost::doc`], and the layer below, [`Fencepost::objects`]. Cheap to clone; several
/// `Fencepost`s on one store behave like separate processes sharing a bucket.
#[derive(Clone)]
pub struct Fencepost {
    pub(crate) objects: Objects,
}

impl Fencepost {
    /// Coordination on `store`: any store (`MemoryStore::new()`, `S3Store::new(config)?`…), or a
    /// store shared with other code (an `Arc`; in wasm32 an `Rc`). Fails only for invalid `options`.
    pub fn new(store: impl IntoStore, options: Options) -> Result<Self> {
        Self::from_shared(store.into_store(), options)
    }

    /// [`Fencepost::new`] on a store already shared as a [`Shared`](crate::Shared)`<dyn ObjectStore>`
    /// (`Arc` natively, `Rc` in wasm32), without wrapping it again.
    pub fn from_shared(store: Shared<dyn ObjectStore>, options: Options) -> Result<Self> {
        let clock = options.clock.unwrap_or_else(|| Shared::new(SystemClock));
        let objects = Objects::new(store, clock, options.retry)?
            .with_clock_source(options.clock_source)
            .with_events(options.on_event);
        Ok(Fencepost { objects })
    }

    /// A handle whose calls obey `cancel`: waits and retries stop when it fires, and the call
    /// settles as described in [`Objects`]' "Cancellation". Docs made from it obey it too; a lease acquired
    /// through it does not (the cancel is the acquisition's; see [`crate::Lease::with_cancel`]).
    pub fn with_cancel(&self, cancel: &Cancel) -> Fencepost {
        Fencepost { objects: self.objects.with_cancel(cancel) }
    }

    /// The layer-0 API on the same store.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// Claim `key` for `value`: put-if-absent, then (having lost) read the winner. Exactly one
    /// caller wins; every loser gets the winner's value. Claims are immutable: there is no
    /// unclaim. Requests: 1 when won, 2 when lost.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, Options};
    /// use serde_json::json;
    ///
    /// # futures::executor::block_on(async {
    /// // Two Workers on one bucket (here: one memory store) racing for the same cron tick.
    /// let bucket = MemoryStore::new(); // clones share the data, as processes share a bucket
    /// let a = Fencepost::new(bucket.clone(), Options::default())?;
    /// let b = Fencepost::new(bucket, Options::default())?;
    /// let key = "cron/*/5 * * * */2026-05-01T09:00:00.000Z";
    /// let (ca, cb) = futures::join!(a.claim(key, json!({"by": "a"})), b.claim(key, json!({"by": "b"})));
    /// let (ca, cb) = (ca?, cb?);
    /// assert!(ca.won != cb.won, "exactly one winner");
    /// assert_eq!(ca.value, cb.value, "the loser learns the winner's value");
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// Any `serde` type is a value: the claim comes back with the winner's value as that type
    /// (a winner written as another shape is [`crate::Error::Corrupt`], naming the key and serde's error).
    ///
    /// ```
    /// # use fencepost::{Fencepost, Options, store::MemoryStore};
    /// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    /// struct Tick { by: String, attempt: u32 }
    ///
    /// # futures::executor::block_on(async {
    /// # let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// let first = db.claim("cron/tick", Tick { by: "a".into(), attempt: 1 }).await?;
    /// let second = db.claim("cron/tick", Tick { by: "b".into(), attempt: 1 }).await?;
    /// assert!(first.won && !second.won);
    /// assert_eq!(second.value, Tick { by: "a".into(), attempt: 1 });
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn claim<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        key: &str,
        value: T,
    ) -> Result<Claim<T>> {
        let value = crate::codec::json::to_json(&value, "claim value", key)?;
        self.claim_value(key, value).await?.typed()
    }

    /// [`Fencepost::claim`] of a JSON value, the form every binding calls (no serde round trip).
    #[doc(hidden)]
    pub async fn claim_value(&self, key: &str, value: Value) -> Result<Claim> {
        let (objects, call) = self.objects.call("claim");
        Call::end(call, &self.objects, key, claim::claim(&objects, key, value).await)
    }

    /// Acquire `key`, or `None` when it is held by someone else (or expired and
    /// `steal_if_expired` is false). With [`LeaseOptions::wait`], a held lease is tried again until
    /// it is acquired or that many seconds have passed; the call's cancel
    /// ([`Fencepost::with_cancel`]) stops that. The state is a `T`
    /// ([`LeaseOptions::state_type`]; JSON by default). Requests: 2 to acquire, 1 per attempt while held.
    pub async fn lease<T>(&self, key: &str, mut options: LeaseOptions<T>) -> Result<Option<Lease<T>>> {
        let mut seed = seeding(options.initial_state.take().transpose()?);
        let state_fn = seed.as_mut().map(|f| f as &mut Transition<'_>);
        Ok(self.lease_value(key, options.state_type(), state_fn).await?.map(Lease::typed))
    }

    /// [`Fencepost::lease`], writing `f(previous state)` with the new epoch, atomically: seed
    /// the state on the first acquisition (`previous` is `None` when there was no state), or
    /// stamp each period. `f` may run more than once (a lost race runs it again). The lease's
    /// state type is `f`'s (`LeaseOptions::new(30.0)` needs no [`LeaseOptions::state_type`] here).
    pub async fn lease_with_state<S, T: Serialize + DeserializeOwned + MaybeSend + 'static>(
        &self,
        key: &str,
        options: LeaseOptions<S>,
        mut f: impl FnMut(Option<T>) -> Result<T> + MaybeSend,
    ) -> Result<Option<Lease<T>>> {
        // A JSON null (no state yet) reads as `None`; the state written is `f`'s, as JSON.
        let mut seed = |prev: Option<T>| std::future::ready(f(prev).map(Some));
        let mut transition = crate::objects::transition::typed(key, "lease state", &mut seed);
        let leased = self.lease_value(key, options.state_type(), Some(&mut transition)).await?;
        Ok(leased.map(Lease::typed))
    }

    /// [`Fencepost::lease`] with a JSON transition, the form the bindings call.
    #[doc(hidden)]
    pub async fn lease_value(
        &self,
        key: &str,
        options: LeaseOptions,
        state_fn: Option<&mut Transition<'_>>,
    ) -> Result<Option<Lease>> {
        let (objects, call) = self.objects.call("lease");
        Call::end(call, &self.objects, key, acquire::lease(&objects, key, options, state_fn).await)
    }

    /// Acquire `key` (honouring `options.wait` and this handle's cancel), run `f` with the lease
    /// while keep-alive renews it, then release it. `Ok(None)` without calling `f` when the lease
    /// could not be acquired.
    ///
    /// - `f` succeeds and the lease was held throughout → `Ok(Some(output))`, after the release;
    ///   a failed release is reported (`Err`): the lease then stays held until its deadline.
    /// - `f` fails → its error; the lease is released (a failed release is not reported over
    ///   `f`'s own error; the lease then expires at its deadline).
    /// - the lease is lost while `f` runs → `f` still runs to its end (it learns of the loss from
    ///   [`Lease::ended`] and from its guarded writes rejecting with `LeaseLost`, and may return
    ///   early); then its error if it failed, else the `LeaseLost`, since its work was not fenced
    ///   to the end. The npm package's `withLease` behaves the same way (a JS function cannot be
    ///   dropped either: its `signal` aborts instead).
    ///
    /// This handle's cancel applies to the acquisition (and its `wait`) and to the release; once
    /// acquired, `f` runs to its end. A cancel during the release abandons the attempt in flight
    /// and reads back once (`AmbiguousWrite` when that cannot tell); one that fired while `f` ran
    /// leaves the release to go ahead as usual, so the lease is not left held until its deadline.
    ///
    /// `f` may release the lease itself; keep-alive then stops and `f` runs on. `f` is an async
    /// closure (`async |lease| { … }`), so it may borrow from its surroundings.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, LeaseOptions, Options};
    /// use serde_json::json;
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// let mut steps_run = Vec::new();
    /// let outcome = db
    ///     .with_lease("jobs/rollup", LeaseOptions::new(30.0), async |lease| {
    ///         for step in 1..=3 {
    ///             // ... one idempotent step of work, then a checkpoint guarded by the epoch ...
    ///             lease.write(&json!({"step": step})).await?;
    ///             steps_run.push(step);
    ///         }
    ///         Ok::<_, fencepost::Error>(lease.epoch())
    ///     })
    ///     .await?;
    /// assert_eq!(outcome, Some(1), "ran under epoch 1");
    /// assert_eq!(steps_run, [1, 2, 3]);
    /// // Released at the end: the next taker gets epoch 2 and the last checkpoint.
    /// let next = db.lease("jobs/rollup", LeaseOptions::new(30.0)).await?.expect("released");
    /// assert_eq!((next.epoch(), next.state()?), (2, json!({"step": 3})));
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn with_lease<S, T, E, F>(
        &self,
        key: &str,
        mut options: LeaseOptions<S>,
        f: F,
    ) -> std::result::Result<Option<T>, E>
    where
        F: AsyncFnOnce(&Lease<S>) -> std::result::Result<T, E>,
        E: From<crate::base::error::Error> + 'static,
    {
        let mut seed = seeding(options.initial_state.take().transpose()?);
        let state_fn = seed.as_mut().map(|f| f as &mut Transition<'_>);
        with_lease::with_lease(&self.objects, key, options, state_fn, f).await
    }

    /// [`Fencepost::with_lease`] whose acquisition writes `state_fn(previous state)` with the new
    /// epoch, atomically, as [`Fencepost::lease_with_state`] does (the npm package's `withLease`
    /// with `stateFn`): refuse a finished job with an error from `state_fn` (nothing is written,
    /// `f` is not called), or stamp each period. `state_fn` may run more than once (a lost race
    /// runs it again); it is not called while someone else holds the lease.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Error, Fencepost, LeaseOptions, Options};
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// // Each period counts its runs in the state; a third run is refused before `f`.
    /// let runs = |prev: Option<u32>| match prev.unwrap_or(0) {
    ///     n if n < 2 => Ok(n + 1),
    ///     _ => Err(Error::invalid("ran twice already")),
    /// };
    /// for expected in [1, 2] {
    ///     let run = db.with_lease_with_state("jobs/nightly", LeaseOptions::new(30.0), runs, async |lease| {
    ///         Ok::<_, Error>(lease.state()?)
    ///     });
    ///     assert_eq!(run.await?, Some(expected));
    /// }
    /// let third = db.with_lease_with_state("jobs/nightly", LeaseOptions::new(30.0), runs, async |_| Ok::<_, Error>(0));
    /// assert!(matches!(third.await, Err(Error::InvalidArgument(_))));
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn with_lease_with_state<S, T, R, E, F>(
        &self,
        key: &str,
        options: LeaseOptions<S>,
        mut state_fn: impl FnMut(Option<T>) -> Result<T> + MaybeSend,
        f: F,
    ) -> std::result::Result<Option<R>, E>
    where
        T: Serialize + DeserializeOwned + MaybeSend + 'static,
        F: AsyncFnOnce(&Lease<T>) -> std::result::Result<R, E>,
        E: From<crate::base::error::Error> + 'static,
    {
        let mut seed = |prev: Option<T>| std::future::ready(state_fn(prev).map(Some));
        let mut transition = crate::objects::transition::typed(key, "lease state", &mut seed);
        with_lease::with_lease(&self.objects, key, options.state_type(), Some(&mut transition), f).await
    }

    /// [`Fencepost::with_lease`] with a JSON transition at acquisition, the form the bindings call.
    #[doc(hidden)]
    pub async fn with_lease_value<T, E, F>(
        &self,
        key: &str,
        options: LeaseOptions,
        state_fn: Option<&mut Transition<'_>>,
        f: F,
    ) -> std::result::Result<Option<T>, E>
    where
        F: AsyncFnOnce(&Lease) -> std::result::Result<T, E>,
        E: From<crate::base::error::Error> + 'static,
    {
        with_lease::with_lease(&self.objects, key, options, state_fn, f).await
    }

    /// Run `f` once per `key`, its result recorded: [`Once::Done`] with the recorded value (`ran`
    /// true only for the call whose run recorded it), or [`Once::Running`] while another holder
    /// runs it (after waiting up to [`OnceOptions::wait`] seconds for it to finish or expire).
    ///
    /// `f` runs under a lease of `ttl` seconds kept alive meanwhile; its [`Cancel`] fires when the
    /// lease is lost. When `f` fails its error is recorded (`failed`, under its type's name) and
    /// returned, and the next call runs `f` again; a runner that dies is replaced once its lease
    /// expires. So `f` runs at least once and may run again after a crash; the recorded result is
    /// exactly one and never changes. Requests: 1 when done; 3 for an unraced run, plus renewals.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, Once, OnceOptions, Options};
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// let report = db.once("reports/2026-05-01", OnceOptions::new(60.0), |_cancel| async {
    ///     Ok::<_, fencepost::Error>(String::from("sent to 12 customers"))
    /// }).await?;
    /// assert_eq!(report, Once::Done { value: "sent to 12 customers".to_owned(), ran: true });
    /// // Every later call gets the recorded result without running anything (1 request).
    /// let again = db.once("reports/2026-05-01", OnceOptions::new(60.0), |_cancel| async {
    ///     Ok::<_, fencepost::Error>(String::from("not run"))
    /// }).await?;
    /// assert_eq!(again, Once::Done { value: "sent to 12 customers".to_owned(), ran: false });
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn once<T, E, F, Fut>(&self, key: &str, options: OnceOptions, f: F) -> std::result::Result<Once<T>, E>
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce(Cancel) -> Fut,
        Fut: std::future::Future<Output = std::result::Result<T, E>>,
        E: From<crate::base::error::Error> + std::fmt::Display + 'static,
    {
        once::once_typed(&self.objects, key, &options, f).await
    }

    /// [`Fencepost::once`] on JSON, the form the bindings call: `f` runs with the run's lease;
    /// `describe` names a failure of `f` (`(name, message, outcome)`) for the recorded `failed` and
    /// the call's event.
    #[doc(hidden)]
    pub async fn once_value<E, F>(
        &self,
        key: &str,
        options: &OnceOptions,
        f: F,
        describe: impl Fn(&E) -> (String, String, &'static str) + crate::base::sync::MaybeSync,
    ) -> std::result::Result<Once, E>
    where
        F: AsyncFnOnce(&Lease) -> std::result::Result<Value, E>,
        E: From<crate::base::error::Error> + 'static,
    {
        once::once(&self.objects, key, options, f, describe).await
    }

    /// A semaphore under `key`: at most `limit` (1 to 1000) unexpired permits at once, each a
    /// lease of `ttl` seconds on one of the slots `key/0` … `key/<limit - 1>`, fenced by its epoch
    /// as any lease is. Making one sends nothing.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, Options, PermitOptions};
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// let api = db.semaphore("limits/partner-api", 2, 30.0)?;
    /// let first = api.acquire(PermitOptions::default()).await?.expect("a free slot");
    /// let second = api.acquire(PermitOptions::default()).await?.expect("another");
    /// assert!(api.acquire(PermitOptions::default()).await?.is_none(), "at most 2 at once");
    /// assert_eq!(api.holders().await?.len(), 2);
    /// first.release().await?;
    /// let third = api.acquire(PermitOptions::default()).await?.expect("a slot freed");
    /// assert_eq!(third.key(), first.key());
    /// assert!(third.epoch() > first.epoch(), "each slot's epochs increase: the fence");
    /// # drop(second);
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn semaphore(&self, key: &str, limit: u32, ttl: f64) -> Result<Semaphore> {
        Semaphore::new(&self.objects, key, limit, ttl)
    }

    /// Watch `key`: a [`Watch`] (a `Stream`) whose first item is the key's current state (what
    /// [`Fencepost::inspect`] says; `None` while absent), then each change of its etag, polled every
    /// `interval` seconds (at least 0.05) with a conditional read: one request per interval, a 304
    /// without the body while nothing changed. Drop it to stop. A refused key or interval is its
    /// one item, an `Err(InvalidArgument)`, after which the stream ends.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, Held, Options};
    /// use futures::StreamExt;
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// let mut changes = db.watch("config/flags", 0.05);
    /// assert!(changes.next().await.unwrap()?.is_none(), "absent at first");
    /// db.claim("config/flags", serde_json::json!({"beta": true})).await?;
    /// let now = changes.next().await.unwrap()?.expect("written");
    /// assert_eq!(now.kind, Held::Json(serde_json::json!({"beta": true})));
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn watch(&self, key: &str, interval: f64) -> Watch {
        Watch::new(Watcher::resume(&self.objects, key, interval, Seen::Nothing))
    }

    /// Re-attach to the current ownership period of `holder`: one read, nothing written. `None`
    /// when the lease is absent, released, held by someone else, or expired.
    /// The handle's state is JSON: [`Lease::typed`] views it as another type.
    pub async fn attach_lease(&self, key: &str, holder: &str, ttl: f64) -> Result<Option<Lease>> {
        let (objects, call) = self.objects.call("attachLease");
        Call::end(call, &self.objects, key, acquire::attach_lease(&objects, key, holder, ttl).await)
    }

    /// Change the state of a lease from outside: a CAS loop on `state` only; epoch, holder and
    /// deadline are preserved and the holder is not fenced. `None` when there is no lease document.
    /// Requests: 2.
    /// `f` sees the state as a `T` (a stored state of another shape is [`crate::Error::Corrupt`])
    /// and may run more than once (each lost race runs it again).
    pub async fn cooperative_write<T: Serialize + DeserializeOwned + MaybeSend + 'static>(
        &self,
        key: &str,
        mut f: impl FnMut(T) -> Result<T> + MaybeSend,
    ) -> Result<Option<T>> {
        let mut sync = |state: T| std::future::ready(f(state));
        let mut transition = crate::objects::transition::typed(key, "lease state", &mut sync);
        let written = self.cooperative_write_value(key, &mut transition).await?;
        written.map(|state| crate::codec::json::from_json(state, "lease state", key)).transpose()
    }

    /// [`Fencepost::cooperative_write`] with a JSON transition, the form the bindings call.
    #[doc(hidden)]
    pub async fn cooperative_write_value(&self, key: &str, f: &mut Transition<'_>) -> Result<Option<Value>> {
        let (objects, call) = self.objects.call("cooperativeWrite");
        Call::end(call, &self.objects, key, acquire::cooperative_write(&objects, key, f).await)
    }

    /// A handle on the JSON document at `key` (no request; the key is checked here).
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Doc, Fencepost, Options};
    /// use serde_json::json;
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// let counter: Doc<u64> = db.doc("stats/visits")?;
    /// assert!(counter.get().await?.is_none());
    /// // Read, apply, compare-and-swap; start from 0 when absent; retry on conflict.
    /// counter.update_or_insert(0, |n| Ok(n + 1)).await?;
    /// let written = counter.update_or_insert(0, |n| Ok(n + 1)).await?;
    /// assert_eq!(written, 2);
    /// assert_eq!(counter.get().await?.map(|d| d.value), Some(2));
    /// // JSON works as well: `db.doc::<serde_json::Value>(…)`.
    /// let raw = db.doc::<serde_json::Value>("stats/visits")?.get().await?.expect("there");
    /// assert_eq!(raw.value, json!(2));
    /// counter.delete().await?;
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    /// The document's type `T` (any `serde` type) is usually inferred (`let stats: Doc<Stats> =
    /// db.doc("stats")?`, or from the closure given to [`Doc::update`]); `db.doc::<Value>(…)` for JSON.
    pub fn doc<T>(&self, key: &str) -> Result<Doc<T>> {
        Doc::new(&self.objects, key)
    }

    /// A sharded counter at `key` (no request): `shards` docs at `key/0` … (default 16), one
    /// updated at random by [`Counter::add`], all summed by [`Counter::value`]. Spreads the
    /// writes of a hot counter over keys, past a store's per-key write limit.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, Options};
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// let visits = db.counter("metrics/visits")?;
    /// for _ in 0..5 {
    ///     visits.add(1).await?;
    /// }
    /// visits.add(-2).await?;
    /// assert_eq!(visits.value().await?, 3);
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn counter(&self, key: &str) -> Result<Counter> {
        self.counter_with_shards(key, counter::DEFAULT_SHARDS)
    }

    /// [`Fencepost::counter`] over `shards` docs (1 to 1000): more shards, more writes per
    /// second, a dearer [`Counter::value`] (one read per shard).
    pub fn counter_with_shards(&self, key: &str, shards: u32) -> Result<Counter> {
        Counter::new(&self.objects, key, shards)
    }

    /// What `key` holds, for operators: a lease with its period judged now, another JSON value
    /// (claims and docs), or bytes, with etag, size and last-modified time. `None` when absent.
    /// One request; nothing is written.
    ///
    /// ```
    /// use fencepost::store::MemoryStore;
    /// use fencepost::{Fencepost, Held, LeaseOptions, Options};
    /// use serde_json::json;
    ///
    /// # futures::executor::block_on(async {
    /// let db = Fencepost::new(MemoryStore::new(), Options::default())?;
    /// db.lease("jobs/1", LeaseOptions::new(30.0)).await?;
    /// let seen = db.inspect("jobs/1").await?.expect("there");
    /// let Held::Lease(lease) = seen.kind else { panic!("a lease") };
    /// assert!(lease.epoch == 1 && !lease.expired && lease.expires_in > 29.0);
    /// db.claim("cron/tick", json!({"by": "a"})).await?;
    /// assert_eq!(db.inspect("cron/tick").await?.map(|i| i.kind), Some(Held::Json(json!({"by": "a"}))));
    /// # Ok::<(), fencepost::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn inspect(&self, key: &str) -> Result<Option<Inspection>> {
        let (objects, call) = self.objects.call("inspect");
        Call::end(call, &self.objects, key, inspect::inspect(&objects, key).await)
    }

    /// Break a (stuck) lease, fencing-safe: write the next epoch as released (no holder, deadline
    /// now), keeping the state or writing `state`. The old holder's next write through its handle
    /// fails with `LeaseLost` (reason `Stolen`), and the next acquirer gets a higher epoch still.
    /// `None` when there is no lease document; else what was broken. Two requests.
    pub async fn break_lease(&self, key: &str) -> Result<Option<Broken>> {
        self.break_lease_value(key, None).await
    }

    /// [`Fencepost::break_lease`], writing `state` as the broken lease's state (say, a note for
    /// the next owner).
    pub async fn break_lease_with_state<T: Serialize>(&self, key: &str, state: &T) -> Result<Option<Broken>> {
        self.break_lease_value(key, Some(crate::codec::json::to_json(state, "lease state", key)?)).await
    }

    /// [`Fencepost::break_lease`] with the state as JSON, the form the bindings call.
    #[doc(hidden)]
    pub async fn break_lease_value(&self, key: &str, state: Option<Value>) -> Result<Option<Broken>> {
        let (objects, call) = self.objects.call("breakLease");
        Call::end(call, &self.objects, key, break_lease::break_lease(&objects, key, state).await)
    }

    /// Delete the objects under `prefix` last modified more than `older_than` seconds ago —
    /// never a lease document that is held — and say what was deleted (with `dry_run`: what would
    /// be, deleting nothing). Each old object is re-read first; the delete is conditional on it
    /// being unchanged where the store has a conditional DELETE (S3), else it follows the re-read
    /// at once (R2 binding). Safe only for key spaces that do not recur: a deleted claim can be
    /// claimed again, and a deleted lease document restarts its epochs. Requests: one list per
    /// page, then a read and a delete per old object. Objects under CairnDB's reserved prefixes
    /// (`log/`, `snapshots/`, `logs/`, `txapplied/`) are its engine's: counted as kept, never
    /// deleted, and a `prefix` under one is an `InvalidArgument`.
    pub async fn prune(&self, prefix: &str, options: PruneOptions) -> Result<Pruned> {
        let (objects, call) = self.objects.call("prune");
        let PruneOptions { older_than, dry_run } = options;
        Call::end(call, &self.objects, prefix, prune::prune(&objects, prefix, older_than, dry_run).await)
    }
}

/// The acquisition's transition for [`LeaseOptions::initial_state`]: the initial state where the
/// document has none (JSON null), the found state otherwise.
fn seeding(
    initial: Option<Value>,
) -> Option<impl FnMut(Value) -> crate::base::future::BoxFuture<'static, Result<Value>> + MaybeSend> {
    initial.map(|initial| {
        move |found: Value| -> crate::base::future::BoxFuture<'static, Result<Value>> {
            let state = if found.is_null() { initial.clone() } else { found };
            Box::pin(std::future::ready(Ok(state)))
        }
    })
}
