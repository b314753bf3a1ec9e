//! The conformance suite natively, through `ReqwestTransport` (feature `reqwest`), against
//! SeaweedFS and moto: `scripts/test.sh` starts them and exports FENCEPOST_SEAWEED_* and
//! FENCEPOST_MOTO_* (ENDPOINT, BUCKET, ACCESS_KEY, SECRET_KEY, REGION). Without them each test
//! prints a note and passes: `cargo test --features reqwest` stays usable without servers.
//!
//! The cases run on `futures::executor::block_on`, no tokio runtime of their own: the transport
//! brings its background runtime. Plus what only a real server shows: contention, a wrong secret,
//! and a server that never answers (the store's per-attempt timeout).

#![cfg(all(feature = "reqwest", not(target_arch = "wasm32")))]

mod conformance;

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use conformance::Ctx;
use fencepost::store::PrefixStore;
use fencepost::store::s3::{Addressing, S3Config, S3Store};
use fencepost::{Error, Fencepost, Options, RetryPolicy};
use serde_json::{Value, json};

/// The server's settings, or `None` (with a note) when the suite runs without servers.
fn server_env(server: &str) -> Option<[String; 5]> {
    let var = |name: &str| std::env::var(format!("FENCEPOST_{server}_{name}")).ok();
    match (var("ENDPOINT"), var("BUCKET"), var("REGION"), var("ACCESS_KEY"), var("SECRET_KEY")) {
        (Some(e), Some(b), Some(r), Some(a), Some(s)) => Some([e, b, r, a, s]),
        _ => {
            println!("skipped: FENCEPOST_{server}_* is not set (scripts/test.sh starts the servers and sets it)");
            None
        }
    }
}

/// A fresh namespace (unique prefix) on the named server, so cases never see each other's keys.
fn s3(server: &str, secret_override: Option<&str>) -> Option<PrefixStore> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let [endpoint, bucket, region, access_key, secret] = server_env(server)?;
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
    let prefix = format!("native-{nanos:x}-{}-{}/", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let config = S3Config::builder(&endpoint, &bucket, &region, &access_key, secret_override.unwrap_or(&secret))
        .addressing(Addressing::Path)
        .build()
        .expect("valid S3 config");
    // `S3Store::new`: natively, the reqwest transport (feature `reqwest`) and the system clock.
    let store = S3Store::new(config).expect("an HTTP client");
    Some(PrefixStore::new(Arc::new(store), &prefix).expect("a valid prefix"))
}

fn run<F: std::future::Future<Output = ()>>(server: &str, case: fn(Ctx) -> F) {
    if let Some(store) = s3(server, None) {
        futures::executor::block_on(case(Ctx::new(Arc::new(store))));
    }
}

macro_rules! native_s3_cases {
    ($($name:ident),* $(,)?) => {
        mod seaweed {
            use super::*;
            $( #[test] fn $name() { run("SEAWEED", conformance::$name) } )*
        }
        mod moto {
            use super::*;
            $( #[test] fn $name() { run("MOTO", conformance::$name) } )*
        }
    };
}

for_each_case!(native_s3_cases);

#[test]
fn seaweed_twenty_concurrent_claims_one_winner_five_times() {
    let Some(store) = s3("SEAWEED", None) else { return };
    futures::executor::block_on(conformance::s3::concurrent_claims_have_one_winner(Arc::new(store), 20, 5));
}

#[test]
fn seaweed_five_workers_ten_increments_end_at_50() {
    let Some(store) = s3("SEAWEED", None) else { return };
    futures::executor::block_on(conformance::s3::concurrent_increments_all_land(Arc::new(store), 5, 10));
}

#[test]
fn seaweed_wrong_secret_is_signature_mismatch_without_leaking() {
    let secret = "wrong-secret-Zq8vKx3";
    let Some(store) = s3("SEAWEED", Some(secret)) else { return };
    futures::executor::block_on(conformance::s3::wrong_secret_is_signature_mismatch_without_leaking(
        Arc::new(store),
        secret,
    ));
}

/// A server that accepts connections and reads requests but never answers: each attempt must be
/// cut off by the store's timeout (0.3 s here), and the operation fail after its retries instead
/// of hanging. Needs no test server.
#[test]
fn an_unanswering_server_is_cut_off_by_the_per_attempt_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut stream in listener.incoming().flatten().take(16) {
            let mut buf = [0u8; 4096];
            let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
            let _ = stream.read(&mut buf);
            held.push(stream); // kept open, never answered
        }
        std::thread::sleep(Duration::from_secs(30));
    });
    let config = S3Config::builder(&endpoint, "b", "us-east-1", "key-id", "a-secret-key").timeout(0.3).build().unwrap();
    let store = S3Store::new(config).unwrap();
    let retry = RetryPolicy { max_attempts: 3, base_delay: 0.01, max_delay: 0.02 };
    let db = Fencepost::new(store, Options { retry, ..Options::default() }).unwrap();
    let started = Instant::now();
    let e = futures::executor::block_on(db.doc::<Value>("k").unwrap().get()).unwrap_err();
    let took = started.elapsed();
    assert!(matches!(&e, Error::Storage(f) if f.message.contains("no answer within 0.3 s")), "{e}");
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(5), "3 attempts of 0.3 s, took {took:?}");
}

/// Inside a tokio runtime of the caller's (current-thread, as a single-threaded service would
/// run fencepost), requests run on that runtime.
#[test]
fn works_inside_a_current_thread_tokio_runtime() {
    let Some(store) = s3("MOTO", None) else { return };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let db = conformance::s3::real_time_db(Arc::new(store));
    runtime.block_on(async {
        assert!(db.claim("cron/tick", json!("a")).await.unwrap().won);
        assert!(!db.claim("cron/tick", json!("b")).await.unwrap().won);
    });
}
