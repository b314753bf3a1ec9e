//! The Google Cloud Storage store: objects in one bucket over the JSON API and a pluggable HTTP
//! transport (the host's `fetch` in wasm, reqwest natively with feature `reqwest`).
//!
//! GCS's conditional writes are exact on generations: `ifGenerationMatch=0` creates only,
//! `ifGenerationMatch=<generation>` replaces only that version, on uploads and deletes; the etag
//! this store hands out is the generation. Write tokens ride in the object's custom metadata; the
//! bodies are the same bytes as on every other store. Sans-IO like the other HTTP stores: `wire`
//! builds requests and reads responses, `auth` makes and reads token requests; the store glues
//! them to the transport. One call is one request (a list, one per page), plus, for a service
//! account, one token request about once an hour.

mod auth;
#[cfg(all(feature = "gcs-service-account", not(target_arch = "wasm32")))]
mod rsa_signer;
mod wire;

use crate::base::sync::Shared;
use std::fmt;

pub use auth::{AccessToken, Rs256Signer, ServiceAccount, TokenSource};
#[cfg(all(feature = "gcs-service-account", not(target_arch = "wasm32")))]
#[cfg_attr(docsrs, doc(cfg(feature = "gcs-service-account")))]
pub use rsa_signer::RsaSigner;

use super::http::{DEFAULT_TIMEOUT, Endpoint, HttpClient, HttpRequest, HttpResponse, HttpTransport, Protocol};
use super::{FailureKind, Precondition, PutOutcome, Reply, Request, StoreError, StoreResult};
use crate::base::error::{Error, Result, quoted};
use crate::base::future::{BoxFuture, Either, race};
use crate::base::number::number_text;
use crate::time::{Clock, Timestamp};
use auth::Auth;

/// Where and as whom to talk to Google Cloud Storage. Built (and validated) by
/// [`GcsConfig::builder`]; `Debug` never shows a token.
#[derive(Clone)]
pub struct GcsConfig {
    bucket: String,
    endpoint: String,
    parsed: Endpoint,
    auth: Auth,
    timeout: f64,
    conditional_delete: bool,
}

impl GcsConfig {
    /// A config for `bucket`; say how to authorize on the builder (without, requests carry no
    /// `Authorization`: an emulator, a public bucket).
    pub fn builder(bucket: &str) -> GcsConfigBuilder {
        GcsConfigBuilder {
            bucket: bucket.to_owned(),
            endpoint: None,
            auth: Auth::Anonymous,
            timeout: DEFAULT_TIMEOUT,
            conditional_delete: None,
        }
    }

    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// `https://storage.googleapis.com` unless one was given.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Seconds an attempt may go unanswered.
    pub fn timeout(&self) -> f64 {
        self.timeout
    }

    /// Whether deletes are sent with `ifGenerationMatch` (see [`GcsConfigBuilder::conditional_delete`]).
    pub fn conditional_delete(&self) -> bool {
        self.conditional_delete
    }
}

impl fmt::Debug for GcsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let auth = match &self.auth {
            Auth::Anonymous => "anonymous".to_owned(),
            Auth::Token(_) => "access token [redacted]".to_owned(),
            Auth::Source(_) => "token source".to_owned(),
            Auth::Account { account, .. } => format!("service account {}", account.client_email),
        };
        f.debug_struct("GcsConfig")
            .field("bucket", &self.bucket)
            .field("endpoint", &self.endpoint)
            .field("auth", &auth)
            .field("timeout", &self.timeout)
            .field("conditional_delete", &self.conditional_delete)
            .finish()
    }
}

/// Optional settings of a [`GcsConfig`]; [`GcsConfigBuilder::build`] validates everything.
/// Deliberately not `Debug`: it may hold a token.
#[derive(Clone)]
pub struct GcsConfigBuilder {
    bucket: String,
    endpoint: Option<String>,
    auth: Auth,
    timeout: f64,
    conditional_delete: Option<bool>,
}

impl GcsConfigBuilder {
    /// The service URL: fake-gcs-server's `http://127.0.0.1:4443`, a private endpoint. Default
    /// `https://storage.googleapis.com`.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// A fixed OAuth access token (short-lived: for scripts and tests).
    pub fn access_token(mut self, token: impl Into<String>) -> Self {
        self.auth = Auth::Token(token.into());
        self
    }

    /// Your own source of access tokens, asked before each request.
    pub fn token_source(mut self, source: Shared<dyn TokenSource>) -> Self {
        self.auth = Auth::Source(source);
        self
    }

    /// A service account: fencepost gets and renews its access tokens.
    pub fn service_account(mut self, account: ServiceAccount) -> Self {
        self.auth = Auth::service_account(account);
        self
    }

    /// Seconds an attempt may go unanswered (default 30, must be > 0).
    pub fn timeout(mut self, secs: f64) -> Self {
        self.timeout = secs;
        self
    }

    /// Whether the service honours `ifGenerationMatch` on DELETE. Google's endpoints
    /// (`*.googleapis.com`) do, and that is the default for them; for any other endpoint the
    /// default is `false`, because the emulator (fake-gcs-server) deletes whatever the
    /// precondition says: fencepost then re-reads right before a plain delete, as on R2 (one more
    /// read per pruned object). `checkStore` tells which a service does.
    pub fn conditional_delete(mut self, honoured: bool) -> Self {
        self.conditional_delete = Some(honoured);
        self
    }

    pub fn build(self) -> Result<GcsConfig> {
        let b = &self.bucket;
        // Bucket names: 3-222 of lowercase letters, digits, '-', '_' and '.'; a path segment here.
        let ok = (3..=222).contains(&b.len())
            && b.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'-' | b'_' | b'.'))
            && b.bytes().next().is_some_and(|c| c.is_ascii_alphanumeric())
            && b.bytes().last().is_some_and(|c| c.is_ascii_alphanumeric());
        if !ok {
            return Err(Error::invalid(format!(
                "GCS bucket {} must be 3-222 lowercase letters, digits, '-', '_' and '.'",
                quoted(b)
            )));
        }
        let endpoint = self.endpoint.unwrap_or_else(|| "https://storage.googleapis.com".to_owned());
        let parsed = Endpoint::parse("GCS", &endpoint)?;
        match &self.auth {
            Auth::Token(t) if t.is_empty() || !t.bytes().all(|c| c.is_ascii_graphic()) => {
                // Never echo the token itself.
                return Err(Error::invalid(
                    "GCS access token must be the token alone (printable ASCII without spaces, no \"Bearer \" before it)",
                ));
            }
            Auth::Account { account, .. } => {
                Endpoint::parse("GCS token_uri", &account.token_uri)?;
                if account.client_email.is_empty() {
                    return Err(Error::invalid("GCS service account needs its client_email"));
                }
            }
            _ => {}
        }
        crate::store::http::validate_timeout("GCS", self.timeout)?;
        let google = parsed.host == "googleapis.com" || parsed.host.ends_with(".googleapis.com");
        let conditional_delete = self.conditional_delete.unwrap_or(google);
        Ok(GcsConfig {
            bucket: self.bucket,
            endpoint,
            parsed,
            auth: self.auth,
            timeout: self.timeout,
            conditional_delete,
        })
    }
}

/// An [`ObjectStore`](crate::store::ObjectStore) on Google Cloud Storage. Clones share the transport, the clock, the cached
/// access token and the latest server time.
#[derive(Clone)]
pub struct GcsStore {
    config: GcsConfig,
    http: HttpClient,
}

impl GcsStore {
    /// `clock` times the attempts out and the cached access token.
    /// On the platform's transport (the host's `fetch` in wasm; natively `ReqwestTransport`, feature
    /// `reqwest`) and the system clock.
    #[cfg(any(target_arch = "wasm32", feature = "reqwest"))]
    pub fn new(config: GcsConfig) -> Result<Self> {
        let (transport, clock) = crate::store::http::platform()?;
        Ok(Self::with_transport(config, transport, clock))
    }

    /// On a transport of your own; `clock` dates the signatures and times the attempts out.
    pub fn with_transport(config: GcsConfig, transport: Shared<dyn HttpTransport>, clock: Shared<dyn Clock>) -> Self {
        let http = HttpClient::new(transport, clock, config.timeout);
        GcsStore { config, http }
    }

    pub fn config(&self) -> &GcsConfig {
        &self.config
    }

    /// Every operation's one request (through the HTTP kit's one call), with its token.
    async fn call(&self, request: Request<'_>) -> StoreResult<Reply> {
        let request = match without_foreign_etags(request) {
            Ok(settled) => return Ok(settled),
            Err(request) => request,
        };
        let token = self.access_token().await?;
        self.http.call(&self.config, request, token).await
    }

    fn deletes_conditionally(&self) -> bool {
        self.config.conditional_delete
    }

    /// The token for the next request (`None`: anonymous); a service account's from the cache, or
    /// fetched (one request) when there is none or it is about to expire.
    async fn access_token(&self) -> StoreResult<Option<String>> {
        match &self.config.auth {
            Auth::Anonymous => Ok(None),
            Auth::Token(t) => Ok(Some(t.clone())),
            // Bounded as a request is: a token function that never settles is no hang.
            Auth::Source(source) => Ok(Some(bounded_token(source.token(), self.http.attempt_timer()).await?.token)),
            auth @ Auth::Account { account, .. } => {
                let now = self.http.now()?;
                if let Some(token) = auth.cached(now) {
                    return Ok(Some(token));
                }
                let (request, assertion) = auth::token_request(account, now).await?;
                // The signed assertion is a credential for a while: an endpoint echoing it is redacted.
                let secrets = [assertion.as_str()];
                let token = self
                    .http
                    .exchange(request, &"service account token", &secrets, |r| auth::read_token(r, now))
                    .await?;
                auth.remember(token.clone());
                Ok(Some(token.token))
            }
        }
    }
}

/// An access token from a source of the user's (a token function), bounded by an attempt's
/// timeout as a request is; past it, a transient failure (nothing was sent).
#[inline(never)]
fn bounded_token<'a>(
    token: BoxFuture<'a, StoreResult<AccessToken>>,
    (timer, timeout): (BoxFuture<'static, ()>, f64),
) -> BoxFuture<'a, StoreResult<AccessToken>> {
    Box::pin(async move {
        match race(token, timer).await {
            Either::Left(out) => out,
            Either::Right(()) => Err(StoreError::new(
                FailureKind::Transient,
                None,
                None,
                format!("the access token function gave no token within {} s", number_text(timeout)),
            )),
        }
    })
}

/// A request naming an etag that is no generation (an S3 ETag, a typo) settled without asking:
/// it names no version this store handed out, so it cannot match (and GCS would refuse it as a
/// malformed number, 400); a conditional read on one is a plain read. `Err`: the request to send.
#[inline(never)]
fn without_foreign_etags(request: Request<'_>) -> std::result::Result<Reply, Request<'_>> {
    let foreign = |etag: &str| !wire::is_generation(&crate::store::normalize_etag(etag));
    match request {
        Request::DeleteIfMatch { etag, .. } if foreign(etag) => Ok(Reply::Deleted(false)),
        Request::Put { precondition: Precondition::IfMatch(etag), .. } if foreign(etag) => {
            Ok(Reply::Put(PutOutcome::PreconditionFailed))
        }
        Request::GetIfChanged { key, etag } if foreign(etag) => Err(Request::Get(key)),
        other => Err(other),
    }
}

/// GCS's requests, with the bearer token, and its answers.
impl Protocol for GcsConfig {
    fn build(
        &self,
        request: &Request<'_>,
        _now: Timestamp,
        token: Option<&str>,
    ) -> StoreResult<(HttpRequest, Vec<String>)> {
        let target = wire::Target { endpoint: &self.parsed, bucket: &self.bucket };
        let mut http = target.for_request(request);
        if let Some(token) = token {
            http.headers.push(("authorization".to_owned(), format!("Bearer {token}")));
        }
        Ok((http, Vec::new()))
    }

    fn read(
        &self,
        request: &Request<'_>,
        response: HttpResponse,
        what: &(dyn fmt::Display + Sync),
    ) -> StoreResult<Reply> {
        wire::read(response, request, what)
    }
}

impl fmt::Debug for GcsStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcsStore").field("config", &self.config).finish_non_exhaustive()
    }
}

// `startOffset` is inclusive; the objects layer drops the key `start_after` itself.
crate::store::http::http_object_store!(GcsStore);
