//! Compile-time checks that, natively, the handles and stores are `Send + Sync + Clone` and the
//! futures they return are `Send`: what `tokio::spawn` and an axum handler require. Nothing here
//! needs to run; if a future stopped being `Send` (a lock held across an `.await`, an `Rc`
//! captured), this file would stop compiling. (In wasm32 nothing is required to be `Send`, so the
//! file is native only.)
#![cfg(not(target_arch = "wasm32"))]

use std::future::Future;
use std::sync::Arc;

use fencepost::store::azure::AzureStore;
use fencepost::store::gcs::GcsStore;
use fencepost::store::s3::S3Store;
use fencepost::store::{CountingStore, MemoryStore, ObjectStore, Precondition, PrefixStore};
use fencepost::testing::{FaultStore, ManualClock};
use fencepost::{
    Cancel, Counter, Doc, Error, Fencepost, Lease, LeaseOptions, Objects, Options, PruneOptions, SystemClock,
    UpdateOptions, WaitOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

fn handle<T: Send + Sync + Clone + 'static>() {}
fn sendable<T: Send + Sync + 'static>() {}
fn send<F: Future + Send>(f: F) -> F {
    f
}

#[derive(Serialize, Deserialize, Clone, Default)]
struct Job {
    step: u32,
}

#[test]
fn handles_and_stores_are_send_sync_clone() {
    handle::<Fencepost>();
    handle::<Objects>();
    handle::<Lease>();
    handle::<Lease<Job>>();
    handle::<Doc>();
    handle::<Doc<Job>>();
    handle::<Counter>();
    handle::<Cancel>();
    handle::<MemoryStore>();
    handle::<S3Store>();
    handle::<AzureStore>();
    handle::<GcsStore>();
    handle::<CountingStore>();
    handle::<PrefixStore>();
    handle::<FaultStore>();
    handle::<ManualClock>();
    handle::<SystemClock>();
    handle::<Arc<dyn ObjectStore>>();
    handle::<LeaseOptions<Job>>();
    // Errors cross threads too (anyhow, `Box<dyn Error + Send + Sync>`).
    sendable::<Error>();
    fn std_error<E: std::error::Error + Send + Sync + 'static>() {}
    std_error::<Error>();
}

/// Every future of the API, built (never polled) and asserted `Send`.
#[allow(unused_must_use, clippy::let_underscore_future)]
#[test]
fn futures_are_send() {
    let db = Fencepost::new(MemoryStore::new(), Options::default()).unwrap();
    let _ = send(db.claim("k", json!(1)));
    let _ = send(db.claim("k", Job::default()));
    let _ = send(db.lease("k", LeaseOptions::new(30.0)));
    let _ = send(db.lease("k", LeaseOptions::new(30.0).state_type::<Job>()));
    let _ = send(db.lease_with_state("k", LeaseOptions::new(30.0), |prev: Option<Job>| Ok(prev.unwrap_or_default())));
    let _ = send(db.with_lease("k", LeaseOptions::new(30.0).state_type::<Job>(), async |lease| {
        lease
            .update_state(|mut job| {
                job.step += 1;
                Ok(job)
            })
            .await
    }));
    let _ = send(db.attach_lease("k", "holder", 30.0));
    let _ = send(db.cooperative_write("k", |s: Value| Ok(s)));
    let _ = send(db.inspect("k"));
    let _ = send(db.break_lease("k"));
    let _ = send(db.break_lease_with_state("k", &Job::default()));
    let _ = send(db.prune("p/", PruneOptions::older_than(60.0).dry_run()));

    let doc: Doc<Job> = db.doc("d").unwrap();
    let _ = send(doc.get());
    let _ = send(doc.update(Ok));
    let _ = send(doc.update_or_insert(Job::default(), Ok));
    let _ = send(doc.update_with(UpdateOptions { max_attempts: 3, ..UpdateOptions::default() }, Ok));
    let _ = send(doc.update_async(UpdateOptions::default(), |j| async move { Ok(j) }));
    let _ = send(doc.delete());

    let counter = db.counter("c").unwrap();
    let _ = send(counter.add(1));
    let _ = send(counter.value());

    let objects = db.objects();
    let _ = send(objects.get("k"));
    let _ = send(objects.put("k", b"x", Precondition::IfAbsent));
    let _ = send(objects.delete("k"));
    let _ = send(objects.list("p/"));
    let _ = send(objects.wait_for("k", &WaitOptions::default()));
    let _ = send(fencepost::check_store(Arc::new(MemoryStore::new())));

    let lease_future = async {
        let lease: Lease<Job> = db.lease("k", LeaseOptions::new(30.0).state_type()).await?.expect("free");
        let _ = lease.state()?;
        lease.write(&Job { step: 2 }).await?;
        lease.update_state_async(|job| async move { Ok(job) }).await?;
        lease.renew().await?;
        tokio_like_spawn(lease.keep_alive(&Cancel::new()));
        lease.release_with(&Job { step: 3 }).await?;
        Ok::<_, Error>(())
    };
    let _ = send(lease_future);
}

/// What `tokio::spawn` asks of a task (without depending on tokio's runtime here).
fn tokio_like_spawn<F: Future + Send + 'static>(f: F) -> F {
    f
}
