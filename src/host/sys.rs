//! The raw bindings to the JS host (wasm32 only), in one place, as in workers-rs's `worker-sys`:
//! typed `extern` declarations of exactly the globals, methods and properties fencepost uses, and
//! no logic. The idiomatic wrappers are elsewhere: timers in `host::clock`, `fetch` in
//! `store::s3::fetch`, the R2 binding in `store::r2`, callers' abort signals in `wasm::signal`.
//!
//! Conventions:
//! - every call that may throw is `catch`, so a throw becomes an `Err`, never a trap;
//! - a method whose result is a Promise by contract is declared to return `JsValue` and wrapped in
//!   `Promise::resolve` by its caller, so a host (or a test double) that returns a plain value
//!   still works;
//! - properties read from objects the host hands back are `JsValue`, checked by the caller: a
//!   binding that breaks its contract is reported as a malformed answer, not trusted; getters
//!   that do not `catch` are only called on values the caller checked are objects (reading a
//!   property of `null` throws);
//! - option dictionaries are plain objects (`dict()`) with typed setters.

use js_sys::{Function, Object, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

/// A fresh `{}` viewed as the option dictionary `T` (which has only setters).
pub(crate) fn dict<T: JsCast>() -> T {
    Object::new().unchecked_into()
}

/// Does `value` have a function under each of `names`? The one duck-typing check: an R2 binding
/// passed from JS is recognised by its methods before any of them is called.
pub(crate) fn has_methods(value: &JsValue, names: &[&str]) -> bool {
    value.is_object()
        && names.iter().all(|n| js_sys::Reflect::get(value, &JsValue::from_str(n)).is_ok_and(|f| f.is_function()))
}

// ------------------------------------------------------------------------------------ timers

#[wasm_bindgen]
extern "C" {
    /// The global `setTimeout` (Workers, Deno, Node and browsers all have it; `window` is not
    /// there in most of them). Returns the host's timer handle, a number or an object.
    #[wasm_bindgen(js_name = setTimeout)]
    pub(crate) fn set_timeout(callback: &Function, millis: f64) -> JsValue;

    /// The global `clearTimeout`.
    #[wasm_bindgen(js_name = clearTimeout)]
    pub(crate) fn clear_timeout(handle: &JsValue);
}

// ------------------------------------------------------------------------------------- fetch

#[wasm_bindgen]
extern "C" {
    /// The global `AbortController`. `catch`: a host without one makes the constructor throw.
    pub(crate) type AbortController;
    #[wasm_bindgen(constructor, catch)]
    pub(crate) fn new() -> Result<AbortController, JsValue>;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn signal(this: &AbortController) -> AbortSignal;
    #[wasm_bindgen(method)]
    pub(crate) fn abort(this: &AbortController);

    /// An `AbortSignal`: handed from a controller to `fetch`, and a caller's, listened to.
    pub type AbortSignal;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn aborted(this: &AbortSignal) -> bool;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn reason(this: &AbortSignal) -> JsValue;
    #[wasm_bindgen(method, js_name = addEventListener)]
    pub(crate) fn add_event_listener(this: &AbortSignal, kind: &str, listener: &js_sys::Function);
    #[wasm_bindgen(method, js_name = removeEventListener)]
    pub(crate) fn remove_event_listener(this: &AbortSignal, kind: &str, listener: &js_sys::Function);

    /// What `fetch` resolves to.
    pub(crate) type Response;
    /// A number by contract; checked by the caller.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn status(this: &Response) -> JsValue;
    /// A Promise of an `ArrayBuffer`.
    #[wasm_bindgen(method, catch, js_name = arrayBuffer)]
    pub(crate) fn array_buffer(this: &Response) -> Result<JsValue, JsValue>;
}

/// Host calls written in JS (`src/host/host.js`): settling a Promise with one callback, the S3
/// transport's headers as one text each way.
#[wasm_bindgen(module = "/src/host/host.js")]
extern "C" {
    /// `callback(true, value)` or `callback(false, reason)` once `value` settles.
    #[wasm_bindgen(catch, js_name = onSettled)]
    pub(crate) fn on_settled(value: &JsValue, callback: &Function) -> Result<(), JsValue>;

    /// `fetch` with headers given as "name:value\n" lines. `catch`: a synchronous throw (a header
    /// value the host refuses…) becomes an `Err`.
    #[wasm_bindgen(js_name = fetchWithHeaderText, catch)]
    pub(crate) fn fetch_with_header_text(
        url: &str,
        method: &str,
        header_text: &str,
        body: Option<Uint8Array>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue>;

    /// A response's headers as "name:value\n" lines.
    #[wasm_bindgen(js_name = responseHeaderText, catch)]
    pub(crate) fn response_header_text(response: &Response) -> Result<String, JsValue>;
}

// ------------------------------------------------------------------- a store written in JS

#[wasm_bindgen]
extern "C" {
    /// A store written in JS as the JS layer hands it over (`pkg/host-stores.js`): four calls that
    /// each return a Promise, with fixed shapes; see `crate::store::js`.
    #[wasm_bindgen(extends = Object)]
    pub(crate) type HostStore;
    /// `null`, `{notModified: true}` (only when `ifNoneMatch` is given) or `{data, etag, meta, modified?}`.
    #[wasm_bindgen(method, catch)]
    pub(crate) fn get(
        this: &HostStore,
        key: &str,
        if_none_match: Option<&str>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue>;
    /// `condition`: absent, `"*"` (create only) or an etag. `null` (refused) or the new etag.
    #[wasm_bindgen(method, catch)]
    pub(crate) fn put(
        this: &HostStore,
        key: &str,
        data: &Uint8Array,
        condition: Option<&str>,
        meta: &Object,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue>;
    /// Whether it deleted (with `if_match`: `false` when the etag is not the stored one).
    #[wasm_bindgen(method, catch)]
    pub(crate) fn delete(
        this: &HostStore,
        key: &str,
        if_match: Option<&str>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue>;
    /// `{entries: [{key, etag, size, modified?}], cursor?}`.
    #[wasm_bindgen(method, catch)]
    pub(crate) fn list(
        this: &HostStore,
        prefix: &str,
        start_after: Option<&str>,
        cursor: Option<&str>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue>;
    /// Whether a read naming the current etag is answered "not modified" by the store itself.
    #[wasm_bindgen(method, getter, js_name = conditionalGet)]
    pub(crate) fn conditional_get(this: &HostStore) -> JsValue;
    /// Whether `delete` honours `if_match`.
    #[wasm_bindgen(method, getter, js_name = conditionalDelete)]
    pub(crate) fn conditional_delete(this: &HostStore) -> JsValue;

    /// What the calls answer: an object, a listed entry or a page (each getter may be undefined).
    pub(crate) type HostAnswer;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn etag(this: &HostAnswer) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn data(this: &HostAnswer) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn meta(this: &HostAnswer) -> JsValue;
    /// Milliseconds since the epoch.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn modified(this: &HostAnswer) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = notModified)]
    pub(crate) fn not_modified(this: &HostAnswer) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn entries(this: &HostAnswer) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn cursor(this: &HostAnswer) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn key(this: &HostAnswer) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn size(this: &HostAnswer) -> JsValue;

    /// What the JS layer throws for a failed call: `{message, retryable, code?, status?}`.
    pub(crate) type HostFailure;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn message(this: &HostFailure) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn retryable(this: &HostFailure) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn code(this: &HostFailure) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn status(this: &HostFailure) -> JsValue;
}

// ----------------------------------------------------------------------------- R2 binding

#[wasm_bindgen]
extern "C" {
    /// A Workers R2 bucket binding (`env.BUCKET`): the members fencepost calls. Each returns a
    /// Promise by contract.
    #[wasm_bindgen(extends = Object)]
    #[derive(Clone)]
    pub(crate) type R2Bucket;
    #[wasm_bindgen(method, catch)]
    pub(crate) fn get(this: &R2Bucket, key: &str) -> Result<JsValue, JsValue>;
    /// `get` with options: `onlyIf` (a conditional read).
    #[wasm_bindgen(method, catch, js_name = get)]
    pub(crate) fn get_with(this: &R2Bucket, key: &str, options: &R2PutOptions) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    pub(crate) fn put(
        this: &R2Bucket,
        key: &str,
        value: &Uint8Array,
        options: &R2PutOptions,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    pub(crate) fn delete(this: &R2Bucket, key: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch)]
    pub(crate) fn list(this: &R2Bucket, options: &R2ListOptions) -> Result<JsValue, JsValue>;

    /// The options of `put`.
    #[wasm_bindgen(extends = Object)]
    pub(crate) type R2PutOptions;
    /// A record of string values (fencepost's provenance).
    #[wasm_bindgen(method, setter = customMetadata)]
    pub(crate) fn set_custom_metadata(this: &R2PutOptions, metadata: &Object);
    #[wasm_bindgen(method, setter = httpMetadata)]
    pub(crate) fn set_http_metadata(this: &R2PutOptions, metadata: &R2HttpMetadata);
    #[wasm_bindgen(method, setter = onlyIf)]
    pub(crate) fn set_only_if(this: &R2PutOptions, condition: &R2Conditional);

    #[wasm_bindgen(extends = Object)]
    pub(crate) type R2HttpMetadata;
    #[wasm_bindgen(method, setter = contentType)]
    pub(crate) fn set_content_type(this: &R2HttpMetadata, content_type: &str);

    /// `onlyIf`: `etagDoesNotMatch: "*"` is create-only, `etagMatches` a compare-and-swap.
    #[wasm_bindgen(extends = Object)]
    pub(crate) type R2Conditional;
    #[wasm_bindgen(method, setter = etagMatches)]
    pub(crate) fn set_etag_matches(this: &R2Conditional, etag: &str);
    #[wasm_bindgen(method, setter = etagDoesNotMatch)]
    pub(crate) fn set_etag_does_not_match(this: &R2Conditional, etag: &str);

    /// The options of `list`.
    #[wasm_bindgen(extends = Object)]
    pub(crate) type R2ListOptions;
    #[wasm_bindgen(method, setter = prefix)]
    pub(crate) fn set_prefix(this: &R2ListOptions, prefix: &str);
    #[wasm_bindgen(method, setter = limit)]
    pub(crate) fn set_limit(this: &R2ListOptions, limit: u32);
    #[wasm_bindgen(method, setter = startAfter)]
    pub(crate) fn set_start_after(this: &R2ListOptions, key: &str);
    #[wasm_bindgen(method, setter = cursor)]
    pub(crate) fn set_cursor(this: &R2ListOptions, cursor: &str);

    /// What `get` (with a body) and `put` resolve to; `list` pages hold them too (without body).
    pub(crate) type R2Object;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn key(this: &R2Object) -> JsValue;
    /// Unquoted (`httpEtag` is the quoted one).
    #[wasm_bindgen(method, getter)]
    pub(crate) fn etag(this: &R2Object) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = customMetadata)]
    pub(crate) fn custom_metadata(this: &R2Object) -> JsValue;
    /// When it was written: a `Date`.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn uploaded(this: &R2Object) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn size(this: &R2Object) -> JsValue;
    /// A Promise of an `ArrayBuffer` (objects from `get` only).
    #[wasm_bindgen(method, catch, js_name = arrayBuffer)]
    pub(crate) fn array_buffer(this: &R2Object) -> Result<JsValue, JsValue>;

    /// A page of `list`.
    pub(crate) type R2Objects;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn objects(this: &R2Objects) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn truncated(this: &R2Objects) -> JsValue;
    #[wasm_bindgen(method, getter)]
    pub(crate) fn cursor(this: &R2Objects) -> JsValue;
}
