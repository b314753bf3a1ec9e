//! The native RS256 signer for service accounts (feature `gcs-service-account`): the `rsa` crate
//! (RustCrypto), and reading Google's JSON key files.

use async_trait::async_trait;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{SignatureEncoding, Signer};
use serde_json::Value;
use sha2::Sha256;

use super::{Rs256Signer, ServiceAccount};
use crate::base::error::{Error, Result};

/// Signs with an RSA private key in PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, as in Google's key
/// files). `Debug` does not show the key.
pub struct RsaSigner(SigningKey<Sha256>);

impl RsaSigner {
    pub fn from_pem(pem: &str) -> Result<Self> {
        let key = rsa::RsaPrivateKey::from_pkcs8_pem(pem)
            .map_err(|_| Error::invalid("the service account's private_key is not an RSA key in PKCS#8 PEM"))?;
        Ok(RsaSigner(SigningKey::new(key)))
    }
}

impl std::fmt::Debug for RsaSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RsaSigner([redacted])")
    }
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl Rs256Signer for RsaSigner {
    async fn sign(&self, message: &[u8]) -> std::result::Result<Vec<u8>, String> {
        Ok(self.0.sign(message).to_vec())
    }
}

impl ServiceAccount {
    /// From a service account's JSON key file (what `GOOGLE_APPLICATION_CREDENTIALS` names):
    /// `client_email`, `private_key`, `private_key_id`, `token_uri`.
    pub fn from_json(key_file: &str) -> Result<Self> {
        let invalid = |why: &str| Error::invalid(format!("service account key file: {why}"));
        let key: Value = serde_json::from_str(key_file).map_err(|_| invalid("not JSON"))?;
        let field = |name: &str| key.get(name).and_then(Value::as_str).map(str::to_owned);
        let pem = field("private_key").ok_or_else(|| invalid("no private_key"))?;
        Ok(ServiceAccount {
            client_email: field("client_email").ok_or_else(|| invalid("no client_email"))?,
            token_uri: field("token_uri").unwrap_or_else(|| "https://oauth2.googleapis.com/token".to_owned()),
            private_key_id: field("private_key_id"),
            signer: crate::base::sync::Shared::new(RsaSigner::from_pem(&pem)?),
        })
    }
}
