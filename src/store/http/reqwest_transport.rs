//! The native transport (feature `reqwest`): the S3 store over reqwest, with rustls for HTTPS.
//!
//! reqwest's connections need a tokio runtime, but fencepost's futures do not: each request runs
//! as a task on the caller's tokio runtime, or on fencepost's own (`crate::host::tokio`). So the
//! S3 store works the same under `#[tokio::main]`, a current-thread runtime, a `LocalSet`, or
//! plain `futures::executor::block_on`.
//!
//! The per-attempt timeout is the S3 store's (`S3ConfigBuilder::timeout`, default 30 s): it races
//! every send against its clock, and when the timeout wins the send is dropped, which aborts the
//! task and with it the connection (the outcome of a write is then resolved by reading back).

use async_trait::async_trait;

use super::{HttpRequest, HttpResponse, HttpTransport, TransportError};
use crate::base::error::{Error, Result, StorageFailure};
use crate::host::tokio::{NoAnswer, on_tokio};

/// [`HttpTransport`] over a [`reqwest::Client`]. Clones share the client and its connection pool.
///
/// ```no_run
/// use fencepost::Shared;
/// use fencepost::store::PrefixStore;
/// use fencepost::store::s3::{ReqwestTransport, S3Config, S3Store};
/// use fencepost::{Fencepost, Options, SystemClock};
///
/// # fn main() -> fencepost::Result<()> {
/// let config = S3Config::builder("https://s3.eu-west-1.amazonaws.com", "my-bucket", "eu-west-1", "AKIA…", "secret")
///     .timeout(10.0)
///     .build()?;
/// let store = S3Store::with_transport(config, Shared::new(ReqwestTransport::new()?), Shared::new(SystemClock));
/// // This application's keys under `my-app/`: several applications can share the bucket.
/// let store = PrefixStore::new(Shared::new(store), "my-app")?;
/// let db = Fencepost::new(Shared::new(store), Options::default())?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ReqwestTransport {
    client: reqwest::Client,
}

impl ReqwestTransport {
    /// A transport with its own client: rustls with the platform's root certificates, no
    /// redirects followed (an S3 redirect names another region or endpoint: the request was
    /// signed for this one, so the 3xx is reported rather than re-sent).
    pub fn new() -> Result<Self> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| transport_setup(&format!("could not build the HTTP client: {}", describe(&e))))?;
        Ok(Self::with_client(client))
    }

    /// A transport on a client of your own (proxies, root certificates, connect timeouts…). The
    /// S3 store applies its per-attempt timeout whatever the client's settings.
    pub fn with_client(client: reqwest::Client) -> Self {
        ReqwestTransport { client }
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl HttpTransport for ReqwestTransport {
    async fn send(&self, request: HttpRequest) -> std::result::Result<HttpResponse, TransportError> {
        // Dropped before the answer (the store's timeout, a cancel): the request is aborted.
        match on_tokio(exchange(self.client.clone(), request)).await {
            Ok(answer) => answer,
            Err(NoAnswer::NoRuntime(why)) => Err(why.into()),
            Err(NoAnswer::Ended(why)) => Err(format!("the request task ended without an answer: {why}").into()),
        }
    }
}

/// One request and its whole answer. `Err` only when there is no HTTP response at all.
async fn exchange(client: reqwest::Client, request: HttpRequest) -> std::result::Result<HttpResponse, TransportError> {
    let method = reqwest::Method::from_bytes(request.method.as_bytes())
        .map_err(|_| format!("{} is not an HTTP method", request.method))?;
    let mut builder = client.request(method, &request.url);
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    if !matches!(request.method, "GET" | "HEAD") {
        builder = builder.body(request.body);
    }
    // A connect error is raised before any byte of the request is written: provably not sent.
    let response = builder
        .send()
        .await
        .map_err(|e| if e.is_connect() { TransportError::not_sent(describe(&e)) } else { describe(&e).into() })?;
    let status = response.status().as_u16();
    // Names come lowercased from the http crate; a value that is not visible ASCII cannot be one
    // fencepost reads, and is left out.
    let headers = response
        .headers()
        .iter()
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect();
    // A connection that dies mid-body fails here, like one that never answered.
    let body = response.bytes().await.map_err(|e| format!("reading the response body failed: {}", describe(&e)))?;
    Ok(HttpResponse { status, headers, body: Vec::from(body) })
}

/// An error with its chain of causes (reqwest's own text says little: "error sending request").
/// The URL it may name carries no credentials (requests are signed in headers).
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn transport_setup(message: &str) -> Error {
    Error::Storage(StorageFailure {
        code: Some("TransportSetup".into()),
        status: None,
        message: message.to_owned(),
        key: None,
    })
}
