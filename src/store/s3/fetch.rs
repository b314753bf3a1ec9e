//! The wasm transport: the host's global `fetch`, which Workers, Deno, Node and browsers all have
//! (unlike `window`). Only js-sys is used, so no web-sys types are needed; the raw binding is kept
//! apart from the idiomatic wrapper, as in workers-rs.

use async_trait::async_trait;
use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::{HttpRequest, HttpResponse, HttpTransport};

#[wasm_bindgen]
extern "C" {
    /// `fetch(input, init)`. `catch`: a synchronous throw (a header value the host refuses…)
    /// becomes an `Err`, never a trap.
    #[wasm_bindgen(js_name = fetch, catch)]
    fn fetch_with_init(input: &str, init: &JsValue) -> Result<Promise, JsValue>;

    /// The global `AbortController` (Workers, Deno, Node, browsers). `catch`: a host without one
    /// makes the constructor throw, and the request simply goes without a signal.
    type AbortController;
    #[wasm_bindgen(constructor, catch)]
    fn new() -> Result<AbortController, JsValue>;
    #[wasm_bindgen(method, getter)]
    fn signal(this: &AbortController) -> JsValue;
    #[wasm_bindgen(method)]
    fn abort(this: &AbortController);
}

/// Aborts the `fetch` when the send is dropped before it finished: the store's timeout or a
/// cancel abandoned it, and dropping a `JsFuture` alone would leave the connection busy.
struct AbortOnDrop(Option<AbortController>);

impl AbortOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(controller) = &self.0 {
            controller.abort();
        }
    }
}

/// [`HttpTransport`] over the global `fetch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchTransport;

impl FetchTransport {
    pub fn new() -> Self {
        FetchTransport
    }
}

#[async_trait(?Send)]
impl HttpTransport for FetchTransport {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, String> {
        let controller = AbortController::new().ok();
        let init = request_init(&request, controller.as_ref())
            .map_err(|e| describe("building the fetch request failed", &e))?;
        let guard = AbortOnDrop(controller);
        let promise = fetch_with_init(&request.url, &init).map_err(|e| describe("fetch threw", &e))?;
        let response = JsFuture::from(promise).await.map_err(|e| describe("fetch rejected", &e))?;
        let read = read_response(&response).await;
        guard.disarm();
        read
    }
}

/// `{method, headers: [[name, value], …], body?: Uint8Array, signal?}`.
fn request_init(request: &HttpRequest, controller: Option<&AbortController>) -> Result<Object, JsValue> {
    let init = Object::new();
    if let Some(controller) = controller {
        Reflect::set(&init, &"signal".into(), &controller.signal())?;
    }
    Reflect::set(&init, &"method".into(), &request.method.into())?;
    let headers = Array::new();
    for (name, value) in &request.headers {
        headers.push(&Array::of2(&name.into(), &value.into()));
    }
    Reflect::set(&init, &"headers".into(), &headers)?;
    // fetch rejects any body on GET/HEAD, even an empty one.
    if !matches!(request.method, "GET" | "HEAD") {
        // `from` copies out of wasm memory, so the bytes stay valid whatever wasm does next.
        Reflect::set(&init, &"body".into(), &Uint8Array::from(request.body.as_slice()))?;
    }
    Ok(init)
}

async fn read_response(response: &JsValue) -> Result<HttpResponse, String> {
    let status = Reflect::get(response, &"status".into())
        .ok()
        .and_then(|s| s.as_f64())
        .filter(|s| (0.0..=999.0).contains(s) && s.fract() == 0.0)
        .ok_or_else(|| "fetch returned a response without a valid status".to_owned())? as u16;
    let headers = read_headers(response).map_err(|e| describe("reading the response headers failed", &e))?;
    let body = read_body(response).await.map_err(|e| describe("reading the response body failed", &e))?;
    Ok(HttpResponse { status, headers, body })
}

/// `response.headers.entries()`, names lowercased (fetch already does; other hosts might not).
fn read_headers(response: &JsValue) -> Result<Vec<(String, String)>, JsValue> {
    let headers = Reflect::get(response, &"headers".into())?;
    let entries = call_method(&headers, "entries")?;
    let mut out = Vec::new();
    let Some(iter) = js_sys::try_iter(&entries)? else {
        return Err(JsValue::from_str("response.headers.entries() is not iterable"));
    };
    for entry in iter {
        let pair = Array::from(&entry?);
        if let (Some(name), Some(value)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
            out.push((name.to_ascii_lowercase(), value));
        }
    }
    Ok(out)
}

/// `await response.arrayBuffer()`. A connection that dies mid-body fails here, like one that
/// never answered: the transport reports it and the store treats it as indeterminate.
async fn read_body(response: &JsValue) -> Result<Vec<u8>, JsValue> {
    let promise: Promise = call_method(response, "arrayBuffer")?.dyn_into()?;
    let buffer = JsFuture::from(promise).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

fn call_method(target: &JsValue, name: &str) -> Result<JsValue, JsValue> {
    let method: Function = Reflect::get(target, &name.into())?.dyn_into()?;
    method.call0(target)
}

/// A thrown value as text: `Name: message`, plus the `cause` Node attaches to "fetch failed".
/// The request URL carries no credentials, and headers never appear in a fetch error.
fn describe(context: &str, thrown: &JsValue) -> String {
    let mut text = format!("{context}: {}", error_text(thrown));
    if let Ok(cause) = Reflect::get(thrown, &"cause".into()) {
        if !cause.is_undefined() && !cause.is_null() {
            text.push_str(&format!(" (cause: {})", error_text(&cause)));
        }
    }
    text
}

fn error_text(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        let name = error.name().as_string().unwrap_or_default();
        let message = error.message().as_string().unwrap_or_default();
        return if name.is_empty() { message } else { format!("{name}: {message}") };
    }
    value.as_string().unwrap_or_else(|| "a non-Error value was thrown".to_owned())
}
