//! What the simulated workers do, and the ledger of what each call was told. Each worker is one
//! task with its own `Fencepost` (its own skewed clock) on the shared store: claims on a few keys,
//! increments of one doc counter, lease periods on two keys (guarded appends, keep-alive, pauses
//! longer than the ttl, release or abandonment), cooperative appends, and an operator breaking a
//! lease now and then; `once` runs on a few keys (slow, failing, or dropped mid-run: a crash), and
//! permits of a semaphore held past their ttl or released. A worker "crashes" by abandoning its
//! lease and re-attaching to it (same holder) or acquiring again. A watcher follows the counter.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::{Either, select};

use fencepost::Timestamp;
use fencepost::testing::ManualClock;
use fencepost::{
    Cancel, Clock, Doc, Error, Fencepost, LeaseOptions, Once, OnceOptions, PermitOptions, PruneOptions, UpdateOptions,
};
use serde_json::{Value, json};

use crate::world::Rng;

pub const CLAIM_KEYS: u64 = 3;
pub const LEASE_KEYS: u64 = 2;
pub const COUNTER_KEY: &str = "counter";
pub const TTL: f64 = 10.0;
/// Tick claims (`ticks/<n>`) are made for the current window of this many seconds, and pruned
/// once older than `PRUNE_AGE`: a key space that does not recur, as `prune` requires.
pub const TICK: f64 = 5.0;
pub const PRUNE_AGE: f64 = 40.0;
/// `once` keys (`once/<n>`), the semaphore's key and limit, the key a watcher follows.
pub const ONCE_KEYS: u64 = 2;
pub const SEMAPHORE_KEY: &str = "sem";
pub const SEMAPHORE_LIMIT: u32 = 2;
pub const WATCHED_KEY: &str = COUNTER_KEY;

/// How a call ended, as its caller heard.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Ok(Value),
    /// An `AmbiguousWrite`: it may or may not have landed.
    Ambiguous,
    /// Any other error, by code: nothing was written.
    Failed(&'static str),
}

/// One call: who, what, on which key, with which argument, when it started and ended (simulated
/// seconds), and what it was told.
#[derive(Debug, Clone)]
pub struct Record {
    pub worker: usize,
    pub what: &'static str,
    pub key: String,
    pub arg: Value,
    pub started: f64,
    pub ended: f64,
    /// Positions in one order of every call's start and end (many happen at one simulated instant).
    pub started_seq: u64,
    pub ended_seq: u64,
    pub outcome: Outcome,
}

#[derive(Default)]
pub struct Ledger {
    pub records: Mutex<Vec<Record>>,
    sequence: AtomicU64,
}

impl Ledger {
    fn tick(&self) -> u64 {
        self.sequence.fetch_add(1, Ordering::SeqCst)
    }
}

pub struct Worker {
    id: usize,
    db: Fencepost,
    /// The simulation's clock (the worker's own is skewed), for its pauses and the ledger.
    clock: ManualClock,
    ledger: Arc<Ledger>,
    rng: Rng,
    calls: usize,
    /// One handle for the worker's life: updates start from the version it last saw.
    counter: Doc,
}

impl Worker {
    pub fn new(id: usize, db: Fencepost, clock: ManualClock, ledger: Arc<Ledger>, rng: Rng, calls: usize) -> Worker {
        let counter = db.doc(COUNTER_KEY).expect("a valid key");
        Worker { id, db, clock, ledger, rng, calls, counter }
    }

    /// Simulated seconds since the start.
    fn now(&self) -> f64 {
        ManualClock::START_2026.secs_until(self.clock.now().expect("a manual clock has a time"))
    }

    /// Run `call`, log what it was told.
    async fn log<T>(
        &self,
        what: &'static str,
        key: &str,
        arg: Value,
        call: impl Future<Output = fencepost::Result<T>>,
        value: impl FnOnce(&T) -> Value,
    ) -> fencepost::Result<T> {
        let (started, started_seq) = (self.now(), self.ledger.tick());
        let result = call.await;
        let outcome = match &result {
            Ok(v) => Outcome::Ok(value(v)),
            Err(Error::AmbiguousWrite { .. }) => Outcome::Ambiguous,
            Err(e) => Outcome::Failed(e.code()),
        };
        let (ended, ended_seq) = (self.now(), self.ledger.tick());
        let record =
            Record { worker: self.id, what, key: key.to_owned(), arg, started, ended, started_seq, ended_seq, outcome };
        self.ledger.records.lock().unwrap().push(record);
        result
    }

    pub async fn run(mut self) {
        for n in 0..self.calls {
            match self.rng.below(13) {
                0..=2 => self.claim(n).await,
                3..=4 => self.increment().await,
                5..=7 => self.lease_period(n).await,
                8 => self.cooperative(n).await,
                9..=10 => self.once(n).await,
                11 => self.permit(n).await,
                _ if self.rng.chance(0.3) => self.break_a_lease().await,
                _ if self.rng.chance(0.4) => self.prune().await,
                _ => {
                    let secs = self.rng.unit() * 3.0;
                    self.pause(secs).await
                }
            }
        }
    }

    async fn pause(&self, secs: f64) {
        self.clock.sleep(secs).await;
    }

    async fn claim(&mut self, n: usize) {
        let key = if self.rng.chance(0.5) {
            format!("ticks/{}", (self.now() / TICK).floor())
        } else {
            format!("claims/{}", self.rng.below(CLAIM_KEYS))
        };
        let value = json!(format!("w{}-{n}", self.id));
        let _ = self
            .log(
                "claim",
                &key,
                value.clone(),
                self.db.claim(&key, value.clone()),
                |c| json!({"won": c.won, "value": c.value}),
            )
            .await;
    }

    async fn increment(&self) {
        let _ = self.log("increment", COUNTER_KEY, Value::Null, add_one(&self.counter, 10), Value::clone).await;
    }

    fn lease_key(&mut self) -> String {
        format!("leases/{}", self.rng.below(LEASE_KEYS))
    }

    /// Acquire (or, after a "crash", re-attach as the same holder), append a few entries under
    /// the epoch, maybe with keep-alive, maybe pausing past the ttl, then release or abandon.
    async fn lease_period(&mut self, n: usize) {
        let key = self.lease_key();
        let holder = format!("w{}-{n}", self.id);
        let options = LeaseOptions::new(TTL).holder(holder.clone());
        let Ok(Some(mut lease)) = self
            .log("lease", &key, json!(holder), self.db.lease(&key, options), |l| {
                l.as_ref().map_or(Value::Null, |l| json!(l.epoch()))
            })
            .await
        else {
            return;
        };
        let keep_alive = self.rng.chance(0.5);
        let stop = Cancel::new();
        let renewing = keep_alive.then(|| lease.keep_alive(&stop));
        let work = async {
            for entry in 0..=self.rng.below(3) {
                if self.rng.chance(0.15) {
                    // A process pause longer than the ttl (its keep-alive pauses with it only in
                    // that it cannot renew in time either way once stolen).
                    self.pause(TTL * 1.5).await;
                }
                if self.rng.chance(0.1) {
                    // A crash and restart: the new process re-attaches with the holder it remembered.
                    match self.db.attach_lease(&key, &holder, TTL).await {
                        Ok(Some(again)) => lease = again,
                        _ => return,
                    }
                }
                let epoch = lease.epoch();
                let mark = json!([epoch, self.id, n, entry]);
                let write = lease.update_state(|mut v: Value| {
                    append_to(&mut v, "log", mark.clone());
                    Ok(v)
                });
                if self.log("write", &key, mark.clone(), write, |_| Value::Null).await.is_err() {
                    return;
                }
                let secs = self.rng.unit() * 4.0;
                self.pause(secs).await;
            }
            if self.rng.chance(0.7) {
                let release = lease.release();
                let _ = self.log("release", &key, json!(lease.epoch()), release, |_| Value::Null).await;
            }
        };
        match renewing {
            Some(renewing) => {
                if let Either::Right(((), _)) = select(Box::pin(renewing), Box::pin(work)).await {
                    stop.cancel();
                }
            }
            None => work.await,
        }
    }

    async fn cooperative(&mut self, n: usize) {
        let key = self.lease_key();
        let mark = json!([self.id, n]);
        let write = self.db.cooperative_write(&key, |mut v: Value| {
            append_to(&mut v, "coop", mark.clone());
            Ok(v)
        });
        // `None`: no lease document on the key, nothing written.
        let _ = self.log("cooperative", &key, mark.clone(), write, |v| json!(v.is_some())).await;
    }

    async fn break_a_lease(&mut self) {
        let key = self.lease_key();
        let broken = self.db.break_lease(&key);
        let _ =
            self.log("break", &key, Value::Null, broken, |b| b.as_ref().map_or(Value::Null, |b| json!(b.epoch))).await;
    }
}

impl Worker {
    /// `once` on one of a few keys: the function pauses (maybe past the ttl: keep-alive holds the
    /// run), maybe fails; now and then the process "crashes" mid-run (the call is dropped, its
    /// lease left to expire), and a later call runs it again.
    async fn once(&mut self, n: usize) {
        let key = format!("once/{}", self.rng.below(ONCE_KEYS));
        let mine = json!(format!("w{}-{n}", self.id));
        let (work, fails) =
            (self.rng.unit() * 3.0 + if self.rng.chance(0.1) { TTL * 1.5 } else { 0.0 }, self.rng.chance(0.15));
        let wait = if self.rng.chance(0.5) { self.rng.unit() * 15.0 } else { 0.0 };
        let crash_after = self.rng.chance(0.1).then(|| self.rng.unit() * 5.0);
        let clock = self.clock.clone();
        let value = mine.clone();
        let run = self.db.once(&key, OnceOptions::new(TTL).wait(wait), move |_| async move {
            clock.sleep(work).await;
            if fails { Err(Error::invalid("the job failed")) } else { Ok(value) }
        });
        let answer = |o: &Once| match o {
            Once::Done { value, ran } => json!({"status": "done", "value": value, "ran": ran}),
            Once::Running { .. } => json!({"status": "running"}),
        };
        match crash_after {
            None => drop(self.log("once", &key, mine, run, answer).await),
            Some(secs) => {
                let crash = self.clock.sleep(secs);
                let logged = self.log("once", &key, mine, run, answer);
                let _ = select(Box::pin(logged), crash).await;
            }
        }
    }

    /// A permit of the semaphore, held for a while (maybe past the ttl, without keep-alive), then
    /// released or abandoned.
    async fn permit(&mut self, n: usize) {
        let semaphore = self.db.semaphore(SEMAPHORE_KEY, SEMAPHORE_LIMIT, TTL).expect("a valid semaphore");
        let holder = format!("w{}-{n}", self.id);
        let wait = if self.rng.chance(0.5) { self.rng.unit() * 10.0 } else { 0.0 };
        let options = PermitOptions::default().holder(holder.clone()).wait(wait);
        let acquired = self.log("permit", SEMAPHORE_KEY, json!(holder), semaphore.acquire(options), |p| {
            p.as_ref().map_or(Value::Null, |p| json!([p.key(), p.epoch()]))
        });
        let Ok(Some(permit)) = acquired.await else { return };
        let hold = self.rng.unit() * 6.0 + if self.rng.chance(0.15) { TTL * 1.5 } else { 0.0 };
        self.pause(hold).await;
        if self.rng.chance(0.7) {
            let _ = permit.release().await;
        }
    }

    /// The operator's clean-up of old tick claims (a dry run now and then).
    async fn prune(&mut self) {
        let dry = self.rng.chance(0.3);
        let pruned = self.db.prune("ticks/", PruneOptions { older_than: PRUNE_AGE, dry_run: dry });
        let _ = self.log("prune", "ticks/", json!(dry), pruned, |p| json!(p.keys)).await;
    }
}

/// `doc.update(v => v + 1, {create: 0, maxAttempts})`.
pub async fn add_one(doc: &Doc, max_attempts: u32) -> fencepost::Result<Value> {
    let options = UpdateOptions { create: Some(json!(0)), max_attempts, ..Default::default() };
    doc.update_with(options, |v: Value| Ok(json!(v.as_i64().unwrap_or(0) + 1))).await
}

/// Append `item` to the array at `field` of the object `state` (made an object if it is not).
fn append_to(state: &mut Value, field: &str, item: Value) {
    if !state.is_object() {
        *state = json!({});
    }
    let list = state.as_object_mut().expect("an object").entry(field).or_insert_with(|| json!([]));
    if let Some(list) = list.as_array_mut() {
        list.push(item);
    }
}

/// A watcher of `WATCHED_KEY`: logs each change it is told of (the version's etag, or null when
/// absent) until the workers are done and it has polled a while longer (so the last version is
/// seen), or a simulated hour has passed.
pub async fn watch(db: Fencepost, clock: ManualClock, ledger: Arc<Ledger>, done: Arc<AtomicU64>, workers: u64) {
    use futures::StreamExt;
    let mut changes = db.watch(WATCHED_KEY, 0.5);
    let started = clock.now().expect("a manual clock has a time");
    let mut quiet_since: Option<Timestamp> = None;
    loop {
        let next = select(changes.next(), clock.sleep(2.0)).await;
        let now = clock.now().expect("a manual clock has a time");
        if let Either::Left((Some(Ok(change)), _)) = next {
            let seen = change.map_or(Value::Null, |c| json!(c.etag));
            let at = ManualClock::START_2026.secs_until(now);
            let seq = ledger.tick();
            let record = Record {
                worker: usize::MAX,
                what: "watch",
                key: WATCHED_KEY.to_owned(),
                arg: Value::Null,
                started: at,
                ended: at,
                started_seq: seq,
                ended_seq: seq,
                outcome: Outcome::Ok(seen),
            };
            ledger.records.lock().unwrap().push(record);
        }
        if done.load(Ordering::SeqCst) >= workers {
            let since = *quiet_since.get_or_insert(now);
            if since.secs_until(now) > 10.0 {
                return;
            }
        }
        if started.secs_until(now) > 3600.0 {
            return;
        }
    }
}
