//! The conformance suite natively, through `ReqwestTransport` (feature `reqwest`), against the Azure
//! Blob emulator (Azurite) and the GCS emulator (fake-gcs-server): `scripts/test.sh` starts them and
//! exports FENCEPOST_AZURITE_* (ENDPOINT, ACCOUNT, KEY, CONTAINER) and FENCEPOST_FAKEGCS_*
//! (ENDPOINT, BUCKET). Without them each test prints a note and passes. Plus what only a real
//! server shows: a 20-way claim race, concurrent increments, a wrong key (Azure), a service
//! account's token exchange and its refusal (GCS, against a token endpoint played here).

#![cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]

mod conformance;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use conformance::Ctx;
use fencepost::Error;
use fencepost::store::azure::{AzureConfig, AzureStore};
use fencepost::store::gcs::{GcsConfig, GcsStore};
use fencepost::store::{ObjectStore, PrefixStore};
use serde_json::{Value, json};

fn var(name: &str) -> Option<String> {
    let value = std::env::var(name).ok();
    if value.is_none() {
        println!("skipped: {name} is not set (scripts/test.sh starts the servers and sets it)");
    }
    value
}

/// A unique prefix per case, so cases never see each other's keys.
fn fresh_prefix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
    format!("native-{nanos:x}-{}-{}/", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn azure_with_key(key: Option<&str>) -> Option<Arc<dyn ObjectStore>> {
    let endpoint = var("FENCEPOST_AZURITE_ENDPOINT")?;
    let (account, container) = (var("FENCEPOST_AZURITE_ACCOUNT")?, var("FENCEPOST_AZURITE_CONTAINER")?);
    let key = match key {
        Some(k) => k.to_owned(),
        None => var("FENCEPOST_AZURITE_KEY")?,
    };
    let config = AzureConfig::builder(&account, &container).endpoint(endpoint).account_key(key).build().unwrap();
    let store = AzureStore::new(config).unwrap();
    Some(Arc::new(PrefixStore::new(Arc::new(store), &fresh_prefix()).unwrap()))
}

fn azure() -> Option<Arc<dyn ObjectStore>> {
    azure_with_key(None)
}

fn gcs_config() -> Option<fencepost::store::gcs::GcsConfigBuilder> {
    let (endpoint, bucket) = (var("FENCEPOST_FAKEGCS_ENDPOINT")?, var("FENCEPOST_FAKEGCS_BUCKET")?);
    // This suite's own bucket (start.sh makes one per suite: the emulator scans a bucket per request).
    Some(GcsConfig::builder(&format!("{bucket}-native")).endpoint(endpoint))
}

fn gcs_from(config: fencepost::store::gcs::GcsConfigBuilder) -> Arc<dyn ObjectStore> {
    let store = GcsStore::new(config.build().unwrap()).unwrap();
    Arc::new(PrefixStore::new(Arc::new(store), &fresh_prefix()).unwrap())
}

fn gcs() -> Option<Arc<dyn ObjectStore>> {
    gcs_config().map(gcs_from)
}

fn run<F: std::future::Future<Output = ()>>(store: Option<Arc<dyn ObjectStore>>, case: fn(Ctx) -> F) {
    if let Some(store) = store {
        futures::executor::block_on(case(Ctx::new(store)));
    }
}

/// fake-gcs-server ignores `ifGenerationNotMatch` on a download (Google's service answers 304): the
/// store's conditional reads still answer "not modified", by comparing the generation it sent.
fn run_fake_gcs<F: std::future::Future<Output = ()>>(store: Option<Arc<dyn ObjectStore>>, case: fn(Ctx) -> F) {
    if let Some(store) = store {
        let cx = Ctx { server_answers_304: false, ..Ctx::new(store) };
        futures::executor::block_on(case(cx));
    }
}

macro_rules! native_cloud_cases {
    ($($name:ident),* $(,)?) => {
        mod azurite {
            use super::*;
            $( #[test] fn $name() { run(azure(), conformance::$name) } )*
        }
        mod fakegcs {
            use super::*;
            $( #[test] fn $name() { run_fake_gcs(gcs(), conformance::$name) } )*
        }
    };
}

for_each_case!(native_cloud_cases);

#[test]
fn azurite_twenty_concurrent_claims_one_winner_five_times() {
    let Some(store) = azure() else { return };
    futures::executor::block_on(conformance::s3::concurrent_claims_have_one_winner(store, 20, 5));
}

#[test]
fn fakegcs_twenty_concurrent_claims_one_winner_five_times() {
    let Some(store) = gcs() else { return };
    futures::executor::block_on(conformance::s3::concurrent_claims_have_one_winner(store, 20, 5));
}

#[test]
fn azurite_and_fakegcs_five_workers_ten_increments_end_at_50() {
    for store in [azure(), gcs()].into_iter().flatten() {
        futures::executor::block_on(conformance::s3::concurrent_increments_all_land(store, 5, 10));
    }
}

/// A wrong account key: a typed 403 naming Azure's code, and neither the key nor the signature
/// in what the error shows.
#[test]
fn azurite_wrong_key_is_authentication_failed_without_leaking() {
    let wrong = "d3Jvbmcta2V5LXRoYXQtaXMtbG9uZy1lbm91Z2gtdG8tbG9vay1yZWFs";
    let Some(store) = azure_with_key(Some(wrong)) else { return };
    let db = conformance::s3::real_time_db(store);
    let e = futures::executor::block_on(db.claim("k", json!(1))).unwrap_err();
    let Error::Storage(failure) = &e else { panic!("expected a storage error, got {e}") };
    // Azure says AuthenticationFailed; Azurite, AuthorizationFailure.
    let code = failure.code.as_deref();
    assert!(
        matches!(code, Some("AuthenticationFailed" | "AuthorizationFailure")) && failure.status == Some(403),
        "{e}"
    );
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(wrong) && !shown.contains("SharedKey"), "{shown}");
}

/// A service account's token exchange, as Google's token endpoint does it, played on 127.0.0.1:
/// the JWT assertion's RS256 signature is checked against the registered key's public half; a
/// valid one gets `tok-<n>`, any other `invalid_grant`. Returns the endpoint and the count of
/// token requests served.
#[cfg(feature = "gcs-service-account")]
mod token_endpoint {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use rsa::pkcs1v15::{Signature, VerifyingKey};
    use rsa::pkcs8::DecodePrivateKey;
    use rsa::signature::Verifier;

    pub fn start(registered_pem: &str) -> (String, Arc<AtomicUsize>) {
        let key = rsa::RsaPrivateKey::from_pkcs8_pem(registered_pem).unwrap();
        let verifier = VerifyingKey::<sha2::Sha256>::new(key.to_public_key());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let served = Arc::new(AtomicUsize::new(0));
        let count = served.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let body = String::from_utf8_lossy(&body).into_owned();
                let assertion = body.split("assertion=").nth(1).unwrap_or("");
                let parts: Vec<&str> = assertion.split('.').collect();
                let valid = parts.len() == 3 && {
                    let signature = base64url_decode(parts[2]);
                    let signed = format!("{}.{}", parts[0], parts[1]);
                    Signature::try_from(signature.as_slice())
                        .is_ok_and(|s| verifier.verify(signed.as_bytes(), &s).is_ok())
                };
                let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                let (status, json) =
                    if valid && body.starts_with("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&") {
                        ("200 OK", format!(r#"{{"access_token":"tok-{n}","expires_in":3599,"token_type":"Bearer"}}"#))
                    } else {
                        (
                            "400 Bad Request",
                            r#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#.to_owned(),
                        )
                    };
                let mut stream = reader.into_inner();
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
                    json.len()
                );
            }
        });
        (url, served)
    }

    fn base64url_decode(text: &str) -> Vec<u8> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let (mut out, mut acc, mut bits) = (Vec::new(), 0u32, 0);
        for c in text.bytes() {
            let Some(v) = ALPHABET.iter().position(|a| *a == c) else { break };
            acc = acc << 6 | v as u32;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        out
    }
}

/// A service account key (fencepost signs the JWT with the `rsa` crate): one token request for
/// many operations (cached until it nears expiry); a key the endpoint does not know gives a typed
/// `invalid_grant` naming nothing secret.
#[cfg(feature = "gcs-service-account")]
#[test]
fn fakegcs_service_account_tokens_are_fetched_once_and_refusals_are_typed() {
    use fencepost::store::gcs::ServiceAccount;
    use std::sync::atomic::Ordering;
    let Some(config) = gcs_config() else { return };
    let key_file = |name: &str, token_uri: &str| {
        let text = std::fs::read_to_string(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json["token_uri"] = json!(token_uri);
        (json["private_key"].as_str().unwrap().to_owned(), json.to_string())
    };
    let (registered, _) = key_file("gcs-service-account.json", "");
    let (url, served) = token_endpoint::start(&registered);

    let (_, text) = key_file("gcs-service-account.json", &url);
    let store = gcs_from(config.clone().service_account(ServiceAccount::from_json(&text).unwrap()));
    let db = conformance::s3::real_time_db(store);
    futures::executor::block_on(async {
        assert!(db.claim("sa/tick", json!(1)).await.unwrap().won);
        assert!(!db.claim("sa/tick", json!(2)).await.unwrap().won);
        assert_eq!(db.doc::<Value>("sa/doc").unwrap().get().await.unwrap(), None);
    });
    assert_eq!(served.load(Ordering::SeqCst), 1, "one token request, then the cached token");

    let (_, text) = key_file("gcs-service-account-unregistered.json", &url);
    let store = gcs_from(config.service_account(ServiceAccount::from_json(&text).unwrap()));
    let e = futures::executor::block_on(conformance::s3::real_time_db(store).claim("sa/other", json!(1))).unwrap_err();
    let Error::Storage(failure) = &e else { panic!("expected a storage error, got {e}") };
    assert_eq!((failure.code.as_deref(), failure.status), (Some("invalid_grant"), Some(400)), "{e}");
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains("PRIVATE KEY") && !shown.contains("assertion"), "{shown}");
}
