//! The conformance suite in wasm, under Node (wasm-bindgen-test-runner): against the memory store,
//! and through `fetch` against SeaweedFS and moto (started by `scripts/test.sh`, which exports their
//! endpoints as FENCEPOST_SEAWEED_* / FENCEPOST_MOTO_*). Plus the S3-only checks: contention on a
//! real server, and a wrong secret.

#![cfg(target_arch = "wasm32")]

mod conformance;

use std::rc::Rc;

use conformance::Ctx;
use fencepost::store::s3::{Addressing, FetchTransport, S3Config, S3Store};
use fencepost::store::{MemoryStore, ObjectStore};
use fencepost::{Error, Fencepost, Options, RetryPolicy, SystemClock};
use futures::future::join_all;
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen(
    inline_js = "export function env(k) { const v = globalThis.process?.env?.[k]; return v === undefined ? undefined : String(v); }"
)]
extern "C" {
    fn env(key: &str) -> Option<String>;
}

/// A fresh namespace (unique prefix) on the named server, so cases never see each other's keys.
fn s3(server: &str, secret_override: Option<&str>) -> S3Store {
    let var = |name: &str| {
        env(&format!("FENCEPOST_{server}_{name}"))
            .unwrap_or_else(|| panic!("FENCEPOST_{server}_{name} is not set: run the suite through scripts/test.sh"))
    };
    // A fresh namespace per case: the suite runs against one bucket.
    let prefix = format!("t-{}/", (js_sys::Math::random() * 1e16) as u64);
    let secret = secret_override.map(str::to_owned).unwrap_or_else(|| var("SECRET_KEY"));
    let config = S3Config::builder(&var("ENDPOINT"), &var("BUCKET"), &var("REGION"), &var("ACCESS_KEY"), &secret)
        .prefix(&prefix)
        .addressing(Addressing::Path)
        .build()
        .expect("valid S3 config");
    S3Store::new(config, Rc::new(FetchTransport::new()), Rc::new(SystemClock))
}

async fn run<F: std::future::Future<Output = ()>>(store: Rc<dyn ObjectStore>, case: fn(Ctx) -> F) {
    case(Ctx::new(store)).await;
}

macro_rules! wasm_cases {
    ($($name:ident),* $(,)?) => {
        mod memory {
            use super::*;
            $( #[wasm_bindgen_test] async fn $name() { run(Rc::new(MemoryStore::new()), conformance::$name).await } )*
        }
        mod seaweed {
            use super::*;
            $( #[wasm_bindgen_test] async fn $name() { run(Rc::new(s3("SEAWEED", None)), conformance::$name).await } )*
        }
        mod moto {
            use super::*;
            $( #[wasm_bindgen_test] async fn $name() { run(Rc::new(s3("MOTO", None)), conformance::$name).await } )*
        }
    };
}

for_each_case!(wasm_cases);

fn real_time_db(store: Rc<dyn ObjectStore>) -> Fencepost {
    let retry = RetryPolicy { max_attempts: 8, base_delay: 0.02, max_delay: 0.5 };
    Fencepost::new(store, Options { retry, ..Options::default() }).unwrap()
}

#[wasm_bindgen_test]
async fn seaweed_thirty_concurrent_claims_one_winner_ten_times() {
    let store: Rc<dyn ObjectStore> = Rc::new(s3("SEAWEED", None));
    for round in 0..10 {
        let dbs: Vec<_> = (0..30).map(|_| real_time_db(store.clone())).collect();
        let key = format!("tick/{round}");
        let results = join_all(dbs.iter().enumerate().map(|(i, db)| db.claim(&key, json!({"worker": i})))).await;
        let results: Vec<_> = results.into_iter().map(|r| r.expect("claim")).collect();
        let winners: Vec<_> = results.iter().filter(|c| c.won).collect();
        assert_eq!(winners.len(), 1, "round {round}");
        assert!(results.iter().all(|c| c.value == winners[0].value));
    }
}

#[wasm_bindgen_test]
async fn seaweed_ten_workers_twenty_increments_end_at_200() {
    let store: Rc<dyn ObjectStore> = Rc::new(s3("SEAWEED", None));
    let workers: Vec<_> = (0..10).map(|_| real_time_db(store.clone())).collect();
    join_all(workers.iter().map(|db| async move {
        let doc = db.doc("counter").unwrap();
        for _ in 0..20 {
            let mut inc = fencepost::transition(|v| Ok(json!(v.as_i64().unwrap_or(0) + 1)));
            doc.update(&mut *inc, Some(json!(0)), 1000).await.expect("update");
        }
    }))
    .await;
    let value = workers[0].doc("counter").unwrap().get().await.unwrap().unwrap().value;
    assert_eq!(value, json!(200));
}

#[wasm_bindgen_test]
async fn seaweed_wrong_secret_is_signature_mismatch_without_leaking() {
    let secret = "wrong-secret-Zq8vKx3";
    let db = real_time_db(Rc::new(s3("SEAWEED", Some(secret))));
    let e = db.claim("k", json!(1)).await.unwrap_err();
    let Error::Storage(failure) = &e else { panic!("expected a storage error, got {e}") };
    assert_eq!(failure.code.as_deref(), Some("SignatureDoesNotMatch"), "{e}");
    assert_eq!(failure.status, Some(403));
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(!shown.contains("Signature="), "{shown}");
}
