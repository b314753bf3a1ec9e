//! What the HTTP stores (S3, Azure Blob, GCS) share: the request and response values, the
//! transport seam ([`HttpTransport`]: `FetchTransport` in wasm, `ReqwestTransport` natively with
//! feature `reqwest`, or your own), endpoint parsing, percent-encoding, the XML reader, and
//! `HttpClient`, which sends one request racing its timeout, remembers the server's clock and
//! hands errors up with every secret redacted. Each store builds its requests and reads its
//! responses as pure functions (sans-IO) and calls this for the one exchange.

pub(crate) mod encode;
pub(crate) mod xml;

#[cfg(target_arch = "wasm32")]
mod fetch;

#[cfg(target_arch = "wasm32")]
pub use fetch::FetchTransport;

#[cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]
mod reqwest_transport;

#[cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub use reqwest_transport::ReqwestTransport;

use crate::base::sync::Shared;
use crate::base::sync::SyncCell;
use std::fmt;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use super::{FailureKind, Reply, Request, StoreError, StoreResult, StoredObject, WriteMeta};
use crate::base::error::{Error, Result, quoted};
use crate::base::future::{Either, race};
use crate::time::{Clock, Timestamp};

pub use super::DEFAULT_TIMEOUT;

/// The platform's transport and clock, what `S3Store::new` and its siblings use: the host's
/// `fetch` in wasm, reqwest natively (feature `reqwest`); the system clock.
#[cfg(any(target_arch = "wasm32", feature = "reqwest"))]
pub(crate) fn platform() -> Result<(Shared<dyn HttpTransport>, Shared<dyn Clock>)> {
    #[cfg(target_arch = "wasm32")]
    let transport: Shared<dyn HttpTransport> = Shared::new(FetchTransport::new());
    #[cfg(not(target_arch = "wasm32"))]
    let transport: Shared<dyn HttpTransport> = Shared::new(ReqwestTransport::new()?);
    Ok((transport, Shared::new(crate::host::clock::SystemClock)))
}

/// Sends one request at a time for a store: over the transport, racing the per-attempt timeout,
/// noting the server's `Date`. Clones share the transport, the clock and the latest server time.
#[derive(Clone)]
pub(crate) struct HttpClient {
    transport: Shared<dyn HttpTransport>,
    clock: Shared<dyn Clock>,
    /// Seconds per attempt.
    timeout: f64,
    /// The `Date` of the latest response (see [`crate::store::ObjectStore::server_time`]).
    server_time: Shared<SyncCell<Option<Timestamp>>>,
}

impl HttpClient {
    pub(crate) fn new(transport: Shared<dyn HttpTransport>, clock: Shared<dyn Clock>, timeout: f64) -> Self {
        HttpClient { transport, clock, timeout, server_time: Shared::new(SyncCell::new(None)) }
    }

    /// The time to sign or date a request at (signatures need real time: servers refuse skew).
    pub(crate) fn now(&self) -> StoreResult<Timestamp> {
        self.clock.now().map_err(|e| StoreError::new(FailureKind::Fatal, Some("ClockFailed"), None, e.to_string()))
    }

    pub(crate) fn server_time(&self) -> Option<Timestamp> {
        self.server_time.get()
    }

    /// One store request over HTTP: built and authorized by `protocol`, sent, its answer read by
    /// it. One asynchronous path for every HTTP store (their own parts are plain functions), so
    /// the wasm carries it once. `token` is a bearer token the caller fetched (GCS).
    pub(crate) async fn call(
        &self,
        protocol: &dyn Protocol,
        request: Request<'_>,
        token: Option<String>,
    ) -> StoreResult<Reply> {
        let what = Operation(request.verb(), request.key());
        let (http, mut secrets) = protocol.build(&request, self.now()?, token.as_deref())?;
        secrets.extend(token);
        let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
        self.exchange(http, &what, &secrets, |r| match request {
            // 304 means the same on every HTTP store: the version named is still current.
            Request::GetIfChanged { .. } if r.status == 304 => Ok(Reply::NotModified),
            _ => protocol.read(&request, r, &what),
        })
        .await
    }

    /// Send one request and read its response with `read`; errors come back sanitised (none of
    /// `secrets`, bounded length) whatever the server or the transport put in them.
    pub(crate) async fn exchange<T>(
        &self,
        request: HttpRequest,
        what: &(dyn fmt::Display + Sync),
        secrets: &[&str],
        read: impl FnOnce(HttpResponse) -> StoreResult<T>,
    ) -> StoreResult<T> {
        self.send(request, what).await.and_then(read).map_err(|err| sanitize(err, secrets))
    }

    /// A timer of one attempt's timeout (for what a request waits on besides the transport: a
    /// token function's answer), and that timeout in seconds.
    pub(crate) fn attempt_timer(&self) -> (crate::base::future::BoxFuture<'static, ()>, f64) {
        (self.clock.sleep(self.timeout), self.timeout)
    }

    /// Send one request (the part of [`HttpClient::exchange`] that is the same whatever is read,
    /// so it is compiled once): its response or the failure.
    async fn send(&self, request: HttpRequest, what: &(dyn fmt::Display + Sync)) -> StoreResult<HttpResponse> {
        // The transport races the timeout: when it loses, its future is dropped (in wasm that
        // aborts the `fetch`, freeing the connection).
        let timeout = self.timeout;
        let answer =
            match race(crate::host::io::in_flight(self.transport.send(request)), self.clock.sleep(timeout)).await {
                Either::Left(answer) => answer,
                Either::Right(()) => {
                    Err(format!("no answer within {} s", crate::base::number::number_text(timeout)).into())
                }
            };
        // Always overwritten, so the objects layer, which reads it right after this returns,
        // never takes an older response's date for this one's.
        self.server_time.set(answer.as_ref().ok().and_then(server_time));
        match answer {
            Ok(response) => Ok(response),
            // Provably never sent: nothing to resolve, safe to retry (a refused connection).
            Err(TransportError { message, maybe_sent: false }) => {
                Err(StoreError::new(FailureKind::Transient, None, None, format!("{what}: not sent: {message}")))
            }
            Err(TransportError { message, .. }) => {
                Err(StoreError::transport(format!("{what}: no response: {message}")))
            }
        }
    }
}

/// What an HTTP store is on top of the kit: how a store request becomes an HTTP request, and what
/// the answer means. Both pure (sans-IO); [`HttpClient::call`] does the rest.
pub(crate) trait Protocol: crate::base::sync::MaybeSync {
    /// The HTTP request for `request`, signed or authorized as of `now` (with `token` where the
    /// store takes a bearer token), and the strings no error may show (a signature, a key).
    fn build(
        &self,
        request: &Request<'_>,
        now: Timestamp,
        token: Option<&str>,
    ) -> StoreResult<(HttpRequest, Vec<String>)>;

    /// The answer to `request`.
    fn read(
        &self,
        request: &Request<'_>,
        response: HttpResponse,
        what: &(dyn fmt::Display + Sync),
    ) -> StoreResult<Reply>;
}

/// The [`crate::store::ObjectStore`] of an HTTP store: every operation is the store's own
/// `call(request)` (its token, then [`HttpClient::call`]); `deletes_conditionally()` says whether
/// `delete_if_match` may be used; the server time is its client's. Written once for the three.
macro_rules! http_object_store {
    ($store:ty) => {
        #[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
        #[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
        impl $crate::store::ObjectStore for $store {
            async fn get(&self, key: &str) -> $crate::store::StoreResult<Option<$crate::store::StoredObject>> {
                self.call($crate::store::Request::Get(key)).await.map($crate::store::Reply::into_object)
            }

            async fn get_if_changed(
                &self,
                key: &str,
                etag: &str,
            ) -> $crate::store::StoreResult<$crate::store::IfChanged> {
                let request = $crate::store::Request::GetIfChanged { key, etag };
                self.call(request).await.map($crate::store::Reply::into_if_changed)
            }

            fn conditional_get(&self) -> bool {
                true
            }

            async fn put(
                &self,
                key: &str,
                body: &[u8],
                precondition: &$crate::store::Precondition,
                meta: &$crate::store::WriteMeta,
            ) -> $crate::store::StoreResult<$crate::store::PutOutcome> {
                let request = $crate::store::Request::Put { key, body, precondition, meta };
                self.call(request).await.map($crate::store::Reply::into_put)
            }

            async fn delete(&self, key: &str) -> $crate::store::StoreResult<()> {
                self.call($crate::store::Request::Delete(key)).await.map(|_| ())
            }

            async fn delete_if_match(&self, key: &str, etag: &str) -> $crate::store::StoreResult<bool> {
                let request = $crate::store::Request::DeleteIfMatch { key, etag };
                self.call(request).await.map($crate::store::Reply::into_deleted)
            }

            fn conditional_delete(&self) -> bool {
                self.deletes_conditionally()
            }

            async fn list_page(
                &self,
                prefix: &str,
                start_after: Option<&str>,
                cursor: Option<&str>,
            ) -> $crate::store::StoreResult<$crate::store::ListPage> {
                let request = $crate::store::Request::List { prefix, start_after, cursor };
                self.call(request).await.map($crate::store::Reply::into_page)
            }

            fn server_time(&self) -> Option<$crate::time::Timestamp> {
                self.http.server_time()
            }
        }
    };
}
pub(crate) use http_object_store;

pub(crate) use super::validate_timeout;

/// An operation as its error messages name it (`PUT "key"`): spelled out only when a message is
/// made, not on every request.
pub(crate) struct Operation<'a>(pub(crate) &'static str, pub(crate) &'a str);

impl fmt::Display for Operation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0, quoted(self.1))
    }
}

/// The server's clock from a response's `Date` header: whole seconds, so half a second is added,
/// the middle of the second it names.
pub(crate) fn server_time(response: &HttpResponse) -> Option<Timestamp> {
    response.header("date").and_then(Timestamp::parse_http_date).map(|t| t.plus_secs(0.5))
}

/// The object of a successful GET: its body, `etag` (its version, as the store names it), the
/// write provenance from the `meta_header(name)` headers, `Last-Modified`. No version is a
/// `MalformedResponse`.
pub(crate) fn stored_object(
    response: HttpResponse,
    etag: Option<String>,
    meta_header: impl Fn(&str) -> String,
    what: &(dyn fmt::Display + Sync),
) -> StoreResult<StoredObject> {
    let Some(etag) = etag.filter(|e| !e.is_empty()) else {
        return Err(StoreError { status: Some(response.status), ..malformed(what, "an object without its version") });
    };
    let meta = WriteMeta::from_entries(|name| response.header(&meta_header(name)).map(str::to_owned));
    let last_modified = response.header("last-modified").and_then(Timestamp::parse_http_date);
    Ok(StoredObject { body: response.body, etag, meta, last_modified })
}

/// A write the store acknowledged without naming the version it made: it landed, so the retry
/// layer reads it back rather than retrying blindly.
pub(crate) fn unnamed_write(response: &HttpResponse, what: &(dyn fmt::Display + Sync)) -> StoreError {
    StoreError::new(
        FailureKind::Indeterminate,
        Some("MissingETag"),
        Some(response.status),
        format!("{what}: success without the version written"),
    )
}

/// A store answer fencepost cannot read.
pub(crate) fn malformed(what: &(dyn fmt::Display + Sync), detail: impl AsRef<str>) -> StoreError {
    StoreError::new(FailureKind::Fatal, Some("MalformedResponse"), None, format!("{what}: {}", detail.as_ref()))
}

/// A non-XML, non-JSON error body (a proxy's HTML page, plain text) on one line, up to its first
/// byte that is not UTF-8 (a text page has none; what follows one would not read anyway, and
/// std's lossy decoding would bring its own UTF-8 walker into the wasm); [`sanitize`] shortens it.
pub(crate) fn body_snippet(body: &[u8]) -> String {
    let text = std::str::from_utf8(body)
        .or_else(|e| std::str::from_utf8(body.get(..e.valid_up_to()).unwrap_or_default()))
        .unwrap_or_default();
    crate::base::text::one_line(text)
}

/// A refusal or failure: what the retry layer may do with `status` and the store's error `code`,
/// and a message naming the operation and the server's `detail` (else the code, else the body).
pub(crate) fn failure(
    response: &HttpResponse,
    what: &(dyn fmt::Display + Sync),
    code: Option<String>,
    detail: Option<&str>,
) -> StoreError {
    let kind = FailureKind::of_http(response.status, code.as_deref());
    let detail = match (detail, &code) {
        (Some(message), _) => message.to_owned(),
        (None, Some(code)) => code.clone(),
        (None, None) => body_snippet(&response.body),
    };
    let message =
        if detail.is_empty() { format!("{what}: HTTP {}", response.status) } else { format!("{what}: {detail}") };
    StoreError { kind, code, status: Some(response.status), message }
}

/// HMAC-SHA256 (RFC 2104), written out over `sha2` because it is a few lines and, unlike the
/// `hmac` crate's fallible-in-type constructor, cannot fail: signing stays infallible and
/// panic-free.
pub(crate) fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block_key = [0u8; BLOCK];
    if key.len() > BLOCK {
        block_key[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block_key[..key.len()].copy_from_slice(key);
    }
    let inner_pad: Vec<u8> = block_key.iter().map(|b| b ^ 0x36).collect();
    let outer_pad: Vec<u8> = block_key.iter().map(|b| b ^ 0x5c).collect();
    let inner = Sha256::new().chain_update(&inner_pad).chain_update(message).finalize();
    Sha256::new().chain_update(&outer_pad).chain_update(inner).finalize().into()
}

/// Longest error message handed up (server text can be a whole HTML page).
const MAX_MESSAGE_CHARS: usize = 400;

/// Make an error fit to hand up: every occurrence of each secret (a server or transport may echo
/// the signature or a token) replaced by `[redacted]`, then the message shortened. Redacting
/// first means a cut can never leave part of a secret behind. A short secret is only redacted where
/// it stands as a word of its own, so text that merely contains its letters ("no response" with
/// the secret "s") is left as it is.
pub(crate) fn sanitize(mut err: StoreError, secrets: &[&str]) -> StoreError {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        err.message = redact(&err.message, secret);
        if let Some(code) = err.code.as_mut() {
            *code = redact(code, secret);
        }
    }
    err.message = clip(&err.message, MAX_MESSAGE_CHARS);
    err
}

/// `text` with `secret` replaced by `[redacted]`: every occurrence of a secret of 16 characters or
/// more (no text contains one by chance), only whole-word occurrences of a shorter one.
fn redact(text: &str, secret: &str) -> String {
    const ALWAYS: usize = 16;
    // ASCII letters and digits only (no Unicode tables in the wasm): next to any other character a
    // short secret counts as a whole word, so the doubt is settled by redacting more.
    let in_word = |c: char| c.is_ascii_alphanumeric();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = crate::base::text::split_once(rest, secret) {
        let whole = secret.len() >= ALWAYS
            || (!before.chars().next_back().is_some_and(in_word) && !after.chars().next().is_some_and(in_word));
        out.push_str(before);
        out.push_str(if whole { "[redacted]" } else { secret });
        rest = after;
    }
    out.push_str(rest);
    out
}

fn clip(text: &str, max_chars: usize) -> String {
    let mut chars = text.chars();
    let clipped: String = chars.by_ref().take(max_chars).collect();
    if chars.next().is_some() { format!("{clipped}…") } else { clipped }
}

/// The parts of the endpoint URL the requests are built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub(crate) scheme: &'static str,
    /// Lowercase; an IPv6 literal keeps its brackets.
    pub(crate) host: String,
    /// Only a non-default port; `https://h:443` is `https://h`, as HTTP clients send it.
    pub(crate) port: Option<u16>,
    /// `""` or `/seg/seg` (no trailing slash), made only of unreserved characters.
    pub(crate) path: String,
}

impl Endpoint {
    /// `service` names the store in error messages ("S3", "Azure", "GCS").
    pub(crate) fn parse(service: &str, endpoint: &str) -> Result<Self> {
        let named = |shown: &str, why: &str| Error::invalid(format!("{service} endpoint {} {why}", quoted(shown)));
        let invalid = |why: &str| named(endpoint, why);
        let trimmed = endpoint.trim();
        // Credentials in a URL would leak into every error message that names the URL, so an `@`
        // (never part of a valid endpoint: hosts and path segments here cannot hold one) is
        // refused first, naming the URL with everything from its scheme to the last `@` cut out
        // (a password may hold `/`, `?` or `#`).
        if let Some(at) = trimmed.rfind('@') {
            // (`text::split_once`: `str::find` with a string pattern would bring std's Two-Way
            // searcher into the wasm for this one message.)
            let start = crate::base::text::split_once(trimmed, "://").map_or(0, |(scheme, _)| scheme.len() + 3);
            let start = if start > at { 0 } else { start };
            let shown =
                format!("{}…{}", trimmed.get(..start).unwrap_or_default(), trimmed.get(at..).unwrap_or_default());
            return Err(named(&shown, "must not contain user info; pass credentials separately"));
        }
        let (scheme, rest) = split_scheme(trimmed).ok_or_else(|| invalid("must start with http:// or https://"))?;
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = crate::base::text::split_at(rest, authority_end);
        if path.contains(['?', '#']) {
            return Err(invalid("must not have a query or fragment"));
        }
        let (host, port) = split_host_port(authority).ok_or_else(|| invalid("has no valid host[:port]"))?;
        let default_port = if scheme == "https" { 443 } else { 80 };
        let path = path.trim_end_matches('/');
        // The path is sent and signed verbatim, so it must already be in canonical form.
        let path_ok = path.split('/').skip(1).all(|seg| {
            !seg.is_empty()
                && seg != "."
                && seg != ".."
                && seg.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
        });
        if !path_ok {
            return Err(invalid("has a path that is not plain segments of letters, digits, '-', '.', '_', '~'"));
        }
        Ok(Endpoint { scheme, host, port: port.filter(|p| *p != default_port), path: path.to_owned() })
    }

    pub(crate) fn authority(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }

    pub(crate) fn is_ip_literal(&self) -> bool {
        self.host.starts_with('[') || self.host.bytes().all(|b| b.is_ascii_digit() || b == b'.')
    }
}

fn split_scheme(url: &str) -> Option<(&'static str, &str)> {
    let (scheme, rest) = crate::base::text::split_once(url, "://")?;
    if scheme.eq_ignore_ascii_case("https") {
        Some(("https", rest))
    } else if scheme.eq_ignore_ascii_case("http") {
        Some(("http", rest))
    } else {
        None
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port` → (lowercase host, port).
fn split_host_port(authority: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = if authority.starts_with('[') {
        let close = authority.find(']')?;
        let (host, after) = crate::base::text::split_at(authority, close + 1);
        let inner = host.get(1..host.len() - 1)?;
        if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return None;
        }
        (host, if after.is_empty() { None } else { Some(after.strip_prefix(':')?) })
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let bracketed = host.starts_with('[');
    if host.is_empty() || (!bracketed && !host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')) {
        return None;
    }
    let port = match port {
        None => None,
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            Some(u16::try_from(crate::base::number::parse_u64(digits)?).ok()?)
        }
        Some(_) => return None,
    };
    Some((host.to_ascii_lowercase(), port))
}

/// A request ready to send: signed, URL fully encoded.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: &'static str,
    pub url: String,
    /// Lowercase names. `host` is not listed: every client derives it from `url` (and `fetch`
    /// forbids setting it); it was signed as the endpoint's host, which is the same.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The value of a header (names compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// Hides the `Authorization` and `x-amz-security-token` values.
impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| {
                let hidden =
                    name.eq_ignore_ascii_case("authorization") || name.eq_ignore_ascii_case("x-amz-security-token");
                (name.as_str(), if hidden { "[redacted]" } else { value.as_str() })
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// Operation came back. Transports lowercase header names; lookups are case-insensitive anyway.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// The one seam between the HTTP stores (S3, Azure, GCS) and the network. `Err` means no HTTP response at all
/// (connection refused, reset, timeout…).
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
pub trait HttpTransport: crate::base::sync::MaybeSend + crate::base::sync::MaybeSync {
    async fn send(&self, request: HttpRequest) -> std::result::Result<HttpResponse, TransportError>;
}

/// Why a request got no HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportError {
    pub message: String,
    /// Whether the request may have reached the server. `false` only when it provably did not —
    /// the connection was refused, the host name did not resolve — so a write then neither needs
    /// a read-back nor can be ambiguous, and a retry is safe.
    pub maybe_sent: bool,
}

impl TransportError {
    /// Nothing reached the server.
    pub fn not_sent(message: impl Into<String>) -> Self {
        TransportError { message: message.into(), maybe_sent: false }
    }
}

/// Any failure without proof that nothing was sent: it may have reached the server.
impl From<String> for TransportError {
    fn from(message: String) -> Self {
        TransportError { message, maybe_sent: true }
    }
}

impl From<&str> for TransportError {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

#[cfg(test)]
mod snippet_tests {
    #[test]
    fn an_error_body_is_one_line_up_to_its_first_byte_that_is_not_utf8() {
        assert_eq!(super::body_snippet(b"<h1>502\n  Bad Gateway</h1>\r\n"), "<h1>502 Bad Gateway</h1>");
        assert_eq!(super::body_snippet(b"upstream \xff\xfe failed"), "upstream");
        assert_eq!(super::body_snippet(b"\xff"), "");
    }
}
