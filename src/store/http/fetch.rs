//! The wasm transport: the host's global `fetch`, which Workers, Deno, Node and browsers all have
//! (unlike `window`). The raw bindings it calls are in `crate::host::sys`; this is the idiomatic wrapper.

use crate::base::error::quoted;
use async_trait::async_trait;
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};

use super::{HttpRequest, HttpResponse, HttpTransport, TransportError};
use crate::host::io::AbortOnDrop;
use crate::host::sys::{self, Response};

/// [`HttpTransport`] over the global `fetch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FetchTransport;

impl FetchTransport {
    pub fn new() -> Self {
        FetchTransport
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl HttpTransport for FetchTransport {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let header_text = header_text(&request.headers)?;
        let guard = AbortOnDrop::new();
        // fetch rejects any body on GET/HEAD, even an empty one. `from` copies out of wasm memory,
        // so the bytes stay valid whatever wasm does next.
        let body = (!matches!(request.method, "GET" | "HEAD")).then(|| Uint8Array::from(request.body.as_slice()));
        let signal = guard.signal();
        let promise = sys::fetch_with_header_text(&request.url, request.method, &header_text, body, signal)
            .map_err(|e| describe("fetch threw", &e))?;
        let response = crate::host::promise::settled(&promise).await.map_err(|e| rejected(&e))?;
        if !response.is_object() {
            return Err("fetch resolved to something that is not a response".into());
        }
        let read = read_response(response.unchecked_ref()).await;
        guard.disarm();
        Ok(read?)
    }
}

/// The request's headers as "name:value\n" lines, the one text `src/host/host.js` splits. A name or value
/// with a line break (which no valid header has) would split into other headers: refused, unsent.
fn header_text(headers: &[(String, String)]) -> Result<String, TransportError> {
    let mut text = String::with_capacity(headers.iter().map(|(n, v)| n.len() + v.len() + 2).sum());
    for (name, value) in headers {
        let breaks = |b: u8| b == b'\n' || b == b'\r';
        if name.bytes().any(|b| b == b':' || breaks(b)) || value.bytes().any(breaks) {
            return Err(TransportError::not_sent(format!("header {} is not a valid HTTP header", quoted(name))));
        }
        text.push_str(name);
        text.push(':');
        text.push_str(value);
        text.push('\n');
    }
    Ok(text)
}

async fn read_response(response: &Response) -> Result<HttpResponse, String> {
    let status = response
        .status()
        .as_f64()
        .filter(|s| (0.0..=999.0).contains(s) && s.fract() == 0.0)
        .ok_or_else(|| "fetch returned a response without a valid status".to_owned())? as u16;
    let text = sys::response_header_text(response).map_err(|e| describe("reading the response headers failed", &e))?;
    let body = read_body(response).await.map_err(|e| describe("reading the response body failed", &e))?;
    Ok(HttpResponse { status, headers: parse_header_text(&text), body })
}

/// "name:value\n" lines as pairs, names lowercased (fetch already does; other hosts might not).
/// Split at `'\n'` alone: the host writes no `'\r'`, and `str::lines` was a splitter of its own in
/// the wasm for this one use.
fn parse_header_text(text: &str) -> Vec<(String, String)> {
    text.split('\n')
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.to_owned()))
        .collect()
}

/// `await response.arrayBuffer()`. A connection that dies mid-body fails here, like one that
/// never answered: the transport reports it and the store treats it as indeterminate.
async fn read_body(response: &Response) -> Result<Vec<u8>, JsValue> {
    let buffer = crate::host::promise::settled(&response.array_buffer()?).await?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

/// Why `fetch` rejected. A refused connection or a name that did not resolve means the request
/// never left: JS hosts report that only in their message text (Node: the `cause`'s
/// `ECONNREFUSED`/`ENOTFOUND`, undici's "bad port"; Deno: "tcp connect error", "dns error"), so the text is what is
/// read; anything else — a browser's bare "Failed to fetch" included — may have been sent.
fn rejected(thrown: &JsValue) -> TransportError {
    let text = describe("fetch rejected", thrown);
    const NOT_SENT: [&str; 7] =
        ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "bad port", "Connection refused", "tcp connect error", "dns error"];
    if NOT_SENT.iter().any(|m| crate::base::text::find(&text, m).is_some()) {
        TransportError::not_sent(text)
    } else {
        text.into()
    }
}

/// A thrown value as text: `Name: message`, plus the `cause` Node attaches to "fetch failed".
/// The request URL carries no credentials, and headers never appear in a fetch error.
fn describe(context: &str, thrown: &JsValue) -> String {
    let mut text = format!("{context}: {}", error_text(thrown));
    if let Some(error) = thrown.dyn_ref::<js_sys::Error>() {
        let cause = error.cause();
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
