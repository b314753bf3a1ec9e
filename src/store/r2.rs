//! The Workers R2 binding as a store (`env.BUCKET`): `onlyIf` for create-only and etag match,
//! `customMetadata` for the write token (same names as the S3 store's `x-amz-meta-*` headers, so the
//! binding and the S3 endpoint see the same provenance), cursor-based list.

use async_trait::async_trait;
use js_sys::{Array, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::{
    FailureKind, ObjectStore, Precondition, PutOutcome, StoreError, StoreResult, StoredObject, WriteMeta,
    normalize_etag,
};

/// Pages a list may take before the binding is judged broken (100 million keys).
const MAX_LIST_PAGES: usize = 100_000;

pub struct R2Store {
    bucket: JsValue,
    /// Normalised store prefix ("" or "dir/").
    prefix: String,
}

impl R2Store {
    /// `bucket` must look like an R2 binding (get/put/delete/list methods).
    pub fn new(bucket: JsValue, prefix: String) -> Result<Self, String> {
        if !looks_like_r2_bucket(&bucket) {
            return Err("expected an R2 bucket binding (an object with get, put, delete and list methods)".into());
        }
        Ok(R2Store { bucket, prefix })
    }

    /// The same store for Rust Workers written with workers-rs: the `worker::Bucket` is the very
    /// same JS binding underneath, so the one implementation serves both.
    #[cfg(feature = "worker")]
    pub fn from_bucket(bucket: &worker::Bucket, prefix: &str) -> crate::Result<Self> {
        let prefix = crate::keys::normalize_store_prefix(prefix)?;
        let js: &JsValue = bucket.as_ref();
        Self::new(js.clone(), prefix).map_err(crate::Error::invalid)
    }

    async fn call(&self, method: &str, args: &[JsValue]) -> StoreResult<JsValue> {
        let f = Reflect::get(&self.bucket, &method.into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
            .ok_or_else(|| StoreError::transport(format!("R2 binding has no {method}()")))?;
        let result = f.apply(&self.bucket, &args.iter().collect::<Array>()).map_err(|e| r2_error(method, &e))?;
        super::io(JsFuture::from(Promise::resolve(&result))).await.map_err(|e| r2_error(method, &e))
    }

    fn full_key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }
}

pub fn looks_like_r2_bucket(v: &JsValue) -> bool {
    v.is_object()
        && ["get", "put", "delete", "list", "head"]
            .iter()
            .all(|m| Reflect::get(v, &(*m).into()).is_ok_and(|f| f.is_function()))
}

/// The binding throws a `TypeError`/`RangeError` for arguments it refuses (nothing was sent, so
/// nothing landed: fatal, not retried) and other errors for service failures, after which whether
/// a put landed is unknown (indeterminate: the retry layer reads back before retrying a write).
fn r2_error(method: &str, e: &JsValue) -> StoreError {
    let message =
        Reflect::get(e, &"message".into()).ok().and_then(|m| m.as_string()).unwrap_or_else(|| "unknown error".into());
    let refused = e.is_instance_of::<js_sys::TypeError>() || e.is_instance_of::<js_sys::RangeError>();
    if refused {
        StoreError::new(super::FailureKind::Fatal, Some("InvalidArgument"), None, format!("R2 {method}: {message}"))
    } else {
        StoreError::transport(format!("R2 {method}: {message}"))
    }
}

fn malformed(message: &str) -> StoreError {
    StoreError::new(FailureKind::Fatal, Some("MalformedResponse"), None, format!("R2 {message}"))
}

/// The etag of an R2 object (unquoted, as the binding gives it); its absence is a broken binding.
fn etag_of(obj: &JsValue, method: &str) -> StoreResult<String> {
    match prop(obj, "etag").as_string().map(|e| normalize_etag(&e)) {
        Some(e) if !e.is_empty() => Ok(e),
        _ => Err(malformed(&format!("{method}: object without an etag"))),
    }
}

fn prop(v: &JsValue, name: &str) -> JsValue {
    Reflect::get(v, &name.into()).unwrap_or(JsValue::UNDEFINED)
}

#[async_trait(?Send)]
impl ObjectStore for R2Store {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        let obj = self.call("get", &[self.full_key(key).into()]).await?;
        if obj.is_null() || obj.is_undefined() {
            return Ok(None);
        }
        let etag = etag_of(&obj, "get")?;
        let custom = prop(&obj, "customMetadata");
        let meta = WriteMeta::from_entries(|name| prop(&custom, name).as_string());
        let read = prop(&obj, "arrayBuffer")
            .dyn_into::<js_sys::Function>()
            .map_err(|_| StoreError::transport("R2 object has no body"))?;
        let buffer = read.call0(&obj).map_err(|e| r2_error("get", &e))?;
        let buffer = super::io(JsFuture::from(Promise::resolve(&buffer))).await.map_err(|e| r2_error("get", &e))?;
        Ok(Some(StoredObject { body: Uint8Array::new(&buffer).to_vec(), etag, meta }))
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        let options = Object::new();
        let custom = Object::new();
        for (name, value) in meta.entries() {
            let _ = Reflect::set(&custom, &name.into(), &value.into());
        }
        let _ = Reflect::set(&options, &"customMetadata".into(), &custom);
        let http = Object::new();
        let _ = Reflect::set(&http, &"contentType".into(), &"application/json".into());
        let _ = Reflect::set(&options, &"httpMetadata".into(), &http);
        let only_if = Object::new();
        match precondition {
            Precondition::None => {}
            Precondition::IfAbsent => {
                let _ = Reflect::set(&only_if, &"etagDoesNotMatch".into(), &"*".into());
            }
            Precondition::IfMatch(etag) => {
                let _ = Reflect::set(&only_if, &"etagMatches".into(), &etag.into());
            }
        }
        if *precondition != Precondition::None {
            let _ = Reflect::set(&options, &"onlyIf".into(), &only_if);
        }
        let data: JsValue = Uint8Array::from(body).into();
        let result = self.call("put", &[self.full_key(key).into(), data, options.into()]).await?;
        if result.is_null() || result.is_undefined() {
            return Ok(PutOutcome::PreconditionFailed);
        }
        // The write landed; without an etag the retry layer's read-back finds out which version.
        let etag = etag_of(&result, "put").map_err(|e| StoreError { kind: FailureKind::Indeterminate, ..e })?;
        Ok(PutOutcome::Written { etag })
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        self.call("delete", &[self.full_key(key).into()]).await.map(drop)
    }

    async fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let mut keys = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let options = Object::new();
            let _ = Reflect::set(&options, &"prefix".into(), &self.full_key(prefix).into());
            let _ = Reflect::set(&options, &"limit".into(), &1000.into());
            if let Some(c) = &cursor {
                let _ = Reflect::set(&options, &"cursor".into(), &c.into());
            }
            let page = self.call("list", &[options.into()]).await?;
            let objects = prop(&page, "objects");
            if !Array::is_array(&objects) {
                return Err(StoreError::transport("R2 list returned no objects array"));
            }
            for obj in objects.unchecked_ref::<Array>().iter() {
                if let Some(k) = prop(&obj, "key").as_string() {
                    if let Some(rel) = k.strip_prefix(&self.prefix) {
                        keys.push(rel.to_owned());
                    }
                }
            }
            match (prop(&page, "truncated").as_bool(), prop(&page, "cursor").as_string()) {
                (Some(true), Some(c)) if cursor.as_deref() != Some(c.as_str()) => cursor = Some(c),
                (Some(true), _) => return Err(malformed("list: truncated page without a new cursor")),
                _ => {
                    keys.sort_unstable();
                    keys.dedup();
                    return Ok(keys);
                }
            }
        }
        Err(malformed("list: more pages than any bucket has"))
    }

    fn max_key_bytes(&self) -> usize {
        crate::keys::MAX_KEY_BYTES.saturating_sub(self.prefix.len())
    }
}
