//! The S3-only checks, written once for every S3 transport (fetch in wasm, reqwest natively): what
//! only a real server shows — contention on one key, a counter under many writers, a wrong secret.

use fencepost::store::ObjectStore;
use fencepost::{Error, Fencepost, Options, RetryPolicy, Shared, UpdateOptions};
use futures::future::join_all;
use serde_json::{Value, json};

/// Real time and a generous retry budget: these cases contend on purpose.
pub fn real_time_db(store: Shared<dyn ObjectStore>) -> Fencepost {
    let retry = RetryPolicy { max_attempts: 8, base_delay: 0.02, max_delay: 0.5 };
    Fencepost::new(store, Options { retry, ..Options::default() }).unwrap()
}

/// `racers` concurrent claims of one key, `rounds` times: exactly one winner each, all agree.
pub async fn concurrent_claims_have_one_winner(store: Shared<dyn ObjectStore>, racers: usize, rounds: usize) {
    for round in 0..rounds {
        let dbs: Vec<_> = (0..racers).map(|_| real_time_db(store.clone())).collect();
        let key = format!("tick/{round}");
        let results = join_all(dbs.iter().enumerate().map(|(i, db)| db.claim(&key, json!({"worker": i})))).await;
        let results: Vec<_> = results.into_iter().map(|r| r.expect("claim")).collect();
        let winners: Vec<_> = results.iter().filter(|c| c.won).collect();
        assert_eq!(winners.len(), 1, "round {round}");
        assert!(results.iter().all(|c| c.value == winners[0].value));
    }
}

/// `workers` writers each incrementing one counter `each` times: none is lost.
pub async fn concurrent_increments_all_land(store: Shared<dyn ObjectStore>, workers: usize, each: usize) {
    let dbs: Vec<_> = (0..workers).map(|_| real_time_db(store.clone())).collect();
    join_all(dbs.iter().map(|db| async move {
        let doc = db.doc("counter").unwrap();
        for _ in 0..each {
            let inc = |v: Value| Ok(json!(v.as_i64().unwrap_or(0) + 1));
            let options = UpdateOptions { create: Some(json!(0)), max_attempts: 1000, ..Default::default() };
            doc.update_with(options, inc).await.expect("update");
        }
    }))
    .await;
    let value = dbs[0].doc::<Value>("counter").unwrap().get().await.unwrap().unwrap().value;
    assert_eq!(value, json!(workers * each));
}

/// A store signed with a wrong `secret`: a typed SignatureDoesNotMatch, and neither the secret nor
/// the signature in what the error shows.
pub async fn wrong_secret_is_signature_mismatch_without_leaking(store: Shared<dyn ObjectStore>, secret: &str) {
    let db = real_time_db(store);
    let e = db.claim("k", json!(1)).await.unwrap_err();
    let Error::Storage(failure) = &e else { panic!("expected a storage error, got {e}") };
    assert_eq!(failure.code.as_deref(), Some("SignatureDoesNotMatch"), "{e}");
    assert_eq!(failure.status, Some(403));
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(secret), "{shown}");
    assert!(!shown.contains("Signature="), "{shown}");
}
