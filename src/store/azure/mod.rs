//! The Azure Blob Storage store: block blobs in one container, over the Blob REST API and a
//! pluggable HTTP transport (the host's `fetch` in wasm, reqwest natively with feature `reqwest`).
//!
//! Azure's conditional writes are exact: `If-None-Match: *` creates only, `If-Match: <etag>`
//! replaces only that version, on PUT and on DELETE. Write tokens ride in blob metadata
//! (`x-ms-meta-fencepost_token`…: Azure's metadata names are C# identifiers, so `_` where S3 has
//! `-`); the bodies are the same bytes as on every other store. Authorization is Shared Key (the
//! account key, HMAC-SHA256) or a SAS token. Sans-IO like the S3 store: `wire` builds requests and
//! reads responses as pure functions, `sign` is the signature; the store glues them to the
//! transport. One call is one request (a list, one per page).

mod sign;
mod wire;

use crate::base::sync::Shared;
use std::fmt;

use super::http::{DEFAULT_TIMEOUT, Endpoint, HttpClient, HttpRequest, HttpResponse, HttpTransport, Protocol};
use super::{Reply, Request, StoreResult};
use crate::base::error::{Error, Result, quoted};
use crate::time::{Clock, Timestamp};

/// How requests are authorized.
#[derive(Clone)]
enum Credential {
    /// The account key, decoded.
    SharedKey(Shared<[u8]>),
    /// A SAS token (the query string, without a leading `?`).
    Sas(String),
}

/// Where and as whom to talk to Azure Blob Storage. Built (and validated) by
/// [`AzureConfig::builder`]; `Debug` never shows the key or the SAS token.
#[derive(Clone)]
pub struct AzureConfig {
    account: String,
    container: String,
    endpoint: String,
    parsed: Endpoint,
    credential: Credential,
    /// The key or SAS token as given (and a SAS's signature decoded): never in an error message.
    secrets: Vec<String>,
    timeout: f64,
}

impl AzureConfig {
    /// A config for `container` of storage `account`; give a key or a SAS token on the builder.
    pub fn builder(account: &str, container: &str) -> AzureConfigBuilder {
        AzureConfigBuilder {
            account: account.to_owned(),
            container: container.to_owned(),
            endpoint: None,
            account_key: None,
            sas_token: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    pub fn account(&self) -> &str {
        &self.account
    }

    pub fn container(&self) -> &str {
        &self.container
    }

    /// The Blob service URL (`https://{account}.blob.core.windows.net` unless one was given).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Seconds an attempt may go unanswered.
    pub fn timeout(&self) -> f64 {
        self.timeout
    }
}

impl fmt::Debug for AzureConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let credential = match self.credential {
            Credential::SharedKey(_) => "shared key [redacted]",
            Credential::Sas(_) => "SAS token [redacted]",
        };
        f.debug_struct("AzureConfig")
            .field("account", &self.account)
            .field("container", &self.container)
            .field("endpoint", &self.endpoint)
            .field("credential", &credential)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Optional settings of an [`AzureConfig`]; [`AzureConfigBuilder::build`] validates everything.
/// Deliberately not `Debug`: it holds the secret.
#[derive(Clone)]
pub struct AzureConfigBuilder {
    account: String,
    container: String,
    endpoint: Option<String>,
    account_key: Option<String>,
    sas_token: Option<String>,
    timeout: f64,
}

impl AzureConfigBuilder {
    /// The Blob service URL: Azurite's `http://127.0.0.1:10000/devstoreaccount1`, a private
    /// endpoint, a sovereign cloud. Default `https://{account}.blob.core.windows.net`.
    pub fn endpoint(mut self, endpoint: impl Into<String>) -> Self {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// The storage account key (base64, as the portal shows it): Shared Key authorization.
    pub fn account_key(mut self, key: impl Into<String>) -> Self {
        self.account_key = Some(key.into());
        self
    }

    /// A SAS token (with or without its leading `?`) granting read, write, delete and list on the
    /// container.
    pub fn sas_token(mut self, token: impl Into<String>) -> Self {
        self.sas_token = Some(token.into());
        self
    }

    /// Seconds an attempt may go unanswered (default 30, must be > 0).
    pub fn timeout(mut self, secs: f64) -> Self {
        self.timeout = secs;
        self
    }

    pub fn build(self) -> Result<AzureConfig> {
        let account = self.account;
        if account.is_empty() || !account.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
            return Err(Error::invalid(format!(
                "Azure account {} must be lowercase letters and digits",
                quoted(&account)
            )));
        }
        // Container names: 3-63 of lowercase letters, digits and single dashes, not at an end.
        let c = &self.container;
        let container_ok = (3..=63).contains(&c.len())
            && c.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !c.starts_with('-')
            && !c.ends_with('-')
            && crate::base::text::find(c, "--").is_none();
        if !container_ok {
            return Err(Error::invalid(format!(
                "Azure container {} must be 3-63 lowercase letters, digits and single dashes",
                quoted(c)
            )));
        }
        let endpoint = self.endpoint.unwrap_or_else(|| format!("https://{account}.blob.core.windows.net"));
        let parsed = Endpoint::parse("Azure", &endpoint)?;
        let (credential, secrets): (_, Vec<String>) = match (self.account_key, self.sas_token) {
            (Some(key), None) => {
                let decoded = crate::codec::encoding::base64_decode(key.trim())
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| Error::invalid("Azure account key must be the base64 key the portal shows"))?;
                (Credential::SharedKey(decoded.into()), vec![key])
            }
            (None, Some(token)) => {
                let sas = token.trim().trim_start_matches('?').to_owned();
                let allowed = |b: u8| b.is_ascii_alphanumeric() || b"%&=-._~:+/,".contains(&b);
                if sas.is_empty() || !sas.bytes().all(allowed) {
                    // Never echo the token itself.
                    return Err(Error::invalid("Azure SAS token must be a URL query string (sv=…&sig=…)"));
                }
                // The signature also on its own, as a server may echo it: as sent, and decoded (`+`,
                // `/`, `=` as themselves).
                let mut secrets = vec![sas.clone()];
                if let Some(sig) = sas.split('&').find_map(|p| p.strip_prefix("sig=")).filter(|s| !s.is_empty()) {
                    let decoded = crate::store::http::encode::percent_decode(sig);
                    secrets.push(sig.to_owned());
                    if decoded != sig {
                        secrets.push(decoded);
                    }
                }
                (Credential::Sas(sas), secrets)
            }
            (Some(_), Some(_)) => return Err(Error::invalid("give Azure an account key or a SAS token, not both")),
            (None, None) => return Err(Error::invalid("Azure needs an account key or a SAS token")),
        };
        crate::store::http::validate_timeout("Azure", self.timeout)?;
        Ok(AzureConfig {
            account,
            container: self.container,
            endpoint,
            parsed,
            credential,
            secrets,
            timeout: self.timeout,
        })
    }
}

/// An [`ObjectStore`](crate::store::ObjectStore) on Azure Blob Storage. Clones share the transport, the clock and the latest
/// server time.
#[derive(Clone)]
pub struct AzureStore {
    config: AzureConfig,
    http: HttpClient,
}

impl AzureStore {
    /// `clock` dates the requests (Azure refuses a Shared Key request more than 15 minutes off)
    /// and times the attempts out.
    /// On the platform's transport (the host's `fetch` in wasm; natively `ReqwestTransport`, feature
    /// `reqwest`) and the system clock.
    #[cfg(any(target_arch = "wasm32", feature = "reqwest"))]
    pub fn new(config: AzureConfig) -> Result<Self> {
        let (transport, clock) = crate::store::http::platform()?;
        Ok(Self::with_transport(config, transport, clock))
    }

    /// On a transport of your own; `clock` dates the signatures and times the attempts out.
    pub fn with_transport(config: AzureConfig, transport: Shared<dyn HttpTransport>, clock: Shared<dyn Clock>) -> Self {
        let http = HttpClient::new(transport, clock, config.timeout);
        AzureStore { config, http }
    }

    pub fn config(&self) -> &AzureConfig {
        &self.config
    }

    /// Every operation's one request (through the HTTP kit's one call).
    async fn call(&self, request: Request<'_>) -> StoreResult<Reply> {
        self.http.call(&self.config, request, None).await
    }

    /// Azure honours `If-Match` on Delete Blob.
    fn deletes_conditionally(&self) -> bool {
        true
    }
}

/// Azure's requests, dated and authorized, and its answers. No secret (the key, the SAS token, the
/// signature) appears in an error.
impl Protocol for AzureConfig {
    fn build(
        &self,
        request: &Request<'_>,
        now: Timestamp,
        _token: Option<&str>,
    ) -> StoreResult<(HttpRequest, Vec<String>)> {
        let mut blob = wire::request(request);
        blob.headers.push(("x-ms-date".to_owned(), now.to_http_date()));
        blob.headers.push(("x-ms-version".to_owned(), wire::API_VERSION.to_owned()));
        let path = blob.path(&self.parsed, &self.container);
        let mut secrets = self.secrets.clone();
        let sas = match &self.credential {
            Credential::SharedKey(key) => {
                let sts = sign::string_to_sign(&sign::ToSign {
                    method: blob.method,
                    headers: &blob.headers,
                    content_length: blob.body.len(),
                    account: &self.account,
                    path: &path,
                    query: &blob.query,
                });
                let (authorization, signature) = sign::authorization(&self.account, key, &sts);
                blob.headers.push(("authorization".to_owned(), authorization));
                secrets.push(signature);
                None
            }
            Credential::Sas(sas) => Some(sas.as_str()),
        };
        Ok((blob.to_http(&self.parsed, &path, sas), secrets))
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

impl fmt::Debug for AzureStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzureStore").field("config", &self.config).finish_non_exhaustive()
    }
}

// Azure has no "start after" for listings: the objects layer applies `start_after` to the pages
// as they come, so a listing that starts late still reads from the prefix's start.
crate::store::http::http_object_store!(AzureStore);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sas_signature_is_kept_out_of_messages_as_given_and_unescaped() {
        let sas = "sv=2022-11-02&sp=rwdl&sig=ab%2Bcd%2fef%3D";
        let config = AzureConfig::builder("acct", "box").sas_token(sas).build().unwrap();
        assert_eq!(config.secrets, [sas, "ab%2Bcd%2fef%3D", "ab+cd/ef="]);
        // A signature without escapes is the token and itself; a stray `%` stays as it is.
        let plain = AzureConfig::builder("acct", "box").sas_token("sv=1&sig=abc").build().unwrap();
        assert_eq!(plain.secrets, ["sv=1&sig=abc", "abc"]);
        assert_eq!(crate::store::http::encode::percent_decode("a%2-%zz%41%"), "a%2-%zzA%");
    }
}
