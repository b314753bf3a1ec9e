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

mod request;
pub(crate) mod response;
mod sigv4;
mod xml;

use crate::base::error::quoted;
use crate::base::sync::Shared;
use std::fmt;

use super::http::{Endpoint, HttpClient, Protocol, validate_timeout};
use super::{Reply, Request, StoreResult};
use crate::base::error::{Error, Result};
use crate::time::{Clock, Timestamp};

// The transport seam, where S3 users have always found it (it serves every HTTP store).
#[cfg(target_arch = "wasm32")]
pub use super::http::FetchTransport;
#[cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
pub use super::http::ReqwestTransport;
pub use super::http::{DEFAULT_TIMEOUT, HttpRequest, HttpResponse, HttpTransport, TransportError};

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
    signing_keys: Shared<sigv4::SigningKeys>,
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

    /// A config from the standard AWS environment, as the command line reads it:
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` (optional), `AWS_REGION`
    /// or `AWS_DEFAULT_REGION` (default `us-east-1`); the endpoint from `FENCEPOST_S3_ENDPOINT`,
    /// `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (default AWS's regional endpoint,
    /// `https://s3.<region>.amazonaws.com`, with virtual-hosted addressing; a given endpoint — R2,
    /// MinIO, SeaweedFS — is addressed by path); the bucket from `FENCEPOST_S3_BUCKET` or
    /// `AWS_BUCKET` (or give it: [`S3Config::from_env_with_bucket`]). A missing credential or
    /// bucket is an [`Error::InvalidArgument`] naming its variable.
    ///
    /// ```
    /// # unsafe { std::env::set_var("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"); std::env::set_var("AWS_SECRET_ACCESS_KEY", "secret"); }
    /// # unsafe { std::env::set_var("AWS_REGION", "eu-west-1"); std::env::remove_var("AWS_ENDPOINT_URL"); std::env::remove_var("AWS_ENDPOINT_URL_S3"); }
    /// # unsafe { std::env::remove_var("FENCEPOST_S3_ENDPOINT"); std::env::set_var("FENCEPOST_S3_BUCKET", "my-bucket"); }
    /// let config = fencepost::store::s3::S3Config::from_env()?;
    /// assert_eq!((config.endpoint(), config.bucket()), ("https://s3.eu-west-1.amazonaws.com", "my-bucket"));
    /// # Ok::<(), fencepost::Error>(())
    /// ```
    pub fn from_env() -> Result<Self> {
        Self::from_vars(None, |name| std::env::var(name).ok())
    }

    /// [`S3Config::from_env`] for `bucket`, whatever the environment names.
    pub fn from_env_with_bucket(bucket: &str) -> Result<Self> {
        Self::from_vars(Some(bucket), |name| std::env::var(name).ok())
    }

    /// [`S3Config::from_env`] with the variables looked up by `var`.
    fn from_vars(bucket: Option<&str>, var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        let required = |name: &str| var(name).ok_or_else(|| Error::invalid(format!("{name} is not set")));
        let bucket = match bucket {
            Some(bucket) => bucket.to_owned(),
            None => var("FENCEPOST_S3_BUCKET").or_else(|| var("AWS_BUCKET")).ok_or_else(|| {
                Error::invalid(
                    "FENCEPOST_S3_BUCKET is not set (nor AWS_BUCKET): name the bucket, or use from_env_with_bucket",
                )
            })?,
        };
        let region = var("AWS_REGION").or_else(|| var("AWS_DEFAULT_REGION")).unwrap_or_else(|| "us-east-1".to_owned());
        let endpoint =
            var("FENCEPOST_S3_ENDPOINT").or_else(|| var("AWS_ENDPOINT_URL_S3")).or_else(|| var("AWS_ENDPOINT_URL"));
        let (endpoint, addressing) = match endpoint {
            Some(endpoint) => (endpoint, Addressing::Path),
            None => (format!("https://s3.{region}.amazonaws.com"), Addressing::VirtualHosted),
        };
        Self::builder(&endpoint, &bucket, &region, &required("AWS_ACCESS_KEY_ID")?, &required("AWS_SECRET_ACCESS_KEY")?)
            .session_token(var("AWS_SESSION_TOKEN"))
            .addressing(addressing)
            .build()
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
        let parsed = Endpoint::parse("S3", &self.endpoint)?;
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
        validate_timeout("S3", self.timeout)?;
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
            signing_keys: Shared::default(),
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

/// An [`ObjectStore`](crate::store::ObjectStore) on S3. One call is one HTTP request (a list, one per page). Clones share the
/// transport, the clock and the latest server time.
#[derive(Clone)]
pub struct S3Store {
    config: S3Config,
    http: HttpClient,
}

impl S3Store {
    /// `clock` dates the signatures (S3 rejects requests more than 15 minutes off) and times the
    /// attempts out ([`S3ConfigBuilder::timeout`]).
    /// On the platform's transport (the host's `fetch` in wasm; natively `ReqwestTransport`, feature
    /// `reqwest`) and the system clock.
    #[cfg(any(target_arch = "wasm32", feature = "reqwest"))]
    pub fn new(config: S3Config) -> Result<Self> {
        let (transport, clock) = crate::store::http::platform()?;
        Ok(Self::with_transport(config, transport, clock))
    }

    /// On a transport of your own; `clock` dates the signatures and times the attempts out.
    pub fn with_transport(config: S3Config, transport: Shared<dyn HttpTransport>, clock: Shared<dyn Clock>) -> Self {
        let http = HttpClient::new(transport, clock, config.timeout);
        S3Store { config, http }
    }

    pub fn config(&self) -> &S3Config {
        &self.config
    }

    /// Every operation's one request (through the HTTP kit's one call).
    async fn call(&self, request: Request<'_>) -> StoreResult<Reply> {
        self.http.call(&self.config, request, None).await
    }

    /// S3 honours `If-Match` on DELETE (since 2025; SeaweedFS and moto too).
    fn deletes_conditionally(&self) -> bool {
        true
    }
}

impl fmt::Debug for S3Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Store").field("config", &self.config).finish_non_exhaustive()
    }
}

crate::store::http::http_object_store!(S3Store);

/// S3's requests and answers (SigV4 needs real time: servers refuse skewed signatures).
impl Protocol for S3Config {
    fn build(
        &self,
        request: &Request<'_>,
        at: Timestamp,
        _token: Option<&str>,
    ) -> StoreResult<(HttpRequest, Vec<String>)> {
        let http = match *request {
            Request::Get(key) => self.get_object_request(key, None, at),
            Request::GetIfChanged { key, etag } => self.get_object_request(key, Some(etag), at),
            Request::Put { key, body, precondition, meta } => {
                self.put_object_request(key, body, precondition, meta, at)?
            }
            Request::Delete(key) => self.delete_object_request(key, at),
            Request::DeleteIfMatch { key, etag } => self.delete_object_if_match_request(key, etag, at),
            Request::List { prefix, start_after, cursor } => {
                self.list_objects_v2_request(prefix, start_after, cursor, at)
            }
        };
        // The secret key, the session token and the request's signature never appear in an error.
        let mut secrets: Vec<String> = self.secrets().into_iter().map(str::to_owned).collect();
        secrets.extend(
            http.header("authorization")
                .and_then(|a| crate::base::text::rsplit_once(a, "Signature="))
                .map(|(_, s)| s.to_owned()),
        );
        Ok((http, secrets))
    }

    fn read(
        &self,
        request: &Request<'_>,
        response: HttpResponse,
        what: &(dyn fmt::Display + Sync),
    ) -> StoreResult<Reply> {
        response::read(response, request, what)
    }
}

#[cfg(test)]
mod tests;
