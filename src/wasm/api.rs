//! The core classes as the package's JS layer (`pkg/db.js`, `lease.js`, `doc.js`, `objects.js`) sees them: `Fencepost`, `Lease`, `Doc`,
//! `Objects`. Arguments arrive positional and already checked for name and type by the JS layer
//! (which owns option objects, Standard Schema and AbortSignal); what they mean (key rules, ttl,
//! JSON values) is judged by the core. Async methods return their result, or a Promise of it (see
//! `settle`); failures are rejections with a failure record (see `errors.rs`), which the JS layer
//! turns into its error class in the caller's stack.

use crate::base::sync::Shared;
use std::future::Future;
use std::task::{Context, Poll, Waker};

use js_sys::{Array, Function, Promise};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::convert::{js_json, text};
use super::errors::to_js;
use super::signal::{AbortSignal, Linked};
use super::stores::{JsManualClock, Store};
use crate::base::cancel::Cancel;
use crate::base::error::{Error, Result};
use crate::client::{Fencepost, Options};
use crate::doc::DEFAULT_MAX_ATTEMPTS;
use crate::host::clock::SystemClock;
use crate::inspect::Held;
use crate::lease::{LeaseOptions, LeaseView};
use crate::objects::WaitOptions;
use crate::objects::events::{Event, OnEvent};
use crate::objects::retry::RetryPolicy;
use crate::objects::transition::Transition;
use crate::store::{Precondition, StoredObject};
use crate::time::ClockSource;
use crate::time::{Clock, Timestamp};

/// Run a core call, under the caller's `AbortSignal` when there is one: `call` gets the linked
/// cancel (to scope its handle with [`Scoped::under`]); the listener goes when it settles.
fn promise<F, Fut>(signal: Option<AbortSignal>, call: F) -> JsValue
where
    F: FnOnce(Option<Cancel>) -> Fut,
    Fut: Future<Output = Result<JsValue>> + 'static,
{
    let link = Linked::new(signal);
    let work = call(link.as_ref().map(|l| l.cancel.clone()));
    into_promise(link, Box::pin(work))
}

/// The one Promise plumbing of the binding (not one per method: each instance of
/// `future_to_promise` costs kilobytes of wasm). The call is polled once at once: what finishes
/// without waiting (a memory store, a refused argument) returns its value — or a rejected Promise —
/// without a task, a Promise and two closures per call; the JS layer awaits either. Only a call
/// that waits becomes a task (its futures take the task's waker when polled again).
fn into_promise(link: Option<Linked>, mut work: crate::base::future::BoxFuture<'static, Result<JsValue>>) -> JsValue {
    if let Poll::Ready(out) = work.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        drop(link);
        return out.unwrap_or_else(|e| Promise::reject(&to_js(e)).into());
    }
    future_to_promise(async move {
        let out = work.await;
        drop(link);
        out.map_err(to_js)
    })
    .into()
}

/// A core handle for one call: the same handle, obeying the call's cancel if it has one.
trait Scoped: Clone {
    fn with(&self, cancel: &Cancel) -> Self;
    fn under(&self, cancel: &Option<Cancel>) -> Self {
        cancel.as_ref().map_or_else(|| self.clone(), |c| self.with(c))
    }
}

impl Scoped for Fencepost {
    fn with(&self, cancel: &Cancel) -> Self {
        self.with_cancel(cancel)
    }
}
impl Scoped for crate::lease::Lease {
    fn with(&self, cancel: &Cancel) -> Self {
        self.with_cancel(cancel)
    }
}
impl Scoped for crate::counter::Counter {
    fn with(&self, cancel: &Cancel) -> Self {
        self.with_cancel(cancel)
    }
}
impl Scoped for crate::doc::Doc {
    fn with(&self, cancel: &Cancel) -> Self {
        self.with_cancel(cancel)
    }
}

/// Results go back as arrays (the JS layer names the fields): no object built field by field here.
fn array(items: impl IntoIterator<Item = JsValue>) -> JsValue {
    items.into_iter().collect::<Array>().into()
}

/// A JS callback as a core transition. The JS layer wraps the caller's function so that it takes
/// and returns JSON text (`jsonCallback` in `pkg/json.js`): the text itself for a sync callback,
/// a Promise of it for an async one (only that is awaited). Whatever the callback throws reaches
/// the caller unchanged.
fn js_transition(f: Function, what: &'static str) -> Box<Transition<'static>> {
    Box::new(move |value: Value| {
        let returned = f.call1(&JsValue::UNDEFINED, &text(&value).into());
        Box::pin(async move {
            let returned = returned.map_err(Error::callback)?;
            let out = match returned.as_string() {
                Some(json) => json,
                None => crate::host::promise::settled(&returned)
                    .await
                    .map_err(Error::callback)?
                    .as_string()
                    .unwrap_or_default(),
            };
            js_json(&out, what)
        })
    })
}

/// A time as JS milliseconds, or undefined.
fn millis(at: Option<Timestamp>) -> JsValue {
    at.map_or(JsValue::UNDEFINED, |t| t.as_millis_f64().into())
}

/// A judged lease period (`inspect`'s lease, `breakLease`'s previous one): `[epoch, holder,
/// deadlineMs | undefined, expired, released, expiresIn, stateJson]`.
fn lease_view(l: LeaseView) -> JsValue {
    array([
        (l.epoch as f64).into(),
        l.holder.map_or(JsValue::NULL, JsValue::from),
        millis(l.deadline_at),
        l.expired.into(),
        l.released.into(),
        l.expires_in.into(),
        text(&l.state).into(),
    ])
}

fn json_or_null(value: Option<Value>) -> JsValue {
    value.map_or(JsValue::NULL, |v| text(&v).into())
}

/// A clock whose "now" comes from a JS function (`options.now`, for tests and simulations); waits
/// are real. A failing or nonsensical clock is an error, never silently replaced by another time.
struct JsClock(Function);

impl Clock for JsClock {
    fn now(&self) -> Result<Timestamp> {
        let v = self.0.call0(&JsValue::UNDEFINED).map_err(Error::callback)?;
        let millis = v.as_f64().or_else(|| v.dyn_ref::<js_sys::Date>().map(|d| d.get_time()));
        match millis {
            Some(m) if m.is_finite() => Ok(Timestamp::from_millis_f64(m)),
            _ => Err(Error::invalid("options.now() must return a finite number of milliseconds or a valid Date")),
        }
    }

    fn sleep(&self, secs: f64) -> crate::base::future::BoxFuture<'static, ()> {
        SystemClock.sleep(secs)
    }
}

/// A JS function hearing events as arrays (the JS layer's listener names the fields and catches
/// what the user's handler throws; whatever still escapes is dropped here, never a call's outcome):
/// `["request", op, key, status | null, attempt, ms, outcome]`, `["call", method, key, requests,
/// ms, outcome]`, `["lease", key, epoch, action, reason | undefined]`.
fn js_listener(f: Function) -> OnEvent {
    Shared::new(move |event: &Event<'_>| {
        let fields = match *event {
            Event::Request { op, key, status, attempt, ms, outcome } => array([
                "request".into(),
                op.as_str().into(),
                key.into(),
                status.map_or(JsValue::NULL, JsValue::from),
                attempt.into(),
                ms.into(),
                outcome.into(),
            ]),
            Event::Call { method, key, requests, ms, outcome } => {
                array(["call".into(), method.into(), key.into(), requests.into(), ms.into(), outcome.into()])
            }
            Event::Lease { key, epoch, action, reason } => array([
                "lease".into(),
                key.into(),
                (epoch as f64).into(),
                action.as_str().into(),
                reason.map_or(JsValue::UNDEFINED, |r| r.as_str().into()),
            ]),
        };
        let _ = f.call1(&JsValue::UNDEFINED, &fields);
    })
}

/// An optional count (attempts): a whole number; its range is the core's to judge.
fn count(n: Option<f64>, what: &str) -> Result<Option<u32>> {
    match n {
        None => Ok(None),
        Some(n) if n.fract() == 0.0 => Ok(Some(n.clamp(0.0, f64::from(u32::MAX)) as u32)),
        Some(_) => Err(Error::invalid(format!("{what} must be an integer"))),
    }
}

/// A lease's options as the JS layer passes them (absent ones take the core's defaults).
fn lease_options(
    ttl: f64,
    holder: Option<String>,
    steal_if_expired: Option<bool>,
    wait: Option<f64>,
    keep_alive_every: Option<f64>,
) -> LeaseOptions {
    let defaults = LeaseOptions::new(ttl);
    LeaseOptions {
        holder,
        steal_if_expired: steal_if_expired.unwrap_or(defaults.steal_if_expired),
        wait,
        keep_alive_every,
        ..defaults
    }
}

fn lease_or_null(lease: Option<crate::lease::Lease>) -> JsValue {
    lease.map_or(JsValue::NULL, |inner| JsLease { inner }.into())
}

// ------------------------------------------------------------------------------------ Fencepost

/// Check a store (see `check_store`): `[ok, [[name, ok, required, detail], …]]`.
#[wasm_bindgen(js_name = checkStore)]
pub fn check_store(store: &Store, signal: Option<AbortSignal>) -> JsValue {
    let inner = store.inner();
    promise(signal, |c| async move {
        let run = crate::check::check_store(inner);
        let report = match c {
            Some(cancel) => cancel.run(run).await??,
            None => run.await?,
        };
        let checks: Array = report
            .checks
            .into_iter()
            .map(|c| array([c.name.into(), c.ok.into(), c.required.into(), c.detail.into()]))
            .collect();
        Ok(array([report.ok.into(), checks.into()]))
    })
}

#[wasm_bindgen(js_name = Fencepost)]
pub struct JsFencepost {
    inner: Fencepost,
}

#[wasm_bindgen(js_class = Fencepost)]
impl JsFencepost {
    #[wasm_bindgen(constructor)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: &Store,
        now: Option<Function>,
        max_attempts: Option<f64>,
        base_delay: Option<f64>,
        max_delay: Option<f64>,
        store_clock: bool,
        manual: Option<JsManualClock>,
        on_event: Option<Function>,
    ) -> std::result::Result<JsFencepost, JsValue> {
        let build = || -> Result<JsFencepost> {
            let defaults = RetryPolicy::default();
            let retry = RetryPolicy {
                max_attempts: count(max_attempts, "options.retry.maxAttempts")?.unwrap_or(defaults.max_attempts),
                base_delay: base_delay.unwrap_or(defaults.base_delay),
                max_delay: max_delay.unwrap_or(defaults.max_delay),
            };
            let clock = match (now, manual) {
                (Some(f), _) => Some(Shared::new(JsClock(f)) as Shared<dyn Clock>),
                (None, Some(m)) => Some(Shared::new(m.inner) as Shared<dyn Clock>),
                (None, None) => None,
            };
            let clock_source = if store_clock { ClockSource::Store } else { ClockSource::Local };
            let on_event = on_event.map(js_listener);
            let inner = Fencepost::from_shared(store.inner(), Options { clock, retry, clock_source, on_event })?;
            Ok(JsFencepost { inner })
        };
        build().map_err(to_js)
    }

    /// `[won, key, value (JSON), etag]`.
    pub fn claim(&self, key: String, value: String, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move {
                let c = db.claim_value(&key, js_json(&value, "value")?).await?;
                Ok(array([c.won.into(), c.key.into(), text(&c.value).into(), c.etag.into()]))
            }
        })
    }

    /// A `Lease`, or null when held by someone else. (Positional arguments are how the JS layer
    /// hands over the options it checked.)
    #[allow(clippy::too_many_arguments)]
    pub fn lease(
        &self,
        key: String,
        ttl: f64,
        holder: Option<String>,
        steal_if_expired: Option<bool>,
        state_fn: Option<Function>,
        wait: Option<f64>,
        signal: Option<AbortSignal>,
    ) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move {
                let opts = lease_options(ttl, holder, steal_if_expired, wait, None);
                let mut state_fn = state_fn.map(|f| js_transition(f, "stateFn's result"));
                Ok(lease_or_null(db.lease_value(&key, opts, state_fn.as_deref_mut()).await?))
            }
        })
    }

    /// Acquire, run `f(lease)` (a JS function; its Promise is awaited) while the core keeps the
    /// lease alive, release when it settles: the core's `with_lease`, so JS and Rust share one
    /// behaviour. `f`'s rejection reaches the caller unchanged. null when not acquired.
    #[wasm_bindgen(js_name = withLease)]
    #[allow(clippy::too_many_arguments)]
    pub fn with_lease(
        &self,
        key: String,
        ttl: f64,
        holder: Option<String>,
        steal_if_expired: Option<bool>,
        state_fn: Option<Function>,
        wait: Option<f64>,
        every: Option<f64>,
        f: Function,
        signal: Option<AbortSignal>,
    ) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move {
                let opts = lease_options(ttl, holder, steal_if_expired, wait, every);
                let mut state_fn = state_fn.map(|f| js_transition(f, "stateFn's result"));
                let ran = db
                    .with_lease_value(&key, opts, state_fn.as_deref_mut(), async |lease| {
                        let handle: JsValue = JsLease { inner: lease.clone() }.into();
                        let returned = f.call1(&JsValue::UNDEFINED, &handle).map_err(Error::callback)?;
                        crate::host::promise::settled(&returned).await.map_err(Error::callback)
                    })
                    .await?;
                Ok(ran.unwrap_or(JsValue::NULL))
            }
        })
    }

    /// The new state, or null if there is no lease document.
    #[wasm_bindgen(js_name = cooperativeWrite)]
    pub fn cooperative_write(&self, key: String, f: Function, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move {
                let mut f = js_transition(f, "the callback's result");
                Ok(json_or_null(db.cooperative_write_value(&key, &mut *f).await?))
            }
        })
    }

    /// What `key` holds, or null: `[kind, etag, size, lastModifiedMs | undefined, value, lease]`,
    /// `value` JSON text (a Uint8Array for bytes), `lease` (kind "lease" only) as `lease_view`
    /// gives it. One read.
    pub fn inspect(&self, key: String, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move {
                let Some(seen) = db.inspect(&key).await? else { return Ok(JsValue::NULL) };
                let (kind, value, lease) = match seen.kind {
                    Held::Lease(l) => ("lease", text(&l.document).into(), lease_view(l)),
                    Held::Json(v) => ("json", text(&v).into(), JsValue::UNDEFINED),
                    Held::Bytes(b) => ("bytes", js_sys::Uint8Array::from(b.as_slice()).into(), JsValue::UNDEFINED),
                };
                Ok(array([
                    kind.into(),
                    seen.etag.into(),
                    (seen.size as f64).into(),
                    millis(seen.last_modified),
                    value,
                    lease,
                ]))
            }
        })
    }

    /// Delete what is older than `older_than` seconds under `prefix` (never a held lease):
    /// `[deleted, kept, keys]`.
    pub fn prune(&self, prefix: String, older_than: f64, dry_run: bool, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move {
                let pruned = db.prune(&prefix, crate::prune::PruneOptions { older_than, dry_run }).await?;
                let keys: Array = pruned.keys.into_iter().map(JsValue::from).collect();
                Ok(array([(pruned.deleted as f64).into(), (pruned.kept as f64).into(), keys.into()]))
            }
        })
    }

    /// Break a lease (fencing-safe), or null without a lease document: `[epoch, previous]`, the
    /// previous period as `lease_view` gives it.
    #[wasm_bindgen(js_name = breakLease)]
    pub fn break_lease(&self, key: String, state: Option<String>, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move {
                let state = state.map(|s| js_json(&s, "breakLease options.state")).transpose()?;
                let Some(broken) = db.break_lease_value(&key, state).await? else { return Ok(JsValue::NULL) };
                Ok(array([(broken.epoch as f64).into(), lease_view(broken.previous)]))
            }
        })
    }

    /// A `Lease` on the holder's current period, or null. One read, no write.
    #[wasm_bindgen(js_name = attachLease)]
    pub fn attach_lease(&self, key: String, holder: String, ttl: f64, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.inner.under(&c);
            async move { Ok(lease_or_null(db.attach_lease(&key, &holder, ttl).await?)) }
        })
    }

    pub fn doc(&self, key: String) -> std::result::Result<JsDoc, JsValue> {
        self.inner.doc(&key).map(|inner| JsDoc { inner }).map_err(to_js)
    }

    /// A sharded counter (no request); `shards` checked by the core.
    pub fn counter(&self, key: String, shards: Option<f64>) -> std::result::Result<JsCounter, JsValue> {
        let build = || {
            let shards = count(shards, "counter options.shards")?;
            self.inner
                .counter_with_shards(&key, shards.unwrap_or(crate::counter::DEFAULT_SHARDS))
                .map(|inner| JsCounter { inner })
        };
        build().map_err(to_js)
    }

    pub fn objects(&self) -> JsObjects {
        JsObjects { db: self.inner.clone() }
    }
}

// ------------------------------------------------------------------------------------ Lease

#[wasm_bindgen(js_name = Lease)]
pub struct JsLease {
    inner: crate::lease::Lease,
}

#[wasm_bindgen(js_class = Lease)]
impl JsLease {
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> String {
        self.inner.key().to_owned()
    }
    #[wasm_bindgen(getter)]
    pub fn holder(&self) -> String {
        self.inner.holder().to_owned()
    }
    #[wasm_bindgen(getter)]
    pub fn epoch(&self) -> f64 {
        self.inner.epoch() as f64
    }
    #[wasm_bindgen(getter)]
    pub fn ttl(&self) -> f64 {
        self.inner.ttl()
    }

    // What changes with each write, one getter each (reading the deadline need not serialize the state).

    /// The state, as JSON.
    #[wasm_bindgen(getter, js_name = stateJson)]
    pub fn state_json(&self) -> String {
        text(&self.inner.state_value())
    }
    /// Milliseconds since the epoch.
    #[wasm_bindgen(getter, js_name = deadlineMs)]
    pub fn deadline_ms(&self) -> f64 {
        self.inner.deadline_at().as_millis_f64()
    }
    #[wasm_bindgen(getter)]
    pub fn etag(&self) -> Option<String> {
        self.inner.etag()
    }
    #[wasm_bindgen(getter)]
    pub fn released(&self) -> bool {
        self.inner.is_released()
    }
    /// Why the period is over (the failure record later calls reject with), or undefined while it
    /// lasts: the JS handle's `signal` follows this.
    #[wasm_bindgen(getter)]
    pub fn ended(&self) -> JsValue {
        self.inner.ended().reason().map_or(JsValue::UNDEFINED, to_js)
    }

    pub fn renew(&self, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let l = self.inner.under(&c);
            async move { l.renew().await.map(|_| JsValue::UNDEFINED) }
        })
    }

    #[wasm_bindgen(js_name = updateState)]
    pub fn update_state(&self, f: Function, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let l = self.inner.under(&c);
            async move {
                let mut f = js_transition(f, "updateState's result");
                Ok(text(&l.update_state_value(&mut *f).await?).into())
            }
        })
    }

    pub fn write(&self, state: String, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let l = self.inner.under(&c);
            async move { Ok(text(&l.write_value(js_json(&state, "state")?).await?).into()) }
        })
    }

    /// `state`: the final state's JSON, when one was given.
    pub fn release(&self, state: Option<String>, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let l = self.inner.under(&c);
            async move {
                let state = state.map(|s| js_json(&s, "release options.state")).transpose()?;
                l.release_value(state).await.map(|_| JsValue::UNDEFINED)
            }
        })
    }

    /// Renew in the background until `stop` aborts (→ resolves), the lease is released (→
    /// resolves) or lost (→ rejects with `LeaseLost`). A bad interval is reported at once.
    #[wasm_bindgen(js_name = keepAlive)]
    pub fn keep_alive(&self, every: Option<f64>, stop: AbortSignal) -> std::result::Result<JsValue, JsValue> {
        self.inner.keep_alive_interval(every).map_err(to_js)?;
        let link = Linked::follow(stop);
        let renewing = self.inner.keep_alive_with(every, &link.cancel);
        Ok(into_promise(Some(link), Box::pin(async move { renewing.await.map(|_| JsValue::UNDEFINED) })))
    }

    /// Settles (with the reason's failure record) once the handle learns its period is over —
    /// however it learns it, keep-alive inside the core included: the JS handle's `signal`
    /// follows this.
    #[wasm_bindgen(js_name = whenEnded)]
    pub fn when_ended(&self) -> JsValue {
        let ended = self.inner.ended().clone();
        into_promise(
            None,
            Box::pin(async move {
                ended.cancelled().await;
                Ok(ended.reason().map_or(JsValue::UNDEFINED, to_js))
            }),
        )
    }
}

// ------------------------------------------------------------------------------------ Doc

#[wasm_bindgen(js_name = Doc)]
pub struct JsDoc {
    inner: crate::doc::Doc,
}

#[wasm_bindgen(js_class = Doc)]
impl JsDoc {
    /// `[value (JSON), etag]` or null.
    pub fn get(&self, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let doc = self.inner.under(&c);
            async move {
                let Some(got) = doc.get_value().await? else { return Ok(JsValue::NULL) };
                Ok(array([text(&got.value).into(), got.etag.into()]))
            }
        })
    }

    /// The value written (JSON). `create`: the JSON of the value to start from, when given.
    pub fn update(
        &self,
        f: Function,
        create: Option<String>,
        max_attempts: Option<f64>,
        signal: Option<AbortSignal>,
    ) -> JsValue {
        promise(signal, |c| {
            let doc = self.inner.under(&c);
            async move {
                let create = create.map(|s| js_json(&s, "update options.create")).transpose()?;
                let max_attempts = count(max_attempts, "update options.maxAttempts")?.unwrap_or(DEFAULT_MAX_ATTEMPTS);
                let mut f = js_transition(f, "update's result");
                Ok(text(&doc.update_value(&mut *f, create, max_attempts).await?).into())
            }
        })
    }

    pub fn delete(&self, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let doc = self.inner.under(&c);
            async move { doc.delete().await.map(|_| JsValue::UNDEFINED) }
        })
    }

    /// Forget the remembered version (`update({fresh: true})` reads first).
    pub fn forget(&self) {
        self.inner.forget();
    }
}

// ------------------------------------------------------------------------------------ Counter

#[wasm_bindgen(js_name = Counter)]
pub struct JsCounter {
    inner: crate::counter::Counter,
}

#[wasm_bindgen(js_class = Counter)]
impl JsCounter {
    /// Add `n` (a whole number; the JS layer defaults it to 1).
    pub fn add(&self, n: f64, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let counter = self.inner.under(&c);
            async move { counter.add(count_signed(n)?).await.map(|()| JsValue::UNDEFINED) }
        })
    }

    /// The sum of the shards.
    pub fn value(&self, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let counter = self.inner.under(&c);
            async move { counter.value().await.map(|v| (v as f64).into()) }
        })
    }
}

/// A whole number of a JS number (the core judges its range).
fn count_signed(n: f64) -> Result<i64> {
    if n.fract() != 0.0 || !n.is_finite() {
        return Err(Error::invalid("a counter adds whole numbers"));
    }
    Ok(n.clamp(-9.2e18, 9.2e18) as i64)
}

// ------------------------------------------------------------------------------------ Objects

#[wasm_bindgen(js_name = Objects)]
pub struct JsObjects {
    db: Fencepost,
}

fn stored_to_js(o: StoredObject) -> JsValue {
    array([js_sys::Uint8Array::from(o.body.as_slice()).into(), o.etag.into()])
}

#[wasm_bindgen(js_class = Objects)]
impl JsObjects {
    pub fn get(&self, key: String, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.db.under(&c);
            async move { Ok(db.objects().get(&key).await?.map_or(JsValue::NULL, stored_to_js)) }
        })
    }

    /// `{etag}`, or null when the precondition did not hold.
    pub fn put(
        &self,
        key: String,
        data: Vec<u8>,
        if_absent: bool,
        if_match: Option<String>,
        signal: Option<AbortSignal>,
    ) -> JsValue {
        promise(signal, |c| {
            let db = self.db.under(&c);
            async move {
                let precondition = match (if_absent, if_match) {
                    (true, Some(_)) => return Err(Error::invalid("ifAbsent and ifMatch cannot be combined")),
                    (true, None) => Precondition::IfAbsent,
                    (false, Some(etag)) => Precondition::IfMatch(etag),
                    (false, None) => Precondition::None,
                };
                let written = db.objects().put(&key, &data, precondition).await?;
                Ok(written.map_or(JsValue::NULL, |w| array([w.etag.map_or(JsValue::NULL, JsValue::from)])))
            }
        })
    }

    pub fn delete(&self, key: String, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.db.under(&c);
            async move { db.objects().delete(&key).await.map(|_| JsValue::UNDEFINED) }
        })
    }

    pub fn list(&self, prefix: String, signal: Option<AbortSignal>) -> JsValue {
        promise(signal, |c| {
            let db = self.db.under(&c);
            async move {
                let keys = db.objects().list(&prefix).await?;
                Ok(keys.into_iter().map(JsValue::from).collect::<Array>().into())
            }
        })
    }

    /// One page of a listing: `[[key, etag, size, lastModifiedMs], …]` and the next page's cursor
    /// (undefined on the last page). Absent fields are undefined.
    #[wasm_bindgen(js_name = entriesPage)]
    pub fn entries_page(
        &self,
        prefix: String,
        start_after: Option<String>,
        cursor: Option<String>,
        signal: Option<AbortSignal>,
    ) -> JsValue {
        promise(signal, |c| {
            let db = self.db.under(&c);
            async move {
                let page = db.objects().entries_page(&prefix, start_after.as_deref(), cursor.as_deref()).await?;
                let entries: Array = page
                    .entries
                    .into_iter()
                    .map(|e| {
                        array([
                            e.key.into(),
                            e.etag.map_or(JsValue::UNDEFINED, JsValue::from),
                            e.size.map_or(JsValue::UNDEFINED, |s| (s as f64).into()),
                            millis(e.last_modified),
                        ])
                    })
                    .collect();
                Ok(array([entries.into(), page.next.map_or(JsValue::UNDEFINED, JsValue::from)]))
            }
        })
    }

    #[wasm_bindgen(js_name = waitFor)]
    pub fn wait_for(
        &self,
        key: String,
        timeout: Option<f64>,
        poll_interval: Option<f64>,
        changed_from: Option<String>,
        signal: Option<AbortSignal>,
    ) -> JsValue {
        promise(signal, |c| {
            let db = self.db.under(&c);
            async move {
                let defaults = WaitOptions::default();
                let opts = WaitOptions {
                    timeout: timeout.unwrap_or(defaults.timeout),
                    poll_interval: poll_interval.unwrap_or(defaults.poll_interval),
                    changed_from,
                };
                Ok(stored_to_js(db.objects().wait_for(&key, &opts).await?))
            }
        })
    }
}
