//! The JS classes: `Fencepost`, `Lease`, `Doc`, `Objects`. Each method validates its JS arguments,
//! calls the core and converts the result; async methods always return a Promise and report every
//! failure (bad arguments included) as a rejection with a typed error.

use std::future::Future;
use std::rc::Rc;

use js_sys::{Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use super::convert::{Opts, bytes_to_js, js_to_bytes, js_to_value, require_function, require_string, value_to_js};
use super::errors::{callback, schema_error, to_js};
use super::stores::resolve_store;
use crate::doc::DEFAULT_MAX_ATTEMPTS;
use crate::error::{Error, Result};
use crate::fencepost::Transition;
use crate::objects::WaitOptions;
use crate::store::{Precondition, StoredObject};
use crate::time::{Clock, SystemClock, Timestamp};
use crate::{Fencepost, LeaseOptions, Options, RetryPolicy};

fn promise<F: Future<Output = Result<JsValue>> + 'static>(f: F) -> Promise {
    future_to_promise(async move { f.await.map_err(to_js) })
}

fn object(entries: &[(&str, JsValue)]) -> JsValue {
    let obj = Object::new();
    for (k, v) in entries {
        let _ = Reflect::set(&obj, &(*k).into(), v);
    }
    obj.into()
}

/// Await a callback's result if it is a promise (or any thenable).
async fn settle(v: JsValue) -> std::result::Result<JsValue, JsValue> {
    let thenable = v.is_object() && Reflect::get(&v, &"then".into()).is_ok_and(|t| t.is_function());
    if thenable { JsFuture::from(Promise::resolve(&v)).await } else { Ok(v) }
}

/// A JS function as a core transition: JSON in, the callback (sync or async) called, JSON out.
/// Whatever the callback throws reaches the caller unchanged. With a schema, the callback only
/// ever sees a valid value (the schema's output), and its result is validated before the write.
fn js_transition(f: js_sys::Function, what: &'static str, schema: Option<JsValue>) -> Box<Transition<'static>> {
    Box::new(move |value: Value| {
        let f = f.clone();
        let schema = schema.clone();
        Box::pin(async move {
            let mut input = value_to_js(&value);
            if let Some(schema) = &schema {
                input = validate(schema, input).await.map_err(callback)?;
            }
            let out = f.call1(&JsValue::UNDEFINED, &input).map_err(callback)?;
            let mut out = settle(out).await.map_err(callback)?;
            if let Some(schema) = &schema {
                out = validate(schema, out).await.map_err(callback)?;
            }
            js_to_value(&out, what)
        })
    })
}

/// Standard Schema validation (`schema["~standard"].validate`, sync or async). Returns the
/// schema's output value, or rejects with an `InvalidArgument` carrying the issues.
async fn validate(schema: &JsValue, value: JsValue) -> std::result::Result<JsValue, JsValue> {
    let standard = Reflect::get(schema, &"~standard".into()).unwrap_or(JsValue::UNDEFINED);
    let validate = Reflect::get(&standard, &"validate".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| {
            to_js(Error::invalid("schema must implement Standard Schema (a ~standard.validate function)"))
        })?;
    let result = settle(validate.call1(&standard, &value)?).await?;
    let issues = Reflect::get(&result, &"issues".into()).unwrap_or(JsValue::UNDEFINED);
    if issues.is_undefined() || issues.is_null() {
        return Ok(Reflect::get(&result, &"value".into()).unwrap_or(JsValue::UNDEFINED));
    }
    let messages: Vec<String> = js_sys::Array::from(&issues)
        .iter()
        .filter_map(|i| Reflect::get(&i, &"message".into()).ok().and_then(|m| m.as_string()))
        .collect();
    Err(schema_error(format!("value does not match the schema: {}", messages.join("; ")), issues))
}

/// A clock whose "now" comes from a JS function (`options.now`, for tests and simulations); waits
/// are real. A failing or nonsensical clock is an error, never silently replaced by another time.
struct JsClock(js_sys::Function);

impl Clock for JsClock {
    fn now(&self) -> Result<Timestamp> {
        let v = self.0.call0(&JsValue::UNDEFINED).map_err(callback)?;
        let millis = v.as_f64().or_else(|| v.dyn_ref::<js_sys::Date>().map(|d| d.get_time()));
        match millis {
            Some(m) if m.is_finite() => Ok(Timestamp((m * 1000.0).round() as i64)),
            _ => Err(Error::invalid("options.now() must return a finite number of milliseconds or a valid Date")),
        }
    }

    fn sleep(&self, secs: f64) -> crate::LocalBoxFuture<'static, ()> {
        SystemClock.sleep(secs)
    }
}

fn parse_options(options: &JsValue) -> Result<Options> {
    let o = Opts::new(options, "options")?;
    let mut retry = RetryPolicy::default();
    let r = o.raw("retry");
    let ro = Opts::new(&r, "options.retry")?;
    if let Some(n) = ro.number("maxAttempts")? {
        if n.fract() != 0.0 {
            return Err(Error::invalid("options.retry.maxAttempts must be an integer"));
        }
        retry.max_attempts = n.clamp(0.0, 1000.0) as u32;
    }
    retry.base_delay = ro.number("baseDelay")?.unwrap_or(retry.base_delay);
    retry.max_delay = ro.number("maxDelay")?.unwrap_or(retry.max_delay);
    let clock: Option<Rc<dyn Clock>> = o.function("now")?.map(|f| Rc::new(JsClock(f)) as Rc<dyn Clock>);
    Ok(Options { clock, retry, ..Options::default() })
}

// ------------------------------------------------------------------------------------ Fencepost

/// `new Fencepost(store, options?)`: claim, lease, doc and objects on one store.
#[wasm_bindgen(js_name = Fencepost)]
pub struct JsFencepost {
    inner: Rc<Fencepost>,
}

#[wasm_bindgen(js_class = Fencepost)]
impl JsFencepost {
    #[wasm_bindgen(constructor)]
    pub fn new(store: JsValue, options: JsValue) -> std::result::Result<JsFencepost, JsValue> {
        let build = || -> Result<JsFencepost> {
            let store = resolve_store(&store)?;
            let inner = Fencepost::new(store, parse_options(&options)?)?;
            Ok(JsFencepost { inner: Rc::new(inner) })
        };
        build().map_err(to_js)
    }

    /// Put-if-absent; `{won, key, value, etag}`. Losers get the winner's value.
    pub fn claim(&self, key: JsValue, value: JsValue) -> Promise {
        let db = self.inner.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            let value = js_to_value(&value, "value")?;
            let c = db.claim(&key, value).await?;
            Ok(object(&[
                ("won", c.won.into()),
                ("key", c.key.into()),
                ("value", value_to_js(&c.value)),
                ("etag", c.etag.into()),
            ]))
        })
    }

    /// Acquire a lease: a `Lease`, or null when held by someone else.
    pub fn lease(&self, key: JsValue, options: JsValue) -> Promise {
        let db = self.inner.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            if !options.is_object() {
                return Err(Error::invalid("lease options {ttl, holder?, stealIfExpired?, stateFn?} are required"));
            }
            let o = Opts::new(&options, "lease options")?;
            let ttl = o.number("ttl")?.ok_or_else(|| Error::invalid("lease options.ttl (seconds) is required"))?;
            let opts = LeaseOptions {
                ttl,
                holder: o.string("holder")?,
                steal_if_expired: o.boolean("stealIfExpired")?.unwrap_or(true),
                wait: None,
            };
            let mut state_fn = o.function("stateFn")?.map(|f| js_transition(f, "stateFn's result", None));
            let lease = db.lease(&key, opts, state_fn.as_deref_mut()).await?;
            Ok(lease.map_or(JsValue::NULL, |l| JsLease { inner: Rc::new(l) }.into()))
        })
    }

    /// Change a lease's state from outside (not fenced): the new state, or null if no lease.
    #[wasm_bindgen(js_name = cooperativeWrite)]
    pub fn cooperative_write(&self, key: JsValue, f: JsValue) -> Promise {
        let db = self.inner.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            let mut f = js_transition(
                require_function(&f, "cooperativeWrite's second argument")?,
                "the callback's result",
                None,
            );
            Ok(db.cooperative_write(&key, &mut *f).await?.map_or(JsValue::NULL, |s| value_to_js(&s)))
        })
    }

    /// Re-attach to the holder's current period: a `Lease`, or null. One read, no write.
    #[wasm_bindgen(js_name = attachLease)]
    pub fn attach_lease(&self, key: JsValue, options: JsValue) -> Promise {
        let db = self.inner.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            let o = Opts::new(&options, "attachLease options")?;
            let holder = o.string("holder")?.ok_or_else(|| Error::invalid("attachLease options.holder is required"))?;
            let ttl =
                o.number("ttl")?.ok_or_else(|| Error::invalid("attachLease options.ttl (seconds) is required"))?;
            let lease = db.attach_lease(&key, &holder, ttl).await?;
            Ok(lease.map_or(JsValue::NULL, |l| JsLease { inner: Rc::new(l) }.into()))
        })
    }

    /// A handle on a JSON document (`{schema}` optional: any Standard Schema).
    pub fn doc(&self, key: JsValue, options: JsValue) -> std::result::Result<JsDoc, JsValue> {
        let build = || -> Result<JsDoc> {
            let key = require_string(&key, "key")?;
            let o = Opts::new(&options, "doc options")?;
            let schema = o.raw("schema");
            let schema = if schema.is_undefined() || schema.is_null() {
                None
            } else if Reflect::get(&schema, &"~standard".into()).is_ok_and(|s| s.is_object()) {
                Some(schema)
            } else {
                return Err(Error::invalid(
                    "doc options.schema must implement Standard Schema (zod, valibot, arktype…)",
                ));
            };
            Ok(JsDoc { inner: self.inner.doc(&key)?, schema })
        };
        build().map_err(to_js)
    }

    /// The layer-0 API on the same store.
    #[wasm_bindgen(getter)]
    pub fn objects(&self) -> JsObjects {
        JsObjects { db: self.inner.clone() }
    }
}

// ------------------------------------------------------------------------------------ Lease

/// One ownership period `(key, epoch, holder)`. Every write is guarded; `LeaseLost` means stop.
#[wasm_bindgen(js_name = Lease)]
pub struct JsLease {
    inner: Rc<crate::Lease>,
}

#[wasm_bindgen(js_class = Lease)]
impl JsLease {
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> String {
        self.inner.key().to_owned()
    }
    #[wasm_bindgen(getter)]
    pub fn epoch(&self) -> f64 {
        self.inner.epoch() as f64
    }
    #[wasm_bindgen(getter)]
    pub fn holder(&self) -> String {
        self.inner.holder().to_owned()
    }
    #[wasm_bindgen(getter)]
    pub fn ttl(&self) -> f64 {
        self.inner.ttl()
    }
    #[wasm_bindgen(getter)]
    pub fn state(&self) -> JsValue {
        value_to_js(&self.inner.state())
    }
    #[wasm_bindgen(getter, js_name = deadlineAt)]
    pub fn deadline_at(&self) -> js_sys::Date {
        js_sys::Date::new(&JsValue::from_f64(self.inner.deadline_at().as_millis_f64()))
    }
    #[wasm_bindgen(getter)]
    pub fn etag(&self) -> Option<String> {
        self.inner.etag()
    }
    #[wasm_bindgen(getter)]
    pub fn released(&self) -> bool {
        self.inner.is_released()
    }

    /// A plain snapshot for logs (`JSON.stringify(lease)`), without the holder token: it is a
    /// credential (whoever knows it can attach).
    #[wasm_bindgen(js_name = toJSON)]
    pub fn to_json(&self) -> JsValue {
        object(&[
            ("key", self.key().into()),
            ("epoch", self.epoch().into()),
            ("ttl", self.ttl().into()),
            ("state", self.state()),
            ("deadlineAt", self.deadline_at().to_iso_string().into()),
            ("etag", self.etag().map_or(JsValue::NULL, JsValue::from)),
            ("released", self.released().into()),
        ])
    }

    /// deadline = now + ttl; the state is kept (cooperative writes absorbed).
    pub fn renew(&self) -> Promise {
        let l = self.inner.clone();
        promise(async move { l.renew().await.map(|_| JsValue::UNDEFINED) })
    }

    /// Guarded read-modify-write of the state; resolves to the state written.
    #[wasm_bindgen(js_name = updateState)]
    pub fn update_state(&self, f: JsValue) -> Promise {
        let l = self.inner.clone();
        promise(async move {
            let mut f = js_transition(require_function(&f, "updateState's argument")?, "updateState's result", None);
            Ok(value_to_js(&l.update_state(&mut *f).await?))
        })
    }

    /// Guarded replace of the state (unseen cooperative writes are discarded).
    pub fn write(&self, state: JsValue) -> Promise {
        let l = self.inner.clone();
        promise(async move {
            let state = js_to_value(&state, "state")?;
            Ok(value_to_js(&l.write(state).await?))
        })
    }

    /// holder = null, deadline = now; `{state}` optionally sets a final state.
    pub fn release(&self, options: JsValue) -> Promise {
        let l = self.inner.clone();
        promise(async move {
            let o = Opts::new(&options, "release options")?;
            l.release(o.json("state")?).await.map(|_| JsValue::UNDEFINED)
        })
    }
}

// ------------------------------------------------------------------------------------ Doc

/// A JSON document updated by compare-and-swap.
#[wasm_bindgen(js_name = Doc)]
pub struct JsDoc {
    inner: crate::Doc,
    schema: Option<JsValue>,
}

#[wasm_bindgen(js_class = Doc)]
impl JsDoc {
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> String {
        self.inner.key().to_owned()
    }

    /// `{value, etag}` or null.
    pub fn get(&self) -> Promise {
        let (doc, schema) = (self.inner.clone(), self.schema.clone());
        promise(async move {
            let Some(got) = doc.get().await? else { return Ok(JsValue::NULL) };
            let mut value = value_to_js(&got.value);
            if let Some(schema) = &schema {
                value = validate(schema, value).await.map_err(callback)?;
            }
            Ok(object(&[("value", value), ("etag", got.etag.into())]))
        })
    }

    /// Read, apply `fn`, compare-and-swap, retry on conflict; resolves to the value written.
    pub fn update(&self, f: JsValue, options: JsValue) -> Promise {
        let (doc, schema) = (self.inner.clone(), self.schema.clone());
        promise(async move {
            let user = require_function(&f, "update's first argument")?;
            let o = Opts::new(&options, "update options")?;
            let create = o.json("create")?;
            let max_attempts = match o.number("maxAttempts")? {
                None => DEFAULT_MAX_ATTEMPTS,
                Some(n) if n.fract() == 0.0 && (1.0..=1000.0).contains(&n) => n as u32,
                Some(_) => return Err(Error::invalid("update options.maxAttempts must be an integer from 1 to 1000")),
            };
            // With a schema, `fn` sees the validated value (stored or `create`) and its result is
            // validated (and transformed) before it is written.
            let mut f = js_transition(user, "update's result", schema);
            Ok(value_to_js(&doc.update(&mut *f, create, max_attempts).await?))
        })
    }

    /// Delete the document (idempotent).
    pub fn delete(&self) -> Promise {
        let doc = self.inner.clone();
        promise(async move { doc.delete().await.map(|_| JsValue::UNDEFINED) })
    }
}

// ------------------------------------------------------------------------------------ Objects

/// Layer 0: conditional get / put / delete / list / waitFor on raw bytes.
#[wasm_bindgen(js_name = Objects)]
pub struct JsObjects {
    db: Rc<Fencepost>,
}

/// `objects(store, options?)`: layer 0 on its own, without a `Fencepost` (same as `db.objects`).
#[wasm_bindgen(js_name = objects)]
pub fn objects_of(store: JsValue, options: JsValue) -> std::result::Result<JsObjects, JsValue> {
    Ok(JsFencepost::new(store, options)?.objects())
}

fn stored_to_js(o: StoredObject) -> JsValue {
    object(&[("data", bytes_to_js(&o.body)), ("etag", o.etag.into())])
}

#[wasm_bindgen(js_class = Objects)]
impl JsObjects {
    /// `{data: Uint8Array, etag}` or null.
    pub fn get(&self, key: JsValue) -> Promise {
        let db = self.db.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            Ok(db.objects().get(&key).await?.map_or(JsValue::NULL, stored_to_js))
        })
    }

    /// `{etag}`, or null when `{ifAbsent}` / `{ifMatch}` did not hold.
    pub fn put(&self, key: JsValue, data: JsValue, options: JsValue) -> Promise {
        let db = self.db.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            let data = js_to_bytes(&data)?;
            let o = Opts::new(&options, "put options")?;
            let precondition = match (o.boolean("ifAbsent")?.unwrap_or(false), o.string("ifMatch")?) {
                (true, Some(_)) => return Err(Error::invalid("ifAbsent and ifMatch cannot be combined")),
                (true, None) => Precondition::IfAbsent,
                (false, Some(etag)) => Precondition::IfMatch(etag),
                (false, None) => Precondition::None,
            };
            let written = db.objects().put(&key, &data, precondition).await?;
            Ok(written.map_or(JsValue::NULL, |w| object(&[("etag", w.etag.map_or(JsValue::NULL, JsValue::from))])))
        })
    }

    /// Delete; a missing key is a no-op.
    pub fn delete(&self, key: JsValue) -> Promise {
        let db = self.db.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            db.objects().delete(&key).await.map(|_| JsValue::UNDEFINED)
        })
    }

    /// Keys under `prefix` (default ""), ascending, relative to the store prefix.
    pub fn list(&self, prefix: JsValue) -> Promise {
        let db = self.db.clone();
        promise(async move {
            let prefix = if prefix.is_undefined() || prefix.is_null() {
                String::new()
            } else {
                require_string(&prefix, "prefix")?
            };
            let keys = db.objects().list(&prefix).await?;
            Ok(keys.into_iter().map(JsValue::from).collect::<js_sys::Array>().into())
        })
    }

    /// Poll until the key exists (or its etag differs from `changedFrom`); rejects with
    /// `TimeoutError` after `timeout` seconds (default 30; `pollInterval` default 1).
    #[wasm_bindgen(js_name = waitFor)]
    pub fn wait_for(&self, key: JsValue, options: JsValue) -> Promise {
        let db = self.db.clone();
        promise(async move {
            let key = require_string(&key, "key")?;
            let o = Opts::new(&options, "waitFor options")?;
            let defaults = WaitOptions::default();
            let opts = WaitOptions {
                timeout: o.number("timeout")?.unwrap_or(defaults.timeout),
                poll_interval: o.number("pollInterval")?.unwrap_or(defaults.poll_interval),
                changed_from: o.string("changedFrom")?,
            };
            Ok(stored_to_js(db.objects().wait_for(&key, &opts).await?))
        })
    }
}
