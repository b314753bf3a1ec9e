//! Timing-sensitive behaviour of the objects layer, on a plain manual clock (timers wait for
//! `advance`): cancels settle without waiting; the store clock's offset. The behaviours every
//! store must show are in the conformance suite.

use crate::base::sync::Shared;
use std::cell::RefCell;

use async_trait::async_trait;
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use serde_json::json;

use super::*;
use crate::store::{ListPage, MemoryStore, Op, PutOutcome};
use crate::testing::{Fault, FaultStore};
use crate::time::ManualClock;
use crate::{Fencepost, LeaseOptions, Options};

fn slow_retries() -> RetryPolicy {
    RetryPolicy { max_attempts: 4, base_delay: 1.0, max_delay: 1.0 }
}

/// Run `f` on a pool; the pool, and the slot its result lands in.
fn spawn<T: 'static>(f: impl Future<Output = T> + 'static) -> (LocalPool, Shared<RefCell<Option<T>>>) {
    let pool = LocalPool::new();
    let out = Shared::new(RefCell::new(None));
    let slot = out.clone();
    pool.spawner().spawn_local(async move { *slot.borrow_mut() = Some(f.await) }).unwrap();
    (pool, out)
}

/// A call whose first attempt of `op` is answered 503, cancelled while it waits to retry (a random
/// delay of up to 1 s: a timer the cancel must cut short): what it settled with, its store and clock.
fn cancelled_in_backoff<T: 'static, F: Future<Output = Result<T>> + 'static>(
    op: Op,
    call: impl FnOnce(Objects) -> F,
) -> (Option<Result<T>>, Shared<FaultStore>, ManualClock) {
    let store = Shared::new(FaultStore::new(Shared::new(MemoryStore::new())));
    store.inject(op, Fault::Status(503, "SlowDown"));
    let clock = ManualClock::starting_2026();
    let objects = Objects::new(store.clone(), Shared::new(clock.clone()), slow_retries()).unwrap();
    let cancel = Cancel::new();
    let (mut pool, out) = spawn(call(objects.with_cancel(&cancel)));
    pool.run_until_stalled();
    assert!(out.borrow().is_none(), "waiting for the backoff timer");
    cancel.cancel();
    pool.run_until_stalled();
    let settled = out.borrow_mut().take();
    (settled, store, clock)
}

#[test]
fn a_cancel_during_backoff_settles_at_once() {
    let (out, store, clock) = cancelled_in_backoff(Op::Get, async |objects| objects.get("k").await);
    assert!(matches!(out, Some(Err(Error::Aborted))));
    assert_eq!(store.counts().get, 1, "no attempt after the cancel");
    assert_eq!(clock.now().unwrap(), ManualClock::START_2026, "settled without time passing");
    assert_eq!(clock.pending_timers(), 0, "the backoff timer was dropped");
}

#[test]
fn an_abandoned_put_gets_one_read_back_attempt() {
    let store = Shared::new(FaultStore::new(Shared::new(MemoryStore::new())));
    let cancel = Cancel::new();
    let c = cancel.clone();
    store.inject(
        Op::Put,
        Fault::after(async move {
            c.cancel();
            std::future::pending::<()>().await
        }),
    );
    store.inject(Op::Get, Fault::Status(503, "SlowDown"));
    let clock = ManualClock::starting_2026();
    let objects = Objects::new(store.clone(), Shared::new(clock), slow_retries()).unwrap().with_cancel(&cancel);
    let e = futures::executor::block_on(objects.put("k", b"x", Precondition::IfAbsent)).unwrap_err();
    assert!(matches!(&e, Error::AmbiguousWrite { cause: Some(c), .. } if matches!(**c, Error::Aborted)), "{e:?}");
    assert_eq!((store.counts().put, store.counts().get), (1, 1), "a single read-back attempt");
}

/// A delete the cancel abandons in flight: `lands` says whether it reached the store first (its
/// answer then never comes) or never leaves.
fn abandoned_delete(lands: bool) -> (Result<()>, Shared<FaultStore>) {
    let memory = MemoryStore::new();
    futures::executor::block_on(memory.put("k", b"x", &Precondition::None, &WriteMeta::default())).unwrap();
    let store = Shared::new(FaultStore::new(Shared::new(memory)));
    let cancel = Cancel::new();
    let c = cancel.clone();
    let hang = move || -> crate::base::future::BoxFuture<'static, ()> {
        let c = c.clone();
        Box::pin(async move {
            c.cancel();
            std::future::pending::<()>().await
        })
    };
    store.inject(Op::Delete, if lands { Fault::After(Box::new(hang)) } else { Fault::Before(Box::new(hang)) });
    let clock = ManualClock::starting_2026();
    let objects = Objects::new(store.clone(), Shared::new(clock), slow_retries()).unwrap().with_cancel(&cancel);
    (futures::executor::block_on(objects.delete("k")), store)
}

#[test]
fn a_delete_abandoned_in_flight_is_settled_by_one_read() {
    let (landed, store) = abandoned_delete(true);
    assert!(landed.is_ok(), "gone: the delete is done ({landed:?})");
    assert_eq!((store.counts().delete, store.counts().get), (1, 1), "one read settles it");
    let (pending, store) = abandoned_delete(false);
    let e = pending.unwrap_err();
    assert!(matches!(&e, Error::AmbiguousWrite { cause: Some(c), .. } if matches!(**c, Error::Aborted)), "{e:?}");
    assert_eq!((store.counts().delete, store.counts().get), (1, 1));
    // Cancelled before anything was sent: the reason, and nothing sent.
    let store = Shared::new(FaultStore::new(Shared::new(MemoryStore::new())));
    let cancel = Cancel::new();
    cancel.cancel();
    let objects = Objects::new(store.clone(), Shared::new(ManualClock::starting_2026()), slow_retries()).unwrap();
    let e = futures::executor::block_on(objects.with_cancel(&cancel).delete("k")).unwrap_err();
    assert!(matches!(e, Error::Aborted), "{e:?}");
    assert_eq!(store.counts().total(), 0, "nothing sent");
}

#[test]
fn a_delete_cancelled_in_its_backoff_after_an_answer_reads_nothing() {
    // Answered (a 503: not carried out), then cancelled in the backoff: nothing can land.
    let (out, store, _) = cancelled_in_backoff(Op::Delete, async |objects| objects.delete("k").await);
    assert!(matches!(out, Some(Err(Error::Aborted))), "the reason: nothing can land");
    assert_eq!((store.counts().delete, store.counts().get), (1, 0), "no read-back");
}

/// A store whose clock is `true_time` (+ `skew`) and which reports it with every response, as an
/// S3 server's `Date` header does.
struct ClockedStore {
    inner: MemoryStore,
    true_time: ManualClock,
    /// Report the time as an HTTP `Date` does: the whole second (plus half of it, as the HTTP
    /// stores read it).
    whole_seconds: bool,
}

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl ObjectStore for ClockedStore {
    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, body: &[u8], p: &Precondition, meta: &WriteMeta) -> StoreResult<PutOutcome> {
        self.inner.put(key, body, p, meta).await
    }
    async fn delete(&self, key: &str) -> StoreResult<()> {
        self.inner.delete(key).await
    }
    async fn list_page(&self, prefix: &str, start_after: Option<&str>, cursor: Option<&str>) -> StoreResult<ListPage> {
        self.inner.list_page(prefix, start_after, cursor).await
    }
    fn server_time(&self) -> Option<Timestamp> {
        let now = self.true_time.now().ok()?;
        if !self.whole_seconds {
            return Some(now);
        }
        Some(Timestamp::from_micros(now.as_micros().div_euclid(1_000_000) * 1_000_000 + 500_000))
    }
}

const TEN_MINUTES: f64 = 600.0;

/// A client on `store` whose clock is `skew` seconds off the true time.
fn client(store: &Shared<ClockedStore>, skew: f64, source: ClockSource) -> Fencepost {
    let start = store.true_time.now().unwrap().plus_secs(skew);
    let options =
        Options { clock: Some(Shared::new(ManualClock::new(start))), clock_source: source, ..Options::default() };
    Fencepost::new(store.clone(), options).unwrap()
}

fn clocked_store() -> Shared<ClockedStore> {
    Shared::new(ClockedStore {
        inner: MemoryStore::new(),
        true_time: ManualClock::starting_2026(),
        whole_seconds: false,
    })
}

#[test]
fn whole_second_dates_from_a_few_responses_give_the_offset_to_well_under_a_second() {
    // A client 600.3 s fast; the store dates its answers to the whole second. One answer bounds
    // the offset to a second; answers at other fractions of a second narrow it.
    let store = Shared::new(ClockedStore {
        inner: MemoryStore::new(),
        true_time: ManualClock::starting_2026(),
        whole_seconds: true,
    });
    let local = Shared::new(ManualClock::new(store.true_time.now().unwrap().plus_secs(600.3)));
    let options = Options { clock: Some(local.clone()), clock_source: ClockSource::Store, ..Options::default() };
    let db = Fencepost::new(store.clone(), options).unwrap();
    let error = || (db.objects().store_offset().unwrap() + 600.3).abs();
    futures::executor::block_on(db.objects().get("k")).unwrap();
    assert!(error() <= 0.5, "one answer: within half a second ({} s off)", error());
    for _ in 0..8 {
        store.true_time.advance(0.37);
        local.advance(0.37);
        futures::executor::block_on(db.objects().get("k")).unwrap();
    }
    assert!(error() < 0.05, "answers at other fractions of a second narrow it: {} s off", error());
    // The store's clock jumps: the bounds no longer meet, and start again from the latest answer.
    store.true_time.advance(30.0);
    local.advance(0.37);
    futures::executor::block_on(db.objects().get("k")).unwrap();
    let jumped = (db.objects().store_offset().unwrap() + 600.3 - 29.63).abs();
    assert!(jumped <= 0.5, "after a jump: from the latest answer ({jumped} s off)");
}

#[test]
fn the_store_offset_is_measured_from_responses() {
    let store = clocked_store();
    let fast = client(&store, TEN_MINUTES, ClockSource::Store);
    assert_eq!(fast.objects().store_offset(), Some(0.0), "no answer yet: the local clock serves");
    futures::executor::block_on(fast.objects().get("k")).unwrap();
    assert_eq!(fast.objects().store_offset(), Some(-TEN_MINUTES));
    assert_eq!(fast.objects().now().unwrap(), store.true_time.now().unwrap());
    let call = fast.with_cancel(&Cancel::new());
    assert_eq!(call.objects().store_offset(), Some(-TEN_MINUTES), "shared by every handle");
    assert_eq!(client(&store, 0.0, ClockSource::Local).objects().store_offset(), None);
    let memory = Fencepost::new(
        Shared::new(MemoryStore::new()),
        Options { clock_source: ClockSource::Store, ..Options::default() },
    );
    let memory = memory.unwrap();
    futures::executor::block_on(memory.objects().get("k")).unwrap();
    assert_eq!(memory.objects().store_offset(), Some(0.0), "a store without a clock: local time");
}

#[test]
fn a_fast_client_does_not_steal_a_live_lease() {
    let store = clocked_store();
    let holder = client(&store, 0.0, ClockSource::Local);
    let run = futures::executor::block_on;
    run(holder.lease("job", LeaseOptions::new(30.0))).unwrap().unwrap();
    let fast = client(&store, TEN_MINUTES, ClockSource::Store);
    assert!(run(fast.lease("job", LeaseOptions::new(30.0))).unwrap().is_none(), "judged in the store's time");
    let naive = client(&store, TEN_MINUTES, ClockSource::Local);
    assert!(run(naive.lease("job", LeaseOptions::new(30.0))).unwrap().is_some(), "what Store prevents");
}

#[test]
fn a_slow_client_writes_deadlines_in_the_store_time() {
    let store = clocked_store();
    let run = futures::executor::block_on;
    let slow = client(&store, -TEN_MINUTES, ClockSource::Store);
    let lease = run(slow.lease("job", LeaseOptions::new(30.0))).unwrap().unwrap();
    let truth = store.true_time.now().unwrap();
    assert_eq!(lease.deadline_at(), truth.plus_secs(30.0), "the fresh lease's read corrected it already");
    let other = client(&store, 0.0, ClockSource::Local);
    assert!(run(other.lease("job", LeaseOptions::new(30.0))).unwrap().is_none(), "others see it held");
    let stored = futures::executor::block_on(store.inner.get("job")).unwrap().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&stored.body).unwrap();
    assert_eq!(doc["deadline_at"], json!(truth.plus_secs(30.0).to_rfc3339()), "absolute UTC on the wire");
    let naive = client(&store, -TEN_MINUTES, ClockSource::Local);
    let l = run(naive.lease("job2", LeaseOptions::new(30.0))).unwrap().unwrap();
    assert!(run(other.lease("job2", LeaseOptions::new(30.0))).unwrap().is_some(), "what Store prevents: {l:?}");
}

#[test]
fn a_panicking_event_handler_never_changes_a_calls_outcome() {
    use crate::store::MemoryStore;
    use crate::{Fencepost, Options};
    let options = Options {
        on_event: Some(crate::base::sync::Shared::new(|_: &crate::Event<'_>| panic!("handler bug"))),
        ..Options::default()
    };
    futures::executor::block_on(async {
        let db = Fencepost::new(MemoryStore::new(), options).unwrap();
        assert!(db.claim("k", 1).await.unwrap().won, "the call succeeds");
        assert_eq!(db.claim("k", 2).await.unwrap().value, 1, "and the next");
    });
}
