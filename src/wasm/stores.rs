//! JS store handles: `memoryStore()`, `s3Store({...})`, `r2Store(env.BUCKET)`, `countingStore(s)`.
//! A `Store` is an opaque handle; `Fencepost` looks the Rust store up through a small registry, so
//! it can accept a `Store` — or an R2 binding directly — and reject anything else with a typed error.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

use super::convert::Opts;
use super::errors::to_js;
use crate::error::{Error, Result};
use crate::keys::normalize_store_prefix;
use crate::store::r2::{R2Store, looks_like_r2_bucket};
use crate::store::s3::{Addressing, FetchTransport, S3Config, S3Store};
use crate::store::{FaultStore, MemoryStore, ObjectStore};
use crate::time::SystemClock;

thread_local! {
    static REGISTRY: RefCell<HashMap<u32, Rc<dyn ObjectStore>>> = RefCell::new(HashMap::new());
    static NEXT_ID: Cell<u32> = const { Cell::new(1) };
}

/// A store handle. Pass it to `new Fencepost(store)`.
#[wasm_bindgen]
pub struct Store {
    id: u32,
    kind: &'static str,
    counting: Option<Rc<FaultStore>>,
}

impl Store {
    fn register(store: Rc<dyn ObjectStore>, kind: &'static str, counting: Option<Rc<FaultStore>>) -> Store {
        let id = NEXT_ID.with(|n| {
            let id = n.get();
            n.set(id.wrapping_add(1).max(1));
            id
        });
        REGISTRY.with(|r| r.borrow_mut().insert(id, store));
        Store { id, kind, counting }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // Fencepost instances hold their own reference; this only forgets the handle.
        REGISTRY.with(|r| r.borrow_mut().remove(&self.id));
    }
}

#[wasm_bindgen]
impl Store {
    /// "memory", "s3", "r2" or "counting".
    #[wasm_bindgen(getter)]
    pub fn kind(&self) -> String {
        self.kind.to_owned()
    }

    #[doc(hidden)]
    #[wasm_bindgen(js_name = __fencepostStoreId)]
    pub fn store_id(&self) -> u32 {
        self.id
    }

    /// Requests made so far, per operation (`countingStore` only).
    #[wasm_bindgen(js_name = requestCounts)]
    pub fn request_counts(&self) -> Result<JsValue, JsValue> {
        let c =
            self.counting.as_ref().ok_or_else(|| to_js(Error::invalid("requestCounts() needs a countingStore()")))?;
        let counts = c.counts();
        let obj = Object::new();
        for (k, v) in [
            ("get", counts.get),
            ("put", counts.put),
            ("delete", counts.delete),
            ("list", counts.list),
            ("total", counts.total()),
        ] {
            let _ = Reflect::set(&obj, &k.into(), &v.into());
        }
        Ok(obj.into())
    }

    #[wasm_bindgen(js_name = resetRequestCounts)]
    pub fn reset_request_counts(&self) -> Result<(), JsValue> {
        let c = self
            .counting
            .as_ref()
            .ok_or_else(|| to_js(Error::invalid("resetRequestCounts() needs a countingStore()")))?;
        c.take_counts();
        Ok(())
    }
}

/// The Rust store behind a JS value: a `Store` handle, or an R2 binding used directly.
pub fn resolve_store(v: &JsValue) -> Result<Rc<dyn ObjectStore>> {
    let id_fn = Reflect::get(v, &"__fencepostStoreId".into()).ok().filter(|f| f.is_function());
    if let Some(f) = id_fn.and_then(|f| f.dyn_into::<js_sys::Function>().ok()) {
        let id = f.call0(v).ok().and_then(|x| x.as_f64()).unwrap_or(0.0) as u32;
        return REGISTRY
            .with(|r| r.borrow().get(&id).cloned())
            .ok_or_else(|| Error::invalid("this Store has been freed"));
    }
    if looks_like_r2_bucket(v) {
        return R2Store::new(v.clone(), String::new())
            .map(|s| Rc::new(s) as Rc<dyn ObjectStore>)
            .map_err(Error::invalid);
    }
    Err(Error::invalid(
        "store must be a Store (memoryStore(), s3Store({...}), r2Store(env.BUCKET)) or an R2 bucket binding",
    ))
}

/// A fresh in-memory store: tests, demos, the browser harness.
#[wasm_bindgen(js_name = memoryStore)]
pub fn memory_store() -> Store {
    Store::register(Rc::new(MemoryStore::new()), "memory", None)
}

/// An S3-API store over `fetch`, SigV4-signed: AWS S3, R2's S3 endpoint, SeaweedFS, MinIO…
#[wasm_bindgen(js_name = s3Store)]
pub fn s3_store(options: JsValue) -> Result<Store, JsValue> {
    build_s3(&options).map_err(to_js)
}

fn build_s3(options: &JsValue) -> Result<Store> {
    if !options.is_object() {
        return Err(Error::invalid(
            "s3Store needs an options object {endpoint, bucket, accessKeyId, secretAccessKey, ...}",
        ));
    }
    let o = Opts::new(options, "s3Store options")?;
    let required = |name: &str| -> Result<String> {
        o.string(name)?.ok_or_else(|| Error::invalid(format!("s3Store options.{name} is required")))
    };
    let addressing = match o.boolean("forcePathStyle")? {
        Some(false) => Addressing::VirtualHosted,
        _ => Addressing::Path,
    };
    let config = S3Config::builder(
        &required("endpoint")?,
        &required("bucket")?,
        &o.string("region")?.unwrap_or_else(|| "us-east-1".into()),
        &required("accessKeyId")?,
        &required("secretAccessKey")?,
    )
    .session_token(o.string("sessionToken")?)
    .prefix(&o.string("prefix")?.unwrap_or_default())
    .addressing(addressing)
    .build()?;
    let store = S3Store::new(config, Rc::new(FetchTransport::new()), Rc::new(SystemClock));
    Ok(Store::register(Rc::new(store), "s3", None))
}

/// A store on a Workers R2 binding (`env.BUCKET`), with an optional key prefix.
#[wasm_bindgen(js_name = r2Store)]
pub fn r2_store(bucket: JsValue, options: JsValue) -> Result<Store, JsValue> {
    let build = || -> Result<Store> {
        let o = Opts::new(&options, "r2Store options")?;
        let prefix = normalize_store_prefix(&o.string("prefix")?.unwrap_or_default())?;
        let store = R2Store::new(bucket, prefix).map_err(Error::invalid)?;
        Ok(Store::register(Rc::new(store), "r2", None))
    };
    build().map_err(to_js)
}

/// Wrap a store to count requests per operation (`store.requestCounts()`): every request costs a
/// Workers subrequest, so tests assert them.
#[wasm_bindgen(js_name = countingStore)]
pub fn counting_store(inner: JsValue) -> Result<Store, JsValue> {
    let inner = resolve_store(&inner).map_err(to_js)?;
    let counting = Rc::new(FaultStore::new(inner));
    Ok(Store::register(counting.clone(), "counting", Some(counting)))
}
