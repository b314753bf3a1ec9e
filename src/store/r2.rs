//! The Workers R2 binding as a store (`env.BUCKET`): `onlyIf` for create-only and etag match,
//! `customMetadata` for the write token (same names as the S3 store's `x-amz-meta-*` headers, so the
//! binding and the S3 endpoint see the same provenance), cursor-based list. The raw bindings it
//! calls are in `crate::host::sys`; this is the idiomatic wrapper.

use crate::time::Timestamp;
use async_trait::async_trait;
use js_sys::{Array, Object, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use super::{
    FailureKind, IfChanged, ListPage, Listed, ObjectStore, Precondition, PutOutcome, StoreError, StoreResult,
    StoredObject, WriteMeta, normalize_etag,
};
use crate::host::sys::{
    self, R2Bucket, R2Conditional, R2HttpMetadata, R2ListOptions, R2Object, R2Objects, R2PutOptions,
};

/// An [`ObjectStore`] on a Workers R2 binding (wasm32 only). Build it with
/// [`R2Store::from_bucket`] in a workers-rs Worker (feature `worker`), or [`R2Store::from_js`]
/// from the binding's `JsValue`.
pub struct R2Store {
    bucket: R2Bucket,
}

impl R2Store {
    /// The store on an R2 binding handed over from JS (`env.BUCKET`), which must look like one
    /// (an object with the methods the store calls). A store prefix is a
    /// [`crate::store::PrefixStore`] around it.
    pub fn from_js(bucket: JsValue) -> crate::base::error::Result<Self> {
        if !sys::has_methods(&bucket, &["get", "put", "delete", "list"]) {
            return Err(crate::base::error::Error::invalid(
                "expected an R2 bucket binding (an object with get, put, delete and list methods)",
            ));
        }
        Ok(R2Store { bucket: bucket.unchecked_into() })
    }

    /// The store for Rust Workers written with workers-rs (`env.bucket("BUCKET")?`): the
    /// `worker::Bucket` is the very same JS binding underneath, so the one implementation serves
    /// both.
    #[cfg(feature = "worker")]
    pub fn from_bucket(bucket: &worker::Bucket) -> crate::base::error::Result<Self> {
        let js: &JsValue = bucket.as_ref();
        Self::from_js(js.clone())
    }
}

/// Await what a binding method returned (a Promise by contract; anything else as is).
async fn answer(method: &str, returned: Result<JsValue, JsValue>) -> StoreResult<JsValue> {
    let returned = returned.map_err(|e| r2_error(method, &e))?;
    // Counted as in flight while it runs, like the S3 store's requests (a manual clock's driver
    // waits for them).
    crate::host::io::in_flight(crate::host::promise::settled(&returned)).await.map_err(|e| r2_error(method, &e))
}

/// The binding throws a `TypeError`/`RangeError` for arguments it refuses (nothing was sent, so
/// nothing landed: fatal, not retried) and other errors for service failures, after which whether
/// a put landed is unknown (indeterminate: the retry layer reads back before retrying a write).
fn r2_error(method: &str, e: &JsValue) -> StoreError {
    let message = match e.dyn_ref::<js_sys::Error>() {
        Some(error) => error.message().as_string().unwrap_or_default(),
        None => e.as_string().unwrap_or_else(|| "unknown error".into()),
    };
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
fn etag_of(obj: &R2Object, method: &str) -> StoreResult<String> {
    match obj.etag().as_string().map(|e| normalize_etag(&e)) {
        Some(e) if !e.is_empty() => Ok(e),
        _ => Err(malformed(&format!("{method}: object without an etag"))),
    }
}

/// An object's `customMetadata` as (name, value) pairs; anything that is not a string record
/// reads as no metadata.
fn custom_metadata(obj: &R2Object) -> Vec<(String, String)> {
    let Some(record) = obj.custom_metadata().dyn_into::<Object>().ok() else { return Vec::new() };
    Object::entries(&record)
        .iter()
        .filter_map(|pair| {
            let pair: Array = pair.dyn_into().ok()?;
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

/// What a `get` answered: `null` (absent) or an object with its body.
async fn read_object(obj: JsValue) -> StoreResult<Option<StoredObject>> {
    if obj.is_null() || obj.is_undefined() {
        return Ok(None);
    }
    let obj: R2Object = obj.unchecked_into();
    let etag = etag_of(&obj, "get")?;
    let custom = custom_metadata(&obj);
    let meta = WriteMeta::from_entries(|name| custom.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone()));
    let buffer = answer("get", obj.array_buffer()).await?;
    let last_modified = obj.uploaded().dyn_ref::<js_sys::Date>().map(|d| Timestamp::from_millis_f64(d.get_time()));
    Ok(Some(StoredObject { body: Uint8Array::new(&buffer).to_vec(), etag, meta, last_modified }))
}

#[async_trait(?Send)]
impl ObjectStore for R2Store {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        let obj = answer("get", self.bucket.get(key)).await?;
        read_object(obj).await
    }

    async fn get_if_changed(&self, key: &str, etag: &str) -> StoreResult<IfChanged> {
        // `onlyIf` on a get: when the condition fails, the binding answers the object's metadata
        // without a body (no `arrayBuffer`), the binding's 304.
        let (options, only_if): (R2PutOptions, R2Conditional) = (sys::dict(), sys::dict());
        only_if.set_etag_does_not_match(etag);
        options.set_only_if(&only_if);
        let obj = answer("get", self.bucket.get_with(key, &options)).await?;
        if obj.is_object() && !sys::has_methods(&obj, &["arrayBuffer"]) {
            return Ok(IfChanged::NotModified);
        }
        read_object(obj).await.map(IfChanged::Current)
    }

    fn conditional_get(&self) -> bool {
        true
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        let options: R2PutOptions = sys::dict();
        let custom: Array =
            meta.entries().into_iter().map(|(name, value)| Array::of2(&name.into(), &value.into())).collect();
        // Pairs of strings always make a record.
        if let Ok(custom) = Object::from_entries(&custom) {
            options.set_custom_metadata(&custom);
        }
        let http: R2HttpMetadata = sys::dict();
        http.set_content_type("application/json");
        options.set_http_metadata(&http);
        let only_if: R2Conditional = sys::dict();
        match precondition {
            Precondition::None => {}
            Precondition::IfAbsent => only_if.set_etag_does_not_match("*"),
            Precondition::IfMatch(etag) => only_if.set_etag_matches(etag),
        }
        if *precondition != Precondition::None {
            options.set_only_if(&only_if);
        }
        let data = Uint8Array::from(body);
        let result = answer("put", self.bucket.put(key, &data, &options)).await?;
        if result.is_null() || result.is_undefined() {
            return Ok(PutOutcome::PreconditionFailed);
        }
        // The write landed; without an etag the retry layer's read-back finds out which version.
        let etag =
            etag_of(result.unchecked_ref(), "put").map_err(|e| StoreError { kind: FailureKind::Indeterminate, ..e })?;
        Ok(PutOutcome::Written { etag })
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        answer("delete", self.bucket.delete(key)).await.map(drop)
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        let options: R2ListOptions = sys::dict();
        options.set_prefix(prefix);
        options.set_limit(1000);
        match (cursor, start_after) {
            (Some(c), _) => options.set_cursor(c),
            (None, Some(after)) => options.set_start_after(after),
            (None, None) => {}
        }
        let page = answer("list", self.bucket.list(&options)).await?;
        // The typed getters below read properties of objects only (never of null).
        if !page.is_object() {
            return Err(malformed("list: no page"));
        }
        let page: R2Objects = page.unchecked_into();
        let objects = page.objects();
        if !Array::is_array(&objects) {
            return Err(StoreError::transport("R2 list returned no objects array"));
        }
        let entries = objects
            .unchecked_ref::<Array>()
            .iter()
            .filter(JsValue::is_object)
            .filter_map(|obj| {
                let obj = obj.unchecked_ref::<R2Object>();
                Some(Listed {
                    key: obj.key().as_string()?,
                    etag: obj.etag().as_string().map(|e| normalize_etag(&e)),
                    size: obj.size().as_f64().filter(|s| *s >= 0.0).map(|s| s as u64),
                    last_modified: obj
                        .uploaded()
                        .dyn_ref::<js_sys::Date>()
                        .map(|d| Timestamp::from_millis_f64(d.get_time())),
                })
            })
            .collect();
        let next = match (page.truncated().as_bool(), page.cursor().as_string()) {
            (Some(true), Some(c)) => Some(c),
            (Some(true), None) => return Err(malformed("list: truncated page without a cursor")),
            _ => None,
        };
        Ok(ListPage { entries, next })
    }
}
