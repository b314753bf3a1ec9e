//! The conformance suite through `ObjectStoreAdapter` (feature `object_store`): on object_store's
//! `InMemory`, and on its S3 client (`AmazonS3`) against SeaweedFS, whose settings
//! `scripts/test.sh` exports as FENCEPOST_SEAWEED_* (ENDPOINT, BUCKET, ACCESS_KEY, SECRET_KEY,
//! REGION); without them the SeaweedFS cases print a note and pass, as in tests/native_s3.rs.
//! Plus the local filesystem, which object_store cannot compare-and-swap on.

#![cfg(all(feature = "object_store", not(target_arch = "wasm32")))]

mod conformance;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use conformance::Ctx;
use fencepost::store::object_store::ObjectStoreAdapter;
use fencepost::store::{FailureKind, ObjectStore, Precondition, PrefixStore, PutOutcome, StoreError, WriteMeta};
use fencepost::{Error, Fencepost, Options};
use object_store::RetryConfig;
use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut};
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use serde_json::json;

/// A fresh name for this process's next namespace (an S3 prefix, a temporary directory).
fn unique(what: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
    format!("{what}-{nanos:x}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn memory() -> Option<Arc<dyn ObjectStore>> {
    Some(Arc::new(ObjectStoreAdapter::new(Arc::new(InMemory::new()))))
}

/// object_store's S3 client on SeaweedFS, or `None` (with a note) without servers. No retries of
/// the client's own: fencepost's retry layer is the one (see the adapter's docs: a re-sent
/// conditional put could report our own landed write as lost).
fn seaweed_s3(secret_override: Option<&str>) -> Option<AmazonS3> {
    let var = |name: &str| std::env::var(format!("FENCEPOST_SEAWEED_{name}")).ok();
    let (Some(endpoint), Some(bucket), Some(region), Some(access_key), Some(secret)) =
        (var("ENDPOINT"), var("BUCKET"), var("REGION"), var("ACCESS_KEY"), var("SECRET_KEY"))
    else {
        println!("skipped: FENCEPOST_SEAWEED_* is not set (scripts/test.sh starts the servers and sets it)");
        return None;
    };
    let s3 = AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_bucket_name(bucket)
        .with_region(region)
        .with_access_key_id(access_key)
        .with_secret_access_key(secret_override.unwrap_or(&secret))
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .with_conditional_put(S3ConditionalPut::ETagMatch)
        .with_retry(RetryConfig { max_retries: 0, ..RetryConfig::default() })
        .build()
        .expect("an S3 client");
    Some(s3)
}

/// `adapter` in a fresh prefix, so cases never see each other's keys.
fn fresh(adapter: ObjectStoreAdapter) -> Arc<dyn ObjectStore> {
    Arc::new(PrefixStore::new(Arc::new(adapter), &unique("object-store")).expect("a valid prefix"))
}

fn seaweed() -> Option<Arc<dyn ObjectStore>> {
    Some(fresh(ObjectStoreAdapter::new(Arc::new(seaweed_s3(None)?))))
}

fn run<F: std::future::Future<Output = ()>>(store: Option<Arc<dyn ObjectStore>>, case: fn(Ctx) -> F) {
    if let Some(store) = store {
        futures::executor::block_on(case(Ctx::new(store)));
    }
}

macro_rules! object_store_cases {
    ($($name:ident),* $(,)?) => {
        mod memory {
            use super::*;
            $( #[test] fn $name() { run(memory(), conformance::$name) } )*
        }
        mod seaweed {
            use super::*;
            $( #[test] fn $name() { run(seaweed(), conformance::$name) } )*
        }
    };
}

for_each_case!(object_store_cases);

/// A temporary directory, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = TempDir(std::env::temp_dir().join(unique("fencepost-local")));
        std::fs::create_dir_all(&dir.0).unwrap();
        dir
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn assert_unsupported(e: &StoreError, says: &str) {
    assert_eq!((e.kind, e.code.as_deref()), (FailureKind::Fatal, Some("Unsupported")), "{e:?}");
    assert!(e.message.contains(says), "{e:?}");
}

/// The local filesystem creates atomically (a hard link) but has no `PutMode::Update` and keeps no
/// user metadata: claims work on it, a compare-and-swap is the typed `Unsupported`, never an
/// unconditional write.
#[test]
fn local_filesystem_creates_but_refuses_compare_and_swap_as_unsupported() {
    let dir = TempDir::new();
    let local = Arc::new(LocalFileSystem::new_with_prefix(&dir.0).unwrap());
    let none = WriteMeta::default();
    futures::executor::block_on(async {
        // It refuses user metadata, and the adapter says how to do without.
        let e =
            ObjectStoreAdapter::new(local.clone()).put("k", b"0", &Precondition::IfAbsent, &none).await.unwrap_err();
        assert_unsupported(&e, "without_metadata");

        let store = ObjectStoreAdapter::new(local).without_metadata().unordered_listing();
        let PutOutcome::Written { etag } = store.put("k", b"1", &Precondition::IfAbsent, &none).await.unwrap() else {
            panic!("created")
        };
        assert_eq!(store.put("k", b"2", &Precondition::IfAbsent, &none).await.unwrap(), PutOutcome::PreconditionFailed);
        let e = store.put("k", b"2", &Precondition::IfMatch(etag.clone()), &none).await.unwrap_err();
        assert_unsupported(&e, "PutMode::Update");
        let got = store.get("k").await.unwrap().unwrap();
        assert_eq!((got.body.as_slice(), got.etag.as_str()), (&b"1"[..], etag.as_str()), "nothing was written");

        // Through the API: a claim works, a compare-and-swap is refused (not retried).
        let db = Fencepost::new(Arc::new(store), Options::default()).unwrap();
        assert!(db.claim("cron/tick", json!("a")).await.unwrap().won);
        assert!(!db.claim("cron/tick", json!("b")).await.unwrap().won);
        let e = db.objects().put("k", b"3", Precondition::IfMatch(etag)).await.unwrap_err();
        assert!(matches!(&e, Error::Storage(f) if f.code.as_deref() == Some("Unsupported")), "{e}");
    });
}

/// fencepost's prefixes are string prefixes, object_store's path segments; pages of 1000 follow
/// each other by the last key; `start_after` is exclusive. The same on ordered backends (`InMemory`,
/// S3: reading stops after a page, or past the prefix) and an unordered one (the local filesystem).
#[test]
fn listing_pages_string_prefixes_and_start_after() {
    let dir = TempDir::new();
    let local = ObjectStoreAdapter::new(Arc::new(LocalFileSystem::new_with_prefix(&dir.0).unwrap()));
    let mut backends: Vec<Arc<dyn ObjectStore>> = vec![
        Arc::new(ObjectStoreAdapter::new(Arc::new(InMemory::new()))),
        Arc::new(local.without_metadata().unordered_listing()),
    ];
    // And SeaweedFS when there is one (its own pages of 1000 under ours), which lists `p/…` before
    // `p-1`: in key order that is reported, unordered it lists right.
    let seaweed = seaweed_s3(None).map(|s3| ObjectStoreAdapter::new(Arc::new(s3)));
    if let Some(seaweed) = &seaweed {
        backends.push(fresh(seaweed.clone().unordered_listing()));
    }
    let keys: Vec<String> = (0..1201).map(|i| format!("p/{i:04}")).collect();
    futures::executor::block_on(async {
        for store in backends {
            for key in keys.iter().map(String::as_str).chain(["p-1", "pz", "o/1", "q/1", "p/1/x", "p/2"]) {
                store.put(key, b"v", &Precondition::None, &WriteMeta::default()).await.unwrap();
            }
            let first = store.list_page("p/", None, None).await.unwrap();
            assert_eq!(first.entries.len(), 1000);
            assert!(first.next.is_some(), "an opaque cursor (the last key of the page, behind any prefix)");
            let second = store.list_page("p/", None, first.next.as_deref()).await.unwrap();
            let listed: Vec<_> = first.entries.iter().chain(&second.entries).map(|e| e.key.as_str()).collect();
            let mut expected: Vec<_> = keys.iter().map(String::as_str).chain(["p/1/x", "p/2"]).collect();
            expected.sort();
            assert_eq!((listed, second.next), (expected, None));
            // "p/1" is a string prefix: the keys of "p/" that start so, not only those under "p/1/".
            assert_eq!(store.list("p/1").await.unwrap().len(), 202);
            assert_eq!(store.list("p").await.unwrap().len(), 1205, "p/…, p-1, pz");
            let tail = store.list_page("p/", Some("p/0995"), None).await.unwrap();
            assert_eq!((tail.entries.len(), tail.entries[0].key.as_str()), (207, "p/0996"));
            assert!(tail.entries.iter().all(|e| e.etag.is_some() && e.size == Some(1) && e.last_modified.is_some()));
        }
        if let Some(seaweed) = seaweed.map(fresh) {
            for key in ["p/0", "p-1"] {
                seaweed.put(key, b"v", &Precondition::None, &WriteMeta::default()).await.unwrap();
            }
            let e = seaweed.list("p").await.unwrap_err();
            assert_eq!(e.code.as_deref(), Some("MalformedResponse"), "{e:?}");
            assert!(e.message.contains("out of key order"), "{e:?}");
        }
    });
}

/// Keys object_store cannot hold as written are refused, never stored under another name.
#[test]
fn keys_that_are_not_object_store_paths_are_refused() {
    let store = ObjectStoreAdapter::new(Arc::new(InMemory::new()));
    futures::executor::block_on(async {
        for key in ["a//b", "a/", "/a"] {
            let e = store.put(key, b"v", &Precondition::None, &WriteMeta::default()).await.unwrap_err();
            assert_eq!((e.kind, e.code.as_deref()), (FailureKind::Fatal, Some("InvalidArgument")), "{key}: {e:?}");
            assert!(store.get(key).await.is_err(), "{key}");
        }
        assert!(store.list_page("", None, None).await.unwrap().entries.is_empty());
    });
}

/// An S3 client with conditional puts disabled can neither create-only nor compare-and-swap: the
/// typed refusal, before any request (nothing listens on the endpoint); a read that cannot connect
/// is transient (nothing was sent).
#[test]
fn s3_without_conditional_puts_is_unsupported_and_unreachable_is_transient() {
    let s3 = AmazonS3Builder::new()
        .with_endpoint("http://127.0.0.1:9")
        .with_bucket_name("b")
        .with_region("us-east-1")
        .with_access_key_id("key-id")
        .with_secret_access_key("a-secret")
        .with_allow_http(true)
        .with_conditional_put(S3ConditionalPut::Disabled)
        .with_retry(RetryConfig { max_retries: 0, ..RetryConfig::default() })
        .build()
        .unwrap();
    let store = ObjectStoreAdapter::new(Arc::new(s3));
    futures::executor::block_on(async {
        let none = WriteMeta::default();
        assert_unsupported(&store.put("k", b"v", &Precondition::IfAbsent, &none).await.unwrap_err(), "PutMode::Create");
        let cas = Precondition::IfMatch("abc".into());
        assert_unsupported(&store.put("k", b"v", &cas, &none).await.unwrap_err(), "PutMode::Update");
        let e = store.get("k").await.unwrap_err();
        assert_eq!(e.kind, FailureKind::Transient, "{e:?}");
        assert!(!format!("{e:?}").contains("a-secret"));
    });
}

/// A wrong secret on SeaweedFS: the fatal `AccessDenied`, and neither the secret nor the signature
/// (S3's 403 body echoes it) in what the error shows.
#[test]
fn seaweed_wrong_secret_is_access_denied_without_leaking() {
    let secret = "wrong-secret-Zq8vKx3";
    let Some(s3) = seaweed_s3(Some(secret)) else { return };
    let store = fresh(ObjectStoreAdapter::new(Arc::new(s3)));
    let db = Fencepost::new(store, Options::default()).unwrap();
    let e = futures::executor::block_on(db.claim("k", json!(1))).unwrap_err();
    let Error::Storage(failure) = &e else { panic!("expected a storage error, got {e}") };
    assert_eq!(failure.code.as_deref(), Some("AccessDenied"), "{e}");
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(secret) && !shown.contains("Signature"), "{shown}");
}

/// A bucket that does not exist is the fatal `NoSuchBucket`, not a store where every key is absent
/// (object_store says `NotFound` for both).
#[test]
fn seaweed_missing_bucket_is_no_such_bucket() {
    let var = |name: &str| std::env::var(format!("FENCEPOST_SEAWEED_{name}")).ok();
    let (Some(endpoint), Some(access_key), Some(secret)) = (var("ENDPOINT"), var("ACCESS_KEY"), var("SECRET_KEY"))
    else {
        return;
    };
    // Only read: a write would create it (SeaweedFS makes buckets on demand).
    let s3 = AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_bucket_name(unique("fencepost-missing"))
        .with_region("us-east-1")
        .with_access_key_id(access_key)
        .with_secret_access_key(secret)
        .with_allow_http(true)
        .with_retry(RetryConfig { max_retries: 0, ..RetryConfig::default() })
        .build()
        .unwrap();
    let e = futures::executor::block_on(ObjectStoreAdapter::new(Arc::new(s3)).get("k")).unwrap_err();
    assert_eq!((e.kind, e.code.as_deref()), (FailureKind::Fatal, Some("NoSuchBucket")), "{e:?}");
}

/// Inside a tokio runtime of the caller's (current-thread), the calls run on that runtime.
#[test]
fn works_inside_a_current_thread_tokio_runtime() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let db = Fencepost::new(memory().unwrap(), Options::default()).unwrap();
    runtime.block_on(async {
        assert!(db.claim("cron/tick", json!("a")).await.unwrap().won);
        assert!(!db.claim("cron/tick", json!("b")).await.unwrap().won);
    });
}
