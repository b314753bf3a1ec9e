//! The lease lifecycle in manual time: a plain [`ManualClock`] whose timers fire only when the
//! test moves time, stepped timer by timer, so keep-alive renews and waits poll at exactly the
//! instants they schedule, with no real waiting.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use serde_json::{Value, json};

use super::*;
use crate::store::{MemoryStore, ObjectStore, Op, Precondition};
use crate::testing::{Fault, FaultStore};
use crate::time::{Clock, ManualClock};
use crate::{Fencepost, Options, RetryPolicy};

struct Sim {
    pool: LocalPool,
    clock: ManualClock,
    raw: Arc<MemoryStore>,
    store: Arc<FaultStore>,
}

type Slot<T> = Rc<RefCell<Option<T>>>;

impl Sim {
    fn new() -> Sim {
        let raw = Arc::new(MemoryStore::new());
        let store = Arc::new(FaultStore::new(raw.clone()));
        Sim { pool: LocalPool::new(), clock: ManualClock::starting_2026(), raw, store }
    }

    fn options(&self) -> Options {
        let retry = RetryPolicy { max_attempts: 3, base_delay: 0.05, max_delay: 0.2 };
        Options { clock: Some(Arc::new(self.clock.clone())), retry, ..Options::default() }
    }

    /// The client under test: through the fault store.
    fn db(&self) -> Fencepost {
        Fencepost::new(self.store.clone(), self.options()).unwrap()
    }

    /// Another worker, straight on the bucket.
    fn thief(&self) -> Fencepost {
        Fencepost::new(self.raw.clone(), self.options()).unwrap()
    }

    fn now(&self) -> Timestamp {
        self.clock.now().unwrap()
    }

    fn spawn<T: 'static>(&self, f: impl Future<Output = T> + 'static) -> Slot<T> {
        let out = Rc::new(RefCell::new(None));
        let slot = out.clone();
        self.pool.spawner().spawn_local(async move { *slot.borrow_mut() = Some(f.await) }).unwrap();
        out
    }

    /// Run `f` to completion without moving time (it must need no timer).
    fn block<T: 'static>(&mut self, f: impl Future<Output = T> + 'static) -> T {
        let out = self.spawn(f);
        self.pool.run_until_stalled();
        out.borrow_mut().take().expect("finished without time passing")
    }

    /// Move time forward by `secs`, one due timer at a time, letting every task run in between.
    fn run_for(&mut self, secs: f64) {
        let until = self.now().plus_secs(secs);
        self.pool.run_until_stalled();
        while self.clock.step_until(until) {
            self.pool.run_until_stalled();
        }
        self.pool.run_until_stalled();
    }

    /// Step time until `slot` is filled (at most `limit` seconds).
    fn run_until_done<T>(&mut self, slot: &Slot<T>, limit: f64) -> T {
        let until = self.now().plus_secs(limit);
        loop {
            self.pool.run_until_stalled();
            if let Some(v) = slot.borrow_mut().take() {
                return v;
            }
            assert!(self.clock.step_until(until), "not done after {limit} s");
        }
    }

    fn acquire(&mut self, db: &Fencepost, key: &str, ttl: f64) -> Option<Lease> {
        let (db, key) = (db.clone(), key.to_owned());
        self.block(async move { db.lease(&key, LeaseOptions::new(ttl)).await }).unwrap()
    }

    fn stored(&mut self, key: &str) -> Value {
        let (raw, key) = (self.raw.clone(), key.to_owned());
        let obj = self.block(async move { raw.get(&key).await }).unwrap().unwrap();
        serde_json::from_slice(&obj.body).unwrap()
    }
}

fn is_lost(r: &Result<()>) -> bool {
    matches!(r, Err(Error::LeaseLost { .. }))
}

#[test]
fn keep_alive_holds_a_two_second_lease_for_twenty_seconds() {
    let mut sim = Sim::new();
    let lease = sim.acquire(&sim.db(), "job", 2.0).unwrap();
    let stop = Cancel::new();
    let kept = sim.spawn(lease.keep_alive(&stop));
    sim.store.take_counts();
    let thief = sim.thief();
    for _ in 0..40 {
        sim.run_for(0.5);
        assert!(lease.deadline_at() > sim.now(), "renewed ahead of its deadline");
        assert!(sim.acquire(&thief, "job", 2.0).is_none(), "never stealable");
    }
    let renewals = sim.store.take_counts().put;
    assert!((29..=31).contains(&renewals), "every ttl/3: {renewals} renewals in 20 s");
    stop.cancel();
    sim.pool.run_until_stalled();
    assert!(matches!(kept.borrow_mut().take(), Some(Ok(()))));
    assert!(!lease.ended().is_cancelled());
    assert_eq!(sim.clock.pending_timers(), 0, "nothing left scheduled");
}

#[test]
fn keep_alive_that_cannot_renew_gives_up_before_the_deadline() {
    let mut sim = Sim::new();
    let lease = sim.acquire(&sim.db(), "job", 2.0).unwrap();
    let deadline = lease.deadline_at();
    for _ in 0..1000 {
        sim.store.inject(Op::Put, Fault::Status(503, "SlowDown"));
    }
    let ended_at = {
        let (ended, clock) = (lease.ended().clone(), sim.clock.clone());
        sim.spawn(async move {
            ended.cancelled().await;
            clock.now().unwrap()
        })
    };
    let kept = sim.spawn(lease.keep_alive(&Cancel::new()));
    let outcome = sim.run_until_done(&kept, 10.0);
    assert!(is_lost(&outcome), "{outcome:?}");
    let Err(Error::LeaseLost { reason, message, .. }) = outcome else { unreachable!() };
    assert!(message.contains("could not renew before the deadline"), "{message}");
    assert_eq!(reason, crate::LostReason::Expired);
    let ended_at = ended_at.borrow_mut().take().expect("the end signal fired");
    assert_eq!(ended_at, deadline.plus_secs(-super::keep_alive::renew_margin(2.0)), "at deadline - margin");
    assert!(sim.store.counts().put >= 3, "renewals were retried within the deadline");
    let l = lease.clone();
    assert!(matches!(sim.block(async move { l.renew().await }), Err(Error::LeaseLost { .. })), "every write rejects");

    let thief = sim.thief();
    assert!(sim.acquire(&thief, "job", 2.0).is_none(), "still held until its deadline");
    sim.clock.set(deadline);
    let stolen = sim.acquire(&thief, "job", 2.0).expect("expired at its deadline");
    assert_eq!(stolen.epoch(), 2);
}

#[test]
fn keep_alive_ends_on_release_and_on_a_steal() {
    let mut sim = Sim::new();
    let db = sim.db();
    let lease = sim.acquire(&db, "job", 3.0).unwrap();
    let kept = sim.spawn(lease.keep_alive_every(1.0, &Cancel::new()));
    sim.run_for(2.5);
    let l = lease.clone();
    sim.block(async move { l.release().await }).unwrap();
    sim.pool.run_until_stalled();
    assert!(matches!(kept.borrow_mut().take(), Some(Ok(()))), "released: Ok");

    // Someone rewrites the document under a new epoch: the next renewal finds out.
    let lease = sim.acquire(&db, "job2", 3.0).unwrap();
    let kept = sim.spawn(lease.keep_alive_every(1.0, &Cancel::new()));
    let raw = sim.raw.clone();
    let doc = br#"{"deadline_at":"2030-01-01T00:00:00.000000Z","epoch":9,"holder":"x","state":null}"#;
    sim.block(async move { raw.put("job2", doc, &Precondition::None, &Default::default()).await }).unwrap();
    let outcome = sim.run_until_done(&kept, 2.0);
    assert!(is_lost(&outcome), "{outcome:?}");
    assert!(lease.ended().is_cancelled());

    for every in [0.0, 3.0, 5.0, -1.0, f64::NAN] {
        let lease = sim.acquire(&db, "job3", 3.0);
        let lease = lease.unwrap_or_else(|| panic!("job3 free for every={every}"));
        let e = sim.block(lease.keep_alive_every(every, &Cancel::new()));
        assert!(matches!(e, Err(Error::InvalidArgument(_))), "every {every}: {e:?}");
        sim.block(async move { lease.release().await }).unwrap();
    }
}

#[test]
fn a_period_that_ends_drops_the_provenance_kept_for_the_next_write() {
    let mut sim = Sim::new();
    let db = sim.db();
    // Two renewals give the kept provenance a history; the release ends the period.
    let lease = sim.acquire(&db, "job", 30.0).unwrap();
    let l = lease.clone();
    sim.block(async move {
        l.renew().await?;
        l.renew().await
    })
    .unwrap();
    assert!(!lease.period.view.lock().meta.history.is_empty());
    let l = lease.clone();
    sim.block(async move { l.release().await }).unwrap();
    assert_eq!(lease.period.view.lock().meta, WriteMeta::default());
    // What the handle shows stays; a later write is refused without a request.
    assert!(lease.is_released());
    let l = lease.clone();
    assert!(is_lost(&sim.block(async move { l.renew().await })));
}

#[test]
fn a_stop_during_a_renewal_settles_it() {
    let mut sim = Sim::new();
    let lease = sim.acquire(&sim.db(), "job", 3.0).unwrap();
    let stop = Cancel::new();
    let s = stop.clone();
    // The renewal lands; its answer never comes, and keep-alive is stopped meanwhile.
    sim.store.inject(
        Op::Put,
        Fault::after(async move {
            s.cancel();
            std::future::pending::<()>().await
        }),
    );
    let kept = sim.spawn(lease.keep_alive_every(1.0, &stop));
    let outcome = sim.run_until_done(&kept, 2.0);
    assert!(matches!(outcome, Ok(())));
    assert_eq!(lease.deadline_at(), ManualClock::START_2026.plus_secs(4.0), "the read-back saw the renewal land");
    let l = lease.clone();
    sim.store.take_counts();
    sim.block(async move { l.release().await }).unwrap();
    assert_eq!(sim.store.take_counts().total(), 1, "the view is current: a one-request release");
}

#[test]
fn a_waiting_acquisition_notices_a_release_within_a_second() {
    let mut sim = Sim::new();
    let held = sim.acquire(&sim.thief(), "job", 600.0).unwrap();
    let db = sim.db();
    let opts = LeaseOptions::new(10.0).wait(120.0);
    let waiting = sim.spawn(async move { db.lease("job", opts).await });
    sim.run_for(30.0);
    assert!(waiting.borrow().is_none(), "still held");
    let polls = sim.store.counts().get;
    assert!((30..=60).contains(&polls), "polls back off to about one a second: {polls}");
    sim.block(async move { held.release().await }).unwrap();
    let released_at = sim.now();
    let got = sim.run_until_done(&waiting, 2.0).unwrap().expect("acquired");
    let delay = released_at.secs_until(sim.now());
    assert!(delay <= 1.0, "noticed {delay} s after the release");
    assert_eq!(got.epoch(), 2);
}

#[test]
fn a_waiting_acquisition_is_cancelled_without_waiting() {
    let mut sim = Sim::new();
    sim.acquire(&sim.thief(), "job", 600.0).unwrap();
    let cancel = Cancel::new();
    let db = sim.db().with_cancel(&cancel);
    let opts = LeaseOptions::new(10.0).wait(120.0);
    let waiting = sim.spawn(async move { db.lease("job", opts).await });
    sim.run_for(5.0);
    let at = sim.now();
    cancel.cancel();
    sim.pool.run_until_stalled();
    assert!(matches!(waiting.borrow_mut().take(), Some(Err(Error::Aborted))));
    assert_eq!(sim.now(), at);
}

#[test]
fn with_lease_keeps_the_lease_alive_while_f_runs() {
    let mut sim = Sim::new();
    let (db, clock) = (sim.db(), sim.clock.clone());
    let done = sim.spawn(async move {
        db.with_lease("job", LeaseOptions::new(2.0), async |lease| {
            // Borrows from the surroundings (the clock) as well as the lease.
            clock.sleep(10.0).await;
            lease.write(&json!("finished")).await.map(|_| lease.epoch())
        })
        .await
    });
    let thief = sim.thief();
    for _ in 0..9 {
        sim.run_for(1.0);
        assert!(sim.acquire(&thief, "job", 2.0).is_none());
    }
    let got = sim.run_until_done(&done, 2.0).unwrap();
    assert_eq!(got, Some(1));
    let stored = sim.stored("job");
    assert_eq!((&stored["holder"], &stored["state"]), (&Value::Null, &json!("finished")));
    assert_eq!(sim.clock.pending_timers(), 0);
}

// withLease's three outcomes, as the JS suite checks them in every runtime: a lease lost while
// `f` runs (f runs to its end, then `LeaseLost`), `f` failing (its error, the lease released),
// the release failing (reported).

#[test]
fn with_lease_lost_while_f_runs_lets_f_finish_then_fails_with_lease_lost() {
    let mut sim = Sim::new();
    let (db, clock) = (sim.db(), sim.clock.clone());
    let finished = Rc::new(Cell::new(false));
    let flag = finished.clone();
    let done = sim.spawn(async move {
        db.with_lease("job", LeaseOptions::new(3.0), async move |lease| {
            // Told at once through `ended`; f decides to stop, and is not dropped.
            let _ = crate::base::future::race(clock.sleep(100.0), lease.ended().cancelled()).await;
            flag.set(true);
            Ok::<_, Error>("f's result")
        })
        .await
    });
    sim.run_for(0.5);
    for _ in 0..1000 {
        sim.store.inject(Op::Put, Fault::Status(503, "SlowDown"));
    }
    let outcome = sim.run_until_done(&done, 10.0);
    assert!(matches!(outcome, Err(Error::LeaseLost { .. })), "{outcome:?}");
    assert!(finished.get(), "f ran to its end");
    assert!(sim.now() < ManualClock::START_2026.plus_secs(3.0), "before the deadline");
}

#[test]
fn with_lease_f_failing_gives_its_error_and_releases() {
    let mut sim = Sim::new();
    let db = sim.db();
    let done = sim.spawn(async move {
        db.with_lease("job", LeaseOptions::new(30.0), async |_| Err::<(), _>(Error::invalid("f failed"))).await
    });
    let outcome = sim.run_until_done(&done, 1.0);
    assert!(matches!(outcome, Err(Error::InvalidArgument(ref m)) if m == "f failed"), "{outcome:?}");
    assert_eq!(sim.stored("job")["holder"], Value::Null, "released");
}

#[test]
fn with_lease_reports_a_failed_release() {
    let mut sim = Sim::new();
    let (db, store) = (sim.db(), sim.store.clone());
    let done = sim.spawn(async move {
        db.with_lease("job", LeaseOptions::new(30.0), async |_| {
            // The next put is the release.
            store.inject(Op::Put, Fault::Status(403, "AccessDenied"));
            Ok::<_, Error>("f's result")
        })
        .await
    });
    let outcome = sim.run_until_done(&done, 1.0);
    assert!(matches!(outcome, Err(Error::Storage(ref f)) if f.code.as_deref() == Some("AccessDenied")), "{outcome:?}");
    assert_ne!(sim.stored("job")["holder"], Value::Null, "still held until its deadline");
}

#[test]
fn with_lease_caller_cancel_leaves_f_running_and_releases_at_its_end() {
    let mut sim = Sim::new();
    let cancel = Cancel::new();
    let (db, clock) = (sim.db().with_cancel(&cancel), sim.clock.clone());
    let done = sim.spawn(async move {
        db.with_lease("job", LeaseOptions::new(30.0), async move |_| {
            clock.sleep(20.0).await;
            Ok::<_, Error>(())
        })
        .await
    });
    sim.run_for(12.0);
    cancel.cancel_with(Error::invalid("shutting down"));
    let outcome = sim.run_until_done(&done, 30.0);
    assert!(matches!(outcome, Ok(Some(()))), "{outcome:?}");
    assert_eq!(sim.stored("job")["holder"], Value::Null, "released");
}

#[test]
fn with_lease_cancelled_while_its_acquisition_lands_does_not_run_f_and_releases() {
    let mut sim = Sim::new();
    let cancel = Cancel::new();
    let c = cancel.clone();
    // The acquisition's put lands; the cancel comes before its answer does.
    sim.store.inject(
        Op::Put,
        Fault::after(async move {
            c.cancel_with(Error::invalid("shutting down"));
        }),
    );
    let ran = Rc::new(Cell::new(false));
    let (db, r) = (sim.db().with_cancel(&cancel), ran.clone());
    let done = sim.spawn(async move {
        db.with_lease("job", LeaseOptions::new(30.0), async move |_| {
            r.set(true);
            Ok::<_, Error>(())
        })
        .await
    });
    let outcome = sim.run_until_done(&done, 1.0);
    assert!(matches!(outcome, Err(Error::InvalidArgument(ref m)) if m == "shutting down"), "{outcome:?}");
    assert!(!ran.get(), "f did not start");
    assert_eq!(
        (sim.stored("job")["epoch"].as_u64(), &sim.stored("job")["holder"]),
        (Some(1), &Value::Null),
        "released"
    );
}

#[test]
fn break_lease_fences_the_stuck_holder_and_the_next_epoch_is_higher() {
    let mut sim = Sim::new();
    let db = sim.db();
    let stuck = sim.acquire(&db, "job", 30.0).expect("free");
    let breaking = sim.spawn({
        let db = db.clone();
        async move { db.break_lease("job").await }
    });
    let broken = sim.run_until_done(&breaking, 1.0).unwrap().expect("a lease document");
    assert_eq!((broken.epoch, broken.previous.epoch), (2, 1));
    assert_eq!(broken.previous.holder.as_deref(), Some(stuck.holder()));
    assert!(!broken.previous.expired && !broken.previous.released);
    let writing = sim.spawn({
        let stuck = stuck.clone();
        async move { stuck.write(&json!("late work")).await }
    });
    let lost = sim.run_until_done(&writing, 1.0);
    assert!(matches!(lost, Err(Error::LeaseLost { reason: crate::LostReason::Stolen, .. })), "{lost:?}");
    let thief = sim.thief();
    let next = sim.acquire(&thief, "job", 30.0).expect("released by the break");
    assert_eq!(next.epoch(), 3);
    let nothing = sim.spawn(async move { db.break_lease("nothing").await });
    assert!(sim.run_until_done(&nothing, 1.0).unwrap().is_none());
}

#[test]
fn an_initial_state_that_is_not_json_is_refused_and_nothing_is_written() {
    let mut sim = Sim::new();
    let db = sim.db();
    for state in [f64::NAN, f64::INFINITY] {
        let got = sim.block({
            let db = db.clone();
            async move { db.lease("nan", LeaseOptions::new(30.0).initial_state(state)).await.map(|l| l.is_some()) }
        });
        assert!(matches!(got, Err(Error::InvalidArgument(_))), "{got:?}");
    }
    assert!(sim.block({
        let raw = sim.raw.clone();
        async move { raw.get("nan").await.unwrap().is_none() }
    }));
}
