//! The one entry point of the binding: `call(op, id, target, args, callbacks, signal)`. `target`
//! is the JS handle's recipe (plain data: a `Fencepost`'s id, store and options; a store's; a
//! clock's), `id` the recipe's id (0 when it has none), `args` the call's named arguments as JSON
//! text, `callbacks` what a call takes beside them (`{fn, stateFn, data, lease}`: JS functions,
//! bytes, a lease handle's snapshot text, read only when the binding no longer keeps its period),
//! `signal` the caller's AbortSignal. It returns the result (JSON text, or `{json, bytes?, ended?,
//! failure?}` when more is needed: see `convert::Reply`) or a Promise of it; failures are
//! rejections with a failure record (`errors.rs`) that the JS layer turns into its error class in
//! the caller's stack.
//!
//! No JS handle owns core memory: what a call needs is rebuilt from its recipe or taken from a
//! bounded table (`tables.rs`), and a lease handle carries its period as a snapshot.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use js_sys::Function;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::convert::{Args, Beside, Reply, js_json, millis, object, object_text, text, texts_object};
use crate::errors::to_js;
use crate::signal::{AbortSignal, Linked};
use crate::stores::{self, Settings};
use crate::tables;
use fencepost::store::{IfChanged, Precondition, StoredObject};
use fencepost::{
    BoxFuture, Cancel, Clock, ClockSource, Error, Event, Fencepost, Held, Inspection, Lease, LeaseOptions, LeaseView,
    OnEvent, Once, OnceOptions, Options, PermitOptions, Result, RetryPolicy, Seen, Semaphore, Shared, SystemClock,
    Timestamp, Transition, WaitOptions, Watcher,
};

/// What a call hands over besides its JSON arguments.
struct Callbacks(JsValue);

impl Callbacks {
    fn function(&self, name: &str) -> Option<Function> {
        if !self.0.is_object() {
            return None;
        }
        js_sys::Reflect::get(&self.0, &name.into()).ok()?.dyn_into::<Function>().ok()
    }

    fn required(&self, name: &str) -> Result<Function> {
        self.function(name).ok_or_else(|| Error::invalid(format!("{name} must be a function")))
    }

    /// An `AbortSignal` given among the callbacks.
    fn signal(&self, name: &str) -> Option<AbortSignal> {
        if !self.0.is_object() {
            return None;
        }
        let value = js_sys::Reflect::get(&self.0, &name.into()).ok()?;
        value.is_object().then(|| value.unchecked_into::<AbortSignal>())
    }

    fn text(&self, name: &str) -> Option<String> {
        if !self.0.is_object() {
            return None;
        }
        js_sys::Reflect::get(&self.0, &name.into()).ok()?.as_string()
    }

    fn data(&self) -> Vec<u8> {
        js_sys::Reflect::get(&self.0, &"data".into())
            .ok()
            .and_then(|d| d.dyn_into::<js_sys::Uint8Array>().ok())
            .map_or_else(Vec::new, |d| d.to_vec())
    }
}

/// Run one call of the JS API (see the module's doc).
#[wasm_bindgen]
pub fn call(
    op: &str,
    id: u32,
    target: JsValue,
    args: &str,
    callbacks: JsValue,
    signal: Option<AbortSignal>,
) -> std::result::Result<JsValue, JsValue> {
    let link = Linked::new(signal);
    let cancel = link.as_ref().map(|l| l.cancel.clone());
    let work = Args::parse(args).and_then(|args| dispatch(op, id, &target, args, Callbacks(callbacks), cancel));
    settle(link, work.map_err(to_js)?)
}

type Work = BoxFuture<'static, Result<Reply>>;

fn work(f: impl Future<Output = Result<Reply>> + 'static) -> Result<Work> {
    Ok(Box::pin(f))
}

/// The one Promise plumbing of the binding. The call is polled once at once: what finishes
/// without waiting (a memory store, a refused argument) returns its value — or throws — without a
/// task; only a call that waits becomes a Promise. The signal's listener goes when it settles.
fn settle(link: Option<Linked>, mut work: Work) -> std::result::Result<JsValue, JsValue> {
    if let Poll::Ready(out) = work.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        drop(link);
        return out.map(Reply::into_js).map_err(to_js);
    }
    Ok(future_to_promise(async move {
        let out = work.await;
        drop(link);
        out.map(Reply::into_js).map_err(to_js)
    })
    .into())
}

/// The `Fencepost` with id `id`: kept built in the bounded table, or built from its recipe `target`
/// (`{id, store, now?, clock?, manual?, onEvent?, retry?}`), under the call's cancel. The id comes
/// as a number of its own, so a call whose `Fencepost` is kept reads nothing of the recipe (each
/// field read from a JS object is a round trip through the boundary).
#[inline(never)]
fn fencepost(id: u32, target: &JsValue, cancel: &Option<Cancel>) -> Result<Fencepost> {
    if id == 0 {
        return Err(Error::invalid("not a Fencepost"));
    }
    let db = tables::db(id, || build(&Settings { object: target, store: "Fencepost" }))?;
    Ok(cancel.as_ref().map_or_else(|| db.clone(), |c| db.with_cancel(c)))
}

#[inline(never)]
fn build(r: &Settings<'_>) -> Result<Fencepost> {
    let defaults = RetryPolicy::default();
    let count = |n: Option<f64>| match n {
        None => Ok(defaults.max_attempts),
        Some(n) if n.fract() == 0.0 => Ok(n.clamp(0.0, f64::from(u32::MAX)) as u32),
        Some(_) => Err(Error::invalid("options.retry.maxAttempts must be an integer")),
    };
    let retry = RetryPolicy {
        max_attempts: count(r.number("maxAttempts"))?,
        base_delay: r.number("baseDelay").unwrap_or(defaults.base_delay),
        max_delay: r.number("maxDelay").unwrap_or(defaults.max_delay),
    };
    let manual = r.field("manual");
    let manual = match manual.is_object() {
        true => Some(Shared::new(stores::manual_clock(&manual)?) as Shared<dyn Clock>),
        false => None,
    };
    let clock = match r.function("now") {
        Some(f) => Some(Shared::new(JsClock(f)) as Shared<dyn Clock>),
        None => manual.clone(),
    };
    let clock_source = if r.flag("storeClock") == Some(true) { ClockSource::Store } else { ClockSource::Local };
    let on_event = r.function("onEvent").map(js_listener);
    // A manual clock is the whole test's time: a memory store under it stamps by it (`Stamp`).
    if let Some(manual) = &manual {
        stores::adopt_clock(&r.field("store"), manual)?;
    }
    let store = stores::store(&r.field("store"))?;
    Fencepost::from_shared(store.inner, Options { clock, retry, clock_source, on_event })
}

fn dispatch(op: &str, id: u32, target: &JsValue, mut a: Args, cb: Callbacks, cancel: Option<Cancel>) -> Result<Work> {
    // Calls on a store or a clock (their recipe is the target).
    match op {
        "checkStore" => {
            let store = stores::store(target)?.inner;
            return work(async move {
                let run = fencepost::check_store(store);
                let report = match cancel {
                    Some(cancel) => cancel.run(run).await??,
                    None => run.await?,
                };
                let checks = report.checks.into_iter().map(|c| {
                    object(vec![
                        ("name", c.name.into()),
                        ("ok", c.ok.into()),
                        ("required", c.required.into()),
                        ("detail", c.detail.into()),
                    ])
                });
                Ok(Reply::object(vec![("ok", report.ok.into()), ("checks", checks.collect())]))
            });
        }
        // A store handle's settings judged when it is made (built once here; kept if it is state).
        "store.open" => return stores::store(target).and_then(|_| ready(Value::Null)),
        "store.counts" => {
            let c = stores::store(target)?.request_counts(a.flag("reset") == Some(true));
            let fields = [("get", c.get), ("put", c.put), ("delete", c.delete), ("list", c.list)];
            return ready(Reply::object(Vec::from(fields.map(|(k, v)| (k, Value::from(v))))));
        }
        "store.inject" => return stores::store(target)?.inject(&a).and_then(|()| ready(Value::Null)),
        "store.limitWrites" => return stores::store(target)?.limit_writes(&a).and_then(|()| ready(Value::Null)),
        "store.pause" => return stores::store(target)?.pause(&a).and_then(|()| ready(Value::Null)),
        "store.clearFaults" => {
            stores::store(target)?.clear_faults();
            return ready(Value::Null);
        }
        "clock.now" => {
            return ready(stores::manual_clock(target)?.now().map_or(Value::Null, |t| t.as_millis_f64().into()));
        }
        "clock.stepUntil" => {
            let until = a.number("until").map(Timestamp::from_millis_f64);
            // A clock stays within the times a lease document can record, as `manualClock(start)` does.
            let until = until.filter(|t| t.is_on_wire()).ok_or_else(|| {
                Error::invalid("advance(seconds) would move the clock past the year 9999, the last a lease can record")
            })?;
            return ready(Value::from(stores::manual_clock(target)?.step_until(until)));
        }
        "clock.ioInFlight" => return ready(Value::from(stores::io_in_flight(target)? as u32)),
        "drop" => {
            let id = a.number("id").unwrap_or(0.0) as u32;
            stores::forget(id);
            tables::forget(id);
            return ready(Value::Null);
        }
        _ => {}
    }
    let db = fencepost(id, target, &cancel)?;
    if let Some(lease_op) = op.strip_prefix("lease.") {
        return lease_call(lease_op, &db, a, cb, cancel);
    }
    match op {
        "open" => ready(Value::Null),
        "claim" => {
            let (key, value) = (a.string("key")?, a.value("value").unwrap_or(Value::Null));
            work(async move {
                let c = db.claim_value(&key, value).await?;
                let fields =
                    [("won", c.won.into()), ("key", c.key.into()), ("value", c.value), ("etag", c.etag.into())];
                Ok(Reply::object(Vec::from(fields)))
            })
        }
        "lease" => {
            let (key, options) = (a.string("key")?, lease_options(&a)?);
            let state_fn = cb.function("stateFn");
            work(async move {
                let mut state_fn = state_fn.map(|f| js_transition(f, "stateFn's result"));
                let lease = db.lease_value(&key, options, state_fn.as_deref_mut()).await?;
                Ok(handle(lease))
            })
        }
        "withLease" => {
            let (key, options) = (a.string("key")?, lease_options(&a)?);
            let (state_fn, body) = (cb.function("stateFn"), cb.required("fn")?);
            work(async move {
                let mut state_fn = state_fn.map(|f| js_transition(f, "stateFn's result"));
                let ran = db.with_lease_value(&key, options, state_fn.as_deref_mut(), live_work(body, None)).await?;
                Ok(Value::Bool(ran.is_some()).into())
            })
        }
        "once" => {
            let key = a.string("key")?;
            let mut options = OnceOptions::new(a.number("ttl").unwrap_or(60.0)).wait(a.number("wait").unwrap_or(0.0));
            if let Some(holder) = a.text("holder") {
                options = options.holder(holder);
            }
            if let Some(every) = a.number("every") {
                options = options.keep_alive_every(every);
            }
            let body = cb.required("fn")?;
            work(async move {
                // `fn` answers its result as JSON text (the JS layer checks it is JSON).
                let run = live_work(body, Some("once's result"));
                Ok(match db.once_value(&key, &options, run, describe_failure).await? {
                    Once::Done { value, ran } => {
                        Reply::object(vec![("status", "done".into()), ("value", value), ("ran", ran.into())])
                    }
                    Once::Running { deadline_at } => Reply::object(vec![
                        ("status", "running".into()),
                        ("deadlineMs", deadline_at.as_millis_f64().into()),
                    ]),
                })
            })
        }
        // A handle's settings judged when it is made (no request).
        "semaphore.open" => semaphore(&db, &a).and_then(|_| ready(Value::Null)),
        "semaphore.acquire" => {
            let (semaphore, options) = (semaphore(&db, &a)?, permit_options(&a));
            work(async move {
                let permit = semaphore.acquire(options).await?;
                Ok(handle(permit))
            })
        }
        "semaphore.withPermit" => {
            let (semaphore, options, body) = (semaphore(&db, &a)?, permit_options(&a), cb.required("fn")?);
            work(async move {
                let ran = semaphore.with_permit(options, live_work(body, None)).await?;
                Ok(Value::Bool(ran.is_some()).into())
            })
        }
        "semaphore.holders" => {
            let semaphore = semaphore(&db, &a)?;
            work(async move {
                let permits = semaphore.holders().await?.into_iter().map(|p| {
                    object(vec![
                        ("slot", p.slot.into()),
                        ("epoch", p.epoch.into()),
                        ("holder", p.holder.into()),
                        ("deadlineMs", p.deadline_at.as_millis_f64().into()),
                    ])
                });
                Ok(Value::Array(permits.collect()).into())
            })
        }
        "watch.next" => {
            // What the watch last reported travels with each call: its etag, or that it saw nothing.
            let seen = match (a.text("etag"), a.flag("absent") == Some(true)) {
                (Some(etag), _) => Seen::Version(etag),
                (None, true) => Seen::Absent,
                (None, false) => Seen::Nothing,
            };
            let interval = a.number("interval").unwrap_or(1.0);
            let mut watcher = Watcher::resume(db.objects(), &a.string("key")?, interval, seen)?;
            // The loop left (`callbacks.stop`, an AbortSignal): `{stopped: true}`, not an abort.
            let stop = cb.signal("stop").map(Linked::follow);
            work(async move {
                let left = stop.as_ref().map_or_else(Cancel::new, |s| s.cancel.clone());
                Ok(match watcher.changed_until(&left).await? {
                    Some(change) => inspection_reply(change),
                    None => Reply::object(vec![("stopped", true.into())]),
                })
            })
        }
        "cooperativeWrite" => {
            let (key, f) = (a.string("key")?, cb.required("fn")?);
            work(async move {
                let mut f = js_transition(f, "the callback's result");
                Ok(db.cooperative_write_value(&key, &mut *f).await?.unwrap_or(Value::Null).into())
            })
        }
        "attachLease" => {
            let (key, holder) = (a.string("key")?, a.string("holder")?);
            let ttl = a.number("ttl").ok_or_else(|| Error::invalid("ttl is required"))?;
            work(async move {
                let lease = db.attach_lease(&key, &holder, ttl).await?;
                Ok(handle(lease))
            })
        }
        "inspect" => {
            let key = a.string("key")?;
            work(async move { Ok(inspection_reply(db.inspect(&key).await?)) })
        }
        "prune" => {
            let prefix = a.string("prefix")?;
            let older_than = a.number("olderThan").ok_or_else(|| Error::invalid("olderThan is required"))?;
            let dry_run = a.flag("dryRun") == Some(true);
            work(async move {
                let pruned = db.prune(&prefix, fencepost::PruneOptions { older_than, dry_run }).await?;
                let keys = pruned.keys.into_iter().map(Value::from).collect();
                Ok(Reply::object(vec![
                    ("deleted", pruned.deleted.into()),
                    ("kept", pruned.kept.into()),
                    ("keys", keys),
                ]))
            })
        }
        "breakLease" => {
            let (key, state) = (a.string("key")?, a.value("state"));
            work(async move {
                let Some(broken) = db.break_lease_value(&key, state).await? else { return Ok(Value::Null.into()) };
                let fields =
                    [("key", key.into()), ("epoch", broken.epoch.into()), ("previous", lease_view(broken.previous))];
                Ok(Reply::object(Vec::from(fields)))
            })
        }
        "doc.get" => {
            let doc: fencepost::Doc = db.doc(&a.string("key")?)?;
            work(async move {
                let Some(got) = doc.get_value().await? else { return Ok(Value::Null.into()) };
                Ok(Reply::object(vec![("value", got.value), ("etag", got.etag.into())]))
            })
        }
        "doc.update" => {
            let doc: fencepost::Doc = db.doc(&a.string("key")?)?;
            let max_attempts = a
                .count("maxAttempts", "update options.maxAttempts", fencepost::__private::MAX_UPDATE_ATTEMPTS)?
                .unwrap_or(fencepost::Doc::<Value>::DEFAULT_MAX_ATTEMPTS);
            let create = a.value("create");
            if a.flag("fresh") == Some(true) {
                doc.forget();
            }
            let f = cb.required("fn")?;
            work(async move {
                let mut f = js_transition(f, "update's result");
                Ok(doc.update_value(&mut *f, create, max_attempts).await?.into())
            })
        }
        "doc.forget" => {
            db.doc::<Value>(&a.string("key")?)?.forget();
            ready(Value::Null)
        }
        "doc.delete" => {
            let doc: fencepost::Doc = db.doc(&a.string("key")?)?;
            work(async move { doc.delete().await.map(|()| Value::Null.into()) })
        }
        "counter.open" | "counter.add" | "counter.value" => {
            let shards = a
                .count("shards", "counter options.shards", fencepost::__private::MAX_SHARDS)?
                .unwrap_or(fencepost::__private::DEFAULT_SHARDS);
            let counter = db.counter_with_shards(&a.string("key")?, shards)?;
            if op == "counter.open" {
                return ready(Value::Null);
            }
            if op == "counter.value" {
                return work(async move { Ok(Value::from(counter.value().await? as f64).into()) });
            }
            let n = a.number("n").unwrap_or(1.0);
            if n.fract() != 0.0 || !n.is_finite() {
                return Err(Error::invalid("a counter adds whole numbers"));
            }
            work(async move { counter.add(n.clamp(-9.2e18, 9.2e18) as i64).await.map(|()| Value::Null.into()) })
        }
        "objects.get" => {
            let key = a.string("key")?;
            let Some(etag) = a.text("ifNoneMatch") else {
                return work(async move { Ok(stored(db.objects().get(&key).await?)) });
            };
            work(async move {
                Ok(match db.objects().get_if_changed(&key, &etag).await? {
                    IfChanged::NotModified => Reply::object(vec![("notModified", true.into())]),
                    IfChanged::Current(now) => stored(now),
                })
            })
        }
        "objects.put" => {
            let key = a.string("key")?;
            let precondition = match (a.flag("ifAbsent") == Some(true), a.text("ifMatch")) {
                (true, Some(_)) => return Err(Error::invalid("ifAbsent and ifMatch cannot be combined")),
                (true, None) => Precondition::IfAbsent,
                (false, Some(etag)) => Precondition::IfMatch(etag),
                (false, None) => Precondition::None,
            };
            let data = cb.data();
            work(async move {
                let written = db.objects().put(&key, &data, precondition).await?;
                Ok(written.map_or_else(Reply::default, |w| Reply::object(vec![("etag", w.etag.into())])))
            })
        }
        "objects.delete" => {
            let key = a.string("key")?;
            work(async move { db.objects().delete(&key).await.map(|()| Value::Null.into()) })
        }
        "objects.list" => {
            let prefix = a.text("prefix").unwrap_or_default();
            work(async move { Ok(Value::from(db.objects().list(&prefix).await?).into()) })
        }
        "objects.entriesPage" => {
            let (prefix, start_after, cursor) =
                (a.text("prefix").unwrap_or_default(), a.text("startAfter"), a.text("cursor"));
            // The last key the iteration handed out: a page never goes back before it.
            let after = a.text("after");
            work(async move {
                let mut page = db.objects().entries_page(&prefix, start_after.as_deref(), cursor.as_deref()).await?;
                page.entries.retain(|e| after.as_deref().is_none_or(|after| e.key.as_str() > after));
                let entries = page.entries.into_iter().map(|e| {
                    object(vec![
                        ("key", e.key.into()),
                        ("etag", e.etag.into()),
                        ("size", e.size.into()),
                        ("lastModified", millis(e.last_modified)),
                    ])
                });
                Ok(Reply::object(vec![("entries", entries.collect()), ("next", page.next.into())]))
            })
        }
        "objects.waitFor" => {
            let key = a.string("key")?;
            let defaults = WaitOptions::default();
            let opts = WaitOptions {
                timeout: a.number("timeout").unwrap_or(defaults.timeout),
                poll_interval: a.number("pollInterval").unwrap_or(defaults.poll_interval),
                changed_from: a.text("changedFrom"),
            };
            work(async move { Ok(stored(Some(db.objects().wait_for(&key, &opts).await?))) })
        }
        other => Err(Error::invalid(format!("unknown call {}", fencepost::__private::quoted(other)))),
    }
}

fn ready(reply: impl Into<Reply>) -> Result<Work> {
    work(std::future::ready(Ok(reply.into())))
}

/// What a key holds, as `inspect` and `watch` answer it (null while absent; bytes beside).
fn inspection_reply(seen: Option<Inspection>) -> Reply {
    let Some(seen) = seen else { return Value::Null.into() };
    let mut bytes = None;
    let (kind, value, lease) = match seen.kind {
        Held::Lease(l) => ("lease", l.document.clone(), lease_view(l)),
        Held::Json(v) => ("json", v, Value::Null),
        Held::Bytes(b) => {
            bytes = Some(b);
            ("bytes", Value::Null, Value::Null)
        }
    };
    let json = object_text(vec![
        ("key", seen.key.into()),
        ("kind", kind.into()),
        ("etag", seen.etag.into()),
        ("size", seen.size.into()),
        ("lastModified", millis(seen.last_modified)),
        ("value", value),
        ("lease", lease),
    ]);
    Reply::with(json, Beside { bytes, ..Beside::default() })
}

/// A new lease handle's reply: its snapshot, and the id its lease is kept under for the handle's
/// first call; none when there is no lease.
fn handle(lease: Option<Lease>) -> Reply {
    let Some(lease) = lease else { return Reply::with("null".into(), Beside::default()) };
    let snapshot = lease.snapshot_text();
    Reply::with("null".into(), Beside { lease: Some(snapshot), kept: Some(tables::keep(lease)), ..Beside::default() })
}

/// The JS function `body` as the work of a call that holds a lease meanwhile (`withLease`,
/// `once`, `withPermit`): it hears the live entry's id and the lease's snapshot (its handle calls
/// through the lease kept alive here; the JS layer detaches the entry when the call has settled).
/// Its Promise's value is JSON text read as the result when `result` names it (for messages), else
/// ignored. One closure type for the three calls, so the core's lease machinery is compiled once.
fn live_work(body: Function, result: Option<&'static str>) -> impl AsyncFnOnce(&Lease) -> Result<Value> {
    async move |lease: &Lease| {
        let (id, _) = tables::start_live(lease.clone());
        let live = texts_object(&[("lease", &lease.snapshot_text()), ("live", &text(&id.into()))]);
        let settled = match body.call1(&JsValue::UNDEFINED, &live.into()) {
            Ok(returned) => fencepost::__private::settled(&returned).await,
            Err(e) => Err(e),
        };
        let value = settled.map_err(callback_error)?;
        match result {
            Some(what) => js_json(&value.as_string().unwrap_or_default(), what),
            None => Ok(Value::Null),
        }
    }
}

/// How `once` records a failure of its function: a JS error's `name` and `message`; a result the
/// JS layer refused as JSON is recorded as the `InvalidArgument` the caller gets. The third field
/// is the call's outcome: the error's code.
fn describe_failure(e: &Error) -> (String, String, &'static str) {
    let read = |value: &JsValue, field: &str| Settings { object: value, store: "" }.text(field);
    let (name, message) = match e {
        Error::Callback(payload) => match Error::callback_value(payload).downcast_ref::<JsValue>() {
            Some(js) if js.is_object() => {
                (read(js, "name").unwrap_or_else(|| "Error".into()), read(js, "message").unwrap_or_default())
            }
            Some(js) => ("Error".into(), js.as_string().unwrap_or_else(|| "a non-Error value was thrown".into())),
            None => ("Error".into(), e.to_string()),
        },
        Error::InvalidArgument(message) => ("InvalidArgument".into(), message.clone()),
        other => (other.code().into(), other.to_string()),
    };
    (name, message, e.code())
}

/// The semaphore a call names (`{key, limit, ttl}`).
fn semaphore(db: &Fencepost, a: &Args) -> Result<Semaphore> {
    let limit = a
        .count("limit", "semaphore options.limit", fencepost::MAX_SEMAPHORE_LIMIT)?
        .ok_or_else(|| Error::invalid("semaphore options.limit is required"))?;
    let ttl = a.number("ttl").ok_or_else(|| Error::invalid("semaphore options.ttl (seconds) is required"))?;
    db.semaphore(&a.string("key")?, limit, ttl)
}

/// A permit's options from the call's arguments.
fn permit_options(a: &Args) -> PermitOptions {
    let mut options = PermitOptions::default();
    if let Some(holder) = a.text("holder") {
        options = options.holder(holder);
    }
    if let Some(wait) = a.number("wait") {
        options = options.wait(wait);
    }
    if let Some(every) = a.number("every") {
        options = options.keep_alive_every(every);
    }
    options
}

/// A lease's options from the call's arguments (absent ones take the core's defaults).
#[inline(never)]
fn lease_options(a: &Args) -> Result<LeaseOptions> {
    let ttl = a.number("ttl").ok_or_else(|| Error::invalid("lease options.ttl (seconds) is required"))?;
    let mut options = LeaseOptions::new(ttl);
    if let Some(holder) = a.text("holder") {
        options = options.holder(holder);
    }
    if let Some(steal) = a.flag("stealIfExpired") {
        options = options.steal_if_expired(steal);
    }
    if let Some(wait) = a.number("wait") {
        options = options.wait(wait);
    }
    if let Some(every) = a.number("every") {
        options = options.keep_alive_every(every);
    }
    Ok(options)
}

/// A call through a lease handle: on the lease kept alive under `live`, the one kept since its
/// last call under `kept`, or its snapshot (`callbacks.lease`). The reply carries the snapshot
/// after the call (a failure too, then: what the handle learnt stays learnt), the id it is kept
/// under for the next call, and why the period ended, when it did.
fn lease_call(op: &str, db: &Fencepost, mut a: Args, cb: Callbacks, cancel: Option<Cancel>) -> Result<Work> {
    let live = a.number("live").map(|id| id as u32);
    // The handle's period: its live entry under keep-alive, else the lease kept built since its
    // last call, else rebuilt from the snapshot it sends beside (read only then).
    let lease = match (live, a.number("kept").and_then(|id| tables::take_kept(id as u32))) {
        (Some(id), _) => tables::live(id)?,
        (None, Some(kept)) => kept,
        (None, None) => match cb.text("lease") {
            Some(snapshot) => Lease::restore(db.objects(), &js_json(&snapshot, "a lease handle's snapshot")?)?,
            None => return Err(Error::invalid("a lease call needs its handle")),
        },
    };
    let under = cancel.as_ref().map_or_else(|| lease.clone(), |c| lease.with_cancel(c));
    let state = a.value("state");
    let detached = op == "detach";
    let call: BoxFuture<'static, Result<Value>> = match op {
        "renew" => Box::pin(async move { under.renew().await.map(|()| Value::Null) }),
        "write" => Box::pin(async move { under.write_value(state.unwrap_or(Value::Null)).await }),
        "release" => Box::pin(async move { under.release_value(state).await.map(|()| Value::Null) }),
        "updateState" => {
            let f = cb.required("fn")?;
            Box::pin(async move {
                let mut f = js_transition(f, "updateState's result");
                under.update_state_value(&mut *f).await
            })
        }
        // Where the handle stands now: a handle under keep-alive reads its fields through this.
        "view" => Box::pin(std::future::ready(Ok(Value::Null))),
        "keepAlive" => return keep_alive(lease, a.number("every"), cancel, cb.required("fn")?),
        "detach" => {
            let id = live.ok_or_else(|| Error::invalid("detach needs a live lease"))?;
            tables::end_live(id);
            Box::pin(std::future::ready(Ok(Value::Null)))
        }
        "whenEnded" => {
            let closed = live.and_then(tables::closed);
            return work(async move {
                let ended = lease.ended().clone();
                match closed {
                    Some(closed) => drop(closed.run(ended.cancelled()).await),
                    None => drop(ended.cancelled().await),
                }
                Ok(Reply::with("null".into(), Beside { ended: lease.ended().reason(), ..Beside::default() }))
            });
        }
        other => return Err(Error::invalid(format!("unknown lease call {}", fencepost::__private::quoted(other)))),
    };
    work(async move {
        let out = call.await;
        let (value, failure) = match out {
            Ok(v) => (v, None),
            Err(e) => (Value::Null, Some(e)),
        };
        let ended = lease.ended().reason();
        let snapshot = lease.snapshot_text();
        // Kept for the handle's next call, unless the period is over or the live entry still holds
        // it (a handle under keep-alive calls through that).
        let kept = (ended.is_none() && (live.is_none() || detached)).then(|| tables::keep(lease));
        Ok(Reply::with(text(&value), Beside { ended, failure, lease: Some(snapshot), kept, bytes: None }))
    })
}

/// Renew `lease` in the background until `stop` (the call's signal) aborts (→ resolves), the lease
/// is released (→ resolves) or lost (→ rejects with `LeaseLost`). Meanwhile the lease is kept in
/// the live table, and `started` hears its entry's id at once: the JS handle calls through it, and
/// detaches it (taking its snapshot back) when this settles.
fn keep_alive(lease: Lease, every: Option<f64>, stop: Option<Cancel>, started: Function) -> Result<Work> {
    let stop = stop.ok_or_else(|| Error::invalid("keepAlive needs a stop signal"))?;
    // A bad interval is reported at once: the keep-alive future checks it when first polled,
    // which `settle` does before this call returns.
    let renewing = lease.keep_alive_every(every.unwrap_or(lease.ttl() / 3.0), &stop);
    let (id, _) = tables::start_live(lease);
    started.call1(&JsValue::UNDEFINED, &id.into()).map_err(Error::callback)?;
    work(async move { renewing.await.map(|()| Value::Null.into()) })
}

/// `[Uint8Array, etag]` of an object as `{etag}` with its bytes beside (null stays null).
fn stored(o: Option<StoredObject>) -> Reply {
    match o {
        None => Value::Null.into(),
        Some(o) => {
            Reply::with(object_text(vec![("etag", o.etag.into())]), Beside { bytes: Some(o.body), ..Beside::default() })
        }
    }
}

/// A judged lease period (`inspect`'s lease, `breakLease`'s previous one).
fn lease_view(l: LeaseView) -> Value {
    object(vec![
        ("epoch", l.epoch.into()),
        ("holder", l.holder.into()),
        ("deadlineAt", millis(l.deadline_at)),
        ("expired", l.expired.into()),
        ("released", l.released.into()),
        ("expiresIn", l.expires_in.into()),
        ("state", l.state),
    ])
}

/// What a callback threw, as the core's error: the JS layer's refusal of its result (a failure
/// record, `invalidRecord` in `pkg/errors.js`) as an `InvalidArgument`, anything else as the
/// callback's own error, handed back unchanged.
fn callback_error(thrown: JsValue) -> Error {
    if !thrown.is_object() {
        return Error::callback(thrown);
    }
    let field = |name: &str| Settings { object: &thrown, store: "" }.text(name);
    if field(crate::errors::MARK).as_deref() == Some("INVALID_ARGUMENT") {
        return Error::invalid(field("message").unwrap_or_default());
    }
    // A fencepost error thrown through the callback (a schema's `InvalidArgument`, a guarded
    // write's `LeaseLost`) reaches the caller as it is, and the call's outcome is its code: its
    // class's (`LeaseLost.code`), so a user's error with a `code` of its own stays `CALLBACK`.
    let class = Settings { object: &thrown, store: "" }.field("constructor");
    let code = Settings { object: &class, store: "" }.text("code");
    match code {
        Some(code) => Error::callback_coded(thrown, &code),
        None => Error::callback(thrown),
    }
}

/// A JS callback as a core transition. The JS layer wraps the caller's function so that it takes
/// and returns JSON text (`jsonCallback` in `pkg/json.js`): the text itself for a sync callback,
/// a Promise of it for an async one (only that is awaited). Whatever the callback throws reaches
/// the caller unchanged.
fn js_transition(f: Function, what: &'static str) -> Box<Transition<'static>> {
    Box::new(move |value: Value| {
        let returned = f.call1(&JsValue::UNDEFINED, &text(&value).into());
        Box::pin(async move {
            let returned = returned.map_err(callback_error)?;
            let out = match returned.as_string() {
                Some(json) => json,
                None => fencepost::__private::settled(&returned)
                    .await
                    .map_err(callback_error)?
                    .as_string()
                    .unwrap_or_default(),
            };
            js_json(&out, what)
        })
    })
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

    fn sleep(&self, secs: f64) -> BoxFuture<'static, ()> {
        SystemClock.sleep(secs)
    }
}

/// A JS function hearing each event as JSON text with the JS event's field names (the JS layer's
/// listener parses it and catches what the user's handler throws; whatever still escapes is
/// dropped here, never a call's outcome).
fn js_listener(f: Function) -> OnEvent {
    Shared::new(move |event: &Event<'_>| {
        let fields = match *event {
            Event::Request { op, key, status, attempt, ms, outcome } => object(vec![
                ("type", "request".into()),
                ("op", op.as_str().into()),
                ("key", key.into()),
                ("status", status.into()),
                ("attempt", attempt.into()),
                ("ms", ms.into()),
                ("outcome", outcome.into()),
            ]),
            Event::Call { method, key, requests, ms, outcome } => object(vec![
                ("type", "call".into()),
                ("method", method.into()),
                ("key", key.into()),
                ("requests", requests.into()),
                ("ms", ms.into()),
                ("outcome", outcome.into()),
            ]),
            Event::Lease { key, epoch, action, reason } => {
                let mut e = object(vec![
                    ("type", "lease".into()),
                    ("key", key.into()),
                    ("epoch", epoch.into()),
                    ("action", action.as_str().into()),
                ]);
                if let (Some(reason), Value::Object(map)) = (reason, &mut e) {
                    map.insert("reason".into(), reason.as_str().into());
                }
                e
            }
        };
        let _ = f.call1(&JsValue::UNDEFINED, &text(&fields).into());
    })
}
