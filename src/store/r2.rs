//! The Workers R2 binding as a store (`env.BUCKET`): `onlyIf` for create-only and etag match,
//! `customMetadata` for the write token (same names as the S3 store's `x-amz-meta-*` headers, so the
//! binding and the S3 endpoint see the same provenance), cursor-based list.

use async_trait::async_trait;
use js_sys::{Array, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::{ObjectStore, Precondition, PutOutcome, StoreError, StoreResult, StoredObject, WriteMeta, normalize_etag};

const META_TOKEN: &str = "fencepost-token";
const META_HISTORY: &str = "fencepost-history";

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
        JsFuture::from(Promise::resolve(&result)).await.map_err(|e| r2_error(method, &e))
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
        let etag = prop(&obj, "etag").as_string().map(|e| normalize_etag(&e)).unwrap_or_default();
        let custom = prop(&obj, "customMetadata");
        let meta = WriteMeta::from_headers(
            prop(&custom, META_TOKEN).as_string().as_deref(),
            prop(&custom, META_HISTORY).as_string().as_deref(),
        );
        let read = prop(&obj, "arrayBuffer")
            .dyn_into::<js_sys::Function>()
            .map_err(|_| StoreError::transport("R2 object has no body"))?;
        let buffer = read.call0(&obj).map_err(|e| r2_error("get", &e))?;
        let buffer = JsFuture::from(Promise::resolve(&buffer)).await.map_err(|e| r2_error("get", &e))?;
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
        if let Some(token) = &meta.token {
            let _ = Reflect::set(&custom, &META_TOKEN.into(), &token.into());
        }
        if !meta.history.is_empty() {
            let _ = Reflect::set(&custom, &META_HISTORY.into(), &meta.history_header().into());
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
        let etag = prop(&result, "etag").as_string().map(|e| normalize_etag(&e)).unwrap_or_default();
        Ok(PutOutcome::Written { etag })
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        self.call("delete", &[self.full_key(key).into()]).await.map(drop)
    }

    async fn list(&self, prefix: &str) -> StoreResult<Vec<String>> {
        let mut keys = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
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
                _ => break,
            }
        }
        keys.sort();
        Ok(keys)
    }

    fn max_key_bytes(&self) -> usize {
        crate::keys::MAX_KEY_BYTES.saturating_sub(self.prefix.len())
    }
}
