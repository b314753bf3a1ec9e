//! The conformance suite in wasm, under Node (wasm-bindgen-test-runner): against the memory store,
//! and through `fetch` against SeaweedFS and moto (started by `scripts/test.sh`, which exports their
//! endpoints as FENCEPOST_SEAWEED_* / FENCEPOST_MOTO_*). Plus the S3-only checks: contention on a
//! real server, and a wrong secret.

#![cfg(target_arch = "wasm32")]

mod conformance;

use conformance::Ctx;
use fencepost::Shared;
use fencepost::store::s3::{Addressing, S3Config, S3Store};
use fencepost::store::{MemoryStore, ObjectStore, PrefixStore};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen(
    inline_js = "export function env(k) { const v = globalThis.process?.env?.[k]; return v === undefined ? undefined : String(v); }"
)]
extern "C" {
    fn env(key: &str) -> Option<String>;
}

/// A fresh namespace (unique prefix) on the named server, so cases never see each other's keys.
fn s3(server: &str, secret_override: Option<&str>) -> PrefixStore {
    let var = |name: &str| {
        env(&format!("FENCEPOST_{server}_{name}"))
            .unwrap_or_else(|| panic!("FENCEPOST_{server}_{name} is not set: run the suite through scripts/test.sh"))
    };
    // A fresh namespace per case: the suite runs against one bucket.
    let prefix = format!("t-{}/", (js_sys::Math::random() * 1e16) as u64);
    let secret = secret_override.map(str::to_owned).unwrap_or_else(|| var("SECRET_KEY"));
    let config = S3Config::builder(&var("ENDPOINT"), &var("BUCKET"), &var("REGION"), &var("ACCESS_KEY"), &secret)
        .addressing(Addressing::Path)
        .build()
        .expect("valid S3 config");
    // `S3Store::new`: in wasm, the host's `fetch` and clock.
    let store = S3Store::new(config).expect("the platform transport");
    PrefixStore::new(store, &prefix).expect("a valid prefix")
}

async fn run<F: std::future::Future<Output = ()>>(store: Shared<dyn ObjectStore>, case: fn(Ctx) -> F) {
    case(Ctx::new(store)).await;
}

macro_rules! wasm_cases {
    ($($name:ident),* $(,)?) => {
        mod memory {
            use super::*;
            $( #[wasm_bindgen_test] async fn $name() { run(Shared::new(MemoryStore::new()), conformance::$name).await } )*
        }
        mod seaweed {
            use super::*;
            $( #[wasm_bindgen_test] async fn $name() { run(Shared::new(s3("SEAWEED", None)), conformance::$name).await } )*
        }
        mod moto {
            use super::*;
            $( #[wasm_bindgen_test] async fn $name() { run(Shared::new(s3("MOTO", None)), conformance::$name).await } )*
        }
    };
}

for_each_case!(wasm_cases);

#[wasm_bindgen_test]
async fn seaweed_thirty_concurrent_claims_one_winner_ten_times() {
    conformance::s3::concurrent_claims_have_one_winner(Shared::new(s3("SEAWEED", None)), 30, 10).await;
}

#[wasm_bindgen_test]
async fn seaweed_ten_workers_twenty_increments_end_at_200() {
    conformance::s3::concurrent_increments_all_land(Shared::new(s3("SEAWEED", None)), 10, 20).await;
}

#[wasm_bindgen_test]
async fn seaweed_wrong_secret_is_signature_mismatch_without_leaking() {
    let secret = "wrong-secret-Zq8vKx3";
    conformance::s3::wrong_secret_is_signature_mismatch_without_leaking(
        Shared::new(s3("SEAWEED", Some(secret))),
        secret,
    )
    .await;
}
