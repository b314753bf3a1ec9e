//! The S3 store: any S3-compatible service (AWS S3, R2's S3 endpoint, SeaweedFS, MinIO…) over a
//! pluggable HTTP transport.
//!
//! Sans-IO, in the rusty-s3 style: building and signing a request (`request`, `sigv4`, `encode`)
//! and reading a response (`response`, `xml`) are pure functions of their inputs and a time,
//! tested without a network (signing against AWS's published examples). [`S3Store`] only glues
//! them to an [`HttpTransport`] and a [`Clock`]. One call is one attempt: retries and the
//! resolution of ambiguous writes live above the store.
//!
//! Transports: `FetchTransport` in wasm (the host's global `fetch`), `ReqwestTransport` natively
//! (feature `reqwest`), or your own [`HttpTransport`].

mod encode;
mod request;
pub(crate) mod response;
mod sigv4;
mod xml;

#[cfg(target_arch = "wasm32")]
mod fetch;

#[cfg(target_arch = "wasm32")]
pub use fetch::FetchTransport;

#[cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]
mod reqwest_transport;

#[cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub use reqwest_transport::ReqwestTransport;

use crate::base::error::quoted;
use std::cell::Cell;
use std::fmt;
use std::rc::Rc;

use async_trait::async_trait;

use super::{ListPage, ObjectStore, Precondition, PutOutcome, StoreError, StoreResult, StoredObject, WriteMeta};
use crate::base::error::{Error, Result};
use crate::base::future::{Either, race};
use crate::time::{Clock, Timestamp};

/// Seconds an attempt may go unanswered before it counts as a transport error.
pub const DEFAULT_TIMEOUT: f64 = 30.0;

/// How the bucket appears in request URLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Addressing {
    /// `{endpoint}/{bucket}/{key}`: works with every S3-compatible server and with IP endpoints.
    #[default]
    Path,
    /// `{scheme}://{bucket}.{host}/{key}`: what AWS prefers for new buckets.
    VirtualHosted,
}

/// Where and as whom to talk S3. Built (and validated) by [`S3Config::new`] or
/// [`S3Config::builder`]; `Debug` never shows the secret key or the session token.
#[derive(Clone)]
pub struct S3Config {
    endpoint: String,
    bucket: String,
    region: String,
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
    addressing: Addressing,
    /// Seconds per attempt.
    timeout: f64,
    /// `endpoint`, parsed once at construction.
    parsed: Endpoint,
    /// The day's SigV4 signing key (shared by clones: same secret, same scope).
    signing_keys: Rc<sigv4::SigningKeys>,
}

impl S3Config {
    /// A path-style config without a session token. (A store prefix is a [`crate::store::PrefixStore`]
    /// around the store.)
    pub fn new(
        endpoint: &str,
        bucket: &str,
        region: &str,
        access_key_id: &str,
        secret_access_key: &str,
    ) -> Result<Self> {
        Self::builder(endpoint, bucket, region, access_key_id, secret_access_key).build()
    }

    pub fn builder(
        endpoint: &str,
        bucket: &str,
        region: &str,
        access_key_id: &str,
        secret_access_key: &str,
    ) -> S3ConfigBuilder {
        S3ConfigBuilder {
            endpoint: endpoint.to_owned(),
            bucket: bucket.to_owned(),
            region: region.to_owned(),
            access_key_id: access_key_id.to_owned(),
            secret_access_key: secret_access_key.to_owned(),
            session_token: None,
            addressing: Addressing::Path,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    pub fn region(&self) -> &str {
        &self.region
    }

    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    pub fn addressing(&self) -> Addressing {
        self.addressing
    }

    /// Seconds an attempt may go unanswered.
    pub fn timeout(&self) -> f64 {
        self.timeout
    }

    /// The value of the `Host` header every request carries (and signs): the request host, with
    /// the port only when it is not the scheme's default (as every HTTP client sends it).
    pub(crate) fn host(&self) -> String {
        match self.addressing {
            Addressing::Path => self.parsed.authority(),
            Addressing::VirtualHosted => format!("{}.{}", self.bucket, self.parsed.authority()),
        }
    }

    fn credentials(&self) -> sigv4::Credentials<'_> {
        sigv4::Credentials {
            access_key_id: &self.access_key_id,
            secret_access_key: &self.secret_access_key,
            session_token: self.session_token.as_deref(),
        }
    }

    /// Strings that must never leave the store in an error message.
    fn secrets(&self) -> Vec<&str> {
        let mut secrets = vec![self.secret_access_key.as_str()];
        secrets.extend(self.session_token.as_deref());
        secrets
    }
}

impl fmt::Debug for S3Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Config")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"[redacted]")
            .field("session_token", &self.session_token.as_ref().map(|_| "[redacted]"))
            .field("addressing", &self.addressing)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Optional settings of an [`S3Config`]; [`S3ConfigBuilder::build`] validates everything.
/// Deliberately not `Debug`: it holds the secret.
#[derive(Clone)]
pub struct S3ConfigBuilder {
    endpoint: String,
    bucket: String,
    region: String,
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
    addressing: Addressing,
    timeout: f64,
}

impl S3ConfigBuilder {
    /// Temporary (STS) credentials. An empty token counts as none.
    pub fn session_token(mut self, token: Option<String>) -> Self {
        self.session_token = token.filter(|t| !t.is_empty());
        self
    }

    pub fn addressing(mut self, addressing: Addressing) -> Self {
        self.addressing = addressing;
        self
    }

    /// Seconds an attempt may go unanswered (default 30, must be > 0) before it counts as a
    /// transport error: a read is then retried, a write resolved by read-back, so a store that
    /// never answers makes an operation fail within about `timeout × attempts`.
    pub fn timeout(mut self, secs: f64) -> Self {
        self.timeout = secs;
        self
    }

    pub fn build(self) -> Result<S3Config> {
        let parsed = Endpoint::parse(&self.endpoint)?;
        validate_bucket(&self.bucket, self.addressing)?;
        if self.addressing == Addressing::VirtualHosted && parsed.is_ip_literal() {
            return Err(Error::invalid(
                "virtual-hosted addressing needs a DNS endpoint, not an IP address; use path addressing",
            ));
        }
        validate_region(&self.region)?;
        validate_access_key_id(&self.access_key_id)?;
        if let Some(token) = &self.session_token {
            if !token.bytes().all(|b| b.is_ascii_graphic()) {
                // Never echo the token itself.
                return Err(Error::invalid("S3 session token contains characters not allowed in an HTTP header"));
            }
        }
        if !self.timeout.is_finite() || self.timeout <= 0.0 {
            return Err(Error::invalid(format!(
                "S3 timeout must be a number of seconds > 0, got {}",
                crate::base::number::number_text(self.timeout)
            )));
        }
        Ok(S3Config {
            endpoint: self.endpoint,
            bucket: self.bucket,
            region: self.region,
            access_key_id: self.access_key_id,
            secret_access_key: self.secret_access_key,
            session_token: self.session_token,
            addressing: self.addressing,
            timeout: self.timeout,
            parsed,
            signing_keys: Rc::default(),
        })
    }
}

/// Bucket names go into a URL path segment or a host name unescaped, so only S3's own alphabet is
/// allowed (plus `_` and capitals, which some non-AWS servers accept, in path style only).
fn validate_bucket(bucket: &str, addressing: Addressing) -> Result<()> {
    if bucket.is_empty() {
        return Err(Error::invalid("S3 bucket must not be empty"));
    }
    let dns_safe = bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
    let path_safe = bucket.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    let ok = match addressing {
        Addressing::Path => path_safe && bucket != "." && bucket != "..",
        Addressing::VirtualHosted => {
            dns_safe
                && !bucket.starts_with('.')
                && !bucket.ends_with('.')
                && crate::base::text::find(bucket, "..").is_none()
        }
    };
    if ok {
        Ok(())
    } else {
        let style = match addressing {
            Addressing::Path => "path-style",
            Addressing::VirtualHosted => "virtual-hosted",
        };
        Err(Error::invalid(format!("S3 bucket name {} is not valid for {style} addressing", quoted(bucket))))
    }
}

/// The region is part of the signed credential scope (`date/region/s3/aws4_request`).
fn validate_region(region: &str) -> Result<()> {
    if region.is_empty() {
        return Err(Error::invalid("S3 region must not be empty (R2 uses \"auto\")"));
    }
    if !region.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return Err(Error::invalid(format!(
            "S3 region {} may only contain letters, digits, '-' and '_'",
            quoted(region)
        )));
    }
    Ok(())
}

/// The access key id sits in the `Authorization` header's `Credential=id/scope` field.
fn validate_access_key_id(id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::invalid("S3 access key id must not be empty"));
    }
    if !id.bytes().all(|b| b.is_ascii_graphic() && b != b'/' && b != b',') {
        return Err(Error::invalid("S3 access key id may only contain printable ASCII other than '/' and ','"));
    }
    Ok(())
}

/// The parts of the endpoint URL the requests are built from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Endpoint {
    scheme: &'static str,
    /// Lowercase; an IPv6 literal keeps its brackets.
    host: String,
    /// Only a non-default port; `https://h:443` is `https://h`, as HTTP clients send it.
    port: Option<u16>,
    /// `""` or `/seg/seg` (no trailing slash), made only of unreserved characters.
    path: String,
}

impl Endpoint {
    fn parse(endpoint: &str) -> Result<Self> {
        let invalid = |why: &str| Error::invalid(format!("S3 endpoint {} {why}", quoted(endpoint)));
        let trimmed = endpoint.trim();
        let (scheme, rest) = split_scheme(trimmed).ok_or_else(|| invalid("must start with http:// or https://"))?;
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, path) = crate::base::text::split_at(rest, authority_end);
        if path.contains(['?', '#']) {
            return Err(invalid("must not have a query or fragment"));
        }
        if authority.contains('@') {
            // Credentials in a URL would leak into every error message that names the URL.
            return Err(invalid("must not contain user info; pass credentials separately"));
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

    fn authority(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.host),
            None => self.host.clone(),
        }
    }

    fn is_ip_literal(&self) -> bool {
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
            Some(digits.parse::<u16>().ok()?)
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

/// The one seam between the S3 store and the network. `Err` means no HTTP response at all
/// (connection refused, reset, timeout…).
#[async_trait(?Send)]
pub trait HttpTransport {
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

/// An [`ObjectStore`] on S3. One call is one HTTP request (a list, one per page). Clones share the
/// transport, the clock and the latest server time.
#[derive(Clone)]
pub struct S3Store {
    config: S3Config,
    transport: Rc<dyn HttpTransport>,
    clock: Rc<dyn Clock>,
    /// The `Date` of the latest response (see [`ObjectStore::server_time`]).
    server_time: Rc<Cell<Option<Timestamp>>>,
}

impl S3Store {
    /// `clock` dates the signatures (S3 rejects requests more than 15 minutes off) and times the
    /// attempts out ([`S3ConfigBuilder::timeout`]).
    pub fn new(config: S3Config, transport: Rc<dyn HttpTransport>, clock: Rc<dyn Clock>) -> Self {
        S3Store { config, transport, clock, server_time: Rc::new(Cell::new(None)) }
    }

    pub fn config(&self) -> &S3Config {
        &self.config
    }

    /// Send one request and read its response with `read`; errors come back sanitised (no secret,
    /// bounded length) whatever the server or the transport put in them.
    async fn exchange<T>(
        &self,
        request: HttpRequest,
        what: &dyn fmt::Display,
        read: impl FnOnce(HttpResponse) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let (answer, signature) = self.send(request, what).await;
        answer.and_then(read).map_err(|err| {
            let mut secrets = self.config.secrets();
            secrets.extend(signature.as_deref());
            response::sanitize(err, &secrets)
        })
    }

    /// Send one request (the part of [`S3Store::exchange`] that is the same whatever is read, so
    /// it is compiled once): its response or the failure, and the request's signature (a secret
    /// the errors must not show).
    async fn send(&self, request: HttpRequest, what: &dyn fmt::Display) -> (StoreResult<HttpResponse>, Option<String>) {
        let signature = request
            .header("authorization")
            .and_then(|a| crate::base::text::rsplit_once(a, "Signature="))
            .map(|(_, s)| s.to_owned());
        // The transport races the timeout: when it loses, its future is dropped (in wasm that
        // aborts the `fetch`, freeing the connection).
        let timeout = self.config.timeout;
        let answer =
            match race(crate::host::io::in_flight(self.transport.send(request)), self.clock.sleep(timeout)).await {
                Either::Left(answer) => answer,
                Either::Right(()) => {
                    Err(format!("no answer within {} s", crate::base::number::number_text(timeout)).into())
                }
            };
        // Always overwritten, so the objects layer, which reads it right after this returns,
        // never takes an older response's date for this one's.
        self.server_time.set(answer.as_ref().ok().and_then(response::server_time));
        let answer = match answer {
            Ok(response) => Ok(response),
            // Provably never sent: nothing to resolve, safe to retry (a refused connection).
            Err(TransportError { message, maybe_sent: false }) => {
                Err(StoreError::new(super::FailureKind::Transient, None, None, format!("{what}: not sent: {message}")))
            }
            Err(TransportError { message, .. }) => {
                Err(StoreError::transport(format!("{what}: no response: {message}")))
            }
        };
        (answer, signature)
    }
}

impl fmt::Debug for S3Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Store").field("config", &self.config).finish_non_exhaustive()
    }
}

impl S3Store {
    /// The time a request is signed at (SigV4 needs real time: servers refuse skewed signatures).
    fn signing_time(&self) -> StoreResult<crate::time::Timestamp> {
        self.clock
            .now()
            .map_err(|e| StoreError::new(crate::store::FailureKind::Fatal, Some("ClockFailed"), None, e.to_string()))
    }
}

/// An operation as its error messages name it (`PUT "key"`): spelled out only when a message is
/// made, not on every request.
struct Operation<'a>(&'static str, &'a str);

impl fmt::Display for Operation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0, quoted(self.1))
    }
}

#[async_trait(?Send)]
impl ObjectStore for S3Store {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        let what = Operation("GET", key);
        let request = self.config.get_object_request(key, self.signing_time()?);
        self.exchange(request, &what, |r| response::read_get(r, &what)).await
    }

    async fn put(
        &self,
        key: &str,
        body: &[u8],
        precondition: &Precondition,
        meta: &WriteMeta,
    ) -> StoreResult<PutOutcome> {
        let what = Operation("PUT", key);
        let request = self.config.put_object_request(key, body, precondition, meta, self.signing_time()?)?;
        self.exchange(request, &what, |r| response::read_put(r, precondition, &what)).await
    }

    async fn delete(&self, key: &str) -> StoreResult<()> {
        let what = Operation("DELETE", key);
        let request = self.config.delete_object_request(key, self.signing_time()?);
        self.exchange(request, &what, |r| response::read_delete(r, &what)).await
    }

    async fn delete_if_match(&self, key: &str, etag: &str) -> StoreResult<bool> {
        let what = Operation("DELETE", key);
        let request = self.config.delete_object_if_match_request(key, etag, self.signing_time()?);
        self.exchange(request, &what, |r| response::read_conditional_delete(r, &what)).await
    }

    fn conditional_delete(&self) -> bool {
        true
    }

    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        let what = Operation("LIST", prefix);
        let request = self.config.list_objects_v2_request(prefix, start_after, cursor, self.signing_time()?);
        let page = self.exchange(request, &what, |r| response::read_list(r, &what)).await?;
        let next = if page.is_truncated {
            Some(
                page.next_continuation_token
                    .ok_or_else(|| response::malformed(&what, "a truncated page without NextContinuationToken"))?,
            )
        } else {
            None
        };
        Ok(ListPage { entries: page.entries, next })
    }

    fn server_time(&self) -> Option<Timestamp> {
        self.server_time.get()
    }
}

#[cfg(test)]
mod tests;
