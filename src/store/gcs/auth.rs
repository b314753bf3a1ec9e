//! Where the GCS store's OAuth access tokens come from: a fixed token, a [`TokenSource`] (the
//! caller's own, asked before each request), or a service account, whose token fencepost gets
//! itself: a JWT signed RS256 by an [`Rs256Signer`] (the runtime's WebCrypto in JS; natively the
//! `rsa` crate with feature `gcs-service-account`), exchanged at the account's token endpoint, and
//! cached until a minute before it expires. The wasm carries no RSA of its own.

use crate::base::sync::Lock;
use crate::base::sync::Shared;
use std::fmt;

use async_trait::async_trait;
use serde_json::Value;

use crate::codec::encoding::base64url;
use crate::codec::json::string_literal as literal;
use crate::store::http::{self, HttpRequest, HttpResponse};
use crate::store::{FailureKind, StoreError, StoreResult};
use crate::time::Timestamp;

/// An OAuth access token and, when known, when it stops working.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessToken {
    pub token: String,
    pub expires_at: Option<Timestamp>,
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken").field("token", &"[redacted]").field("expires_at", &self.expires_at).finish()
    }
}

/// Gives the GCS store an access token for each request (it may cache; fencepost asks every time).
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
pub trait TokenSource: crate::base::sync::MaybeSend + crate::base::sync::MaybeSync {
    async fn token(&self) -> StoreResult<AccessToken>;
}

/// Signs with a service account's RSA private key: RSASSA-PKCS1-v1_5 over SHA-256 (JWT `RS256`).
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
pub trait Rs256Signer: crate::base::sync::MaybeSend + crate::base::sync::MaybeSync {
    async fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String>;
}

/// What a service-account token request needs besides the key (which only the signer holds).
#[derive(Clone)]
pub struct ServiceAccount {
    pub client_email: String,
    /// `https://oauth2.googleapis.com/token` in Google's key files.
    pub token_uri: String,
    pub private_key_id: Option<String>,
    pub signer: Shared<dyn Rs256Signer>,
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

/// The scope fencepost asks for: read and write objects, nothing else.
const SCOPE: &str = "https://www.googleapis.com/auth/devstorage.read_write";
/// How long a requested token lives (Google's maximum), and how early a cached one is renewed.
const LIFETIME_SECS: f64 = 3600.0;
const RENEW_EARLY_SECS: f64 = 60.0;

/// How a GCS store authorizes its requests.
#[derive(Clone)]
pub(crate) enum Auth {
    /// No `Authorization` header (an emulator, a public bucket).
    Anonymous,
    Token(String),
    Source(Shared<dyn TokenSource>),
    Account {
        account: ServiceAccount,
        cached: Shared<Lock<Option<AccessToken>>>,
    },
}

impl Auth {
    pub(crate) fn service_account(account: ServiceAccount) -> Auth {
        Auth::Account { account, cached: Shared::default() }
    }

    pub(crate) fn cached(&self, now: Timestamp) -> Option<String> {
        let Auth::Account { cached, .. } = self else { return None };
        let token = cached.lock().clone()?;
        let fresh = token.expires_at.is_none_or(|at| now.plus_secs(RENEW_EARLY_SECS) < at);
        fresh.then_some(token.token)
    }

    pub(crate) fn remember(&self, token: AccessToken) {
        if let Auth::Account { cached, .. } = self {
            *cached.lock() = Some(token);
        }
    }
}

/// The token request for a service account: a JWT assertion (RFC 7523) signed by the account's key.
/// The token request, and the signed assertion it carries (a secret while it is valid).
pub(crate) async fn token_request(account: &ServiceAccount, now: Timestamp) -> StoreResult<(HttpRequest, String)> {
    // Whole seconds: Google reads NumericDates as integers.
    let iat = (now.as_millis_f64() / 1000.0).floor() as i64;
    // Written out rather than built as a `Value` (keys in canonical order).
    let kid = account.private_key_id.as_deref().map_or(String::new(), |k| format!(r#""kid":{},"#, literal(k)));
    let header = format!(r#"{{"alg":"RS256",{kid}"typ":"JWT"}}"#);
    let claims = format!(
        r#"{{"aud":{},"exp":{},"iat":{iat},"iss":{},"scope":"{SCOPE}"}}"#,
        literal(&account.token_uri),
        iat + LIFETIME_SECS as i64,
        literal(&account.client_email),
    );
    let signing_input = format!("{}.{}", base64url(header.as_bytes()), base64url(claims.as_bytes()));
    let signature = account.signer.sign(signing_input.as_bytes()).await.map_err(|e| {
        StoreError::new(FailureKind::Fatal, Some("SigningFailed"), None, format!("service account key: {e}"))
    })?;
    let assertion = format!("{signing_input}.{}", base64url(&signature));
    let body = format!(
        "grant_type={}&assertion={}",
        http::encode::encode_query_component("urn:ietf:params:oauth:grant-type:jwt-bearer"),
        assertion
    );
    let request = HttpRequest {
        method: "POST",
        url: account.token_uri.clone(),
        headers: vec![("content-type".to_owned(), "application/x-www-form-urlencoded".to_owned())],
        body: body.into_bytes(),
    };
    Ok((request, assertion))
}

/// The token endpoint's answer: `{"access_token": …, "expires_in": seconds}`, or its error
/// (`{"error": "invalid_grant", …}`) as a store error naming that code.
pub(crate) fn read_token(response: HttpResponse, now: Timestamp) -> StoreResult<AccessToken> {
    let what = "service account token";
    if !(200..=299).contains(&response.status) {
        let mut err = super::wire::failure(&response, &what);
        // A refused assertion is a configuration error whatever the status; a 5xx may pass.
        if err.kind != FailureKind::Indeterminate {
            err.kind = FailureKind::Fatal;
        }
        return Err(err);
    }
    let body = crate::codec::json::parse(&response.body).ok();
    let token = body.as_ref().and_then(|b| b.get("access_token")).and_then(Value::as_str).filter(|t| !t.is_empty());
    let Some(token) = token else {
        return Err(http::malformed(&what, "an answer without access_token"));
    };
    let expires_in = body.as_ref().and_then(|b| b.get("expires_in")).and_then(Value::as_f64);
    Ok(AccessToken { token: token.to_owned(), expires_at: expires_in.map(|s| now.plus_secs(s)) })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct FixedSignature;

    #[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
    #[cfg_attr(not(target_arch = "wasm32"), async_trait)]
    impl Rs256Signer for FixedSignature {
        async fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
            Ok(message.len().to_be_bytes().to_vec())
        }
    }

    #[test]
    fn the_assertion_is_a_jwt_for_the_token_endpoint() {
        let account = ServiceAccount {
            client_email: "svc@p.iam.gserviceaccount.com".into(),
            token_uri: "http://127.0.0.1:1/token".into(),
            private_key_id: Some("kid1".into()),
            signer: Shared::new(FixedSignature),
        };
        let now = Timestamp::parse_rfc3339("2026-01-01T00:00:00.5Z").unwrap();
        let (request, _) = futures::executor::block_on(token_request(&account, now)).unwrap();
        assert_eq!(request.url, "http://127.0.0.1:1/token");
        let body = String::from_utf8(request.body).unwrap();
        let assertion =
            body.strip_prefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=").unwrap();
        let parts: Vec<&str> = assertion.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0], base64url(br#"{"alg":"RS256","kid":"kid1","typ":"JWT"}"#));
        let claims = format!(
            r#"{{"aud":"http://127.0.0.1:1/token","exp":1767229200,"iat":1767225600,"iss":"svc@p.iam.gserviceaccount.com","scope":"{SCOPE}"}}"#
        );
        assert_eq!(parts[1], base64url(claims.as_bytes()));
    }

    #[test]
    fn tokens_are_read_and_cached_until_a_minute_before_they_expire() {
        let now = Timestamp::parse_rfc3339("2026-01-01T00:00:00Z").unwrap();
        let ok = HttpResponse {
            status: 200,
            headers: vec![],
            body: br#"{"access_token":"ya29.x","expires_in":3599}"#.to_vec(),
        };
        let token = read_token(ok, now).unwrap();
        assert_eq!(token.expires_at, Some(now.plus_secs(3599.0)));
        let auth = Auth::service_account(ServiceAccount {
            client_email: "e".into(),
            token_uri: "u".into(),
            private_key_id: None,
            signer: Shared::new(FixedSignature),
        });
        assert_eq!(auth.cached(now), None);
        auth.remember(token);
        assert_eq!(auth.cached(now.plus_secs(3500.0)).as_deref(), Some("ya29.x"));
        assert_eq!(auth.cached(now.plus_secs(3550.0)), None);
        let refused = HttpResponse {
            status: 400,
            headers: vec![],
            body: br#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.to_vec(),
        };
        let err = read_token(refused, now).unwrap_err();
        assert_eq!((err.kind, err.code.as_deref()), (FailureKind::Fatal, Some("invalid_grant")));
        assert_eq!(err.message, "service account token: Invalid JWT Signature.");
    }
}
