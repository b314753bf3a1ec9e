//! The conformance suite, natively, on the memory store.

mod conformance;

use std::sync::Arc;

use conformance::Ctx;
use fencepost::store::MemoryStore;

fn run<F: std::future::Future<Output = ()>>(case: fn(Ctx) -> F) {
    futures::executor::block_on(case(Ctx::new(Arc::new(MemoryStore::new()))));
}

macro_rules! native_cases {
    ($($name:ident),* $(,)?) => {
        $( #[test] fn $name() { run(conformance::$name) } )*
    };
}

for_each_case!(native_cases);

/// A `with_lease`, `once` or `with_permit` future dropped while it holds its lease (here by
/// `tokio::time::timeout`, as a client disconnecting from an axum handler would) releases the
/// lease in the background on the current runtime (feature `tokio`).
#[cfg(feature = "tokio")]
#[tokio::test]
async fn a_dropped_holder_releases_its_lease_in_the_background() {
    use fencepost::{Error, Fencepost, LeaseOptions, OnceOptions, Options, PermitOptions};
    use std::time::Duration;
    let db = Fencepost::new(MemoryStore::new(), Options::default()).unwrap();
    let forever = async |_: &fencepost::Lease| {
        std::future::pending::<()>().await;
        Ok::<_, Error>(())
    };
    let short = Duration::from_millis(50);
    assert!(tokio::time::timeout(short, db.with_lease("job", LeaseOptions::new(30.0), forever)).await.is_err());
    let run = db.once("report", OnceOptions::new(30.0), |_| async {
        std::future::pending::<()>().await;
        Ok::<_, Error>(1)
    });
    assert!(tokio::time::timeout(short, run).await.is_err());
    let pool = db.semaphore("pool", 1, 30.0).unwrap();
    assert!(tokio::time::timeout(short, pool.with_permit(PermitOptions::default(), forever)).await.is_err());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let next = db.lease("job", LeaseOptions::new(30.0)).await.unwrap().expect("released in the background");
    assert_eq!(next.epoch(), 2);
    let again = db.once("report", OnceOptions::new(30.0), |_| async { Ok::<_, Error>(2) }).await.unwrap();
    assert_eq!(again, fencepost::Once::Done { value: 2, ran: true }, "a dropped run is run again at once");
    assert!(pool.acquire(PermitOptions::default()).await.unwrap().is_some(), "the permit came back");
}
