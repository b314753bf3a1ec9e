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

/// The fault store's unanswered requests: a `Hang` fails after the store's timeout with nothing
/// applied; a pause holds requests until it ends, or fails them when it outlasts the timeout.
#[test]
fn a_hang_fails_after_the_timeout_and_a_pause_holds_requests_until_it_ends() {
    use fencepost::Clock;
    use fencepost::store::{ObjectStore, Op, Precondition, WriteMeta};
    use fencepost::testing::{FaultStore, Injected, ManualClock, Rule};
    futures::executor::block_on(async {
        let clock = Arc::new(ManualClock::auto_advancing(ManualClock::START_2026));
        let store = FaultStore::with_clock(MemoryStore::new(), clock.clone());
        store.set_timeout(5.0).unwrap();
        assert!(store.set_timeout(0.0).is_err(), "a timeout is > 0");
        let elapsed = |since: fencepost::Timestamp| since.secs_until(clock.now().unwrap());
        store.add_rule(Rule { fault: Injected::Hang, op: Some(Op::Put), key_prefix: String::new(), times: 1 });
        let t0 = clock.now().unwrap();
        let hung = store.put("k", b"v", &Precondition::IfAbsent, &WriteMeta::default()).await.unwrap_err();
        assert!(hung.message.contains("no answer within 5 s"), "{}", hung.message);
        assert_eq!(elapsed(t0), 5.0);
        assert!(store.get("k").await.unwrap().is_none(), "nothing applied");
        store.pause(3.0);
        let t1 = clock.now().unwrap();
        assert!(store.get("k").await.unwrap().is_none());
        assert_eq!(elapsed(t1), 3.0, "held until the pause ended");
        store.pause(60.0);
        let t2 = clock.now().unwrap();
        assert!(store.get("k").await.is_err(), "a pause past the timeout fails the request");
        assert_eq!(elapsed(t2), 5.0);
    });
}

#[test]
fn counters_refuse_out_of_range_adds_and_shards_with_a_typed_error_never_a_panic() {
    use fencepost::{Error, Fencepost, Options};
    futures::executor::block_on(async {
        let db = Fencepost::new(Arc::new(MemoryStore::new()), Options::default()).unwrap();
        let one = db.counter_with_shards("c", 1).unwrap();
        assert!(matches!(one.add(i64::MIN).await, Err(Error::InvalidArgument(_))), "i64::MIN");
        // Shards written by another tool, at the ends of i64.
        for (stored, n) in [(i64::MAX, 1), (i64::MIN, -1), (i64::MIN, 0)] {
            db.doc::<i64>("c/0").unwrap().update_or_insert(0, |_| Ok(stored)).await.unwrap();
            assert!(matches!(one.add(n).await, Err(Error::InvalidArgument(_))), "a shard at {stored}, add({n})");
            assert!(matches!(one.value().await, Err(Error::Corrupt { .. })), "a shard at {stored}: value");
        }
    });
}

#[test]
fn options_show_a_holder_only_as_there() {
    use fencepost::{LeaseOptions, OnceOptions, PermitOptions};
    let shown = [
        format!("{:?}", LeaseOptions::new(30.0).holder("secret-holder")),
        format!("{:?}", OnceOptions::new(30.0).holder("secret-holder")),
        format!("{:?}", PermitOptions::default().holder("secret-holder")),
    ];
    for text in shown {
        assert!(!text.contains("secret-holder") && text.contains("[redacted]"), "{text}");
    }
}
